#!/usr/bin/env bash
# Yosys synthesis (native pyosys from .venv, yosys-slang frontend; syn/README.md).
#   scripts/synth.sh [BLOCK ...] [--check] [--strict] [--no-sim] [--no-ecp5]
#     the RTL blocks: latch and logic-loop checks, a flip-flop/memory-bit lower bound per block, ECP5
#     resource counts in syn/report.md; --check: also the latch-detector self-test and the tb/blocks
#     tests against the netlists.
#   scripts/synth.sh --tm [--ecp5 V...] [--pnr V...] [--xilinx V...] [--netlist-test V...] [V...]
#     the tag-matching engine per variant V (NAME=VALUE[,NAME=VALUE...]): synth_ecp5, nextpnr-ecp5 over
#     3 seeds, synth_xilinx (UltraScale+), tb/tm tests on the netlist; syn/tm_engine_report.json.
# Implementation: syn/synth.py (--help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python syn/synth.py "$@"
