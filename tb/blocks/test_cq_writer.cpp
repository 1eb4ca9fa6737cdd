// tmnic_cq_writer against a model of the CQ rings and a host that polls them by owner bit.
// Model per CQ: configuration, producer index pi, consumer index ci (from doorbells), arm bit.
// A completion is dropped (overflow_o) when the CQ is invalid, out of range or pi - ci == size;
// otherwise its 64-byte CQE (layout from the generated driver header hwif.h, so that a drift
// between the SV package and the header shows) goes by DMA to base + (pi mod size) * 64 with owner
// bit ((pi >> log) & 1) ^ 1, pi advances on dma_done, and an armed CQ raises irq_o/irq_cq_o once
// (an ASYNC_EVENT record always does).
// Stimulus: two sources with random gaps, a DMA write responder with random ready, pull and done
// latencies, a host that consumes entries in random order over the CQs and rings the CQ doorbell
// (ci, random arm) at random times, CQ re-creation (cq_reset_i with a new configuration), doorbells
// for CQs out of range, resizes (SET_CQ.KEEP: a new ring and size under the same indices, done as
// ibv_resize_cq does it, on a CQ with no completion in flight: the unpolled entries copied to their
// indices in the new ring, every other slot "not new" for the pass the host reads next).
// Lost completions: after its first overrun a CQ takes nothing until it is set up again (IBA C11-37);
// a lost QP completion (not a list-op or event record) of a live QP (RTR..SQE in the model's state
// table, which the block reads through qp_idx_o/qp_state_i one cycle later) is reported on
// fat_valid_o/fat_qp_o, except for the QP reported last (forgotten at a CQ reset or a SET_QP of it).
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "Vtmnic_cq_writer.h"
#include "lib/bits.hpp"
#include "lib/cqe_req.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_DATA_LAT
#define TB_DATA_LAT 1
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kLat = TB_DATA_LAT;  // cycles from dma_data_req_i to dma_data_o
constexpr unsigned kNumCq = 8;
constexpr unsigned kNsrc = 2;
constexpr unsigned kReqBits = kCqeReqBits;
constexpr unsigned kCfgBits = 69;   // cq_cfg_t
using Cqe = std::array<uint8_t, 64>;

template <class T>
void put_le(Cqe& c, unsigned off, unsigned len, T v) {
  for (unsigned i = 0; i < len; ++i) c[off + i] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i));
}

// The CQE image software expects, built from the generated header's offsets.
Cqe cqe_image(const CqeReq& r, bool owner) {
  Cqe c{};
  put_le(c, hw::cqe::WR_ID_OFF, hw::cqe::WR_ID_LEN, r.wr_id);
  put_le(c, hw::cqe::BYTE_LEN_OFF, hw::cqe::BYTE_LEN_LEN, r.byte_len);
  // IMM is raw: imm[31:24] is the first byte on the wire and lands first.
  for (unsigned i = 0; i < hw::cqe::IMM_LEN; ++i) c[hw::cqe::IMM_OFF + i] = static_cast<uint8_t>(r.imm >> (24 - 8 * i));
  put_le(c, hw::cqe::QP_NUM_OFF, hw::cqe::QP_NUM_LEN, r.qp_num);
  put_le(c, hw::cqe::SRC_QP_OFF, hw::cqe::SRC_QP_LEN, r.src_qp);
  put_le(c, hw::cqe::WC_FLAGS_OFF, hw::cqe::WC_FLAGS_LEN, r.wc_flags);
  put_le(c, hw::cqe::WQE_IDX_OFF, hw::cqe::WQE_IDX_LEN, r.wqe_idx);
  put_le(c, hw::cqe::OPCODE_OFF, hw::cqe::OPCODE_LEN, r.opcode);
  put_le(c, hw::cqe::STATUS_OFF, hw::cqe::STATUS_LEN, r.status);
  put_le(c, hw::cqe::TM_TAG_OFF, hw::cqe::TM_TAG_LEN, r.tm_tag);
  put_le(c, hw::cqe::TM_APP_CTX_OFF, hw::cqe::TM_APP_CTX_LEN, r.tm_app_ctx);
  put_le(c, hw::cqe::TM_HANDLE_OFF, hw::cqe::TM_HANDLE_LEN, r.tm_handle);
  put_le(c, hw::cqe::TM_HW_CNT_OFF, hw::cqe::TM_HW_CNT_LEN, r.tm_hw_cnt);
  c[hw::cqe::OWNER_OFF] = owner ? 1 : 0;
  return c;
}
static_assert(hw::CQE_SIZE == 64, "CQE size");

struct Knobs {
  bool gate_full;        // sources never overfill a CQ (no overflow expected)
  double p_bad_cq;       // completion for an invalid or out-of-range CQ
  double src_gap;
  double dma_ready;
  unsigned dma_lat_max;  // pull and done latencies
  double host_poll;      // per cycle: host consumes one entry of a random CQ
  double host_db;        // per cycle: host rings a CQ doorbell
  double p_arm;
  double p_reset;        // per cycle: re-create a random idle CQ (and, as often, resize one)
  unsigned log_max;
  unsigned only_cq;      // kNumCq: all CQs; else all traffic to this CQ
  bool ready_late = false;  // DMA ready never in the first cycle of a request (see FullCqDropsWithoutDma)
  double fat_ready = 1.0;   // per cycle: a lost completion's QP report is taken
};

class CqwBench {
 public:
  CqwBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_cq_writer>(ctx_.get())), rng_(seed),
        k_(k), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->req_valid_i = 0;
    top_->cq_reset_i = 0;
    top_->db_valid_i = 0;
    top_->dma_ready_i = 0;
    top_->dma_data_req_i = 0;
    top_->dma_done_i = 0;
    top_->fat_ready_i = 1;
    top_->qp_set_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    for (unsigned q = 0; q < kNumCq; ++q) configure(q, true);
    for (auto& st : small_state_) st = static_cast<uint8_t>(urand(rng_, 0, 6));
    drive_cfg();
  }
  ~CqwBench() { top_->final(); }

  void run(unsigned n, uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((generated_ < n || busy()) && cycles_ < end && !errors_) cycle(generated_ < n);
    ASSERT_EQ(errors_, 0u);
    ASSERT_FALSE(busy()) << "completions pending after " << max_cycles << " cycles";
    // Drain: the host consumes everything left.
    for (int i = 0; i < 4000 && !errors_; ++i) cycle(false, true);
    for (unsigned q = 0; q < kNumCq; ++q)
      EXPECT_TRUE(cq_[q].pending.empty()) << "CQ " << q << ": " << cq_[q].pending.size() << " CQEs never seen by the host";
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(top_->idle_o);
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t written() const { return written_; }
  uint64_t dropped() const { return dropped_; }

 private:
  struct CqModel {
    bool valid = false;
    uint64_t base = 0;
    unsigned log = 0;
    uint16_t pi = 0, ci = 0;  // as the RTL sees them
    bool arm = false;
    uint16_t host_ci = 0;     // host's consumption index
    std::deque<Cqe> pending;  // committed, not yet consumed by the host
    std::vector<Cqe> ring;    // host memory of the ring
    unsigned reserved = 0;    // generated, not yet committed (for gate_full)
    bool ovr = false;         // its first overrun since configure() was reported (cq_err_o)
  };
  struct Src {
    bool valid = false;
    CqeReq r{};
  };
  struct Flight {              // the completion being processed by the RTL
    CqeReq r;
    bool drop;
    bool moved = false;        // its CQ was resized after its configuration was taken: it lands in
                               // the old ring, from where the driver copies it
    uint64_t addr;
    Cqe img;
  };
  enum class Dma { kIdle, kAccepted, kPulled, kDone };

  bool busy() const { return flight_active_ || src_[0].valid || src_[1].valid; }
  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }

  void configure(unsigned q, bool initial) {
    CqModel& m = cq_[q];
    m.valid = !chance(rng_, initial ? 0.0 : 0.1);
    m.log = static_cast<unsigned>(k_.log_max >= 2 && chance(rng_, 0.05) ? urand(rng_, 0, 15) : urand(rng_, 0, k_.log_max));
    m.base = (static_cast<uint64_t>(q + 1) << 36) | (urand(rng_, 0, 1) << 63) |
             (chance(rng_, 0.5) ? urand(rng_, 0, 0xFFFFF) << 12 : urand(rng_, 0, 0xFFFFFF) << 6);
    m.pi = m.ci = 0;
    m.arm = false;
    m.host_ci = 0;
    m.pending.clear();
    m.ring.assign(m.log > 10 ? 0 : (1u << m.log), Cqe{});  // large rings: entries made on demand
    big_ring_[q].clear();
    m.reserved = 0;
    m.ovr = false;
  }
  // ibv_resize_cq's part (driver/core/cq.cpp) and SET_CQ.KEEP's: a new base and size with room for
  // every unpolled entry, rings up to 1024 entries (all slots in the model's memory).
  bool resize(unsigned q, bool in_flight) {
    CqModel& m = cq_[q];
    const uint32_t unpolled = static_cast<uint16_t>(m.pi - m.host_ci);
    // Room for what the NIC counts as unconsumed as well (the driver's consumer-index doorbell is
    // current when it resizes: it rings one per poll call), and with gate_full for what the sources
    // have made (they count on it).
    const uint32_t held = static_cast<uint16_t>(m.pi - m.ci) + (k_.gate_full ? m.reserved : 0);
    const uint32_t need = std::max(unpolled, held) + (in_flight ? 1 : 0);
    unsigned lo = 0;
    while ((1u << lo) < need) ++lo;
    const unsigned hi = std::min(k_.log_max, 10u);
    if (lo > hi || m.log > 10) return false;
    const unsigned new_log = static_cast<unsigned>(urand(rng_, lo, hi));
    const uint32_t size = 1u << new_log;
    auto phase = [&](uint32_t idx) { return static_cast<uint8_t>(((idx >> new_log) & 1) ^ 1); };
    std::vector<Cqe> ring(size, Cqe{});
    // Every slot reads "not new" at the index the host reaches it next; the unpolled entries, new.
    for (uint32_t k = 0; k < size; ++k) {
      const uint16_t idx = static_cast<uint16_t>(m.host_ci + k);
      ring[idx & (size - 1)][hw::cqe::OWNER_OFF] = phase(idx) ^ 1;
    }
    for (uint32_t k = 0; k < unpolled; ++k) {
      const uint16_t idx = static_cast<uint16_t>(m.host_ci + k);
      Cqe e = slot(q, idx);
      e[hw::cqe::OWNER_OFF] = phase(idx);
      ring[idx & (size - 1)] = e;
      m.pending[k][hw::cqe::OWNER_OFF] = phase(idx);
    }
    if (m.pending.size() != unpolled) fail("model: pending entries != pi - host_ci at a resize");
    cov_.hit(unpolled ? "resize_with_unpolled" : "resize_empty");
    if (new_log < m.log) cov_.hit("resize_shrink");
    if (((m.host_ci >> new_log) & 1) == 1) cov_.hit("resize_into_odd_pass");
    m.log = new_log;
    m.base = (static_cast<uint64_t>(q + 1) << 36) | (urand(rng_, 0, 0xFFFFFF) << 6);
    m.ring = std::move(ring);
    return true;
  }
  // CQ configuration as the context block's registered, write-first read port presents it: the
  // entry that cq_idx_o named in the previous cycle, as the table is now.
  // The QP state as the context's registered read port presents it (qp_idx_o of the previous cycle).
  // QPs 0..5 carry most traffic, with random states; the others' states follow their number.
  uint8_t qp_state(uint16_t qp) const {
    if (qp < small_state_.size()) return small_state_[qp];
    return static_cast<uint8_t>((qp * 2654435761u >> 16) % 7);
  }
  static bool live(uint8_t st) {
    return st >= static_cast<uint8_t>(hw::QpState::RTR) && st <= static_cast<uint8_t>(hw::QpState::SQE);
  }
  static bool qp_cqe(uint8_t op) {
    return op != hw::wc_op::ASYNC_EVENT && op != hw::wc_op::TM_ADD && op != hw::wc_op::TM_DEL && op != hw::wc_op::TM_SYNC;
  }
  void drive_cfg() {
    top_->qp_state_i = qp_state(qp_idx_prev_);
    const unsigned q = cq_idx_prev_;
    set_bits(top_->cq_rd_i.data(), 68, 1, cq_[q].valid);
    set_bits(top_->cq_rd_i.data(), 4, 64, cq_[q].base);
    set_bits(top_->cq_rd_i.data(), 0, 4, cq_[q].log);
  }
  Cqe& slot(unsigned q, uint16_t idx) {
    CqModel& m = cq_[q];
    const uint32_t s = idx & ((1u << m.log) - 1);
    if (m.log <= 10) return m.ring[s];
    return big_ring_[q][s];
  }

  unsigned pick_cq() {
    if (k_.only_cq < kNumCq && chance(rng_, 0.8)) return k_.only_cq;
    return static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
  }

  CqeReq random_req() {
    CqeReq r;
    unsigned q = k_.only_cq < kNumCq ? k_.only_cq : static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
    if (k_.gate_full) {
      // Only CQs that are valid and have room for everything in flight.
      for (int tries = 0; tries < 8; ++tries) {
        const CqModel& m = cq_[q];
        if (m.valid && static_cast<uint32_t>(static_cast<uint16_t>(m.pi - m.ci)) + m.reserved < (1u << m.log)) break;
        q = k_.only_cq < kNumCq ? k_.only_cq : static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
      }
      const CqModel& m = cq_[q];
      if (!(m.valid && static_cast<uint32_t>(static_cast<uint16_t>(m.pi - m.ci)) + m.reserved < (1u << m.log)))
        q = 0xFFFF;  // nothing fits: no request this cycle
    }
    r.cq = static_cast<uint16_t>(q);
    if (!k_.gate_full && chance(rng_, k_.p_bad_cq))
      r.cq = static_cast<uint16_t>(chance(rng_, 0.5) ? urand(rng_, kNumCq, 0xFFFF) : kNumCq);
    r.wr_id = rng_();
    r.byte_len = static_cast<uint32_t>(rng_());
    r.imm = static_cast<uint32_t>(rng_());
    r.qp_num = chance(rng_, 0.6) ? static_cast<uint32_t>(urand(rng_, 0, 5)) : static_cast<uint32_t>(rng_()) & 0xFFFFFF;
    r.src_qp = static_cast<uint32_t>(rng_()) & 0xFFFFFF;
    r.wc_flags = static_cast<uint32_t>(rng_());
    r.wqe_idx = static_cast<uint16_t>(rng_());
    r.opcode = rng_() % 16 == 0   ? hw::wc_op::ASYNC_EVENT
               : rng_() % 16 == 0 ? static_cast<uint8_t>(hw::wc_op::TM_ADD + urand(rng_, 0, 2))
                                  : static_cast<uint8_t>(rng_());
    r.status = static_cast<uint8_t>(rng_());
    r.tm_tag = rng_();
    r.tm_app_ctx = static_cast<uint32_t>(rng_());
    r.tm_handle = static_cast<uint16_t>(rng_());
    r.tm_hw_cnt = static_cast<uint16_t>(rng_());
    return r;
  }

  void cycle(bool gen, bool drain = false) {
    // ---------------- inputs
    for (unsigned s = 0; s < kNsrc; ++s) {
      if (!src_[s].valid && gen && !chance(rng_, k_.src_gap)) {
        CqeReq r = random_req();
        if (r.cq != 0xFFFF || !k_.gate_full) {
          src_[s].valid = true;
          src_[s].r = r;
          ++generated_;
          if (r.cq < kNumCq) ++cq_[r.cq].reserved;
        }
      }
      pack_cqe_req(top_->req_i.data(), s * kReqBits, src_[s].r);
    }
    top_->req_valid_i = (src_[0].valid ? 1 : 0) | (src_[1].valid ? 2 : 0);
    if (src_[0].valid && src_[1].valid) cov_.hit("sources_contending");
    // Host: consume, ring doorbells.
    if (drain) {   // every CQ each cycle: the drain must not depend on which CQs the dice favour
      for (unsigned q = 0; q < kNumCq; ++q) host_poll(q);
    } else if (chance(rng_, k_.host_poll)) {
      host_poll(pick_cq());
    }
    // CQ re-creation: only a CQ that no completion in flight or waiting uses.
    bool rst = false;
    unsigned rst_q = 0;
    if (!drain && chance(rng_, k_.p_reset)) {
      rst_q = static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
      if (!(flight_active_ && (flight_.r.cq & (kNumCq - 1)) == rst_q) && cq_[rst_q].reserved == 0) rst = true;
    }
    bool db = false;
    uint16_t db_idx = 0;
    uint32_t db_val = 0;
    if (chance(rng_, drain ? 0.5 : k_.host_db)) {
      db = true;
      if (chance(rng_, 0.05)) {
        db_idx = static_cast<uint16_t>(urand(rng_, kNumCq, 4095));  // no such CQ: ignored
        db_val = static_cast<uint32_t>(rng_());
        cov_.hit("doorbell_out_of_range");
      } else {
        db_idx = static_cast<uint16_t>(pick_cq());
        if (rst && db_idx == rst_q) db = false;  // the host does not ring a CQ it is re-creating
        db_val = cq_[db_idx].host_ci | (chance(rng_, k_.p_arm) ? 0x80000000u : 0) |
                 (static_cast<uint32_t>(urand(rng_, 0, 0x7FFF)) << 16);  // bits 30:16 are ignored
      }
    }
    top_->db_valid_i = db;
    top_->db_idx_i = db_idx;
    top_->db_val_i = db_val;
    top_->cq_reset_i = rst;
    top_->cq_reset_idx_i = static_cast<uint16_t>(rst ? rst_q : (chance(rng_, 0.5) ? kNumCq : 0));
    if (!rst && top_->cq_reset_idx_i >= kNumCq) top_->cq_reset_i = chance(rng_, 0.01);  // out of range: ignored
    if (rst) {
      configure(rst_q, false);
      cov_.hit("cq_reset");
    }
    // Resize (no cq_reset_i: the indices stay): a CQ that no granted completion uses.
    if (!drain && chance(rng_, k_.p_reset)) {
      const unsigned q = static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
      // (a granted completion's CQ only once the completion has taken its configuration, the cycle
      // after the grant: SET_CQ.KEEP then stays busy until it has landed, and the driver copies it)
      const bool in_flight = flight_active_ && (flight_.r.cq & (kNumCq - 1)) == q;
      if (!(rst && rst_q == q) && cq_[q].valid && (!in_flight || (!flight_.drop && cycles_ >= decided_at_ + 2)))
        if (resize(q, in_flight)) {
          flight_.moved = flight_.moved || in_flight;
          if (in_flight) cov_.hit("resize_with_a_completion_in_flight");
          if (in_flight && top_->dma_valid_o) cov_.hit("resize_while_its_dma_request_waits");
        }
    }
    // SET_QP of a QP (forgets that it was reported).
    const bool qp_set = chance(rng_, 0.02);
    const uint16_t qp_set_idx = static_cast<uint16_t>(urand(rng_, 0, 5));
    top_->qp_set_i = qp_set;
    top_->qp_set_idx_i = qp_set_idx;
      drive_cfg();
    // DMA responder.
    bool dma_rdy = dma_ == Dma::kIdle && chance(rng_, k_.dma_ready) && (!k_.ready_late || dma_valid_prev_);
    dma_valid_prev_ = top_->dma_valid_o;
    top_->dma_ready_i = dma_rdy;
    bool dreq = false;
    if (dma_ == Dma::kAccepted && pull_off_ < 64 && cycles_ >= dma_t_ && chance(rng_, 0.7)) dreq = true;
    top_->dma_data_req_i = dreq;
    top_->dma_data_off_i = dreq ? static_cast<uint16_t>(pull_off_) : static_cast<uint16_t>(rng_() & 0x3FFF);
    const bool done = dma_ == Dma::kPulled && cycles_ >= dma_t_;
    top_->dma_done_i = done;
    const bool fat_rdy = chance(rng_, k_.fat_ready);
    top_->fat_ready_i = fat_rdy;
    top_->eval();

    // ---------------- outputs (registered pulses first: they answer earlier cycles)
    check_pulses();
    const bool busy_now = rtl_busy_ || fatv_;
    if (top_->idle_o == busy_now) fail(std::string("idle_o ") + (busy_now ? "high while busy" : "low while idle"));
    // Data of the pull kLat cycles ago; this cycle's pull takes its place in the ring.
    Pull& p = pulls_[cycles_ % kLat];
    if (p.valid) {
      for (unsigned i = 0; i < kBytes; ++i) dma_buf_[p.off + i] = byte_of(top_->dma_data_o.data(), i);
      if (p.off + kBytes >= 64) {
        dma_ = Dma::kPulled;
        dma_t_ = cycles_ + urand(rng_, 0, k_.dma_lat_max);
      }
    }
    p = Pull{dreq, pull_off_};
    if (dreq) pull_off_ += kBytes;

    // Model, in the RTL's order for this cycle: doorbell, CQ reset, commit; a request granted this
    // cycle is decided on the state after them.
    const bool commit = done;
    const unsigned fq = flight_active_ ? (flight_.r.cq & (kNumCq - 1)) : 0;
    const bool arm_old = cq_[fq].arm;
    if (db && db_idx < kNumCq) {
      CqModel& m = cq_[db_idx];
      m.ci = static_cast<uint16_t>(db_val);
      if (db_val >> 31) {
        m.arm = true;
        cov_.hit("arm");
        if (commit && db_idx == fq && arm_old) cov_.hit("rearm_in_irq_cycle");
      }
    }
    if (rst) cq_[rst_q].arm = false;  // (pi, ci already cleared by configure)
    if (commit) {
      if (!flight_active_ || flight_.drop || dma_ != Dma::kPulled) fail("dma_done model error");
      CqModel& m = cq_[fq];
      if (dma_buf_ != flight_.img) fail("CQE written with wrong bytes: " + diff(dma_buf_, flight_.img));
      if (flight_.moved) {   // written to the old ring (its address was checked): copied over
        flight_.img[hw::cqe::OWNER_OFF] = ((m.pi >> m.log) & 1) ^ 1;
        cov_.hit("landed_in_the_old_ring");
      }
      slot(fq, m.pi) = flight_.img;
      m.pending.push_back(flight_.img);
      if (((m.pi + 1) & ((1u << m.log) - 1)) == 0) cov_.hit("ring_wrap");
      if (m.pi == 0xFFFF) cov_.hit("pi_16bit_wrap");
      if (((m.pi >> m.log) & 1) == 1) cov_.hit("owner_bit_0_pass");
      if (static_cast<uint16_t>(m.pi + 1 - m.ci) == (1u << m.log)) cov_.hit("ring_filled_exactly");
      ++m.pi;
      --m.reserved;
      exp_cqe_.push_back(cycles_ + 1);
      // An armed CQ interrupts once and disarms; an asynchronous event record always interrupts
      // (and leaves the arm alone).
      const bool async = flight_.r.opcode == hw::wc_op::ASYNC_EVENT;
      if (arm_old) m.arm = false;
      if (arm_old || async) {
        exp_irq_.push_back({cycles_ + 1, flight_.r.cq});
        cov_.hit(async ? "irq_async_record" : "irq");
      }
      ++written_;
      flight_active_ = false;
      rtl_busy_ = false;  // S_IDLE from the next cycle
      dma_ = Dma::kIdle;
    }
    // Grant.
    const unsigned rdy = top_->req_ready_o;
    if (__builtin_popcount(rdy) > 1) fail("several req_ready");
    for (unsigned s = 0; s < kNsrc; ++s)
      if ((rdy >> s) & 1) {
        if (!src_[s].valid) fail("req_ready without req_valid");
        if (flight_active_) fail("request granted while a completion is in flight");
        decide(src_[s].r);
        src_[s].valid = false;
      }
    // DMA request.
    if (top_->dma_valid_o && dma_rdy) {
      if (!flight_active_ || flight_.drop) {
        fail(std::string("DMA write issued for a ") + (flight_active_ ? "dropped" : "non-existent") +
             " completion: addr 0x" + hex(top_->dma_addr_o) + " (CQ " + std::to_string(flight_.r.cq) + ")");
      } else {
        if (top_->dma_addr_o != flight_.addr)
          fail("CQE address 0x" + hex(top_->dma_addr_o) + " expected 0x" + hex(flight_.addr));
        if (top_->dma_len_o != 64) fail("CQE DMA length " + std::to_string(top_->dma_len_o));
      }
      dma_ = Dma::kAccepted;
      dma_t_ = cycles_ + 1 + urand(rng_, 0, k_.dma_lat_max);
      pull_off_ = 0;
      dma_buf_.fill(0xEE);
    }
    if (top_->dma_valid_o && !dma_rdy) cov_.hit("dma_not_ready");
    // A dropped completion in S_DMA: its QP's report (which waits while the last one is not taken),
    // then this cycle's forgetting; the report output as the RTL registers it.
    bool fat_new = false, fat_set = false, dropped_now = false;
    const bool fat_hold = fatv_ && !fat_rdy;
    if (flight_active_ && flight_.drop && cycles_ > decided_at_) {
      const uint16_t qp16 = static_cast<uint16_t>(flight_.r.qp_num);
      const bool cand = qp_cqe(flight_.r.opcode) && live(qp_state(qp16));
      fat_new = cand && !(fat_last_v_ && fat_last_ == qp16);
      if (fat_new && fat_hold) {
        cov_.hit("fat_report_waits");
      } else {
        dropped_now = true;
        drop_effects(flight_.r);
      }
      if (fat_new && !fat_hold) {
        fat_set = true;
        fatq_ = qp16;
        fat_last_ = qp16;
        fat_last_v_ = true;
        cov_.hit("fat_reported");
      } else if (fat_new) {
      } else if (cand) {
        cov_.hit("fat_same_qp_not_repeated");
      } else if (qp_cqe(flight_.r.opcode)) {
        cov_.hit("fat_qp_not_live");
      } else {
        cov_.hit("fat_not_a_qp_completion");
      }
    }
    if (!fat_set && (rst || (qp_set && qp_set_idx == fat_last_))) {
      if (fat_last_v_) cov_.hit(rst ? "fat_forgotten_at_cq_reset" : "fat_forgotten_at_set_qp");
      fat_last_v_ = false;
    }
    fatv_ = fat_hold || fat_set;
    if (dropped_now) {
      // Dropped: S_DMA until then (one cycle unless its report waited), then idle.
      flight_active_ = false;
      rtl_busy_ = false;
    }
    cq_idx_prev_ = top_->cq_idx_o;
    qp_idx_prev_ = top_->qp_idx_o;
    tick();
  }

  void decide(const CqeReq& r) {
    flight_active_ = true;
    rtl_busy_ = true;
    decided_at_ = cycles_;
    flight_.r = r;
    flight_.moved = false;
    if (r.cq >= kNumCq) {
      flight_.drop = true;
      cov_.hit("drop_cq_out_of_range");
    } else {
      CqModel& m = cq_[r.cq];
      const uint32_t size = 1u << m.log;
      if (!m.valid) {
        flight_.drop = true;
        cov_.hit("drop_cq_invalid");
      } else if (m.ovr || static_cast<uint16_t>(m.pi - m.ci) >= size) {
        flight_.drop = true;   // (its effects in its S_DMA cycle: drop_effects)
        if (static_cast<uint16_t>(m.pi - m.ci) == size) cov_.hit("drop_cq_full");
        else if (m.ovr && static_cast<uint16_t>(m.pi - m.ci) < size) cov_.hit("drop_cq_in_error_with_room");
        else fail("model: pi - ci > size");
      } else {
        flight_.drop = false;
        flight_.addr = m.base + static_cast<uint64_t>(m.pi & (size - 1)) * 64;
        flight_.img = cqe_image(r, ((m.pi >> m.log) & 1) ^ 1);
      }
    }
  }
  // A dropped completion leaves S_DMA (cycle now): overflow_o next cycle; the first overrun of a CQ
  // (since it was set up) is reported, unless the lost completion is an event record itself.
  void drop_effects(const CqeReq& r) {
    exp_ovf_.push_back(cycles_ + 1);
    ++dropped_;
    if (r.cq >= kNumCq) return;
    CqModel& m = cq_[r.cq];
    --m.reserved;
    if (!m.valid) return;
    if (!m.ovr && r.opcode != hw::wc_op::ASYNC_EVENT) {
      m.ovr = true;
      exp_cqerr_.push_back({cycles_ + 1, r.cq});
      cov_.hit("cq_err_reported");
    } else if (m.ovr) {
      cov_.hit("cq_err_once");
    }
  }

  void check_pulses() {
    auto due = [&](std::deque<uint64_t>& q) {
      if (!q.empty() && q.front() == cycles_) {
        q.pop_front();
        return true;
      }
      if (!q.empty() && q.front() < cycles_) fail("model: stale expectation");
      return false;
    };
    const bool ovf = due(exp_ovf_);
    if (top_->overflow_o != ovf) fail(std::string("overflow_o ") + (ovf ? "missing" : "unexpected"));
    bool cqerr = false;
    if (!exp_cqerr_.empty() && exp_cqerr_.front().first == cycles_) {
      cqerr = true;
      if (top_->cq_err_o && top_->cq_err_cq_o != exp_cqerr_.front().second)
        fail("cq_err_cq_o " + std::to_string(top_->cq_err_cq_o) + " expected " + std::to_string(exp_cqerr_.front().second));
      exp_cqerr_.pop_front();
    }
    if (top_->cq_err_o != cqerr) fail(std::string("cq_err_o ") + (cqerr ? "missing" : "unexpected"));
    if (top_->fat_valid_o != fatv_) fail(std::string("fat_valid_o ") + (fatv_ ? "missing" : "unexpected"));
    if (fatv_ && top_->fat_qp_o != fatq_)
      fail("fat_qp_o " + std::to_string(top_->fat_qp_o) + " expected " + std::to_string(fatq_));
    const bool cqe = due(exp_cqe_);
    if (top_->cqe_o != cqe) fail(std::string("cqe_o ") + (cqe ? "missing" : "unexpected"));
    bool irq = false;
    uint16_t irq_cq = 0;
    if (!exp_irq_.empty() && exp_irq_.front().first == cycles_) {
      irq = true;
      irq_cq = exp_irq_.front().second;
      exp_irq_.pop_front();
    }
    if (top_->irq_o != irq) fail(std::string("irq_o ") + (irq ? "missing" : "unexpected"));
    if (irq && top_->irq_cq_o != irq_cq) fail("irq_cq_o " + std::to_string(top_->irq_cq_o) + " expected " + std::to_string(irq_cq));
  }

  // Host: poll CQ q by owner bit; consume one new entry.
  void host_poll(unsigned q) {
    CqModel& m = cq_[q];
    if (!m.valid) return;
    const Cqe& e = slot(q, m.host_ci);
    const bool phase = ((m.host_ci >> m.log) & 1) ^ 1;
    const bool is_new = (e[hw::cqe::OWNER_OFF] & 1) == phase;
    if (!is_new) {
      if (!m.pending.empty()) {
        fail("host: committed CQE at index " + std::to_string(m.host_ci) + " of CQ " + std::to_string(q) +
             " not visible by owner bit");
      }
      return;
    }
    if (m.pending.empty()) {
      fail("host: stale entry at index " + std::to_string(m.host_ci) + " of CQ " + std::to_string(q) + " looks new");
      return;
    }
    if (e != m.pending.front()) fail("host: CQE content differs: " + diff(e, m.pending.front()));
    m.pending.pop_front();
    ++m.host_ci;
    cov_.hit("host_consumed");
  }

  static std::string diff(const Cqe& a, const Cqe& b) {
    for (unsigned i = 0; i < 64; ++i)
      if (a[i] != b[i]) return "first difference at byte " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
    return "equal";
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_cq_writer> top_;
  std::mt19937_64 rng_;
  Knobs k_;
  Coverage& cov_;
  CqModel cq_[kNumCq];
  std::map<uint32_t, Cqe> big_ring_[kNumCq];
  Src src_[kNsrc];
  Flight flight_{};
  bool flight_active_ = false, rtl_busy_ = false;
  uint64_t decided_at_ = 0;
  Dma dma_ = Dma::kIdle;
  uint64_t dma_t_ = 0;
  struct Pull {
    bool valid = false;
    unsigned off = 0;
  };
  Pull pulls_[kLat];  // the pulls of the last kLat cycles, by cycle mod kLat
  unsigned pull_off_ = 0;
  bool dma_valid_prev_ = false;
  Cqe dma_buf_{};
  std::deque<uint64_t> exp_ovf_, exp_cqe_;
  std::deque<std::pair<uint64_t, uint16_t>> exp_cqerr_;
  bool fatv_ = false;     // fat_valid_o / fat_qp_o as the model has them this cycle
  uint16_t fatq_ = 0;
  std::array<uint8_t, 6> small_state_{};
  uint16_t fat_last_ = 0;
  bool fat_last_v_ = false;
  unsigned qp_idx_prev_ = 0;
  std::deque<std::pair<uint64_t, uint16_t>> exp_irq_;
  uint64_t cycles_ = 0, generated_ = 0, written_ = 0, dropped_ = 0;
  unsigned cq_idx_prev_ = 0;  // cq_idx_o before the last edge (the registered read port's address)
  unsigned errors_ = 0;
};

const char* const kCovCommon[] = {"sources_contending", "doorbell_out_of_range", "cq_reset", "arm", "ring_wrap",
                                  "owner_bit_0_pass", "ring_filled_exactly", "irq", "irq_async_record", "dma_not_ready", "host_consumed"};

const char* const kCovResize[] = {"resize_with_unpolled", "resize_empty", "resize_shrink", "resize_into_odd_pass",
                                  "resize_with_a_completion_in_flight", "landed_in_the_old_ring"};
const char* const kCovOverflow[] = {"drop_cq_full", "drop_cq_invalid", "drop_cq_out_of_range", "cq_err_reported",
                                    "cq_err_once", "drop_cq_in_error_with_room", "fat_reported",
                                    "fat_same_qp_not_repeated", "fat_qp_not_live", "fat_not_a_qp_completion",
                                    "fat_forgotten_at_cq_reset", "fat_forgotten_at_set_qp"};

// Every CQ feature except overflow: the sources never overfill a CQ.
TEST(CqWriter, RandomCompletionsNoOverflow) {
  std::vector<std::string> names(std::begin(kCovCommon), std::end(kCovCommon));
  for (const char* s : kCovResize) names.push_back(s);
  Coverage cov(names);
  uint64_t cyc = 0, n = 0;
  double secs = 0;
  const Knobs mixes[] = {
      {true, 0, 0.3, 0.5, 6, 0.3, 0.1, 0.5, 0.002, 4, kNumCq},
      {true, 0, 0.0, 0.9, 1, 0.8, 0.3, 0.8, 0.0005, 2, kNumCq},
      {true, 0, 0.5, 0.3, 20, 0.1, 0.05, 0.3, 0.001, 6, kNumCq},
  };
  for (uint64_t seed : seeds({1, 2, 3}))
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      CqwBench b(seed, k, cov);
      Stopwatch sw;
      b.run(16000, 8000000);
      secs += sw.seconds();
      cyc += b.cycles();
      n += b.written();
      EXPECT_EQ(b.dropped(), 0u);
      if (HasFatalFailure()) return;
    }
  report_speed("cq_writer", "busy", cyc, secs);
  std::printf("[cq_writer] %llu CQEs written and checked by the host\n", (unsigned long long)n);
  cov.report("cq_writer (no overflow)");
}

// The 16-bit producer index wraps (65536 completions on a 2-entry CQ, consumed promptly).
TEST(CqWriter, ProducerIndexWraps) {
  Coverage cov({"pi_16bit_wrap", "ring_wrap", "host_consumed"});
  // log_max 1 keeps the ring tiny; one CQ takes all traffic; no resets.
  CqwBench b(5, {true, 0, 0.0, 1.0, 0, 1.0, 0.5, 0.0, 0.0, 1, 3}, cov);
  Stopwatch sw;
  b.run(66000, 3000000);
  report_speed("cq_writer", "busy1", b.cycles(), sw.seconds());
  EXPECT_GE(b.written(), 65537u);
  cov.report("cq_writer (pi wrap)");
}

// Everything, including completions for invalid, out-of-range and full CQs (overflow).
TEST(CqWriter, RandomCompletionsWithOverflow) {
  std::vector<std::string> names(std::begin(kCovCommon), std::end(kCovCommon));
  for (const char* s : kCovOverflow) names.push_back(s);
  names.push_back("fat_report_waits");
  Coverage cov(names);
  Knobs mixes[] = {
      {false, 0.05, 0.2, 0.5, 6, 0.05, 0.05, 0.5, 0.01, 3, kNumCq},
      {false, 0.02, 0.0, 0.9, 2, 0.3, 0.2, 0.3, 0.005, 2, kNumCq},
      {false, 0.02, 0.0, 0.9, 2, 0.3, 0.2, 0.3, 0.003, 1, kNumCq},   // reports taken late
  };
  mixes[2].fat_ready = 0.2;
  for (uint64_t seed : seeds({1, 2, 3}))
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      CqwBench b(seed, k, cov);
      b.run(8000, 4000000);
      if (HasFatalFailure()) return;
    }
  cov.report("cq_writer (with overflow)");
}

// The same with a DMA engine that never takes a request in its first cycle: this hides the bug
// that FullCqDropsWithoutDma shows and checks the rest of the overflow handling (overflow_o, rings
// intact, indices and arming unaffected by dropped completions).
TEST(CqWriter, RandomCompletionsWithOverflowLateDmaReady) {
  std::vector<std::string> names(std::begin(kCovCommon), std::end(kCovCommon));
  for (const char* s : kCovOverflow) names.push_back(s);
  Coverage cov(names);
  Knobs mixes[] = {
      {false, 0.05, 0.2, 0.5, 6, 0.05, 0.05, 0.5, 0.01, 3, kNumCq},
      {false, 0.02, 0.0, 0.9, 2, 0.3, 0.2, 0.3, 0.005, 2, kNumCq},
  };
  uint64_t drops = 0;
  for (uint64_t seed : seeds({1, 2, 3}))
    for (Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      k.ready_late = true;
      CqwBench b(seed, k, cov);
      b.run(8000, 4000000);
      drops += b.dropped();
      if (HasFatalFailure()) return;
    }
  std::printf("[cq_writer] %llu completions dropped\n", (unsigned long long)drops);
  cov.report("cq_writer (with overflow, late DMA ready)");
}

// Directed: a 1-entry CQ holding one unconsumed CQE, then a second completion. Expected: overflow_o
// and no DMA request, with the DMA engine ready (as tmnic_dma_wr is when idle).
TEST(CqWriter, FullCqDropsWithoutDma) {
  Coverage cov(std::vector<std::string>(std::begin(kCovCommon), std::end(kCovCommon)));
  // Always-ready DMA, host never polls nor rings, CQ 1 only, log 0 (1 entry).
  CqwBench b(3, {false, 0, 0.0, 1.0, 0, 0.0, 0.0, 0.0, 0.0, 0, 1}, cov);
  b.run(3, 200);
}

TEST(CqWriter, IdleSpeed) {
  Coverage cov(std::vector<std::string>(std::begin(kCovCommon), std::end(kCovCommon)));
  CqwBench b(9, {true, 0, 1.0, 0.5, 1, 0.0, 0.0, 0.0, 0.0, 2, kNumCq}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("cq_writer", "idle", 300000, sw.seconds());
}

}  // namespace
