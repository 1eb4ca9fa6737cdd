# RTL source lists, in compile order (packages first). One list per model that gets Verilated.
set(TMNIC_RTL_PKGS
  ${TMNIC_RTL_DIR}/pkg/tmnic_hwif_pkg.sv
  ${TMNIC_RTL_DIR}/pkg/tmnic_pkg.sv
  ${TMNIC_RTL_DIR}/pkt/tmnic_crc_pkg.sv
)
file(GLOB TMNIC_RTL_COMMON ${TMNIC_RTL_DIR}/common/*.sv)
set(TMNIC_RTL_TOP_SOURCES
  ${TMNIC_RTL_PKGS}
  ${TMNIC_RTL_COMMON}
  ${TMNIC_RTL_DIR}/pkt/tmnic_pkt_tx.sv
  ${TMNIC_RTL_DIR}/pkt/tmnic_pkt_rx.sv
  ${TMNIC_RTL_DIR}/core/tmnic_axil_regs.sv
  ${TMNIC_RTL_DIR}/core/tmnic_ctx.sv
  ${TMNIC_RTL_DIR}/core/tmnic_dma_rd.sv
  ${TMNIC_RTL_DIR}/core/tmnic_dma_wr.sv
  ${TMNIC_RTL_DIR}/core/tmnic_sq_engine.sv
  ${TMNIC_RTL_DIR}/core/tmnic_rx_engine.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tx_sched.sv
  ${TMNIC_RTL_DIR}/core/tmnic_cq_writer.sv
  ${TMNIC_RTL_DIR}/core/tmnic_lb_demux.sv
  ${TMNIC_RTL_DIR}/core/tmnic_axis_mux2.sv
  ${TMNIC_RTL_DIR}/core/tmnic_stats.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tm_ops.sv
  ${TMNIC_RTL_DIR}/core/tmnic_tm_stats.sv
  ${TMNIC_RTL_DIR}/tm/tmnic_tm_engine.sv
  ${TMNIC_RTL_DIR}/top/tmnic_top.sv
)
set(TMNIC_VERILATOR_ARGS -Wall ${TMNIC_RTL_DIR}/lint.vlt -O3 --x-assign fast --x-initial fast
    -CFLAGS -O2 -Wno-fatal)
