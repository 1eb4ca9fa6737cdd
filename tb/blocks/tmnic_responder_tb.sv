// The responder as tmnic_top connects it: tmnic_rx_engine and the ACK generator that turns its
// ACK/NAK events into packets (tb/blocks/test_responder.cpp drives this pair, so that every ACK
// and NAK is checked as the header that goes on the wire).
module tmnic_responder_tb import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned TM_ENTRIES = 1024,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned H_W = $clog2(TM_ENTRIES),
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Context read ports (registered reads: a word arrives one cycle after its index): the current QP,
  // the QP of the ACK being built, the QP of the completion being reported; MR of the SGE being
  // checked; SRQ of the QP (combinational)
  output logic [QP_W-1:0]         qp_idx_o,      // the responder's view of the current QP
  input  qp_rsp_cfg_t             qp_rd_i,
  output logic [QP_W-1:0]         path_qp_o,     // the ACK generator's: the peer's address
  input  qp_path_t                path_i,
  output logic [QP_W-1:0]         cqe_qp_o,      // the completion's: the peer's QP number
  input  logic [23:0]             cqe_src_qp_i,
  output logic [MR_W-1:0]         mr_idx_o,
  input  mr_t                     mr_rd_i,
  output logic [SRQ_W-1:0]        srq_idx_o,
  input  srq_cfg_t                srq_rd_i,
  input  logic [47:0] local_mac_i,
  input  logic [31:0] local_ip_i,
  input  logic [1:0]  kick_i,            // look at QP kick_qp_i[k] (its state may have changed)
  input  logic [1:0][QP_W-1:0] kick_qp_i,
  input  logic        init_rq_i,
  input  logic [QP_W-1:0] init_qp_i,
  input  logic [23:0] init_psn_i,
  input  logic        srq_reset_i,
  input  logic [15:0] srq_reset_idx_i,
  input  logic        db_valid_i,        // doorbells: db_srq_i selects SRQ, else receive queue
  input  logic        db_srq_i,
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,
  output logic        db_ready_o,   // room for a doorbell next cycle (tmnic_qp_sched set_ready_o)

  // Parsed packets
  input  roce_hdr_t          s_hdr_i,
  input  logic               s_hdr_valid_i,
  output logic               s_hdr_ready_o,
  input  logic [DATA_W-1:0]  s_pay_tdata_i,
  input  logic [BYTES-1:0]   s_pay_tkeep_i,
  input  logic               s_pay_tlast_i,
  input  logic               s_pay_tvalid_i,
  output logic               s_pay_tready_o,

  // ACK/NAK events to the send engine
  output logic            ack_valid_o,
  input  logic            ack_ready_i,
  output logic [QP_W-1:0] ack_qp_o,
  output logic [31:0]     ack_aeth_o,
  output logic [23:0]     ack_psn_o,

  // ACK/NAK packets to send
  output roce_hdr_t tx_hdr_o,
  output logic      tx_valid_o,
  input  logic      tx_ready_i,

  // DMA read client (receive WQEs)
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic               rsp_last_i,

  // DMA write client (payload scatter), data pulled from the RX buffer: wr_data_o answers
  // wr_data_req_i three cycles later (tmnic_dma_wr DATA_LAT = 3); wr_done_i frees buffer slots
  output logic [63:0]        wr_addr_o,
  output logic [12:0]        wr_len_o,
  output logic               wr_valid_o,
  input  logic               wr_ready_i,
  input  logic               wr_data_req_i,
  input  logic signed [13:0] wr_data_off_i,
  output logic [DATA_W-1:0]  wr_data_o,
  input  logic               wr_done_i,

  // Tag matching: engine lookups, the tag-buffer RAM {lkey, length, addr}, and the ADD whose
  // buffer is not in the RAM yet (a hit on that handle waits for it)
  output logic             lk_valid_o,
  input  logic             lk_ready_i,
  output logic [SRQ_W-1:0] lk_srq_o,
  output logic [63:0]      lk_tag_o,
  output logic             lk_commit_miss_o,
  input  logic             lk_rsp_valid_i,
  input  logic             lk_rsp_hit_i,
  input  logic [H_W-1:0]   lk_rsp_handle_i,
  input  logic             lk_rsp_unexp_i,
  input  logic             lk_rsp_blocked_i,
  output logic             tb_re_o,
  output logic [H_W-1:0]   tb_raddr_o,
  input  logic [127:0]     tb_rdata_i,
  input  logic             add_pend_i,
  input  logic [H_W-1:0]   add_pend_handle_i,
  output logic             tm_exp_o,      // statistics pulses for SRQ tm_srq_o
  output logic             tm_unexp_o,
  output logic             tm_notag_o,
  output logic [SRQ_W-1:0] tm_srq_o,

  // Completions
  output cqe_req_t cqe_o,
  output logic     cqe_valid_o,
  input  logic     cqe_ready_i,

  output logic            err_o,
  output logic [QP_W-1:0] err_qp_o,
  input  logic [QP_W-1:0] query_qp_i,
  output logic [23:0]     query_psn_o,

  output logic drop_qp_o, output logic tx_ack_o, output logic tx_rnr_o, output logic tx_nak_o,
  output logic dup_o, output logic psn_err_o, output logic prot_err_o,
  output logic quiet_o,                  // no DMA in flight or about to be issued
  output logic idle_o
);

  logic            ev_valid, ev_ready, rsp_idle, ag_idle;
  logic [QP_W-1:0] ev_qp;
  logic [7:0]      ev_syn;
  logic [23:0]     ev_msn, ev_psn;
  tmnic_rx_engine #(.DATA_W(DATA_W), .NUM_QP(NUM_QP), .NUM_MR(NUM_MR), .NUM_SRQ(NUM_SRQ),
                    .TM_ENTRIES(TM_ENTRIES)) u_rsp (
    .clk_i, .rst_ni,
    .qp_idx_o,
    .qp_rd_i,
    .cqe_qp_o,
    .cqe_src_qp_i,
    .mr_idx_o,
    .mr_rd_i,
    .srq_idx_o,
    .srq_rd_i,
    .kick_i,
    .kick_qp_i,
    .init_rq_i,
    .init_qp_i,
    .init_psn_i,
    .srq_reset_i,
    .srq_reset_idx_i,
    .db_valid_i,
    .db_srq_i,
    .db_idx_i,
    .db_pi_i,
    .db_ready_o,
    .s_hdr_i,
    .s_hdr_valid_i,
    .s_hdr_ready_o,
    .s_pay_tdata_i,
    .s_pay_tkeep_i,
    .s_pay_tlast_i,
    .s_pay_tvalid_i,
    .s_pay_tready_o,
    .ack_valid_o,
    .ack_ready_i,
    .ack_qp_o,
    .ack_aeth_o,
    .ack_psn_o,
    .rd_addr_o,
    .rd_len_o,
    .rd_valid_o,
    .rd_ready_i,
    .rsp_valid_i,
    .rsp_data_i,
    .rsp_off_i,
    .rsp_last_i,
    .wr_addr_o,
    .wr_len_o,
    .wr_valid_o,
    .wr_ready_i,
    .wr_data_req_i,
    .wr_data_off_i,
    .wr_data_o,
    .wr_done_i,
    .lk_valid_o,
    .lk_ready_i,
    .lk_srq_o,
    .lk_tag_o,
    .lk_commit_miss_o,
    .lk_rsp_valid_i,
    .lk_rsp_hit_i,
    .lk_rsp_handle_i,
    .lk_rsp_unexp_i,
    .lk_rsp_blocked_i,
    .tb_re_o,
    .tb_raddr_o,
    .tb_rdata_i,
    .add_pend_i,
    .add_pend_handle_i,
    .tm_exp_o,
    .tm_unexp_o,
    .tm_notag_o,
    .tm_srq_o,
    .cqe_o,
    .cqe_valid_o,
    .cqe_ready_i,
    .err_o,
    .err_qp_o,
    .query_qp_i,
    .query_psn_o,
    .drop_qp_o,
    .tx_ack_o,
    .tx_rnr_o,
    .tx_nak_o,
    .dup_o,
    .psn_err_o,
    .prot_err_o,
    .quiet_o,
    .ev_valid_o(ev_valid), .ev_ready_i(ev_ready), .ev_qp_o(ev_qp), .ev_syn_o(ev_syn),
    .ev_msn_o(ev_msn), .ev_psn_o(ev_psn), .idle_o(rsp_idle));
  tmnic_ack_gen #(.NUM_QP(NUM_QP)) u_ack (
    .clk_i, .rst_ni,
    .ev_valid_i(ev_valid), .ev_ready_o(ev_ready), .ev_qp_i(ev_qp), .ev_syn_i(ev_syn),
    .ev_msn_i(ev_msn), .ev_psn_i(ev_psn),
    .cfg_idx_o(path_qp_o), .cfg_i(path_i), .local_mac_i, .local_ip_i,
    .tx_hdr_o, .tx_valid_o, .tx_ready_i, .idle_o(ag_idle));
  assign idle_o = rsp_idle && ag_idle;
endmodule
