// Round-robin arbiter: one grant among the requesters, starting after the last winner.
// Combinational grant; the priority pointer advances only when the grant is taken (ack_i).
// The winner is the lowest requester above the last winner, else the lowest requester: two
// priority encoders and a compare, no modulo arithmetic (a "% N" for N not a power of two
// synthesises as N dividers).
module tmnic_rr_arb #(
  parameter int unsigned N = 2,
  localparam int unsigned IDX_W = (N > 1) ? $clog2(N) : 1
) (
  input  logic             clk_i,
  input  logic             rst_ni,
  input  logic [N-1:0]     req_i,
  input  logic             ack_i,    // the granted requester was served this cycle
  output logic [N-1:0]     gnt_o,    // one-hot, zero when no request
  output logic [IDX_W-1:0] idx_o,
  output logic             valid_o
);
  if (N < 1 || N > (1 << 16)) begin : g_chk
    $fatal(1, "tmnic_rr_arb: N must be in 1..65536");
  end

  logic [IDX_W-1:0] last_q;
  logic [IDX_W-1:0] lo, hi;    // lowest requester; lowest requester above last_q
  logic             any_hi;

  always_comb begin
    lo = '0;
    hi = '0;
    any_hi = 1'b0;
    for (int i = int'(N) - 1; i >= 0; i--) begin
      if (req_i[i]) lo = IDX_W'(i);
      if (req_i[i] && IDX_W'(i) > last_q) begin
        hi = IDX_W'(i);
        any_hi = 1'b1;
      end
    end
    valid_o = req_i != '0;
    idx_o = any_hi ? hi : lo;
    gnt_o = valid_o ? N'(1) << idx_o : '0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) last_q <= IDX_W'(N - 1);
    else if (ack_i && valid_o) last_q <= idx_o;
  end

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_onehot: assert property (@(posedge clk_i) disable iff (!chk_q) $onehot0(gnt_o) && (gnt_o & ~req_i) == '0)
    else $error("tmnic_rr_arb: grant not one-hot or to a requester that did not ask");
  a_valid: assert property (@(posedge clk_i) disable iff (!chk_q) valid_o == (req_i != '0) && valid_o == (gnt_o != '0))
    else $error("tmnic_rr_arb: valid_o does not follow the requests");
  a_last: assert property (@(posedge clk_i) disable iff (!chk_q) 32'(last_q) < N)
    else $error("tmnic_rr_arb: pointer out of range");
`endif
endmodule
