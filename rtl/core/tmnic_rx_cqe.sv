// Receive completion builder: the completion of a received message (a plain receive, a
// tag-matching receive, a flushed or failed WQE) formatted from the message's fields, and the
// responder's registered completion output (to tmnic_cq_writer through the completion arbiter).
//
// go_i (only while busy_o is low: one completion at a time) takes the message, its QP and the QP's
// two CQs, the status, the byte count, the immediate and which flags to set; the completion is
// offered from the next cycle and held until taken. The CQ is the receive CQ for a plain receive
// and the SRQ's CQ for every tag-matching one; the opcode, the TM fields and the flags follow the
// message's kind as mlx5 reports them (docs/tag-matching.md): a matched message completes as
// TM_RECV with its tag, application context and handle, DATA_VALID at its end, and MATCH once (on
// the first packet of a multi-packet message, or with the end), status TM_RNDV_INCOMPLETE instead of
// SUCCESS for a rendezvous header (not offloaded); an unexpected message is TM_RECV
// without tag fields; an untagged one TM_NO_TAG. src_qp is the QP's remote QPN from the context:
// qp_idx_o is the next value of the QP register (a registered context read returns src_qp_i for it);
// a UD datagram's is its sender's, from the DETH (ud_i, ud_sqp_i), and it has IBV_WC_GRH.
// RXF_WRITE_IMM: the receive WQE an RDMA WRITE_WITH_IMM consumed (opcode RECV_RDMA_WITH_IMM,
// WITH_IMM, byte_len the WRITE's length; always a plain WQE, so the QP's receive CQ).
// Next user: the rendezvous completion.
module tmnic_rx_cqe import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64,
  localparam int unsigned QP_W = $clog2(NUM_QP)
) (
  input  logic            clk_i,
  input  logic            rst_ni,

  input  logic            go_i,
  input  rx_msg_t         msg_i,
  input  logic [QP_W-1:0] qp_i,
  input  logic [15:0]     rcq_i,      // the QP's receive CQ
  input  logic [15:0]     scq_i,      // its SRQ's CQ (tag-matching completions)
  input  logic [7:0]      status_i,
  input  logic [31:0]     byte_len_i,
  input  logic [31:0]     imm_i,
  input  rx_cqe_flags_e   flags_i,
  input  logic            ud_i,       // a UD datagram's: src_qp_i is ud_sqp_i (its DETH), GRH flag
  input  logic [23:0]     ud_sqp_i,
  output logic            busy_o,     // a completion is offered and not taken this cycle

  output logic [QP_W-1:0] qp_idx_o,
  input  logic [23:0]     src_qp_i,

  output cqe_req_t        cqe_o,
  output logic            cqe_valid_o,
  input  logic            cqe_ready_i
);
  if (NUM_QP < 2 || (NUM_QP & (NUM_QP - 1)) != 0 || NUM_QP > (1 << 24)) begin : g_chk_qp
    $fatal(1, "tmnic_rx_cqe: NUM_QP must be a power of two, 2 .. 2^24");
  end

  // Control (reset) and payload (no reset)
  logic            valid_d;
  cqe_req_t        c_q, c_d;           // (src_qp, unless ud_q, and tm_hw_cnt are filled at the output)
  logic            ud_q, ud_d;

  always_comb begin
    logic        matched;
    logic [31:0] end_flags;
    valid_d = cqe_valid_o && !cqe_ready_i;
    c_d = c_q;
    ud_d = ud_q;
    matched = (msg_i.kind == RXK_MATCHED);
    end_flags = !matched ? 32'd0 :
                (msg_i.msent ? WC_FLAG_TM_DATA_VALID : (WC_FLAG_TM_DATA_VALID | WC_FLAG_TM_MATCH));
    if (go_i) begin
      valid_d = 1'b1;
      c_d = '0;
      c_d.wr_id = msg_i.wrid;
      c_d.wqe_idx = msg_i.idx;
      c_d.qp_num = 24'(qp_i);
      c_d.cq = (msg_i.kind == RXK_PLAIN) ? rcq_i : scq_i;
      c_d.opcode = (flags_i == RXF_WRITE_IMM) ? WC_OP_RECV_RDMA_WITH_IMM :
                   (msg_i.kind == RXK_PLAIN) ? WC_OP_RECV :
                   (msg_i.kind == RXK_NOTAG) ? WC_OP_TM_NO_TAG : WC_OP_TM_RECV;
      c_d.tm_tag = matched ? msg_i.tag : 64'd0;
      c_d.tm_app_ctx = matched ? msg_i.ctx : 32'd0;
      c_d.tm_handle = matched ? msg_i.idx : 16'd0;
      // A rendezvous header matched a buffer but its READ is not offloaded: it completes as
      // incomplete (the application finishes the transfer).
      c_d.status = (status_i == WC_SUCCESS && matched && msg_i.rndv) ? WC_TM_RNDV_INCOMPLETE : status_i;
      c_d.byte_len = byte_len_i;
      c_d.imm = imm_i;
      unique case (flags_i)
        RXF_END:     c_d.wc_flags = end_flags;
        RXF_END_IMM: c_d.wc_flags = WC_FLAG_WITH_IMM | end_flags;
        RXF_MATCH:   c_d.wc_flags = WC_FLAG_TM_MATCH;
        RXF_WRITE_IMM: c_d.wc_flags = WC_FLAG_WITH_IMM;
        default:     c_d.wc_flags = end_flags;
      endcase
      // A datagram's receive buffer starts with its GRH (IBV_WC_GRH), and its sender is the DETH's.
      ud_d = ud_i;
      if (ud_i) begin
        c_d.wc_flags = c_d.wc_flags | WC_FLAG_GRH;
        c_d.src_qp = ud_sqp_i;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) cqe_valid_o <= 1'b0;
    else         cqe_valid_o <= valid_d;
  end
  always_ff @(posedge clk_i) begin
    c_q <= c_d;
    ud_q <= ud_d;
  end

  assign busy_o = cqe_valid_o && !cqe_ready_i;
  assign qp_idx_o = c_d.qp_num[QP_W-1:0];   // (the registered completion's QP is the context read's index)
  always_comb begin
    cqe_o = c_q;
    cqe_o.src_qp = ud_q ? c_q.src_qp : src_qp_i;
    cqe_o.tm_hw_cnt = '0;
  end

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_over: assert property (@(posedge clk_i) disable iff (!chk_q) go_i |-> !busy_o)
    else $error("tmnic_rx_cqe: completion raised over one not yet taken");
  tmnic_hold_chk #(.W($bits(c_q)), .NAME("tmnic_rx_cqe: completion")) u_cqe_hold (
    .clk_i, .rst_ni, .valid_i(cqe_valid_o), .ready_i(cqe_ready_i), .data_i(c_q));
  a_flags: assert property (@(posedge clk_i) disable iff (!chk_q)
    go_i |-> flags_i inside {RXF_END, RXF_END_IMM, RXF_MATCH, RXF_WRITE_IMM})
    else $error("tmnic_rx_cqe: unknown flag selection");
  a_write_plain: assert property (@(posedge clk_i) disable iff (!chk_q)
    go_i && flags_i == RXF_WRITE_IMM |-> msg_i.kind == RXK_PLAIN)
    else $error("tmnic_rx_cqe: a WRITE_WITH_IMM completion of a tag-matching buffer");
`endif
endmodule
