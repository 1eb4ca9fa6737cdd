// Completion-queue writer: formats CQEs (layout in tmnic_hwif_pkg) and writes them by DMA to the
// ring slot of the CQ's producer index, with the owner (phase) bit that lets the host poll memory
// only. A full CQ drops the completion and counts an overflow. When the CQ is armed, the write
// raises one interrupt event and disarms it.
module tmnic_cq_writer import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_CQ = 64,
  parameter int unsigned NSRC = 2,
  localparam int unsigned CQ_W = $clog2(NUM_CQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Completion requests
  input  cqe_req_t [NSRC-1:0] req_i,
  input  logic [NSRC-1:0]     req_valid_i,
  output logic [NSRC-1:0]     req_ready_o,

  output logic [CQ_W-1:0]      cq_idx_o,   // CQ table read port
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
  output logic            idle_o
);
  if (DATA_W != 256 && DATA_W != 512) begin : g_chk
    $fatal(1, "tmnic_cq_writer: DATA_W must be 256 or 512");
  end

  logic [15:0] pi_q [NUM_CQ];
  logic [15:0] ci_q [NUM_CQ];
  logic        arm_q [NUM_CQ];

  logic [NSRC-1:0] gnt;
  logic [$clog2(NSRC > 1 ? NSRC : 2)-1:0] gnt_idx;
  logic gnt_valid;
  typedef enum logic [1:0] {S_IDLE, S_DMA, S_WAIT} state_e;
  state_e state_q;
  cqe_req_t cur_q;
  logic [511:0] cqe_q;

  tmnic_rr_arb #(.N(NSRC)) u_arb (
    .clk_i, .rst_ni, .req_i(req_valid_i & {NSRC{state_q == S_IDLE}}), .ack_i(state_q == S_IDLE),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid));
  assign req_ready_o = gnt & {NSRC{state_q == S_IDLE}};

  wire [CQ_W-1:0] cqn = cur_q.cq[CQ_W-1:0];
  cq_cfg_t cfg;
  assign cq_idx_o = cqn;
  assign cfg = cq_rd_i;
  wire [15:0] size = 16'(1) << cfg.log_size;
  wire [15:0] pi = pi_q[cqn];
  wire full = (pi - ci_q[cqn]) >= size;

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
  // A completion that is dropped (no CQ, CQ full) never reaches the DMA engine.
  wire cq_ok = cfg.valid && cur_q.cq < 16'(NUM_CQ) && !full;
  assign dma_valid_o = (state_q == S_DMA) && cq_ok;

  always_ff @(posedge clk_i) begin
    if (dma_data_req_i) dma_data_o <= DATA_W'(cqe_q >> (8 * dma_data_off_i[5:0]));
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      cur_q <= '0;
      cqe_q <= '0;
      irq_o <= 1'b0;
      irq_cq_o <= '0;
      cqe_o <= 1'b0;
      overflow_o <= 1'b0;
      for (int i = 0; i < NUM_CQ; i++) begin
        pi_q[i] <= '0;
        ci_q[i] <= '0;
        arm_q[i] <= 1'b0;
      end
    end else begin
      irq_o <= 1'b0;
      cqe_o <= 1'b0;
      overflow_o <= 1'b0;
      if (db_valid_i && db_idx_i < 12'(NUM_CQ)) begin
        ci_q[db_idx_i[CQ_W-1:0]] <= db_val_i[15:0];
        if (db_val_i[31]) arm_q[db_idx_i[CQ_W-1:0]] <= 1'b1;
      end
      if (cq_reset_i && cq_reset_idx_i < 16'(NUM_CQ)) begin
        pi_q[cq_reset_idx_i[CQ_W-1:0]] <= '0;
        ci_q[cq_reset_idx_i[CQ_W-1:0]] <= '0;
        arm_q[cq_reset_idx_i[CQ_W-1:0]] <= 1'b0;
      end
      unique case (state_q)
        S_IDLE: if (gnt_valid) begin
          cur_q <= req_i[gnt_idx];
          state_q <= S_DMA;
        end
        S_DMA: begin
          if (!cq_ok) begin
            overflow_o <= 1'b1;     // no CQ or CQ full: the completion is lost
            state_q <= S_IDLE;
          end else begin
            cqe_q <= format_cqe(cur_q, !pi[cfg.log_size]);
            if (dma_ready_i) state_q <= S_WAIT;
          end
        end
        S_WAIT: if (dma_done_i) begin
          pi_q[cqn] <= pi + 16'd1;
          cqe_o <= 1'b1;
          if (arm_q[cqn]) begin
            arm_q[cqn] <= 1'b0;
            irq_o <= 1'b1;
            irq_cq_o <= cur_q.cq;
          end
          state_q <= S_IDLE;
        end
        default: state_q <= S_IDLE;
      endcase
    end
  end
  assign idle_o = (state_q == S_IDLE);
  // CQEs are 64-byte aligned single requests: only the lane offset of a pull matters; the doorbell
  // carries a consumer index and the arm bit only; the CQ index of a request is used via cqn.
  wire unused_ok = ^{db_val_i[30:16], dma_data_off_i[13:6], cur_q.cq[15:CQ_W]};
endmodule
