// Cycle-based AXI4-Lite master on the s_axil_* slave port of a Verilated top (ports
// s_axil_{aw,w,ar}valid_i, s_axil_awaddr_i, s_axil_wdata_i, s_axil_wstrb_i, s_axil_araddr_i,
// s_axil_{b,r}ready_i in; s_axil_{aw,w,ar}ready_o, s_axil_{b,r}valid_o, s_axil_rdata_o out).
//
// Writes and reads are queued; AW, W and AR run independently, each raising its valid after a
// random gap (Knobs::*_gap: probability that a waiting channel waits another cycle) and holding it
// until ready (the AXI rule for the master); BREADY and RREADY are high with probability
// Knobs::bready / rready. Without a random generator there are no gaps and BREADY/RREADY stay
// high. Order among transactions is the user's: queue the next one when idle() for one at a time.
//
// Per cycle, with clk_i low:
//   drive(top, cycle)           (or drive_valids, drive_bready, drive_rready, in this order)
//   top.eval()
//   Hs h = sample(top)          handshakes of the coming edge; a write whose AW and W have both
//                               been accepted comes back once, in h.done (h.wr_done)
//   clock edge
// Random draws (chance(), one per decision) in the order: AW gap, W gap, AR gap, BREADY, RREADY;
// a gap is drawn only for a channel with something waiting and its valid low.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>

#include "lib/seed.hpp"

namespace tmnic::tb {

class AxilMaster {
 public:
  struct Knobs {
    double aw_gap = 0, w_gap = 0, ar_gap = 0;  // probability that a waiting valid waits another cycle
    double bready = 1, rready = 1;             // probability that BREADY / RREADY is high
  };
  struct Write {
    uint32_t addr, data;
    uint8_t strb;
    bool aw_done = false, w_done = false;
    int64_t aw_first = -1, w_first = -1;  // cycle its AW / W valid first went high
  };
  struct Hs {  // what transfers at the coming edge
    bool aw = false, w = false, ar = false, b = false, r = false;
    uint32_t ar_addr = 0;  // of the accepted AR
    uint32_t rdata = 0;    // of the R beat
    bool wr_done = false;  // a write's AW and W are now both accepted: done
    Write done{};
  };

  AxilMaster() = default;  // no gaps, BREADY/RREADY always high, no random draws
  AxilMaster(std::mt19937_64* rng, Knobs k) : rng_(rng), k_(k) {}

  void write(uint32_t addr, uint32_t data, uint8_t strb = 0xF) { wr_.push_back({addr, data, strb}); }
  void read(uint32_t addr) { rd_.push_back(addr); }

  size_t aw_queued() const { return wr_.size() - aw_idx_; }  // writes whose AW is not accepted yet
  size_t w_queued() const { return wr_.size() - w_idx_; }    // writes whose W is not accepted yet
  size_t ar_queued() const { return rd_.size(); }            // reads whose AR is not accepted yet
  uint64_t b_pending() const { return b_pending_; }          // accepted writes without their B
  uint64_t r_pending() const { return r_pending_; }          // accepted reads without their R
  uint64_t unexpected() const { return unexpected_; }        // B or R handshakes with none pending
  // Everything queued was accepted and answered.
  bool idle() const { return wr_.empty() && rd_.empty() && b_pending_ == 0 && r_pending_ == 0; }

  template <class Top>
  void drive_valids(Top& t, uint64_t cycle) {
    if (!awv_ && aw_idx_ < wr_.size() && !gap(k_.aw_gap)) {
      awv_ = true;
      wr_[aw_idx_].aw_first = static_cast<int64_t>(cycle);
    }
    t.s_axil_awvalid_i = awv_;
    if (awv_) t.s_axil_awaddr_i = wr_[aw_idx_].addr;
    if (!wv_ && w_idx_ < wr_.size() && !gap(k_.w_gap)) {
      wv_ = true;
      wr_[w_idx_].w_first = static_cast<int64_t>(cycle);
    }
    t.s_axil_wvalid_i = wv_;
    if (wv_) {
      t.s_axil_wdata_i = wr_[w_idx_].data;
      t.s_axil_wstrb_i = wr_[w_idx_].strb;
    }
    if (!arv_ && !rd_.empty() && !gap(k_.ar_gap)) arv_ = true;
    t.s_axil_arvalid_i = arv_;
    if (arv_) t.s_axil_araddr_i = rd_.front();
  }
  template <class Top>
  void drive_bready(Top& t) {
    bready_ = rng_ ? chance(*rng_, k_.bready) : true;
    t.s_axil_bready_i = bready_;
  }
  template <class Top>
  void drive_rready(Top& t) {
    rready_ = rng_ ? chance(*rng_, k_.rready) : true;
    t.s_axil_rready_i = rready_;
  }
  template <class Top>
  void drive(Top& t, uint64_t cycle) {
    drive_valids(t, cycle);
    drive_bready(t);
    drive_rready(t);
  }

  // After eval: the handshakes of the coming edge; the master's state moves past them (its valids
  // go low on the next drive).
  template <class Top>
  Hs sample(const Top& t) {
    Hs h;
    h.aw = awv_ && t.s_axil_awready_o;
    h.w = wv_ && t.s_axil_wready_o;
    h.ar = arv_ && t.s_axil_arready_o;
    h.b = t.s_axil_bvalid_o && bready_;
    h.r = t.s_axil_rvalid_o && rready_;
    h.rdata = t.s_axil_rdata_o;
    if (h.b) {
      if (b_pending_)
        --b_pending_;
      else
        ++unexpected_;
    }
    if (h.r) {
      if (r_pending_)
        --r_pending_;
      else
        ++unexpected_;
    }
    if (h.ar) {
      h.ar_addr = rd_.front();
      rd_.pop_front();
      arv_ = false;
      ++r_pending_;
    }
    if (h.aw) {
      wr_[aw_idx_++].aw_done = true;
      awv_ = false;
    }
    if (h.w) {
      wr_[w_idx_++].w_done = true;
      wv_ = false;
    }
    if (!wr_.empty() && wr_.front().aw_done && wr_.front().w_done) {  // at most one per cycle
      h.wr_done = true;
      h.done = wr_.front();
      wr_.pop_front();
      --aw_idx_;
      --w_idx_;
      ++b_pending_;
    }
    return h;
  }

 private:
  bool gap(double p) { return rng_ && chance(*rng_, p); }

  std::mt19937_64* rng_ = nullptr;
  Knobs k_{};
  std::deque<Write> wr_;      // writes not yet done (AW and W both accepted)
  size_t aw_idx_ = 0, w_idx_ = 0;  // next write (index in wr_) for AW, for W
  std::deque<uint32_t> rd_;   // reads whose AR is not accepted yet
  bool awv_ = false, wv_ = false, arv_ = false, bready_ = true, rready_ = true;
  uint64_t b_pending_ = 0, r_pending_ = 0, unexpected_ = 0;
};

}  // namespace tmnic::tb
