# NIC core: registers, contexts, DMA, send and receive engines, completions, list-op engine.
-f rtl/common/common.f
rtl/core/tmnic_axil_regs.sv
rtl/core/tmnic_ctx.sv
rtl/core/tmnic_dma_rd.sv
rtl/core/tmnic_dma_wr.sv
rtl/core/tmnic_sge_chk.sv
rtl/core/tmnic_wqe_fetch.sv
rtl/core/tmnic_rq_src.sv
rtl/core/tmnic_tx_gather.sv
rtl/core/tmnic_requester.sv
rtl/core/tmnic_completer.sv
rtl/core/tmnic_ack_gen.sv
rtl/core/tmnic_rx_buf.sv
rtl/core/tmnic_scatter.sv
rtl/core/tmnic_req_pkt.sv
rtl/core/tmnic_rx_check.sv
rtl/core/tmnic_rx_cqe.sv
rtl/core/tmnic_tm_classify.sv
rtl/core/tmnic_rx_wqe.sv
rtl/core/tmnic_rx_engine.sv
rtl/core/tmnic_tx_sched.sv
rtl/core/tmnic_async_ev.sv
rtl/core/tmnic_cq_writer.sv
rtl/core/tmnic_lb_demux.sv
rtl/core/tmnic_axis_mux2.sv
rtl/core/tmnic_stats.sv
rtl/core/tmnic_tm_ops.sv
