// The slot word a commit of the tag-matching engine would write in each mask class, and the way
// (tmnic_tm_commit, s4). Built from the request's kind and its candidates only, beside the
// decision: which class is written (a lookup's winner) only enables one of these words, so the
// winner stays out of the block RAMs' data inputs and out of the record's words (tmnic_tm_tables
// builds the words from these selects; tmnic_tm_commit_fwd records them per class).
//   lookup: pop the class's FIFO (its head's next becomes the head; empty if the head was the tail);
//   ADD:    append to the key's FIFO, or start one in a free way (the first free one of the bucket,
//           or after a relocation search the slot its occupant left);
//   FIND:   unlink the entry: the head (its next becomes the head) or the tail (its prev becomes it).
module tmnic_tm_commit_word import tmnic_tm_pkg::*; #(
  parameter int unsigned K     = 2,     // mask classes
  parameter int unsigned D     = 4,     // ways per class
  parameter int unsigned H_W   = 10,    // handle bits
  parameter int unsigned SEQ_W = 62,
  parameter type req_t = req_dflt_t,
  parameter type tup_t = tup_dflt_t,
  localparam int unsigned WAY_W = (D > 1) ? $clog2(D) : 1
) (
  input  logic                    v4_i,
  input  req_t                    r4_i,
  input  tup_t [K-1:0]            t4_i,          // the FIFO of its key per class (record applied)
  input  logic [D-1:0]            fr4_i,         // free ways of its bucket (ADD's class)
  input  logic                    reloc_done_i,  // a relocation search freed a slot...
  input  logic [WAY_W-1:0]        reloc_way_i,   // ...in this way
  input  logic                    ul_head_i,     // FIND: the entry is its FIFO's head
  output logic                    fw_v_o,        // ADD: a free way for a new FIFO
  output logic [K-1:0][WAY_W-1:0] cw_way_o,
  output logic [K-1:0]            cw_v_o,
  output hsrc_e                   cw_hsrc_o,
  output tsrc_e                   cw_tsrc_o
);
  if (K < 1 || D < 1 || (D & (D - 1)) != 0 || H_W < 1 || SEQ_W < 2) begin : g_chk_geom
    $fatal(1, "tmnic_tm_commit_word: geometry out of range (tmnic_tm_engine checks the same, tighter)");
  end
  if ($bits(tup_t) != 1 + WAY_W + 2 * H_W + SEQ_W) begin : g_chk_types
    $fatal(1, "tmnic_tm_commit_word: tup_t does not match the widths of the value parameters");
  end

  logic [WAY_W-1:0] fw;
  always_comb begin
    fw = '0; fw_v_o = 1'b0;
    for (int w = int'(D) - 1; w >= 0; w--) if (fr4_i[w]) begin fw = WAY_W'(w); fw_v_o = 1'b1; end
    if (reloc_done_i) begin
      fw     = reloc_way_i;
      fw_v_o = 1'b1;
    end
  end

  always_comb begin
    cw_hsrc_o = HS_TUP;
    cw_tsrc_o = TS_TUP;
    cw_v_o    = '1;
    cw_way_o  = '0;
    if (v4_i) begin  // (evaluated only for a request, in simulation)
      unique case (r4_i.kind)
        RK_LK: begin
          cw_hsrc_o = HS_LINK;
          for (int c = 0; c < int'(K); c++) cw_v_o[c] = t4_i[c].h1 != t4_i[c].tail;
        end
        RK_ADD: begin
          cw_tsrc_o = TS_HDL;
          if (!t4_i[r4_i.cls].v) cw_hsrc_o = HS_NEW;
        end
        RK_FIND: begin
          if (ul_head_i) begin
            cw_hsrc_o = HS_UL;
            cw_v_o    = {K{r4_i.hdl != t4_i[r4_i.cls].tail}};
          end else cw_tsrc_o = TS_UL;
        end
        default: ;
      endcase
      for (int c = 0; c < int'(K); c++)
        cw_way_o[c] = (r4_i.kind == RK_ADD && !t4_i[c].v) ? fw : t4_i[c].way;
    end
  end

  // Fields of the request that the words do not depend on.
  wire unused_ok = ^{r4_i.srq, r4_i.tag, r4_i.mask, r4_i.cnt_vld, r4_i.cnt, r4_i.commit_miss,
                     r4_i.has_cls};
endmodule
