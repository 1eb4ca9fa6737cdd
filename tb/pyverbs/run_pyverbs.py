#!/usr/bin/python3
"""Run rdma-core's own pyverbs tests, unmodified, on the simulated NICs through the drop-in
libibverbs.so.1.

The tests Debian ships with python3-pyverbs (/usr/share/doc/rdma-core/tests, several files gzipped)
are copied to WORKDIR/tests (gzipped files decompressed, nothing else touched), then

    /usr/bin/python3 run_tests.py --dev DEV -v TEST_ID...

runs there with LD_LIBRARY_PATH starting with LIBDIR. The run passes only if unittest's summary
is a plain "OK" for exactly the selected tests: a failure, an error, a skip, an expected failure
or an unexpected success fails it (a skipped test must not look like a pass).

Usage: run_pyverbs.py --libdir DIR --workdir DIR [--dev tmnic0] [--env NAME=VALUE]...
                      [--timeout SECONDS] [--tests-src DIR] TEST_ID...
TEST_ID as printed by `run_tests.py --list-tests`, e.g. tests.test_pd.PDTest.test_alloc_pd.
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

PYTHON = "/usr/bin/python3"  # Debian's interpreter: the one python3-pyverbs is built for
PACKAGE = "python3-pyverbs"


def find_tests_src():
    """The directory of run_tests.py in the installed python3-pyverbs package."""
    try:
        files = subprocess.run(["dpkg", "-L", PACKAGE], check=True, capture_output=True,
                               text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        files = []
    for f in files:
        if f.endswith("/tests/run_tests.py"):
            return os.path.dirname(f)
    return None


def copy_tests(src, dst):
    """Fresh copy of src in dst; NAME.gz becomes NAME (decompressed), content unchanged."""
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        if name.endswith(".gz"):
            with gzip.open(path, "rb") as fin, open(os.path.join(dst, name[:-3]), "wb") as fout:
                shutil.copyfileobj(fin, fout)
        else:
            shutil.copyfile(path, os.path.join(dst, name))


# unittest -v prints "name (id)" [+ first docstring line] " ... " then the outcome; output of
# the test itself may come in between.
HEADER = re.compile(r"^(\w+) \(((?:tests\.)?[\w.]+)\)", re.M)
OUTCOME = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|skipped .*|expected failure|unexpected success)$",
                     re.M)


def per_test_outcomes(text):
    """{test id: outcome} from the verbose output (for the report; the verdict uses the summary)."""
    res = {}
    heads = list(HEADER.finditer(text))
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        chunk = text[h.end():end]
        dots = chunk.find(" ... ")
        if dots < 0:
            continue
        m = OUTCOME.search(chunk, dots)
        res[h.group(2)] = m.group(1) if m else "?"
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libdir", required=True, help="directory of the drop-in libibverbs.so.1")
    ap.add_argument("--workdir", required=True, help="where the tests are copied and run")
    ap.add_argument("--dev", default="tmnic0")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--tests-src", help="test directory (default: from dpkg -L %s)" % PACKAGE)
    ap.add_argument("tests", nargs="+", metavar="TEST_ID")
    a = ap.parse_args()

    lib = os.path.join(a.libdir, "libibverbs.so.1")
    if not os.path.exists(lib):
        print("run_pyverbs: %s does not exist (build the tmnic_verbs target)" % lib)
        return 1
    src = a.tests_src or find_tests_src()
    if not src or not os.path.isfile(os.path.join(src, "run_tests.py")):
        print("run_pyverbs: rdma-core's pyverbs tests not found: install %s (scripts/setup.sh)"
              % PACKAGE)
        return 1
    tests_dir = os.path.join(os.path.abspath(a.workdir), "tests")
    copy_tests(src, tests_dir)

    env = dict(os.environ)
    for var in ("PYTHONHOME", "PYTHONPATH"):  # a pyenv/venv setting would break Debian's python
        env.pop(var, None)
    env["LD_LIBRARY_PATH"] = os.path.abspath(a.libdir) + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    for kv in a.env:
        name, sep, value = kv.partition("=")
        if not sep:
            ap.error("--env wants NAME=VALUE, got %r" % kv)
        env[name] = value

    cmd = [PYTHON, "run_tests.py", "--dev", a.dev, "-v"] + a.tests
    shown_env = " ".join(["LD_LIBRARY_PATH=" + os.path.abspath(a.libdir)] + a.env)
    print("run_pyverbs: cd %s && %s %s" % (tests_dir, shown_env, " ".join(cmd)), flush=True)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=tests_dir, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace",
                           timeout=a.timeout)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
        print(out)
        print("run_pyverbs: FAIL: timed out after %.0f s" % a.timeout)
        return 1
    wall = time.monotonic() - t0
    print(out, end="" if out.endswith("\n") else "\n")

    outcomes = per_test_outcomes(out)
    ran = re.findall(r"^Ran (\d+) tests? in ", out, re.M)
    summary = re.findall(r"^(OK|FAILED)(?: \((.*)\))?$", out, re.M)
    problems = []
    if rc != 0:
        problems.append("run_tests.py exited with %d" % rc)
    if not ran or not summary:
        problems.append("no unittest summary found")
    else:
        verdict, details = summary[-1]
        if verdict != "OK" or details:
            problems.append("unittest summary: %s%s" % (verdict, " (%s)" % details if details
                                                        else ""))
        if int(ran[-1]) == 0:
            problems.append("no test ran")
    not_ok = {t: o for t, o in outcomes.items() if o != "ok"}
    for t, o in sorted(not_ok.items()):
        problems.append("%s: %s" % (t, o))
    # Every selected test method must have run and passed (ids of modules/classes are expanded
    # by unittest and checked through the summary above).
    for t in a.tests:
        if t.count(".") >= 3 and t not in outcomes:
            problems.append("%s: did not run" % t)
    n_ok = sum(1 for o in outcomes.values() if o == "ok")
    print("run_pyverbs: %d passed, %d not passed, %.1f s wall" % (n_ok, len(not_ok), wall))
    if problems:
        print("run_pyverbs: FAIL")
        for pr in problems:
            print("  " + pr)
        return 1
    print("run_pyverbs: PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
