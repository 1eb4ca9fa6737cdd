// DMA read engine: turns byte-granular read requests from NCLI clients into AXI4 INCR bursts
// (DATA_W-aligned, never crossing a 4 KiB boundary) and returns the data beats tagged with their
// position relative to the request, so that clients can store them with tmnic_shift_buf.
// Responses come back in request order; clients must accept every beat (no back-pressure).
module tmnic_dma_rd #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned ADDR_W = 64,
  parameter int unsigned NCLI = 3,
  // Bursts in flight.
  parameter int unsigned MAX_OUT = 8,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned CLI_W = (NCLI > 1) ? $clog2(NCLI) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Requests: read req_len_i (1..4096) bytes at req_addr_i.
  input  logic [NCLI-1:0][ADDR_W-1:0] req_addr_i,
  input  logic [NCLI-1:0][12:0]       req_len_i,
  input  logic [NCLI-1:0]             req_valid_i,
  output logic [NCLI-1:0]             req_ready_o,

  // Response beats: lane i of rsp_data_o is byte (rsp_off_o + i) of the request when rsp_be_o[i].
  output logic                     rsp_valid_o,
  output logic [CLI_W-1:0]         rsp_client_o,
  output logic [DATA_W-1:0]        rsp_data_o,
  output logic signed [13:0]       rsp_off_o,
  output logic [BYTES-1:0]         rsp_be_o,
  output logic                     rsp_last_o,

  // AXI4 read address / data channels (ID 0, in order).
  output logic [ADDR_W-1:0] m_axi_araddr_o,
  output logic [7:0]        m_axi_arlen_o,
  output logic              m_axi_arvalid_o,
  input  logic              m_axi_arready_i,
  input  logic [DATA_W-1:0] m_axi_rdata_i,
  input  logic              m_axi_rlast_i,
  input  logic              m_axi_rvalid_i,
  output logic              m_axi_rready_o,

  output logic              burst_o   // one pulse per AXI burst issued (statistics)
);
  localparam int unsigned LANE_W = $clog2(BYTES);
  localparam int unsigned OUT_W = $clog2(MAX_OUT);

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_dma_rd: DATA_W must be 256 or 512");
  end
  if (MAX_OUT < 2 || (MAX_OUT & (MAX_OUT - 1)) != 0) begin : g_chk_o
    $fatal(1, "tmnic_dma_rd: MAX_OUT must be a power of two >= 2");
  end

  // ---------------------------------------------------------------- request split
  typedef struct packed {
    logic [CLI_W-1:0]  client;
    logic [ADDR_W-1:0] req_addr;  // start of the whole request
    logic [ADDR_W-1:0] base;      // aligned address of the burst's first beat
    logic [ADDR_W-1:0] req_end;   // one past the request's last byte
    logic              last;      // final burst of the request
  } meta_t;

  meta_t meta_mem [MAX_OUT];
  logic [OUT_W:0] meta_wr_q, meta_rd_q;
  wire meta_full = (meta_wr_q - meta_rd_q) == (OUT_W + 1)'(MAX_OUT);

  logic [NCLI-1:0] gnt;
  logic [CLI_W-1:0] gnt_idx;
  logic gnt_valid;
  logic busy_q;                    // splitting a request
  logic [CLI_W-1:0] cur_client_q;
  logic [ADDR_W-1:0] cur_req_q, cur_end_q;
  // Only the beat-aligned part of the position matters once the first burst is issued.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [ADDR_W-1:0] cur_addr_q;
  /* verilator lint_on UNUSEDSIGNAL */

  tmnic_rr_arb #(.N(NCLI)) u_arb (
    .clk_i, .rst_ni,
    .req_i(req_valid_i & {NCLI{!busy_q}}),
    .ack_i(!busy_q),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid)
  );
  assign req_ready_o = gnt & {NCLI{!busy_q}};

  // Burst for the current position: up to the request end or the next 4 KiB boundary.
  logic [ADDR_W-1:0] page_end, burst_end, burst_base;
  always_comb begin
    page_end = {cur_addr_q[ADDR_W-1:12] + 1'b1, 12'h000};
    burst_end = (cur_end_q < page_end) ? cur_end_q : page_end;
    burst_base = {cur_addr_q[ADDR_W-1:LANE_W], {LANE_W{1'b0}}};
  end
  // Beats = ceil((burst_end - burst_base) / BYTES); the low bits are the rounding remainder.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [ADDR_W-1:0] burst_bytes = burst_end - burst_base + ADDR_W'(BYTES) - 1'b1;
  /* verilator lint_on UNUSEDSIGNAL */
  wire ar_fire = m_axi_arvalid_o && m_axi_arready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      m_axi_arvalid_o <= 1'b0;
      m_axi_araddr_o <= '0;
      m_axi_arlen_o <= '0;
      meta_wr_q <= '0;
      cur_client_q <= '0;
      cur_req_q <= '0;
      cur_addr_q <= '0;
      cur_end_q <= '0;
      burst_o <= 1'b0;
    end else begin
      burst_o <= 1'b0;
      if (ar_fire) m_axi_arvalid_o <= 1'b0;
      if (!busy_q && gnt_valid) begin
        busy_q <= 1'b1;
        cur_client_q <= gnt_idx;
        cur_req_q <= req_addr_i[gnt_idx];
        cur_addr_q <= req_addr_i[gnt_idx];
        cur_end_q <= req_addr_i[gnt_idx] + ADDR_W'(req_len_i[gnt_idx]);
      end else if (busy_q && (!m_axi_arvalid_o || ar_fire) && !meta_full) begin
        m_axi_arvalid_o <= 1'b1;
        m_axi_araddr_o <= burst_base;
        m_axi_arlen_o <= 8'(burst_bytes[ADDR_W-1:LANE_W] - 1'b1);
        meta_mem[meta_wr_q[OUT_W-1:0]] <= '{client: cur_client_q, req_addr: cur_req_q, base: burst_base,
                                            req_end: cur_end_q, last: burst_end == cur_end_q};
        meta_wr_q <= meta_wr_q + 1'b1;
        burst_o <= 1'b1;
        cur_addr_q <= burst_end;
        if (burst_end == cur_end_q) busy_q <= 1'b0;
      end
    end
  end

  // ---------------------------------------------------------------- responses
  assign m_axi_rready_o = 1'b1;
  meta_t rmeta;
  assign rmeta = meta_mem[meta_rd_q[OUT_W-1:0]];
  logic [ADDR_W-1:0] beat_addr_q;   // address of the next beat within the current burst
  logic in_burst_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      meta_rd_q <= '0;
      in_burst_q <= 1'b0;
      beat_addr_q <= '0;
      rsp_valid_o <= 1'b0;
      rsp_client_o <= '0;
      rsp_data_o <= '0;
      rsp_off_o <= '0;
      rsp_be_o <= '0;
      rsp_last_o <= 1'b0;
    end else begin
      rsp_valid_o <= 1'b0;
      if (m_axi_rvalid_i) begin
        logic [ADDR_W-1:0] b;
        logic [LANE_W-1:0] lo;   // first requested lane (the request starts inside this beat)
        logic [LANE_W:0]   hi;   // one past the last requested lane
        b = in_burst_q ? beat_addr_q : rmeta.base;
        lo = (rmeta.req_addr > b) ? LANE_W'(rmeta.req_addr - b) : '0;
        hi = (rmeta.req_end - b < ADDR_W'(BYTES)) ? (LANE_W + 1)'(rmeta.req_end - b) : (LANE_W + 1)'(BYTES);
        rsp_valid_o <= 1'b1;
        rsp_client_o <= rmeta.client;
        rsp_data_o <= m_axi_rdata_i;
        rsp_off_o <= 14'(b - rmeta.req_addr);
        rsp_be_o <= ~(BYTES'({BYTES{1'b1}} << hi)) & (BYTES'({BYTES{1'b1}} << lo));
        rsp_last_o <= m_axi_rlast_i && rmeta.last;
        beat_addr_q <= b + ADDR_W'(BYTES);
        in_burst_q <= !m_axi_rlast_i;
        if (m_axi_rlast_i) meta_rd_q <= meta_rd_q + 1'b1;
      end
    end
  end

endmodule
