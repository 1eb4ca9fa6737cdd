// tmnic_hold_chk (the simulation check of a handshake source) must stay silent for every legal
// offer sequence and stop the simulation, naming the rule, when an offer changes or is withdrawn
// before it is taken. The illegal cases run as GoogleTest death tests (Verilator's $error stops the
// process; Verilator prints the message on stdout, which the death statement sends to stderr for
// the death test's match).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>

#include "Vtmnic_hold_chk.h"
#include "lib/clock.hpp"
#include "lib/seed.hpp"

using namespace tmnic::tb;

namespace {

constexpr unsigned kW = 40;

class HoldBench {
 public:
  HoldBench() : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_hold_chk>(ctx_.get())) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->valid_i = 0;
    top_->ready_i = 0;
    top_->data_i = 0;
    top_->eval();
    clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
    for (int i = 0; i < 2; ++i) clock_tick(*top_, *ctx_);
  }
  ~HoldBench() { top_->final(); }
  void cycle(bool valid, bool ready, uint64_t data) {
    top_->valid_i = valid;
    top_->ready_i = ready;
    top_->data_i = data & ((uint64_t{1} << kW) - 1);
    top_->eval();
    clock_tick(*top_, *ctx_);
  }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_hold_chk> top_;
};

// Random legal traffic: an offer is held unchanged while not ready; anything goes once taken or
// while nothing is offered.
void legal(uint64_t seed) {
  HoldBench tb;
  std::mt19937_64 rng(seed);
  bool valid = false;
  uint64_t data = 0;
  unsigned waits = 0;
  for (int i = 0; i < 20000; ++i) {
    if (!valid) {
      valid = chance(rng, 0.6);
      data = rng();
    }
    const bool ready = chance(rng, 0.4);
    tb.cycle(valid, ready, valid ? data : rng());
    if (valid && !ready) ++waits;
    if (valid && ready) valid = false;
  }
  EXPECT_GT(waits, 1000u);
}

}  // namespace

TEST(HoldChk, LegalOffersAreSilent) {
  for (uint64_t s : seeds({1, 2, 3})) legal(s);
}

TEST(HoldChkDeathTest, ChangedOfferStops) {
  EXPECT_DEATH(
      {
        std::fflush(stdout);
        dup2(2, 1);
        HoldBench tb;
        tb.cycle(true, false, 0x12345);
        tb.cycle(true, false, 0x12344);  // one bit changed while waiting
        tb.cycle(false, false, 0);
      },
      "offer changed before it was taken");
}

TEST(HoldChkDeathTest, WithdrawnOfferStops) {
  EXPECT_DEATH(
      {
        std::fflush(stdout);
        dup2(2, 1);
        HoldBench tb;
        tb.cycle(true, false, 7);
        tb.cycle(false, false, 7);  // withdrawn while waiting
        tb.cycle(false, false, 0);
      },
      "offer withdrawn before it was taken");
}

TEST(HoldChk, ChangeAfterTakeIsLegal) {
  HoldBench tb;
  tb.cycle(true, false, 1);
  tb.cycle(true, true, 1);   // taken
  tb.cycle(true, false, 2);  // a new offer
  tb.cycle(true, true, 2);
  tb.cycle(false, false, 3);
  SUCCEED();
}
