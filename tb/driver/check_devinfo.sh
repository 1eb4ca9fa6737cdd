#!/bin/sh
# Runs Debian's unmodified ibv_devinfo -v against our libibverbs.so.1 (fake backend world) and
# checks that it lists the device with the attributes the driver reports.
# Usage: check_devinfo.sh IBV_DEVINFO LIBDIR [ASAN_RUNTIME_TO_PRELOAD]
set -eu
devinfo=$1 libdir=$2 preload=${3:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ -n "$preload" ]; then
  LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=$libdir "$devinfo" -v > "$out" 2>&1
else
  LD_LIBRARY_PATH=$libdir "$devinfo" -v > "$out" 2>&1
fi
cat "$out"
status=0
expect() {
  if ! grep -Eq "$1" "$out"; then
    echo "MISSING: $1"
    status=1
  fi
}
# Values of the fake device (tb/driver/fake_backend.hpp: 64 QPs, 32 CQs, 8 SRQs, 128 MRs).
expect '^hca_id:[[:space:]]+tmnic0$'
expect 'transport:[[:space:]]+InfiniBand \(0\)'
expect 'fw_ver:[[:space:]]+tmnic 1\.[0-9]+'
expect 'node_guid:[[:space:]]+0000:00ff:fe00:0001'
expect 'vendor_id:[[:space:]]+0x1d6f'
expect 'phys_port_cnt:[[:space:]]+1'
expect 'max_qp:[[:space:]]+62$'
expect 'max_qp_wr:[[:space:]]+32767$'
expect 'max_cq:[[:space:]]+32$'
expect 'max_cqe:[[:space:]]+32767$'
expect 'max_mr:[[:space:]]+128$'
expect 'max_srq:[[:space:]]+8$'
expect 'max_sge:[[:space:]]+6$'
expect 'atomic_cap:[[:space:]]+ATOMIC_NONE'
expect 'port:[[:space:]]+1$'
expect 'state:[[:space:]]+PORT_ACTIVE \(4\)'
expect 'max_mtu:[[:space:]]+4096 \(5\)'
expect 'active_mtu:[[:space:]]+4096 \(5\)'
expect 'link_layer:[[:space:]]+Ethernet'
expect 'GID\[[[:space:]]*0\]:[[:space:]]+::ffff:10\.0\.0\.1, RoCE v2'
[ $status -eq 0 ] && echo "OK: ibv_devinfo output as expected"
exit $status
