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
module tmnic_tm_srq_state #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned N_CLASS = 2,
  parameter int unsigned H_W     = 10,
  parameter int unsigned SEQ_W   = 64,
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
  input  logic             ev_add_i,      // an entry added (enabled iff en_o... see ev_add_en_i)
  input  logic             ev_add_en_i,
  input  logic [SEQ_W-1:0] ev_add_seq_i,
  input  logic             ev_add_cls_i,  // ...into class ev_add_cls_idx_i
  input  logic [CLS_W-1:0] ev_add_cls_idx_i,
  input  logic             ev_rm_i,       // an entry removed
  input  logic [SEQ_W-1:0] ev_rm_seq_i,   // ...with this sequence number
  input  logic             ev_rm_cls_i,   // ...from class ev_rm_cls_idx_i
  input  logic [CLS_W-1:0] ev_rm_cls_idx_i,
  input  logic             ev_sp_we_i,    // new spill-list head, tail and length
  input  logic [H_W-1:0]   ev_sp_head_i,
  input  logic [H_W-1:0]   ev_sp_tail_i,
  input  logic [H_W:0]     ev_sp_cnt_i,

  output logic             en_all_o,      // this event enables every entry of ev_srq_i
  output logic [15:0]      sw_new_o,      // sw_cnt / hw_cnt of ev_srq_i after the event
  output logic [15:0]      hw_new_o,

  output logic [NUM_SRQ-1:0][15:0]      hw_o,
  output logic [NUM_SRQ-1:0][15:0]      sw_o,
  output logic [NUM_SRQ-1:0][H_W:0]     occ_o,
  output logic [NUM_SRQ-1:0][H_W:0]     dis_o,
  output logic [NUM_SRQ-1:0]            dis_act_o,
  output logic [NUM_SRQ-1:0][SEQ_W-1:0] dis_seq_o,
  output logic [NUM_SRQ-1:0][H_W-1:0]   sp_head_o,
  output logic [NUM_SRQ-1:0][H_W-1:0]   sp_tail_o,
  output logic [NUM_SRQ-1:0][H_W:0]     sp_cnt_o,
  output logic [N_CLASS-1:0]            cls_free_o
);
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_srq
    $fatal(1, "tmnic_tm_srq_state: NUM_SRQ must be a power of two >= 2");
  end

  logic [NUM_SRQ-1:0][15:0]      hw_q, sw_q;
  logic [NUM_SRQ-1:0][H_W:0]     occ_q, dis_q, sp_cnt_q;
  logic [NUM_SRQ-1:0]            dis_act_q;
  logic [NUM_SRQ-1:0][SEQ_W-1:0] dis_seq_q;
  logic [NUM_SRQ-1:0][H_W-1:0]   sp_head_q, sp_tail_q;
  logic [NUM_SRQ-1:0][N_CLASS-1:0][H_W:0] cls_cnt_q;  // live entries per SRQ and class
  logic [N_CLASS-1:0][H_W:0]     cls_tot_q;           // ... summed over the SRQs

  // a was posted before b (sequence numbers compared modulo 2^SEQ_W: live entries span less than
  // 2^(SEQ_W-1) ADDs, docs/tag-matching-engine.md).
  function automatic logic seq_older(logic [SEQ_W-1:0] a, logic [SEQ_W-1:0] b);
    logic [SEQ_W-1:0] d;
    d = a - b;
    return d[SEQ_W-1];
  endfunction

  // Next values of SRQ ev_srq_i (only that SRQ changes).
  logic [15:0]      hw_d, sw_d;
  logic [H_W:0]     occ_d, dis_d, sp_cnt_d;
  logic             dis_act_d;
  logic [SEQ_W-1:0] dis_seq_d;
  logic [H_W-1:0]   sp_head_d, sp_tail_d;
  logic [N_CLASS-1:0][H_W:0] cls_cnt_d, cls_tot_d;

  // The phase counters first (the engine decides an ADD's enable bit from them).
  always_comb begin
    hw_d     = hw_q[ev_srq_i];
    sw_d     = sw_q[ev_srq_i];
    en_all_o = 1'b0;
    if (ev_i) begin
      if (ev_cnt_vld_i) begin
        sw_d = ev_cnt_i;
        en_all_o = sw_d == hw_d;
      end
      if (ev_miss_i) hw_d = hw_d + 16'd1;
      if (ev_clear_i) begin
        hw_d = '0;
        sw_d = '0;
      end
    end
  end

  always_comb begin
    logic [SRQ_W-1:0] s;
    s         = ev_srq_i;
    occ_d     = occ_q[s];
    dis_d     = dis_q[s];
    dis_act_d = dis_act_q[s];
    dis_seq_d = dis_seq_q[s];
    sp_head_d = sp_head_q[s];
    sp_tail_d = sp_tail_q[s];
    sp_cnt_d  = sp_cnt_q[s];
    cls_cnt_d = cls_cnt_q[s];
    cls_tot_d = cls_tot_q;
    if (ev_i) begin
      if (en_all_o) begin
        dis_d = '0;
        dis_act_d = 1'b0;
      end
      if (ev_rm_i) begin
        occ_d = occ_d - 1'b1;
        // Disabled: posted at or after the threshold, and not enabled by this very event.
        if (dis_act_d && !seq_older(ev_rm_seq_i, dis_seq_d)) dis_d = dis_d - 1'b1;
        if (ev_rm_cls_i) begin
          cls_cnt_d[ev_rm_cls_idx_i] = cls_cnt_d[ev_rm_cls_idx_i] - 1'b1;
          cls_tot_d[ev_rm_cls_idx_i] = cls_tot_d[ev_rm_cls_idx_i] - 1'b1;
        end
      end
      if (ev_add_i) begin
        occ_d = occ_d + 1'b1;
        if (!ev_add_en_i) begin
          // The threshold is refreshed when no disabled entry is live, so that it stays within the
          // sequence-number window of the live entries.
          if (!dis_act_d || dis_d == '0) dis_seq_d = ev_add_seq_i;
          dis_act_d = 1'b1;
          dis_d = dis_d + 1'b1;
        end
        if (ev_add_cls_i) begin
          cls_cnt_d[ev_add_cls_idx_i] = cls_cnt_d[ev_add_cls_idx_i] + 1'b1;
          cls_tot_d[ev_add_cls_idx_i] = cls_tot_d[ev_add_cls_idx_i] + 1'b1;
        end
      end
      if (ev_sp_we_i) begin
        sp_head_d = ev_sp_head_i;
        sp_tail_d = ev_sp_tail_i;
        sp_cnt_d  = ev_sp_cnt_i;
      end
      if (ev_clear_i) begin
        occ_d = '0;
        dis_d = '0;
        dis_act_d = 1'b0;
        sp_cnt_d = '0;
        for (int c = 0; c < int'(N_CLASS); c++) cls_tot_d[c] = cls_tot_q[c] - cls_cnt_q[s][c];
        cls_cnt_d = '0;
      end
    end
  end
  assign sw_new_o = sw_d;
  assign hw_new_o = hw_d;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hw_q      <= '0;
      sw_q      <= '0;
      occ_q     <= '0;
      dis_q     <= '0;
      dis_act_q <= '0;
      sp_cnt_q  <= '0;
      cls_cnt_q <= '0;
      cls_tot_q <= '0;
    end else if (ev_i) begin
      hw_q[ev_srq_i]      <= hw_d;
      sw_q[ev_srq_i]      <= sw_d;
      occ_q[ev_srq_i]     <= occ_d;
      dis_q[ev_srq_i]     <= dis_d;
      dis_act_q[ev_srq_i] <= dis_act_d;
      sp_cnt_q[ev_srq_i]  <= sp_cnt_d;
      cls_cnt_q[ev_srq_i] <= cls_cnt_d;
      cls_tot_q           <= cls_tot_d;
    end
  end
  // Meaningful only while the counters above say so: no reset.
  always_ff @(posedge clk_i) begin
    if (ev_i) begin
      dis_seq_q[ev_srq_i] <= dis_seq_d;
      sp_head_q[ev_srq_i] <= sp_head_d;
      sp_tail_q[ev_srq_i] <= sp_tail_d;
    end
  end

  assign hw_o      = hw_q;
  assign sw_o      = sw_q;
  assign occ_o     = occ_q;
  assign dis_o     = dis_q;
  assign dis_act_o = dis_act_q;
  assign dis_seq_o = dis_seq_q;
  assign sp_head_o = sp_head_q;
  assign sp_tail_o = sp_tail_q;
  assign sp_cnt_o  = sp_cnt_q;
  always_comb for (int c = 0; c < int'(N_CLASS); c++) cls_free_o[c] = cls_tot_q[c] == '0;

`ifndef SYNTHESIS
  logic chk_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_q <= 1'b0;
    else         chk_q <= 1'b1;
  end
  // Disabled entries stay a suffix: a threshold is only open while the counts differ.
  a_dis_needs_gap: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && !ev_clear_i && dis_act_d && sw_d == hw_d))
    else $error("tmnic_tm_srq_state: disable threshold open with sw_cnt == hw_cnt");
  a_occ: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ev_rm_i && occ_q[ev_srq_i] == '0)) else $error("tmnic_tm_srq_state: occupancy underflow");
  a_dis: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && ev_rm_i && dis_act_q[ev_srq_i] && !en_all_o && dis_q[ev_srq_i] == '0 &&
      !seq_older(ev_rm_seq_i, dis_seq_q[ev_srq_i])))
    else $error("tmnic_tm_srq_state: disabled-count underflow");
  a_dis_le_occ: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ev_i && dis_d > occ_d)) else $error("tmnic_tm_srq_state: more disabled than live entries");
`endif
endmodule
