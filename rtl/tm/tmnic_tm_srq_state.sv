// Per-SRQ state of the tag-matching engine, changed by at most one event per cycle (the engine's
// commit): the 16-bit unexpected-message counters hw_cnt / sw_cnt, live and disabled entries, the
// disable threshold (entries posted at or after dis_seq while a phase mismatch is open are
// disabled), the SRQ's spill list, and per mask class the live entries (a class whose count is zero
// in every SRQ may take another mask).
//
// Phase rules (rdma-core-tm.md 2.5): an op carrying a count sets sw_cnt first; if sw_cnt == hw_cnt
// afterwards, every disabled entry of the SRQ becomes enabled (en_all_o). An ADD is enabled iff
// sw_cnt == hw_cnt after that update. Disabled entries are therefore always the newest entries of
// their SRQ (a suffix in posting order): once one is added, every later ADD is disabled too until an
// enable-all, because hw_cnt cannot reach sw_cnt again without an op carrying a count (the 0x7fff
// blocked rule stops counting first). So one threshold per SRQ replaces a bit per entry.
//
// Tables indexed by SRQ are unpacked arrays read through two ports: cur_* for the event's SRQ (the
// commit) and q_* for another SRQ (the engine's stage s3), so that a read is one table access.
module tmnic_tm_srq_state #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned N_CLASS = 2,
  parameter int unsigned H_W     = 10,
  parameter int unsigned SEQ_W   = 62,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned CLS_W = (N_CLASS > 1) ? $clog2(N_CLASS) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,

  input  logic             ev_i,          // an event for SRQ ev_srq_i this cycle
  input  logic [SRQ_W-1:0] ev_srq_i,
  input  logic             ev_clear_i,    // every entry of the SRQ removed, counters to 0
  input  logic             ev_cnt_vld_i,  // sw_cnt := ev_cnt_i first
  input  logic [15:0]      ev_cnt_i,
  input  logic             ev_miss_i,     // hw_cnt++
  input  logic             ev_add_i,      // an entry added (enabled: add_en_o)
  input  logic [SEQ_W-1:0] ev_add_seq_i,
  input  logic             ev_add_cls_i,  // ...into class ev_add_cls_idx_i
  input  logic [CLS_W-1:0] ev_add_cls_idx_i,
  input  logic             ev_rm_i,       // an entry removed
  input  logic             ev_rm_dis_i,   // ...that was disabled before this event
  input  logic             ev_rm_cls_i,   // ...from class ev_rm_cls_idx_i
  input  logic [CLS_W-1:0] ev_rm_cls_idx_i,
  input  logic             ev_sp_add_i,   // an entry appended to the spill list (one longer)
  input  logic             ev_sp_rm_i,    // an entry unlinked from it (one shorter)
  input  logic [H_W-1:0]   ev_sp_head_i,  // ...either way, its new head and tail
  input  logic [H_W-1:0]   ev_sp_tail_i,

  output logic             en_all_o,      // this event enables every entry of ev_srq_i
  output logic             add_en_o,      // an ADD in this event is enabled
  output logic [15:0]      hw_new_o,      // hw_cnt of ev_srq_i after the event

  // The event's SRQ now (before the event).
  output logic             cur_dis_act_o,
  output logic [SEQ_W-1:0] cur_dis_seq_o,
  output logic [H_W-1:0]   cur_sp_head_o,
  output logic [H_W-1:0]   cur_sp_tail_o,
  output logic             cur_sp_nz_o,     // its spill list is not empty
  // Another SRQ's counters and disable threshold.
  input  logic [SRQ_W-1:0] q_srq_i,
  output logic [15:0]      q_hw_o,
  output logic [15:0]      q_sw_o,
  output logic             q_dis_act_o,
  output logic [SEQ_W-1:0] q_dis_seq_o,

  output logic [NUM_SRQ-1:0][15:0]  hw_o,
  output logic [NUM_SRQ-1:0][15:0]  sw_o,
  output logic [NUM_SRQ-1:0][H_W:0] occ_o,
  output logic [NUM_SRQ-1:0][H_W:0] dis_o,
  output logic [H_W:0]              spilled_o,   // spill-list entries of all SRQs
  output logic [N_CLASS-1:0]        cls_free_o
);
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_srq
    $fatal(1, "tmnic_tm_srq_state: NUM_SRQ must be a power of two >= 2");
  end
  if (N_CLASS < 1) begin : g_chk_cls
    $fatal(1, "tmnic_tm_srq_state: N_CLASS must be >= 1");
  end

  logic [15:0]      hw_q [NUM_SRQ];
  logic [15:0]      sw_q [NUM_SRQ];
  logic [H_W:0]     occ_q [NUM_SRQ];
  logic [H_W:0]     dis_q [NUM_SRQ];
  logic [H_W:0]     sp_cnt_q [NUM_SRQ];
  logic [NUM_SRQ-1:0] dis_act_q;
  logic [NUM_SRQ-1:0] sp_nz_q;   // sp_cnt_q[s] != 0, kept as a bit: s4's hold reads it (one mux)
  logic [SEQ_W-1:0] dis_seq_q [NUM_SRQ];
  logic [H_W-1:0]   sp_head_q [NUM_SRQ];
  logic [H_W-1:0]   sp_tail_q [NUM_SRQ];
  logic [N_CLASS-1:0][H_W:0] cls_cnt_q [NUM_SRQ];  // live entries per SRQ and class
  logic [N_CLASS-1:0][H_W:0] cls_tot_q;            // ... summed over the SRQs
  logic [H_W:0]     spilled_q;

  assign cur_dis_act_o     = dis_act_q[ev_srq_i];
  assign cur_dis_seq_o     = dis_seq_q[ev_srq_i];
  assign cur_sp_head_o     = sp_head_q[ev_srq_i];
  assign cur_sp_tail_o     = sp_tail_q[ev_srq_i];
  assign cur_sp_nz_o       = sp_nz_q[ev_srq_i];
  assign q_hw_o            = hw_q[q_srq_i];
  assign q_sw_o            = sw_q[q_srq_i];
  assign q_dis_act_o       = dis_act_q[q_srq_i];
  assign q_dis_seq_o       = dis_seq_q[q_srq_i];

  // Every next value is a selection among values computed from registers only (the SRQ ev_srq_i is
  // s4's, registered): the event's flags come late in the cycle (tmnic_tm_commit's decision), so they
  // only steer the last multiplexers, and no adder or compare sits behind them. An event is one of: a
  // counted miss, an ADD, a removal, a spill-list append or unlink (with an ADD or a removal), a CLEAR;
  // any of them possibly with a new sw_cnt first (asserted below).
  logic [SRQ_W-1:0] es;
  assign es = ev_srq_i;

  // The phase counters first (the engine decides an ADD's enable bit from them).
  logic [15:0] hw_d, sw_d, hw_inc;
  logic        cnt_eq_hw, sw_eq_hw;
  assign hw_inc    = hw_q[es] + 16'd1;
  assign cnt_eq_hw = ev_cnt_i == hw_q[es];
  assign sw_eq_hw  = sw_q[es] == hw_q[es];
  always_comb begin
    hw_d = ev_clear_i ? 16'd0 : ev_miss_i ? hw_inc : hw_q[es];
    sw_d = ev_clear_i ? 16'd0 : ev_cnt_vld_i ? ev_cnt_i : sw_q[es];
  end
  assign en_all_o = ev_i && ev_cnt_vld_i && cnt_eq_hw;
  assign add_en_o = ev_cnt_vld_i ? cnt_eq_hw : sw_eq_hw;   // sw_cnt == hw_cnt after the sw update
  assign hw_new_o = hw_d;

  // Next values of SRQ es (only that SRQ changes).
  logic [H_W:0]     occ_d, dis_d, sp_cnt_d, spilled_d;
  logic [H_W:0]     occ_inc, occ_dec, dis_inc, dis_dec, sp_inc, sp_dec, spilled_inc, spilled_dec;
  logic [H_W:0]     spilled_clr;
  logic             dis_act_d, add_dis, rm_dis, dis_refresh, sp_nz_d;
  logic [N_CLASS-1:0][H_W:0] cls_cnt_d, cls_tot_d, cnt_inc, cnt_dec, tot_inc, tot_dec, tot_clr;
  logic [N_CLASS-1:0]        c_inc, c_dec;
  always_comb begin
    occ_inc     = occ_q[es] + 1'b1;
    occ_dec     = occ_q[es] - 1'b1;
    dis_inc     = dis_q[es] + 1'b1;
    dis_dec     = dis_q[es] - 1'b1;
    sp_inc      = sp_cnt_q[es] + 1'b1;
    sp_dec      = sp_cnt_q[es] - 1'b1;
    spilled_inc = spilled_q + 1'b1;
    spilled_dec = spilled_q - 1'b1;
    spilled_clr = spilled_q - sp_cnt_q[es];
    // A disabled ADD refreshes the threshold when no disabled entry is live, so that it stays within
    // the sequence-number window of the live entries (an enable-all never comes with it).
    dis_refresh = !dis_act_q[es] || dis_q[es] == '0;
    for (int c = 0; c < int'(N_CLASS); c++) begin
      cnt_inc[c] = cls_cnt_q[es][c] + 1'b1;
      cnt_dec[c] = cls_cnt_q[es][c] - 1'b1;
      tot_inc[c] = cls_tot_q[c] + 1'b1;
      tot_dec[c] = cls_tot_q[c] - 1'b1;
      tot_clr[c] = cls_tot_q[c] - cls_cnt_q[es][c];
    end
  end
  always_comb begin
    add_dis = ev_add_i && !add_en_o;
    rm_dis  = ev_rm_i && ev_rm_dis_i && !en_all_o;   // disabled, and not enabled by this very event
    occ_d     = ev_clear_i ? '0 : ev_add_i ? occ_inc : ev_rm_i ? occ_dec : occ_q[es];
    dis_d     = (ev_clear_i || en_all_o) ? '0 : add_dis ? dis_inc : rm_dis ? dis_dec : dis_q[es];
    dis_act_d = (ev_clear_i || en_all_o) ? 1'b0 : add_dis ? 1'b1 : dis_act_q[es];
    sp_cnt_d  = ev_clear_i ? '0 : ev_sp_add_i ? sp_inc : ev_sp_rm_i ? sp_dec : sp_cnt_q[es];
    sp_nz_d   = ev_clear_i ? 1'b0 : ev_sp_add_i ? 1'b1 : ev_sp_rm_i ? sp_cnt_q[es] != (H_W+1)'(1) :
                sp_nz_q[es];
    spilled_d = ev_clear_i ? spilled_clr : ev_sp_add_i ? spilled_inc : ev_sp_rm_i ? spilled_dec :
                spilled_q;
    for (int c = 0; c < int'(N_CLASS); c++) begin
      c_inc[c] = ev_add_i && ev_add_cls_i && int'(ev_add_cls_idx_i) == c;
      c_dec[c] = ev_rm_i && ev_rm_cls_i && int'(ev_rm_cls_idx_i) == c;
      cls_cnt_d[c] = ev_clear_i ? '0 : c_inc[c] ? cnt_inc[c] : c_dec[c] ? cnt_dec[c] : cls_cnt_q[es][c];
      cls_tot_d[c] = ev_clear_i ? tot_clr[c] : c_inc[c] ? tot_inc[c] : c_dec[c] ? tot_dec[c] :
                     cls_tot_q[c];
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int s = 0; s < int'(NUM_SRQ); s++) begin
        hw_q[s]      <= '0;
        sw_q[s]      <= '0;
        occ_q[s]     <= '0;
        dis_q[s]     <= '0;
        sp_cnt_q[s]  <= '0;
        cls_cnt_q[s] <= '0;
      end
      dis_act_q <= '0;
      sp_nz_q   <= '0;
      cls_tot_q <= '0;
      spilled_q <= '0;
    end else if (ev_i) begin
      hw_q[ev_srq_i]      <= hw_d;
      sw_q[ev_srq_i]      <= sw_d;
      occ_q[ev_srq_i]     <= occ_d;
      dis_q[ev_srq_i]     <= dis_d;
      dis_act_q[ev_srq_i] <= dis_act_d;
      sp_cnt_q[ev_srq_i]  <= sp_cnt_d;
      sp_nz_q[ev_srq_i]   <= sp_nz_d;
      cls_cnt_q[ev_srq_i] <= cls_cnt_d;
      cls_tot_q           <= cls_tot_d;
      spilled_q           <= spilled_d;
    end
  end
  // Meaningful only while the counters above say so: no reset.
  always_ff @(posedge clk_i) begin
    if (ev_i) begin
      if (add_dis && dis_refresh) dis_seq_q[ev_srq_i] <= ev_add_seq_i;
      if (ev_sp_add_i || ev_sp_rm_i) begin
        sp_head_q[ev_srq_i] <= ev_sp_head_i;
        sp_tail_q[ev_srq_i] <= ev_sp_tail_i;
      end
    end
  end

  for (genvar s = 0; s < int'(NUM_SRQ); s++) begin : g_out
    assign hw_o[s]  = hw_q[s];
    assign sw_o[s]  = sw_q[s];
    assign occ_o[s] = occ_q[s];
    assign dis_o[s] = dis_q[s];
  end
  assign spilled_o = spilled_q;
  for (genvar c = 0; c < int'(N_CLASS); c++) begin : g_free
    assign cls_free_o[c] = cls_tot_q[c] == '0;
  end

`ifndef SYNTHESIS
  // (Verilator 5.006 cannot select an unpacked array inside an assertion: plain signals here.)
  logic [H_W:0] a_occ_cur, a_dis_cur;
  logic         a_dis_act_cur;
  assign a_occ_cur     = occ_q[ev_srq_i];
  assign a_dis_cur     = dis_q[ev_srq_i];
  assign a_dis_act_cur = dis_act_q[ev_srq_i];
  logic [H_W:0] a_sp_cnt_cur;
  assign a_sp_cnt_cur  = sp_cnt_q[ev_srq_i];
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // Disabled entries stay a suffix: a threshold is only open while the counts differ.
  a_dis_needs_gap: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && !ev_clear_i && dis_act_d && sw_d == hw_d))
    else $error("tmnic_tm_srq_state: disable threshold open with sw_cnt == hw_cnt");
  a_occ: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ev_rm_i && a_occ_cur == '0)) else $error("tmnic_tm_srq_state: occupancy underflow");
  a_dis: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ev_rm_i && ev_rm_dis_i && !en_all_o && a_dis_cur == '0))
    else $error("tmnic_tm_srq_state: disabled-count underflow");
  a_rm_dis_needs_threshold: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ev_rm_i && ev_rm_dis_i && !a_dis_act_cur))
    else $error("tmnic_tm_srq_state: a disabled entry removed while no threshold is open");
  // One kind of change per event (the selections above rely on it).
  a_one_kind: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ((ev_add_i && ev_rm_i) || (ev_sp_add_i && ev_sp_rm_i) || (ev_sp_add_i && !ev_add_i) ||
               (ev_sp_rm_i && !ev_rm_i) || (ev_add_i && !add_en_o && en_all_o))))
    else $error("tmnic_tm_srq_state: an event with two kinds of change");
  a_dis_le_occ: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && dis_d > occ_d)) else $error("tmnic_tm_srq_state: more disabled than live entries");
  a_sp_nz: assert property (@(posedge clk_i) disable iff (!chk_q)
    cur_sp_nz_o == (a_sp_cnt_cur != '0)) else $error("tmnic_tm_srq_state: spill bit and count differ");
`endif
endmodule
