// Place-and-route wrapper of one block (the tag-matching engine, every NIC block; syn/README.md): a
// block has hundreds or thousands of port bits, more than the 197 user I/O of a CABGA381 package, so
// here its inputs come from a shift register loaded one bit per clock from one pin, and its outputs
// are registered and XOR-folded into 8 registered pins. Every block input is a distinct flip-flop and
// every output bit reaches a pin, so synthesis can remove nothing of the block. All paths into and
// out of the block begin and end at flip-flops of this wrapper (no logic between them and the
// block's ports), so nextpnr's Fmax is the block's own speed. The wrapper adds W_IN + W_OUT + 8
// flip-flops and ~W_OUT/3 LUT4s.
//
// The block is instantiated through tmnic_pnr_wrap_dut, which syn/synth.py generates from the
// block's elaborated ports at the variant's parameters (every input but clk_i/rst_ni from in_i,
// every output into out_o, in port order) and which gives W_IN and W_OUT: a port added to or
// resized in the block needs no change here. For synthesis only, not simulated.
module tmnic_pnr_wrap #(
  parameter int unsigned W_IN  = 2,  // block input bits (all inputs but clk_i and rst_ni), >= 2
  parameter int unsigned W_OUT = 1   // block output bits
) (
  input  logic       clk_i,
  input  logic       rst_ni,
  input  logic       sin_i,   // serial input: shifted into the block's input register
  output logic [7:0] sout_o   // XOR fold of every block output
);
  logic [W_IN-1:0] in_q;
  always_ff @(posedge clk_i) in_q <= {in_q[W_IN-2:0], sin_i};

  logic [W_OUT-1:0] out, out_q;
  tmnic_pnr_wrap_dut u_dut (.clk_i, .rst_ni, .in_i(in_q), .out_o(out));
  always_ff @(posedge clk_i) out_q <= out;

  logic [7:0] fold;
  always_comb begin
    fold = '0;
    for (int i = 0; i < int'(W_OUT); i++) fold[i % 8] ^= out_q[i];
  end
  always_ff @(posedge clk_i) sout_o <= fold;
endmodule
