// tmnic_scatter against a model of its contract. Each context holds a message: a list of up to
// SLOTS checked SGEs {IOVA, length} (written through the table port, some empty), a cursor and the
// bytes left. A packet of len bytes, of which the first skip are not delivered, is scattered from
// the context's cursor: the model walks the SGEs (stepping over exhausted and empty ones) and
// expects one DMA write request per piece (address, length, packet offset, last flag), in order;
// after the last request, the cursor it reports. Also checked: idle_o every cycle, requests held
// unchanged while stalled (and the RTL's own assertions), no request before avail_i, and in the
// unstalled mix the exact cycle of every request (two cycles per piece, one per SGE stepped to).
// Stimulus: random SGE lists (empty, one-byte and up to 64 KiB entries, IOVAs near the top of the
// address space), messages ended early or filled exactly, packets of 1..4096 bytes with skips,
// avail_i late, back-pressure on the requests, table writes to other contexts while a scatter runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <vector>

#ifndef TB_START_REG
#define TB_START_REG 0
#endif
#include "Vtmnic_scatter.h"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_NUM_CTX
#define TB_NUM_CTX 64
#endif
#ifndef TB_SLOTS
#define TB_SLOTS 8
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kCtx = TB_NUM_CTX;
constexpr unsigned kSlots = TB_SLOTS;
constexpr unsigned kSlotW = kSlots <= 2 ? 1 : kSlots <= 4 ? 2 : kSlots <= 8 ? 3 : 4;

struct Sge {
  uint64_t iova;
  uint32_t len;
};
struct Req {
  uint64_t addr;
  unsigned len, off;
  bool last;
};
struct Ctx {
  std::vector<Sge> sges;  // as written
  unsigned written = 0;   // entries written so far
  bool armed = false;     // every entry written: packets may come
  unsigned sgi = 0;
  uint32_t sgo = 0;
  uint64_t left = 0;      // bytes the message can still take
};

struct Knobs {
  double start_rate, ready_rate, avail_late, write_rate;
  bool exact_timing;  // ready and avail always high: check every request's cycle
};

class ScatterBench {
 public:
  ScatterBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_scatter>(ctx_.get())), rng_(seed),
        cov_(cov), c_(kCtx) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->sg_we_i = 0;
    top_->start_i = 0;
    top_->avail_i = 0;
    top_->wr_ready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~ScatterBench() { top_->final(); }

  void run(const Knobs& k, uint64_t packets) {
    const uint64_t stop = done_ + packets;
    uint64_t guard = 0;
    while (done_ < stop && !::testing::Test::HasFailure()) {
      step(k);
      if (++guard > packets * 20000) {
        ADD_FAILURE() << "no progress: " << done_ << " of " << stop << " packets";
        return;
      }
    }
    // Let a running packet finish.
    while (busy_ && !::testing::Test::HasFailure()) step(Knobs{0, 1, 0, 0, false});
  }
  uint64_t cycles() const { return cycles_; }

 private:
  unsigned pick_ctx() {
    switch (urand(rng_, 0, 5)) {
      case 0: return 0;
      case 1: return kCtx - 1;
      default: return static_cast<unsigned>(urand(rng_, 0, kCtx - 1));
    }
  }
  uint32_t rand_len() {
    switch (urand(rng_, 0, 7)) {
      case 0: return 0;
      case 1: return 1;
      case 2: return static_cast<uint32_t>(urand(rng_, 1, 64));
      case 3: return static_cast<uint32_t>(urand(rng_, 4096, 65536));
      default: return static_cast<uint32_t>(urand(rng_, 1, 6000));
    }
  }
  // A new message for context q (its SGEs are then written one per cycle, at random times).
  void new_message(unsigned q) {
    Ctx& c = c_[q];
    c.sges.assign(urand(rng_, 1, kSlots), {});
    c.left = 0;
    for (auto& s : c.sges) {
      s.len = rand_len();
      s.iova = chance(rng_, 0.2) ? ~0ull - urand(rng_, 0, 70000) : (urand(rng_, 0, (1ull << 40) - 1));
      c.left += s.len;
    }
    if (c.left == 0) c.sges[0].len = 1, c.left = 1;
    c.written = 0;
    c.armed = false;
    c.sgi = 0;
    c.sgo = 0;
    pending_writes_.push_back(q);
  }

  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cycles_;
  }

  void step(const Knobs& k) {
    // ---- table writes (never to the context being scattered)
    top_->sg_we_i = 0;
    int wrote = -1;  // (a context is started at the earliest the cycle after its last SGE is written)
    if (pending_writes_.empty() && chance(rng_, 0.3)) {
      const unsigned q = pick_ctx();
      if (!(busy_ && q == act_) && !c_[q].armed && c_[q].written == 0) new_message(q);
    }
    if (!pending_writes_.empty() && chance(rng_, k.write_rate)) {
      const unsigned q = pending_writes_.front();
      if (!(busy_ && q == act_)) {
        Ctx& c = c_[q];
        const unsigned i = c.written;
        top_->sg_we_i = 1;
        wrote = static_cast<int>(q);
        top_->sg_waddr_i = (q << kSlotW) | i;
        top_->sg_iova_i = c.sges[i].iova;
        top_->sg_len_i = c.sges[i].len;
        if (busy_) cov_.hit("table_write_during_scatter");
        if (++c.written == c.sges.size()) {
          c.armed = true;
          armed_.push_back(q);
          pending_writes_.pop_front();
        }
      }
    }
    // ---- start a packet
    top_->start_i = 0;
    bool start = false;
    if (!busy_ && !armed_.empty() && chance(rng_, k.start_rate)) {
      const unsigned q = armed_[urand(rng_, 0, armed_.size() - 1)];
      Ctx& c = c_[q];
      if (c.armed && c.left > 0 && static_cast<int>(q) != wrote) {
        unsigned len, skip = 0;
        if (chance(rng_, 0.2)) skip = static_cast<unsigned>(urand(rng_, 1, 31));
        const uint64_t room = c.left;
        const bool fill = chance(rng_, 0.15) && room + skip <= 4096;
        if (fill) len = static_cast<unsigned>(room) + skip;
        else {
          switch (urand(rng_, 0, 4)) {
            case 0: len = 4096; break;
            case 1: len = static_cast<unsigned>(urand(rng_, 1, 64)); break;
            default: len = static_cast<unsigned>(urand(rng_, 1, 4096)); break;
          }
          if (len - std::min(len, skip) > room) len = static_cast<unsigned>(std::min<uint64_t>(room + skip, 4096));
        }
        if (skip >= len) skip = 0;
        if (len - skip <= room && len >= 1) {
          start = true;
          begin_packet(q, len, skip, fill);
        }
      }
    }
    // ---- avail and ready
    if (start) avail_at_ = (k.exact_timing || !chance(rng_, k.avail_late)) ? cycles_ : cycles_ + urand(rng_, 1, 40);
    if (start && avail_at_ > cycles_) cov_.hit("avail_late");
    top_->avail_i = busy_ && cycles_ >= avail_at_;
    top_->wr_ready_i = k.exact_timing ? 1 : chance(rng_, k.ready_rate);
    top_->eval();

    // ---- checks before the edge
    if (bool(top_->idle_o) != (!busy_ || start_cycle_ == cycles_)) {
      ADD_FAILURE() << "cycle " << cycles_ << ": idle_o " << int(top_->idle_o) << ", model busy " << busy_;
      return;
    }
    if (top_->wr_valid_o) {
      if (exp_.empty() || start_cycle_ == cycles_) {
        ADD_FAILURE() << "cycle " << cycles_ << ": a request with none expected";
        return;
      }
      if (cycles_ <= avail_at_) {
        ADD_FAILURE() << "cycle " << cycles_ << ": a request before the packet was available";
        return;
      }
      const Req& e = exp_.front();
      if (top_->wr_addr_o != e.addr || top_->wr_len_o != e.len || top_->wr_off_o != e.off ||
          bool(top_->wr_last_o) != e.last) {
        ADD_FAILURE() << "cycle " << cycles_ << ": packet " << done_ << " request {addr " << std::hex
                      << top_->wr_addr_o << " len " << std::dec << top_->wr_len_o << " off " << top_->wr_off_o
                      << " last " << int(top_->wr_last_o) << "}, model {addr " << std::hex << e.addr << " len "
                      << std::dec << e.len << " off " << e.off << " last " << e.last << "}";
        return;
      }
      if (k.exact_timing && !offer_seen_ && cycles_ != exp_cycle_.front()) {
        ADD_FAILURE() << "cycle " << cycles_ << ": request offered, model expects it at cycle " << exp_cycle_.front();
        return;
      }
      offer_seen_ = true;
      if (e.last && (top_->sgi_o != end_sgi_ || top_->sgo_o != end_sgo_)) {
        ADD_FAILURE() << "cycle " << cycles_ << ": cursor after the packet {" << int(top_->sgi_o) << ", "
                      << top_->sgo_o << "}, model {" << end_sgi_ << ", " << end_sgo_ << "}";
        return;
      }
      if (!top_->wr_ready_i) cov_.hit("request_stalled");
      if (top_->wr_ready_i) {
        exp_.pop_front();
        offer_seen_ = false;
        if (!exp_cycle_.empty()) exp_cycle_.pop_front();
        if (e.last) {
          last_end_ = cycles_;
          busy_ = false;
          ++done_;
        }
      }
    } else if (k.exact_timing && !exp_cycle_.empty() && cycles_ >= exp_cycle_.front()) {
      ADD_FAILURE() << "cycle " << cycles_ << ": request expected at cycle " << exp_cycle_.front() << " not offered";
      return;
    }
    tick();
  }

  // The model's walk: the packet's requests and the cursor after it.
  void begin_packet(unsigned q, unsigned len, unsigned skip, bool fill) {
    Ctx& c = c_[q];
    top_->start_i = 1;
    top_->ctx_i = q;
    top_->sgi_i = c.sgi;
    top_->sgo_i = c.sgo;
    top_->skip_i = skip;
    top_->len_i = len;
    busy_ = true;
    act_ = q;
    start_cycle_ = cycles_;
    unsigned done = skip, steps = 0;
    uint64_t t = cycles_ + 2 + TB_START_REG;  // first offer (unstalled, payload available; a cycle later
                                              // with the registered start)
    if (c.sgo == c.sges[c.sgi].len) cov_.hit("cursor_at_sge_end_at_start");
    std::vector<Req> reqs;
    while (done < len) {
      const Sge& s = c.sges[c.sgi];
      const uint32_t sl = s.len - c.sgo;
      if (sl == 0) {
        if (s.len == 0) cov_.hit("empty_sge_stepped");
        ++c.sgi;
        c.sgo = 0;
        ++steps;
        t += 1;
        continue;
      }
      const unsigned piece = static_cast<unsigned>(std::min<uint64_t>(sl, len - done));
      if (s.iova + c.sgo < s.iova || s.iova + c.sgo + piece < s.iova + c.sgo) cov_.hit("address_wraps_2^64");
      reqs.push_back({s.iova + c.sgo, piece, done, done + piece == len});
      exp_cycle_.push_back(t);
      t += 2;
      done += piece;
      c.sgo += piece;
    }
    for (auto& r : reqs) exp_.push_back(r);
    c.left -= len - skip;
    end_sgi_ = c.sgi;
    end_sgo_ = c.sgo;
    if (c.sgi == kSlots - 1) cov_.hit("last_slot_used");
    if (reqs.size() >= 2) cov_.hit("multi_piece_packet");
    if (reqs.size() >= 4) cov_.hit("four_or_more_pieces");
    if (steps) cov_.hit("sge_steps");
    if (skip) cov_.hit("skip");
    if (len == 4096) cov_.hit("len_4096");
    if (len - skip == 1) cov_.hit("one_byte_delivered");
    if (fill && c.left == 0) cov_.hit("message_filled_exactly");
    if (q == 0 || q == kCtx - 1) cov_.hit("extreme_context");
    if (cycles_ == last_end_ + 1) cov_.hit("back_to_back_packets");
    // The message ends (the engine's last packet) now and then, or when full: rewritten later.
    if (c.left == 0 || chance(rng_, 0.1)) {
      armed_.erase(std::find(armed_.begin(), armed_.end(), q));
      c.armed = false;
      c.written = 0;
    }
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_scatter> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<Ctx> c_;
  std::deque<unsigned> pending_writes_;
  std::vector<unsigned> armed_;  // contexts whose message can take packets
  std::deque<Req> exp_;
  std::deque<uint64_t> exp_cycle_;
  bool busy_ = false, offer_seen_ = false;
  unsigned act_ = 0, end_sgi_ = 0;
  uint32_t end_sgo_ = 0;
  uint64_t cycles_ = 0, done_ = 0, avail_at_ = 0, start_cycle_ = ~0ull, last_end_ = 0;
};

TEST(Scatter, RandomPacketsAgainstModel) {
  Coverage cov({"table_write_during_scatter", "avail_late", "request_stalled", "cursor_at_sge_end_at_start",
                "empty_sge_stepped", "last_slot_used", "multi_piece_packet", "four_or_more_pieces", "sge_steps",
                "skip", "len_4096", "one_byte_delivered", "message_filled_exactly", "extreme_context",
                "address_wraps_2^64", "back_to_back_packets"});
  const Knobs mixes[] = {{0.5, 0.7, 0.3, 0.6, false}, {1.0, 1.0, 0.0, 1.0, true}, {0.9, 0.2, 0.6, 0.3, false},
                         {0.2, 0.9, 0.1, 0.9, false}};
  uint64_t cyc = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ScatterBench b(seed, cov);
    Stopwatch sw;
    for (const Knobs& k : mixes) {
      b.run(k, 1500);
      if (HasFailure()) return;
    }
    secs += sw.seconds();
    cyc += b.cycles();
  }
  report_speed("scatter", "busy", cyc, secs);
  cov.report("scatter");
}

}  // namespace
