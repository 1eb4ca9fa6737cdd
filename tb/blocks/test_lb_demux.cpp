// tmnic_lb_demux (the TX side's loopback switch) against a model of its contract: every frame leaves
// whole, byte for byte, in order, on the loopback output when its IPv4 destination (frame bytes
// 30..33) is the port's own address and on the MAC output otherwise; at DATA_W = 256, where that
// address straddles the first two beats, a frame of one beat goes to the MAC. Both outputs keep the
// stream rules (tmnic::tb::StreamSink: packed beats, stable while stalled); idle_o is high only when
// every beat taken has left. Stimulus: frames of 34..300 bytes (and of 1..32 bytes at 256 bits), half
// of them to the local address, the others to an address differing in one byte (or random); random
// gaps on the input and back-pressure on both outputs, also one output stalled for long stretches.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "Vtmnic_lb_demux.h"
#include "lib/axis.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kIpEnd = 34;  // the destination address: frame bytes 30..33

struct Knobs {
  double gap;         // input: idle cycle between beats
  double mac_stall;   // outputs: not ready
  double lb_stall;
};

class LbDemuxBench {
 public:
  LbDemuxBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_lb_demux>(ctx_.get())), rng_(seed),
        cov_(cov), src_(kBytes, &rng_, k.gap), mac_(kBytes, &rng_, k.mac_stall), lb_(kBytes, &rng_, k.lb_stall), k_(k) {
    ip_ = static_cast<uint32_t>(rng_()) | 1u;
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->local_ip_i = ip_;
    top_->s_tvalid_i = 0;
    top_->m_mac_tready_i = 0;
    top_->m_lb_tready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~LbDemuxBench() { top_->final(); }

  // Queues n random frames; short ones (one beat) only where a frame may be that short.
  void frames(unsigned n) {
    for (unsigned f = 0; f < n; ++f) {
      const bool shorty = kBytes < kIpEnd && chance(rng_, 0.1);
      const unsigned len = shorty ? static_cast<unsigned>(urand(rng_, 1, kBytes)) : static_cast<unsigned>(urand(rng_, kIpEnd, 300));
      std::vector<uint8_t> fr(len);
      for (auto& b : fr) b = static_cast<uint8_t>(rng_());
      bool local = false;
      if (len >= kIpEnd) {
        const unsigned kind = static_cast<unsigned>(urand(rng_, 0, 3));
        uint32_t ip = ip_;
        if (kind == 2) ip ^= 0xFFu << (8 * urand(rng_, 0, 3));   // one byte differs
        if (kind == 3) ip = static_cast<uint32_t>(rng_());
        for (unsigned i = 0; i < 4; ++i) fr[30 + i] = static_cast<uint8_t>(ip >> (24 - 8 * i));
        local = ip == ip_;
        cov_.hit(local ? "to_loopback" : kind == 2 ? "to_mac_one_byte_off" : "to_mac");
      } else {
        cov_.hit("short_frame_to_mac");
      }
      if (len <= kBytes) cov_.hit("frame_of_one_beat");
      if (len > kBytes && len <= 2 * kBytes) cov_.hit("frame_of_two_beats");
      (local ? exp_lb_ : exp_mac_).push_back(fr);
      src_.push(fr);
    }
  }

  void run(uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((!src_.idle() || !exp_mac_.empty() || !exp_lb_.empty()) && cycles_ < end && !errors_) cycle();
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(exp_mac_.empty() && exp_lb_.empty()) << exp_mac_.size() << " MAC and " << exp_lb_.size()
                                                     << " loopback frames missing after " << max_cycles << " cycles";
    for (int i = 0; i < 3; ++i) cycle();
    EXPECT_TRUE(top_->idle_o);
    EXPECT_FALSE(mac_.in_frame() || lb_.in_frame());
  }
  uint64_t cycles() const { return cycles_; }

 private:
  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  void check(StreamSink& s, std::deque<std::vector<uint8_t>>& exp, const char* name) {
    if (!s.errors().empty()) fail(std::string(name) + ": " + s.errors());
    while (!s.frames.empty()) {
      if (exp.empty()) {
        fail(std::string("unexpected frame on ") + name);
        return;
      }
      if (s.frames.front() != exp.front()) fail(std::string("frame on ") + name + " differs (or is another frame)");
      s.frames.pop_front();
      exp.pop_front();
    }
  }

  void cycle() {
    // Long stretches with one output stalled: the other output's frames must not wait for it
    // (except behind a frame of their own).
    if (cycles_ % 2000 == 0) {
      const unsigned hold = static_cast<unsigned>(urand(rng_, 0, 2));
      mac_.set_stall_prob(hold == 1 ? 1.0 : k_.mac_stall);
      lb_.set_stall_prob(hold == 2 ? 1.0 : k_.lb_stall);
    }
    src_.drive(top_->s_tdata_i, top_->s_tkeep_i, top_->s_tlast_i, top_->s_tvalid_i);
    top_->m_mac_tready_i = mac_.drive_ready();
    top_->m_lb_tready_i = lb_.drive_ready();
    top_->eval();

    // idle_o tells about the beats taken before this cycle.
    if (top_->idle_o && beats_in_ != beats_out_) fail("idle_o high while a beat is held");
    if (!top_->idle_o && beats_in_ == beats_out_) fail("idle_o low with no beat held");
    const bool in = src_.handshake(top_->s_tready_o);
    const bool mac_ready = top_->m_mac_tready_i, lb_ready = top_->m_lb_tready_i;
    if (top_->m_mac_tvalid_o && top_->m_lb_tvalid_o) fail("both outputs valid");
    const bool out = (top_->m_mac_tvalid_o && mac_ready) || (top_->m_lb_tvalid_o && lb_ready);
    mac_.sample(top_->m_mac_tdata_o, top_->m_mac_tkeep_o, top_->m_mac_tlast_o, top_->m_mac_tvalid_o);
    lb_.sample(top_->m_lb_tdata_o, top_->m_lb_tkeep_o, top_->m_lb_tlast_o, top_->m_lb_tvalid_o);
    if (in) ++beats_in_;
    if (out) ++beats_out_;
    if (top_->s_tvalid_i && !top_->s_tready_o) cov_.hit("input_stalled");
    if (top_->m_lb_tvalid_o && !lb_ready) cov_.hit("loopback_stalled");
    if (top_->m_mac_tvalid_o && !mac_ready) cov_.hit("mac_stalled");
    tick();
    check(mac_, exp_mac_, "MAC");
    check(lb_, exp_lb_, "loopback");
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_lb_demux> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  StreamSource src_;
  StreamSink mac_, lb_;
  std::deque<std::vector<uint8_t>> exp_mac_, exp_lb_;
  uint32_t ip_ = 0;
  Knobs k_;
  uint64_t cycles_ = 0, beats_in_ = 0, beats_out_ = 0, errors_ = 0;
};

TEST(LbDemux, FramesGoWholeToTheirOutput) {
  std::vector<std::string> req = {"to_loopback", "to_mac", "to_mac_one_byte_off", "frame_of_one_beat",
                                  "frame_of_two_beats", "input_stalled", "loopback_stalled", "mac_stalled"};
  if (kBytes < kIpEnd) req.push_back("short_frame_to_mac");
  Coverage cov(req);
  const Knobs mixes[] = {{0.0, 0.0, 0.0}, {0.3, 0.3, 0.3}, {0.05, 0.6, 0.1}};
  unsigned m = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    LbDemuxBench b(seed, mixes[m++ % 3], cov);
    b.frames(3000 * test_scale());
    b.run(5000000);
    if (HasFatalFailure()) return;
  }
  cov.report("lb_demux");
}

}  // namespace
