// qp_cfg_t (tmnic_pkg, rtl/pkg/tmnic_pkg.sv) as the block tests see it: not in a generated header,
// so its field list is kept here once, most significant field first. Benches fill all 327 bits at
// random, so a wrong offset of a field a block uses shows up as a mismatch.
#pragma once

namespace tmnic::tb {

enum CfgField {
  kCfState, kCfPd, kCfSendCq, kCfRecvCq, kCfSrq, kCfSqBase, kCfSqLog, kCfRqBase, kCfRqLog, kCfPmtuLog,
  kCfDestQpn, kCfDestIp, kCfDmac, kCfMinRnr, kCfRnrRetry, kCfRetryCnt, kCfTimeout, kNumCfgFields
};
constexpr unsigned kCfgWidth[kNumCfgFields] = {3, 16, 16, 16, 16, 64, 4, 64, 4, 4, 24, 32, 48, 5, 3, 3, 5};
// Bit position of a field's LSB in the packed struct.
constexpr unsigned cfg_lsb(unsigned f) {
  unsigned l = 0;
  for (unsigned i = f + 1; i < kNumCfgFields; ++i) l += kCfgWidth[i];
  return l;
}
constexpr unsigned kQpCfgBits = cfg_lsb(0) + kCfgWidth[0];
static_assert(kQpCfgBits == 327, "qp_cfg_t is 327 bits (tmnic_pkg.sv; test_ctx.cpp kQpBits)");
constexpr unsigned kQpCfgWords = (kQpCfgBits + 31) / 32;

}  // namespace tmnic::tb
