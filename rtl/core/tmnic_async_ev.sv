// Asynchronous events: when an engine moves a QP to ERR, a record {kind, QP} goes to the CQ that
// the ASYNC_CQ register names, as a CQE with opcode ASYNC_EVENT (kind AEV_* in STATUS, the QP in
// QP_NUM), so the host learns of it without polling the QP (the driver turns records into
// ibv_get_async_event events: docs/hw-sw-interface.md). The requester side (retries exhausted, a
// failed WQE) reports AEV_QP_ERR; the responder reports why it failed the QP (invalid request,
// remote access violation) or AEV_QP_ERR when a completion says it (local errors), and events that
// fail nothing (AEV_COMM_EST: an RC QP's first request packet in RTR) through the same input; the
// CQ writer reports a CQ's first overrun (AEV_CQ_ERR, the CQ number in QP_NUM), and the context a QP
// it moved to ERR because the QP lost a completion (AEV_QP_FATAL).
//
// Each side has its own FIFO, so two events in one cycle are both kept; a FIFO that is full loses
// the event and says so (drop_o, a statistics pulse). Records leave through one registered offer.
// With ASYNC_CQ disabled nothing is recorded.
module tmnic_async_ev import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned DEPTH = 4,        // events queued per side
  localparam int unsigned QP_W = $clog2(NUM_QP)
) (
  input  logic clk_i,
  input  logic rst_ni,

  /* verilator lint_off UNUSEDSIGNAL */  // (its reserved bits)
  input  reg_async_cq_t  cfg_i,            // ASYNC_CQ register
  /* verilator lint_on UNUSEDSIGNAL */

  input  logic            sq_err_i,        // the requester side moved sq_err_qp_i to ERR
  input  logic [QP_W-1:0] sq_err_qp_i,
  input  logic            rq_err_i,        // the responder moved rq_err_qp_i to ERR ...
  input  logic [QP_W-1:0] rq_err_qp_i,
  input  logic [2:0]      rq_err_kind_i,   // ... for this reason (AEV_*), or an event that changes nothing
  input  logic            cq_err_i,        // CQ cq_err_cq_i overran (AEV_CQ_ERR, the CQ in QP_NUM)
  input  logic [15:0]     cq_err_cq_i,
  input  logic            fat_i,           // the context moved fat_qp_i to ERR: it lost a completion
  input  logic [QP_W-1:0] fat_qp_i,        // (AEV_QP_FATAL)

  output cqe_req_t        cqe_o,
  output logic            cqe_valid_o,
  input  logic            cqe_ready_i,

  output logic            drop_o,          // pulse: an event was lost (its FIFO was full)
  output logic            idle_o
);
  if (NUM_QP < 4 || NUM_QP > 65536 || (NUM_QP & (NUM_QP - 1)) != 0) begin : g_chk_qp
    $fatal(1, "tmnic_async_ev: NUM_QP must be a power of two in 4..65536");
  end
  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_chk_depth
    $fatal(1, "tmnic_async_ev: DEPTH must be a power of two >= 2");
  end

  localparam int unsigned NS = 4;          // sources: requester side, responder, CQ writer, lost completions
  localparam int unsigned EW = 16 + 3;     // {kind, QP or CQ number}
  logic [NS-1:0]          f_push, f_ready, f_valid, f_pop;
  logic [NS-1:0][EW-1:0]  f_in, f_out;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [NS-1:0][$clog2(DEPTH):0] f_level;   // (not needed: full is s_ready_o)
  /* verilator lint_on UNUSEDSIGNAL */

  assign f_push = {fat_i, cq_err_i, rq_err_i, sq_err_i} & {NS{cfg_i.en[0]}};
  assign f_in[0] = {3'(AEV_QP_ERR), 16'(sq_err_qp_i)};
  assign f_in[1] = {rq_err_kind_i, 16'(rq_err_qp_i)};
  assign f_in[2] = {3'(AEV_CQ_ERR), cq_err_cq_i};
  assign f_in[3] = {3'(AEV_QP_FATAL), 16'(fat_qp_i)};
  for (genvar i = 0; i < NS; i++) begin : g_fifo
    tmnic_fifo #(.WIDTH(EW), .DEPTH(DEPTH)) u_fifo (
      .clk_i, .rst_ni, .s_data_i(f_in[i]), .s_valid_i(f_push[i]), .s_ready_o(f_ready[i]),
      .m_data_o(f_out[i]), .m_valid_o(f_valid[i]), .m_ready_i(f_pop[i]), .level_o(f_level[i]));
  end

  // One registered offer; the next record is loaded when it is empty or taken.
  logic       out_valid_q, out_valid_d;
  cqe_req_t   out_q, out_d;
  logic       drop_d;
  logic [NS-1:0] gnt;
  logic [1:0]    gnt_idx;
  logic          gnt_valid;
  wire           load = !out_valid_q || cqe_ready_i;
  tmnic_rr_arb #(.N(NS)) u_arb (
    .clk_i, .rst_ni, .req_i(f_valid), .ack_i(load), .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid));
  assign f_pop = gnt & {NS{load}};

  always_comb begin
    out_valid_d = out_valid_q && !cqe_ready_i;
    out_d = out_q;
    drop_d = |(f_push & ~f_ready);
    if (load && gnt_valid) begin
      out_valid_d = 1'b1;
      out_d = '0;
      out_d.cq = cfg_i.cq;
      out_d.qp_num = 24'(f_out[gnt_idx][15:0]);
      out_d.opcode = WC_OP_ASYNC_EVENT;
      out_d.status = 8'(f_out[gnt_idx][EW-1 -: 3]);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q <= 1'b0;
      drop_o <= 1'b0;
    end else begin
      out_valid_q <= out_valid_d;
      drop_o <= drop_d;
    end
  end
  // Payload register: no reset (only read while out_valid_q).
  always_ff @(posedge clk_i) out_q <= out_d;

  assign cqe_o = out_q;
  assign cqe_valid_o = out_valid_q;
  assign idle_o = !out_valid_q && f_valid == '0;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // The kinds are AEV_QP_ERR (1), AEV_QP_REQ_ERR (2), AEV_QP_ACCESS_ERR (3), AEV_COMM_EST (4),
  // AEV_CQ_ERR (5), AEV_QP_FATAL (6): never 0.
  if (AEV_QP_ERR != 1 || AEV_QP_REQ_ERR != 2 || AEV_QP_ACCESS_ERR != 3 || AEV_COMM_EST != 4 || AEV_CQ_ERR != 5 ||
      AEV_QP_FATAL != 6)
  begin : g_chk_aev
    $fatal(1, "tmnic_async_ev: the AEV_* codes must be 1..6 (3-bit kinds)");
  end
  a_rq_kind: assert property (@(posedge clk_i) disable iff (!chk_q) rq_err_i |-> rq_err_kind_i != 3'd0);
  // Only a loaded offer with a real kind leaves.
  a_out_kind: assert property (@(posedge clk_i) disable iff (!chk_q)
    cqe_valid_o |-> cqe_o.opcode == WC_OP_ASYNC_EVENT && cqe_o.status != 8'd0 && cqe_o.status <= 8'd6);
  // A FIFO pops only its granted head.
  a_pop: assert property (@(posedge clk_i) disable iff (!chk_q) (f_pop & ~f_valid) == '0);
  tmnic_hold_chk #(.W($bits(cqe_o)), .NAME("tmnic_async_ev: record")) u_hold (
    .clk_i, .rst_ni, .valid_i(cqe_valid_o), .ready_i(cqe_ready_i), .data_i(cqe_o));
`endif
endmodule
