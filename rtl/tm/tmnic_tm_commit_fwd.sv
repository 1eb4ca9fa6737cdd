// The last commit of the tag-matching engine, applied to the younger requests (stages s2..s4 of
// tmnic_tm_engine), and the class / CAM candidates those stages carry.
//
// Younger requests are never patched by the commit of the same cycle: that would put the whole
// decision (tmnic_tm_commit) in front of every stage register. Instead the commit is recorded at its
// clock edge: the slot words it wrote (including a relocated FIFO), the handle whose live bit it
// wrote, the CAM entry it removed or inserted, its per-SRQ event, and, compared from registers only,
// whether each request moving on at that edge has the same key, bucket, SRQ or matching CAM entry.
// In the next cycle every stage applies that record to what it carries: s2 to the slot words it read
// (the RAM read coincided with the write; the RAMs have no read-first logic), s3 to its tuples, free
// ways and the CAM's three oldest hits, s4 to its tuples, the head links and the blocked bit, and it tells the order
// selection (tmnic_tm_order) what changed among the candidates. Applying the record is idempotent,
// so it may stay while s4 holds.
//
// The stage registers of the candidates (class tuples, free ways, live bit, CAM oldest hits,
// blocked variants) live here too: each is loaded from the corrected view of the stage before it.
module tmnic_tm_commit_fwd import tmnic_tm_pkg::*; #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned K       = 2,     // mask classes
  parameter int unsigned D       = 4,     // ways per class
  parameter int unsigned LB      = 9,     // log2 buckets per way
  parameter int unsigned H_W     = 10,    // handle bits
  parameter int unsigned CAM_W   = 32,
  parameter int unsigned SEQ_W   = 62,
  parameter int unsigned GEN_W   = 2,
  // tmnic_tm_engine's types (tmnic_tm_pkg: the defaults are those at its default parameters).
  parameter type req_t  = req_dflt_t,
  parameter type slot_t = slot_dflt_t,
  parameter type link_t = link_dflt_t,
  parameter type live_t = live_dflt_t,
  parameter type tup_t  = tup_dflt_t,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned R_W   = SRQ_W + 64 - LB,
  localparam int unsigned CLS_W = (K > 1) ? $clog2(K) : 1,
  localparam int unsigned WAY_W = (D > 1) ? $clog2(D) : 1,
  localparam int unsigned CIW   = (CAM_W > 1) ? $clog2(CAM_W) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic adv_i,   // every stage moves one step (no s4 hold): the commit is recorded

  // The requests in s1..s4: keys (R per class) and buckets (per class and way).
  input  logic [K-1:0][D-1:0][LB-1:0] idx1_i,
  input  logic [K-1:0][R_W-1:0]       kr1_i,
  input  logic                        v2_i,
  input  logic                        v3_i,
  input  req_t                        r2_i,
  input  req_t                        r3_i,
  input  req_t                        r4_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx2_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx3_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx4_i,
  input  logic [K-1:0][R_W-1:0]       kr2_i,
  input  logic [K-1:0][R_W-1:0]       kr3_i,
  input  logic [K-1:0][R_W-1:0]       kr4_i,
  input  logic [NUM_SRQ-1:0][GEN_W-1:0] gen_i,
  // s2: the slots of its buckets and its handle's live record (tmnic_tm_tables), its three oldest
  // CAM hits (one-hot each) and their number saturated at 3 (tmnic_tm_cam).
  input  slot_t [K-1:0][D-1:0]        sl_rdata_i,
  input  live_t                       lv_rdata_i,
  input  logic [2:0][CAM_W-1:0]       cam_old_i,
  input  logic [1:0]                  cam_cnt_i,
  // s3: the sequence numbers of cam_rd_o (tmnic_tm_cam), s3's SRQ counters.
  input  logic [1:0][SEQ_W-1:0]       cam_seq_i,
  input  logic [CAM_W-1:0]            cam_en_i,    // the CAM entries' enabled bits (read in s3)
  input  logic [CAM_W-1:0][H_W-1:0]   cam_hdl_i,   // ...and handles
  input  logic [15:0]                 q_hw_i,
  input  logic [15:0]                 q_sw_i,
  // s4: the class heads' links (copies 0..K-1) and the chase copy (K); s4 holds.
  input  link_t [K:0]                 lk_rdata_i,
  input  logic                        v4_i,
  input  logic                        hold_i,

  // The commit of this cycle (tmnic_tm_commit, tmnic_tm_tables).
  input  logic                        cw_we_i,     // slot write
  input  logic [CLS_W-1:0]            cw_cls_i,
  input  logic [K-1:0][WAY_W-1:0]     cw_way_i,   // per class (cw_cls_i's is written)
  input  slot_t [K-1:0]               cw_data_i,   // the commit's word per class (cw_cls_i's written)
  input  logic                        cw_pop_i,    // ...popping the FIFO
  input  logic                        cw_new_i,    // ...creating it
  input  logic                        cw_lval_i,   // ...with the head link cw_link_i
  input  link_t                       cw_link_i,
  input  logic                        cw2_we_i,    // the relocated occupant's slot write
  input  logic [WAY_W-1:0]            mv_from_i,   // ...from way mv_from_i to mv_way_i, bucket mv_idx_i
  input  logic [WAY_W-1:0]            mv_way_i,
  input  logic [LB-1:0]               mv_idx_i,
  input  slot_t                       mv_slot_i,
  input  logic                        cl_we_i,     // live bit of cl_hdl_i := cl_live_i
  input  logic [H_W-1:0]              cl_hdl_i,
  input  logic                        cl_live_i,
  input  logic                        cam_rm_i,
  input  logic [CIW-1:0]              cam_rm_idx_i,
  input  logic                        cam_ins_i,
  input  logic [CIW-1:0]              cam_ins_idx_i,
  input  logic [CAM_W-1:0]            cam_ins_oh_i,    // ...the same entry, one-hot
  input  logic [SEQ_W-1:0]            ins_seq_i,   // the inserted entry's sequence number
  input  logic                        ins_en_i,    // ...and whether it is enabled
  input  logic                        ev_i,        // per-SRQ event of s4's SRQ
  input  logic                        ev_miss_i,
  input  logic                        ev_cnt_vld_i,
  input  logic                        ev_en_all_i, // ...enabling all its entries

  // s3, corrected: its class tuples (order compares, link reads), its CAM candidates (the oldest
  // and second oldest hit, one-hot, whose sequence numbers the CAM reads: cam_seq_i).
  output tup_t [K-1:0]                t3_o,
  output logic                        cam_rd_en_o,
  output logic [1:0][CAM_W-1:0]       cam_rd_o,
  // s4, corrected.
  output tup_t [K-1:0]                t4_o,
  output logic [D-1:0]                fr4_o,
  output logic                        lv4_o,
  output logic                        ck_may4_o,   // an ADD may have no way: from registers only
  output link_t [K-1:0]               lnk4_o,      // each class head's link
  output logic                        blocked4_o,
  output logic                        c4v_o,       // the CAM's oldest hit
  output logic [CIW-1:0]              c4i_o,
  output logic [SEQ_W-1:0]            c4s_o,
  output logic                        c4en_o,      // ...enabled (before an enable-all by the last commit)
  output logic [H_W-1:0]              c4h_o,       // ...its handle
  // ...and what the last commit changed among its candidates (tmnic_tm_order).
  output logic [K-1:0]                pop4_o,
  output logic [K-1:0]                new4_o,
  output logic                        new_en4_o,
  output logic                        en_all4_o,
  output logic                        camrm1_o,
  output logic                        camnew_o
);
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0 || K < 1 || D < 1 || (D & (D - 1)) != 0 ||
      LB < 1 || H_W < 1 || CAM_W < 1 || SEQ_W < 2 || GEN_W < 1) begin : g_chk_geom
    $fatal(1, "tmnic_tm_commit_fwd: geometry out of range (tmnic_tm_engine checks the same, tighter)");
  end
  if ($bits(req_t) != $bits(rkind_e) + SRQ_W + H_W + 1 + 16 + 1 + 1 + CLS_W + 128 ||
      $bits(slot_t) != 1 + GEN_W + R_W + 2 * H_W + SEQ_W || $bits(link_t) != H_W + SEQ_W ||
      $bits(live_t) != 1 + GEN_W + SRQ_W + $bits(loc_e) + CLS_W + CIW ||
      $bits(tup_t) != 1 + WAY_W + 2 * H_W + SEQ_W) begin : g_chk_types
    $fatal(1, "tmnic_tm_commit_fwd: a type parameter does not match the widths of the value parameters");
  end

  typedef enum logic [1:0] {LS_RAM, LS_CHASE, LS_VAL} lsrc_e;  // where a head's link comes from

  // Stage registers (candidates).
  tup_t [K-1:0]            t3_q, t4_q;      // class tuples (s3, s4)
  logic [D-1:0]            fr3_q, fr4_q;    // free ways of the ADD's class
  logic                    lv3_q, lv4_q;    // ADD: handle live
  logic [2:0][CAM_W-1:0]   co3_q;           // CAM: the three oldest hits, one-hot (s3)
  logic [1:0]              cn3_q;           // ...how many hits (saturated at 3)
  logic                    c41v_q, c42v_q;  // CAM oldest and second oldest hit (s4)
  logic [CIW-1:0]          c41i_q, c42i_q;
  logic [SEQ_W-1:0]        c41s_q, c42s_q;  // ...their sequence numbers
  logic [H_W-1:0]          c41h_q, c42h_q;  // ...their handles (read in s3 like the enabled bits)
  logic                    c41en_q, c42en_q; // ...their enabled bits: read in s3, where the one-hot
                                             // selections are (only an enable-all, which the order
                                             // applies, or an insert can change them before s4)

  // ---------------------------------------------------------------- the record (h*_q)
  // The last commit's writes: its slot word and a relocated occupant's (at the edge where s1's slot
  // read happens), the live bit it wrote; what it did to the FIFO it wrote; the CAM entry it removed
  // or inserted; its per-SRQ event; and how the requests then in s2 and s3 relate to it.
  logic             hw_we_q, hw2_we_q, hl_we_q, hl_live_q;
  logic [CLS_W-1:0] hw_cls_q;
  logic [K-1:0][WAY_W-1:0] hw_way_q;   // per class, like the words: the written one is hw_cls_q's
  logic [WAY_W-1:0] hw_way, hw2_way_q;
  slot_t [K-1:0]    hw_data_q;   // per class: the written one is hw_cls_q's (no mux on the record)
  slot_t            hw2_data_q;
  logic [H_W-1:0]   hl_hdl_q;
  logic             hv_pop_q, hv_new_q, hv_lval_q;   // the slot write popped / created / linked
  link_t            hlink_q;
  logic             hcrm_q, hcins_q;                 // CAM removal / insert
  logic [CIW-1:0]   hcrm_idx_q, hcins_idx_q;
  logic [CAM_W-1:0] hcins_oh_q;                      // ...the inserted entry, one-hot
  logic [SEQ_W-1:0] hseq_q;                          // sequence number of the inserted entry
  logic             hen_all_q, hmiss_q, hcnt_q, hnew_en_q;  // its per-SRQ event
  logic [K-1:0]     eqk3_q, eqk4_q;   // the s3 / s4 request's key, per class, is the committer's
  logic [D-1:0]     eqi3_q, eqi4_q;   // ...its bucket per way, in its own class
  logic             eqo3_q, eqo4_q;   // ...its key is the relocated occupant's (same class)
  logic             eqf3_q, eqf4_q;   // ...its bucket in the occupant's new way is that bucket
  logic             insm3_q, insm4_q; // ...it is a lookup that the inserted CAM entry matches
  logic             eqs4_q;           // the s4 request's SRQ is the committer's

  // ---------------------------------------------------------------- s2: slot compare
  // The record's slot words replace the RAM's where s1 had the same bucket as the commit (a write to
  // way w of class c is always at idx4[c][w]; compared in s1 from registers), and whether they hold
  // the key was compared in s1 too: only the RAM words' compares are made here.
  logic [K-1:0][D-1:0] eqb2_q;  // s2's bucket in (c, w) is the one the last commit wrote there
  logic [K-1:0]        eqm2_q;  // ...in class c, the relocated occupant's new bucket
  logic [K-1:0]        ekr2_q;  // s2's key in class c is the committer's
  logic [K-1:0]        ekm2_q;  // ...is the relocated occupant's
  tup_t [K-1:0]   t2;
  logic [K-1:0][D-1:0] mw2;  // the ways whose slot holds s2's key
  logic [D-1:0]   fr2;
  logic           lv2;
  always_comb begin
    slot_t s;
    logic  m, f, sh, sh2;
    tup_t  tw;
    s   = '0;
    {m, f, sh, sh2} = '0;
    tw  = '0;
    t2  = '0;
    mw2 = '0;
    fr2 = '0;
    lv2 = 1'b0;
    if (v2_i) begin
      for (int c = 0; c < int'(K); c++) begin
        for (int w = 0; w < int'(D); w++) begin
          sh  = hw_we_q && int'(hw_cls_q) == c && int'(hw_way_q[c]) == w && eqb2_q[c][w];
          sh2 = hw2_we_q && int'(hw_cls_q) == c && int'(hw2_way_q) == w && eqm2_q[c];
          s = sl_rdata_i[c][w];
          m = s.v && s.gen == gen_i[r2_i.srq] && s.kr == kr2_i[c];
          f = !s.v || s.gen != gen_i[s.kr[R_W-1 -: SRQ_W]];
          if (sh) begin
            s = hw_data_q[c];
            m = hw_data_q[c].v && hw_data_q[c].gen == gen_i[r2_i.srq] && ekr2_q[c];
            f = !hw_data_q[c].v || hw_data_q[c].gen != gen_i[hw_data_q[c].kr[R_W-1 -: SRQ_W]];
          end
          if (sh2) begin
            s = hw2_data_q;
            m = hw2_data_q.v && hw2_data_q.gen == gen_i[r2_i.srq] && ekm2_q[c];
            f = !hw2_data_q.v || hw2_data_q.gen != gen_i[hw2_data_q.kr[R_W-1 -: SRQ_W]];
          end
          // At most one way holds the key (asserted below): an AND-OR, not a priority chain.
          tw = '{v: 1'b1, way: WAY_W'(w), h1: s.h1, s1: s.s1, tail: s.tail};
          if (m) t2[c] = t2[c] | tw;
          mw2[c][w] = m;
          if (int'(r2_i.cls) == c) fr2[w] = f;
        end
      end
      lv2 = (hl_we_q && hl_hdl_q == r2_i.hdl) ?
            hl_live_q : lv_rdata_i.live && lv_rdata_i.gen == gen_i[lv_rdata_i.srq];
    end
  end

  // ---------------------------------------------------------------- compares with the committer
  // Compares between the committing request and the younger ones (registers only), registered at
  // the edge with the requests they describe.
  logic [K-1:0]   eqk2, eqk3;
  logic [D-1:0]   eqi2, eqi3;
  logic           eqo2, eqo3, eqf2, eqf3, insm2, insm3;
  logic [K-1:0][D-1:0] eqb1;
  logic [K-1:0]        eqm1, ekr1, ekm1;
  always_comb begin
    for (int c = 0; c < int'(K); c++) begin
      for (int w = 0; w < int'(D); w++) eqb1[c][w] = idx1_i[c][w] == idx4_i[c][w];
      eqm1[c] = idx1_i[c][mv_way_i] == mv_idx_i;
      ekr1[c] = kr1_i[c] == kr4_i[c];
      ekm1[c] = kr1_i[c] == mv_slot_i.kr;
      eqk2[c] = kr2_i[c] == kr4_i[c] && idx2_i[c][0] == idx4_i[c][0];
      eqk3[c] = kr3_i[c] == kr4_i[c] && idx3_i[c][0] == idx4_i[c][0];
    end
    for (int w = 0; w < int'(D); w++) begin
      eqi2[w] = idx2_i[r2_i.cls][w] == idx4_i[r2_i.cls][w];
      eqi3[w] = idx3_i[r3_i.cls][w] == idx4_i[r3_i.cls][w];
    end
    // The cuckoo move (slow path, s4 holding): the occupant's key and its new bucket.
    eqo2 = kr2_i[r4_i.cls] == mv_slot_i.kr &&
           idx2_i[r4_i.cls][mv_from_i] == idx4_i[r4_i.cls][mv_from_i];
    eqo3 = kr3_i[r4_i.cls] == mv_slot_i.kr &&
           idx3_i[r4_i.cls][mv_from_i] == idx4_i[r4_i.cls][mv_from_i];
    eqf2 = r2_i.cls == r4_i.cls && idx2_i[r4_i.cls][mv_way_i] == mv_idx_i;
    eqf3 = r3_i.cls == r4_i.cls && idx3_i[r4_i.cls][mv_way_i] == mv_idx_i;
    insm2 = r2_i.kind == RK_LK && r4_i.srq == r2_i.srq &&
            ((r4_i.tag ^ r2_i.tag) & r4_i.mask) == 64'd0;
    insm3 = r3_i.kind == RK_LK && r4_i.srq == r3_i.srq &&
            ((r4_i.tag ^ r3_i.tag) & r4_i.mask) == 64'd0;
  end

  // The tuples the last commit wrote (its slot, and a relocated occupant's).
  tup_t [K-1:0] hw_tup;
  tup_t         hw2_tup;
  logic         hw_v;   // the written word's valid bit
  for (genvar c = 0; c < int'(K); c++) begin : g_hw_tup
    assign hw_tup[c] = '{v: hw_data_q[c].v, way: hw_way_q[c], h1: hw_data_q[c].h1, s1: hw_data_q[c].s1,
                         tail: hw_data_q[c].tail};
  end
  assign hw_v   = hw_data_q[hw_cls_q].v;
  assign hw_way = hw_way_q[hw_cls_q];
  assign hw2_tup = '{v: hw2_data_q.v, way: hw2_way_q, h1: hw2_data_q.h1, s1: hw2_data_q.s1,
                     tail: hw2_data_q.tail};

  // ---------------------------------------------------------------- s3: the last commit applied
  logic [D-1:0]   fr3c;
  logic           lv3c;
  always_comb begin
    t3_o = t3_q;
    fr3c = fr3_q;
    lv3c = lv3_q;
    for (int c = 0; c < int'(K); c++) begin
      if (hw_we_q && int'(hw_cls_q) == c && eqk3_q[c]) t3_o[c] = hw_tup[c];
      if (hw2_we_q && int'(hw_cls_q) == c && eqo3_q) t3_o[c] = hw2_tup;
    end
    if (hw_we_q && hw_cls_q == r3_i.cls && eqi3_q[hw_way]) fr3c[hw_way] = !hw_v;
    if (hw2_we_q && eqf3_q) fr3c[hw2_way_q] = 1'b0;
    if (hl_we_q && hl_hdl_q == r3_i.hdl) lv3c = hl_live_q;
  end

  // ---------------------------------------------------------------- s3: the CAM candidates
  // The hits were compared and their three oldest selected in s2 (tmnic_tm_cam), with the CAM as it
  // was then; the last commit is applied here to the one-hot selections, before their sequence
  // numbers are read (one read per candidate, not per hit): a removed entry among the two oldest
  // lets the younger ones move up (the third is there for this), an inserted matching entry is
  // younger than every hit (it takes the first free place; a commit inserts or removes, not both).
  // The two oldest go on to s4, whose commit can again remove the oldest (the second takes over):
  // two later commits corrected with three hits.
  function automatic logic [CIW-1:0] index_of(logic [CAM_W-1:0] onehot);
    logic [CIW-1:0] r;
    r = '0;
    for (int i = 0; i < int'(CAM_W); i++) if (onehot[i]) r |= CIW'(i);
    return r;
  endfunction
  logic [1:0]          rm3;    // the k-th oldest hit was removed by the last commit
  logic                ins3;   // the last commit inserted an entry that matches
  logic [1:0]          c3v;    // the candidates (cam_seq_i's companions, to s4)
  logic [1:0][CIW-1:0] c3i;
  logic [1:0]          c3n;    // ...the k-th is the inserted entry
  always_comb begin
    logic [2:0] cv;
    cv       = '0;
    rm3      = '0;
    ins3     = 1'b0;
    c3n      = '0;
    cam_rd_o = '0;
    c3v      = '0;
    c3i      = '0;
    if (v3_i) begin  // (the wide selects evaluated only for a request in s3, in simulation)
      for (int k = 0; k < 3; k++) cv[k] = cn3_q > 2'(k);
      for (int k = 0; k < 2; k++) rm3[k] = hcrm_q && co3_q[k][hcrm_idx_q];
      ins3   = hcins_q && insm3_q;
      c3n[0] = ins3 && !cv[0];
      c3n[1] = ins3 && cv[0] && !cv[1];
      // (the inserted entry's sequence number is read from the CAM too: written at that edge)
      cam_rd_o[0] = rm3[0] ? co3_q[1] : co3_q[0] | (c3n[0] ? hcins_oh_q : '0);
      cam_rd_o[1] = (rm3[0] || rm3[1]) ? co3_q[2] : co3_q[1] | (c3n[1] ? hcins_oh_q : '0);
      c3v[0] = rm3[0] ? cv[1] : cv[0] || c3n[0];
      c3v[1] = (rm3[0] || rm3[1]) ? cv[2] : cv[1] || c3n[1];
      for (int k = 0; k < 2; k++) c3i[k] = index_of(cam_rd_o[k]);
    end
  end
  assign cam_rd_en_o = v3_i;
  // The two candidates' handles, one-hot reads like their sequence numbers.
  logic [1:0][H_W-1:0] c3h;
  always_comb begin
    c3h = '0;
    if (v3_i) begin
      for (int k = 0; k < 2; k++)
        for (int i = 0; i < int'(CAM_W); i++) if (cam_rd_o[k][i]) c3h[k] |= cam_hdl_i[i];
    end
  end

  // ---------------------------------------------------------------- s4: the last commit applied
  // What it did to the request's candidates is also told to the order selection (tmnic_tm_order),
  // whose compares were made in s3 without it: a popped FIFO (the head's next takes over), a new
  // FIFO or CAM entry (younger than everything), the CAM's oldest hit removed (the second takes over).
  lsrc_e [K-1:0]  ls4;   // where each class head's link comes from
  always_comb begin
    t4_o  = t4_q;
    fr4_o = fr4_q;
    lv4_o = lv4_q;
    ls4   = {K{LS_RAM}};
    pop4_o = '0;
    new4_o = '0;
    for (int c = 0; c < int'(K); c++) begin
      if (hw_we_q && int'(hw_cls_q) == c && eqk4_q[c]) begin
        t4_o[c]   = hw_tup[c];
        pop4_o[c] = hv_pop_q;
        new4_o[c] = hv_new_q;
        if (hv_pop_q) ls4[c] = LS_CHASE;
        else if (hv_lval_q) ls4[c] = LS_VAL;
      end
      if (hw2_we_q && int'(hw_cls_q) == c && eqo4_q) t4_o[c] = hw2_tup;
    end
    if (hw_we_q && hw_cls_q == r4_i.cls && eqi4_q[hw_way]) fr4_o[hw_way] = !hw_v;
    if (hw2_we_q && eqf4_q) fr4_o[hw2_way_q] = 1'b0;
    if (hl_we_q && hl_hdl_q == r4_i.hdl) lv4_o = hl_live_q;
    // The CAM's oldest hit: removed -> the second oldest; a new matching entry is younger than all.
    c4v_o    = c41v_q;
    c4i_o    = c41i_q;
    c4s_o    = c41s_q;
    c4en_o   = c41en_q;
    c4h_o    = c41h_q;
    camrm1_o = 1'b0;
    camnew_o = 1'b0;
    if (hcrm_q && c41v_q && hcrm_idx_q == c41i_q) begin
      c4v_o    = c42v_q;
      c4i_o    = c42i_q;
      c4s_o    = c42s_q;
      c4en_o   = c42en_q;
      c4h_o    = c42h_q;
      camrm1_o = 1'b1;
    end
    if (hcins_q && insm4_q && !c4v_o) begin
      c4v_o    = 1'b1;
      c4i_o    = hcins_idx_q;
      c4s_o    = hseq_q;
      c4en_o   = hnew_en_q;
      c4h_o    = hl_hdl_q;   // the inserting ADD's handle (its live write)
      camnew_o = 1'b1;
    end
  end

  // Whether an ADD in s4 may find neither its key's FIFO nor a free way (and start a relocation
  // search), from registers only: s4's hold and every stage enable hang off it, so it must not wait
  // for the record to be applied above. A superset of the exact condition (asserted in
  // tmnic_tm_commit): the record can take that away only by writing, with a valid word, a way of
  // the request's bucket in its class for another key (a new FIFO there), or by a relocation
  // moving an occupant into that bucket. Emptying the key's own FIFO frees its slot, and writing
  // the key's own slot makes its FIFO exist: neither can. (The live bit is left out: a live handle
  // only makes the exact condition false.)
  assign ck_may4_o = r4_i.has_cls &&
                     (!t4_q[r4_i.cls].v && fr4_q == '0 ||
                      hw_we_q && hw_v && hw_cls_q == r4_i.cls && eqi4_q[hw_way] &&
                      !eqk4_q[r4_i.cls] ||
                      hw2_we_q && eqf4_q);

  // ---------------------------------------------------------------- s4: the class heads' links
  // Read at s3, or forwarded by the last commit: after a pop, the new head's link from the pop's
  // chase read (captured when s4 holds, the port then serves the scan); after an append to a FIFO of
  // one entry, the new entry itself.
  link_t chase_q;     // link captured from the chase read when s4 holds (scan)
  logic  chase_cap_q; // chase_q is valid for classes with LS_CHASE
  always_comb begin
    for (int c = 0; c < int'(K); c++) begin
      unique case (ls4[c])
        LS_CHASE: lnk4_o[c] = chase_cap_q ? chase_q : lk_rdata_i[K];
        LS_VAL:   lnk4_o[c] = hlink_q;
        default:  lnk4_o[c] = lk_rdata_i[c];
      endcase
    end
  end

  // ---------------------------------------------------------------- s4: blocked
  // Blocked (hw_cnt - sw_cnt > 0x7fff) for the request in s4: computed in s3 for the counts then
  // and for the two ways the commit ahead can change them (a counted miss, a new sw_cnt), selected.
  function automatic logic gap_blocked(logic [15:0] hw, logic [15:0] sw);
    return 16'(hw - sw) > 16'h7fff;
  endfunction
  logic [2:0] blk3_d, blk4_q;  // no change / +1 miss / sw := cnt of the commit ahead
  logic       bsel_miss, bsel_cnt;
  always_comb begin
    blk3_d[0] = gap_blocked(q_hw_i, q_sw_i);
    blk3_d[1] = gap_blocked(q_hw_i + 16'd1, q_sw_i);
    blk3_d[2] = gap_blocked(q_hw_i, r4_i.cnt);
  end
  assign bsel_miss  = hmiss_q && eqs4_q;
  assign bsel_cnt   = hcnt_q && eqs4_q;
  assign blocked4_o = bsel_miss ? blk4_q[1] : bsel_cnt ? blk4_q[2] : blk4_q[0];

  assign new_en4_o = hnew_en_q;
  assign en_all4_o = hen_all_q && eqs4_q;

  // ---------------------------------------------------------------- registers
  // Control: the record's write enables (reset).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      hw_we_q     <= 1'b0;
      hw2_we_q    <= 1'b0;
      hl_we_q     <= 1'b0;
      hcrm_q      <= 1'b0;
      hcins_q     <= 1'b0;
      hen_all_q   <= 1'b0;
      hmiss_q     <= 1'b0;
      hcnt_q      <= 1'b0;
      chase_cap_q <= 1'b0;
    end else begin
      if (adv_i) begin
        hw_we_q   <= cw_we_i;
        hw2_we_q  <= cw2_we_i;
        hl_we_q   <= cl_we_i;
        hcrm_q    <= cam_rm_i;
        hcins_q   <= cam_ins_i;
        hen_all_q <= ev_en_all_i;
        hmiss_q   <= ev_i && ev_miss_i;
        hcnt_q    <= ev_i && ev_cnt_vld_i;
      end
      // The chase read's data is taken over when s4 holds (the port serves the scan next).
      chase_cap_q <= hold_i && v4_i;
    end
  end

  // Datapath (no reset).
  always_ff @(posedge clk_i) begin
    if (adv_i) begin
      t3_q   <= t2;
      fr3_q  <= fr2;
      lv3_q  <= lv2;
      co3_q  <= cam_old_i;
      cn3_q  <= cam_cnt_i;
      t4_q   <= t3_o;
      fr4_q  <= fr3c;
      lv4_q  <= lv3c;
      c41v_q <= c3v[0];
      c41i_q <= c3i[0];
      c41s_q <= cam_seq_i[0];
      c41en_q <= |(cam_en_i & cam_rd_o[0]);
      c42en_q <= |(cam_en_i & cam_rd_o[1]);
      c41h_q  <= c3h[0];
      c42h_q  <= c3h[1];
      c42v_q <= c3v[1];
      c42i_q <= c3i[1];
      c42s_q <= cam_seq_i[1];
      blk4_q <= blk3_d;
      // The commit of this edge, for the stages it does not patch (above: the last commit).
      hv_pop_q    <= cw_pop_i;
      hv_new_q    <= cw_new_i;
      hv_lval_q   <= cw_lval_i;
      hlink_q     <= cw_link_i;
      hcrm_idx_q  <= cam_rm_idx_i;
      hcins_idx_q <= cam_ins_idx_i;
      hcins_oh_q  <= cam_ins_oh_i;
      hseq_q      <= ins_seq_i;
      hnew_en_q   <= ins_en_i;
      eqb2_q  <= eqb1;
      eqm2_q  <= eqm1;
      ekr2_q  <= ekr1;
      ekm2_q  <= ekm1;
      eqk3_q  <= eqk2;
      eqk4_q  <= eqk3;
      eqi3_q  <= eqi2;
      eqi4_q  <= eqi3;
      eqo3_q  <= eqo2;
      eqo4_q  <= eqo3;
      eqf3_q  <= eqf2;
      eqf4_q  <= eqf3;
      insm3_q <= insm2;
      insm4_q <= insm3;
      eqs4_q  <= r3_i.srq == r4_i.srq;
      hw_cls_q   <= cw_cls_i;
      hw_way_q   <= cw_way_i;
      if (v4_i) hw_data_q <= cw_data_i;   // (read only with hw_we_q, which needs a request)
      hw2_way_q  <= mv_way_i;
      hw2_data_q <= mv_slot_i;
      hl_hdl_q   <= cl_hdl_i;
      hl_live_q  <= cl_live_i;
    end
    if (hold_i && !chase_cap_q) chase_q <= lk_rdata_i[K];
  end

  // Fields of the requests and records that the forwarding does not look at.
  wire unused_ok = ^{r2_i.cnt_vld, r2_i.cnt, r2_i.commit_miss, r2_i.has_cls, r2_i.mask,
                     r3_i.cnt_vld, r3_i.cnt, r3_i.commit_miss, r3_i.has_cls, r3_i.mask,
                     r4_i.kind, r4_i.cnt_vld, r4_i.commit_miss, r4_i.has_cls,
                     lv_rdata_i.loc, lv_rdata_i.cls, lv_rdata_i.cam};

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // What the s3 correction relies on: the inserted entry was free when s2 selected (never among the
  // hits), and the selections are consistent with their count.
  a_cam3_ins_new: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(v3_i && hcins_q) || !(co3_q[0][hcins_idx_q] || co3_q[1][hcins_idx_q] || co3_q[2][hcins_idx_q]))
    else $error("tmnic_tm_commit_fwd: the last commit inserted into an entry s3 holds as a hit");
  logic [K-1:0] multi2;
  for (genvar c = 0; c < int'(K); c++) begin : g_multi2
    assign multi2[c] = !$onehot0(mw2[c]);
  end
  a_one_way: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(adv_i && v2_i) || multi2 == '0)
    else $error("tmnic_tm_commit_fwd: s2's key in more than one slot as it moves on");
  a_cam3_cnt: assert property (@(posedge clk_i) disable iff (!chk_q)
    !v3_i || ((co3_q[0] != '0) == (cn3_q > 2'd0) && (co3_q[1] != '0) == (cn3_q > 2'd1) &&
              (co3_q[2] != '0) == (cn3_q > 2'd2)))
    else $error("tmnic_tm_commit_fwd: s3's oldest CAM hits inconsistent with their count");
`endif
endmodule
