// Hardware tag matching (rdma-core / mlx5 TM-SRQ semantics): the posted-tag lists of all TM SRQs,
// list operations (ADD, DEL, SYNC, CLEAR) and lookups of arriving tagged messages in MPI order.
//
// Structure: an ordered CAM with compaction. Physical position = age: an ADD appends at position
// tail_q, removing position p moves positions p+1.. down by one, so among the matching entries the
// lowest position is the oldest one. Every accepted request goes through two steps:
//   1. compare: one bit per position (a lookup: same SRQ and ((tag ^ entry.tag) & entry.mask) == 0;
//      an op: same SRQ, and for DEL/ADD the handle) registered in s1 (va_q / vb_q);
//   2. commit: the vector AND the enable bits, lowest set bit = oldest match, the entry removed or
//      appended, counters updated, the response registered.
// With LANES == N_ENTRIES step 1 is done for all positions in the cycle the request is accepted and
// step 2 in the next cycle, while the next request is accepted: one request per cycle, response two
// cycles after the handshake. The vector compared in the accept cycle is taken against the array
// before the commit of that same clock edge, so it is corrected with that commit (the bit of a
// removed position dropped and the positions above shifted down, the bit of an appended entry set
// from a single compare): a lookup never sees an entry consumed by the request just before it and
// always sees an entry ADDed just before it (forwarding, no stall, no replay).
// With LANES < N_ENTRIES step 1 compares LANES positions per cycle (ceil(tail/LANES) cycles) while
// nothing else changes the array, then commits: one request every ceil(tail/LANES)+1 cycles.
//
// Requests are accepted one per cycle (never an op and a lookup in the same cycle); when both wait,
// they alternate. They take effect in acceptance order, responses come in that order.
// CLEAR removes one entry per cycle (occ+1 cycles).
//
// Simulation speed: every wide structure (compares, priority encoder, shift, enable-all) is only
// evaluated under its enable (accept, scan step, commit); an idle engine evaluates a few flags.
// The entry array is updated with blocking assignments in the one process that reads it, because
// the simulator (Verilator 5.006) rejects non-blocking assignments to array elements inside loops
// (BLKLOOPINIT), and per-element processes cost ~1 us per simulated cycle at 1024 entries even when
// idle.
module tmnic_tm_engine #(
  parameter int unsigned N_ENTRIES = 1024,       // list capacity (all SRQs), power of two >= 4
  parameter int unsigned LANES     = N_ENTRIES,  // positions compared per cycle, power of two, divides N_ENTRIES
  parameter int unsigned NUM_SRQ   = 16,         // number of TM SRQs, power of two >= 2
  localparam int unsigned H_W   = $clog2(N_ENTRIES),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // List operations, executed one at a time in acceptance order.
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

  // Observability, per SRQ.
  output logic [NUM_SRQ-1:0][H_W:0] occ_o,      // live entries
  output logic [NUM_SRQ-1:0][H_W:0] disabled_o, // live entries added out of phase
  output logic [NUM_SRQ-1:0][15:0]  hw_cnt_o,
  output logic [NUM_SRQ-1:0][15:0]  sw_cnt_o,
  output logic                      idle_o      // nothing in flight, no response pending
);

  // ---------------------------------------------------------------- parameter checks
  if (N_ENTRIES < 4 || (N_ENTRIES & (N_ENTRIES - 1)) != 0) begin : g_chk_n
    $fatal(1, "tmnic_tm_engine: N_ENTRIES must be a power of two >= 4");
  end
  if (LANES < 1 || (LANES & (LANES - 1)) != 0 || LANES > N_ENTRIES) begin : g_chk_lanes
    $fatal(1, "tmnic_tm_engine: LANES must be a power of two dividing N_ENTRIES");
  end
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_srq
    $fatal(1, "tmnic_tm_engine: NUM_SRQ must be a power of two >= 2");
  end

  localparam int unsigned N     = N_ENTRIES;
  localparam bit          FULL  = (LANES == N_ENTRIES);  // one-cycle compare of every position
  localparam int unsigned CH    = (N < 64) ? N : 64;     // priority-encoder chunk
  localparam int unsigned NCH   = N / CH;
  localparam int unsigned NSCAN = N / LANES;             // scan steps for a full list
  localparam int unsigned K_W   = $clog2(NSCAN + 1);

  localparam logic [1:0] OP_ADD = 2'd0;
  localparam logic [1:0] OP_DEL = 2'd1;
  localparam logic [1:0] OP_SYNC = 2'd2;
  localparam logic [1:0] OP_CLEAR = 2'd3;

  typedef struct packed {
    logic [SRQ_W-1:0] srq;
    logic [63:0]      tag;
    logic [63:0]      mask;
  } ent_t;

  // Request held between accept and commit.
  typedef struct packed {
    logic             lk;        // lookup (else op)
    logic [1:0]       code;
    logic [SRQ_W-1:0] srq;
    logic [H_W-1:0]   hdl;
    logic [63:0]      tag;
    logic [63:0]      mask;
    logic             cnt_vld;
    logic [15:0]      cnt;
    logic             commit_miss;
    logic             scan;      // LANES < N: needs the position vectors
  } req_t;

  // ---------------------------------------------------------------- helpers
  // {found, index} of the lowest set bit.
  function automatic logic [H_W:0] lowest_set(logic [N-1:0] v);
    logic [H_W:0]  r;
    logic [CH-1:0] w;
    int unsigned   c0;
    r  = '0;
    w  = '0;
    c0 = 0;
    for (int c = NCH - 1; c >= 0; c--) begin
      if (v[c*CH +: CH] != '0) begin
        w  = v[c*CH +: CH];
        c0 = c;
        r[H_W] = 1'b1;
      end
    end
    for (int b = CH - 1; b >= 0; b--) begin
      if (w[b]) r[H_W-1:0] = H_W'(c0 * CH + b);
    end
    return r;
  endfunction

  // Thermometer code: bit i set when i < p. Built from per-bit compares with a constant, not from
  // (1 << p) - 1, whose N-bit (N*H_W-bit for the handles) carry chain was the critical path on ECP5.
  function automatic logic [N-1:0] below(logic [H_W-1:0] p);
    logic [N-1:0] t;
    for (int i = 0; i < N; i++) t[i] = (H_W + 1)'(i) < {1'b0, p};
    return t;
  endfunction

  // Position p removed: bits above p move down by one.
  function automatic logic [N-1:0] drop_bit(logic [N-1:0] v, logic [N-1:0] lo);
    return (v & lo) | ((v >> 1) & ~lo);
  endfunction

  // One compare: {a, b}. Lookup: a = same SRQ and the tag matches. Op: a = same SRQ, b = also the
  // same handle.
  function automatic logic [1:0] cmp(ent_t e, logic [H_W-1:0] e_hdl, logic lk,
                                     logic [SRQ_W-1:0] srq, logic [63:0] tag, logic [H_W-1:0] hdl);
    logic s;
    s = (e.srq == srq);
    if (lk) return {1'b0, s && (((e.tag ^ tag) & e.mask) == 64'd0)};
    return {s && (e_hdl == hdl), s};
  endfunction

  // ---------------------------------------------------------------- state
  ent_t                       ent_q [N];  // by position; meaningful below tail_q
  logic [N-1:0][H_W-1:0]      hdl_q;      // handle by position
  logic [N-1:0]               en_q;       // enabled by position (garbage at and above tail_q)
  logic [H_W:0]               tail_q;     // live entries = first free position

  logic                       s1_valid_q;
  req_t                       s1_q;
  logic [N-1:0]               va_q, vb_q; // s1 position vectors, zero at and above tail_q
  logic [K_W-1:0]             scan_k_q;   // LANES < N: next scan step

  logic [N-1:0]               live_q;     // by handle
  logic [NUM_SRQ-1:0][H_W:0]  occ_q, dis_q;
  logic [NUM_SRQ-1:0][15:0]   hw_q, sw_q;
  logic                       prio_op_q;  // an op wins if both wait

  logic                       op_rsp_valid_q, op_rsp_ok_q;
  logic [15:0]                op_rsp_hw_q;
  logic                       lk_rsp_valid_q, lk_rsp_hit_q, lk_rsp_unexp_q, lk_rsp_blocked_q;
  logic [H_W-1:0]             lk_rsp_hdl_q;

  // ---------------------------------------------------------------- accept
  logic can_accept, acc_lk, acc_op, acc;
  logic scan_busy;
  req_t acc_req;

  // Commit decision (below).
  logic           cm_fire;    // s1's request completes this cycle
  logic           cm_rm;      // position cm_p is removed
  logic [H_W-1:0] cm_p;
  logic [H_W-1:0] cm_rm_hdl;
  logic           cm_rm_dis;  // the removed entry was disabled
  logic           cm_app;     // s1's ADD appends at tail_q
  logic           cm_app_en;
  logic           cm_en_all;  // every disabled entry of s1's SRQ becomes enabled
  logic [15:0]    cm_sw;      // sw_cnt[srq] after the op's update
  logic           cm_ok, cm_hit, cm_unexp, cm_blocked;

  assign can_accept = !s1_valid_q || cm_fire;
  assign lk_ready_o = can_accept && !(op_valid_i && prio_op_q);
  assign op_ready_o = can_accept && !(lk_valid_i && !prio_op_q);
  assign acc_lk     = lk_valid_i && lk_ready_o;
  assign acc_op     = op_valid_i && op_ready_o;
  assign acc        = acc_lk || acc_op;

  always_comb begin
    acc_req = '0;
    if (acc_lk) begin
      acc_req.lk          = 1'b1;
      acc_req.srq         = lk_srq_i;
      acc_req.tag         = lk_tag_i;
      acc_req.commit_miss = lk_commit_miss_i;
      acc_req.scan        = 1'b1;
    end else begin
      acc_req.code    = op_code_i;
      acc_req.srq     = op_srq_i;
      acc_req.hdl     = op_handle_i;
      acc_req.tag     = op_tag_i;
      acc_req.mask    = op_mask_i;
      acc_req.cnt_vld = op_sw_cnt_vld_i;
      acc_req.cnt     = op_sw_cnt_i;
      acc_req.scan    = op_sw_cnt_vld_i || (op_code_i == OP_DEL) || (op_code_i == OP_CLEAR);
    end
  end

  if (FULL) begin : g_noscan
    logic unused_scan;
    assign unused_scan = s1_q.scan;  // every position is compared in the accept cycle
    assign scan_busy   = 1'b0;
  end else begin : g_scan
    assign scan_busy = s1_valid_q && s1_q.scan &&
                       ((32'(scan_k_q) * LANES) < 32'(tail_q));
  end

  // ---------------------------------------------------------------- commit decision
  // Reads registers only; the wide part runs only while a request is committing.
  always_comb begin
    logic [H_W:0] ls;
    logic [15:0]  hw;
    ls         = '0;
    hw         = '0;
    cm_fire    = 1'b0;
    cm_rm      = 1'b0;
    cm_p       = '0;
    cm_rm_hdl  = '0;
    cm_rm_dis  = 1'b0;
    cm_app     = 1'b0;
    cm_app_en  = 1'b0;
    cm_en_all  = 1'b0;
    cm_sw      = '0;
    cm_ok      = 1'b0;
    cm_hit     = 1'b0;
    cm_unexp   = 1'b0;
    cm_blocked = 1'b0;
    if (s1_valid_q && !scan_busy) begin
      hw    = hw_q[s1_q.srq];
      cm_sw = s1_q.cnt_vld ? s1_q.cnt : sw_q[s1_q.srq];
      if (s1_q.lk) begin
        cm_fire    = 1'b1;
        cm_blocked = (hw - sw_q[s1_q.srq]) > 16'h7fff;
        ls = lowest_set(va_q & en_q);
        if (!cm_blocked) begin
          if (ls[H_W]) begin
            cm_hit = 1'b1;
            cm_rm  = 1'b1;
            cm_p   = ls[H_W-1:0];
          end else begin
            cm_unexp = s1_q.commit_miss;
          end
        end
      end else begin
        unique case (s1_q.code)
          OP_ADD: begin
            cm_fire   = 1'b1;
            cm_en_all = s1_q.cnt_vld && (cm_sw == hw);
            cm_ok     = !live_q[s1_q.hdl];
            cm_app    = cm_ok;
            cm_app_en = (cm_sw == hw);
          end
          OP_DEL: begin
            cm_fire   = 1'b1;
            cm_en_all = s1_q.cnt_vld && (cm_sw == hw);
            ls = lowest_set(vb_q);
            cm_ok = ls[H_W];
            cm_rm = ls[H_W];
            cm_p  = ls[H_W-1:0];
          end
          OP_SYNC: begin
            cm_fire   = 1'b1;
            cm_en_all = s1_q.cnt_vld && (cm_sw == hw);
            cm_ok     = 1'b1;
          end
          OP_CLEAR: begin
            // One entry per cycle; the op completes when none is left.
            ls = lowest_set(va_q);
            cm_rm   = ls[H_W];
            cm_p    = ls[H_W-1:0];
            cm_fire = !ls[H_W];
            cm_ok   = 1'b1;
          end
          default: ;
        endcase
      end
      if (cm_rm) begin
        cm_rm_hdl = hdl_q[cm_p];
        cm_rm_dis = !en_q[cm_p];
      end
    end
  end

  // ---------------------------------------------------------------- position datapath (no reset)
  // Entries, handles, enable bits and s1's vectors. Only this process reads ent_q; its updates are
  // blocking (see the header) and come after every read of the old contents.
  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk_i) begin
    logic [N-1:0]     va, vb, en;
    logic [N*H_W-1:0] hdl;
    logic [N-1:0] lo;
    logic [1:0]       c;
    va  = va_q;
    vb  = vb_q;
    // Compare.
    if (FULL) begin
      if (acc) begin
        va = '0;
        vb = '0;
        for (int i = 0; i < N; i++) begin
          if (i < int'(tail_q)) begin
            c = cmp(ent_q[i], hdl_q[i], acc_req.lk, acc_req.srq, acc_req.tag, acc_req.hdl);
            va[i] = c[0];
            vb[i] = c[1];
          end
        end
      end
    end else begin
      if (acc) begin
        va = '0;
        vb = '0;
      end else if (scan_busy) begin
        for (int j = 0; j < int'(LANES); j++) begin
          int unsigned i;
          i = 32'(scan_k_q) * LANES + 32'(j);
          if (i < 32'(tail_q)) begin
            c = cmp(ent_q[i[H_W-1:0]], hdl_q[i[H_W-1:0]], s1_q.lk, s1_q.srq, s1_q.tag,
                    s1_q.hdl);
            va[i[H_W-1:0]] = c[0];
            vb[i[H_W-1:0]] = c[1];
          end
        end
      end
    end
    // Commit: enable-all, removal (compaction), append; s1's vectors follow the array.
    if (cm_rm || cm_app || cm_en_all) begin
      en  = en_q;
      hdl = hdl_q;
      if (cm_en_all) en = en | va_q;
      if (cm_rm) begin
        lo = below(cm_p);
        en = drop_bit(en, lo);
        va = drop_bit(va, lo);
        vb = drop_bit(vb, lo);
        for (int i = 0; i < N - 1; i++) if (!lo[i]) hdl[i*H_W +: H_W] = hdl[(i+1)*H_W +: H_W];
      end
      // Removal shifts, append writes position tail_q (never both in one cycle: a_rm_xor_app).
      // Constant indices only: a write at a variable index becomes a multiplexer in front of every
      // stored bit (about twice the LUTs on ECP5), a per-position condition only a clock enable.
      if (cm_app && acc)
        c = cmp('{srq: s1_q.srq, tag: s1_q.tag, mask: s1_q.mask}, s1_q.hdl, acc_req.lk,
                acc_req.srq, acc_req.tag, acc_req.hdl);
      for (int i = 0; i < N; i++) begin
        if (cm_app && int'(tail_q) == i) begin
          en[i] = cm_app_en;
          hdl[i*H_W +: H_W] = s1_q.hdl;
          ent_q[i] = '{srq: s1_q.srq, tag: s1_q.tag, mask: s1_q.mask};
          if (acc) begin
            va[i] = c[0];
            vb[i] = c[1];
          end
        end else if (cm_rm && i < N - 1 && i >= int'(cm_p) && i + 1 < int'(tail_q)) begin
          ent_q[i] = ent_q[(i + 1) % N];
        end
      end
      en_q  <= en;
      hdl_q <= hdl;
    end
    if (acc || scan_busy || cm_rm || cm_app) begin
      va_q <= va;
      vb_q <= vb;
    end
    if (cm_hit) lk_rsp_hdl_q <= cm_rm_hdl;
  end
  /* verilator lint_on BLKSEQ */

  // ---------------------------------------------------------------- control (reset)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tail_q           <= '0;
      s1_valid_q       <= 1'b0;
      s1_q             <= '0;
      scan_k_q         <= '0;
      live_q           <= '0;
      occ_q            <= '0;
      dis_q            <= '0;
      hw_q             <= '0;
      sw_q             <= '0;
      prio_op_q        <= 1'b0;
      op_rsp_valid_q   <= 1'b0;
      op_rsp_ok_q      <= 1'b0;
      op_rsp_hw_q      <= '0;
      lk_rsp_valid_q   <= 1'b0;
      lk_rsp_hit_q     <= 1'b0;
      lk_rsp_unexp_q   <= 1'b0;
      lk_rsp_blocked_q <= 1'b0;
    end else begin
      op_rsp_valid_q <= 1'b0;
      lk_rsp_valid_q <= 1'b0;
      // Accept.
      if (acc) begin
        s1_valid_q <= 1'b1;
        s1_q       <= acc_req;
        scan_k_q   <= '0;
        prio_op_q  <= acc_lk;
      end else if (cm_fire) begin
        s1_valid_q <= 1'b0;
      end
      if (scan_busy) scan_k_q <= scan_k_q + 1'b1;
      // Commit.
      if (s1_valid_q && !scan_busy) begin
        logic [SRQ_W-1:0] s;
        logic [15:0]      hw_new;
        logic [H_W:0]     occ_new, dis_new;
        s       = s1_q.srq;
        hw_new  = hw_q[s];
        occ_new = occ_q[s];
        dis_new = dis_q[s];
        if (!s1_q.lk && s1_q.cnt_vld) sw_q[s] <= s1_q.cnt;
        if (cm_en_all) dis_new = '0;
        if (cm_unexp) hw_new = hw_new + 16'd1;
        if (cm_rm) begin
          occ_new = occ_new - 1'b1;
          if (cm_rm_dis && !cm_en_all) dis_new = dis_new - 1'b1;
          live_q[cm_rm_hdl] <= 1'b0;
        end
        if (cm_app) begin
          occ_new = occ_new + 1'b1;
          if (!cm_app_en) dis_new = dis_new + 1'b1;
          live_q[s1_q.hdl] <= 1'b1;
        end
        if (!s1_q.lk && s1_q.code == OP_CLEAR && cm_fire) begin
          hw_new = '0;
          sw_q[s] <= '0;
        end
        hw_q[s]  <= hw_new;
        occ_q[s] <= occ_new;
        dis_q[s] <= dis_new;
        if (cm_rm) tail_q <= tail_q - 1'b1;
        if (cm_app) tail_q <= tail_q + 1'b1;
        if (cm_fire) begin
          if (s1_q.lk) begin
            lk_rsp_valid_q   <= 1'b1;
            lk_rsp_hit_q     <= cm_hit;
            lk_rsp_unexp_q   <= cm_unexp;
            lk_rsp_blocked_q <= cm_blocked;
          end else begin
            op_rsp_valid_q <= 1'b1;
            op_rsp_ok_q    <= cm_ok;
            op_rsp_hw_q    <= hw_new;
          end
        end
      end
    end
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
  assign occ_o            = occ_q;
  assign disabled_o       = dis_q;
  assign hw_cnt_o         = hw_q;
  assign sw_cnt_o         = sw_q;
  assign idle_o           = !s1_valid_q && !op_rsp_valid_q && !lk_rsp_valid_q;

`ifndef SYNTHESIS
  // Invariants: handles are unique and < N_ENTRIES, so the list never overflows; a removal always
  // has an entry to remove; only one of removal and append per cycle; the entries of an SRQ never
  // exceed the list.
  // Checked once out of reset (a flop, so that rst_ni is only used as an asynchronous reset).
  logic chk_en_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chk_en_q <= 1'b0;
    else         chk_en_q <= 1'b1;
  end
  a_no_overflow: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_app && tail_q == (H_W + 1)'(N))) else $error("tmnic_tm_engine: list overflow");
  a_rm_nonempty: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_rm && tail_q == '0)) else $error("tmnic_tm_engine: removal from an empty list");
  a_rm_xor_app: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_rm && cm_app)) else $error("tmnic_tm_engine: removal and append in one cycle");
  a_rm_below_tail: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_rm && 32'(cm_p) >= 32'(tail_q))) else $error("tmnic_tm_engine: removal above the tail");
  a_clear_complete: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(s1_valid_q && !s1_q.lk && s1_q.code == OP_CLEAR && cm_fire && occ_q[s1_q.srq] != '0))
    else $error("tmnic_tm_engine: CLEAR left entries");
  a_occ_nonneg: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_rm && occ_q[s1_q.srq] == '0)) else $error("tmnic_tm_engine: occupancy underflow");
  a_lookup_hits_enabled: assert property (@(posedge clk_i) disable iff (!chk_en_q)
    !(cm_hit && cm_rm_dis)) else $error("tmnic_tm_engine: a lookup consumed a disabled entry");
`endif

endmodule
