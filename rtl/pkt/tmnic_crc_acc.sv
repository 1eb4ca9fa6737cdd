// ICRC accumulator: the CRC-32 register over a frame's covered bytes, one beat per cycle.
//
// A beat's covered lanes (en_i) form one contiguous run: from lane FIRST_LO on a frame's first
// beat (the IPv4 header; the ICRC does not cover Ethernet), from lane 0 on later beats, and no
// lanes at all once a beat has ended before its top lane. Lanes with ff_i are fed as 0xFF.
//
// Instead of the byte-serial register y_o holds Y = A^k reg (see tmnic_crc_pkg), the register
// after the covered bytes advanced over the k = W - hi lanes that follow the last covered lane
// hi-1 of its beat. Zeroing the uncovered lanes and taking the beat's D matrix gives exactly
// that, so one beat costs one XOR matrix and one fixed A^W matrix, whatever its covered range:
//   first beat      Y = A^(W-FIRST_LO) ICRC_SEED ^ D(masked beat)   (a constant ^ D)
//   covered beat    Y = A^W Y ^ D(masked beat)
//   no lanes        Y, k held
// Users undo the shift where they need the register: crc32_unshift(y_o, k_o - BACK) is the
// register (the builder's ICRC is its complement); a receiver that covers the received ICRC too
// expects A^k CRC32_RESIDUE, compared here when CHECK = 1 (res_ok_o, from registers only).
// BACK > 0 folds a fixed part of that un-shift into the matrices (y_o = A^(k-BACK) reg) for a
// user whose k never falls below BACK.
module tmnic_crc_acc
  import tmnic_hwif_pkg::ICRC_SEED;
  import tmnic_crc_pkg::*;
#(
  parameter int unsigned W        = 64,  // bytes per beat
  parameter int unsigned FIRST_LO = 14,  // first covered lane of a frame's first beat
  parameter int unsigned BACK     = 0,   // y_o = A^-BACK Y
  parameter bit          CHECK    = 1'b0 // provide res_ok_o (BACK = 0 only)
) (
  input  logic                clk_i,
  input  logic                rst_ni,   // only for the simulation checks

  input  logic                valid_i,  // one beat
  input  logic                first_i,  // first beat of a frame
  input  logic [8*W-1:0]      data_i,
  input  logic [W-1:0]        en_i,
  input  logic [W-1:0]        ff_i,

  output logic [31:0]         y_o,      // A^k reg after the last valid beat
  output logic [CRC_SH_W-1:0] k_o,
  output logic                res_ok_o  // CHECK: y_o == A^k CRC32_RESIDUE
);

  if (W < 2 || W > CRC_MAX_BYTES || (W & (W - 1)) != 0 || FIRST_LO >= W || BACK >= W ||
      (CHECK && BACK != 0)) begin : g_param_check
    $fatal(1, "tmnic_crc_acc: W must be a power of two in 2..CRC_MAX_BYTES, FIRST_LO, BACK < W");
  end

  localparam crc32_dmat_t DMAT    = crc32_data_mat(W, BACK);
  localparam crc32_mat_t  ADV_W   = crc32_adv_mat(W, 1'b0);
  localparam logic [31:0] FIRST_K = crc32_unadv(crc32_adv(ICRC_SEED, W - FIRST_LO), BACK);

  // A^k CRC32_RESIDUE for every k: what a correct frame leaves in y_q.
  function automatic logic [CRC_MAX_BYTES-1:0][31:0] res_table();
    logic [CRC_MAX_BYTES-1:0][31:0] t;
    for (int unsigned k = 0; k < CRC_MAX_BYTES; k++) begin
      t[k] = crc32_adv(CRC32_RESIDUE, k);
    end
    return t;
  endfunction
  localparam logic [CRC_MAX_BYTES-1:0][31:0] RES_TAB = res_table();

  logic [31:0]         y_q;
  logic [CRC_SH_W-1:0] k_q;
  logic [31:0]         res_q;  // RES_TAB[k_q], looked up as k_q is loaded (CHECK)

  // Datapath only: evaluated on valid beats (simulation cost follows activity).
  always_ff @(posedge clk_i) begin : p_acc
    logic [8*W-1:0]      m;
    logic [31:0]         x, y;
    logic [CRC_SH_W-1:0] k;
    logic [31:0]         r;
    if (valid_i) begin
      k = '0;
      for (int unsigned i = 0; i < W; i++) begin
        m[8*i +: 8] = en_i[i] ? (ff_i[i] ? 8'hFF : data_i[8*i +: 8]) : 8'h00;
        if (en_i[i]) begin
          k = CRC_SH_W'(W - 1 - i);
        end
      end
      // The residue for that k: en_i is one run of lanes, so its top lane (set, the next one not)
      // is one-hot, and the table entry an OR over it (no priority chain in front of the table).
      r = '0;
      for (int unsigned i = 0; i < W; i++) begin
        if (CHECK && en_i[i] && (i == W - 1 || !en_i[(i + 1) % W])) begin
          r = r | RES_TAB[W - 1 - i];
        end
      end
      for (int unsigned b = 0; b < 32; b++) begin
        x[b] = ^(DMAT[b][8*W-1:0] & m);
        y[b] = first_i ? FIRST_K[b] : ^(ADV_W[b] & y_q);
      end
      if (first_i || en_i != '0) begin
        y_q   <= y ^ x;
        k_q   <= k;
        res_q <= r;
      end
    end
  end

  assign y_o      = y_q;
  assign k_o      = k_q;
  assign res_ok_o = CHECK && (y_q == res_q);  // (the table lookup a cycle ahead: one compare)

`ifndef SYNTHESIS
  // The covered-lane contract. open_q: the previous beat of this frame ended on its top lane.
  logic open_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      open_q <= 1'b0;
    end else if (valid_i) begin
      assert (((en_i + (en_i & (~en_i + 1'b1))) & en_i) == '0)
        else $error("tmnic_crc_acc: covered lanes not contiguous");
      if (first_i) begin
        assert (en_i == '0 || (en_i[FIRST_LO] && (en_i & ((W'(1) << FIRST_LO) - 1'b1)) == '0))
          else $error("tmnic_crc_acc: first beat not covered from FIRST_LO");
        open_q <= en_i[W-1];
      end else begin
        assert (en_i == '0 || (open_q && en_i[0]))
          else $error("tmnic_crc_acc: covered lanes after a gap");
        open_q <= open_q && en_i[W-1];
      end
    end
  end
`endif

endmodule
