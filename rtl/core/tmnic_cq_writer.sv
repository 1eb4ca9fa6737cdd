// Completion-queue writer: formats CQEs (layout in tmnic_hwif_pkg) and writes them by DMA to the
// ring slot of the CQ's producer index, with the owner (phase) bit that lets the host poll memory
// only. A full CQ drops the completion and counts an overflow; the first one since the CQ was set
// up is also reported (cq_err_o: an AEV_CQ_ERR record, IBA's CQ error), unless the lost completion
// is itself an event record (the event CQ cannot report on itself). From then on the CQ is in error
// and takes no completion until SET_CQ sets it up again (IBA C11-37). A lost completion of a QP (a
// send or receive completion; not a list-op or event record) whose QP is live (RTR..SQE, read from
// the context) fails that QP (fat_*_o, to the context, which never waits on this block: IBA C9-218
// class F, an AEV_QP_FATAL record); a register of the last QP reported covers the cycles before the
// context shows it in ERR. When the CQ is armed, the write
// raises one interrupt event and disarms it; an asynchronous event record (opcode ASYNC_EVENT)
// always raises one.
module tmnic_cq_writer import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_CQ = 64,
  parameter int unsigned NSRC = 2,
  parameter int unsigned DATA_LAT = 1,   // cycles from dma_data_req_i to dma_data_o (tmnic_dma_wr's), 1..3
  localparam int unsigned CQ_W = $clog2(NUM_CQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Completion requests
  input  cqe_req_t [NSRC-1:0] req_i,
  input  logic [NSRC-1:0]     req_valid_i,
  output logic [NSRC-1:0]     req_ready_o,

  // CQ table read port (registered, write-first: cq_rd_i is the entry cq_idx_o named one cycle
  // earlier, so cq_idx_o is the next value of the current completion's CQ)
  output logic [CQ_W-1:0]      cq_idx_o,
  input  cq_cfg_t              cq_rd_i,
  input  logic                 cq_reset_i,
  input  logic [15:0]          cq_reset_idx_i,
  // CQ doorbell: consumer index and arm request
  input  logic                 db_valid_i,
  input  logic [11:0]          db_idx_i,
  input  logic [31:0]          db_val_i,

  // DMA write client
  output logic [63:0]        dma_addr_o,
  output logic [12:0]        dma_len_o,
  output logic               dma_valid_o,
  input  logic               dma_ready_i,
  input  logic               dma_data_req_i,
  input  logic signed [13:0] dma_data_off_i,
  output logic [DATA_W-1:0]  dma_data_o,
  input  logic               dma_done_i,

  output logic            irq_o,      // pulse: a CQE landed in an armed CQ
  output logic [15:0]     irq_cq_o,
  output logic            cqe_o,      // statistics pulses
  output logic            overflow_o,
  output logic            cq_err_o,   // pulse: CQ cq_err_cq_o overran for the first time since SET_CQ
  output logic [15:0]     cq_err_cq_o,
  // A QP lost a completion: fail it (held until taken). SET_QP of a QP (qp_set_i) forgets that it
  // was reported. The state of the current completion's QP: registered read of qp_idx_o (the next
  // value of the completion's QP number, as cq_idx_o).
  output logic            fat_valid_o,
  input  logic            fat_ready_i,
  output logic [15:0]     fat_qp_o,
  output logic [15:0]     qp_idx_o,
  input  logic [2:0]      qp_state_i,
  input  logic            qp_set_i,
  input  logic [15:0]     qp_set_idx_i,
  output logic            idle_o
);
  if (DATA_LAT < 1 || DATA_LAT > 3) begin : g_chk_lat
    $fatal(1, "tmnic_cq_writer: DATA_LAT must be 1, 2 or 3");
  end
  if (DATA_W != 256 && DATA_W != 512) begin : g_chk
    $fatal(1, "tmnic_cq_writer: DATA_W must be 256 or 512");
  end
  if (NUM_CQ < 2 || NUM_CQ > 1024 || (NUM_CQ & (NUM_CQ - 1)) != 0) begin : g_chk_cq
    $fatal(1, "tmnic_cq_writer: NUM_CQ must be a power of two in 2..1024");
  end

  // Per-CQ producer and consumer indices in two tables (tmnic_pi_tab: a RAM whose re-initialisation
  // wins the write port and delays a colliding write by one cycle); the arm bits are flip-flops.
  typedef enum logic [1:0] {S_IDLE, S_DMA, S_WAIT} state_e;
  state_e          state_q, state_d;
  cqe_req_t        cur_q, cur_d;
  logic [511:0]    cqe_q;
  logic [NUM_CQ-1:0] arm_q, arm_d;
  logic [NUM_CQ-1:0] ovr_q, ovr_d;       // an overrun of the CQ has been reported
  logic            cq_err_d;
  logic            fat_valid_d, fat_set, fat_last_v_q, fat_last_v_d;
  logic [15:0]     fat_last_q, fat_last_d;
  logic            irq_d, cqe_d, overflow_d;
  logic [15:0]     irq_cq_d;

  logic [NSRC-1:0] gnt;
  logic [$clog2(NSRC > 1 ? NSRC : 2)-1:0] gnt_idx;
  logic            gnt_valid, pi_hold, ci_hold, pi_we;
  logic [15:0]     pi_rdata, ci_rdata;

  wire go = state_q == S_IDLE && !pi_hold && !ci_hold;  // no index write pending: the reads are current
  tmnic_rr_arb #(.N(NSRC)) u_arb (
    .clk_i, .rst_ni, .req_i(req_valid_i & {NSRC{go}}), .ack_i(go),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid));
  assign req_ready_o = gnt & {NSRC{go}};

  wire [CQ_W-1:0] new_cq = req_i[gnt_idx].cq[CQ_W-1:0];
  wire            db_ok = db_valid_i && db_idx_i < 12'(NUM_CQ);
  wire            rst_ok = cq_reset_i && cq_reset_idx_i < 16'(NUM_CQ);
  wire [CQ_W-1:0] db_cq = db_idx_i[CQ_W-1:0];
  wire [CQ_W-1:0] rst_cq = cq_reset_idx_i[CQ_W-1:0];
  wire [CQ_W-1:0] cqn = cur_q.cq[CQ_W-1:0];

  // The indices of the CQ being written: the words read at the grant (the tables' read data holds
  // until the next grant), with the writes of the grant cycle, which the reads miss, forwarded (a
  // doorbell's consumer index, a re-initialisation's zeros; captured at the grant as well).
  logic fwd_ci_q, fwd_rst_q;
  logic [15:0] fwd_ci_val_q;
  always_ff @(posedge clk_i) begin
    if (gnt_valid) begin
      fwd_ci_q <= db_ok && db_cq == new_cq;
      fwd_ci_val_q <= db_val_i[15:0];
      fwd_rst_q <= rst_ok && rst_cq == new_cq;
    end
  end
  wire [15:0] pi = fwd_rst_q ? 16'd0 : pi_rdata;
  wire [15:0] ci = fwd_ci_q ? fwd_ci_val_q : (fwd_rst_q ? 16'd0 : ci_rdata);

  tmnic_pi_tab #(.N(NUM_CQ)) u_ci (
    .clk_i, .rst_ni, .db_i(db_ok), .db_idx_i(db_cq), .db_pi_i(db_val_i[15:0]),
    .init_i(rst_ok), .init_idx_i(rst_cq),
    .re_i(gnt_valid), .raddr_i(new_cq), .rdata_o(ci_rdata), .hold_o(ci_hold));
  tmnic_pi_tab #(.N(NUM_CQ)) u_pi (
    .clk_i, .rst_ni, .db_i(pi_we), .db_idx_i(cqn), .db_pi_i(pi + 16'd1),
    .init_i(rst_ok), .init_idx_i(rst_cq),
    .re_i(gnt_valid), .raddr_i(new_cq), .rdata_o(pi_rdata), .hold_o(pi_hold));


  // The CQ's configuration, captured in the first S_DMA cycle of a completion (the registered read
  // of its entry arrives then) and held for the rest of it: a resize (SET_CQ.KEEP) that executes
  // meanwhile changes the table entry, not this completion's ring, address or size.
  cq_cfg_t cfg, cfg_q;
  logic    cfg_fresh_q;     // this cycle is the first of S_DMA: cq_rd_i is the completion's entry
  assign cq_idx_o = cur_d.cq[CQ_W-1:0];
  assign cfg = cfg_fresh_q ? cq_rd_i : cfg_q;
  wire [15:0] size = 16'(1) << cfg.log_size;
  wire        full = (pi - ci) >= size;

  // Byte image of a CQE (little-endian fields; IMM raw in wire order).
  /* verilator lint_off UNUSEDSIGNAL */  // r.cq selects the ring, it is not part of the entry
  function automatic logic [511:0] format_cqe(input cqe_req_t r, input logic owner);
    logic [511:0] c;
    c = '0;
    c[CQE_WR_ID_OFF*8 +: 64] = r.wr_id;
    c[CQE_BYTE_LEN_OFF*8 +: 32] = r.byte_len;
    c[CQE_IMM_OFF*8 +: 32] = {r.imm[7:0], r.imm[15:8], r.imm[23:16], r.imm[31:24]};
    c[CQE_QP_NUM_OFF*8 +: 32] = {8'd0, r.qp_num};
    c[CQE_SRC_QP_OFF*8 +: 32] = {8'd0, r.src_qp};
    c[CQE_WC_FLAGS_OFF*8 +: 32] = r.wc_flags;
    c[CQE_WQE_IDX_OFF*8 +: 16] = r.wqe_idx;
    c[CQE_OPCODE_OFF*8 +: 8] = r.opcode;
    c[CQE_STATUS_OFF*8 +: 8] = r.status;
    c[CQE_TM_TAG_OFF*8 +: 64] = r.tm_tag;
    c[CQE_TM_APP_CTX_OFF*8 +: 32] = r.tm_app_ctx;
    c[CQE_TM_HANDLE_OFF*8 +: 16] = r.tm_handle;
    c[CQE_TM_HW_CNT_OFF*8 +: 16] = r.tm_hw_cnt;
    c[CQE_OWNER_OFF*8 +: 8] = {7'd0, owner};
    format_cqe = c;
  endfunction
  /* verilator lint_on UNUSEDSIGNAL */

  assign dma_addr_o = cfg.base + {42'd0, pi & (size - 16'd1), 6'd0};
  assign dma_len_o = 13'(CQE_SIZE);
  // A completion that is dropped (no CQ, CQ full, CQ in error) never reaches the DMA engine.
  wire cq_ok = cfg.valid && cur_q.cq < 16'(NUM_CQ) && !full && !ovr_q[cqn];
  // A lost completion that fails its QP: a QP's send or receive completion, its QP not the last one
  // reported; the report waits while the previous one is not taken.
  wire qp_cqe = cur_q.opcode != WC_OP_ASYNC_EVENT && cur_q.opcode != WC_OP_TM_ADD &&
                cur_q.opcode != WC_OP_TM_DEL && cur_q.opcode != WC_OP_TM_SYNC;
  assign qp_idx_o = cur_d.qp_num[15:0];
  wire qp_live = qp_state_i == QPS_RTR || qp_state_i == QPS_RTS || qp_state_i == QPS_SQD || qp_state_i == QPS_SQE;
  wire fat_new = qp_cqe && qp_live && !(fat_last_v_q && fat_last_q == cur_q.qp_num[15:0]);
  wire fat_stall = fat_new && fat_valid_o && !fat_ready_i;
  assign dma_valid_o = (state_q == S_DMA) && cq_ok;

  always_comb begin
    state_d = state_q;
    cur_d = cur_q;
    arm_d = arm_q;
    pi_we = 1'b0;
    irq_d = 1'b0;
    irq_cq_d = irq_cq_o;
    cqe_d = 1'b0;
    overflow_d = 1'b0;
    ovr_d = ovr_q;
    cq_err_d = 1'b0;
    fat_valid_d = fat_valid_o && !fat_ready_i;
    fat_set = 1'b0;
    fat_last_v_d = fat_last_v_q;
    fat_last_d = fat_last_q;
    if (db_ok && db_val_i[31]) arm_d[db_cq] = 1'b1;
    if (rst_ok) begin
      arm_d[rst_cq] = 1'b0;
      ovr_d[rst_cq] = 1'b0;
    end
    // A new CQ or a QP set up again: a QP that loses a completion now is reported again.
    if (rst_ok || (qp_set_i && qp_set_idx_i == fat_last_q)) fat_last_v_d = 1'b0;
    unique case (state_q)
      S_IDLE: if (gnt_valid) begin
        cur_d = req_i[gnt_idx];
        state_d = S_DMA;
      end
      S_DMA: begin
        if (!cq_ok && !fat_stall) begin
          overflow_d = 1'b1;     // no CQ, CQ full or in error: the completion is lost
          if (fat_new) begin
            fat_valid_d = 1'b1;
            fat_set = 1'b1;
            fat_last_v_d = 1'b1;
            fat_last_d = cur_q.qp_num[15:0];
          end
          // (a full CQ that exists; a re-initialisation in this cycle wins: the CQ is new)
          if (cfg.valid && cur_q.cq < 16'(NUM_CQ) && !ovr_q[cqn] && cur_q.opcode != WC_OP_ASYNC_EVENT &&
              !(rst_ok && rst_cq == cqn)) begin
            ovr_d[cqn] = 1'b1;
            cq_err_d = 1'b1;
          end
          state_d = S_IDLE;
        end else if (cq_ok && dma_ready_i) begin
          state_d = S_WAIT;
        end
      end
      S_WAIT: if (dma_done_i) begin
        pi_we = 1'b1;
        cqe_d = 1'b1;
        if (arm_q[cqn]) begin
          arm_d[cqn] = 1'b0;
          irq_d = 1'b1;
          irq_cq_d = cur_q.cq;
        end
        // An asynchronous event record always interrupts: the driver consumes them from its
        // interrupt handler, which must not race an arm doorbell against the next record.
        if (cur_q.opcode == WC_OP_ASYNC_EVENT) begin
          irq_d = 1'b1;
          irq_cq_d = cur_q.cq;
        end
        state_d = S_IDLE;
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      cfg_fresh_q <= 1'b0;
      arm_q <= '0;
      ovr_q <= '0;
      cq_err_o <= 1'b0;
      fat_valid_o <= 1'b0;
      fat_last_v_q <= 1'b0;
      irq_o <= 1'b0;
      cqe_o <= 1'b0;
      overflow_o <= 1'b0;
    end else begin
      state_q <= state_d;
      cfg_fresh_q <= state_q == S_IDLE && state_d == S_DMA;
      arm_q <= arm_d;
      ovr_q <= ovr_d;
      cq_err_o <= cq_err_d;
      fat_valid_o <= fat_valid_d;
      fat_last_v_q <= fat_last_v_d;
      irq_o <= irq_d;
      cqe_o <= cqe_d;
      overflow_o <= overflow_d;
    end
  end
  // Payload registers: no reset; the CQE image is built while waiting for the DMA engine.
  always_ff @(posedge clk_i) begin
    cur_q <= cur_d;
    irq_cq_o <= irq_cq_d;
    if (state_q == S_DMA) cfg_q <= cfg;
    if (cq_err_d) cq_err_cq_o <= cur_q.cq;
    fat_last_q <= fat_last_d;
    if (fat_set) fat_qp_o <= cur_q.qp_num[15:0];
    if (state_q == S_DMA) cqe_q <= format_cqe(cur_q, !pi[cfg.log_size]);
  end
  // Data pulls: CQEs are 64-byte aligned, so a pull starts on a beat boundary and only whole beats
  // move; each DATA_LAT above 1 adds a register stage after the beat select.
  logic [DATA_W-1:0] pull_beat;
  assign pull_beat = DATA_W'(cqe_q >> (8 * (dma_data_off_i[5:0] & ~6'(DATA_W / 8 - 1))));
  if (DATA_LAT == 1) begin : g_lat1
    always_ff @(posedge clk_i) if (dma_data_req_i) dma_data_o <= pull_beat;
  end else begin : g_lat
    // Stage k holds the beat pulled k + 1 cycles ago (enables gate data registers only).
    logic [DATA_LAT-2:0][DATA_W-1:0] beat_q;
    logic [DATA_LAT-2:0]             req_q;
    always_ff @(posedge clk_i) begin
      req_q[0] <= dma_data_req_i;
      if (dma_data_req_i) beat_q[0] <= pull_beat;
      for (int k = 1; k < int'(DATA_LAT) - 1; k++) begin
        req_q[k] <= req_q[k-1];
        if (req_q[k-1]) beat_q[k] <= beat_q[k-1];
      end
      if (req_q[DATA_LAT-2]) dma_data_o <= beat_q[DATA_LAT-2];
    end
  end
  assign idle_o = state_q == S_IDLE && !fat_valid_o;
  // The doorbell carries a consumer index and the arm bit only; the CQ index of a request is used via
  // cqn; the low offset bits of a pull are zero (asserted).
  wire unused_ok = ^{db_val_i[30:16], dma_data_off_i[13:6], cur_q.cq[15:CQ_W]};

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_pull_aligned: assert property (@(posedge clk_i) disable iff (!chk_q)
    !dma_data_req_i || (dma_data_off_i[5:0] & 6'(DATA_W / 8 - 1)) == '0)
    else $error("tmnic_cq_writer: a CQE pull not on a beat boundary");
  a_valid_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    dma_valid_o && !dma_ready_i |=> dma_valid_o && $stable(dma_addr_o))
    else $error("tmnic_cq_writer: DMA request changed before it was taken");
  a_fat_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    fat_valid_o && !fat_ready_i |=> fat_valid_o && $stable(fat_qp_o))
    else $error("tmnic_cq_writer: a QP failure report changed before it was taken");
  a_one_grant: assert property (@(posedge clk_i) disable iff (!chk_q)
    $onehot0(req_ready_o)) else $error("tmnic_cq_writer: several requests taken at once");
`endif
endmodule
