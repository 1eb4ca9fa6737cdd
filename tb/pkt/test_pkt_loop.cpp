// tmnic_pkt_tx -> tmnic_pkt_rx round trip (tb/pkt/tmnic_pkt_loop_tb.sv): random headers and
// payloads go in, the same (canonical) headers and payloads must come out, nothing dropped.
// Also measures the simulation speed of the two blocks together.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>

#include "Vtmnic_pkt_loop_tb.h"
#include "lib/axis.hpp"
#include "lib/bits.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "pkt_common.hpp"
#include "roce/roce_model.hpp"

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

constexpr unsigned kW = 64;
constexpr uint64_t kLocalMac = 0x02123456789Aull;
constexpr uint32_t kLocalIp = 0xC0A80007;

class LoopBench {
 public:
  LoopBench(uint64_t seed, double gap, double link_stall, double out_stall)
      : ctx_(std::make_unique<VerilatedContext>()),
        rng_(seed),
        hdr_src_(&rng_, gap),
        pay_src_(kW, &rng_, gap),
        pay_sink_(kW, &rng_, out_stall),
        link_stall_(link_stall),
        out_stall_(out_stall) {
    top_ = std::make_unique<Vtmnic_pkt_loop_tb>(ctx_.get());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->local_mac_i = kLocalMac;
    top_->local_ip_i = kLocalIp;
    top_->link_en_i = 1;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~LoopBench() { top_->final(); }

  std::mt19937_64& rng() { return rng_; }
  Vtmnic_pkt_loop_tb& top() { return *top_; }

  void send(const RoceHdr& h, const std::vector<uint8_t>& pay) {
    hdr_src_.push(h);
    pay_src_.push(pay);
    exp_hdr_.push_back(canonical(h));
    // (a UD datagram arrives with its GRH in front: the model's parse of the frame says what that is)
    std::vector<uint8_t> exp = pay;
    if (bth_has_deth(h.opcode)) {
      const std::vector<uint8_t> f = build_frame(h, pay.data());
      exp = grh_of(f.data());
      exp.insert(exp.end(), pay.begin(), pay.end());
    }
    if (!exp.empty()) exp_pay_.push_back(std::move(exp));
    ++sent_;
  }

  void cycle() {
    hdr_src_.drive(top_->s_hdr_valid_i, [&](const RoceHdr& h) {
      uint32_t w[kRoceHdrWords];
      pack_hdr(h, w);
      set_words(top_->s_hdr_i, w);
    });
    pay_src_.drive(top_->s_pay_tdata_i, top_->s_pay_tkeep_i, top_->s_pay_tlast_i,
                   top_->s_pay_tvalid_i);
    top_->link_en_i = !chance_nz(rng_, link_stall_);
    const bool hdr_ready = !chance_nz(rng_, out_stall_);
    top_->m_hdr_ready_i = hdr_ready;
    top_->m_pay_tready_i = pay_sink_.drive_ready();
    top_->eval();
    hdr_src_.handshake(top_->s_hdr_ready_o);
    pay_src_.handshake(top_->s_pay_tready_o);
    if (top_->m_hdr_valid_o && hdr_ready) {
      uint32_t w[kRoceHdrWords];
      get_words(top_->m_hdr_o, w);
      got_hdr_.push_back(unpack_hdr(w));
    }
    pay_sink_.sample(top_->m_pay_tdata_o, top_->m_pay_tkeep_o, top_->m_pay_tlast_o,
                     top_->m_pay_tvalid_o);
    accepts_ += top_->accept_o;
    drops_ += top_->drop_hdr_o + top_->drop_icrc_o;
    tick();
  }

  void run(uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((!exp_hdr_.empty() || !exp_pay_.empty()) && cycles_ < end) {
      cycle();
      check_out();
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_TRUE(exp_hdr_.empty() && exp_pay_.empty())
        << exp_hdr_.size() << " headers / " << exp_pay_.size() << " payloads missing";
    for (int i = 0; i < 20; ++i) cycle();
    check_out();
    EXPECT_TRUE(got_hdr_.empty());
    EXPECT_TRUE(pay_sink_.frames.empty());
    EXPECT_EQ(drops_, 0u);
    EXPECT_EQ(accepts_, sent_);
    EXPECT_EQ(pay_sink_.errors(), "");
  }

  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t pay_beats() const { return pay_sink_.beats(); }

 private:
  void check_out() {
    while (!got_hdr_.empty()) {
      ASSERT_FALSE(exp_hdr_.empty()) << "unexpected header";
      ASSERT_EQ(got_hdr_.front(), exp_hdr_.front()) << "header " << checked_;
      got_hdr_.pop_front();
      exp_hdr_.pop_front();
      ++checked_;
    }
    while (!pay_sink_.frames.empty()) {
      ASSERT_FALSE(exp_pay_.empty()) << "unexpected payload";
      ASSERT_EQ(pay_sink_.frames.front(), exp_pay_.front())
          << "payload first diff " << first_diff(pay_sink_.frames.front(), exp_pay_.front());
      pay_sink_.frames.pop_front();
      exp_pay_.pop_front();
    }
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_pkt_loop_tb> top_;
  std::mt19937_64 rng_;
  ItemSource<RoceHdr> hdr_src_;
  StreamSource pay_src_;
  StreamSink pay_sink_;
  double link_stall_, out_stall_;
  std::deque<RoceHdr> exp_hdr_, got_hdr_;
  std::deque<std::vector<uint8_t>> exp_pay_;
  uint64_t cycles_ = 0, sent_ = 0, checked_ = 0, accepts_ = 0, drops_ = 0;
};

RoceHdr local_hdr(std::mt19937_64& rng, unsigned len, bool ud = true) {
  RoceHdr h = random_hdr(rng, len, ud);
  h.dst_mac = kLocalMac;
  h.dst_ip = kLocalIp;
  return h;
}

}  // namespace

class PktLoopRandom : public ::testing::TestWithParam<uint64_t> {};

TEST_P(PktLoopRandom, RoundTrip) {
  const uint64_t seed = GetParam();
  std::mt19937_64 cfg(seed * 31337 + 5);
  std::uniform_real_distribution<double> p(0.0, 0.5);
  LoopBench tb(seed, p(cfg), p(cfg), p(cfg));
  for (unsigned i = 0; i < 2000 * test_scale(); ++i) {
    const unsigned len = random_pay_len(tb.rng(), kW);
    tb.send(local_hdr(tb.rng(), len), random_bytes(tb.rng(), len));
    if (i % 100 == 99) {
      tb.run(2000000);
      if (HasFailure()) return;
    }
  }
  tb.run(2000000);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PktLoopRandom, ::testing::ValuesIn(seeds({1, 2, 3, 4})));

// Cycles per second of builder + parser: idle (reset released, no traffic) and busy (back-to-back
// 4 KiB frames through both, payload BFMs included). Printed with TMNIC_VERBOSE=1; recorded as
// test properties. TMNIC_MIN_IDLE_CPS=<n> turns the idle number into a check.
TEST(PktLoop, SimSpeed) {
  LoopBench tb(1, 0, 0, 0);
  const uint64_t idle_cycles = 2000000;
  const Stopwatch idle_sw;
  for (uint64_t i = 0; i < idle_cycles; ++i) {
    tb.top().eval();
    tb.tick();
  }
  const double idle_cps = idle_cycles / idle_sw.seconds();

  const unsigned frames = 300;
  for (unsigned i = 0; i < frames; ++i)
    tb.send(local_hdr(tb.rng(), 4096, /*ud=*/false), random_bytes(tb.rng(), 4096));
  const uint64_t c0 = tb.cycles();
  const Stopwatch busy_sw;
  tb.run(1000000);
  const double busy_s = busy_sw.seconds();
  const uint64_t busy_cycles = tb.cycles() - c0;
  const double busy_cps = busy_cycles / busy_s;
  EXPECT_EQ(tb.pay_beats(), frames * 4096u / kW);
  // The link carries 66 beats per frame (4096 + 78 header/ICRC bytes, WRITE_ONLY_IMM worst case).
  EXPECT_LE(busy_cycles, frames * 67u + 100u);

  RecordProperty("idle_cycles_per_s", static_cast<int>(idle_cps));
  RecordProperty("busy_cycles_per_s", static_cast<int>(busy_cps));
  if (const char* v = std::getenv("TMNIC_VERBOSE"); v && *v == '1') {
    std::printf(
        "pkt loop: idle %.2f Mcycles/s, busy %.2f Mcycles/s (%llu cycles, %.1f payload "
        "Gbit/s-sim)\n",
        idle_cps / 1e6, busy_cps / 1e6, static_cast<unsigned long long>(busy_cycles),
        frames * 4096.0 * 8 / busy_s / 1e9);
  }
  if (const char* m = std::getenv("TMNIC_MIN_IDLE_CPS")) {
    EXPECT_GE(idle_cps, std::atof(m));
  }
}
