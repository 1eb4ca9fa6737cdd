// Scatter of one packet's payload into a held message's checked SGE list (the responder's data
// placement), or gather of one packet's payload from a WQE's (the requester's payload reads, one
// context): the walk is the same. The RDMA WRITE responder and the READ-response receiver are its
// next users.
//
// The SGE table holds SLOTS checked SGEs {IOVA, length} per context (a QP's held receive WQE). The
// SGE checker writes it through sg_we_i ({context, slot} address) as SGEs pass.
//
// start_i (while idle_o) scatters packet bytes [skip_i, len_i) into context ctx_i from the cursor
// (SGE sgi_i, offset sgo_i in it): one DMA write request per contiguous piece (an SGE's rest or the
// packet's rest, whichever is shorter), wr_off_o being the piece's packet offset. Requests wait for
// avail_i (the packet is stored). The request with wr_last_o ends the packet; sgi_o/sgo_o are then
// the cursor after it (valid from that request on, until the next start). Empty SGEs are stepped
// over. The caller guarantees skip_i < len_i and that the SGEs from the cursor hold len_i - skip_i
// bytes (its capacity check: asserted).
//
// Timing: start in cycle T reads the cursor's SGE; the first request is offered from T+2 (a
// register), then two cycles per piece (offer, and the next piece's decision once it is taken),
// plus one cycle per SGE stepped to. START_REG = 1 registers the start first (the first read in
// T+1, the first request from T+3): the table's 96-bit read register then loads on a state of
// this block, not on the caller's start decision (a wide clock enable behind a long path: the
// placed requester's critical path).
module tmnic_scatter #(
  parameter int unsigned NUM_CTX = 64,   // contexts (QPs), power of two
  parameter int unsigned SLOTS = 8,      // SGE slots per context, power of two
  parameter int unsigned LEN_W = 13,     // packet length bits (payload <= 2^(LEN_W-1))
  parameter int unsigned START_REG = 0,  // 1: register the start before the first table read
  localparam int unsigned CTX_W = $clog2(NUM_CTX),
  localparam int unsigned SG_W = $clog2(SLOTS)
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,

  // SGE table write port
  input  logic                   sg_we_i,
  input  logic [CTX_W+SG_W-1:0]  sg_waddr_i,
  input  logic [63:0]            sg_iova_i,
  input  logic [31:0]            sg_len_i,

  input  logic                   start_i,
  output logic                   idle_o,
  input  logic [CTX_W-1:0]       ctx_i,
  input  logic [SG_W-1:0]        sgi_i,
  input  logic [31:0]            sgo_i,
  input  logic [LEN_W-1:0]       skip_i,
  input  logic [LEN_W-1:0]       len_i,
  input  logic                   avail_i,

  output logic                   wr_valid_o,
  input  logic                   wr_ready_i,
  output logic [63:0]            wr_addr_o,
  output logic [LEN_W-1:0]       wr_len_o,
  output logic [LEN_W-2:0]       wr_off_o,
  output logic                   wr_last_o,

  output logic [SG_W-1:0]        sgi_o,
  output logic [31:0]            sgo_o
);
  if (NUM_CTX < 2 || (NUM_CTX & (NUM_CTX - 1)) != 0) begin : g_chk_ctx
    $fatal(1, "tmnic_scatter: NUM_CTX must be a power of two >= 2");
  end
  if (SLOTS < 2 || (SLOTS & (SLOTS - 1)) != 0) begin : g_chk_slots
    $fatal(1, "tmnic_scatter: SLOTS must be a power of two >= 2");
  end
  if (START_REG > 1) begin : g_chk_sreg
    $fatal(1, "tmnic_scatter: START_REG must be 0 or 1");
  end
  if (LEN_W < 2 || LEN_W > 31) begin : g_chk_len
    $fatal(1, "tmnic_scatter: LEN_W must be 2..31");
  end

  typedef struct packed {
    logic [63:0] iova;
    logic [31:0] len;
  } sge_w_t;

  typedef enum logic [1:0] {S_IDLE, S_SCAT, S_WAIT, S_LOAD} state_e;   // (S_LOAD: START_REG only)

  // Control (reset)
  state_e           state_q, state_d;
  logic             wr_valid_d;
  // Payload (no reset)
  logic [CTX_W-1:0] ctx_q, ctx_d;
  logic [SG_W-1:0]  sgi_q, sgi_d;
  logic [31:0]      sgo_q, sgo_d;
  logic [LEN_W-1:0] done_q, done_d, len_q, len_d;
  // Within a packet, done - sgo (mod 2^LEN_W) and the SGE offset where the packet would end,
  // sgo + (len - done), do not change when a piece is placed (both cursors move by the piece); they
  // are set at the start and at each SGE step, from registers. The piece decision then needs one
  // compare on the SGE the table returns, not a subtract, a compare and an add in a row (the
  // responder's critical path when placed: 60 levels of carry chains).
  logic [LEN_W-1:0] dmo_q, dmo_d;
  logic [32:0]      lim_q, lim_d;
  logic [63:0]      wr_addr_d;
  logic [LEN_W-1:0] wr_len_d;
  logic [LEN_W-2:0] wr_off_d;
  logic             wr_last_d;

  logic            re;
  logic [SG_W-1:0] rslot;
  sge_w_t          sg;
  // The read address depends on the state only (the start's slot, else the slot after the cursor's:
  // the only other read is the step to it); whether to read it depends on the SGE just read. The
  // step decision into the address was the responder's critical path when placed (RAM output ->
  // 32-bit subtract -> zero test -> address multiplexer -> RAM address).
  logic [CTX_W-1:0] rctx;
  if (START_REG != 0) begin : g_rd_reg
    assign rslot = (state_q == S_LOAD) ? sgi_q : sgi_q + 1'b1;
    assign rctx = ctx_q;
  end else begin : g_rd_now
    assign rslot = (state_q == S_IDLE) ? sgi_i : sgi_q + 1'b1;
    assign rctx = (state_q == S_IDLE) ? ctx_i : ctx_q;
  end
  tmnic_ram_sdp #(.WIDTH($bits(sge_w_t)), .DEPTH(NUM_CTX * SLOTS), .NO_COLLISION(1'b1)) u_sgtab (
    .clk_i, .we_i(sg_we_i), .waddr_i(sg_waddr_i), .wdata_i({sg_iova_i, sg_len_i}),
    .re_i(re), .raddr_i({rctx, rslot}), .rdata_o(sg));

  // The next piece: the SGE's rest or the packet's rest. The SGE's rest is shorter exactly when the
  // SGE ends before the packet would (sg.len < lim_q); it is then under 2^(LEN_W-1), so its low
  // LEN_W bits are the piece.
  logic [LEN_W-1:0] pkt_rest;
  assign pkt_rest = len_q - done_q;
  wire              sge_done = sg.len == sgo_q;
  wire              shorter = {1'b0, sg.len} < lim_q;
  wire [LEN_W-1:0]  sge_rest = sg.len[LEN_W-1:0] - sgo_q[LEN_W-1:0];
  wire [LEN_W-1:0]  piece = shorter ? sge_rest : pkt_rest;

  always_comb begin
    state_d = state_q;
    ctx_d = ctx_q; sgi_d = sgi_q; sgo_d = sgo_q; done_d = done_q; len_d = len_q;
    dmo_d = dmo_q; lim_d = lim_q;
    wr_valid_d = wr_valid_o && !wr_ready_i;
    wr_addr_d = wr_addr_o; wr_len_d = wr_len_o; wr_off_d = wr_off_o; wr_last_d = wr_last_o;
    re = 1'b0;
    unique case (state_q)
      S_IDLE: if (start_i) begin
        ctx_d = ctx_i; sgi_d = sgi_i; sgo_d = sgo_i; done_d = skip_i; len_d = len_i;
        dmo_d = skip_i - sgo_i[LEN_W-1:0];
        lim_d = {1'b0, sgo_i} + 33'(LEN_W'(len_i - skip_i));
        re = (START_REG == 0);
        state_d = (START_REG != 0) ? S_LOAD : S_SCAT;
      end
      S_LOAD: begin                   // (START_REG) the cursor's SGE, from the registered start
        re = 1'b1;
        state_d = S_SCAT;
      end
      // The cursor's SGE is on sg (it holds while nothing else is read); an exhausted one is
      // stepped over (the next one is on sg in the next cycle).
      S_SCAT: if (avail_i) begin
        if (sge_done) begin
          sgi_d = sgi_q + 1'b1;
          sgo_d = '0;
          dmo_d = done_q;
          lim_d = 33'(pkt_rest);
          re = 1'b1;
        end else begin
          wr_valid_d = 1'b1;
          wr_addr_d = sg.iova + 64'(sgo_q);
          wr_len_d = piece;
          wr_off_d = done_q[LEN_W-2:0];
          wr_last_d = !shorter;                   // (the packet's rest fits in this SGE)
          done_d = shorter ? sg.len[LEN_W-1:0] + dmo_q : len_q;
          sgo_d = shorter ? sg.len : lim_q[31:0];
          state_d = S_WAIT;
        end
      end
      S_WAIT: if (wr_ready_i) state_d = wr_last_o ? S_IDLE : S_SCAT;
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      wr_valid_o <= 1'b0;
    end else begin
      state_q <= state_d;
      wr_valid_o <= wr_valid_d;
    end
  end
  always_ff @(posedge clk_i) begin
    ctx_q <= ctx_d; sgi_q <= sgi_d; sgo_q <= sgo_d; done_q <= done_d; len_q <= len_d;
    dmo_q <= dmo_d; lim_q <= lim_d;
    wr_addr_o <= wr_addr_d; wr_len_o <= wr_len_d; wr_off_o <= wr_off_d; wr_last_o <= wr_last_d;
  end

  assign idle_o = (state_q == S_IDLE);
  assign sgi_o = sgi_q;
  assign sgo_o = sgo_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_start: assert property (@(posedge clk_i) disable iff (!chk_q) start_i |-> idle_o)
    else $error("tmnic_scatter: start while a scatter runs");
  a_start_args: assert property (@(posedge clk_i) disable iff (!chk_q) start_i |-> skip_i < len_i)
    else $error("tmnic_scatter: started with nothing to scatter");
  a_overrun: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_SCAT && avail_i && sge_done |-> sgi_q != SG_W'(SLOTS - 1))
    else $error("tmnic_scatter: the SGEs hold less than the packet (capacity not checked)");
  a_invariants: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_SCAT |-> dmo_q == LEN_W'(done_q - sgo_q[LEN_W-1:0]) &&
                          lim_q == {1'b0, sgo_q} + 33'(pkt_rest))
    else $error("tmnic_scatter: the piece decision's registers disagree with the cursor");
  a_sge_sane: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_SCAT |-> sgo_q <= sg.len) else $error("tmnic_scatter: cursor beyond its SGE");
  a_wr_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    wr_valid_o && !wr_ready_i |=> wr_valid_o && $stable(wr_addr_o) && $stable(wr_len_o) &&
    $stable(wr_off_o) && $stable(wr_last_o))
    else $error("tmnic_scatter: DMA write request changed before it was taken");
  a_wr_state: assert property (@(posedge clk_i) disable iff (!chk_q) wr_valid_o == (state_q == S_WAIT))
    else $error("tmnic_scatter: request valid outside its state");
`endif
endmodule
