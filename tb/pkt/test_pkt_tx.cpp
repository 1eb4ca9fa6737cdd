// tmnic_pkt_tx (frame builder) against the C++ model: every output frame byte-for-byte equal to
// roce::build_frame, under random source gaps and sink back-pressure.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "Vtmnic_pkt_tx.h"
#include "lib/axis.hpp"
#include "lib/bits.hpp"
#include "lib/seed.hpp"
#include "pkt_common.hpp"
#include "roce/pcap_writer.hpp"
#include "roce/roce_model.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

constexpr unsigned kW = TB_DATA_W / 8;

class TxBench {
 public:
  TxBench(uint64_t seed, double gap, double stall)
      : ctx_(std::make_unique<VerilatedContext>()),
        rng_(seed),
        hdr_src_(&rng_, gap),
        pay_src_(kW, &rng_, gap),
        sink_(kW, &rng_, stall) {
    top_ = std::make_unique<Vtmnic_pkt_tx>(ctx_.get());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->s_hdr_valid_i = 0;
    top_->s_pay_tvalid_i = 0;
    top_->m_axis_tready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~TxBench() { top_->final(); }

  // Also write every checked output frame to a pcap file (for tshark), time = cycle * 4 ns.
  void capture(const std::string& path) { pcap_.open(path); }

  std::mt19937_64& rng() { return rng_; }

  void send(const RoceHdr& h, const std::vector<uint8_t>& pay) {
    hdr_src_.push(h);
    pay_src_.push(pay);
    expected_.push_back(build_frame(h, pay.data()));
  }

  void cycle() {
    hdr_src_.drive(top_->s_hdr_valid_i, [&](const RoceHdr& h) {
      uint32_t w[kRoceHdrWords];
      pack_hdr(h, w);
      set_words(top_->s_hdr_i, w);
    });
    pay_src_.drive(top_->s_pay_tdata_i, top_->s_pay_tkeep_i, top_->s_pay_tlast_i,
                   top_->s_pay_tvalid_i);
    top_->m_axis_tready_i = sink_.drive_ready();
    top_->eval();
    if (hdr_src_.handshake(top_->s_hdr_ready_o) && hdr_cycle_ < 0)
      hdr_cycle_ = static_cast<long>(cycles_);
    if (top_->m_axis_tvalid_o && out_cycle_ < 0) out_cycle_ = static_cast<long>(cycles_);
    pay_src_.handshake(top_->s_pay_tready_o);
    sink_.sample(top_->m_axis_tdata_o, top_->m_axis_tkeep_o, top_->m_axis_tlast_o,
                 top_->m_axis_tvalid_o);
    tick();
  }

  // Runs until every queued frame came out (checking each one) or max_cycles passed.
  void run(uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while (!expected_.empty() && cycles_ < end) {
      cycle();
      check_out();
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_TRUE(expected_.empty())
        << expected_.size() << " frames missing after " << max_cycles << " cycles";
    for (int i = 0; i < 8; ++i) cycle();
    EXPECT_TRUE(sink_.frames.empty()) << "extra output frame";
    EXPECT_FALSE(sink_.in_frame()) << "extra output beats";
    EXPECT_EQ(sink_.errors(), "");
  }

  uint64_t cycles() const { return cycles_; }
  uint64_t frames_checked() const { return checked_; }
  uint64_t out_beats() const { return sink_.beats(); }
  // First header handshake / first cycle with m_axis_tvalid_o.
  long hdr_cycle() const { return hdr_cycle_; }
  long out_cycle() const { return out_cycle_; }

 private:
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  void check_out() {
    while (!sink_.frames.empty()) {
      ASSERT_FALSE(expected_.empty()) << "unexpected output frame";
      const auto& got = sink_.frames.front();
      const auto& exp = expected_.front();
      ASSERT_EQ(got, exp) << "frame " << checked_ << " first diff at byte " << first_diff(got, exp)
                          << " (len " << got.size() << " vs " << exp.size() << ")\ngot:\n"
                          << hex_dump(got) << "\nexp:\n"
                          << hex_dump(exp);
      if (pcap_.is_open()) pcap_.write(got, cycles_ * 4);
      sink_.frames.pop_front();
      expected_.pop_front();
      ++checked_;
    }
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_pkt_tx> top_;
  std::mt19937_64 rng_;
  ItemSource<RoceHdr> hdr_src_;
  StreamSource pay_src_;
  StreamSink sink_;
  std::deque<std::vector<uint8_t>> expected_;
  uint64_t cycles_ = 0;
  uint64_t checked_ = 0;
  long hdr_cycle_ = -1, out_cycle_ = -1;
  PcapWriter pcap_;
};

}  // namespace

// roce-wire.md §1.3 vector 1 (ACK) built from its header struct (TOS 0x02 and TTL 64 as captured):
// byte for byte.
TEST(PktTx, Vector1Ack) {
  TxBench tb(1, 0.0, 0.0);
  const auto exp = vector1_frame();
  EXPECT_EQ(build_frame(vector1_hdr(), nullptr), exp);
  tb.send(vector1_hdr(), {});
  tb.run(100);
  EXPECT_EQ(tb.frames_checked(), 1u);
}

TEST(PktTx, Vector2SendOnly) {
  TxBench tb(1, 0.0, 0.0);
  const auto exp = vector2_frame();
  EXPECT_EQ(build_frame(vector2_hdr(), vector2_payload().data()), exp);
  tb.send(vector2_hdr(), vector2_payload());
  tb.run(100);
  EXPECT_EQ(tb.frames_checked(), 1u);
}

// Every supported opcode with every edge payload length, back to back.
TEST(PktTx, AllOpcodesEdgeLengths) {
  TxBench tb(2, 0.0, 0.0);
  unsigned n = 0;
  for (int op : supported_opcodes()) {
    for (unsigned len : edge_pay_lens(kW)) {
      RoceHdr h = random_hdr(tb.rng(), len);
      h.opcode = static_cast<uint8_t>(op);
      tb.send(h, random_bytes(tb.rng(), len));
      ++n;
    }
  }
  tb.run(200000);
  EXPECT_EQ(tb.frames_checked(), n);
}

// No gaps, no back-pressure: one output beat per cycle across frames (no bubble between frames).
TEST(PktTx, BackToBackFullRate) {
  for (unsigned len : {0u, 1u, 4096u, 1000u}) {
    TxBench tb(3, 0.0, 0.0);
    uint64_t beats = 0;
    const unsigned frames = len >= 1000 ? 40 : 300;
    for (unsigned i = 0; i < frames; ++i) {
      RoceHdr h = random_hdr(tb.rng(), len);
      tb.send(h, random_bytes(tb.rng(), len));
      beats += (frame_len(h) + kW - 1) / kW;
    }
    tb.run(1000000);
    EXPECT_EQ(tb.out_beats(), beats);
    // Run ends 8 idle cycles after the last frame; the pipeline latency is 5 cycles.
    EXPECT_LE(tb.cycles(), beats + 5 + 3 + 8 + 1) << "len " << len;
  }
}

// The first beat is on m_axis in the 3rd cycle after the header handshake.
TEST(PktTx, Latency) {
  for (unsigned len : {0u, 100u}) {
    TxBench tb(4, 0.0, 0.0);
    tb.send(random_hdr(tb.rng(), len), random_bytes(tb.rng(), len));
    tb.run(100);
    // H, F, A, B (ICRC accumulator), C (ICRC shift)
    EXPECT_EQ(tb.out_cycle() - tb.hdr_cycle(), 5) << len;
  }
}

class PktTxRandom : public ::testing::TestWithParam<uint64_t> {};

// Random headers/lengths/payloads, random gaps on both inputs and random back-pressure.
TEST_P(PktTxRandom, Frames) {
  const uint64_t seed = GetParam();
  std::mt19937_64 cfg(seed * 7919 + 1);
  const double gap = std::uniform_real_distribution<double>(0.0, 0.6)(cfg);
  const double stall = std::uniform_real_distribution<double>(0.0, 0.6)(cfg);
  TxBench tb(seed, gap, stall);
  // TMNIC_PCAP_DIR=<dir>: keep the frames as <dir>/pkt_tx_<W>_<seed>.pcap, with realistic
  // addresses (unicast source MAC, UDP source port >= 0xC000) so tshark dissects every frame as
  // RoCEv2 (check with the roce-wire.md §5 command).
  const char* pcap_dir = std::getenv("TMNIC_PCAP_DIR");
  if (pcap_dir) {
    tb.capture(std::string(pcap_dir) + "/pkt_tx_" + std::to_string(TB_DATA_W) + "_" +
               std::to_string(seed) + ".pcap");
  }
  const unsigned frames = 3000 * test_scale();
  for (unsigned i = 0; i < frames; ++i) {
    const unsigned len = random_pay_len(tb.rng(), kW);
    RoceHdr h = random_hdr(tb.rng(), len);
    if (pcap_dir) {
      h.src_mac &= ~(1ull << 40);
      h.dst_mac &= ~(1ull << 40);
      h.udp_sport |= 0xC000;
    }
    tb.send(h, random_bytes(tb.rng(), len));
    // Keep the queues short: run a little every 50 frames.
    if (i % 50 == 49) {
      tb.run(2000000);
      if (HasFailure()) return;
    }
  }
  tb.run(2000000);
  EXPECT_EQ(tb.frames_checked(), frames);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PktTxRandom, ::testing::ValuesIn(seeds({1, 2, 3, 4, 5, 6})));
