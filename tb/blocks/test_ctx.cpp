// tmnic_ctx (command executor and context tables) against a C++ model of the commands.
// Random command sequences (SET_MR, SET_CQ, SET_SRQ, SET_QP, QUERY_QP, NOP, unknown opcodes) with
// indices and argument words biased towards the range limits, random engine error requests
// (err_sq_i/err_rq_i, also on the QP a command writes in the same cycle: the command wins), the CQ
// writer's lost-completion errors (fat_valid_i, a handshake: taken when fat_ready_o; fat_o reports
// each taken error that no command overrode; its state read port cqw_qp_i/cqw_state_o), and
// engine PSNs answered for query_qp_o. Every cycle compares random read-port indices (the QP and MR
// ports are registered block-RAM reads: they show the QP named in the previous cycle, as the table is now,
// including a write at that same edge),
// cmd_err_o, the QUERY read-back and every event output.
#include <gtest/gtest.h>

#include <array>
#include <type_traits>
#include <vector>

#include "Vtmnic_ctx.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "qp_cfg.hpp"
#include "tmnic/hwif.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kNumQp = 64, kNumCq = 64, kNumSrq = 16, kNumMr = 64;
constexpr unsigned kQpBits = kQpCfgBits, kMrBits = 245, kCqBits = 69, kSrqBits = 202;
constexpr unsigned kTmEntries = 1024;
constexpr unsigned kNmrRd = 2;

// The QP read ports, each with its engine's view of qp_cfg_t (qp_cfg.hpp): requester, completer 0
// and 1, responder, ACK generator (qp_path_t), receive completions (the peer's QP number).
constexpr unsigned kNqpRd = 7;
struct QpPort {
  const char* name;
  const CfgField* view;  // (one of qp_cfg.hpp's views)
  unsigned nfields, bits, base;  // width of the view; its LSB in the output word
  bool state;                    // the view's top field is the QP state
};
template <std::size_t N>
constexpr QpPort port(const char* n, const CfgField (&v)[N], unsigned base) {
  return QpPort{n, v, N, view_bits(v), base * view_bits(v), v[0] == kCfState};
}
const QpPort kQpPort[kNqpRd] = {port("req_cfg_o", kReqView, 0), port("cmp_cfg_o[0]", kCmpView, 0),
                                port("cmp_cfg_o[1]", kCmpView, 1), port("rsp_cfg_o", kRspView, 0),
                                port("ack_path_o", kPathView, 0), port("cqe_src_qp_o", kSrcQpView, 0),
                                port("rdr_path_o", kPathView, 0)};

// A Verilated port (integer or VlWide) as 32-bit words.
template <typename T>
std::array<uint32_t, 16> words_of(const T& v) {
  std::array<uint32_t, 16> w{};
  if constexpr (std::is_integral_v<T>) {
    w[0] = static_cast<uint32_t>(v);
    w[1] = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
  } else {
    static_assert(sizeof(v) / 4 <= 16, "port wider than 512 bits");
    for (std::size_t i = 0; i < sizeof(v) / 4; ++i) w[i] = v[i];
  }
  return w;
}

// Packs fields given most significant first (SystemVerilog packed struct order) at bit `base`.
struct Packer {
  uint32_t* w;
  unsigned pos;  // one past the next field's MSB
  void put(uint64_t v, unsigned width) {
    pos -= width;
    set_bits(w, pos, width, v);
  }
};

struct QpCfg {
  uint32_t state = 0, pd = 0, send_cq = 0, recv_cq = 0, srq = 0;
  uint64_t sq_base = 0;
  uint32_t sq_log = 0;
  uint64_t rq_base = 0;
  uint32_t rq_log = 0, pmtu_log = 0, dest_qpn = 0, dest_ip = 0;
  uint64_t dmac = 0;
  uint32_t min_rnr = 0, rnr_retry = 0, retry_cnt = 0, timeout = 0, rem_access = 0, ud = 0, qkey = 0;
  uint32_t tclass = 0, hop_limit = 0, max_rd = 0;
  bool written = false;
  void pack(uint32_t* w, unsigned base) const {
    Packer p{w, base + kQpBits};
    p.put(state, 3); p.put(pd, 16); p.put(send_cq, 16); p.put(recv_cq, 16); p.put(srq, 16);
    p.put(sq_base, 64); p.put(sq_log, 4); p.put(rq_base, 64); p.put(rq_log, 4); p.put(pmtu_log, 4);
    p.put(dest_qpn, 24); p.put(dest_ip, 32); p.put(dmac, 48); p.put(min_rnr, 5); p.put(rnr_retry, 3);
    p.put(retry_cnt, 3); p.put(timeout, 5); p.put(rem_access, 4); p.put(ud, 1); p.put(qkey, 32);
    p.put(tclass, 8); p.put(hop_limit, 8); p.put(max_rd, 3);
  }
};
struct Mr {
  bool valid = false, written = false;
  uint32_t key = 0, pd = 0, access = 0;
  uint64_t va = 0, len = 0, iova = 0;
  void pack(uint32_t* w, unsigned base) const {
    Packer p{w, base + kMrBits};
    p.put(valid, 1); p.put(key, 32); p.put(pd, 16); p.put(access, 4); p.put(va, 64); p.put(len, 64); p.put(iova, 64);
  }
};
struct CqCfg {
  bool valid = false, written = false;
  uint64_t base = 0;
  uint32_t log = 0;
  void pack(uint32_t* w, unsigned b) const {
    Packer p{w, b + kCqBits};
    p.put(valid, 1); p.put(base, 64); p.put(log, 4);
  }
};
struct SrqCfg {
  bool valid = false, written = false;
  uint64_t base = 0;
  uint32_t log = 0, pd = 0;
  bool tm = false;
  uint64_t ops_base = 0;
  uint32_t ops_log = 0, cq = 0, tag_base = 0, tag_num = 0;
  void pack(uint32_t* w, unsigned b) const {
    Packer p{w, b + kSrqBits};
    p.put(valid, 1); p.put(base, 64); p.put(log, 4); p.put(pd, 16);
    p.put(tm, 1); p.put(ops_base, 64); p.put(ops_log, 4); p.put(cq, 16); p.put(tag_base, 16); p.put(tag_num, 16);
  }
};

uint32_t psn_of(unsigned qp, uint64_t cyc, bool rq) {
  return static_cast<uint32_t>((qp * 0x9E3779B1u + cyc * 0x85EBCA6Bu + (rq ? 0x55u : 0)) & 0xFFFFFFu);
}

class CtxBench {
 public:
  CtxBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_ctx>(ctx_.get())), rng_(seed), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->cmd_valid_i = 0;
    top_->err_sq_i = 0;
    top_->err_rq_i = 0;
    top_->fat_valid_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    // The QP state sweep: busy for NUM_QP cycles after reset, every QP port reading RESET meanwhile
    // (then busy drops as after any command: the engines report quiet).
    top_->quiet_i = 1;
    uint64_t n = 0;
    for (; top_->cmd_busy_o && n < 4 * kNumQp; ++n) {
      for (unsigned k = 0; k < kNqpRd; ++k)
        if (kQpPort[k].state && qp_state_of(k) != 0) ADD_FAILURE() << "QP port " << k << " not RESET during the reset sweep";
      tick();
      top_->eval();
    }
    EXPECT_EQ(n, kNumQp + 1) << "cmd_busy_o after reset: the state sweep takes one cycle per QP";
  }
  ~CtxBench() { top_->final(); }

  void run(uint64_t n, double p_cmd, double p_err) {
    for (uint64_t i = 0; i < n && !errors_; ++i) cycle(p_cmd, p_err);
    EXPECT_EQ(errors_, 0u);
  }
  uint64_t cycles() const { return cycles_; }

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

  uint32_t rand_idx(unsigned n) {
    switch (urand(rng_, 0, 9)) {
      case 0: return n - 1;
      case 1: return n;                                                  // first out of range
      case 2: return static_cast<uint32_t>(urand(rng_, n, 0xFFFFFF));    // far out of range
      case 3: return static_cast<uint32_t>(urand(rng_, 0, 3));           // reserved QPNs, low indices
      default: return static_cast<uint32_t>(urand(rng_, 0, n - 1));
    }
  }
  uint32_t rand_log() {
    switch (urand(rng_, 0, 9)) {
      case 0: return 16;
      case 1: return static_cast<uint32_t>(urand(rng_, 16, 0xFFFFFFFF));
      case 2: return 15;
      default: return static_cast<uint32_t>(urand(rng_, 0, 15));
    }
  }

  void cycle(double p_cmd, double p_err) {
    // ---------------- inputs
    // No command in the cycle after a QUERY_QP: the device is busy until its read-back lands.
    const bool cmd = !query_pend_ && chance(rng_, p_cmd);
    uint32_t op = 0, idx = 0;
    std::array<uint32_t, 32> a{};
    for (auto& x : a) x = static_cast<uint32_t>(rng_());
    if (cmd) {
      const unsigned k = static_cast<unsigned>(urand(rng_, 0, 13));
      op = k <= 1 ? hw::cmd::SET_QP : k <= 3 ? hw::cmd::SET_MR : k <= 5 ? hw::cmd::SET_CQ : k <= 7 ? hw::cmd::SET_SRQ
         : k <= 9 ? hw::cmd::QUERY_QP : k == 10 ? hw::cmd::NOP : static_cast<uint32_t>(urand(rng_, 6, 255));
      const unsigned n = op == hw::cmd::SET_MR ? kNumMr : op == hw::cmd::SET_CQ ? kNumCq : op == hw::cmd::SET_SRQ ? kNumSrq : kNumQp;
      idx = rand_idx(n);
      // SET_QP at most once every 3 cycles (the device is busy for 2 cycles after a command).
      if (op == hw::cmd::SET_QP && cycles_ < last_set_qp_ + 3) op = hw::cmd::SET_MR;
      if (op == hw::cmd::SET_QP) last_set_qp_ = cycles_;
      if (op == hw::cmd::SET_QP && chance(rng_, 0.3)) idx = static_cast<uint32_t>(urand(rng_, 0, kNumQp - 1));
      using namespace hw::cmd;
      a[set_cq::LOG_SIZE] = rand_log();
      // Ring bases: mostly 64-byte aligned (as drivers allocate them), sometimes not (rejected).
      auto base_lo = [&](uint32_t x) { return chance(rng_, 0.85) ? (x & ~63u) : (x | 1u); };
      if (op == SET_CQ) {
        a[set_cq::BASE_LO] = base_lo(a[set_cq::BASE_LO]);
        a[set_cq::KEEP] = chance(rng_, 0.5) ? 0u : static_cast<uint32_t>(urand(rng_, 1, 0xFFFFFFFF));
      }
      if (op == SET_SRQ) a[set_srq::BASE_LO] = base_lo(a[set_srq::BASE_LO]);
      if (op == SET_QP) {
        a[set_qp::SQ_BASE_LO] = base_lo(a[set_qp::SQ_BASE_LO]);
        a[set_qp::RQ_BASE_LO] = base_lo(a[set_qp::RQ_BASE_LO]);
      }
      // Address high words: mostly host addresses (NIC_SPACE_BIT clear), sometimes the NIC's space.
      const uint32_t ns = 1u << (hw::NIC_SPACE_BIT - 32);
      for (uint32_t w : {set_mr::IOVA_HI, set_cq::BASE_HI, set_srq::BASE_HI, set_srq::OPS_BASE_HI,
                         set_qp::SQ_BASE_HI, set_qp::RQ_BASE_HI})
        if (op == (w == set_mr::IOVA_HI ? SET_MR : w == set_cq::BASE_HI ? SET_CQ : w == set_qp::SQ_BASE_HI ||
                   w == set_qp::RQ_BASE_HI ? SET_QP : SET_SRQ) && chance(rng_, 0.9))
          a[w] &= ~ns;
      a[set_cq::VALID] = chance(rng_, 0.3) ? 0 : chance(rng_, 0.5) ? 1 : a[set_cq::VALID];
      a[set_mr::VALID] = chance(rng_, 0.3) ? 0 : chance(rng_, 0.5) ? 1 : a[set_mr::VALID];
      if (op == SET_SRQ) {
        a[set_srq::LOG_SIZE] = rand_log();
        a[set_srq::VALID] = chance(rng_, 0.3) ? 0 : a[set_srq::VALID];
        // TM-SRQs: mostly well-formed (op ring aligned, CQ and engine range in bounds), sometimes not.
        a[set_srq::TM] = chance(rng_, 0.5) ? 0 : chance(rng_, 0.8) ? 1 : a[set_srq::TM];
        a[set_srq::OPS_BASE_LO] = base_lo(a[set_srq::OPS_BASE_LO]);
        a[set_srq::OPS_LOG_SIZE] = chance(rng_, 0.9) ? rand_log() : a[set_srq::OPS_LOG_SIZE];
        a[set_srq::CQ] = chance(rng_, 0.9) ? static_cast<uint32_t>(urand(rng_, 0, kNumCq - 1)) : a[set_srq::CQ];
        a[set_srq::TAG_BASE] = static_cast<uint32_t>(chance(rng_, 0.9) ? urand(rng_, 0, kTmEntries - 1) : urand(rng_, 0, 0xFFFF));
        a[set_srq::TAG_NUM] = static_cast<uint32_t>(chance(rng_, 0.9) ? urand(rng_, 0, kTmEntries - a[set_srq::TAG_BASE] % kTmEntries) : urand(rng_, 0, 0x1FFFF));
      }
      if (op == SET_QP) {
        a[set_qp::STATE] = chance(rng_, 0.1) ? static_cast<uint32_t>(urand(rng_, 7, 0xFFFFFFFF)) : static_cast<uint32_t>(urand(rng_, 0, 6));
        a[set_qp::SQ_LOG_SIZE] = chance(rng_, 0.5) ? static_cast<uint32_t>(urand(rng_, 0, 15)) : rand_log();
        a[set_qp::RQ_LOG_SIZE] = chance(rng_, 0.5) ? static_cast<uint32_t>(urand(rng_, 0, 15)) : rand_log();
        a[set_qp::MAX_RD_ATOMIC] = chance(rng_, 0.7) ? static_cast<uint32_t>(urand(rng_, 0, 6)) : a[set_qp::MAX_RD_ATOMIC];
        a[set_qp::PATH_MTU] = chance(rng_, 0.8) ? static_cast<uint32_t>(urand(rng_, 0, 7)) : a[set_qp::PATH_MTU];
        a[set_qp::SRQ] = chance(rng_, 0.4) ? hw::NO_SRQ : chance(rng_, 0.5) ? static_cast<uint32_t>(urand(rng_, 0, 15)) : a[set_qp::SRQ];
        a[set_qp::INIT] = static_cast<uint32_t>(urand(rng_, 0, 3)) | (a[set_qp::INIT] & ~3u);
        a[set_qp::TYPE] = chance(rng_, 0.1) ? static_cast<uint32_t>(urand(rng_, 2, 0xFFFFFFFF))
                                            : static_cast<uint32_t>(urand(rng_, 0, 1));
        if (chance(rng_, 0.1)) {   // a rendezvous QP's internal send queue (off by a bit now and then)
          const uint64_t b = rndv_base(idx) ^ (chance(rng_, 0.8) ? 0 : 64ull << urand(rng_, 0, 20));
          a[set_qp::SQ_BASE_LO] = uint32_t(b);
          a[set_qp::SQ_BASE_HI] = uint32_t(b >> 32);
          a[set_qp::SQ_LOG_SIZE] = chance(rng_, 0.8) ? hw::RNDV_SQ_LOG : a[set_qp::SQ_LOG_SIZE];
        }
      }
    }
    top_->cmd_valid_i = cmd;
    top_->cmd_op_i = op;
    top_->cmd_idx_i = idx;
    for (unsigned i = 0; i < 32; ++i) top_->cmd_args_i[i] = a[i];
    const unsigned cmd_qp = idx & (kNumQp - 1);
    const uint32_t sq_psn = psn_of(cmd_qp, cycles_, false), rq_psn = psn_of(cmd_qp, cycles_, true);
    top_->query_sq_psn_i = sq_psn;
    top_->query_rq_psn_i = rq_psn;
    // Each engine raises an error at most once every 3 cycles (the context's input contract).
    const bool esq = cycles_ >= last_esq_ + 3 && chance(rng_, p_err);
    const bool erq = cycles_ >= last_erq_ + 3 && chance(rng_, p_err);
    if (esq) last_esq_ = cycles_;
    if (erq) last_erq_ = cycles_;
    unsigned esq_qp = static_cast<unsigned>(urand(rng_, 0, kNumQp - 1)), erq_qp = static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    if (cmd && chance(rng_, 0.3)) esq_qp = cmd_qp;
    if (esq && chance(rng_, 0.3)) erq_qp = esq_qp;
    top_->err_sq_i = esq;
    top_->err_sq_qp_i = esq_qp;
    top_->err_rq_i = erq;
    top_->err_rq_qp_i = erq_qp;
    // The CQ writer's errors: no spacing, a handshake.
    const bool fat_v = chance(rng_, p_err * 2);
    const unsigned fat_qp = (cmd && chance(rng_, 0.3)) ? cmd_qp : static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    top_->fat_valid_i = fat_v;
    top_->fat_qp_i = fat_qp;
    const unsigned cqw_sel = chance(rng_, 0.3) ? cmd_qp : static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    top_->cqw_qp_i = cqw_sel;
    unsigned qsel[kNqpRd], msel[kNmrRd];
    for (unsigned k = 0; k < kNqpRd; ++k) {
      qsel[k] = chance(rng_, 0.3) ? cmd_qp : static_cast<unsigned>(urand(rng_, 0, kNumQp - 1));
    }
    top_->req_qp_i = qsel[0];
    top_->cmp_qp_i = qsel[1] | qsel[2] << 6;
    top_->rsp_qp_i = qsel[3];
    top_->ack_qp_i = qsel[4];
    top_->cqe_qp_i = qsel[5];
    top_->rdr_qp_i = qsel[6];
    uint32_t midx = 0;
    for (unsigned k = 0; k < kNmrRd; ++k) {
      msel[k] = chance(rng_, 0.3) ? (idx & (kNumMr - 1)) : static_cast<unsigned>(urand(rng_, 0, kNumMr - 1));
      midx |= msel[k] << (6 * k);
    }
    top_->mr_rd_idx_i = midx;
    const unsigned csel = chance(rng_, 0.3) ? (idx & (kNumCq - 1)) : static_cast<unsigned>(urand(rng_, 0, kNumCq - 1));
    unsigned ssel[2];
    for (unsigned k = 0; k < 2; ++k)
      ssel[k] = chance(rng_, 0.3) ? (idx & (kNumSrq - 1)) : static_cast<unsigned>(urand(rng_, 0, kNumSrq - 1));
    top_->cq_rd_idx_i = csel;
    top_->srq_rd_idx_i = ssel[0];
    top_->srq2_rd_idx_i = ssel[1];
    top_->eval();

    // ---------------- compare outputs (state after the previous edge)
    if (top_->query_qp_o != cmd_qp) fail("query_qp_o != cmd_idx[QP_W-1:0]");
    compare_rdports(qsel);
    compare_events();
    if (qp_rd_have_ && top_->cqw_state_o != qp_[cqw_prev_].state)
      fail("cqw_state_o " + std::to_string(top_->cqw_state_o) + " for QP " + std::to_string(cqw_prev_) + ", expected " +
           std::to_string(qp_[cqw_prev_].state));
    if (top_->fat_o != fat_ev_) fail(std::string("fat_o ") + (fat_ev_ ? "missing" : "unexpected"));
    if (fat_ev_ && top_->fat_qp_o != fat_ev_qp_) fail("fat_qp_o " + std::to_string(top_->fat_qp_o));
    const bool fat_acc = fat_v && top_->fat_ready_o;
    if (fat_v) cov_.hit(fat_acc ? "fat_taken" : "fat_not_ready");

    // ---------------- model update for this cycle: engine errors, then the command
    if (esq) qp_[esq_qp].state = 6;
    if (erq) qp_[erq_qp].state = 6;
    if (fat_acc) qp_[fat_qp].state = 6;
    if (esq && erq && esq_qp == erq_qp) cov_.hit("err_sq_and_rq_same_qp");
    ev_.init_sq = ev_.init_rq = ev_.cq_reset = ev_.srq_reset = ev_.rb_valid = ev_.qp_set = false;
    if (query_pend_) {
      // The read-back of the previous cycle's QUERY_QP: the engines' PSNs (registered reads of the
      // QP queried then) are sampled now.
      if (!top_->cmd_busy_o) fail("cmd_busy_o low before the QUERY_QP read-back landed");
      ev_.rb_valid = true;
      ev_.rb = query_rb_;
      ev_.rb[hw::cmd::query_qp::SQ_PSN] = sq_psn;
      ev_.rb[hw::cmd::query_qp::RQ_PSN] = rq_psn;
      query_pend_ = false;
    }
    wrote_qp_ = wrote_mr_ = wrote_cq_ = wrote_srq_ = -1;
    if (cmd) execute(op, idx, a, esq && esq_qp == cmd_qp, erq && erq_qp == cmd_qp);
    // A taken error is reported unless a SET_QP of its QP in this cycle overrode it.
    fat_ev_ = fat_acc && !(ev_.qp_set && ev_.init_qp == fat_qp);
    fat_ev_qp_ = fat_qp;
    if (fat_acc && !fat_ev_) cov_.hit("set_qp_wins_over_lost_completion");
    cqw_prev_ = cqw_sel;
    // What the QP ports show after the coming edge: the table with this cycle's command (a port
    // reading the QP being written gets the new word, as from a flip-flop table).
    for (unsigned k = 0; k < kNqpRd; ++k) {
      if (wrote_qp_ == static_cast<int>(qsel[k])) cov_.hit("qp_read_port_during_write");
      qp_rd_prev_[k] = qp_[qsel[k]];
      qsel_prev_[k] = qsel[k];
    }
    for (unsigned k = 0; k < kNmrRd; ++k) {
      if (wrote_mr_ == static_cast<int>(msel[k])) cov_.hit("mr_read_port_during_write");
      mr_rd_prev_[k] = mr_[msel[k]];
    }
    if (wrote_cq_ == static_cast<int>(csel)) cov_.hit("cq_read_port_during_write");
    cq_rd_prev_ = cq_[csel];
    csel_prev_ = csel;
    for (unsigned k = 0; k < 2; ++k) {
      if (wrote_srq_ == static_cast<int>(ssel[k])) cov_.hit("srq_read_port_during_write");
      srq_rd_prev_[k] = srq_[ssel[k]];
      ssel_prev_[k] = ssel[k];
    }
    qp_rd_have_ = true;
    tick();
  }

  // An address word's NIC_SPACE_BIT (the NIC's own memory), and a QP's send queue: a host one, or
  // exactly its own internal rendezvous queue (RC, RNDV_SQ_LOG).
  static bool nic_space(uint32_t hi) { return (hi >> (hw::NIC_SPACE_BIT - 32)) & 1; }
  static uint64_t rndv_base(uint32_t qpn) { return (1ull << hw::NIC_SPACE_BIT) + (uint64_t(qpn) << hw::RNDV_QP_SHIFT); }
  static bool sq_ok(uint32_t idx, const std::array<uint32_t, 32>& a) {
    using namespace hw::cmd;
    if (!nic_space(a[set_qp::SQ_BASE_HI])) return true;
    const uint64_t b = (uint64_t(a[set_qp::SQ_BASE_HI]) << 32) | a[set_qp::SQ_BASE_LO];
    return b == rndv_base(idx) && a[set_qp::SQ_LOG_SIZE] == hw::RNDV_SQ_LOG && a[set_qp::TYPE] == QP_TYPE_RC;
  }

  void execute(uint32_t op, uint32_t idx, const std::array<uint32_t, 32>& a,
               bool err_same_sq, bool err_same_rq) {
    using namespace hw::cmd;
    bool ok = false;
    switch (op) {
      case NOP:
        ok = true;
        if (ev_.err) cov_.hit("nop_clears_error");
        break;
      case SET_MR:
        // (an MR may not name the NIC's own memory: IOVA bit NIC_SPACE_BIT)
        ok = idx < kNumMr && (a[set_mr::VALID] == 0 || !nic_space(a[set_mr::IOVA_HI]));
        if (idx < kNumMr && a[set_mr::VALID] != 0 && nic_space(a[set_mr::IOVA_HI])) cov_.hit("set_mr_nic_space");
        if (ok) {
          Mr& m = mr_[idx];
          m.written = true;
          wrote_mr_ = static_cast<int>(idx);
          m.valid = a[set_mr::VALID] != 0;
          m.key = a[set_mr::KEY];
          m.pd = a[set_mr::PD] & 0xFFFF;
          m.access = a[set_mr::ACCESS] & 15;
          m.va = (uint64_t(a[set_mr::VA_HI]) << 32) | a[set_mr::VA_LO];
          m.len = (uint64_t(a[set_mr::LEN_HI]) << 32) | a[set_mr::LEN_LO];
          m.iova = (uint64_t(a[set_mr::IOVA_HI]) << 32) | a[set_mr::IOVA_LO];
          ++mr_gen_;   // (the MR generation moves with every SET_MR that changes an entry)
          cov_.hit("set_mr_ok");
        } else cov_.hit("set_mr_bad_index");
        break;
      case SET_CQ:
        ok = idx < kNumCq && a[set_cq::LOG_SIZE] <= hw::MAX_LOG_QUEUE && (a[set_cq::BASE_LO] & 63) == 0 &&
             !nic_space(a[set_cq::BASE_HI]);
        if (ok) {
          CqCfg& c = cq_[idx];
          c.written = true;
          wrote_cq_ = static_cast<int>(idx);
          c.valid = a[set_cq::VALID] != 0;
          c.base = (uint64_t(a[set_cq::BASE_HI]) << 32) | a[set_cq::BASE_LO];
          c.log = a[set_cq::LOG_SIZE];
          ev_.cq_reset = a[set_cq::KEEP] == 0;   // a resize keeps the CQ writer's indices
          ev_.cq_reset_idx = idx & 0xFFFF;
          cov_.hit("set_cq_ok");
          cov_.hit(a[set_cq::KEEP] ? "set_cq_keep" : "set_cq_reset");
          if (a[set_cq::LOG_SIZE] == hw::MAX_LOG_QUEUE) cov_.hit("set_cq_log_max");
        } else cov_.hit(idx >= kNumCq ? "set_cq_bad_index" : (a[set_cq::BASE_LO] & 63) ? "set_cq_unaligned"
                        : nic_space(a[set_cq::BASE_HI]) ? "set_cq_nic_space" : "set_cq_bad_log");
        break;
      case SET_SRQ:
      {
        const bool tm_ok = a[set_srq::OPS_LOG_SIZE] <= hw::MAX_LOG_QUEUE && (a[set_srq::OPS_BASE_LO] & 63) == 0 &&
                           !nic_space(a[set_srq::OPS_BASE_HI]) &&
                           a[set_srq::CQ] < kNumCq && a[set_srq::TAG_NUM] != 0 && a[set_srq::TAG_NUM] <= kTmEntries &&
                           a[set_srq::TAG_BASE] < kTmEntries &&
                           uint64_t(a[set_srq::TAG_BASE] & 0xFFFF) + (a[set_srq::TAG_NUM] & 0xFFFF) <= kTmEntries;
        const bool is_tm = a[set_srq::TM] != 0 && a[set_srq::VALID] != 0;
        ok = idx < kNumSrq && a[set_srq::LOG_SIZE] <= hw::MAX_LOG_QUEUE && (a[set_srq::BASE_LO] & 63) == 0 &&
             !nic_space(a[set_srq::BASE_HI]) && (!is_tm || tm_ok);
        if (idx < kNumSrq && nic_space(a[set_srq::BASE_HI])) cov_.hit("set_srq_nic_space");
        if (idx < kNumSrq && is_tm) cov_.hit(tm_ok ? "set_srq_tm_ok" : "set_srq_tm_bad");
      }
        if (ok) {
          SrqCfg& s = srq_[idx];
          s.written = true;
          wrote_srq_ = static_cast<int>(idx);
          s.valid = a[set_srq::VALID] != 0;
          s.base = (uint64_t(a[set_srq::BASE_HI]) << 32) | a[set_srq::BASE_LO];
          s.log = a[set_srq::LOG_SIZE];
          s.pd = a[set_srq::PD] & 0xFFFF;
          s.tm = a[set_srq::TM] != 0 && a[set_srq::VALID] != 0;
          s.ops_base = (uint64_t(a[set_srq::OPS_BASE_HI]) << 32) | a[set_srq::OPS_BASE_LO];
          s.ops_log = a[set_srq::OPS_LOG_SIZE] & 0xF;
          s.cq = a[set_srq::CQ] & 0xFFFF;
          s.tag_base = a[set_srq::TAG_BASE] & 0xFFFF;
          s.tag_num = a[set_srq::TAG_NUM] & 0xFFFF;
          ev_.srq_reset = true;
          ev_.srq_reset_idx = idx & 0xFFFF;
          cov_.hit("set_srq_ok");
        } else cov_.hit(idx >= kNumSrq ? "set_srq_bad_index" : (a[set_srq::BASE_LO] & 63) ? "set_srq_unaligned"
                        : a[set_srq::LOG_SIZE] > hw::MAX_LOG_QUEUE ? "set_srq_bad_log" : "set_srq_bad_tm");
        break;
      case SET_QP:
        ok = idx < kNumQp && idx >= hw::QPN_FIRST && a[set_qp::STATE] <= 6 && a[set_qp::SQ_LOG_SIZE] <= hw::MAX_LOG_QUEUE &&
             a[set_qp::RQ_LOG_SIZE] <= hw::MAX_LOG_QUEUE && (a[set_qp::SQ_BASE_LO] & 63) == 0 &&
             (a[set_qp::RQ_BASE_LO] & 63) == 0 && a[set_qp::TYPE] <= hw::cmd::QP_TYPE_UD &&
             !nic_space(a[set_qp::RQ_BASE_HI]) && sq_ok(idx, a);
        if (idx < kNumQp && idx >= hw::QPN_FIRST && nic_space(a[set_qp::SQ_BASE_HI]))
          cov_.hit(sq_ok(idx, a) ? "set_qp_rndv_sq" : "set_qp_sq_nic_space");
        if (ok) {
          QpCfg& q = qp_[idx];
          q.written = true;
          wrote_qp_ = static_cast<int>(idx);
          q.state = a[set_qp::STATE];
          q.pd = a[set_qp::PD] & 0xFFFF;
          q.send_cq = a[set_qp::SEND_CQ] & 0xFFFF;
          q.recv_cq = a[set_qp::RECV_CQ] & 0xFFFF;
          q.srq = a[set_qp::SRQ] & 0xFFFF;
          q.sq_base = (uint64_t(a[set_qp::SQ_BASE_HI]) << 32) | a[set_qp::SQ_BASE_LO];
          q.sq_log = a[set_qp::SQ_LOG_SIZE];
          q.rq_base = (uint64_t(a[set_qp::RQ_BASE_HI]) << 32) | a[set_qp::RQ_BASE_LO];
          q.rq_log = a[set_qp::RQ_LOG_SIZE];
          // IB MTU enum 1..5 = 256..4096 bytes; anything else means 1024.
          const uint32_t mtu = a[set_qp::PATH_MTU];
          q.pmtu_log = (mtu >= 1 && mtu <= 5) ? mtu + 7 : 10;
          cov_.hit(mtu >= 1 && mtu <= 5 ? "set_qp_mtu_valid" : "set_qp_mtu_default");
          q.dest_qpn = a[set_qp::DEST_QPN] & 0xFFFFFF;
          q.dest_ip = a[set_qp::DEST_IP];
          q.dmac = ((uint64_t(a[set_qp::DMAC_HI]) & 0xFFFF) << 32) | a[set_qp::DMAC_LO];
          q.min_rnr = a[set_qp::MIN_RNR_TIMER] & 31;
          q.rnr_retry = a[set_qp::RNR_RETRY] & 7;
          q.retry_cnt = a[set_qp::RETRY_CNT] & 7;
          q.timeout = a[set_qp::TIMEOUT] & 31;
          q.rem_access = a[set_qp::ACCESS] & 15;
          q.tclass = a[set_qp::TCLASS] & 0xFF;
          q.hop_limit = a[set_qp::HOP_LIMIT] & 0xFF;
          // MAX_RD_ATOMIC clamped to 1..MAX_RD_ATOM
          q.max_rd = a[set_qp::MAX_RD_ATOMIC] == 0 ? 1 : std::min<uint32_t>(a[set_qp::MAX_RD_ATOMIC], hw::MAX_RD_ATOM);
          cov_.hit(a[set_qp::MAX_RD_ATOMIC] == 0 ? "set_qp_rd_zero" : a[set_qp::MAX_RD_ATOMIC] > hw::MAX_RD_ATOM ? "set_qp_rd_clamped" : "set_qp_rd_in_range");
          q.ud = a[set_qp::TYPE] == hw::cmd::QP_TYPE_UD;
          q.qkey = a[set_qp::QKEY];
          cov_.hit(q.ud ? "set_qp_ud" : "set_qp_rc");
          ev_.init_qp = idx;
          ev_.qp_set = true;
          ev_.init_sq = a[set_qp::INIT] & QP_INIT_SQ;
          ev_.init_rq = (a[set_qp::INIT] & QP_INIT_RQ) != 0;
          ev_.init_sq_psn = a[set_qp::SQ_PSN] & 0xFFFFFF;
          ev_.init_rq_psn = a[set_qp::RQ_PSN] & 0xFFFFFF;
          cov_.hit("set_qp_ok");
          if (ev_.init_sq && ev_.init_rq) cov_.hit("set_qp_init_both");
          if (err_same_sq || err_same_rq) cov_.hit("set_qp_wins_over_engine_error");
        } else {
          cov_.hit(idx >= kNumQp ? "set_qp_bad_index" : idx < hw::QPN_FIRST ? "set_qp_reserved_qpn"
                   : a[set_qp::STATE] > 6 ? "set_qp_bad_state"
                   : a[set_qp::TYPE] > hw::cmd::QP_TYPE_UD ? "set_qp_bad_type" : "set_qp_bad_log");
          if (err_same_sq && idx < kNumQp) cov_.hit("failed_set_qp_engine_error_applies");
        }
        break;
      case QUERY_QP:
        ok = idx < kNumQp;
        if (ok) {
          // The state after this cycle's engine errors (a registered write-first read of the
          // state table, landing with the read-back one cycle later).
          query_pend_ = true;
          query_rb_ = a;
          query_rb_[query_qp::STATE] = qp_[idx].state;
          cov_.hit("query_qp_ok");
          if (qp_[idx].state == 6) cov_.hit("query_qp_in_err");
        } else cov_.hit("query_qp_bad_index");
        break;
      default:
        cov_.hit("unknown_opcode");
        break;
    }
    ev_.err = !ok;
  }

  void compare_events() {
    auto chk = [&](uint64_t got, uint64_t exp, const char* what) {
      if (got != exp) fail(std::string(what) + " = " + std::to_string(got) + ", expected " + std::to_string(exp));
    };
    chk(top_->cmd_err_o, ev_.err, "cmd_err_o");
    chk(top_->mr_gen_o, mr_gen_, "mr_gen_o");
    chk(top_->rb_valid_o, ev_.rb_valid, "rb_valid_o");
    // The read-back words are defined while rb_valid_o is high (they are loaded a cycle earlier).
    if (ev_.rb_valid)
      for (unsigned i = 0; i < 32; ++i) chk(top_->rb_args_o[i], ev_.rb[i], "rb_args_o word");
    chk(top_->init_sq_o, ev_.init_sq, "init_sq_o");
    chk(top_->init_rq_o, ev_.init_rq, "init_rq_o");
    chk(top_->init_qp_o, ev_.init_qp & (kNumQp - 1), "init_qp_o");
    chk(top_->qp_set_o, ev_.qp_set, "qp_set_o");
    chk(top_->init_sq_psn_o, ev_.init_sq_psn, "init_sq_psn_o");
    chk(top_->init_rq_psn_o, ev_.init_rq_psn, "init_rq_psn_o");
    chk(top_->cq_reset_o, ev_.cq_reset, "cq_reset_o");
    chk(top_->cq_reset_idx_o, ev_.cq_reset_idx, "cq_reset_idx_o");
    chk(top_->srq_reset_o, ev_.srq_reset, "srq_reset_o");
    chk(top_->srq_reset_idx_o, ev_.srq_reset_idx, "srq_reset_idx_o");
    if (ev_.rb_valid) cov_.hit("readback_checked");
  }

  // The word of QP port k.
  std::array<uint32_t, 16> qp_port_words(unsigned k) {
    switch (k) {
      case 0: return words_of(top_->req_cfg_o);
      case 1: case 2: return words_of(top_->cmp_cfg_o);
      case 3: return words_of(top_->rsp_cfg_o);
      case 4: return words_of(top_->ack_path_o);
      case 6: return words_of(top_->rdr_path_o);
      default: return words_of(top_->cqe_src_qp_o);
    }
  }
  unsigned qp_state_of(unsigned k) {
    const auto w = qp_port_words(k);
    return static_cast<unsigned>(get_bits(w.data(), kQpPort[k].base + kQpPort[k].bits - 3, 3));
  }

  // RTL with table memories: validity and QP state read RESET/invalid from reset on, the rest is
  // defined once written.
  void compare_rdports(const unsigned* qsel) {
    uint32_t exp[(kQpBits + 31) / 32 + 1], got[(kQpBits + 31) / 32 + 1], full[(kQpBits + 31) / 32 + 1];
    for (unsigned k = 0; k < kNqpRd && qp_rd_have_; ++k) {
      const QpPort& p = kQpPort[k];
      QpCfg m = qp_rd_prev_[k];
      m.state = qp_[qsel_prev_[k]].state;
      std::fill(std::begin(exp), std::end(exp), 0);
      std::fill(std::begin(got), std::end(got), 0);
      std::fill(std::begin(full), std::end(full), 0);
      m.pack(full, 0);
      pack_view(p.view, p.nfields, full, exp, 0);
      const auto out = qp_port_words(k);
      for (unsigned b = 0; b < p.bits; b += 32) set_bits(got, b, std::min(32u, p.bits - b), get_bits(out.data(), p.base + b, std::min(32u, p.bits - b)));
      if (!m.written) {  // only the state is defined
        if (p.state && get_bits(got, p.bits - 3, 3) != m.state) fail(std::string(p.name) + " state of unwritten QP");
        continue;
      }
      cov_.hit("qp_read_port_checked");
      if (!std::equal(std::begin(exp), std::end(exp), std::begin(got))) fail(std::string(p.name) + " QP " + std::to_string(qsel_prev_[k]));
      if (qsel_prev_[k] == qsel[k]) cov_.hit("qp_read_port_same_index");
    }
    for (unsigned k = 0; k < kNmrRd && qp_rd_have_; ++k) {
      const Mr& m = mr_rd_prev_[k];
      std::fill(std::begin(exp), std::end(exp), 0);
      m.pack(exp, 0);
      if (get_bits(top_->mr_rd_o.data(), k * kMrBits + kMrBits - 1, 1) != m.valid)
        fail("mr_rd_o[" + std::to_string(k) + "] valid");
      if (!m.written) continue;
      cov_.hit("mr_read_port_checked");
      for (unsigned b = 0; b < kMrBits; b += 32) {
        const unsigned w = std::min(32u, kMrBits - b);
        if (get_bits(top_->mr_rd_o.data(), k * kMrBits + b, w) != get_bits(exp, b, w))
          fail("mr_rd_o[" + std::to_string(k) + "] bits " + std::to_string(b));
      }
    }
    if (qp_rd_have_) {  // CQ and SRQ ports: registered like the QP and MR ports
      const CqCfg& c = cq_rd_prev_;
      std::fill(std::begin(exp), std::end(exp), 0);
      c.pack(exp, 0);
      if (top_->cq_rd_o[2] >> 4 != c.valid) fail("cq_rd_o valid of CQ " + std::to_string(csel_prev_));
      if (c.written) {
        cov_.hit("cq_read_port_checked");
        if (get_bits(top_->cq_rd_o.data(), 0, 64) != get_bits(exp, 0, 64) || get_bits(top_->cq_rd_o.data(), 64, 4) != get_bits(exp, 64, 4))
          fail("cq_rd_o of CQ " + std::to_string(csel_prev_));
      }
      for (unsigned k = 0; k < 2; ++k) {
        const SrqCfg& s = srq_rd_prev_[k];
        const auto got_w = k ? words_of(top_->srq2_rd_o) : words_of(top_->srq_rd_o);
        const std::string port = std::string(k ? "srq2_rd_o" : "srq_rd_o") + " of SRQ " + std::to_string(ssel_prev_[k]);
        std::fill(std::begin(exp), std::end(exp), 0);
        s.pack(exp, 0);
        if (get_bits(got_w.data(), kSrqBits - 1, 1) != s.valid) fail(port + " valid");
        if (!s.written) continue;
        cov_.hit("srq_read_port_checked");
        for (unsigned b = 0; b < kSrqBits - 1; b += 32) {
          const unsigned w = std::min(32u, kSrqBits - 1 - b);
          if (get_bits(got_w.data(), b, w) != get_bits(exp, b, w)) fail(port);
        }
      }
    }
  }

  struct Events {
    bool err = false, rb_valid = false, qp_set = false, init_sq = false, init_rq = false, cq_reset = false, srq_reset = false;
    std::array<uint32_t, 32> rb{};
    uint32_t init_qp = 0, init_sq_psn = 0, init_rq_psn = 0, cq_reset_idx = 0, srq_reset_idx = 0;
  };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_ctx> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  bool query_pend_ = false;             // a QUERY_QP was accepted in the previous cycle
  std::array<uint32_t, 32> query_rb_{};  // its read-back less the PSNs
  QpCfg qp_[kNumQp];
  QpCfg qp_rd_prev_[kNqpRd];     // the QP ports' words after the coming edge
  unsigned qsel_prev_[kNqpRd] = {};
  Mr mr_rd_prev_[kNmrRd];         // the MR ports' words after the coming edge
  bool qp_rd_have_ = false;        // (both kinds of registered port)
  bool fat_ev_ = false;            // fat_o / fat_qp_o expected after the coming edge
  uint32_t mr_gen_ = 0;            // SET_MRs executed (tmnic_ctx mr_gen_o)
  unsigned fat_ev_qp_ = 0, cqw_prev_ = 0;
  int wrote_qp_ = -1, wrote_mr_ = -1, wrote_cq_ = -1, wrote_srq_ = -1;  // the entry this cycle's command wrote (coverage)
  CqCfg cq_rd_prev_;              // the CQ and SRQ ports' words after the coming edge
  SrqCfg srq_rd_prev_[2];
  unsigned csel_prev_ = 0, ssel_prev_[2] = {};
  Mr mr_[kNumMr];
  CqCfg cq_[kNumCq];
  SrqCfg srq_[kNumSrq];
  Events ev_;
  uint64_t cycles_ = 0;
  uint64_t last_esq_ = 0, last_erq_ = 0, last_set_qp_ = 0;
  unsigned errors_ = 0;
};

TEST(Ctx, RandomCommandSequences) {
  Coverage cov({"set_mr_ok", "set_mr_bad_index", "set_cq_ok", "set_cq_log_max", "set_cq_bad_index", "set_cq_bad_log", "set_cq_unaligned",
                "set_srq_ok", "set_srq_bad_index", "set_srq_bad_log", "set_srq_unaligned", "set_srq_tm_ok", "set_srq_tm_bad",
                "set_srq_bad_tm", "set_qp_ok", "set_mr_nic_space", "set_cq_nic_space", "set_srq_nic_space", "set_qp_rndv_sq", "set_qp_sq_nic_space", "set_cq_keep", "set_cq_reset", "set_qp_ud", "set_qp_rc", "set_qp_rd_zero", "set_qp_rd_clamped", "set_qp_rd_in_range", "set_qp_bad_index",
                "set_qp_reserved_qpn", "set_qp_bad_state", "set_qp_bad_type", "set_qp_bad_log", "set_qp_mtu_valid", "set_qp_mtu_default",
                "set_qp_init_both", "set_qp_wins_over_engine_error", "failed_set_qp_engine_error_applies",
                "query_qp_ok", "query_qp_in_err", "query_qp_bad_index", "unknown_opcode", "nop_clears_error",
                "err_sq_and_rq_same_qp", "fat_taken", "fat_not_ready", "set_qp_wins_over_lost_completion", "readback_checked", "qp_read_port_checked", "qp_read_port_same_index",
                "qp_read_port_during_write", "mr_read_port_checked", "mr_read_port_during_write",
                "cq_read_port_checked", "cq_read_port_during_write", "srq_read_port_checked",
                "srq_read_port_during_write"});
  uint64_t cyc = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    CtxBench b(seed, cov);
    Stopwatch sw;
    b.run(60000, 0.7, 0.1);   // command-heavy
    b.run(60000, 0.2, 0.02);  // sparse
    secs += sw.seconds();
    cyc += b.cycles();
    if (HasFailure()) break;
  }
  report_speed("ctx", "busy", cyc, secs);
  cov.report("ctx");
}

TEST(Ctx, IdleSpeed) {
  Coverage cov({});
  CtxBench b(5, cov);
  Stopwatch sw;
  b.run(100000, 0.0, 0.0);
  report_speed("ctx", "idle", 100000, sw.seconds());
}

}  // namespace
