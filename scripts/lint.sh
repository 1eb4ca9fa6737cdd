#!/usr/bin/env bash
# verilator --lint-only -Wall over every RTL module (waivers with reasons in rtl/lint.vlt).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs="rtl/pkg/tmnic_hwif_pkg.sv rtl/pkg/tmnic_pkg.sv rtl/pkt/tmnic_crc_pkg.sv"
fail=0
for f in rtl/common/*.sv rtl/pkt/tmnic_pkt_*.sv rtl/core/*.sv rtl/tm/*.sv rtl/top/*.sv; do
  m=$(basename "$f" .sv)
  if ! out=$(verilator --lint-only -Wall rtl/lint.vlt $pkgs rtl/common/*.sv rtl/pkt/tmnic_pkt_*.sv \
             rtl/core/*.sv rtl/tm/*.sv rtl/top/*.sv --top-module "$m" 2>&1); then
    echo "lint: $m"; echo "$out" | head -20; fail=1
  fi
done
[ $fail -eq 0 ] && echo "lint: $(ls rtl/common/*.sv rtl/pkt/tmnic_pkt_*.sv rtl/core/*.sv rtl/tm/*.sv rtl/top/*.sv | wc -l) modules clean"
exit $fail
