// Enable of a block's simulation assertions: low in reset and in the first cycle after it, high from
// then on, so that no property judges registers that are still coming out of reset. Instantiated
// inside `ifndef SYNTHESIS sections only.
module tmnic_chk_en (
  input  logic clk_i,
  input  logic rst_ni,
  output logic en_o
);
  logic en_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) en_q <= 1'b0;
    else         en_q <= 1'b1;
  end
  // Low while rst_ni is low even before the first reset edge (a random power-up value of en_q).
  assign en_o = en_q && rst_ni;
endmodule
