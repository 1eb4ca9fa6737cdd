// Tag-list operation engine of the TM-SRQs.
// Every TM-SRQ has a ring of list-operation WQEs (TAG_ADD / TAG_DEL / TAG_SYNC, TM_OP_STRIDE bytes
// each) in host memory and a doorbell carrying the ring's producer index. This block serves the
// rings round-robin, in ring order per SRQ: it fetches up to BATCH WQEs in one DMA read (whole
// beats each; the DMA latency is paid once per batch), executes them one at a time,
// checks the handle against the SRQ's range of engine entries, hands the operation to the matching
// engine, records the tagged buffer of a successful ADD in the tag-buffer RAM and, for signaled
// operations, writes a TM_ADD / TM_DEL / TM_SYNC completion to the SRQ's CQ.
// (Re)configuring an SRQ clears its engine entries and counters before any later operation runs.
module tmnic_tm_ops import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned TM_ENTRIES = 1024,
  parameter int unsigned BATCH = 8,          // op WQEs fetched per DMA read (power of two)
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned B_W = $clog2(BATCH),
  localparam int unsigned H_W = $clog2(TM_ENTRIES)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // List-op doorbells (SRQ db_idx_i, producer index db_pi_i) and SRQ (re)configuration
  input  logic        db_valid_i,
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,
  input  logic        srq_reset_i,
  input  logic [15:0] srq_reset_idx_i,

  // SRQ configuration read port (registered, write-first: srq_rd_i is the entry srq_idx_o named
  // one cycle earlier, so srq_idx_o is the next value of the SRQ register)
  output logic [SRQ_W-1:0] srq_idx_o,
  input  srq_cfg_t         srq_rd_i,

  // DMA read client (op WQEs)
  output logic [63:0]       rd_addr_o,
  output logic [12:0]       rd_len_o,
  output logic              rd_valid_o,
  input  logic              rd_ready_i,
  input  logic              rsp_valid_i,
  input  logic [DATA_W-1:0] rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic              rsp_last_i,

  // Matching engine, operation channel
  output logic             eo_valid_o,
  input  logic             eo_ready_i,
  output logic [1:0]       eo_code_o,
  output logic [SRQ_W-1:0] eo_srq_o,
  output logic [H_W-1:0]   eo_handle_o,
  output logic [63:0]      eo_tag_o,
  output logic [63:0]      eo_mask_o,
  output logic             eo_sw_cnt_vld_o,
  output logic [15:0]      eo_sw_cnt_o,
  input  logic             eo_rsp_valid_i,
  input  logic             eo_rsp_ok_i,
  input  logic [15:0]      eo_rsp_hw_cnt_i,

  // Tag-buffer RAM write port {lkey, length, addr} and the ADD whose buffer is not written yet
  output logic             tb_we_o,
  output logic [H_W-1:0]   tb_waddr_o,
  output logic [127:0]     tb_wdata_o,
  output logic             add_pend_o,
  output logic [H_W-1:0]   add_pend_handle_o,

  // Completions
  output cqe_req_t cqe_o,
  output logic     cqe_valid_o,
  input  logic     cqe_ready_i,

  output logic             sync_o,        // statistics: an operation carried a software count
  output logic [SRQ_W-1:0] sync_srq_o,
  output logic             quiet_o,       // no DMA in flight or about to be issued
  output logic             idle_o
);
  // An op WQE is fetched as whole beats (tmnic_wqe_fetch): one at 512 bits, two at 256.
  if (TM_OP_STRIDE * 8 < DATA_W || (TM_OP_STRIDE * 8) % DATA_W != 0) begin : g_chk_s
    $fatal(1, "tmnic_tm_ops: TM_OP_STRIDE must be a whole number of DMA beats (DATA_W / 8 bytes)");
  end
  if ((NUM_SRQ & (NUM_SRQ - 1)) != 0 || NUM_SRQ < 2) begin : g_chk_n
    $fatal(1, "tmnic_tm_ops: NUM_SRQ must be a power of two >= 2");
  end
  if ((TM_ENTRIES & (TM_ENTRIES - 1)) != 0 || TM_ENTRIES < 4 || TM_ENTRIES > 32768) begin : g_chk_e
    $fatal(1, "tmnic_tm_ops: TM_ENTRIES must be a power of two in 4..32768");
  end
  if ((BATCH & (BATCH - 1)) != 0 || BATCH < 2 || BATCH * TM_OP_STRIDE > 4096) begin : g_chk_b
    $fatal(1, "tmnic_tm_ops: BATCH must be a power of two >= 2, at most one 4 KiB read");
  end

  // Engine opcodes (tmnic_tm_engine)
  localparam logic [1:0] EO_ADD = 2'd0, EO_DEL = 2'd1, EO_SYNC = 2'd2, EO_CLEAR = 2'd3;

  // Ring indices per SRQ (NUM_SRQ is small: flip-flops)
  logic [NUM_SRQ-1:0][15:0] pi_q, pi_d, ci_q, ci_d;
  logic [NUM_SRQ-1:0] clr_q, clr_d; // engine entries of these SRQs must be cleared first

  typedef enum logic [2:0] {S_IDLE, S_CFG, S_FETCH, S_EXEC, S_WAIT, S_CQE} state_e;
  state_e state_q, state_d;
  logic [SRQ_W-1:0] s_q, s_d;       // SRQ being served
  logic abort_q, abort_d;           // that SRQ was reconfigured meanwhile: no completion, no index update
  logic clearing_q, clearing_d;     // the engine operation in flight is a CLEAR
  logic [B_W:0] i_q, i_d;           // the op of the batch being executed
  logic ok_q, ok_d;
  logic [15:0] hw_cnt_q, hw_cnt_d;
  // Next values of the registered outputs
  logic eo_valid_d, eo_sw_cnt_vld_d, tb_we_d, add_pend_d, cqe_valid_d, sync_d;
  logic [1:0] eo_code_d;
  logic [SRQ_W-1:0] eo_srq_d, sync_srq_d;
  logic [H_W-1:0] eo_handle_d, tb_waddr_d, add_pend_handle_d;
  logic [63:0] eo_tag_d, eo_mask_d;
  logic [15:0] eo_sw_cnt_d;
  logic [127:0] tb_wdata_d;

  // Pending rings, served round-robin
  logic [NUM_SRQ-1:0] pend;
  always_comb begin
    for (int i = 0; i < NUM_SRQ; i++) pend[i] = pi_q[i] != ci_q[i];
  end
  logic [NUM_SRQ-1:0] gnt;
  logic [SRQ_W-1:0] gnt_idx;
  logic gnt_valid;
  tmnic_rr_arb #(.N(NUM_SRQ)) u_arb (
    .clk_i, .rst_ni, .req_i(pend & {NUM_SRQ{state_q == S_IDLE && clr_q == '0}}),
    .ack_i(state_q == S_IDLE && clr_q == '0), .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid));

  // Lowest SRQ waiting for a CLEAR
  logic [SRQ_W-1:0] clr_idx;
  always_comb begin
    clr_idx = '0;
    for (int i = NUM_SRQ - 1; i >= 0; i--) if (clr_q[i]) clr_idx = SRQ_W'(i);
  end

  assign srq_idx_o = s_d;
  /* verilator lint_off UNUSEDSIGNAL */  // the SRQ's receive-ring fields belong to the receive engine
  wire srq_cfg_t cfg = srq_rd_i;
  /* verilator lint_on UNUSEDSIGNAL */

  // The op WQEs come through tmnic_wqe_fetch: up to BATCH posted ops in one read, never past the
  // ring's end; it holds them (wf_n of them) until the next fetch, op i_q is op_q.
  // (Not in the cycle the SRQ is reconfigured: its indices are being reset and its ring replaced.)
  wire            rst_s = srq_reset_i && srq_reset_idx_i == 16'(s_q);
  wire            wf_req = state_q == S_CFG && cfg.valid && cfg.tm && pi_q[s_q] != ci_q[s_q] && !rst_s;
  logic           wf_ready, wf_last;
  logic [B_W:0]   wf_n;
  logic [TM_OP_STRIDE*8-1:0] op_q;
  tmnic_wqe_fetch #(.DATA_W(DATA_W), .STRIDE(TM_OP_STRIDE), .BATCH(BATCH)) u_fetch (
    .clk_i, .rst_ni,
    .req_valid_i(wf_req), .req_ready_o(wf_ready), .req_base_i(cfg.ops_base), .req_log_i(5'(cfg.ops_log)),
    .req_idx_i(ci_q[s_q]), .req_count_i(pi_q[s_q] - ci_q[s_q]), .n_o(wf_n),
    .rd_addr_o, .rd_len_o, .rd_valid_o, .rd_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_off_i, .rsp_last_i,
    .last_o(wf_last), .sel_i(i_q[B_W-1:0]), .wqe_o(op_q));

  // After an op: the next one of the batch, unless the batch is done or the SRQ was reconfigured.
  function automatic state_e next_state();
    next_state = (abort_q || i_q + 1'b1 >= wf_n) ? S_IDLE : S_EXEC;
  endfunction

  // Fields of the fetched op
  wire [63:0] f_wr_id = op_q[TMOP_WR_ID_OFF*8 +: 64];
  wire [7:0]  f_op = op_q[TMOP_OPCODE_OFF*8 +: 8];
  wire [7:0]  f_flags = op_q[TMOP_FLAGS_OFF*8 +: 8];
  wire [15:0] f_sw_cnt = op_q[TMOP_SW_CNT_OFF*8 +: 16];
  wire [31:0] f_handle = op_q[TMOP_HANDLE_OFF*8 +: 32];
  wire f_signaled = f_flags[TM_OP_FLAG_SIGNALED_BIT];
  wire f_has_cnt = f_flags[TM_OP_FLAG_SW_CNT_BIT];
  wire f_known = (f_op == TM_OP_ADD) || (f_op == TM_OP_DEL) || (f_op == TM_OP_SYNC);
  wire f_needs_handle = (f_op == TM_OP_ADD) || (f_op == TM_OP_DEL);
  // The SRQ's fields its ops need, captured when it is picked (S_CFG): a reconfiguration while a
  // batch runs must not change the op in flight (checked against the range it was posted for, its
  // completion to the CQ it was posted for).
  logic [15:0] b_cq_q, b_tag_base_q, b_tag_num_q;
  always_ff @(posedge clk_i) begin
    if (state_q == S_CFG) begin
      b_cq_q <= cfg.cq;
      b_tag_base_q <= cfg.tag_base;
      b_tag_num_q <= cfg.tag_num;
    end
  end
  wire f_handle_ok = f_handle < {16'd0, b_tag_num_q};
  wire [31:0] f_global = {16'd0, b_tag_base_q} + f_handle;

  // The completion, registered when raised (it holds while stalled, whatever happens to the SRQ).
  cqe_req_t cqe_n;
  always_comb begin
    cqe_n = '0;
    cqe_n.cq = b_cq_q;
    cqe_n.wr_id = f_wr_id;
    cqe_n.wqe_idx = ci_q[s_q];
    cqe_n.opcode = (f_op == TM_OP_ADD) ? WC_OP_TM_ADD : (f_op == TM_OP_DEL) ? WC_OP_TM_DEL : WC_OP_TM_SYNC;
    cqe_n.status = ok_d ? WC_SUCCESS : WC_TM_ERR;
    cqe_n.tm_handle = f_handle[15:0];
    cqe_n.tm_hw_cnt = hw_cnt_d;
  end
  always_ff @(posedge clk_i) if (cqe_valid_d && !cqe_valid_o) cqe_o <= cqe_n;

  // ---------------------------------------------------------------- next state
  always_comb begin
    state_d = state_q; s_d = s_q; abort_d = abort_q; clearing_d = clearing_q; i_d = i_q;
    ok_d = ok_q; hw_cnt_d = hw_cnt_q; clr_d = clr_q; pi_d = pi_q; ci_d = ci_q;
    eo_valid_d = eo_valid_o && !eo_ready_i;
    eo_code_d = eo_code_o; eo_srq_d = eo_srq_o; eo_handle_d = eo_handle_o; eo_tag_d = eo_tag_o;
    eo_mask_d = eo_mask_o; eo_sw_cnt_vld_d = eo_sw_cnt_vld_o; eo_sw_cnt_d = eo_sw_cnt_o;
    tb_we_d = 1'b0; tb_waddr_d = tb_waddr_o; tb_wdata_d = tb_wdata_o;
    add_pend_d = add_pend_o && !tb_we_o;      // an ADD's buffer is in the RAM the cycle after tb_we_o
    add_pend_handle_d = add_pend_handle_o;
    cqe_valid_d = cqe_valid_o;
    sync_d = 1'b0; sync_srq_d = sync_srq_o;
    if (db_valid_i && db_idx_i < 12'(NUM_SRQ)) pi_d[db_idx_i[SRQ_W-1:0]] = db_pi_i;

    unique case (state_q)
      S_IDLE: begin
        abort_d = 1'b0;
        if (clr_q != '0) begin
          s_d = clr_idx;
          clr_d[clr_idx] = 1'b0;
          clearing_d = 1'b1;
          eo_valid_d = 1'b1;
          eo_code_d = EO_CLEAR;
          eo_srq_d = clr_idx;
          eo_sw_cnt_vld_d = 1'b0;
          state_d = S_WAIT;
        end else if (gnt_valid) begin
          s_d = gnt_idx;
          clearing_d = 1'b0;
          state_d = S_CFG;
        end
      end
      // Rings of SRQs that are not (valid) TM-SRQs are skipped whole.
      S_CFG: begin
        if (rst_s) begin
          state_d = S_IDLE;                   // reconfigured as it was picked: its CLEAR comes first
        end else if (!cfg.valid || !cfg.tm) begin
          ci_d[s_q] = pi_q[s_q];
          state_d = S_IDLE;
        end else if (!wf_req) begin
          state_d = S_IDLE;                   // reconfigured in the cycle it was picked: nothing posted
        end else begin
          i_d = '0;                           // (the fetch is requested in this state: wf_req)
          state_d = S_FETCH;
        end
      end
      S_FETCH: if (wf_last) state_d = S_EXEC;
      // Malformed operations (unknown opcode, handle outside the SRQ's range) fail without effect.
      S_EXEC: begin
        if (abort_q) begin
          state_d = S_IDLE;                   // the SRQ was reconfigured: the rest of the batch is void
        end else if (!f_known || (f_needs_handle && !f_handle_ok)) begin
          ok_d = 1'b0;
          hw_cnt_d = '0;
          state_d = S_CQE;
        end else begin
          eo_valid_d = 1'b1;
          eo_code_d = (f_op == TM_OP_ADD) ? EO_ADD : (f_op == TM_OP_DEL) ? EO_DEL : EO_SYNC;
          eo_srq_d = s_q;
          eo_handle_d = f_global[H_W-1:0];
          eo_tag_d = op_q[TMOP_TAG_OFF*8 +: 64];
          eo_mask_d = op_q[TMOP_MASK_OFF*8 +: 64];
          eo_sw_cnt_vld_d = f_has_cnt;
          eo_sw_cnt_d = f_sw_cnt;
          if (f_op == TM_OP_ADD) begin
            add_pend_d = 1'b1;
            add_pend_handle_d = f_global[H_W-1:0];
          end
          if (f_has_cnt) begin
            sync_d = 1'b1;
            sync_srq_d = s_q;
          end
          state_d = S_WAIT;
        end
      end
      S_WAIT: if (eo_rsp_valid_i) begin
        ok_d = eo_rsp_ok_i;
        hw_cnt_d = eo_rsp_hw_cnt_i;
        // A successful ADD stays pending until its buffer is in the RAM (the cycle after tb_we_o).
        if (!(eo_code_o == EO_ADD && eo_rsp_ok_i)) add_pend_d = 1'b0;
        if (!clearing_q && eo_code_o == EO_ADD && eo_rsp_ok_i) begin
          tb_we_d = 1'b1;
          tb_waddr_d = eo_handle_o;
          tb_wdata_d = op_q[TMOP_SGE_OFF*8 +: 128];
        end
        if (clearing_q) state_d = S_IDLE;
        else if (f_signaled && !abort_q) begin
          cqe_valid_d = 1'b1;
          state_d = S_CQE;
        end else begin
          if (!abort_q) ci_d[s_q] = ci_q[s_q] + 16'd1;
          state_d = next_state();
          i_d = i_q + 1'b1;
        end
      end
      S_CQE: begin
        if (!cqe_valid_o && f_signaled && !abort_q) cqe_valid_d = 1'b1;   // malformed op path
        else if (!cqe_valid_o || cqe_ready_i) begin
          cqe_valid_d = 1'b0;
          if (!abort_q) ci_d[s_q] = ci_q[s_q] + 16'd1;
          state_d = next_state();
          i_d = i_q + 1'b1;
        end
      end
      default: state_d = S_IDLE;
    endcase

    // Reconfiguration wins over everything above for that SRQ.
    if (srq_reset_i && srq_reset_idx_i < 16'(NUM_SRQ)) begin
      pi_d[srq_reset_idx_i[SRQ_W-1:0]] = '0;
      ci_d[srq_reset_idx_i[SRQ_W-1:0]] = '0;
      clr_d[srq_reset_idx_i[SRQ_W-1:0]] = 1'b1;
      if (state_q != S_IDLE && s_q == srq_reset_idx_i[SRQ_W-1:0]) abort_d = 1'b1;
    end
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      abort_q <= 1'b0;
      clearing_q <= 1'b0;
      clr_q <= '0;
      pi_q <= '0;
      ci_q <= '0;
      eo_valid_o <= 1'b0;
      tb_we_o <= 1'b0;
      add_pend_o <= 1'b0;
      cqe_valid_o <= 1'b0;
      sync_o <= 1'b0;
    end else begin
      state_q <= state_d;
      abort_q <= abort_d;
      clearing_q <= clearing_d;
      clr_q <= clr_d;
      pi_q <= pi_d;
      ci_q <= ci_d;
      eo_valid_o <= eo_valid_d;
      tb_we_o <= tb_we_d;
      add_pend_o <= add_pend_d;
      cqe_valid_o <= cqe_valid_d;
      sync_o <= sync_d;
    end
  end
  always_ff @(posedge clk_i) begin
    s_q <= s_d; i_q <= i_d; ok_q <= ok_d; hw_cnt_q <= hw_cnt_d;
    eo_code_o <= eo_code_d; eo_srq_o <= eo_srq_d; eo_handle_o <= eo_handle_d; eo_tag_o <= eo_tag_d;
    eo_mask_o <= eo_mask_d; eo_sw_cnt_vld_o <= eo_sw_cnt_vld_d; eo_sw_cnt_o <= eo_sw_cnt_d;
    tb_waddr_o <= tb_waddr_d; tb_wdata_o <= tb_wdata_d;
    add_pend_handle_o <= add_pend_handle_d;
    sync_srq_o <= sync_srq_d;
  end

  assign quiet_o = (state_q == S_IDLE || state_q == S_EXEC || state_q == S_WAIT ||
                    state_q == S_CQE) && !rd_valid_o && !cqe_valid_o;
  assign idle_o = (state_q == S_IDLE) && (pend == '0) && (clr_q == '0);

  // gnt is the one-hot form of gnt_idx; the address fields above op_q's SGE are reserved.
  // (wf_ready: S_CFG requests only after the previous fetch ended; the fetcher asserts the handshake.)
  wire unused_ok = ^{gnt, f_global[31:H_W], op_q[TM_OP_STRIDE*8-1:(TMOP_SGE_OFF + 16) * 8], wf_ready};

endmodule
