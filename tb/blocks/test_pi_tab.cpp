// tmnic_pi_tab against a model of its contract: one producer index per queue; a doorbell sets it,
// an init zeroes it. A doorbell is written in its own cycle, or one cycle later when an init (which
// wins the write port) or an older held doorbell is written in that cycle; hold_o tells when one is
// waiting. A read issued in cycle t returns the word as written up to cycle t-1.
// Checked every cycle: each read's data against the model, and hold_o; after each traffic mix, a
// read-back of every word. (So an init and a doorbell of one queue in one cycle leave the
// doorbell's value; a doorbell held across an init of its queue lands after the zero.)
// Stimulus: random doorbells (hot queues, the extremes), inits at most every other cycle as the
// engines issue them (never while a doorbell is held and another arrives, which the RTL asserts),
// random reads, bursts of back-to-back doorbells beside inits.
#include <gtest/gtest.h>

#include <vector>

#include "Vtmnic_pi_tab.h"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_N
#define TB_N 64
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kN = TB_N;

struct Knobs {
  double db_rate, init_rate, read_rate, hot;
};

class PiTabBench {
 public:
  PiTabBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_pi_tab>(ctx_.get())), rng_(seed),
        cov_(cov), mem_(kN, 0), last_(kN, 0) {
    for (auto& h : hot_) h = static_cast<unsigned>(urand(rng_, 0, kN - 1));
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->db_i = 0;
    top_->init_i = 0;
    top_->re_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    // The RAM has no reset: define every word through the block itself (an init each, two cycles apart).
    for (unsigned q = 0; q < kN; ++q) {
      step({0, 0, 0, 0}, static_cast<int>(q));
      step({0, 0, 0, 0}, -1);
    }
    defined_ = true;
  }
  ~PiTabBench() { top_->final(); }

  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k, -2);
  }
  // Quiet cycles, then every word read back: the final values of the contract.
  void settle_and_read_all() {
    for (int i = 0; i < 3; ++i) step({0, 0, 0, 0}, -1);
    for (unsigned q = 0; q < kN && !::testing::Test::HasFailure(); ++q) {
      forced_read_ = static_cast<int>(q);
      step({0, 0, 1, 0}, -1);
    }
    forced_read_ = -1;
    step({0, 0, 0, 0}, -1);
    cov_.hit("read_all");
  }
  uint64_t cycles() const { return cycles_; }

 private:
  unsigned pick() {
    if (chance(rng_, hot_share_)) return hot_[urand(rng_, 0, 3)];
    switch (urand(rng_, 0, 7)) {
      case 0: return 0;
      case 1: return kN - 1;
      default: return static_cast<unsigned>(urand(rng_, 0, kN - 1));
    }
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cycles_;
  }

  // One cycle. init_q: -2 random (knobs), -1 none, >= 0 an init of that queue.
  void step(const Knobs& k, int init_q) {
    hot_share_ = k.hot;
    // Drive
    const bool db = chance(rng_, k.db_rate);
    const unsigned db_q = pick();
    const uint16_t db_pi = static_cast<uint16_t>(urand(rng_, 0, 0xFFFF));
    bool init = false;
    unsigned iq = 0;
    if (init_q >= 0) {
      init = true;
      iq = static_cast<unsigned>(init_q);
    } else if (init_q == -2 && !init_prev_ && !(hold_ && db) && chance(rng_, k.init_rate)) {
      init = true;
      iq = chance(rng_, 0.3) ? db_q : pick();
    }
    const bool re = forced_read_ >= 0 || chance(rng_, k.read_rate);
    const unsigned rq = forced_read_ >= 0 ? static_cast<unsigned>(forced_read_) : (chance(rng_, 0.5) ? db_q : pick());
    top_->db_i = db;
    top_->db_idx_i = db_q;
    top_->db_pi_i = db_pi;
    top_->init_i = init;
    top_->init_idx_i = iq;
    top_->re_i = re;
    top_->raddr_i = rq;
    top_->eval();
    if (top_->hold_o != hold_) {
      ADD_FAILURE() << "cycle " << cycles_ << ": hold_o " << int(top_->hold_o) << ", model " << hold_;
      return;
    }
    if (hold_ && !init && !db) cov_.hit("hold_drained");
    // Model: this cycle's write (init first, else the held doorbell, else the doorbell), the new hold.
    const std::vector<uint16_t> before = mem_;
    if (init) {
      mem_[iq] = 0;
      last_[iq] = cycles_;
      if (hold_) cov_.hit("init_while_held");  // the held doorbell waits one more cycle
      if (db) {
        cov_.hit("db_during_init");
        if (db_q == iq) cov_.hit("db_and_init_same_queue");
        if (!hold_) { hold_ = true; hold_q_ = db_q; hold_pi_ = db_pi; }
      }
    } else if (hold_) {
      mem_[hold_q_] = hold_pi_;
      last_[hold_q_] = cycles_;
      hold_ = db;
      if (db) { hold_q_ = db_q; hold_pi_ = db_pi; cov_.hit("db_during_hold"); }
    } else if (db) {
      mem_[db_q] = db_pi;
      last_[db_q] = cycles_;
    }
    tick();
    // The read issued this cycle: the words before this cycle's write.
    if (re && defined_) {
      const uint16_t got = static_cast<uint16_t>(top_->rdata_o);
      if (got != before[rq]) {
        ADD_FAILURE() << "cycle " << cycles_ << ": queue " << rq << " read " << got << ", model " << before[rq];
        return;
      }
      if (cycles_ - 1 == last_[rq] + 1) cov_.hit("read_right_after_write");
    }
    init_prev_ = init;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_pi_tab> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<uint16_t> mem_;
  std::vector<uint64_t> last_;                              // cycle of each queue's last write
  unsigned hot_[4] = {};
  double hot_share_ = 0;
  bool hold_ = false;
  unsigned hold_q_ = 0;
  uint16_t hold_pi_ = 0;
  bool init_prev_ = false;
  bool defined_ = false;
  int forced_read_ = -1;
  uint64_t cycles_ = 0;
};

TEST(PiTab, RandomDoorbellsInitsAndReadsAgainstModel) {
  Coverage cov({"db_during_init", "db_during_hold", "db_and_init_same_queue", "init_while_held", "hold_drained",
                "read_right_after_write", "read_all"});
  const Knobs mixes[] = {{0.3, 0.2, 0.5, 0.3}, {0.9, 0.45, 0.8, 0.6}, {0.05, 0.05, 0.3, 0.0}, {1.0, 0.5, 1.0, 0.9}};
  uint64_t cyc = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    PiTabBench b(seed, cov);
    Stopwatch sw;
    for (const Knobs& k : mixes) {
      b.run(k, 20000);
      if (HasFailure()) return;
      b.settle_and_read_all();
      if (HasFailure()) return;
    }
    secs += sw.seconds();
    cyc += b.cycles();
  }
  report_speed("pi_tab", "busy", cyc, secs);
  cov.report("pi_tab");
}

}  // namespace
