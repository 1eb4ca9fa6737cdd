// Cycle-based AXI4 slave memory (one ID, bursts answered in order): the host memory of the DMA
// tests and of the simulated NIC.
//
// The model keeps the bursts, the data and the order; the testbench keeps the timing policy. Per
// cycle, with clk_i low (see README.md):
//   before eval: arready/awready/wready as the bench likes (random, rd_bursts() below a limit,
//                w_has_aw() for "W only after its AW"); RVALID = r_due(now) && <no gap>, and then
//                r_beat(rdata, rlast); BVALID = b_valid(now); apply_writes(now) when writes are
//                delayed
//   after eval, for the handshakes of the coming edge:
//                ar(addr, len, due)  r_taken()  aw(addr, len)  w(data, strb, last, visible)
//                b_taken(); when aw() or w() completes a burst: b_push(due)
// Latency is the bench's: each read burst's first-beat cycle (ar's due), each W beat's cycle of
// visibility in memory (w's visible) and each write response's cycle (b_push's due; responses
// stay in order). W beats may come before their AW: they wait for it, unwritten.
//
// Mem, the memory behind the model (the simulated NIC puts its IOMMU there), is any class with
//   void read(uint64_t addr, uint8_t* dst, size_t n);
//   void write(uint64_t addr, const uint8_t* src, size_t n, const uint8_t* en);  // en[i]: byte i
// Nothing here allocates per cycle beyond the deques' chunks, and nothing is virtual.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>

#include "lib/bits.hpp"

namespace tmnic::tb {

// Memory that reads zeros and drops writes (a bench that checks W beats itself).
struct NullMem {
  void read(uint64_t, uint8_t* dst, size_t n) { std::memset(dst, 0, n); }
  void write(uint64_t, const uint8_t*, size_t, const uint8_t*) {}
};

template <unsigned BeatBytes, class Mem>
class AxiMem {
  static_assert(BeatBytes >= 4 && BeatBytes <= 64 && BeatBytes % 4 == 0, "beat of 4..64 bytes");

 public:
  struct RBurst {
    uint64_t addr;
    uint32_t beats, sent;
    uint64_t due;  // first beat no earlier than this cycle
  };

  explicit AxiMem(Mem& mem) : mem_(&mem) {}

  // ---- read ----------------------------------------------------------------------------------
  // AR handshake: arlen + 1 beats from addr; the first beat may go from cycle `due` on.
  void ar(uint64_t addr, unsigned arlen, uint64_t due) { r_q_.push_back({addr, arlen + 1u, 0u, due}); }
  // Read bursts accepted and not fully answered.
  size_t rd_bursts() const { return r_q_.size(); }
  // The oldest burst's latency has passed: a beat may go in cycle `now`.
  bool r_due(uint64_t now) const { return !r_q_.empty() && r_q_.front().due <= now; }
  // The oldest burst has sent some of its beats (a gap now is a gap inside a burst).
  bool r_mid_burst() const { return !r_q_.empty() && r_q_.front().sent > 0; }
  const RBurst& r_front() const { return r_q_.front(); }
  // Drives the next beat (call only when r_due()): RDATA from memory, RLAST.
  template <class W, class L>
  void r_beat(W& rdata, L& rlast) {
    const RBurst& b = r_q_.front();
    uint8_t beat[BeatBytes];
    mem_->read(b.addr + uint64_t(b.sent) * BeatBytes, beat, BeatBytes);
    put_beat<BeatBytes>(rdata, beat);
    rlast = b.sent + 1 == b.beats;
  }
  // The beat driven this cycle went (RVALID && RREADY).
  void r_taken() {
    RBurst& b = r_q_.front();
    if (++b.sent == b.beats) r_q_.pop_front();
  }

  // ---- write ---------------------------------------------------------------------------------
  // AW handshake. True when it completes its burst (all its W beats came before it).
  bool aw(uint64_t addr, unsigned awlen) {
    const unsigned beats = awlen + 1;
    if (early_ == 0) {
      aw_q_.push_back({addr, beats, 0});
      return false;
    }
    // W beats waiting for an address exist only while no AW waits for W beats: the oldest of them
    // are this burst's.
    const size_t first = w_q_.size() - early_;
    const unsigned n = static_cast<unsigned>(std::min<size_t>(early_, beats));
    for (unsigned k = 0; k < n; ++k) {
      WBeat& b = w_q_[first + k];
      b.addr = addr + uint64_t(k) * BeatBytes;
      b.has_addr = true;
      if (b.last != (k + 1 == beats)) error("WLAST does not match AWLEN");
    }
    early_ -= n;
    if (n == beats) return true;
    aw_q_.push_back({addr, beats, n});
    return false;
  }
  // The next W beat's AW was accepted (for a slave that takes W only after its AW).
  bool w_has_aw() const { return !aw_q_.empty(); }
  // W beats accepted before their AW, still waiting for it.
  size_t w_early() const { return early_; }
  // W handshake: a beat of BeatBytes from wdata with strobes strb, written to memory from cycle
  // `visible` on (apply_writes). True when it completes its burst (its AW came first).
  template <class W>
  bool w(const W& wdata, uint64_t strb, bool last, uint64_t visible) {
    w_q_.emplace_back();
    WBeat& b = w_q_.back();
    take_beat<BeatBytes>(wdata, b.data);
    b.strb = strb;
    b.last = last;
    b.visible = visible;
    if (aw_q_.empty()) {
      b.has_addr = false;
      ++early_;
      return false;
    }
    WBurst& a = aw_q_.front();
    b.addr = a.addr + uint64_t(a.got) * BeatBytes;
    b.has_addr = true;
    const bool end = ++a.got == a.beats;
    if (last != end) error("WLAST does not match AWLEN");
    if (end) aw_q_.pop_front();
    return end;
  }
  // Writes to memory, in order, the beats whose address is known and whose cycle has come, the
  // enabled bytes only; each(addr) per beat, with the address of its first enabled byte.
  template <class F>
  unsigned apply_writes(uint64_t now, F&& each) {
    unsigned k = 0;
    while (!w_q_.empty() && w_q_.front().has_addr && w_q_.front().visible <= now) {
      const WBeat& b = w_q_.front();
      unsigned lo = 0, hi = BeatBytes;
      while (lo < BeatBytes && !lane(b.strb, lo)) ++lo;
      while (hi > lo && !lane(b.strb, hi - 1)) --hi;
      if (hi > lo) {
        uint8_t en[BeatBytes];
        for (unsigned i = lo; i < hi; ++i) en[i] = lane(b.strb, i);
        mem_->write(b.addr + lo, b.data + lo, hi - lo, en + lo);
      }
      each(b.addr + lo);
      w_q_.pop_front();
      ++k;
    }
    return k;
  }
  unsigned apply_writes(uint64_t now) {
    return apply_writes(now, [](uint64_t) {});
  }
  // A write response due from cycle `due` on; responses stay in order (never before the previous).
  void b_push(uint64_t due) {
    if (!b_q_.empty() && b_q_.back() > due) due = b_q_.back();
    b_q_.push_back(due);
  }
  bool b_valid(uint64_t now) const { return !b_q_.empty() && b_q_.front() <= now; }
  void b_taken() {
    if (b_q_.empty())
      error("B taken with none pending");
    else
      b_q_.pop_front();
  }
  size_t b_outstanding() const { return b_q_.size(); }

  // ---- state ---------------------------------------------------------------------------------
  // Nothing accepted is unanswered or unwritten.
  bool idle() const { return r_q_.empty() && aw_q_.empty() && w_q_.empty() && b_q_.empty(); }
  // The earliest cycle at which something is due (UINT64_MAX: nothing).
  uint64_t next_due() const {
    uint64_t t = ~0ull;
    if (!r_q_.empty()) t = std::min(t, r_q_.front().due);
    if (!w_q_.empty() && w_q_.front().has_addr) t = std::min(t, w_q_.front().visible);
    if (!b_q_.empty()) t = std::min(t, b_q_.front());
    return t;
  }
  // Protocol errors of the master seen so far ("" if none).
  const std::string& errors() const { return errors_; }
  bool ok() const { return errors_.empty(); }

 private:
  struct WBurst {
    uint64_t addr;
    unsigned beats, got;
  };
  struct WBeat {
    uint64_t visible, addr, strb;
    bool has_addr, last;
    uint8_t data[BeatBytes];
  };
  void error(const char* what) {
    if (errors_.size() < 400) (errors_ += what) += "; ";
  }

  Mem* mem_;
  std::deque<RBurst> r_q_;
  std::deque<WBurst> aw_q_;  // AWs waiting for W beats
  std::deque<WBeat> w_q_;    // W beats not yet written to memory
  size_t early_ = 0;         // of them, the newest early_ have no AW yet
  std::deque<uint64_t> b_q_;
  std::string errors_;
};

}  // namespace tmnic::tb
