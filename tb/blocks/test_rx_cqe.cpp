// tmnic_rx_cqe against a model of the receive completions mlx5 reports (docs/tag-matching.md):
// the CQ (receive CQ for a plain receive, the SRQ's CQ for every tag-matching kind), the opcode
// by kind (RECV, TM_RECV for matched and unexpected, TM_NO_TAG), the TM fields (tag, application
// context and handle only for a matched message), the flags (DATA_VALID at a matched message's end
// and MATCH unless written already; WITH_IMM with an immediate; MATCH alone for the first packet of
// a multi-packet matched message), TM_RNDV_INCOMPLETE instead of SUCCESS for a matched rendezvous
// header, the QP's remote QPN through a registered context read of qp_idx_o, tm_hw_cnt 0.
// Checked every cycle: the offered completion equals the model's and holds while stalled; busy_o;
// one completion at a time. Stimulus: random messages of every kind and status, random CQs and
// remote QPNs, random back-pressure, a new completion in the cycle the last one is taken.
#include <gtest/gtest.h>

#include <random>

#include "Vtmnic_rx_cqe.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/cqe_req.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr unsigned kQp = 64;
enum Kind : unsigned { kPlain = 0, kMatched = 1, kUnexp = 2, kNoTag = 3 };  // tmnic_pkg::rx_kind_e
enum Flags : unsigned { kEnd = 0, kEndImm = 1, kMatch = 2 };                 // tmnic_pkg::rx_cqe_flags_e

struct Msg {
  uint64_t wrid;
  uint16_t idx;
  unsigned kind;
  bool rndv, msent;
  uint64_t tag;
  uint32_t ctx;
};

// rx_msg_t, first field in the most significant bits (180 bits).
void pack_msg(uint32_t* w, const Msg& m) {
  set_bits(w, 0, 32, m.ctx);
  set_bits(w, 32, 64, m.tag);
  set_bits(w, 96, 1, m.msent);
  set_bits(w, 97, 1, m.rndv);
  set_bits(w, 98, 2, m.kind);
  set_bits(w, 100, 16, m.idx);
  set_bits(w, 116, 64, m.wrid);
}

struct Go {
  Msg m;
  unsigned qp;
  uint16_t rcq, scq;
  uint8_t status;
  uint32_t len, imm;
  unsigned flags;
  bool ud;        // a UD datagram's: the sender from the DETH, IBV_WC_GRH
  uint32_t sqp;
};

// The model: the completion a receive of this kind gets.
CqeReq expect(const Go& g, uint32_t src_qp) {
  const bool matched = g.m.kind == kMatched;
  CqeReq r;
  r.cq = g.m.kind == kPlain ? g.rcq : g.scq;
  r.wr_id = g.m.wrid;
  r.wqe_idx = g.m.idx;
  r.qp_num = g.qp;
  r.src_qp = g.ud ? g.sqp : src_qp;
  r.opcode = g.m.kind == kPlain ? hw::wc_op::RECV : g.m.kind == kNoTag ? hw::wc_op::TM_NO_TAG : hw::wc_op::TM_RECV;
  r.status = (g.status == hw::wc_status::SUCCESS && matched && g.m.rndv) ? hw::wc_status::TM_RNDV_INCOMPLETE
                                                                         : g.status;
  r.byte_len = g.len;
  r.imm = g.imm;
  const uint32_t end = !matched ? 0u
                       : g.m.msent ? hw::wc_flag::TM_DATA_VALID
                                   : (hw::wc_flag::TM_DATA_VALID | hw::wc_flag::TM_MATCH);
  r.wc_flags = g.flags == kMatch ? hw::wc_flag::TM_MATCH : g.flags == kEndImm ? (hw::wc_flag::WITH_IMM | end) : end;
  if (g.ud) r.wc_flags |= hw::wc_flag::GRH;
  if (matched) {
    r.tm_tag = g.m.tag;
    r.tm_app_ctx = g.m.ctx;
    r.tm_handle = g.m.idx;
  }
  return r;
}

void run(uint64_t seed, Coverage& cov) {
  std::mt19937_64 rng(seed);
  VerilatedContext ctx;
  ctx.randReset(2);
  ctx.randSeed(static_cast<int>(seed & 0x7fffffff));
  Vtmnic_rx_cqe top(&ctx);
  std::array<uint32_t, kQp> src_of{};
  for (auto& s : src_of) s = static_cast<uint32_t>(rng() & 0xFFFFFF);

  top.clk_i = 0;
  top.rst_ni = 0;
  top.go_i = 0;
  top.cqe_ready_i = 0;
  top.eval();
  for (int i = 0; i < 3; ++i) clock_tick(top, ctx);
  top.rst_ni = 1;

  const double ready_p = 0.2 + 0.7 * std::uniform_real_distribution<double>(0, 1)(rng);
  bool have = false;                // a completion is offered (or about to be):
  CqeReq want;                      //   the model's
  unsigned ctx_rd = 0;              // the context's registered read: qp_idx_o of the last cycle
  unsigned taken = 0;
  const unsigned n = 20000 * test_scale();
  for (unsigned cyc = 0; cyc < n; ++cyc) {
    top.src_qp_i = src_of[ctx_rd];
    top.cqe_ready_i = chance(rng, ready_p);
    top.go_i = 0;
    top.eval();
    const bool valid = top.cqe_valid_o, take = valid && top.cqe_ready_i;
    ASSERT_EQ(valid, have) << "cycle " << cyc;
    ASSERT_EQ(top.busy_o, valid && !top.cqe_ready_i) << "cycle " << cyc;
    if (valid) {
      const CqeReq got = unpack_cqe_req(top.cqe_o.data(), 0);
      ASSERT_TRUE(got == want) << "cycle " << cyc << ": wr_id " << got.wr_id << " / " << want.wr_id << ", cq "
                                << got.cq << " / " << want.cq << ", opcode " << unsigned(got.opcode) << " / "
                                << unsigned(want.opcode) << ", status " << unsigned(got.status) << " / "
                                << unsigned(want.status) << ", flags " << got.wc_flags << " / " << want.wc_flags
                                << ", src_qp " << got.src_qp << " / " << want.src_qp;
      if (!take) cov.hit("stall");
    }
    if (take) {
      have = false;
      ++taken;
    }
    // A new completion when none is offered or the offered one is taken now.
    if (!top.busy_o && chance(rng, 0.5)) {
      Go g;
      g.m.kind = static_cast<unsigned>(rng() % 4);
      g.m.wrid = rng();
      g.m.idx = static_cast<uint16_t>(rng());
      g.m.rndv = rng() & 1;
      g.m.msent = rng() & 1;
      g.m.tag = rng();
      g.m.ctx = static_cast<uint32_t>(rng());
      g.qp = static_cast<unsigned>(rng() % kQp);
      g.rcq = static_cast<uint16_t>(rng());
      g.scq = static_cast<uint16_t>(rng());
      static constexpr uint8_t kStatus[] = {hw::wc_status::SUCCESS, hw::wc_status::SUCCESS, hw::wc_status::WR_FLUSH_ERR,
                                            hw::wc_status::LOC_LEN_ERR, hw::wc_status::LOC_PROT_ERR};
      g.status = kStatus[rng() % 5];
      g.len = static_cast<uint32_t>(rng());
      g.imm = static_cast<uint32_t>(rng());
      g.flags = static_cast<unsigned>(rng() % 3);
      g.ud = g.m.kind == kPlain && g.flags != kMatch && chance(rng, 0.3);
      g.sqp = static_cast<uint32_t>(rng() & 0xFFFFFF);
      top.go_i = 1;
      top.ud_i = g.ud;
      top.ud_sqp_i = g.sqp;
      pack_msg(top.msg_i.data(), g.m);
      top.qp_i = g.qp;
      top.rcq_i = g.rcq;
      top.scq_i = g.scq;
      top.status_i = g.status;
      top.byte_len_i = g.len;
      top.imm_i = g.imm;
      top.flags_i = g.flags;
      top.eval();
      want = expect(g, src_of[g.qp]);
      have = true;
      cov.hit(g.m.kind == kPlain ? "kind_plain" : g.m.kind == kMatched ? "kind_matched"
              : g.m.kind == kUnexp ? "kind_unexp" : "kind_notag");
      cov.hit(g.flags == kEnd ? "flags_end" : g.flags == kEndImm ? "flags_end_imm" : "flags_match");
      if (want.status == hw::wc_status::TM_RNDV_INCOMPLETE) cov.hit("rndv_incomplete");
      if (g.m.kind == kMatched && g.flags != kMatch) cov.hit(g.m.msent ? "end_after_match" : "end_with_match");
      if (take) cov.hit("back_to_back");
      if (g.ud) cov.hit("ud");
    } else {
      // Inputs other than go_i are don't-cares without it: random.
      top.qp_i = static_cast<unsigned>(rng() % kQp);
      top.status_i = static_cast<uint8_t>(rng());
      top.flags_i = static_cast<unsigned>(rng() % 3);
      top.ud_i = rng() & 1;
      top.ud_sqp_i = static_cast<uint32_t>(rng() & 0xFFFFFF);
      top.eval();
    }
    ctx_rd = top.qp_idx_o;
    clock_tick(top, ctx);
  }
  EXPECT_GT(taken, n / 8);
  top.final();
}

TEST(RxCqe, CompletionsOfEveryKindAsMlx5ReportsThem) {
  Coverage cov({"kind_plain", "kind_matched", "kind_unexp", "kind_notag", "flags_end", "flags_end_imm",
                "flags_match", "rndv_incomplete", "end_after_match", "end_with_match", "stall", "back_to_back", "ud"});
  Stopwatch sw;
  uint64_t cycles = 0;
  for (uint64_t s : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(s));
    run(s, cov);
    cycles += 20000 * test_scale();
  }
  report_speed("rx_cqe", "mixed", cycles, sw.seconds());
  cov.report("tmnic_rx_cqe");
}

}  // namespace
