# Generic building blocks (RAM, FIFO, arbiter, buffers).
-f rtl/pkg/pkg.f
rtl/common/tmnic_ram_sdp.sv
rtl/common/tmnic_ram_rdports.sv
rtl/common/tmnic_chk_en.sv
rtl/common/tmnic_hold_chk.sv
rtl/common/tmnic_fifo.sv
rtl/common/tmnic_rr_arb.sv
rtl/common/tmnic_qp_sched.sv
rtl/common/tmnic_pi_tab.sv
rtl/common/tmnic_shift_buf.sv
