// Round-robin arbiter: one grant among the requesters, starting after the last winner.
// Combinational grant; the priority pointer advances only when the grant is taken (ack_i).
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
  if (N < 1) begin : g_chk
    $fatal(1, "tmnic_rr_arb: N must be >= 1");
  end

  logic [IDX_W-1:0] last_q;

  always_comb begin
    gnt_o = '0;
    idx_o = '0;
    valid_o = 1'b0;
    for (int k = 1; k <= N; k++) begin
      logic [IDX_W-1:0] c;
      c = IDX_W'((int'(last_q) + k) % N);
      if (!valid_o && req_i[c]) begin
        valid_o = 1'b1;
        idx_o = IDX_W'(c);
        gnt_o[c] = 1'b1;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) last_q <= IDX_W'(N - 1);
    else if (ack_i && valid_o) last_q <= idx_o;
  end
endmodule
