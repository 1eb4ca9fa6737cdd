// Test wrapper around tmnic_crc_acc: the accumulator plus the builder's un-shift
// (crc32_unshift(y, k)) as a combinational output, so the test sees the plain register.
module tmnic_crc_tb
  import tmnic_crc_pkg::*;
#(
  parameter int unsigned W = 64
) (
  input  logic                clk_i,
  input  logic                rst_ni,
  input  logic                valid_i,
  input  logic                first_i,
  input  logic [8*W-1:0]      data_i,
  input  logic [W-1:0]        en_i,
  input  logic [W-1:0]        ff_i,
  output logic [31:0]         y_o,
  output logic [CRC_SH_W-1:0] k_o,
  output logic                res_ok_o,
  output logic [31:0]         crc_o      // register after the covered bytes so far
);
  tmnic_crc_acc #(.W(W), .FIRST_LO(14), .CHECK(1'b1)) u_acc (
    .clk_i, .rst_ni, .valid_i, .first_i, .data_i, .en_i, .ff_i, .y_o, .k_o, .res_ok_o
  );
  assign crc_o = crc32_unshift(y_o, k_o);
endmodule
