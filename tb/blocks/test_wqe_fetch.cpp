// tmnic_wqe_fetch against a model of its contract: a request {base, log, idx, count} taken while
// req_ready_o is high becomes one DMA read of n = min(count, entries to the ring's end, BATCH) WQEs
// at base + (idx mod 2^log) * STRIDE; n_o is n; the read's beats (offset-tagged, in order, with
// gaps) are stored; last_o is high exactly in the cycle of the final beat; from the next cycle on,
// wqe_o with sel_i = k is WQE k of the fetch, byte for byte, until the next fetch's first beat.
// Checked every cycle: req_ready_o, the DMA request (held until taken), last_o, and, between
// fetches, every WQE of the batch through sel_i.
// Stimulus: random rings (1..2^10 entries, random beat-aligned bases), free-running indices near
// the ring end and the 16-bit wrap, counts of 1..3*BATCH, back-pressure on the DMA request, random
// response latency and gaps, requests right after the previous fetch and after idle time.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "Vtmnic_wqe_fetch.h"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_STRIDE
#define TB_STRIDE 128
#endif
#ifndef TB_BATCH
#define TB_BATCH 1
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kStride = TB_STRIDE;
constexpr unsigned kBatch = TB_BATCH;

// Host memory: every byte a function of its address (the DMA tests' pattern, fixed salt).
uint8_t host_byte(uint64_t a) { return mem_byte(0x5EED, a); }

struct Knobs {
  double req_rate, rd_ready, rsp_gap;
  unsigned max_lat;
};

class FetchBench {
 public:
  FetchBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_wqe_fetch>(ctx_.get())), rng_(seed),
        cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->req_valid_i = 0;
    top_->rd_ready_i = 0;
    top_->rsp_valid_i = 0;
    top_->sel_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
  }
  ~FetchBench() { top_->final(); }

  void run(const Knobs& k, uint64_t fetches) {
    const uint64_t end = done_ + fetches;
    uint64_t guard = 0;
    while (done_ < end && !::testing::Test::HasFailure()) {
      step(k);
      if (++guard > fetches * 2000 + 10000) {
        ADD_FAILURE() << "no progress";
        return;
      }
    }
  }
  uint64_t cycles() const { return cycles_; }

 private:
  struct Fetch {
    uint64_t addr;
    unsigned n;
  };

  void new_request() {
    log_ = static_cast<unsigned>(chance(rng_, 0.1) ? 0 : urand(rng_, 0, 10));
    const uint64_t size = 1ull << log_;
    base_ = (rng_() & ~uint64_t(kBytes - 1)) & 0x0000FFFFFFFFFFFFull;
    if (chance(rng_, 0.2)) base_ |= 0xFFFF000000000000ull;
    switch (urand(rng_, 0, 3)) {
      case 0: idx_ = static_cast<uint16_t>(rng_()); break;
      case 1: idx_ = static_cast<uint16_t>(0xFFFF - urand(rng_, 0, 3 * kBatch)); break;   // 16-bit wrap
      default: {  // near the ring's end
        const uint64_t slot = size - 1 - std::min<uint64_t>(size - 1, urand(rng_, 0, 2 * kBatch));
        idx_ = static_cast<uint16_t>((urand(rng_, 0, 0xFFFF) & ~(size - 1)) | slot);
      }
    }
    count_ = static_cast<uint16_t>(chance(rng_, 0.05) ? urand(rng_, 1, 0xFFFF) : urand(rng_, 1, 3 * kBatch));
    const uint64_t slot = idx_ & (size - 1);
    const uint64_t to_end = size - slot;
    unsigned n = static_cast<unsigned>(std::min<uint64_t>({count_, to_end, kBatch}));
    exp_ = {base_ + slot * kStride, n};
    if (n < kBatch && to_end < count_) cov_.hit("cut_by_ring_end");
    if (n < kBatch && count_ <= to_end) cov_.hit("cut_by_count");
    if (n == kBatch) cov_.hit("full_batch");
    if (log_ == 0) cov_.hit("one_entry_ring");
    if (idx_ >= 0xFFFF - 2 * kBatch) cov_.hit("index_near_16_bit_wrap");   // (a ring's end is never past it)
  }

  void step(const Knobs& k) {
    // ---------------- drive
    const bool ready_model = !busy_;
    bool req = false;
    if (ready_model && !want_) want_ = chance(rng_, k.req_rate);
    if (want_ && ready_model) {
      if (!have_req_) {
        new_request();
        have_req_ = true;
      }
      req = true;
    }
    top_->req_valid_i = req;
    top_->req_base_i = base_;
    top_->req_log_i = log_;
    top_->req_idx_i = idx_;
    top_->req_count_i = count_;
    const bool rd_ready = chance(rng_, k.rd_ready);
    top_->rd_ready_i = rd_ready;
    // Response beat of the accepted read, if due.
    bool beat = false;
    bool last = false;
    if (rsp_on_ && lat_ == 0 && !chance(rng_, k.rsp_gap)) {
      beat = true;
      const unsigned total = cur_.n * kStride / kBytes;
      last = rsp_k_ + 1 == total;
      for (unsigned i = 0; i < kBytes; ++i)
        set_byte(top_->rsp_data_i.data(), i, host_byte(cur_.addr + uint64_t(rsp_k_) * kBytes + i));
      top_->rsp_off_i = static_cast<int16_t>(rsp_k_ * kBytes);
      top_->rsp_last_i = last;
    } else {
      top_->rsp_last_i = static_cast<bool>(rng_() & 1);   // ignored without valid
      if (rsp_on_ && lat_ == 0 && rsp_k_ > 0) cov_.hit("rsp_gap");
    }
    top_->rsp_valid_i = beat;
    if (rsp_on_ && lat_ > 0) --lat_;
    // Between fetches: look at one WQE of the batch through sel_i.
    unsigned sel = static_cast<unsigned>(urand(rng_, 0, kBatch - 1));
    top_->sel_i = sel;
    top_->eval();

    // ---------------- check this cycle's outputs
    if (bool(top_->req_ready_o) != ready_model) {
      ADD_FAILURE() << "cycle " << cycles_ << ": req_ready_o " << int(top_->req_ready_o) << ", model " << ready_model;
      return;
    }
    if (bool(top_->last_o) != last) {
      ADD_FAILURE() << "cycle " << cycles_ << ": last_o " << int(top_->last_o) << ", model " << last;
      return;
    }
    if (rd_pend_) {
      if (!top_->rd_valid_o || top_->rd_addr_o != cur_.addr || top_->rd_len_o != cur_.n * kStride) {
        ADD_FAILURE() << "cycle " << cycles_ << ": DMA request valid " << int(top_->rd_valid_o) << " addr 0x" << std::hex
                      << top_->rd_addr_o << " len 0x" << top_->rd_len_o << ", model addr 0x" << cur_.addr << " len 0x"
                      << cur_.n * kStride << std::dec;
        return;
      }
      if (!rd_ready) cov_.hit("rd_backpressure");
    } else if (top_->rd_valid_o) {
      ADD_FAILURE() << "cycle " << cycles_ << ": DMA request without a fetch";
      return;
    }
    if (busy_ && top_->n_o != cur_.n) {
      ADD_FAILURE() << "cycle " << cycles_ << ": n_o " << int(top_->n_o) << ", model " << cur_.n;
      return;
    }
    if (have_wqes_ && !busy_) {
      if (sel < shown_.n) check_wqe(sel);
      cov_.hit("wqe_checked");
    }

    // ---------------- model of this edge
    if (rd_pend_ && rd_ready) {
      rd_pend_ = false;
      rsp_on_ = true;
      rsp_k_ = 0;
      lat_ = static_cast<unsigned>(urand(rng_, 0, k.max_lat));
    }
    if (beat) {
      if (rsp_k_ == 0) have_wqes_ = false;   // the store is being overwritten
      ++rsp_k_;
    }
    if (last) {
      rsp_on_ = false;
      busy_ = false;
      have_wqes_ = true;
      shown_ = cur_;
      ++done_;
      last_cycle_ = cycles_;
    }
    if (req) {
      cur_ = exp_;
      busy_ = true;
      rd_pend_ = true;
      have_req_ = false;
      want_ = false;
      if (done_ > 0 && cycles_ == last_cycle_ + 1) cov_.hit("back_to_back");
    }
    clock_tick(*top_, *ctx_);
    ++cycles_;
  }

  void check_wqe(unsigned k) {
    for (unsigned i = 0; i < kStride; ++i) {
      const uint8_t want = host_byte(shown_.addr + uint64_t(k) * kStride + i);
      const uint8_t got = byte_of(top_->wqe_o.data(), i);
      if (got != want) {
        ADD_FAILURE() << "cycle " << cycles_ << ": WQE " << k << " of the fetch at 0x" << std::hex << shown_.addr
                      << " byte " << std::dec << i << " is " << int(got) << ", model " << int(want);
        return;
      }
    }
    if (k == shown_.n - 1 && shown_.n > 1) cov_.hit("last_of_batch_checked");
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_wqe_fetch> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  uint64_t cycles_ = 0, done_ = 0;
  // request being offered
  bool want_ = false, have_req_ = false;
  uint64_t last_cycle_ = 0;
  uint64_t base_ = 0;
  unsigned log_ = 0;
  uint16_t idx_ = 0, count_ = 1;
  Fetch exp_{};
  // fetch in flight, last one done
  bool busy_ = false, rd_pend_ = false, rsp_on_ = false, have_wqes_ = false;
  unsigned rsp_k_ = 0, lat_ = 0;
  Fetch cur_{}, shown_{};
};

std::vector<std::string> coverage_points() {
  std::vector<std::string> v = {"full_batch", "one_entry_ring", "index_near_16_bit_wrap",
                                "rd_backpressure", "wqe_checked", "back_to_back"};
  if (kBatch > 1) {
    v.push_back("cut_by_ring_end");
    v.push_back("cut_by_count");
    v.push_back("last_of_batch_checked");
  }
  if (kStride > kBytes || kBatch > 1) v.push_back("rsp_gap");
  return v;
}

TEST(WqeFetch, RandomRingsAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    Coverage cov(coverage_points());
    FetchBench b(seed, cov);
    b.run({0.6, 0.7, 0.2, 12}, 1500);     // busy: back-pressure, gaps, latency
    b.run({1.0, 1.0, 0.0, 0}, 500);       // back to back, no stalls
    b.run({0.05, 0.3, 0.5, 30}, 200);     // sparse, slow memory
    cycles += b.cycles();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  report_speed("wqe_fetch", "mix", cycles, sw.seconds());
  total.report("tmnic_wqe_fetch");
}

}  // namespace
