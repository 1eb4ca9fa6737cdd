// Ready-queue scheduler: one bit per queue (QP, SRQ, CQ...) says "has work"; the scheduler offers
// the next ready queue after the last one taken (round robin over queue numbers) in a fixed number
// of cycles whatever N.
//
// The bits sit in LEAF-bit words. Stage 1 picks the word: the rest of the last-taken queue's word
// above it, else the first non-empty word after it, else the first before it, else the part of its
// word at or below it. Stage 2 picks the first ready bit of that part of that word. Both stages are
// one priority encoder over at most max(N/LEAF, LEAF) bits, registered; the offer (valid_o, idx_o)
// is a register, held until taken.
//
// Set ports mark queues ready (a doorbell, an expired timer, an ACK that opens a window). Taking the
// offer (take_i) clears that queue's bit; its owner sets it again when the queue still has work after
// being served. A set in the cycle of the take wins, so an event that arrives while the queue is
// being served is never lost. Latency: a set in cycle t is offered from cycle t+3 when nothing else
// is offered; after a take the next offer is valid one cycle later when it lies above the taken queue
// in its word, two cycles later otherwise. Strict round robin: while a queue is ready, every other
// queue is offered at most once before it.
module tmnic_qp_sched #(
  parameter int unsigned N = 64,     // queues, >= 2
  parameter int unsigned NSET = 2,   // set ports, >= 1
  parameter int unsigned LEAF = 32,  // bits per word, power of two, >= 2
  localparam int unsigned IDX_W = $clog2(N)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,

  input  logic [NSET-1:0]            set_i,      // queue set_idx_i[k] has work
  input  logic [NSET-1:0][IDX_W-1:0] set_idx_i,  // < N (others are ignored and flagged)

  output logic                       valid_o,    // queue idx_o is ready and offered
  output logic [IDX_W-1:0]           idx_o,
  input  logic                       take_i,     // the offer is taken (only while valid_o)
  output logic                       pending_o   // a queue is ready or about to be offered
);
  if (N < 2) begin : g_chk_n
    $fatal(1, "tmnic_qp_sched: N must be >= 2");
  end
  if (NSET < 1) begin : g_chk_set
    $fatal(1, "tmnic_qp_sched: NSET must be >= 1");
  end
  if (LEAF < 2 || (LEAF & (LEAF - 1)) != 0) begin : g_chk_leaf
    $fatal(1, "tmnic_qp_sched: LEAF must be a power of two >= 2");
  end

  // Words of L bits (L = LEAF, or less when N is small); indices are {word, bit}.
  localparam int unsigned L = (N < LEAF) ? (1 << $clog2(N)) : LEAF;
  localparam int unsigned NW = (N + L - 1) / L;
  localparam int unsigned BW = $clog2(L);
  localparam int unsigned WW = (NW > 1) ? $clog2(NW) : 1;
  localparam int unsigned IW = BW + WW;  // internal index width (>= IDX_W)

  typedef enum logic [1:0] { P_ALL, P_HI, P_LO } part_e;  // bits of the word stage 2 looks at

  logic [NW-1:0][L-1:0] map_q, map_d;
  logic [IW-1:0]        last_q, last_d;    // last queue taken (round-robin pointer)
  logic                 s1_v_q, s1_v_d;
  logic [WW-1:0]        s1_w_q, s1_w_d;
  part_e                s1_part_q, s1_part_d;
  logic [BW-1:0]        s1_b_q, s1_b_d;    // pointer bit the part is relative to
  logic                 off_v_q, off_v_d;
  logic [IW-1:0]        off_q, off_d;

  wire take = take_i && off_v_q;

  // Index of the lowest set bit of v (0 when v is zero): isolate it (v & -v, one carry chain), then
  // encode the one-hot word (bit k of the index = OR of the positions with bit k set). One width for
  // both stages (words and bits; the narrower one is zero-extended).
  localparam int unsigned FW = (L > NW) ? L : NW;
  function automatic logic [$clog2(FW)-1:0] lowest(input logic [FW-1:0] v);
    logic [FW-1:0] low;
    low = v & (~v + FW'(1));
    lowest = '0;
    for (int i = 0; i < int'(FW); i++) lowest |= low[i] ? ($clog2(FW))'(i) : '0;
  endfunction
  function automatic logic [BW-1:0] first_bit(input logic [L-1:0] v);
    first_bit = BW'(lowest(FW'(v)));
  endfunction
  function automatic logic [WW-1:0] first_word(input logic [NW-1:0] v);
    first_word = WW'(lowest(FW'(v)));
  endfunction
  // Bits strictly above position b (a thermometer code, no carry chain).
  function automatic logic [L-1:0] above(input logic [BW-1:0] b);
    for (int i = 0; i < int'(L); i++) above[i] = (BW'(i) > b);
  endfunction

  // ---------------------------------------------------------------- the ready bits
  // Per bit: set by any port, else cleared by the take, else kept (shift decoders, no indexed writes).
  logic reset_taken;  // the queue taken in this cycle is set again in the same cycle
  logic [NW*L-1:0] set_vec, take_vec;
  always_comb begin
    reset_taken = 1'b0;
    set_vec = '0;
    for (int k = 0; k < int'(NSET); k++) begin
      reset_taken |= set_i[k] && IW'(set_idx_i[k]) == off_q;
      if (set_i[k] && 32'(set_idx_i[k]) < N) set_vec |= (NW * L)'(1) << set_idx_i[k];
    end
    take_vec = take ? ((NW * L)'(1) << off_q) : '0;
    map_d = set_vec | (map_q & ~take_vec);
  end

  // ---------------------------------------------------------------- stage 1: which word
  // Relative to the pointer as it is after this cycle's take, so that a queue taken now and set
  // again at once is not offered before the others.
  logic [NW-1:0] nz;
  logic [L-1:0]  hi_mask;  // bits above the pointer's bit
  logic [L-1:0]  pw_word;
  always_comb begin
    last_d = take ? off_q : last_q;
    for (int w = 0; w < int'(NW); w++) nz[w] = |map_q[w];
    hi_mask = above(last_d[BW-1:0]);
    pw_word = map_q[last_d[IW-1:BW]];
    // the taken queue's bit clears at this edge unless set again: not a reason to look at its part
    if (take && !reset_taken) pw_word = pw_word & ~(L'(1) << off_q[BW-1:0]);
  end

  always_comb begin
    logic [NW-1:0] w_after, w_before;
    for (int w = 0; w < int'(NW); w++) begin
      w_after[w] = nz[w] && (WW'(w) > last_d[IW-1:BW]);
      w_before[w] = nz[w] && (WW'(w) < last_d[IW-1:BW]);
    end
    s1_v_d = 1'b1;
    s1_b_d = last_d[BW-1:0];
    s1_w_d = last_d[IW-1:BW];
    s1_part_d = P_ALL;
    if ((pw_word & hi_mask) != '0) begin
      s1_part_d = P_HI;
    end else if (w_after != '0) begin
      s1_w_d = first_word(w_after);
    end else if (w_before != '0) begin
      s1_w_d = first_word(w_before);
    end else if ((pw_word & ~hi_mask) != '0) begin
      s1_part_d = P_LO;
    end else begin
      s1_v_d = 1'b0;
    end
  end

  // ---------------------------------------------------------------- stage 2: which bit
  always_comb begin
    logic [L-1:0] cand, sel_mask;
    sel_mask = above(s1_b_q);
    cand = map_q[s1_w_q];
    unique case (s1_part_q)
      P_HI:    cand = cand & sel_mask;
      P_LO:    cand = cand & ~sel_mask;
      default: ;
    endcase
    // After a take, the round-robin order restarts at the taken queue: only the bits above it in its
    // own word may follow at once (stage 1 looked from the previous pointer); anything else waits
    // for stage 1's choice from the new pointer, one cycle later.
    if (take) begin
      cand = (off_q[IW-1:BW] == s1_w_q) ? (map_q[s1_w_q] & above(off_q[BW-1:0])) : '0;
    end
    off_v_d = off_v_q && !take;
    off_d = off_q;
    if (!off_v_q || take) begin
      off_v_d = s1_v_q && (cand != '0);
      off_d = {s1_w_q, first_bit(cand)};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      map_q <= '0;
      last_q <= IW'(N - 1);  // the first offer searches from queue 0
      s1_v_q <= 1'b0;
      off_v_q <= 1'b0;
    end else begin
      map_q <= map_d;
      last_q <= last_d;
      s1_v_q <= s1_v_d;
      off_v_q <= off_v_d;
    end
  end
  // Payload registers: no reset (their valid bits cover them).
  always_ff @(posedge clk_i) begin
    s1_w_q <= s1_w_d;
    s1_part_q <= s1_part_d;
    s1_b_q <= s1_b_d;
    off_q <= off_d;
  end

  assign valid_o = off_v_q;
  assign idx_o = off_q[IDX_W-1:0];
  assign pending_o = (nz != '0) || s1_v_q || off_v_q;

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  for (genvar k = 0; k < int'(NSET); k++) begin : g_set_chk
    a_set_range: assert property (@(posedge clk_i) disable iff (!chk_q)
      !(set_i[k] && 32'(set_idx_i[k]) >= N)) else $error("tmnic_qp_sched: set of queue %0d >= N", set_idx_i[k]);
  end
  a_take_valid: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(take_i && !off_v_q)) else $error("tmnic_qp_sched: take without an offer");
  a_offer_ready: assert property (@(posedge clk_i) disable iff (!chk_q)
    !off_v_q || map_q[off_q[IW-1:BW]][off_q[BW-1:0]]) else $error("tmnic_qp_sched: offered queue is not ready");
  a_offer_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    off_v_q && !take_i |=> off_v_q && $stable(off_q)) else $error("tmnic_qp_sched: offer changed before it was taken");
  a_offer_range: assert property (@(posedge clk_i) disable iff (!chk_q)
    !off_v_q || 32'(off_q) < N) else $error("tmnic_qp_sched: offer beyond N");
`endif
endmodule
