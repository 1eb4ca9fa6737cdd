// SGE/MR protection checker, shared by the requester (local read of the gather list) and the
// responder (LOCAL_WRITE of the scatter list): walks a WQE's SGEs, one per cycle, each against the
// MR its lkey selects (valid, key, protection domain, bounds, access), and emits each one's IO virtual
// address and length as it passes. All of a WQE's SGEs are checked before its caller moves any
// payload; the walk stops at the first SGE that fails.
//
// start_i (while idle_o) begins a walk over the first min(nsge_i, NSGE) entries of sge_i; nsge_i,
// pd_i, access_i and sge_i are read during the walk and must stay stable until done_o. Per passing
// SGE k: out_valid_o with out_idx_o = k, its IOVA and length (three cycles after it was taken; the
// three mean something only with out_valid_o). With the last SGE's result, or the failing SGE's
// check, or one cycle after a start with no SGEs: done_o for one cycle with ok_o (every SGE passed
// and nsge_i <= NSGE) and, when ok_o, total_o, the sum of the lengths (35 bits: six 32-bit lengths
// never overflow it). The outputs are registers.
//
// The MR table read is registered (the context block's block-RAM port): mr_idx_o is the lkey's MR
// index of the SGE that enters stage A, mr_rd_i that MR one cycle later, when stage B reads it.
// The check is pipelined over three stages for timing, one carry chain each: A sums the SGE's end,
// B the MR's end (and compares the start, key, PD, access), C compares the ends and decides.
module tmnic_sge_chk
  import tmnic_pkg::*;
  import tmnic_hwif_pkg::*;
#(
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NSGE = WQE_MAX_SGE,
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned IW = $clog2(NSGE + 1)
) (
  input  logic                  clk_i,
  input  logic                  rst_ni,

  input  logic                  start_i,
  output logic                  idle_o,
  input  logic [7:0]            nsge_i,
  input  logic [15:0]           pd_i,
  input  logic [3:0]            access_i,  // access rights every SGE's MR must grant (ACCESS_*_BIT)
  input  sge_t [NSGE-1:0]       sge_i,

  output logic [MR_W-1:0]       mr_idx_o,
  input  mr_t                   mr_rd_i,

  output logic                  out_valid_o,
  output logic [IW-1:0]         out_idx_o,
  output logic [63:0]           out_iova_o,
  output logic [31:0]           out_len_o,

  output logic                  done_o,
  output logic                  ok_o,
  output logic [34:0]           total_o
);
  if (NUM_MR < 2 || (NUM_MR & (NUM_MR - 1)) != 0) begin : g_chk_mr
    $fatal(1, "tmnic_sge_chk: NUM_MR must be a power of two >= 2");
  end
  if (NSGE < 1 || NSGE > 255) begin : g_chk_sge
    $fatal(1, "tmnic_sge_chk: NSGE must be 1..255");
  end

  // Three stages, one SGE per cycle: A selects SGE i (its end address summed) and registers it, with
  // the MR index as a register output; B reads the MR the table returns (its end summed, the other
  // checks made) and registers both; C compares the ends and registers the result. A failure in C
  // ends the walk; SGEs already in A or B are then ignored (C decides only while the walk runs), so
  // C's result never reaches A's load enable. The length sum does not wait for the decision: it
  // adds every SGE entering B and is only defined when every SGE passed.
  logic          walk_q, walk_d;                 // a walk is running (until done)
  logic [IW-1:0] i_q, i_d;                       // next SGE to take into A
  logic          a_v_q, a_v_d, a_last_q, a_last_d;
  logic [IW-1:0] a_idx_q, a_idx_d;
  sge_t          a_sge_q, a_sge_d;
  logic [64:0]   a_end_q, a_end_d;               // addr + length, 65 bits
  logic          b_v_q, b_v_d, b_last_q, b_ok_q, b_ok_d;  // B: the SGE's checks but the end's
  logic [IW-1:0] b_idx_q;
  logic [64:0]   b_end_q, b_mend_q, b_mend_d;    // the SGE's end, the MR's end (va + len)
  logic [63:0]   b_iova_q, b_iova_d;
  logic [31:0]   b_len_q;
  logic          out_v_q, out_v_d, done_q, done_d, ok_q, ok_d;
  logic [IW-1:0] out_idx_q;
  logic [63:0]   out_iova_q;
  logic [31:0]   out_len_q;
  logic [34:0]   total_q, total_d;

  // The SGE stage A takes: indexed only while walking (i_q < NSGE then).
  sge_t cur;
  always_comb begin
    cur = sge_i[0];
    if (walk_q) for (int k = 0; k < int'(NSGE); k++) if (IW'(k) == i_q) cur = sge_i[k];
  end
  // The MR table read is registered (tmnic_ctx): it gets the SGE that stage A holds next (A loads
  // in every cycle of a walk; a_v_q says whether what it holds is an SGE to check).
  assign mr_idx_o = walk_q ? a_sge_d.lkey[MR_KEY_SHIFT +: MR_W] : a_sge_q.lkey[MR_KEY_SHIFT +: MR_W];

  always_comb begin
    logic [IW-1:0] n;   // SGEs to walk
    logic          pass, fail;
    walk_d = walk_q;
    i_d = i_q;
    a_v_d = 1'b0;
    a_idx_d = i_q;
    a_last_d = 1'b0;
    a_sge_d = cur;
    a_end_d = a_end_q;
    if (walk_q) a_end_d = {1'b0, cur.addr} + {33'd0, cur.length};
    out_v_d = 1'b0;
    done_d = 1'b0;
    ok_d = ok_q;
    total_d = total_q;
    n = (nsge_i > 8'(NSGE)) ? IW'(NSGE) : IW'(nsge_i);
    // Stage B: the SGE in A against its MR (valid, key, PD, addr >= va, access) and the MR's end.
    // (evaluated only while an SGE is in A: simulation cost follows activity)
    b_v_d = a_v_q && walk_q;
    b_ok_d = 1'b0;
    b_mend_d = b_mend_q;
    b_iova_d = b_iova_q;
    if (a_v_q) begin
      b_mend_d = {1'b0, mr_rd_i.va} + {1'b0, mr_rd_i.len};
      b_ok_d = mr_rd_i.valid && mr_rd_i.key == a_sge_q.lkey && mr_rd_i.pd == pd_i && a_sge_q.addr >= mr_rd_i.va &&
               ((mr_rd_i.access & access_i) == access_i);
      b_iova_d = mr_iova(mr_rd_i, a_sge_q.addr);
      if (walk_q) total_d = total_q + 35'(a_sge_q.length);
    end
    // Stage C: [addr, end) inside [va, va + len).
    pass = b_ok_q && b_end_q <= b_mend_q;
    fail = b_v_q && walk_q && !pass;
    if (b_v_q && walk_q && pass) begin
      out_v_d = 1'b1;
      if (b_last_q) begin          // the last one: done together with its result
        walk_d = 1'b0;
        done_d = 1'b1;
        ok_d = nsge_i <= 8'(NSGE);
      end
    end
    if (fail) begin
      walk_d = 1'b0;
      done_d = 1'b1;
      ok_d = 1'b0;
    end
    // Stage A and the walk.
    if (!walk_q) begin
      if (start_i) begin
        walk_d = 1'b1;
        i_d = '0;
        total_d = '0;
      end
    end else if (n == '0) begin    // no SGEs at all
      walk_d = 1'b0;
      done_d = 1'b1;
      ok_d = nsge_i <= 8'(NSGE);
    end else if (i_q < n) begin
      a_v_d = 1'b1;
      a_last_d = i_q + IW'(1) == n;
      i_d = i_q + IW'(1);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      walk_q <= 1'b0;
      a_v_q <= 1'b0;
      b_v_q <= 1'b0;
      out_v_q <= 1'b0;
      done_q <= 1'b0;
    end else begin
      walk_q <= walk_d;
      a_v_q <= a_v_d;
      b_v_q <= b_v_d;
      out_v_q <= out_v_d;
      done_q <= done_d;
    end
  end
  // Payload registers: no reset; the SGE outputs load only when one passes.
  always_ff @(posedge clk_i) begin
    i_q <= i_d;
    ok_q <= ok_d;
    total_q <= total_d;
    a_idx_q <= a_idx_d;
    a_last_q <= a_last_d;
    // Not on a_v_d: the SGE count's compare then reaches one valid bit, not 200 enables.
    if (walk_q) begin
      a_sge_q <= a_sge_d;
      a_end_q <= a_end_d;
    end
    if (a_v_q) begin
      b_ok_q <= b_ok_d;
      b_last_q <= a_last_q;
      b_idx_q <= a_idx_q;
      b_end_q <= a_end_q;
      b_mend_q <= b_mend_d;
      b_iova_q <= b_iova_d;
      b_len_q <= a_sge_q.length;
    end
    // Loaded for every SGE in C, passing or not (out_valid_o says which): C's end compare then
    // reaches only the valid bit, not the enables of a hundred output flip-flops.
    if (b_v_q) begin
      out_idx_q <= b_idx_q;
      out_iova_q <= b_iova_q;
      out_len_q <= b_len_q;
    end
  end

  assign idle_o = !walk_q;
  assign out_valid_o = out_v_q;
  assign out_idx_o = out_idx_q;
  assign out_iova_o = out_iova_q;
  assign out_len_o = out_len_q;
  assign done_o = done_q;
  assign ok_o = ok_q;
  assign total_o = total_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_start_idle: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(start_i && walk_q)) else $error("tmnic_sge_chk: start while a walk is running");
  // The SGE list is held through the walk (a walk that does not end this cycle still runs next).
  tmnic_hold_chk #(.W($bits(nsge_i) + $bits(pd_i) + $bits(access_i) + $bits(sge_i)),
                   .NAME("tmnic_sge_chk: SGE list during its walk")) u_in_hold (
    .clk_i, .rst_ni, .valid_i(walk_q), .ready_i(done_d), .data_i({nsge_i, pd_i, access_i, sge_i}));
  a_idx_range: assert property (@(posedge clk_i) disable iff (!chk_q)
    !walk_q || 32'(i_q) <= NSGE) else $error("tmnic_sge_chk: index past NSGE");
`endif
endmodule
