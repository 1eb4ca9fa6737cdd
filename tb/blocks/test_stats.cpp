// tmnic_stats against a model of its contract: NUM_STATS event counters and, per SRQ, four event
// counters (TMSTAT_EXPECTED..SYNCS) and four levels (occupancy, high-water mark, disabled, phase),
// read through one port. A read accepted in cycle t answers in cycle t+2 (a one-cycle pulse) with
// the counter's events of the cycles before t, or the level of cycle t (the high-water mark as
// registered before t). Reconfiguring SRQ s in cycle t zeroes its counters and high-water mark
// (events of cycle t dropped; a read accepted in cycle t still sees the old counts); after power-up
// every counter reads 0 (the RAM starts random: --x-initial unique). Out-of-range words read 0.
// Also checked: a read waits at most one cycle (reads and flushes alternate), also when it is for
// the RAM word a read took in the previous cycle (whose sum is being written: the unit forwards
// it), and never waits once every event has been flushed (2*NW+2 quiet cycles); no answer without
// a read. The RTL asserts that no accumulator wraps and the RAM never collides.
// Stimulus: random events (every counter at once in some mixes), reconfigurations beside events
// and reads, random level walks, reads of hot and random words (also out of range), held reads.
// Not tested: the 32-bit wrap of a counter (2^32 events; the adder is plain modulo-2^32 arithmetic).
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "Vtmnic_stats.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

#ifndef TB_NUM_SRQ
#define TB_NUM_SRQ 16
#endif
#ifndef TB_H_W
#define TB_H_W 10
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kSrq = TB_NUM_SRQ;
constexpr unsigned kHw = TB_H_W;
constexpr unsigned kStats = hw::stat::COUNT;
constexpr unsigned kTmWords = hw::tmstat::COUNT;  // per SRQ
constexpr unsigned kGw = (kStats + 3) / 4;
constexpr unsigned kNw = kGw + kSrq;
constexpr uint32_t kLvlMask = (1u << (kHw + 1)) - 1;

struct Knobs {
  double ev_rate;     // per STAT counter and cycle
  double tm_rate;     // per TM event kind and cycle
  double reset_rate;  // SRQ reconfigurations
  double read_rate;
  double lvl_rate;    // level changes
  bool all;           // every event every cycle
};

struct Pending {
  uint64_t due;
  uint32_t val;
  bool tm;
  unsigned idx;
};

class StatsBench {
 public:
  StatsBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), rng_(seed), cov_(cov), cnt_(kStats, 0), tcnt_(kSrq * 4, 0),
        hwm_(kSrq, 0), hold_(kSrq, false), occ_(kSrq, 0), dis_(kSrq, 0), hwc_(kSrq, 0), swc_(kSrq, 0) {
    ctx_->randReset(2);
    ctx_->randSeed(static_cast<int>(seed));
    top_ = std::make_unique<Vtmnic_stats>(ctx_.get());
    top_->clk_i = 0;
    // Reset asserted by an edge, before the first clock, as a power-on reset is (the flip-flops'
    // random initial state would otherwise drive a first clock edge, e.g. a RAM read at a garbage
    // word, which the RAM's assertion rightly refuses).
    top_->rst_ni = 1;
    top_->eval();
    top_->rst_ni = 0;
    top_->inc_i = 0;
    top_->tm_exp_i = top_->tm_unexp_i = top_->tm_notag_i = top_->tm_sync_i = 0;
    top_->srq_reset_i = 0;
    top_->rd_valid_i = 0;
    drive_levels();
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~StatsBench() { top_->final(); }

  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k, -1, false);
  }
  // Every word of both windows read once, back to back, with no events.
  void read_all(const char* point) {
    const Knobs quiet{0, 0, 0, 0, 0, false};
    while (rd_on_ && !::testing::Test::HasFailure()) step(quiet, -2, false);  // the random read still waiting
    for (unsigned i = 0; i < kStats + kSrq * kTmWords && !::testing::Test::HasFailure(); ++i) {
      const bool tm = i >= kStats;
      do step(quiet, static_cast<int>(tm ? i - kStats : i), tm);  // until taken
      while (rd_on_ && !::testing::Test::HasFailure());
    }
    for (int i = 0; i < 4; ++i) step(quiet, -2, false);
    cov_.hit(point);
  }
  void drain() {
    const Knobs quiet{0, 0, 0, 0, 0, false};
    for (int i = 0; i < 4; ++i) step(quiet, -2, false);
    if (!pend_.empty()) ADD_FAILURE() << "answers missing at the end";
  }
  uint64_t cycles() const { return cycles_; }

 private:
  void tick() {
    clock_tick(*top_, *ctx_);
    ++cycles_;
  }
  void drive_levels() {
    for (unsigned s = 0; s < kSrq; ++s) {
      set_sig_bits(top_->occ_i, s * (kHw + 1), kHw + 1, occ_[s]);
      set_sig_bits(top_->disabled_i, s * (kHw + 1), kHw + 1, dis_[s]);
      set_sig_bits(top_->hw_cnt_i, s * 16, 16, hwc_[s]);
      set_sig_bits(top_->sw_cnt_i, s * 16, 16, swc_[s]);
    }
  }
  // Model value of a read of (tm, idx) now (before this cycle's events).
  uint32_t model(bool tm, unsigned idx) const {
    if (!tm) return idx < kStats ? cnt_[idx] : 0;
    if (idx >= kSrq * kTmWords) return 0;
    const unsigned s = idx / kTmWords, w = idx % kTmWords;
    switch (w) {
      case hw::tmstat::OCCUPANCY: return occ_[s];
      case hw::tmstat::HIGH_WATER: return hwm_[s];
      case hw::tmstat::DISABLED: return dis_[s];
      case hw::tmstat::PHASE: return (hwc_[s] << 16) | swc_[s];
      default: return tcnt_[s * 4 + w];
    }
  }
  // RAM word of a read (-1: none)
  static int word_of(bool tm, unsigned idx) {
    if (!tm) return idx < kStats ? static_cast<int>(idx / 4) : -1;
    if (idx >= kSrq * kTmWords || idx % kTmWords >= 4) return -1;
    return static_cast<int>(kGw + idx / kTmWords);
  }
  void new_read() {
    rd_tm_ = chance(rng_, 0.6);
    const unsigned r = static_cast<unsigned>(urand(rng_, 0, 15));
    if (r == 0 && last_word_idx_ >= 0) {  // the word of the last read again (forwarded if back to back)
      rd_tm_ = last_tm_;
      rd_idx_ = static_cast<unsigned>(last_word_idx_);
    } else if (!rd_tm_) {
      rd_idx_ = r == 1 ? static_cast<unsigned>(urand(rng_, kStats, (1u << 14) - 1))
                       : static_cast<unsigned>(urand(rng_, 0, kStats - 1));
    } else {
      rd_idx_ = r == 1 ? static_cast<unsigned>(urand(rng_, kSrq * kTmWords, (1u << 14) - 1))
                       : static_cast<unsigned>(urand(rng_, 0, kSrq * kTmWords - 1));
    }
    rd_wait_ = 0;
  }

  // One cycle. forced >= 0: a read of that index (window tm) in place of random ones; -2: no read.
  void step(const Knobs& k, int forced, bool tm) {
    // Drive: events
    uint32_t inc = 0;
    for (unsigned i = 0; i < kStats; ++i)
      if (k.all || chance_nz(rng_, k.ev_rate)) inc |= 1u << i;
    const bool exp = k.all || chance_nz(rng_, k.tm_rate), unexp = k.all || chance_nz(rng_, k.tm_rate);
    const bool notag = k.all || chance_nz(rng_, k.tm_rate), sync = k.all || chance_nz(rng_, k.tm_rate);
    const unsigned srq = static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    const unsigned sync_srq = chance(rng_, 0.5) ? srq : static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    const bool srst = chance_nz(rng_, k.reset_rate);
    // Out-of-range reconfigurations (other SRQ numbers of the command) do nothing.
    const unsigned srst_idx = chance(rng_, 0.1) ? static_cast<unsigned>(urand(rng_, kSrq, 0xFFFF))
                                                : (chance(rng_, 0.5) ? srq : static_cast<unsigned>(urand(rng_, 0, kSrq - 1)));
    if (chance_nz(rng_, k.lvl_rate)) {
      const unsigned s = static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
      switch (urand(rng_, 0, 4)) {
        case 0: occ_[s] = static_cast<uint32_t>(urand(rng_, 0, kLvlMask)); break;
        case 1: occ_[s] = occ_[s] ? occ_[s] - 1 : 0; break;
        case 2: occ_[s] = occ_[s] < kLvlMask ? occ_[s] + 1 : occ_[s]; break;
        case 3: occ_[s] = 0; break;
        default:
          dis_[s] = static_cast<uint32_t>(urand(rng_, 0, kLvlMask));
          hwc_[s] = static_cast<uint32_t>(urand(rng_, 0, 0xFFFF));
          swc_[s] = static_cast<uint32_t>(urand(rng_, 0, 0xFFFF));
      }
    }
    // Drive: read (held until taken)
    if (forced >= 0) {
      if (!rd_on_) {
        rd_on_ = true;
        rd_tm_ = tm;
        rd_idx_ = static_cast<unsigned>(forced);
        rd_wait_ = 0;
      }
    } else if (!rd_on_ && forced == -1 && chance_nz(rng_, k.read_rate)) {
      rd_on_ = true;
      new_read();
    }
    top_->inc_i = inc;
    top_->tm_exp_i = exp;
    top_->tm_unexp_i = unexp;
    top_->tm_notag_i = notag;
    top_->tm_sync_i = sync;
    top_->tm_srq_i = srq;
    top_->tm_sync_srq_i = sync_srq;
    top_->srq_reset_i = srst;
    top_->srq_reset_idx_i = srst_idx;
    drive_levels();
    top_->rd_valid_i = rd_on_;
    top_->rd_tm_i = rd_tm_;
    top_->rd_idx_i = rd_idx_;
    top_->eval();

    // Sample: the answer due now
    if (top_->rsp_valid_o) {
      if (pend_.empty() || pend_.front().due != cycles_) {
        ADD_FAILURE() << "cycle " << cycles_ << ": answer with no read due";
        return;
      }
      const Pending p = pend_.front();
      pend_.pop_front();
      if (top_->rsp_data_o != p.val) {
        ADD_FAILURE() << "cycle " << cycles_ << ": read of " << (p.tm ? "TM word " : "STAT ") << p.idx << " gave "
                      << top_->rsp_data_o << ", model " << p.val;
        return;
      }
    } else if (!pend_.empty() && pend_.front().due == cycles_) {
      ADD_FAILURE() << "cycle " << cycles_ << ": no answer to the read accepted two cycles ago";
      return;
    }
    // Sample: the read handshake
    const int word = rd_on_ ? word_of(rd_tm_, rd_idx_) : -1;
    if (rd_on_) {
      const bool ready = top_->rd_ready_o;
      if (ready && word >= 0 && word == prev_pick_word_) cov_.hit("read_same_word_back_to_back");
      if (!ready && quiet_ >= 2 * kNw + 2) {
        ADD_FAILURE() << "cycle " << cycles_ << ": read waits with nothing to flush";
        return;
      }
      if (ready) {
        const uint32_t v = model(rd_tm_, rd_idx_);
        pend_.push_back({cycles_ + 2, v, rd_tm_, rd_idx_});
        cover_read(v);
        if (rd_wait_ == 1) cov_.hit("read_waited");
        if (srst && rd_tm_ && rd_idx_ / kTmWords == srst_idx && v != 0) cov_.hit("reset_and_read_same_cycle");
        if (k.all) cov_.hit("read_during_all_events");
        rd_on_ = false;
        last_tm_ = rd_tm_;
        last_word_idx_ = static_cast<int>(rd_idx_);
      } else if (++rd_wait_ > 1) {
        ADD_FAILURE() << "cycle " << cycles_ << ": read waited " << rd_wait_ << " cycles";
        return;
      }
    }
    prev_pick_word_ = (rd_on_ || word < 0) ? -1 : word;  // rd_on_ cleared above: taken this cycle

    // Model: this cycle's events, then the reconfiguration, then the high-water marks.
    const bool any = inc || exp || unexp || notag || sync || srst;
    quiet_ = any ? 0 : quiet_ + 1;
    for (unsigned i = 0; i < kStats; ++i) cnt_[i] += (inc >> i) & 1u;
    tcnt_[srq * 4 + hw::tmstat::EXPECTED] += exp;
    tcnt_[srq * 4 + hw::tmstat::UNEXPECTED] += unexp;
    tcnt_[srq * 4 + hw::tmstat::NO_TAG] += notag;
    tcnt_[sync_srq * 4 + hw::tmstat::SYNCS] += sync;
    std::vector<uint32_t> hwm = hwm_;
    std::vector<bool> hold = hold_;
    for (unsigned s = 0; s < kSrq; ++s) {
      if (occ_[s] == 0) hold[s] = false;
      else if (!hold_[s] && occ_[s] > hwm_[s]) hwm[s] = occ_[s];
    }
    if (srst && srst_idx < kSrq) {
      if (exp || unexp || notag || sync) cov_.hit("reset_and_event_same_cycle");
      for (unsigned l = 0; l < 4; ++l) tcnt_[srst_idx * 4 + l] = 0;
      hwm[srst_idx] = 0;
      hold[srst_idx] = true;
      cov_.hit("srq_reset");
    } else if (srst) {
      cov_.hit("reset_out_of_range");
    }
    hwm_ = hwm;
    hold_ = hold;
    tick();
  }
  void cover_read(uint32_t v) {
    if (!rd_tm_) {
      cov_.hit(rd_idx_ < kStats ? "read_stat" : "read_stat_out_of_range");
      return;
    }
    if (rd_idx_ >= kSrq * kTmWords) {
      cov_.hit("read_tm_out_of_range");
      return;
    }
    static const char* const names[] = {"read_tm_expected", "read_tm_unexpected", "read_tm_no_tag", "read_tm_syncs",
                                        "read_tm_occupancy", "read_tm_high_water", "read_tm_disabled", "read_tm_phase"};
    cov_.hit(names[rd_idx_ % kTmWords]);
    if (rd_idx_ % kTmWords == hw::tmstat::HIGH_WATER && hold_[rd_idx_ / kTmWords] && occ_[rd_idx_ / kTmWords] > v)
      cov_.hit("high_water_held");  // reconfigured, the old entries not cleared yet: the mark does not follow
    if (rd_idx_ % kTmWords < 4 && v >= 2 * kNw) cov_.hit("count_beyond_accumulator_bound");
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_stats> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<uint32_t> cnt_, tcnt_, hwm_;
  std::vector<bool> hold_;
  std::vector<uint32_t> occ_, dis_, hwc_, swc_;
  std::deque<Pending> pend_;
  bool rd_on_ = false, rd_tm_ = false, last_tm_ = false;
  unsigned rd_idx_ = 0, rd_wait_ = 0;
  int last_word_idx_ = -1, prev_pick_word_ = -1;
  uint64_t quiet_ = 0;
  uint64_t cycles_ = 0;
};

TEST(Stats, RandomEventsResetsAndReadsAgainstModel) {
  Coverage cov({"read_stat", "read_stat_out_of_range", "read_tm_out_of_range", "read_tm_expected",
                "read_tm_unexpected", "read_tm_no_tag", "read_tm_syncs", "read_tm_occupancy", "read_tm_high_water",
                "read_tm_disabled", "read_tm_phase", "read_same_word_back_to_back", "read_waited",
                "reset_and_read_same_cycle", "reset_and_event_same_cycle", "srq_reset", "reset_out_of_range",
                "read_during_all_events", "high_water_held", "count_beyond_accumulator_bound", "read_all_after_reset",
                "read_all"});
  const Knobs mixes[] = {
      {0.2, 0.3, 0.01, 0.5, 0.2, false},   // busy
      {0.0, 0.0, 0.0, 1.0, 0.0, true},     // every counter every cycle, reads back to back
      {0.02, 0.05, 0.05, 0.3, 0.5, false}, // reconfigurations and level changes
      {0.9, 0.9, 0.002, 0.9, 0.05, false}, // near saturation
      {0.001, 0.001, 0.0, 0.2, 0.01, false},  // mostly idle: reads never wait
  };
  uint64_t cyc = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StatsBench b(seed, cov);
    Stopwatch sw;
    b.read_all("read_all_after_reset");
    for (const Knobs& k : mixes) {
      b.run(k, 20000);
      if (HasFailure()) return;
      b.read_all("read_all");
      if (HasFailure()) return;
    }
    b.drain();
    secs += sw.seconds();
    cyc += b.cycles();
  }
  report_speed("stats", "busy", cyc, secs);
  cov.report("stats");
}

}  // namespace
