// tmnic_tm_classify against a model of its contract, cycle by cycle. Per classification: the
// TMH is read in the first cycle after the start in which the first 16 bytes are stored (or at once
// without a payload); an untagged message (no payload, an opcode other than EAGER/RNDV, a payload
// shorter than a TMH) is done the next cycle as RXK_NOTAG, rnr_o = !has_wqe_i of the decision
// cycle; a tagged one raises a lookup (tag from the TMH's big-endian bytes, commit_miss =
// has_wqe_i of the decision cycle), held unchanged until taken. The lookup engine (modelled)
// answers after a random latency: unexpected -> done next cycle as RXK_UNEXP; blocked or a miss
// with an empty SRQ -> done next cycle with rnr_o; a hit -> the buffer entry is read (tb_re_o for
// one cycle with the handle) in the first cycle after the answer whose handle is not waiting for
// its ADD (add_pend), and done comes with the RAM's data one cycle later as RXK_MATCHED. Also
// checked: every result field (handle, tag, app_ctx, rndv) held until the next start, idle_o, the
// statistics pulses (one per classified message, none for rnr_o) with their SRQ, no lookup and no
// buffer read outside these windows.
#include <gtest/gtest.h>

#include <deque>
#include <sstream>

#include "Vtmnic_tm_classify.h"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kEntries = 1024, kSrq = 16;
// rx_kind_e (tmnic_pkg)
enum Kind : unsigned { kPlain = 0, kMatched = 1, kUnexp = 2, kNotag = 3 };

struct Knobs {
  double start_rate, beg_late, ready_rate, pend_rate, wqe_rate;
};

class ClassifyBench {
 public:
  ClassifyBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_tm_classify>(ctx_.get())), rng_(seed),
        cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->start_i = 0;
    top_->lk_ready_i = 0;
    top_->lk_rsp_valid_i = 0;
    top_->add_pend_i = 0;
    top_->head_beg_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~ClassifyBench() { top_->final(); }

  void run(const Knobs& k, uint64_t n) {
    const uint64_t stop = done_n_ + n;
    uint64_t guard = 0;
    while (done_n_ < stop && !::testing::Test::HasFailure()) {
      step(k);
      if (++guard > n * 1000) {
        ADD_FAILURE() << "no progress";
        return;
      }
    }
  }
  uint64_t cycles() const { return cyc_; }

 private:
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cyc_;
  }
  template <class... A>
  bool fail(A... a) {
    std::ostringstream o;
    o << "cycle " << cyc_ << ": ";
    (o << ... << a);
    ADD_FAILURE() << o.str();
    return false;
  }

  // A random first payload block: a TMH (tagged or not) or anything.
  void new_message() {
    switch (urand(rng_, 0, 9)) {
      case 0: pay_len_ = 0; break;
      case 1: pay_len_ = static_cast<unsigned>(urand(rng_, 1, 15)); break;
      case 2: pay_len_ = 16; break;
      default: pay_len_ = static_cast<unsigned>(urand(rng_, 17, 4096)); break;
    }
    uint8_t op;
    switch (urand(rng_, 0, 6)) {
      case 0: case 1: case 2: op = hw::tmh_op::EAGER; break;
      case 3: case 4: op = hw::tmh_op::RNDV; break;
      case 5: op = hw::tmh_op::NO_TAG; break;
      default: op = static_cast<uint8_t>(urand(rng_, 0, 255)); break;
    }
    for (auto& b : head_) b = static_cast<uint8_t>(urand(rng_, 0, 255));
    head_[0] = op;
    tag_ = 0;
    for (int i = 0; i < 8; ++i) tag_ = (tag_ << 8) | head_[8 + i];
    app_ = 0;
    for (int i = 0; i < 4; ++i) app_ = (app_ << 8) | head_[4 + i];
    op_ = op;
  }

  void step(const Knobs& k) {
    // ---- inputs
    top_->start_i = 0;
    bool start = false;
    if (ph_ == P_IDLE && chance(rng_, k.start_rate)) {
      start = true;
      new_message();
      srq_ = static_cast<unsigned>(urand(rng_, 0, kSrq - 1));
      top_->start_i = 1;
      top_->srq_i = srq_;
      top_->pay_len_i = pay_len_;
      beg_at_ = chance(rng_, k.beg_late) ? cyc_ + urand(rng_, 1, 12) : cyc_;
      for (unsigned i = 0; i < 4; ++i) {
        uint32_t w = 0;
        for (unsigned b = 0; b < 4; ++b) w |= static_cast<uint32_t>(head_[4 * i + b]) << (8 * b);
        top_->head_first_i[i] = w;
      }
      ph_ = P_TMH;
      first_ = cyc_ + 1;
      if (beg_at_ > cyc_) cov_.hit("head_late");
    }
    top_->head_beg_i = ph_ != P_IDLE && pay_len_ > 0 && cyc_ >= beg_at_;
    top_->has_wqe_i = chance(rng_, k.wqe_rate);
    top_->lk_ready_i = chance(rng_, k.ready_rate);
    // Lookup answer
    top_->lk_rsp_valid_i = 0;
    if (ph_ == P_LK_WAIT && cyc_ >= rsp_at_) {
      top_->lk_rsp_valid_i = 1;
      const unsigned r = static_cast<unsigned>(urand(rng_, 0, 9));
      rsp_ = r < 5 ? 0 : r < 8 ? 1 : 2;  // hit, unexpected, neither (blocked or empty SRQ)
      handle_ = static_cast<unsigned>(chance(rng_, 0.2) ? (chance(rng_, 0.5) ? 0 : kEntries - 1)
                                                        : urand(rng_, 0, kEntries - 1));
      top_->lk_rsp_hit_i = rsp_ == 0;
      top_->lk_rsp_unexp_i = rsp_ == 1;
      top_->lk_rsp_handle_i = handle_;
    }
    // ADD pending: the matched handle (for a while) or another one
    bool pend_same = false;
    top_->add_pend_i = 0;
    if (chance(rng_, k.pend_rate)) {
      top_->add_pend_i = 1;
      pend_same = (ph_ == P_BUF) && chance(rng_, 0.7);
      top_->add_pend_handle_i = pend_same ? handle_ : (handle_ + 1 + urand(rng_, 0, kEntries - 2)) % kEntries;
    }
    top_->eval();

    // ---- outputs against the model (before the edge)
    const bool idle_exp = ph_ == P_IDLE || start;
    if (bool(top_->idle_o) != idle_exp) return void(fail("idle_o ", int(top_->idle_o), ", model ", idle_exp));
    // Pulses decided in the previous cycle
    const unsigned st = (top_->tm_exp_o ? 1 : 0) | (top_->tm_unexp_o ? 2 : 0) | (top_->tm_notag_o ? 4 : 0);
    if (st != stat_exp_) return void(fail("statistics pulses ", st, ", model ", stat_exp_));
    if (st && top_->tm_srq_o != stat_srq_) return void(fail("tm_srq_o ", int(top_->tm_srq_o), ", model ", stat_srq_));
    stat_exp_ = 0;
    // done
    if (bool(top_->done_o) != (done_at_ == cyc_)) return void(fail("done_o ", int(top_->done_o), ", model at ", done_at_));
    if (top_->done_o || (have_res_ && !start && ph_ == P_IDLE)) {
      // (with rnr_o the kind and the rest mean nothing)
      const bool rndv_exp = res_kind_ != kNotag && res_op_ == hw::tmh_op::RNDV;
      if (bool(top_->rnr_o) != res_rnr_ || (!res_rnr_ && (top_->kind_o != res_kind_ || bool(top_->rndv_o) != rndv_exp)) ||
          (!res_rnr_ && res_kind_ == kMatched &&
           (top_->handle_o != res_handle_ || top_->tag_o != res_tag_ || top_->ctx_o != res_app_)))
        return void(fail("result {kind ", int(top_->kind_o), " rnr ", int(top_->rnr_o), " rndv ", int(top_->rndv_o),
                         " handle ", top_->handle_o, " tag ", top_->tag_o, " ctx ", top_->ctx_o, "}, model {kind ",
                         res_kind_, " rnr ", res_rnr_, " handle ", res_handle_, " tag ", res_tag_, " ctx ", res_app_, "}"));
      if (top_->done_o) {
        ++done_n_;
        have_res_ = true;
      }
    }
    // lookup request
    if (top_->lk_valid_o) {
      if (ph_ != P_LK_REQ) return void(fail("lookup request with none expected"));
      if (top_->lk_tag_o != tag_ || bool(top_->lk_commit_miss_o) != commit_exp_)
        return void(fail("lookup {tag ", top_->lk_tag_o, " commit_miss ", int(top_->lk_commit_miss_o), "}, model {",
                         tag_, " ", commit_exp_, "}"));
      if (!top_->lk_ready_i) cov_.hit("lookup_stalled");
    } else if (ph_ == P_LK_REQ && cyc_ > lk_from_) {
      return void(fail("lookup request dropped or late"));
    }
    // buffer read
    if (bool(top_->tb_re_o) != (tb_at_ == cyc_)) return void(fail("tb_re_o ", int(top_->tb_re_o), ", model at ", tb_at_));
    if (top_->tb_re_o && top_->tb_raddr_o != handle_) return void(fail("tb_raddr_o ", top_->tb_raddr_o, ", model ", handle_));

    // ---- model transitions at this edge
    const bool beg = top_->head_beg_i, wqe = top_->has_wqe_i;
    switch (ph_) {
      case P_IDLE: break;
      case P_TMH:
        if (cyc_ < first_) break;
        {
          const bool tagged = (op_ == hw::tmh_op::EAGER || op_ == hw::tmh_op::RNDV) && pay_len_ >= 16;
          res_op_ = op_;
          res_tag_ = tag_;
          res_app_ = app_;
          if (pay_len_ == 0 || (beg && !tagged)) {
            res_kind_ = kNotag;
            res_rnr_ = !wqe;
            done_at_ = cyc_ + 1;
            if (wqe) stat_exp_ = 4, stat_srq_ = srq_;
            ph_ = P_IDLE;
            cov_.hit(pay_len_ == 0 ? "notag_no_payload" : pay_len_ < 16 && tagged_op() ? "notag_short" : "notag_opcode");
            if (!wqe) cov_.hit("notag_rnr");
          } else if (beg) {
            commit_exp_ = wqe;
            lk_from_ = cyc_ + 1;
            ph_ = P_LK_REQ;
            cov_.hit(op_ == hw::tmh_op::RNDV ? "lookup_rndv" : "lookup_eager");
          }
        }
        break;
      case P_LK_REQ:
        if (top_->lk_valid_o && top_->lk_ready_i) {
          ph_ = P_LK_WAIT;
          rsp_at_ = cyc_ + 1 + urand(rng_, 0, chance(rng_, 0.5) ? 0 : 8);
        }
        break;
      case P_LK_WAIT:
        if (top_->lk_rsp_valid_i) {
          stat_srq_ = srq_;
          if (rsp_ == 0) {
            res_kind_ = kMatched;
            res_handle_ = handle_;
            res_rnr_ = false;
            stat_exp_ = 1;
            ph_ = P_BUF;
            cov_.hit("hit");
          } else if (rsp_ == 1) {
            res_kind_ = kUnexp;
            res_rnr_ = false;
            stat_exp_ = 2;
            done_at_ = cyc_ + 1;
            ph_ = P_IDLE;
            cov_.hit("unexpected");
          } else {
            res_rnr_ = true;
            done_at_ = cyc_ + 1;
            ph_ = P_IDLE;
            cov_.hit("lookup_rnr");
          }
        }
        break;
      case P_BUF:
        if (top_->add_pend_i && top_->add_pend_handle_i == handle_) {
          cov_.hit("wait_for_add");
        } else {
          if (top_->add_pend_i) cov_.hit("other_add_pending");
          tb_at_ = cyc_ + 1;
          done_at_ = cyc_ + 2;
          ph_ = P_BUF_RD;
        }
        break;
      case P_BUF_RD:
        if (cyc_ + 1 == done_at_) ph_ = P_IDLE;
        break;
    }
    tick();
  }
  bool tagged_op() const { return op_ == hw::tmh_op::EAGER || op_ == hw::tmh_op::RNDV; }

  enum Phase { P_IDLE, P_TMH, P_LK_REQ, P_LK_WAIT, P_BUF, P_BUF_RD };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_tm_classify> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  Phase ph_ = P_IDLE;
  uint8_t head_[16] = {};
  uint8_t op_ = 0;
  uint64_t tag_ = 0, res_tag_ = 0;
  uint32_t app_ = 0, res_app_ = 0;
  uint8_t res_op_ = 0;
  unsigned res_handle_ = 0;
  unsigned pay_len_ = 0, srq_ = 0, rsp_ = 0, handle_ = 0, res_kind_ = 0, stat_exp_ = 0, stat_srq_ = 0;
  bool res_rnr_ = false, commit_exp_ = false, have_res_ = false;
  uint64_t cyc_ = 0, first_ = 0, beg_at_ = 0, lk_from_ = 0, rsp_at_ = 0, tb_at_ = ~0ull, done_at_ = ~0ull,
           done_n_ = 0;
};

TEST(TmClassify, RandomMessagesAgainstModel) {
  Coverage cov({"head_late", "notag_no_payload", "notag_short", "notag_opcode", "notag_rnr", "lookup_eager",
                "lookup_rndv", "lookup_stalled", "hit", "unexpected", "lookup_rnr", "wait_for_add",
                "other_add_pending"});
  const Knobs mixes[] = {{0.5, 0.5, 0.5, 0.3, 0.7}, {1.0, 0.0, 1.0, 0.0, 1.0}, {0.3, 0.8, 0.2, 0.7, 0.3}};
  uint64_t cyc = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ClassifyBench b(seed, cov);
    Stopwatch sw;
    for (const Knobs& k : mixes) {
      b.run(k, 3000);
      if (HasFailure()) return;
    }
    secs += sw.seconds();
    cyc += b.cycles();
  }
  report_speed("tm_classify", "busy", cyc, secs);
  cov.report("tm_classify");
}

}  // namespace
