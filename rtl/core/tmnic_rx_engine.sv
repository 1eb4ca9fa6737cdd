// Receive engine: the responder of every QP, and the first stop of ACKs for the requester.
// For each parsed packet it checks the QP (exists, ready, from the right peer), then
//   - ACK/NAK: passes {qp, AETH, PSN} to the send engine;
//   - SEND request: checks the PSN against the expected PSN (duplicates are re-ACKed and not
//     executed; a gap is NAKed once), checks the opcode sequence, takes a receive WQE from the
//     SRQ or the QP's receive queue at the first packet (none: RNR NAK, packet dropped), checks the
//     WQE's SGEs against the MR table (LOCAL_WRITE) before any DMA, stores the payload in the RX
//     buffer and scatters it by DMA writes, then completes the WQE on the last packet and ACKs
//     when asked. Errors: LOC_LEN_ERR (buffer too small) with NAK invalid request, LOC_PROT_ERR
//     (bad SGE) with NAK remote operational error; both move the QP to ERR.
// It also flushes the receive queue (and a WQE held mid-message) of QPs in ERR.
// On a TM-SRQ the first packet's TMH decides (docs/tag-matching.md): EAGER/RNDV are looked up in the
// matching engine; a hit lands in the tagged buffer (EAGER without its TMH; RNDV whole, completed as
// TM_RNDV_INCOMPLETE because rendezvous is not offloaded), a miss is an unexpected message for the
// next SRQ buffer; NO_TAG, FIN, reserved opcodes and tagged messages shorter than a TMH go whole to
// an SRQ buffer as TM_NO_TAG. Every TM completion goes to the SRQ's CQ.
// (Longer than our ~600-line guideline: it is one responder state machine whose states share the
// per-QP message state; the ACK emitter at the end is the part to split out next.)
module tmnic_rx_engine import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned TM_ENTRIES = 1024,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned H_W = $clog2(TM_ENTRIES),
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned NSGE = WQE_MAX_SGE,
  localparam int unsigned RXB_POS_W = 12          // one 4 KiB packet buffer
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Context tables: every QP's state and SRQ use, and read ports (0 current QP, 1 QP of the ACK
  // being sent, 2 QP of the completion being reported; MR of the SGE being checked; SRQ of the QP)
  input  logic [NUM_QP-1:0][2:0]  qp_state_i,
  input  logic [NUM_QP-1:0]       qp_has_srq_i,
  output logic [2:0][QP_W-1:0]    qp_idx_o,
  input  qp_cfg_t [2:0]           qp_rd_i,
  output logic [MR_W-1:0]         mr_idx_o,
  input  mr_t                     mr_rd_i,
  output logic [SRQ_W-1:0]        srq_idx_o,
  input  srq_cfg_t                srq_rd_i,
  input  logic [47:0] local_mac_i,
  input  logic [31:0] local_ip_i,
  input  logic        cfg_changed_i,
  input  logic        init_rq_i,
  input  logic [QP_W-1:0] init_qp_i,
  input  logic [23:0] init_psn_i,
  input  logic        srq_reset_i,
  input  logic [15:0] srq_reset_idx_i,
  input  logic        db_valid_i,        // doorbells: db_srq_i selects SRQ, else receive queue
  input  logic        db_srq_i,
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,

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

  // DMA write client (payload scatter), data pulled from the RX buffer
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
  if (DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_rx_engine: only DATA_W = 512 is implemented");
  end
  if ((NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_s
    $fatal(1, "tmnic_rx_engine: NUM_SRQ must be a power of two");
  end

  // ---------------------------------------------------------------- per-QP / per-SRQ state
  logic [23:0] epsn_q [NUM_QP];
  logic [23:0] msn_q [NUM_QP];
  logic [15:0] rq_pi_q [NUM_QP];
  logic [15:0] rq_ci_q [NUM_QP];
  logic        nak_sent_q [NUM_QP];
  logic        held_q [NUM_QP];        // a WQE is held for a multi-packet message
  logic [63:0] h_wrid_q [NUM_QP];
  logic [15:0] h_idx_q [NUM_QP];
  logic        h_bad_q [NUM_QP];       // an SGE failed the protection check
  logic [2:0]  h_nsge_q [NUM_QP];
  logic [31:0] h_off_q [NUM_QP];       // message bytes received so far
  // Tag matching of the held message: kind, TMH fields, rendezvous, MATCH completion already written
  typedef enum logic [1:0] {K_PLAIN, K_MATCHED, K_UNEXP, K_NOTAG} kind_e;
  kind_e       h_kind_q [NUM_QP];
  logic        h_rndv_q [NUM_QP];
  logic        h_msent_q [NUM_QP];
  logic [63:0] h_tag_q [NUM_QP];
  logic [31:0] h_ctx_q [NUM_QP];
  logic [63:0] h_iova_q [NUM_QP * 8];
  logic [31:0] h_len_q [NUM_QP * 8];
  logic [15:0] srq_pi_q [NUM_SRQ];
  // Pending ACK/NAK per QP and the queue of QPs that have one
  logic        ack_pend_q [NUM_QP];
  logic [7:0]  ack_syn_q [NUM_QP];
  logic [23:0] ack_msn_q [NUM_QP];
  logic [23:0] ack_psn_q [NUM_QP];
  logic [QP_W-1:0] ackq_q [NUM_QP];
  logic [QP_W:0]   ackq_wr_q, ackq_rd_q;
  wire  [QP_W-1:0] ack_head = ackq_q[ackq_rd_q[QP_W-1:0]];
  logic [15:0] srq_ci_q [NUM_SRQ];

  // Registered like the send engine's table read: the PSN of query_qp_i one cycle later.
  always_ff @(posedge clk_i) query_psn_o <= epsn_q[query_qp_i];

  typedef enum logic [4:0] {
    S_IDLE, S_SCAN, S_LOOKUP, S_FETCH, S_FETCH_WAIT, S_SGE, S_EXEC, S_STORE, S_SCATTER, S_SCATTER_WAIT,
    S_DONE, S_OUT, S_DRAIN, S_FLUSH_FETCH, S_FLUSH_WAIT, S_TMH, S_TM_WAIT, S_TM_BUF, S_TM_BUF2, S_RNR
  } state_e;
  state_e state_q, after_q;

  // Header of the packet being handled; address fields were checked by the parser.
  /* verilator lint_off UNUSEDSIGNAL */
  roce_hdr_t h_q;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [QP_W-1:0] q_q;
  logic scan_q;
  logic [1023:0] wqe_q;
  logic [2:0] sge_i_q;
  logic [31:0] cap_q;                  // capacity of the WQE being checked
  logic [12:0] stored_q;               // payload bytes stored in the RX buffer
  logic [31:0] sge_off_q;              // offset in SGE sge_i_q during scatter
  logic [12:0] done_q;                 // packet bytes scattered so far
  logic [RXB_POS_W-1:0] chunk_pos_q;
  logic fl_srq_q;                      // the WQE being fetched is from the SRQ
  logic [4:0] skip_q;                  // leading payload bytes not delivered (the TMH of a matched EAGER)
  kind_e t_kind_q;                     // classification of the first packet on a TM-SRQ
  logic t_rndv_q;
  logic [63:0] t_tag_q;
  logic [31:0] t_ctx_q;
  logic [H_W-1:0] t_handle_q;

  // Configuration of the current QP (the send-side fields belong to the send engine).
  /* verilator lint_off UNUSEDSIGNAL */
  wire qp_cfg_t cfg = qp_rd_i[0];
  /* verilator lint_on UNUSEDSIGNAL */
  wire has_srq = (cfg.srq != 16'(NO_SRQ));
  wire [SRQ_W-1:0] sn = cfg.srq[SRQ_W-1:0];
  assign srq_idx_o = sn;
  /* verilator lint_off UNUSEDSIGNAL */  // the op-ring and tag-range fields belong to tmnic_tm_ops
  wire srq_cfg_t scfg = srq_rd_i;
  /* verilator lint_on UNUSEDSIGNAL */
  wire [7:0] op = h_q.opcode;
  wire is_first = (op == OP_SEND_FIRST) || (op == OP_SEND_ONLY) || (op == OP_SEND_ONLY_IMM);
  wire is_last = (op == OP_SEND_LAST) || (op == OP_SEND_LAST_IMM) || (op == OP_SEND_ONLY) ||
                 (op == OP_SEND_ONLY_IMM);
  wire is_send = (op <= OP_SEND_ONLY_IMM);
  wire has_imm = (op == OP_SEND_LAST_IMM) || (op == OP_SEND_ONLY_IMM);
  wire [QP_W+2:0] hs = {q_q, sge_i_q};

  // TMH in the first payload beat: opcode, app_ctx (BE32), tag (BE64)
  wire [7:0] tmh_op = s_pay_tdata_i[7:0];
  logic [31:0] tmh_ctx;
  logic [63:0] tmh_tag;
  always_comb begin
    for (int i = 0; i < 4; i++) tmh_ctx[8*i +: 8] = s_pay_tdata_i[(7 - i)*8 +: 8];
    for (int i = 0; i < 8; i++) tmh_tag[8*i +: 8] = s_pay_tdata_i[(15 - i)*8 +: 8];
  end
  wire tmh_tagged = (tmh_op == TMH_EAGER || tmh_op == TMH_RNDV) && h_q.pay_len >= 13'(TMH_SIZE);
  wire is_tm = has_srq && scfg.valid && scfg.tm;
  wire srq_has_wqe = scfg.valid && srq_ci_q[sn] != srq_pi_q[sn];
  assign lk_srq_o = sn;

  // SGE sge_i_q of the fetched WQE
  wire sge_t sge_cur = wqe_sge(wqe_q, sge_i_q);
  wire [63:0] sge_addr = sge_cur.addr;
  wire [31:0] sge_len = sge_cur.length;
  wire [31:0] sge_key = sge_cur.lkey;
  assign mr_idx_o = sge_key[MR_KEY_SHIFT +: MR_W];
  wire mr_t sge_mr = mr_rd_i;
  wire [7:0] w_nsge = wqe_q[WQE_NUM_SGE_OFF*8 +: 8];

  // Scatter geometry: next piece of the packet inside the held WQE's SGE sge_i_q.
  wire [31:0] pkt_left = {19'd0, h_q.pay_len - done_q};
  wire [12:0] pay_del = h_q.pay_len - {8'd0, skip_q};   // payload bytes delivered from this packet
  wire [31:0] sge_left = h_len_q[hs] - sge_off_q;
  wire [31:0] piece = (sge_left < pkt_left) ? sge_left : pkt_left;

  // Both builders take the whole QP configuration and use the fields they need.
  /* verilator lint_off UNUSEDSIGNAL */
  function automatic roce_hdr_t mk_ack(input qp_cfg_t c, input logic [QP_W-1:0] q, input logic [47:0] mac,
                                       input logic [31:0] ip, input logic [7:0] syn, input logic [23:0] msn,
                                       input logic [23:0] psn);
    roce_hdr_t a;
    a = '0;
    a.dst_mac = c.dmac;
    a.src_mac = mac;
    a.src_ip = ip;
    a.dst_ip = c.dest_ip;
    a.udp_sport = 16'hC000 | 16'(q);
    a.opcode = OP_ACK;
    a.dest_qp = c.dest_qpn;
    a.psn = psn;
    a.aeth = {syn, msn};
    mk_ack = a;
  endfunction

  /* verilator lint_on UNUSEDSIGNAL */

  // The completion being reported, field by field (assembled below; no wide temporaries in the FSM,
  // which Verilator would clear on every clock).
  logic [63:0] c_wrid_q;
  logic [15:0] c_idx_q;
  logic [7:0]  c_status_q;
  logic [31:0] c_len_q, c_imm_q, c_flags_q;
  logic [QP_W-1:0] c_qp_q;
  logic [15:0] c_cq_q, c_handle_q;
  logic [7:0] c_op_q;
  logic [63:0] c_tag_q;
  logic [31:0] c_ctx_q;
  assign qp_idx_o = {c_qp_q, ack_head, q_q};   // read ports: current QP, ACK being sent, completion
  always_comb begin
    cqe_o = '0;
    cqe_o.cq = c_cq_q;
    cqe_o.wr_id = c_wrid_q;
    cqe_o.byte_len = c_len_q;
    cqe_o.imm = c_imm_q;
    cqe_o.qp_num = 24'(c_qp_q);
    cqe_o.src_qp = qp_rd_i[2].dest_qpn;
    cqe_o.wc_flags = c_flags_q;
    cqe_o.wqe_idx = c_idx_q;
    cqe_o.opcode = c_op_q;
    cqe_o.status = c_status_q;
    cqe_o.tm_tag = c_tag_q;
    cqe_o.tm_app_ctx = c_ctx_q;
    cqe_o.tm_handle = c_handle_q;
  end

  // TM flags of the completion that ends a held message: DATA_VALID, and MATCH unless already sent.
  function automatic logic [31:0] tm_end_flags(input kind_e k, input logic msent);
    tm_end_flags = (k != K_MATCHED) ? 32'd0 : (msent ? WC_FLAG_TM_DATA_VALID : (WC_FLAG_TM_DATA_VALID | WC_FLAG_TM_MATCH));
  endfunction

  // The first packet's classification becomes the held message's.
  task automatic hold_tm(input logic [QP_W-1:0] q);
    h_kind_q[q] <= t_kind_q;
    h_rndv_q[q] <= t_rndv_q;
    h_msent_q[q] <= 1'b0;
    h_tag_q[q] <= t_tag_q;
    h_ctx_q[q] <= t_ctx_q;
  endtask

  // Completion fields that depend on the held message's kind (QP q_q): CQ, opcode, TM fields.
  task automatic set_c_kind(input kind_e k, input logic [63:0] tag, input logic [31:0] ctx, input logic [15:0] idx);
    c_cq_q <= (k == K_PLAIN) ? cfg.recv_cq : scfg.cq;
    c_op_q <= (k == K_PLAIN) ? WC_OP_RECV : (k == K_NOTAG) ? WC_OP_TM_NO_TAG : WC_OP_TM_RECV;
    c_tag_q <= (k == K_MATCHED) ? tag : 64'd0;
    c_ctx_q <= (k == K_MATCHED) ? ctx : 32'd0;
    c_handle_q <= (k == K_MATCHED) ? idx : 16'd0;
  endtask

  // RX buffer: payload of the current packet at byte 0.
  logic rxb_wr;
  logic [RXB_POS_W-1:0] rxb_wpos;
  tmnic_shift_buf #(.DATA_W(DATA_W), .DEPTH(4096 / BYTES)) u_rxb (
    .clk_i,
    .wr_en_i(rxb_wr), .wr_pos_i(rxb_wpos), .wr_data_i(s_pay_tdata_i), .wr_be_i(s_pay_tkeep_i),
    .rd_en_i(wr_data_req_i), .rd_pos_i(chunk_pos_q + RXB_POS_W'(wr_data_off_i)), .rd_data_o(wr_data_o));
  // The parser may already offer the next packet's payload: take beats only for a packet that has one.
  assign s_pay_tready_o = (state_q == S_STORE) || (state_q == S_DRAIN && h_q.pay_len != 13'd0);
  assign rxb_wr = (state_q == S_STORE) && s_pay_tvalid_i;
  assign rxb_wpos = RXB_POS_W'(stored_q);
  assign s_hdr_ready_o = (state_q == S_IDLE) && !scan_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      after_q <= S_IDLE;
      h_q <= '0;
      q_q <= '0;
      scan_q <= 1'b0;
      wqe_q <= '0;
      sge_i_q <= '0;
      cap_q <= '0;
      stored_q <= '0;
      sge_off_q <= '0;
      done_q <= '0;
      chunk_pos_q <= '0;
      fl_srq_q <= 1'b0;
      ack_valid_o <= 1'b0; ack_qp_o <= '0; ack_aeth_o <= '0; ack_psn_o <= '0;
      tx_valid_o <= 1'b0; tx_hdr_o <= '0;
      rd_valid_o <= 1'b0; rd_addr_o <= '0; rd_len_o <= '0;
      wr_valid_o <= 1'b0; wr_addr_o <= '0; wr_len_o <= '0;
      cqe_valid_o <= 1'b0;
      c_wrid_q <= '0; c_idx_q <= '0; c_status_q <= '0; c_len_q <= '0; c_imm_q <= '0; c_flags_q <= '0;
      c_qp_q <= '0;
      c_cq_q <= '0; c_handle_q <= '0; c_op_q <= '0; c_tag_q <= '0; c_ctx_q <= '0;
      skip_q <= '0;
      t_kind_q <= K_PLAIN; t_rndv_q <= 1'b0; t_tag_q <= '0; t_ctx_q <= '0; t_handle_q <= '0;
      lk_valid_o <= 1'b0; lk_tag_o <= '0; lk_commit_miss_o <= 1'b0;
      tb_re_o <= 1'b0; tb_raddr_o <= '0;
      {tm_exp_o, tm_unexp_o, tm_notag_o} <= '0; tm_srq_o <= '0;
      err_o <= 1'b0; err_qp_o <= '0;
      {drop_qp_o, tx_ack_o, tx_rnr_o, tx_nak_o, dup_o, psn_err_o, prot_err_o} <= '0;
      ackq_wr_q <= '0;
      ackq_rd_q <= '0;
      for (int i = 0; i < NUM_QP; i++) begin
        ack_pend_q[i] <= 1'b0;
        epsn_q[i] <= '0; msn_q[i] <= '0; rq_pi_q[i] <= '0; rq_ci_q[i] <= '0;
        nak_sent_q[i] <= 1'b0; held_q[i] <= 1'b0;
        h_kind_q[i] <= K_PLAIN; h_rndv_q[i] <= 1'b0; h_msent_q[i] <= 1'b0;
      end
      for (int i = 0; i < NUM_SRQ; i++) begin
        srq_pi_q[i] <= '0; srq_ci_q[i] <= '0;
      end
    end else begin
      // ACK/NAK requested by the packet being handled (queued per QP at the end of this block)
      logic a_go;
      logic [7:0] a_syn;
      logic [23:0] a_msn, a_psn;
      a_go = 1'b0; a_syn = '0; a_msn = '0; a_psn = '0;
      err_o <= 1'b0;
      {drop_qp_o, tx_ack_o, tx_rnr_o, tx_nak_o, dup_o, psn_err_o, prot_err_o} <= '0;
      {tm_exp_o, tm_unexp_o, tm_notag_o} <= '0;
      tb_re_o <= 1'b0;
      if (lk_valid_o && lk_ready_i) lk_valid_o <= 1'b0;
      if (ack_valid_o && ack_ready_i) ack_valid_o <= 1'b0;
      if (cqe_valid_o && cqe_ready_i) cqe_valid_o <= 1'b0;
      if (rd_valid_o && rd_ready_i) rd_valid_o <= 1'b0;
      if (wr_valid_o && wr_ready_i) wr_valid_o <= 1'b0;
      if (cfg_changed_i) scan_q <= 1'b1;
      if (db_valid_i && db_srq_i && db_idx_i < 12'(NUM_SRQ)) srq_pi_q[db_idx_i[SRQ_W-1:0]] <= db_pi_i;
      if (db_valid_i && !db_srq_i && db_idx_i < 12'(NUM_QP)) begin
        rq_pi_q[db_idx_i[QP_W-1:0]] <= db_pi_i;
        scan_q <= 1'b1;
      end
      if (init_rq_i) begin
        epsn_q[init_qp_i] <= init_psn_i; msn_q[init_qp_i] <= '0;
        rq_pi_q[init_qp_i] <= '0; rq_ci_q[init_qp_i] <= '0;
        nak_sent_q[init_qp_i] <= 1'b0; held_q[init_qp_i] <= 1'b0;
      end
      if (srq_reset_i && srq_reset_idx_i < 16'(NUM_SRQ)) begin
        srq_pi_q[srq_reset_idx_i[SRQ_W-1:0]] <= '0;
        srq_ci_q[srq_reset_idx_i[SRQ_W-1:0]] <= '0;
      end
      if (rsp_valid_i) begin
        if (rsp_off_i == 14'sd0) wqe_q[511:0] <= rsp_data_i;
        else wqe_q[1023:512] <= rsp_data_i;
      end

      unique case (state_q)
        S_IDLE: begin
          if (scan_q) state_q <= S_SCAN;
          else if (s_hdr_valid_i) begin
            h_q <= s_hdr_i;
            q_q <= s_hdr_i.dest_qp[QP_W-1:0];
            state_q <= S_LOOKUP;
          end
        end

        // QPs in ERR: flush a held WQE, then the receive queue.
        S_SCAN: begin
          logic found;
          found = 1'b0;
          for (int c = 0; c < NUM_QP; c++) begin
            if (!found && qp_state_i[c] == QPS_ERR &&
                (held_q[c] || (!qp_has_srq_i[c] && rq_ci_q[c] != rq_pi_q[c]))) begin
              found = 1'b1;
              q_q <= QP_W'(c);
            end
          end
          scan_q <= found;
          state_q <= found ? S_FLUSH_FETCH : S_IDLE;
        end
        S_FLUSH_FETCH: begin
          if (held_q[q_q]) begin
            held_q[q_q] <= 1'b0;
            c_wrid_q <= h_wrid_q[q_q]; c_idx_q <= h_idx_q[q_q]; c_status_q <= WC_WR_FLUSH_ERR;
            c_len_q <= '0; c_imm_q <= '0; c_qp_q <= q_q;
            c_flags_q <= tm_end_flags(h_kind_q[q_q], h_msent_q[q_q]);
            set_c_kind(h_kind_q[q_q], h_tag_q[q_q], h_ctx_q[q_q], h_idx_q[q_q]);
            cqe_valid_o <= 1'b1;
            after_q <= S_IDLE;
            state_q <= S_OUT;
          end else begin
            rd_valid_o <= 1'b1;
            rd_addr_o <= cfg.rq_base + {41'd0, rq_ci_q[q_q] & ((16'd1 << cfg.rq_log) - 16'd1), 7'd0};
            rd_len_o <= 13'(WQE_STRIDE);
            state_q <= S_FLUSH_WAIT;
          end
        end
        S_FLUSH_WAIT: if (rsp_valid_i && rsp_last_i) begin
          c_wrid_q <= wqe_q[63:0]; c_idx_q <= rq_ci_q[q_q]; c_status_q <= WC_WR_FLUSH_ERR;
          c_len_q <= '0; c_imm_q <= '0; c_flags_q <= '0; c_qp_q <= q_q;
          set_c_kind(K_PLAIN, '0, '0, '0);
          cqe_valid_o <= 1'b1;
          rq_ci_q[q_q] <= rq_ci_q[q_q] + 16'd1;
          after_q <= S_IDLE;
          state_q <= S_OUT;
        end

        // Which QP, and is the packet for it?
        S_LOOKUP: begin
          logic ok;
          skip_q <= '0;                         // only a matched first packet skips its TMH
          ok = (h_q.dest_qp < 24'(NUM_QP)) && (h_q.dest_qp >= 24'(QPN_FIRST)) && (h_q.src_ip == cfg.dest_ip);
          state_q <= S_DRAIN;
          if (op == OP_ACK) begin
            if (ok && (cfg.state == QPS_RTS || cfg.state == QPS_SQD || cfg.state == QPS_SQE)) begin
              ack_valid_o <= 1'b1;
              ack_qp_o <= q_q;
              ack_aeth_o <= h_q.aeth;
              ack_psn_o <= h_q.psn;
              after_q <= S_DRAIN;
              state_q <= S_OUT;
            end else drop_qp_o <= 1'b1;
          end else if (!ok || !is_send || !(cfg.state == QPS_RTR || cfg.state == QPS_RTS ||
                                            cfg.state == QPS_SQD || cfg.state == QPS_SQE)) begin
            drop_qp_o <= 1'b1;          // unknown QP, wrong peer, not ready, or not supported yet
          end else if (h_q.psn != epsn_q[q_q]) begin
            if (!psn_ge(h_q.psn, epsn_q[q_q])) begin
              dup_o <= 1'b1;            // duplicate: re-ACK the last executed PSN, do not execute
              a_go = 1'b1; a_syn = AETH_SYN_ACK; a_msn = msn_q[q_q]; a_psn = epsn_q[q_q] - 24'd1;
              tx_ack_o <= 1'b1;
              after_q <= S_DRAIN;
              state_q <= S_OUT;
            end else begin
              psn_err_o <= 1'b1;
              if (!nak_sent_q[q_q]) begin
                nak_sent_q[q_q] <= 1'b1;
                a_go = 1'b1; a_syn = AETH_SYN_NAK_PSN_SEQ_ERR; a_msn = msn_q[q_q]; a_psn = epsn_q[q_q];
                tx_nak_o <= 1'b1;
                after_q <= S_DRAIN;
                state_q <= S_OUT;
              end
            end
          end else if (is_first == held_q[q_q]) begin
            // FIRST/ONLY inside a message, or MIDDLE/LAST outside one: invalid request
            a_go = 1'b1; a_syn = AETH_SYN_NAK_INV_REQ; a_msn = msn_q[q_q]; a_psn = h_q.psn;
            tx_nak_o <= 1'b1;
            err_o <= 1'b1; err_qp_o <= q_q;
            after_q <= S_DRAIN;
            state_q <= S_OUT;
          end else if (is_first) begin
            t_kind_q <= K_PLAIN;
            t_rndv_q <= 1'b0;
            skip_q <= '0;
            if (is_tm) state_q <= S_TMH;
            else if (has_srq ? !srq_has_wqe : (rq_ci_q[q_q] == rq_pi_q[q_q])) state_q <= S_RNR;
            else state_q <= S_FETCH;
          end else begin
            state_q <= S_EXEC;
          end
        end

        // No receive WQE (or the TM-SRQ's counters are too far apart): RNR NAK, packet dropped.
        S_RNR: begin
          a_go = 1'b1; a_syn = aeth_syn_rnr(cfg.min_rnr_timer); a_msn = msn_q[q_q]; a_psn = h_q.psn;
          tx_rnr_o <= 1'b1;
          after_q <= S_DRAIN;
          state_q <= S_OUT;
        end

        // TM-SRQ: classify by the TMH in the first payload beat (peeked, not consumed).
        S_TMH: begin
          if (h_q.pay_len == 13'd0 || (s_pay_tvalid_i && !tmh_tagged)) begin
            t_kind_q <= K_NOTAG;
            state_q <= srq_has_wqe ? S_FETCH : S_RNR;
            if (srq_has_wqe) begin
              tm_notag_o <= 1'b1;
              tm_srq_o <= sn;
            end
          end else if (s_pay_tvalid_i) begin
            t_tag_q <= tmh_tag;
            t_ctx_q <= tmh_ctx;
            t_rndv_q <= (tmh_op == TMH_RNDV);
            lk_valid_o <= 1'b1;
            lk_tag_o <= tmh_tag;
            lk_commit_miss_o <= srq_has_wqe;
            state_q <= S_TM_WAIT;
          end
        end
        S_TM_WAIT: if (lk_rsp_valid_i) begin
          tm_srq_o <= sn;
          if (lk_rsp_hit_i) begin
            t_kind_q <= K_MATCHED;
            t_handle_q <= lk_rsp_handle_i;
            skip_q <= t_rndv_q ? 5'd0 : 5'(TMH_SIZE);
            tm_exp_o <= 1'b1;
            state_q <= S_TM_BUF;
          end else if (lk_rsp_unexp_i) begin
            t_kind_q <= K_UNEXP;
            tm_unexp_o <= 1'b1;
            state_q <= S_FETCH;
          end else begin
            // Blocked (counters too far apart) or a miss while the SRQ is empty: nothing was
            // consumed or counted, RNR NAK and the message comes again.
            state_q <= S_RNR;
          end
        end
        // The tagged buffer, as a one-SGE WQE, goes through the usual SGE protection check.
        S_TM_BUF: if (!(add_pend_i && add_pend_handle_i == t_handle_q)) begin
          tb_re_o <= 1'b1;
          tb_raddr_o <= t_handle_q;
          state_q <= S_TM_BUF2;
        end
        S_TM_BUF2: if (!tb_re_o) begin
          wqe_q <= '0;
          wqe_q[WQE_NUM_SGE_OFF*8 +: 8] <= 8'd1;
          wqe_q[WQE_SGE_OFF*8 +: 128] <= tb_rdata_i;
          fl_srq_q <= 1'b1;
          h_idx_q[q_q] <= 16'(t_handle_q) - scfg.tag_base;   // completions carry the SRQ's own handle
          sge_i_q <= '0;
          cap_q <= '0;
          state_q <= S_SGE;
        end

        // Take the next receive WQE (consumed now; completed at the last packet).
        S_FETCH: begin
          rd_valid_o <= 1'b1;
          rd_len_o <= 13'(WQE_STRIDE);
          fl_srq_q <= has_srq;
          if (has_srq) begin
            rd_addr_o <= scfg.base + {41'd0, srq_ci_q[sn] & ((16'd1 << scfg.log_size) - 16'd1), 7'd0};
            h_idx_q[q_q] <= srq_ci_q[sn];
            srq_ci_q[sn] <= srq_ci_q[sn] + 16'd1;
          end else begin
            rd_addr_o <= cfg.rq_base + {41'd0, rq_ci_q[q_q] & ((16'd1 << cfg.rq_log) - 16'd1), 7'd0};
            h_idx_q[q_q] <= rq_ci_q[q_q];
            rq_ci_q[q_q] <= rq_ci_q[q_q] + 16'd1;
          end
          state_q <= S_FETCH_WAIT;
        end
        S_FETCH_WAIT: if (rsp_valid_i && rsp_last_i) begin
          sge_i_q <= '0;
          cap_q <= '0;
          state_q <= S_SGE;
        end
        // Check the WQE's SGEs (LOCAL_WRITE) and remember them for the whole message.
        S_SGE: begin
          if (32'(sge_i_q) >= 32'(w_nsge) || sge_i_q == 3'(NSGE)) begin
            hold_tm(q_q);
            held_q[q_q] <= 1'b1;
            h_wrid_q[q_q] <= wqe_q[63:0];
            h_nsge_q[q_q] <= sge_i_q;
            h_off_q[q_q] <= '0;
            h_bad_q[q_q] <= (w_nsge > 8'(NSGE));
            state_q <= S_EXEC;
          end else begin
            h_iova_q[hs] <= mr_iova(sge_mr, sge_addr);
            h_len_q[hs] <= sge_len;
            if (!mr_ok(sge_mr, sge_key, fl_srq_q ? scfg.pd : cfg.pd, sge_addr, sge_len, 1'b1)) begin
              h_bad_q[q_q] <= 1'b1;
              hold_tm(q_q);
              held_q[q_q] <= 1'b1;
              h_wrid_q[q_q] <= wqe_q[63:0];
              h_nsge_q[q_q] <= sge_i_q;
              h_off_q[q_q] <= '0;
              state_q <= S_EXEC;
            end else begin
              sge_i_q <= sge_i_q + 3'd1;
            end
            cap_q <= cap_q + sge_len;
          end
        end

        // Execute the packet into the held WQE.
        S_EXEC: begin
          logic [31:0] capacity;
          capacity = '0;
          for (int i = 0; i < NSGE; i++) if (3'(i) < h_nsge_q[q_q]) capacity = capacity + h_len_q[{q_q, 3'(i)}];
          if (h_bad_q[q_q] || capacity < h_off_q[q_q] + {19'd0, pay_del}) begin
            held_q[q_q] <= 1'b0;
            err_o <= 1'b1; err_qp_o <= q_q;
            if (h_bad_q[q_q]) prot_err_o <= 1'b1;
            c_wrid_q <= h_wrid_q[q_q]; c_idx_q <= h_idx_q[q_q];
            c_status_q <= h_bad_q[q_q] ? WC_LOC_PROT_ERR : WC_LOC_LEN_ERR;
            c_len_q <= '0; c_imm_q <= '0; c_qp_q <= q_q;
            c_flags_q <= tm_end_flags(h_kind_q[q_q], h_msent_q[q_q]);
            set_c_kind(h_kind_q[q_q], h_tag_q[q_q], h_ctx_q[q_q], h_idx_q[q_q]);
            cqe_valid_o <= 1'b1;
            a_go = 1'b1; a_syn = h_bad_q[q_q] ? AETH_SYN_NAK_REM_OP_ERR : AETH_SYN_NAK_INV_REQ; a_msn = msn_q[q_q]; a_psn = h_q.psn;
            tx_nak_o <= 1'b1;
            after_q <= S_DRAIN;
            state_q <= S_OUT;
          end else begin
            stored_q <= '0;
            done_q <= {8'd0, skip_q};
            // find the SGE holding message offset h_off
            begin
              logic [31:0] o;
              logic [2:0] k;
              o = h_off_q[q_q];
              k = '0;
              for (int i = 0; i < NSGE; i++) begin
                if (3'(i) == k && 3'(i) < h_nsge_q[q_q] && o >= h_len_q[{q_q, 3'(i)}] &&
                    3'(i + 1) < h_nsge_q[q_q]) begin
                  o = o - h_len_q[{q_q, 3'(i)}];
                  k = 3'(i + 1);
                end
              end
              sge_i_q <= k;
              sge_off_q <= o;
            end
            state_q <= (h_q.pay_len == 13'd0) ? S_DONE : S_STORE;
          end
        end

        S_STORE: if (s_pay_tvalid_i) begin
          stored_q <= stored_q + 13'(BYTES);
          if (s_pay_tlast_i) state_q <= S_SCATTER;
        end

        S_SCATTER: begin
          if (done_q == h_q.pay_len) begin
            state_q <= S_DONE;
          end else if (sge_left == 32'd0) begin
            sge_i_q <= sge_i_q + 3'd1;
            sge_off_q <= '0;
          end else begin
            wr_valid_o <= 1'b1;
            wr_addr_o <= h_iova_q[hs] + {32'd0, sge_off_q};
            wr_len_o <= 13'(piece);
            chunk_pos_q <= RXB_POS_W'(done_q);
            done_q <= done_q + 13'(piece);
            sge_off_q <= sge_off_q + piece;
            state_q <= S_SCATTER_WAIT;
          end
        end
        S_SCATTER_WAIT: if (wr_done_i) state_q <= S_SCATTER;

        // Packet executed: advance PSN, complete on the last packet, ACK if asked.
        S_DONE: begin
          epsn_q[q_q] <= epsn_q[q_q] + 24'd1;
          nak_sent_q[q_q] <= 1'b0;
          h_off_q[q_q] <= h_off_q[q_q] + {19'd0, pay_del};
          c_wrid_q <= h_wrid_q[q_q]; c_idx_q <= h_idx_q[q_q]; c_qp_q <= q_q;
          c_status_q <= (h_kind_q[q_q] == K_MATCHED && h_rndv_q[q_q]) ? WC_TM_RNDV_INCOMPLETE : WC_SUCCESS;
          set_c_kind(h_kind_q[q_q], h_tag_q[q_q], h_ctx_q[q_q], h_idx_q[q_q]);
          if (is_last) begin
            c_len_q <= h_off_q[q_q] + {19'd0, pay_del};
            c_imm_q <= has_imm ? h_q.imm : 32'd0;
            c_flags_q <= (has_imm ? WC_FLAG_WITH_IMM : 32'd0) | tm_end_flags(h_kind_q[q_q], h_msent_q[q_q]);
            cqe_valid_o <= 1'b1;
            held_q[q_q] <= 1'b0;
            msn_q[q_q] <= msn_q[q_q] + 24'd1;
          end else if (h_kind_q[q_q] == K_MATCHED && !h_msent_q[q_q]) begin
            // First packet of a multi-packet matched message: the MATCH completion, data follows.
            c_len_q <= '0;
            c_imm_q <= '0;
            c_flags_q <= WC_FLAG_TM_MATCH;
            cqe_valid_o <= 1'b1;
            h_msent_q[q_q] <= 1'b1;
          end
          if (h_q.ack_req) begin
            a_go = 1'b1; a_syn = AETH_SYN_ACK; a_msn = msn_q[q_q] + (is_last ? 24'd1 : 24'd0); a_psn = h_q.psn;
            tx_ack_o <= 1'b1;
          end
          after_q <= S_IDLE;
          state_q <= S_OUT;
        end

        // Wait until every output raised above has been taken.
        S_OUT: if (!(ack_valid_o && !ack_ready_i) && !(cqe_valid_o && !cqe_ready_i))
          state_q <= after_q;

        // Discard the payload of a packet that is not executed.
        S_DRAIN: begin
          if (h_q.pay_len == 13'd0 || (s_pay_tvalid_i && s_pay_tlast_i)) state_q <= S_IDLE;
        end

        default: state_q <= S_IDLE;
      endcase

      // ACK emitter: one pending ACK/NAK per QP, queued by QP number, sent when the TX scheduler
      // takes it. Packet handling never waits for the TX side, so a TX path blocked by a full
      // receive path (loopback) cannot deadlock.
      begin
        logic pop;
        logic [QP_W-1:0] pq;
        pop = (ackq_wr_q != ackq_rd_q) && (!tx_valid_o || tx_ready_i);
        pq = ack_head;
        if (tx_valid_o && tx_ready_i) tx_valid_o <= 1'b0;
        if (pop) begin
          tx_hdr_o <= mk_ack(qp_rd_i[1], pq, local_mac_i, local_ip_i, ack_syn_q[pq], ack_msn_q[pq], ack_psn_q[pq]);
          tx_valid_o <= 1'b1;
          ack_pend_q[pq] <= 1'b0;
          ackq_rd_q <= ackq_rd_q + 1'b1;
        end
        if (a_go) begin
          // A pending PSN-sequence NAK or ACK is superseded; an RNR or error NAK is not replaced by
          // a sequence NAK for the packets that follow it.
          if (!(ack_pend_q[q_q] && a_syn == AETH_SYN_NAK_PSN_SEQ_ERR && ack_syn_q[q_q] != AETH_SYN_ACK && !(pop && pq == q_q))) begin
            ack_syn_q[q_q] <= a_syn;
            ack_msn_q[q_q] <= a_msn;
            ack_psn_q[q_q] <= a_psn;
          end
          if (!ack_pend_q[q_q] || (pop && pq == q_q)) begin
            ack_pend_q[q_q] <= 1'b1;
            ackq_q[ackq_wr_q[QP_W-1:0]] <= q_q;
            ackq_wr_q <= ackq_wr_q + 1'b1;
          end
        end
      end
    end
  end

  assign quiet_o = (state_q == S_IDLE || state_q == S_SCAN) && !rd_valid_o && !wr_valid_o;
  assign idle_o = (state_q == S_IDLE) && !scan_q && (ackq_wr_q == ackq_rd_q) && !tx_valid_o;
  // Pulled offsets stay within one 4 KiB packet (the sign only matters modulo the buffer).
  // Blocked lookups and misses with an empty SRQ are handled alike (RNR NAK), so "blocked" itself
  // is not needed.
  wire unused_ok = ^{wr_data_off_i[13:12], lk_rsp_blocked_i};
endmodule
