// The commit of the tag-matching engine (stage s4 of tmnic_tm_engine): what the request in s4 does,
// decided from the candidates as the stages in front of it delivered them (tmnic_tm_commit_fwd has
// applied the last commit to them) and the winner of the MPI order (tmnic_tm_order).
//
// Its outputs are narrow decisions: write enables and one-hot / enumerated selects of where each
// written word comes from (tmnic_tm_tables builds the words field by field from those selects, so no
// wide value goes through a chain of priority multiplexers), the per-SRQ event (tmnic_tm_srq_state),
// the CAM insert / removal (tmnic_tm_cam), the response, and whether s4 holds.
//
// It also owns s4's sub-states, whose registers only the commit uses:
//   - a lookup whose SRQ has spilled entries holds s4 and scans its spill list, one entry per cycle
//     (X_SCAN), and decides the cycle after the first match (X_DECIDE);
//   - s4 holds on conditions read from registers only (a spill list exists, an ADD may have no
//     way), so that the stage enables do not wait for the last commit to be applied; when the exact
//     condition turns out false (the lookup's SRQ is blocked, the last commit freed a way), the
//     request commits one cycle later (X_PASS);
//   - an ADD whose key finds neither its FIFO nor a free way searches for a bucket occupant that can
//     move to another of its ways (X_CK_*, one step of cuckoo hashing), then places the new key in
//     the occupant's slot (the move is the commit's second slot write, cw2);
//   - a DEL's first pass captures the handle's state at s2 (tmnic_tm_del_cap) and, for an entry in a class
//     FIFO, sends the entry's key through the pipeline again (find_o, RK_FIND), whose commit unlinks it
//     with the neighbours captured with it (ul_*).
module tmnic_tm_commit import tmnic_tm_pkg::*; #(
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
  parameter type prev_t = prev_dflt_t,
  parameter type live_t = live_dflt_t,
  parameter type ent_t  = ent_dflt_t,
  parameter type tup_t  = tup_dflt_t,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned R_W   = SRQ_W + 64 - LB,
  localparam int unsigned CLS_W = (K > 1) ? $clog2(K) : 1,
  localparam int unsigned WAY_W = (D > 1) ? $clog2(D) : 1,
  localparam int unsigned CIW   = (CAM_W > 1) ? $clog2(CAM_W) : 1
) (
  input  logic clk_i,
  input  logic rst_ni,

  // The request in s4 and what the stages delivered for it (last commit applied).
  input  logic                        v4_i,
  input  logic [SRQ_W-1:0]            r3_srq_i,  // (a DEL's liveness is decided in s3)
  input  req_t                        r4_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx4_i,    // its bucket per class and way
  input  tup_t [K-1:0]                t4_i,      // the FIFO of its key per class
  input  logic [D-1:0]                fr4_i,     // free ways of its bucket (ADD's class)
  input  logic                        lv4_i,     // ADD: the handle is live
  input  logic                        ck_may4_i, // ADD: may have no way (registers only)
  input  logic                        blocked4_i,
  input  logic [K+1:0]                win_i,     // MPI-order winner: class heads, CAM (K), spill (K+1)
  input  logic [CIW-1:0]              c4i_i,     // the CAM's oldest hit, and its sequence number
  input  logic [SEQ_W-1:0]            c4s_i,
  input  logic                        cam_free_v_i,  // a free CAM entry (tmnic_tm_cam picks it)
  input  logic [H_W-1:0]              c4h_i,     // the CAM candidate's handle
  // The SRQ of s4 (tmnic_tm_srq_state, before the event), and the disable threshold of s3's SRQ.
  input  logic [H_W-1:0]              cur_sp_head_i,
  input  logic [H_W-1:0]              cur_sp_tail_i,
  input  logic                        cur_sp_nz_i,   // its spill list is not empty
  input  logic                        cur_dis_act_i,
  input  logic [SEQ_W-1:0]            cur_dis_seq_i,
  input  logic                        q_dis_act_i,
  input  logic [SEQ_W-1:0]            q_dis_seq_i,
  input  logic [NUM_SRQ-1:0][GEN_W-1:0] gen_i,
  // Table read data (tmnic_tm_tables): slots (relocation search), the spill entry being scanned
  // (ent, prev, and the chase copy of the link RAM), a DEL's handle at s2 (live, ent, prev, chase).
  input  slot_t [K-1:0][D-1:0]        sl_rdata_i,
  input  ent_t                        en_rdata_i,
  input  prev_t                       pv_rdata_i,
  input  live_t                       lv_rdata_i,
  input  link_t                       chase_i,
  input  logic                        adv_i,     // the pipeline moves (no hold)
  input  logic                        del2_i,    // a DEL is in s2
  // s0's hash units, fed with the relocation candidate during X_CK_H (reloc_hash_o).
  input  logic [K-1:0][D-1:0][LB-1:0] idx0_i,

  output logic                        hold_o,    // s4 keeps its request this cycle
  output logic                        done_o,    // s4's request completes (response, state update)
  output logic                        find_o,    // the DEL in s4 becomes its FIND (find_req_o)
  output req_t                        find_req_o,
  // Class slot write (tmnic_tm_tables builds the word), and what kind of write it is. The word's
  // selects (valid per class, head and tail sources) follow from the request's kind and its
  // candidates, not from the decision: only the enable, class and way wait for the winner.
  output logic                        cw_we_o,
  output logic [CLS_W-1:0]            cw_cls_o,
  output logic [K-1:0][WAY_W-1:0]     cw_way_o,   // per class (cw_cls_o's is written)
  output logic [K-1:0]                cw_v_o,
  output hsrc_e                       cw_hsrc_o,
  output tsrc_e                       cw_tsrc_o,
  output logic                        cw_pop_o,  // a pop: the new head's link comes from the chase read
  output logic                        cw_new_o,  // a new FIFO (its head is the newest entry)
  output logic                        cw_lval_o, // the written head's link is the new entry
  // The relocation: the occupant of way mv_from_o moves to way mv_way_o, bucket mv_idx_o (cw2_we_o).
  output logic                        cw2_we_o,
  output logic [WAY_W-1:0]            mv_from_o,
  output logic [WAY_W-1:0]            mv_way_o,
  output logic [LB-1:0]               mv_idx_o,
  output slot_t                       mv_slot_o,
  output logic                        mv_sel_o,      // s4 is the relocating ADD's commit (registers)
  output logic                        reloc_hash_o,  // s0's hash units serve the relocation search
  output logic [D-1:0]                ck_re_o,       // its slot reads (the request's class)
  output logic [D-1:0][LB-1:0]        ck_raddr_o,
  output logic                        ck_rst_o,      // read s2's slots again (after the search)
  // Link, prev, entry and live writes.
  output logic                        lk_we_o,
  output lasrc_e                      lk_asrc_o,
  output ldsrc_e                      lk_dsrc_o,
  output logic                        pv_we_o,
  output pasrc_e                      pv_asrc_o,
  output pdsrc_e                      pv_dsrc_o,
  output prev_t                       ul_prev_o, // the neighbours of the entry being unlinked
  output link_t                       ul_link_o,
  output logic                        en_we_o,
  output logic                        cl_we_o,   // live bit of handle cl_hdl_o := cl_live_o
  output logic [H_W-1:0]              cl_hdl_o,
  output logic                        cl_live_o,
  // The spill scan's reads (entry scan_addr_o), and its candidate for the order.
  output logic                        scan_rd_o,
  output logic [H_W-1:0]              scan_addr_o,
  output logic                        sp_v_o,
  output logic                        sp_en_o,
  output logic [K:0]                  sp_old_o,  // older than class c (c < K) / the CAM (K)
  // Wildcard CAM.
  output logic                        cam_ins_o,
  output logic                        cam_rm_o,
  output logic [CIW-1:0]              cam_rm_idx_o,
  output logic                        cam_clr_o,
  // Per-SRQ event (tmnic_tm_srq_state; its SRQ, count and sequence number are s4's).
  output logic                        ev_o,
  output logic                        ev_clear_o,
  output logic                        ev_cnt_vld_o,
  output logic                        ev_miss_o,
  output logic                        ev_add_o,
  output logic                        ev_add_cls_o,
  output logic                        ev_rm_o,
  output logic                        ev_rm_dis_o,
  output logic                        ev_rm_cls_o,
  output logic [CLS_W-1:0]            ev_rm_cls_idx_o,
  output logic                        ev_sp_add_o,   // spill list: an entry appended
  output logic                        ev_sp_rm_o,    // ...an entry unlinked
  output logic [H_W-1:0]              ev_sp_head_o,  // ...its head and tail then
  output logic [H_W-1:0]              ev_sp_tail_o,
  // Response (registered by the engine).
  output logic                        rsp_op_o,
  output logic                        rsp_lk_o,
  output logic                        rsp_ok_o,
  output logic                        rsp_hit_o,
  output logic                        rsp_unexp_o,
  output logic                        rsp_blocked_o,
  output logic [H_W-1:0]              rsp_hdl_o
);
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0 || K < 1 || D < 1 || (D & (D - 1)) != 0 ||
      LB < 1 || H_W < 1 || CAM_W < 1 || SEQ_W < 2 || GEN_W < 1) begin : g_chk_geom
    $fatal(1, "tmnic_tm_commit: geometry out of range (tmnic_tm_engine checks the same, tighter)");
  end
  if ($bits(req_t) != $bits(rkind_e) + SRQ_W + H_W + 1 + 16 + 1 + 1 + CLS_W + 128 ||
      $bits(slot_t) != 1 + GEN_W + R_W + 2 * H_W + SEQ_W || $bits(link_t) != H_W + SEQ_W ||
      $bits(prev_t) != 1 + H_W || $bits(live_t) != 1 + GEN_W + SRQ_W + $bits(loc_e) + CLS_W + CIW ||
      $bits(ent_t) != SEQ_W + 128 || $bits(tup_t) != 1 + WAY_W + 2 * H_W + SEQ_W) begin : g_chk_types
    $fatal(1, "tmnic_tm_commit: a type parameter does not match the widths of the value parameters");
  end

  // s4 sub-states: a lookup whose SRQ has spilled entries scans them; an ADD without a free way
  // searches for a relocation (X_CK_*).
  typedef enum logic [3:0] {X_START, X_SCAN, X_DECIDE, X_CK_OCC, X_CK_H, X_CK_RD, X_CK_CHK, X_CK_SEL,
                            X_CK_RST, X_CK_DONE, X_PASS} xst_e;

  function automatic logic seq_older(logic [SEQ_W-1:0] a, logic [SEQ_W-1:0] b);
    logic [SEQ_W-1:0] d;
    d = a - b;
    return d[SEQ_W-1];
  endfunction

  xst_e            xs_q, xs_d;
  logic [H_W-1:0]  sc_p_q, sc_p_d;         // spill entry being read
  logic            sc_v_q, sc_v_d;         // spill candidate found
  logic [H_W-1:0]  sc_h_q, sc_h_d;
  logic [SEQ_W-1:0] sc_seq_q, sc_seq_d;
  logic            sp_en_q, sp_en_d;
  logic [K:0]      sp_old_q, sp_old_d;
  // Relocation search of an ADD (X_CK_*): the occupants of its buckets, the one being tried, its
  // buckets in the other ways, the free way found.
  slot_t [D-1:0]             ck_occ_q, ck_occ_d;
  slot_t                     ck_mv_q, ck_mv_d;   // ck_occ_q[ck_w_q], registered: it feeds s0's hash units
  logic [WAY_W-1:0]          ck_w_q, ck_w_d, ck_x_q, ck_x_d;
  logic [D-1:0]              ck_fr_q, ck_fr_d;   // the free ones among its other ways
  logic [D-1:0][LB-1:0]      ck_alt_q, ck_alt_d;
  logic                      ck_found_q, ck_found_d;
  // The neighbours (prev record, link) of the entry a commit unlinks from its list: captured by a
  // DEL at s2, or by the spill scan at its match. Never both in flight: a DEL runs alone, and the
  // scan holds s4 (no DEL moves meanwhile).
  prev_t ul_prev_q, ul_prev_d;
  link_t ul_link_q, ul_link_d;

  // DEL pass 1: the handle's state, held from s2 of the DEL to the end of its FIND.
  loc_e           ser_loc;
  logic [CIW-1:0] ser_cam;
  logic           ser_ok, ser_dis;
  tmnic_tm_del_cap #(.NUM_SRQ(NUM_SRQ), .CAM_W(CAM_W), .SEQ_W(SEQ_W), .GEN_W(GEN_W), .req_t(req_t),
      .live_t(live_t), .ent_t(ent_t)) u_del (
    .clk_i, .adv_i, .del2_i, .lv_rdata_i, .en_rdata_i, .q_dis_act_i, .q_dis_seq_i, .r3_srq_i, .v4_i, .r4_i,
    .gen_i,
    .loc_o(ser_loc), .cam_o(ser_cam), .ok_o(ser_ok), .dis_o(ser_dis), .find_req_o);

  logic [CLS_W-1:0] win_cls;   // the class whose head a lookup takes
  logic             sp_unlink; // a spill entry leaves its list: ul_hdl
  logic [H_W-1:0]   ul_hdl;
  assign ul_hdl = (r4_i.kind == RK_LK) ? sc_h_q : r4_i.hdl;
  always_comb begin
    win_cls = '0;
    for (int c = int'(K) - 1; c >= 0; c--) if (win_i[c]) win_cls = CLS_W'(c);
  end

  // Whether s4 holds (and so whether every stage moves) from registers only, flat, not out of the
  // decision's if-chains below, which make the same choice (hold_c, done_c; asserted equal). A lookup
  // of an SRQ with a spill list, and an ADD that may find no way (ck_may4_i, a superset computed
  // from registers), hold in X_START; the exact conditions (the SRQ not blocked; no FIFO and no free
  // way once the last commit is applied, the handle not live) then choose the sub-state: the scan
  // or the relocation search, or X_PASS to commit in the next cycle.
  logic sc_may, ck_may;       // s4 holds in X_START
  logic sc_start, ck_start;   // a lookup starts its spill scan, an ADD its relocation search
  logic hold_c, done_c;
  assign sc_may   = cur_sp_nz_i && xs_q == X_START;
  assign ck_may   = D > 1 && xs_q == X_START && ck_may4_i;
  assign sc_start = sc_may && !blocked4_i;
  assign ck_start = D > 1 && xs_q == X_START && !lv4_i && r4_i.has_cls && !t4_i[r4_i.cls].v &&
                    fr4_i == '0;
  assign hold_o   = v4_i && (r4_i.kind == RK_LK && (sc_may || xs_q == X_SCAN) ||
                             r4_i.kind == RK_ADD && (ck_may || xs_q inside {X_CK_OCC, X_CK_H, X_CK_RD,
                                                                           X_CK_CHK, X_CK_SEL, X_CK_RST}));
  assign done_o   = v4_i && !hold_o;

  // The slot word of each class and the way written, beside the decision (only the enables wait
  // for the winner).
  logic fw_v;   // ADD: a free way for a new FIFO
  tmnic_tm_commit_word #(.K(K), .D(D), .H_W(H_W), .SEQ_W(SEQ_W), .req_t(req_t), .tup_t(tup_t)) u_word (
    .v4_i, .r4_i, .t4_i, .fr4_i, .reloc_done_i(xs_q == X_CK_DONE && ck_found_q), .reloc_way_i(ck_w_q),
    .ul_head_i(!ul_prev_q.hp), .fw_v_o(fw_v), .cw_way_o, .cw_v_o, .cw_hsrc_o, .cw_tsrc_o);

  always_comb begin
    logic             t_v, t_one;   // the request's class: a FIFO of its key, of one entry
    logic             is_tail;      // FIND: the entry is its FIFO's tail
    t_v     = t4_i[r4_i.cls].v;
    t_one   = t4_i[r4_i.cls].h1 == t4_i[r4_i.cls].tail;
    is_tail = r4_i.hdl == t4_i[r4_i.cls].tail;
    // defaults
    xs_d = xs_q; sc_p_d = sc_p_q; sc_v_d = sc_v_q; sc_h_d = sc_h_q; sc_seq_d = sc_seq_q;
    ul_prev_d = ul_prev_q; ul_link_d = ul_link_q; sp_en_d = sp_en_q; sp_old_d = sp_old_q;
    sp_unlink = 1'b0;
    ck_occ_d = ck_occ_q; ck_w_d = ck_w_q; ck_x_d = ck_x_q; ck_alt_d = ck_alt_q; ck_found_d = ck_found_q;
    ck_fr_d = ck_fr_q;
    ck_re_o = '0; ck_raddr_o = '0; ck_rst_o = 1'b0;
    hold_c = 1'b0; done_c = 1'b0; find_o = 1'b0;
    cw_we_o = 1'b0; cw_cls_o = r4_i.cls;
    cw_pop_o = 1'b0; cw_new_o = 1'b0; cw_lval_o = 1'b0; cw2_we_o = 1'b0;
    cam_rm_o = 1'b0; cam_ins_o = 1'b0; cam_rm_idx_o = c4i_i;
    cl_we_o = 1'b0; cl_live_o = 1'b0;
    lk_we_o = 1'b0; lk_asrc_o = LA_TAIL; lk_dsrc_o = LD_NEW;
    pv_we_o = 1'b0; pv_asrc_o = PA_HDL; pv_dsrc_o = PD_HEAD;
    en_we_o = 1'b0;
    cam_clr_o = 1'b0;
    ev_o = 1'b0; ev_clear_o = 1'b0; ev_cnt_vld_o = 1'b0; ev_miss_o = 1'b0;
    ev_add_o = 1'b0; ev_add_cls_o = 1'b0;
    ev_rm_o = 1'b0; ev_rm_dis_o = 1'b0; ev_rm_cls_o = 1'b0; ev_rm_cls_idx_o = r4_i.cls;
    ev_sp_add_o = 1'b0; ev_sp_rm_o = 1'b0;
    ev_sp_head_o = cur_sp_head_i; ev_sp_tail_o = cur_sp_tail_i;
    rsp_op_o = 1'b0; rsp_lk_o = 1'b0; rsp_ok_o = 1'b0;
    rsp_hit_o = 1'b0; rsp_unexp_o = 1'b0; rsp_blocked_o = 1'b0;

    if (v4_i) begin
      unique case (r4_i.kind)
        // ------------------------------------------------ lookup
        RK_LK: begin
          if (sc_may && !sc_start) begin
            hold_c = 1'b1;
            xs_d   = X_PASS;   // blocked: no scan, the response next cycle
          end else if (sc_start) begin
            // Scan the spill list from its head (the class heads' chase link is captured first).
            hold_c = 1'b1;
            xs_d   = X_SCAN;
            sc_p_d = cur_sp_head_i;
            sc_v_d = 1'b0;
          end else if (xs_q == X_SCAN) begin
            hold_c = 1'b1;
            // Entry sc_p_q: its data is on the RAM outputs now (read at the last edge).
            if (((en_rdata_i.mtag ^ r4_i.tag) & en_rdata_i.mask) == 64'd0) begin
              sc_v_d    = 1'b1;
              sc_h_d    = sc_p_q;
              sc_seq_d  = en_rdata_i.seq;
              // Its order against the other candidates, for the decision next cycle.
              sp_en_d = !cur_dis_act_i || seq_older(en_rdata_i.seq, cur_dis_seq_i);
              for (int c = 0; c < int'(K); c++) sp_old_d[c] = seq_older(en_rdata_i.seq, t4_i[c].s1);
              sp_old_d[K] = seq_older(en_rdata_i.seq, c4s_i);
              ul_prev_d = pv_rdata_i;
              ul_link_d = chase_i;
              xs_d      = X_DECIDE;
            end else if (sc_p_q != cur_sp_tail_i) begin
              sc_p_d = chase_i.n1;
            end else begin
              xs_d = X_DECIDE;
            end
          end else begin
            done_c   = 1'b1;
            xs_d     = X_START;
            ev_o     = 1'b1;
            rsp_lk_o = 1'b1;
            rsp_blocked_o = blocked4_i;
            rsp_hit_o = !blocked4_i && win_i != '0;
            if (rsp_hit_o) begin
              ev_rm_o = 1'b1;
              cl_we_o = 1'b1;
              if (win_i[K-1:0] != '0) begin
                // Pop the FIFO of class win_cls: the new head is the old head's next.
                cw_we_o         = 1'b1;
                cw_cls_o        = win_cls;
                cw_pop_o        = 1'b1;
                pv_we_o         = cw_v_o[win_cls];
                pv_asrc_o       = PA_LNK;
                pv_dsrc_o       = PD_HEAD;
                ev_rm_cls_o     = 1'b1;
                ev_rm_cls_idx_o = win_cls;
              end
              if (win_i[K]) cam_rm_o = 1'b1;
              if (win_i[K+1]) sp_unlink = 1'b1;   // the spill entry sc_h_q
            end else if (!blocked4_i && r4_i.commit_miss) begin
              ev_miss_o   = 1'b1;
              rsp_unexp_o = 1'b1;
            end
          end
        end
        // ------------------------------------------------ ADD
        RK_ADD: begin
          // No free way for a new key: look for an occupant that can move to another of its ways
          // (one step of cuckoo hashing), reading the tables while the pipeline waits.
          if (ck_may && !ck_start) begin
            hold_c = 1'b1;
            xs_d   = X_PASS;   // the last commit left it a way (or the handle is live)
          end else if (ck_start) begin
            hold_c = 1'b1;
            xs_d   = X_CK_OCC;
            for (int w = 0; w < int'(D); w++) begin
              ck_re_o[w]    = 1'b1;
              ck_raddr_o[w] = idx4_i[r4_i.cls][w];
            end
          end else if (xs_q == X_CK_OCC) begin
            hold_c = 1'b1;
            xs_d   = X_CK_H;
            ck_w_d = '0;
            for (int w = 0; w < int'(D); w++) ck_occ_d[w] = sl_rdata_i[r4_i.cls][w];
          end else if (xs_q == X_CK_H) begin
            // The occupant of way ck_w_q sits at bucket idx = L ^ H_w(R): its bucket in way x is
            // idx ^ H_w(R) ^ H_x(R) (hash units fed with its R, index bits 0).
            hold_c = 1'b1;
            xs_d   = X_CK_RD;
            for (int x = 0; x < int'(D); x++)
              ck_alt_d[x] = idx4_i[r4_i.cls][ck_w_q] ^ idx0_i[r4_i.cls][ck_w_q] ^ idx0_i[r4_i.cls][x];
          end else if (xs_q == X_CK_RD) begin
            // Those buckets are read from registers (the hash stays out of the RAM address path).
            hold_c = 1'b1;
            xs_d   = X_CK_CHK;
            for (int x = 0; x < int'(D); x++) begin
              if (WAY_W'(x) != ck_w_q) begin
                ck_re_o[x]    = 1'b1;
                ck_raddr_o[x] = ck_alt_q[x];
              end
            end
          end else if (xs_q == X_CK_CHK) begin
            // Its other ways' words are on the RAM outputs: which are free is registered (the choice
            // of one, next cycle, stays out of the RAM's output path).
            hold_c = 1'b1;
            xs_d   = X_CK_SEL;
            for (int x = 0; x < int'(D); x++)
              ck_fr_d[x] = WAY_W'(x) != ck_w_q && (!sl_rdata_i[r4_i.cls][x].v ||
                           sl_rdata_i[r4_i.cls][x].gen != gen_i[sl_rdata_i[r4_i.cls][x].kr[R_W-1 -: SRQ_W]]);
          end else if (xs_q == X_CK_SEL) begin
            hold_c = 1'b1;
            for (int x = int'(D) - 1; x >= 0; x--) begin
              if (ck_fr_q[x]) begin
                ck_x_d     = WAY_W'(x);
                ck_found_d = 1'b1;
              end
            end
            if (ck_found_d || ck_w_q == WAY_W'(D - 1)) xs_d = X_CK_RST;
            else begin
              ck_w_d = ck_w_q + 1'b1;
              xs_d   = X_CK_H;
            end
          end else if (xs_q == X_CK_RST) begin
            // Read the words of the request in s2 again: they are on the RAM outputs at the commit.
            hold_c   = 1'b1;
            xs_d     = X_CK_DONE;
            ck_rst_o = 1'b1;
          end else begin
            done_c       = 1'b1;
            ev_o         = 1'b1;
            xs_d         = X_START;
            ck_found_d   = 1'b0;
            ev_cnt_vld_o = r4_i.cnt_vld;
            rsp_op_o     = 1'b1;
            rsp_ok_o     = !lv4_i;
            if (xs_q == X_CK_DONE && ck_found_q) begin
              // The occupant moves to way ck_x_q; the new key takes its slot.
              cw2_we_o = 1'b1;
            end
            if (!lv4_i) begin
              ev_add_o  = 1'b1;
              cl_we_o   = 1'b1;
              cl_live_o = 1'b1;
              en_we_o   = 1'b1;
              pv_we_o   = 1'b1;
              pv_asrc_o = PA_HDL;
              if (r4_i.has_cls && t_v) begin
                // Append to the key's FIFO.
                ev_add_cls_o = 1'b1;
                cw_we_o   = 1'b1;
                cw_lval_o = t_one;   // the head's next is the new entry
                lk_we_o   = 1'b1;
                lk_asrc_o = LA_TAIL;
                pv_dsrc_o = PD_TAIL;
              end else if (r4_i.has_cls && fw_v) begin
                // A new FIFO in a free way of the key's bucket.
                ev_add_cls_o = 1'b1;
                cw_we_o   = 1'b1;
                cw_new_o  = 1'b1;
                cw_lval_o = 1'b1;
                pv_dsrc_o = PD_HEAD;
              end else if (cam_free_v_i) begin
                cam_ins_o = 1'b1;
              end else begin
                // Spill: append to the SRQ's list.
                ev_sp_add_o  = 1'b1;
                ev_sp_tail_o = r4_i.hdl;
                if (!cur_sp_nz_i) begin
                  ev_sp_head_o = r4_i.hdl;
                  pv_dsrc_o    = PD_HEAD;
                end else begin
                  pv_dsrc_o = PD_SPT;
                  lk_we_o   = 1'b1;
                  lk_asrc_o = LA_SPT;
                end
              end
            end
          end
        end
        // ------------------------------------------------ SYNC
        RK_SYNC: begin
          done_c       = 1'b1;
          ev_o         = 1'b1;
          ev_cnt_vld_o = r4_i.cnt_vld;
          rsp_op_o     = 1'b1;
          rsp_ok_o     = 1'b1;
        end
        // ------------------------------------------------ DEL, pass 1: the handle's state
        RK_DEL: begin
          done_c = 1'b1;
          if (ser_ok && ser_loc == LOC_CLS) begin
            find_o = 1'b1;   // find the FIFO: the entry's key goes through the pipeline again
          end else begin
            ev_o         = 1'b1;
            ev_cnt_vld_o = r4_i.cnt_vld;
            rsp_op_o     = 1'b1;
            rsp_ok_o     = ser_ok;
            if (ser_ok) begin
              ev_rm_o     = 1'b1;
              ev_rm_dis_o = ser_dis;
              cl_we_o     = 1'b1;
              if (ser_loc == LOC_CAM) begin
                cam_rm_o     = 1'b1;
                cam_rm_idx_o = ser_cam;
              end else begin
                sp_unlink = 1'b1;   // the spill entry r4_i.hdl
              end
            end
          end
        end
        // ------------------------------------------------ DEL, pass 2: unlink from the FIFO
        RK_FIND: begin
          done_c       = 1'b1;
          ev_o         = 1'b1;
          ev_cnt_vld_o = r4_i.cnt_vld;
          ev_rm_o      = 1'b1;
          ev_rm_dis_o  = ser_dis;
          ev_rm_cls_o  = 1'b1;
          rsp_op_o     = 1'b1;
          rsp_ok_o     = 1'b1;
          cl_we_o      = 1'b1;
          if (!ul_prev_q.hp) begin
            // The head: its next becomes the head.
            cw_we_o   = 1'b1;
            pv_we_o   = !is_tail;
            pv_asrc_o = PA_UL;
            pv_dsrc_o = PD_HEAD;
          end else begin
            lk_we_o   = 1'b1;
            lk_asrc_o = LA_ULP;
            lk_dsrc_o = LD_UL;
            if (!is_tail) begin
              pv_we_o   = 1'b1;
              pv_asrc_o = PA_UL;
              pv_dsrc_o = PD_UL;
            end else begin
              cw_we_o   = 1'b1;
            end
          end
        end
        // ------------------------------------------------ CLEAR: O(1), a new generation
        default: begin
          done_c     = 1'b1;
          ev_o       = 1'b1;
          ev_clear_o = 1'b1;
          cam_clr_o  = 1'b1;
          rsp_op_o   = 1'b1;
          rsp_ok_o   = 1'b1;
        end
      endcase
    end
    // Unlink a spill entry (consumed by a lookup, or deleted) from its SRQ's list.
    if (sp_unlink) begin
      ev_sp_rm_o  = 1'b1;
      if (!ul_prev_q.hp) ev_sp_head_o = ul_link_q.n1;
      else begin
        lk_we_o   = 1'b1;
        lk_asrc_o = LA_ULP;
        lk_dsrc_o = LD_UL;
      end
      if (ul_hdl != cur_sp_tail_i) begin
        pv_we_o   = 1'b1;
        pv_asrc_o = PA_UL;
        pv_dsrc_o = PD_UL;
      end else ev_sp_tail_o = ul_prev_q.p;
    end
  end

  // The matched handle: an AND-OR over the winner (one-hot, or zero: then 0), whose candidates'
  // handles are all at hand (the CAM's read in s3); the live write's address is this or the op's.
  always_comb begin
    rsp_hdl_o = win_i[K] ? c4h_i : '0;
    if (win_i[K+1]) rsp_hdl_o |= sc_h_q;
    for (int c = 0; c < int'(K); c++) if (win_i[c]) rsp_hdl_o |= t4_i[c].h1;
  end
  assign cl_hdl_o = (r4_i.kind == RK_LK) ? rsp_hdl_o : r4_i.hdl;
  assign mv_from_o     = ck_w_q;
  assign mv_way_o      = ck_x_q;
  assign mv_idx_o      = ck_alt_q[ck_x_q];
  always_comb begin  // (changes only where ck_occ_d or ck_w_d do: one mux less in simulation)
    // (the first occupant straight from the RAM, the next one from ck_occ_q: no mux behind a mux)
    ck_mv_d = ck_mv_q;
    if (xs_q == X_CK_OCC) ck_mv_d = sl_rdata_i[r4_i.cls][0];
    else if (xs_q == X_CK_SEL && ck_w_d != ck_w_q) ck_mv_d = ck_occ_q[ck_w_d];
  end
  assign mv_slot_o     = ck_mv_q;
  assign mv_sel_o      = xs_q == X_CK_DONE && ck_found_q;
  assign reloc_hash_o  = xs_q == X_CK_H;
  // The scan reads the next entry in every cycle of X_SCAN, also the cycle that finds a match or
  // reaches the tail (a read nobody uses): its address is then the link RAM's output, not the
  // outcome of the entry's compare.
  assign scan_rd_o     = v4_i && r4_i.kind == RK_LK && (sc_start || xs_q == X_SCAN);
  assign scan_addr_o   = sc_start ? cur_sp_head_i : chase_i.n1;
  assign sp_v_o        = v4_i && r4_i.kind == RK_LK && xs_q == X_DECIDE && sc_v_q;
  assign sp_en_o       = sp_en_q;
  assign sp_old_o      = sp_old_q;
  assign ul_prev_o     = ul_prev_q;
  assign ul_link_o     = ul_link_q;

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      xs_q       <= X_START;
      ck_found_q <= 1'b0;
    end else begin
      xs_q       <= xs_d;
      ck_found_q <= ck_found_d;
    end
  end
  // Meaningful only in the sub-states that set them: no reset.
  always_ff @(posedge clk_i) begin
    sc_p_q <= sc_p_d; sc_v_q <= sc_v_d; sc_h_q <= sc_h_d; sc_seq_q <= sc_seq_d;
    ul_prev_q <= ul_prev_d; ul_link_q <= ul_link_d; sp_en_q <= sp_en_d; sp_old_q <= sp_old_d;
    ck_occ_q <= ck_occ_d; ck_mv_q <= ck_mv_d; ck_w_q <= ck_w_d; ck_x_q <= ck_x_d; ck_alt_q <= ck_alt_d;
    ck_fr_q  <= ck_fr_d;
    if (adv_i && del2_i) begin  // DEL pass 1: its neighbours arrive at s2 with its state (u_del)
      ul_prev_q <= pv_rdata_i;   // (scan: never in the same cycle, s4 holds)
      ul_link_q <= chase_i;
    end
  end

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // s4's request either holds or completes, every cycle it is there; a sub-state keeps it there.
  a_hold_xor_done: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(hold_o && done_o) && (hold_o || done_o) == v4_i && (xs_q == X_START || v4_i))
    else $error("tmnic_tm_commit: s4 holds and completes, or neither, or a sub-state without a request");
  // The tables take a relocation's write address and word from mv_sel_o, a register.
  a_mv_sel: assert property (@(posedge clk_i) disable iff (!chk_q) cw2_we_o == mv_sel_o)
    else $error("tmnic_tm_commit: the relocation's write and mv_sel_o differ");
  a_hold_flat: assert property (@(posedge clk_i) disable iff (!chk_q)
    hold_o == hold_c && done_o == done_c)
    else $error("tmnic_tm_commit: the flat hold / done differ from the decision's");
  a_hold_superset: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(ck_start && !ck_may)) else $error("tmnic_tm_commit: an ADD needs a relocation its hold missed");
  a_mv_slot: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(xs_q inside {X_CK_H, X_CK_RD, X_CK_CHK, X_CK_SEL, X_CK_RST, X_CK_DONE}) || ck_mv_q == ck_occ_q[ck_w_q])
    else $error("tmnic_tm_commit: the registered relocation candidate is not the occupant tried");
  a_tail_sel_add: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(lk_we_o && lk_asrc_o == LA_TAIL || pv_we_o && pv_dsrc_o == PD_TAIL) || r4_i.kind == RK_ADD)
    else $error("tmnic_tm_commit: a link / prev write from the FIFO's tail by other than an ADD");
  a_scan_no_pop: assert property (@(posedge clk_i) disable iff (!chk_q) !(scan_rd_o && cw_pop_o))
    else $error("tmnic_tm_commit: the spill scan and a pop share the chase read");
  a_find_from_del: assert property (@(posedge clk_i) disable iff (!chk_q)
    !find_o || (v4_i && r4_i.kind == RK_DEL)) else $error("tmnic_tm_commit: a FIND from no DEL");
`endif
endmodule
