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
[ $fail -eq 0 ] && echo "lint: $n modules clean"
exit $fail
