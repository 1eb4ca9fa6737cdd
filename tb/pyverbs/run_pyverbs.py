#!/usr/bin/python3
"""Run rdma-core's own pyverbs tests, unmodified, on the simulated NICs through the drop-in
libibverbs.so.1.

The tests Debian ships with python3-pyverbs (/usr/share/doc/rdma-core/tests, several files gzipped)
are copied to WORKDIR/tests (gzipped files decompressed, nothing else touched), then

    /usr/bin/python3 run_tests.py --dev DEV -v TEST_ID...

runs there with LD_LIBRARY_PATH starting with LIBDIR. The run passes only if unittest's summary
is a plain "OK" for exactly the selected tests: a failure, an error, a skip, an expected failure
or an unexpected success fails it (a skipped test must not look like a pass).

With --conformance FILE (whole files of the suite, issue 12's conformance run) skips are allowed:
the suite skips a test itself when the device does not report a capability, and the reason is the
suite's own message. A failure, an error, an expected failure or an unexpected success still fails
the run, and FILE gets a Markdown report: counts per file, then every test with its outcome and
reason. The report holds no time or date, so it changes only when an outcome does.

With --require-atomics the tests run only if the device reports atomics (pyverbs'
query_device().atomic_caps is not IBV_ATOMIC_NONE); otherwise nothing runs and the exit code is 77
(ctest's SKIP_RETURN_CODE), with the reason printed.

Usage: run_pyverbs.py --libdir DIR --workdir DIR [--dev tmnic0] [--env NAME=VALUE]...
                      [--timeout SECONDS] [--tests-src DIR] [--conformance FILE]
                      [--require-atomics] TEST_ID...
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
SKIP = 77  # exit code of a run skipped for a missing device capability (ctest SKIP_RETURN_CODE)

# Prints the device's atomic_caps as pyverbs sees it through the drop-in library.
ATOMIC_QUERY = """
import sys
import pyverbs.device as d
ctx = d.Context(name=sys.argv[1])
print("atomic_caps=%d" % ctx.query_device().atomic_caps)
ctx.close()
"""


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


def pyverbs_version():
    try:
        return subprocess.run(["dpkg-query", "-W", "-f", "${Version}", PACKAGE], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_conformance(path, selected, outcomes, dev):
    """The Markdown report of a conformance run (see the module docstring)."""
    files = {}
    for t, o in outcomes.items():
        f = t.split(".")[1] if t.startswith("tests.") else t.split(".")[0]
        c = files.setdefault(f, {"pass": 0, "skip": 0, "fail": 0})
        c["pass" if o == "ok" else "skip" if o.startswith("skipped") else "fail"] += 1
    tot = {k: sum(c[k] for c in files.values()) for k in ("pass", "skip", "fail")}
    lines = [
        "# Conformance: rdma-core's pyverbs suite on tmnic",
        "",
        "Written by `tb/pyverbs/run_pyverbs.py --conformance` (ctest `pyverbs_conformance`): the tests",
        "Debian's `%s` %s ships, unmodified, on the simulated device `%s` through the" % (PACKAGE, pyverbs_version(), dev),
        "drop-in `libibverbs.so.1`. A skip is the suite's own decision, with its own message, when the",
        "device does not report a capability (tmnic reports only what it has; no environment switch is",
        "set). The run fails on any failure or error. Selected: `%s`." % " ".join(selected),
        "",
        "| file | pass | skip | fail or error |",
        "|---|---:|---:|---:|",
    ]
    for f in sorted(files):
        c = files[f]
        lines.append("| %s | %d | %d | %d |" % (f, c["pass"], c["skip"], c["fail"]))
    lines.append("| **all** | **%d** | **%d** | **%d** |" % (tot["pass"], tot["skip"], tot["fail"]))
    lines += ["", "| test | outcome | reason |", "|---|---|---|"]
    for t in sorted(outcomes):
        o = outcomes[t]
        if o == "ok":
            lines.append("| `%s` | pass | |" % t)
        elif o.startswith("skipped"):
            reason = o[len("skipped "):].strip().strip("'\"").replace("|", "\\|")
            lines.append("| `%s` | skip | %s |" % (t, reason))
        else:
            lines.append("| `%s` | **%s** | |" % (t, o))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--libdir", required=True, help="directory of the drop-in libibverbs.so.1")
    ap.add_argument("--workdir", required=True, help="where the tests are copied and run")
    ap.add_argument("--dev", default="tmnic0")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--tests-src", help="test directory (default: from dpkg -L %s)" % PACKAGE)
    ap.add_argument("--conformance", metavar="FILE",
                    help="allow the suite's skips and write a Markdown report to FILE")
    ap.add_argument("--require-atomics", action="store_true",
                    help="skip (exit %d) unless the device reports atomics" % SKIP)
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

    if a.require_atomics:
        q = subprocess.run([PYTHON, "-c", ATOMIC_QUERY, a.dev], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace",
                           timeout=a.timeout)
        m = re.search(r"^atomic_caps=(\d+)$", q.stdout, re.M)
        if not m:
            print(q.stdout)
            print("run_pyverbs: FAIL: could not query %s's atomic_caps" % a.dev)
            return 1
        if int(m.group(1)) == 0:  # IBV_ATOMIC_NONE
            print("run_pyverbs: SKIP: %s reports no atomics (atomic_caps IBV_ATOMIC_NONE: the NIC's "
                  "OPS_CAPS.ATOMIC is 0); not running %s" % (a.dev, " ".join(a.tests)))
            return SKIP
        print("run_pyverbs: %s reports atomic_caps %s" % (a.dev, m.group(1)))

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
        allowed = re.fullmatch(r"skipped=\d+", details or "") if a.conformance else None
        if verdict != "OK" or (details and not allowed):
            problems.append("unittest summary: %s%s" % (verdict, " (%s)" % details if details
                                                        else ""))
        if int(ran[-1]) == 0:
            problems.append("no test ran")
    not_ok = {t: o for t, o in outcomes.items() if o != "ok"}
    for t, o in sorted(not_ok.items()):
        if not (a.conformance and o.startswith("skipped")):
            problems.append("%s: %s" % (t, o))
    if a.conformance:
        write_conformance(a.conformance, a.tests, outcomes, a.dev)
        print("run_pyverbs: wrote %s" % a.conformance)
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
