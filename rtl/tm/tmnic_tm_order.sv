// MPI order among a lookup's candidates in the tag-matching engine: the head of the key's FIFO in
// each mask class, the wildcard CAM's oldest hit, the spill list's first hit. The winner is the
// oldest enabled candidate (sequence numbers compared modulo 2^SEQ_W).
//
// The 62-bit compares are made one stage early (s3, registered), for every way the commit ahead of
// the lookup (at the s3 -> s4 edge) can change the candidates, so that the decision in s4 is a
// selection among registered bits:
//   A  the candidates as seen in s3;
//   B  class c's FIFO popped by that commit: its new head is the old head's next (seq sB[c]);
//   F2 the CAM's oldest hit removed by that commit: its second oldest takes over;
//   the commit created the FIFO of class c, or put a matching entry into the CAM: that entry is
//   younger than every other candidate (it is the newest ADD), no compare needed.
// At most one of these happens (a commit pops one FIFO, or removes one CAM entry, or adds one
// entry). The spill candidate's compares are made by the engine while it scans (oS_i).
module tmnic_tm_order #(
  parameter int unsigned K     = 2,   // mask classes
  parameter int unsigned SEQ_W = 62
) (
  input  logic clk_i,

  // s3: sequence numbers, registered when adv_i.
  input  logic                  adv_i,
  input  logic [K-1:0][SEQ_W-1:0] sA_i,     // class heads
  input  logic [K-1:0][SEQ_W-1:0] sB_i,     // class heads' next entries
  input  logic [SEQ_W-1:0]      sF1_i,      // CAM's oldest and second oldest hit
  input  logic [SEQ_W-1:0]      sF2_i,
  input  logic                  dis_act_i,  // the lookup's SRQ: disable threshold
  input  logic [SEQ_W-1:0]      dis_seq_i,

  // s4: what the commit ahead changed, and the candidates now.
  input  logic [K-1:0] cv_i,       // class candidate present
  input  logic [K-1:0] pop_i,      // its FIFO was popped by the commit ahead (variant B)
  input  logic [K-1:0] new_i,      // its FIFO was created by the commit ahead
  input  logic         new_en_i,   // ...with an enabled entry
  input  logic         en_all_i,   // the commit ahead enabled every entry of the lookup's SRQ
  input  logic         camv_i,     // CAM candidate present
  input  logic         camen_i,    // ...and enabled (its bit read in s3: en_all_i applies too)
  input  logic         camrm1_i,   // the CAM's oldest hit was removed by the commit ahead
  input  logic         camnew_i,   // the CAM candidate is the commit ahead's new entry
  input  logic         spv_i,      // spill candidate (found by the scan)
  input  logic         spen_i,
  input  logic [K:0]   spold_i,    // the spill candidate is older than class c (c < K) / the CAM (K)
  output logic [K+1:0] win_o       // one-hot (or zero): classes 0..K-1, CAM K, spill K+1
);
  if (K < 1 || K > 4) begin : g_chk_k
    $fatal(1, "tmnic_tm_order: K must be in 1..4");
  end

  // ---------------------------------------------------------------- s3: compares, registered
  logic [K-1:0]        enA_q, enB_q, enA_d, enB_d;
  logic [K-1:0][K-1:0] oAA_q, oBA_q, oAA_d, oBA_d;  // [c][d]: class c (A or B) older than class d (A)
  logic [K-1:0]        oAF1_q, oAF2_q, oBF1_q, oAF1_d, oAF2_d, oBF1_d;

  // a older than b modulo 2^SEQ_W: the sign of a - b. Written out, not as a function: Verilator
  // 5.006 leaves an unused result variable of an inlined call whose use folds to a constant (the
  // c < d terms below), which -Werror rejects depending on the netlist's order.
  always_comb begin
    logic [SEQ_W-1:0] t;
    for (int c = 0; c < int'(K); c++) begin
      t = sA_i[c] - dis_seq_i; enA_d[c]  = !dis_act_i || t[SEQ_W-1];
      t = sB_i[c] - dis_seq_i; enB_d[c]  = !dis_act_i || t[SEQ_W-1];
      t = sA_i[c] - sF1_i;     oAF1_d[c] = t[SEQ_W-1];
      t = sA_i[c] - sF2_i;     oAF2_d[c] = t[SEQ_W-1];
      t = sB_i[c] - sF1_i;     oBF1_d[c] = t[SEQ_W-1];
      for (int d = 0; d < int'(K); d++) begin
        t = sA_i[c] - sA_i[d]; oAA_d[c][d] = (c < d) && t[SEQ_W-1];
        t = sB_i[c] - sA_i[d]; oBA_d[c][d] = (c != d) && t[SEQ_W-1];
      end
    end
  end
  always_ff @(posedge clk_i) begin
    if (adv_i) begin
      enA_q  <= enA_d;
      enB_q  <= enB_d;
      oAA_q  <= oAA_d;
      oBA_q  <= oBA_d;
      oAF1_q <= oAF1_d;
      oAF2_q <= oAF2_d;
      oBF1_q <= oBF1_d;
    end
  end

  // ---------------------------------------------------------------- s4: selection
  logic [K+1:0]               en;
  logic [K+1:0][K+1:0]        old;  // [i][j]: candidate i older than candidate j
  always_comb begin
    en  = '0;
    old = '0;
    for (int c = 0; c < int'(K); c++)
      en[c] = cv_i[c] && (en_all_i || (pop_i[c] ? enB_q[c] : new_i[c] ? new_en_i : enA_q[c]));
    en[K]   = camv_i && (en_all_i || camen_i);
    en[K+1] = spv_i && spen_i;
    for (int c = 0; c < int'(K); c++) begin
      for (int d = 0; d < int'(K); d++) begin
        if (c != d) begin
          if (new_i[c])      old[c][d] = 1'b0;
          else if (new_i[d]) old[c][d] = 1'b1;
          else if (pop_i[c]) old[c][d] = oBA_q[c][d];
          else if (pop_i[d]) old[c][d] = !oBA_q[d][c];
          else               old[c][d] = (c < d) ? oAA_q[c][d] : !oAA_q[d][c];
        end
      end
      // class c against the CAM candidate
      if (camnew_i)      old[c][K] = 1'b1;
      else if (new_i[c]) old[c][K] = 1'b0;
      else if (camrm1_i) old[c][K] = oAF2_q[c];
      else if (pop_i[c]) old[c][K] = oBF1_q[c];
      else               old[c][K] = oAF1_q[c];
      old[K][c] = !old[c][K];
      // the spill candidate
      old[K+1][c] = spold_i[c];
      old[c][K+1] = !spold_i[c];
    end
    old[K+1][K] = spold_i[K];
    old[K][K+1] = !spold_i[K];
  end

  always_comb begin
    for (int i = 0; i < int'(K) + 2; i++) begin
      win_o[i] = en[i];
      for (int j = 0; j < int'(K) + 2; j++)
        if (j != i && en[j] && !old[i][j]) win_o[i] = 1'b0;
    end
  end

`ifndef SYNTHESIS
  a_win_onehot: assert property (@(posedge clk_i) $onehot0(win_o))
    else $error("tmnic_tm_order: two winners (inconsistent order bits)");
  a_one_change: assert property (@(posedge clk_i)
    $onehot0({|pop_i, |new_i, camrm1_i, camnew_i}))
    else $error("tmnic_tm_order: the commit ahead changed the candidates in two ways");
`endif
endmodule
