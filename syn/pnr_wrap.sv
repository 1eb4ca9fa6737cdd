// Place-and-route wrapper of tmnic_tm_engine (syn/README.md, "Tag-matching engine"): the engine has
// ~300 input and ~1000 output bits, more than the 197 user I/O of a CABGA381 package, so here its
// inputs come from a shift register loaded one bit per clock from one pin, and its outputs are
// registered and XOR-folded into 8 registered pins. Every engine input is a distinct flip-flop and
// every output bit reaches a pin, so synthesis can remove nothing of the engine. All paths into and
// out of the engine begin and end at flip-flops of this wrapper (no logic between them and the
// engine's ports), so nextpnr's Fmax is the engine's own speed. The wrapper adds W_IN + W_OUT + 8
// flip-flops and ~W_OUT/3 LUT4s.
//
// The engine is instantiated through tmnic_tm_wrap_eng, which syn/synth.py generates from the
// engine's elaborated ports at the variant's parameters (every input but clk_i/rst_ni from in_i,
// every output into out_o, in port order) and which gives W_IN and W_OUT: a port added to or
// resized in the engine needs no change here. For synthesis only, not simulated.
module tmnic_tm_wrap #(
  parameter int unsigned W_IN  = 2,  // engine input bits (all inputs but clk_i and rst_ni), >= 2
  parameter int unsigned W_OUT = 1   // engine output bits
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       sin_i,   // serial input: shifted into the engine's input register
  output logic [7:0] sout_o   // XOR fold of every engine output
);
  logic [W_IN-1:0] in_q;
  always_ff @(posedge clk_i) in_q <= {in_q[W_IN-2:0], sin_i};

  logic [W_OUT-1:0] out, out_q;
  tmnic_tm_wrap_eng u_eng (.clk_i, .rst_ni, .in_i(in_q), .out_o(out));
  always_ff @(posedge clk_i) out_q <= out;

  logic [7:0] fold;
  always_comb begin
    fold = '0;
    for (int i = 0; i < int'(W_OUT); i++) fold[i % 8] ^= out_q[i];
  end
  always_ff @(posedge clk_i) sout_o <= fold;
endmodule
