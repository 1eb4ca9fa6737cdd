// Cycle-based models of AXI4-Stream style ports (tdata/tkeep/tlast/tvalid/tready; byte 0 in
// tdata[7:0]) and of plain valid/ready channels carrying one item.
//
// Per clock cycle the testbench calls, with clk_i low:
//   src.drive(...); sink.drive_ready(...);   // set DUT inputs (random gaps / back-pressure)
//   top->eval();                               // settle combinational outputs (tready, tvalid)
//   src.handshake(ready); sink.sample(...);    // what transfers at the coming edge
//   top->clk_i = 1; top->eval(); top->clk_i = 0;
// Gaps and stalls are drawn with chance_nz(): a knob at 0 draws nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "lib/bits.hpp"
#include "lib/seed.hpp"

namespace tmnic::tb {

// ---- AXI4-Stream source -------------------------------------------------------------------------

// Sends byte strings as packed frames; idles a random number of cycles between beats.
class StreamSource {
 public:
  StreamSource(unsigned bytes_per_beat, std::mt19937_64* rng, double gap_prob = 0.0)
      : w_(bytes_per_beat), rng_(rng), gap_prob_(gap_prob) {}

  void set_gap_prob(double p) { gap_prob_ = p; }
  // Queues one frame (nothing for an empty one).
  void push(const std::vector<uint8_t>& frame) {
    for (std::size_t off = 0; off < frame.size(); off += w_) {
      Beat b;
      const std::size_t n = std::min<std::size_t>(w_, frame.size() - off);
      b.data.assign(frame.begin() + static_cast<long>(off),
                    frame.begin() + static_cast<long>(off + n));
      b.keep = mask64(static_cast<unsigned>(n));
      b.last = off + w_ >= frame.size();
      q_.push_back(std::move(b));
    }
  }
  bool idle() const { return q_.empty(); }
  std::size_t beats_pending() const { return q_.size(); }

  template <class TData, class TKeep>
  void drive(TData& tdata, TKeep& tkeep, uint8_t& tlast, uint8_t& tvalid) {
    if (!valid_ && !q_.empty() && !chance_nz(*rng_, gap_prob_)) {
      const Beat& b = q_.front();
      set_bytes(tdata, b.data.data(), b.data.size());
      tkeep = static_cast<TKeep>(b.keep);
      tlast = b.last;
      valid_ = true;
    }
    tvalid = valid_;
  }
  // Call after eval with the DUT's tready; returns true on a transfer.
  bool handshake(bool ready) {
    if (valid_ && ready) {
      valid_ = false;
      q_.pop_front();
      return true;
    }
    return false;
  }

 private:
  struct Beat {
    std::vector<uint8_t> data;
    uint64_t keep = 0;
    bool last = false;
  };
  unsigned w_;
  std::mt19937_64* rng_;
  double gap_prob_;
  std::deque<Beat> q_;
  bool valid_ = false;
};

// ---- AXI4-Stream sink ---------------------------------------------------------------------------

// Collects frames; drives random back-pressure and checks the stream protocol (packed beats,
// contiguous last keep, data/valid stable while stalled).
class StreamSink {
 public:
  StreamSink(unsigned bytes_per_beat, std::mt19937_64* rng, double stall_prob = 0.0)
      : w_(bytes_per_beat), rng_(rng), stall_prob_(stall_prob) {}

  void set_stall_prob(double p) { stall_prob_ = p; }
  uint8_t drive_ready() {
    ready_ = !chance_nz(*rng_, stall_prob_);
    return ready_;
  }
  bool ready() const { return ready_; }

  // Call after eval (before the edge) with the DUT outputs.
  template <class TData, class TKeep>
  bool sample(const TData& tdata, const TKeep& tkeep, bool tlast, bool tvalid) {
    if (stalled_) {
      if (!tvalid)
        error("tvalid dropped while stalled");
      else {
        uint8_t tmp[64];
        get_bytes(tdata, tmp, w_);
        if (std::memcmp(tmp, stall_data_, w_) != 0 || static_cast<uint64_t>(tkeep) != stall_keep_ ||
            tlast != stall_last_)
          error("beat changed while stalled");
      }
    }
    stalled_ = tvalid && !ready_;
    if (stalled_) {
      get_bytes(tdata, stall_data_, w_);
      stall_keep_ = static_cast<uint64_t>(tkeep);
      stall_last_ = tlast;
    }
    if (!(tvalid && ready_)) return false;
    const uint64_t keep = static_cast<uint64_t>(tkeep);
    const uint64_t full = mask64(w_);
    unsigned n = 0;
    while (n < w_ && ((keep >> n) & 1u)) ++n;
    if (!tlast && keep != full) error("partial keep on a non-last beat");
    if (tlast && (keep != mask64(n) || n == 0)) error("last keep not contiguous from lane 0");
    uint8_t tmp[64];
    get_bytes(tdata, tmp, w_);
    cur_.insert(cur_.end(), tmp, tmp + n);
    ++beats_;
    if (tlast) {
      frames.push_back(std::move(cur_));
      cur_.clear();
    }
    return true;
  }

  std::deque<std::vector<uint8_t>> frames;
  uint64_t beats() const { return beats_; }
  bool in_frame() const { return !cur_.empty(); }
  const std::string& errors() const { return errors_; }

 private:
  void error(const char* what) {
    if (errors_.size() < 400) (errors_ += what) += "; ";
  }
  unsigned w_;
  std::mt19937_64* rng_;
  double stall_prob_;
  bool ready_ = true;
  bool stalled_ = false;
  uint8_t stall_data_[64] = {};
  uint64_t stall_keep_ = 0;
  bool stall_last_ = false;
  std::vector<uint8_t> cur_;
  uint64_t beats_ = 0;
  std::string errors_;
};

// ---- generic valid/ready source -----------------------------------------------------------------

template <class Item>
class ItemSource {
 public:
  ItemSource(std::mt19937_64* rng, double gap_prob = 0.0) : rng_(rng), gap_prob_(gap_prob) {}
  void set_gap_prob(double p) { gap_prob_ = p; }
  void push(const Item& it) { q_.push_back(it); }
  bool idle() const { return q_.empty(); }
  // put(item) writes the item onto the DUT port; called only when a new item is presented.
  template <class Put>
  void drive(uint8_t& valid, Put&& put) {
    if (!valid_ && !q_.empty() && !chance_nz(*rng_, gap_prob_)) {
      put(q_.front());
      valid_ = true;
    }
    valid = valid_;
  }
  bool handshake(bool ready) {
    if (valid_ && ready) {
      valid_ = false;
      q_.pop_front();
      return true;
    }
    return false;
  }

 private:
  std::mt19937_64* rng_;
  double gap_prob_;
  std::deque<Item> q_;
  bool valid_ = false;
};

}  // namespace tmnic::tb
