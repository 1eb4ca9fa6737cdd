// Shared by the tag-matching engine tests: the engine geometry of this build (TB_* macros, set by
// tb/tm/CMakeLists.txt per Verilated variant) and request builders.
#pragma once

#include <cstdint>

#include "Vtmnic_tm_engine.h"
#include "tm_harness.hpp"
#include "tm_hash.hpp"
#include "tm_model.hpp"

#ifndef TB_N
#define TB_N 64
#endif
#ifndef TB_CLASS
#define TB_CLASS 2
#endif
#ifndef TB_WAYS
#define TB_WAYS 4
#endif
#ifndef TB_BUCKETS
#define TB_BUCKETS (TB_N / 2)
#endif
#ifndef TB_CAM
#define TB_CAM 32
#endif
#ifndef TB_SEQ
#define TB_SEQ 64
#endif
#ifndef TB_NSRQ
#define TB_NSRQ 16
#endif

namespace tmnic::tm::test {

constexpr unsigned kN = TB_N, kClass = TB_CLASS, kWays = TB_WAYS, kBuckets = TB_BUCKETS, kCam = TB_CAM,
                   kSeq = TB_SEQ, kSrq = TB_NSRQ;
constexpr unsigned log2u(unsigned v) { return v <= 1 ? 0 : 1 + log2u(v / 2); }
constexpr Geometry kGeom{log2u(kBuckets), log2u(kSrq)};
// Every class has room for a FIFO per distinct key of a full list (tables of >= 2 N slots): the
// geometries where lookups never need the spill list for want of table space.
constexpr bool kRoomy = kWays * kBuckets >= 2 * kN && kClass >= 2;
// Live entries must span fewer than 2^(SEQ_W-1) ADDs (docs/tag-matching-engine.md); tests keep a
// margin for the requests in flight.
constexpr uint64_t kSeqWindow = kSeq >= 64 ? ~0ull : (1ull << (kSeq - 1)) - 64;

using H = Harness<Vtmnic_tm_engine>;

inline Req add(unsigned srq, unsigned h, uint64_t tag, uint64_t mask = ~0ull) {
  Req r;
  r.code = kAdd, r.srq = srq, r.handle = h, r.tag = tag, r.mask = mask;
  return r;
}
inline Req del(unsigned srq, unsigned h) {
  Req r;
  r.code = kDel, r.srq = srq, r.handle = h;
  return r;
}
inline Req sync(unsigned srq, uint16_t cnt) {
  Req r;
  r.code = kSync, r.srq = srq, r.cnt_vld = true, r.cnt = cnt;
  return r;
}
inline Req clear(unsigned srq) {
  Req r;
  r.code = kClear, r.srq = srq;
  return r;
}
inline Req lk(unsigned srq, uint64_t tag, bool commit = true) {
  Req r;
  r.lk = true, r.srq = srq, r.tag = tag, r.commit_miss = commit;
  return r;
}

}  // namespace tmnic::tm::test

#define CHECK_H(h)                              \
  do {                                          \
    ASSERT_EQ((h).errors(), 0u) << (h).what(); \
  } while (0)
