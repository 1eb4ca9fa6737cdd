// Place-and-route wrapper of tmnic_tm_engine (syn/README.md, "Tag-matching engine"): the engine has
// ~300 input and ~830 output bits (more than the 197 user I/O of a CABGA381 package), so here its
// inputs come from a shift register loaded one bit per clock from one pin, and its outputs are
// XOR-folded into 8 registered pins. Every engine input is a distinct flip-flop and every output bit
// reaches a pin, so synthesis can remove nothing of the engine; the wrapper adds W_IN + 8 flip-flops
// and ~W_OUT/3 LUTs. Paths into the engine start at flip-flops (as they would behind a NIC's
// registered request FIFOs) and its outputs end at flip-flops one XOR tree later, so nextpnr's Fmax
// is the engine's internal register-to-register speed. For synthesis only, not simulated.
module tmnic_tm_wrap #(
  parameter int unsigned N_ENTRIES = 256,
  parameter int unsigned LANES     = N_ENTRIES,
  parameter int unsigned NUM_SRQ   = 16,
  localparam int unsigned H_W   = $clog2(N_ENTRIES),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       sin_i,   // serial input: shifted into the engine's input register
  output logic [7:0] sout_o   // XOR fold of every engine output
);
  // Engine inputs, in one vector.
  localparam int unsigned W_OP  = 1 + 2 + SRQ_W + H_W + 64 + 64 + 1 + 16;
  localparam int unsigned W_LK  = 1 + SRQ_W + 64 + 1;
  localparam int unsigned W_IN  = W_OP + W_LK;
  localparam int unsigned W_OUT = 2 + 1 + 1 + 16 + 1 + 1 + H_W + 1 + 1
                                  + 2 * NUM_SRQ * (H_W + 1) + 2 * NUM_SRQ * 16 + 1;

  logic [W_IN-1:0] in_q;
  always_ff @(posedge clk_i) in_q <= {in_q[W_IN-2:0], sin_i};

  logic             op_valid, op_ready, op_sw_cnt_vld, op_rsp_valid, op_rsp_ok;
  logic [1:0]       op_code;
  logic [SRQ_W-1:0] op_srq, lk_srq;
  logic [H_W-1:0]   op_handle, lk_rsp_handle;
  logic [63:0]      op_tag, op_mask, lk_tag;
  logic [15:0]      op_sw_cnt, op_rsp_hw_cnt;
  logic             lk_valid, lk_ready, lk_commit_miss;
  logic             lk_rsp_valid, lk_rsp_hit, lk_rsp_unexp, lk_rsp_blocked, idle;
  logic [NUM_SRQ-1:0][H_W:0] occ, disabled;
  logic [NUM_SRQ-1:0][15:0]  hw_cnt, sw_cnt;

  assign {op_valid, op_code, op_srq, op_handle, op_tag, op_mask, op_sw_cnt_vld, op_sw_cnt,
          lk_valid, lk_srq, lk_tag, lk_commit_miss} = in_q;

  tmnic_tm_engine #(.N_ENTRIES(N_ENTRIES), .LANES(LANES), .NUM_SRQ(NUM_SRQ)) u_eng (
    .clk_i, .rst_ni,
    .op_valid_i(op_valid), .op_ready_o(op_ready), .op_code_i(op_code), .op_srq_i(op_srq),
    .op_handle_i(op_handle), .op_tag_i(op_tag), .op_mask_i(op_mask), .op_sw_cnt_vld_i(op_sw_cnt_vld),
    .op_sw_cnt_i(op_sw_cnt),
    .op_rsp_valid_o(op_rsp_valid), .op_rsp_ok_o(op_rsp_ok), .op_rsp_hw_cnt_o(op_rsp_hw_cnt),
    .lk_valid_i(lk_valid), .lk_ready_o(lk_ready), .lk_srq_i(lk_srq), .lk_tag_i(lk_tag),
    .lk_commit_miss_i(lk_commit_miss),
    .lk_rsp_valid_o(lk_rsp_valid), .lk_rsp_hit_o(lk_rsp_hit), .lk_rsp_handle_o(lk_rsp_handle),
    .lk_rsp_unexp_o(lk_rsp_unexp), .lk_rsp_blocked_o(lk_rsp_blocked),
    .occ_o(occ), .disabled_o(disabled), .hw_cnt_o(hw_cnt), .sw_cnt_o(sw_cnt), .idle_o(idle));

  logic [W_OUT-1:0] out;
  assign out = {op_ready, lk_ready, op_rsp_valid, op_rsp_ok, op_rsp_hw_cnt, lk_rsp_valid, lk_rsp_hit,
                lk_rsp_handle, lk_rsp_unexp, lk_rsp_blocked, occ, disabled, hw_cnt, sw_cnt, idle};

  logic [7:0] fold;
  always_comb begin
    fold = '0;
    for (int i = 0; i < int'(W_OUT); i++) fold[i % 8] ^= out[i];
  end
  always_ff @(posedge clk_i) sout_o <= fold;
endmodule
