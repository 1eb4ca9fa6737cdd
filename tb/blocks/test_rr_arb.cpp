// tmnic_rr_arb against a model: the grant goes to the first requester after the last taken grant,
// in index order with wrap-around (pointer N-1 after reset, so requester 0 comes first); the pointer
// moves only when a grant is taken (ack_i). Checked every cycle: valid_o, idx_o and the one-hot
// gnt_o. Stimulus: random request vectors (sparse, dense, single, all), random acks, and runs where
// the winner keeps requesting (fairness: every requester of a full vector is served within N grants).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "Vtmnic_rr_arb.h"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_N
#define TB_N 3
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kN = TB_N;
static_assert(kN <= 64, "the bench packs the request vector into 64 bits");

uint64_t get_vec(const Vtmnic_rr_arb& t) { return static_cast<uint64_t>(t.gnt_o); }

TEST(RrArb, RandomRequestsAgainstModel) {
  std::vector<std::string> points = {"pointer_held_without_ack", "single_request", "all_request", "no_request",
                                     "full_vector_fair"};
  if (kN > 1) points.push_back("wrap_around");  // (one requester: never behind the pointer)
  Coverage cov(points);
  uint64_t cyc = 0;
  double secs = 0;
  const uint64_t all = kN == 64 ? ~0ull : (1ull << kN) - 1;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto ctx = std::make_unique<VerilatedContext>();
    Vtmnic_rr_arb t(ctx.get());
    t.clk_i = 0;
    t.rst_ni = 0;
    t.req_i = 0;
    t.ack_i = 0;
    t.eval();
    t.clk_i = 1;
    t.eval();
    t.clk_i = 0;
    t.rst_ni = 1;
    t.eval();
    unsigned last = kN - 1;
    std::vector<uint64_t> served_at(kN, 0);
    uint64_t full_since = 0;  // cycle the full-vector run began (0: none)
    Stopwatch sw;
    for (uint64_t c = 1; c <= 60000 && !HasFailure(); ++c) {
      uint64_t req = 0;
      const unsigned mode = static_cast<unsigned>((c / 2000) % 4);
      switch (mode) {
        case 0: for (unsigned i = 0; i < kN; ++i) if (chance(rng, 0.15)) req |= 1ull << i; break;
        case 1: for (unsigned i = 0; i < kN; ++i) if (chance(rng, 0.7)) req |= 1ull << i; break;
        case 2: if (chance(rng, 0.8)) req = 1ull << urand(rng, 0, kN - 1); break;
        default: req = all; break;
      }
      const bool ack = mode == 3 || chance(rng, 0.6);
      t.req_i = req;
      t.ack_i = ack;
      t.eval();
      // Model
      int exp = -1;
      for (unsigned k = 1; k <= kN && exp < 0; ++k) {
        const unsigned i = (last + k) % kN;
        if ((req >> i) & 1) exp = static_cast<int>(i);
      }
      if (exp < 0) {
        cov.hit("no_request");
        ASSERT_FALSE(t.valid_o) << "cycle " << c;
        ASSERT_EQ(get_vec(t), 0u) << "cycle " << c;
      } else {
        ASSERT_TRUE(t.valid_o) << "cycle " << c;
        ASSERT_EQ(t.idx_o, static_cast<unsigned>(exp)) << "cycle " << c << " req 0x" << std::hex << req;
        ASSERT_EQ(get_vec(t), 1ull << exp) << "cycle " << c;
        if (static_cast<unsigned>(exp) <= last && kN > 1 && req != (1ull << exp)) cov.hit("wrap_around");
        if (req == (1ull << exp)) cov.hit("single_request");
        if (req == all) cov.hit("all_request");
        if (ack) {
          last = static_cast<unsigned>(exp);
          served_at[last] = c;
        } else {
          cov.hit("pointer_held_without_ack");
        }
      }
      // Fairness: in a full-vector run with every grant taken, each requester within N cycles.
      if (mode == 3) {
        if (!full_since) full_since = c;
        if (c >= full_since + kN) {
          for (unsigned i = 0; i < kN; ++i) ASSERT_GT(served_at[i] + kN, c) << "requester " << i << " starved";
        }
        if (c == full_since + kN) cov.hit("full_vector_fair");
      } else {
        full_since = 0;
      }
      clock_tick(t, *ctx);
      ++cyc;
    }
    secs += sw.seconds();
    t.final();
  }
  report_speed("rr_arb", "busy", cyc, secs);
  cov.report("rr_arb");
}

}  // namespace
