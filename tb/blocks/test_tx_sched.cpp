// tmnic_tx_sched against a model of its contract: ACK/NAK headers (no payload) have priority over
// data packets of both sources; between the send engine's packets (pkt_*) and the READ responses
// (rr_*), round robin per packet: when both offer, the one that did not have the last data turn is
// taken, so neither waits for more than one packet of the other (plus ACKs). A data packet's header
// passes through unchanged and its payload (pay_len bytes in slot pkt_slot_i / rr_slot_i of its
// source's TX buffer) is streamed with full tkeep on every beat but the last, the remainder on the
// last beat and tlast on it; the slot is returned to its own source (slot_free_o / rr_slot_free_o)
// exactly once, in the cycle after the last beat was taken (at once for pay_len 0). Each TX buffer
// read port is modelled like tmnic_shift_buf at RD_LAT 2 (data two cycles after its read, reads
// pipelined, held otherwise) over
// its own bytes; a freed slot is overwritten with garbage at once, so a late read or a read of the
// wrong buffer shows. Every pay_len 0..4096 is sent by each source; m_hdr and m_pay see random
// back-pressure; the sources' offers are held until taken (the block's input assertions check it).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <numeric>
#include <set>
#include <vector>

#include "Vtmnic_tx_sched.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/wire.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr uint64_t kTxbLat = 2;   // tmnic_tx_sched TXB_LAT (its default): the TX buffers at RD_LAT 2
constexpr unsigned kNslot = 8;
constexpr unsigned kHdrBits = tmnic::wire::kRoceHdrBits;  // roce_hdr_t; pay_len is bits [12:0]
constexpr unsigned kHdrWords = (kHdrBits + 31) / 32;
constexpr unsigned kBufBytes = kNslot * 4096;
using Hdr = std::array<uint32_t, kHdrWords>;
constexpr const char* kSrcName[2] = {"send engine", "READ responses"};

struct Knobs {
  double ack_rate;  // per cycle: a new ACK header appears (when none is waiting)
  double pkt_gap[2];  // per source: no new packet this cycle
  double hdr_ready, pay_ready;
};

class TxSchedBench {
 public:
  TxSchedBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_tx_sched>(ctx_.get())), rng_(seed),
        k_(k), cov_(cov) {
    for (auto& b : buf_) {
      b.resize(kBufBytes);
      for (auto& x : b) x = static_cast<uint8_t>(rng_());
    }
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->ack_valid_i = 0;
    top_->pkt_valid_i = 0;
    top_->rr_valid_i = 0;
    top_->m_hdr_ready_i = 0;
    top_->m_pay_tready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    for (unsigned s = 0; s < kNslot; ++s) free_[0].push_back(s), free_[1].push_back(s);
  }
  ~TxSchedBench() { top_->final(); }

  // Sends one data packet per entry of lens[src] (in that order) from each source, plus random ACKs.
  void run(const std::vector<unsigned>& lens0, const std::vector<unsigned>& lens1, uint64_t max_cycles) {
    src_[0].lens = lens0;
    src_[1].lens = lens1;
    src_[0].next = src_[1].next = 0;
    const uint64_t end = cycles_ + max_cycles;
    while ((more(0) || more(1) || busy()) && cycles_ < end && !errors_) cycle(true);
    ASSERT_EQ(errors_, 0u);
    ASSERT_FALSE(busy()) << "packets pending after " << max_cycles << " cycles";
    for (int i = 0; i < 5; ++i) cycle(false);
    EXPECT_EQ(errors_, 0u);
    EXPECT_EQ(free_[0].size(), kNslot) << "send-engine slots never freed";
    EXPECT_EQ(free_[1].size(), kNslot) << "READ-response slots never freed";
    EXPECT_TRUE(top_->idle_o);
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t beats() const { return beats_; }
  // The most packets of the other data source taken while a source offered, and the longest wait.
  unsigned max_overtaken() const { return std::max(src_[0].overtaken_max, src_[1].overtaken_max); }
  uint64_t max_wait() const { return std::max(src_[0].wait_max, src_[1].wait_max); }
  uint64_t taken(unsigned s) const { return src_[s].taken; }

  std::set<unsigned> lens_seen_[2];

 private:
  struct Pkt {
    Hdr hdr;
    unsigned src, slot, len;
    std::vector<uint8_t> pay;
    unsigned sent = 0;  // payload bytes delivered
  };
  struct Src {
    std::vector<unsigned> lens;
    size_t next = 0;
    bool valid = false;
    Pkt pkt{};
    uint64_t since = 0;            // offering since this cycle
    unsigned overtaken = 0, overtaken_max = 0;
    uint64_t wait_max = 0, taken = 0;
  };

  bool more(unsigned s) const { return src_[s].next < src_[s].lens.size(); }
  bool busy() const {
    return ack_valid_ || src_[0].valid || src_[1].valid || !hdr_q_.empty() || !pay_q_.empty() || !free_due_.empty();
  }
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
  Hdr random_hdr(unsigned pay_len) {
    Hdr h;
    for (auto& w : h) w = static_cast<uint32_t>(rng_());
    h[kHdrWords - 1] &= (1u << (kHdrBits % 32)) - 1;
    set_bits(h.data(), 0, 13, pay_len);
    return h;
  }

  void cycle(bool gen) {
    // ---------------- sources
    if (!ack_valid_ && gen && chance(rng_, k_.ack_rate)) {
      ack_valid_ = true;
      ack_hdr_ = random_hdr(0);
    }
    for (unsigned s = 0; s < 2; ++s) {
      Src& q = src_[s];
      if (q.valid || !gen || !more(s) || free_[s].empty() || chance(rng_, k_.pkt_gap[s])) continue;
      const size_t i = urand(rng_, 0, free_[s].size() - 1);
      Pkt p;
      p.src = s;
      p.slot = free_[s][i];
      free_[s].erase(free_[s].begin() + static_cast<long>(i));
      p.len = q.lens[q.next++];
      p.hdr = random_hdr(p.len);
      std::vector<uint8_t>& b = buf_[s];
      for (unsigned j = 0; j < 4096; ++j) b[p.slot * 4096 + j] = static_cast<uint8_t>(rng_());
      p.pay.assign(b.begin() + p.slot * 4096, b.begin() + p.slot * 4096 + p.len);
      q.pkt = std::move(p);
      q.valid = true;
      q.since = cycles_;
      q.overtaken = 0;
    }
    for (unsigned i = 0; i < kHdrWords; ++i) {
      top_->ack_hdr_i[i] = ack_hdr_[i];
      top_->pkt_hdr_i[i] = src_[0].pkt.hdr[i];
      top_->rr_hdr_i[i] = src_[1].pkt.hdr[i];
    }
    top_->ack_valid_i = ack_valid_;
    top_->pkt_valid_i = src_[0].valid;
    top_->pkt_slot_i = src_[0].pkt.slot;
    top_->rr_valid_i = src_[1].valid;
    top_->rr_slot_i = src_[1].pkt.slot;
    top_->m_hdr_ready_i = chance(rng_, k_.hdr_ready);
    top_->m_pay_tready_i = chance(rng_, k_.pay_ready);
    top_->eval();

    // ---------------- outputs
    const bool pending = !hdr_q_.empty() || !pay_q_.empty();
    if (top_->idle_o == pending) fail(std::string("idle_o ") + (pending ? "high with work pending" : "low when idle"));
    // slot frees (registered pulses): the expected slots of each source, exactly when due.
    unsigned exp_sf[2] = {0, 0};
    while (!free_due_.empty() && free_due_.front().at == cycles_) {
      exp_sf[free_due_.front().src] |= 1u << free_due_.front().slot;
      free_due_.pop_front();
    }
    if (!free_due_.empty() && free_due_.front().at < cycles_) fail("model: stale slot_free expectation");
    const unsigned sf[2] = {top_->slot_free_o, top_->rr_slot_free_o};
    for (unsigned s = 0; s < 2; ++s) {
      if (sf[s] != exp_sf[s])
        fail(std::string(s ? "rr_slot_free_o" : "slot_free_o") + " 0x" + std::to_string(sf[s]) + ", expected 0x" +
             std::to_string(exp_sf[s]));
      for (unsigned k = 0; k < kNslot; ++k)
        if ((sf[s] >> k) & 1) {
          for (unsigned j = 0; j < 4096; ++j) buf_[s][k * 4096 + j] = static_cast<uint8_t>(rng_());  // refilled at once
          free_[s].push_back(k);
        }
    }
    // Header stream.
    if (hdr_hold_) {
      bool same = top_->m_hdr_valid_o;
      for (unsigned i = 0; same && i < kHdrWords; ++i) same = top_->m_hdr_o[i] == hdr_held_[i];
      if (!same) fail("m_hdr changed or dropped while stalled");
    }
    hdr_hold_ = top_->m_hdr_valid_o && !top_->m_hdr_ready_i;
    if (hdr_hold_) {
      cov_.hit("hdr_stall");
      for (unsigned i = 0; i < kHdrWords; ++i) hdr_held_[i] = top_->m_hdr_o[i];
    }
    if (top_->m_hdr_valid_o && top_->m_hdr_ready_i) {
      if (hdr_q_.empty()) fail("header without an accepted packet");
      else {
        for (unsigned i = 0; i < kHdrWords; ++i)
          if (top_->m_hdr_o[i] != hdr_q_.front()[i]) {
            fail("header differs in word " + std::to_string(i));
            break;
          }
        hdr_q_.pop_front();
      }
    }
    // Payload stream.
    if (pay_hold_) {
      bool same = top_->m_pay_tvalid_o && top_->m_pay_tkeep_o == keep_held_ && top_->m_pay_tlast_o == last_held_;
      for (unsigned i = 0; same && i < kBytes / 4; ++i) same = top_->m_pay_tdata_o[i] == data_held_[i];
      if (!same) fail("payload beat changed or dropped while stalled");
    }
    pay_hold_ = top_->m_pay_tvalid_o && !top_->m_pay_tready_i;
    if (pay_hold_) {
      cov_.hit("pay_stall");
      keep_held_ = top_->m_pay_tkeep_o;
      last_held_ = top_->m_pay_tlast_o;
      for (unsigned i = 0; i < kBytes / 4; ++i) data_held_[i] = top_->m_pay_tdata_o[i];
    }
    if (top_->m_pay_tvalid_o && top_->m_pay_tready_i) check_beat();
    // Input handshakes: ACK priority, round robin between the data sources.
    const bool rdy[2] = {bool(top_->pkt_ready_o), bool(top_->rr_ready_o)};
    if ((rdy[0] || rdy[1]) && top_->ack_valid_i) fail("data packet taken while an ACK was waiting");
    if (top_->ack_ready_o && !top_->ack_valid_i) fail("ack_ready without ack_valid");
    if (rdy[0] && !src_[0].valid) fail("pkt_ready without pkt_valid");
    if (rdy[1] && !src_[1].valid) fail("rr_ready without rr_valid");
    if (int(top_->ack_ready_o) + int(rdy[0]) + int(rdy[1]) > 1) fail("two packets taken in one cycle");
    if (ack_valid_ && top_->ack_ready_o) {
      if (src_[0].valid) cov_.hit("ack_wins_over_send_packet");
      if (src_[1].valid) cov_.hit("ack_wins_over_read_response");
      hdr_q_.push_back(ack_hdr_);
      ack_valid_ = false;
      cov_.hit("ack_sent");
    }
    for (unsigned s = 0; s < 2; ++s) {
      Src& q = src_[s];
      if (!q.valid || !rdy[s]) continue;
      const unsigned o = 1 - s;
      if (src_[o].valid) {
        cov_.hit(s ? "both_offer_read_response_taken" : "both_offer_send_packet_taken");
        if (have_turn_ && last_src_ == s) fail(std::string(kSrcName[s]) + " taken twice in a row while the other offered");
        ++src_[o].overtaken;
        src_[o].overtaken_max = std::max(src_[o].overtaken_max, src_[o].overtaken);
      }
      have_turn_ = true;
      last_src_ = s;
      q.wait_max = std::max(q.wait_max, cycles_ - q.since);
      ++q.taken;
      hdr_q_.push_back(q.pkt.hdr);
      if (q.pkt.len == 0) {
        free_due_.push_back({cycles_ + 1, s, q.pkt.slot});
        cov_.hit(s ? "rr_pay_len_0" : "pay_len_0");
      } else {
        pay_q_.push_back(q.pkt);
      }
      lens_seen_[s].insert(q.pkt.len);
      q.valid = false;
    }
    for (unsigned s = 0; s < 2; ++s) {
      rd_now_[s] = s ? top_->txb2_rd_o : top_->txb_rd_o;
      rd_pos_[s] = s ? top_->txb2_pos_o : top_->txb_pos_o;
    }
    if (rd_now_[0] && rd_now_[1]) fail("both TX buffers read in one cycle");
    if (rd_now_[0] && rd_pos_[0] % 4096 + kBytes > 4096) cov_.hit("read_past_slot_end");
    if (rd_now_[1]) cov_.hit("read_response_buffer_read");
    // (the window's bytes as they are when read: a slot is refilled only after it is returned)
    for (unsigned s = 0; s < 2; ++s)
      if (rd_now_[s]) {
        std::vector<uint8_t> w(kBytes);
        for (unsigned i = 0; i < kBytes; ++i) w[i] = buf_[s][(rd_pos_[s] + i) % kBufBytes];
        rd_fly_[s].push_back({cycles_ + kTxbLat, std::move(w)});
      }
    tick();
    // TX buffer read ports: the window at the position kTxbLat cycles after the read, held otherwise.
    for (unsigned s = 0; s < 2; ++s)
      while (!rd_fly_[s].empty() && rd_fly_[s].front().first <= cycles_) {
        for (unsigned i = 0; i < kBytes; ++i)
          set_byte(s ? top_->txb2_data_i.data() : top_->txb_data_i.data(), i, rd_fly_[s].front().second[i]);
        rd_fly_[s].pop_front();
      }
  }

  void check_beat() {
    ++beats_;
    if (pay_q_.empty()) {
      fail("payload beat without a packet");
      return;
    }
    Pkt& p = pay_q_.front();
    const unsigned left = p.len - p.sent;
    const unsigned n = std::min(left, kBytes);
    const uint64_t keep = top_->m_pay_tkeep_o;
    const uint64_t exp_keep = n >= 64 ? ~0ull : ((1ull << n) - 1);
    if (keep != exp_keep) fail("tkeep wrong at byte " + std::to_string(p.sent) + " of " + std::to_string(p.len));
    const bool last = left <= kBytes;
    if (top_->m_pay_tlast_o != last) fail(std::string("tlast ") + (last ? "missing" : "early") + " at byte " + std::to_string(p.sent) + " of " + std::to_string(p.len));
    for (unsigned i = 0; i < n; ++i)
      if (byte_of(top_->m_pay_tdata_o.data(), i) != p.pay[p.sent + i]) {
        fail("payload byte " + std::to_string(p.sent + i) + " of " + std::to_string(p.len) + " (" + kSrcName[p.src] +
             ", slot " + std::to_string(p.slot) + ") wrong");
        return;
      }
    p.sent += n;
    if (last) {
      free_due_.push_back({cycles_ + 1, p.src, p.slot});
      pay_q_.pop_front();
    }
  }

  struct Due {
    uint64_t at;
    unsigned src, slot;
  };

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_tx_sched> top_;
  std::mt19937_64 rng_;
  Knobs k_;
  Coverage& cov_;
  std::vector<uint8_t> buf_[2];
  std::vector<unsigned> free_[2];
  Src src_[2];
  bool ack_valid_ = false, have_turn_ = false;
  unsigned last_src_ = 0;
  Hdr ack_hdr_{};
  std::deque<Hdr> hdr_q_;
  std::deque<Pkt> pay_q_;
  std::deque<Due> free_due_;
  bool hdr_hold_ = false, pay_hold_ = false, last_held_ = false, rd_now_[2] = {false, false};
  Hdr hdr_held_{};
  uint64_t keep_held_ = 0;
  uint32_t data_held_[kBytes / 4] = {};
  unsigned rd_pos_[2] = {0, 0};
  std::deque<std::pair<uint64_t, std::vector<uint8_t>>> rd_fly_[2];   // reads in flight: {due cycle, window}
  uint64_t cycles_ = 0, beats_ = 0;
  unsigned errors_ = 0;
};

std::vector<unsigned> shuffled_lens(std::mt19937_64& r) {
  std::vector<unsigned> v(4097);
  std::iota(v.begin(), v.end(), 0u);
  std::shuffle(v.begin(), v.end(), r);
  return v;
}

TEST(TxSched, EveryPayLenBothSourcesAckPriorityRoundRobin) {
  Coverage cov({"hdr_stall", "pay_stall", "ack_wins_over_send_packet", "ack_wins_over_read_response", "ack_sent",
                "pay_len_0", "rr_pay_len_0", "both_offer_send_packet_taken", "both_offer_read_response_taken",
                "read_response_buffer_read"});
  const Knobs mixes[] = {{0.05, {0.2, 0.2}, 0.6, 0.6}, {0.2, {0.0, 0.0}, 0.9, 0.4}, {0.02, {0.5, 0.1}, 0.3, 0.95}};
  uint64_t cyc = 0, beats = 0;
  double secs = 0;
  std::set<unsigned> seen[2];
  unsigned m = 0, overtaken = 0;
  uint64_t wait = 0;
  for (uint64_t seed : seeds({1, 2})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 r(seed);
    const auto l0 = shuffled_lens(r), l1 = shuffled_lens(r);
    TxSchedBench b(seed, mixes[m++ % 3], cov);
    Stopwatch sw;
    b.run(l0, l1, 6000000);
    secs += sw.seconds();
    cyc += b.cycles();
    beats += b.beats();
    overtaken = std::max(overtaken, b.max_overtaken());
    wait = std::max(wait, b.max_wait());
    for (unsigned s = 0; s < 2; ++s) seen[s].insert(b.lens_seen_[s].begin(), b.lens_seen_[s].end());
    if (HasFatalFailure()) return;
  }
  // Short random runs with the third mix: small packets, many ACKs; one source much busier.
  for (uint64_t seed : seeds({3})) {
    std::mt19937_64 r(seed);
    std::vector<unsigned> l0(3000), l1(1000);
    for (auto& l : l0) l = static_cast<unsigned>(chance(r, 0.5) ? urand(r, 0, 200) : urand(r, 0, 4096));
    for (auto& l : l1) l = static_cast<unsigned>(chance(r, 0.5) ? urand(r, 0, 200) : urand(r, 0, 4096));
    TxSchedBench b(seed, mixes[2], cov);
    b.run(l0, l1, 6000000);
    overtaken = std::max(overtaken, b.max_overtaken());
    if (HasFatalFailure()) return;
  }
  report_speed("tx_sched", "busy", cyc, secs);
  std::printf("[tx_sched] %llu payload beats, %zu/%zu distinct pay_len values; a waiting data source saw at most %u "
              "packet(s) of the other taken (longest wait %llu cycles)\n",
              (unsigned long long)beats, seen[0].size(), seen[1].size(), overtaken, (unsigned long long)wait);
  EXPECT_EQ(seen[0].size(), 4097u) << "not every pay_len 0..4096 was sent by the send engine";
  EXPECT_EQ(seen[1].size(), 4097u) << "not every pay_len 0..4096 was sent as a READ response";
  EXPECT_LE(overtaken, 1u) << "a data source waited for more than one packet of the other";
  cov.report("tx_sched");
}

// Both data sources always offering, no ACKs: they alternate exactly (and with one of them slow,
// the other is not held back).
TEST(TxSched, SaturatedSourcesAlternate) {
  Coverage cov({});
  TxSchedBench b(5, {0.0, {0.0, 0.0}, 1.0, 1.0}, cov);
  std::vector<unsigned> l0(400, 64), l1(400, 4096);
  b.run(l0, l1, 1000000);
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(b.max_overtaken(), 1u);
  EXPECT_EQ(b.taken(0), 400u);
  EXPECT_EQ(b.taken(1), 400u);
}

TEST(TxSched, IdleSpeed) {
  Coverage cov({});
  TxSchedBench b(1, {0, {1, 1}, 1, 1}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("tx_sched", "idle", 300000, sw.seconds());
}

}  // namespace
