#!/usr/bin/env bash
# verilator --lint-only -Wall over every RTL module of the whole NIC's file list (rtl/top/top.f), each
# as top (waivers with reasons in rtl/lint.vlt), one Verilator per core; tmnic_top also at DATA_W = 256.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(python3 scripts/flist.py rtl/top/top.f)
mods=()
for f in "${files[@]}"; do
  m=$(basename "$f" .sv)
  case "$m" in *_pkg) continue ;; esac
  mods+=("$m")
done
out_dir=$(mktemp -d)
trap 'rm -rf "$out_dir"' EXIT
# Each module's result lands in its own file (<module>.ok or <module>.fail), reported in list order.
printf '%s\n' "${mods[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'if verilator --lint-only -Wall rtl/lint.vlt "$@" --top-module {} > "'"$out_dir"'/{}.log" 2>&1; then
     touch "'"$out_dir"'/{}.ok"; fi' sh "${files[@]}"
fail=0
for m in "${mods[@]}"; do
  if [ ! -e "$out_dir/$m.ok" ]; then
    echo "lint: $m"; head -20 "$out_dir/$m.log"; fail=1
  fi
done
n=${#mods[@]}
# The whole NIC at the other supported datapath width (the blocks' DATA_W = 256 branches).
if ! out=$(verilator --lint-only -Wall rtl/lint.vlt "${files[@]}" --top-module tmnic_top -GDATA_W=256 2>&1); then
  echo "lint: tmnic_top at DATA_W = 256"; echo "$out" | head -20; fail=1
fi
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
[ $fail -eq 0 ] && echo "lint: $n modules clean (Verilator -Wall; tmnic_top also at DATA_W = 256), tmnic_top elaborates in yosys-slang"
exit $fail
