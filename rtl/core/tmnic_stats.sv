// Statistics unit: the NIC's event counters (STAT_*) and the per-SRQ tag-matching statistics
// (TMSTAT_*), read by the register block through one read port.
//
// The counters live in a RAM of 128-bit words, four 32-bit counters per word: words 0..GW-1 hold
// STAT_0..STAT_{NUM_STATS-1}, word GW+s the four event counters of SRQ s (TMSTAT_EXPECTED ..
// TMSTAT_SYNCS). Events land in small per-counter accumulators (A_W bits). A round-robin arbiter
// picks a word with pending counts, reads it and writes back the sum one cycle later (a flush).
// A read is a flush with priority that also returns one counter of the sum, so it sees every event
// of the cycles before it was accepted. Reads and flushes alternate when both wait and the flush
// word is chosen one cycle ahead: a pending word is flushed within 2*NW+2 cycles, so an accumulator
// holds at most 2*NW+3 events (asserted). A word picked in the cycle after its own pick (its sum is
// being written) takes that sum from a bypass register instead of the RAM.
// Why not flip-flops: 84 wrapping 32-bit counters and the register block's read multiplexer over
// them cost ~10 K LUT4 on ECP5 (syn/README.md); here it is a 21 x 128 RAM and four adders.
//
// The TM levels (occupancy, high-water mark, disabled entries, phase counters) are the engine's
// live values, sampled when a read is accepted. Reconfiguring an SRQ zeroes its counters and
// high-water mark (events in that cycle are dropped with them). After reset every counter reads 0
// (each word carries a "zero" flag until its first flush).
module tmnic_stats import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned H_W = 10,            // engine handle width: levels are H_W+1 bits
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned IDX_W = 14          // read index: a word of the STATS or TM_STATS window
) (
  input  logic clk_i,
  input  logic rst_ni,

  // NIC events, one pulse per event (index STAT_*)
  input  logic [NUM_STATS-1:0] inc_i,

  // Tag-matching events, each for one SRQ
  input  logic             tm_exp_i,
  input  logic             tm_unexp_i,
  input  logic             tm_notag_i,
  input  logic [SRQ_W-1:0] tm_srq_i,         // SRQ of tm_exp_i / tm_unexp_i / tm_notag_i
  input  logic             tm_sync_i,
  input  logic [SRQ_W-1:0] tm_sync_srq_i,
  input  logic             srq_reset_i,      // SRQ reconfigured
  input  logic [15:0]      srq_reset_idx_i,

  // Engine levels per SRQ
  input  logic [NUM_SRQ-1:0][H_W:0] occ_i,
  input  logic [NUM_SRQ-1:0][H_W:0] disabled_i,
  input  logic [NUM_SRQ-1:0][15:0]  hw_cnt_i,
  input  logic [NUM_SRQ-1:0][15:0]  sw_cnt_i,

  // Read port: rd_tm_i = 0: counter STAT_<rd_idx_i>; 1: word rd_idx_i of the TM window
  // (SRQ rd_idx_i / NUM_TM_STATS, TMSTAT_<rd_idx_i % NUM_TM_STATS>). Out of range: 0.
  // The answer comes two cycles after the handshake, as a one-cycle pulse.
  input  logic             rd_valid_i,
  output logic             rd_ready_o,
  input  logic             rd_tm_i,
  input  logic [IDX_W-1:0] rd_idx_i,
  output logic             rsp_valid_o,
  output logic [31:0]      rsp_data_o
);
  localparam int unsigned LANES = 4;                          // counters per RAM word
  localparam int unsigned GW = (NUM_STATS + LANES - 1) / LANES; // words of STAT_* counters
  localparam int unsigned NW = GW + NUM_SRQ;                  // RAM words
  localparam int unsigned NC = NW * LANES;                    // counters (some STAT lanes unused)
  localparam int unsigned W_W = $clog2(NW);
  localparam int unsigned A_W = $clog2(2 * NW + 4);           // accumulator: 2*NW+3 events fit

  if (NUM_TM_STATS != 8 || TMSTAT_EXPECTED != 0 || TMSTAT_UNEXPECTED != 1 || TMSTAT_NO_TAG != 2 ||
      TMSTAT_SYNCS != 3 || H_W > 31 || NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0 ||
      NUM_SRQ * NUM_TM_STATS > (1 << IDX_W) || NUM_STATS > (1 << IDX_W) || NUM_STATS < 1) begin : g_chk
    $fatal(1, "tmnic_stats: expects TMSTAT_EXPECTED..SYNCS = 0..3 of 8 words per SRQ, H_W <= 31, NUM_SRQ a power of two >= 2 and windows within the read index");
  end

  // ---------------------------------------------------------------- events into accumulators
  // One bit per counter, in RAM word order (the TM events shifted to their SRQ's word).
  logic [NC-1:0] inc;
  always_comb begin
    inc = NC'(inc_i);
    inc |= NC'({tm_notag_i, tm_unexp_i, tm_exp_i}) << ((GW + int'(tm_srq_i)) * LANES);
    inc |= NC'(tm_sync_i) << ((GW + int'(tm_sync_srq_i)) * LANES + TMSTAT_SYNCS);
  end

  logic [NW-1:0][LANES-1:0][A_W-1:0] acc_q, acc_d;  // [word][lane]
  logic [NW-1:0]  zero_q, zero_d;   // the RAM word is not written yet: it reads as 0
  logic [NW-1:0]  dirty_q, dirty_d; // the word has counts (or a zero) to write

  wire             srst = srq_reset_i && srq_reset_idx_i < 16'(NUM_SRQ);
  wire [W_W-1:0]   srst_w = W_W'(GW) + W_W'(srq_reset_idx_i[SRQ_W-1:0]);

  // ---------------------------------------------------------------- pick: read or flush
  // Stage 0 picks a word and reads it from the RAM; stage 1 (s1_*) adds and writes it back.
  logic           s1_q, s1_d;          // stage 1 holds a RAM word operation
  logic           s1_rd_q, s1_rd_d;    // ... that answers a read
  logic           s1_mem_q, s1_mem_d;  // the read is of a counter (else: level or 0 in lvl_q)
  logic [W_W-1:0] s1_w_q, s1_w_d;
  logic [1:0]     s1_lane_q, s1_lane_d;
  logic           s1_zero_q, s1_zero_d;
  logic [LANES-1:0][A_W-1:0] s1_acc_q, s1_acc_d;
  logic [31:0]    lvl_q, lvl_d;
  logic           rd_prev_q, rd_prev_d;  // the previous pick was a read

  // The read's word and lane
  logic           r_mem, r_lvl;
  logic [W_W-1:0] r_w;
  logic [1:0]     r_lane;
  logic [SRQ_W-1:0] r_srq;
  logic [2:0]     r_word;
  always_comb begin
    r_word = rd_idx_i[2:0];
    r_srq = SRQ_W'(rd_idx_i >> 3);
    r_mem = 1'b0;
    r_lvl = 1'b0;
    r_w = '0;
    r_lane = rd_idx_i[1:0];
    if (!rd_tm_i) begin
      r_mem = rd_idx_i < IDX_W'(NUM_STATS);
      // Out of range reads 0 and no RAM word (its index may lie past the last one).
      r_w = r_mem ? W_W'(rd_idx_i >> 2) : '0;
    end else if (rd_idx_i < IDX_W'(NUM_SRQ * NUM_TM_STATS)) begin
      r_mem = r_word < 3'(LANES);
      r_lvl = !r_mem;
      r_w = W_W'(GW) + W_W'(r_srq);
    end
  end

  // The next word to flush is chosen one cycle ahead (fl_*_q, index and one-hot) from registered
  // state, so the cycle that uses it only selects its accumulators. The choice is kept until used;
  // it is renewed when used, when a read picks the same word, or when the word is no longer dirty
  // (a read took it while there was no valid choice). Everything that decides whether a read is
  // taken is registered: the read port's ready does not wait for the arbiter or the index decode.
  logic [NW-1:0]  elig, gnt, fl_oh_q, fl_oh_d, r_oh, pick_oh;
  logic [W_W-1:0] fl_w, fl_w_q, fl_w_d;
  logic           fl_valid, fl_ok, fl_load, fl_take, rd_take, rd_pick, pick;
  logic [W_W-1:0] pick_w;
  logic           byp, byp_q;                 // the pick is the word stage 1 writes now
  wire            s1_wr = s1_q && s1_mem_q;   // stage 1 writes word s1_w_q this cycle

  always_comb begin
    r_oh = '0;
    for (int w = 0; w < int'(NW); w++) r_oh[w] = r_mem && r_w == W_W'(w);
  end
  assign fl_ok = |(fl_oh_q & dirty_q);
  assign rd_ready_o = !(rd_prev_q && fl_ok);
  assign rd_take = rd_valid_i && rd_ready_o;
  assign rd_pick = rd_take && r_mem;
  assign fl_take = fl_ok && !rd_take;
  assign pick = fl_take || rd_pick;
  assign pick_w = rd_take ? r_w : fl_w_q;
  assign pick_oh = rd_pick ? r_oh : (fl_take ? fl_oh_q : '0);
  assign byp = pick && s1_wr && pick_w == s1_w_q;
  assign fl_load = !fl_ok || fl_take || (rd_pick && |(r_oh & fl_oh_q));
  assign elig = dirty_q & ~fl_oh_q;

  tmnic_rr_arb #(.N(NW)) u_arb (
    .clk_i, .rst_ni, .req_i(elig), .ack_i(fl_load), .gnt_o(gnt), .idx_o(fl_w), .valid_o(fl_valid));
  assign fl_w_d = fl_load ? fl_w : fl_w_q;
  assign fl_oh_d = fl_load ? gnt : fl_oh_q;   // (gnt is zero when nothing is eligible: no choice)

  // Registered levels of the read SRQ
  logic [NUM_SRQ-1:0][H_W:0] hwm_q, hwm_d;
  logic [NUM_SRQ-1:0]        hold_q, hold_d;  // after a reconfiguration: until occupancy was 0

  always_comb begin
    logic [H_W:0] occ, hwm, dis;
    logic [31:0]  ph;
    occ = '0; hwm = '0; dis = '0; ph = '0;
    rd_prev_d = rd_take;
    s1_d = rd_take || fl_take;
    s1_rd_d = rd_take;
    s1_mem_d = pick;
    s1_w_d = s1_w_q;
    s1_lane_d = s1_lane_q;
    s1_zero_d = s1_zero_q;
    s1_acc_d = s1_acc_q;
    lvl_d = lvl_q;
    if (pick) begin
      // One-hot selects (AND-OR) of the picked word's flags and accumulators.
      s1_w_d = pick_w;
      s1_lane_d = r_lane;
      s1_zero_d = |(pick_oh & zero_q);
      s1_acc_d = '0;
      for (int w = 0; w < int'(NW); w++) if (pick_oh[w]) s1_acc_d |= acc_q[w];
    end
    if (rd_take) begin
      // The read SRQ's levels: a one-hot select per SRQ (an index into the packed level arrays
      // becomes a shifter with an 11-bit stride in synthesis: ~1,400 LUT4 more).
      for (int s = 0; s < int'(NUM_SRQ); s++) begin
        if (r_srq == SRQ_W'(s)) begin
          occ |= occ_i[s]; hwm |= hwm_q[s]; dis |= disabled_i[s]; ph |= {hw_cnt_i[s], sw_cnt_i[s]};
        end
      end
      unique case (r_word)
        3'(TMSTAT_OCCUPANCY):  lvl_d = 32'(occ);
        3'(TMSTAT_HIGH_WATER): lvl_d = 32'(hwm);
        3'(TMSTAT_DISABLED):   lvl_d = 32'(dis);
        3'(TMSTAT_PHASE):      lvl_d = ph;
        default:               lvl_d = 32'd0;
      endcase
      if (!r_lvl) lvl_d = 32'd0;
    end

    // Accumulators: the picked word starts again from this cycle's events; a reconfigured SRQ
    // drops its counts and reads 0 until its next flush. Only evaluated when something happens.
    zero_d = zero_q;
    acc_d = acc_q;
    dirty_d = dirty_q;
    zero_d &= ~pick_oh;
    if (srst) zero_d[srst_w] = 1'b1;
    if (inc != '0 || pick || srst) begin
      // dirty from the operands, not the sums (no carry chain on the way; the sum of a non-zero
      // accumulator and an event is non-zero as long as nothing wraps, which is asserted).
      for (int w = 0; w < int'(NW); w++) begin
        dirty_d[w] = zero_d[w];
        for (int l = 0; l < int'(LANES); l++) begin
          acc_d[w][l] = (pick_oh[w] ? '0 : acc_q[w][l]) + A_W'(inc[w * LANES + l]);
          if (inc[w * LANES + l] || (!pick_oh[w] && acc_q[w][l] != '0)) dirty_d[w] = 1'b1;
          if (srst && srst_w == W_W'(w)) acc_d[w][l] = '0;
        end
      end
    end

    hwm_d = hwm_q;
    hold_d = hold_q;
    for (int s = 0; s < int'(NUM_SRQ); s++) begin
      if (occ_i[s] == '0) hold_d[s] = 1'b0;
      else if (!hold_q[s] && occ_i[s] > hwm_q[s]) hwm_d[s] = occ_i[s];
    end
    if (srst) begin
      hwm_d[srq_reset_idx_i[SRQ_W-1:0]] = '0;
      hold_d[srq_reset_idx_i[SRQ_W-1:0]] = 1'b1;
    end
  end

  // ---------------------------------------------------------------- RAM and stage 1
  logic [LANES-1:0][31:0] ram_q, sum, wr_sum_q;
  tmnic_ram_sdp #(.WIDTH(LANES * 32), .DEPTH(NW), .NO_COLLISION(1'b1)) u_ram (
    .clk_i, .we_i(s1_wr), .waddr_i(s1_w_q), .wdata_i(sum),
    .re_i(pick && !byp), .raddr_i(pick_w), .rdata_o(ram_q));

  logic        rsp_valid_d;
  logic [31:0] rsp_data_d;
  always_comb begin
    for (int l = 0; l < int'(LANES); l++)
      sum[l] = (s1_zero_q ? 32'd0 : byp_q ? wr_sum_q[l] : ram_q[l]) + 32'(s1_acc_q[l]);
    rsp_valid_d = s1_q && s1_rd_q;
    rsp_data_d = rsp_data_o;
    if (rsp_valid_d) rsp_data_d = s1_mem_q ? sum[s1_lane_q] : lvl_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      acc_q <= '0;
      zero_q <= '1;
      dirty_q <= '1;
      hwm_q <= '0;
      hold_q <= '0;
      s1_q <= 1'b0;
      rd_prev_q <= 1'b0;
      fl_oh_q <= '0;
      rsp_valid_o <= 1'b0;
    end else begin
      acc_q <= acc_d;
      zero_q <= zero_d;
      dirty_q <= dirty_d;
      hwm_q <= hwm_d;
      hold_q <= hold_d;
      s1_q <= s1_d;
      rd_prev_q <= rd_prev_d;
      fl_oh_q <= fl_oh_d;
      rsp_valid_o <= rsp_valid_d;
    end
  end
  always_ff @(posedge clk_i) begin
    s1_rd_q <= s1_rd_d; s1_mem_q <= s1_mem_d; s1_w_q <= s1_w_d; s1_lane_q <= s1_lane_d;
    fl_w_q <= fl_w_d;
    byp_q <= byp;
    if (s1_wr) wr_sum_q <= sum;
    s1_zero_q <= s1_zero_d; s1_acc_q <= s1_acc_d; lvl_q <= lvl_d;
    rsp_data_o <= rsp_data_d;
  end

  // lane = idx[1:0]: bit 2 is r_word's only; the arbiter's valid is its grant being non-zero
  wire unused_ok = ^{rd_idx_i[2], fl_valid};

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // Requests are held until taken (valid and payload).
  a_rd_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
    rd_valid_i && !rd_ready_o |=> rd_valid_i && $stable({rd_tm_i, rd_idx_i}))
    else $error("tmnic_stats: read request dropped or changed before it was taken");
  // The flush bound holds: no accumulator wraps.
  // (one check over a vector computed only in cycles with events: the simulator's cost follows
  // activity, not the number of counters)
  logic [NC-1:0] wrap_v;
  always_comb begin
    wrap_v = '0;
    if (inc != '0)
      for (int c = 0; c < int'(NC); c++)
        wrap_v[c] = inc[c] && acc_q[c / LANES][c % LANES] == '1 && !(pick && pick_w == W_W'(c / LANES));
  end
  a_acc: assert property (@(posedge clk_i) disable iff (!chk_q) wrap_v == '0)
    else $error("tmnic_stats: accumulator wrapped (counters %h)", wrap_v);
  // The flush choice's two forms agree, and a valid choice is a dirty word other than the one
  // being written (the flush never needs the bypass; a read may).
  a_fl_oh: assert property (@(posedge clk_i) disable iff (!chk_q)
    fl_oh_q == '0 || fl_oh_q == NW'(1) << fl_w_q)
    else $error("tmnic_stats: flush choice index and one-hot differ");
  a_fl_dirty: assert property (@(posedge clk_i) disable iff (!chk_q)
    fl_oh_q != '0 && !$past(rd_pick) |-> dirty_q[fl_w_q] && !(s1_wr && s1_w_q == fl_w_q))
    else $error("tmnic_stats: flush choice %0d not dirty or being written", fl_w_q);
`endif
endmodule
