// tmnic_tm_ops (the TM-SRQs' list-operation engine) against a scoreboard of its contract
// (docs/tag-matching.md, the RTL header):
//   - each SRQ's op ring is read in ring order from its consumer index, the ring's slots at
//     ops_base + (idx mod 2^ops_log) * 64, at most BATCH per DMA read and never past the ring's end;
//   - an SRQ that is not a valid TM-SRQ has its posted ops consumed without any effect;
//   - per op, in ring order: an unknown opcode or an ADD/DEL handle outside [0, tag_num) fails
//     without reaching the matching engine (TM_ERR completion if signaled); otherwise the engine gets
//     {ADD/DEL/SYNC, SRQ, tag_base + handle, tag, mask, SW_CNT flag, sw_cnt}, a successful ADD writes
//     its SGE {addr, length, lkey} to the tag-buffer RAM at that handle (add_pend_o names it until
//     then), and a signaled op completes to the SRQ's CQ with wr_id, its ring index, the opcode,
//     SUCCESS or TM_ERR as the engine answered, the handle and the engine's hardware count;
//   - a reconfiguration of an SRQ resets its indices and issues a CLEAR of its engine entries before
//     any later op of that SRQ. Of its old ring, at most the op being issued in that cycle still
//     reaches the engine; an op whose engine answer comes after the reconfiguration gets no
//     completion (one answered by then, or already offered, still completes); a successful ADD
//     still writes its buffer (the CLEAR removes its entry).
// The SRQ table is read as tmnic_ctx's registered port does (srq_rd_i is the entry srq_idx_o named
// one cycle earlier). Stimulus: 16 SRQs with random rings (1 to 64 slots), TM or not, random tag
// ranges; random posting bursts and doorbells (also to non-TM SRQs and numbers >= NUM_SRQ); ops of
// every kind with in- and out-of-range handles, signaled or not, with or without a software count;
// reconfigurations at any time (also while the SRQ's op is in flight); random DMA and engine latency,
// back-pressure on the DMA request, the engine's op channel and the completion output.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <map>
#include <string>

#include "Vtmnic_tm_ops.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/cqe_req.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
constexpr unsigned kSrq = 16, kEntries = 1024, kBatch = 8, kStride = 64, kSrqBits = 202;
constexpr unsigned kBeat = TB_DATA_W / 8;  // response beat: an op is kStride / kBeat of them
static_assert(kStride % kBeat == 0, "an op is whole beats");
constexpr unsigned kEoAdd = 0, kEoDel = 1, kEoSync = 2, kEoClear = 3;  // tmnic_tm_ops' engine codes

struct Op {
  uint64_t wr_id, tag, mask, sge_addr;
  uint8_t opcode, flags;
  uint16_t sw_cnt, idx;
  uint32_t handle, sge_len, sge_lkey;
  bool signaled() const { return flags & hw::tm_op_flag::SIGNALED; }
  bool has_cnt() const { return flags & hw::tm_op_flag::SW_CNT; }
  bool known() const { return opcode <= hw::tm_opcode::SYNC; }
  uint8_t byte(unsigned i) const {
    auto le = [i](uint64_t v, unsigned off, unsigned n) { return static_cast<uint8_t>(v >> (8 * (i - off)) & (i - off < n ? 0xFF : 0)); };
    if (i < 8) return le(wr_id, 0, 8);
    if (i == hw::tm_op::OPCODE_OFF) return opcode;
    if (i == hw::tm_op::FLAGS_OFF) return flags;
    if (i >= 10 && i < 12) return le(sw_cnt, 10, 2);
    if (i >= 12 && i < 16) return le(handle, 12, 4);
    if (i >= 16 && i < 24) return le(tag, 16, 8);
    if (i >= 24 && i < 32) return le(mask, 24, 8);
    if (i >= 32 && i < 40) return le(sge_addr, 32, 8);
    if (i >= 40 && i < 44) return le(sge_len, 40, 4);
    if (i >= 44 && i < 48) return le(sge_lkey, 44, 4);
    return static_cast<uint8_t>(0xA5 ^ i);  // reserved bytes: not zero, must be ignored
  }
};

struct SrqCfg {  // (the fields tmnic_tm_ops reads)
  bool valid = false, tm = false;
  uint64_t ops_base = 0;
  unsigned ops_log = 0;
  uint16_t cq = 0, tag_base = 0, tag_num = 0;
  bool is_tm() const { return valid && tm; }
};

class TmOpsBench {
 public:
  TmOpsBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_tm_ops>(ctx_.get())), rng_(seed), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    for (unsigned s = 0; s < kSrq; ++s) reconfigure(s, true);
  }
  ~TmOpsBench() { top_->final(); }

  void run(uint64_t n, double p_post, double p_reset) {
    for (uint64_t c = 0; c < n && !errors_; ++c) step(p_post, p_reset);
  }
  // Stop posting and let everything posted run out: then only malformed unsignaled ops (which leave
  // no trace) may remain unaccounted for.
  void drain() {
    for (uint64_t c = 0; c < 20000 && !errors_ && !quiet(); ++c) step(0.0, 0.0);
    if (!quiet()) return fail("ops still pending after the drain");
    for (Srq& q : srq_) {
      for (const Op& o : q.exp)
        if (well_formed(q.cfg, o) || o.signaled()) return fail("op " + std::to_string(o.idx) + " never executed");
      if (!q.exp.empty()) cov_.hit("malformed_unsignaled");
      q.exp.clear();
    }
  }
  uint64_t cycles() const { return cycles_; }
  unsigned errors() const { return errors_; }

 private:
  struct Srq {
    SrqCfg cfg;
    unsigned epoch = 0;
    uint16_t pi = 0, pi_db = 0, fetched = 0;  // posted; rung (as the block sees it); read by DMA
    std::map<uint16_t, Op> ring;         // by ring index (mod 2^16)
    std::deque<Op> exp;                  // posted ops not yet accounted for, in ring order
    bool clr = false;                    // a CLEAR is due before any later op
    // The previous configuration, until the CLEAR: one op of its ring may still be issued.
    SrqCfg old_cfg;
    std::deque<Op> old_exp;
    bool old_allowed = false;
    uint64_t reset_cycle = 0;
  };
  struct InFlight {                      // the op the engine has, until its effects are seen
    bool on = false, clear = false, responded = false, ok = false;
    bool aborted = false;                // reconfigured before the answer: no completion
    bool reset_seen = false;             // a reconfiguration of its SRQ since it was issued
    uint64_t reset_cycle = 0;
    unsigned srq = 0, epoch = 0;
    uint16_t cq = 0, hw_cnt = 0;
    Op op{};
  };

  bool quiet() const {
    for (const Srq& s : srq_)
      if (s.clr) return false;
    return top_->idle_o && !fl_.on && !rd_pend_ && !rsp_on_ && !top_->cqe_valid_o && !top_->eo_valid_o;
  }
  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cycles_;
  }

  void reconfigure(unsigned s, bool initial) {
    Srq& q = srq_[s];
    SrqCfg& c = q.cfg;
    if (!q.clr) {  // (a second reconfiguration before the CLEAR: the block did nothing meanwhile)
      q.old_cfg = c;
      q.old_exp = q.exp;
      q.old_allowed = !initial;
    }
    c.valid = initial || chance(rng_, 0.9);
    c.tm = chance(rng_, 0.85);
    c.ops_log = static_cast<unsigned>(chance(rng_, 0.2) ? urand(rng_, 0, 2) : urand(rng_, 3, 6));
    c.ops_base = (static_cast<uint64_t>(s + 1) << 32) | (urand(rng_, 0, 0xFFFF) << 6);
    q.reset_cycle = cycles_;
    ++q.epoch;
    c.cq = static_cast<uint16_t>((q.epoch % 64) * kSrq + s);  // a CQE names its SRQ and epoch
    c.tag_num = static_cast<uint16_t>(chance(rng_, 0.1) ? 1 : urand(rng_, 1, 256));
    c.tag_base = static_cast<uint16_t>(urand(rng_, 0, kEntries - c.tag_num));
    q.pi = q.pi_db = q.fetched = 0;
    q.ring.clear();
    q.exp.clear();
    q.clr = !initial;
  }

  Op random_op(const Srq& q) {
    Op o{};
    o.wr_id = rng_();
    const unsigned k = static_cast<unsigned>(urand(rng_, 0, 99));
    o.opcode = k < 45 ? hw::tm_opcode::ADD : k < 70 ? hw::tm_opcode::DEL : k < 85 ? hw::tm_opcode::SYNC
                                                     : static_cast<uint8_t>(urand(rng_, 3, 255));
    o.flags = static_cast<uint8_t>((chance(rng_, 0.75) ? hw::tm_op_flag::SIGNALED : 0) |
                                   (chance(rng_, 0.2) ? hw::tm_op_flag::SW_CNT : 0) | (urand(rng_, 0, 63) << 2));
    o.sw_cnt = static_cast<uint16_t>(rng_());
    o.handle = chance(rng_, 0.85) ? static_cast<uint32_t>(urand(rng_, 0, q.cfg.tag_num - 1))
               : chance(rng_, 0.5) ? q.cfg.tag_num : static_cast<uint32_t>(urand(rng_, q.cfg.tag_num, 0xFFFFFFFFu));
    o.tag = rng_();
    o.mask = rng_();
    o.sge_addr = rng_();
    o.sge_len = static_cast<uint32_t>(rng_());
    o.sge_lkey = static_cast<uint32_t>(rng_());
    return o;
  }

  static bool well_formed(const SrqCfg& c, const Op& o) {
    return o.known() && (o.opcode == hw::tm_opcode::SYNC || o.handle < c.tag_num);
  }

  void pack_srq(unsigned s) {
    // srq_cfg_t, first field most significant: valid, base, log_size, pd, tm, ops_base, ops_log, cq,
    // tag_base, tag_num (the receive-ring fields are random: not this block's)
    const SrqCfg& c = srq_[s].cfg;
    unsigned pos = kSrqBits;
    auto put = [&](uint64_t v, unsigned w) { pos -= w; set_bits(top_->srq_rd_i.data(), pos, w, v); };
    put(c.valid, 1); put(rng_(), 64); put(rng_(), 4); put(rng_(), 16); put(c.tm && c.valid, 1);
    put(c.ops_base, 64); put(c.ops_log, 4); put(c.cq, 16); put(c.tag_base, 16); put(c.tag_num, 16);
  }

  void step(double p_post, double p_reset) {
    // ---------------- host: post ops, ring doorbells, reconfigure
    bool db = false;
    unsigned db_idx = 0;
    uint16_t db_pi = 0;
    if (chance(rng_, p_post)) {
      const unsigned s = static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
      Srq& q = srq_[s];
      const unsigned size = 1u << q.cfg.ops_log;
      const unsigned n = static_cast<unsigned>(urand(rng_, 1, chance(rng_, 0.3) ? 2 * kBatch : 3));
      for (unsigned i = 0; i < n && static_cast<uint16_t>(q.pi - q.fetched) < size; ++i) {
        Op o = random_op(q);
        o.idx = q.pi;
        q.ring[q.pi] = o;
        if (q.cfg.is_tm()) q.exp.push_back(o);
        ++q.pi;
      }
      db = true;
      db_idx = s;
      db_pi = q.pi;
      if (!q.cfg.is_tm()) cov_.hit("doorbell_non_tm_srq");
    } else if (chance(rng_, 0.002)) {
      db = true;
      db_idx = static_cast<unsigned>(urand(rng_, kSrq, 4095));  // no such SRQ: ignored
      db_pi = static_cast<uint16_t>(rng_());
    }
    bool rst = false;
    unsigned rst_idx = static_cast<unsigned>(chance(rng_, 0.5) ? urand(rng_, kSrq, 0xFFFF) : 0);
    if (chance(rng_, p_reset)) {
      rst = true;
      rst_idx = fl_.on && chance(rng_, 0.5) ? fl_.srq : static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    } else if (rst_idx >= kSrq && chance(rng_, 0.01)) {
      rst = true;  // out of range: ignored
    }
    if (db && rst && rst_idx == db_idx) db = false;  // software does not ring an SRQ it reconfigures
    top_->db_valid_i = db;
    top_->db_idx_i = db_idx;
    top_->db_pi_i = db_pi;
    top_->srq_reset_i = rst;
    top_->srq_reset_idx_i = rst_idx;
    if (rst && rst_idx < kSrq) {
      if (fl_.on && fl_.srq == rst_idx && !fl_.clear && !fl_.reset_seen) {
        fl_.reset_seen = true;
        fl_.reset_cycle = cycles_;
        cov_.hit(fl_.responded ? "reset_after_answer" : "reset_op_in_flight");
      }
      if (top_->cqe_valid_o && (unpack_cqe_req(top_->cqe_o.data(), 0).cq % kSrq) == rst_idx) cov_.hit("reset_with_cqe_offered");
      reconfigure(rst_idx, false);
      cov_.hit("srq_reset");
    }
    pack_srq(srq_idx_prev_);

    // ---------------- DMA read responder
    const bool rd_ready = chance(rng_, 0.6);
    top_->rd_ready_i = rd_ready;
    bool beat = false, last = false;
    if (rsp_on_ && rsp_lat_ == 0 && chance(rng_, 0.8)) {
      beat = true;
      last = rsp_k_ + 1 == rsp_n_;
      const uint64_t a = rsp_addr_ + uint64_t(rsp_k_) * kBeat;
      for (unsigned i = 0; i < kBeat; ++i) set_byte(top_->rsp_data_i.data(), i, host_byte(a + i));
      top_->rsp_off_i = static_cast<int16_t>(rsp_k_ * kBeat);
    }
    top_->rsp_valid_i = beat;
    top_->rsp_last_i = last;
    if (rsp_on_ && rsp_lat_ > 0) --rsp_lat_;

    // ---------------- matching engine
    const bool eo_ready = chance(rng_, 0.7);
    top_->eo_ready_i = eo_ready;
    bool rsp = false;
    if (fl_.on && !fl_.responded && eng_busy_ && eng_lat_ == 0) {
      rsp = true;
      fl_.responded = true;
      // (a reconfiguration in this same cycle is not seen by the block until the next one)
      fl_.aborted = fl_.reset_seen && fl_.reset_cycle < cycles_;
      if (fl_.aborted) cov_.hit("answer_after_reset");
      fl_.ok = fl_.clear || (fl_.op.opcode == hw::tm_opcode::ADD ? chance(rng_, 0.8) : chance(rng_, 0.7));
      fl_.hw_cnt = static_cast<uint16_t>(rng_());
      top_->eo_rsp_ok_i = fl_.ok;
      top_->eo_rsp_hw_cnt_i = fl_.hw_cnt;
      eng_busy_ = false;
    } else {
      top_->eo_rsp_ok_i = static_cast<bool>(rng_() & 1);
      top_->eo_rsp_hw_cnt_i = static_cast<uint16_t>(rng_());
    }
    top_->eo_rsp_valid_i = rsp;
    if (eng_busy_ && eng_lat_ > 0) --eng_lat_;

    const bool cqe_ready = chance(rng_, 0.6);
    top_->cqe_ready_i = cqe_ready;
    top_->eval();

    // ---------------- outputs
    check_dma_request(rd_ready);
    if (beat) {
      Srq& q = srq_[rsp_srq_];
      const bool op_end = ((rsp_k_ + 1) * kBeat) % kStride == 0;   // the op's last beat
      if (rsp_epoch_ == q.epoch && op_end) q.fetched = static_cast<uint16_t>(q.fetched + 1);
      ++rsp_k_;
      if (last) rsp_on_ = false;
    }
    if (top_->eo_valid_o && (!eo_valid_prev_ || eo_taken_prev_)) new_offer();
    eo_valid_prev_ = top_->eo_valid_o;
    eo_taken_prev_ = top_->eo_valid_o && eo_ready;
    if (top_->eo_valid_o && eo_ready) accept_eo();
    if (top_->tb_we_o) check_tb_write();
    if (top_->cqe_valid_o) {
      if (!cqe_ready) cov_.hit("cqe_backpressure");
      if (cqe_ready) check_cqe();
    }
    if (rsp) settle_answer();
    if (top_->srq_idx_o >= kSrq) fail("srq_idx_o out of range");
    srq_idx_prev_ = top_->srq_idx_o;
    if (db && db_idx < kSrq) srq_[db_idx].pi_db = db_pi;
    tick();
  }

  // After the engine's answer: what of the op remains to be seen (buffer write, completion).
  void settle_answer() {
    if (fl_.clear) {
      fl_.on = false;
      return;
    }
    const bool add_ok = fl_.op.opcode == hw::tm_opcode::ADD && fl_.ok;
    if (!add_ok && !(fl_.op.signaled() && !fl_.aborted)) fl_.on = false;
  }

  uint8_t host_byte(uint64_t a) const {
    const unsigned s = static_cast<unsigned>((a >> 32) - 1);
    if (s >= kSrq) return 0xEE;
    const Srq& q = srq_[s];
    const uint64_t off = a - q.cfg.ops_base;
    const uint16_t slot = static_cast<uint16_t>(off / kStride);
    // The slot's op of the current epoch (the ring index whose slot this is, counted from fetched).
    for (uint16_t i = q.fetched; i != q.pi; ++i)
      if ((i & ((1u << q.cfg.ops_log) - 1)) == slot) return q.ring.at(i).byte(static_cast<unsigned>(off % kStride));
    return 0xEE;  // not posted: garbage the block must not use
  }

  void check_dma_request(bool rd_ready) {
    if (rd_pend_) {
      if (!top_->rd_valid_o || top_->rd_addr_o != rd_addr_ || top_->rd_len_o != rd_len_) fail("DMA request changed before it was taken");
    } else if (top_->rd_valid_o) {
      const uint64_t a = top_->rd_addr_o;
      const unsigned len = top_->rd_len_o;
      const unsigned s = static_cast<unsigned>((a >> 32) - 1);
      if (s >= kSrq) return fail("DMA read outside every ring");
      const Srq& q = srq_[s];
      const unsigned size = 1u << q.cfg.ops_log;
      const uint16_t ci = q.fetched;
      const unsigned slot = ci & (size - 1);
      const unsigned avail = static_cast<uint16_t>(q.pi_db - ci);
      // The count was taken when the SRQ was picked (doorbells since then may have raised pi): at
      // least one op, at most what is rung, up to the ring's end and BATCH.
      const unsigned n_max = std::min({avail, size - slot, kBatch});
      if (q.clr && cycles_ - q.reset_cycle <= 2 && q.old_cfg.is_tm() && a >= q.old_cfg.ops_base &&
          a + len <= q.old_cfg.ops_base + (uint64_t(kStride) << q.old_cfg.ops_log) && len >= kStride && len <= kBatch * kStride) {
        // Requested as the SRQ was picked, just before its reconfiguration: the batch is void.
        cov_.hit("read_as_reconfigured");
        rd_pend_ = true;
        rd_addr_ = a;
        rd_len_ = len;
        rd_srq_ = s;
        rd_epoch_ = q.epoch - 1;
        return check_dma_accept(rd_ready);
      }
      if (!q.cfg.is_tm() || q.clr)
        return fail("DMA read of SRQ " + std::to_string(s) + " (TM " + std::to_string(q.cfg.is_tm()) + ", CLEAR due " +
                    std::to_string(q.clr) + ", reconfigured at cycle " + std::to_string(q.reset_cycle) + ") addr " + std::to_string(a) +
                    " len " + std::to_string(len) + " old base " + std::to_string(q.old_cfg.ops_base) + " log " +
                    std::to_string(q.old_cfg.ops_log) + " old tm " + std::to_string(q.old_cfg.is_tm()) + " new base " + std::to_string(q.cfg.ops_base));
      if (a != q.cfg.ops_base + uint64_t(slot) * kStride || len % kStride != 0 || len == 0 || len > n_max * kStride)
        return fail("DMA read of SRQ " + std::to_string(s) + " at 0x" + std::to_string(a) + " len " + std::to_string(len) +
                    ", expected slot " + std::to_string(slot) + " x 1.." + std::to_string(n_max));
      if (len == kBatch * kStride) cov_.hit("full_batch");
      if (len == (size - slot) * kStride && size - slot < avail) cov_.hit("batch_cut_by_ring_end");
      rd_pend_ = true;
      rd_addr_ = a;
      rd_len_ = len;
      rd_srq_ = s;
      rd_epoch_ = q.epoch;
    }
    check_dma_accept(rd_ready);
  }
  void check_dma_accept(bool rd_ready) {
    if (rd_pend_ && top_->rd_valid_o && rd_ready) {
      rd_pend_ = false;
      rsp_on_ = true;
      rsp_k_ = 0;
      rsp_n_ = rd_len_ / kBeat;
      rsp_addr_ = rd_addr_;
      rsp_srq_ = rd_srq_;
      rsp_epoch_ = rd_epoch_;
      rsp_lat_ = static_cast<unsigned>(urand(rng_, 0, 12));
    }
  }
  // A new engine op offered. A CLEAR was issued in the previous cycle: it covers the SRQ's
  // reconfigurations before that cycle; one in that very cycle needs another CLEAR.
  void new_offer() {
    if (top_->eo_code_o != kEoClear) return;
    const unsigned s = top_->eo_srq_o;
    if (s >= kSrq) return fail("eo_srq_o out of range");
    Srq& q = srq_[s];
    if (!q.clr) return fail("CLEAR of SRQ " + std::to_string(s) + " not reconfigured");
    if (q.reset_cycle + 1 < cycles_) {
      q.clr = false;
      q.old_allowed = false;
      q.old_exp.clear();
    } else {
      cov_.hit("reconfigured_as_clear_issued");
    }
  }

  // The next op of SRQ s that must show up, completing the malformed ones before it on the way.
  // Malformed ops are accounted for when their completion is seen (signaled) or skipped (not).
  void accept_eo() {
    const unsigned code = top_->eo_code_o, s = top_->eo_srq_o;
    if (fl_.on) return fail("engine op while another is in flight");
    if (s >= kSrq) return fail("eo_srq_o out of range");
    Srq& q = srq_[s];
    fl_ = InFlight{};
    fl_.on = true;
    fl_.srq = s;
    fl_.epoch = q.epoch;
    eng_busy_ = true;
    eng_lat_ = static_cast<unsigned>(urand(rng_, 0, 6));
    if (code == kEoClear) {  // (accounted for when offered: see new_offer)
      fl_.clear = true;
      cov_.hit("clear");
      return;
    }
    // Before its CLEAR, only one op of the previous configuration's ring (issued as it was replaced).
    const bool old = q.clr;
    if (old && !q.old_allowed) return fail("op of SRQ " + std::to_string(s) + " before its CLEAR");
    std::deque<Op>& exp = old ? q.old_exp : q.exp;
    const SrqCfg& cfg = old ? q.old_cfg : q.cfg;
    while (!exp.empty() && !well_formed(cfg, exp.front()) && !exp.front().signaled()) exp.pop_front();
    if (exp.empty()) return fail("engine op for SRQ " + std::to_string(s) + " with nothing posted");
    const Op o = exp.front();
    if (!well_formed(cfg, o)) return fail("engine op before the malformed op " + std::to_string(o.idx) + "'s completion");
    exp.pop_front();
    if (old) {
      q.old_allowed = false;
      fl_.reset_seen = true;            // (reconfigured before it was even taken: no completion)
      fl_.reset_cycle = 0;
      cov_.hit("op_issued_as_reconfigured");
    }
    fl_.op = o;
    fl_.cq = cfg.cq;
    const unsigned want = o.opcode == hw::tm_opcode::ADD ? kEoAdd : o.opcode == hw::tm_opcode::DEL ? kEoDel : kEoSync;
    const unsigned handle = (cfg.tag_base + o.handle) & (kEntries - 1);
    if (code != want || top_->eo_handle_o != handle || top_->eo_tag_o != o.tag || top_->eo_mask_o != o.mask ||
        bool(top_->eo_sw_cnt_vld_o) != o.has_cnt() || (o.has_cnt() && top_->eo_sw_cnt_o != o.sw_cnt))
      return fail("engine op of SRQ " + std::to_string(s) + " op " + std::to_string(o.idx) + ": code " + std::to_string(code) +
                  " handle " + std::to_string(top_->eo_handle_o) + ", expected " + std::to_string(want) + " / " + std::to_string(handle));
    fl_handle_ = handle;
    cov_.hit(want == kEoAdd ? "add" : want == kEoDel ? "del" : "sync");
    if (o.has_cnt()) cov_.hit("sw_cnt");
  }

  void check_tb_write() {
    if (!fl_.on || !fl_.responded || fl_.clear || fl_.op.opcode != hw::tm_opcode::ADD || !fl_.ok)
      return fail("tag-buffer write without a successful ADD");
    const unsigned handle = top_->tb_waddr_o;
    if (!top_->add_pend_o || top_->add_pend_handle_o != handle) fail("add_pend_o does not name the ADD being written");
    if (handle != fl_handle_) fail("tag-buffer write address");
    const uint64_t lo = get_bits(top_->tb_wdata_o.data(), 0, 64), hi = get_bits(top_->tb_wdata_o.data(), 64, 64);
    if (lo != fl_.op.sge_addr || hi != (uint64_t(fl_.op.sge_lkey) << 32 | fl_.op.sge_len)) fail("tag-buffer write data");
    cov_.hit("tb_write");
    if (fl_.aborted) cov_.hit("tb_write_of_aborted_add");
    if (!fl_.op.signaled() || fl_.aborted) fl_.on = false;
  }

  void check_cqe() {
    const CqeReq r = unpack_cqe_req(top_->cqe_o.data(), 0);
    const unsigned s = r.cq % kSrq;
    Srq& q = srq_[s];
    CqeReq e;
    e.cq = r.cq;
    if (fl_.on && !fl_.clear && fl_.responded && !fl_.aborted && fl_.srq == s && fl_.op.signaled()) {
      e.cq = fl_.cq;
      e.status = fl_.ok ? hw::wc_status::SUCCESS : hw::wc_status::TM_ERR;
      e.tm_hw_cnt = fl_.hw_cnt;
      fill(e, fl_.op);
      fl_.on = false;
      if (fl_.epoch != q.epoch) cov_.hit("completion_after_reconfiguration");
      cov_.hit(fl_.ok ? "cqe_success" : "cqe_engine_error");
    } else {
      // A malformed op's completion: of the current ring, or of the previous one if it was offered
      // before the reconfiguration.
      const bool old = r.cq != q.cfg.cq;
      if (old && !(q.clr && r.cq == q.old_cfg.cq)) return fail("completion to CQ " + std::to_string(r.cq) + " of an old configuration");
      if (!old && q.clr) return fail("completion of SRQ " + std::to_string(s) + " before its CLEAR");
      std::deque<Op>& exp = old ? q.old_exp : q.exp;
      const SrqCfg& cfg = old ? q.old_cfg : q.cfg;
      while (!exp.empty() && !well_formed(cfg, exp.front()) && !exp.front().signaled()) {
        exp.pop_front();
        cov_.hit("malformed_unsignaled");
      }
      if (exp.empty() || well_formed(cfg, exp.front())) return fail("completion of SRQ " + std::to_string(s) + " with none due");
      const Op o = exp.front();
      exp.pop_front();
      if (old) {
        q.old_allowed = false;
        cov_.hit("completion_after_reconfiguration");
      }
      e.status = hw::wc_status::TM_ERR;
      e.tm_hw_cnt = 0;
      fill(e, o);
      cov_.hit(o.known() ? "bad_handle" : "unknown_opcode");
    }
    if (!(r == e))
      fail("completion of SRQ " + std::to_string(s) + ": wr_id " + std::to_string(r.wr_id) + " idx " + std::to_string(r.wqe_idx) +
           " opcode " + std::to_string(r.opcode) + " status " + std::to_string(r.status) + " handle " + std::to_string(r.tm_handle) +
           " hw_cnt " + std::to_string(r.tm_hw_cnt) + "; expected wr_id " + std::to_string(e.wr_id) + " idx " +
           std::to_string(e.wqe_idx) + " opcode " + std::to_string(e.opcode) + " status " + std::to_string(e.status) +
           " handle " + std::to_string(e.tm_handle) + " hw_cnt " + std::to_string(e.tm_hw_cnt));
  }
  static void fill(CqeReq& e, const Op& o) {
    e.wr_id = o.wr_id;
    e.wqe_idx = o.idx;
    e.opcode = o.opcode == hw::tm_opcode::ADD ? hw::wc_op::TM_ADD : o.opcode == hw::tm_opcode::DEL ? hw::wc_op::TM_DEL
                                                                                                  : hw::wc_op::TM_SYNC;
    e.tm_handle = static_cast<uint16_t>(o.handle);
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_tm_ops> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::array<Srq, kSrq> srq_{};
  InFlight fl_;
  bool eng_busy_ = false, eo_valid_prev_ = false, eo_taken_prev_ = false;
  unsigned eng_lat_ = 0, srq_idx_prev_ = 0, fl_handle_ = 0;
  bool rd_pend_ = false, rsp_on_ = false;
  uint64_t rd_addr_ = 0, rsp_addr_ = 0;
  unsigned rd_len_ = 0, rd_srq_ = 0, rd_epoch_ = 0, rsp_k_ = 0, rsp_n_ = 0, rsp_srq_ = 0, rsp_epoch_ = 0, rsp_lat_ = 0;
  uint64_t cycles_ = 0;
  unsigned errors_ = 0;
};

TEST(TmOps, RandomRingsAgainstScoreboard) {
  Coverage cov({"add", "del", "sync", "clear", "sw_cnt", "tb_write", "cqe_success", "cqe_engine_error", "bad_handle",
                "unknown_opcode", "malformed_unsignaled", "full_batch", "batch_cut_by_ring_end", "doorbell_non_tm_srq",
                "srq_reset", "reset_op_in_flight", "answer_after_reset", "cqe_backpressure"});
  uint64_t cyc = 0;
  Stopwatch sw;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    TmOpsBench b(seed, cov);
    b.run(40000, 0.05, 0.0);    // no reconfiguration: every op accounted for
    b.drain();
    b.run(60000, 0.08, 0.003);  // reconfigurations at any time
    b.drain();
    b.run(20000, 0.3, 0.01);    // busy rings
    b.drain();
    cyc += b.cycles();
    if (HasFailure()) break;
  }
  report_speed("tm_ops", "busy", cyc, sw.seconds());
  cov.report("tm_ops");
}

}  // namespace
