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
  // A burst's metadata, in order: the request's bytes are [0, len); off0 is the position of the
  // burst's first beat in the request (negative: the request starts inside that beat). Every sum on
  // the response side is 14 bits wide.
  typedef struct packed {
    logic [CLI_W-1:0]  client;
    logic signed [13:0] off0;
    logic [12:0]       len;
    logic              last;      // final burst of the request
  } meta_t;

  meta_t meta_mem [MAX_OUT];      // distributed RAM, read asynchronously at the response side
  logic [OUT_W:0] meta_wr_q, meta_wr_d, meta_rd_q, meta_rd_d;
  wire meta_full = (meta_wr_q - meta_rd_q) == (OUT_W + 1)'(MAX_OUT);

  logic [NCLI-1:0] gnt;
  logic [CLI_W-1:0] gnt_idx;
  logic gnt_valid;
  // The request being split: its client and length, the address of the next burst, how far into
  // the request that address is, and how many bytes are left. Only the page number and the
  // in-page offset of the address are used, never a 64-bit sum or compare.
  logic              busy_q, busy_d;
  logic [CLI_W-1:0]  cur_client_q, cur_client_d;
  logic [12:0]       cur_len_q, cur_len_d, cur_pos_q, cur_pos_d, cur_left_q, cur_left_d;
  logic [ADDR_W-1:0] cur_addr_q, cur_addr_d;

  tmnic_rr_arb #(.N(NCLI)) u_arb (
    .clk_i, .rst_ni,
    .req_i(req_valid_i & {NCLI{!busy_q}}),
    .ack_i(!busy_q),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid)
  );
  assign req_ready_o = gnt & {NCLI{!busy_q}};

  // The next burst: the rest of the request or up to the next 4 KiB boundary, whichever is first.
  wire [LANE_W-1:0] lane = cur_addr_q[LANE_W-1:0];
  wire [12:0] to_page = 13'd4096 - {1'b0, cur_addr_q[11:0]};
  wire        b_last = cur_left_q <= to_page;
  wire [12:0] b_bytes = b_last ? cur_left_q : to_page;
  // Beats = ceil((lane + bytes) / BYTES); the low bits are the rounding remainder.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [13:0] b_span = 14'(lane) + 14'(b_bytes) + 14'(BYTES - 1);
  /* verilator lint_on UNUSEDSIGNAL */
  wire ar_fire = m_axi_arvalid_o && m_axi_arready_i;
  wire b_go = busy_q && (!m_axi_arvalid_o || ar_fire) && !meta_full;

  logic              arvalid_d, burst_d;
  logic [ADDR_W-1:0] araddr_d;
  logic [7:0]        arlen_d;
  always_comb begin
    busy_d = busy_q; cur_client_d = cur_client_q; cur_len_d = cur_len_q; cur_pos_d = cur_pos_q;
    cur_left_d = cur_left_q; cur_addr_d = cur_addr_q;
    arvalid_d = m_axi_arvalid_o && !m_axi_arready_i;
    araddr_d = m_axi_araddr_o; arlen_d = m_axi_arlen_o;
    meta_wr_d = meta_wr_q;
    burst_d = 1'b0;
    if (!busy_q && gnt_valid) begin
      busy_d = 1'b1;
      cur_client_d = gnt_idx;
      cur_addr_d = req_addr_i[gnt_idx];
      cur_len_d = req_len_i[gnt_idx];
      cur_left_d = req_len_i[gnt_idx];
      cur_pos_d = '0;
    end else if (b_go) begin
      arvalid_d = 1'b1;
      araddr_d = {cur_addr_q[ADDR_W-1:LANE_W], {LANE_W{1'b0}}};
      arlen_d = 8'(b_span[13:LANE_W] - 1'b1);
      meta_wr_d = meta_wr_q + 1'b1;
      burst_d = 1'b1;
      // A burst that is not the last ends at a page boundary: the next starts on the next page.
      cur_addr_d = {cur_addr_q[ADDR_W-1:12] + 1'b1, 12'h000};
      cur_pos_d = cur_pos_q + b_bytes;
      cur_left_d = cur_left_q - b_bytes;
      if (b_last) busy_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      m_axi_arvalid_o <= 1'b0;
      meta_wr_q <= '0;
      burst_o <= 1'b0;
    end else begin
      busy_q <= busy_d;
      m_axi_arvalid_o <= arvalid_d;
      meta_wr_q <= meta_wr_d;
      burst_o <= burst_d;
    end
  end
  always_ff @(posedge clk_i) begin
    cur_client_q <= cur_client_d; cur_len_q <= cur_len_d; cur_pos_q <= cur_pos_d;
    cur_left_q <= cur_left_d; cur_addr_q <= cur_addr_d;
    m_axi_araddr_o <= araddr_d; m_axi_arlen_o <= arlen_d;
    if (b_go) meta_mem[meta_wr_q[OUT_W-1:0]] <= '{client: cur_client_q,
                                                  off0: $signed({1'b0, cur_pos_q}) - 14'(lane),
                                                  len: cur_len_q, last: b_last};
  end

  // ---------------------------------------------------------------- responses
  assign m_axi_rready_o = 1'b1;
  meta_t rmeta;
  assign rmeta = meta_mem[meta_rd_q[OUT_W-1:0]];
  logic signed [13:0] beat_off_q, beat_off_d;   // position of the next beat within the current burst
  logic in_burst_q, in_burst_d;

  logic signed [13:0] o;          // position of this beat's lane 0 in the request
  logic [LANE_W-1:0]  lo;         // first requested lane (the request starts inside this beat)
  logic [LANE_W:0]    hi;         // one past the last requested lane
  logic signed [14:0] rest;       // request bytes from lane 0 of this beat on
  logic               rsp_valid_d, rsp_last_d;
  logic [CLI_W-1:0]   rsp_client_d;
  logic signed [13:0] rsp_off_d;
  logic [BYTES-1:0]   rsp_be_d;
  always_comb begin
    meta_rd_d = meta_rd_q; beat_off_d = beat_off_q; in_burst_d = in_burst_q;
    o = in_burst_q ? beat_off_q : rmeta.off0;
    lo = (o < 0) ? LANE_W'(-o) : '0;
    rest = $signed({2'b00, rmeta.len}) - 15'(o);
    hi = (rest < $signed(15'(BYTES))) ? (LANE_W + 1)'(rest) : (LANE_W + 1)'(BYTES);
    rsp_valid_d = m_axi_rvalid_i;
    rsp_client_d = rmeta.client;
    rsp_off_d = o;
    rsp_be_d = ~(BYTES'({BYTES{1'b1}} << hi)) & (BYTES'({BYTES{1'b1}} << lo));
    rsp_last_d = m_axi_rlast_i && rmeta.last;
    if (m_axi_rvalid_i) begin
      beat_off_d = o + 14'(BYTES);
      in_burst_d = !m_axi_rlast_i;
      if (m_axi_rlast_i) meta_rd_d = meta_rd_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      meta_rd_q <= '0;
      in_burst_q <= 1'b0;
      rsp_valid_o <= 1'b0;
    end else begin
      meta_rd_q <= meta_rd_d;
      in_burst_q <= in_burst_d;
      rsp_valid_o <= rsp_valid_d;
    end
  end
  // Beat payload: loaded only with a beat.
  always_ff @(posedge clk_i) begin
    beat_off_q <= beat_off_d;
    if (m_axi_rvalid_i) begin
      rsp_client_o <= rsp_client_d;
      rsp_data_o <= m_axi_rdata_i;
      rsp_off_o <= rsp_off_d;
      rsp_be_o <= rsp_be_d;
      rsp_last_o <= rsp_last_d;
    end
  end

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_req_len: assert property (@(posedge clk_i) disable iff (!chk_q)
    !busy_q && gnt_valid |-> req_len_i[gnt_idx] != 13'd0 && req_len_i[gnt_idx] <= 13'd4096)
    else $error("tmnic_dma_rd: request length outside 1..4096");
  a_rsp_meta: assert property (@(posedge clk_i) disable iff (!chk_q) m_axi_rvalid_i |-> meta_wr_q != meta_rd_q)
    else $error("tmnic_dma_rd: read data without an outstanding burst");
  a_ar_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    m_axi_arvalid_o && !m_axi_arready_i |=> m_axi_arvalid_o && $stable(m_axi_araddr_o) && $stable(m_axi_arlen_o))
    else $error("tmnic_dma_rd: AR changed before it was taken");
`endif
endmodule
