// Ready-queue scheduler: one bit per queue (QP, SRQ, CQ...) says "has work"; the scheduler offers
// the next ready queue after the last one taken (round robin over queue numbers). Its cost does not
// follow N: the ready bits live in a RAM of LEAF-bit words, with one "word not empty" flip-flop per
// word; the logic around them is a few priority encoders over LEAF or N/LEAF bits.
//
// One RAM operation per cycle, read in the issue cycle and written (read-modify-write) in the next;
// the word written in the previous cycle is forwarded. Operations, in priority order:
//   TAKE      the offer is taken: clear its bit and look for the next ready queue above it in the
//             same word (the round-robin pointer moves to the taken queue);
//   PICK_ALL  the lowest ready queue of a word that the summary says is not empty (the next word
//             after the pointer's, round robin over words, searched in the cycle before; the
//             pointer's own word when it wraps);
//   SET       apply one set waiting in the set buffer (round robin over its entries); first when
//             the buffer is at least half full, else after the picks;
//   PICK_HI   the lowest ready queue above the pointer in the pointer's word (then PICK_ALL of the
//             next non-empty word when there is none).
// A word whose summary bit is clear reads as zero, so the RAM needs no clearing after reset.
//
// Set ports mark queues ready (a doorbell, an expired timer, an ACK that opens a window). A set goes
// into the set buffer (SLOTS entries) and reaches the RAM a few cycles later. A set of the offered
// queue before its take is absorbed (it is ready already); the take removes that queue's waiting
// entries, and a set in the cycle of the take wins (the queue is ready again). When nothing at all is
// ready or in flight, a set is offered at once, one cycle later (the doorbell fast path).
//
// Flow control: set_ready_o high in cycle t promises room for a set on every port in cycle t and in
// cycle t+1 (each port has its own PSLOTS entries), so a source that can be held (the host's
// doorbell write, one cycle behind its decode) never overflows the buffer if it only sets when
// set_ready_o was high. Sources that cannot be held must be rate-limited by construction (an FSM's
// own set, a command's kick); an overflow is an assertion failure.
//
// Latency: a set is offered in 1 cycle on the fast path, otherwise within SLOTS + 6 cycles (SLOTS =
// NSET * PSLOTS). After a take, the next offer is valid 2 cycles later when it lies above the taken
// queue in its word, 5 otherwise. Round robin: while a queue is ready and visible in the RAM, every
// other queue is offered at most once before it.
module tmnic_qp_sched #(
  parameter int unsigned N = 64,            // queues, >= 2
  parameter int unsigned NSET = 2,          // set ports, >= 1
  parameter int unsigned LEAF = 32,         // bits per RAM word, power of two, >= 2
  parameter int unsigned PSLOTS = 4,        // set buffer entries per set port, >= 3
  localparam int unsigned IDX_W = $clog2(N)
) (
  input  logic                       clk_i,
  input  logic                       rst_ni,

  input  logic [NSET-1:0]            set_i,      // queue set_idx_i[k] has work
  input  logic [NSET-1:0][IDX_W-1:0] set_idx_i,  // < N (others are ignored and flagged)
  output logic                       set_ready_o,

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
  if (PSLOTS < 3) begin : g_chk_slots
    $fatal(1, "tmnic_qp_sched: PSLOTS must be >= 3");
  end

  // Words of L bits (L = LEAF, or less when N is small); indices are {word, bit}.
  localparam int unsigned L = (N < LEAF) ? (1 << $clog2(N)) : LEAF;
  localparam int unsigned NW = (N + L - 1) / L;
  localparam int unsigned BW = $clog2(L);
  localparam int unsigned WW = (NW > 1) ? $clog2(NW) : 1;
  localparam int unsigned IW = BW + WW;         // internal index width (>= IDX_W)
  localparam int unsigned DEPTH = (NW > 1) ? NW : 2;
  localparam int unsigned SLOTS = NSET * PSLOTS;  // port k owns entries k*PSLOTS .. k*PSLOTS+PSLOTS-1
  localparam int unsigned SW = $clog2(SLOTS);
  localparam int unsigned PW = $clog2(PSLOTS);

  typedef enum logic [2:0] { OP_NONE, OP_SET, OP_TAKE, OP_PICK_HI, OP_PICK_ALL } op_e;

  // Index of the lowest set bit of v (0 when v is zero): isolate it, then encode the one-hot word.
  localparam int unsigned FW = (L > NW) ? ((L > SLOTS) ? L : SLOTS) : ((NW > SLOTS) ? NW : SLOTS);
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
  function automatic logic [SW-1:0] first_slot(input logic [SLOTS-1:0] v);
    first_slot = SW'(lowest(FW'(v)));
  endfunction
  // Bits strictly above position b (a thermometer code, no carry chain).
  function automatic logic [L-1:0] above(input logic [BW-1:0] b);
    for (int i = 0; i < int'(L); i++) above[i] = (BW'(i) > b);
  endfunction
  // The next non-empty word after word w, round robin over words (w itself when it is the only
  // one): the lowest non-empty word above w, else the lowest non-empty word at all. hi is the
  // thermometer code of the words above w (registered with the request); both searches run side
  // by side and only the result is selected (searching the selected vector put the OR of the masked
  // vector in front of the priority encoder; placed at 1024 queues: 111.35 -> 121.65 MHz median).
  function automatic logic [WW:0] next_word(input logic [NW-1:0] nz, input logic [NW-1:0] hi);
    logic [NW-1:0] w_hi;
    logic [WW-1:0] f_hi, f_all;
    w_hi = nz & hi;
    f_hi = first_word(w_hi);
    f_all = first_word(nz);
    next_word = {nz != '0, (w_hi != '0) ? f_hi : f_all};
  endfunction

  // ---------------------------------------------------------------- state
  logic [NW-1:0]              nz_q, nz_d;          // word not empty (exact)
  logic [IW-1:0]              last_q, last_d;      // round-robin pointer: the last queue taken
  logic [SLOTS-1:0]           sl_v_q, sl_v_d;      // set buffer
  logic [SLOTS-1:0][IW-1:0]   sl_idx_q, sl_idx_d;
  logic                       rdy_q, rdy_d;
  logic                       off_v_q, off_v_d;    // the offer
  logic [IW-1:0]              off_q, off_d;
  logic                       ps_v_q, ps_v_d;      // search the summary for the next word after
  logic [NW-1:0]              ps_hi_q, ps_hi_d;    // ... the word whose higher words these are
  logic                       p2_v_q, p2_v_d;      // a PICK_ALL of word p2_w_q to issue
  logic [WW-1:0]              p2_w_q, p2_w_d;
  op_e                        r_op_q, r_op_d;      // the operation whose RAM word arrives now
  logic [WW-1:0]              r_w_q, r_w_d;
  logic [BW-1:0]              r_b_q, r_b_d;        // the bit set, taken or searched above
  logic                       r_nz_q;              // = nz_q[r_w_q], looked up in the issue cycle
  logic                       wr_v_q, wr_v_d;      // the word written last cycle (forwarded)
  logic [SW-1:0]              rr_q, rr_d;          // the buffer entry drained last (round robin)
  logic [SW-1:0]              dr_s_q, dr_s_d;      // the entry to drain next
  logic                       half_q, half_d;      // the buffer is at least half full
  logic                       lost;                // a set found no free buffer entry
  logic [WW-1:0]              wr_w_q;
  logic [L-1:0]               wr_data_q;

  logic          ram_re, ram_we;
  logic [L-1:0]  ram_rdata, ram_wdata;
  tmnic_ram_sdp #(.WIDTH(L), .DEPTH(DEPTH), .READ_FIRST(1'b0)) u_map (
    .clk_i, .we_i(ram_we), .waddr_i(($clog2(DEPTH))'(r_w_q)), .wdata_i(ram_wdata),
    .re_i(ram_re), .raddr_i(($clog2(DEPTH))'(r_w_d)), .rdata_o(ram_rdata));

  wire take = take_i && off_v_q;
  wire pick_busy = off_v_q || ps_v_q || p2_v_q || r_op_q inside {OP_TAKE, OP_PICK_HI, OP_PICK_ALL};
  wire idle = !off_v_q && !ps_v_q && !p2_v_q && r_op_q == OP_NONE && nz_q == '0 && sl_v_q == '0;

  // ---------------------------------------------------------------- data stage: the word arrives
  logic [L-1:0] word, cand;
  logic         found;
  always_comb begin
    word = (wr_v_q && wr_w_q == r_w_q) ? wr_data_q : (r_nz_q ? ram_rdata : '0);
    ram_we = 1'b0;
    ram_wdata = word;
    cand = '0;
    unique case (r_op_q)
      OP_SET:      begin ram_we = 1'b1; ram_wdata = word | (L'(1) << r_b_q); end
      OP_TAKE:     begin
                     ram_we = 1'b1;
                     ram_wdata = word & ~(L'(1) << r_b_q);
                     cand = ram_wdata & above(r_b_q);
                   end
      OP_PICK_HI:  cand = word & above(r_b_q);
      OP_PICK_ALL: cand = word;
      default: ;
    endcase
    found = cand != '0;
    nz_d = nz_q;
    if (ram_we) nz_d[r_w_q] = ram_wdata != '0;
    wr_v_d = ram_we;
  end

  // ---------------------------------------------------------------- issue, offer, set buffer
  always_comb begin
    logic [WW:0]      nw;
    logic             fast;
    logic [PSLOTS-1:0] pfree;   // free entries of port k's part of the buffer
    logic [PW-1:0]     ps;

    last_d = take ? off_q : last_q;
    off_v_d = off_v_q && !take;
    off_d = off_q;
    ps_v_d = 1'b0;
    for (int i = 0; i < int'(NW); i++) ps_hi_d[i] = WW'(i) > r_w_q;
    // The summary search, one cycle after the data stage found nothing (the summary is exact then).
    nw = '0;
    if (ps_v_q) nw = next_word(nz_q, ps_hi_q);   // (under its enable: simulation cost follows activity)
    p2_v_d = ps_v_q && nw[WW];
    p2_w_d = nw[WW-1:0];
    sl_v_d = sl_v_q;
    sl_idx_d = sl_idx_q;

    // The data stage's result: an offer, or the word to look at next.
    if (r_op_q inside {OP_TAKE, OP_PICK_HI, OP_PICK_ALL}) begin
      if (found) begin
        off_v_d = 1'b1;
        off_d = {r_w_q, first_bit(cand)};
      end else if (r_op_q != OP_PICK_ALL) begin
        ps_v_d = 1'b1;
      end
    end

    // The take removes the taken queue's waiting sets (they came before it: absorbed).
    if (take) begin
      for (int i = 0; i < int'(SLOTS); i++) if (sl_idx_q[i] == off_q) sl_v_d[i] = 1'b0;
    end

    // Issue this cycle's RAM operation. The entry a SET drains was chosen in the previous cycle
    // (dr_s_q, round robin); it is used only if still valid (a take may have removed it).
    r_op_d = OP_NONE;
    r_w_d = r_w_q;
    r_b_d = r_b_q;
    rr_d = rr_q;
    if (take) begin
      r_op_d = OP_TAKE;
      r_w_d = off_q[IW-1:BW];
      r_b_d = off_q[BW-1:0];
    end else if (p2_v_q) begin
      r_op_d = OP_PICK_ALL;
      r_w_d = p2_w_q;
    end else if (sl_v_q[dr_s_q] && (half_q || pick_busy || nz_q == '0)) begin
      r_op_d = OP_SET;
      r_w_d = sl_idx_q[dr_s_q][IW-1:BW];
      r_b_d = sl_idx_q[dr_s_q][BW-1:0];
      rr_d = dr_s_q;
      sl_v_d[dr_s_q] = 1'b0;
    end else if (!pick_busy && nz_q != '0) begin
      // Above the pointer in its word first (an empty word reads as zero: the data stage then
      // moves on to the next non-empty word; one search of the summary, there).
      r_op_d = OP_PICK_HI;
      r_w_d = last_q[IW-1:BW];
      r_b_d = last_q[BW-1:0];
    end

    // New sets: the fast path offers one at once when nothing else is ready or in flight; a set of
    // the offered queue before its take is absorbed; the rest go into a free entry of their port's
    // part of the buffer (chosen from the registered valid bits alone: no chain through the ports).
    fast = idle;
    lost = 1'b0;
    pfree = '0;
    ps = '0;
    if (set_i != '0) for (int k = 0; k < int'(NSET); k++) begin
      pfree = ~sl_v_q[k*PSLOTS +: PSLOTS];
      ps = PW'(lowest(FW'(pfree)));
      if (set_i[k] && 32'(set_idx_i[k]) < N) begin
        if (fast) begin
          fast = 1'b0;
          off_v_d = 1'b1;
          off_d = IW'(set_idx_i[k]);
        end else if (!(off_v_q && !take && IW'(set_idx_i[k]) == off_q)) begin
          lost |= pfree == '0;
          if (pfree != '0) begin
            sl_v_d[k*PSLOTS + int'(ps)] = 1'b1;
            sl_idx_d[k*PSLOTS + int'(ps)] = IW'(set_idx_i[k]);
          end
        end
      end
    end
  end

  // The entry to drain next: the first valid one after the last drained (from registered bits only;
  // checked again when used), and whether the buffer is at least half full.
  // Both candidates (after the entry drained before, after the one chosen now) come from registers;
  // whether a SET drains now only selects between them.
  always_comb begin
    logic [SLOTS-1:0] after_rr, after_dr;
    logic [$clog2(SLOTS + 1)-1:0] cnt;
    cnt = '0;
    after_rr = '0;
    after_dr = '0;
    dr_s_d = dr_s_q;
    if (sl_v_q != '0) begin   // nothing to choose from an empty buffer (simulation cost)
      for (int i = 0; i < int'(SLOTS); i++) begin
        after_rr[i] = sl_v_q[i] && SW'(i) > rr_q;
        after_dr[i] = sl_v_q[i] && SW'(i) > dr_s_q;
        cnt += ($clog2(SLOTS + 1))'(sl_v_q[i]);
      end
      if (r_op_d == OP_SET) dr_s_d = (after_dr != '0) ? first_slot(after_dr) : first_slot(sl_v_q);
      else                  dr_s_d = (after_rr != '0) ? first_slot(after_rr) : first_slot(sl_v_q);
    end
    half_d = 32'(cnt) >= SLOTS / 2;
  end

  // Room on every port for this cycle's set and two more cycles of sets, counted from the registered
  // entries (a count of this cycle's would sit behind the take's compares and the allocation).
  always_comb begin
    logic [$clog2(PSLOTS + 1)-1:0] used;
    rdy_d = 1'b1;
    used = '0;
    if (sl_v_q != '0) for (int k = 0; k < int'(NSET); k++) begin
      used = '0;
      for (int i = 0; i < int'(PSLOTS); i++) used += ($clog2(PSLOTS + 1))'(sl_v_q[k*PSLOTS + i]);
      rdy_d &= 32'(used) + 3 <= PSLOTS;
    end
  end

  assign ram_re = r_op_d != OP_NONE;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      nz_q <= '0;
      last_q <= IW'(N - 1);  // the first pick searches from queue 0
      sl_v_q <= '0;
      rdy_q <= 1'b0;
      off_v_q <= 1'b0;
      ps_v_q <= 1'b0;
      p2_v_q <= 1'b0;
      r_op_q <= OP_NONE;
      wr_v_q <= 1'b0;
      rr_q <= SW'(SLOTS - 1);
      half_q <= 1'b0;
    end else begin
      nz_q <= nz_d;
      last_q <= last_d;
      sl_v_q <= sl_v_d;
      rdy_q <= rdy_d;
      off_v_q <= off_v_d;
      ps_v_q <= ps_v_d;
      p2_v_q <= p2_v_d;
      r_op_q <= r_op_d;
      wr_v_q <= wr_v_d;
      rr_q <= rr_d;
      half_q <= half_d;
    end
  end
  // Payload registers: no reset (their valid bits cover them).
  always_ff @(posedge clk_i) begin
    sl_idx_q <= sl_idx_d;
    off_q <= off_d;
    ps_hi_q <= ps_hi_d;
    p2_w_q <= p2_w_d;
    r_w_q <= r_w_d;
    r_b_q <= r_b_d;
    dr_s_q <= dr_s_d;
    r_nz_q <= nz_q[r_w_d];  // a write to that word in this cycle is forwarded instead (wr_*_q)
    wr_w_q <= r_w_q;
    wr_data_q <= ram_wdata;
  end

  assign set_ready_o = rdy_q;
  assign valid_o = off_v_q;
  assign idx_o = off_q[IDX_W-1:0];
  assign pending_o = off_v_q || ps_v_q || p2_v_q || r_op_q != OP_NONE || nz_q != '0 || sl_v_q != '0;

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  for (genvar k = 0; k < int'(NSET); k++) begin : g_set_chk
    a_set_range: assert property (@(posedge clk_i) disable iff (!chk_q)
      !(set_i[k] && 32'(set_idx_i[k]) >= N)) else $error("tmnic_qp_sched: set of queue %0d >= N", set_idx_i[k]);
  end
  a_set_overflow: assert property (@(posedge clk_i) disable iff (!chk_q)
    !lost) else $error("tmnic_qp_sched: set buffer overflow (a set lost)");
  a_take_valid: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(take_i && !off_v_q)) else $error("tmnic_qp_sched: take without an offer");
  a_offer_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    off_v_q && !take_i |=> off_v_q && $stable(off_q)) else $error("tmnic_qp_sched: offer changed before it was taken");
  a_offer_range: assert property (@(posedge clk_i) disable iff (!chk_q)
    !off_v_q || 32'(off_q) < N) else $error("tmnic_qp_sched: offer beyond N");
  a_nz_exact: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(wr_v_q && (wr_data_q != '0) != nz_q[wr_w_q])) else $error("tmnic_qp_sched: word summary out of step");
`endif
endmodule
