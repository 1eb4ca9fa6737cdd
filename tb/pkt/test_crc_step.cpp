// tmnic_crc_acc (through tmnic_crc_tb) against the byte-serial C++ CRC: the ICRC test vectors of
// roce-wire.md §1.3 beat by beat, random frames covered the builder's way (ICRC computed) and the
// parser's way (received ICRC covered too, residue check), trailing uncovered beats, idle cycles
// between beats, and the simulation checks of the covered-lane contract.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "Vtmnic_crc_tb.h"
#include "lib/bits.hpp"
#include "pkt_common.hpp"
#include "roce/roce_model.hpp"

#ifndef TB_W
#define TB_W 64
#endif

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

constexpr unsigned kW = TB_W;
constexpr unsigned kFirstLo = 14;

bool is_ff_offset(size_t o) {
  return o == 15 || o == 22 || o == 24 || o == 25 || o == 40 || o == 41 || o == 46;
}

class CrcBench {
 public:
  CrcBench() : ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->fatalOnError(false);
    top_ = std::make_unique<Vtmnic_crc_tb>(ctx_.get());
    top_->clk_i = 0;
    top_->valid_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~CrcBench() { top_->final(); }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
  }
  void idle(unsigned n) {
    top_->valid_i = 0;
    for (unsigned i = 0; i < n; ++i) tick();
  }
  void beat(bool first, const uint8_t* data, uint64_t en, uint64_t ff) {
    top_->valid_i = 1;
    top_->first_i = first;
    set_bytes(top_->data_i, data, kW);
    top_->en_i = en;
    top_->ff_i = ff;
    tick();
    top_->valid_i = 0;
    top_->eval();
  }
  uint32_t crc() const { return top_->crc_o; }
  bool res_ok() const { return top_->res_ok_o; }
  bool errors() const { return ctx_->gotError(); }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_crc_tb> top_;
};

// Feeds frame `f` in beats of kW bytes; bytes [14, end) are covered, the ICRC offsets fed as
// 0xFF. `gaps` inserts random idle cycles between beats.
void feed(CrcBench& b, const std::vector<uint8_t>& f, size_t end, std::mt19937_64* gaps) {
  for (size_t off = 0; off < f.size(); off += kW) {
    uint8_t d[64] = {};
    uint64_t en = 0, ff = 0;
    for (unsigned i = 0; i < kW && off + i < f.size(); ++i) {
      const size_t o = off + i;
      d[i] = f[o];
      if (o >= kFirstLo && o < end) en |= 1ull << i;
      if (is_ff_offset(o)) ff |= 1ull << i;
    }
    if (gaps && (*gaps)() % 3 == 0) b.idle(1 + (*gaps)() % 3);
    b.beat(off == 0, d, en, ff);
  }
}

// The byte-serial reference: register over the covered bytes of `f`, from ICRC_SEED.
uint32_t ref_reg(const std::vector<uint8_t>& f, size_t end) {
  uint32_t c = kIcrcSeed;
  for (size_t o = kFirstLo; o < end; ++o) {
    const uint8_t x = is_ff_offset(o) ? 0xFF : f[o];
    c = crc32_update(c, &x, 1);
  }
  return c;
}

}  // namespace

TEST(CrcAcc, IcrcVectorsBeatByBeat) {
  CrcBench b;
  for (const auto& [f, icrc] : {std::pair{vector1_frame(), 0xA0BBD1A8u},
                                std::pair{vector2_frame(), 0xF2233B66u}}) {
    feed(b, f, f.size() - 4, nullptr);  // builder: ICRC not covered
    EXPECT_EQ(~b.crc(), icrc);
    feed(b, f, f.size(), nullptr);      // parser: ICRC covered, residue
    EXPECT_TRUE(b.res_ok());
  }
  EXPECT_FALSE(b.errors());
}

// Random frame lengths (every end lane of the last beat), random bytes, trailing uncovered
// bytes/beats (Ethernet padding or garbage after the ICRC), idle cycles between beats.
TEST(CrcAcc, RandomFrames) {
  CrcBench b;
  std::mt19937_64 rng(TB_W * 7 + 1);
  const int n = 6000;
  int residue_bad = 0;
  for (int i = 0; i < n; ++i) {
    const size_t covered = 1 + rng() % (i % 5 == 0 ? 4 * kW : 700);  // bytes after lane 14
    const size_t trail = (i % 4 == 0) ? rng() % (2 * kW) : 0;
    std::vector<uint8_t> f(kFirstLo + covered + 4 + trail);
    for (auto& x : f) x = static_cast<uint8_t>(rng());
    const size_t end = kFirstLo + covered;
    // Builder's way: [14, end) covered; the register must match at the end.
    feed(b, f, end, (i & 1) ? &rng : nullptr);
    ASSERT_EQ(b.crc(), ref_reg(f, end)) << i;
    // Parser's way: the frame carries its ICRC (~reg little-endian) after `end`, covered too
    // (a real ICRC starts at byte 54 or later, past the masked offsets).
    if (end < 47) continue;
    const uint32_t icrc = ~ref_reg(f, end);
    for (unsigned j = 0; j < 4; ++j) f[end + j] = static_cast<uint8_t>(icrc >> (8 * j));
    const bool corrupt = (i % 3 == 0);
    if (corrupt) {
      const size_t o = kFirstLo + rng() % (covered + 4);
      if (!is_ff_offset(o)) f[o] ^= static_cast<uint8_t>(1u << (rng() % 8));
      else f[end + rng() % 4] ^= 0x01;  // a masked byte's value does not count
    }
    feed(b, f, end + 4, (i & 2) ? &rng : nullptr);
    ASSERT_EQ(b.res_ok(), !corrupt) << i;
    residue_bad += corrupt;
  }
  EXPECT_GT(residue_bad, n / 4);
  EXPECT_FALSE(b.errors());
}

// The covered-lane contract is checked in simulation: a gap inside the covered run is reported.
TEST(CrcAcc, ContractViolationReported) {
  CrcBench b;
  uint8_t d[64] = {};
  b.beat(true, d, ~0ull << kFirstLo & (kW == 64 ? ~0ull : ((1ull << kW) - 1)), 0);
  b.beat(false, d, 0x0F0, 0);  // does not start at lane 0
  EXPECT_TRUE(b.errors());
}
