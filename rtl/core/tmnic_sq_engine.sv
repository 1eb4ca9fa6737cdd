// Requester (send) engine. Owns every QP's send-side state: producer index from the doorbell,
// next WQE to send, oldest unacknowledged WQE, next PSN, RNR retry state. It
//   - picks a QP with work (round-robin scan, only when something changed),
//   - fetches the WQE by DMA, checks every SGE against the MR table before any payload DMA
//     (a bad lkey completes the WQE with LOC_PROT_ERR and moves the QP to ERR, no DMA at all),
//   - cuts the message into PMTU packets, gathers each packet's payload into a TX buffer slot
//     (DMA reads for SGEs, or the WQE's inline bytes) and hands header + slot to the TX scheduler,
//   - processes ACK/NAK events from the receive engine at packet boundaries: completes WQEs,
//     goes back to the oldest unacknowledged WQE after an RNR NAK (after the RNR timer) or a PSN
//     sequence NAK, and fails the QP on other NAKs or when rnr_retry is exhausted,
//   - flushes outstanding and newly posted WQEs with WR_FLUSH_ERR while the QP is in ERR.
module tmnic_sq_engine import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned CLK_MHZ = 250,
  // Messages sent but not yet acknowledged, per QP (power of two).
  parameter int unsigned OUTS = 16,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned OUT_W = $clog2(OUTS),
  // TX buffer slots of 4 KiB: packets being gathered or waiting to be sent (power of two).
  parameter int unsigned NSLOT = 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned TXB_POS_W = 12 + SLOT_W
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [63:0] now_i,            // cycle counter (timers)

  // Context tables: every QP's state, and read ports (0 current QP, 1 ACK's QP, 2 QP being
  // initialised, 3 QP of the completion being reported; MR of the SGE being checked)
  input  logic [NUM_QP-1:0][2:0]  qp_state_i,
  output logic [3:0][QP_W-1:0]    qp_idx_o,
  input  qp_cfg_t [3:0]           qp_rd_i,
  output logic [MR_W-1:0]         mr_idx_o,
  input  mr_t                     mr_rd_i,
  input  logic [47:0] local_mac_i,
  input  logic [31:0] local_ip_i,
  input  logic        cfg_changed_i,     // a command ran: rescan
  input  logic        init_sq_i,
  input  logic [QP_W-1:0] init_qp_i,
  input  logic [23:0] init_psn_i,
  input  logic        db_valid_i,        // send-queue doorbell
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,

  // ACK/NAK events from the receive engine
  input  logic            ack_valid_i,
  output logic            ack_ready_o,
  input  logic [QP_W-1:0] ack_qp_i,
  input  logic [31:0]     ack_aeth_i,
  input  logic [23:0]     ack_psn_i,

  // DMA read: client port for WQEs and payload; shared response bus
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  output logic               rd_is_pay_o,        // the request is payload (else a WQE)
  input  logic               rsp_wqe_valid_i,
  input  logic               rsp_pay_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic [BYTES-1:0]   rsp_be_i,
  input  logic               rsp_last_i,

  // TX buffer write port (tmnic_shift_buf)
  output logic                 txb_wr_o,
  output logic [TXB_POS_W-1:0] txb_pos_o,
  output logic [DATA_W-1:0]    txb_data_o,
  output logic [BYTES-1:0]     txb_be_o,

  // Packets to the TX scheduler: header, payload in slot pkt_slot_o; slot_free_i[s] pulses when sent
  output roce_hdr_t pkt_hdr_o,
  output logic [SLOT_W-1:0] pkt_slot_o,
  output logic      pkt_valid_o,
  input  logic      pkt_ready_i,
  input  logic [NSLOT-1:0] slot_free_i,

  // Completions
  output cqe_req_t cqe_o,
  output logic     cqe_valid_o,
  input  logic     cqe_ready_i,

  output logic            err_o,         // move err_qp_o to ERR
  output logic [QP_W-1:0] err_qp_o,
  input  logic [QP_W-1:0] query_qp_i,
  output logic [23:0]     query_psn_o,

  output logic retransmit_o, output logic rx_rnr_o, output logic rx_nak_o, output logic rx_ack_o,
  output logic prot_err_o,
  output logic quiet_o,                  // no DMA in flight or about to be issued
  output logic idle_o,                   // nothing to do until a doorbell, an ACK or wake_at_o
  output logic [63:0] wake_at_o          // earliest RNR timer expiry (all ones: none)
);
  if ((NSLOT & (NSLOT - 1)) != 0 || NSLOT < 2) begin : g_chk_s
    $fatal(1, "tmnic_sq_engine: NSLOT must be a power of two >= 2");
  end
  if ((OUTS & (OUTS - 1)) != 0 || OUTS < 2) begin : g_chk
    $fatal(1, "tmnic_sq_engine: OUTS must be a power of two >= 2");
  end
  if (DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_sq_engine: only DATA_W = 512 is implemented (one 64-byte beat per WQE half)");
  end

  // ---------------------------------------------------------------- per-QP state
  logic [15:0] pi_q [NUM_QP];
  logic [15:0] next_q [NUM_QP];    // next WQE to send
  logic [15:0] ci_q [NUM_QP];      // oldest WQE not yet completed
  logic [23:0] psn_q [NUM_QP];     // PSN of the next new packet
  logic        rnr_wait_q [NUM_QP];
  logic [63:0] rnr_due_q [NUM_QP];
  logic [2:0]  rnr_left_q [NUM_QP];
  // Outstanding messages: ring slot = WQE index mod OUTS
  logic [63:0] o_wrid_q [NUM_QP * OUTS];
  logic [23:0] o_first_q [NUM_QP * OUTS];
  logic [23:0] o_last_q [NUM_QP * OUTS];
  logic        o_sig_q [NUM_QP * OUTS];
  logic [7:0]  o_err_q [NUM_QP * OUTS];   // nonzero: the WQE failed locally with this status
  logic        errwait_q;

  assign query_psn_o = psn_q[query_qp_i];

  typedef enum logic [3:0] {
    S_IDLE, S_SCAN, S_FETCH, S_FETCH_WAIT, S_CHECK, S_SGE, S_START, S_PKT, S_GATHER, S_INLINE, S_FILLED,
    S_ACK, S_CQE, S_FLUSH, S_ERRWAIT
  } state_e;
  state_e state_q, after_cqe_q;

  logic            scan_q;          // something changed since the last fruitless scan
  logic [QP_W-1:0] rr_q;            // last QP served
  logic [QP_W-1:0] q_q;             // current QP
  logic            in_msg_q;        // a message of q_q is being sent (ACKs only between packets)
  logic [63:0]     wake_q;

  // Current WQE
  logic [1023:0] wqe_q;
  logic [2:0]    sge_i_q;           // SGE being checked or gathered
  logic [63:0]   sge_iova_q [WQE_MAX_SGE];
  logic [31:0]   sge_len_q [WQE_MAX_SGE];
  logic [31:0]   msg_len_q, msg_off_q, sge_off_q;
  logic [SLOT_W-1:0] slot_q;        // TX slot being filled (slots are filled and sent in order)
  logic [SLOT_W-1:0] ho_q;          // oldest filled slot not yet handed to the TX scheduler
  logic [NSLOT-1:0]  slot_busy_q;   // allocated: being filled, waiting, or being sent
  logic [NSLOT-1:0]  filled_q;      // all reads issued and header ready
  logic [3:0]        slot_pend_q [NSLOT];  // payload reads in flight per slot
  roce_hdr_t         slot_hdr_q [NSLOT];
  logic [12:0]   pkt_len_q, pkt_fill_q; // bytes of the packet, bytes requested so far
  logic [TXB_POS_W-1:0] chunk_pos_q [16];
  logic [3:0]    cw_q, cr_q;        // chunk FIFO write / read pointers
  logic [SLOT_W-1:0] rd_slot_q;     // slot of the payload read being requested
  logic          flushing_q;

  // Configuration of the current QP (the receive-side fields belong to the receive engine).
  /* verilator lint_off UNUSEDSIGNAL */
  wire qp_cfg_t cfg = qp_rd_i[0];
  /* verilator lint_on UNUSEDSIGNAL */
  wire [7:0]  w_op = wqe_q[WQE_OPCODE_OFF*8 +: 8];
  wire [7:0]  w_flags = wqe_q[WQE_FLAGS_OFF*8 +: 8];
  wire [7:0]  w_nsge = wqe_q[WQE_NUM_SGE_OFF*8 +: 8];
  wire [31:0] w_inl = wqe_q[WQE_INLINE_LEN_OFF*8 +: 32];
  wire [63:0] w_wrid = wqe_q[WQE_WR_ID_OFF*8 +: 64];
  wire        w_inline = w_flags[WQE_FLAG_INLINE_BIT];
  wire [12:0] pmtu = 13'd1 << cfg.pmtu_log;
  wire [15:0] sq_mask = (16'd1 << cfg.sq_log) - 16'd1;
  wire [OUT_W+QP_W-1:0] oslot_ci = {q_q, ci_q[q_q][OUT_W-1:0]};
  wire [OUT_W+QP_W-1:0] oslot_next = {q_q, next_q[q_q][OUT_W-1:0]};

  // SGE i fields of the WQE
  // SGE sge_i_q of the fetched WQE
  wire sge_t sge_cur = wqe_sge(wqe_q, sge_i_q);
  wire [63:0] sge_addr = sge_cur.addr;
  wire [31:0] sge_len = sge_cur.length;
  wire [31:0] sge_key = sge_cur.lkey;
  assign mr_idx_o = sge_key[MR_KEY_SHIFT +: MR_W];
  wire mr_t    sge_mr = mr_rd_i;

  // Remaining payload of the current packet and what the next read may cover.
  wire [31:0] pkt_left = {19'd0, pkt_len_q - pkt_fill_q};
  wire [31:0] sge_left = sge_len_q[sge_i_q] - sge_off_q;
  wire [31:0] chunk = (sge_left < pkt_left) ? sge_left : pkt_left;
  wire        last_pkt = (msg_len_q - msg_off_q) <= {19'd0, pmtu};
  wire        first_pkt = (msg_off_q == 32'd0);

  // The completion being reported, field by field (assembled here; no wide temporaries in the FSM,
  // which Verilator would clear on every clock).
  logic [QP_W-1:0] c_qp_q;
  logic [63:0] c_wrid_q;
  logic [15:0] c_idx_q;
  logic [7:0]  c_status_q;
  always_comb begin
    cqe_o = '0;
    cqe_o.cq = qp_rd_i[3].send_cq;
    cqe_o.wr_id = c_wrid_q;
    cqe_o.qp_num = 24'(c_qp_q);
    cqe_o.wqe_idx = c_idx_q;
    cqe_o.opcode = WC_OP_SEND;
    cqe_o.status = c_status_q;
  end

  assign ack_ready_o = (state_q == S_IDLE) || (state_q == S_PKT);
  wire ack_take = ack_valid_i && ack_ready_o;

  // The ACK event is latched when taken, so that the channel is free during S_ACK.
  logic [QP_W-1:0] ack_qp_r;
  // The requester ignores the MSN in ACKs (as rxe does); only the syndrome matters.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [31:0] ack_aeth_r;
  /* verilator lint_on UNUSEDSIGNAL */
  logic [23:0] ack_psn_r;
  always_ff @(posedge clk_i) begin
    if (ack_take) begin
      ack_qp_r <= ack_qp_i;
      ack_aeth_r <= ack_aeth_i;
      ack_psn_r <= ack_psn_i;
    end
  end

  assign qp_idx_o = {c_qp_q, init_qp_i, ack_qp_r, q_q};
  wire [63:0] rnr_cycles = 64'(rnr_timer_us(ack_aeth_r[28:24])) * 64'(CLK_MHZ);


  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      after_cqe_q <= S_IDLE;
      scan_q <= 1'b0;
      rr_q <= '0;
      q_q <= '0;
      in_msg_q <= 1'b0;
      wake_q <= '1;
      wqe_q <= '0;
      sge_i_q <= '0;
      msg_len_q <= '0;
      msg_off_q <= '0;
      sge_off_q <= '0;
      slot_q <= '0;
      ho_q <= '0;
      slot_busy_q <= '0;
      filled_q <= '0;
      for (int i = 0; i < NSLOT; i++) slot_pend_q[i] <= '0;
      pkt_len_q <= '0;
      pkt_fill_q <= '0;
      cw_q <= '0;
      cr_q <= '0;
      rd_slot_q <= '0;
      flushing_q <= 1'b0;
      errwait_q <= 1'b0;
      rd_valid_o <= 1'b0;
      rd_addr_o <= '0;
      rd_len_o <= '0;
      rd_is_pay_o <= 1'b0;
      txb_wr_o <= 1'b0;
      txb_pos_o <= '0;
      txb_data_o <= '0;
      txb_be_o <= '0;
      pkt_valid_o <= 1'b0;
      pkt_hdr_o <= '0;
      pkt_slot_o <= '0;
      cqe_valid_o <= 1'b0;
      c_qp_q <= '0; c_wrid_q <= '0; c_idx_q <= '0; c_status_q <= '0;
      err_o <= 1'b0;
      err_qp_o <= '0;
      {retransmit_o, rx_rnr_o, rx_nak_o, rx_ack_o, prot_err_o} <= '0;
      for (int i = 0; i < NUM_QP; i++) begin
        pi_q[i] <= '0; next_q[i] <= '0; ci_q[i] <= '0; psn_q[i] <= '0;
        rnr_wait_q[i] <= 1'b0; rnr_due_q[i] <= '0; rnr_left_q[i] <= '0;
      end
    end else begin
      err_o <= 1'b0;
      txb_wr_o <= 1'b0;
      {retransmit_o, rx_rnr_o, rx_nak_o, rx_ack_o, prot_err_o} <= '0;
      if (rd_valid_o && rd_ready_i) rd_valid_o <= 1'b0;
      if (pkt_valid_o && pkt_ready_i) pkt_valid_o <= 1'b0;
      if (cqe_valid_o && cqe_ready_i) cqe_valid_o <= 1'b0;
      slot_busy_q <= slot_busy_q & ~slot_free_i;
      if (slot_free_i != '0 || cfg_changed_i) scan_q <= 1'b1;

      // Hand filled slots to the TX scheduler in order, once their payload has arrived.
      if (filled_q[ho_q] && slot_pend_q[ho_q] == 4'd0 && (!pkt_valid_o || pkt_ready_i) &&
          !(rsp_pay_valid_i && chunk_pos_q[cr_q][TXB_POS_W-1:12] == ho_q)) begin
        pkt_hdr_o <= slot_hdr_q[ho_q];
        pkt_slot_o <= ho_q;
        pkt_valid_o <= 1'b1;
        filled_q[ho_q] <= 1'b0;
        ho_q <= ho_q + 1'b1;
      end

      // Doorbells and (re)initialisation, whatever the state.
      if (db_valid_i && db_idx_i < 12'(NUM_QP)) begin
        pi_q[db_idx_i[QP_W-1:0]] <= db_pi_i;
        scan_q <= 1'b1;
      end
      if (init_sq_i) begin
        pi_q[init_qp_i] <= '0; next_q[init_qp_i] <= '0; ci_q[init_qp_i] <= '0;
        psn_q[init_qp_i] <= init_psn_i;
        rnr_wait_q[init_qp_i] <= 1'b0;
        rnr_left_q[init_qp_i] <= qp_rd_i[2].rnr_retry;
      end
      if (now_i >= wake_q) scan_q <= 1'b1;

      // Payload read responses land in the TX buffer at their chunk's position.
      if (rsp_pay_valid_i) begin
        txb_wr_o <= 1'b1;
        txb_pos_o <= chunk_pos_q[cr_q] + TXB_POS_W'(rsp_off_i);
        txb_data_o <= rsp_data_i;
        txb_be_o <= rsp_be_i;
        if (rsp_last_i) cr_q <= cr_q + 1'b1;
      end
      begin   // reads in flight per slot: +1 when issued (S_GATHER), -1 at the last response beat
        logic [SLOT_W-1:0] ds;
        ds = chunk_pos_q[cr_q][TXB_POS_W-1:12];
        if (rsp_pay_valid_i && rsp_last_i) slot_pend_q[ds] <= slot_pend_q[ds] - 4'd1;
        if (rd_valid_o && rd_ready_i && rd_is_pay_o) begin
          if (rsp_pay_valid_i && rsp_last_i && ds == rd_slot_q) slot_pend_q[ds] <= slot_pend_q[ds];
          else slot_pend_q[rd_slot_q] <= slot_pend_q[rd_slot_q] + 4'd1;
        end
      end
      // WQE read responses: two beats
      if (rsp_wqe_valid_i) begin
        if (rsp_off_i == 14'sd0) wqe_q[511:0] <= rsp_data_i;
        else wqe_q[1023:512] <= rsp_data_i;
      end

      unique case (state_q)
        S_IDLE: begin
          if (ack_take) begin
            state_q <= S_ACK;
          end else if (scan_q) begin
            state_q <= S_SCAN;
          end
        end

        // One pass over all QPs: expire RNR timers, pick the next QP with work after rr_q.
        S_SCAN: begin
          logic found;
          logic [63:0] w;
          logic [QP_W-1:0] pick;
          found = 1'b0;
          w = '1;
          pick = '0;
          for (int k = 1; k <= NUM_QP; k++) begin
            logic [QP_W-1:0] c;
            logic waiting;
            c = QP_W'(int'(rr_q) + k);
            waiting = rnr_wait_q[c] && (now_i < rnr_due_q[c]);
            if (rnr_wait_q[c] && !waiting) rnr_wait_q[c] <= 1'b0;
            if (waiting && rnr_due_q[c] < w) w = rnr_due_q[c];
            if (!found && qp_state_i[c] == QPS_ERR && ci_q[c] != pi_q[c]) begin
              found = 1'b1; pick = c;
            end else if (!found && qp_state_i[c] == QPS_RTS && !waiting && next_q[c] != pi_q[c] &&
                         (next_q[c] - ci_q[c]) < 16'(OUTS)) begin
              found = 1'b1; pick = c;
            end
          end
          wake_q <= w;
          scan_q <= found;
          if (found) begin
            q_q <= pick;
            rr_q <= pick;
            flushing_q <= (qp_state_i[pick] == QPS_ERR);
            state_q <= (qp_state_i[pick] == QPS_ERR) ? S_FLUSH : S_FETCH;
          end else begin
            state_q <= S_IDLE;
          end
        end

        // Flush: complete WQE ci with WR_FLUSH_ERR; outstanding ones from the ring, others fetched.
        S_FLUSH: begin
          if (ci_q[q_q] == pi_q[q_q] || qp_state_i[q_q] != QPS_ERR) begin
            next_q[q_q] <= ci_q[q_q];
            state_q <= S_IDLE;
            scan_q <= 1'b1;
          end else if (ci_q[q_q] != next_q[q_q]) begin
            c_qp_q <= q_q; c_wrid_q <= o_wrid_q[oslot_ci]; c_idx_q <= ci_q[q_q];
            c_status_q <= (o_err_q[oslot_ci] != 8'd0) ? o_err_q[oslot_ci] : WC_WR_FLUSH_ERR;
            cqe_valid_o <= 1'b1;
            ci_q[q_q] <= ci_q[q_q] + 16'd1;
            after_cqe_q <= S_FLUSH;
            state_q <= S_CQE;
          end else begin
            next_q[q_q] <= ci_q[q_q];
            state_q <= S_FETCH;  // fetch for the wr_id, then S_CHECK completes it as flushed
          end
        end

        S_FETCH: begin
          if (!rd_valid_o) begin
            rd_valid_o <= 1'b1;
            rd_is_pay_o <= 1'b0;
            rd_addr_o <= cfg.sq_base + {41'd0, next_q[q_q] & sq_mask, 7'd0};
            rd_len_o <= 13'(WQE_STRIDE);
            state_q <= S_FETCH_WAIT;
          end
        end
        S_FETCH_WAIT: if (rsp_wqe_valid_i && rsp_last_i) state_q <= S_CHECK;

        S_CHECK: begin
          sge_i_q <= '0;
          msg_len_q <= w_inline ? w_inl : 32'd0;
          if (flushing_q) begin
            c_qp_q <= q_q; c_wrid_q <= w_wrid; c_idx_q <= next_q[q_q]; c_status_q <= WC_WR_FLUSH_ERR;
            cqe_valid_o <= 1'b1;
            ci_q[q_q] <= ci_q[q_q] + 16'd1;
            next_q[q_q] <= next_q[q_q] + 16'd1;
            after_cqe_q <= S_FLUSH;
            state_q <= S_CQE;
          end else if ((w_op != WQE_OP_SEND && w_op != WQE_OP_SEND_WITH_IMM) ||
                       w_nsge > 8'(WQE_MAX_SGE) || (w_inline && w_inl > 32'(WQE_MAX_INLINE))) begin
            // The driver validates these; a WQE that still breaks them fails the QP (reported by
            // the flush, in order, like a protection error).
            o_wrid_q[oslot_next] <= w_wrid;
            o_err_q[oslot_next] <= WC_LOC_QP_OP_ERR;
            next_q[q_q] <= next_q[q_q] + 16'd1;
            err_o <= 1'b1; err_qp_o <= q_q;
            state_q <= S_ERRWAIT;
          end else begin
            state_q <= w_inline ? S_START : S_SGE;
            msg_off_q <= '0;
            sge_off_q <= '0;
            in_msg_q <= 1'b1;
          end
        end

        // Protection check of SGE sge_i_q; all pass before any payload DMA.
        S_SGE: begin
          if (32'(sge_i_q) >= 32'(w_nsge)) begin
            sge_i_q <= '0;
            state_q <= S_START;
          end else if (!mr_ok(sge_mr, sge_key, cfg.pd, sge_addr, sge_len, 1'b0) ||
                       msg_len_q + sge_len < msg_len_q) begin
            // Fails the QP; the flush reports this WQE with its error in ring order, after any
            // earlier outstanding WQE, so that every WR completes exactly once and in order.
            prot_err_o <= 1'b1;
            in_msg_q <= 1'b0;
            o_wrid_q[oslot_next] <= w_wrid;
            o_err_q[oslot_next] <= WC_LOC_PROT_ERR;
            next_q[q_q] <= next_q[q_q] + 16'd1;
            err_o <= 1'b1; err_qp_o <= q_q;
            state_q <= S_ERRWAIT;
          end else begin
            sge_iova_q[sge_i_q] <= mr_iova(sge_mr, sge_addr);
            sge_len_q[sge_i_q] <= sge_len;
            msg_len_q <= msg_len_q + sge_len;
            sge_i_q <= sge_i_q + 3'd1;
          end
        end

        // The message enters the outstanding ring before its first packet, so that a NAK for any
        // of its packets can rewind it.
        S_START: begin
          logic [31:0] npkts;
          npkts = (msg_len_q + 32'(pmtu) - 32'd1) >> cfg.pmtu_log;
          if (npkts == 32'd0) npkts = 32'd1;
          o_wrid_q[oslot_next] <= w_wrid;
          o_err_q[oslot_next] <= '0;
          o_first_q[oslot_next] <= psn_q[q_q];
          o_last_q[oslot_next] <= psn_q[q_q] + 24'(npkts) - 24'd1;
          o_sig_q[oslot_next] <= w_flags[WQE_FLAG_SIGNALED_BIT];
          next_q[q_q] <= next_q[q_q] + 16'd1;
          state_q <= S_PKT;
        end

        // Packet boundary: take ACKs first, then start the next packet when a slot is free.
        S_PKT: begin
          if (ack_take) begin
            state_q <= S_ACK;
          end else if (qp_state_i[q_q] != QPS_RTS) begin
            in_msg_q <= 1'b0;           // QP left RTS (ERR): the flush takes over
            state_q <= S_IDLE;
            scan_q <= 1'b1;
          end else if (!slot_busy_q[slot_q] && (!w_inline || cw_q == cr_q)) begin
            // (inline data is written through the same buffer port as read responses)
            roce_hdr_t h;
            h = '0;
            h.dst_mac = cfg.dmac;
            h.src_mac = local_mac_i;
            h.src_ip = local_ip_i;
            h.dst_ip = cfg.dest_ip;
            h.udp_sport = 16'hC000 | 16'(q_q);
            h.dest_qp = cfg.dest_qpn;
            h.psn = psn_q[q_q];
            h.pay_len = last_pkt ? 13'(msg_len_q - msg_off_q) : pmtu;
            h.ack_req = last_pkt;
            h.se = last_pkt && w_flags[WQE_FLAG_SOLICITED_BIT];
            h.imm = {wqe_q[WQE_IMM_OFF*8 +: 8], wqe_q[WQE_IMM_OFF*8+8 +: 8],
                     wqe_q[WQE_IMM_OFF*8+16 +: 8], wqe_q[WQE_IMM_OFF*8+24 +: 8]};
            if (first_pkt && last_pkt) h.opcode = (w_op == WQE_OP_SEND_WITH_IMM) ? OP_SEND_ONLY_IMM : OP_SEND_ONLY;
            else if (first_pkt) h.opcode = OP_SEND_FIRST;
            else if (last_pkt) h.opcode = (w_op == WQE_OP_SEND_WITH_IMM) ? OP_SEND_LAST_IMM : OP_SEND_LAST;
            else h.opcode = OP_SEND_MIDDLE;
            slot_hdr_q[slot_q] <= h;
            pkt_len_q <= h.pay_len;
            pkt_fill_q <= '0;
            slot_busy_q[slot_q] <= 1'b1;
            state_q <= w_inline ? S_INLINE : S_GATHER;
          end
        end

        S_INLINE: begin
          // Inline bytes sit at WQE offset 32..127: two buffer writes (the second may be unused).
          txb_wr_o <= 1'b1;
          txb_pos_o <= {slot_q, 12'd0} + ((pkt_fill_q == 13'd0) ? TXB_POS_W'(0) : TXB_POS_W'(64));
          txb_data_o <= (pkt_fill_q == 13'd0) ? wqe_q[WQE_INLINE_DATA_OFF*8 +: 512] : {256'd0, wqe_q[1023:768]};
          txb_be_o <= '1;
          if (pkt_fill_q == 13'd0 && msg_len_q > 32'd64) pkt_fill_q <= 13'd64;
          else state_q <= S_FILLED;
        end

        // Issue payload reads for the packet, one per SGE piece.
        S_GATHER: begin
          if (pkt_fill_q == pkt_len_q) begin
            if (!rd_valid_o) state_q <= S_FILLED;   // the last read has been accepted (counted)
          end else if (sge_left == 32'd0) begin
            sge_i_q <= sge_i_q + 3'd1;
            sge_off_q <= '0;
          end else if (!rd_valid_o && (cw_q + 4'd1) != cr_q) begin
            rd_valid_o <= 1'b1;
            rd_is_pay_o <= 1'b1;
            rd_addr_o <= sge_iova_q[sge_i_q] + {32'd0, sge_off_q};
            rd_len_o <= 13'(chunk);
            chunk_pos_q[cw_q] <= {slot_q, 12'd0} + TXB_POS_W'(pkt_fill_q);
            rd_slot_q <= slot_q;
            cw_q <= cw_q + 4'd1;
            pkt_fill_q <= pkt_fill_q + 13'(chunk);
            sge_off_q <= sge_off_q + chunk;
          end
        end

        // Every read of the packet is issued: the slot waits for its data and its turn.
        S_FILLED: begin
          filled_q[slot_q] <= 1'b1;
          slot_q <= slot_q + 1'b1;
          psn_q[q_q] <= psn_q[q_q] + 24'd1;
          msg_off_q <= msg_off_q + {19'd0, pkt_len_q};
          if (last_pkt) begin
            in_msg_q <= 1'b0;
            state_q <= S_IDLE;
            scan_q <= 1'b1;
          end else begin
            state_q <= S_PKT;
          end
        end

        // One ACK/NAK event (latched from the ack channel): complete covered WQEs one per cycle,
        // then act on the syndrome.
        S_ACK: begin
          logic [QP_W-1:0] aq;
          logic [1:0] typ;
          logic [4:0] val;
          logic [23:0] lim;         // WQEs whose last PSN is at or before lim are done
          logic [OUT_W+QP_W-1:0] os;
          logic outstanding, fail, rewind, abort;
          logic [7:0] st;
          state_e ret;
          aq = ack_qp_r;
          typ = ack_aeth_r[30:29];
          val = ack_aeth_r[28:24];
          lim = (typ == AETH_TYPE_ACK) ? ack_psn_r : ack_psn_r - 24'd1;
          os = {aq, ci_q[aq][OUT_W-1:0]};
          outstanding = (ci_q[aq] != next_q[aq]);
          if (outstanding && psn_ge(lim, o_last_q[os])) begin
            ci_q[aq] <= ci_q[aq] + 16'd1;
            rnr_left_q[aq] <= qp_rd_i[1].rnr_retry;
            if (o_sig_q[os]) begin
              c_qp_q <= aq; c_wrid_q <= o_wrid_q[os]; c_idx_q <= ci_q[aq]; c_status_q <= WC_SUCCESS;
              cqe_valid_o <= 1'b1;
              after_cqe_q <= S_ACK;
              state_q <= S_CQE;
            end
          end else begin
            fail = 1'b0;
            rewind = 1'b0;
            st = WC_GENERAL_ERR;
            unique case (typ)
              AETH_TYPE_ACK: rx_ack_o <= 1'b1;
              AETH_TYPE_RNR_NAK: begin
                rx_rnr_o <= 1'b1;
                if (outstanding && rnr_left_q[aq] == 3'd0) begin
                  fail = 1'b1;
                  st = WC_RNR_RETRY_EXC_ERR;
                end else if (outstanding) begin
                  rewind = 1'b1;
                  if (rnr_left_q[aq] != 3'd7) rnr_left_q[aq] <= rnr_left_q[aq] - 3'd1;
                  rnr_wait_q[aq] <= 1'b1;
                  rnr_due_q[aq] <= now_i + rnr_cycles;
                  if (now_i + rnr_cycles < wake_q) wake_q <= now_i + rnr_cycles;
                end
              end
              AETH_TYPE_NAK: begin
                rx_nak_o <= 1'b1;
                if (outstanding && val == NAK_PSN_SEQ_ERR) begin
                  rewind = 1'b1;    // PSN sequence error: go back N
                end else if (outstanding) begin
                  fail = 1'b1;
                  st = (val == NAK_INV_REQ) ? WC_REM_INV_REQ_ERR : (val == NAK_REM_ACCESS_ERR) ? WC_REM_ACCESS_ERR :
                     WC_REM_OP_ERR;
                end
              end
              default: ;            // reserved syndrome: ignored
            endcase
            if (rewind) begin
              next_q[aq] <= ci_q[aq];
              psn_q[aq] <= o_first_q[os];
              retransmit_o <= 1'b1;
            end
            if (fail) begin
              ci_q[aq] <= ci_q[aq] + 16'd1;
              err_o <= 1'b1;
              err_qp_o <= aq;
              c_qp_q <= aq; c_wrid_q <= o_wrid_q[os]; c_idx_q <= ci_q[aq]; c_status_q <= st;
              cqe_valid_o <= 1'b1;
            end
            // A go-back or failure on the QP being sent aborts its current message.
            abort = in_msg_q && (aq == q_q) && (rewind || fail);
            if (abort) in_msg_q <= 1'b0;
            ret = (in_msg_q && !abort) ? S_PKT : S_IDLE;
            after_cqe_q <= ret;
            state_q <= fail ? S_CQE : ret;
            scan_q <= 1'b1;
          end
        end

        S_CQE: if (!cqe_valid_o || cqe_ready_i) state_q <= after_cqe_q;

        // The context takes two cycles to show ERR: do not scan before it does.
        S_ERRWAIT: begin
          errwait_q <= errwait_q + 1'b1;
          if (errwait_q == 1'b1) begin
            state_q <= S_IDLE;
            scan_q <= 1'b1;
          end
        end

        default: state_q <= S_IDLE;
      endcase
    end
  end

  assign quiet_o = (state_q == S_IDLE || state_q == S_SCAN) && !rd_valid_o && (cw_q == cr_q);
  assign idle_o = (state_q == S_IDLE) && !scan_q && !pkt_valid_o && !cqe_valid_o && !rd_valid_o &&
                  (slot_busy_q == '0) && (cw_q == cr_q);
  assign wake_at_o = wake_q;
endmodule
