// Hardware tag matching (rdma-core / mlx5 TM-SRQ semantics): the posted-tag lists of all TM SRQs,
// list operations (ADD, DEL, SYNC, CLEAR) and lookups of arriving tagged messages in MPI order.
// Architecture and its justification: docs/tag-matching-engine.md. In short:
//   - Every posted entry gets a sequence number (posting order). Among the entries that match a
//     message, the one with the smallest sequence number wins (MPI order).
//   - Mask classes: each of N_CLASS class tables holds entries with one mask (programmed by the
//     first ADD that uses it). In a class, all entries with the same key {srq, tag & mask} form a
//     FIFO (linked list by handle, in posting order) whose head, head sequence number and tail sit in
//     one slot of a d-way hashed table (N_WAYS ways x N_BUCKETS buckets, block RAM). A lookup reads
//     the key's N_WAYS candidate slots in every class: at most one FIFO per class can match, and its
//     head is that class's oldest match.
//   - Entries whose mask has no class, or whose key finds no free slot, go to a wildcard CAM of
//     CAM_W entries (any mask, ordered by an age matrix); beyond that to a per-SRQ spill list in
//     block RAM that a lookup scans one entry per cycle. Nothing is refused for lack of room: any
//     N_ENTRIES entries fit, the fallback paths are only slower (docs: worst cases).
//   - Winner: the oldest enabled candidate among the class FIFO heads, the CAM's oldest hit and the
//     spill list's first match. Disabled (out-of-phase) entries are always the newest of their SRQ,
//     so "enabled" is one compare with a per-SRQ threshold (tmnic_tm_srq_state).
// Pipeline (one request per cycle; s4 commits in acceptance order, the response is registered):
//   s0 keys and hash -> s1 slot RAM read -> s2 key compare, CAM compare -> s3 CAM age select, link
//   RAM read of each class head -> s4 commit (decision, RAM writes, response).
// Hazards without stall or replay: the commit at s4 is recorded at its clock edge, and in the next
// cycle s2, s3 and s4 each apply that record to what they read or carried (tmnic_tm_commit_fwd). No
// decision of the current cycle reaches a younger stage's registers. DEL, CLEAR and an ADD that
// reprograms a class mask run alone (the pipeline empty before and after); a lookup whose SRQ has
// spilled entries holds s4 while it scans them.
// This module: request acceptance, s0 (keys and hash), the stage registers of the requests, the
// response; and the blocks: tmnic_tm_tables (block RAMs and their ports), tmnic_tm_commit_fwd (the
// last commit applied to s2..s4, the candidates' stage registers), tmnic_tm_order (MPI order),
// tmnic_tm_commit (s4's decision and sub-states), tmnic_tm_cam, tmnic_tm_srq_state, tmnic_tm_scrub.
// Simulation cost follows activity: the stages' logic is evaluated under their valid bits.
module tmnic_tm_engine import tmnic_hwif_pkg::*, tmnic_tm_pkg::*; #(
  parameter int unsigned N_ENTRIES = 1024,           // handles (entries of all SRQs), power of two
  parameter int unsigned NUM_SRQ   = 16,             // TM SRQs sharing the engine, power of two
  parameter int unsigned N_CLASS   = 2,              // mask classes (class tables)
  parameter int unsigned N_WAYS    = 4,              // ways per class table
  parameter int unsigned N_BUCKETS = N_ENTRIES / 2,  // buckets per way, power of two
  parameter int unsigned CAM_W     = 32,             // wildcard CAM entries
  parameter int unsigned SEQ_W     = 62,             // sequence-number bits (modular compare)
  localparam int unsigned H_W   = $clog2(N_ENTRIES),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // List operations, executed in acceptance order.
  input  logic             op_valid_i,
  output logic             op_ready_o,
  input  logic [1:0]       op_code_i,        // 0 ADD, 1 DEL, 2 SYNC, 3 CLEAR
  input  logic [SRQ_W-1:0] op_srq_i,
  input  logic [H_W-1:0]   op_handle_i,      // ADD: handle of the new entry; DEL: handle to remove
  input  logic [63:0]      op_tag_i,         // ADD only
  input  logic [63:0]      op_mask_i,        // ADD only
  input  logic             op_sw_cnt_vld_i,  // sw_cnt[srq] := op_sw_cnt_i before the op
  input  logic [15:0]      op_sw_cnt_i,

  // List-operation responses: one per op, in order, single-cycle pulse, no back-pressure.
  output logic             op_rsp_valid_o,
  output logic             op_rsp_ok_o,      // ADD: 0 if the handle is live; DEL: 0 if absent
  output logic [15:0]      op_rsp_hw_cnt_o,  // hw_cnt[srq] after the op

  // Lookups, one per arriving tagged message.
  input  logic             lk_valid_i,
  output logic             lk_ready_o,
  input  logic [SRQ_W-1:0] lk_srq_i,
  input  logic [63:0]      lk_tag_i,
  input  logic             lk_commit_miss_i, // a miss counts as unexpected (hw_cnt++)

  // Lookup responses: one per lookup, in order, pulse, no back-pressure.
  output logic             lk_rsp_valid_o,
  output logic             lk_rsp_hit_o,     // matched; the entry is consumed
  output logic [H_W-1:0]   lk_rsp_handle_o,
  output logic             lk_rsp_unexp_o,   // counted miss
  output logic             lk_rsp_blocked_o, // hw_cnt - sw_cnt > 0x7fff: nothing matched or counted

  // Observability, per SRQ, and where the entries are.
  output logic [NUM_SRQ-1:0][H_W:0] occ_o,      // live entries
  output logic [NUM_SRQ-1:0][H_W:0] disabled_o, // live entries added out of phase
  output logic [NUM_SRQ-1:0][15:0]  hw_cnt_o,
  output logic [NUM_SRQ-1:0][15:0]  sw_cnt_o,
  output logic [$clog2(CAM_W+1)-1:0] cam_used_o, // entries in the wildcard CAM
  output logic [H_W:0]              spilled_o,  // entries in spill lists (all SRQs)
  output logic                      idle_o      // nothing in flight, no response pending
);
  // ---------------------------------------------------------------- parameters
  localparam int unsigned N     = N_ENTRIES;
  localparam int unsigned K     = N_CLASS;
  localparam int unsigned D     = N_WAYS;
  localparam int unsigned B     = N_BUCKETS;
  localparam int unsigned LB    = $clog2(B);
  localparam int unsigned R_W   = SRQ_W + 64 - LB;
  localparam int unsigned CLS_W = (K > 1) ? $clog2(K) : 1;
  localparam int unsigned WAY_W = (D > 1) ? $clog2(D) : 1;
  localparam int unsigned CIW   = (CAM_W > 1) ? $clog2(CAM_W) : 1;
  localparam int unsigned SW_N  = (B > N) ? B : N;    // addresses of a scrub pass
  localparam int unsigned SW_AW = $clog2(SW_N);
  localparam int unsigned GEN_W = 2;                  // generations per SRQ (tmnic_tm_scrub)

  if (N < 16 || N > 65536 || (N & (N - 1)) != 0) begin : g_chk_n
    $fatal(1, "tmnic_tm_engine: N_ENTRIES must be a power of two in 16..65536");
  end
  if (NUM_SRQ < 2 || NUM_SRQ > 256 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_srq
    $fatal(1, "tmnic_tm_engine: NUM_SRQ must be a power of two in 2..256");
  end
  if (K < 1 || K > TM_HASH_MAX_CLASSES) begin : g_chk_k
    $fatal(1, "tmnic_tm_engine: N_CLASS must be in 1..TM_HASH_MAX_CLASSES");
  end
  if (D < 1 || D > TM_HASH_MAX_WAYS || (D & (D - 1)) != 0) begin : g_chk_d
    $fatal(1, "tmnic_tm_engine: N_WAYS must be a power of two in 1..TM_HASH_MAX_WAYS");
  end
  if (B < 2 || B > 65536 || (B & (B - 1)) != 0) begin : g_chk_b
    $fatal(1, "tmnic_tm_engine: N_BUCKETS must be a power of two in 2..65536");
  end
  if (R_W > TM_HASH_MAX_RBITS) begin : g_chk_r
    $fatal(1, "tmnic_tm_engine: {srq, tag} longer than the generated hash constants");
  end
  if (CAM_W < 1 || CAM_W > 256) begin : g_chk_cam
    $fatal(1, "tmnic_tm_engine: CAM_W must be in 1..256");
  end
  if (SEQ_W < 8 || SEQ_W > 64) begin : g_chk_seq
    $fatal(1, "tmnic_tm_engine: SEQ_W must be in 8..64");
  end

  // ---------------------------------------------------------------- types
  // Passed to the blocks as type parameters (tmnic_tm_pkg: why); the enums are tmnic_tm_pkg's.
  // Field order: the 64-bit fields last, so that they sit on 64-bit boundaries (cheaper to simulate).
  typedef struct packed {
    rkind_e           kind;
    logic [SRQ_W-1:0] srq;
    logic [H_W-1:0]   hdl;
    logic             cnt_vld;
    logic [15:0]      cnt;
    logic             commit_miss;
    logic             has_cls;   // ADD, FIND: the entry's class
    logic [CLS_W-1:0] cls;
    logic [63:0]      tag;
    logic [63:0]      mask;
  } req_t;

  // A class-table slot: the FIFO of one key.
  typedef struct packed {
    logic             v;     // FIFO not empty
    logic [GEN_W-1:0] gen;   // generation of the SRQ when written (stale after a CLEAR)
    logic [R_W-1:0]   kr;    // key without its index bits (tmnic_tm_hash), SRQ in the top bits
    logic [H_W-1:0]   h1;    // head handle
    logic [H_W-1:0]   tail;
    logic [SEQ_W-1:0] s1;    // head sequence number
  } slot_t;
  // Per handle: the next entry of its FIFO (or spill list) and that entry's sequence number.
  // Meaningless for the tail (never written when an entry is appended): whether an entry has a
  // next one is always decided by comparing it with its list's tail.
  typedef struct packed {
    logic [H_W-1:0]   n1;
    logic [SEQ_W-1:0] ns;
  } link_t;
  typedef struct packed {
    logic             hp;
    logic [H_W-1:0]   p;
  } prev_t;
  typedef struct packed {
    logic             live;
    logic [GEN_W-1:0] gen;
    logic [SRQ_W-1:0] srq;
    loc_e             loc;
    logic [CLS_W-1:0] cls;
    logic [CIW-1:0]   cam;
  } live_t;
  typedef struct packed {
    logic [SEQ_W-1:0] seq;
    logic [63:0]      mtag;  // tag & mask
    logic [63:0]      mask;
  } ent_t;
  // A request's view of one class: the FIFO of its key, if any.
  typedef struct packed {
    logic             v;
    logic [WAY_W-1:0] way;
    logic [H_W-1:0]   h1;
    logic [H_W-1:0]   tail;
    logic [SEQ_W-1:0] s1;
  } tup_t;

  // ---------------------------------------------------------------- state
  logic [K-1:0][63:0] cmask_q;  // class masks
  logic [SEQ_W-1:0]   seq_q;    // next sequence number

  // Stage registers of the requests (their candidates: tmnic_tm_commit_fwd).
  logic                    v_q [5];
  req_t                    r_q [5];
  logic [K-1:0][D-1:0][LB-1:0] idx_q [5];   // from s1
  logic [K-1:0][R_W-1:0]   kr_q [5];        // from s1

  logic busy_ser_q;   // a serialized request is in flight (nothing else accepted)
  logic prio_op_q;    // an op wins acceptance if both wait

  // Generations and the background scrubber.
  logic [NUM_SRQ-1:0][GEN_W-1:0] gen;
  logic [NUM_SRQ-1:0]            clear_ok;
  logic                          scr_clear, scr_free, scr_init, scr_rd, scr_wr;
  logic [SW_AW-1:0]              scr_rd_addr, scr_wr_addr;
  tmnic_tm_scrub #(.NUM_SRQ(NUM_SRQ), .WORDS(SW_N), .GEN_W(GEN_W)) u_scrub (
    .clk_i, .rst_ni, .gen_o(gen), .clear_ok_o(clear_ok), .clear_i(scr_clear), .clear_srq_i(r_q[4].srq),
    .free_i(scr_free), .init_o(scr_init), .rd_o(scr_rd), .rd_addr_o(scr_rd_addr), .wr_o(scr_wr),
    .wr_addr_o(scr_wr_addr));

  // Table read data (tmnic_tm_tables).
  slot_t [K-1:0][D-1:0] sl_rdata;
  link_t [K:0]          lk_rdata;   // copies 0..K-1: class heads; K: the chase copy
  prev_t                pv_rdata;
  live_t                lv_rdata;
  ent_t                 en_rdata;

  // Per-SRQ state.
  logic             ev, ev_clear, ev_cnt_vld, ev_miss, ev_add, ev_add_en, ev_add_cls, ev_rm, ev_rm_dis;
  logic             ev_rm_cls, ev_sp_add, ev_sp_rm;
  logic [CLS_W-1:0] ev_rm_cls_idx;
  logic [H_W-1:0]   ev_sp_head, ev_sp_tail;
  logic             en_all;
  logic [15:0]      hw_new;
  logic [15:0]      q_hw, q_sw;
  logic             cur_dis_act, q_dis_act;
  logic [SEQ_W-1:0] cur_dis_seq, q_dis_seq;
  logic [H_W-1:0]   cur_sp_head, cur_sp_tail;
  logic             cur_sp_nz;
  logic [K-1:0]     cls_free;

  tmnic_tm_srq_state #(.NUM_SRQ(NUM_SRQ), .N_CLASS(K), .H_W(H_W), .SEQ_W(SEQ_W)) u_state (
    .clk_i, .rst_ni,
    .ev_i(ev), .ev_srq_i(r_q[4].srq), .ev_clear_i(ev_clear), .ev_cnt_vld_i(ev_cnt_vld),
    .ev_cnt_i(r_q[4].cnt),
    .ev_miss_i(ev_miss), .ev_add_i(ev_add), .ev_add_seq_i(seq_q),
    .ev_add_cls_i(ev_add_cls), .ev_add_cls_idx_i(r_q[4].cls), .ev_rm_i(ev_rm), .ev_rm_dis_i(ev_rm_dis),
    .ev_rm_cls_i(ev_rm_cls), .ev_rm_cls_idx_i(ev_rm_cls_idx), .ev_sp_add_i(ev_sp_add),
    .ev_sp_rm_i(ev_sp_rm), .ev_sp_head_i(ev_sp_head), .ev_sp_tail_i(ev_sp_tail),
    .en_all_o(en_all), .add_en_o(ev_add_en), .hw_new_o(hw_new),
    .cur_dis_act_o(cur_dis_act), .cur_dis_seq_o(cur_dis_seq),
    .cur_sp_head_o(cur_sp_head), .cur_sp_tail_o(cur_sp_tail), .cur_sp_nz_o(cur_sp_nz),
    .q_srq_i(r_q[3].srq), .q_hw_o(q_hw), .q_sw_o(q_sw), .q_dis_act_o(q_dis_act), .q_dis_seq_o(q_dis_seq),
    .hw_o(hw_cnt_o), .sw_o(sw_cnt_o), .occ_o(occ_o), .dis_o(disabled_o), .spilled_o(spilled_o),
    .cls_free_o(cls_free));

  // Wildcard CAM.
  logic                         cam_cmp_en, cam_ins, cam_rm, cam_en_all, cam_clr;
  logic [CAM_W-1:0]             cam_valid, cam_en, cam_free_oh;
  logic                         cam_free_v;
  logic [2:0][CAM_W-1:0]        cam_old;           // s2: the three oldest hits
  logic [1:0]                   cam_cnt;
  logic                         cam_rd_en;         // s3: read the two candidates' seq
  logic [1:0][CAM_W-1:0]        cam_rd;
  logic [1:0][SEQ_W-1:0]        cam_seq;           // ...their sequence numbers
  logic [CIW-1:0]               cam_ins_idx, cam_rm_idx;
  logic [CAM_W-1:0][H_W-1:0]    cam_hdl;

  // The commit (tmnic_tm_commit): s4's decision, for the blocks that carry it out.
  logic             hold4;     // s4 keeps its request this cycle
  logic             done4;     // s4's request completes this cycle (response, state update)
  logic             inj_d;     // a DEL becomes its FIND (inj_req)
  logic             cw_we, cw_pop, cw_new, cw_lval, cw2_we;
  logic [K-1:0]     cw_v;
  logic [CLS_W-1:0] cw_cls;
  logic [K-1:0][WAY_W-1:0] cw_way;
  logic [WAY_W-1:0] mv_from, mv_way;
  hsrc_e            cw_hsrc;
  tsrc_e            cw_tsrc;
  logic [LB-1:0]    mv_idx;
  slot_t [K-1:0]    cw_data;
  slot_t            mv_slot;
  link_t            cw_link;
  logic             reloc_hash, ck_rst, mv_sel;
  logic [D-1:0]     ck_re;
  logic [D-1:0][LB-1:0] ck_raddr;
  logic             lk_we, pv_we, en_we, cl_we, cl_live;
  lasrc_e           lk_asrc;
  ldsrc_e           lk_dsrc;
  pasrc_e           pv_asrc;
  pdsrc_e           pv_dsrc;
  prev_t            ul_prev;
  link_t            ul_link;
  logic [H_W-1:0]   cl_hdl;
  logic             scan_rd, sp_v, sp_en;
  logic [H_W-1:0]   scan_addr;
  logic [K:0]       sp_old;
  logic             rsp_op, rsp_lk, rsp_ok, rsp_hit, rsp_unexp, rsp_blocked;
  logic [H_W-1:0]   rsp_hdl;

  // ---------------------------------------------------------------- accept
  logic advance;     // every stage moves one step (no s4 hold)
  logic inject;      // a DEL re-enters s0 as its FIND
  req_t inj_req;
  logic pipe_empty;
  logic acc_lk, acc_op;
  req_t acc_req;
  logic op_serial;   // the op at the input needs the engine alone
  logic [K-1:0] mask_eq;
  logic         add_has_cls, add_reprog;
  logic [CLS_W-1:0] add_cls;

  assign pipe_empty = !(v_q[0] || v_q[1] || v_q[2] || v_q[3] || v_q[4]);

  // Class of an ADD: a class with its mask, else a free class (reprogrammed), else none.
  always_comb begin
    mask_eq     = '0;
    add_has_cls = 1'b0;
    add_reprog  = 1'b0;
    add_cls     = '0;
    if (op_valid_i && op_code_i == 2'd0) begin
      for (int c = 0; c < int'(K); c++) mask_eq[c] = cmask_q[c] == op_mask_i;
      for (int c = int'(K) - 1; c >= 0; c--) begin
        if (cls_free[c]) begin
          add_has_cls = 1'b1;
          add_reprog  = 1'b1;
          add_cls     = CLS_W'(c);
        end
      end
      for (int c = int'(K) - 1; c >= 0; c--) begin
        if (mask_eq[c]) begin
          add_has_cls = 1'b1;
          add_reprog  = 1'b0;
          add_cls     = CLS_W'(c);
        end
      end
    end
  end

  assign op_serial = (op_code_i == 2'd1) || (op_code_i == 2'd3) || (op_code_i == 2'd0 && add_reprog);

  // A CLEAR goes before lookups (the SRQ's reconfiguration precedes its traffic), and waits while
  // its next generation may still be in the tables (lookups wait too, so the scrubber gets cycles).
  always_comb begin
    logic can, clr;
    clr        = op_valid_i && op_code_i == 2'd3;
    can        = advance && !busy_ser_q && !inject && !scr_init;
    lk_ready_o = can && !(op_valid_i && prio_op_q) && !clr;
    op_ready_o = can && !(lk_valid_i && !prio_op_q && !clr) && (!op_serial || pipe_empty) &&
                 (!clr || clear_ok[op_srq_i]);
  end
  assign acc_lk = lk_valid_i && lk_ready_o;
  assign acc_op = op_valid_i && op_ready_o && !acc_lk;

  always_comb begin
    acc_req = '0;
    if (acc_lk) begin
      acc_req.kind        = RK_LK;
      acc_req.srq         = lk_srq_i;
      acc_req.tag         = lk_tag_i;
      acc_req.commit_miss = lk_commit_miss_i;
    end else begin
      unique case (op_code_i)
        2'd0:    acc_req.kind = RK_ADD;
        2'd1:    acc_req.kind = RK_DEL;
        2'd2:    acc_req.kind = RK_SYNC;
        default: acc_req.kind = RK_CLEAR;
      endcase
      acc_req.srq     = op_srq_i;
      acc_req.hdl     = op_handle_i;
      acc_req.tag     = op_tag_i & op_mask_i;
      acc_req.mask    = op_mask_i;
      acc_req.cnt_vld = op_sw_cnt_vld_i;
      acc_req.cnt     = op_sw_cnt_i;
      acc_req.has_cls = add_has_cls;
      acc_req.cls     = add_cls;
    end
  end

  // ---------------------------------------------------------------- s0: keys and bucket indices
  // For a lookup, every class's key {srq, tag & class mask}; for ADD and FIND, the entry's class.
  logic [K-1:0][D-1:0][LB-1:0] idx0;
  logic [K-1:0][R_W-1:0]       kr0;  // R of the key (tmnic_tm_hash), stored in the slot
  logic [K-1:0][63:0]          mt0;
  logic [SRQ_W-1:0]            hsrq0;
  // While an ADD searches for a relocation (s4 holds, s0 waits), the hash units give the ways of a
  // bucket occupant: with its R and index bits 0 they return H_w(R) (tmnic_tm_hash).
  always_comb begin
    hsrq0 = r_q[0].srq;
    for (int c = 0; c < int'(K); c++) mt0[c] = v_q[0] ? (r_q[0].tag & cmask_q[c]) : 64'd0;
    if (reloc_hash) begin
      hsrq0 = mv_slot.kr[R_W-1 -: SRQ_W];
      for (int c = 0; c < int'(K); c++) mt0[c] = {mv_slot.kr[R_W-SRQ_W-1:0], LB'(0)};
    end
  end
  for (genvar c = 0; c < int'(K); c++) begin : g_hc
    for (genvar w = 0; w < int'(D); w++) begin : g_hw
      tmnic_tm_hash #(.CLS(c), .WAY(w), .LB(LB), .SRQ_W(SRQ_W)) u_hash (
        .srq_i(hsrq0), .mtag_i(mt0[c]), .idx_o(idx0[c][w]));
    end
    assign kr0[c] = {hsrq0, mt0[c][63:LB]};
  end


  // ---------------------------------------------------------------- s1/s2: CAM compare / 3 oldest hits
  assign cam_cmp_en = v_q[2] && r_q[2].kind == RK_LK;

  // ---------------------------------------------------------------- s2..s4: the last commit applied
  tup_t [K-1:0]     t3c, t4c;   // class tuples of s3 and s4, corrected
  logic [D-1:0]     fr4c;
  logic             lv4c, ck_may4, blocked4, c4v, c4en, new_en4, en_all4, camrm14, camnew4;
  link_t [K-1:0]    lnk4;
  logic [CIW-1:0]   c4i;
  logic [H_W-1:0]   c4h;
  logic [SEQ_W-1:0] c4s;
  logic [K-1:0]     pop4, new4;
  tmnic_tm_commit_fwd #(.NUM_SRQ(NUM_SRQ), .K(K), .D(D), .LB(LB), .H_W(H_W), .CAM_W(CAM_W),
      .SEQ_W(SEQ_W), .GEN_W(GEN_W), .req_t(req_t), .slot_t(slot_t), .link_t(link_t), .live_t(live_t),
      .tup_t(tup_t)) u_fwd (
    .clk_i, .rst_ni, .adv_i(advance),
    .idx1_i(idx_q[1]), .kr1_i(kr_q[1]), .v2_i(v_q[2]), .v3_i(v_q[3]), .r2_i(r_q[2]), .r3_i(r_q[3]), .r4_i(r_q[4]),
    .idx2_i(idx_q[2]), .idx3_i(idx_q[3]), .idx4_i(idx_q[4]), .kr2_i(kr_q[2]), .kr3_i(kr_q[3]),
    .kr4_i(kr_q[4]), .gen_i(gen),
    .sl_rdata_i(sl_rdata), .lv_rdata_i(lv_rdata), .cam_old_i(cam_old), .cam_cnt_i(cam_cnt),
    .cam_seq_i(cam_seq), .cam_en_i(cam_en), .cam_hdl_i(cam_hdl), .q_hw_i(q_hw), .q_sw_i(q_sw),
    .lk_rdata_i(lk_rdata), .v4_i(v_q[4]), .hold_i(hold4),
    .cw_we_i(cw_we), .cw_cls_i(cw_cls), .cw_way_i(cw_way), .cw_data_i(cw_data), .cw_pop_i(cw_pop),
    .cw_new_i(cw_new), .cw_lval_i(cw_lval), .cw_link_i(cw_link),
    .cw2_we_i(cw2_we), .mv_from_i(mv_from), .mv_way_i(mv_way), .mv_idx_i(mv_idx), .mv_slot_i(mv_slot),
    .cl_we_i(cl_we), .cl_hdl_i(cl_hdl), .cl_live_i(cl_live),
    .cam_rm_i(cam_rm), .cam_rm_idx_i(cam_rm_idx), .cam_ins_i(cam_ins), .cam_ins_idx_i(cam_ins_idx),
    .cam_ins_oh_i(cam_free_oh),
    .ins_seq_i(seq_q), .ins_en_i(ev_add_en),
    .ev_i(ev), .ev_miss_i(ev_miss), .ev_cnt_vld_i(ev_cnt_vld), .ev_en_all_i(cam_en_all),
    .t3_o(t3c), .cam_rd_en_o(cam_rd_en), .cam_rd_o(cam_rd), .t4_o(t4c), .fr4_o(fr4c), .lv4_o(lv4c),
    .ck_may4_o(ck_may4),
    .lnk4_o(lnk4),
    .blocked4_o(blocked4), .c4v_o(c4v), .c4i_o(c4i), .c4s_o(c4s), .c4en_o(c4en), .c4h_o(c4h),
    .pop4_o(pop4), .new4_o(new4),
    .new_en4_o(new_en4), .en_all4_o(en_all4), .camrm1_o(camrm14), .camnew_o(camnew4));

  // ---------------------------------------------------------------- s3 / s4: MPI order
  // Candidates: class heads 0..K-1, the CAM's oldest hit (K), the spill match (K+1); the order
  // (tmnic_tm_order) compares their sequence numbers in s3.
  logic [K+1:0]              win;
  logic [K-1:0][SEQ_W-1:0]   o_sA, o_sB;
  logic [K-1:0]              cv4;
  logic                      o_camv;
  always_comb begin
    for (int c = 0; c < int'(K); c++) begin
      o_sA[c] = t3c[c].s1;
      o_sB[c] = lnk4[c].ns;   // the commit ahead's view of the same FIFO: its head's next
      cv4[c]  = v_q[4] && r_q[4].kind == RK_LK && t4c[c].v;
    end
    o_camv = v_q[4] && r_q[4].kind == RK_LK && c4v;
  end
  tmnic_tm_order #(.K(K), .SEQ_W(SEQ_W)) u_order (
    .clk_i, .adv_i(advance && v_q[3]),
    .sA_i(o_sA), .sB_i(o_sB), .sF1_i(cam_seq[0]), .sF2_i(cam_seq[1]),
    .dis_act_i(q_dis_act), .dis_seq_i(q_dis_seq),
    .cv_i(cv4), .pop_i(pop4), .new_i(new4), .new_en_i(new_en4), .en_all_i(en_all4),
    .camv_i(o_camv), .camen_i(c4en), .camrm1_i(camrm14), .camnew_i(camnew4),
    .spv_i(sp_v), .spen_i(sp_en), .spold_i(sp_old), .win_o(win));

  // ---------------------------------------------------------------- s4: commit
  tmnic_tm_commit #(.NUM_SRQ(NUM_SRQ), .K(K), .D(D), .LB(LB), .H_W(H_W), .CAM_W(CAM_W), .SEQ_W(SEQ_W),
      .GEN_W(GEN_W), .req_t(req_t), .slot_t(slot_t), .link_t(link_t), .prev_t(prev_t), .live_t(live_t),
      .ent_t(ent_t), .tup_t(tup_t)) u_commit (
    .clk_i, .rst_ni,
    .r3_srq_i(r_q[3].srq), .v4_i(v_q[4]), .r4_i(r_q[4]), .idx4_i(idx_q[4]), .t4_i(t4c), .fr4_i(fr4c),
    .lv4_i(lv4c),
    .ck_may4_i(ck_may4),
    .blocked4_i(blocked4), .win_i(win), .c4i_i(c4i), .c4s_i(c4s), .cam_free_v_i(cam_free_v),
    .c4h_i(c4h),
    .cur_sp_head_i(cur_sp_head), .cur_sp_tail_i(cur_sp_tail), .cur_sp_nz_i(cur_sp_nz),
    .cur_dis_act_i(cur_dis_act), .cur_dis_seq_i(cur_dis_seq), .q_dis_act_i(q_dis_act),
    .q_dis_seq_i(q_dis_seq), .gen_i(gen),
    .sl_rdata_i(sl_rdata), .en_rdata_i(en_rdata), .pv_rdata_i(pv_rdata), .lv_rdata_i(lv_rdata),
    .chase_i(lk_rdata[K]), .adv_i(advance), .del2_i(v_q[2] && r_q[2].kind == RK_DEL), .idx0_i(idx0),
    .hold_o(hold4), .done_o(done4), .find_o(inj_d), .find_req_o(inj_req),
    .cw_we_o(cw_we), .cw_cls_o(cw_cls), .cw_way_o(cw_way), .cw_v_o(cw_v), .cw_hsrc_o(cw_hsrc),
    .cw_tsrc_o(cw_tsrc), .cw_pop_o(cw_pop), .cw_new_o(cw_new), .cw_lval_o(cw_lval),
    .cw2_we_o(cw2_we), .mv_from_o(mv_from), .mv_way_o(mv_way), .mv_idx_o(mv_idx), .mv_slot_o(mv_slot),
    .mv_sel_o(mv_sel), .reloc_hash_o(reloc_hash), .ck_re_o(ck_re), .ck_raddr_o(ck_raddr), .ck_rst_o(ck_rst),
    .lk_we_o(lk_we), .lk_asrc_o(lk_asrc), .lk_dsrc_o(lk_dsrc), .pv_we_o(pv_we), .pv_asrc_o(pv_asrc),
    .pv_dsrc_o(pv_dsrc), .ul_prev_o(ul_prev), .ul_link_o(ul_link), .en_we_o(en_we),
    .cl_we_o(cl_we), .cl_hdl_o(cl_hdl), .cl_live_o(cl_live),
    .scan_rd_o(scan_rd), .scan_addr_o(scan_addr), .sp_v_o(sp_v), .sp_en_o(sp_en), .sp_old_o(sp_old),
    .cam_ins_o(cam_ins), .cam_rm_o(cam_rm), .cam_rm_idx_o(cam_rm_idx),
    .cam_clr_o(cam_clr),
    .ev_o(ev), .ev_clear_o(ev_clear), .ev_cnt_vld_o(ev_cnt_vld), .ev_miss_o(ev_miss), .ev_add_o(ev_add),
    .ev_add_cls_o(ev_add_cls), .ev_rm_o(ev_rm), .ev_rm_dis_o(ev_rm_dis), .ev_rm_cls_o(ev_rm_cls),
    .ev_rm_cls_idx_o(ev_rm_cls_idx), .ev_sp_add_o(ev_sp_add), .ev_sp_rm_o(ev_sp_rm),
    .ev_sp_head_o(ev_sp_head), .ev_sp_tail_o(ev_sp_tail),
    .rsp_op_o(rsp_op), .rsp_lk_o(rsp_lk), .rsp_ok_o(rsp_ok), .rsp_hit_o(rsp_hit),
    .rsp_unexp_o(rsp_unexp), .rsp_blocked_o(rsp_blocked), .rsp_hdl_o(rsp_hdl));

  assign cam_en_all = en_all && ev && !ev_clear;
  assign advance    = !hold4;
  assign inject     = inj_d;
  assign scr_clear  = done4 && v_q[4] && r_q[4].kind == RK_CLEAR;
  // s0 too: a request in s0 reads at the edge of the scrubber's write-back.
  assign scr_free   = !(v_q[0] || v_q[1] || v_q[2] || v_q[3] || v_q[4]);

  // ---------------------------------------------------------------- tables (block RAM)
  tmnic_tm_tables #(.N_ENTRIES(N), .NUM_SRQ(NUM_SRQ), .K(K), .D(D), .N_BUCKETS(B), .CAM_W(CAM_W),
      .SEQ_W(SEQ_W), .GEN_W(GEN_W), .req_t(req_t), .slot_t(slot_t), .link_t(link_t), .prev_t(prev_t),
      .live_t(live_t), .ent_t(ent_t), .tup_t(tup_t)) u_tables (
    .clk_i, .adv_i(advance), .v1_i(v_q[1]), .r1_i(r_q[1]), .idx1_i(idx_q[1]), .v2_i(v_q[2]),
    .idx2_i(idx_q[2]), .v3_i(v_q[3]), .t3_i(t3c),
    .v4_i(v_q[4]), .r4_i(r_q[4]), .idx4_i(idx_q[4]), .kr4_i(kr_q[4]), .t4_i(t4c), .lnk4_i(lnk4),
    .seq_i(seq_q),
    .gen_i(gen), .cur_sp_tail_i(cur_sp_tail),
    .cw_we_i(cw_we), .cw_cls_i(cw_cls), .cw_way_i(cw_way), .cw_v_i(cw_v), .cw_hsrc_i(cw_hsrc),
    .cw_tsrc_i(cw_tsrc), .cw_pop_i(cw_pop), .cw2_we_i(cw2_we), .mv_way_i(mv_way), .mv_idx_i(mv_idx),
    .mv_slot_i(mv_slot), .mv_sel_i(mv_sel), .ck_re_i(ck_re), .ck_raddr_i(ck_raddr), .ck_rst_i(ck_rst),
    .lk_we_i(lk_we), .lk_asrc_i(lk_asrc), .lk_dsrc_i(lk_dsrc), .pv_we_i(pv_we), .pv_asrc_i(pv_asrc),
    .pv_dsrc_i(pv_dsrc), .ul_prev_i(ul_prev), .ul_link_i(ul_link), .en_we_i(en_we),
    .cl_we_i(cl_we), .cl_hdl_i(cl_hdl), .cl_live_i(cl_live), .cam_ins_i(cam_ins),
    .cam_ins_idx_i(cam_ins_idx), .scan_rd_i(scan_rd), .scan_addr_i(scan_addr),
    .scr_rd_i(scr_rd), .scr_rd_addr_i(scr_rd_addr), .scr_wr_i(scr_wr), .scr_wr_addr_i(scr_wr_addr),
    .scr_init_i(scr_init),
    .sl_rdata_o(sl_rdata), .lk_rdata_o(lk_rdata), .pv_rdata_o(pv_rdata), .lv_rdata_o(lv_rdata),
    .en_rdata_o(en_rdata), .cw_data_o(cw_data), .cw_link_o(cw_link));

  // ---------------------------------------------------------------- CAM
  tmnic_tm_cam #(.W(CAM_W), .SRQ_W(SRQ_W), .H_W(H_W), .SEQ_W(SEQ_W)) u_cam (
    .clk_i, .rst_ni,
    .adv_i(advance), .cmp1_en_i(v_q[1] && r_q[1].kind == RK_LK), .cmp_srq_i(r_q[1].srq),
    .cmp_tag_i(r_q[1].tag), .cmp2_en_i(cam_cmp_en), .old_o(cam_old),
    .cnt_o(cam_cnt), .rd_en_i(cam_rd_en), .rd_i(cam_rd), .rd_seq_o(cam_seq),
    .ins_i(cam_ins), .ins_srq_i(r_q[4].srq), .ins_tag_i(r_q[4].tag),
    .ins_mask_i(r_q[4].mask), .ins_hdl_i(r_q[4].hdl), .ins_seq_i(seq_q), .ins_en_i(ev_add_en),
    .rm_i(cam_rm), .rm_idx_i(cam_rm_idx), .en_all_i(cam_en_all), .clr_i(cam_clr),
    .en_srq_i(r_q[4].srq),
    .free_v_o(cam_free_v), .free_oh_o(cam_free_oh), .free_idx_o(cam_ins_idx),
    .valid_o(cam_valid), .en_o(cam_en), .hdl_o(cam_hdl));

  // ---------------------------------------------------------------- registers
  logic             op_rsp_valid_q, op_rsp_ok_q, lk_rsp_valid_q, lk_rsp_hit_q, lk_rsp_unexp_q;
  logic             lk_rsp_blocked_q;
  logic [15:0]      op_rsp_hw_q;
  logic [H_W-1:0]   lk_rsp_hdl_q;

  // Control: valid bits, flags (reset).
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i < 5; i++) v_q[i] <= 1'b0;
      busy_ser_q <= 1'b0;
      prio_op_q  <= 1'b0;
      seq_q      <= '0;
      cmask_q    <= '0;
      op_rsp_valid_q <= 1'b0;
      lk_rsp_valid_q <= 1'b0;
    end else begin
      if (advance) begin
        v_q[0] <= acc_lk || acc_op || inject;
        for (int i = 1; i < 5; i++) v_q[i] <= v_q[i-1];
      end
      if (acc_lk || acc_op) prio_op_q <= acc_lk;
      if (acc_op && op_serial) busy_ser_q <= 1'b1;
      if (done4 && rsp_op && busy_ser_q && !inject) busy_ser_q <= 1'b0;
      // A class is reprogrammed by the ADD that takes it (it is empty, and the engine is too).
      if (acc_op && op_code_i == 2'd0 && add_reprog) cmask_q[add_cls] <= op_mask_i;
      if (ev_add) seq_q <= seq_q + 1'b1;
      op_rsp_valid_q <= done4 && rsp_op;
      lk_rsp_valid_q <= done4 && rsp_lk;
    end
  end

  // Datapath registers (no reset).
  always_ff @(posedge clk_i) begin
    if (advance) begin
      r_q[0] <= inject ? inj_req : acc_req;
      for (int i = 1; i < 5; i++) r_q[i] <= r_q[i-1];
      for (int c = 0; c < int'(K); c++) begin
        for (int w = 0; w < int'(D); w++) idx_q[1][c][w] <= idx0[c][w];
        kr_q[1][c] <= kr0[c];
      end
      for (int i = 2; i < 5; i++) begin
        idx_q[i] <= idx_q[i-1];
        kr_q[i]  <= kr_q[i-1];
      end
    end
    op_rsp_ok_q      <= rsp_ok;
    op_rsp_hw_q      <= hw_new;   // 0 after a CLEAR (tmnic_tm_srq_state)
    lk_rsp_hit_q     <= rsp_hit;
    lk_rsp_hdl_q     <= rsp_hdl;
    lk_rsp_unexp_q   <= rsp_unexp;
    lk_rsp_blocked_q <= rsp_blocked;
  end

  // ---------------------------------------------------------------- outputs
  assign op_rsp_valid_o   = op_rsp_valid_q;
  assign op_rsp_ok_o      = op_rsp_ok_q;
  assign op_rsp_hw_cnt_o  = op_rsp_hw_q;
  assign lk_rsp_valid_o   = lk_rsp_valid_q;
  assign lk_rsp_hit_o     = lk_rsp_hit_q;
  assign lk_rsp_handle_o  = lk_rsp_hdl_q;
  assign lk_rsp_unexp_o   = lk_rsp_unexp_q;
  assign lk_rsp_blocked_o = lk_rsp_blocked_q;
  assign idle_o           = pipe_empty && !op_rsp_valid_q && !lk_rsp_valid_q;
`ifdef TMNIC_TM_DEBUG
  always_ff @(posedge clk_i) begin
    if (done4 || inj_d)
      $display("[rtl] commit %0d srq %0d tag %h hdl %0d | hit %0d win %b hdl %0d t4 %p | cw %0d c%0d w%0d i%0d v%0d h1 %0d tail %0d | cam ins %0d rm %0d",
               r_q[4].kind, r_q[4].srq, r_q[4].tag, r_q[4].hdl, rsp_hit, win, rsp_hdl, t4c, cw_we,
               cw_cls, cw_way[cw_cls], idx_q[4][cw_cls][cw_way[cw_cls]], cw_data[cw_cls].v, cw_data[cw_cls].h1, cw_data[cw_cls].tail,
               cam_ins, cam_rm);
  end
`endif
`ifndef SYNTHESIS
  // The CAM candidate's enabled bit, carried from s3, is the CAM's own (an enable-all of its SRQ by
  // the last commit aside, which the order applies).
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_cam_en: assert property (@(posedge clk_i) disable iff (!chk_q)
    !o_camv || (c4en || en_all4) == cam_en[c4i])
    else $error("tmnic_tm_engine: the CAM candidate's enabled bit differs from the CAM's");
  // The scrubber writes back the commit's (then all-zero) words: never beside a request in s4.
  logic a_v4;   // (Verilator 5.006 cannot select an unpacked array inside an assertion)
  assign a_v4 = v_q[4];
  a_scrub_alone: assert property (@(posedge clk_i) disable iff (!chk_q) !(scr_wr && a_v4))
    else $error("tmnic_tm_engine: a scrubber write beside a commit");
`endif
  always_comb begin
    cam_used_o = '0;
    for (int i = 0; i < int'(CAM_W); i++) cam_used_o += $bits(cam_used_o)'(cam_valid[i]);
  end
endmodule
