// tmnic_crc_pkg::crc32_beat (through tmnic_crc_tb) against the C++ CRC, including the two ICRC
// test vectors of roce-wire.md §1.3 computed beat by beat with the ICRC byte masks.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "Vtmnic_crc_tb.h"
#include "axis_bfm.hpp"
#include "pkt_common.hpp"
#include "roce/roce_model.hpp"

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

class CrcBench {
 public:
  CrcBench() : ctx_(std::make_unique<VerilatedContext>()) {
    top_ = std::make_unique<Vtmnic_crc_tb>(ctx_.get());
    top_->clk_i = 0;
    top_->valid_i = 0;
    top_->eval();
  }
  ~CrcBench() { top_->final(); }
  // One beat of up to 64 bytes; returns the RTL's CRC register after it.
  uint32_t step(bool seed, uint32_t crc, const uint8_t* data, uint64_t en, uint64_t ff) {
    top_->valid_i = 1;
    top_->seed_i = seed;
    top_->crc_i = crc;
    set_bytes(top_->data_i, data, 64);
    top_->en_i = en;
    top_->ff_i = ff;
    top_->eval();
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->valid_i = 0;
    top_->eval();
    return top_->crc_o;
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_crc_tb> top_;
};

uint32_t ref_step(uint32_t crc, const uint8_t* d, uint64_t en, uint64_t ff) {
  for (unsigned i = 0; i < 64; ++i) {
    if (!((en >> i) & 1)) continue;
    const uint8_t b = ((ff >> i) & 1) ? 0xFF : d[i];
    crc = crc32_update(crc, &b, 1);
  }
  return crc;
}

// ICRC of a whole frame fed in beats of `w` bytes, the way the RTL does it: bytes [14, end) are
// covered, offsets 15, 22, 24, 25, 40, 41, 46 forced to 0xFF.
uint32_t rtl_icrc(CrcBench& b, const std::vector<uint8_t>& f, unsigned w) {
  const size_t end = f.size() - 4;
  uint32_t crc = 0;
  for (size_t off = 0; off < f.size(); off += w) {
    uint8_t d[64] = {};
    uint64_t en = 0, ff = 0;
    for (unsigned i = 0; i < w && off + i < f.size(); ++i) {
      const size_t o = off + i;
      d[i] = f[o];
      if (o >= 14 && o < end) en |= 1ull << i;
      if (o == 15 || o == 22 || o == 24 || o == 25 || o == 40 || o == 41 || o == 46)
        ff |= 1ull << i;
    }
    crc = b.step(off == 0, crc, d, en, ff);
  }
  return ~crc;
}

}  // namespace

TEST(CrcStep, SeedIsEightOnes) {
  CrcBench b;
  uint8_t d[64];
  std::fill(d, d + 64, 0xFF);
  EXPECT_EQ(b.step(false, 0xFFFFFFFFu, d, 0xFF, 0), kIcrcSeed);
  EXPECT_EQ(b.step(false, 0xFFFFFFFFu, d, 0, 0xFF), 0xFFFFFFFFu);  // nothing enabled
}

TEST(CrcStep, IcrcVectorsBeatByBeat) {
  CrcBench b;
  for (unsigned w : {32u, 64u}) {
    EXPECT_EQ(rtl_icrc(b, vector1_frame(), w), 0xA0BBD1A8u) << w;
    EXPECT_EQ(rtl_icrc(b, vector2_frame(), w), 0xF2233B66u) << w;
  }
}

TEST(CrcStep, RandomBeats) {
  CrcBench b;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 20000; ++i) {
    uint8_t d[64];
    for (auto& x : d) x = static_cast<uint8_t>(rng());
    uint64_t en;
    switch (i % 4) {
      case 0:
        en = ~0ull;
        break;
      case 1:
        en = rng();
        break;
      case 2: {  // contiguous range
        const unsigned lo = rng() % 65, hi = lo + rng() % (65 - lo);
        en = keep_mask(hi) & ~keep_mask(lo);
        break;
      }
      default:
        en = keep_mask(rng() % 65);
        break;
    }
    const uint64_t ff = (i % 3 == 0) ? rng() : 0;
    const uint32_t crc = static_cast<uint32_t>(rng());
    ASSERT_EQ(b.step(false, crc, d, en, ff), ref_step(crc, d, en, ff)) << i;
  }
}
