// Byte-addressed packet buffer with unaligned window access.
//
// A DATA_W-wide RAM split into an even and an odd bank, so that any DATA_W/8-byte window starting at
// an arbitrary byte position touches one word of each bank. A write stores the enabled lanes of
// wr_data_i at wr_pos_i.. (wrapping at the buffer end); a read returns the window at rd_pos_i RD_LAT
// cycles later (reads pipeline, one per cycle) and holds it until the next read's data arrives.
// RD_LAT = 1 reads both words and shifts them in one cycle; RD_LAT = 2 registers the two words
// (a registered RAM read) and shifts in the second cycle; RD_LAT = 3 splits the shift, by 8-byte
// steps in the second cycle and by bytes in the third (two 8:1 selections instead of one 64:1), for
// timing. Used wherever payload moves
// between host-memory alignment and packet alignment (gather for TX, scatter for RX), so that no
// engine needs its own byte shifter.
module tmnic_shift_buf #(
  parameter int unsigned DATA_W = 512,
  // Buffer size in words (power of two, at least 4).
  parameter int unsigned DEPTH = 128,
  // Read latency in cycles: 1, 2 or 3.
  parameter int unsigned RD_LAT = 1,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned POS_W = $clog2(DEPTH * BYTES)
) (
  input  logic              clk_i,
  // Write port: lane i of wr_data_i goes to byte wr_pos_i + i when wr_be_i[i] is set.
  input  logic              wr_en_i,
  input  logic [POS_W-1:0]  wr_pos_i,
  input  logic [DATA_W-1:0] wr_data_i,
  input  logic [BYTES-1:0]  wr_be_i,
  // Read port: rd_data_o holds bytes rd_pos_i .. rd_pos_i+BYTES-1 RD_LAT cycles after rd_en_i.
  input  logic              rd_en_i,
  input  logic [POS_W-1:0]  rd_pos_i,
  output logic [DATA_W-1:0] rd_data_o
);
  localparam int unsigned LANE_W = $clog2(BYTES);
  localparam int unsigned WORD_W = POS_W - LANE_W;

  if (DATA_W % 64 != 0 || (BYTES & (BYTES - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_shift_buf: DATA_W must be a power-of-two multiple of 64");
  end
  if (DEPTH < 4 || (DEPTH & (DEPTH - 1)) != 0) begin : g_chk_d   // (2 would leave a bank 1 word deep)
    $fatal(1, "tmnic_shift_buf: DEPTH must be a power of two >= 4");
  end
  if (RD_LAT < 1 || RD_LAT > 3) begin : g_chk_lat
    $fatal(1, "tmnic_shift_buf: RD_LAT must be 1, 2 or 3");
  end

  logic [DATA_W-1:0] mem_even [DEPTH/2];
  logic [DATA_W-1:0] mem_odd  [DEPTH/2];

  // Write: rotate data and enables into a double-width word, low half to word w0, high half to w0+1.
  // One of the two words is even and the other odd, so each bank has a single write address (the
  // even word's, the odd word's) and one set of byte enables: one write port per bank, as a block
  // RAM with byte enables has, and half the per-byte writes a simulator has to track.
  always_ff @(posedge clk_i) begin
    if (wr_en_i) begin
      logic [2*DATA_W-1:0] d2;
      logic [2*BYTES-1:0]  b2;
      logic [WORD_W-1:0]   w0;
      logic [LANE_W-1:0]   rot;
      logic [DATA_W-1:0]   d_ev, d_od;
      logic [BYTES-1:0]    b_ev, b_od;
      logic [WORD_W-2:0]   a_ev, a_od;
      rot = wr_pos_i[LANE_W-1:0];
      w0 = wr_pos_i[POS_W-1:LANE_W];
      d2 = {{DATA_W{1'b0}}, wr_data_i} << (8 * rot);
      b2 = {{BYTES{1'b0}}, wr_be_i} << rot;
      {d_ev, d_od} = w0[0] ? d2 : {d2[DATA_W-1:0], d2[2*DATA_W-1:DATA_W]};
      {b_ev, b_od} = w0[0] ? b2 : {b2[BYTES-1:0], b2[2*BYTES-1:BYTES]};
      a_ev = w0[WORD_W-1:1] + (WORD_W - 1)'(w0[0]);   // (the even word of w0, w0 + 1)
      a_od = w0[WORD_W-1:1];
      for (int i = 0; i < BYTES; i++) begin
        if (b_ev[i]) mem_even[a_ev][i*8 +: 8] <= d_ev[i*8 +: 8];
        if (b_od[i]) mem_odd[a_od][i*8 +: 8] <= d_od[i*8 +: 8];
      end
    end
  end

  // Read: the two words around the window, shifted down by the lane offset. The window starts in
  // word r0 and ends in word r0 + 1; one is even and one odd, so each bank has a single read
  // address: the even word is (r0 + 1) / 2 of the even bank, the odd one r0 / 2 of the odd bank.
  logic [WORD_W-1:0] r0;
  logic [WORD_W-2:0] ev_a, od_a;
  assign r0 = rd_pos_i[POS_W-1:LANE_W];
  assign ev_a = r0[WORD_W-1:1] + (WORD_W - 1)'(r0[0]);
  assign od_a = r0[WORD_W-1:1];
  function automatic logic [DATA_W-1:0] window(input logic [DATA_W-1:0] ev, input logic [DATA_W-1:0] od,
                                               input logic odd_lo, input logic [LANE_W-1:0] sh);
    window = DATA_W'((odd_lo ? {ev, od} : {od, ev}) >> (8 * sh));
  endfunction
  if (RD_LAT == 1) begin : g_rd1
    always_ff @(posedge clk_i)
      if (rd_en_i) rd_data_o <= window(mem_even[ev_a], mem_odd[od_a], r0[0], rd_pos_i[LANE_W-1:0]);
  end else begin : g_rdq
    // Stage 1: one registered read per bank (a plain synchronous RAM read). The enables only gate
    // data registers (a garbage load after reset is never read): no reset.
    logic [DATA_W-1:0] ev_q, od_q;
    logic              odd_lo_q, en1_q;
    logic [LANE_W-1:0] sh_q;
    always_ff @(posedge clk_i) begin
      en1_q <= rd_en_i;
      if (rd_en_i) begin
        ev_q <= mem_even[ev_a];
        od_q <= mem_odd[od_a];
        odd_lo_q <= r0[0];
        sh_q <= rd_pos_i[LANE_W-1:0];
      end
    end
    if (RD_LAT == 2) begin : g_rd2
      // Stage 2: the shift.
      always_ff @(posedge clk_i) if (en1_q) rd_data_o <= window(ev_q, od_q, odd_lo_q, sh_q);
    end else begin : g_rd3
      // Stage 2: shift by whole 8-byte groups, keeping the 7 bytes the byte shift may still need;
      // stage 3: shift by bytes.
      localparam int unsigned MID_W = DATA_W + 56;
      logic             en2_q;
      logic [MID_W-1:0] mid_q;
      logic [2:0]       shb_q;
      always_ff @(posedge clk_i) begin
        en2_q <= en1_q;
        if (en1_q) begin
          mid_q <= MID_W'((odd_lo_q ? {ev_q, od_q} : {od_q, ev_q}) >> (64 * sh_q[LANE_W-1:3]));
          shb_q <= sh_q[2:0];
        end
        if (en2_q) rd_data_o <= DATA_W'(mid_q >> (8 * shb_q));
      end
    end
  end

endmodule
