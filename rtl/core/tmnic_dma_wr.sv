// DMA write engine: serves byte-granular write requests from NCLI clients, one request at a time,
// as AXI4 INCR bursts that never cross a 4 KiB boundary. The engine pulls the data from the client
// beat by beat: data_req_o[c] asks for the window of request bytes that lands on the next aligned
// host beat (data_off_o, may be negative on the first beat) and the client answers on data_i[c]
// exactly DATA_LAT cycles later, typically from tmnic_shift_buf (whose read latency must match).
// Strobes cover exactly the requested bytes.
//
// Pipeline: the pull decision registers data_req_o/data_off_o and the beat's strobe/last/client,
// which travel DATA_LAT more cycles beside the client's read and enter an output FIFO with the data;
// W comes from the FIFO's head register. A pull is made only when the FIFO has room for every beat
// in flight, so a client's answer is never refused. Beat geometry uses narrow counters (bytes left
// in the request, the position in the 4 KiB page): no 64-bit arithmetic sits between registers
// except the beat address increment.
module tmnic_dma_wr #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned ADDR_W = 64,
  parameter int unsigned NCLI = 2,
  parameter int unsigned DATA_LAT = 1,   // cycles from data_req_o to data_i, 1..4
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

  // Data pull: lane i of data_i[c] must be request byte (data_off_o + i) DATA_LAT cycles after
  // data_req_o[c] (both registered).
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
  // Output FIFO (distributed RAM, 16 words deep anyway): room for every beat in flight (DATA_LAT +
  // 1) plus the queued ones without counting the beat leaving on W, so that the pull decision does
  // not depend on wready and a pull can still be made every cycle while W flows.
  localparam int unsigned QDEPTH = 8;
  localparam int unsigned Q_W = $clog2(QDEPTH);

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_dma_wr: DATA_W must be 256 or 512");
  end
  if (DATA_LAT < 1 || DATA_LAT > 4) begin : g_chk_lat
    $fatal(1, "tmnic_dma_wr: DATA_LAT must be 1..4");
  end
  if (NCLI < 1 || ADDR_W < 13) begin : g_chk_cli
    $fatal(1, "tmnic_dma_wr: NCLI must be >= 1 and ADDR_W >= 13");
  end

  assign m_axi_bready_o = 1'b1;

  // A pulled beat on its way to the output FIFO.
  typedef struct packed {
    logic [BYTES-1:0] strb;
    logic             last;     // last beat of its burst
    logic             fin;      // last beat of its request
    logic [CLI_W-1:0] cli;
  } meta_t;
  typedef struct packed {
    logic [DATA_W-1:0] data;
    meta_t             m;
  } beat_t;

  // ---------------------------------------------------------------- registers
  // Control (reset)
  logic              busy_q, busy_d;
  logic              first_q, first_d;          // the next beat is the request's first
  logic [DATA_LAT:0] pv_q, pv_d;                // beat in flight: stage 0 = data_req_o
  logic [NCLI-1:0]   data_req_d, done_d;
  logic              awvalid_d, burst_d;
  logic [15:0]       b_out_q, b_out_d;          // bursts without write response (never wraps)
  // Payload (no reset)
  logic [CLI_W-1:0]  cli_q, cli_d;
  logic [LANE_W-1:0] lane0_q, lane0_d;          // start lane of the request
  logic [ADDR_W-1:0] beat_q, beat_d;            // aligned address of the next beat
  logic [13:0]       left_q, left_d;            // request end - beat_q: BYTES*k + 1 .. 4096 + BYTES
  logic signed [13:0] noff_q, noff_d;           // beat_q - request address (data_off_o of the next pull)
  logic [ADDR_W-1:0] awaddr_d;
  logic [7:0]        awlen_d;
  meta_t             pm_q [DATA_LAT+1];         // meta of the beats in flight
  meta_t             pm0_d;

  // ---------------------------------------------------------------- arbiter and output FIFO
  logic [NCLI-1:0]  gnt;
  logic [CLI_W-1:0] gnt_idx;
  logic             gnt_valid;
  tmnic_rr_arb #(.N(NCLI)) u_arb (
    .clk_i, .rst_ni,
    .req_i(req_valid_i & {NCLI{!busy_q}}),
    .ack_i(!busy_q),
    .gnt_o(gnt), .idx_o(gnt_idx), .valid_o(gnt_valid)
  );
  assign req_ready_o = gnt & {NCLI{!busy_q}};

  beat_t       q_in, q_out;
  logic        q_ready;
  logic [Q_W:0] q_level;
  wire w_fire = m_axi_wvalid_o && m_axi_wready_i;
  assign q_in = '{data: data_i[pm_q[DATA_LAT].cli], m: pm_q[DATA_LAT]};
  tmnic_fifo #(.WIDTH($bits(beat_t)), .DEPTH(QDEPTH), .OUT_REG(1)) u_q (
    .clk_i, .rst_ni,
    .s_data_i(q_in), .s_valid_i(pv_q[DATA_LAT]), .s_ready_o(q_ready),
    .m_data_o(q_out), .m_valid_o(m_axi_wvalid_o), .m_ready_i(m_axi_wready_i),
    .level_o(q_level));
  assign m_axi_wdata_o = q_out.data;
  assign m_axi_wstrb_o = q_out.m.strb;
  assign m_axi_wlast_o = q_out.m.last;

  // ---------------------------------------------------------------- next state
  logic [12:0]       to_page;        // 4096 - beat_q[11:0]: BYTES..4096
  logic [13:0]       span;           // bytes of a burst starting at beat_q
  logic              first_of_burst, last_of_req, last_of_burst, room, pull;
  logic [LANE_W-1:0] lo;
  logic [LANE_W:0]   hi;
  logic [$clog2(DATA_LAT + 2)-1:0] in_flight;
  always_comb begin
    in_flight = '0;
    for (int k = 0; k <= int'(DATA_LAT); k++) in_flight += $bits(in_flight)'(pv_q[k]);
    to_page = 13'h1000 - {1'b0, beat_q[11:0]};
    first_of_burst = first_q || (beat_q[11:LANE_W] == '0);
    last_of_req = left_q <= 14'(BYTES);
    last_of_burst = last_of_req || (beat_q[11:LANE_W] == '1);
    lo = first_q ? lane0_q : '0;
    hi = (left_q < 14'(BYTES)) ? (LANE_W + 1)'(left_q) : (LANE_W + 1)'(BYTES);
    span = ((left_q < {1'b0, to_page}) ? left_q : {1'b0, to_page}) + 14'(BYTES - 1);
    // Room for every beat in flight plus this one (narrow: this sum gates every state register).
    room = ({1'b0, q_level} + (Q_W + 2)'(in_flight)) < (Q_W + 2)'(QDEPTH);
    pull = busy_q && room && (!first_of_burst || !m_axi_awvalid_o || m_axi_awready_i);

    busy_d = busy_q; first_d = first_q; cli_d = cli_q; lane0_d = lane0_q; beat_d = beat_q; left_d = left_q;
    noff_d = noff_q;
    awvalid_d = m_axi_awvalid_o && !m_axi_awready_i; awaddr_d = m_axi_awaddr_o; awlen_d = m_axi_awlen_o;
    burst_d = 1'b0;
    pv_d = {pv_q[DATA_LAT-1:0], pull};
    data_req_d = '0;
    pm0_d = pm_q[0];
    done_d = '0;
    if (w_fire && q_out.m.fin) done_d[q_out.m.cli] = 1'b1;
    b_out_d = b_out_q + 16'(burst_o) - 16'(m_axi_bvalid_i);

    if (!busy_q && gnt_valid) begin
      busy_d = 1'b1;
      first_d = 1'b1;
      cli_d = gnt_idx;
      lane0_d = req_addr_i[gnt_idx][LANE_W-1:0];
      beat_d = {req_addr_i[gnt_idx][ADDR_W-1:LANE_W], {LANE_W{1'b0}}};
      left_d = {1'b0, req_len_i[gnt_idx]} + 14'(req_addr_i[gnt_idx][LANE_W-1:0]);
      noff_d = -14'(req_addr_i[gnt_idx][LANE_W-1:0]);
    end
    if (pull) begin
      if (first_of_burst) begin
        awvalid_d = 1'b1;
        awaddr_d = beat_q;
        awlen_d = 8'((span >> LANE_W) - 14'd1);
        burst_d = 1'b1;
      end
      data_req_d[cli_q] = 1'b1;
      pm0_d = '{strb: ~(BYTES'({BYTES{1'b1}} << hi)) & (BYTES'({BYTES{1'b1}} << lo)),
                last: last_of_burst, fin: last_of_req, cli: cli_q};
      first_d = 1'b0;
      beat_d = beat_q + ADDR_W'(BYTES);
      left_d = left_q - 14'(BYTES);
      noff_d = noff_q + 14'(BYTES);
      if (last_of_req) busy_d = 1'b0;
    end
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q <= 1'b0;
      first_q <= 1'b0;
      pv_q <= '0;
      data_req_o <= '0;
      done_o <= '0;
      m_axi_awvalid_o <= 1'b0;
      burst_o <= 1'b0;
      b_out_q <= '0;
    end else begin
      busy_q <= busy_d;
      first_q <= first_d;
      pv_q <= pv_d;
      data_req_o <= data_req_d;
      done_o <= done_d;
      m_axi_awvalid_o <= awvalid_d;
      burst_o <= burst_d;
      b_out_q <= b_out_d;
    end
  end
  always_ff @(posedge clk_i) begin
    cli_q <= cli_d;
    lane0_q <= lane0_d;
    beat_q <= beat_d;
    left_q <= left_d;
    noff_q <= noff_d;
    if (pull) data_off_o <= noff_q;
    m_axi_awaddr_o <= awaddr_d;
    m_axi_awlen_o <= awlen_d;
    pm_q[0] <= pm0_d;
    for (int k = 1; k <= int'(DATA_LAT); k++) pm_q[k] <= pm_q[k-1];
  end

  assign idle_o = !busy_q && (q_level == '0) && (pv_q == '0) && (b_out_q == 16'd0) && !m_axi_awvalid_o;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // Strobes are never empty: every beat carries at least one requested byte.
  a_strobe: assert property (@(posedge clk_i) disable iff (!chk_q) m_axi_wvalid_o |-> m_axi_wstrb_o != '0)
    else $error("tmnic_dma_wr: empty strobe");
  // A client's answer always finds room (the pull reserved it).
  a_room: assert property (@(posedge clk_i) disable iff (!chk_q) pv_q[DATA_LAT] |-> q_ready)
    else $error("tmnic_dma_wr: output FIFO full on a pulled beat");
  // AW held until accepted, with the same address and length.
  a_aw_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
      m_axi_awvalid_o && !m_axi_awready_i |=> m_axi_awvalid_o && $stable(m_axi_awaddr_o) && $stable(m_axi_awlen_o))
    else $error("tmnic_dma_wr: AW dropped or changed while stalled");
  // At most one client pulled at a time; a pull only while a request is served.
  a_req_onehot: assert property (@(posedge clk_i) disable iff (!chk_q) $onehot0(data_req_o))
    else $error("tmnic_dma_wr: data_req_o not one-hot");
  a_bresp: assert property (@(posedge clk_i) disable iff (!chk_q) m_axi_bvalid_i |-> b_out_q != '0 || burst_o)
    else $error("tmnic_dma_wr: write response without an outstanding burst");
`endif
endmodule
