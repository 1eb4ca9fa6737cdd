#!/usr/bin/env bash
# Where an idle NIC's simulation time goes: builds tmnic_top (rtl/top/top.f, the simulation's
# Verilator options) with --prof-cfuncs (every always block its own function named after its
# module and line, gprof instrumentation) and the clock-only driver bench/profile/idle_main.cpp,
# runs it, and prints the share of time per module and per source line. Without profiling
# (--speed) it prints the idle cycles per second instead. Output in build/profile (or $1).
#   scripts/sim_profile.sh [OUT_DIR] [--speed]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
out=build/profile; speed=0
for a in "$@"; do case "$a" in --speed) speed=1 ;; *) out=$a ;; esac; done
mkdir -p "$out"
mapfile -t files < <(python3 scripts/flist.py rtl/top/top.f | sed "s|^|$repo/|")
prof=(--prof-cfuncs -CFLAGS "-O2 -g" -LDFLAGS -g)
[ $speed -eq 1 ] && prof=(-CFLAGS -O2)
verilator --cc --exe --build -j "$(nproc)" "$repo/rtl/lint.vlt" --assert -O3 -fno-reloop --x-assign fast \
  --x-initial fast -Wno-fatal "${prof[@]}" --top-module tmnic_top "${files[@]}" \
  "$repo/bench/profile/idle_main.cpp" -Mdir "$out/obj" > "$out/build.log" 2>&1
cd "$out"
./obj/Vtmnic_top
[ $speed -eq 1 ] && exit 0
gprof -b -p obj/Vtmnic_top gmon.out | python3 -c '
import collections, re, sys
mod, line, other = collections.Counter(), collections.Counter(), 0.0
for l in sys.stdin:
    p = l.split()
    try:
        t = float(p[2])
    except (IndexError, ValueError):
        continue
    m = re.search(r"PROF__(\w+?)__l(\d+)", l)
    if m:
        mod[m.group(1)] += t
        line[m.group(1) + ":" + m.group(2)] += t
    else:
        other += t
tot = sum(mod.values()) + other
print(f"{other / tot * 100:5.1f} %  (scheduling and calls outside the RTL functions)")
for k, v in mod.most_common(15):
    print(f"{v / tot * 100:5.1f} %  {k}")
print("per source line:")
for k, v in line.most_common(15):
    print(f"{v / tot * 100:5.1f} %  {k}")
'
