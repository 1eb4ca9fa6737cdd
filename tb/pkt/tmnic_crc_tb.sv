// Test wrapper around tmnic_crc_pkg::crc32_beat: one registered CRC update per valid cycle.
module tmnic_crc_tb
  import tmnic_hwif_pkg::ICRC_SEED;
  import tmnic_crc_pkg::*;
(
  input  logic                         clk_i,
  // One beat: update crc_o with data_i (seed_i: start from ICRC_SEED instead of crc_i).
  input  logic                         valid_i,
  input  logic                         seed_i,
  input  logic [31:0]                  crc_i,
  input  logic [8*CRC_MAX_BYTES-1:0]   data_i,
  input  logic [CRC_MAX_BYTES-1:0]     en_i,
  input  logic [CRC_MAX_BYTES-1:0]     ff_i,
  // CRC register after the last valid beat.
  output logic [31:0]                  crc_o
);
  always_ff @(posedge clk_i) begin
    if (valid_i) begin
      crc_o <= crc32_beat(seed_i ? ICRC_SEED : crc_i, data_i, en_i, ff_i);
    end
  end
endmodule
