# Packages shared by every RTL block, in dependency order. File lists (.f): one path per line,
# relative to the repository root; `-f <list>` includes another list; '#' and '//' start comments;
# a file listed twice is compiled once, at its first place. Read by CMake (cmake/rtl_sources.cmake),
# lint (scripts/lint.sh) and synthesis (syn/synth.py), all through the same rules (scripts/flist.py).
rtl/pkg/tmnic_hwif_pkg.sv
rtl/pkg/tmnic_pkg.sv
rtl/pkt/tmnic_crc_pkg.sv
