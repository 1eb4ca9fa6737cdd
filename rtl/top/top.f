# The whole NIC.
-f rtl/pkg/pkg.f
-f rtl/common/common.f
-f rtl/pkt/pkt.f
-f rtl/core/core.f
-f rtl/tm/tm_engine.f
rtl/top/tmnic_top.sv
