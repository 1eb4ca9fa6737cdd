rtl/pkg/tmnic_hwif_pkg.sv
rtl/common/tmnic_ram_sdp.sv
rtl/tm/tmnic_tm_hash.sv
rtl/tm/tmnic_tm_cam.sv
rtl/tm/tmnic_tm_srq_state.sv
rtl/tm/tmnic_tm_scrub.sv
rtl/tm/tmnic_tm_order.sv
rtl/tm/tmnic_tm_engine.sv
