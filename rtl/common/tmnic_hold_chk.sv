// Simulation check of a valid/ready handshake's source rule: an offer is held, unchanged, until it is
// taken. Instantiated inside `ifndef SYNTHESIS sections only, in place of a concurrent assertion
// with $stable on a wide payload: Verilator evaluates such a property's sampled copies every cycle
// (two 512-bit ones made a packet test 40 % slower), while this block copies the payload only in a
// cycle in which an offer waits and compares it only in the next.
module tmnic_hold_chk #(
  parameter int unsigned W = 1,              // payload bits
  parameter string       NAME = "tmnic_hold_chk"
) (
  input  logic         clk_i,
  input  logic         rst_ni,
  input  logic         valid_i,
  input  logic         ready_i,
  input  logic [W-1:0] data_i
);
  if (W < 1) begin : g_chk_w
    $fatal(1, "tmnic_hold_chk: W must be >= 1");
  end

  logic         chk_q, wait_q;
  logic [W-1:0] held_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  always_ff @(posedge clk_i) begin
    wait_q <= chk_q && valid_i && !ready_i;
    if (valid_i && !ready_i) held_q <= data_i;
    if (chk_q && wait_q) begin
      assert (valid_i) else $error("%s: offer withdrawn before it was taken", NAME);
      assert (data_i == held_q) else $error("%s: offer changed before it was taken", NAME);
    end
  end
endmodule
