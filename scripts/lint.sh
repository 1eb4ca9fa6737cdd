#!/usr/bin/env bash
# verilator --lint-only -Wall over every RTL module of the whole NIC's file list (rtl/top/top.f), each
# as top (waivers with reasons in rtl/lint.vlt).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(python3 scripts/flist.py rtl/top/top.f)
fail=0
n=0
for f in "${files[@]}"; do
  m=$(basename "$f" .sv)
  case "$m" in *_pkg) continue ;; esac
  n=$((n + 1))
  if ! out=$(verilator --lint-only -Wall rtl/lint.vlt "${files[@]}" --top-module "$m" 2>&1); then
    echo "lint: $m"; echo "$out" | head -20; fail=1
  fi
done
# The synthesis frontend (yosys-slang) is stricter than Verilator on some rules (a name used before its
# declaration) and turns some always_comb shapes into logic loops: elaborate the whole NIC with it
# too, no waivers, and check for loops.
scripts/setup.sh >/dev/null
if ! out=$(.venv/bin/python -c 'import sys
from pyosys import libyosys as ys
d = ys.Design()
ys.run_pass("read_slang --threads 1 --top tmnic_top " + " ".join(sys.argv[1:]), d)
ys.run_pass("proc", d)
ys.run_pass("check -assert", d)' "${files[@]}" 2>&1); then
  echo "lint: slang elaboration of tmnic_top"; echo "$out" | grep -iE "error|warning|-->" | head -20; fail=1
fi
[ $fail -eq 0 ] && echo "lint: $n modules clean (Verilator -Wall), tmnic_top elaborates in yosys-slang"
exit $fail
