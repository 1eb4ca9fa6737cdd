// Bucket index of a key in one way of one mask class of the tag-matching engine (hwif/spec.py,
// "TM_HASH"): key K = {srq, masked tag}, L = K[LB-1:0], R = K >> LB; index = L ^ H(R), where H is a
// linear (XOR) hash with the generated constants TM_HASH_Q[CLS][WAY]. The table stores R: a stored R
// and the bucket it sits in give back L, so R alone identifies the key within the bucket.
// Purely combinational: each index bit is the XOR of a constant selection of R's bits.
module tmnic_tm_hash import tmnic_hwif_pkg::*; #(
  parameter int unsigned CLS   = 0,   // mask class (selects the constants)
  parameter int unsigned WAY   = 0,   // way within the class
  parameter int unsigned LB    = 9,   // log2 buckets per way
  parameter int unsigned SRQ_W = 4,
  localparam int unsigned R_W = SRQ_W + 64 - LB
) (
  input  logic [SRQ_W-1:0] srq_i,
  input  logic [63:0]      mtag_i,  // tag & class mask
  output logic [LB-1:0]    idx_o
);
  if (CLS >= TM_HASH_MAX_CLASSES || WAY >= TM_HASH_MAX_WAYS) begin : g_chk_cw
    $fatal(1, "tmnic_tm_hash: CLS/WAY beyond the generated constants (hwif/spec.py TM_HASH_MAX_*)");
  end
  if (LB < 1 || LB > 16) begin : g_chk_lb
    $fatal(1, "tmnic_tm_hash: LB must be in 1..16 (16-bit constants)");
  end
  if (R_W > TM_HASH_MAX_RBITS) begin : g_chk_rw
    $fatal(1, "tmnic_tm_hash: key longer than TM_HASH_MAX_RBITS");
  end

  // Bit b of the index XORs R[j] for every j whose constant has bit b set.
  function automatic logic [R_W-1:0] column(int unsigned b);
    logic [R_W-1:0] m;
    for (int unsigned j = 0; j < R_W; j++)
      m[j] = TM_HASH_Q[((CLS * TM_HASH_MAX_WAYS + WAY) * TM_HASH_MAX_RBITS + j) * 16 + b];
    return m;
  endfunction

  logic [R_W-1:0] keyr;
  assign keyr = {srq_i, mtag_i[63:LB]};
  for (genvar b = 0; b < int'(LB); b++) begin : g_bit
    localparam logic [R_W-1:0] COL = column(b);
    assign idx_o[b] = mtag_i[b] ^ (^(keyr & COL));
  end
endmodule
