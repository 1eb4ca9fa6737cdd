// qp_cfg_t and the engines' views of it (tmnic_pkg, rtl/pkg/tmnic_pkg.sv) as the block tests see
// them: not in a generated header, so their field lists are kept here once, most significant field
// first. Benches fill all of qp_cfg_t's bits at random and pack a view from it, so a wrong offset of
// a field a block uses shows up as a mismatch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lib/bits.hpp"

namespace tmnic::tb {

enum CfgField {
  kCfState, kCfPd, kCfSendCq, kCfRecvCq, kCfSrq, kCfSqBase, kCfSqLog, kCfRqBase, kCfRqLog, kCfPmtuLog,
  kCfDestQpn, kCfDestIp, kCfDmac, kCfMinRnr, kCfRnrRetry, kCfRetryCnt, kCfTimeout, kCfRemAccess, kCfUd, kCfQkey,
  kCfTclass, kCfHopLimit, kCfMaxRd, kNumCfgFields
};
constexpr unsigned kCfgWidth[kNumCfgFields] = {3, 16, 16, 16, 16, 64, 4, 64, 4, 4, 24, 32, 48, 5, 3, 3, 5, 4, 1, 32, 8, 8, 3};
// Bit position of a field's LSB in the packed qp_cfg_t.
constexpr unsigned cfg_lsb(unsigned f) {
  unsigned l = 0;
  for (unsigned i = f + 1; i < kNumCfgFields; ++i) l += kCfgWidth[i];
  return l;
}
constexpr unsigned kQpCfgBits = cfg_lsb(0) + kCfgWidth[0];
static_assert(kQpCfgBits == 383, "qp_cfg_t is 383 bits (tmnic_pkg.sv)");
constexpr unsigned kQpCfgWords = (kQpCfgBits + 31) / 32;

// The views: which qp_cfg_t fields each read port of tmnic_ctx carries, most significant first.
inline constexpr CfgField kPathView[] = {kCfDmac, kCfDestIp, kCfDestQpn, kCfTclass, kCfHopLimit};  // qp_path_t
inline constexpr CfgField kReqView[] = {kCfState, kCfPd, kCfSqBase, kCfSqLog, kCfPmtuLog, kCfUd, kCfMaxRd,
                                        kCfDmac, kCfDestIp, kCfDestQpn, kCfTclass, kCfHopLimit};  // qp_req_cfg_t
inline constexpr CfgField kCmpView[] = {kCfState, kCfSendCq, kCfRnrRetry, kCfRetryCnt, kCfTimeout};  // qp_cmp_cfg_t
inline constexpr CfgField kRspView[] = {kCfState, kCfPd, kCfRecvCq, kCfSrq, kCfRqBase, kCfRqLog,
                                        kCfDestIp, kCfMinRnr, kCfRemAccess, kCfUd, kCfQkey,
                                        kCfPmtuLog, kCfSqBase, kCfSqLog};                       // qp_rsp_cfg_t
inline constexpr CfgField kSrcQpView[] = {kCfDestQpn};                                         // cqe_src_qp_o

template <std::size_t N>
constexpr unsigned view_bits(const CfgField (&v)[N]) {
  unsigned b = 0;
  for (CfgField f : v) b += kCfgWidth[f];
  return b;
}
static_assert(view_bits(kPathView) == 120 && view_bits(kReqView) == 215 && view_bits(kCmpView) == 30 &&
              view_bits(kRspView) == 265, "a view's width differs from tmnic_pkg.sv");

// Packs the view of fields v[0..n) (most significant first) of the qp_cfg_t in `cfg` (kQpCfgWords
// words) into `dst` at bit `base`.
inline void pack_view(const CfgField* v, std::size_t n, const uint32_t* cfg, uint32_t* dst, unsigned base) {
  unsigned pos = base;
  for (std::size_t i = 0; i < n; ++i) pos += kCfgWidth[v[i]];
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned fw = kCfgWidth[v[i]];
    pos -= fw;
    for (unsigned b = 0; b < fw; b += 32) set_bits(dst, pos + b, fw - b < 32 ? fw - b : 32, get_bits(cfg, cfg_lsb(v[i]) + b, fw - b < 32 ? fw - b : 32));
  }
}
template <std::size_t N>
void pack_view(const CfgField (&v)[N], const uint32_t* cfg, uint32_t* dst, unsigned base) {
  pack_view(v, N, cfg, dst, base);
}

}  // namespace tmnic::tb
