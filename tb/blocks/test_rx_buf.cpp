// tmnic_rx_buf against a model of its contract. A random parser sends payload trains (1..slot bytes,
// random gaps, held while stalled); a random receive engine takes the head packet, checks its first
// 16 bytes, then either drops it or scatters it as random pieces (DMA write requests), and releases
// it, sometimes in the cycle of its last request's acceptance; a DMA model in the manner of
// tmnic_dma_wr accepts one request at a time (the next one possibly in the cycle of the previous
// one's last pull), pulls its beats at random cycles from the host alignment's negative first offset
// on, and reports each request done, in order, a random while after its last pull.
// Checked every cycle: every pulled byte inside its request equals the packet byte (so a slot is
// never rewritten while its requests may still pull); head_beg_o, head_full_o, head_first_o,
// s_tready_o and idle_o equal the model's (a slot is free exactly two cycles after both its release
// and the done of every request accepted up to the release).
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <vector>

#include "Vtmnic_rx_buf.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_SLOTS
#define TB_SLOTS 2
#endif
#ifndef TB_RD_LAT
#define TB_RD_LAT 2
#endif
#ifndef TB_SLOT_BYTES
#define TB_SLOT_BYTES 4096
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kMax = TB_SLOT_BYTES;   // the largest packet
constexpr int64_t kNever = INT64_MAX;

struct Knobs {
  double beat_rate, acc_rate, pull_rate, drop_rate;
  unsigned max_done_delay, max_release_delay;
};

struct Pkt {
  std::vector<uint8_t> data;
  int64_t first_at = kNever, last_at = kNever;  // cycles of its first and last beat
  int64_t rel_at = kNever, free_at = kNever;
  uint64_t rseq = 0;                              // requests accepted up to its release
};

class RxBufBench {
 public:
  RxBufBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_rx_buf>(ctx_.get())), rng_(seed),
        k_(k), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    clear_inputs();
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
  }
  ~RxBufBench() { top_->final(); }

  void run(unsigned npkts, uint64_t max_cycles) {
    while (pk_.size() < npkts) new_packet();
    const int64_t end = now_ + static_cast<int64_t>(max_cycles);
    while (released_ < npkts && now_ < end && !errors_) cycle();
    ASSERT_EQ(errors_, 0u);
    ASSERT_EQ(released_, npkts) << "packets not released after " << max_cycles << " cycles";
    // Let the last requests be pulled and done, then the slots come free.
    for (int i = 0; i < 20000 && !errors_ && (reads_outstanding() || !reads_.empty()); ++i) cycle();
    for (int i = 0; i < 4 && !errors_; ++i) cycle();
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(top_->idle_o) << "not idle at the end";
    EXPECT_EQ(dones_.size(), accepts_) << "requests not done";
  }
  int64_t cycles() const { return now_; }

 private:
  // ---- the parser ----
  void new_packet() {
    unsigned len;
    switch (urand(rng_, 0, 7)) {
      case 0: len = static_cast<unsigned>(urand(rng_, 1, 15)); break;   // shorter than a TMH
      case 1: len = kMax; break;
      case 2: len = kBytes * static_cast<unsigned>(urand(rng_, 1, 2)); break;
      case 3: len = kMax / 4; break;
      default: len = static_cast<unsigned>(urand(rng_, 1, kMax));
    }
    Pkt p;
    p.data.resize(len);
    for (auto& b : p.data) b = static_cast<uint8_t>(rng_());
    pk_.push_back(std::move(p));
  }

  // ---- one cycle ----
  void cycle() {
    top_->eval();
    check_outputs();
    if (errors_) return;

    // Parser: a beat of packet sp_, held while stalled.
    bool beat = false;
    if (sp_ < pk_.size()) {
      if (!tvalid_) tvalid_ = chance(rng_, k_.beat_rate);
      if (tvalid_) {
        const Pkt& p = pk_[sp_];
        const unsigned off = sbeat_ * kBytes, n = std::min<unsigned>(kBytes, unsigned(p.data.size()) - off);
        for (unsigned i = 0; i < kBytes; ++i) set_byte(top_->s_tdata_i.data(), i, i < n ? p.data[off + i] : 0xEE);
        top_->s_tkeep_i = mask64(n);
        top_->s_tlast_i = off + n == p.data.size();
        beat = top_->s_tready_o;
      }
    }
    top_->s_tvalid_i = tvalid_;
    if (tvalid_ && !top_->s_tready_o) cov_.hit("parser_stalled");

    // DMA model: a pull of the current request, then perhaps the next request's acceptance.
    top_->rd_en_i = 0;
    bool last_pull = false;
    if (cur_ && chance(rng_, k_.pull_rate)) {
      const int off = -static_cast<int>(cur_->lane0) + static_cast<int>(cur_->next * kBytes);
      top_->rd_en_i = 1;
      top_->rd_off_i = static_cast<uint16_t>(off) & 0x3FFF;
      Read r{now_ + TB_RD_LAT, off, cur_->pkt, cur_->off, cur_->len};
      reads_.push_back(r);
      if (off < 0) cov_.hit("pull_negative_offset");
      if (++cur_->next == cur_->beats) {
        last_pull = true;
        dones_due_.push_back(now_ + TB_RD_LAT + 1 + static_cast<int64_t>(urand(rng_, 0, k_.max_done_delay)));
        cur_.reset();
      }
    }
    // Receive engine model: the request it offers and the release.
    bool acc = false, release = false;
    if (cn_ < pk_.size() && top_->head_full_o) {
      if (plan_.empty() && !planned_) make_plan();
      if (!plan_.empty()) {
        if (!cur_ && chance(rng_, k_.acc_rate)) {
          acc = true;
          const Piece pc = plan_.front();
          plan_.pop_front();
          top_->acc_off_i = pc.off;
          Req q;
          q.pkt = cn_;
          q.off = pc.off;
          q.len = pc.len;
          q.lane0 = static_cast<unsigned>(urand(rng_, 0, kBytes - 1));
          q.beats = (q.lane0 + q.len + kBytes - 1) / kBytes;
          cur_ = q;
          ++accepts_;
          if (last_pull) cov_.hit("accept_in_cycle_of_last_pull");
          if (accepts_ > dones_.size() + 1) cov_.hit("accept_with_requests_outstanding");
          if (plan_.empty()) {
            rel_wait_ = (k_.max_release_delay == 0 || chance(rng_, 0.2))
                            ? 0 : static_cast<int>(urand(rng_, 1, k_.max_release_delay));
            if (rel_wait_ == 0) {
              release = true;
              cov_.hit("release_in_cycle_of_acceptance");
            }
          }
        }
      } else if (rel_wait_-- <= 0) {
        release = true;
      }
    }
    top_->acc_i = acc;
    top_->release_i = release;
    const bool done = !dones_due_.empty() && dones_due_.front() <= now_;
    top_->done_i = done;
    top_->eval();

    clock_tick(*top_, *ctx_);
    ++now_;

    // Model updates (for the cycle just clocked, now_ - 1).
    const int64_t c = now_ - 1;
    if (beat) {
      Pkt& p = pk_[sp_];
      if (sbeat_ == 0) p.first_at = c;
      if (top_->s_tlast_i) {
        p.last_at = c;
        ++sp_;
        sbeat_ = 0;
        if (reads_outstanding()) cov_.hit("store_while_pulling");
      } else {
        ++sbeat_;
      }
      tvalid_ = false;
    }
    if (done) {
      dones_.push_back(c);
      dones_due_.pop_front();
      settle_frees();
    }
    if (release) {
      Pkt& p = pk_[cn_];
      p.rel_at = c;
      p.rseq = accepts_;
      if (p.rseq > dones_.size()) cov_.hit("release_with_requests_outstanding");
      else cov_.hit("release_all_done");
      if (!planned_drop_) cov_.hit("scattered");
      else cov_.hit("dropped");
      if (p.data.size() < 16) cov_.hit("packet_shorter_than_tmh");
      if (p.data.size() == kMax) cov_.hit("packet_largest");
      settle_frees();
      ++cn_;
      ++released_;
      planned_ = false;
      planned_drop_ = false;
    }
    // Pulled data due after this edge.
    while (!reads_.empty() && reads_.front().due <= now_) {
      check_read(reads_.front());
      reads_.pop_front();
    }
  }

  bool reads_outstanding() const { return cur_.has_value() || accepts_ > dones_.size(); }

  void settle_frees() {
    for (auto& p : pk_) {
      if (p.rel_at == kNever || p.free_at != kNever) continue;
      if (p.rseq > dones_.size()) continue;
      const int64_t d = p.rseq ? dones_[p.rseq - 1] : 0;
      p.free_at = std::max(p.rel_at, d) + 2;
    }
  }

  void make_plan() {
    planned_ = true;
    const Pkt& p = pk_[cn_];
    planned_drop_ = chance(rng_, k_.drop_rate);
    if (planned_drop_) {
      rel_wait_ = static_cast<int>(urand(rng_, 0, k_.max_release_delay));
      return;
    }
    // Pieces covering the packet from 0 or from 16 (a matched TMH), as the SGEs cut it.
    unsigned off = (p.data.size() > 16 && chance(rng_, 0.2)) ? 16 : 0;
    while (off < p.data.size()) {
      const unsigned left = unsigned(p.data.size()) - off;
      unsigned n = chance(rng_, 0.6) ? left : static_cast<unsigned>(urand(rng_, 1, left));
      plan_.push_back({off, n});
      off += n;
    }
    if (plan_.size() > 1) cov_.hit("packet_in_several_pieces");
    if (plan_.empty()) planned_drop_ = true;   // nothing to write (all TMH): a release alone
  }

  struct Read {
    int64_t due;
    int off;            // beat offset relative to the request's first byte
    size_t pkt;
    unsigned req_off, req_len;
  };
  void check_read(const Read& r) {
    const Pkt& p = pk_[r.pkt];
    for (unsigned i = 0; i < kBytes; ++i) {
      const int rel = r.off + static_cast<int>(i);
      if (rel < 0 || rel >= static_cast<int>(r.req_len)) continue;
      const uint8_t exp = p.data[r.req_off + static_cast<unsigned>(rel)];
      const uint8_t got = byte_of(top_->rd_data_o.data(), i);
      if (got != exp) {
        ADD_FAILURE() << "cycle " << now_ << " packet " << r.pkt << " request at " << r.req_off << " beat offset "
                      << r.off << " lane " << i << ": got 0x" << std::hex << unsigned(got) << " exp 0x"
                      << unsigned(exp) << std::dec;
        ++errors_;
        return;
      }
    }
  }

  void check_outputs() {
    const int64_t c = now_;
    // The head: the engine's current packet.
    bool beg = false, full = false;
    if (cn_ < pk_.size()) {
      beg = pk_[cn_].first_at < c;
      full = pk_[cn_].last_at < c;
    }
    expect("head_beg_o", top_->head_beg_o, beg);
    expect("head_full_o", top_->head_full_o, full);
    if (beg && !full) cov_.hit("head_beg_before_full");
    if (beg) {
      const Pkt& p = pk_[cn_];
      for (unsigned i = 0; i < 16 && i < p.data.size(); ++i)
        if (byte_of(top_->head_first_o.data(), i) != p.data[i]) {
          ADD_FAILURE() << "cycle " << c << " packet " << cn_ << " head_first_o byte " << i;
          ++errors_;
          break;
        }
      // Bytes 16..31 (a rendezvous request's RVH): with the first word from 256 bits up, with
      // the whole packet at 128.
      if (TB_DATA_W >= 256 || full)
        for (unsigned i = 16; i < 32 && i < p.data.size(); ++i)
          if (byte_of(top_->head_rvh_o.data(), i - 16) != p.data[i]) {
            ADD_FAILURE() << "cycle " << c << " packet " << cn_ << " head_rvh_o byte " << i;
            ++errors_;
            break;
          }
    }
    // The tail slot is free when the packet that used it TB_SLOTS packets before is freed.
    const bool ready = sp_ < TB_SLOTS || pk_[sp_ - TB_SLOTS].free_at <= c;
    expect("s_tready_o", top_->s_tready_o, ready);
    if (!ready) cov_.hit("all_slots_used");
    bool idle = true;
    for (size_t i = 0; i < pk_.size(); ++i)
      if (pk_[i].first_at < c && pk_[i].free_at > c) idle = false;
    expect("idle_o", top_->idle_o, idle);
    // Every request accepted in an earlier cycle is done (the responder's atomic waits for this).
    expect("wr_none_o", top_->wr_none_o, accepts_ == dones_.size());
    if (accepts_ != dones_.size()) cov_.hit("writes_outstanding");
  }
  void expect(const char* what, bool got, bool exp) {
    if (got == exp || errors_) return;
    ADD_FAILURE() << "cycle " << now_ << ": " << what << " = " << got << ", model " << exp << " (stored " << sp_
                  << ", engine at " << cn_ << ")";
    ++errors_;
  }

  void clear_inputs() {
    top_->s_tvalid_i = 0;
    top_->s_tlast_i = 0;
    top_->s_tkeep_i = 0;
    top_->release_i = 0;
    top_->acc_i = 0;
    top_->acc_off_i = 0;
    top_->rd_en_i = 0;
    top_->rd_off_i = 0;
    top_->done_i = 0;
  }

  struct Piece {
    unsigned off, len;
  };
  struct Req {
    size_t pkt;
    unsigned off, len, lane0, beats, next = 0;
  };

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rx_buf> top_;
  std::mt19937_64 rng_;
  Knobs k_;
  Coverage& cov_;
  std::vector<Pkt> pk_;
  size_t sp_ = 0, cn_ = 0, released_ = 0;
  unsigned sbeat_ = 0;
  bool tvalid_ = false;
  std::deque<Piece> plan_;
  bool planned_ = false, planned_drop_ = false;
  int rel_wait_ = 0;
  std::optional<Req> cur_;
  std::deque<int64_t> dones_due_;
  std::vector<int64_t> dones_;
  uint64_t accepts_ = 0;
  std::deque<Read> reads_;
  int64_t now_ = 0;
  unsigned errors_ = 0;
};

TEST(RxBuf, RandomTrainsPiecesAndReleases) {
  Coverage cov({"parser_stalled", "pull_negative_offset", "accept_in_cycle_of_last_pull",
                "accept_with_requests_outstanding", "release_in_cycle_of_acceptance", "writes_outstanding",
                "release_with_requests_outstanding", "release_all_done", "scattered", "dropped",
                "packet_shorter_than_tmh", "packet_largest", "packet_in_several_pieces", "head_beg_before_full",
                "all_slots_used", "store_while_pulling"});
  const Knobs knobs[] = {
      {0.9, 0.9, 0.95, 0.1, 40, 4},    // the NIC's regime: fast parser, DMA slower than the wire
      {0.3, 0.5, 0.5, 0.2, 10, 20},    // everything slow and bursty
      {1.0, 1.0, 1.0, 0.05, 0, 0},     // back to back
  };
  uint64_t total = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    for (const Knobs& k : knobs) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " beat_rate " + std::to_string(k.beat_rate));
      RxBufBench b(seed, k, cov);
      Stopwatch sw;
      b.run(400, 2000000);
      total += static_cast<uint64_t>(b.cycles());
      secs += sw.seconds();
      if (HasFailure()) return;
    }
  }
  report_speed("rx_buf", "busy", total, secs);
  cov.report("rx_buf");
}

}  // namespace
