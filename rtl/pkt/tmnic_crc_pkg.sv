// CRC-32 constants for the RoCEv2 invariant CRC (ICRC).
//
// The CRC is the Ethernet/zlib CRC-32: polynomial 0x04C11DB7 used reflected (0xEDB88320), bytes
// fed LSB first, initial register 0xFFFFFFFF, final XOR 0xFFFFFFFF. The ICRC additionally covers
// 8 bytes of 0xFF standing in for the absent LRH; ICRC_SEED is the register value after those 8
// bytes, so hardware starts directly at the IPv4 header (roce-wire.md §1.3).
//
// The hardware never runs the CRC byte by byte. The register update over n bytes is linear over
// GF(2): reg' = A^n reg ^ D(bytes), where A is "feed one zero byte" and D the CRC of the bytes
// from register 0. tmnic_crc_acc evaluates D for a whole beat as one XOR matrix, and the
// functions here build, at elaboration only, the matrices it and its users need:
//   crc32_data_mat(W)   D of a W-byte beat (leading zero bytes leave register 0 at 0, so a
//                       beat with lanes below its first covered lane zeroed needs no shifting)
//   CRC32_INV_POW2[j]   A^-(2^j)  (undo 2^j zero bytes: A is invertible)
// Matrices are stored by rows: output bit r = ^(m[r] & v).
package tmnic_crc_pkg;
  // CRC32_POLY_REFL and ICRC_SEED come from tmnic_hwif_pkg (hwif/spec.py).
  import tmnic_hwif_pkg::CRC32_POLY_REFL;

  // Widest beat supported, in bytes.
  localparam int unsigned CRC_MAX_BYTES = 64;
  // Shift amounts are 0..CRC_MAX_BYTES-1 bytes.
  localparam int unsigned CRC_SH_W = $clog2(CRC_MAX_BYTES);

  typedef logic [31:0][31:0]                  crc32_mat_t;
  typedef logic [31:0][8*CRC_MAX_BYTES-1:0]   crc32_dmat_t;
  typedef crc32_mat_t [CRC_SH_W-1:0]          crc32_mat_pow2_t;

  // One bit through the reflected LFSR, and its inverse (POLY_REFL[31] is set, so the bit that
  // left the register is the new bit 31).
  function automatic logic [31:0] crc32_bit_fwd(input logic [31:0] c);
    return c[0] ? ((c >> 1) ^ CRC32_POLY_REFL) : (c >> 1);
  endfunction
  function automatic logic [31:0] crc32_bit_back(input logic [31:0] c);
    logic b;
    b = c[31];
    return ((b ? (c ^ CRC32_POLY_REFL) : c) << 1) | 32'(b);
  endfunction

  // Register after n zero bytes (back: before them).
  function automatic logic [31:0] crc32_steps(input logic [31:0] c, input int unsigned n,
                                              input logic back);
    logic [31:0] r;
    r = c;
    for (int unsigned i = 0; i < 8 * n; i++) begin
      r = back ? crc32_bit_back(r) : crc32_bit_fwd(r);
    end
    return r;
  endfunction
  function automatic logic [31:0] crc32_adv(input logic [31:0] c, input int unsigned n);
    return crc32_steps(c, n, 1'b0);
  endfunction
  function automatic logic [31:0] crc32_unadv(input logic [31:0] c, input int unsigned n);
    return crc32_steps(c, n, 1'b1);
  endfunction

  // Matrices of A^n and A^-n, by rows.
  function automatic crc32_mat_t crc32_adv_mat(input int unsigned n, input logic back);
    crc32_mat_t  m;
    logic [31:0] col;
    m = '0;
    for (int unsigned c = 0; c < 32; c++) begin
      col = back ? crc32_unadv(32'(1) << c, n) : crc32_adv(32'(1) << c, n);
      for (int unsigned r = 0; r < 32; r++) begin
        m[r][c] = col[r];
      end
    end
    return m;
  endfunction

  function automatic crc32_mat_pow2_t crc32_inv_pow2_mats();
    crc32_mat_pow2_t p;
    for (int unsigned j = 0; j < CRC_SH_W; j++) begin
      p[j] = crc32_adv_mat(1 << j, 1'b1);
    end
    return p;
  endfunction

  localparam crc32_mat_pow2_t CRC32_INV_POW2 = crc32_inv_pow2_mats();

  // D for a beat of nbytes bytes (byte i in bits [8i +: 8]): column of bit 8i+b is the register
  // after byte i = (1 << b) from register 0 followed by nbytes-1-i zero bytes. Built from the top
  // byte down, one byte of zeros per step.
  // back > 0: A^-back D, D as if the beat were followed by -back bytes.
  function automatic crc32_dmat_t crc32_data_mat(input int unsigned nbytes,
                                                 input int unsigned back);
    crc32_dmat_t m;
    logic [31:0] col [8];
    logic [31:0] cb;
    for (int unsigned r = 0; r < 32; r++) begin
      m[r] = '0;
    end
    for (int unsigned b = 0; b < 8; b++) begin
      col[b] = crc32_adv(32'(1) << b, 1);  // register after the single byte (1 << b)
    end
    for (int unsigned i = nbytes; i > 0; i--) begin
      for (int unsigned b = 0; b < 8; b++) begin
        cb = crc32_unadv(col[b], back);
        for (int unsigned r = 0; r < 32; r++) begin
          m[r][8*(i-1) + b] = cb[r];
        end
        col[b] = crc32_adv(col[b], 1);
      end
    end
    return m;
  endfunction

  // Register after the 4 bytes of ~reg (little-endian) that end a correct frame: reg ^ ~reg is
  // all ones, then 4 bytes through the LFSR. Any correct frame leaves this value (0xDEBB20E3).
  localparam logic [31:0] CRC32_RESIDUE = crc32_adv(32'hFFFF_FFFF, 4);

  // A^-k c for k = 0..CRC_MAX_BYTES-1 (the register k zero bytes earlier), one conditional
  // matrix per bit of k. Small arguments only: Verilator zero-initialises an inlined function's
  // temporaries on every call.
  function automatic logic [31:0] crc32_unshift(input logic [31:0] c,
                                                input logic [CRC_SH_W-1:0] k);
    logic [31:0] v, t;
    v = c;
    t = '0;
    for (int unsigned j = 0; j < CRC_SH_W; j++) begin
      if (k[j]) begin
        for (int unsigned r = 0; r < 32; r++) begin
          t[r] = ^(CRC32_INV_POW2[j][r] & v);
        end
        v = t;
      end
    end
    return v;
  endfunction

endpackage
