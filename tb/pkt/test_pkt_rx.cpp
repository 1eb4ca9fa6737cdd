// tmnic_pkt_rx (frame parser) against the C++ model: good frames interleaved with bad ones, random
// gaps on the input and random back-pressure on the header and payload outputs. Every accepted
// header/payload must equal roce::parse_frame's, and the statistics pulses must count exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "Vtmnic_pkt_rx.h"
#include "lib/axis.hpp"
#include "lib/bits.hpp"
#include "lib/seed.hpp"
#include "pkt_common.hpp"
#include "roce/roce_model.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

constexpr unsigned kW = TB_DATA_W / 8;
constexpr uint64_t kLocalMac = 0x02AABBCCDDEEull;
constexpr uint32_t kLocalIp = 0x0A010203;

struct Counts {
  uint64_t accept = 0, drop_hdr = 0, drop_icrc = 0;
  bool operator==(const Counts& o) const {
    return accept == o.accept && drop_hdr == o.drop_hdr && drop_icrc == o.drop_icrc;
  }
};
std::ostream& operator<<(std::ostream& os, const Counts& c) {
  return os << "{accept " << c.accept << ", drop_hdr " << c.drop_hdr << ", drop_icrc "
            << c.drop_icrc << "}";
}

class RxBench {
 public:
  RxBench(uint64_t seed, double gap, double hdr_stall, double pay_stall,
          LocalAddr local = {kLocalMac, kLocalIp})
      : ctx_(std::make_unique<VerilatedContext>()),
        rng_(seed),
        local_(local),
        src_(kW, &rng_, gap),
        pay_sink_(kW, &rng_, pay_stall),
        hdr_stall_(hdr_stall) {
    top_ = std::make_unique<Vtmnic_pkt_rx>(ctx_.get());
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->local_mac_i = local.mac;
    top_->local_ip_i = local.ip;
    top_->s_axis_tvalid_i = 0;
    top_->m_hdr_ready_i = 0;
    top_->m_pay_tready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~RxBench() { top_->final(); }

  std::mt19937_64& rng() { return rng_; }
  const LocalAddr& local() const { return local_; }
  void set_stalls(double gap, double hdr_stall, double pay_stall) {
    src_.set_gap_prob(gap);
    hdr_stall_ = hdr_stall;
    pay_sink_.set_stall_prob(pay_stall);
  }

  // Queues a frame; returns the model's verdict.
  ParseError send(const std::vector<uint8_t>& f) {
    RoceHdr h;
    std::vector<uint8_t> pay;
    ParseError e = ParseError::kOk;
    if (parse_frame(f.data(), f.size(), &h, &pay, &e, &local_)) {
      exp_hdr_.push_back(h);
      if (h.pay_len) exp_pay_.push_back(std::move(pay));
      ++exp_.accept;
    } else if (e == ParseError::kBadIcrc) {
      ++exp_.drop_icrc;
    } else {
      ++exp_.drop_hdr;
    }
    src_.push(f);
    ++sent_;
    return e;
  }

  void cycle() {
    src_.drive(top_->s_axis_tdata_i, top_->s_axis_tkeep_i, top_->s_axis_tlast_i,
               top_->s_axis_tvalid_i);
    const bool hdr_ready = !chance_nz(rng_, hdr_stall_);
    top_->m_hdr_ready_i = hdr_ready;
    top_->m_pay_tready_i = pay_sink_.drive_ready();
    top_->eval();
    if (!top_->s_axis_tready_o) ++in_stall_cycles_;
    if (src_.handshake(top_->s_axis_tready_o)) last_in_cycle_ = cycles_;
    if (top_->m_hdr_valid_o && first_hdr_cycle_ < 0) first_hdr_cycle_ = static_cast<long>(cycles_);
    if (top_->m_pay_tvalid_o && first_pay_cycle_ < 0) first_pay_cycle_ = static_cast<long>(cycles_);
    if (top_->m_hdr_valid_o && hdr_ready) {
      uint32_t w[kRoceHdrWords];
      get_words(top_->m_hdr_o, w);
      got_hdr_.push_back(unpack_hdr(w));
    }
    pay_sink_.sample(top_->m_pay_tdata_o, top_->m_pay_tkeep_o, top_->m_pay_tlast_o,
                     top_->m_pay_tvalid_o);
    got_.accept += top_->accept_o;
    got_.drop_hdr += top_->drop_hdr_o;
    got_.drop_icrc += top_->drop_icrc_o;
    if (top_->accept_o + top_->drop_hdr_o + top_->drop_icrc_o > 1) ++multi_pulse_;
    tick();
  }

  bool done() const { return src_.idle() && exp_hdr_.empty() && exp_pay_.empty() && got_ == exp_; }

  // Runs until all queued frames are through (checking outputs as they come) or max_cycles.
  void run(uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while (!done() && cycles_ < end) {
      cycle();
      check_out();
      if (::testing::Test::HasFatalFailure()) return;
    }
    ASSERT_TRUE(done()) << "stuck after " << max_cycles << " cycles: " << exp_hdr_.size()
                        << " headers and " << exp_pay_.size() << " payloads missing; counts "
                        << got_ << " expected " << exp_;
    for (int i = 0; i < 20; ++i) cycle();
    check_out();
    EXPECT_TRUE(got_hdr_.empty()) << "extra header";
    EXPECT_TRUE(pay_sink_.frames.empty()) << "extra payload";
    EXPECT_FALSE(pay_sink_.in_frame()) << "extra payload beats";
    EXPECT_EQ(got_, exp_);
    EXPECT_EQ(multi_pulse_, 0u);
    EXPECT_EQ(pay_sink_.errors(), "");
  }

  // Runs exactly n cycles, checking outputs.
  void step(uint64_t n) {
    for (uint64_t i = 0; i < n && !::testing::Test::HasFatalFailure(); ++i) {
      cycle();
      check_out();
    }
  }

  const Counts& counts() const { return got_; }
  uint64_t cycles() const { return cycles_; }
  uint64_t sent() const { return sent_; }
  uint64_t in_stall_cycles() const { return in_stall_cycles_; }
  uint64_t pay_beats() const { return pay_sink_.beats(); }
  // Cycle numbers: last input handshake, first cycle with m_hdr_valid_o / m_pay_tvalid_o.
  uint64_t last_in_cycle() const { return last_in_cycle_; }
  long first_hdr_cycle() const { return first_hdr_cycle_; }
  long first_pay_cycle() const { return first_pay_cycle_; }

 private:
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  void check_out() {
    while (!got_hdr_.empty()) {
      ASSERT_FALSE(exp_hdr_.empty()) << "unexpected header";
      ASSERT_EQ(got_hdr_.front(), exp_hdr_.front()) << "header " << hdrs_checked_;
      got_hdr_.pop_front();
      exp_hdr_.pop_front();
      ++hdrs_checked_;
    }
    while (!pay_sink_.frames.empty()) {
      ASSERT_FALSE(exp_pay_.empty()) << "unexpected payload";
      const auto& g = pay_sink_.frames.front();
      const auto& e = exp_pay_.front();
      ASSERT_EQ(g, e) << "payload " << pays_checked_ << " first diff " << first_diff(g, e)
                      << " len " << g.size() << " vs " << e.size();
      pay_sink_.frames.pop_front();
      exp_pay_.pop_front();
      ++pays_checked_;
    }
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_pkt_rx> top_;
  std::mt19937_64 rng_;
  LocalAddr local_;
  StreamSource src_;
  StreamSink pay_sink_;
  double hdr_stall_;
  std::deque<RoceHdr> exp_hdr_, got_hdr_;
  std::deque<std::vector<uint8_t>> exp_pay_;
  Counts exp_, got_;
  uint64_t cycles_ = 0, sent_ = 0, hdrs_checked_ = 0, pays_checked_ = 0, multi_pulse_ = 0;
  uint64_t in_stall_cycles_ = 0, last_in_cycle_ = 0;
  long first_hdr_cycle_ = -1, first_pay_cycle_ = -1;
};

// A good frame for `local`: random header and payload, random values in the fields the ICRC
// masks or the parser ignores (TOS, TTL, ID, DF, FECN/BECN, P_Key bit 15), maybe padded.
std::vector<uint8_t> good_frame(std::mt19937_64& rng, const LocalAddr& local,
                                unsigned max_len = 4096) {
  const unsigned len = random_pay_len(rng, kW, max_len);
  RoceHdr h = random_hdr(rng, len);
  h.dst_mac = local.mac;
  h.dst_ip = local.ip;
  auto f = build_frame(h, random_bytes(rng, len).data());
  if (rng() % 2) {
    f[15] = static_cast<uint8_t>(rng());         // TOS
    f[22] = static_cast<uint8_t>(rng());         // TTL
    f[18] = static_cast<uint8_t>(rng());         // ID
    f[20] = (rng() & 1) ? 0x40 : 0x00;           // DF
    f[46] = static_cast<uint8_t>(rng() & 0xC0);  // FECN/BECN
    if (rng() % 4 == 0) f[44] = 0x7F;            // P_Key 0x7FFF
    fix_ip_csum(f);
    fix_icrc(f);
  }
  if (f.size() < 60)
    f.resize(60, 0);  // Ethernet min-size padding
  else if (rng() % 8 == 0 && f.size() + 7 <= kMaxFrameLen)
    f.resize(f.size() + rng() % 8, 0);  // odd trailing bytes (a frame of the longest kind has none)
  return f;
}

enum Rule {
  kRuleEtherType,
  kRuleVerIhl,
  kRuleMf,
  kRuleFragOff,
  kRuleProto,
  kRuleDport,
  kRuleIpLen,
  kRuleUdpLenLong,
  kRuleTooLong,
  kRuleDstMac,
  kRuleDstIp,
  kRuleTver,
  kRulePkey,
  kRuleOpcode,
  kRuleShortForExt,
  kRulePadCnt,
  kRuleTruncated,
  kRuleCount
};

// A frame that breaks header rule `r` (and only that one, as far as possible).
std::vector<uint8_t> bad_hdr_frame(std::mt19937_64& rng, const LocalAddr& local, int r) {
  auto f = good_frame(rng, local, 600);
  auto set16 = [&](size_t o, unsigned v) {
    f[o] = static_cast<uint8_t>(v >> 8);
    f[o + 1] = static_cast<uint8_t>(v);
  };
  auto get16 = [&](size_t o) { return static_cast<unsigned>(f[o] << 8 | f[o + 1]); };
  switch (r) {
    case kRuleEtherType:
      set16(12, (rng() & 1) ? 0x86DD : 0x8100);
      break;
    case kRuleVerIhl:
      f[14] = (rng() & 1) ? 0x46 : 0x65;
      break;
    case kRuleMf:
      f[20] |= 0x20;
      break;
    case kRuleFragOff:
      f[21] = static_cast<uint8_t>(1 + rng() % 255);
      break;
    case kRuleProto:
      f[23] = (rng() & 1) ? 6 : 18;
      break;
    case kRuleDport:
      set16(36, 4791 ^ (1u << (rng() % 16)));
      break;
    case kRuleIpLen:
      set16(16, get16(16) + ((rng() & 1) ? 4 : -4));
      break;
    case kRuleUdpLenLong: {  // consistent lengths, but longer than the frame
      const unsigned extra = 4 * (1 + rng() % 40);
      set16(16, get16(16) + extra);
      set16(38, get16(38) + extra);
      break;
    }
    case kRuleTooLong: {  // a frame longer than MAX_FRAME_LEN (consistent lengths)
      RoceHdr h = random_hdr(rng, 4096 + 4 + static_cast<unsigned>(rng() % 64));
      h.opcode = kWriteOnlyImm;
      h.dst_mac = local.mac;
      h.dst_ip = local.ip;
      f = build_frame(h, random_bytes(rng, h.pay_len).data());
      break;
    }
    case kRuleDstMac:
      f[rng() % 6] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    case kRuleDstIp:
      f[30 + rng() % 4] ^= static_cast<uint8_t>(1u << (rng() % 8));
      break;
    case kRuleTver:
      f[43] |= static_cast<uint8_t>(1 + rng() % 15);
      break;
    case kRulePkey:
      f[44 + rng() % 2] ^= static_cast<uint8_t>(1u << (rng() % 7));
      break;
    case kRuleOpcode:
      do f[42] = static_cast<uint8_t>(0x12 + rng() % (256 - 0x12));
      while (bth_op_supported(f[42]));  // (the UD opcodes are supported)
      break;
    case kRuleShortForExt: {  // RETH opcode whose UDP length cannot hold the RETH
      RoceHdr h = random_hdr(rng, 0);
      h.opcode = kSendOnly;
      h.dst_mac = local.mac;
      h.dst_ip = local.ip;
      f = build_frame(h, nullptr);  // 0-byte SEND_ONLY: UDP length 24
      f[42] = (rng() & 1) ? kReadReq : kWriteOnlyImm;
      f.resize(f.size() + 20, 0);  // frame long enough; only the UDP length is short
      break;
    }
    case kRulePadCnt: {  // PadCnt larger than the bytes after the headers
      RoceHdr h = random_hdr(rng, 0);
      h.opcode = kAck;
      h.dst_mac = local.mac;
      h.dst_ip = local.ip;
      f = build_frame(h, nullptr);
      f[43] |= static_cast<uint8_t>((1 + rng() % 3) << 4);
      break;
    }
    case kRuleTruncated:   // cut inside the packet (not only its Ethernet padding)
      f.resize(1 + rng() % (14 + get16(16) - 1));
      return f;
    default:
      break;
  }
  fix_icrc(f);
  return f;
}

// Flips one bit the ICRC covers and no header rule looks at (so the verdict is drop_icrc).
std::vector<uint8_t> bad_icrc_frame(std::mt19937_64& rng, const LocalAddr& local) {
  auto f = good_frame(rng, local);
  const size_t udp_len = f[38] << 8 | f[39];
  const size_t end = 34 + udp_len;  // end of the ICRC
  static const size_t kSafe[] = {18, 19, 26, 27, 28, 29, 34, 35, 47, 48, 49, 50, 51, 52, 53};
  size_t off;
  if (rng() % 3 == 0)
    off = kSafe[rng() % (sizeof kSafe / sizeof kSafe[0])];
  else
    off = 54 + rng() % (end - 54);
  f[off] ^= static_cast<uint8_t>(1u << (rng() % 8));
  return f;
}

}  // namespace

TEST(PktRx, Vector1Ack) {
  RxBench tb(1, 0, 0, 0, {0x020000000001ull, 0x0a000001});
  EXPECT_EQ(tb.send(vector1_frame()), ParseError::kOk);
  auto padded = vector1_frame();
  padded.resize(64, 0);
  EXPECT_EQ(tb.send(padded), ParseError::kOk);
  tb.run(200);
  EXPECT_EQ(tb.counts().accept, 2u);
}

TEST(PktRx, Vector2SendOnly) {
  RxBench tb(1, 0, 0, 0, {0x020000000002ull, 0x0a000002});
  RoceHdr h;
  std::vector<uint8_t> pay;
  const auto f = vector2_frame();
  ASSERT_TRUE(parse_frame(f.data(), f.size(), &h, &pay, nullptr, &tb.local()));
  EXPECT_EQ(h, vector2_hdr());
  EXPECT_EQ(pay, vector2_payload());
  EXPECT_EQ(tb.send(f), ParseError::kOk);
  tb.run(200);
  EXPECT_EQ(tb.counts().accept, 1u);
}

// Each header rule on its own, with a good frame after each: counted as drop_hdr, nothing emitted.
TEST(PktRx, EveryHeaderRule) {
  RxBench tb(5, 0.2, 0.2, 0.2);
  for (int rep = 0; rep < 20; ++rep) {
    for (int r = 0; r < kRuleCount; ++r) {
      const auto e = tb.send(bad_hdr_frame(tb.rng(), tb.local(), r));
      ASSERT_TRUE(is_hdr_drop(e)) << "rule " << r << " gave " << to_string(e);
      ASSERT_EQ(tb.send(good_frame(tb.rng(), tb.local(), 300)), ParseError::kOk);
    }
  }
  tb.run(400000);
  EXPECT_EQ(tb.counts().drop_hdr, 20u * kRuleCount);
  EXPECT_EQ(tb.counts().accept, 20u * kRuleCount);
}

// MAX_FRAME_LEN bytes are accepted, one byte more (trailing padding) is a header drop.
TEST(PktRx, MaxFrameLength) {
  RxBench tb(15, 0.1, 0.1, 0.1);
  RoceHdr h = random_hdr(tb.rng(), 4096);
  h.opcode = kWriteOnlyImm;
  h.dst_mac = kLocalMac;
  h.dst_ip = kLocalIp;
  auto f = build_frame(h, random_bytes(tb.rng(), 4096).data());
  ASSERT_EQ(f.size(), kMaxFrameLen);
  EXPECT_EQ(tb.send(f), ParseError::kOk);
  f.push_back(0);
  EXPECT_EQ(tb.send(f), ParseError::kTooLong);
  f.resize(f.size() + 3 * kW, 0);  // far too long: beats beyond the buffer reservation
  EXPECT_EQ(tb.send(f), ParseError::kTooLong);
  f.resize(kMaxFrameLen);
  EXPECT_EQ(tb.send(f), ParseError::kOk);
  tb.run(10000);
  EXPECT_EQ(tb.counts().accept, 2u);
  EXPECT_EQ(tb.counts().drop_hdr, 2u);
}

TEST(PktRx, IcrcBitFlips) {
  RxBench tb(6, 0.1, 0.1, 0.1);
  for (int i = 0; i < 400; ++i) {
    ASSERT_EQ(tb.send(bad_icrc_frame(tb.rng(), tb.local())), ParseError::kBadIcrc);
    if (i % 4 == 0) tb.send(good_frame(tb.rng(), tb.local(), 200));
  }
  tb.run(2000000);
  EXPECT_EQ(tb.counts().drop_icrc, 400u);
  EXPECT_EQ(tb.counts().accept, 100u);
}

// Back-to-back minimum frames (58 B padded to 60): one frame per cycle in, nothing lost.
TEST(PktRx, BackToBackMinFrames) {
  RxBench tb(7, 0, 0, 0);
  const unsigned n = 2000;
  const unsigned beats_per_frame = (60 + kW - 1) / kW;
  for (unsigned i = 0; i < n; ++i) {
    RoceHdr h = random_hdr(tb.rng(), 0);
    h.opcode = kSendOnly;
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    auto f = build_frame(h, nullptr);
    f.resize(60, 0);
    ASSERT_EQ(tb.send(f), ParseError::kOk);
  }
  tb.run(100000);
  EXPECT_EQ(tb.counts().accept, n);
  EXPECT_EQ(tb.in_stall_cycles(), 0u);
  // Reset, pipeline latency and run()'s 20 trailing idle cycles on top of the input beats.
  EXPECT_LE(tb.cycles(), n * beats_per_frame + 40u);
}

// Back-to-back 4 KiB frames: the input never stalls and the payload leaves at one beat per cycle.
TEST(PktRx, BackToBack4KFrames) {
  RxBench tb(8, 0, 0, 0);
  const unsigned n = 100;
  uint64_t in_beats = 0;
  for (unsigned i = 0; i < n; ++i) {
    RoceHdr h = random_hdr(tb.rng(), 4096, /*ud=*/false);
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    auto f = build_frame(h, random_bytes(tb.rng(), 4096).data());
    in_beats += (f.size() + kW - 1) / kW;
    ASSERT_EQ(tb.send(f), ParseError::kOk);
  }
  tb.run(100000);
  EXPECT_EQ(tb.counts().accept, n);
  EXPECT_EQ(tb.in_stall_cycles(), 0u);
  EXPECT_EQ(tb.pay_beats(), n * 4096u / kW);
  // Store-and-forward: the last frame's payload (4096 / W beats) follows its last input beat.
  EXPECT_LE(tb.cycles(), in_beats + 4096u / kW + 60u);
}

// Store-and-forward latency from the last input beat (outputs free): header 4 cycles, payload
// 7 cycles if it sits in one buffer word, 8 if it spans two.
TEST(PktRx, Latency) {
  for (unsigned len : {8u, 100u}) {
    RxBench tb(10, 0, 0, 0);
    RoceHdr h = random_hdr(tb.rng(), len);
    h.opcode = kSendOnly;
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    tb.send(build_frame(h, random_bytes(tb.rng(), len).data()));
    tb.run(100);
    const bool one_word = (54 % kW) + len <= kW;
    EXPECT_EQ(tb.first_hdr_cycle() - static_cast<long>(tb.last_in_cycle()), 4) << len;
    EXPECT_EQ(tb.first_pay_cycle() - static_cast<long>(tb.last_in_cycle()), one_word ? 7 : 8)
        << len;
  }
}

// Very slow consumer: the buffer fills, the input is back-pressured, nothing is lost.
TEST(PktRx, SlowConsumerBackPressure) {
  RxBench tb(9, 0.0, 0.9, 0.9);
  for (int i = 0; i < 300; ++i) tb.send(good_frame(tb.rng(), tb.local()));
  tb.run(4000000);
  EXPECT_GT(tb.in_stall_cycles(), 0u);
  EXPECT_EQ(tb.counts().accept, 300u);
}

// Minimum frames against a header consumer that is mostly stalled: the descriptor FIFO fills and
// admission must hold the input back before it overflows.
TEST(PktRx, SlowHeaderConsumerMinFrames) {
  RxBench tb(11, 0.0, 0.95, 0.0);
  for (int i = 0; i < 400; ++i) {
    RoceHdr h = random_hdr(tb.rng(), i % 3 == 0 ? 0 : 1 + tb.rng()() % 8);
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    h.opcode = kSendOnly;
    auto f = build_frame(h, random_bytes(tb.rng(), h.pay_len).data());
    f.resize(std::max<size_t>(f.size(), 60), 0);
    tb.send(f);
  }
  tb.run(4000000);
  EXPECT_GT(tb.in_stall_cycles(), 0u);
  EXPECT_EQ(tb.counts().accept, 400u);
}

// Near-maximum frames back to back against a stalled consumer: the buffer runs full and admission
// must reserve a whole MAX_FRAME_LEN frame plus the beats in flight.
TEST(PktRx, SlowConsumerLargeFrames) {
  for (int cfg = 0; cfg < 2; ++cfg) {
    // cfg 0: payload consumer slow; cfg 1: header consumer slow (frames wait unread in the buffer).
    RxBench tb(12 + cfg, 0.0, cfg ? 0.99 : 0.5, cfg ? 0.0 : 0.97);
    for (int i = 0; i < 200; ++i) {
      const unsigned len = 4000 + static_cast<unsigned>(tb.rng()() % 117);
      RoceHdr h = random_hdr(tb.rng(), len);
      h.dst_mac = kLocalMac;
      h.dst_ip = kLocalIp;
      h.opcode = (i % 2) ? kSendOnly : kWriteOnlyImm;
      auto f = build_frame(h, random_bytes(tb.rng(), len).data());
      if (f.size() > kMaxFrameLen) f.resize(kMaxFrameLen);  // keeps some truncated (dropped) ones
      tb.send(f);
    }
    tb.run(20000000);
    EXPECT_GT(tb.in_stall_cycles(), 0u);
  }
}

// Exact admission boundary: with the reader stalled, three frames fill the buffer so that only
// DEPTH - MAX_BEATS - 2 + 2 words are used once the third frame is written, i.e. a maximum-length
// fourth frame would fit only if the two beats still in flight were not counted. It must wait,
// arriving back to back after the third frame; the frames must later come out intact.
TEST(PktRx, BufferFullAdmission) {
  const unsigned depth = 16384 / kW;
  const unsigned max_beats = (kMaxFrameLen + kW - 1) / kW;
  const unsigned total = depth - max_beats + 2;  // words of the first three frames
  const unsigned words[3] = {total / 3 + total % 3, total / 3, total / 3};
  RxBench tb(14, 0.0, 1.0, 1.0);  // both outputs stalled: nothing is released
  for (unsigned w : words) {
    ASSERT_LE(w, max_beats);
    RoceHdr h = random_hdr(tb.rng(), w * kW - 60);  // frame length w * kW - 2
    h.opcode = kSendOnly;
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    const auto f = build_frame(h, random_bytes(tb.rng(), h.pay_len).data());
    ASSERT_EQ((f.size() + kW - 1) / kW, w);
    ASSERT_EQ(tb.send(f), ParseError::kOk);
  }
  for (int i = 0; i < 2; ++i) {
    RoceHdr h = random_hdr(tb.rng(), 4096);
    h.opcode = kWriteOnlyImm;  // kMaxFrameLen bytes
    h.dst_mac = kLocalMac;
    h.dst_ip = kLocalIp;
    const auto f = build_frame(h, random_bytes(tb.rng(), 4096).data());
    ASSERT_EQ(f.size(), kMaxFrameLen);
    ASSERT_EQ(tb.send(f), ParseError::kOk);
  }
  tb.step(2000);
  EXPECT_EQ(tb.counts().accept, 3u);
  tb.set_stalls(0.0, 0.0, 0.0);
  tb.run(100000);
}

class PktRxRandom : public ::testing::TestWithParam<uint64_t> {};

// Random mix: ~55% good, ~25% header violations, ~15% ICRC errors, ~5% truncated.
TEST_P(PktRxRandom, MixedFrames) {
  const uint64_t seed = GetParam();
  std::mt19937_64 cfg(seed * 104729 + 3);
  std::uniform_real_distribution<double> p(0.0, 0.7);
  RxBench tb(seed, p(cfg), p(cfg), p(cfg));
  const unsigned frames = 3000 * test_scale();
  for (unsigned i = 0; i < frames; ++i) {
    const unsigned k = tb.rng()() % 100;
    if (k < 55)
      tb.send(good_frame(tb.rng(), tb.local()));
    else if (k < 80)
      tb.send(bad_hdr_frame(tb.rng(), tb.local(), static_cast<int>(tb.rng()() % kRuleCount)));
    else if (k < 95)
      tb.send(bad_icrc_frame(tb.rng(), tb.local()));
    else
      tb.send(bad_hdr_frame(tb.rng(), tb.local(), kRuleTruncated));
    if (i % 100 == 99) {
      tb.set_stalls(p(cfg), p(cfg), p(cfg));
      tb.run(3000000);
      if (HasFailure()) return;
    }
  }
  tb.run(3000000);
  EXPECT_EQ(tb.sent(), frames);
}

INSTANTIATE_TEST_SUITE_P(Seeds, PktRxRandom, ::testing::ValuesIn(seeds({1, 2, 3, 4, 5, 6})));
