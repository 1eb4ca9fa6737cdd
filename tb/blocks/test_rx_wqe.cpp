// tmnic_rx_wqe against a model of the responder's receive-WQE rules (docs/architecture.md,
// docs/tag-matching.md):
//   - a QP without an SRQ takes WQE rq_idx of its receive queue if one is posted (rq_avail), else RNR;
//   - a QP on a plain SRQ takes the SRQ's next WQE (the SRQ's ci moves on) if one is posted and the
//     SRQ is valid, else RNR;
//   - on a TM-SRQ, a payload of at least a TMH whose opcode is EAGER or RNDV is looked up by its tag
//     (commit_miss = the SRQ has a WQE): a hit lands in the tag buffer of the handle (wr_id 0, one SGE,
//     index = handle - tag_base, an EAGER's TMH skipped), an unexpected miss takes the next SRQ WQE,
//     anything else is RNR; an untagged message takes the next SRQ WQE or is RNR;
//   - the WQE's SGEs are checked against the MR table (IBA local protection, LOCAL_WRITE, the PD of
//     the queue the WQE came from: the QP's for its receive queue, the SRQ's otherwise), each passing
//     SGE goes out to the scatter table, the walk stops at the first failure;
//   - the SRQ entry is not used in a cycle where it is stale (srq_fresh low: the test drives garbage);
//   - a flush fetches WQE flush_idx of the receive queue and shows its wr_id.
// Checked: every DMA request (address, length, held until taken), every lookup (tag, commit_miss, held),
// every scatter-table write, the outcome (rnr or done) and every field of done, idle_o, and a bound on
// the time an outcome takes.
// Stimulus: random QP/SRQ configurations and payload heads, doorbells and SRQ resets (to the SRQs
// not in use during an operation), lookup answers and ADDs pending on the matched handle, random
// latency, gaps and back-pressure on the DMA and the lookup port, a random MR table.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "Vtmnic_rx_wqe.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/fail.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "mr.hpp"
#include "tmnic/hwif.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8, kStride = hw::WQE_STRIDE, kNsge = hw::WQE_MAX_SGE;
constexpr unsigned kNumMr = 64, kSrq = 16, kEntries = 1024, kTmh = hw::TMH_SIZE;
enum Kind : unsigned { kPlain = 0, kMatched = 1, kUnexp = 2, kNotag = 3 };  // tmnic_pkg rx_kind_e

struct SrqCfg {
  bool valid = false, tm = false;
  uint64_t base = 0;
  unsigned log = 0;
  uint32_t pd = 0;
  uint16_t tag_base = 0;
};

// IBA local protection for a scatter list (LOCAL_WRITE), written independently of the RTL.
bool mr_ok(const Mr& m, const Sge& s, uint32_t pd) {
  const unsigned __int128 end_a = static_cast<unsigned __int128>(s.addr) + s.len;
  const unsigned __int128 end_m = static_cast<unsigned __int128>(m.va) + m.len;
  return m.valid && m.key == s.key && m.pd == pd && s.addr >= m.va && end_a <= end_m && (m.access & 1);
}

// What one start must end in.
struct Exp {
  bool rnr = false, fetch = false, srq_fetch = false, lookup = false, commit_miss = false, rq_inc = false;
  bool rndv = false, tm = false;
  Kind kind = kPlain;
  int lk_out = 0;                 // lookup answer: 0 hit, 1 unexpected, 2 neither (blocked / no WQE)
  unsigned handle = 0, skip = 0, srq = 0;
  uint64_t faddr = 0, wrid = 0, tag = 0;
  uint32_t ctx = 0, pd = 0;
  uint16_t idx = 0;
  unsigned nsge = 0;
  std::vector<Sge> sges;
};

class WqeBench {
 public:
  WqeBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_rx_wqe>(ctx_.get())), rng_(seed),
        cov_(cov) {
    new_tables();
    top_->rst_ni = 0;
    top_->clk_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
  }
  ~WqeBench() { top_->final(); }

  struct Knobs {
    double start, flush, db, rd_ready, lk_ready, gap, pend, stale;
    unsigned max_lat;
  };
  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k);
  }
  uint64_t cycles() const { return cyc_; }
  uint64_t outcomes() const { return outcomes_; }

 private:
  template <class... A>
  void fail(const A&... a) {
    fail_at(cyc_, a...);
  }
  uint64_t u(uint64_t lo, uint64_t hi) { return urand(rng_, lo, hi); }

  void new_tables() {
    for (unsigned i = 0; i < kNumMr; ++i) {
      Mr& m = mr_[i];
      m.valid = chance(rng_, 0.95);
      m.key = (i << hw::MR_KEY_SHIFT) | static_cast<uint32_t>(u(0, 255));
      m.pd = static_cast<uint32_t>(u(1, 3));
      m.access = static_cast<uint32_t>(u(0, 7)) | (chance(rng_, 0.8) ? 1u : 0u);
      m.len = u(1, 1ull << 20);
      m.va = u(0, 1ull << 40) << 12;
      m.iova = rng_();
    }
    for (unsigned s = 0; s < kSrq; ++s) {
      SrqCfg& c = srq_[s];
      c.valid = chance(rng_, 0.9);
      c.tm = chance(rng_, 0.5);
      c.base = (u(0, 1ull << 36) << 12);
      c.log = static_cast<unsigned>(u(0, 10));
      c.pd = static_cast<uint32_t>(u(1, 3));
      c.tag_base = static_cast<uint16_t>(chance(rng_, 0.5) ? 0 : u(0, kEntries - 1));
    }
  }
  // An SGE that passes for pd (mostly), or one that breaks one rule.
  Sge make_sge(uint32_t pd) {
    const unsigned i = static_cast<unsigned>(u(0, kNumMr - 1));
    const Mr& m = mr_[i];
    Sge s;
    s.key = m.key;
    s.addr = m.va + u(0, m.len - 1);
    s.len = static_cast<uint32_t>(u(0, m.va + m.len - s.addr));
    if (chance(rng_, 0.7)) {  // aim at an MR of this PD with LOCAL_WRITE
      for (unsigned t = 0; t < kNumMr; ++t) {
        const Mr& g = mr_[(i + t) % kNumMr];
        if (g.valid && g.pd == pd && (g.access & 1)) {
          s.key = g.key;
          s.addr = g.va + u(0, g.len - 1);
          s.len = static_cast<uint32_t>(u(0, g.va + g.len - s.addr));
          break;
        }
      }
      return s;
    }
    switch (u(0, 3)) {
      case 0: s.key ^= static_cast<uint32_t>(u(1, 255)); break;  // foreign key, same MR slot
      case 1: s.len = static_cast<uint32_t>(m.va + m.len - s.addr + 1); break;  // one byte past the end
      case 2: s.addr = m.va - 1; s.len = 1; break;                             // one byte below
      default: break;                                                           // any PD / access
    }
    return s;
  }
  // A WQE in host memory at addr, its SGEs aimed at pd.
  void make_wqe(Exp& e, uint32_t pd) {
    e.nsge = chance(rng_, 0.08) ? static_cast<unsigned>(u(kNsge + 1, kNsge + 3)) : static_cast<unsigned>(u(0, kNsge));
    e.wrid = rng_();
    e.sges.clear();
    std::array<uint8_t, kStride> w{};
    for (auto& b : w) b = static_cast<uint8_t>(u(0, 255));
    for (unsigned i = 0; i < 8; ++i) w[hw::wqe::WR_ID_OFF + i] = static_cast<uint8_t>(e.wrid >> (8 * i));
    w[hw::wqe::NUM_SGE_OFF] = static_cast<uint8_t>(e.nsge);
    for (unsigned k = 0; k < kNsge; ++k) {
      const Sge s = make_sge(pd);
      e.sges.push_back(s);
      uint8_t* p = &w[hw::wqe::SGE_OFF + 16 * k];
      for (unsigned i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(s.addr >> (8 * i));
      for (unsigned i = 0; i < 4; ++i) p[8 + i] = static_cast<uint8_t>(s.len >> (8 * i));
      for (unsigned i = 0; i < 4; ++i) p[12 + i] = static_cast<uint8_t>(s.key >> (8 * i));
    }
    wqe_ = w;
  }

  // A new operation: the QP, its queue, the payload head and the expected outcome.
  void new_start(const Knobs& k) {
    Exp e;
    const unsigned mode = static_cast<unsigned>(u(0, 9));  // 0-2 receive queue, else an SRQ
    has_srq_ = mode >= 3;
    srq_i_ = static_cast<unsigned>(u(0, kSrq - 1));
    if (has_srq_ && mode >= 6) {  // bias to TM-SRQs
      for (unsigned t = 0; t < kSrq; ++t)
        if (srq_[(srq_i_ + t) % kSrq].tm && srq_[(srq_i_ + t) % kSrq].valid) {
          srq_i_ = (srq_i_ + t) % kSrq;
          break;
        }
    }
    e.srq = srq_i_;
    qp_pd_ = static_cast<uint32_t>(u(1, 3));
    rq_base_ = u(0, 1ull << 36) << 12;
    rq_log_ = static_cast<unsigned>(u(0, 12));
    rq_idx_ = static_cast<uint16_t>(rng_());
    rq_avail_ = chance(rng_, 0.8);
    stale_ = has_srq_ && chance(rng_, k.stale);
    // The payload: a TMH (tagged or not) or anything, of a random length.
    switch (u(0, 9)) {
      case 0: pay_len_ = 0; break;
      case 1: pay_len_ = static_cast<unsigned>(u(1, kTmh - 1)); break;
      case 2: pay_len_ = kTmh; break;
      default: pay_len_ = static_cast<unsigned>(u(kTmh + 1, 4096)); break;
    }
    for (auto& b : head_) b = static_cast<uint8_t>(u(0, 255));
    const unsigned o = static_cast<unsigned>(u(0, 6));
    head_[0] = o < 3 ? hw::tmh_op::EAGER : o < 5 ? hw::tmh_op::RNDV : o == 5 ? hw::tmh_op::NO_TAG : head_[0];
    beg_at_ = cyc_ + (chance(rng_, 0.3) ? u(1, 12) : 0);

    const SrqCfg& c = srq_[srq_i_];
    const bool srq_has = c.valid && sci_[srq_i_] != spi_[srq_i_];
    auto srq_fetch = [&](Kind kind) {
      e.fetch = e.srq_fetch = true;
      e.kind = kind;
      e.idx = sci_[srq_i_];
      e.faddr = c.base + (uint64_t(e.idx) & ((1ull << c.log) - 1)) * kStride;
      e.pd = c.pd;
      make_wqe(e, e.pd);
    };
    if (!has_srq_) {
      cov_.hit("rq");
      if (!rq_avail_) {
        e.rnr = true;
      } else {
        e.fetch = true;
        e.rq_inc = true;
        e.idx = rq_idx_;
        e.faddr = rq_base_ + (uint64_t(rq_idx_) & ((1ull << rq_log_) - 1)) * kStride;
        e.pd = qp_pd_;
        make_wqe(e, e.pd);
      }
    } else if (!(c.valid && c.tm)) {
      cov_.hit(c.valid ? "srq" : "srq_invalid");
      if (srq_has) srq_fetch(kPlain);
      else e.rnr = true;
    } else {
      e.tm = true;
      const uint8_t op = head_[0];
      const bool tagged = pay_len_ >= kTmh && (op == hw::tmh_op::EAGER || op == hw::tmh_op::RNDV);
      if (!tagged) {
        cov_.hit("tm_notag");
        if (srq_has) srq_fetch(kNotag);
        else e.rnr = true;
      } else {
        e.lookup = true;
        e.commit_miss = srq_has;
        e.rndv = op == hw::tmh_op::RNDV;
        for (int i = 0; i < 8; ++i) e.tag = (e.tag << 8) | head_[8 + i];
        for (int i = 0; i < 4; ++i) e.ctx = (e.ctx << 8) | head_[4 + i];
        const unsigned r = static_cast<unsigned>(u(0, 9));
        e.lk_out = r < 5 ? 0 : (r < 8 && srq_has) ? 1 : 2;
        if (e.lk_out == 0) {
          cov_.hit(e.rndv ? "tm_match_rndv" : "tm_match_eager");
          e.kind = kMatched;
          e.handle = static_cast<unsigned>(u(0, kEntries - 1));
          e.idx = static_cast<uint16_t>(e.handle - c.tag_base);
          e.skip = e.rndv ? 0 : kTmh;
          e.wrid = 0;
          e.nsge = 1;
          e.pd = c.pd;
          e.sges = {make_sge(e.pd)};
          tb_[e.handle] = e.sges[0];
        } else if (e.lk_out == 1) {
          cov_.hit("tm_unexpected");
          srq_fetch(kUnexp);
        } else {
          cov_.hit("tm_rnr");
          e.rnr = true;
        }
      }
    }
    if (e.rnr) e.kind = kPlain;
    // The stream of checked SGEs and the verdict.
    sg_exp_.clear();
    sg_n_ = 0;
    ok_exp_ = e.nsge <= kNsge;
    cap_exp_ = 0;
    for (unsigned i = 0; i < std::min(e.nsge, kNsge); ++i) {
      const Sge& s = e.sges[i];
      const Mr& m = mr_[(s.key >> hw::MR_KEY_SHIFT) % kNumMr];
      if (!mr_ok(m, s, e.pd)) {
        ok_exp_ = false;
        break;
      }
      sg_exp_.push_back({i, s.addr - m.va + m.iova, s.len});
      cap_exp_ += s.len;
    }
    e_ = e;
  }

  void drive_srq(const SrqCfg& c, bool garbage) {
    SrqCfg g = c;
    if (garbage) {  // a stale registered read: another SRQ's entry
      g = srq_[(srq_i_ + 1 + u(0, kSrq - 2)) % kSrq];
      g.valid = chance(rng_, 0.5);
      g.tm = chance(rng_, 0.5);
    }
    auto& s = top_->scfg_i;
    for (unsigned i = 0; i < 7; ++i) s[i] = static_cast<uint32_t>(rng_());   // fields the block does not read: noise
    s[6] &= (1u << (202 - 192)) - 1;                                         // (srq_cfg_t is 202 bits)
    set_sig_bits(s, 201, 1, g.valid);
    set_sig_bits(s, 137, 64, g.base);
    set_sig_bits(s, 133, 4, g.log);
    set_sig_bits(s, 117, 16, g.pd);
    set_sig_bits(s, 116, 1, g.tm);
    set_sig_bits(s, 16, 16, g.tag_base);
  }

  void step(const Knobs& k) {
    // The flushed WQE's wr_id, in the cycle after flush_last_o (registers only: before any input)
    if (flush_shown_) {
      flush_shown_ = false;
      if (top_->wrid_o != flush_wrid_) return fail("flushed wr_id 0x", std::hex, top_->wrid_o, ", model 0x", flush_wrid_);
      cov_.hit("flush");
    }
    // ---------------- drive
    bool start = false, flush = false;
    if (op_ == OP_NONE && chance(rng_, k.start)) {
      start = true;
      new_start(k);
      op_ = OP_START;
      op_since_ = cyc_;
      lk_state_ = e_.lookup ? 1 : 0;
      rd_state_ = e_.fetch ? 1 : 0;
    } else if (op_ == OP_NONE && chance(rng_, k.flush)) {
      flush = true;
      rq_base_ = u(0, 1ull << 36) << 12;
      rq_log_ = static_cast<unsigned>(u(0, 12));
      flush_idx_ = static_cast<uint16_t>(rng_());
      Exp e;
      e.fetch = true;
      e.faddr = rq_base_ + (uint64_t(flush_idx_) & ((1ull << rq_log_) - 1)) * kStride;
      make_wqe(e, 1);
      flush_wrid_ = e.wrid;
      e_ = e;
      op_ = OP_FLUSH;
      op_since_ = cyc_;
      rd_state_ = 1;
      lk_state_ = 0;
    }
    top_->start_i = start;
    top_->flush_i = flush;
    top_->flush_idx_i = flush_idx_;
    top_->has_srq_i = has_srq_;
    top_->srq_i = srq_i_;
    const bool stale_now = start && stale_;
    top_->srq_fresh_i = !stale_now;
    drive_srq(srq_[srq_i_], stale_now);
    top_->pd_i = qp_pd_;
    top_->rq_base_i = rq_base_;
    top_->rq_log_i = rq_log_;
    top_->rq_idx_i = rq_idx_;
    top_->rq_avail_i = rq_avail_;
    top_->pay_len_i = pay_len_;
    top_->head_beg_i = op_ == OP_START && pay_len_ > 0 && cyc_ >= beg_at_;
    for (unsigned i = 0; i < 4; ++i) {
      uint32_t w = 0;
      for (unsigned b = 0; b < 4; ++b) w |= static_cast<uint32_t>(head_[4 * i + b]) << (8 * b);
      top_->head_first_i[i] = w;
    }
    // SRQ doorbells and resets: any SRQ while idle, the others during an operation
    const bool db = chance_nz(rng_, k.db);
    unsigned db_idx = chance(rng_, 0.1) ? static_cast<unsigned>(u(kSrq, 4095)) : static_cast<unsigned>(u(0, kSrq - 1));
    const bool rst = !start && op_ == OP_NONE && chance(rng_, k.db * 0.05);
    const unsigned rst_idx = static_cast<unsigned>(u(0, kSrq - 1));
    if (op_ != OP_NONE && has_srq_ && db_idx == srq_i_) db_idx = (srq_i_ + 1) % kSrq;
    const uint16_t db_pi = static_cast<uint16_t>(db_idx < kSrq ? sci_[db_idx] + u(0, chance(rng_, 0.3) ? 0 : 4) : rng_());
    top_->db_i = db && !start;   // (a doorbell in the start cycle would change what the model decided)
    top_->db_idx_i = db_idx;
    top_->db_pi_i = db_pi;
    top_->srq_reset_i = rst;
    top_->srq_reset_idx_i = rst_idx;
    // MR table and tag buffer: registered reads
    set_mr(mr_[mr_idx_q_ % kNumMr]);
    set_sig_bits(top_->tb_rdata_i, 0, 64, tb_[tb_raddr_q_].addr);
    set_sig_bits(top_->tb_rdata_i, 64, 32, tb_[tb_raddr_q_].len);
    set_sig_bits(top_->tb_rdata_i, 96, 32, tb_[tb_raddr_q_].key);
    // Lookup port
    const bool lk_ready = chance(rng_, k.lk_ready);
    top_->lk_ready_i = lk_ready;
    const bool lk_rsp = lk_state_ == 3 && cyc_ >= lk_at_;
    top_->lk_rsp_valid_i = lk_rsp;
    top_->lk_rsp_hit_i = lk_rsp && e_.lk_out == 0;
    top_->lk_rsp_unexp_i = lk_rsp && e_.lk_out == 1;
    top_->lk_rsp_handle_i = lk_rsp ? e_.handle : static_cast<unsigned>(u(0, kEntries - 1));
    const bool pend = chance_nz(rng_, k.pend);
    top_->add_pend_i = pend;
    top_->add_pend_handle_i = (pend && chance(rng_, 0.5)) ? e_.handle : static_cast<unsigned>(u(0, kEntries - 1));
    if (pend && top_->add_pend_handle_i == e_.handle && lk_state_ == 4) cov_.hit("add_pending_on_match");
    // DMA read responses
    const bool rd_ready = chance(rng_, k.rd_ready);
    top_->rd_ready_i = rd_ready;
    bool beat = false, last = false;
    if (rd_state_ == 3 && lat_ == 0 && !chance_nz(rng_, k.gap)) {
      beat = true;
      last = rsp_k_ + 1 == kStride / kBytes;
      for (unsigned i = 0; i < kBytes; ++i) set_byte(top_->rsp_data_i.data(), i, wqe_[rsp_k_ * kBytes + i]);
      top_->rsp_off_i = static_cast<int16_t>(rsp_k_ * kBytes);
    }
    top_->rsp_valid_i = beat;
    top_->rsp_last_i = last;
    if (rd_state_ == 3 && lat_ > 0) --lat_;
    top_->eval();

    // ---------------- check
    const bool busy = op_ != OP_NONE && !start && !flush;
    if (bool(top_->idle_o) == busy) return fail("idle_o ", int(top_->idle_o), " while the model is ", busy ? "busy" : "idle");
    if (op_ != OP_NONE && cyc_ - op_since_ > 4000) return fail("no outcome after 4000 cycles");
    // DMA request
    if (top_->rd_valid_o) {
      if (rd_state_ != 1 && rd_state_ != 2) return fail("DMA request with no fetch expected");
      if (top_->rd_addr_o != e_.faddr || top_->rd_len_o != kStride)
        return fail("DMA request 0x", std::hex, top_->rd_addr_o, "+", std::dec, top_->rd_len_o, ", model 0x", std::hex,
                    e_.faddr);
      rd_state_ = 2;
      if (!rd_ready) cov_.hit("rd_backpressure");
    } else if (rd_state_ == 2) {
      return fail("DMA request withdrawn before it was taken");
    }
    // Lookup request
    if (top_->lk_valid_o) {
      if (lk_state_ != 1 && lk_state_ != 2) return fail("lookup with none expected");
      if (top_->lk_tag_o != e_.tag || bool(top_->lk_commit_miss_o) != e_.commit_miss)
        return fail("lookup {tag ", top_->lk_tag_o, " commit_miss ", int(top_->lk_commit_miss_o), "}, model {", e_.tag, " ",
                    e_.commit_miss, "}");
      lk_state_ = 2;
      if (!lk_ready) cov_.hit("lookup_backpressure");
    } else if (lk_state_ == 2) {
      return fail("lookup withdrawn before it was taken");
    }
    // Scatter-table writes
    if (top_->sg_we_o) {
      if (sg_n_ >= sg_exp_.size()) return fail("SGE ", int(top_->sg_idx_o), " written, model has ", sg_exp_.size());
      const auto& x = sg_exp_[sg_n_++];
      if (top_->sg_idx_o != x.idx || top_->sg_iova_o != x.iova || top_->sg_len_o != x.len)
        return fail("SGE write {", int(top_->sg_idx_o), " 0x", std::hex, top_->sg_iova_o, " ", std::dec, top_->sg_len_o,
                    "}, model {", x.idx, " 0x", std::hex, x.iova, " ", std::dec, x.len, "}");
    }
    // Outcomes
    if (top_->flush_last_o) {
      if (op_ != OP_FLUSH || rd_state_ != 3 || !last) return fail("flush_last_o unexpected");
      flush_shown_ = true;
    }
    // RNR: rnr_now_o with the start (no lookup needed), or rnr_o later
    const bool rnr = top_->rnr_o || (start && top_->rnr_now_o);
    if (start && top_->rnr_o) return fail("rnr_o in the start cycle (rnr_now_o's)");
    if (rnr && top_->done_o) return fail("RNR and done_o together");
    if (rnr || top_->done_o) {
      if (op_ != OP_START) return fail("outcome without a start");
      if (rnr != e_.rnr) return fail("RNR ", rnr, " (rnr_now_o ", int(top_->rnr_now_o), "), model ", e_.rnr);
      if (e_.fetch && rd_state_ != 4) return fail("outcome before the WQE was read");
      if (e_.lookup && lk_state_ != 5) return fail("outcome before the lookup ended");
      if (top_->done_o) {
        const bool ok = top_->ok_o;
        if (ok != ok_exp_ || (ok && top_->cap_o != cap_exp_) || sg_n_ != sg_exp_.size())
          return fail("check ok ", ok, " cap ", top_->cap_o, " SGEs ", sg_n_, ", model ok ", ok_exp_, " cap ", cap_exp_,
                      " SGEs ", sg_exp_.size());
        if (top_->kind_o != e_.kind || bool(top_->rndv_o) != e_.rndv || top_->idx_o != e_.idx ||
            bool(top_->rq_inc_o) != e_.rq_inc || top_->skip_o != e_.skip || top_->wrid_o != e_.wrid)
          return fail("done {kind ", int(top_->kind_o), " rndv ", int(top_->rndv_o), " idx ", top_->idx_o, " rq_inc ",
                      int(top_->rq_inc_o), " skip ", int(top_->skip_o), " wrid ", top_->wrid_o, "}, model {", e_.kind, " ",
                      e_.rndv, " ", e_.idx, " ", e_.rq_inc, " ", e_.skip, " ", e_.wrid, "}");
        if (e_.kind == kMatched && (top_->tag_o != e_.tag || top_->ctx_o != e_.ctx))
          return fail("matched tag ", top_->tag_o, " ctx ", top_->ctx_o, ", model ", e_.tag, " ", e_.ctx);
        cov_.hit(ok ? "sge_ok" : "sge_fail");
      } else {
        cov_.hit(start ? "rnr_at_start" : "rnr_later");
      }
      if (stale_) cov_.hit("stale_srq_entry");
      ++outcomes_;
      op_ = OP_NONE;
    } else if (start && e_.rnr && !e_.tm && !stale_) {
      return fail("no RNR in the start cycle");
    }

    // ---------------- model of this edge
    if (rd_state_ == 2 && rd_ready) {
      rd_state_ = 3;
      rsp_k_ = 0;
      lat_ = static_cast<unsigned>(u(0, k.max_lat));
      if (e_.srq_fetch) ++sci_[e_.srq];
    }
    if (beat) ++rsp_k_;
    if (last) rd_state_ = 4;
    if (lk_state_ == 2 && lk_ready) {
      lk_state_ = 3;
      lk_at_ = cyc_ + 1 + u(0, k.max_lat);
    } else if (lk_rsp) {
      lk_state_ = e_.lk_out == 0 ? 4 : 5;
    }
    if (top_->tb_re_o) {
      if (lk_state_ != 4 || top_->tb_raddr_o != e_.handle) return fail("tag buffer read of ", top_->tb_raddr_o);
      lk_state_ = 5;
    }
    tb_raddr_q_ = top_->tb_re_o ? top_->tb_raddr_o : tb_raddr_q_;
    mr_idx_q_ = top_->mr_idx_o;
    if (op_ == OP_FLUSH && last) op_ = OP_NONE;
    if (top_->db_i && db_idx < kSrq) spi_[db_idx] = db_pi;
    if (rst) {
      spi_[rst_idx] = sci_[rst_idx] = 0;
      if (chance(rng_, 0.3)) new_tables_srq(rst_idx);
    }
    if (op_ == OP_NONE && chance(rng_, 0.001)) new_tables();
    clock_tick(*top_, *ctx_);
    ++cyc_;
  }
  void new_tables_srq(unsigned s) {
    srq_[s].tm = !srq_[s].tm;
    srq_[s].pd = static_cast<uint32_t>(u(1, 3));
    cov_.hit("srq_reconfigured");
  }
  void set_mr(const Mr& m) {
    pack_mr(m, top_->mr_rd_i.data());
  }

  struct SgOut {
    unsigned idx;
    uint64_t iova;
    uint32_t len;
  };
  enum { OP_NONE, OP_START, OP_FLUSH };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rx_wqe> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  uint64_t cyc_ = 0, outcomes_ = 0, op_since_ = 0, beg_at_ = 0, lk_at_ = 0, rq_base_ = 0;
  std::array<Mr, kNumMr> mr_{};
  std::array<SrqCfg, kSrq> srq_{};
  std::array<uint16_t, kSrq> spi_{}, sci_{};
  std::array<Sge, kEntries> tb_{};
  std::array<uint8_t, kStride> wqe_{};
  std::array<uint8_t, 16> head_{};
  std::vector<SgOut> sg_exp_;
  Exp e_;
  int op_ = OP_NONE;
  // rd_state_: 0 none, 1 expected, 2 offered, 3 responding, 4 done; lk_state_: 0 none, 1 expected,
  // 2 offered, 3 answer pending, 4 hit (buffer read expected), 5 done
  int rd_state_ = 0, lk_state_ = 0;
  unsigned rsp_k_ = 0, lat_ = 0, srq_i_ = 0, rq_log_ = 0, pay_len_ = 0, sg_n_ = 0, tb_raddr_q_ = 0, mr_idx_q_ = 0;
  uint32_t qp_pd_ = 1;
  uint16_t rq_idx_ = 0, flush_idx_ = 0;
  uint64_t cap_exp_ = 0, flush_wrid_ = 0;
  bool has_srq_ = false, rq_avail_ = false, stale_ = false, ok_exp_ = false, flush_shown_ = false;
};

std::vector<std::string> coverage_points() {
  return {"rq", "srq", "srq_invalid", "tm_notag", "tm_match_eager", "tm_match_rndv", "tm_unexpected", "tm_rnr",
          "sge_ok", "sge_fail", "rnr_at_start", "rnr_later", "stale_srq_entry", "flush", "rd_backpressure",
          "lookup_backpressure", "add_pending_on_match", "srq_reconfigured"};
}

TEST(RxWqe, RandomStimulusAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0, outcomes = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    Coverage cov(coverage_points());
    WqeBench b(seed, cov);
    b.run({0.3, 0.05, 0.3, 0.6, 0.6, 0.2, 0.2, 0.3, 6}, 30000);   // back-pressure, gaps, stale SRQ reads
    b.run({1.0, 0.0, 0.1, 1.0, 1.0, 0.0, 0.0, 0.0, 0}, 10000);    // back to back, no waiting anywhere
    b.run({0.05, 0.05, 0.5, 0.3, 0.3, 0.5, 0.5, 0.5, 30}, 10000); // sparse, slow memory and engine
    cycles += b.cycles();
    outcomes += b.outcomes();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(outcomes, 1000u);
  report_speed("rx_wqe", "mix", cycles, sw.seconds());
  total.report("tmnic_rx_wqe");
}

}  // namespace
