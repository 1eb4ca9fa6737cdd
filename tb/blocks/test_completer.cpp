// tmnic_completer against a model of its contract (the RTL header comment and the IBA requester
// rules it implements). The bench plays the requester (ring writes at its next, window checked
// through the completer's ci copy, local errors, flushed entries with a kick, messages applied when
// taken), the responder (ACK/NAK events), the context (registered QP-configuration reads, ERR one
// cycle after err_o, commands that move a QP to ERR with a kick, inits) and the CQ writer
// (back-pressure).
// Model: an ACK/NAK takes effect when it is taken, against the requester's next as the completer
// reads it (the old word in the take cycle): entries from ci whose last PSN the ACK covers complete
// in order (a CQE when signaled; never an entry with an error status); then, with the next entry
// live, an RNR NAK rewinds (REWIND message with the entry's first PSN and the RNR wait's end, the
// budget less one unless infinite) or fails with RNR_RETRY_EXC_ERR when the budget is spent; a
// PSN-sequence NAK rewinds; other NAKs fail with the IBA's status; a failure completes the entry
// with its error, raises err_o and sends a FAIL message. A local error raises err_o. While the QP is
// in ERR, every entry from ci to next completes, with its error status or WR_FLUSH_ERR.
// RDMA READ entries (SQO_READ, first..last the PSNs of their responses): the bench also plays the
// receive engine's side, READ response events (ACK_RR) for the oldest READ in and out of order
// (the next one, duplicates, gaps, a FIRST again, wrong FIRST/LAST flags, another entry's PSN),
// ACK_RDDONE after the last verified response (now and then at other PSNs) and ACK_RDERR. Model:
// the ACK loop never completes a READ except for ACK_RDDONE (which covers its PSN); ACK_RR covers
// the PSNs before its own, then its verdict is ok iff the oldest entry is a live READ of a QP in
// RTS, the PSN in [first, last], FIRST at first or else right after the last verified PSN of this
// same oldest READ, LAST exactly at last (ok: that PSN is verified, progress); an ACK covering the
// oldest READ's last PSN rewinds to it on a transport retry, or fails it with RETRY_EXC_ERR; an
// ACK_RDERR fails a live oldest READ of a QP in RTS with its status. Transport retries are modelled
// (reset by progress: completions, partial ACKs of the oldest non-READ, ok verdicts).
// Atomics (SQO_CSWAP, SQO_FADD: one PSN) are READs to all of the above, except that a response
// event's kind must match the oldest entry (ACK_RR with ack_atom_i, an ATOMIC_ACK, FIRST and LAST,
// for an atomic; without it, a READ response, for a READ): a mismatch's verdict is not ok. Their
// CQEs carry WC_OP_COMP_SWAP / WC_OP_FETCH_ADD.
// Checked: every CQE (QP, CQ, wr_id, index, status, opcode) in per-QP order, no CQE missing or
// extra; messages (kind, QP, index, PSN, RNR wait within [take + timer, take + timer + 4]); err_o
// pulses (QP, order); every verdict (once per ACK_RR, in order, ok and index, after the CQEs
// the event caused); a mark for the QP after each ACK that completes something and neither
// rewinds nor fails, and after each failure; statistics pulses per ACK; the ci copy when idle and
// when read in the cycle of a mark (the requester's look-again must see the new ci); idle_o after a drain; every QP in
// ERR flushed to its next.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <vector>

#include "Vtmnic_completer.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "qp_cfg.hpp"
#include "tmnic/hwif.h"
#include "tmnic/wire.h"

#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif
#ifndef TB_OUTS
#define TB_OUTS 16
#endif

using namespace tmnic::tb;
namespace wire = tmnic::wire;
namespace st = tmnic::hwif::wc_status;

namespace {

constexpr unsigned kNumQp = TB_NUM_QP, kOuts = TB_OUTS, kClkMhz = 250;
// tmnic_pkg ack_kind_e and sq_op_e (the CQE opcode has the same numbers: WC_OP_SEND/RDMA_WRITE/
// RDMA_READ/COMP_SWAP/FETCH_ADD)
enum Kind : uint8_t { kPkt = 0, kRr = 1, kRdDone = 2, kRdErr = 3 };
enum Op : uint8_t { kSend = 0, kWrite = 1, kRead = 2, kCswap = 3, kFadd = 4 };
static_assert(kCswap == tmnic::hwif::wc_op::COMP_SWAP && kFadd == tmnic::hwif::wc_op::FETCH_ADD, "sq_op_e vs WC_OP");
bool is_atom(uint8_t op) { return op == kCswap || op == kFadd; }
bool is_rd(uint8_t op) { return op == kRead || is_atom(op); }   // tmnic_pkg sqo_rd: completed by its responses
constexpr unsigned kQpW = 31 - static_cast<unsigned>(__builtin_clz(kNumQp));
constexpr uint32_t kM24 = 0xFFFFFF;

// ---- qp_cfg_t: field list in qp_cfg.hpp ----------------------------------------------------------
constexpr unsigned kCfgBits = kQpCfgBits, kCfgWords = kQpCfgWords;
constexpr unsigned kCmpBits = view_bits(kCmpView);
static_assert(sizeof(Vtmnic_completer::qp_rd_i) == 4 * ((2 * kCmpBits + 31) / 32), "qp_rd_i is not 2 x qp_cmp_cfg_t");
constexpr uint32_t kRts = static_cast<uint32_t>(tmnic::hwif::QpState::RTS);
constexpr uint32_t kErr = static_cast<uint32_t>(tmnic::hwif::QpState::ERR);

// ---- sq_out_t {op 3, wrid 64, first 24, last 24, sig 1, err 8} and sq_msg_t {kind 1, qp 16, idx 16,
// psn 24, rnr 1, rnr_due 64} (tmnic_pkg.sv), first field in the MSBs ----------------------------------
constexpr unsigned kOutBits = 124, kMsgBits = 122;
static_assert(sizeof(Vtmnic_completer::o_wdata_i) == 4 * ((kOutBits + 31) / 32), "o_wdata_i is not an sq_out_t");
static_assert(sizeof(Vtmnic_completer::msg_o) == 4 * ((kMsgBits + 31) / 32), "msg_o is not an sq_msg_t");
// cqe_req_t (tmnic_pkg.sv): 384 bits; the fields the completer sets, by LSB.
constexpr unsigned kCqeCq = 368, kCqeWrid = 304, kCqeQp = 216, kCqeIdx = 144, kCqeOp = 136, kCqeStatus = 128;
static_assert(sizeof(Vtmnic_completer::cqe_o) == 48, "cqe_o is not a cqe_req_t");

struct Entry {
  uint64_t wrid = 0;
  uint32_t first = 0, last = 0;
  bool sig = false;
  uint8_t err = 0;
  uint8_t op = kSend;
};
// A ring write (the requester's): {op, wrid, first, last, sig, err} at bits 121, 57, 33, 9, 8, 0.
void pack_entry(uint32_t* ow, const Entry& e) {
  set_bits(ow, 121, 3, e.op);
  set_bits(ow, 57, 64, e.wrid);
  set_bits(ow, 33, 24, e.first);
  set_bits(ow, 9, 24, e.last);
  set_bits(ow, 8, 1, e.sig);
  set_bits(ow, 0, 8, e.err);
}
struct Cqe {
  uint64_t wrid;
  uint16_t idx;
  uint8_t status;
  uint8_t op;
};
struct Verdict {
  unsigned qp;
  bool ok;
  uint16_t idx;
};
struct Msg {
  bool fail;
  unsigned qp;
  uint16_t idx;
  uint32_t psn;
  bool rnr;
  uint64_t due_lo, due_hi;  // the RNR wait's end: at least due_lo, at most now + due_hi when sent
};
struct Qp {
  std::array<uint32_t, kCfgWords> cfg{};
  std::array<Entry, kOuts> ring{};
  uint16_t ci = 0, next = 0;  // completer's ci (model), requester's next
  uint32_t psn = 0;           // requester's next PSN
  uint8_t rnr_left = 0;
  unsigned rnr_run = 0;       // RNR NAKs in a row with an infinite budget
  uint8_t retry_left = 0;     // transport retries left
  uint32_t acked = 0;         // the last PSN acknowledged (a READ's: its last verified response)
  bool acked_v = false;
  bool rd_busy = false;       // a READ event taken whose outcome depends on the QP being in RTS
  bool dead = false;
  std::deque<Cqe> exp;        // CQEs of ACK events, in order
  uint32_t state() const { return static_cast<uint32_t>(get_bits(cfg.data(), cfg_lsb(kCfState), 3)); }
  void set_state(uint32_t s) { set_bits(cfg.data(), cfg_lsb(kCfState), 3, s); }
  uint8_t rnr_retry() const { return static_cast<uint8_t>(get_bits(cfg.data(), cfg_lsb(kCfRnrRetry), 3)); }
  uint8_t retry_cnt() const { return static_cast<uint8_t>(get_bits(cfg.data(), cfg_lsb(kCfRetryCnt), 3)); }
  uint16_t send_cq() const { return static_cast<uint16_t>(get_bits(cfg.data(), cfg_lsb(kCfSendCq), 16)); }
};

bool psn_ge(uint32_t a, uint32_t b) { return (((a - b) & kM24) >> 23) == 0; }

std::vector<std::string> coverage_points() {
  return {"ack_signaled", "ack_unsignaled", "ack_several", "ack_nothing_live", "ack_stops_at_err_entry",
          "rnr_rewind", "rnr_infinite", "rnr_infinite_8_in_a_row", "rnr_exhausted", "seq_rewind", "nak_inv_req", "nak_rem_access",
          "nak_rem_op", "nak_inv_rd_req", "reserved_syndrome", "local_error", "flush_err_entry",
          "flush_flushed_entry", "flush_outstanding_entry", "cmd_err_kick", "msg_back_pressure",
          "cqe_back_pressure", "window_full", "reinit", "ring_wrap", "psn_wrap", "ack_waits_for_msg",
          "write_while_msg_pending", "mark_after_ack", "mark_after_err", "ci_read_at_mark",
          // RDMA READ
          "rr_ok_only", "rr_ok_first", "rr_ok_middle", "rr_ok_last", "rr_first_restart", "rr_dup", "rr_gap",
          "rr_bad_flag", "rr_not_oldest", "rr_not_read", "rr_qp_not_rts", "rr_completes_earlier", "rr_cqe_before_verdict",
          "rddone", "rddone_completes_earlier", "rddone_unverified", "rderr_fails", "rderr_ignored",
          "ack_stops_at_read", "implicit_nak_rewind", "implicit_nak_exhausted", "implicit_nak_after_completions",
          "nak_seq_at_read", "nak_err_at_read", "rnr_at_read", "flush_read", "read_psn_wrap", "cqe_read",
          // atomics
          "rr_ok_atomic", "rr_atomic_ack_for_read", "rr_read_resp_for_atomic", "rddone_atomic", "rderr_fails_atomic",
          "implicit_nak_atomic", "ack_stops_at_atomic", "flush_atomic", "cqe_comp_swap", "cqe_fetch_add"};
}

struct Knobs {
  const char* name;
  double ack, lerr, cmd_err, send, cqe_ready, msg_ready, rnr;  // rnr: share of RNR NAKs forced
};

// One clock of the completer; rd_qp gets the QPs its two registered context reads return next.
void clock(Vtmnic_completer& t, VerilatedContext& c, unsigned (&rd_qp)[2]) {
  const uint64_t idx = t.qp_idx_o;
  for (unsigned k = 0; k < 2; ++k) rd_qp[k] = static_cast<unsigned>((idx >> (kQpW * k)) & (kNumQp - 1));
  t.clk_i = 1;
  t.eval();
  t.clk_i = 0;
  c.timeInc(1);
}
// The two context read ports' data: the completer's view of each QP named.
template <class Qps>
uint64_t cfg_ports(const Qps& q, const unsigned (&rd_qp)[2]) {
  uint32_t rd[2] = {};
  for (unsigned k = 0; k < 2; ++k) pack_view(kCmpView, q[rd_qp[k]].cfg.data(), rd, kCmpBits * k);
  return get_bits(rd, 0, 2 * kCmpBits);
}

class CompBench {
 public:
  CompBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_completer>(ctx_.get())),
        rng_(seed), cov_(cov), q_(kNumQp) {
    for (auto& h : hot_) h = static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    for (unsigned i = 0; i < kNumQp; ++i) {
      Qp& p = q_[i];
      for (auto& w : p.cfg) w = static_cast<uint32_t>(rng_());
      p.cfg[kCfgWords - 1] &= (1u << (kCfgBits % 32)) - 1;
      p.set_state(kRts);
      // The random traffic's model has no transport timer: timeouts are off (0) or far beyond the
      // run (16..31: at least 67 ms), so the timer arms and restarts but never fires here (its
      // expiry is the directed TransportTimer test's).
      set_bits(p.cfg.data(), cfg_lsb(kCfTimeout), 5, chance(rng_, 0.3) ? 0 : static_cast<uint32_t>(urand(rng_, 16, 31)));
      // PSNs start anywhere, near the 24-bit wrap for some
      p.psn = chance(rng_, 0.3) ? (kM24 - static_cast<uint32_t>(urand(rng_, 0, 40))) : static_cast<uint32_t>(rng_()) & kM24;
      p.rnr_left = p.rnr_retry();
      p.retry_left = p.retry_cnt();
    }
    // One hot QP retries RNR NAKs forever, one never (rnr_retry 7 and 0).
    set_bits(q_[hot_[0]].cfg.data(), cfg_lsb(kCfRnrRetry), 3, 7);
    q_[hot_[0]].rnr_left = 7;
    if (hot_[1] != hot_[0]) {
      set_bits(q_[hot_[1]].cfg.data(), cfg_lsb(kCfRnrRetry), 3, 0);
      q_[hot_[1]].rnr_left = 0;
    }
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    // Every QP's completer word starts at an init (the context's reset leaves them undefined).
    for (unsigned i = 0; i < kNumQp && !failed(); ++i) {
      init_ = true;
      init_qp_ = i;
      step(nullptr);
      while (!top_->idle_o && !failed()) step(nullptr);
    }
  }
  ~CompBench() { top_->final(); }

  bool failed() const { return errors_ != 0; }
  uint64_t cycles() const { return cycles_; }
  uint64_t cqes() const { return cqes_; }

  void run(const Knobs& k, uint64_t n) {
    for (uint64_t i = 0; i < n && !failed(); ++i) step(&k);
  }

  // No new work: finish flushes (ERR QPs get their remaining posted WQEs as flushed entries), take
  // every message and CQE, then check the end state.
  void drain() {
    for (unsigned i = 0; i < 20000 + 200 * kNumQp && !failed(); ++i) {
      step(nullptr);
      bool flushes_left = false;
      for (unsigned i = 0; i < kNumQp; ++i) flushes_left |= q_[i].state() == kErr && flush_left_[i] != 0;
      // Idle through this step and the one before (so the last event's registered pulses are
      // counted), and the next cycle idle too; idle_o does not cover an event taken in this cycle.
      if (top_->idle_o && idle_run_ >= 2 && !taken_now_ && !ack_held_ && !lerr_held_ && !write_pending() &&
          !flushes_left && quiet_ > 3)
        break;
    }
    if (!top_->idle_o) {
      std::string why;
      for (unsigned i = 0; i < kNumQp; ++i)
        if (q_[i].state() == kErr && (flush_left_[i] || q_[i].ci != q_[i].next))
          why += " QP" + std::to_string(i) + ":ci" + std::to_string(q_[i].ci) + "/next" + std::to_string(q_[i].next) +
                 "/left" + std::to_string(flush_left_[i]);
      fail("not idle after the drain: cqe " + std::to_string(top_->cqe_valid_o) + " msg " +
           std::to_string(top_->msg_valid_o) + " lerr " + std::to_string(lerr_held_) + " ack " +
           std::to_string(ack_held_) + why);
    }
    for (unsigned i = 0; i < kNumQp; ++i) {
      const Qp& p = q_[i];
      if (!p.exp.empty()) fail("QP " + std::to_string(i) + ": " + std::to_string(p.exp.size()) + " CQEs never written");
      if (p.state() == kErr && p.ci != p.next)
        fail("QP " + std::to_string(i) + " in ERR not flushed: ci " + std::to_string(p.ci) + " next " + std::to_string(p.next));
    }
    if (!err_exp_.empty()) fail("err_o for QP " + std::to_string(err_exp_.front()) + " never raised");
    if (msg_exp_) fail("message never sent");
    if (!vr_exp_.empty()) fail("verdict for QP " + std::to_string(vr_exp_.front().qp) + " never given");
    for (unsigned i = 0; i < kNumQp; ++i)
      if (mark_exp_[i]) fail("no mark for QP " + std::to_string(i));
    if (st_ack_ != m_ack_ || st_rnr_ != m_rnr_ || st_nak_ != m_nak_ || st_retx_ != m_retx_)
      fail("statistics: ack/rnr/nak/retransmit " + std::to_string(st_ack_) + "/" + std::to_string(st_rnr_) + "/" +
           std::to_string(st_nak_) + "/" + std::to_string(st_retx_) + ", model " + std::to_string(m_ack_) + "/" +
           std::to_string(m_rnr_) + "/" + std::to_string(m_nak_) + "/" + std::to_string(m_retx_));
    // Quiet QPs in ERR or with nothing live start over (the context's SET_QP to RTS).
    for (unsigned i = 0; i < kNumQp && !failed(); ++i) {
      Qp& p = q_[i];
      if (p.state() == kErr || chance(rng_, 0.1)) {
        p.set_state(kRts);
        p.dead = false;
        p.ci = p.next = 0;
        p.rnr_left = p.rnr_retry();
        p.retry_left = p.retry_cnt();
        p.acked_v = false;
        if (chance(rng_, 0.3)) p.psn = kM24 - static_cast<uint32_t>(urand(rng_, 0, 40));   // (near the wrap again)
        init_ = true;
        init_qp_ = i;
        cov_.hit("reinit");
        step(nullptr);
        while (!top_->idle_o && !failed()) step(nullptr);
      }
    }
  }

 private:
  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() { clock(*top_, *ctx_, rd_qp_); }

  unsigned pick_qp() {
    if (chance(rng_, 0.6)) return hot_[urand(rng_, 0, hot_.size() - 1)];
    return static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
  }
  bool write_pending() const { return wr_q_ >= 0; }
  uint16_t live(const Qp& p) const { return static_cast<uint16_t>(p.next - p.ci); }

  // A random event for QP i: mostly an ACK/NAK at PSNs of its live messages; with a READ the oldest,
  // mostly its responses (in order, now and then not), ACK_RDDONE once its last one is verified.
  void new_ack(unsigned i, double rnr) {
    const Qp& p = q_[i];
    const uint16_t n = live(p);
    ack_kind_ = kPkt;
    ack_first_ = ack_last_ = ack_atom_ = false;
    ack_held_ = true;
    ack_qp_ = i;
    const Entry& h = p.ring[p.ci % kOuts];
    const bool rd_head = n && h.err == 0 && is_rd(h.op);
    if (rd_head && chance(rng_, 0.7)) {
      // The receive engine: the next response of the oldest READ, or something else.
      const uint32_t span = (h.last - h.first) & kM24;
      const bool verified = p.acked_v && p.acked == h.last;
      const uint32_t want = p.acked_v && psn_ge(p.acked, h.first) && psn_ge(h.last, p.acked) && !verified
                                ? ((p.acked + 1) & kM24) : h.first;
      uint32_t psn = want;
      const unsigned r = static_cast<unsigned>(urand(rng_, 0, 99));
      if (verified && r < 75) {
        ack_kind_ = r < 68 ? kRdDone : kRdErr;
        ack_psn_ = h.last;
        static const uint8_t errs[] = {st::LOC_PROT_ERR, st::LOC_LEN_ERR, st::REM_ACCESS_ERR, st::GENERAL_ERR};
        ack_aeth_ = ack_kind_ == kRdErr ? (static_cast<uint32_t>(rng_()) & ~0xFFu) | errs[urand(rng_, 0, 3)]
                                        : static_cast<uint32_t>(rng_());
        return;
      }
      if (r < 60) psn = want;                                              // in order
      else if (r < 68) psn = h.first;                                      // FIRST again
      else if (r < 76) psn = (h.first + urand(rng_, 0, span)) & kM24;     // duplicate or gap
      else if (r < 84) psn = (want + urand(rng_, 1, 2)) & kM24;            // gap
      else if (r < 92) psn = p.ring[(p.ci + urand(rng_, 0, n - 1)) % kOuts].first;
      else psn = static_cast<uint32_t>(rng_()) & kM24;
      ack_kind_ = kRr;
      ack_psn_ = psn;
      ack_first_ = psn == h.first;
      ack_last_ = psn == h.last;
      if (chance(rng_, 0.06)) ack_first_ = !ack_first_;
      if (chance(rng_, 0.06)) ack_last_ = !ack_last_;
      // An ATOMIC_ACK (FIRST and LAST) for an atomic, now and then the other kind (a READ response for
      // an atomic, an ATOMIC_ACK for a READ).
      ack_atom_ = is_atom(h.op) != chance(rng_, 0.1);
      if (ack_atom_) ack_first_ = ack_last_ = true;
      ack_aeth_ = static_cast<uint32_t>(rng_());
      return;
    }
    uint32_t psn = static_cast<uint32_t>(rng_()) & kM24;
    if (n && chance(rng_, 0.9)) {
      const Entry& e = p.ring[(p.ci + urand(rng_, 0, n - 1)) % kOuts];
      psn = chance(rng_, 0.6) ? e.last : chance(rng_, 0.5) ? e.first : ((e.last + 1) & kM24);
      // (ACKs of the PSNs before a READ, mostly: one past its last is an implicit NAK)
      if (is_rd(e.op) && chance(rng_, 0.6)) psn = (e.first - 1) & kM24;
      const unsigned r = static_cast<unsigned>(urand(rng_, 0, 99));
      if (is_rd(e.op) && r < 15) {
        // A response of a READ (atomic) that is not the oldest (earlier requests implicitly
        // acknowledged), a placed READ's end out of order, or a READ error at an entry that is not a READ.
        ack_kind_ = r < 10 ? kRr : kRdDone;
        ack_psn_ = r < 10 ? e.first : e.last;
        ack_first_ = true;
        ack_last_ = e.first == e.last;
        ack_atom_ = ack_kind_ == kRr && is_atom(e.op);
        ack_aeth_ = static_cast<uint32_t>(rng_());
        return;
      }
      if (r < 18) {
        ack_kind_ = r < 16 ? kRr : kRdErr;
        ack_psn_ = e.first;
        ack_first_ = chance(rng_, 0.5);
        ack_last_ = chance(rng_, 0.5);
        ack_atom_ = ack_kind_ == kRr && chance(rng_, 0.2);
        if (ack_atom_) ack_first_ = ack_last_ = true;
        ack_aeth_ = (static_cast<uint32_t>(rng_()) & ~0xFFu) | st::LOC_PROT_ERR;
        return;
      }
    } else if (chance(rng_, 0.5)) {
      psn = p.psn;
    }
    const unsigned r = chance(rng_, rnr) ? 60 : static_cast<unsigned>(urand(rng_, 0, 99));
    uint8_t syn;
    if (r < 50) syn = wire::aeth_syndrome(wire::kAethTypeAck, static_cast<uint8_t>(urand(rng_, 0, 31)));
    else if (r < 68) syn = wire::aeth_syndrome(wire::kAethTypeRnrNak, static_cast<uint8_t>(urand(rng_, 0, 31)));
    else if (r < 84) syn = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakPsnSeqErr);
    else if (r < 97) syn = wire::aeth_syndrome(wire::kAethTypeNak, static_cast<uint8_t>(urand(rng_, 1, 6)));
    else syn = wire::aeth_syndrome(2, static_cast<uint8_t>(urand(rng_, 0, 31)));  // reserved type
    ack_aeth_ = (static_cast<uint32_t>(syn) << 24) | (static_cast<uint32_t>(rng_()) & kM24);
    ack_psn_ = psn;
  }

  // The event's effect, at its take (next as the completer reads it: before this cycle's write).
  void take_ack(uint64_t now) {
    last_take_[ack_qp_] = cycles_;
    Qp& p = q_[ack_qp_];
    const uint8_t syn = static_cast<uint8_t>(ack_aeth_ >> 24);
    const uint8_t typ = wire::aeth_type(syn), val = wire::aeth_value(syn);
    const bool pkt = ack_kind_ == kPkt;
    const uint32_t lim = (pkt && typ == wire::kAethTypeAck) || ack_kind_ == kRdDone ? ack_psn_ : ((ack_psn_ - 1) & kM24);
    const uint16_t ci0 = p.ci;
    unsigned done = 0;
    bool before_read = false;
    while (ack_kind_ != kRdErr && p.ci != p.next && p.ring[p.ci % kOuts].err == 0 &&
           psn_ge(lim, p.ring[p.ci % kOuts].last) && (!is_rd(p.ring[p.ci % kOuts].op) || ack_kind_ == kRdDone)) {
      const Entry& e = p.ring[p.ci % kOuts];
      if (e.sig) p.exp.push_back({e.wrid, p.ci, st::SUCCESS, e.op});
      cov_.hit(e.sig ? "ack_signaled" : "ack_unsignaled");
      if (p.ci % kOuts == kOuts - 1) cov_.hit("ring_wrap");
      if (e.first > e.last) cov_.hit("psn_wrap");
      if (is_atom(e.op)) {
        cov_.hit("rddone_atomic");
      } else if (e.op == kRead) {
        cov_.hit("rddone");
        if (!(p.acked_v && p.acked == e.last && p.ci == ci0)) cov_.hit("rddone_unverified");
      } else if (ack_kind_ == kRr) {
        cov_.hit("rr_completes_earlier");
        if (e.sig) cov_.hit("rr_cqe_before_verdict");
      } else if (ack_kind_ == kRdDone) {
        cov_.hit("rddone_completes_earlier");
      }
      ++p.ci;
      p.rnr_left = p.rnr_retry();
      p.retry_left = p.retry_cnt();
      p.rnr_run = 0;
      ++done;
    }
    if (done > 1) cov_.hit("ack_several");
    const bool is_live = p.ci != p.next && p.ring[p.ci % kOuts].err == 0;
    const Entry& h = p.ring[p.ci % kOuts];
    const bool rd_head = is_live && is_rd(h.op), sending = p.state() == kRts;
    const bool kind_ok = ack_atom_ ? is_atom(h.op) : h.op == kRead;   // the response's kind is the entry's
    if (pkt && !is_live) cov_.hit(p.ci != p.next ? "ack_stops_at_err_entry" : "ack_nothing_live");
    if (pkt && rd_head && done) before_read = true;
    const uint32_t d = (lim - p.acked) & kM24;
    const bool part = ack_kind_ != kRdErr && is_live && !rd_head && psn_ge(lim, h.first) &&
                      (!p.acked_v || (d != 0 && (d >> 23) == 0));
    bool rr_ok = false;
    if (ack_kind_ == kRr) {
      rr_ok = rd_head && kind_ok && sending && psn_ge(ack_psn_, h.first) && psn_ge(h.last, ack_psn_) &&
              (ack_first_ ? ack_psn_ == h.first
                          : (p.acked_v && p.ci == ci0 && lim == p.acked && ack_psn_ != h.first)) &&
              (ack_last_ == (ack_psn_ == h.last));
      vr_exp_.push_back({ack_qp_, rr_ok, p.ci});
      if (rr_ok && h.first > h.last) cov_.hit("read_psn_wrap");   // (the range compares across the wrap)
      if (!rd_head) cov_.hit(is_live ? "rr_not_read" : "rr_not_oldest");
      else if (!sending) cov_.hit("rr_qp_not_rts");
      else if (!kind_ok) cov_.hit(ack_atom_ ? "rr_atomic_ack_for_read" : "rr_read_resp_for_atomic");
      else if (rr_ok && ack_atom_) cov_.hit("rr_ok_atomic");
      else if (rr_ok) cov_.hit(ack_first_ && ack_last_ ? "rr_ok_only" : ack_first_ ? (p.acked_v && p.ci == ci0 && psn_ge(p.acked, h.first) ? "rr_first_restart" : "rr_ok_first")
                               : ack_last_ ? "rr_ok_last" : "rr_ok_middle");
      else if (ack_first_ != (ack_psn_ == h.first) || ack_last_ != (ack_psn_ == h.last)) cov_.hit("rr_bad_flag");
      else if (p.acked_v && p.ci == ci0 && psn_ge(p.acked, ack_psn_) && psn_ge(ack_psn_, h.first)) cov_.hit("rr_dup");
      else cov_.hit("rr_gap");
    }
    const bool rd_lost = pkt && typ == wire::kAethTypeAck && rd_head && psn_ge(lim, h.last);
    const bool prog = p.ci != ci0 || part || rr_ok;
    const uint8_t retry = prog ? p.retry_cnt() : p.retry_left;
    p.retry_left = retry;
    bool rewind = false, fail = false;
    uint8_t status = st::GENERAL_ERR;
    if (rd_lost) {
      ++m_ack_;
      if (retry == 0) {
        fail = true;
        status = st::RETRY_EXC_ERR;
        cov_.hit("implicit_nak_exhausted");
      } else {
        rewind = true;
        p.retry_left = retry - 1;
        cov_.hit("implicit_nak_rewind");
      }
      if (done) cov_.hit("implicit_nak_after_completions");
      if (is_atom(h.op)) cov_.hit("implicit_nak_atomic");
    } else if (ack_kind_ == kRdErr) {
      if (rd_head && sending) {
        fail = true;
        status = static_cast<uint8_t>(ack_aeth_ & 0xFF);
        cov_.hit(is_atom(h.op) ? "rderr_fails_atomic" : "rderr_fails");
      } else {
        cov_.hit("rderr_ignored");
      }
    } else if (!pkt) {
    } else if (typ == wire::kAethTypeAck) {
      ++m_ack_;
      if (before_read) cov_.hit(is_atom(h.op) ? "ack_stops_at_atomic" : "ack_stops_at_read");
    } else if (typ == wire::kAethTypeRnrNak) {
      ++m_rnr_;
      if (is_live && p.rnr_left == 0) {
        fail = true;
        status = st::RNR_RETRY_EXC_ERR;
        cov_.hit("rnr_exhausted");
      } else if (is_live) {
        rewind = true;
        cov_.hit(p.rnr_left == 7 ? "rnr_infinite" : "rnr_rewind");
        if (p.rnr_left != 7) --p.rnr_left;
        if (p.rnr_left == 7 && ++p.rnr_run == 8) cov_.hit("rnr_infinite_8_in_a_row");
      }
      if (rd_head) cov_.hit("rnr_at_read");
    } else if (typ == wire::kAethTypeNak) {
      ++m_nak_;
      if (is_live && val == wire::kNakPsnSeqErr) {
        rewind = true;
        cov_.hit(rd_head ? "nak_seq_at_read" : "seq_rewind");
      } else if (is_live) {
        fail = true;
        status = val == wire::kNakInvReq ? st::REM_INV_REQ_ERR : val == wire::kNakRemAccessErr ? st::REM_ACCESS_ERR
                                                                                             : st::REM_OP_ERR;
        cov_.hit(val == wire::kNakInvReq ? "nak_inv_req" : val == wire::kNakRemAccessErr ? "nak_rem_access"
                 : val == wire::kNakRemOpErr ? "nak_rem_op" : "nak_inv_rd_req");
        if (rd_head) cov_.hit("nak_err_at_read");
      }
    } else {
      cov_.hit("reserved_syndrome");
    }
    if (rr_ok) {
      p.acked = ack_psn_;
      p.acked_v = true;
    } else if (prog) {
      p.acked = lim;
      p.acked_v = !rd_head;
    }
    if (ack_kind_ == kRr || (ack_kind_ == kRdErr && fail)) p.rd_busy = sending;
    if (rewind || fail) {
      const uint64_t cyc = uint64_t(wire::kRnrTimerUs[val]) * kClkMhz;
      const bool rnr = pkt && !rd_lost && typ == wire::kAethTypeRnrNak;
      msg_exp_ = true;
      msg_ = {fail, ack_qp_, p.ci, h.first, rnr, now + cyc, cyc + 2};
    }
    if (rewind) ++m_retx_;
    if (fail) {
      p.exp.push_back({h.wrid, p.ci, status, h.op});
      ++p.ci;
      err_exp_.push_back(ack_qp_);
    }
    // A mark when the window opened (no rewind), or after a failure (when the QP is in ERR).
    if (fail || (!rewind && done > 0)) mark_exp_[ack_qp_] = true;
    ack_held_ = false;
  }

  void check_cqe() {
    const uint32_t* w = top_->cqe_o.data();
    const unsigned qp = static_cast<unsigned>(get_bits(w, kCqeQp, 24));
    if (qp >= kNumQp) return fail("CQE for QP " + std::to_string(qp));
    Qp& p = q_[qp];
    const uint64_t wrid = get_bits(w, kCqeWrid, 64);
    const uint16_t idx = static_cast<uint16_t>(get_bits(w, kCqeIdx, 16));
    const uint8_t status = static_cast<uint8_t>(get_bits(w, kCqeStatus, 8));
    if (get_bits(w, kCqeCq, 16) != p.send_cq()) fail("CQE of QP " + std::to_string(qp) + ": wrong CQ");
    Cqe e;
    if (!p.exp.empty()) {
      e = p.exp.front();
      p.exp.pop_front();
    } else {
      // A flush: the QP is in ERR, the entry at ci completes with its error or WR_FLUSH_ERR.
      if (p.state() != kErr)
        return fail("unexpected CQE for QP " + std::to_string(qp) + " (not in ERR): idx " + std::to_string(idx) +
                    " status " + std::to_string(status) + "; model ci " + std::to_string(p.ci) + " next " +
                    std::to_string(p.next));
      if (p.ci == p.next) return fail("flush CQE for QP " + std::to_string(qp) + " beyond its next");
      const Entry& h = p.ring[p.ci % kOuts];
      e = {h.wrid, p.ci, h.err ? h.err : st::WR_FLUSH_ERR, h.op};
      cov_.hit(h.err == st::WR_FLUSH_ERR ? "flush_flushed_entry" : h.err ? "flush_err_entry" : "flush_outstanding_entry");
      if (!h.err && h.op == kRead) cov_.hit("flush_read");
      if (!h.err && is_atom(h.op)) cov_.hit("flush_atomic");
      ++p.ci;
    }
    const unsigned op = static_cast<unsigned>(get_bits(w, kCqeOp, 8));
    if (wrid != e.wrid || idx != e.idx || status != e.status || op != e.op)
      fail("CQE of QP " + std::to_string(qp) + ": wr_id " + std::to_string(wrid) + " idx " + std::to_string(idx) +
           " status " + std::to_string(status) + " opcode " + std::to_string(op) + ", model: wr_id " +
           std::to_string(e.wrid) + " idx " + std::to_string(e.idx) + " status " + std::to_string(e.status) +
           " opcode " + std::to_string(e.op));
    if (op == tmnic::hwif::wc_op::RDMA_READ && status == st::SUCCESS) cov_.hit("cqe_read");
    if (op == tmnic::hwif::wc_op::COMP_SWAP && status == st::SUCCESS) cov_.hit("cqe_comp_swap");
    if (op == tmnic::hwif::wc_op::FETCH_ADD && status == st::SUCCESS) cov_.hit("cqe_fetch_add");
    ++cqes_;
  }

  void check_msg() {
    const uint32_t* w = top_->msg_o.data();
    const bool fail_kind = get_bits(w, 121, 1) != 0;
    const unsigned qp = static_cast<unsigned>(get_bits(w, 105, 16));
    const uint16_t idx = static_cast<uint16_t>(get_bits(w, 89, 16));
    const uint32_t psn = static_cast<uint32_t>(get_bits(w, 65, 24));
    const bool rnr = get_bits(w, 64, 1) != 0;
    const uint64_t due = get_bits(w, 0, 64);
    if (!msg_exp_) return fail("unexpected message for QP " + std::to_string(qp));
    if (fail_kind != msg_.fail || qp != msg_.qp) return fail("message kind/QP differs from the model");
    if (!msg_.fail) {
      if (idx != msg_.idx || psn != msg_.psn) fail("REWIND to " + std::to_string(idx) + "/" + std::to_string(psn) +
                                                   ", model " + std::to_string(msg_.idx) + "/" + std::to_string(msg_.psn));
      if (rnr != msg_.rnr) fail("REWIND's RNR flag differs from the model");
      // The wait starts when the NAK is acted on: after the take, before the message is out.
      const uint64_t hi = cycles_ + 1000 + msg_.due_hi;
      if (rnr && (due < msg_.due_lo || due > hi))
        fail("RNR wait ends at " + std::to_string(due) + ", not in [" + std::to_string(msg_.due_lo) + ", " +
             std::to_string(hi) + "]");
    }
  }

  void step(const Knobs* k) {
    const uint64_t now = cycles_ + 1000;
    // ---------------- inputs
    // The context applies an err_o one cycle after it (state visible to the next read).
    if (err_apply_ >= 0) {
      q_[err_apply_].set_state(kErr);
      err_apply_ = -1;
    }
    uint8_t kick = 0;
    unsigned kick_qp[3] = {0, 0, 0};
    // Requester: a ring write whose window was checked through the ci copy read last cycle.
    top_->o_we_i = 0;
    if (wr_q_ >= 0) {
      Qp& p = q_[wr_q_];
      const uint16_t ci_seen = top_->ci_rdata_o;
      if (static_cast<uint16_t>(p.next - ci_seen) >= kOuts) {
        cov_.hit("window_full");
      } else {
        Entry e;
        e.wrid = rng_();
        e.err = wr_kind_;
        const unsigned o = static_cast<unsigned>(urand(rng_, 0, 11));
        e.op = o < 3 ? kRead : o == 3 ? kCswap : o == 4 ? kFadd : o < 7 ? kWrite : kSend;
        if (wr_kind_ == 0) {
          const uint32_t n = is_atom(e.op) ? 1 : static_cast<uint32_t>(urand(rng_, 1, 4));   // (an atomic: one PSN)
          e.first = p.psn;
          e.last = (p.psn + n - 1) & kM24;
          e.sig = chance(rng_, 0.7);
          p.psn = (p.psn + n) & kM24;
        }
        if (msg_exp_ && msg_.qp == static_cast<unsigned>(wr_q_)) cov_.hit("write_while_msg_pending");
        p.ring[p.next % kOuts] = e;
        top_->o_we_i = 1;
        top_->o_waddr_i = (static_cast<uint32_t>(wr_q_) << (31 - __builtin_clz(kOuts))) | (p.next % kOuts);
        pack_entry(top_->o_wdata_i.data(), e);
        wr_applied_ = wr_q_;
        if (wr_kind_ != 0 && wr_kind_ != st::WR_FLUSH_ERR) {  // local error: dead, then the completer is told
          p.dead = true;
          lerr_held_ = true;
          lerr_qp_ = static_cast<unsigned>(wr_q_);
          cov_.hit("local_error");
        }
        if (wr_kind_ == st::WR_FLUSH_ERR) {
          kick |= 4;
          kick_qp[2] = static_cast<unsigned>(wr_q_);
        }
      }
      wr_q_ = -1;
    }
    // Requester: next write (read ci now, write next cycle).
    top_->ci_re_i = 0;
    const bool busy_wr = top_->o_we_i;
    if (!busy_wr && !lerr_held_) {
      unsigned i = pick_qp();
      if (!k) {  // draining: the requester flushes its QPs in ERR one after the other
        for (unsigned n = 0; n < kNumQp && !(q_[rr_].state() == kErr && flush_left_[rr_]); ++n) rr_ = (rr_ + 1) % kNumQp;
        i = rr_;
      }
      Qp& p = q_[i];
      if (k && p.state() == kRts && !p.dead && chance(rng_, k->send)) {
        wr_q_ = static_cast<int>(i);
        wr_kind_ = chance(rng_, k->lerr) ? (chance(rng_, 0.5) ? st::LOC_PROT_ERR : st::LOC_QP_OP_ERR) : 0;
      } else if (p.state() == kErr && chance(rng_, 0.5) && static_cast<uint16_t>(p.next - p.ci) < kOuts && flush_left_[i]) {
        --flush_left_[i];
        wr_q_ = static_cast<int>(i);
        wr_kind_ = st::WR_FLUSH_ERR;
      }
      if (wr_q_ >= 0) {
        top_->ci_re_i = 1;
        top_->ci_raddr_i = static_cast<unsigned>(wr_q_);
      } else if (top_->mark_o && last_take_[top_->mark_qp_o] + 3 <= cycles_) {
        // A mark tells the requester to look again: the ci it reads now must be the new one. (The
        // model applies an ACK when it is taken: no check if one of this QP was taken just now.)
        mark_rd_qp_ = static_cast<int>(top_->mark_qp_o);
        mark_rd_ci_ = q_[top_->mark_qp_o].ci;
        top_->ci_re_i = 1;
        top_->ci_raddr_i = top_->mark_qp_o;
      } else {
        top_->ci_re_i = 1;
        top_->ci_raddr_i = i;
      }
    }
    // Responder: an ACK/NAK, held until taken.
    if (!ack_held_ && k && chance(rng_, k->ack)) new_ack(pick_qp(), k->rnr);
    top_->ack_valid_i = ack_held_;
    top_->ack_qp_i = ack_qp_;
    top_->ack_aeth_i = ack_aeth_;
    top_->ack_psn_i = ack_psn_;
    top_->ack_local_i = 0;
    top_->ack_kind_i = ack_kind_;
    top_->ack_first_i = ack_first_;
    top_->ack_last_i = ack_last_;
    top_->ack_atom_i = ack_atom_;
    top_->lerr_valid_i = lerr_held_;
    top_->lerr_qp_i = lerr_qp_;
    // Context: a command moves a QP to ERR, with its kick.
    if (k && !(kick & 3) && chance(rng_, k->cmd_err)) {
      const unsigned i = pick_qp();
      if (q_[i].state() == kRts && !q_[i].rd_busy) {   // (a READ event's outcome may depend on RTS)
        q_[i].set_state(kErr);
        const bool rq = chance(rng_, 0.5);
        kick |= rq ? 2 : 1;
        kick_qp[rq ? 1 : 0] = i;
        flush_left_[i] = static_cast<unsigned>(urand(rng_, 0, 2 * kOuts));
        cov_.hit("cmd_err_kick");
      }
    }
    top_->kick_i = kick;
    top_->kick_qp_i = kick_qp[0] | (kick_qp[1] << kQpW) | (static_cast<uint64_t>(kick_qp[2]) << (2 * kQpW));
    top_->init_i = init_;
    top_->init_qp_i = init_qp_;
    if (init_) idle_run_ = 0;  // (the model's ci is already the init's)
    init_ = false;
    top_->cqe_ready_i = k ? chance(rng_, k->cqe_ready) : chance(rng_, 0.7);
    top_->msg_ready_i = k ? chance(rng_, k->msg_ready) : chance(rng_, 0.7);
    top_->now_i = now;
    top_->qp_rd_i = cfg_ports(q_, rd_qp_);
    top_->nx_rdata_i = nx_data_;
    top_->eval();

    // ---------------- outputs and handshakes of this cycle
    // The requester's next copy is read before this cycle's writes (read-first).
    if (top_->nx_re_o) nx_data_ = q_[top_->nx_raddr_o & (kNumQp - 1)].next;
    if (ci_chk_prev_ >= 0 && idle_run_ >= 2 && top_->idle_o && top_->ci_rdata_o != q_[ci_chk_prev_].ci)
      fail("ci copy of QP " + std::to_string(ci_chk_prev_) + ": " + std::to_string(top_->ci_rdata_o) + ", model " +
           std::to_string(q_[ci_chk_prev_].ci));
    if (mark_chk_qp_ >= 0) {
      cov_.hit("ci_read_at_mark");
      if (top_->ci_rdata_o != mark_chk_ci_)
        fail("ci copy of QP " + std::to_string(mark_chk_qp_) + " read at its mark: " +
             std::to_string(top_->ci_rdata_o) + ", model " + std::to_string(mark_chk_ci_));
    }
    if (top_->cqe_valid_o) {
      if (top_->cqe_ready_i) check_cqe();
      else cov_.hit("cqe_back_pressure");
    }
    if (top_->msg_valid_o) {
      if (!msg_seen_) {
        check_msg();
        msg_seen_ = true;
      }
      if (top_->msg_ready_i) {
        Qp& p = q_[msg_.qp];
        if (msg_.fail) p.dead = true;
        else if (!p.dead) {
          p.next = msg_.idx;
          p.psn = msg_.psn;
        }
        msg_exp_ = false;
        msg_seen_ = false;
      } else {
        cov_.hit("msg_back_pressure");
      }
    }
    if (top_->vr_valid_o) {
      if (vr_exp_.empty()) {
        fail("verdict without a READ response event");
      } else {
        const Verdict v = vr_exp_.front();
        vr_exp_.pop_front();
        if (bool(top_->vr_ok_o) != v.ok || top_->vr_idx_o != v.idx)
          fail("verdict of QP " + std::to_string(v.qp) + ": ok " + std::to_string(top_->vr_ok_o) + " idx " +
               std::to_string(top_->vr_idx_o) + ", model " + std::to_string(v.ok) + " " + std::to_string(v.idx));
        // (after the CQEs of the completions the response implied)
        if (!q_[v.qp].exp.empty()) fail("verdict of QP " + std::to_string(v.qp) + " before its CQEs");
        q_[v.qp].rd_busy = false;
      }
    }
    if (top_->err_o) {
      q_[top_->err_qp_o].rd_busy = false;
      if (err_exp_.empty() || err_exp_.front() != top_->err_qp_o) {
        fail("err_o for QP " + std::to_string(top_->err_qp_o) + " not expected");
      } else {
        err_exp_.pop_front();
        err_apply_ = static_cast<int>(top_->err_qp_o);
        flush_left_[top_->err_qp_o] = static_cast<unsigned>(urand(rng_, 0, 2 * kOuts));
        mark_exp_[top_->err_qp_o] = true;
      }
    }
    if (top_->mark_o) {
      const unsigned m = top_->mark_qp_o;
      if (mark_exp_[m]) cov_.hit(q_[m].state() == kErr ? "mark_after_err" : "mark_after_ack");
      mark_exp_[m] = false;
    }
    st_ack_ += top_->rx_ack_o;
    st_rnr_ += top_->rx_rnr_o;
    st_nak_ += top_->rx_nak_o;
    st_retx_ += top_->retransmit_o;
    if (ack_held_ && msg_exp_) cov_.hit("ack_waits_for_msg");
    taken_now_ = (ack_held_ && top_->ack_ready_o) || (lerr_held_ && top_->lerr_ready_o);
    if (ack_held_ && top_->ack_ready_o) take_ack(now);
    if (lerr_held_ && top_->lerr_ready_o) {
      err_exp_.push_back(lerr_qp_);
      lerr_held_ = false;
    }
    // quiet_o: low from the cycle after an init until it is applied; high whenever idle.
    if (init_prev_ && top_->quiet_o) fail("quiet_o high in the cycle after an init");
    if (top_->idle_o && !top_->quiet_o) fail("quiet_o low while idle");
    init_prev_ = top_->init_i;
    if (top_->o_we_i) q_[wr_applied_].next++;
    ci_chk_prev_ = top_->ci_re_i ? static_cast<int>(top_->ci_raddr_i) : -1;
    mark_chk_qp_ = mark_rd_qp_;
    mark_chk_ci_ = mark_rd_ci_;
    mark_rd_qp_ = -1;
    idle_run_ = top_->idle_o ? idle_run_ + 1 : 0;
    quiet_ = (!top_->cqe_valid_o && !top_->msg_valid_o && !top_->mark_o) ? quiet_ + 1 : 0;
    tick();
    ++cycles_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_completer> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<Qp> q_;
  std::array<unsigned, 6> hot_{};
  std::array<unsigned, kNumQp> flush_left_{};
  std::array<bool, kNumQp> mark_exp_{};
  std::array<uint64_t, kNumQp> last_take_{};
  int mark_rd_qp_ = -1, mark_chk_qp_ = -1;  // a ci read issued at a mark, checked a cycle later
  uint16_t mark_rd_ci_ = 0, mark_chk_ci_ = 0;
  std::deque<unsigned> err_exp_;
  unsigned rd_qp_[2] = {0, 0};
  uint16_t nx_data_ = 0;
  bool init_ = false, init_prev_ = false;
  unsigned init_qp_ = 0;
  bool ack_held_ = false, lerr_held_ = false, msg_exp_ = false, msg_seen_ = false, taken_now_ = false;
  unsigned ack_qp_ = 0, lerr_qp_ = 0;
  uint32_t ack_aeth_ = 0, ack_psn_ = 0;
  uint8_t ack_kind_ = kPkt;
  bool ack_first_ = false, ack_last_ = false, ack_atom_ = false;
  std::deque<Verdict> vr_exp_;
  Msg msg_{};
  int wr_q_ = -1, wr_applied_ = -1, err_apply_ = -1, ci_chk_prev_ = -1;
  uint8_t wr_kind_ = 0;
  unsigned idle_run_ = 0, quiet_ = 0, rr_ = 0;
  uint64_t m_ack_ = 0, m_rnr_ = 0, m_nak_ = 0, m_retx_ = 0, st_ack_ = 0, st_rnr_ = 0, st_nak_ = 0, st_retx_ = 0;
  uint64_t cycles_ = 0, cqes_ = 0, errors_ = 0;
};

// ---- Transport timer (IBA 9.7.6.1.3, 9.7.6.1.4): directed ----------------------------------------
// The bench plays a requester that resends from a REWIND's index at once (one ring write a cycle) and
// a responder that only answers when told. Expectations: a QP with messages outstanding and no ACK
// gets a REWIND to its oldest one (PSN of its first packet, no RNR flag) within [armed + T, armed + T +
// kTmoSlack] cycles, T = 4.096 us << timeout at 250 MHz = 1024 << timeout cycles (exact); it is armed
// when the message enters the ring and re-armed at each rewind; retry_cnt REWINDs (7 is not
// infinite), then the oldest WQE completes with RETRY_EXC_ERR, err_o, a FAIL message and the flush of
// the others (WR_FLUSH_ERR); an ACK that completes a message, or acknowledges new packets of the
// oldest one, resets the count and restarts the timer (a repeated ACK does not); an ACK that
// completes everything stops it; timeout 0 never fires; RNR NAKs and timeouts
// spend separate budgets (after an RNR NAK the timer restarts from the end of the RNR wait).
constexpr uint64_t kTmoSlack = kNumQp + 40;  // sweep (one word a cycle) + the ACK path's cycles
constexpr uint64_t tmo_cycles(unsigned t) { return uint64_t(1024) << t; }  // 4.096 us << t at 250 MHz

std::vector<std::string> timer_coverage_points() {
  return {"tmo_rewind", "tmo_retry_reset", "tmo_exhausted_7", "tmo_exhausted_2", "tmo_flush_after_exc",
          "tmo_infinite_never", "tmo_stopped_by_ack", "tmo_rnr_independent", "tmo_after_rnr_wait",
          "tmo_sweep_yields_to_ack", "tmo_two_qps", "tmo_partial_ack_progress", "tmo_repeated_ack_no_progress"};
}

class TimerBench {
 public:
  struct Ev {
    uint64_t now;
    bool fail;
    unsigned qp;
    uint16_t idx;
    uint32_t psn;
    bool rnr;
  };
  struct CqeEv {
    uint64_t now;
    unsigned qp;
    uint64_t wrid;
    uint16_t idx;
    uint8_t status;
    uint8_t op;
  };

  TimerBench() : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_completer>(ctx_.get())), q_(kNumQp) {
    for (unsigned i = 0; i < kNumQp; ++i) cfg(i, 0, 7, 7);
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~TimerBench() { top_->final(); }

  Qp& qp(unsigned i) { return q_[i]; }
  uint64_t now() const { return cycles_ + 1000; }
  std::deque<Ev> msgs;
  std::deque<CqeEv> cqes;
  std::deque<unsigned> errs;
  unsigned retx = 0;

  void cfg(unsigned i, unsigned timeout, unsigned retry, unsigned rnr_retry) {
    Qp& p = q_[i];
    p.cfg.fill(0);
    p.set_state(kRts);
    set_bits(p.cfg.data(), cfg_lsb(kCfSendCq), 16, 100 + i);
    set_bits(p.cfg.data(), cfg_lsb(kCfTimeout), 5, timeout);
    set_bits(p.cfg.data(), cfg_lsb(kCfRetryCnt), 3, retry);
    set_bits(p.cfg.data(), cfg_lsb(kCfRnrRetry), 3, rnr_retry);
  }
  // The QP's send queue starts (RTS): the completer's word from its configuration.
  void init(unsigned i) {
    Qp& p = q_[i];
    p.ci = p.next = 0;
    init_ = true;
    init_qp_ = i;
    step();
    run(8);
  }
  // The requester posts a message of n packets at its next (its ring write).
  void post(unsigned i, unsigned n, bool sig = true, uint8_t op = kSend) {
    Qp& p = q_[i];
    Entry e;
    e.op = op;
    e.wrid = (uint64_t(i) << 32) | p.next;
    e.first = p.psn;
    e.last = (p.psn + n - 1) & kM24;
    e.sig = sig;
    p.psn = (p.psn + n) & kM24;
    p.ring[p.next % kOuts] = e;
    writes_.push_back({i, p.next});
    ++p.next;
  }
  void ack(unsigned i, uint8_t syn, uint32_t psn) {
    acks_.push_back({i, (uint32_t(syn) << 24) | 5, psn, kPkt, false, false, false});
  }
  // A READ event: a response (ACK_RR with its FIRST/LAST flags), a placed READ, a READ error.
  void rr(unsigned i, uint32_t psn, bool first, bool last) { acks_.push_back({i, 0, psn, kRr, first, last, false}); }
  // An ATOMIC_ACK: ACK_RR with ack_atom_i, FIRST and LAST.
  void atom_ack(unsigned i, uint32_t psn) { acks_.push_back({i, 0, psn, kRr, true, true, true}); }
  void rddone(unsigned i, uint32_t psn) { acks_.push_back({i, 0, psn, kRdDone, false, false, false}); }
  void rderr(unsigned i, uint8_t status) { acks_.push_back({i, status, 0, kRdErr, false, false, false}); }
  std::deque<Verdict> vrs;
  size_t vr_cqes = 0;          // CQEs seen when the last verdict came
  uint64_t vr_now = 0;         // and when it came
  void run(uint64_t n) {
    for (uint64_t k = 0; k < n && !failed(); ++k) step();
  }
  // Steps until a message arrives (true, `out`) or `limit` cycles pass (false).
  bool wait_msg(uint64_t limit, Ev& out) {
    for (uint64_t k = 0; k < limit && !failed(); ++k) {
      if (!msgs.empty()) {
        out = msgs.front();
        msgs.pop_front();
        return true;
      }
      step();
    }
    return false;
  }
  bool failed() const { return ::testing::Test::HasFailure(); }
  bool idle() const { return top_->idle_o; }
  uint64_t wake_at() const { return top_->wake_at_o; }
  uint64_t write_now(unsigned i) const { return last_write_[i]; }

 private:
  struct Wr {
    unsigned qp;
    uint16_t idx;
  };
  struct Ack {
    unsigned qp;
    uint32_t aeth, psn;
    uint8_t kind;
    bool first, last, atom;
  };
  void tick() { clock(*top_, *ctx_, rd_qp_); }
  void step() {
    // The context applies an err_o one cycle after it (the completer marks the QP itself: no kick).
    if (err_apply_ >= 0) {
      q_[err_apply_].set_state(kErr);
      err_apply_ = -1;
    }
    top_->o_we_i = 0;
    if (!writes_.empty()) {
      const Wr w = writes_.front();
      writes_.pop_front();
      const Entry& e = q_[w.qp].ring[w.idx % kOuts];
      top_->o_we_i = 1;
      top_->o_waddr_i = (static_cast<uint32_t>(w.qp) << (31 - __builtin_clz(kOuts))) | (w.idx % kOuts);
      pack_entry(top_->o_wdata_i.data(), e);
      last_write_[w.qp] = now();
    }
    top_->ack_valid_i = !acks_.empty();
    if (!acks_.empty()) {
      top_->ack_qp_i = acks_.front().qp;
      top_->ack_aeth_i = acks_.front().aeth;
      top_->ack_psn_i = acks_.front().psn;
      top_->ack_kind_i = acks_.front().kind;
      top_->ack_first_i = acks_.front().first;
      top_->ack_last_i = acks_.front().last;
      top_->ack_atom_i = acks_.front().atom;
    }
    top_->ack_local_i = 0;
    top_->lerr_valid_i = 0;
    top_->kick_i = 0;
    top_->init_i = init_;
    top_->init_qp_i = init_qp_;
    init_ = false;
    top_->cqe_ready_i = 1;
    top_->msg_ready_i = 1;
    top_->ci_re_i = 0;
    top_->now_i = now();
    top_->qp_rd_i = cfg_ports(q_, rd_qp_);
    top_->nx_rdata_i = nx_data_;
    top_->eval();
    if (top_->nx_re_o) nx_data_ = q_[top_->nx_raddr_o & (kNumQp - 1)].next;
    if (top_->ack_valid_i && top_->ack_ready_o) acks_.pop_front();
    if (top_->msg_valid_o) {
      const uint32_t* w = top_->msg_o.data();
      Ev e{now(), get_bits(w, 121, 1) != 0, static_cast<unsigned>(get_bits(w, 105, 16)),
           static_cast<uint16_t>(get_bits(w, 89, 16)), static_cast<uint32_t>(get_bits(w, 65, 24)), get_bits(w, 64, 1) != 0};
      msgs.push_back(e);
      Qp& p = q_[e.qp];
      if (e.fail) {
        p.dead = true;
      } else if (!p.dead) {
        // The requester goes back and sends again from there: its ring writes, one a cycle.
        for (uint16_t k = e.idx; k != p.next; ++k) writes_.push_back({e.qp, k});
      }
    }
    if (top_->cqe_valid_o) {
      const uint32_t* w = top_->cqe_o.data();
      const unsigned qn = static_cast<unsigned>(get_bits(w, kCqeQp, 24));
      cqes.push_back({now(), qn, get_bits(w, kCqeWrid, 64), static_cast<uint16_t>(get_bits(w, kCqeIdx, 16)),
                      static_cast<uint8_t>(get_bits(w, kCqeStatus, 8)), static_cast<uint8_t>(get_bits(w, kCqeOp, 8))});
      if (qn < kNumQp) ++q_[qn].ci;
    }
    if (top_->vr_valid_o) {
      vrs.push_back({0, bool(top_->vr_ok_o), static_cast<uint16_t>(top_->vr_idx_o)});
      vr_cqes = cqes.size();
      vr_now = now();
    }
    if (top_->err_o) {
      errs.push_back(top_->err_qp_o);
      err_apply_ = static_cast<int>(top_->err_qp_o);
    }
    retx += top_->retransmit_o;
    tick();
    ++cycles_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_completer> top_;
  std::vector<Qp> q_;
  std::deque<Wr> writes_;
  std::deque<Ack> acks_;
  std::array<uint64_t, kNumQp> last_write_{};
  unsigned rd_qp_[2] = {0, 0};
  uint16_t nx_data_ = 0;
  bool init_ = false;
  unsigned init_qp_ = 0;
  int err_apply_ = -1;
  uint64_t cycles_ = 0;
};

uint64_t g_late_min = ~uint64_t(0), g_late_max = 0;  // cycles from t0 + T to the message, seen

// A REWIND or FAIL from the timer, t0 + T <= its time <= t0 + T + slack (t0: when the timer started).
void expect_tmo(TimerBench& b, unsigned qp, uint64_t t0, uint64_t t, bool fail, uint16_t idx, uint32_t psn,
                TimerBench::Ev& ev) {
  const uint64_t end = t0 + t + kTmoSlack + 64;
  ASSERT_TRUE(b.wait_msg(end > b.now() ? end - b.now() : 1, ev)) << "QP " << qp << ": no message after its timer started at " << t0;
  EXPECT_EQ(ev.qp, qp);
  EXPECT_EQ(ev.fail, fail) << "QP " << qp << " at " << ev.now;
  EXPECT_FALSE(ev.rnr);
  if (!fail) {
    EXPECT_EQ(ev.idx, idx);
    EXPECT_EQ(ev.psn, psn);
  }
  EXPECT_GE(ev.now, t0 + t) << "QP " << qp << ": the timer fired early";
  EXPECT_LE(ev.now, t0 + t + kTmoSlack) << "QP " << qp << ": the timer fired late";
  if (ev.now >= t0 + t) {
    g_late_min = std::min(g_late_min, ev.now - t0 - t);
    g_late_max = std::max(g_late_max, ev.now - t0 - t);
  }
}

TEST(Completer, TransportTimer) {
  Coverage cov(timer_coverage_points());
  const unsigned A = 3, B = kNumQp - 2, C = kNumQp / 2, D = 1, E = kNumQp - 1, F = 2;
  const uint64_t T1 = tmo_cycles(1), T2 = tmo_cycles(2);
  const uint8_t kAck = wire::aeth_syndrome(wire::kAethTypeAck, 0);
  TimerBench b;
  b.cfg(A, 1, 7, 7);   // exhausts after 7 retries (7 is not infinite)
  b.cfg(B, 0, 0, 0);   // timeout 0: never
  b.cfg(C, 2, 2, 7);   // retries reset by progress
  b.cfg(D, 1, 1, 2);   // RNR and timeouts: separate budgets
  b.cfg(E, 1, 0, 0);   // stopped by an ACK
  b.cfg(F, 1, 2, 7);   // expires while another QP's ACKs keep the block busy
  const unsigned G = kNumQp / 2 + 1;
  b.cfg(G, 1, 1, 7);   // an ACK of part of a message is progress, a repeated one is not
  for (unsigned i : {A, B, C, D, E, F, G}) b.init(i);
  ASSERT_FALSE(b.failed());
  ASSERT_TRUE(b.idle());

  // ---- A: 2 messages, 7 REWINDs then RETRY_EXC_ERR, FAIL, flush. B: one message, never.
  b.post(A, 3);
  b.post(A, 1);
  b.post(B, 1);
  b.run(2);
  uint64_t t0 = b.write_now(A) - 1;  // the first of the two writes
  TimerBench::Ev ev{};
  for (unsigned r = 0; r < 7 && !b.failed(); ++r) {
    expect_tmo(b, A, t0, T1, false, 0, b.qp(A).ring[0].first, ev);
    cov.hit("tmo_rewind");
    t0 = ev.now;
  }
  const unsigned retx_a = b.retx;
  EXPECT_EQ(retx_a, 7u);
  expect_tmo(b, A, t0, T1, true, 0, 0, ev);
  cov.hit("tmo_exhausted_7");
  b.run(kNumQp + 60);  // (the flush follows the rest of the sweep)
  ASSERT_GE(b.cqes.size(), 2u);
  EXPECT_EQ(b.cqes[0].qp, A);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR);
  EXPECT_EQ(b.cqes[0].wrid, b.qp(A).ring[0].wrid);
  EXPECT_EQ(b.cqes[1].status, st::WR_FLUSH_ERR);
  EXPECT_EQ(b.cqes[1].idx, 1u);
  if (b.cqes.size() == 2 && b.cqes[1].status == st::WR_FLUSH_ERR) cov.hit("tmo_flush_after_exc");
  ASSERT_EQ(b.errs.size(), 1u);
  EXPECT_EQ(b.errs[0], A);
  b.cqes.clear();
  b.errs.clear();
  // No further message for A (failed: disarmed) or B (timeout 0) over many timeouts.
  b.run(8 * T1);
  EXPECT_TRUE(b.msgs.empty());
  if (b.msgs.empty()) cov.hit("tmo_infinite_never");
  EXPECT_TRUE(b.idle());

  // ---- C: two expiries, an ACK of the first message (progress: restarts the timer, resets the
  // count), then 2 more REWINDs and RETRY_EXC_ERR on the second message.
  b.post(C, 2);
  b.post(C, 2);
  b.run(2);
  t0 = b.write_now(C) - 1;
  expect_tmo(b, C, t0, T2, false, 0, b.qp(C).ring[0].first, ev);
  t0 = ev.now;
  expect_tmo(b, C, t0, T2, false, 0, b.qp(C).ring[0].first, ev);
  b.run(T2 / 2);
  b.ack(C, kAck, b.qp(C).ring[0].last);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::SUCCESS);
  t0 = b.cqes[0].now;
  b.cqes.clear();
  for (unsigned r = 0; r < 2 && !b.failed(); ++r) {
    expect_tmo(b, C, t0 - 8, T2, false, 1, b.qp(C).ring[1].first, ev);
    t0 = ev.now;
  }
  cov.hit("tmo_retry_reset");
  expect_tmo(b, C, t0, T2, true, 0, 0, ev);
  cov.hit("tmo_exhausted_2");
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR);
  EXPECT_EQ(b.cqes[0].idx, 1u);
  b.cqes.clear();
  b.errs.clear();

  // ---- D: RNR NAK (rnr 2 -> 1), timeout 1 -> 0 from the RNR wait's end, RNR NAK (1 -> 0) still
  // rewinds, the next expiry fails with RETRY_EXC_ERR (the RNR NAKs did not reset it).
  const uint8_t kRnr = wire::aeth_syndrome(wire::kAethTypeRnrNak, 1);
  const uint64_t rnr_cyc = uint64_t(wire::kRnrTimerUs[1]) * kClkMhz;
  b.post(D, 1);
  b.run(20);
  b.ack(D, kRnr, b.qp(D).ring[0].first);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.rnr);
  EXPECT_FALSE(ev.fail);
  expect_tmo(b, D, ev.now + rnr_cyc, T1, false, 0, b.qp(D).ring[0].first, ev);
  cov.hit("tmo_after_rnr_wait");
  b.run(20);
  b.ack(D, kRnr, b.qp(D).ring[0].first);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.rnr);
  EXPECT_FALSE(ev.fail) << "a timeout spent the RNR budget";
  expect_tmo(b, D, ev.now + rnr_cyc, T1, true, 0, 0, ev);
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR) << "an RNR NAK reset the transport retries";
  if (!b.failed()) cov.hit("tmo_rnr_independent");
  b.cqes.clear();
  b.errs.clear();

  // ---- E: an ACK of everything before the timeout stops the timer (retry_cnt 0 would fail).
  b.post(E, 1);
  b.run(T1 / 2);
  b.ack(E, kAck, b.qp(E).ring[0].last);
  b.run(4 * T1);
  EXPECT_TRUE(b.msgs.empty());
  EXPECT_EQ(b.cqes.size(), 1u);
  if (b.msgs.empty() && b.cqes.size() == 1 && b.cqes[0].status == st::SUCCESS) cov.hit("tmo_stopped_by_ack");
  b.cqes.clear();
  EXPECT_TRUE(b.idle());

  // ---- F and E: F expires while E's duplicate ACKs keep arriving (the sweep yields to each and
  // resumes); both time out (E with no retries: fails).
  b.post(F, 1);
  b.post(E, 1);
  b.run(2);
  t0 = b.write_now(F);
  const uint64_t te = b.write_now(E);
  b.run(T1 - 40);
  for (unsigned k = 0; k < kNumQp / 4 + 20; ++k) b.ack(E, kAck, b.qp(E).ring[0].last);  // (already completed)
  TimerBench::Ev e1{}, e2{};
  ASSERT_TRUE(b.wait_msg(T1 + kTmoSlack + 200, e1));
  ASSERT_TRUE(b.wait_msg(T1 + kTmoSlack + 200, e2));
  const TimerBench::Ev& ef = e1.qp == F ? e1 : e2;
  const TimerBench::Ev& ee = e1.qp == F ? e2 : e1;
  EXPECT_EQ(ef.qp, F);
  EXPECT_EQ(ee.qp, E);
  EXPECT_FALSE(ef.fail);
  EXPECT_TRUE(ee.fail);
  EXPECT_GE(ef.now, t0 + T1);
  EXPECT_GE(ee.now, te + T1);
  // ACKs delay the sweep by their few cycles each (here up to kNumQp / 4 + 20 of them)
  EXPECT_LE(ef.now, t0 + T1 + kTmoSlack + 6 * (kNumQp / 4 + 20));
  EXPECT_LE(ee.now, te + T1 + kTmoSlack + 6 * (kNumQp / 4 + 20));
  if (!b.failed()) {
    cov.hit("tmo_sweep_yields_to_ack");
    cov.hit("tmo_two_qps");
  }
  b.run(T1 * 4);
  b.msgs.clear();
  b.cqes.clear();
  b.errs.clear();

  // ---- G (retry_cnt 1): a 4-packet message; an expiry (1 -> 0); an ACK of its first two packets
  // restarts the timer and resets the count (the next expiry rewinds rather than fails, T after
  // that ACK); the same ACK again is no progress (the next expiry, T after the rewind, fails).
  b.post(G, 4);
  b.run(2);
  t0 = b.write_now(G);
  expect_tmo(b, G, t0, T1, false, 0, b.qp(G).ring[0].first, ev);
  b.run(T1 / 2);
  const uint32_t part = (b.qp(G).ring[0].first + 1) & kM24;
  b.ack(G, kAck, part);
  b.run(1);
  const uint64_t ta = b.now();
  b.run(20);
  EXPECT_TRUE(b.cqes.empty()) << "a partial ACK completed the message";
  expect_tmo(b, G, ta, T1, false, 0, b.qp(G).ring[0].first, ev);
  cov.hit("tmo_partial_ack_progress");
  t0 = ev.now;
  b.run(T1 / 2);
  b.ack(G, kAck, part);
  expect_tmo(b, G, t0, T1, true, 0, 0, ev);
  cov.hit("tmo_repeated_ack_no_progress");
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR);
  std::printf("[completer] NUM_QP=%u: transport timer T(1) = %llu cycles; messages %llu..%llu cycles after "
              "start + T (allowed %llu)\n", kNumQp, (unsigned long long)T1, (unsigned long long)g_late_min,
              (unsigned long long)g_late_max, (unsigned long long)kTmoSlack);
  cov.report("completer_timer");
}


// ---- RDMA READ: directed sequences of the four event kinds with the transport timer ---------------
std::vector<std::string> read_coverage_points() {
  return {"rd_rr_completes_send_first", "rd_in_order", "rd_dup_refused", "rd_gap_refused", "rd_tmo_rewind",
          "rd_first_restart", "rd_done_cqe", "rd_implicit_nak", "rd_implicit_nak_exhausted", "rd_nak_access",
          "rd_err_event", "rd_tmo_exhausted", "rd_seq_nak"};
}

TEST(Completer, ReadEvents) {
  Coverage cov(read_coverage_points());
  const unsigned H = 5, I = 6, J = 7, K = 0, L = 4;   // (distinct at 8 QPs)
  const uint64_t T1 = tmo_cycles(1);
  const uint8_t kAck = wire::aeth_syndrome(wire::kAethTypeAck, 0);
  TimerBench b;
  b.cfg(H, 1, 2, 7);
  b.cfg(I, 0, 1, 7);
  b.cfg(J, 0, 7, 7);
  b.cfg(K, 1, 0, 7);
  b.cfg(L, 1, 0, 7);
  for (unsigned i : {H, I, J, K, L}) b.init(i);
  ASSERT_FALSE(b.failed());
  TimerBench::Ev ev{};
  // Takes the one verdict expected now.
  auto verdict = [&](bool ok, uint16_t idx, const char* what) {
    b.run(24);
    ASSERT_EQ(b.vrs.size(), 1u) << what;
    EXPECT_EQ(b.vrs[0].ok, ok) << what;
    EXPECT_EQ(b.vrs[0].idx, idx) << what;
    b.vrs.clear();
  };

  // ---- H: SEND (2 PSNs), READ (4), SEND (1). The READ's FIRST completes the SEND before it (its
  // CQE before the verdict); in-order responses pass, a duplicate and a gap do not; the timer goes
  // back to the READ; a FIRST restarts it; all four again, RDDONE completes it as RDMA_READ.
  b.post(H, 2);
  b.post(H, 4, true, kRead);
  b.post(H, 1);
  b.run(4);
  const Entry r = b.qp(H).ring[1];
  b.rr(H, r.first, true, false);
  verdict(true, 1, "FIRST after a SEND");
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.vr_cqes, 1u) << "the verdict came before the SEND's CQE";
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::SEND);
  EXPECT_EQ(b.cqes[0].idx, 0u);
  if (!b.failed()) cov.hit("rd_rr_completes_send_first");
  b.cqes.clear();
  b.rr(H, (r.first + 1) & kM24, false, false);
  verdict(true, 1, "MIDDLE in order");
  const uint64_t t0 = b.vr_now - 1;   // (a verified response is progress: the timer restarts)
  cov.hit("rd_in_order");
  b.rr(H, (r.first + 1) & kM24, false, false);
  verdict(false, 1, "a duplicate MIDDLE");
  cov.hit("rd_dup_refused");
  b.rr(H, r.last, false, true);
  verdict(false, 1, "LAST after a lost MIDDLE");
  cov.hit("rd_gap_refused");
  expect_tmo(b, H, t0, T1, false, 1, r.first, ev);
  cov.hit("rd_tmo_rewind");
  b.run(8);
  b.rr(H, r.first, true, false);
  verdict(true, 1, "FIRST again after the rewind");
  cov.hit("rd_first_restart");
  for (uint32_t k = 1; k < 4; ++k) {
    b.rr(H, (r.first + k) & kM24, false, k == 3);
    verdict(true, 1, "responses again");
  }
  b.rddone(H, r.last);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  EXPECT_EQ(b.cqes[0].status, st::SUCCESS);
  EXPECT_EQ(b.cqes[0].wrid, r.wrid);
  if (!b.failed()) cov.hit("rd_done_cqe");
  b.cqes.clear();
  b.ack(H, kAck, b.qp(H).ring[2].last);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].idx, 2u);
  b.cqes.clear();
  EXPECT_TRUE(b.msgs.empty());
  b.msgs.clear();

  // ---- I (retry_cnt 1, no timer): SEND, READ (2), SEND. An ACK of the last SEND completes the
  // first, stops at the READ and goes back to it (its responses were lost); again, with no retry
  // left, the READ fails with RETRY_EXC_ERR and the last SEND is flushed.
  b.post(I, 1);
  b.post(I, 2, true, kRead);
  b.post(I, 1);
  b.run(4);
  b.ack(I, kAck, b.qp(I).ring[2].last);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_FALSE(ev.fail);
  EXPECT_EQ(ev.idx, 1u);
  EXPECT_EQ(ev.psn, b.qp(I).ring[1].first);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].idx, 0u);
  if (!b.failed()) cov.hit("rd_implicit_nak");
  b.cqes.clear();
  b.run(8);
  b.ack(I, kAck, b.qp(I).ring[2].last);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.fail);
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 2u);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  EXPECT_EQ(b.cqes[1].status, st::WR_FLUSH_ERR);
  ASSERT_EQ(b.errs.size(), 1u);
  if (!b.failed()) cov.hit("rd_implicit_nak_exhausted");
  b.cqes.clear();
  b.errs.clear();

  // ---- J: a sequence NAK at a READ goes back to it; a remote access NAK fails it (REM_ACCESS_ERR).
  b.post(J, 3, true, kRead);
  b.run(4);
  b.ack(J, wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakPsnSeqErr), b.qp(J).ring[0].first);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_FALSE(ev.fail);
  EXPECT_EQ(ev.psn, b.qp(J).ring[0].first);
  if (!b.failed()) cov.hit("rd_seq_nak");
  b.run(8);
  b.ack(J, wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakRemAccessErr), b.qp(J).ring[0].first);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.fail);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::REM_ACCESS_ERR);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  if (!b.failed()) cov.hit("rd_nak_access");
  b.cqes.clear();
  b.errs.clear();

  // ---- K: an accepted FIRST, then the receive engine fails the READ (LOC_PROT_ERR): CQE, err_o, FAIL.
  b.post(K, 3, true, kRead);
  b.run(4);
  b.rr(K, b.qp(K).ring[0].first, true, false);
  verdict(true, 0, "K's FIRST");
  b.rderr(K, st::LOC_PROT_ERR);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.fail);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::LOC_PROT_ERR);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  ASSERT_EQ(b.errs.size(), 1u);
  if (!b.failed()) cov.hit("rd_err_event");
  b.cqes.clear();
  b.errs.clear();

  // ---- L (retry_cnt 0): a READ whose responses never come: RETRY_EXC_ERR at the first expiry.
  b.post(L, 2, true, kRead);
  b.run(2);
  expect_tmo(b, L, b.write_now(L), T1, true, 0, 0, ev);
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].status, st::RETRY_EXC_ERR);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  if (!b.failed()) cov.hit("rd_tmo_exhausted");
  EXPECT_TRUE(b.vrs.empty());
  cov.report("completer_read");
}

// ---- Atomics: directed sequences (an atomic is an 8-byte READ whose response is an ATOMIC_ACK) -----
std::vector<std::string> atomic_coverage_points() {
  return {"at_kind_mismatch_read_resp", "at_verified_not_completed", "at_done_comp_swap", "at_gap_refused",
          "at_implicit_nak", "at_rderr", "at_kind_mismatch_atomic_ack", "at_implicit_nak_after_read",
          "at_done_fetch_add"};
}

TEST(Completer, AtomicEvents) {
  Coverage cov(atomic_coverage_points());
  const unsigned X = 1, Y = 2, Z = 3;   // (distinct at 8 QPs)
  const uint8_t kAck = wire::aeth_syndrome(wire::kAethTypeAck, 0);
  TimerBench b;
  b.cfg(X, 0, 1, 7);
  b.cfg(Y, 0, 7, 7);
  b.cfg(Z, 0, 7, 7);
  for (unsigned i : {X, Y, Z}) b.init(i);
  ASSERT_FALSE(b.failed());
  TimerBench::Ev ev{};
  auto verdict = [&](bool ok, uint16_t idx, const char* what) {
    b.run(24);
    ASSERT_EQ(b.vrs.size(), 1u) << what;
    EXPECT_EQ(b.vrs[0].ok, ok) << what;
    EXPECT_EQ(b.vrs[0].idx, idx) << what;
    b.vrs.clear();
  };

  // ---- X (retry_cnt 1): SEND (2 PSNs), CMP_SWAP, FETCH_ADD, SEND.
  b.post(X, 2);
  b.post(X, 1, true, kCswap);
  b.post(X, 1, true, kFadd);
  b.post(X, 1);
  b.run(4);
  const Entry cs = b.qp(X).ring[1], fa = b.qp(X).ring[2];
  ASSERT_EQ(cs.first, cs.last);
  // A READ response (ONLY) at the CMP_SWAP's PSN: it acknowledges the SEND before it (its CQE), but is
  // not the atomic's response kind: refused.
  b.rr(X, cs.first, true, true);
  verdict(false, 1, "a READ response for an atomic");
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::SEND);
  EXPECT_EQ(b.cqes[0].idx, 0u);
  if (!b.failed()) cov.hit("at_kind_mismatch_read_resp");
  b.cqes.clear();
  // Its ATOMIC_ACK passes; neither it nor an ACK of the PSNs before it completes the atomic.
  b.atom_ack(X, cs.first);
  verdict(true, 1, "the CMP_SWAP's ATOMIC_ACK");
  b.ack(X, kAck, (cs.first - 1) & kM24);
  b.run(20);
  EXPECT_TRUE(b.cqes.empty()) << "an atomic completed before its result was placed";
  EXPECT_TRUE(b.msgs.empty());
  if (!b.failed()) cov.hit("at_verified_not_completed");
  // The original value placed (ACK_RDDONE): COMP_SWAP completion.
  b.rddone(X, cs.first);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::COMP_SWAP);
  EXPECT_EQ(b.cqes[0].status, st::SUCCESS);
  EXPECT_EQ(b.cqes[0].wrid, cs.wrid);
  EXPECT_EQ(b.cqes[0].idx, 1u);
  if (!b.failed()) cov.hit("at_done_comp_swap");
  b.cqes.clear();
  // An ATOMIC_ACK at the wrong PSN (the next SEND's) is refused and completes nothing.
  b.atom_ack(X, (fa.first + 1) & kM24);
  verdict(false, 2, "an ATOMIC_ACK past the FETCH_ADD");
  EXPECT_TRUE(b.cqes.empty());
  if (!b.failed()) cov.hit("at_gap_refused");
  // An ACK of the last SEND without the FETCH_ADD's response: implicit NAK, back to the FETCH_ADD.
  b.ack(X, kAck, b.qp(X).ring[3].last);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_FALSE(ev.fail);
  EXPECT_FALSE(ev.rnr);
  EXPECT_EQ(ev.idx, 2u);
  EXPECT_EQ(ev.psn, fa.first);
  EXPECT_TRUE(b.cqes.empty()) << "an ACK completed an atomic";
  if (!b.failed()) cov.hit("at_implicit_nak");
  b.run(8);
  // Its ATOMIC_ACK passes, then the receive engine fails it: FETCH_ADD completion with the status,
  // err_o, FAIL; the SEND after it flushed.
  b.atom_ack(X, fa.first);
  verdict(true, 2, "the FETCH_ADD's ATOMIC_ACK");
  b.rderr(X, st::LOC_PROT_ERR);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_TRUE(ev.fail);
  b.run(kNumQp + 60);
  ASSERT_EQ(b.cqes.size(), 2u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::FETCH_ADD);
  EXPECT_EQ(b.cqes[0].status, st::LOC_PROT_ERR);
  EXPECT_EQ(b.cqes[0].wrid, fa.wrid);
  EXPECT_EQ(b.cqes[1].status, st::WR_FLUSH_ERR);
  EXPECT_EQ(b.cqes[1].op, tmnic::hwif::wc_op::SEND);
  ASSERT_EQ(b.errs.size(), 1u);
  EXPECT_EQ(b.errs[0], X);
  if (!b.failed()) cov.hit("at_rderr");
  b.cqes.clear();
  b.errs.clear();
  b.msgs.clear();

  // ---- Y: READ (1 PSN), CMP_SWAP. An ATOMIC_ACK for the READ is refused, its READ_RESP_ONLY passes;
  // then an ACK covering the CMP_SWAP is an implicit NAK; its ATOMIC_ACK and RDDONE complete it.
  b.post(Y, 1, true, kRead);
  b.post(Y, 1, true, kCswap);
  b.run(4);
  const Entry rd = b.qp(Y).ring[0], cs2 = b.qp(Y).ring[1];
  b.atom_ack(Y, rd.first);
  verdict(false, 0, "an ATOMIC_ACK for a READ");
  if (!b.failed()) cov.hit("at_kind_mismatch_atomic_ack");
  b.rr(Y, rd.first, true, true);
  verdict(true, 0, "the READ's ONLY response");
  b.rddone(Y, rd.first);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::RDMA_READ);
  b.cqes.clear();
  b.ack(Y, kAck, cs2.first);
  ASSERT_TRUE(b.wait_msg(40, ev));
  EXPECT_FALSE(ev.fail);
  EXPECT_EQ(ev.idx, 1u);
  EXPECT_EQ(ev.psn, cs2.first);
  EXPECT_TRUE(b.cqes.empty());
  b.run(8);
  b.atom_ack(Y, cs2.first);
  verdict(true, 1, "the CMP_SWAP's ATOMIC_ACK after the rewind");
  b.rddone(Y, cs2.first);
  b.run(20);
  ASSERT_EQ(b.cqes.size(), 1u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::COMP_SWAP);
  EXPECT_EQ(b.cqes[0].status, st::SUCCESS);
  EXPECT_EQ(b.cqes[0].wrid, cs2.wrid);
  if (!b.failed()) cov.hit("at_implicit_nak_after_read");
  b.cqes.clear();
  b.msgs.clear();

  // ---- Z: FETCH_ADD, SEND: RDDONE completes the FETCH_ADD (FETCH_ADD completion), then the SEND's ACK.
  b.post(Z, 1, true, kFadd);
  b.post(Z, 1);
  b.run(4);
  const Entry fa2 = b.qp(Z).ring[0];
  b.atom_ack(Z, fa2.first);
  verdict(true, 0, "Z's ATOMIC_ACK");
  b.rddone(Z, fa2.first);
  b.ack(Z, kAck, b.qp(Z).ring[1].last);
  b.run(30);
  ASSERT_EQ(b.cqes.size(), 2u);
  EXPECT_EQ(b.cqes[0].op, tmnic::hwif::wc_op::FETCH_ADD);
  EXPECT_EQ(b.cqes[0].status, st::SUCCESS);
  EXPECT_EQ(b.cqes[0].wrid, fa2.wrid);
  EXPECT_EQ(b.cqes[1].op, tmnic::hwif::wc_op::SEND);
  EXPECT_TRUE(b.msgs.empty());
  if (!b.failed()) cov.hit("at_done_fetch_add");
  EXPECT_TRUE(b.idle());
  cov.report("completer_atomic");
}

TEST(Completer, RandomTrafficAgainstModel) {
  Coverage cov(coverage_points());
  const Knobs mixes[] = {
      // name           ack   lerr   cmd_err  send  cqe_ready msg_ready rnr
      {"steady",        0.3,  0.002, 0.0005,  0.5,  0.9,      0.8,      0.0},
      {"back_pressure", 0.5,  0.004, 0.001,   0.6,  0.2,      0.2,      0.0},
      {"errors",        0.4,  0.02,  0.005,   0.5,  0.7,      0.5,      0.0},
      {"acks_only",     0.9,  0.0,   0.0,     0.2,  1.0,      1.0,      0.0},
      {"rnr_storm",     0.6,  0.0,   0.0,     0.3,  0.9,      0.9,      0.9},
  };
  Stopwatch sw;
  uint64_t cyc = 0, cqes = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    CompBench b(seed, cov);
    for (int round = 0; round < 3 && !b.failed(); ++round)
      for (const Knobs& k : mixes) {
        SCOPED_TRACE(k.name);
        b.run(k, 20000);
        if (!b.failed()) b.drain();
        if (b.failed()) break;
      }
    ASSERT_FALSE(b.failed());
    cyc += b.cycles();
    cqes += b.cqes();
  }
  report_speed("completer", "busy", cyc, sw.seconds());
  std::printf("[completer] NUM_QP=%u OUTS=%u: %llu CQEs\n", kNumQp, kOuts, (unsigned long long)cqes);
  cov.report("completer");
}

}  // namespace
