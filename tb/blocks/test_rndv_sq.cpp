// tmnic_rndv_sq (the rendezvous QPs' internal send queues) against a descriptor-table model and a host
// AXI4 read slave (tb/lib/axi_mem.hpp).
// Stimulus: one AR master (tmnic_dma_rd's place) mixing host bursts (1..16 beats, within 4 KiB, bit 63
// clear, other high bits random) and internal bursts at (1 << NIC_SPACE_BIT) + (qp << RNDV_QP_SHIFT)
// + WQE index * WQE_STRIDE + beat offset, arlen 0..3 within one WQE (a few with a QP past NUM_QP);
// random AR gaps; the host slave with random AR back-pressure, random R latency per burst and gaps
// (in order, a beat held until taken); random R back-pressure on s_r (or none, as tmnic_dma_rd);
// random descriptor writes, never to a slot with an internal burst outstanding (the RAM reads a
// slot's descriptor once per burst, some cycles after the AR), also in the cycle of, or the cycle
// before, an AR of the same slot.
// Checks: every s_r beat (data, rlast) in AR order across both destinations, internal beats against
// WQE bytes built here from include/tmnic/hwif.h offsets (zeros for a QP past NUM_QP), host beats
// unchanged; every m_ar equal to the next host AR (never an internal one), held while stalled; s_r
// held while stalled; m_rready_o exactly when the next beat to load is a host beat and the R
// register can take it (low while an internal burst is at the head); s_arready_o exactly when the
// order FIFO has room (and the host AR register is free, for a host burst); idle_o every cycle.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "Vtmnic_rndv_sq.h"
#include "lib/axi_mem.hpp"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kNumQp = TB_NUM_QP;
constexpr unsigned kSlots = hw::RNDV_SLOTS;
constexpr unsigned kWqeBeats = hw::WQE_STRIDE / kBytes;
constexpr unsigned kMaxOut = 8;
constexpr uint64_t kSpace = 1ull << hw::NIC_SPACE_BIT;

struct Desc {
  uint32_t lkey = 0;
  uint64_t addr = 0, va = 0;
  uint32_t rkey = 0, len = 0;
  uint64_t tag = 0;
  uint32_t ctx = 0;
  uint16_t handle = 0;
};

void put_le(uint8_t* p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_be(uint8_t* p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}

// The WQE the NIC's engines must read: ring entry 2s is slot s's RDMA READ, 2s + 1 its FIN.
std::array<uint8_t, hw::WQE_STRIDE> ref_wqe(const Desc& d, bool fin) {
  std::array<uint8_t, hw::WQE_STRIDE> w{};
  const uint64_t wr_id = (uint64_t(hw::RNDV_WRID_MARK) << 56) | (fin ? 1ull << hw::RNDV_WRID_FIN_BIT : 0) | d.handle;
  put_le(&w[hw::wqe::WR_ID_OFF], wr_id, hw::wqe::WR_ID_LEN);
  if (!fin) {
    w[hw::wqe::OPCODE_OFF] = hw::wqe_op::RDMA_READ;
    w[hw::wqe::FLAGS_OFF] = 0;  // unsignaled, no fence
    w[hw::wqe::NUM_SGE_OFF] = 1;
    put_le(&w[hw::wqe::RKEY_OFF], d.rkey, hw::wqe::RKEY_LEN);
    put_le(&w[hw::wqe::RADDR_OFF], d.va, hw::wqe::RADDR_LEN);
    uint8_t* s = &w[hw::wqe::SGE_OFF];
    put_le(s + hw::sge::ADDR_OFF, d.addr, hw::sge::ADDR_LEN);
    put_le(s + hw::sge::LENGTH_OFF, d.len, hw::sge::LENGTH_LEN);
    put_le(s + hw::sge::LKEY_OFF, d.lkey, hw::sge::LKEY_LEN);
  } else {
    w[hw::wqe::OPCODE_OFF] = hw::wqe_op::SEND;
    w[hw::wqe::FLAGS_OFF] = hw::wqe_flag::INLINE | hw::wqe_flag::FENCE;
    w[hw::wqe::NUM_SGE_OFF] = 0;
    put_le(&w[hw::wqe::INLINE_LEN_OFF], hw::RNDV_FIN_LEN, hw::wqe::INLINE_LEN_LEN);
    // Wire order: TMH {op, 3 reserved, app ctx, tag} then RVH {va, rkey, len}, big-endian.
    uint8_t* p = &w[hw::wqe::INLINE_DATA_OFF];
    p[0] = hw::tmh_op::FIN;
    put_be(p + 4, d.ctx, 4);
    put_be(p + 8, d.tag, 8);
    put_be(p + 16, d.va, 8);
    put_be(p + 24, d.rkey, 4);
    put_be(p + 28, d.len, 4);
    static_assert(hw::RNDV_FIN_LEN == 32, "FIN layout");
  }
  return w;
}

struct Knobs {
  double p_int;     // an AR is internal
  double ar_gap;    // no AR offered in a cycle where one could be
  double ar_stall;  // m_arready low
  double r_gap;     // no host R beat in a cycle where one could go
  unsigned r_lat_max;
  double s_stall;   // s_rready low
  double p_we;      // a descriptor write in a cycle
};

struct ExpBeat {
  std::array<uint8_t, kBytes> data;
  bool last;
  bool host;
  int slot;  // on an internal burst's last beat: its table slot (qp * kSlots + slot), else -1
};

class RndvSqBench {
 public:
  RndvSqBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_rndv_sq>(ctx_.get())), rng_(seed),
        seed_(seed), mem_{seed}, axi_(mem_), k_(k), cov_(cov), tab_(kNumQp * kSlots), busy_(kNumQp * kSlots, 0),
        wr_cyc_(kNumQp * kSlots, ~0ull) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->we_i = 0;
    top_->s_arvalid_i = 0;
    top_->s_rready_i = 1;
    top_->m_arready_i = 0;
    top_->m_rvalid_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    // Every slot written once before any read (the RAM has no reset).
    for (unsigned s = 0; s < kNumQp * kSlots; ++s) {
      write_desc(s);
      top_->eval();
      tick();
    }
    top_->we_i = 0;
  }
  ~RndvSqBench() { top_->final(); }

  void run(unsigned n_ar, uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((issued_ < n_ar || !exp_.empty() || ar_pend_) && cycles_ < end && !errors_) cycle(issued_ < n_ar);
    ASSERT_EQ(errors_, 0u);
    ASSERT_TRUE(exp_.empty() && !ar_pend_) << exp_.size() << " beats unanswered after " << max_cycles << " cycles";
    for (int i = 0; i < 20; ++i) cycle(false);
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(host_ar_.empty());
    EXPECT_EQ(axi_.rd_bursts(), 0u);
    EXPECT_TRUE(top_->idle_o);
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t beats() const { return beats_; }

 private:
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

  Desc random_desc() {
    Desc d;
    d.lkey = static_cast<uint32_t>(rng_());
    d.addr = rng_();
    d.va = rng_();
    d.rkey = static_cast<uint32_t>(rng_());
    d.len = static_cast<uint32_t>(rng_());
    d.tag = rng_();
    d.ctx = static_cast<uint32_t>(rng_());
    d.handle = static_cast<uint16_t>(rng_());
    return d;
  }
  // Drives a write of slot s (qp * kSlots + slot) with a new random descriptor; the model takes it now
  // (the RAM has it from the next cycle, before any read of an AR accepted in this cycle).
  void write_desc(unsigned s) {
    const Desc d = random_desc();
    tab_[s] = d;
    wr_cyc_[s] = cycles_;
    top_->we_i = 1;
    top_->we_qp_i = s / kSlots;
    top_->we_slot_i = s % kSlots;
    auto* w = top_->we_desc_i.data();
    set_bits(w, 0, 16, d.handle);
    set_bits(w, 16, 32, d.ctx);
    set_bits(w, 48, 64, d.tag);
    set_bits(w, 112, 32, d.len);
    set_bits(w, 144, 32, d.rkey);
    set_bits(w, 176, 64, d.va);
    set_bits(w, 240, 64, d.addr);
    set_bits(w, 304, 32, d.lkey);
  }

  void new_ar(int want_slot) {
    Ar a;
    if (chance(rng_, k_.p_int)) {
      a.internal = true;
      uint64_t qp = urand(rng_, 0, kNumQp - 1);
      unsigned slot = urand(rng_, 0, kSlots - 1);
      if (want_slot >= 0) {
        qp = want_slot / kSlots;
        slot = want_slot % kSlots;
      }
      const bool fin = rng_() & 1;
      a.bad = chance(rng_, 0.03);
      if (a.bad) {  // a QP past NUM_QP: some bit between the QP field's top and the space bit
        const unsigned b = urand(rng_, hw::RNDV_QP_SHIFT + __builtin_ctz(kNumQp), hw::NIC_SPACE_BIT - 1);
        qp |= (1ull << (b - hw::RNDV_QP_SHIFT)) | (rng_() & ((1ull << (b - hw::RNDV_QP_SHIFT)) - 1));
      }
      const unsigned b0 = urand(rng_, 0, kWqeBeats - 1);
      const unsigned maxlen = std::min(3u, kWqeBeats - 1 - b0);
      a.arlen = urand(rng_, 0, maxlen);
      a.slot = a.bad ? -1 : static_cast<int>(qp * kSlots + slot);
      a.fin = fin;
      a.b0 = b0;
      a.addr = kSpace + (qp << hw::RNDV_QP_SHIFT) + uint64_t(2 * slot + fin) * hw::WQE_STRIDE + b0 * kBytes;
    } else {
      const unsigned beats = urand(rng_, 1, 16);
      const uint64_t page = rng_() & 0x7FFFFFFFFFFFF000ull;
      const uint64_t off = urand(rng_, 0, 4096 / kBytes - beats) * kBytes;
      a.addr = page + off;
      a.arlen = beats - 1;
    }
    ar_pend_ = true;
    ar_ = a;
  }

  void cycle(bool gen) {
    // ---- drive
    top_->we_i = 0;
    int wslot = -1;
    if (gen && chance(rng_, k_.p_we)) {
      const unsigned s = urand(rng_, 0, kNumQp * kSlots - 1);
      if (!busy_[s]) {
        write_desc(s);
        wslot = static_cast<int>(s);
      } else {
        cov_.hit("write_skipped_slot_busy");
      }
    }
    if (!ar_pend_ && gen && !chance(rng_, k_.ar_gap)) {
      int want = -1;
      if (chance(rng_, 0.3)) {
        if (wslot >= 0) want = wslot;
        else if (last_wslot_ >= 0 && wr_cyc_[last_wslot_] + 1 == cycles_) want = last_wslot_;
      }
      new_ar(want);
    }
    top_->s_arvalid_i = ar_pend_;
    top_->s_araddr_i = ar_.addr;
    top_->s_arlen_i = ar_.arlen;
    top_->m_arready_i = !chance(rng_, k_.ar_stall);
    top_->s_rready_i = !chance(rng_, k_.s_stall);
    // Host R: a beat offered and not taken stays; else the oldest due burst's next beat, with gaps.
    bool rv = false;
    if (m_r_held_ || (axi_.r_due(cycles_) && !chance(rng_, k_.r_gap))) {
      rv = true;
      axi_.r_beat(top_->m_rdata_i, top_->m_rlast_i);
    } else {
      for (unsigned i = 0; i < kBytes / 4; ++i) top_->m_rdata_i[i] = static_cast<uint32_t>(rng_());
      top_->m_rlast_i = rng_() & 1;
      if (axi_.r_mid_burst()) cov_.hit("host_r_gap_mid_burst");
    }
    top_->m_rvalid_i = rv;
    top_->eval();

    // ---- sample (the handshakes of the coming edge)
    if (top_->idle_o != exp_.empty()) fail(std::string("idle_o ") + (top_->idle_o ? "set" : "clear") +
                                           " with " + std::to_string(exp_.size()) + " beats outstanding");
    const bool srv = top_->s_rvalid_o, srr = top_->s_rready_i;
    const bool out_en = !srv || srr;
    const size_t idx = srv ? 1 : 0;  // the next beat to load into the block's R register
    const bool next_host = idx < exp_.size() && exp_[idx].host;
    const bool want_mr = next_host && out_en;
    if (top_->m_rready_o != want_mr)
      fail(std::string("m_rready_o ") + (top_->m_rready_o ? "high" : "low") +
           (idx < exp_.size() ? (next_host ? " (next beat: host" : " (next beat: internal") : " (no beat due") +
           (out_en ? ")" : ", R register stalled)"));
    if (rv && idx < exp_.size() && !exp_[idx].host) cov_.hit("host_r_held_by_internal_head");
    if (rv && next_host && !out_en) cov_.hit("host_r_held_by_s_stall");
    if (rv && top_->m_rready_o) {
      axi_.r_taken();
      ++host_beats_;
    }
    m_r_held_ = rv && !top_->m_rready_o;

    // The order FIFO's level: bursts accepted whose last beat was not loaded into the R register
    // (a last beat in the register is loaded; beats are counted off as they are taken on s_r).
    const unsigned ord_level = bursts_ - ((srv && !exp_.empty() && exp_.front().last) ? 1 : 0);
    // s_r: held while stalled, then each beat in order.
    if (s_stalled_) {
      std::array<uint8_t, kBytes> d;
      take_beat<kBytes>(top_->s_rdata_o, d.data());
      if (!srv || d != s_hold_ || top_->s_rlast_o != s_hold_last_) fail("s_r changed or dropped while stalled");
    }
    s_stalled_ = srv && !srr;
    if (s_stalled_) {
      take_beat<kBytes>(top_->s_rdata_o, s_hold_.data());
      s_hold_last_ = top_->s_rlast_o;
      cov_.hit("s_r_stall");
    }
    if (srv && srr) check_beat();

    // s_ar: ready exactly when the order FIFO has room (and, for a host burst, the m_ar register).
    if (ar_pend_) {
      const bool want = ord_level < kMaxOut && (ar_.internal || !top_->m_arvalid_o || top_->m_arready_i);
      if (top_->s_arready_o != want) fail(std::string("s_arready_o ") + (top_->s_arready_o ? "high" : "low") +
                                          " with " + std::to_string(ord_level) + " bursts in the order FIFO");
      if (ord_level == kMaxOut) cov_.hit("order_fifo_full");
      if (top_->s_arready_o) accept();
    }
    cov_.max("max_bursts_in_flight", ord_level);

    // m_ar: only host bursts, in order, held while stalled.
    if (m_ar_stalled_ && (!top_->m_arvalid_o || top_->m_araddr_o != m_ar_hold_addr_ ||
                          top_->m_arlen_o != m_ar_hold_len_))
      fail("m_ar changed or dropped while stalled");
    m_ar_stalled_ = top_->m_arvalid_o && !top_->m_arready_i;
    if (m_ar_stalled_) {
      m_ar_hold_addr_ = top_->m_araddr_o;
      m_ar_hold_len_ = top_->m_arlen_o;
      cov_.hit("m_ar_stall");
    }
    if (top_->m_arvalid_o && top_->m_arready_i) {
      const uint64_t a = top_->m_araddr_o;
      if (a >> hw::NIC_SPACE_BIT) fail("internal burst 0x" + hex(a) + " sent to the host");
      if (host_ar_.empty()) {
        fail("unexpected m_ar 0x" + hex(a));
      } else {
        if (host_ar_.front().addr != a || host_ar_.front().arlen != top_->m_arlen_o)
          fail("m_ar 0x" + hex(a) + " len " + std::to_string(top_->m_arlen_o) + ", expected 0x" +
               hex(host_ar_.front().addr) + " len " + std::to_string(host_ar_.front().arlen));
        host_ar_.pop_front();
      }
      axi_.ar(a, top_->m_arlen_o, cycles_ + 1 + urand(rng_, 0, k_.r_lat_max));
    }
    if (wslot >= 0) last_wslot_ = wslot;
    tick();
  }

  void accept() {
    const Ar& a = ar_;
    ar_pend_ = false;
    ++issued_;
    ++bursts_;
    if (!a.internal) {
      host_ar_.push_back(a);
      for (unsigned k = 0; k <= a.arlen; ++k) {
        ExpBeat e;
        mem_.read(a.addr + uint64_t(k) * kBytes, e.data.data(), kBytes);
        e.last = k == a.arlen;
        e.host = true;
        e.slot = -1;
        exp_.push_back(e);
      }
      cov_.hit("host_burst");
      if (a.addr >> 62) cov_.hit("host_addr_bit62");
      if (last_int_) cov_.hit("host_after_internal");
      last_int_ = false;
      return;
    }
    std::array<uint8_t, hw::WQE_STRIDE> w{};
    if (!a.bad) w = ref_wqe(tab_[a.slot], a.fin);
    for (unsigned k = 0; k <= a.arlen; ++k) {
      ExpBeat e;
      std::copy_n(&w[(a.b0 + k) * kBytes], kBytes, e.data.begin());
      e.last = k == a.arlen;
      e.host = false;
      e.slot = e.last ? a.slot : -1;
      exp_.push_back(e);
    }
    if (a.slot >= 0) {
      ++busy_[a.slot];
      if (wr_cyc_[a.slot] == cycles_) cov_.hit("write_in_ar_cycle_same_slot");
      if (wr_cyc_[a.slot] + 1 == cycles_) cov_.hit("write_then_read_back_to_back");
    }
    cov_.hit(a.bad ? "internal_qp_out_of_range" : (a.fin ? "internal_fin" : "internal_read"));
    cov_.hit("internal_arlen_" + std::to_string(a.arlen));
    if (a.b0) cov_.hit("internal_start_beat_nonzero");
    if (!a.bad && a.slot / kSlots == kNumQp - 1) cov_.hit("internal_last_qp");
    if (!last_int_) cov_.hit("internal_after_host");
    last_int_ = true;
  }

  void check_beat() {
    if (exp_.empty()) {
      fail("s_r beat with no burst outstanding");
      return;
    }
    const ExpBeat e = exp_.front();
    exp_.pop_front();
    ++beats_;
    std::array<uint8_t, kBytes> d;
    take_beat<kBytes>(top_->s_rdata_o, d.data());
    for (unsigned i = 0; i < kBytes; ++i)
      if (d[i] != e.data[i]) {
        fail(std::string(e.host ? "host" : "internal") + " beat byte " + std::to_string(i) + ": got 0x" +
             hex(d[i]) + " expected 0x" + hex(e.data[i]));
        break;
      }
    if (top_->s_rlast_o != e.last) fail(std::string("s_rlast ") + (e.last ? "missing" : "early"));
    // Back to back: this beat came the cycle after the previous one.
    if (prev_beat_cyc_ + 1 == cycles_) {
      if (!e.host && prev_last_ && !prev_host_) cov_.hit("internal_bursts_back_to_back");
      if (e.host != prev_host_ && prev_last_) cov_.hit("switch_source_back_to_back");
    }
    prev_beat_cyc_ = cycles_;
    prev_last_ = e.last;
    prev_host_ = e.host;
    if (e.last) {
      --bursts_;
      if (e.slot >= 0) --busy_[e.slot];
    }
  }

  struct Ar {
    bool internal = false, bad = false, fin = false;
    uint64_t addr = 0;
    unsigned arlen = 0, b0 = 0;
    int slot = -1;
  };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rndv_sq> top_;
  std::mt19937_64 rng_;
  uint64_t seed_;
  SeedMem mem_;
  AxiMem<kBytes, SeedMem> axi_;
  Knobs k_;
  Coverage& cov_;
  std::vector<Desc> tab_;
  std::vector<unsigned> busy_;     // internal bursts outstanding per slot
  std::vector<uint64_t> wr_cyc_;   // cycle of each slot's last write
  int last_wslot_ = -1;
  std::deque<ExpBeat> exp_;        // every accepted beat not yet taken on s_r, in order
  std::deque<Ar> host_ar_;         // host bursts accepted, not yet on m_ar
  unsigned bursts_ = 0;            // bursts accepted whose last beat was not taken on s_r
  bool ar_pend_ = false;
  Ar ar_;
  bool m_r_held_ = false;
  bool s_stalled_ = false, s_hold_last_ = false;
  std::array<uint8_t, kBytes> s_hold_{};
  bool m_ar_stalled_ = false;
  uint64_t m_ar_hold_addr_ = 0;
  unsigned m_ar_hold_len_ = 0;
  bool last_int_ = false;
  uint64_t prev_beat_cyc_ = ~0ull - 1;
  bool prev_last_ = false, prev_host_ = false;
  uint64_t cycles_ = 0, issued_ = 0, beats_ = 0, host_beats_ = 0;
  unsigned errors_ = 0;
};

Coverage make_cov() {
  return Coverage({"host_burst", "host_addr_bit62", "internal_read", "internal_fin", "internal_qp_out_of_range",
                   "internal_arlen_0", "internal_arlen_1", "internal_start_beat_nonzero", "internal_last_qp",
                   "internal_after_host", "host_after_internal", "internal_bursts_back_to_back",
                   "switch_source_back_to_back", "host_r_held_by_internal_head", "host_r_held_by_s_stall",
                   "host_r_gap_mid_burst", "s_r_stall", "m_ar_stall", "order_fifo_full", "max_bursts_in_flight",
                   "write_then_read_back_to_back", "write_in_ar_cycle_same_slot", "write_skipped_slot_busy"
#if TB_DATA_W == 256
                   , "internal_arlen_2", "internal_arlen_3"
#endif
  });
}

TEST(RndvSq, RandomReadsAgainstModel) {
  Coverage cov = make_cov();
  // Mixes: dma_rd-like (s_rready high) with a slow host; heavy back-pressure everywhere; mostly
  // internal with many descriptor writes; mostly host, sparse; both at full speed.
  const Knobs mixes[] = {{0.5, 0.2, 0.3, 0.2, 20, 0.0, 0.1},
                         {0.5, 0.0, 0.5, 0.3, 30, 0.4, 0.3},
                         {0.9, 0.0, 0.2, 0.1, 10, 0.1, 0.5},
                         {0.1, 0.5, 0.1, 0.1, 4, 0.0, 0.05},
                         {0.5, 0.0, 0.0, 0.0, 0, 0.0, 0.2}};
  uint64_t cyc = 0, beats = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " mix p_int " + std::to_string(k.p_int) + " s_stall " +
                   std::to_string(k.s_stall));
      RndvSqBench b(seed, k, cov);
      Stopwatch sw;
      b.run(20000 * test_scale(), 5000000);
      secs += sw.seconds();
      cyc += b.cycles();
      beats += b.beats();
      if (HasFatalFailure()) return;
    }
  }
  report_speed("rndv_sq", "busy", cyc, secs);
  std::printf("[rndv_sq] %llu beats in %llu cycles (%.2f per cycle)\n", (unsigned long long)beats,
              (unsigned long long)cyc, cyc ? double(beats) / cyc : 0.0);
  cov.report("rndv_sq");
}

// Only internal bursts, no back-pressure: one beat per cycle, also across bursts.
TEST(RndvSq, InternalThroughput) {
  Coverage cov = make_cov();
  RndvSqBench b(7, {1.0, 0.0, 0.0, 0.0, 0, 0.0, 0.0}, cov);
  const uint64_t c0 = b.cycles();
  b.run(4000, 1000000);
  const double per = double(b.beats()) / double(b.cycles() - c0);
  std::printf("[rndv_sq] internal only: %llu beats in %llu cycles\n", (unsigned long long)b.beats(),
              (unsigned long long)(b.cycles() - c0));
  // The AR master offers one burst per cycle at most: bursts of one beat bound the rate, not the block.
  EXPECT_GT(per, 0.9);
}

TEST(RndvSq, IdleSpeed) {
  Coverage cov = make_cov();
  RndvSqBench b(9, {0.5, 1.0, 0, 0, 0, 0, 0}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("rndv_sq", "idle", 300000, sw.seconds());
}

}  // namespace
