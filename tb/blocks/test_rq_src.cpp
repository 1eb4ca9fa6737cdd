// tmnic_rq_src against a model of its contract:
//   - per SRQ a producer index (set by a doorbell of its number; numbers >= NUM_SRQ do nothing) and
//     a consumer index (+1 by a fetch from that SRQ), both zeroed by a reconfiguration of the SRQ,
//     which wins over a doorbell or a fetch of the same cycle; avail_o = ci != pi and ci_o = ci of
//     srq_i, combinational from the registered indices;
//   - a fetch reads one WQE at base + (idx mod 2^log) * 128, idx the SRQ's ci for an SRQ fetch (made
//     only while the SRQ has a WQE, the caller's rule), the request's index otherwise; from the cycle after last_o until the next request, wrid_o, nsge_o
//     and every SGE are the WQE's bytes;
//   - a tag buffer loaded after the fetch stands in: wr_id 0, one SGE = the loaded 128 bits (the
//     other SGE outputs are not used then), until the next request.
// Checked every cycle: avail_o and ci_o of a random SRQ, the DMA request (address, length, held
// until taken), last_o, and the WQE fields whenever one is shown.
// Stimulus: random doorbells (also to numbers >= NUM_SRQ), reconfigurations beside doorbells and
// fetches of the same SRQ, SRQ and RQ fetches (random rings and indices), tag-buffer loads,
// back-pressure on the DMA request, random response latency and gaps.
#include <gtest/gtest.h>

#include <array>

#include "Vtmnic_rq_src.h"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

#ifndef TB_NUM_SRQ
#define TB_NUM_SRQ 16
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
constexpr unsigned kBytes = TB_DATA_W / 8;  // response beat
constexpr unsigned kStride = hw::WQE_STRIDE;
constexpr unsigned kSrq = TB_NUM_SRQ;
constexpr unsigned kSges = hw::WQE_MAX_SGE;

// Host memory: every byte a function of its address (the DMA tests' pattern, fixed salt).
uint8_t host_byte(uint64_t a) { return mem_byte(0x5EED, a); }
uint64_t host_le(uint64_t a, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v |= uint64_t(host_byte(a + i)) << (8 * i);
  return v;
}

struct Knobs {
  double db, reset, fetch, srq_fetch, tb, rd_ready, gap;
  unsigned max_lat;
};

class SrcBench {
 public:
  SrcBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_rq_src>(ctx_.get())), rng_(seed),
        cov_(cov) {
    top_->rst_ni = 0;
    top_->clk_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
  }
  ~SrcBench() { top_->final(); }

  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k);
  }
  uint64_t cycles() const { return cycles_; }

 private:
  void step(const Knobs& k) {
    // ---------------- drive
    const bool db = chance_nz(rng_, k.db);
    const unsigned db_idx = chance(rng_, 0.1) ? static_cast<unsigned>(urand(rng_, kSrq, 4095))
                                              : static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    // Producer indices mostly a few ahead of ci (posted WQEs), sometimes equal (nothing posted).
    const uint16_t db_pi = static_cast<uint16_t>(
        db_idx < kSrq ? ci_[db_idx] + urand(rng_, 0, chance(rng_, 0.3) ? 0 : 4) : rng_());
    const bool rst = chance_nz(rng_, k.reset);
    const unsigned rst_idx = chance(rng_, 0.1) ? static_cast<unsigned>(urand(rng_, kSrq, 0xFFFF))
                                               : static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    unsigned srq = static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
    bool req = false, req_srq = false, tb = false;
    if (!busy_ && chance_nz(rng_, k.fetch)) {
      req = true;
      req_srq = chance(rng_, k.srq_fetch) && ci_[srq] != pi_[srq];   // (the caller's rule)
      base_ = (rng_() & ~uint64_t(kBytes - 1)) & 0x0000FFFFFFFFFFFFull;
      log_ = static_cast<unsigned>(urand(rng_, 0, 12));
      idx_ = static_cast<uint16_t>(rng_());
    } else if (!busy_ && shown_ && chance_nz(rng_, k.tb)) {
      tb = true;
      tb_lo_ = rng_();
      tb_hi_ = rng_();
    }
    top_->db_i = db;
    top_->db_idx_i = db_idx;
    top_->db_pi_i = db_pi;
    top_->srq_reset_i = rst;
    top_->srq_reset_idx_i = rst_idx;
    top_->srq_i = srq;
    top_->req_i = req;
    top_->req_srq_i = req_srq;
    top_->req_base_i = base_;
    top_->req_log_i = log_;
    top_->req_idx_i = idx_;
    top_->tb_ld_i = tb;
    set_sig_bits(top_->tb_sge_i, 0, 64, tb_lo_);
    set_sig_bits(top_->tb_sge_i, 64, 64, tb_hi_);
    const bool rd_ready = chance(rng_, k.rd_ready);
    top_->rd_ready_i = rd_ready;
    bool beat = false, last = false;
    if (rsp_on_ && lat_ == 0 && !chance_nz(rng_, k.gap)) {
      beat = true;
      last = rsp_k_ + 1 == kStride / kBytes;
      for (unsigned i = 0; i < kBytes; ++i)
        set_byte(top_->rsp_data_i.data(), i, host_byte(addr_ + uint64_t(rsp_k_) * kBytes + i));
      top_->rsp_off_i = static_cast<int16_t>(rsp_k_ * kBytes);
    }
    top_->rsp_valid_i = beat;
    top_->rsp_last_i = last;
    if (rsp_on_ && lat_ > 0) --lat_;
    top_->eval();

    // ---------------- check this cycle's outputs
    const bool avail = ci_[srq] != pi_[srq];
    if (bool(top_->avail_o) != avail || top_->ci_o != ci_[srq]) {
      ADD_FAILURE() << "cycle " << cycles_ << ": SRQ " << srq << " avail " << int(top_->avail_o) << " ci "
                    << top_->ci_o << ", model " << avail << " " << ci_[srq] << " (pi " << pi_[srq] << ")";
      return;
    }
    cov_.hit(avail ? "srq_avail" : "srq_empty");
    if (bool(top_->last_o) != last) {
      ADD_FAILURE() << "cycle " << cycles_ << ": last_o " << int(top_->last_o) << ", model " << last;
      return;
    }
    if (rd_pend_) {
      if (!top_->rd_valid_o || top_->rd_addr_o != addr_ || top_->rd_len_o != kStride) {
        ADD_FAILURE() << "cycle " << cycles_ << ": DMA request valid " << int(top_->rd_valid_o) << " addr 0x"
                      << std::hex << top_->rd_addr_o << ", model 0x" << addr_ << std::dec;
        return;
      }
      if (!rd_ready) cov_.hit("rd_backpressure");
    } else if (top_->rd_valid_o) {
      ADD_FAILURE() << "cycle " << cycles_ << ": DMA request without a fetch";
      return;
    }
    if (shown_ && !busy_ && !check_wqe()) return;

    // ---------------- model of this edge
    if (rd_pend_ && rd_ready) {
      rd_pend_ = false;
      rsp_on_ = true;
      rsp_k_ = 0;
      lat_ = static_cast<unsigned>(urand(rng_, 0, k.max_lat));
    }
    if (beat) ++rsp_k_;
    if (last) {
      rsp_on_ = false;
      busy_ = false;
      shown_ = true;
      tb_on_ = false;
      shown_addr_ = addr_;
    }
    if (req) {
      const uint16_t i = req_srq ? ci_[srq] : idx_;
      addr_ = base_ + (uint64_t(i) & ((1ull << log_) - 1)) * kStride;
      busy_ = true;
      rd_pend_ = true;
      shown_ = false;
      if (req_srq) {
        cov_.hit("srq_fetch");
        if (db && db_idx == srq) cov_.hit("doorbell_and_fetch_same_srq");
        ++ci_[srq];
      } else {
        cov_.hit("rq_fetch");
      }
    }
    if (tb) {
      tb_on_ = true;
      shown_lo_ = tb_lo_;
      shown_hi_ = tb_hi_;
      cov_.hit("tag_buffer");
    }
    if (db && db_idx < kSrq) pi_[db_idx] = db_pi;
    if (db && db_idx >= kSrq) cov_.hit("doorbell_out_of_range");
    if (rst && rst_idx < kSrq) {
      if (req && req_srq && rst_idx == srq) cov_.hit("reset_and_fetch_same_srq");
      if (db && db_idx == rst_idx) cov_.hit("reset_and_doorbell_same_srq");
      pi_[rst_idx] = ci_[rst_idx] = 0;
    }
    if (rst && rst_idx >= kSrq) cov_.hit("reset_out_of_range");
    clock_tick(*top_, *ctx_);
    ++cycles_;
  }

  bool check_wqe() {
    const uint64_t wrid = tb_on_ ? 0 : host_le(shown_addr_ + hw::wqe::WR_ID_OFF, 8);
    const unsigned nsge = tb_on_ ? 1 : host_byte(shown_addr_ + hw::wqe::NUM_SGE_OFF);
    bool ok = top_->wrid_o == wrid && top_->nsge_o == nsge;
    for (unsigned s = 0; s < (tb_on_ ? 1u : kSges) && ok; ++s) {
      const uint64_t a = shown_addr_ + 32 + 16 * s;
      const uint64_t lo = tb_on_ ? shown_lo_ : host_le(a, 8), hi = tb_on_ ? shown_hi_ : host_le(a + 8, 8);
      ok = sig_bits(top_->sges_o, 128 * s, 64) == lo && sig_bits(top_->sges_o, 128 * s + 64, 64) == hi;
    }
    if (!ok) {
      ADD_FAILURE() << "cycle " << cycles_ << ": WQE fields (" << (tb_on_ ? "tag buffer" : "fetched")
                    << ") differ: wr_id 0x" << std::hex << top_->wrid_o << ", model 0x" << wrid << "; nsge "
                    << std::dec << int(top_->nsge_o) << ", model " << nsge << "; SGE 0 0x" << std::hex
                    << sig_bits(top_->sges_o, 64, 64) << "_" << sig_bits(top_->sges_o, 0, 64) << std::dec;
      return false;
    }
    cov_.hit(tb_on_ ? "tag_buffer_checked" : "wqe_checked");
    return true;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rq_src> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  uint64_t cycles_ = 0;
  std::array<uint16_t, kSrq> pi_{}, ci_{};
  uint64_t base_ = 0, addr_ = 0, shown_addr_ = 0, tb_lo_ = 0, tb_hi_ = 0, shown_lo_ = 0, shown_hi_ = 0;
  unsigned log_ = 0, rsp_k_ = 0, lat_ = 0;
  uint16_t idx_ = 0;
  bool busy_ = false, rd_pend_ = false, rsp_on_ = false, shown_ = false, tb_on_ = false;
};

std::vector<std::string> coverage_points() {
  return {"srq_avail", "srq_empty", "srq_fetch", "rq_fetch", "tag_buffer",
          "tag_buffer_checked", "wqe_checked", "rd_backpressure", "doorbell_and_fetch_same_srq",
          "reset_and_fetch_same_srq", "reset_and_doorbell_same_srq", "doorbell_out_of_range",
          "reset_out_of_range"};
}

TEST(RqSrc, RandomStimulusAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    Coverage cov(coverage_points());
    SrcBench b(seed, cov);
    b.run({0.5, 0.05, 0.5, 0.6, 0.3, 0.7, 0.2, 8}, 20000);   // busy: every source, back-pressure
    b.run({0.9, 0.3, 1.0, 0.9, 0.0, 1.0, 0.0, 0}, 5000);      // back-to-back fetches, frequent resets
    b.run({0.02, 0.0, 0.05, 0.5, 0.5, 0.3, 0.5, 30}, 5000);   // sparse, slow memory
    cycles += b.cycles();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  report_speed("rq_src", "mix", cycles, sw.seconds());
  total.report("tmnic_rq_src");
}

}  // namespace
