// The tables of the tag-matching engine (tmnic_tm_engine) in block RAM, their ports, and the words
// the commit writes.
//
//   slot  per class and way, N_BUCKETS slots: the FIFO of one key {v, gen, R, head, tail, head seq}
//   link  per handle {next, next's seq}, K + 1 copies with one write port: copy c reads the head of
//         class c for the request moving into s4, copy K (the chase) reads the new head after a pop,
//         a DEL's handle at s1 and the spill list during a scan
//   prev  per handle: the previous entry of its list (none for a head)
//   live  per handle {live, gen, srq, where it is}
//   ent   per handle {seq, tag & mask, mask}: what a spill scan compares, and a DEL's key
//
// Read ports: the pipeline (slot words of s1's buckets, s1's handle, s3's class heads), the commit's
// sub-states (the relocation search re-reads slots, the spill scan reads its entries), and the
// scrubber (tmnic_tm_scrub) in cycles with no request in s0..s4. Write ports: the commit, or the
// scrubber's write-back of stale words as empty. The commit's words are built here field by field
// from the selects of tmnic_tm_commit, so no wide value goes through a chain of priority
// multiplexers. The RAMs have no read-first logic (READ_FIRST 0): a read of a word the commit writes
// in the same cycle returns an undefined word, which tmnic_tm_commit_fwd replaces by the written one.
module tmnic_tm_tables import tmnic_tm_pkg::*; #(
  parameter int unsigned N_ENTRIES = 1024,
  parameter int unsigned NUM_SRQ   = 16,
  parameter int unsigned K         = 2,     // mask classes
  parameter int unsigned D         = 4,     // ways per class
  parameter int unsigned N_BUCKETS = 512,
  parameter int unsigned CAM_W     = 32,
  parameter int unsigned SEQ_W     = 62,
  parameter int unsigned GEN_W     = 2,
  // tmnic_tm_engine's types (tmnic_tm_pkg: the defaults are those at its default parameters).
  parameter type req_t  = req_dflt_t,
  parameter type slot_t = slot_dflt_t,
  parameter type link_t = link_dflt_t,
  parameter type prev_t = prev_dflt_t,
  parameter type live_t = live_dflt_t,
  parameter type ent_t  = ent_dflt_t,
  parameter type tup_t  = tup_dflt_t,
  localparam int unsigned N     = N_ENTRIES,
  localparam int unsigned B     = N_BUCKETS,
  localparam int unsigned H_W   = $clog2(N),
  localparam int unsigned LB    = $clog2(B),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned R_W   = SRQ_W + 64 - LB,
  localparam int unsigned CLS_W = (K > 1) ? $clog2(K) : 1,
  localparam int unsigned WAY_W = (D > 1) ? $clog2(D) : 1,
  localparam int unsigned CIW   = (CAM_W > 1) ? $clog2(CAM_W) : 1,
  localparam int unsigned SW_AW = $clog2((B > N) ? B : N)   // scrubber addresses
) (
  input  logic clk_i,

  // Pipeline reads: s1's buckets and handle, s2's buckets again (ck_rst_i), s3's class heads.
  input  logic                        adv_i,
  input  logic                        v1_i,
  input  req_t                        r1_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx1_i,
  input  logic                        v2_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx2_i,
  input  logic                        v3_i,
  input  tup_t [K-1:0]                t3_i,

  // The commit (s4): its request, candidates and state, and tmnic_tm_commit's decisions.
  input  logic                        v4_i,
  input  req_t                        r4_i,
  input  logic [K-1:0][D-1:0][LB-1:0] idx4_i,
  input  logic [K-1:0][R_W-1:0]       kr4_i,
  input  tup_t [K-1:0]                t4_i,
  input  link_t [K-1:0]               lnk4_i,
  input  logic [SEQ_W-1:0]            seq_i,        // the next sequence number (an ADD's)
  input  logic [NUM_SRQ-1:0][GEN_W-1:0] gen_i,
  input  logic [H_W-1:0]              cur_sp_tail_i,
  input  logic                        cw_we_i,
  input  logic [CLS_W-1:0]            cw_cls_i,
  input  logic [K-1:0][WAY_W-1:0]     cw_way_i,   // per class (cw_cls_i's is written)
  input  logic [K-1:0]                cw_v_i,
  input  hsrc_e                       cw_hsrc_i,
  input  tsrc_e                       cw_tsrc_i,
  input  logic                        cw_pop_i,
  input  logic                        cw2_we_i,
  input  logic [WAY_W-1:0]            mv_way_i,
  input  logic [LB-1:0]               mv_idx_i,
  input  slot_t                       mv_slot_i,
  input  logic                        mv_sel_i,     // the commit of s4 is a relocation (registers)
  input  logic [D-1:0]                ck_re_i,
  input  logic [D-1:0][LB-1:0]        ck_raddr_i,
  input  logic                        ck_rst_i,
  input  logic                        lk_we_i,
  input  lasrc_e                      lk_asrc_i,
  input  ldsrc_e                      lk_dsrc_i,
  input  logic                        pv_we_i,
  input  pasrc_e                      pv_asrc_i,
  input  pdsrc_e                      pv_dsrc_i,
  input  prev_t                       ul_prev_i,
  input  link_t                       ul_link_i,
  input  logic                        en_we_i,
  input  logic                        cl_we_i,
  input  logic [H_W-1:0]              cl_hdl_i,
  input  logic                        cl_live_i,
  input  logic                        cam_ins_i,
  input  logic [CIW-1:0]              cam_ins_idx_i,
  input  logic                        scan_rd_i,
  input  logic [H_W-1:0]              scan_addr_i,

  // The scrubber.
  input  logic                        scr_rd_i,
  input  logic [SW_AW-1:0]            scr_rd_addr_i,
  input  logic                        scr_wr_i,
  input  logic [SW_AW-1:0]            scr_wr_addr_i,
  input  logic                        scr_init_i,

  // Read data (registered in the RAMs: the cycle after the read).
  output slot_t [K-1:0][D-1:0]        sl_rdata_o,
  output link_t [K:0]                 lk_rdata_o,
  output prev_t                       pv_rdata_o,
  output live_t                       lv_rdata_o,
  output ent_t                        en_rdata_o,
  // The commit's slot word (recorded by tmnic_tm_commit_fwd), and the link of a FIFO head whose next
  // is the new entry.
  output slot_t [K-1:0]               cw_data_o,   // the commit's word for each class
  output link_t                       cw_link_o
);
  if (N < 2 || (N & (N - 1)) != 0 || B < 2 || (B & (B - 1)) != 0 || NUM_SRQ < 2 ||
      (NUM_SRQ & (NUM_SRQ - 1)) != 0 || K < 1 || D < 1 || (D & (D - 1)) != 0 || CAM_W < 1 ||
      SEQ_W < 2 || GEN_W < 1) begin : g_chk_geom
    $fatal(1, "tmnic_tm_tables: geometry out of range (tmnic_tm_engine checks the same, tighter)");
  end
  if ($bits(req_t) != $bits(rkind_e) + SRQ_W + H_W + 1 + 16 + 1 + 1 + CLS_W + 128 ||
      $bits(slot_t) != 1 + GEN_W + R_W + 2 * H_W + SEQ_W || $bits(link_t) != H_W + SEQ_W ||
      $bits(prev_t) != 1 + H_W || $bits(live_t) != 1 + GEN_W + SRQ_W + $bits(loc_e) + CLS_W + CIW ||
      $bits(ent_t) != SEQ_W + 128 || $bits(tup_t) != 1 + WAY_W + 2 * H_W + SEQ_W) begin : g_chk_types
    $fatal(1, "tmnic_tm_tables: a type parameter does not match the widths of the value parameters");
  end

  localparam int unsigned NR = K + 1;   // link-RAM copies: one per class + the chase

  logic [K-1:0][D-1:0]          sl_re, sl_we;
  logic [K-1:0][D-1:0][LB-1:0]  sl_raddr, sl_waddr;
  slot_t [K-1:0][D-1:0]         sl_wdata;
  logic [NR-1:0]                lk_re;
  logic [NR-1:0][H_W-1:0]       lk_raddr;
  logic [H_W-1:0]               lk_waddr;
  link_t                        lk_wdata;
  logic                         pv_re, lv_re, lv_we, en_re;
  logic [H_W-1:0]               pv_raddr, pv_waddr, lv_raddr, lv_waddr, en_raddr, en_waddr;
  prev_t                        pv_wdata;
  live_t                        lv_wdata;
  ent_t                         en_wdata;

  for (genvar c = 0; c < int'(K); c++) begin : g_cls
    for (genvar w = 0; w < int'(D); w++) begin : g_way
      tmnic_ram_sdp #(.READ_FIRST(1'b0), .WIDTH($bits(slot_t)), .DEPTH(B)) u_slot (
        .clk_i, .we_i(sl_we[c][w]), .waddr_i(sl_waddr[c][w]), .wdata_i(sl_wdata[c][w]),
        .re_i(sl_re[c][w]), .raddr_i(sl_raddr[c][w]), .rdata_o(sl_rdata_o[c][w]));
    end
  end
  for (genvar r = 0; r < int'(NR); r++) begin : g_link
    tmnic_ram_sdp #(.READ_FIRST(1'b0), .WIDTH($bits(link_t)), .DEPTH(N)) u_link (
      .clk_i, .we_i(lk_we_i), .waddr_i(lk_waddr), .wdata_i(lk_wdata),
      .re_i(lk_re[r]), .raddr_i(lk_raddr[r]), .rdata_o(lk_rdata_o[r]));
  end
  tmnic_ram_sdp #(.READ_FIRST(1'b0), .WIDTH($bits(prev_t)), .DEPTH(N)) u_prev (
    .clk_i, .we_i(pv_we_i), .waddr_i(pv_waddr), .wdata_i(pv_wdata),
    .re_i(pv_re), .raddr_i(pv_raddr), .rdata_o(pv_rdata_o));
  tmnic_ram_sdp #(.READ_FIRST(1'b0), .WIDTH($bits(live_t)), .DEPTH(N)) u_live (
    .clk_i, .we_i(lv_we), .waddr_i(lv_waddr), .wdata_i(lv_wdata),
    .re_i(lv_re), .raddr_i(lv_raddr), .rdata_o(lv_rdata_o));
  tmnic_ram_sdp #(.READ_FIRST(1'b0), .WIDTH($bits(ent_t)), .DEPTH(N)) u_ent (
    .clk_i, .we_i(en_we_i), .waddr_i(en_waddr), .wdata_i(en_wdata),
    .re_i(en_re), .raddr_i(en_raddr), .rdata_o(en_rdata_o));

  // ---------------------------------------------------------------- the commit's words
  // One word per class, built as if that class were written: which class is (the winner of a
  // lookup) only enables the write, so the decision stays out of the RAMs' data inputs.
  // The tail of the ADD's FIFO (its class is the request's own): where an append links the new
  // entry and what its prev record points to. Only an ADD writes with these selects (a lookup's
  // link and prev writes use the unlinked entry's neighbours or the popped head's link), so the
  // winner's class stays out of the link RAM's write address.
  logic [H_W-1:0]   cw_t_tail;
  assign cw_t_tail = t4_i[r4_i.cls].tail;
  always_comb begin
    cw_data_o = '0;
    for (int c = 0; c < int'(K); c++) if (v4_i) begin  // (built only for a request, in simulation)
      cw_data_o[c].v   = cw_v_i[c];
      cw_data_o[c].gen = gen_i[r4_i.srq];
      cw_data_o[c].kr  = kr4_i[c];
      unique case (cw_hsrc_i)
        HS_LINK: begin cw_data_o[c].h1 = lnk4_i[c].n1; cw_data_o[c].s1 = lnk4_i[c].ns; end
        HS_NEW:  begin cw_data_o[c].h1 = r4_i.hdl;     cw_data_o[c].s1 = seq_i;        end
        HS_UL:   begin cw_data_o[c].h1 = ul_link_i.n1; cw_data_o[c].s1 = ul_link_i.ns; end
        default: begin cw_data_o[c].h1 = t4_i[c].h1;   cw_data_o[c].s1 = t4_i[c].s1;   end
      endcase
      unique case (cw_tsrc_i)
        TS_HDL:  cw_data_o[c].tail = r4_i.hdl;
        TS_UL:   cw_data_o[c].tail = ul_prev_i.p;
        default: cw_data_o[c].tail = t4_i[c].tail;
      endcase
    end
  end
  assign cw_link_o = '{n1: r4_i.hdl, ns: seq_i};  // a FIFO's head whose next is the new entry

  always_comb begin
    unique case (lk_asrc_i)
      LA_SPT:  lk_waddr = cur_sp_tail_i;
      LA_ULP:  lk_waddr = ul_prev_i.p;
      default: lk_waddr = cw_t_tail;
    endcase
    unique case (lk_dsrc_i)
      LD_UL:   lk_wdata = ul_link_i;
      default: lk_wdata = cw_link_o;
    endcase
    unique case (pv_asrc_i)
      PA_LNK:  pv_waddr = lnk4_i[cw_cls_i].n1;
      PA_UL:   pv_waddr = ul_link_i.n1;
      default: pv_waddr = r4_i.hdl;
    endcase
    unique case (pv_dsrc_i)
      PD_TAIL: pv_wdata = '{hp: 1'b1, p: cw_t_tail};
      PD_SPT:  pv_wdata = '{hp: 1'b1, p: cur_sp_tail_i};
      PD_UL:   pv_wdata = ul_prev_i;
      default: pv_wdata = '{hp: 1'b0, p: cw_t_tail};   // a head (p unused)
    endcase
  end
  assign en_waddr = r4_i.hdl;
  assign en_wdata = '{mtag: r4_i.tag, mask: r4_i.mask, seq: seq_i};

  // ---------------------------------------------------------------- RAM ports
  // The scrubber uses the class-slot and live RAMs in cycles without requests in s0..s4
  // (tmnic_tm_scrub); its write-back drops the words of older generations (everything after reset).
  // Where a way's word and address come from is known from registers: a commit writes way w of class
  // c at idx4[c][w], a relocation's commit (mv_sel_i) its occupant at mv_idx in way mv_way; only the
  // write enables and the commit's own word wait for the decision.
  // (The scrubber runs only while s1..s4 are empty: the words are then all zero, invalid, and that is
  // what it writes back. Built under v4 like the commit's words: Verilator then skips the eight
  // wide selects in idle cycles, a quarter of the engine's idle simulation time.)
  slot_t [K-1:0][D-1:0] wword;
  always_comb begin
    wword = '0;
    if (v4_i) begin
      for (int c = 0; c < int'(K); c++) begin
        for (int w = 0; w < int'(D); w++)
          wword[c][w] = (mv_sel_i && int'(mv_way_i) == w) ? mv_slot_i : cw_data_o[c];
      end
    end
  end
  always_comb begin
    for (int c = 0; c < int'(K); c++) begin
      for (int w = 0; w < int'(D); w++) begin
        sl_re[c][w]    = scr_rd_i ? (32'(scr_rd_addr_i) < B) : (adv_i && v1_i);
        sl_raddr[c][w] = scr_rd_i ? LB'(scr_rd_addr_i) : idx1_i[c][w];
        if (ck_rst_i) begin
          sl_re[c][w]    = v2_i;
          sl_raddr[c][w] = idx2_i[c][w];
        end
        if (ck_re_i[w] && int'(r4_i.cls) == c) begin
          sl_re[c][w]    = 1'b1;
          sl_raddr[c][w] = ck_raddr_i[w];
        end
        // Write data: the relocated FIFO in its new way, else the commit's word of the class; the
        // scrubber only clears the valid bit (the rest of its word is unused).
        sl_we[c][w]    = cw_we_i && int'(cw_cls_i) == c && int'(cw_way_i[c]) == w ||
                         cw2_we_i && int'(cw_cls_i) == c && int'(mv_way_i) == w;
        sl_waddr[c][w] = (mv_sel_i && int'(r4_i.cls) == c && int'(mv_way_i) == w) ? mv_idx_i :
                                                                                    idx4_i[c][w];
        if (scr_wr_i) begin
          sl_we[c][w]    = 32'(scr_wr_addr_i) < B && (scr_init_i || (sl_rdata_o[c][w].v &&
                           sl_rdata_o[c][w].gen != gen_i[sl_rdata_o[c][w].kr[R_W-1 -: SRQ_W]]));
          sl_waddr[c][w] = LB'(scr_wr_addr_i);
        end
        sl_wdata[c][w]   = wword[c][w];
      end
    end
    // Link copies 0..K-1: each class head's link, for the request moving into s4.
    for (int c = 0; c < int'(K); c++) begin
      lk_re[c]    = adv_i && v3_i;
      lk_raddr[c] = t3_i[c].h1;
    end
    // The chase copy: the new head's link after a pop; DEL's link; the spill scan.
    lk_re[K]    = 1'b0;
    lk_raddr[K] = '0;
    if (scan_rd_i) begin   // (s4 holds: no pop)
      lk_re[K]    = 1'b1;
      lk_raddr[K] = scan_addr_i;
    end else if (cw_pop_i) begin
      lk_re[K]    = 1'b1;
      lk_raddr[K] = lnk4_i[cw_cls_i].n1;   // (the popped class's word: its head from the link)
    end else if (adv_i && v1_i && r1_i.kind == RK_DEL) begin
      lk_re[K]    = 1'b1;
      lk_raddr[K] = r1_i.hdl;
    end
    // Handle-indexed state: ADD and DEL read at s1; the scan reads the spill entries.
    pv_re = 1'b0; pv_raddr = r1_i.hdl;
    en_re = 1'b0; en_raddr = r1_i.hdl;
    lv_re = 1'b0; lv_raddr = r1_i.hdl;
    if (scan_rd_i) begin
      pv_re = 1'b1; pv_raddr = scan_addr_i;
      en_re = 1'b1; en_raddr = scan_addr_i;
    end else if (adv_i && v1_i && r1_i.kind == RK_DEL) begin
      pv_re = 1'b1;
      en_re = 1'b1;
    end
    if (scr_rd_i) begin
      lv_re    = 32'(scr_rd_addr_i) < N;
      lv_raddr = H_W'(scr_rd_addr_i);
    end else if (adv_i && v1_i && (r1_i.kind == RK_ADD || r1_i.kind == RK_DEL)) begin
      lv_re = 1'b1;
    end
    // Live records: the commit's, or the scrubber's.
    lv_we    = cl_we_i;
    lv_waddr = cl_hdl_i;
    lv_wdata = '0;
    lv_wdata.live = cl_live_i;
    if (cl_we_i && cl_live_i) begin
      lv_wdata.gen = gen_i[r4_i.srq];
      lv_wdata.srq = r4_i.srq;
      lv_wdata.loc = (cw_we_i) ? LOC_CLS : cam_ins_i ? LOC_CAM : LOC_SPILL;
      lv_wdata.cls = r4_i.cls;
      lv_wdata.cam = cam_ins_idx_i;
    end
    if (scr_wr_i) begin
      lv_we    = 32'(scr_wr_addr_i) < N &&
                 (scr_init_i || (lv_rdata_o.live && lv_rdata_o.gen != gen_i[lv_rdata_o.srq]));
      lv_waddr = H_W'(scr_wr_addr_i);
      lv_wdata = '0;
    end
  end

  // Fields of the requests and candidates that the tables do not use.
  wire unused_ok = ^{r1_i.srq, r1_i.cnt_vld, r1_i.cnt, r1_i.commit_miss, r1_i.has_cls, r1_i.cls,
                     r1_i.tag, r1_i.mask, r4_i.kind, r4_i.cnt_vld, r4_i.cnt, r4_i.commit_miss,
                     r4_i.has_cls, t3_i, t4_i};
endmodule
