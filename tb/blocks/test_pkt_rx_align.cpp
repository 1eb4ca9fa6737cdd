// tmnic_pkt_rx_align (the parser's realigner) against a C++ model: payloads of random length at a
// random offset in their first buffer word go in as words (with first/last/flush/sh/lcnt computed as
// tmnic_pkt_rx's read issue does) with random gaps, and must come out packed from byte 0 under random
// back-pressure, bytes past tkeep zero. Also the exact cycle cost per payload.
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <random>

#include "Vtmnic_pkt_rx_align.h"
#include "lib/axis.hpp"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kW = TB_DATA_W / 8;

struct Word {
  std::vector<uint8_t> data;
  bool first, last, flush;
  unsigned sh, lcnt;
};

class AlignBench {
 public:
  AlignBench(uint64_t seed, double gap, double stall)
      : ctx_(std::make_unique<VerilatedContext>()), rng_(seed), gap_(gap), sink_(kW, &rng_, stall) {
    top_ = std::make_unique<Vtmnic_pkt_rx_align>(ctx_.get());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->word_valid_i = 0;
    top_->m_pay_tready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~AlignBench() { top_->final(); }

  std::mt19937_64& rng() { return rng_; }

  // Queues a payload of p >= 1 bytes at offset sh of its first word (the bytes around it random).
  // Returns the cycles it costs at full rate: one per output beat, plus one if it spans more than
  // one word (the first word only primes the realigner, or the last one is flushed).
  unsigned push(const std::vector<uint8_t>& pay, unsigned sh) {
    const unsigned p = static_cast<unsigned>(pay.size());
    const unsigned nr = (p + sh + kW - 1) / kW, np = (p + kW - 1) / kW;
    cov_.hit(nr == 1 ? "one_word" : nr == np ? "last_word_flushed" : "first_word_primes");
    if (sh == 0) cov_.hit("offset_0");
    if (sh == kW - 1) cov_.hit("offset_w_minus_1");
    if (p % kW == 0) cov_.hit("full_last_beat");
    std::vector<uint8_t> buf(nr * kW);
    for (auto& b : buf) b = static_cast<uint8_t>(rng_());
    std::copy(pay.begin(), pay.end(), buf.begin() + sh);
    for (unsigned i = 0; i < nr; ++i) {
      Word w;
      w.data.assign(buf.begin() + i * kW, buf.begin() + (i + 1) * kW);
      w.first = i == 0;
      w.last = i == nr - 1;
      w.flush = nr == np;
      w.sh = sh;
      w.lcnt = (p - 1) % kW + 1;
      words_.push_back(std::move(w));
    }
    exp_.push_back(pay);
    return nr == 1 ? 1 : np + 1;
  }

  void cycle() {
    if (!valid_ && !words_.empty() && !chance_nz(rng_, gap_)) valid_ = true;
    if (valid_) {
      const Word& w = words_.front();
      set_bytes(top_->word_data_i, w.data.data(), kW);
      top_->word_first_i = w.first;
      top_->word_last_i = w.last;
      top_->word_flush_i = w.flush;
      top_->word_sh_i = static_cast<uint8_t>(w.sh);
      top_->word_lcnt_i = static_cast<uint8_t>(w.lcnt);
    }
    top_->word_valid_i = valid_;
    top_->m_pay_tready_i = sink_.drive_ready();
    top_->eval();
    if (valid_ && !top_->word_ready_o) cov_.hit("word_waits");
    if (top_->m_pay_tvalid_o && !top_->m_pay_tready_i) cov_.hit("beat_waits");
    if (valid_ && top_->word_ready_o) {
      valid_ = false;
      words_.pop_front();
    }
    if (top_->m_pay_tvalid_o && sink_.ready()) {
      // Lanes past tkeep are zero.
      uint8_t b[64];
      get_bytes(top_->m_pay_tdata_o, b, kW);
      const uint64_t keep = static_cast<uint64_t>(top_->m_pay_tkeep_o);
      for (unsigned i = 0; i < kW; ++i)
        if (!((keep >> i) & 1u) && b[i] != 0) ++nonzero_;
      last_out_cycle_ = cycles_;
    }
    sink_.sample(top_->m_pay_tdata_o, top_->m_pay_tkeep_o, top_->m_pay_tlast_o,
                 top_->m_pay_tvalid_o);
    tick();
  }

  void run(uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((!words_.empty() || sink_.frames.size() < exp_.size()) && cycles_ < end) cycle();
    for (int i = 0; i < 5; ++i) cycle();
    ASSERT_EQ(sink_.frames.size(), exp_.size()) << "payloads missing or extra";
    for (size_t i = 0; i < exp_.size(); ++i)
      ASSERT_EQ(sink_.frames[i], exp_[i]) << "payload " << i << " of " << exp_[i].size() << " bytes";
    EXPECT_FALSE(sink_.in_frame());
    EXPECT_EQ(sink_.errors(), "");
    EXPECT_EQ(nonzero_, 0u) << "bytes past tkeep not zero";
    sink_.frames.clear();
    exp_.clear();
  }

  uint64_t cycles() const { return cycles_; }
  Coverage& cov() { return cov_; }
  uint64_t last_out_cycle() const { return last_out_cycle_; }

 private:
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_pkt_rx_align> top_;
  std::mt19937_64 rng_;
  double gap_;
  StreamSink sink_;
  std::deque<Word> words_;
  std::deque<std::vector<uint8_t>> exp_;
  bool valid_ = false;
  uint64_t cycles_ = 0, last_out_cycle_ = 0, nonzero_ = 0;
  Coverage cov_{std::vector<std::string>{"one_word", "last_word_flushed", "first_word_primes", "offset_0", "offset_w_minus_1",
                 "full_last_beat", "word_waits", "beat_waits"}};
};

std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Payload lengths around the word edges and up to 4 KiB; offsets: the parser's four header lengths
// mod W, 0 and W - 1, or any.
unsigned random_len(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return 1 + static_cast<unsigned>(rng() % 8);
    case 1: return static_cast<unsigned>(kW * (1 + rng() % 3) + rng() % 7) - 3;
    case 2: return 1 + static_cast<unsigned>(rng() % 300);
    default: return 1 + static_cast<unsigned>(rng() % 4096);
  }
}
unsigned random_sh(std::mt19937_64& rng) {
  static const unsigned kHl[] = {54, 58, 70, 74};
  switch (rng() % 3) {
    case 0: return kHl[rng() % 4] % kW;
    case 1: return (rng() & 1) ? 0 : kW - 1;
    default: return static_cast<unsigned>(rng() % kW);
  }
}

}  // namespace

// Every length 1..3W at every offset, back to back, no gaps or stalls: exact cycle count.
TEST(PktRxAlign, AllOffsetsFullRate) {
  AlignBench tb(1, 0, 0);
  uint64_t cost = 0;
  for (unsigned sh = 0; sh < kW; ++sh)
    for (unsigned p = 1; p <= 3 * kW; ++p) cost += tb.push(random_bytes(tb.rng(), p), sh);
  const uint64_t c0 = tb.cycles();
  tb.run(cost + 100);
  // The first word is taken in cycle c0, the output register adds one cycle.
  EXPECT_EQ(tb.last_out_cycle() - c0, cost);
}

class PktRxAlignRandom : public ::testing::TestWithParam<uint64_t> {};

TEST_P(PktRxAlignRandom, GapsAndBackPressure) {
  const uint64_t seed = GetParam();
  std::mt19937_64 cfg(seed * 7919 + 1);
  std::uniform_real_distribution<double> prob(0.0, 0.7);
  // At least some gaps and back-pressure, so that both waits are covered.
  AlignBench tb(seed, 0.05 + prob(cfg), 0.05 + prob(cfg));
  const Stopwatch sw;
  for (unsigned i = 0; i < 2000 * test_scale(); ++i) {
    tb.push(random_bytes(tb.rng(), random_len(tb.rng())), random_sh(tb.rng()));
    if (i % 200 == 199) {
      tb.run(2000000);
      if (HasFailure()) return;
    }
  }
  tb.run(2000000);
  report_speed("tmnic_pkt_rx_align", "random", tb.cycles(), sw.seconds());
  tb.cov().report("tmnic_pkt_rx_align");
}

INSTANTIATE_TEST_SUITE_P(Seeds, PktRxAlignRandom, ::testing::ValuesIn(seeds({1, 2, 3, 4})));
