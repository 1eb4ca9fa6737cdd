// tmnic_async_ev (a QP moved to ERR -> an ASYNC_EVENT record for the ASYNC_CQ) against a model of
// its contract: with ASYNC_CQ enabled, every event of either side leaves as one record {cq: the
// register's CQ, opcode ASYNC_EVENT, status: the kind (AEV_QP_ERR for the requester side, the
// responder's reason otherwise, AEV_CQ_ERR for the CQ writer's and AEV_QP_FATAL for the context's
// lost-completion errors), qp_num: the QP, all else 0}, each source's records in its order; an
// event that finds its side's FIFO full is lost and pulses drop_o one cycle later, exactly then
// (the model keeps each FIFO's level from the records it sees leave); nothing is recorded while
// disabled; idle_o is high exactly when nothing is queued or offered. Stimulus: bursts and quiet
// stretches of events on both sides (also in the same cycle), back-pressure from none to long
// stalls, and the register switched off and on (its CQ changed only while the block is idle, the
// time a driver changes it).
#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>

#include "Vtmnic_async_ev.h"
#include "lib/coverage.hpp"
#include "lib/cqe_req.hpp"
#include "lib/seed.hpp"
#include "tmnic/hwif.h"

#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif
#ifndef TB_DEPTH
#define TB_DEPTH 4
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

struct Knobs {
  double ev;      // chance of an event per side per cycle while a burst lasts
  double stall;   // chance that the CQ writer is not ready
};

struct Rec {
  uint32_t qp;
  uint8_t kind;
};

class AsyncEvBench {
 public:
  AsyncEvBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_async_ev>(ctx_.get())), rng_(seed),
        cov_(cov), k_(k) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->cfg_i = 0;
    top_->sq_err_i = 0;
    top_->rq_err_i = 0;
    top_->cq_err_i = 0;
    top_->fat_i = 0;
    top_->cqe_ready_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock();
    top_->rst_ni = 1;
    top_->eval();
    set_cfg(true, uint16_t(rng_()));
  }
  ~AsyncEvBench() { top_->final(); }

  void run(uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFatalFailure(); ++c) step();
    // Drain: no more events, the consumer ready.
    for (int c = 0; c < 100 && !::testing::Test::HasFatalFailure(); ++c) step(false);
    EXPECT_TRUE(exp_[0].empty() && exp_[1].empty() && exp_[2].empty()) << "records never left";
    EXPECT_TRUE(top_->idle_o) << "idle_o low with nothing queued";
    EXPECT_GT(out_, 0u);
  }

 private:
  void set_cfg(bool en, uint16_t cq) {
    en_ = en;
    cq_ = cq;
    top_->cfg_i = (en ? 1u << 31 : 0u) | cq;
  }

  void step(bool stimulus = true) {
    // The block's outputs of this cycle (registered: they depend on earlier cycles only).
    const bool valid = top_->cqe_valid_o;
    const bool ready = !stimulus || !chance(rng_, k_.stall);
    if (top_->drop_o != (drop_due_ == cycle_)) {
      ADD_FAILURE() << "cycle " << cycle_ << ": drop_o " << int(top_->drop_o) << ", expected " << (drop_due_ == cycle_);
      return;
    }
    if (top_->drop_o) cov_.hit("drop");
    const bool quiet = exp_[0].empty() && exp_[1].empty() && exp_[2].empty() && exp_[3].empty() && !valid;
    if (bool(top_->idle_o) != quiet) {
      ADD_FAILURE() << "cycle " << cycle_ << ": idle_o " << int(top_->idle_o) << " with " << exp_[0].size() << "+"
                    << exp_[1].size() << " records expected";
      return;
    }
    // A record offered for the first time left a FIFO in the previous cycle: check it, and count
    // that FIFO one lower from then on.
    if (valid && !offered_) {
      const CqeReq r = unpack_cqe_req(top_->cqe_o.data(), 0);
      // requester-side QPs are even, responder-side odd (stimulus); the CQ writer's and the lost
      // completions' by their kind
      const int side = r.status == hw::AEV_CQ_ERR ? 2 : r.status == hw::AEV_QP_FATAL ? 3 : int(r.qp_num & 1);
      if (exp_[side].empty()) {
        ADD_FAILURE() << "cycle " << cycle_ << ": a record for QP " << r.qp_num << " nobody raised";
        return;
      }
      const Rec e = exp_[side].front();
      exp_[side].pop_front();
      level_[side]--;
      CqeReq want;
      want.cq = cq_;
      want.qp_num = e.qp;
      want.opcode = hw::wc_op::ASYNC_EVENT;
      want.status = e.kind;
      if (!(r == want)) {
        ADD_FAILURE() << "cycle " << cycle_ << ": record {cq " << r.cq << " qp " << r.qp_num << " op " << int(r.opcode)
                      << " status " << int(r.status) << "}, expected {cq " << want.cq << " qp " << want.qp_num
                      << " status " << int(want.status) << "} (or another field nonzero)";
        return;
      }
      cov_.hit(side == 3 ? "qp_fatal_record" : side == 2 ? "cq_record" : side ? "responder_record" : "requester_record");
      if (e.kind == hw::AEV_QP_REQ_ERR) cov_.hit("kind_req_err");
      if (e.kind == hw::AEV_QP_ACCESS_ERR) cov_.hit("kind_access_err");
      if (e.kind == hw::AEV_COMM_EST) cov_.hit("kind_comm_est");
      out_++;
    }
    if (valid && !ready) cov_.hit("stalled");
    offered_ = valid && !ready;

    // Inputs of this cycle.
    bool ev[4] = {false, false, false, false};
    Rec rec[4] = {};
    if (stimulus) {
      if (burst_left_ == 0 && chance(rng_, 0.01)) burst_left_ = urand(rng_, 1, 40);
      const double p = burst_left_ ? k_.ev : 0.002;
      if (burst_left_) burst_left_--;
      for (int s = 0; s < 4; ++s) {
        ev[s] = chance(rng_, s >= 2 ? p / 4 : p);
        rec[s].qp = s == 2   ? uint32_t(urand(rng_, 0, 0xFFFF))   // a CQ number, any 16 bits
                    : s == 3 ? uint32_t(urand(rng_, 0, TB_NUM_QP - 1))
                             : (uint32_t(urand(rng_, 0, TB_NUM_QP / 2 - 1)) << 1) | uint32_t(s);
        rec[s].kind = s == 0 ? uint8_t(hw::AEV_QP_ERR) : s == 2 ? uint8_t(hw::AEV_CQ_ERR)
                      : s == 3 ? uint8_t(hw::AEV_QP_FATAL) : uint8_t(urand(rng_, 1, hw::AEV_COMM_EST));
      }
      // The register: off and on now and then; its CQ changes only while the block is idle.
      if (chance(rng_, 0.002)) {
        const bool idle_now = quiet && !ev[0] && !ev[1] && !ev[2] && !ev[3];
        set_cfg(!en_, idle_now ? uint16_t(rng_()) : cq_);
        cov_.hit(en_ ? "enabled" : "disabled");
      }
    }
    top_->sq_err_i = ev[0];
    top_->sq_err_qp_i = rec[0].qp;
    top_->rq_err_i = ev[1];
    top_->rq_err_qp_i = rec[1].qp;
    top_->rq_err_kind_i = rec[1].kind;
    top_->cq_err_i = ev[2];
    top_->cq_err_cq_i = rec[2].qp;
    top_->fat_i = ev[3];
    top_->fat_qp_i = rec[3].qp;
    top_->cqe_ready_i = ready;
    if (ev[0] && ev[1]) cov_.hit("both_sides_one_cycle");
    if (ev[0] && ev[1] && ev[2]) cov_.hit("three_sources_one_cycle");
    if (ev[0] && ev[1] && ev[2] && ev[3]) cov_.hit("four_sources_one_cycle");
    for (int s = 0; s < 4; ++s) {
      if (!ev[s]) continue;
      if (!en_) {
        cov_.hit("event_while_disabled");
        continue;
      }
      if (level_[s] >= TB_DEPTH) {   // full: lost, said one cycle later
        drop_due_ = cycle_ + 1;
        continue;
      }
      level_[s]++;
      exp_[s].push_back(rec[s]);
    }
    top_->eval();
    clock();
  }

  void clock() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    cycle_++;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_async_ev> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  Knobs k_;
  bool en_ = false, offered_ = false;
  uint16_t cq_ = 0;
  std::deque<Rec> exp_[4];
  unsigned level_[4] = {0, 0, 0, 0};   // entries in each FIFO, as far as the outputs show
  uint64_t cycle_ = 0, drop_due_ = UINT64_MAX, burst_left_ = 0, out_ = 0;
};

TEST(AsyncEv, EveryEventIsOneRecordOrACountedDrop) {
  Coverage cov({"requester_record", "responder_record", "kind_req_err", "kind_access_err", "kind_comm_est", "cq_record", "qp_fatal_record", "three_sources_one_cycle", "four_sources_one_cycle", "both_sides_one_cycle",
                "stalled", "drop", "disabled", "enabled", "event_while_disabled"});
  const Knobs mixes[] = {{0.5, 0.0}, {0.3, 0.5}, {0.8, 0.9}, {0.05, 0.2}};
  unsigned m = 0;
  for (uint64_t seed : seeds({1, 2, 3, 4})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    AsyncEvBench b(seed, mixes[m++ % 4], cov);
    b.run(200000 * test_scale());
    if (HasFatalFailure()) return;
  }
  cov.report("async_ev");
}

}  // namespace
