// tmnic_qp_sched against a model of its contract: a set of ready queues; a queue set ready (any of
// the NSET ports) stays ready until its offer is taken, and a set in the cycle of the take wins.
// Checked every cycle: the offered queue is ready; an offer is held, unchanged, until taken; the
// scheduler is never idle for more than SLOTS + 6 cycles while some queue is ready (its latency
// bound); a set when nothing is ready is offered the next cycle (fast path); no queue waits for more
// than N-1+SLOTS other offers while it is ready (round robin once its set has left the buffer);
// pending_o is high while a queue is ready and at most 2 cycles after; a drain offers every ready
// queue exactly once. The sources honour set_ready_o (as the doorbell path does); the block asserts
// that no set is lost. Stimulus: random sets (hot queues, word boundaries, the whole range), random
// takes (back-pressure), phases of all-ready and of draining.
#include <gtest/gtest.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "Vtmnic_qp_sched.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_N
#define TB_N 64
#endif
#ifndef TB_NSET
#define TB_NSET 2
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kN = TB_N;
constexpr unsigned kNset = TB_NSET;
constexpr unsigned kLeaf = 32;
constexpr unsigned kSlots = 4 * kNset;          // the RTL's default
constexpr unsigned kMaxGap = kSlots + 6;        // documented latency bound
constexpr unsigned kIdxW = 32 - static_cast<unsigned>(__builtin_clz(kN - 1));  // $clog2(N)

struct Knobs {
  double set_rate;   // per port and cycle
  double take_rate;  // per cycle with an offer
  double hot;        // share of sets that go to 4 hot queues
};

class QpSchedBench {
 public:
  QpSchedBench(uint64_t seed, Coverage& cov)
      : ctx_(make_ctx(seed)), top_(std::make_unique<Vtmnic_qp_sched>(ctx_.get())), rng_(seed),
        cov_(cov), ready_(kN, false), waited_(kN, 0) {
    for (auto& h : hot_) h = static_cast<unsigned>(urand(rng_, 0, kN - 1));
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->set_i = 0;
    top_->take_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~QpSchedBench() { top_->final(); }

  // Built with --x-initial unique: every register and RAM word starts random (the ready-bit RAM is
  // never cleared; its words count only while their summary bit says so).
  static std::unique_ptr<VerilatedContext> make_ctx(uint64_t seed) {
    auto c = std::make_unique<VerilatedContext>();
    c->randReset(2);
    c->randSeed(static_cast<int>(seed));
    return c;
  }
  // Reset with queues ready and offered: afterwards nothing is ready and nothing is offered, though
  // the RAM still holds the old bits.
  void reset_mid() {
    top_->set_i = 0;
    top_->take_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    std::fill(ready_.begin(), ready_.end(), false);
    std::fill(waited_.begin(), waited_.end(), 0);
    held_ = prev_take_ = have_last_ = fast_expect_ = pending_quiet_ = false;
    gap_ = stale_pending_ = 0;
    for (int c = 0; c < 64 && !::testing::Test::HasFailure(); ++c) {
      EXPECT_FALSE(top_->valid_o) << "an offer after reset";
      EXPECT_FALSE(top_->pending_o) << "pending after reset";
      tick();
    }
    cov_.hit("reset_with_ready_queues");
  }
  // `cycles` cycles of random traffic with the knobs k.
  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k, false);
  }
  // No more sets: take every offer; every ready queue must come out exactly once.
  void drain() {
    std::vector<bool> expect = ready_;
    std::vector<unsigned> got(kN, 0);
    const Knobs k{0, 1, 0};
    for (uint64_t c = 0; c < 4 * kN + 16 && !::testing::Test::HasFailure(); ++c) {
      if (top_->valid_o) got[top_->idx_o]++;
      step(k, true);
    }
    for (unsigned q = 0; q < kN; ++q) {
      EXPECT_EQ(got[q], expect[q] ? 1u : 0u) << "queue " << q << " offered " << got[q] << " times in a drain";
    }
    EXPECT_FALSE(top_->valid_o) << "an offer after the drain";
    EXPECT_EQ(std::count(ready_.begin(), ready_.end(), true), 0);
    cov_.hit("drain_empty");
  }
  // Every queue ready at once, then served round robin: the first kN offers are all different.
  void all_ready() {
    for (unsigned q = 0; q < kN;) {
      top_->take_i = 0;
      uint32_t set = 0;
      if (top_->set_ready_o) {
        for (unsigned p = 0; p < kNset && q < kN; ++p, ++q) {
          set |= 1u << p;
          set_idx(p, q);
        }
      } else {
        cov_.hit("set_ready_low");
      }
      top_->set_i = set;
      clock_and_check(set, nullptr);
    }
    top_->set_i = 0;
    cov_.hit("all_ready");
    std::vector<unsigned> seen(kN, 0);
    unsigned n = 0;
    for (uint64_t c = 0; n < kN && c < 4 * kN + 16; ++c) {
      if (top_->valid_o) {
        seen[top_->idx_o]++;
        n++;
      }
      step({0, 1, 0}, true);
    }
    for (unsigned q = 0; q < kN; ++q) EXPECT_EQ(seen[q], 1u) << "queue " << q;
  }
  uint64_t cycles() const { return cycles_; }
  unsigned max_gap() const { return max_gap_; }
  uint64_t max_wait() const { return max_wait_; }
  uint64_t takes() const { return takes_; }

 private:
  void tick() { clock_tick(*top_, *ctx_); }
  // set_idx_i is NSET * IDX_W <= 64 bits here: one integer in Verilator's model.
  static_assert(kNset * kIdxW <= 64, "set_idx_i wider than one word");
  void set_idx(unsigned p, unsigned q) {
    const uint64_t m = mask64(kIdxW) << (p * kIdxW);
    top_->set_idx_i = static_cast<std::remove_reference_t<decltype(top_->set_idx_i)>>((uint64_t(top_->set_idx_i) & ~m) |
                                                             (uint64_t(q) << (p * kIdxW)));
  }
  unsigned get_set_idx(unsigned p) const {
    return static_cast<unsigned>((uint64_t(top_->set_idx_i) >> (p * kIdxW)) & mask64(kIdxW));
  }
  unsigned pick_queue(const Knobs& k) {
    double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < k.hot) return hot_[urand(rng_, 0, 3)];
    if (r < k.hot + 0.15) {  // around a word boundary
      unsigned w = static_cast<unsigned>(urand(rng_, 0, (kN - 1) / kLeaf));
      int q = int(w * kLeaf) + int(urand(rng_, 0, 2)) - 1;
      return static_cast<unsigned>(std::clamp(q, 0, int(kN) - 1));
    }
    return static_cast<unsigned>(urand(rng_, 0, kN - 1));
  }

  void step(const Knobs& k, bool always_take) {
    uint32_t set = 0;
    std::vector<unsigned> sq;
    if (!top_->set_ready_o) cov_.hit("set_ready_low");
    for (unsigned p = 0; p < kNset && top_->set_ready_o; ++p) {
      if (!chance(rng_, k.set_rate)) continue;
      unsigned q = pick_queue(k);
      set |= 1u << p;
      set_idx(p, q);
      sq.push_back(q);
    }
    top_->set_i = set;
    const bool take = top_->valid_o && (always_take || chance(rng_, k.take_rate));
    top_->take_i = take;
    clock_and_check(set, &sq);
  }

  // Checks the outputs of this cycle, clocks, then applies this cycle's events to the model.
  void clock_and_check(uint32_t set, std::vector<unsigned>* sq_in) {
    std::vector<unsigned> sq;
    if (sq_in) {
      sq = *sq_in;
    } else {
      for (unsigned p = 0; p < kNset; ++p)
        if (set & (1u << p)) sq.push_back(get_set_idx(p));
    }
    const bool valid = top_->valid_o;
    const unsigned idx = top_->idx_o;
    const bool take = top_->take_i;
    const bool any_ready = std::find(ready_.begin(), ready_.end(), true) != ready_.end();
    // pending_o: high while any queue is ready; drops at most 2 cycles after the last one is taken.
    if (any_ready) {
      ASSERT_TRUE(top_->pending_o) << "pending_o low with a ready queue (cycle " << cycles_ << ")";
      stale_pending_ = 0;
    } else if (top_->pending_o) {
      ASSERT_LE(++stale_pending_, 2u) << "pending_o high with no ready queue (cycle " << cycles_ << ")";
    } else {
      stale_pending_ = 0;
    }
    if (fast_expect_ && pending_quiet_) {
      ASSERT_TRUE(valid) << "a set with nothing ready was not offered in the next cycle (cycle " << cycles_ << ")";
      cov_.hit("fast_path");
    }
    since_take_++;
    if (valid && !held_ && since_take_ == 2) cov_.hit("offer_2_cycles_after_take");  // the quickest re-offer
    if (valid && take) since_take_ = 0;
    if (valid) {
      ASSERT_LT(idx, kN);
      ASSERT_TRUE(ready_[idx]) << "offered queue " << idx << " is not ready (cycle " << cycles_ << ")";
      if (held_ && !prev_take_) {
        ASSERT_EQ(idx, prev_idx_) << "offer changed before it was taken";
      }
      gap_ = 0;
    } else if (any_ready) {
      gap_++;
      max_gap_ = std::max(max_gap_, gap_);
      ASSERT_LE(gap_, kMaxGap) << "ready queues but no offer for " << gap_ << " cycles (cycle " << cycles_ << ")";
    }
    if (valid && take) {
      takes_++;
      if (have_last_ && idx <= last_) cov_.hit("wrap_around");
      if (have_last_ && idx / kLeaf != last_ / kLeaf) cov_.hit("word_change");
      for (unsigned q = 0; q < kN; ++q)
        if (ready_[q] && q != idx) {
          waited_[q]++;
          max_wait_ = std::max(max_wait_, waited_[q]);
          EXPECT_LE(waited_[q], uint64_t(kN - 1 + kSlots)) << "queue " << q << " overtaken " << waited_[q] << " times";
        }
      waited_[idx] = 0;
      ready_[idx] = false;
      last_ = idx;
      have_last_ = true;
    }
    // Fast path: nothing ready, a set now, offered in the next cycle.
    fast_expect_ = !any_ready && !valid && !sq.empty();
    if (sq.size() == 2 && sq[0] == sq[1]) cov_.hit("two_sets_same_queue");
    for (unsigned q : sq) {
      if (valid && take && q == idx) cov_.hit("set_wins_over_take");
      if (ready_[q]) cov_.hit("set_already_ready");
      if (valid && !take && q == idx) cov_.hit("set_of_offered_absorbed");
      if (!ready_[q]) waited_[q] = 0;
      ready_[q] = true;
    }
    if (std::count(ready_.begin(), ready_.end(), true) == int(kN)) cov_.hit("all_ready_random");
    pending_quiet_ = !top_->pending_o;
    held_ = valid;
    prev_take_ = valid && take;
    prev_idx_ = idx;
    tick();
    cycles_++;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_qp_sched> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<bool> ready_;
  std::vector<uint64_t> waited_;  // offers of other queues since this one became ready
  unsigned hot_[4] = {};
  uint64_t cycles_ = 0, takes_ = 0, max_wait_ = 0;
  unsigned gap_ = 0, max_gap_ = 0, stale_pending_ = 0;
  bool held_ = false, prev_take_ = false, have_last_ = false;
  bool fast_expect_ = false, pending_quiet_ = false;  // a set in a cycle when pending_o was low
  unsigned prev_idx_ = 0, last_ = 0, since_take_ = 100;
};

TEST(QpSched, RandomSetsAndTakesAgainstModel) {
  std::vector<std::string> points = {"drain_empty", "all_ready", "wrap_around", "offer_2_cycles_after_take",
                                     "two_sets_same_queue", "set_wins_over_take", "set_already_ready",
                                     "fast_path", "set_of_offered_absorbed", "set_ready_low",
                                     "reset_with_ready_queues"};
  if (kN > kLeaf) points.push_back("word_change");  // more than one word
  Coverage cov(points);
  const Knobs mixes[] = {{0.05, 0.5, 0.3}, {0.4, 0.9, 0.6}, {0.01, 0.2, 0.0}, {0.6, 0.3, 0.1}};
  uint64_t cyc = 0;
  unsigned gap = 0;
  uint64_t wait = 0, takes = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    QpSchedBench b(seed, cov);
    Stopwatch sw;
    for (const Knobs& k : mixes) {
      b.run(k, 20000);
      if (HasFatalFailure()) return;
      b.drain();
      if (HasFatalFailure()) return;
    }
    b.all_ready();
    if (HasFatalFailure()) return;
    b.run(mixes[3], 5000);
    b.reset_mid();
    if (HasFatalFailure()) return;
    b.run(mixes[1], 20000);
    b.drain();
    secs += sw.seconds();
    cyc += b.cycles();
    gap = std::max(gap, b.max_gap());
    wait = std::max(wait, b.max_wait());
    takes += b.takes();
  }
  report_speed("qp_sched", "busy", cyc, secs);
  std::printf("[qp_sched] N=%u: %llu takes, longest wait for an offer %u cycles, most offers of others "
              "while one queue waited %llu\n",
              kN, (unsigned long long)takes, gap, (unsigned long long)wait);
  cov.report("qp_sched");
}

}  // namespace
