// A table with one write port and NRD registered read ports, each read port its own block RAM
// (tmnic_ram_sdp, all written together), write-first: rdata_o[k] is the word at the address that
// raddr_i[k] gave one cycle earlier, as the table is after that edge's write. A caller that presents
// the next value of its index register therefore reads exactly what a flip-flop table indexed by
// the register would give, writes included.
//
// The block RAMs' own read of a word being written is undefined (READ_FIRST = 0 spares synth_ecp5's
// emulation logic); a port that read it shows the registered write word instead, one register shared
// by all ports. A port reads when its address changes and once after every write, so it always holds
// the word at its registered address, as a RAM read every cycle would, at a fraction of the toggles.
module tmnic_ram_rdports #(
  parameter int unsigned WIDTH = 64,   // word width in bits
  parameter int unsigned DEPTH = 64,   // number of words, >= 2
  parameter int unsigned NRD = 2,      // read ports, >= 1
  localparam int unsigned AW = $clog2(DEPTH)
) (
  input  logic                      clk_i,

  input  logic                      we_i,
  input  logic [AW-1:0]             waddr_i,
  input  logic [WIDTH-1:0]          wdata_i,

  input  logic [NRD-1:0][AW-1:0]    raddr_i,
  output logic [NRD-1:0][AW-1:0]    raddr_q_o,   // the address each rdata_o word belongs to
  output logic [NRD-1:0][WIDTH-1:0] rdata_o
);
  if (NRD < 1) begin : g_param_check
    $fatal(1, "tmnic_ram_rdports: NRD must be >= 1");
  end

  logic                  we_q;
  logic [WIDTH-1:0]      wdata_q;
  logic [NRD-1:0]        col_q;      // port k read the word written at the last edge
  logic [NRD-1:0][AW-1:0] raddr_q;

  for (genvar k = 0; k < int'(NRD); k++) begin : g_port
    logic [WIDTH-1:0] rdata;
    tmnic_ram_sdp #(.WIDTH(WIDTH), .DEPTH(DEPTH), .READ_FIRST(1'b0)) u_ram (
      .clk_i, .we_i, .waddr_i, .wdata_i,
      .re_i(raddr_i[k] != raddr_q[k] || we_q), .raddr_i(raddr_i[k]), .rdata_o(rdata));
    assign rdata_o[k] = col_q[k] ? wdata_q : rdata;
    always_ff @(posedge clk_i) col_q[k] <= we_i && raddr_i[k] == waddr_i;
  end

  always_ff @(posedge clk_i) begin
    raddr_q <= raddr_i;
    we_q <= we_i;
    if (we_i) wdata_q <= wdata_i;
  end
  assign raddr_q_o = raddr_q;
endmodule
