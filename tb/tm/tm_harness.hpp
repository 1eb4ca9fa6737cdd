// Cycle-level driver and checker of a Verilated tmnic_tm_engine, shared by the tests and the bench.
//
// The caller puts at most one request in each slot (op_slot, lk_slot); step() presents them
// (valid held until accepted), clocks the engine once, applies every accepted request to the
// reference model at once (acceptance order = model order) and queues the model's response with a
// snapshot of the per-SRQ observability outputs. Each response pulse of the engine must be the
// oldest queued one, on the right channel, with the same fields, and the observability outputs in
// that cycle must equal the snapshot (the engine's state just after that request). idle_o is
// checked every cycle. Failures stop at the first mismatch (errors() > 0, message in what()).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <verilated.h>

#include "lib/bits.hpp"
#include "tm_model.hpp"

namespace tmnic::tm {

// A field of a signal (an integer or a VlWide): tb/lib/bits.hpp.
using tmnic::tb::sig_bits;

struct Obs {
  std::vector<uint32_t> occ, dis, hw, sw;
  bool operator==(const Obs& o) const { return occ == o.occ && dis == o.dis && hw == o.hw && sw == o.sw; }
};

template <class V>
class Harness {
 public:
  struct Pending {
    Req req;
    Rsp exp;
    uint64_t acc_cycle;
    Obs obs;
  };

  Harness(unsigned n, unsigned nsrq, bool check = true)
      : n_(n), nsrq_(nsrq), hw_(0), check_(check), ctx_(std::make_unique<VerilatedContext>()),
        top_(std::make_unique<V>(ctx_.get())), model_(n, nsrq) {
    while ((1u << hw_) < n) ++hw_;
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->op_valid_i = 0;
    top_->lk_valid_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    // The engine empties its tables after reset (one pass over them) and accepts nothing meanwhile.
    for (unsigned i = 0; i < 4 * n + 64 && !top_->lk_ready_o; ++i) {
      tick();
      top_->eval();
    }
    if (!top_->lk_ready_o) fail("not ready after the reset pass");
    cycles_ = 0;
  }
  ~Harness() { top_->final(); }

  // A reset in the middle of a run (nothing in flight): the engine forgets every entry and counter
  // (its tables keep their contents over a reset; its first pass must empty all of them) and accepts
  // nothing until that pass is done. The model starts empty too.
  void reset() {
    if (!q_.empty() || op_slot || lk_slot) fail("reset with requests in flight");
    top_->op_valid_i = 0;
    top_->lk_valid_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    for (unsigned i = 0; i < 4 * n_ + 64 && !top_->lk_ready_o; ++i) {
      tick();
      top_->eval();
    }
    if (!top_->lk_ready_o) fail("not ready after the reset pass");
    model_ = Model(n_, nsrq_);
  }

  std::optional<Req> op_slot, lk_slot;

  // One clock cycle. Returns the number of requests accepted (0 or 1).
  unsigned step() {
    drive();
    top_->eval();
    const bool op_acc = top_->op_valid_i && top_->op_ready_o;
    const bool lk_acc = top_->lk_valid_i && top_->lk_ready_o;
    last_both_valid_ = top_->op_valid_i && top_->lk_valid_i;
    last_stall_ = (top_->op_valid_i && !top_->op_ready_o) || (top_->lk_valid_i && !top_->lk_ready_o);
    check_outputs();
    if (op_acc && lk_acc) fail("an op and a lookup accepted in the same cycle");
    last_acc_lk_ = lk_acc;
    last_acc_op_ = op_acc;
    // The lookup is ordered first if both were ever accepted together (never, checked above).
    if (lk_acc) accept(*lk_slot), lk_slot.reset();
    if (op_acc) accept(*op_slot), op_slot.reset();
    tick();
    return unsigned(op_acc) + unsigned(lk_acc);
  }

  // Steps until every accepted request has responded (or max cycles).
  void drain(uint64_t max = 1u << 20) {
    for (uint64_t i = 0; i < max && (!q_.empty() || op_slot || lk_slot) && !errors_; ++i) step();
    if (!q_.empty() && !errors_) fail("responses missing after drain");
  }

  // Runs one request alone and returns its response (drained).
  Rsp run(const Req& r) {
    if (r.lk) lk_slot = r;
    else op_slot = r;
    drain();
    return last_rsp_;
  }

  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) step();
  }

  const Model& model() const { return model_; }
  V& top() { return *top_; }
  uint64_t cycles() const { return cycles_; }
  unsigned errors() const { return errors_; }
  const std::string& what() const { return what_; }
  const std::vector<uint32_t>& lk_latencies() const { return lk_lat_; }
  const std::vector<uint32_t>& op_latencies() const { return op_lat_; }
  size_t in_flight() const { return q_.size(); }
  const Rsp& last_rsp() const { return last_rsp_; }
  // Facts of the last step (for coverage).
  bool last_both_valid() const { return last_both_valid_; }
  bool last_stall() const { return last_stall_; }
  bool last_acc_lk() const { return last_acc_lk_; }
  bool last_acc_op() const { return last_acc_op_; }
  // Callback on every accepted request with the model's response (coverage).
  std::function<void(const Req&, const Rsp&)> on_accept;

 private:
  void drive() {
    auto& t = *top_;
    t.op_valid_i = op_slot.has_value();
    if (op_slot) {
      t.op_code_i = op_slot->code;
      t.op_srq_i = op_slot->srq;
      t.op_handle_i = op_slot->handle;
      t.op_tag_i = op_slot->tag;
      t.op_mask_i = op_slot->mask;
      t.op_sw_cnt_vld_i = op_slot->cnt_vld;
      t.op_sw_cnt_i = op_slot->cnt;
    }
    t.lk_valid_i = lk_slot.has_value();
    if (lk_slot) {
      t.lk_srq_i = lk_slot->srq;
      t.lk_tag_i = lk_slot->tag;
      t.lk_commit_miss_i = lk_slot->commit_miss;
    }
  }

  Obs observe() {
    Obs o;
    auto& t = *top_;
    for (unsigned s = 0; s < nsrq_; ++s) {
      o.occ.push_back(static_cast<uint32_t>(sig_bits(t.occ_o, s * (hw_ + 1), hw_ + 1)));
      o.dis.push_back(static_cast<uint32_t>(sig_bits(t.disabled_o, s * (hw_ + 1), hw_ + 1)));
      o.hw.push_back(static_cast<uint32_t>(sig_bits(t.hw_cnt_o, s * 16, 16)));
      o.sw.push_back(static_cast<uint32_t>(sig_bits(t.sw_cnt_o, s * 16, 16)));
    }
    return o;
  }
  Obs model_obs() const {
    Obs o;
    o.occ.assign(nsrq_, 0);
    o.dis.assign(nsrq_, 0);
    for (auto& e : model_.entries()) {
      ++o.occ[e.srq];
      o.dis[e.srq] += !e.enabled;
    }
    for (unsigned s = 0; s < nsrq_; ++s) {
      o.hw.push_back(model_.hw(s));
      o.sw.push_back(model_.sw(s));
    }
    return o;
  }

  void accept(const Req& r) {
    if (trace_)
      std::printf("[trace] %llu acc %s srq %u %s h %u tag %llx mask %llx cnt %d/%u miss %d\n",
                  (unsigned long long)cycles_, r.lk ? "LK" : "OP", r.srq,
                  r.lk ? "-" : (r.code == kAdd ? "ADD" : r.code == kDel ? "DEL" : r.code == kSync ? "SYNC" : "CLEAR"),
                  r.handle, (unsigned long long)r.tag, (unsigned long long)r.mask, int(r.cnt_vld), r.cnt,
                  int(r.commit_miss));
    Pending p;
    p.req = r;
    p.exp = model_.apply(r);
    p.acc_cycle = cycles_;
    if (check_) p.obs = model_obs();
    if (on_accept) on_accept(r, p.exp);
    q_.push_back(std::move(p));
  }

  void check_outputs() {
    auto& t = *top_;
    const bool ov = t.op_rsp_valid_o, lv = t.lk_rsp_valid_o;
    if (ov && lv) fail("two responses in one cycle");
    if (ov || lv) {
      if (q_.empty()) {
        fail(std::string(ov ? "op" : "lookup") + " response without a request");
        return;
      }
      Pending& p = q_.front();
      std::ostringstream m;
      if (p.exp.lk != lv) {
        m << "response on the " << (lv ? "lookup" : "op") << " channel, expected the other one";
      } else if (lv) {
        if (t.lk_rsp_hit_o != p.exp.hit || t.lk_rsp_unexp_o != p.exp.unexp || t.lk_rsp_blocked_o != p.exp.blocked ||
            (p.exp.hit && t.lk_rsp_handle_o != p.exp.handle))
          m << "lookup srq " << p.req.srq << " tag 0x" << std::hex << p.req.tag << std::dec << " commit_miss "
            << p.req.commit_miss << ": got hit " << int(t.lk_rsp_hit_o) << " handle " << unsigned(t.lk_rsp_handle_o) << " unexp "
            << int(t.lk_rsp_unexp_o) << " blocked " << int(t.lk_rsp_blocked_o) << "; expected hit " << p.exp.hit
            << " handle " << p.exp.handle << " unexp " << p.exp.unexp << " blocked " << p.exp.blocked;
        lk_lat_.push_back(static_cast<uint32_t>(cycles_ - p.acc_cycle));
      } else {
        if (t.op_rsp_ok_o != p.exp.ok || t.op_rsp_hw_cnt_o != p.exp.hw_cnt)
          m << "op " << p.req.code << " srq " << p.req.srq << " handle " << p.req.handle << " cnt_vld "
            << p.req.cnt_vld << " cnt " << p.req.cnt << ": got ok " << int(t.op_rsp_ok_o) << " hw_cnt "
            << t.op_rsp_hw_cnt_o << "; expected ok " << p.exp.ok << " hw_cnt " << p.exp.hw_cnt;
        op_lat_.push_back(static_cast<uint32_t>(cycles_ - p.acc_cycle));
      }
      if (m.str().empty() && check_) {
        const Obs o = observe();
        if (!(o == p.obs)) {
          for (unsigned s = 0; s < nsrq_; ++s)
            if (o.occ[s] != p.obs.occ[s] || o.dis[s] != p.obs.dis[s] || o.hw[s] != p.obs.hw[s] ||
                o.sw[s] != p.obs.sw[s]) {
              m << "after request accepted in cycle " << p.acc_cycle << ", srq " << s << ": occ/disabled/hw/sw "
                << o.occ[s] << "/" << o.dis[s] << "/" << o.hw[s] << "/" << o.sw[s] << ", expected " << p.obs.occ[s]
                << "/" << p.obs.dis[s] << "/" << p.obs.hw[s] << "/" << p.obs.sw[s];
              break;
            }
        }
      }
      if (!m.str().empty()) fail(m.str());
      last_rsp_ = p.exp;
      q_.pop_front();
    }
    const bool busy = !q_.empty() || ov || lv;
    if (t.idle_o == busy) fail(std::string("idle_o ") + (busy ? "high with a request in flight" : "low when idle"));
  }

  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  void fail(const std::string& m) {
    if (!errors_) {
      std::ostringstream s;
      s << "cycle " << cycles_ << ": " << m;
      what_ = s.str();
    }
    ++errors_;
  }

  unsigned n_, nsrq_, hw_;
  bool trace_ = std::getenv("TMNIC_TM_TRACE") != nullptr;  // print every accepted request
  bool check_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> top_;
  Model model_;
  std::deque<Pending> q_;
  std::vector<uint32_t> lk_lat_, op_lat_;
  Rsp last_rsp_{};
  uint64_t cycles_ = 0;
  unsigned errors_ = 0;
  std::string what_;
  bool last_both_valid_ = false, last_stall_ = false, last_acc_lk_ = false, last_acc_op_ = false;
};

}  // namespace tmnic::tm
