// CRC-32 helpers for the RoCEv2 invariant CRC (ICRC).
//
// The CRC is the Ethernet/zlib CRC-32: polynomial 0x04C11DB7 used reflected (0xEDB88320), bytes
// fed LSB first, initial register 0xFFFFFFFF, final XOR 0xFFFFFFFF. The ICRC additionally covers
// 8 bytes of 0xFF standing in for the absent LRH; ICRC_SEED is the register value after those 8
// bytes, so hardware starts directly at the IPv4 header (roce-wire.md §1.3).
//
// crc32_beat() is meant to be called from a clocked block that only evaluates it on a valid beat
// (`if (valid && ready) crc_q <= crc32_beat(...)`), so an idle simulation does not pay for it.
package tmnic_crc_pkg;
  // CRC32_POLY_REFL and ICRC_SEED come from tmnic_hwif_pkg (hwif/spec.py).
  import tmnic_hwif_pkg::CRC32_POLY_REFL;
  // Widest beat crc32_beat() handles, in bytes. Narrower callers zero-extend data/en/ff.
  localparam int unsigned CRC_MAX_BYTES = 64;

  typedef logic [255:0][31:0] crc32_table_t;

  // Byte-at-a-time table for the reflected polynomial (entry i = CRC of byte i from register 0).
  function automatic crc32_table_t crc32_gen_table();
    crc32_table_t t;
    logic [31:0]  c;
    for (int unsigned i = 0; i < 256; i++) begin
      c = 32'(i);
      for (int unsigned k = 0; k < 8; k++) begin
        c = c[0] ? ((c >> 1) ^ CRC32_POLY_REFL) : (c >> 1);
      end
      t[i] = c;
    end
    return t;
  endfunction

  localparam crc32_table_t CRC32_TABLE = crc32_gen_table();

  // Feed one byte into the (non-inverted) CRC register.
  function automatic logic [31:0] crc32_byte(input logic [31:0] crc, input logic [7:0] b);
    return (crc >> 8) ^ CRC32_TABLE[crc[7:0] ^ b];
  endfunction

  // Feed one beat into the CRC register. Byte i is data[8*i +: 8]; it is fed only if en[i] is set,
  // and as 8'hFF instead of its value if ff[i] is set (the ICRC "masked" fields). Bytes are fed in
  // lane order 0, 1, ...; the enabled bytes need not be contiguous.
  function automatic logic [31:0] crc32_beat(input logic [31:0]                  crc,
                                             input logic [8*CRC_MAX_BYTES-1:0] data,
                                             input logic [CRC_MAX_BYTES-1:0]   en,
                                             input logic [CRC_MAX_BYTES-1:0]   ff);
    logic [31:0] c;
    c = crc;
    for (int unsigned i = 0; i < CRC_MAX_BYTES; i++) begin
      if (en[i]) begin
        c = crc32_byte(c, ff[i] ? 8'hFF : data[8*i +: 8]);
      end
    end
    return c;
  endfunction

endpackage
