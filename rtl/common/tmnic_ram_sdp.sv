// Simple dual-port RAM (one write port, one read port, one clock), block-RAM style.
//
// Read data is registered: the word at raddr_i appears on rdata_o one cycle after re_i. When the
// same address is written and read in one cycle the read returns the OLD contents (read-first) with
// READ_FIRST = 1, or an undefined word with READ_FIRST = 0: a caller that never uses such a word
// (it forwards the written data itself) saves the collision logic that block RAMs would otherwise
// need around them (their two ports do not order a same-address read and write). rdata_o holds its
// value while re_i is low.
//
// READ_FIRST costs logic on a block RAM: synth_ecp5 emulates it around a DP16KD in pseudo-dual-port
// mode with a register and a multiplexer per data bit. A caller whose FSM never reads the word it
// writes in the same cycle sets NO_COLLISION instead: READ_FIRST is then ignored (there is nothing
// to order) and the RAM asserts the promise in every simulation.
module tmnic_ram_sdp #(
  parameter int unsigned WIDTH = 64,  // word width in bits
  parameter int unsigned DEPTH = 512, // number of words, >= 2
  parameter bit READ_FIRST = 1'b1,    // a read colliding with a write returns the old word
  parameter bit NO_COLLISION = 1'b0,  // the caller never reads the address it writes (asserted;
                                      // READ_FIRST ignored)
  localparam int unsigned AW = $clog2(DEPTH)
) (
  input  logic             clk_i,

  // Write port.
  input  logic             we_i,
  input  logic [AW-1:0]    waddr_i,
  input  logic [WIDTH-1:0] wdata_i,

  // Read port.
  input  logic             re_i,
  input  logic [AW-1:0]    raddr_i,
  output logic [WIDTH-1:0] rdata_o
);

  if (DEPTH < 2) begin : g_param_check
    $fatal(1, "tmnic_ram_sdp: DEPTH must be >= 2");
  end

  logic [WIDTH-1:0] mem_q [DEPTH];
  logic [WIDTH-1:0] rdata_q;

  always_ff @(posedge clk_i) begin
    if (we_i) begin
      mem_q[waddr_i] <= wdata_i;
    end
    if (re_i) begin
      if ((!READ_FIRST || NO_COLLISION) && we_i && waddr_i == raddr_i) begin
`ifdef SYNTHESIS
        rdata_q <= 'x;
`else
        rdata_q <= ~mem_q[raddr_i];  // poisoned in simulation: a caller using it fails its tests
`endif
      end else begin
        rdata_q <= mem_q[raddr_i];
      end
    end
  end

  assign rdata_o = rdata_q;

`ifndef SYNTHESIS
  // An address past DEPTH (DEPTH not a power of two) would be lost on a write and read as garbage.
  a_waddr: assert property (@(posedge clk_i) we_i |-> 32'(waddr_i) < DEPTH)
    else $error("tmnic_ram_sdp: write address %0d >= DEPTH %0d", waddr_i, DEPTH);
  if (NO_COLLISION) begin : g_a_col
    a_no_collision: assert property (@(posedge clk_i) !(re_i && we_i && waddr_i == raddr_i))
      else $error("tmnic_ram_sdp: address %0d read while written (NO_COLLISION)", raddr_i);
  end
  a_raddr: assert property (@(posedge clk_i) re_i |-> 32'(raddr_i) < DEPTH)
    else $error("tmnic_ram_sdp: read address %0d >= DEPTH %0d", raddr_i, DEPTH);
`endif

endmodule
