// tmnic_ack_gen against a model of its documented contract (the header comment of the RTL file):
// at most one ACK/NAK pending per QP; an event for a QP with nothing pending queues the QP (in the
// order QPs first asked) with the event's fields; an event for a pending QP replaces its fields,
// except that a PSN-sequence NAK never replaces a pending NAK (RNR, invalid request, remote
// access/operation error, invalid read request, or an earlier sequence NAK). A pending entry is
// final once its header is on tx_hdr_o; an event after that queues the QP again.
// Stimulus: random events {QP (hot QPs, the extremes, uniform), syndrome (ACK, sequence NAK, RNR NAK
// with any timer, error NAKs), MSN, PSN} with random gaps, each held unchanged until ev_ready_o;
// tx_ready_i always high, random, or with long stalls so that many (up to all) QPs queue up; every
// QP's configuration random on all 327 bits of qp_cfg_t, its qp_path_t view read as tmnic_ctx's
// block-RAM port does (cfg_i is the QP that cfg_idx_o named in the previous cycle);
// resets in the middle of traffic.
// Checked every cycle: each new header is the model's oldest queued QP, with every roce_hdr_t field
// (generated unpack_hdr of include/tmnic/wire.h): dst_mac/dst_ip/dest_qp from that QP's
// configuration, src_mac/src_ip from local_mac_i/local_ip_i, udp_sport 0xC000 | QP (the engines'
// convention), opcode ACK, aeth {syndrome, MSN}, psn, all other fields zero; exactly one header per
// queued entry; tx_hdr_o held while tx_valid_o && !tx_ready_i; idle_o exactly when nothing is
// queued, offered or being handled; after reset ev_ready_o low for the NUM_QP-cycle sweep, then
// high, and a held event is not lost; latencies: with nothing queued and the TX output free, the
// header 2 cycles after the event was taken; an offered event is taken within 2 cycles (events
// first); a queued ACK reaches a free TX output within 3 cycles of the FIFO head (plus the rest of
// an event being handled).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <numeric>
#include <string>
#include <vector>

#include "Vtmnic_ack_gen.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "qp_cfg.hpp"
#include "tmnic/wire.h"

#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif

using namespace tmnic::tb;
namespace wire = tmnic::wire;

namespace {

constexpr unsigned kNumQp = TB_NUM_QP;
static_assert(kNumQp >= 4 && (kNumQp & (kNumQp - 1)) == 0, "NUM_QP: a power of two >= 4");
constexpr unsigned kQpW = 31 - static_cast<unsigned>(__builtin_clz(kNumQp));  // $clog2(NUM_QP)

// ---- AETH syndromes, from the generated wire-protocol header -------------------------------------
constexpr uint8_t kSynAck = wire::aeth_syndrome(wire::kAethTypeAck, wire::kAethCreditInvalid);  // AETH_SYN_ACK
constexpr uint8_t kSynSeq = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakPsnSeqErr);
constexpr uint8_t kErrNakCodes[] = {wire::kNakInvReq, wire::kNakRemAccessErr, wire::kNakRemOpErr, wire::kNakInvRdReq};

enum Kind { kAck, kSeq, kRnr, kErr, kNumKinds };
constexpr const char* kKindName[kNumKinds] = {"ack", "seq_nak", "rnr_nak", "err_nak"};
Kind kind_of(uint8_t syn) {
  switch (wire::aeth_type(syn)) {
    case wire::kAethTypeAck: return kAck;
    case wire::kAethTypeRnrNak: return kRnr;
    default: return wire::aeth_value(syn) == wire::kNakPsnSeqErr ? kSeq : kErr;
  }
}
// The merge rule of the block's header comment: a newer event replaces the pending one, except
// that a PSN-sequence NAK never replaces a pending NAK of any kind (the requester sees the first).
bool replaces(uint8_t pending, uint8_t incoming) {
  const Kind p = kind_of(pending), n = kind_of(incoming);
  return !(n == kSeq && p != kAck);
}

// ---- qp_cfg_t: field list in qp_cfg.hpp; the bench fills all its bits at random.
static_assert(sizeof(Vtmnic_ack_gen::cfg_i) == 4 * ((view_bits(kPathView) + 31) / 32), "cfg_i is not a qp_path_t");

constexpr unsigned kHdrWords = wire::kRoceHdrWords;
static_assert(sizeof(Vtmnic_ack_gen::tx_hdr_o) == 4 * kHdrWords, "tx_hdr_o is not a roce_hdr_t");
using HdrWords = std::array<uint32_t, kHdrWords>;

constexpr uint32_t kM24 = 0xFFFFFF;
constexpr uint64_t kNever = ~0ull;

struct Ev {
  unsigned qp = 0;
  uint8_t syn = 0;
  uint32_t msn = 0, psn = 0;
};

struct Knobs {
  const char* name;
  double ev_rate;              // chance per cycle of a new event when none is held
  double hot;                  // share of events on 4 hot QPs
  double tx_ready;             // chance of tx_ready_i per cycle outside stalls
  double stall_rate;           // chance per cycle of starting a stall (tx_ready_i low)
  unsigned stall_min, stall_max;
  unsigned w_ack, w_seq, w_rnr, w_err;  // syndrome weights
};

std::vector<std::string> coverage_points() {
  std::vector<std::string> v = {
      "event_ack", "event_seq_nak", "event_rnr_nak", "event_err_nak", "event_replaced_pending",
      "seq_nak_kept_rnr_nak", "seq_nak_kept_err_nak", "seq_nak_kept_seq_nak", "fast_path", "queued_path", "fifo_ge_16", "fifo_full",
      "event_during_tx_stall", "event_for_offered_qp", "event_waited", "events_every_2_cycles",
      "tx_back_pressured", "event_held_through_sweep", "reset_with_pending", "requeued_after_reset",
      "qp_0_out", "qp_last_out", "idle_between"};
  for (unsigned o = 0; o < kNumKinds; ++o)
    for (unsigned n = 0; n < kNumKinds; ++n) v.push_back(std::string("merge_") + kKindName[o] + "_then_" + kKindName[n]);
  for (unsigned b = 0; b < kQpW; ++b) v.push_back("out_qp_bit" + std::to_string(b) + "_toggled");
  return v;
}

class AckGenBench {
 public:
  AckGenBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_ack_gen>(ctx_.get())), rng_(seed),
        cov_(cov), cfg_(kNumQp), pend_(kNumQp) {
    randomize_config();
    for (auto& h : hot_) h = static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->ev_valid_i = 0;
    top_->tx_ready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    since_reset_ = 0;
  }
  ~AckGenBench() { top_->final(); }

  bool failed() const { return errors_ != 0; }
  uint64_t cycles() const { return cycles_; }
  uint64_t headers() const { return headers_; }
  uint64_t events() const { return events_; }
  unsigned ev_wait_max() const { return ev_wait_max_; }
  unsigned queued_gap_max() const { return queued_gap_max_; }
  unsigned sweep_len() const { return sweep_len_; }

  // `n` cycles of random traffic.
  void run(const Knobs& k, uint64_t n) {
    k_ = &k;
    for (uint64_t c = 0; c < n && !errors_; ++c) step();
    k_ = nullptr;
  }

  // No new events (a held one is still offered); the TX side takes with `ready` (1: always). Every
  // queued entry must come out; then idle_o must be high and stay high with nothing coming out.
  void drain(double ready = 1.0) {
    gen_ = false;
    const uint64_t limit = cycles_ + 8 * kNumQp + 64 + (ready < 1.0 ? 64 * kNumQp : 0);
    tx_mode_ = ready;
    while (!errors_ && cycles_ < limit && (held_ || !fifo_.empty() || offered_ || !top_->idle_o)) step();
    if (!errors_ && (held_ || !fifo_.empty() || offered_))
      fail("drain: " + std::to_string(fifo_.size()) + " entries still queued after " + std::to_string(limit) + " cycles");
    for (int i = 0; i < 20 && !errors_; ++i) step();  // idle_o stays high, nothing comes out
    gen_ = true;
    tx_mode_ = -1;
    // Idle: the local addresses and the QP configurations may change now.
    if (!errors_) {
      randomize_config();
      cov_.hit("idle_between");
    }
  }

  // Stalls the TX side and posts an event for every QP (random order, plus some repeats): all QPs
  // queued at once. Then drains with random back-pressure.
  void fill_all() {
    std::vector<unsigned> order(kNumQp);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng_);
    tx_mode_ = 0.0;
    gen_ = false;
    for (unsigned q : order) {
      post(random_event(q, nullptr));
      if (chance(rng_, 0.1)) post(random_event(order[urand(rng_, 0, kNumQp - 1)], nullptr));
      if (errors_) return;
    }
    // The QP whose header went out at once (and waits on the stalled TX side) queues again.
    if (offered_) post(random_event(offered_qp_, nullptr));
    for (int i = 0; i < 4 && !errors_; ++i) step();
    if (!errors_ && fifo_.size() != kNumQp) fail("fill_all: " + std::to_string(fifo_.size()) + " QPs queued");
    drain(0.5);
  }

  // Reset in the middle of traffic (with the TX side stalled, so that entries are pending): the
  // model forgets everything; a held event stays offered through reset and the sweep. Then events for
  // QPs that were pending before the reset must be queued again (the sweep cleared their words).
  void reset_midrun(const Knobs& k) {
    tx_mode_ = 0.0;
    run(k, 3 * kNumQp / 2 + 100);
    if (errors_) return;
    std::vector<unsigned> was(fifo_.begin(), fifo_.end());
    if (!was.empty()) cov_.hit("reset_with_pending");
    if (!held_ && chance(rng_, 0.8)) {
      cur_ = random_event(static_cast<unsigned>(urand(rng_, 0, kNumQp - 1)), nullptr);
      held_ = true;
      held_since_ = cycles_;
    }
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 2; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    fifo_.clear();
    for (auto& p : pend_) p.pend = false;
    offered_ = false;
    ev_taken_prev_ = false;
    fast_cand_ = false;
    expect_fast_at_ = kNever;
    queued_gap_ = 0;
    since_reset_ = 0;
    if (held_) held_since_ = cycles_;
    tx_mode_ = 1.0;
    // The sweep (with the held event offered), then the QPs that were pending.
    gen_ = false;
    for (unsigned i = 0; i < kNumQp + 4 && !errors_; ++i) step();
    std::shuffle(was.begin(), was.end(), rng_);
    if (was.size() > 32) was.resize(32);
    for (unsigned q : was) {
      post(random_event(q, nullptr));
      if (errors_) return;
      cov_.hit("requeued_after_reset");
    }
    gen_ = true;
    tx_mode_ = -1;
    drain();
  }

  // One event, offered until taken (traffic on the TX side as set).
  void post(const Ev& e) {
    while (held_ && !errors_) step();
    cur_ = e;
    held_ = true;
    held_since_ = cycles_;
    while (held_ && !errors_) step();
  }
  void set_tx(double ready) { tx_mode_ = ready; }
  void steps(unsigned n) {
    for (unsigned i = 0; i < n && !errors_; ++i) step();
  }

  Ev random_event(unsigned qp, const Knobs* k) {
    Ev e;
    e.qp = qp;
    const unsigned wa = k ? k->w_ack : 4, ws = k ? k->w_seq : 3, wr = k ? k->w_rnr : 2, we = k ? k->w_err : 2;
    const unsigned r = static_cast<unsigned>(urand(rng_, 0, wa + ws + wr + we - 1));
    if (r < wa) e.syn = kSynAck;
    else if (r < wa + ws) e.syn = kSynSeq;
    else if (r < wa + ws + wr) e.syn = wire::aeth_syndrome(wire::kAethTypeRnrNak, static_cast<uint8_t>(urand(rng_, 0, 31)));
    else e.syn = wire::aeth_syndrome(wire::kAethTypeNak, kErrNakCodes[urand(rng_, 0, 3)]);
    e.msn = static_cast<uint32_t>(rng_()) & kM24;
    e.psn = static_cast<uint32_t>(rng_()) & kM24;
    return e;
  }
  Ev event_of(unsigned qp, uint8_t syn) {
    Ev e = random_event(qp, nullptr);
    e.syn = syn;
    return e;
  }

 private:
  struct Pend {
    bool pend = false;
    uint8_t syn = 0;
    uint32_t msn = 0, psn = 0;
    uint64_t since = 0;  // cycle its first event was taken
  };
  struct QpCfg {
    std::array<uint32_t, kQpCfgWords> w{};
    uint64_t dmac = 0;
    uint32_t dest_ip = 0, dest_qpn = 0;
    uint8_t tclass = 0, hop_limit = 0;
  };

  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << " (" << since_reset_ << " after reset): " << m;
    ++errors_;
  }
  void tick() {
    cfg_rd_idx_ = top_->cfg_idx_o & (kNumQp - 1);
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ctx_->timeInc(1);
  }

  void randomize_config() {
    for (auto& c : cfg_) {
      for (auto& w : c.w) w = static_cast<uint32_t>(rng_());
      c.w[kQpCfgWords - 1] &= (1u << (kQpCfgBits % 32)) - 1;
      c.dmac = get_bits(c.w.data(), cfg_lsb(kCfDmac), 48);
      c.dest_ip = static_cast<uint32_t>(get_bits(c.w.data(), cfg_lsb(kCfDestIp), 32));
      c.dest_qpn = static_cast<uint32_t>(get_bits(c.w.data(), cfg_lsb(kCfDestQpn), 24));
      c.tclass = static_cast<uint8_t>(get_bits(c.w.data(), cfg_lsb(kCfTclass), 8));
      c.hop_limit = static_cast<uint8_t>(get_bits(c.w.data(), cfg_lsb(kCfHopLimit), 8));
    }
    local_mac_ = rng_() & mask64(48);
    local_ip_ = static_cast<uint32_t>(rng_());
  }

  unsigned pick_qp(const Knobs& k) {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (r < k.hot) return hot_[urand(rng_, 0, 3)];
    if (r < k.hot + 0.02) return chance(rng_, 0.5) ? 0 : kNumQp - 1;
    return static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
  }

  bool tx_ready_now() {
    if (tx_mode_ >= 0) return chance(rng_, tx_mode_);
    if (!k_) return true;
    if (stall_left_) {
      --stall_left_;
      return false;
    }
    if (k_->stall_rate > 0 && chance(rng_, k_->stall_rate)) {
      stall_left_ = static_cast<unsigned>(urand(rng_, k_->stall_min, k_->stall_max));
      return false;
    }
    return chance(rng_, k_->tx_ready);
  }

  // Inputs of this cycle, with cfg_i for the index the block asked for before the last edge
  // (registered read port); cfg_idx_o then names the QP of the next cycle.
  void settle() {
    pack_view(kPathView, cfg_[cfg_rd_idx_].w.data(), top_->cfg_i.data(), 0);
    top_->eval();
    if (top_->cfg_idx_o >= kNumQp) fail("cfg_idx_o out of range");
  }

  void step() {
    // ---------------- inputs
    if (!held_ && gen_ && k_ && chance(rng_, k_->ev_rate)) {
      cur_ = random_event(pick_qp(*k_), k_);
      held_ = true;
      held_since_ = cycles_;
    }
    top_->ev_valid_i = held_;
    top_->ev_qp_i = cur_.qp;
    top_->ev_syn_i = cur_.syn;
    top_->ev_msn_i = cur_.msn;
    top_->ev_psn_i = cur_.psn;
    top_->tx_ready_i = tx_ready_now();
    top_->local_mac_i = local_mac_;
    top_->local_ip_i = local_ip_;
    settle();

    // ---------------- outputs against the model (state after the previous edge)
    const bool sweeping = since_reset_ < kNumQp;
    const bool ev_ready = top_->ev_ready_o, tx_valid = top_->tx_valid_o, tx_ready = top_->tx_ready_i;
    if (sweeping) {
      if (ev_ready) fail("ev_ready_o high during the reset sweep");
      if (tx_valid) fail("tx_valid_o during the reset sweep");
    } else if (since_reset_ == kNumQp) {
      if (!ev_ready) fail("ev_ready_o not high after the NUM_QP-cycle sweep");
      sweep_len_ = since_reset_;
    }
    check_tx();
    if (!sweeping) {
      // Fast path: the event taken last cycle found nothing queued; if the TX output is free now,
      // its header is out next cycle (2 cycles after the take).
      if (fast_cand_) {
        if (!tx_valid || tx_ready) {
          expect_fast_at_ = cycles_ + 1;
          expect_fast_qp_ = fast_qp_;
        }
        fast_cand_ = false;
      }
      const bool idle_model = fifo_.empty() && !offered_ && !ev_taken_prev_;
      if (top_->idle_o != idle_model)
        fail(std::string("idle_o ") + (top_->idle_o ? "high" : "low") + ", model: " + std::to_string(fifo_.size()) +
             " queued, header " + (offered_ ? "offered" : "not offered") + ", event " +
             (ev_taken_prev_ ? "taken last cycle" : "not taken last cycle"));
      // A queued entry reaches a free TX output within 3 cycles of leaving the FIFO head, plus at most
      // the second cycle of an event being handled ("events first").
      if (!tx_valid && !fifo_.empty()) {
        queued_gap_max_ = std::max(queued_gap_max_, ++queued_gap_);
        if (queued_gap_ > 4) fail("QP " + std::to_string(fifo_.front()) + " queued, TX output free for " +
                                  std::to_string(queued_gap_) + " cycles and no header");
      } else {
        queued_gap_ = 0;
      }
    }

    // ---------------- this cycle's handshakes
    ev_taken_prev_ = false;
    if (held_ && ev_ready) {
      take_event();
    } else if (held_ && !sweeping) {
      cov_.hit("event_waited");
    }
    if (tx_valid && tx_ready) {
      offered_ = false;
    } else if (tx_valid) {
      cov_.hit("tx_back_pressured");
    }
    if (fifo_.size() >= 16) cov_.hit("fifo_ge_16");
    if (fifo_.size() == kNumQp) cov_.hit("fifo_full");
    cov_.max("fifo_max", fifo_.size());
    tick();
    ++cycles_;
    ++since_reset_;
  }

  void take_event() {
    const Ev e = cur_;
    held_ = false;
    ++events_;
    ev_taken_prev_ = true;
    queued_gap_ = 0;
    const uint64_t wait = cycles_ - held_since_;
    const uint64_t sweep_end = cycles_ - since_reset_ + kNumQp;  // first cycle ev_ready_o may be high
    if (held_since_ >= sweep_end) {
      // Offered after the sweep: taken within 2 cycles (events first; at most the rest of a queued
      // ACK leaving the FIFO head is in the way).
      ev_wait_max_ = std::max<unsigned>(ev_wait_max_, static_cast<unsigned>(wait));
      if (wait > 2) fail("event waited " + std::to_string(wait) + " cycles for ev_ready_o");
    } else {
      cov_.hit("event_held_through_sweep");
    }
    if (last_take_ && cycles_ == last_take_ + 2) cov_.hit("events_every_2_cycles");
    last_take_ = cycles_;
    if (e.qp >= kNumQp) {
      fail("bench: QP out of range");
      return;
    }
    const Kind kn = kind_of(e.syn);
    cov_.hit(std::string("event_") + kKindName[kn]);
    if (top_->tx_valid_o && !top_->tx_ready_i) cov_.hit("event_during_tx_stall");
    if (offered_ && offered_qp_ == e.qp) cov_.hit("event_for_offered_qp");
    Pend& p = pend_[e.qp];
    if (!p.pend) {
      if (fifo_.empty()) {
        fast_cand_ = true;
        fast_qp_ = e.qp;
      }
      p = {true, e.syn, e.msn, e.psn, cycles_};
      fifo_.push_back(e.qp);
      return;
    }
    const Kind ko = kind_of(p.syn);
    cov_.hit(std::string("merge_") + kKindName[ko] + "_then_" + kKindName[kn]);
    if (replaces(p.syn, e.syn)) {
      cov_.hit("event_replaced_pending");
      p.syn = e.syn;
      p.msn = e.msn;
      p.psn = e.psn;
    } else {
      cov_.hit(std::string("seq_nak_kept_") + kKindName[ko]);
    }
  }

  // A new header (tx_valid_o and the previous one taken) or the held one (unchanged).
  void check_tx() {
    HdrWords w;
    for (unsigned i = 0; i < kHdrWords; ++i) w[i] = top_->tx_hdr_o[i];
    if (offered_) {
      if (!top_->tx_valid_o) fail("tx_valid_o dropped before the header was taken");
      else if (w != offered_words_) fail("tx_hdr_o changed while tx_valid_o && !tx_ready_i");
      if (expect_fast_at_ == cycles_) fail("fast path: no new header 2 cycles after the event (TX output busy)");
      return;
    }
    if (!top_->tx_valid_o) {
      if (expect_fast_at_ == cycles_)
        fail("fast path: no header for QP " + std::to_string(expect_fast_qp_) + " 2 cycles after its event was taken");
      return;
    }
    offered_ = true;
    offered_words_ = w;
    ++headers_;
    if (fifo_.empty()) {
      fail("a header with nothing queued (QP " + std::to_string(wire::unpack_hdr(w.data()).udp_sport & (kNumQp - 1)) + ")");
      return;
    }
    const unsigned qp = fifo_.front();
    fifo_.pop_front();
    Pend& p = pend_[qp];
    offered_qp_ = qp;
    wire::RoceHdr e;
    e.dst_mac = cfg_[qp].dmac;
    e.src_mac = local_mac_;
    e.src_ip = local_ip_;
    e.dst_ip = cfg_[qp].dest_ip;
    e.ip_tos = cfg_[qp].tclass;
    e.ip_ttl = cfg_[qp].hop_limit;
    e.udp_sport = static_cast<uint16_t>(0xC000u | qp);
    e.opcode = wire::kAck;
    e.dest_qp = cfg_[qp].dest_qpn;
    e.psn = p.psn;
    e.aeth = (uint32_t(p.syn) << 24) | p.msn;
    const wire::RoceHdr g = wire::unpack_hdr(w.data());
    if (g != e) {
      std::string d = "header for QP " + std::to_string(qp) + " (udp_sport says QP " +
                      std::to_string(g.udp_sport & (kNumQp - 1)) + ") differs:";
      auto cmp = [&d](const char* n, uint64_t got, uint64_t exp) {
        if (got != exp) d += std::string(" ") + n + " 0x" + hex(got) + " (expected 0x" + hex(exp) + ")";
      };
      cmp("dst_mac", g.dst_mac, e.dst_mac);
      cmp("src_mac", g.src_mac, e.src_mac);
      cmp("src_ip", g.src_ip, e.src_ip);
      cmp("dst_ip", g.dst_ip, e.dst_ip);
      cmp("udp_sport", g.udp_sport, e.udp_sport);
      cmp("opcode", g.opcode, e.opcode);
      cmp("se", g.se, e.se);
      cmp("ack_req", g.ack_req, e.ack_req);
      cmp("dest_qp", g.dest_qp, e.dest_qp);
      cmp("psn", g.psn, e.psn);
      cmp("reth_va", g.reth_va, e.reth_va);
      cmp("reth_rkey", g.reth_rkey, e.reth_rkey);
      cmp("reth_len", g.reth_len, e.reth_len);
      cmp("imm", g.imm, e.imm);
      cmp("aeth", g.aeth, e.aeth);
      cmp("pay_len", g.pay_len, e.pay_len);
      fail(d);
    }
    const uint64_t lat = cycles_ - p.since;
    if (expect_fast_at_ == cycles_) {
      if (qp != expect_fast_qp_) fail("fast path: header of another QP");
      cov_.hit("fast_path");
    } else {
      cov_.hit("queued_path");
    }
    cov_.max("latency_max", lat);
    if (lat < 2) fail("header " + std::to_string(lat) + " cycles after its event");
    p.pend = false;
    if (qp == 0) cov_.hit("qp_0_out");
    if (qp == kNumQp - 1) cov_.hit("qp_last_out");
    for (unsigned b = 0; b < kQpW; ++b) {
      const bool v = (qp >> b) & 1;
      if (v ? !bit1_[b] : !bit0_[b]) {
        (v ? bit1_ : bit0_)[b] = true;
        if (bit0_[b] && bit1_[b]) cov_.hit("out_qp_bit" + std::to_string(b) + "_toggled");
      }
    }
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_ack_gen> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<QpCfg> cfg_;
  unsigned cfg_rd_idx_ = 0;   // the QP cfg_i shows (cfg_idx_o at the last edge)
  std::vector<Pend> pend_;
  std::deque<unsigned> fifo_;  // QPs in the order they were first asked for
  const Knobs* k_ = nullptr;
  unsigned hot_[4] = {};
  uint64_t local_mac_ = 0;
  uint32_t local_ip_ = 0;
  double tx_mode_ = -1;        // >= 0: tx_ready_i probability; < 0: the knobs
  unsigned stall_left_ = 0;
  bool gen_ = true;            // random events
  Ev cur_;
  bool held_ = false;          // cur_ is offered (ev_valid_i)
  uint64_t held_since_ = 0;
  bool offered_ = false;       // a header is on tx_hdr_o, not taken yet
  HdrWords offered_words_{};
  unsigned offered_qp_ = 0;
  bool ev_taken_prev_ = false;
  bool fast_cand_ = false;
  unsigned fast_qp_ = 0, expect_fast_qp_ = 0;
  uint64_t expect_fast_at_ = kNever;  // cycle a fast-path header is due
  unsigned queued_gap_ = 0, queued_gap_max_ = 0, ev_wait_max_ = 0, sweep_len_ = 0;
  std::array<bool, 32> bit0_{}, bit1_{};
  uint64_t cycles_ = 0, since_reset_ = 0, errors_ = 0, headers_ = 0, events_ = 0, last_take_ = 0;
};

// After reset: an event offered from the first cycle is held through the NUM_QP-cycle sweep
// (ev_ready_o low), taken when it ends, and its header is out 2 cycles later (nothing queued, TX
// ready).
TEST(AckGen, EventHeldThroughResetSweepThenFastPath) {
  Coverage cov({"event_held_through_sweep", "fast_path"});
  AckGenBench b(7, cov);
  b.set_tx(1.0);
  b.post(b.random_event(kNumQp - 1, nullptr));
  b.steps(4);
  EXPECT_FALSE(b.failed());
  EXPECT_EQ(b.sweep_len(), kNumQp);
  EXPECT_EQ(b.headers(), 1u);
  b.drain();
  EXPECT_FALSE(b.failed());
  cov.report("ack_gen (reset sweep)");
  EXPECT_EQ(cov.get("fast_path"), 1u);
}

// Every pair {pending kind, new kind} of ACK, sequence NAK, RNR NAK, error NAK on a queued QP (the TX
// side stalled behind another QP's header), then drained: the header carries the fields the rule
// of the block's header comment keeps.
TEST(AckGen, MergeRulesForEveryPairOfKinds) {
  std::vector<std::string> pts = {"seq_nak_kept_rnr_nak", "seq_nak_kept_err_nak", "seq_nak_kept_seq_nak", "event_replaced_pending"};
  for (unsigned o = 0; o < kNumKinds; ++o)
    for (unsigned n = 0; n < kNumKinds; ++n) pts.push_back(std::string("merge_") + kKindName[o] + "_then_" + kKindName[n]);
  Coverage cov(pts);
  AckGenBench b(11, cov);
  std::mt19937_64 r(11);
  auto syn_of = [&r](unsigned k) -> uint8_t {
    switch (k) {
      case kAck: return kSynAck;
      case kSeq: return kSynSeq;
      case kRnr: return wire::aeth_syndrome(wire::kAethTypeRnrNak, static_cast<uint8_t>(urand(r, 0, 31)));
      default: return wire::aeth_syndrome(wire::kAethTypeNak, kErrNakCodes[urand(r, 0, 3)]);
    }
  };
  for (unsigned o = 0; o < kNumKinds && !b.failed(); ++o)
    for (unsigned n = 0; n < kNumKinds && !b.failed(); ++n)
      for (unsigned rep = 0; rep < 3 && !b.failed(); ++rep) {
        const unsigned q = static_cast<unsigned>(urand(r, 1, kNumQp - 1));
        b.set_tx(0.0);
        b.post(b.event_of(0, kSynAck));  // goes out at once and waits on the stalled TX side
        b.post(b.event_of(q, syn_of(o)));
        b.post(b.event_of(q, syn_of(n)));
        if (rep == 2) b.post(b.event_of(q, syn_of(n)));  // the same kind twice
        b.steps(static_cast<unsigned>(urand(r, 0, 3)));
        b.drain();
      }
  EXPECT_FALSE(b.failed());
  cov.report("ack_gen (merge rules)");
}

// Two sequence NAKs for a QP queued behind a stalled TX side: the header carries the first one's
// fields (the requester must see the first NAK; the responder sends one per gap anyway).
TEST(AckGen, SeqNakKeepsPendingSeqNak) {
  Coverage cov({"seq_nak_kept_seq_nak"});
  AckGenBench b(13, cov);
  std::mt19937_64 r(13);
  for (unsigned i = 0; i < 8 && !b.failed(); ++i) {
    const unsigned q = static_cast<unsigned>(urand(r, 1, kNumQp - 1));
    b.set_tx(0.0);
    b.post(b.event_of(0, kSynAck));  // goes out at once and waits on the stalled TX side
    b.post(b.event_of(q, kSynSeq));
    b.post(b.event_of(q, kSynSeq));
    b.drain();
  }
  EXPECT_FALSE(b.failed());
  cov.report("ack_gen (sequence NAK on a sequence NAK)");
}

TEST(AckGen, RandomEventsAndBackPressureAgainstModel) {
  Coverage cov(coverage_points());
  const unsigned long_stall = 4 * kNumQp;
  const Knobs mixes[] = {
      // name            ev    hot   ready stall  min  max         ack seq rnr err
      {"always_ready",   0.6,  0.3,  1.0,  0.0,   0,   0,          4, 3, 2, 2},
      {"random",         0.5,  0.3,  0.5,  0.002, 20,  200,        4, 3, 2, 2},
      {"long_stalls",    0.8,  0.1,  0.9,  0.004, kNumQp, long_stall, 4, 3, 2, 2},
      {"sparse",         0.05, 0.2,  0.8,  0.0,   0,   0,          4, 3, 2, 2},
      {"hot_replace",    0.7,  0.8,  0.2,  0.005, 50,  500,        2, 4, 2, 2},
  };
  const uint64_t phase = 100000;
  Stopwatch sw;
  uint64_t cyc = 0, hdrs = 0, evs = 0;
  unsigned ev_wait = 0, gap = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    AckGenBench b(seed, cov);
    for (int round = 0; round < 2 && !b.failed(); ++round) {
      for (const Knobs& k : mixes) {
        SCOPED_TRACE(k.name);
        b.run(k, phase);
        if (!b.failed()) b.drain(0.7);
        if (b.failed()) break;
      }
      if (!b.failed()) b.fill_all();
      if (!b.failed()) b.reset_midrun(mixes[round == 0 ? 2 : 4]);
    }
    if (!b.failed()) b.drain();
    ASSERT_FALSE(b.failed());
    cyc += b.cycles();
    hdrs += b.headers();
    evs += b.events();
    ev_wait = std::max(ev_wait, b.ev_wait_max());
    gap = std::max(gap, b.queued_gap_max());
  }
  report_speed("ack_gen", "busy", cyc, sw.seconds());
  std::printf("[ack_gen] NUM_QP=%u: %llu events, %llu headers; longest wait of an event %u cycles, longest "
              "free TX output with a QP queued %u cycles\n",
              kNumQp, (unsigned long long)evs, (unsigned long long)hdrs, ev_wait, gap);
  cov.report("ack_gen");
}

}  // namespace

// RDMA READ ordering (IBA 9.7.5.1.3): an ACK/NAK goes out only after the READ jobs given to the
// read-response engine before its event have had their last packet taken (job_out_i), so it never
// passes a READ's responses; jobs given after the event do not hold it; with no job out an event
// takes the fast path. Directed, against the block's stamp rule.
TEST(AckGen, AckWaitsForReadJobsGivenBeforeIt) {
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vtmnic_ack_gen>(ctx.get());
  uint64_t cyc = 0;
  unsigned out_qp = ~0u, outs = 0;
  auto tick = [&] {
    top->clk_i = 1;
    top->eval();
    top->clk_i = 0;
    top->eval();
    ++cyc;
  };
  // One cycle with the given pulses; records a header taken (TX always ready).
  auto step = [&](bool jin, bool jout) {
    top->job_in_i = jin;
    top->job_out_i = jout;
    top->tx_ready_i = 1;
    top->eval();
    if (top->tx_valid_o) {
      const wire::RoceHdr g = wire::unpack_hdr(reinterpret_cast<const uint32_t*>(&top->tx_hdr_o));
      out_qp = g.udp_sport & (kNumQp - 1);
      ++outs;
    }
    tick();
    top->job_in_i = 0;
    top->job_out_i = 0;
  };
  auto post = [&](unsigned qp) {
    top->ev_valid_i = 1;
    top->ev_qp_i = qp;
    top->ev_syn_i = kSynAck;
    top->ev_msn_i = qp;
    top->ev_psn_i = qp;
    for (int i = 0; i < 100; ++i) {
      top->eval();
      const bool take = top->ev_ready_o;
      step(false, false);
      if (take) break;
    }
    top->ev_valid_i = 0;
  };
  auto run = [&](int n) { for (int i = 0; i < n; ++i) step(false, false); };
  top->rst_ni = 0;
  top->clk_i = 0;
  top->ev_valid_i = 0;
  top->tx_ready_i = 1;
  top->eval();
  tick();
  top->rst_ni = 1;
  run(kNumQp + 4);   // the reset sweep

  // Three jobs given, then an ACK: held until the third is out.
  for (int i = 0; i < 3; ++i) step(true, false);
  post(5);
  run(40);
  EXPECT_EQ(outs, 0u) << "an ACK went out before the READ jobs given before it";
  step(false, true);
  step(false, true);
  run(40);
  EXPECT_EQ(outs, 0u) << "an ACK went out with a READ job given before it still unsent";
  step(false, true);
  run(10);
  EXPECT_EQ(outs, 1u);
  EXPECT_EQ(out_qp, 5u);

  // Nothing out: the fast path (the header within 3 cycles of the event's take).
  post(7);
  run(2);
  EXPECT_EQ(outs, 2u);
  EXPECT_EQ(out_qp, 7u);

  // A job given, an event, another job given after it: one job out releases the event.
  step(true, false);
  post(9);
  step(true, false);
  run(20);
  EXPECT_EQ(outs, 2u);
  step(false, true);
  run(10);
  EXPECT_EQ(outs, 3u);
  EXPECT_EQ(out_qp, 9u);
  // A newer event for a waiting QP moves its stamp on: it waits for the newer jobs as well.
  post(11);   // (one job is still out: waits)
  step(true, false);
  post(11);   // merged, stamp now two jobs ahead
  step(false, true);
  run(20);
  EXPECT_EQ(outs, 3u) << "a merged event kept its older stamp";
  step(false, true);
  run(10);
  EXPECT_EQ(outs, 4u);
  EXPECT_EQ(out_qp, 11u);
  run(5);
  EXPECT_TRUE(top->idle_o);
  top->final();
}
