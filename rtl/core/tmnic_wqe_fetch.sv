// WQE fetcher: reads work-queue entries from a ring in host memory into a local store.
// One design for every ring the NIC reads (send queue, receive queue and SRQ, the TM-SRQ list-op
// ring, and the flush paths of each), so that ring-address arithmetic is written once:
//   - a request names the ring (base, log2 of its entries), the free-running index of the first WQE
//     and how many are posted from there; the fetch takes up to BATCH of them, never past the ring's
//     end (the next request starts again at entry 0), and says how many (n_o);
//   - one DMA read of n_o * STRIDE bytes, its beats stored by their position in the response
//     (tmnic_dma_rd returns each beat's offset in the request);
//   - last_o marks the cycle in which the final beat is stored: wqe_o shows the WQEs (sel_i picks
//     one of a batch) from the next cycle on, until the next fetch's first beat.
// One fetch at a time: req_ready_o is high while none is in flight. Ring bases are beat-aligned
// (the HW/SW interface keeps them 64-byte aligned), so every beat is whole; asserted.
module tmnic_wqe_fetch #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned STRIDE = 128,      // bytes per WQE
  parameter int unsigned BATCH = 1,         // WQEs per fetch at most
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned B_W = (BATCH > 1) ? $clog2(BATCH) : 1,
  localparam int unsigned WQE_W = STRIDE * 8
) (
  input  logic clk_i,
  input  logic rst_ni,

  input  logic        req_valid_i,
  output logic        req_ready_o,
  input  logic [63:0] req_base_i,           // ring base address
  input  logic [4:0]  req_log_i,            // the ring holds 2^req_log_i WQEs
  input  logic [15:0] req_idx_i,            // index of the first WQE (wraps at the ring size)
  input  logic [15:0] req_count_i,          // WQEs posted from there on (>= 1)
  output logic [B_W:0] n_o,                 // WQEs of the fetch in flight or last done

  // DMA read client
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic               rsp_last_i,

  output logic               last_o,        // the final beat is stored at this cycle's edge
  input  logic [B_W-1:0]     sel_i,
  output logic [WQE_W-1:0]   wqe_o          // WQE sel_i of the fetch
);
  localparam int unsigned LANE_W = $clog2(BYTES);
  localparam int unsigned STRIDE_W = $clog2(STRIDE);
  localparam int unsigned BEATS = STRIDE / BYTES;              // beats per WQE
  localparam int unsigned BEAT_W = (BEATS > 1) ? $clog2(BEATS) : 1;

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_wqe_fetch: DATA_W must be 256 or 512");
  end
  if ((STRIDE & (STRIDE - 1)) != 0 || STRIDE < BYTES || STRIDE > 4096) begin : g_chk_s
    $fatal(1, "tmnic_wqe_fetch: STRIDE must be a power of two, at least one beat, at most 4 KiB");
  end
  if ((BATCH & (BATCH - 1)) != 0 || BATCH < 1 || BATCH * STRIDE > 4096) begin : g_chk_b
    $fatal(1, "tmnic_wqe_fetch: BATCH must be a power of two whose WQEs fit one 4 KiB read");
  end

  // ---------------------------------------------------------------- request
  logic        busy_q, busy_d;
  logic        rd_valid_d;
  logic [63:0] rd_addr_d;
  logic [12:0] rd_len_d;
  logic [B_W:0] n_d, n_take;
  // The fetch takes 1 + min(count - 1, WQEs after the first to the ring's end, BATCH - 1). Each
  // term is clamped to BATCH - 1 first, so the comparison is B_W bits wide, not 16.
  wire [15:0] mask = 16'((17'd1 << req_log_i) - 17'd1);
  wire [15:0] slot = req_idx_i & mask;
  if (BATCH == 1) begin : g_one
    assign n_take = (B_W + 1)'(1);
    wire unused_cnt = ^req_count_i;
  end else begin : g_batch
    wire [15:0] after = ~req_idx_i & mask;
    wire [B_W-1:0] cm = (req_count_i[15:B_W] != '0) ? B_W'(BATCH - 1) : req_count_i[B_W-1:0] - 1'b1;
    wire [B_W-1:0] am = (after[15:B_W] != '0) ? B_W'(BATCH - 1) : after[B_W-1:0];
    wire [B_W-1:0] mn = (cm < am) ? cm : am;
    assign n_take = {1'b0, mn} + 1'b1;
  end
  assign req_ready_o = !busy_q;
  wire take = req_valid_i && !busy_q;
  wire fin = busy_q && rsp_valid_i && rsp_last_i;
  assign last_o = fin;

  always_comb begin
    busy_d = busy_q;
    rd_valid_d = rd_valid_o && !rd_ready_i;
    rd_addr_d = rd_addr_o;
    rd_len_d = rd_len_o;
    n_d = n_o;
    if (take) begin
      busy_d = 1'b1;
      rd_valid_d = 1'b1;
      rd_addr_d = req_base_i + ({48'd0, slot} << STRIDE_W);
      rd_len_d = 13'(n_take) << STRIDE_W;
      n_d = n_take;
    end
    if (fin) busy_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      rd_valid_o <= 1'b0;
    end else begin
      busy_q <= busy_d;
      rd_valid_o <= rd_valid_d;
    end
  end
  always_ff @(posedge clk_i) begin
    rd_addr_o <= rd_addr_d;
    rd_len_o <= rd_len_d;
    n_o <= n_d;
  end

  // ---------------------------------------------------------------- store
  // Beat k of the response is beat (k mod BEATS) of WQE k / BEATS. Written only by beats.
  wire [13:0] off = rsp_off_i;
  wire [BEAT_W-1:0] w_beat = (BEATS > 1) ? BEAT_W'(off >> LANE_W) : '0;
  wire w_en = busy_q && rsp_valid_i;
  if (BATCH == 1) begin : g_one_wqe
    // One WQE: a plain register (the engines read its fields directly; an array element would be
    // copied out at every use in the Verilated model).
    logic [WQE_W-1:0] wqe_q;
    always_ff @(posedge clk_i) begin
      for (int b = 0; b < int'(BEATS); b++) if (w_en && int'(w_beat) == b) wqe_q[b * DATA_W +: DATA_W] <= rsp_data_i;
    end
    assign wqe_o = wqe_q;
    wire unused_sel = ^sel_i;
  end else begin : g_batch_store
    logic [WQE_W-1:0] mem_q [BATCH];
    wire [B_W-1:0] w_slot = B_W'(off >> STRIDE_W);
    always_ff @(posedge clk_i) begin
      if (w_en) mem_q[w_slot][w_beat * DATA_W +: DATA_W] <= rsp_data_i;
    end
    assign wqe_o = mem_q[sel_i];
  end

  // Only the beat-and-WQE part of the offset is used; the lane part is zero (asserted).
  wire unused_ok = ^{off[LANE_W-1:0], off[13:LANE_W]};

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_count: assert property (@(posedge clk_i) disable iff (!chk_q) take |-> req_count_i != 16'd0)
    else $error("tmnic_wqe_fetch: request for no WQE");
  a_req_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
    req_valid_i && !req_ready_o |=> req_valid_i && $stable(req_base_i) && $stable(req_log_i) &&
                                    $stable(req_idx_i) && $stable(req_count_i))
    else $error("tmnic_wqe_fetch: request dropped or changed before it was taken");
  a_rd_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    rd_valid_o && !rd_ready_i |=> rd_valid_o && $stable(rd_addr_o) && $stable(rd_len_o))
    else $error("tmnic_wqe_fetch: DMA read request changed before it was taken");
  a_rsp_idle: assert property (@(posedge clk_i) disable iff (!chk_q) rsp_valid_i |-> busy_q)
    else $error("tmnic_wqe_fetch: response beat without a fetch");
  a_rsp_whole: assert property (@(posedge clk_i) disable iff (!chk_q)
    rsp_valid_i |-> off[LANE_W-1:0] == '0 && rsp_off_i >= 0 && off < 14'(rd_len_o))
    else $error("tmnic_wqe_fetch: response beat not whole or outside the request");
  a_base: assert property (@(posedge clk_i) disable iff (!chk_q) take |-> req_base_i[LANE_W-1:0] == '0)
    else $error("tmnic_wqe_fetch: ring base not beat-aligned");
`endif
endmodule
