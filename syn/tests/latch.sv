// Self-test fixtures of scripts/synth.sh --check: each module infers a latch, which the synthesis
// checks must reject. yosys-slang turns the incomplete always_comb into a feedback loop (caught by
// `check -assert`), the incomplete always @* into a $dlatch (caught by `select -assert-none`).
module syn_latch_comb (
  input  logic       en_i,
  input  logic [3:0] d_i,
  output logic [3:0] q_o
);
  always_comb begin
    if (en_i) q_o = d_i;
  end
endmodule

module syn_latch_star (
  input  logic       en_i,
  input  logic [3:0] d_i,
  output logic [3:0] q_o
);
  always @* begin
    if (en_i) q_o = d_i;
  end
endmodule
