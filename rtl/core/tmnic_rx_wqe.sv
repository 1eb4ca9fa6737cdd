// The receive WQE of a message: what the responder asks for at a message's first packet, and the
// walk its error flush makes over a receive queue.
//
// start_i (while idle_o), with the packet's QP already read, ends in exactly one of
//   - rnr_o: no receive buffer now (empty receive queue or SRQ; on a TM-SRQ a blocked lookup, or a
//     miss with an empty SRQ): the responder sends an RNR NAK and drops the packet, which comes again;
//   - done_o: a WQE is taken and its scatter list checked (tmnic_sge_chk, LOCAL_WRITE, the PD of the
//     WQE's queue): ok_o, cap_o (the SGE bytes), the message's kind (tmnic_pkg rx_kind_e), wr_id,
//     index, tag fields and the leading payload bytes not delivered (skip_o: a matched EAGER's TMH).
//     rq_inc_o: the WQE came from the QP's own receive queue (its consumer index, which the responder
//     keeps, moves on). Each passing SGE goes out on sg_*_o to the scatter block's table.
// Where the WQE comes from: the QP's receive queue at rq_idx_i; its SRQ's next WQE (tmnic_rq_src keeps
// the SRQ indices); on a TM-SRQ the first payload bytes decide (tmnic_tm_classify): a matched tag's
// buffer stands in as a one-SGE WQE, an unexpected or untagged message takes the next SRQ WQE.
// The QP's SRQ entry (scfg_i) is a registered read that lags a cycle when the SRQ changed
// (srq_fresh_i low): the decision then waits a cycle.
// The outputs hold from done_o until the next start. rnr_o and done_o are single cycles. An RNR that
// needs no lookup is rnr_now_o instead, in the start cycle itself (decided from the inputs alone, so
// the responder's packet decision does not wait for this block's state), and the block stays idle.
// Two other requests come with start_i (the responder's RDMA WRITE):
//   - key_i: no WQE; the remote key's range (key_sge_i: RETH va, length, rkey) is checked as a
//     one-SGE list with access key_acc_i and the QP's PD; done_o with ok_o and cap_o, the passing SGE
//     to the scatter table at index 0. Never rnr.
//   - nochk_i: a WRITE_WITH_IMM's receive WQE: the next WQE of the QP's receive queue or SRQ (a
//     TM-SRQ's too, without a lookup: docs/architecture.md), taken and not checked, since no data is
//     placed in it (nothing goes to the scatter table); ok_o and cap_o are then undefined.
// flush_i (while idle_o) fetches WQE flush_idx_i of the QP's receive queue for its wr_id
// (flush_last_o: wrid_o is valid from the next cycle).
module tmnic_rx_wqe import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned TM_ENTRIES = 1024,
  localparam int unsigned H_W = $clog2(TM_ENTRIES),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned NSGE = WQE_MAX_SGE
) (
  input  logic clk_i,
  input  logic rst_ni,

  // SRQ doorbells and reconfiguration (tmnic_rq_src)
  input  logic             db_i,
  input  logic [11:0]      db_idx_i,
  input  logic [15:0]      db_pi_i,
  input  logic             srq_reset_i,
  input  logic [15:0]      srq_reset_idx_i,

  // The packet's QP (the responder's registered reads): its SRQ and that SRQ's entry, its own
  // receive queue (ring, next index, whether a WQE is posted there at start_i) and PD
  input  logic             has_srq_i,
  input  logic [SRQ_W-1:0] srq_i,
  input  logic             srq_fresh_i,
  /* verilator lint_off UNUSEDSIGNAL */   // (the op-ring fields and the CQ are tmnic_tm_ops' and tmnic_rx_cqe's)
  input  srq_cfg_t         scfg_i,
  /* verilator lint_on UNUSEDSIGNAL */
  input  logic [15:0]      pd_i,
  input  logic [63:0]      rq_base_i,
  input  logic [3:0]       rq_log_i,
  input  logic [15:0]      rq_idx_i,
  input  logic             rq_avail_i,
  // The packet: payload length, and its first 16 bytes once stored (tmnic_rx_buf)
  input  logic [12:0]      pay_len_i,
  input  logic             head_beg_i,
  input  logic [127:0]     head_first_i,

  input  logic             start_i,
  input  logic             key_i,
  input  logic             key_ld_i,      // key_sge_i/key_acc_i may start now: load them (a state
                                          // decode of the caller, not its start decision)
  input  sge_t             key_sge_i,
  input  logic [3:0]       key_acc_i,
  input  logic             nochk_i,
  output logic             idle_o,
  output logic             rnr_now_o,     // with start_i: no buffer, decided now
  output logic             rnr_o,
  output logic             done_o,
  output logic             ok_o,
  output logic [34:0]      cap_o,
  output rx_kind_e         kind_o,
  output logic             rndv_o,
  output logic [63:0]      tag_o,
  output logic [31:0]      ctx_o,
  output logic [15:0]      idx_o,
  output logic             rq_inc_o,
  output logic [4:0]       skip_o,
  output logic [63:0]      wrid_o,

  input  logic             flush_i,
  input  logic [15:0]      flush_idx_i,
  output logic             flush_last_o,

  // Checked SGEs, one per passing SGE, to the scatter table; the MR table's read port
  output logic             sg_we_o,
  output logic [2:0]       sg_idx_o,
  output logic [63:0]      sg_iova_o,
  output logic [31:0]      sg_len_o,
  output logic [MR_W-1:0]  mr_idx_o,
  input  mr_t              mr_rd_i,

  // Tag matching: engine lookups, the tag-buffer RAM, the ADD not yet in it, statistics pulses
  output logic             lk_valid_o,
  input  logic             lk_ready_i,
  output logic [63:0]      lk_tag_o,
  output logic             lk_commit_miss_o,
  input  logic             lk_rsp_valid_i,
  input  logic             lk_rsp_hit_i,
  input  logic [H_W-1:0]   lk_rsp_handle_i,
  input  logic             lk_rsp_unexp_i,
  output logic             tb_re_o,
  output logic [H_W-1:0]   tb_raddr_o,
  input  logic [127:0]     tb_rdata_i,
  input  logic             add_pend_i,
  input  logic [H_W-1:0]   add_pend_handle_i,
  output logic             tm_exp_o,
  output logic             tm_unexp_o,
  output logic             tm_notag_o,
  output logic [SRQ_W-1:0] tm_srq_o,

  // DMA read client (WQEs)
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic               rsp_last_i
);
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_s
    $fatal(1, "tmnic_rx_wqe: NUM_SRQ must be a power of two >= 2");
  end
  if (NUM_MR < 2 || (NUM_MR & (NUM_MR - 1)) != 0) begin : g_chk_mr
    $fatal(1, "tmnic_rx_wqe: NUM_MR must be a power of two >= 2");
  end

  typedef enum logic [2:0] {W_IDLE, W_SRQ, W_TM, W_FETCH, W_FETCH_WAIT, W_SGE, W_FLUSH} state_e;
  // (Kept binary: Yosys recodes an extracted FSM to one-hot, which here, with its outputs feeding the
  // responder's next-state logic, cost the flattened responder 2.4 K LUT4 on ECP5: 14,351 vs 11,966.)
  (* fsm_encoding = "none" *) state_e state_q;
  state_e state_d;
  // Payload registers (no reset): the WQE's queue, kind and the fields the done cycle reports. (The
  // receive queue's index moves on exactly when the WQE is not the SRQ's, and only a matched EAGER
  // skips its TMH: rq_inc_o and skip_o follow from these.)
  logic        fl_srq_q, fl_srq_d;      // the WQE is the SRQ's (or a matched buffer): the SRQ's PD
  rx_kind_e    kind_q, kind_d;
  logic        rndv_q, rndv_d;
  logic [15:0] idx_q, idx_d;
  logic        key_q, key_d, nochk_q, nochk_d;   // the request: a remote key check, an unchecked take
  sge_t        ksge_q;                           // the key's range (loaded with the request)
  logic [3:0]  kacc_q;

  // ---------------------------------------------------------------- sub-blocks
  logic        src_avail, f_req, f_srq, f_last, tb_ld;
  logic [15:0] src_ci, f_idx;
  logic [63:0] f_base;
  logic [4:0]  f_log;
  logic [7:0]  w_nsge;
  sge_t [NSGE-1:0] w_sges;                // (the check reads only the first w_nsge entries)
  tmnic_rq_src #(.DATA_W(DATA_W), .NUM_SRQ(NUM_SRQ)) u_src (
    .clk_i, .rst_ni,
    .db_i, .db_idx_i, .db_pi_i, .srq_reset_i, .srq_reset_idx_i,
    .srq_i, .avail_o(src_avail), .ci_o(src_ci),
    .req_i(f_req), .req_srq_i(f_srq), .req_base_i(f_base), .req_log_i(f_log), .req_idx_i(f_idx),
    .tb_ld_i(tb_ld), .tb_sge_i(tb_rdata_i),
    .last_o(f_last), .wrid_o, .nsge_o(w_nsge), .sges_o(w_sges),
    .rd_addr_o, .rd_len_o, .rd_valid_o, .rd_ready_i, .rsp_valid_i, .rsp_data_i, .rsp_off_i, .rsp_last_i);
  wire is_tm = has_srq_i && scfg_i.valid && scfg_i.tm;
  wire srq_has_wqe = scfg_i.valid && src_avail;
  wire no_buf = has_srq_i ? !srq_has_wqe : !rq_avail_i;
  // (an unchecked take never classifies, so an empty TM-SRQ is an RNR at once too)
  assign rnr_now_o = !key_i && !(has_srq_i && !srq_fresh_i) && (!is_tm || nochk_i) && no_buf;

  logic           tc_start, tc_idle, tc_done, tc_rnr, tc_rndv;
  rx_kind_e       tc_kind;
  logic [H_W-1:0] tc_handle;
  tmnic_tm_classify #(.TM_ENTRIES(TM_ENTRIES), .NUM_SRQ(NUM_SRQ), .LEN_W(13)) u_classify (
    .clk_i, .rst_ni, .start_i(tc_start), .idle_o(tc_idle), .srq_i, .pay_len_i,
    .has_wqe_i(srq_has_wqe), .head_beg_i, .head_first_i,
    .lk_valid_o, .lk_ready_i, .lk_tag_o, .lk_commit_miss_o, .lk_rsp_valid_i, .lk_rsp_hit_i, .lk_rsp_handle_i,
    .lk_rsp_unexp_i, .add_pend_i, .add_pend_handle_i, .tb_re_o, .tb_raddr_o,
    .done_o(tc_done), .rnr_o(tc_rnr), .kind_o(tc_kind), .rndv_o(tc_rndv), .tag_o, .ctx_o,
    .handle_o(tc_handle), .tm_exp_o, .tm_unexp_o, .tm_notag_o, .tm_srq_o);

  // The check walks the fetched WQE's list, or the remote key's range as a one-SGE list.
  logic sge_start, chk_idle, chk_done;
  logic [7:0] c_nsge;
  sge_t [NSGE-1:0] c_sges;
  always_comb begin
    c_sges = w_sges;
    if (key_q) c_sges[0] = ksge_q;
  end
  assign c_nsge = key_q ? 8'd1 : w_nsge;
  tmnic_sge_chk #(.NUM_MR(NUM_MR), .NSGE(NSGE)) u_sgechk (
    .clk_i, .rst_ni, .start_i(sge_start), .idle_o(chk_idle), .nsge_i(c_nsge), .pd_i(fl_srq_q ? scfg_i.pd : pd_i),
    .access_i(key_q ? kacc_q : 4'(1 << ACCESS_LOCAL_WRITE_BIT)), .sge_i(c_sges), .mr_idx_o, .mr_rd_i,
    .out_valid_o(sg_we_o), .out_idx_o(sg_idx_o), .out_iova_o(sg_iova_o), .out_len_o(sg_len_o),
    .done_o(chk_done), .ok_o, .total_o(cap_o));

  // ---------------------------------------------------------------- next state
  logic fetch_go;            // take the next WQE of the QP's queue (its receive queue or its SRQ)
  logic decide;              // the QP's SRQ entry is current: classify, fetch, or no buffer
  always_comb begin
    state_d = state_q;
    fl_srq_d = fl_srq_q; kind_d = kind_q; rndv_d = rndv_q; idx_d = idx_q;
    key_d = (state_q == W_IDLE) ? key_i : key_q;
    nochk_d = (state_q == W_IDLE) ? nochk_i : nochk_q;
    rnr_o = 1'b0; done_o = 1'b0; flush_last_o = 1'b0;
    fetch_go = 1'b0; decide = 1'b0; tc_start = 1'b0; sge_start = 1'b0; tb_ld = 1'b0;
    f_req = 1'b0; f_srq = 1'b0; f_base = rq_base_i; f_log = 5'(rq_log_i); f_idx = rq_idx_i;

    unique case (state_q)
      W_IDLE: begin
        if (start_i) begin
          kind_d = RXK_PLAIN;
          rndv_d = 1'b0;
          if (key_i) begin
            fl_srq_d = 1'b0;                                // the QP's PD
            sge_start = 1'b1;
            state_d = W_SGE;
          end else if (has_srq_i && !srq_fresh_i) state_d = W_SRQ;   // its SRQ's entry arrives next cycle
          else decide = 1'b1;
        end else if (flush_i) begin
          f_req = 1'b1;
          f_idx = flush_idx_i;
          state_d = W_FLUSH;
        end
      end
      W_SRQ: decide = 1'b1;
      W_FLUSH: if (f_last) begin
        flush_last_o = 1'b1;
        state_d = W_IDLE;
      end

      // TM-SRQ: classified. A matched tag's buffer, as a one-SGE WQE, goes through the usual SGE
      // check; it is read from the buffer RAM in this cycle.
      W_TM: if (tc_done) begin
        kind_d = tc_kind;
        rndv_d = tc_rndv;
        if (tc_rnr) begin
          rnr_o = 1'b1;
          state_d = W_IDLE;
        end else if (tc_kind == RXK_MATCHED) begin
          tb_ld = 1'b1;
          fl_srq_d = 1'b1;
          idx_d = 16'(tc_handle) - scfg_i.tag_base;   // completions carry the SRQ's own handle
          sge_start = 1'b1;
          state_d = W_SGE;
        end else begin
          fetch_go = 1'b1;                           // unexpected or untagged: the next SRQ WQE
        end
      end

      W_FETCH: fetch_go = 1'b1;
      W_FETCH_WAIT: if (f_last) begin
        if (nochk_q) begin
          done_o = 1'b1;
          state_d = W_IDLE;
        end else begin
          sge_start = 1'b1;
          state_d = W_SGE;
        end
      end
      W_SGE: if (chk_done) begin
        done_o = 1'b1;
        state_d = W_IDLE;
      end
      default: state_d = W_IDLE;
    endcase

    if (decide) begin
      if (is_tm && !nochk_d) begin              // (an unchecked take never classifies)
        tc_start = 1'b1;
        state_d = W_TM;
      end else if (no_buf) begin
        rnr_o = state_q == W_SRQ;                   // (in the start cycle: rnr_now_o)
        state_d = W_IDLE;
      end else begin
        state_d = W_FETCH;
      end
    end
    if (fetch_go) begin
      f_req = 1'b1;
      f_srq = has_srq_i;
      fl_srq_d = has_srq_i;
      if (has_srq_i) begin
        f_base = scfg_i.base;
        f_log = 5'(scfg_i.log_size);
        idx_d = src_ci;
      end else begin
        idx_d = rq_idx_i;
      end
      state_d = W_FETCH_WAIT;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) state_q <= W_IDLE;
    else         state_q <= state_d;
  end
  always_ff @(posedge clk_i) begin
    fl_srq_q <= fl_srq_d; kind_q <= kind_d; rndv_q <= rndv_d; idx_q <= idx_d;
    key_q <= key_d; nochk_q <= nochk_d;
    // The request's range loads whenever the caller says a key check may start (not on the start
    // itself: that waits for the responder's packet decision, the placed responder's critical path;
    // nor in every idle cycle: a 131-bit copy per simulated cycle).
    if (state_q == W_IDLE && key_ld_i) begin
      ksge_q <= key_sge_i;
      kacc_q <= key_acc_i;
    end
  end

  assign idle_o = state_q == W_IDLE;
  assign kind_o = kind_q;
  assign rndv_o = rndv_q;
  assign rq_inc_o = !fl_srq_q;
  assign idx_o = idx_q;
  assign skip_o = (kind_q == RXK_MATCHED && !rndv_q) ? 5'(TMH_SIZE) : 5'd0;   // an EAGER's TMH

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_start_idle: assert property (@(posedge clk_i) disable iff (!chk_q) (start_i || flush_i) |-> idle_o)
    else $error("tmnic_rx_wqe: started while busy");
  a_key_ld: assert property (@(posedge clk_i) disable iff (!chk_q) start_i && key_i |-> key_ld_i)
    else $error("tmnic_rx_wqe: a key check started without its range loaded");
  a_key_mode: assert property (@(posedge clk_i) disable iff (!chk_q) start_i |-> !(key_i && nochk_i))
    else $error("tmnic_rx_wqe: a key check and an unchecked take in one request");
  a_one_req: assert property (@(posedge clk_i) disable iff (!chk_q) !(start_i && flush_i))
    else $error("tmnic_rx_wqe: a start and a flush in one cycle");
  a_classify_start: assert property (@(posedge clk_i) disable iff (!chk_q) tc_start |-> tc_idle)
    else $error("tmnic_rx_wqe: classification started while one runs");
  a_sgechk_start: assert property (@(posedge clk_i) disable iff (!chk_q) sge_start |-> chk_idle)
    else $error("tmnic_rx_wqe: SGE check started while one runs");
  // Everything that reads the SRQ's entry does so when it is current.
  a_srq_fresh: assert property (@(posedge clk_i) disable iff (!chk_q)
    (tc_start || (fetch_go && has_srq_i) || tb_ld) |-> srq_fresh_i)
    else $error("tmnic_rx_wqe: the SRQ's entry used before its read returned");
`endif
endmodule
