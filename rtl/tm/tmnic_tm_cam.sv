// Wildcard CAM of the tag-matching engine: W entries {srq, tag, mask, handle, seq, enabled} in
// flip-flops for the posted tags whose mask has no class table (or whose class buckets are full).
// Any mask: an entry matches a message when srq is equal and ((tag ^ msg_tag) & mask) == 0.
// Order: an age matrix (older_q[i][j] = entry j was inserted before entry i) instead of moving
// entries, so the three oldest hits are found in a few LUT levels (zero / one / two older hits per
// row) and an insert or a removal touches one row and one column. Entries also carry the
// engine's posting sequence number, which orders them against the class tables' candidates outside
// this block.
// Per cycle: an insert or a removal, possibly with the enabling of every entry of an SRQ; or the
// clearing of an SRQ.
module tmnic_tm_cam #(
  parameter int unsigned W     = 32,
  parameter int unsigned SRQ_W = 4,
  parameter int unsigned H_W   = 10,
  parameter int unsigned SEQ_W = 64,
  localparam int unsigned IW = (W > 1) ? $clog2(W) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Compare (stage s1, registered at adv_i) with the contents of then; evaluated only under
  // cmp1_en_i. The three oldest are selected in s2 (under cmp2_en_i, else no hit) from those hits
  // with the write of the edge between applied (a removed entry drops out, a matching insert joins).
  input  logic             adv_i,
  input  logic             cmp1_en_i,
  input  logic [SRQ_W-1:0] cmp_srq_i,
  input  logic [63:0]      cmp_tag_i,
  input  logic             cmp2_en_i,
  // The three oldest hits (valid, same SRQ, tag matches; enable bit not applied), one-hot each
  // (zero if fewer), and how many hits there are, saturated at 3: from the current ages.
  output logic [2:0][W-1:0] old_o,
  output logic [1:0]        cnt_o,

  // The sequence numbers of two one-hot (or zero) sets of entries (stage s3: the oldest hits selected
  // in the cycle before, corrected by the engine); 0 for an empty set. Evaluated only under rd_en_i.
  input  logic                  rd_en_i,
  input  logic [1:0][W-1:0]     rd_i,
  output logic [1:0][SEQ_W-1:0] rd_seq_o,

  // Writes (at most one per cycle). An insert takes the lowest free entry (free_*_o).
  input  logic             ins_i,
  input  logic [SRQ_W-1:0] ins_srq_i,
  input  logic [63:0]      ins_tag_i,
  input  logic [63:0]      ins_mask_i,
  input  logic [H_W-1:0]   ins_hdl_i,
  input  logic [SEQ_W-1:0] ins_seq_i,
  input  logic             ins_en_i,
  input  logic             rm_i,
  input  logic [IW-1:0]    rm_idx_i,
  input  logic             en_all_i,    // every entry of en_srq_i becomes enabled
  input  logic             clr_i,       // every entry of en_srq_i is removed
  input  logic [SRQ_W-1:0] en_srq_i,

  // State, for the engine's selections; the lowest free entry, one-hot and its index.
  output logic                      free_v_o,
  output logic [W-1:0]              free_oh_o,
  output logic [IW-1:0]             free_idx_o,
  output logic [W-1:0]              valid_o,
  output logic [W-1:0]              en_o,
  output logic [W-1:0][H_W-1:0]     hdl_o
);
  if (W < 1 || W > 256) begin : g_chk_w
    $fatal(1, "tmnic_tm_cam: W must be in 1..256");
  end

  typedef struct packed {  // 64-bit fields last: on 64-bit boundaries (cheaper to simulate)
    logic [SRQ_W-1:0] srq;
    logic [H_W-1:0]   hdl;
    logic [SEQ_W-1:0] seq;
    logic [63:0]      tag;
    logic [63:0]      mask;
  } ent_t;

  ent_t                ent_q [W];
  logic [W-1:0]        valid_q, en_q;
  logic [W-1:0][W-1:0] older_q, older_d;  // no reset: read only through valid entries

  // The lowest free entry as a one-hot straight from the valid bits, which the writes use as their
  // per-entry enables: no index encode in front of a decode on the insert path. The lowest zero is
  // isolated by an increment (a carry chain, not a 32-deep priority chain).
  logic [W-1:0]  free_oh;
  logic [IW-1:0] free_idx;
  always_comb begin
    free_oh  = ~valid_q & (valid_q + W'(1));
    free_idx = '0;
    for (int i = 0; i < int'(W); i++) if (free_oh[i]) free_idx |= IW'(i);  // (an OR of a one-hot)
  end
  assign free_v_o   = !(&valid_q);
  assign free_oh_o  = free_oh;
  assign free_idx_o = free_idx;

  // ---------------------------------------------------------------- s1: compare
  // The compare and the age select are one stage each (together they were the deepest path). A
  // write at the edge between is applied in s2 from registers: a removed or cleared entry is no
  // longer valid, and the entry inserted then is matched here against the inserting ADD's fields
  // (registers of s4), not read back through a multiplexer.
  logic [W-1:0] hit1, hit2_q, ins2_oh_q;
  logic         insm1, ins2_q;
  always_comb begin
    hit1  = '0;
    insm1 = 1'b0;
    if (cmp1_en_i) begin
      for (int i = 0; i < int'(W); i++)
        hit1[i] = valid_q[i] && ent_q[i].srq == cmp_srq_i &&
                  ((ent_q[i].tag ^ cmp_tag_i) & ent_q[i].mask) == 64'd0;
      insm1 = ins_srq_i == cmp_srq_i && ((ins_tag_i ^ cmp_tag_i) & ins_mask_i) == 64'd0;
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ins2_q <= 1'b0;
    else if (adv_i) ins2_q <= ins_i && insm1;
  end
  always_ff @(posedge clk_i) begin
    if (adv_i) begin
      hit2_q    <= hit1;
      ins2_oh_q <= free_oh;
    end
  end

  // ---------------------------------------------------------------- s2: the three oldest hits
  logic [W-1:0] hit;
  always_comb begin
    hit = '0;
    if (cmp2_en_i) hit = (hit2_q & valid_q) | (ins2_q ? ins2_oh_q : '0);
  end

  // Hit i is the k-th oldest (k = 0, 1, 2) if exactly k other hits are older: a zero / one / two
  // reduction tree per row (the zero / exactly-one tree of the two oldest plus an exactly-two
  // output per node), so the three are decided in parallel and none waits for another. (A 2-bit
  // saturating count per node carries the same information but mapped to ~1 K more LUT4 at 32
  // entries: 2d33df2.)
  localparam int unsigned WP = 1 << IW;  // leaves of the reduction tree
  function automatic logic [2:0] zot(logic [W-1:0] x);  // {no bit set, exactly one, exactly two}
    logic [2*WP-1:0] z, o, t;
    z = '1;
    o = '0;
    t = '0;
    for (int i = 0; i < int'(W); i++) begin
      z[WP + i] = !x[i];
      o[WP + i] = x[i];
    end
    for (int n = int'(WP) - 1; n >= 1; n--) begin
      z[n] = z[2*n] && z[2*n+1];
      o[n] = (o[2*n] && z[2*n+1]) || (z[2*n] && o[2*n+1]);
      t[n] = (t[2*n] && z[2*n+1]) || (o[2*n] && o[2*n+1]) || (z[2*n] && t[2*n+1]);
    end
    return {z[1], o[1], t[1]};
  endfunction

  always_comb begin
    logic [2:0] r;
    r     = '0;
    old_o = '0;
    cnt_o = '0;
    if (hit != '0) begin  // (idle and non-lookup cycles skip the trees in simulation)
      for (int i = 0; i < int'(W); i++) begin
        r = zot(hit & older_q[i]);
        for (int k = 0; k < 3; k++) old_o[k][i] = hit[i] && r[2-k];
      end
      r     = zot(hit);
      cnt_o = r[2] ? 2'd0 : r[1] ? 2'd1 : r[0] ? 2'd2 : 2'd3;
    end
  end

  // Sequence numbers by one-hot AND-OR (no index encode in front of a wide multiplexer).
  always_comb begin
    rd_seq_o = '0;
    if (rd_en_i) begin
      for (int k = 0; k < 2; k++)
        for (int i = 0; i < int'(W); i++) rd_seq_o[k] |= {SEQ_W{rd_i[k][i]}} & ent_q[i].seq;
    end
  end

  // ---------------------------------------------------------------- writes
  logic [W-1:0] srq_hit;
  always_comb begin
    srq_hit = '0;
    if (en_all_i || clr_i)
      for (int i = 0; i < int'(W); i++) srq_hit[i] = ent_q[i].srq == en_srq_i;
  end

  // Entry data: written only on insert, no reset.
  always_ff @(posedge clk_i) begin
    if (ins_i) begin
      for (int i = 0; i < int'(W); i++)
        if (free_oh[i])
          ent_q[i] <= '{srq: ins_srq_i, tag: ins_tag_i, mask: ins_mask_i, hdl: ins_hdl_i,
                        seq: ins_seq_i};
    end
  end

  // The new entry is younger than every valid one; nobody is younger than it yet.
  always_comb begin
    older_d = older_q;
    if (ins_i) begin
      for (int i = 0; i < int'(W); i++) begin
        older_d[i] = older_d[i] & ~free_oh;
        if (free_oh[i]) older_d[i] = valid_q;  // (its own bit: not valid yet)
      end
    end
  end
  always_ff @(posedge clk_i) if (ins_i) older_q <= older_d;

  logic [W-1:0] valid_d, en_d;
  always_comb begin
    valid_d = valid_q;
    en_d    = en_q;
    if (ins_i) begin
      valid_d = valid_d | free_oh;
      en_d    = (en_d & ~free_oh) | (ins_en_i ? free_oh : '0);
    end
    if (rm_i) valid_d[rm_idx_i] = 1'b0;
    if (clr_i) valid_d = valid_d & ~srq_hit;
    if (en_all_i) en_d = en_d | srq_hit;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      en_q    <= '0;
    end else begin
      valid_q <= valid_d;
      en_q    <= en_d;
    end
  end

  assign valid_o = valid_q;
  assign en_o    = en_q;
  for (genvar i = 0; i < int'(W); i++) begin : g_out
    assign hdl_o[i] = ent_q[i].hdl;
  end

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // An insert or a removal may come with the enabling of the SRQ (an op carrying the matching count).
  // The hits of s2 are those of s1 with at most the one write of the edge between applied.
  a_wr_adv: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ins_i || rm_i || clr_i) || adv_i || !(cmp1_en_i || cmp2_en_i))
    else $error("tmnic_tm_cam: a write while a held lookup is in s1 or s2");
  a_one_write: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ins_i && rm_i) && !(clr_i && (ins_i || rm_i || en_all_i)))
    else $error("tmnic_tm_cam: insert and removal, or a clear with another write, in one cycle");
  a_ins_free: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ins_i && !free_v_o)) else $error("tmnic_tm_cam: insert into a full CAM");
  a_rm_valid: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(rm_i && !valid_q[rm_idx_i])) else $error("tmnic_tm_cam: removal of an invalid entry");
  // The three oldest: one-hot or zero each, disjoint, as many as the count says (the age matrix is
  // a total order of the valid entries).
  a_old_consistent: assert property (@(posedge clk_i) disable iff (!chk_q)
    $onehot0(old_o[0]) && $onehot0(old_o[1]) && $onehot0(old_o[2]) &&
    (old_o[0] & old_o[1]) == '0 && (old_o[0] & old_o[2]) == '0 && (old_o[1] & old_o[2]) == '0 &&
    (old_o[0] != '0) == (cnt_o > 2'd0) && (old_o[1] != '0) == (cnt_o > 2'd1) &&
    (old_o[2] != '0) == (cnt_o > 2'd2))
    else $error("tmnic_tm_cam: three oldest hits inconsistent (age matrix not a total order)");
  a_rd_onehot: assert property (@(posedge clk_i) disable iff (!chk_q)
    !rd_en_i || ($onehot0(rd_i[0]) && $onehot0(rd_i[1])))
    else $error("tmnic_tm_cam: a sequence-number read of more than one entry");
`endif
endmodule
