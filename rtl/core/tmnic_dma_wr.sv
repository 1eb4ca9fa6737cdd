// DMA write engine: serves byte-granular write requests from NCLI clients, one request at a time,
// as AXI4 INCR bursts that never cross a 4 KiB boundary. The engine pulls the data from the client
// one beat ahead: it asks for the window of request bytes that lands on the next aligned host beat
// (data_off_o, may be negative on the first beat) and the client answers on data_i one cycle later,
// typically from tmnic_shift_buf. Strobes cover exactly the requested bytes.
module tmnic_dma_wr #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned ADDR_W = 64,
  parameter int unsigned NCLI = 2,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned CLI_W = (NCLI > 1) ? $clog2(NCLI) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Requests: write req_len_i (1..4096) bytes at req_addr_i.
  input  logic [NCLI-1:0][ADDR_W-1:0] req_addr_i,
  input  logic [NCLI-1:0][12:0]       req_len_i,
  input  logic [NCLI-1:0]             req_valid_i,
  output logic [NCLI-1:0]             req_ready_o,

  // Data pull: lane i of data_i[c] must be request byte (data_off_o + i) one cycle after data_req_o[c].
  output logic [NCLI-1:0]             data_req_o,
  output logic signed [13:0]          data_off_o,
  input  logic [NCLI-1:0][DATA_W-1:0] data_i,
  output logic [NCLI-1:0]             done_o,    // pulse: the request's last beat went out on W

  // AXI4 write channels (ID 0, in order).
  output logic [ADDR_W-1:0] m_axi_awaddr_o,
  output logic [7:0]        m_axi_awlen_o,
  output logic              m_axi_awvalid_o,
  input  logic              m_axi_awready_i,
  output logic [DATA_W-1:0] m_axi_wdata_o,
  output logic [BYTES-1:0]  m_axi_wstrb_o,
  output logic              m_axi_wlast_o,
  output logic              m_axi_wvalid_o,
  input  logic              m_axi_wready_i,
  input  logic              m_axi_bvalid_i,
  output logic              m_axi_bready_o,

  output logic              burst_o,  // one pulse per AXI burst issued (statistics)
  output logic              idle_o    // nothing queued and every burst acknowledged
);
  localparam int unsigned LANE_W = $clog2(BYTES);

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_dma_wr: DATA_W must be 256 or 512");
  end

  assign m_axi_bready_o = 1'b1;

  logic [NCLI-1:0] gnt;
  logic [CLI_W-1:0] gnt_idx;
  logic gnt_valid;
  logic busy_q;
  logic [CLI_W-1:0] cli_q;
  logic [ADDR_W-1:0] req_addr_q, req_end_q, beat_q;  // beat_q: aligned address of the next beat

  tmnic_rr_arb #(.N(NCLI)) u_arb (
    .clk_i, .rst_ni,
    .req_i(req_valid_i & {NCLI{!busy_q}}),
    .ack_i(!busy_q),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid)
  );
  assign req_ready_o = gnt & {NCLI{!busy_q}};

  // Output queue: two entries of {data, strb, last}; a pulled beat arrives one cycle after its request.
  logic [DATA_W-1:0] q_data [2];
  logic [BYTES-1:0]  q_strb [2];
  logic              q_last [2];
  logic              q_end [2];           // last beat of its request
  logic [CLI_W-1:0]  q_cli [2];
  logic [1:0]        q_cnt_q;
  logic              q_rd_q, q_wr_q;
  logic              pend_q;          // a data request is in flight
  logic [BYTES-1:0]  pend_strb_q;
  logic              pend_last_q;
  logic              pend_end_q;
  logic [CLI_W-1:0]  pend_cli_q;

  wire w_fire = m_axi_wvalid_o && m_axi_wready_i;
  wire aw_free = !m_axi_awvalid_o || m_axi_awready_i;

  // Next beat geometry, from two distances computed side by side (bytes left in the request and in
  // the 4 KiB page) rather than from a page end, a burst end and a sum compared one after another:
  // one carry chain deep.
  logic [ADDR_W-1:0] to_end;   // req_end_q - beat_q: never negative while busy
  logic [12:0]       to_page;  // 4096 - beat_q[11:0]: BYTES..4096
  logic first_of_burst, last_of_burst, last_of_req;
  logic [LANE_W-1:0] lo;
  logic [LANE_W:0] hi;
  always_comb begin
    to_end = req_end_q - beat_q;
    to_page = 13'h1000 - {1'b0, beat_q[11:0]};
    first_of_burst = (beat_q[11:0] == 12'h000) || (beat_q == {req_addr_q[ADDR_W-1:LANE_W], {LANE_W{1'b0}}});
    last_of_req = to_end <= ADDR_W'(BYTES);
    last_of_burst = last_of_req || to_page == 13'(BYTES);
    lo = (req_addr_q > beat_q) ? LANE_W'(req_addr_q - beat_q) : '0;
    hi = (to_end < ADDR_W'(BYTES)) ? (LANE_W + 1)'(to_end) : (LANE_W + 1)'(BYTES);
  end
  // Pull the next beat when the queue has room for it and, at a burst start, the AW slot is free.
  wire room = ({1'b0, q_cnt_q} + {2'b0, pend_q} - {2'b0, w_fire}) < 3'd2;
  wire pull = busy_q && room && (!first_of_burst || aw_free);
  // Burst length in beats for an AW issued at beat_q.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [ADDR_W-1:0] burst_span = ((to_end < ADDR_W'(to_page)) ? to_end : ADDR_W'(to_page)) + ADDR_W'(BYTES) - 1'b1;
  /* verilator lint_on UNUSEDSIGNAL */

  always_comb begin
    data_req_o = '0;
    data_req_o[cli_q] = pull;
    data_off_o = 14'(beat_q - req_addr_q);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      cli_q <= '0;
      req_addr_q <= '0;
      req_end_q <= '0;
      beat_q <= '0;
      m_axi_awvalid_o <= 1'b0;
      m_axi_awaddr_o <= '0;
      m_axi_awlen_o <= '0;
      pend_q <= 1'b0;
      pend_strb_q <= '0;
      pend_last_q <= 1'b0;
      pend_end_q <= 1'b0;
      pend_cli_q <= '0;
      q_cnt_q <= '0;
      q_rd_q <= 1'b0;
      q_wr_q <= 1'b0;
      done_o <= '0;
      burst_o <= 1'b0;
    end else begin
      done_o <= '0;
      burst_o <= 1'b0;
      if (m_axi_awvalid_o && m_axi_awready_i) m_axi_awvalid_o <= 1'b0;
      if (!busy_q && gnt_valid) begin
        busy_q <= 1'b1;
        cli_q <= gnt_idx;
        req_addr_q <= req_addr_i[gnt_idx];
        req_end_q <= req_addr_i[gnt_idx] + ADDR_W'(req_len_i[gnt_idx]);
        beat_q <= {req_addr_i[gnt_idx][ADDR_W-1:LANE_W], {LANE_W{1'b0}}};
      end
      pend_q <= pull;
      if (pull) begin
        if (first_of_burst) begin
          m_axi_awvalid_o <= 1'b1;
          m_axi_awaddr_o <= beat_q;
          m_axi_awlen_o <= 8'(burst_span[ADDR_W-1:LANE_W] - 1'b1);
          burst_o <= 1'b1;
        end
        pend_strb_q <= ~(BYTES'({BYTES{1'b1}} << hi)) & (BYTES'({BYTES{1'b1}} << lo));
        pend_last_q <= last_of_burst;
        pend_end_q <= last_of_req;
        pend_cli_q <= cli_q;
        beat_q <= beat_q + ADDR_W'(BYTES);
        if (last_of_req) busy_q <= 1'b0;
      end
      // queue bookkeeping
      if (pend_q) begin
        q_data[q_wr_q] <= data_i[pend_cli_q];
        q_strb[q_wr_q] <= pend_strb_q;
        q_last[q_wr_q] <= pend_last_q;
        q_end[q_wr_q] <= pend_end_q;
        q_cli[q_wr_q] <= pend_cli_q;
        q_wr_q <= !q_wr_q;
      end
      if (w_fire) begin
        q_rd_q <= !q_rd_q;
        if (q_end[q_rd_q]) done_o[q_cli[q_rd_q]] <= 1'b1;
      end
      q_cnt_q <= q_cnt_q + {1'b0, pend_q} - {1'b0, w_fire};
    end
  end

  // Bursts whose write response is still outstanding (wide enough never to wrap).
  logic [15:0] b_out_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) b_out_q <= '0;
    else b_out_q <= b_out_q + {15'd0, burst_o} - {15'd0, m_axi_bvalid_i};
  end
  assign idle_o = !busy_q && (q_cnt_q == 2'd0) && !pend_q && (b_out_q == 16'd0) && !m_axi_awvalid_o;

  assign m_axi_wvalid_o = (q_cnt_q != 2'd0);
  assign m_axi_wdata_o = q_data[q_rd_q];
  assign m_axi_wstrb_o = q_strb[q_rd_q];
  assign m_axi_wlast_o = q_last[q_rd_q];

`ifndef SYNTHESIS
  // Strobes are never empty: every beat carries at least one requested byte.
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_strobe: assert property (@(posedge clk_i) disable iff (!chk_q) m_axi_wvalid_o |-> m_axi_wstrb_o != '0)
    else $error("tmnic_dma_wr: empty strobe");
`endif
endmodule
