// tmnic_requester against a model of the send queue's sending side (the RTL header comment, the
// IBA's RC requester rules for SEND, rxe_req.c's role). The bench plays everything around it:
//   - the host: per QP a ring of WQEs in host memory (random sizes 1..64 entries), WQEs posted and a
//     doorbell with the new producer index (honouring db_ready_o), payload bytes at every IOVA;
//   - the context: registered reads of the QP configuration (qp_req_cfg_t packed from random
//     qp_cfg_t bits) and of the MR table; commands that move a QP to ERR or from INIT to RTS with a
//     kick; QP inits (new PSN, indices 0);
//   - tmnic_dma_rd: requests taken with random back-pressure, answered in request order with random
//     latency and gaps, beats tagged with their offset in the request and byte enables;
//   - the TX scheduler: packets taken with random back-pressure, slots freed after a random delay;
//   - the completer: its ci (registered read), ACKs that complete entries whose last packet went
//     out (and flushes of QPs in ERR), marks, REWIND messages (go back to the oldest entry's WQE and
//     first PSN, with or without an RNR wait that ends at a given cycle) and FAIL messages, local
//     errors taken with back-pressure (the QP then goes to ERR), reads of the requester's next.
// Model, per QP: posted WQEs, next WQE, next PSN (24-bit wrap), dead, RNR wait; per WQE the IBA
// local protection check (valid MR, key, PD, bounds; a message over 4 GiB) and the driver rules
// (opcode, SGE count, inline length) -> LOC_PROT_ERR / LOC_QP_OP_ERR, QP failed, no payload DMA.
// Checked:
//   - every ring write: at {QP, next mod OUTS} of a QP with a posted WQE, never more than OUTS
//     entries past the completer's ci, wr_id, first/last PSN (ceil(len / PMTU) packets, at least
//     one), signaled, error status (local errors; WR_FLUSH_ERR only while the QP is in ERR, for
//     every unsent WQE); no new message while an RNR wait runs, from a failed QP, or in a state
//     other than RTS (one message already under way when the QP went to ERR may still enter);
//   - every WQE read: the QP's ring at its next WQE, one WQE long; every payload read: exactly the
//     next piece of the message just entered (SGE by SGE, split at packet boundaries; none for an
//     inline WQE or a failed one);
//   - every packet: its QP's next packet of a message in its ring (a message enters before its
//     first packet), header (opcode FIRST/MIDDLE/LAST/ONLY and WITH_IMM, payload length per PMTU,
//     PSN, AckReq on the last, SE on the last when solicited, immediate, addresses, source port
//     0xC000 | QP), every payload byte in its slot; after a go-back, a failure or ERR only packets
//     already under way (at most NSLOT + 1) of the old messages;
//   - lerr_valid_o once per local error (QP), prot_err_o once per protection error, ckick_o after
//     each flushed entry; handshakes held and stable until taken; the requester's next as the
//     completer reads it; the PSN table (QUERY_QP) of settled QPs; wake_at_o never after a pending
//     RNR wait's end; at the end of each phase every posted WQE sent (or flushed in ERR), idle_o
//     and quiet_o.
// RDMA READ (RC): the WQE's SGEs are a scatter list (the protection check needs LOCAL_WRITE); its ring
// entry is SQO_READ with first/last the PSNs of its ceil(len / PMTU) responses (at least one), its one
// packet a READ request at the first (RETH {raddr, rkey, len}, no payload, AckReq, no SE, no payload
// reads), the next message's PSN after the responses; inline or on UD: LOC_QP_OP_ERR. Checked at
// every READ's ring write: fewer than max_rd READs of the QP in flight (in the ring between the
// model's ci and next; the requester reads an older ci, so it can only count more), and at a fenced
// WQE's: none. The completer mock completes a READ after its request went out and a round trip, so
// QPs sit at their limit; READs go out again after go-backs.
// Atomics (CMP_AND_SWP, FETCH_AND_ADD; RC): 8-byte READs. Exactly one SGE of ATOMIC_LEN bytes, else
// LOC_LEN_ERR (after the opcode checks, before the protection check, without waiting for READs in
// flight); that SGE needs LOCAL_WRITE; inline or on UD: LOC_QP_OP_ERR. Ring entry SQO_CSWAP / SQO_FADD
// with first = last = its one PSN; its packet a CmpSwap / FetchAdd request (AtomicETH {raddr, rkey,
// swap/add, compare} from the WQE's ATOMIC layout, reth_len ATOMIC_LEN, no payload, AckReq, no SE, no
// payload reads). READs and atomics share the max_rd limit and the FENCE wait.
// TMNIC_TRACE=1 prints ring writes, DMA reads, completer messages taken, inits and drains, one line
// each with its cycle.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <deque>
#include <algorithm>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vtmnic_requester.h"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/fail.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "mr.hpp"
#include "qp_cfg.hpp"
#include "tmnic/hwif.h"
#include "tmnic/wire.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif
#ifndef TB_NUM_MR
#define TB_NUM_MR 64
#endif
#ifndef TB_OUTS
#define TB_OUTS 16
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;
namespace st = tmnic::hwif::wc_status;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8, kNumQp = TB_NUM_QP, kNumMr = TB_NUM_MR, kOuts = TB_OUTS, kNslot = 8;
constexpr unsigned kQpW = 31 - static_cast<unsigned>(__builtin_clz(kNumQp));
constexpr unsigned kOutW = 31 - static_cast<unsigned>(__builtin_clz(kOuts));
constexpr unsigned kStride = hw::WQE_STRIDE, kNsge = hw::WQE_MAX_SGE, kInline = hw::WQE_MAX_INLINE;
constexpr uint32_t kM24 = 0xFFFFFF;
constexpr uint64_t kSalt = 0x5EED0FF;
constexpr uint32_t kRts = static_cast<uint32_t>(hw::QpState::RTS);
constexpr uint32_t kErr = static_cast<uint32_t>(hw::QpState::ERR);
constexpr uint32_t kInit = static_cast<uint32_t>(hw::QpState::INIT);
constexpr uint32_t kRtr = static_cast<uint32_t>(hw::QpState::RTR);
uint8_t host(uint64_t a) { return mem_byte(kSalt, a); }

// ---- packed structs of tmnic_pkg.sv, first field in the MSBs --------------------------------------
// sq_out_t {op 3, wrid 64, first 24, last 24, sig 1, err 8}
constexpr unsigned kOutErr = 0, kOutSig = 8, kOutLast = 9, kOutFirst = 33, kOutWrid = 57, kOutOp = 121, kOutBits = 124;
// sq_msg_t {kind 1, qp 16, idx 16, psn 24, rnr 1, rnr_due 64}; kind SQ_MSG_REWIND = 0, SQ_MSG_FAIL = 1
constexpr unsigned kMsgDue = 0, kMsgRnr = 64, kMsgPsn = 65, kMsgIdx = 89, kMsgQp = 105, kMsgKind = 121, kMsgBits = 122;
static_assert(sizeof(Vtmnic_requester::o_wdata_o) == 4 * ((kOutBits + 31) / 32), "o_wdata_o is not an sq_out_t");
static_assert(sizeof(Vtmnic_requester::msg_i) == 4 * ((kMsgBits + 31) / 32), "msg_i is not an sq_msg_t");
static_assert(sizeof(Vtmnic_requester::mr_rd_i) == 4 * ((kMrBits + 31) / 32), "mr_rd_i is not an mr_t");
static_assert(sizeof(Vtmnic_requester::qp_rd_i) == 4 * ((view_bits(kReqView) + 31) / 32), "qp_rd_i is not a qp_req_cfg_t");

struct Piece {
  uint64_t addr;
  uint32_t len;
};
// A posted WQE and what it must become (computed when posted: the MR table and the QP's PD and
// PMTU do not change while a WQE is posted).
struct Posted {
  std::array<uint8_t, kStride> b{};
  uint64_t wrid = 0;
  uint8_t err = 0;          // expected status: 0, LOC_QP_OP_ERR, LOC_PROT_ERR
  uint32_t len = 0;
  bool inl = false, imm = false, se = false, sig = false;
  bool write = false;       // RDMA WRITE: RETH {raddr, rkey, len} on the first packet
  bool read = false;        // RDMA READ: one READ request (RETH), npk PSNs for its responses
  bool atom = false, cs = false;   // an atomic (CMP_AND_SWP when cs): one request, one PSN
  uint64_t swap = 0, cmp = 0;      //   its operands (the WQE's ATOMIC layout)
  bool rd() const { return read || atom; }   // completed by its responses, counted against max_rd
  bool fence = false;       // waits until no READ of the QP is in flight
  uint64_t raddr = 0;
  uint32_t rkey = 0;
  uint32_t imm_data = 0;
  uint32_t qkey = 0, dip = 0;   // UD: the datagram's Q_Key and destination (its UD_AV; DQPN: the QP's)
  uint64_t dmac = 0;
  uint8_t tclass = 0, ttl = 0;  // UD: the UD_AV's TOS and TTL
  unsigned npk = 1;             // PSNs it uses
  unsigned pkts = 1;            // packets it sends (a READ: 1)
  std::vector<uint8_t> pay;     // the message's bytes
  std::vector<Piece> reads;     // its payload reads, in order
  std::vector<unsigned> pk_reads;  // reads of packets 0..k-1 (prefix index)
};
// A message in the ring waiting for its packets.
struct Sent {
  std::shared_ptr<const Posted> w;
  uint16_t idx = 0;
  uint32_t first = 0;
  unsigned pk = 0;
  uint64_t serial = 0;
  bool trunc = false;       // may end early: a go-back, a failure or ERR came after it entered
};
struct Hyp {
  std::deque<Sent> msgs;
  int stale = 0;            // packets of cut messages still allowed (under way at the cut)
  bool operator==(const Hyp& o) const {
    if (stale != o.stale || msgs.size() != o.msgs.size()) return false;
    for (size_t i = 0; i < msgs.size(); ++i)
      if (msgs[i].serial != o.msgs[i].serial || msgs[i].pk != o.msgs[i].pk || msgs[i].trunc != o.msgs[i].trunc)
        return false;
    return true;
  }
};
struct Entry {
  uint64_t serial = 0;
  uint32_t first = 0, last = 0;
  uint8_t err = 0;
  bool read = false;        // a READ or an atomic (counted against max_rd)
  bool atom = false;
  bool done = false;        // its last packet went out
  uint64_t ack_at = 0;      // and its ACK is back (the round trip)
};
struct Qp {
  std::array<uint32_t, kQpCfgWords> cfg{};
  uint32_t state = kRts, pd = 0, dqpn = 0, dip = 0;
  uint64_t dmac = 0, sq_base = 0;
  uint8_t tclass = 0, ttl = 0;   // the context's (random) TOS and TTL
  unsigned sq_log = 0, pmtu_log = 8;
  uint16_t pi = 0, next = 0, ci = 0;
  uint32_t psn = 0;
  bool dead = false, wait = false, pushed_in_err = false, psn_known = true, live = false, held = false;
  unsigned max_rd = 1;      // READs in flight at most (the context's clamped SET_QP.MAX_RD_ATOMIC)
  double rd_share = 0.2;    // of its WQEs that are READs
  bool rd_blocked = false, fence_blocked = false;   // its next WQE was seen held back (coverage)
  bool fence_atom = false;  // a fenced one, by an atomic in flight
  uint16_t resend_end = 0;  // a go-back: WQEs before this one are sent again
  unsigned last_read_npk = 0;   // the last READ request seen (coverage of the PSN jump)
  uint32_t last_read_psn = 0;
  bool inited = false;      // its init was taken (the RAMs have no reset)
  bool ud = false;          // a UD QP: every WQE names its destination; datagrams, no ACKs
  uint64_t due = 0;
  std::vector<std::shared_ptr<const Posted>> ring;
  std::array<Entry, kOuts> out{};
  // Messages in the ring waiting for packets. A message sent again after a go-back is identical to
  // the cut one (same WQE, same first PSN), so a packet may belong to either: every reading that
  // fits the packets so far is kept (rarely more than one).
  std::vector<Hyp> hyps = std::vector<Hyp>(1);
  unsigned size() const { return 1u << sq_log; }
  bool pending() const {
    for (const auto& h : hyps)
      if (!h.msgs.empty()) return true;
    return false;
  }
};
struct Chunk {              // a read taken by the DMA, answered beat by beat
  uint64_t addr;
  uint32_t len, sent = 0;
  uint64_t at;
  bool wqe;
  std::array<uint8_t, kStride> b{};
};
struct Msg {
  bool fail = false, rnr = false;
  unsigned qp = 0;
  uint16_t idx = 0;
  uint32_t psn = 0;
  uint64_t due = 0;
};

template <std::size_t N>
void zero(VlWide<N>& w) {
  for (std::size_t i = 0; i < N; ++i) w[i] = 0;
}

bool mr_ok(const Mr& m, uint64_t addr, uint32_t len, uint32_t key, uint32_t pd) {
  const unsigned __int128 end_a = static_cast<unsigned __int128>(addr) + len;
  const unsigned __int128 end_m = static_cast<unsigned __int128>(m.va) + m.len;
  return m.valid && m.key == key && m.pd == pd && addr >= m.va && end_a <= end_m;
}

std::vector<std::string> coverage_points() {
  return {"doorbell", "db_out_of_range", "db_backpressure", "qp_first", "qp_last", "hot_qp", "pmtu_256", "pmtu_4096",
          "write_msg", "send_msg", "write_multi_packet", "pkt_only", "pkt_first", "pkt_middle", "pkt_last", "with_imm", "solicited", "unsignaled", "empty_message",
          "inline", "inline_two_words", "sge_6", "empty_sge", "packet_spans_sges", "psn_wrap", "window_full",
          "ring_wrap", "prot_key", "prot_pd", "prot_bounds", "prot_invalid_mr", "prot_over_4g", "loc_qp_op_err",
          "lerr_backpressure", "rewind", "rewind_cuts_message", "stale_packet", "rnr_wait", "rnr_resend",
          "rewind_ignored_dead", "fail_msg", "cmd_err", "err_cuts_message", "flush", "kick_to_rts", "reinit",
          "msg_backpressure", "pkt_backpressure", "rd_backpressure", "query_psn", "nx_read",
          "ud_datagram", "ud_datagram_imm", "ud_uack", "ud_uack_backpressure", "ud_write_refused", "ud_len_err",
          "read_msg", "read_req", "read_multi_response", "read_zero_len", "read_psn_jump", "read_at_limit",
          "read_limit_1", "read_limit_4", "read_waited", "fence_msg", "fence_waited", "read_resent", "prot_local_write",
          "read_prot_err", "read_ud_refused", "read_inline_refused", "read_flushed", "read_sge_6",
          "atomic_cs_msg", "atomic_fa_msg", "atomic_cs_req", "atomic_fa_req", "atomic_at_limit", "atomic_waited",
          "rd_limit_shared", "fence_after_atomic", "atomic_resent", "atomic_prot_local_write", "atomic_prot_err",
          "atomic_len_err_nsge", "atomic_len_err_len", "atomic_ud_refused", "atomic_inline_refused", "atomic_flushed"};
}

struct Knobs {
  const char* name;
  double db, hot, ack, rewind, fail, cmd_err, rd_ready, gap, pkt_ready, lerr_ready, msg_big;
  unsigned max_lat, max_free, ack_lat;
};

class ReqBench {
 public:
  ReqBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_requester>(ctx_.get())), rng_(seed),
        cov_(cov), q_(kNumQp) {
    hot_ = {0, kNumQp - 1, static_cast<unsigned>(u(1, kNumQp - 2)), static_cast<unsigned>(u(1, kNumQp - 2)),
            static_cast<unsigned>(u(1, kNumQp - 2))};
    lmac_ = rng_() & 0xFFFFFFFFFFFFull;
    lip_ = static_cast<uint32_t>(rng_());
    new_mrs();
    for (unsigned i = 0; i < kNumQp; ++i) new_qp(i, true);
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
    // The QP table RAM has no reset: every QP starts with an init.
    for (unsigned i = 0; i < kNumQp && !failed(); ++i) init_qp(i);
  }
  ~ReqBench() { top_->final(); }

  bool failed() const { return ::testing::Test::HasFailure(); }
  uint64_t cycles() const { return cyc_; }
  uint64_t packets() const { return packets_; }

  void run(const Knobs& k, uint64_t n) {
    for (uint64_t i = 0; i < n && !failed(); ++i) step(&k);
  }

  // No new work: every posted WQE must go out (or be flushed), every entry complete; then the end
  // state is checked and QPs in ERR (and a few others) start over with an init.
  void drain(const Knobs& k) {
    Knobs d = k;
    d.db = d.rewind = d.fail = d.cmd_err = 0;
    d.ack = 0.5;
    for (unsigned i = 0; i < kNumQp; ++i)
      if (q_[i].state == kInit || q_[i].state == kRtr) to_rts(i);
    uint64_t n = 0, quiet = 0;
    for (; n < 400000 && !failed(); ++n) {
      step(&d);
      quiet = settled() ? quiet + 1 : 0;
      if (quiet > 40) break;
    }
    if (failed()) return;
    if (quiet <= 40) {
      std::string why;
      for (unsigned i = 0; i < kNumQp && why.size() < 400; ++i) {
        const Qp& p = q_[i];
        if (!qp_settled(p))
          why += " QP" + std::to_string(i) + "{state " + std::to_string(p.state) + " dead " + std::to_string(p.dead) +
                 " wait " + std::to_string(p.wait) + " pi " + std::to_string(p.pi) + " next " + std::to_string(p.next) +
                 " ci " + std::to_string(p.ci) + " msgs " + std::to_string(p.hyps[0].msgs.size()) + "}";
      }
      return fail("not drained after ", n, " cycles:", why, " lerr ", lerr_exp_.size(), " chunks ", chunks_.size());
    }
    if (trace_) std::printf("%llu: drained\n", (unsigned long long)cyc_);
    for (const auto& e : ud_bal_)
      if (e.second != 0)
        return fail("UD datagram of QP ", e.first.first, " PSN ", e.first.second,
                    e.second > 0 ? " never acknowledged" : " acknowledged but never sent");
    ud_bal_.clear();
    for (auto& p : q_) p.hyps.assign(1, Hyp{});  // cut messages that never finish
    // idle_o and quiet_o, after a sweep of the RNR timers at most
    for (n = 0; n < kNumQp + 100 && !(top_->idle_o && top_->quiet_o) && !failed(); ++n) step(&d);
    if (!top_->idle_o || !top_->quiet_o) return fail("drained, but idle_o ", int(top_->idle_o), " quiet_o ", int(top_->quiet_o));
    for (n = 0; n < 20 && !failed(); ++n) {
      step(&d);
      if (!top_->idle_o || !top_->quiet_o) return fail("idle_o ", int(top_->idle_o), " quiet_o ", int(top_->quiet_o), " with nothing to do");
    }
    // The PSN table and the copy of next, word by word.
    for (unsigned i = 0; i < kNumQp && !failed(); ++i) {
      forced_query_ = static_cast<int>(i);
      forced_nx_ = static_cast<int>(i);
      step(nullptr);
      step(nullptr);
    }
    forced_query_ = forced_nx_ = -1;
    // Start over: QPs in ERR, and some others.
    for (unsigned i = 0; i < kNumQp && !failed(); ++i) {
      Qp& p = q_[i];
      if (p.state == kErr || p.dead || chance(rng_, 0.05)) {
        new_qp(i, false);
        init_qp(i);
        cov_.hit("reinit");
      }
    }
  }

 private:
  template <class... A>
  void fail(const A&... a) {
    fail_at(cyc_, a...);
  }
  uint64_t u(uint64_t lo, uint64_t hi) { return urand(rng_, lo, hi); }

  // ---------------------------------------------------------------- set-up
  void new_mrs() {
    for (unsigned i = 0; i < kNumMr; ++i) {
      Mr& m = mr_[i];
      m.valid = i < 3 || chance(rng_, 0.9);
      m.key = (i << hw::MR_KEY_SHIFT) | static_cast<uint32_t>(u(0, (1u << hw::MR_KEY_SHIFT) - 1));
      m.pd = i < 3 ? i + 1 : static_cast<uint32_t>(u(1, 3));
      m.access = static_cast<uint32_t>(u(0, 7)) | (i < 3 ? 1u : 0u);   // (0..2: READs land there too)
      m.va = (u(1, 1ull << 36) << 12) + u(0, 4095);
      m.len = i < 3 ? (1ull << 34) : u(4096, 1u << 18);  // 0..2: huge regions of PDs 1..3
      m.iova = u(0, 1ull << 56);
    }
  }
  void new_qp(unsigned i, bool first) {
    Qp& p = q_[i];
    const uint64_t old_base = p.sq_base;
    const uint32_t old_dqpn = p.dqpn;
    for (auto& w : p.cfg) w = static_cast<uint32_t>(rng_());
    p.cfg[kQpCfgWords - 1] &= (1u << (kQpCfgBits % 32)) - 1;
    p.state = (first && chance(rng_, 0.1)) ? (chance(rng_, 0.5) ? kInit : kRtr) : kRts;
    p.pd = static_cast<uint32_t>(u(1, 3));
    p.sq_log = chance(rng_, 0.05) ? 0 : static_cast<unsigned>(u(1, 6));
    if (std::find(hot_.begin(), hot_.end(), i) != hot_.end() && chance(rng_, 0.7)) p.sq_log = 6;  // fills the window
    p.sq_base = (static_cast<uint64_t>(i + 1) << 20) + (u(0, 4095) << 6);
    p.pmtu_log = static_cast<unsigned>(u(8, 12));
    p.dqpn = static_cast<uint32_t>(((rng_() << kQpW) | i) & kM24);
    p.dip = static_cast<uint32_t>(rng_());
    p.dmac = rng_() & 0xFFFFFFFFFFFFull;
    set_bits(p.cfg.data(), cfg_lsb(kCfState), 3, p.state);
    set_bits(p.cfg.data(), cfg_lsb(kCfPd), 16, p.pd);
    set_bits(p.cfg.data(), cfg_lsb(kCfSqBase), 64, p.sq_base);
    set_bits(p.cfg.data(), cfg_lsb(kCfSqLog), 4, p.sq_log);
    set_bits(p.cfg.data(), cfg_lsb(kCfPmtuLog), 4, p.pmtu_log);
    set_bits(p.cfg.data(), cfg_lsb(kCfDestQpn), 24, p.dqpn);
    set_bits(p.cfg.data(), cfg_lsb(kCfDestIp), 32, p.dip);
    set_bits(p.cfg.data(), cfg_lsb(kCfDmac), 48, p.dmac);
    p.tclass = static_cast<uint8_t>(get_bits(p.cfg.data(), cfg_lsb(kCfTclass), 8));
    p.ttl = static_cast<uint8_t>(get_bits(p.cfg.data(), cfg_lsb(kCfHopLimit), 8));
    // A UD QP now and then: its context path is garbage (the WQEs' UD_AV count), and p.dqpn, the
    // number the bench finds a QP's packets by, goes into every WQE's UD_AV.
    p.ud = chance(rng_, 0.15);
    set_bits(p.cfg.data(), cfg_lsb(kCfUd), 1, p.ud);
    p.max_rd = static_cast<unsigned>(u(1, hw::MAX_RD_ATOM));
    p.rd_share = chance(rng_, 0.25) ? 0.6 : 0.15;   // (some QPs mostly READ: up to their limit)
    if (i == hot_[0]) {
      // The first hot QP gets no ACKs for long stretches too (the completer mock): mostly READs,
      // it sits at its READ limit then.
      p.ud = false;
      set_bits(p.cfg.data(), cfg_lsb(kCfUd), 1, 0);
      p.rd_share = 0.7;
      if (chance(rng_, 0.5)) p.max_rd = hw::MAX_RD_ATOM;
      set_bits(p.cfg.data(), cfg_lsb(kCfMaxRd), 3, p.max_rd);
    }
    set_bits(p.cfg.data(), cfg_lsb(kCfMaxRd), 3, p.max_rd);
    if (p.ud) set_bits(p.cfg.data(), cfg_lsb(kCfDestQpn), 24, static_cast<uint32_t>(rng_()));
    if (!first) {
      base_qp_.erase(old_base);
      by_dqpn_.erase(old_dqpn);
    }
    base_qp_[p.sq_base] = i;
    by_dqpn_[p.dqpn] = i;
    p.pi = p.next = p.ci = 0;
    p.psn = chance(rng_, 0.3) ? (kM24 - static_cast<uint32_t>(u(0, 40))) : static_cast<uint32_t>(rng_()) & kM24;
    p.dead = p.wait = p.pushed_in_err = p.inited = false;
    p.psn_known = true;
    p.ring.assign(p.size(), nullptr);
    p.out = {};
    p.hyps.assign(1, Hyp{});
  }
  // One init (the context's SET_QP with INIT_SQ), then wait for the requester to take it.
  void init_qp(unsigned i) {
    if (trace_) std::printf("%llu: init QP %u psn %u\n", (unsigned long long)cyc_, i, q_[i].psn);
    init_qp_ = static_cast<int>(i);
    step(nullptr);
    init_qp_ = -1;
    for (int n = 0; n < 2 || !top_->idle_o; ++n) {
      if (n > 2000 || failed()) return fail("init of QP ", i, " not taken");
      step(nullptr);
    }
    q_[i].inited = true;
  }
  void set_state(unsigned i, uint32_t s) {
    q_[i].state = s;
    set_bits(q_[i].cfg.data(), cfg_lsb(kCfState), 3, s);
  }
  void to_rts(unsigned i) {
    set_state(i, kRts);
    kicks_.push_back(i);
  }
  // A go-back, a failure or ERR: messages in the ring may end early; packets under way still come.
  void cut(Qp& p) {
    for (auto& h : p.hyps) {
      for (auto& m : h.msgs) m.trunc = true;
      h.stale = kNslot + 1;
    }
  }
  void to_err(unsigned i) {
    Qp& p = q_[i];
    if (p.state == kErr) return;
    set_state(i, kErr);
    p.pushed_in_err = false;
    if (p.pending()) p.psn_known = false;
    cut(p);
  }

  // ---------------------------------------------------------------- WQEs
  unsigned pick_qp() {
    if (chance(rng_, hot_share_)) {
      cov_.hit("hot_qp");
      return hot_[u(0, hot_.size() - 1)];
    }
    return static_cast<unsigned>(u(0, kNumQp - 1));
  }
  // An MR of pd, valid, not one of the huge ones.
  // An MR of pd, valid, not one of the huge ones; granting LOCAL_WRITE if lw (a READ's scatter list).
  unsigned mr_of(uint32_t pd, bool lw = false) {
    for (unsigned t = 0; t < 4 * kNumMr; ++t) {
      const unsigned i = static_cast<unsigned>(u(3, kNumMr - 1));
      if (mr_[i].valid && mr_[i].pd == pd && (!lw || (mr_[i].access & 1))) return i;
    }
    return pd - 1;
  }
  std::shared_ptr<const Posted> make_wqe(const Qp& p, const Knobs& k) {
    auto w = std::make_shared<Posted>();
    auto& b = w->b;
    for (auto& x : b) x = static_cast<uint8_t>(rng_());
    w->wrid = rng_();
    for (unsigned i = 0; i < 8; ++i) b[hw::wqe::WR_ID_OFF + i] = static_cast<uint8_t>(w->wrid >> (8 * i));
    const bool bad_op = chance(rng_, 0.001);
    static constexpr uint8_t kOps[] = {hw::wqe_op::SEND, hw::wqe_op::SEND_WITH_IMM, hw::wqe_op::RDMA_WRITE,
                                       hw::wqe_op::RDMA_WRITE_WITH_IMM};
    uint8_t op = kOps[u(0, 3)];
    if (p.ud && chance(rng_, 0.97)) op = kOps[u(0, 1)];   // (a UD QP mostly SENDs: a WRITE fails it)
    if (!p.ud ? chance(rng_, p.rd_share) : chance(rng_, 0.01)) op = hw::wqe_op::RDMA_READ;   // (UD: refused)
    if (op == hw::wqe_op::RDMA_READ && chance(rng_, 0.35))   // (atomics share the READs' limit)
      op = chance(rng_, 0.5) ? hw::wqe_op::ATOMIC_CMP_AND_SWP : hw::wqe_op::ATOMIC_FETCH_AND_ADD;
    if (bad_op) op = static_cast<uint8_t>(u(hw::wqe_op::ATOMIC_FETCH_AND_ADD + 1, 255));
    b[hw::wqe::OPCODE_OFF] = op;
    uint8_t flags = static_cast<uint8_t>(rng_()) & ~(hw::wqe_flag::SIGNALED | hw::wqe_flag::SOLICITED | hw::wqe_flag::INLINE);
    w->sig = chance(rng_, 0.7);
    w->se = chance(rng_, 0.3);
    w->read = op == hw::wqe_op::RDMA_READ;
    w->cs = op == hw::wqe_op::ATOMIC_CMP_AND_SWP;
    w->atom = w->cs || op == hw::wqe_op::ATOMIC_FETCH_AND_ADD;
    w->inl = chance(rng_, w->rd() ? 0.02 : 0.2);
    w->fence = chance(rng_, 0.1);
    w->imm = op == hw::wqe_op::SEND_WITH_IMM || op == hw::wqe_op::RDMA_WRITE_WITH_IMM;
    w->write = op == hw::wqe_op::RDMA_WRITE || op == hw::wqe_op::RDMA_WRITE_WITH_IMM;
    for (unsigned i = 0; i < 8; ++i) w->raddr |= uint64_t(b[hw::wqe::RADDR_OFF + i]) << (8 * i);
    for (unsigned i = 0; i < 4; ++i) w->rkey |= uint32_t(b[hw::wqe::RKEY_OFF + i]) << (8 * i);
    if (w->sig) flags |= hw::wqe_flag::SIGNALED;
    if (w->se) flags |= hw::wqe_flag::SOLICITED;
    if (w->inl) flags |= hw::wqe_flag::INLINE;
    flags = static_cast<uint8_t>(flags & ~hw::wqe_flag::FENCE);
    if (w->fence) flags |= hw::wqe_flag::FENCE;
    b[hw::wqe::FLAGS_OFF] = flags;
    w->imm_data = 0;
    for (unsigned i = 0; i < 4; ++i) w->imm_data = (w->imm_data << 8) | b[hw::wqe::IMM_OFF + i];  // first byte in [31:24]
    if (bad_op) w->err = st::LOC_QP_OP_ERR;
    // UD: SEND and SEND_WITH_IMM only (a WRITE fails like a bad opcode), the UD_AV in SGE 5's bytes.
    if (p.ud && w->write && !w->err) {
      w->err = st::LOC_QP_OP_ERR;
      cov_.hit("ud_write_refused");
    }
    if (p.ud && w->rd() && !w->err) {
      w->err = st::LOC_QP_OP_ERR;
      cov_.hit(w->atom ? "atomic_ud_refused" : "read_ud_refused");
    }
    if (w->rd() && w->inl && !w->err) {   // (a READ's data comes back: nothing to inline)
      w->err = st::LOC_QP_OP_ERR;
      cov_.hit(w->atom ? "atomic_inline_refused" : "read_inline_refused");
    }
    if (p.ud) {
      w->dip = static_cast<uint32_t>(rng_());
      w->dmac = rng_() & 0xFFFFFFFFFFFFull;
      uint8_t* av = &b[hw::WQE_UD_AV_OFF];
      for (unsigned i = 0; i < 4; ++i) av[hw::ud_av::DEST_IP_OFF + i] = static_cast<uint8_t>(w->dip >> (8 * i));
      for (unsigned i = 0; i < 4; ++i) av[hw::ud_av::DQPN_OFF + i] = static_cast<uint8_t>(p.dqpn >> (8 * i));
      for (unsigned i = 0; i < 6; ++i) av[hw::ud_av::DMAC_OFF + i] = static_cast<uint8_t>(w->dmac >> (40 - 8 * i));
      for (unsigned i = 0; i < 4; ++i) w->qkey |= uint32_t(b[hw::wqe::UD_QKEY_OFF + i]) << (8 * i);
      w->tclass = av[hw::ud_av::TCLASS_OFF];
      w->ttl = av[hw::ud_av::HOP_LIMIT_OFF];
    }
    const uint32_t pmtu = 1u << p.pmtu_log;
    if (w->inl) {
      // (NUM_SGE is checked for inline WQEs too: a UD WQE with 6 fails)
      const unsigned insge = static_cast<unsigned>(u(0, p.ud && chance(rng_, 0.97) ? hw::UD_MAX_SGE : kNsge));
      b[hw::wqe::NUM_SGE_OFF] = static_cast<uint8_t>(insge);
      if (p.ud && insge > hw::UD_MAX_SGE && !w->err) {
        w->err = st::LOC_QP_OP_ERR;
        cov_.hit("ud_sge_over");
      }
      uint32_t n = chance(rng_, 0.1) ? 0 : static_cast<uint32_t>(u(1, kInline));
      if (p.ud && chance(rng_, 0.95)) n = std::min<uint32_t>(n, hw::UD_MAX_INLINE);
      if (chance(rng_, 0.01)) {
        n = static_cast<uint32_t>(u(kInline + 1, chance(rng_, 0.5) ? kInline + 8 : 0xFFFFFFFFull));
        if (!w->err) w->err = st::LOC_QP_OP_ERR;
      }
      if (p.ud && n > hw::UD_MAX_INLINE && !w->err) {
        w->err = st::LOC_QP_OP_ERR;
        cov_.hit("ud_inline_over");
      }
      for (unsigned i = 0; i < 4; ++i) b[hw::wqe::INLINE_LEN_OFF + i] = static_cast<uint8_t>(n >> (8 * i));
      w->len = n;
      if (!w->err) w->pay.assign(b.begin() + hw::wqe::INLINE_DATA_OFF, b.begin() + hw::wqe::INLINE_DATA_OFF + n);
    } else {
      unsigned nsge = static_cast<unsigned>(u(0, p.ud && chance(rng_, 0.97) ? hw::UD_MAX_SGE : kNsge));
      if (w->atom) nsge = chance(rng_, 0.99) ? 1 : static_cast<unsigned>(u(0, kNsge));   // (mostly right)
      const bool bad_n = chance(rng_, 0.001);
      if (bad_n) nsge = static_cast<unsigned>(u(kNsge + 1, 255));
      b[hw::wqe::NUM_SGE_OFF] = static_cast<uint8_t>(nsge);
      if (bad_n && !w->err) w->err = st::LOC_QP_OP_ERR;
      if (p.ud && nsge > hw::UD_MAX_SGE && !w->err) {
        w->err = st::LOC_QP_OP_ERR;
        cov_.hit("ud_sge_over");
      }
      const unsigned n = std::min(nsge, kNsge);
      struct S { uint64_t addr; uint32_t len, key; };
      std::array<S, kNsge> s{};
      const bool over = chance(rng_, 0.002) && n >= 2;
      const int bad = chance(rng_, 0.006) && n ? static_cast<int>(u(0, n - 1)) : -1;
      const unsigned max_sge = p.ud ? (chance(rng_, 0.05) ? pmtu : pmtu / 5)
                                    : chance(rng_, k.msg_big) ? 3 * pmtu : pmtu / 2 + 64;
      for (unsigned i = 0; i < n; ++i) {
        const unsigned mi = over ? p.pd - 1 : mr_of(p.pd, w->rd());
        const Mr& m = mr_[mi];
        s[i].key = m.key;
        const uint64_t room = std::min<uint64_t>(m.len, 1u << 20);
        s[i].addr = m.va + u(0, room - 1);
        const uint64_t left = m.va + room - s[i].addr;
        switch (u(0, 9)) {
          case 0: s[i].len = 0; break;
          case 1: case 2: s[i].len = static_cast<uint32_t>(std::min<uint64_t>(left, u(1, 64))); break;
          default: s[i].len = static_cast<uint32_t>(std::min<uint64_t>(left, u(1, max_sge))); break;
        }
        if (over) s[i].len = 0xFFFFFFFFu;  // inside the 16 GiB region: each passes, the sum does not fit
        if (over) s[i].addr = m.va + (static_cast<uint64_t>(i) << 32);
      }
      int why = -1;  // 0 key, 1 PD, 2 bounds, 3 invalid MR
      if (w->rd() && n && bad < 0 && !over && chance(rng_, 0.03)) {
        // A READ's SGE in an MR of the QP's PD without LOCAL_WRITE (a scatter list needs it).
        for (unsigned t = 3; t < kNumMr; ++t)
          if (mr_[t].valid && mr_[t].pd == p.pd && !(mr_[t].access & 1)) {
            S& x = s[static_cast<unsigned>(u(0, n - 1))];
            x.key = mr_[t].key;
            x.addr = mr_[t].va;
            x.len = static_cast<uint32_t>(std::min<uint64_t>(mr_[t].len, 100));
            break;
          }
      }
      if (bad >= 0) {
        S& x = s[static_cast<unsigned>(bad)];
        why = static_cast<int>(u(0, 3));
        const unsigned mi = (x.key >> hw::MR_KEY_SHIFT) % kNumMr;
        switch (why) {
          case 0: x.key ^= static_cast<uint32_t>(u(1, (1u << hw::MR_KEY_SHIFT) - 1)); break;
          case 1: {
            for (unsigned t = 3; t < kNumMr; ++t)
              if (mr_[t].valid && mr_[t].pd != p.pd) {
                x.key = mr_[t].key;
                x.addr = mr_[t].va;
                x.len = static_cast<uint32_t>(std::min<uint64_t>(mr_[t].len, 100));
                break;
              }
            break;
          }
          case 2:
            if (chance(rng_, 0.5)) {
              x.addr = mr_[mi].va - 1;
              x.len = 1;
            } else {
              x.len = static_cast<uint32_t>(std::min<uint64_t>(mr_[mi].va + mr_[mi].len - x.addr + 1, 0xFFFFFFFFull));
            }
            break;
          default:
            for (unsigned t = 3; t < kNumMr; ++t)
              if (!mr_[t].valid) {
                x.key = mr_[t].key;
                x.addr = mr_[t].va;
                x.len = 1;
                break;
              }
            break;
        }
      }
      // An atomic's SGEs hold ATOMIC_LEN bytes (an SGE made bad above keeps its key and address),
      // now and then SGE 0 another length: LOC_LEN_ERR, as a count other than 1.
      if (w->atom) {
        for (unsigned i = 0; i < n; ++i) s[i].len = hw::ATOMIC_LEN;
        if (n && chance(rng_, 0.01)) s[0].len = static_cast<uint32_t>(chance(rng_, 0.5) ? u(0, 7) : u(9, 1u << 20));
        if (!w->err && (nsge != 1 || s[0].len != hw::ATOMIC_LEN)) {
          w->err = st::LOC_LEN_ERR;
          cov_.hit(nsge != 1 ? "atomic_len_err_nsge" : "atomic_len_err_len");
        }
      }
      for (unsigned i = 0; i < kNsge; ++i) {
        uint8_t* d = &b[hw::wqe::SGE_OFF + hw::wqe::SGE_LEN * i];
        if (i >= n || (p.ud && i >= hw::UD_MAX_SGE)) continue;  // unused SGEs keep random bytes (UD: the AV)
        for (unsigned j = 0; j < hw::sge::ADDR_LEN; ++j) d[hw::sge::ADDR_OFF + j] = static_cast<uint8_t>(s[i].addr >> (8 * j));
        for (unsigned j = 0; j < hw::sge::LENGTH_LEN; ++j) d[hw::sge::LENGTH_OFF + j] = static_cast<uint8_t>(s[i].len >> (8 * j));
        for (unsigned j = 0; j < hw::sge::LKEY_LEN; ++j) d[hw::sge::LKEY_OFF + j] = static_cast<uint8_t>(s[i].key >> (8 * j));
      }
      // The IBA local protection check of the gather list (local read needs no access right) or of
      // a READ's scatter list (LOCAL_WRITE).
      uint64_t total = 0;
      bool ok = true, lw_missing = false;
      std::vector<Piece> sg;
      for (unsigned i = 0; i < n && ok; ++i) {
        const Mr& m = mr_[(s[i].key >> hw::MR_KEY_SHIFT) % kNumMr];
        ok = mr_ok(m, s[i].addr, s[i].len, s[i].key, p.pd);
        if (ok && w->rd() && !(m.access & 1)) {
          ok = false;
          lw_missing = true;
        }
        total += s[i].len;
        sg.push_back({s[i].addr - m.va + m.iova, s[i].len});
      }
      if (!w->err && !ok) {
        w->err = st::LOC_PROT_ERR;
        static const char* const names[] = {"prot_key", "prot_pd", "prot_bounds", "prot_invalid_mr"};
        if (lw_missing && why < 0) cov_.hit(w->atom ? "atomic_prot_local_write" : "prot_local_write");
        else if (why >= 0) cov_.hit(names[why]);
        if (w->read) cov_.hit("read_prot_err");
        if (w->atom) cov_.hit("atomic_prot_err");
      } else if (!w->err && total > 0xFFFFFFFFull) {
        w->err = st::LOC_PROT_ERR;
        cov_.hit("prot_over_4g");
      }
      if (!w->err && p.ud && total > pmtu) {   // a datagram is one packet
        w->err = st::LOC_LEN_ERR;
        cov_.hit("ud_len_err");
      }
      if (!w->err && w->rd()) {   // (no payload: the responses bring it)
        w->len = static_cast<uint32_t>(total);
        if (n == kNsge) cov_.hit("read_sge_6");
      } else if (!w->err) {
        w->len = static_cast<uint32_t>(total);
        if (n == kNsge) cov_.hit("sge_6");
        for (auto& x : sg) {
          if (x.len == 0) cov_.hit("empty_sge");
          for (uint32_t j = 0; j < x.len; ++j) w->pay.push_back(host(x.addr + j));
        }
        // Payload reads: per packet, the pieces of its byte range in each SGE (empty ones skipped).
        const unsigned npk = w->len == 0 ? 1 : (w->len + pmtu - 1) / pmtu;
        unsigned si = 0;
        uint32_t so = 0;
        for (unsigned pk = 0; pk < npk; ++pk) {
          w->pk_reads.push_back(static_cast<unsigned>(w->reads.size()));
          uint32_t rest = std::min(pmtu, w->len - pk * pmtu);
          unsigned pieces = 0;
          while (rest > 0) {
            while (so == sg[si].len) {
              ++si;
              so = 0;
            }
            const uint32_t m = std::min(rest, sg[si].len - so);
            w->reads.push_back({sg[si].addr + so, m});
            so += m;
            rest -= m;
            ++pieces;
          }
          if (pieces > 1) cov_.hit("packet_spans_sges");
        }
      }
    }
    if (w->err == st::LOC_QP_OP_ERR) cov_.hit("loc_qp_op_err");
    w->npk = w->len == 0 ? 1 : (w->len + pmtu - 1) / pmtu;
    w->pkts = w->rd() ? 1 : w->npk;
    if (w->atom) {   // (little-endian u64s at WQE_ATOMIC_OFF; SGE 5's bytes, random unless a bad SGE count wrote them)
      for (unsigned i = 0; i < 8; ++i) {
        w->swap |= uint64_t(b[hw::WQE_ATOMIC_OFF + hw::atomic::SWAP_ADD_OFF + i]) << (8 * i);
        w->cmp |= uint64_t(b[hw::WQE_ATOMIC_OFF + hw::atomic::COMPARE_OFF + i]) << (8 * i);
      }
    }
    return w;
  }

  // ---------------------------------------------------------------- expected packets
  wire::RoceHdr expect_hdr(unsigned qi, const Sent& m, unsigned k) const {
    const Qp& p = q_[qi];
    const Posted& w = *m.w;
    const uint32_t pmtu = 1u << p.pmtu_log;
    const bool first = k == 0, last = k + 1 == w.pkts;
    wire::RoceHdr h;
    h.dst_mac = p.dmac;
    h.src_mac = lmac_;
    h.src_ip = lip_;
    h.dst_ip = p.dip;
    h.ip_tos = p.tclass;
    h.ip_ttl = p.ttl;
    h.udp_sport = static_cast<uint16_t>(0xC000 | qi);
    h.dest_qp = p.dqpn;
    h.psn = (m.first + k) & kM24;
    h.pay_len = static_cast<uint16_t>(last ? w.len - k * pmtu : pmtu);
    h.ack_req = last;
    h.se = last && w.se && (!w.write || w.imm);   // IBA: SE on a SEND's last, a WRITE's with ImmDt
    h.imm = w.imm_data;
    if (p.ud) {   // one packet, to the WQE's destination, with a DETH; nothing asks for an ACK
      h.opcode = w.imm ? wire::kUdSendOnlyImm : wire::kUdSendOnly;
      h.ack_req = false;
      h.dst_mac = w.dmac;
      h.dst_ip = w.dip;
      h.ip_tos = w.tclass;
      h.ip_ttl = w.ttl;
      h.deth_qkey = w.qkey;
      h.deth_sqp = qi;
    } else if (w.atom) {   // one request, the AtomicETH: no payload, no SE
      h.opcode = w.cs ? wire::kCmpSwap : wire::kFetchAdd;
      h.pay_len = 0;
      h.se = false;
      h.reth_va = w.raddr;
      h.reth_rkey = w.rkey;
      h.reth_len = hw::ATOMIC_LEN;
      h.atom_swap = w.swap;
      h.atom_cmp = w.cmp;
    } else if (w.read) {   // one request for all of it: no payload, no SE
      h.opcode = wire::kReadReq;
      h.pay_len = 0;
      h.se = false;
      h.reth_va = w.raddr;
      h.reth_rkey = w.rkey;
      h.reth_len = w.len;
    } else if (w.write) {
      h.opcode = first && last ? (w.imm ? wire::kWriteOnlyImm : wire::kWriteOnly)
                 : first       ? wire::kWriteFirst
                 : last        ? (w.imm ? wire::kWriteLastImm : wire::kWriteLast)
                               : wire::kWriteMiddle;
      h.reth_va = w.raddr;
      h.reth_rkey = w.rkey;
      h.reth_len = w.len;
    } else {
      h.opcode = first && last ? (w.imm ? wire::kSendOnlyImm : wire::kSendOnly)
                 : first       ? wire::kSendFirst
                 : last        ? (w.imm ? wire::kSendLastImm : wire::kSendLast)
                               : wire::kSendMiddle;
    }
    return h;
  }

  // Header and payload of packet k of message m against the model: "" or what differs.
  std::string compare(unsigned qi, const Sent& m, const wire::RoceHdr& got, unsigned slot) const {
    const Qp& p = q_[qi];
    const wire::RoceHdr exp = expect_hdr(qi, m, m.pk);
    wire::RoceHdr cmp = got;
    // (the RETH goes out only with a WRITE's first packet or a READ request; an atomic request's
    // AtomicETH carries the VA and rkey, its length field is ATOMIC_LEN, and the operands)
    if (!wire::bth_has_reth(exp.opcode) && !wire::bth_has_atomiceth(exp.opcode)) {
      cmp.reth_va = exp.reth_va;
      cmp.reth_rkey = exp.reth_rkey;
      cmp.reth_len = exp.reth_len;
    }
    if (!wire::bth_has_atomiceth(exp.opcode)) {
      cmp.atom_swap = exp.atom_swap;
      cmp.atom_cmp = exp.atom_cmp;
    }
    cmp.aeth = exp.aeth;
    if (!wire::bth_has_deth(exp.opcode)) {  // (the DETH goes out only with the UD opcodes)
      cmp.deth_qkey = exp.deth_qkey;
      cmp.deth_sqp = exp.deth_sqp;
    }
    if (!wire::bth_has_imm(exp.opcode)) cmp.imm = exp.imm;
    std::ostringstream o;
    if (cmp != exp) {
      o << "QP " << qi << " WQE " << m.idx << " packet " << m.pk << ": header {op " << int(got.opcode) << " len "
        << got.pay_len << " psn " << got.psn << " ack " << got.ack_req << " se " << got.se << " imm " << hex(got.imm)
        << " sport " << hex(got.udp_sport) << " dmac " << hex(got.dst_mac) << " smac " << hex(got.src_mac) << " dip "
        << hex(got.dst_ip) << " sip " << hex(got.src_ip) << "}, model {" << int(exp.opcode) << " " << exp.pay_len << " "
        << exp.psn << " " << exp.ack_req << " " << exp.se << " " << hex(exp.imm) << " " << hex(exp.udp_sport) << " "
        << hex(exp.dst_mac) << " " << hex(exp.src_mac) << " " << hex(exp.dst_ip) << " " << hex(exp.src_ip) << "}";
      if (wire::bth_has_atomiceth(exp.opcode) || wire::bth_has_atomiceth(got.opcode))
        o << "; AtomicETH {va " << hex(got.reth_va) << " rkey " << hex(got.reth_rkey) << " len " << got.reth_len
          << " swap " << hex(got.atom_swap) << " cmp " << hex(got.atom_cmp) << "}, model {" << hex(exp.reth_va) << " "
          << hex(exp.reth_rkey) << " " << exp.reth_len << " " << hex(exp.atom_swap) << " " << hex(exp.atom_cmp) << "}";
      return o.str();
    }
    const uint32_t off = m.pk << p.pmtu_log;
    for (unsigned b = 0; b < exp.pay_len; ++b)
      if (buf_[slot * 4096 + b] != m.w->pay[off + b]) {
        o << "QP " << qi << " WQE " << m.idx << " packet " << m.pk << " (psn " << exp.psn << "): payload byte " << b
          << " of " << exp.pay_len << " is " << hex(buf_[slot * 4096 + b]) << ", model " << hex(m.w->pay[off + b]);
        return o.str();
      }
    return "";
  }

  // A packet handed to the TX scheduler: the next packet of a message in its QP's ring, in every
  // reading of the packets so far that it fits (a cut message's packets may stop at any point).
  void packet(const wire::RoceHdr& got, unsigned slot) {
    auto f = by_dqpn_.find(got.dest_qp);
    if (f == by_dqpn_.end()) return fail("packet to unknown QP number ", got.dest_qp);
    const unsigned qi = f->second;
    Qp& p = q_[qi];
    if (p.ud) {
      if (++ud_bal_[{qi, got.psn}] > 1) return fail("UD datagram of QP ", qi, " PSN ", got.psn, " without its acknowledgement");
      cov_.hit(got.opcode == wire::kUdSendOnlyImm ? "ud_datagram_imm" : "ud_datagram");
    }
    if (slot_busy_[slot]) return fail("slot ", slot, " handed over again before it was freed");
    std::vector<Hyp> next;
    std::string why;
    const Sent* hit = nullptr;
    bool stale = false, skipped = false;
    for (const Hyp& h : p.hyps) {
      for (size_t i = 0; i < h.msgs.size(); ++i) {
        const Sent& m = h.msgs[i];
        if (((m.first + m.pk) & kM24) == got.psn) {
          const std::string w = compare(qi, m, got, slot);
          if (!w.empty()) {
            if (why.empty()) why = w;
          } else if (m.trunc && h.stale <= 0) {
            if (why.empty()) why = "QP " + std::to_string(qi) + ": more than " + std::to_string(kNslot + 1) +
                                   " packets of messages cut short";
          } else {
            Hyp n = h;
            for (size_t j = 0; j < i; ++j) {
              if (n.msgs.front().pk < n.msgs.front().w->pkts) skipped = true;
              n.msgs.pop_front();
            }
            Sent& x = n.msgs.front();
            if (x.trunc) {
              --n.stale;
              stale = true;
            }
            if (!hit) hit = &m;
            if (++x.pk == x.w->pkts) {
              Entry& e = p.out[x.idx % kOuts];
              if (e.serial == x.serial && !e.done) {
                e.done = true;
                e.ack_at = cyc_ + u(1, knobs_ack_lat_);
              }
              n.msgs.pop_front();
            }
            if (std::find(next.begin(), next.end(), n) == next.end() && next.size() < 16) next.push_back(n);
          }
        }
        if (!m.trunc) break;
      }
    }
    if (next.empty()) {
      if (!why.empty()) return fail(why);
      const Hyp& h = p.hyps[0];
      if (h.msgs.empty()) return fail("QP ", qi, ": packet PSN ", got.psn, " of no message in the ring");
      const Sent& m = h.msgs.front();
      return fail("QP ", qi, ": packet PSN ", got.psn, ", expected ", (m.first + m.pk) & kM24, " (WQE ", m.idx,
                  " packet ", m.pk, " of ", m.w->pkts, ", ", h.msgs.size(), " messages waiting)");
    }
    // coverage, from the first reading
    const Sent& m = *hit;
    const wire::RoceHdr exp = expect_hdr(qi, m, m.pk);
    ++packets_;
    if (stale) cov_.hit("stale_packet");
    if (skipped) cov_.hit("rewind_cuts_message");
    if (qi == 0) cov_.hit("qp_first");
    if (qi == kNumQp - 1) cov_.hit("qp_last");
    if (p.pmtu_log == 8 && m.w->pkts > 1) cov_.hit("pmtu_256");
    if (p.pmtu_log == 12 && exp.pay_len == 4096) cov_.hit("pmtu_4096");
    switch (exp.opcode) {
      case wire::kSendOnly: case wire::kSendOnlyImm: case wire::kWriteOnly: case wire::kWriteOnlyImm:
        cov_.hit("pkt_only");
        break;
      case wire::kSendFirst: case wire::kWriteFirst: cov_.hit("pkt_first"); break;
      case wire::kCmpSwap: cov_.hit("atomic_cs_req"); break;
      case wire::kFetchAdd: cov_.hit("atomic_fa_req"); break;
      case wire::kReadReq:
        cov_.hit("read_req");
        if (m.w->npk > 1) cov_.hit("read_multi_response");
        if (m.w->len == 0) cov_.hit("read_zero_len");
        break;
      case wire::kSendMiddle: case wire::kWriteMiddle: cov_.hit("pkt_middle"); break;
      default: cov_.hit("pkt_last"); break;
    }
    if (wire::bth_has_imm(exp.opcode)) cov_.hit("with_imm");
    if (exp.opcode == wire::kWriteMiddle || exp.opcode == wire::kWriteLast || exp.opcode == wire::kWriteLastImm)
      cov_.hit("write_multi_packet");
    if (exp.se) cov_.hit("solicited");
    if (m.w->len == 0) cov_.hit("empty_message");
    if (m.w->inl && exp.pay_len > 0) cov_.hit(m.w->len > kBytes ? "inline_two_words" : "inline");
    if (exp.psn == 0 && m.pk > 0) cov_.hit("psn_wrap");
    if (m.pk + 1 == m.w->pkts && !m.w->sig) cov_.hit("unsignaled");
    // (a packet after a READ of several responses: its PSN jumped over them)
    if (m.pk == 0 && p.last_read_npk > 1 && p.last_read_psn == ((exp.psn - p.last_read_npk) & kM24)) cov_.hit("read_psn_jump");
    if (m.w->read) {
      p.last_read_npk = m.w->npk;
      p.last_read_psn = exp.psn;
    }
    p.hyps = std::move(next);
    slot_busy_[slot] = true;
    frees_.push_back({cyc_ + 1 + u(0, knobs_max_free_), slot});
  }

  // ---------------------------------------------------------------- ring writes
  void ring_write(uint64_t waddr, const uint32_t* d) {
    const unsigned qi = static_cast<unsigned>(waddr >> kOutW);
    Qp& p = q_[qi];
    const uint64_t wrid = get_bits(d, kOutWrid, 64);
    const uint32_t first = static_cast<uint32_t>(get_bits(d, kOutFirst, 24));
    const uint32_t last = static_cast<uint32_t>(get_bits(d, kOutLast, 24));
    const bool sig = get_bits(d, kOutSig, 1);
    const uint8_t err = static_cast<uint8_t>(get_bits(d, kOutErr, 8));
    const unsigned op = static_cast<unsigned>(get_bits(d, kOutOp, 3));   // tmnic_pkg sq_op_e
    if ((waddr & (kOuts - 1)) != p.next % kOuts)
      return fail("QP ", qi, ": ring write at entry ", waddr & (kOuts - 1), ", next WQE ", p.next);
    if (static_cast<uint16_t>(p.next - p.ci) >= kOuts)
      return fail("QP ", qi, ": ring write for WQE ", p.next, " with ", kOuts, " entries from ci ", p.ci, " not complete");
    if (p.next == p.pi) return fail("QP ", qi, ": ring write for WQE ", p.next, ", none posted");
    const auto& w = p.ring[p.next % p.size()];
    if (wrid != w->wrid) return fail("QP ", qi, " WQE ", p.next, ": wr_id ", hex(wrid), ", model ", hex(w->wrid));
    // The operation, for the completion's opcode (also of a failed or flushed WQE; SEND for a bad opcode).
    const unsigned op_exp = w->read ? 2u : w->atom ? (w->cs ? 3u : 4u) : w->write ? 1u : 0u;
    if (op != op_exp)
      return fail("QP ", qi, " WQE ", p.next, ": ring entry op ", op, ", model ", op_exp);
    if (err == 0) cov_.hit(w->read ? "read_msg" : w->atom ? (w->cs ? "atomic_cs_msg" : "atomic_fa_msg")
                           : w->write ? "write_msg" : "send_msg");
    if (w->read && err == st::WR_FLUSH_ERR) cov_.hit("read_flushed");
    if (w->atom && err == st::WR_FLUSH_ERR) cov_.hit("atomic_flushed");
    // READs and atomics in flight (ring entries between the model's ci and next): fewer than max_rd
    // when one enters, none when a fenced WQE does (one that fails its opcode checks, or an atomic
    // its SGE count or length, does not wait).
    const bool no_wait = err == st::LOC_QP_OP_ERR || (w->atom && err == st::LOC_LEN_ERR);
    if (err != st::WR_FLUSH_ERR && !no_wait && (w->rd() || w->fence)) {
      unsigned n = 0, n_other = 0;   // in flight; of them the other kind (READ vs atomic)
      for (uint16_t i = p.ci; i != p.next; ++i) {
        const Entry& f = p.out[i % kOuts];
        if (!f.read || f.err) continue;
        ++n;
        n_other += f.atom != w->atom;
      }
      if (w->rd() && n >= p.max_rd)
        return fail("QP ", qi, " WQE ", p.next, ": ", w->atom ? "an atomic" : "a READ", " with ", n,
                    " READs and atomics in flight (max_rd ", p.max_rd, ")");
      if (w->fence && n)
        return fail("QP ", qi, " WQE ", p.next, ": a fenced WQE with ", n, " READs and atomics in flight");
      if (w->read && n + 1 == p.max_rd) cov_.hit("read_at_limit");
      if (w->rd() && n + 1 == p.max_rd) {   // (the limit's extremes, reached by READs and atomics)
        if (p.max_rd == 1) cov_.hit("read_limit_1");
        if (p.max_rd == 4) cov_.hit("read_limit_4");
      }
      if (w->atom && n + 1 == p.max_rd) cov_.hit("atomic_at_limit");
      if (w->rd() && n + 1 == p.max_rd && n_other) cov_.hit("rd_limit_shared");
      if (w->read && p.rd_blocked) cov_.hit("read_waited");
      if (w->atom && p.rd_blocked) cov_.hit("atomic_waited");
      if (w->fence && err == 0) cov_.hit("fence_msg");
      if (w->fence && p.fence_blocked) cov_.hit("fence_waited");
      if (w->fence && p.fence_blocked && p.fence_atom) cov_.hit("fence_after_atomic");
      if (w->read && err == 0 && static_cast<uint16_t>(p.resend_end - p.next - 1) < kOuts) cov_.hit("read_resent");
      if (w->atom && err == 0 && static_cast<uint16_t>(p.resend_end - p.next - 1) < kOuts) cov_.hit("atomic_resent");
    }
    p.rd_blocked = p.fence_blocked = p.fence_atom = false;
    Entry& e = p.out[p.next % kOuts];
    e = Entry{++serial_, 0, 0, err, w->rd() && err == 0, w->atom && err == 0};
    if (p.next >= p.size() && p.next % p.size() == 0) cov_.hit("ring_wrap");
    if (err == st::WR_FLUSH_ERR) {
      if (p.state != kErr) return fail("QP ", qi, " WQE ", p.next, ": flushed while the QP is not in ERR");
      ckick_exp_ = static_cast<int>(qi);
      cov_.hit("flush");
      reads_ = nullptr;
    } else {
      if (p.dead) return fail("QP ", qi, " WQE ", p.next, ": a failed QP sends a new message (status ", int(err), ")");
      if (p.state == kErr && p.pushed_in_err)
        return fail("QP ", qi, " WQE ", p.next, ": a new message (status ", int(err), ") while the QP is in ERR");
      if (p.state != kRts && p.state != kErr) return fail("QP ", qi, ": a message in state ", p.state);
      if (err != w->err) return fail("QP ", qi, " WQE ", p.next, ": status ", int(err), ", model ", int(w->err));
      if (p.wait && cyc_ < p.due)
        return fail("QP ", qi, " WQE ", p.next, ": sent during an RNR wait ending at cycle ", p.due);
      if (p.wait) cov_.hit("rnr_resend");
      p.wait = false;
      if (err) {
        p.dead = true;
        lerr_exp_.push_back(qi);
        prot_exp_ = err == st::LOC_PROT_ERR;
        reads_ = nullptr;
      } else {
        const uint32_t l = (p.psn + w->npk - 1) & kM24;
        if (first != p.psn || last != l || sig != w->sig)
          return fail("QP ", qi, " WQE ", p.next, ": ring entry {first ", first, " last ", last, " sig ", sig,
                      "}, model {", p.psn, " ", l, " ", w->sig, "}");
        e.first = first;
        e.last = last;
        Sent s;
        s.w = w;
        s.idx = p.next;
        s.first = p.psn;
        s.serial = e.serial;
        s.trunc = p.state == kErr;  // under way when the QP went to ERR: stops at a packet boundary
        if (s.trunc) p.psn_known = false;
        for (auto& h : p.hyps) h.msgs.push_back(s);
        p.psn = (p.psn + w->npk) & kM24;
        reads_ = (w->inl || w->rd()) ? nullptr : w;
        nread_ = 0;
      }
      if (p.state == kErr) p.pushed_in_err = true;
    }
    ++p.next;
    if (static_cast<uint16_t>(p.next - p.ci) == kOuts) cov_.hit("window_full");
    if (!p.live) {
      p.live = true;
      live_.push_back(qi);
    }
  }

  // A completer message taken: its effect on the QP (a failed QP ignores it).
  void take_msg() {
    Qp& p = q_[msg_.qp];
    p.held = false;
    msg_held_ = false;
    if (p.dead) {
      cov_.hit("rewind_ignored_dead");
      return;
    }
    cut(p);
    if (msg_.fail) {
      p.dead = true;
      if (p.pending()) p.psn_known = false;
      cov_.hit("fail_msg");
      errs_.push_back({cyc_ + u(1, 4), msg_.qp});  // the completer's err_o: the QP goes to ERR
      return;
    }
    if (static_cast<uint16_t>(p.next - msg_.idx) <= kOuts) p.resend_end = p.next;
    p.next = msg_.idx;
    p.psn = msg_.psn;
    p.psn_known = true;
    cov_.hit("rewind");
    if (msg_.rnr) {
      p.wait = true;
      p.due = msg_.due;
      cov_.hit("rnr_wait");
    }
  }

  // ---------------------------------------------------------------- the completer
  void completer(const Knobs& k) {
    if (!live_.empty() && chance(rng_, k.ack)) {
      const size_t li = u(0, live_.size() - 1);
      const unsigned qi = live_[li];
      Qp& p = q_[qi];
      const uint16_t ci0 = p.ci;
      // One live hot QP gets no ACK for long stretches: its window fills.
      int sq = -1;
      for (size_t h = 2; h < hot_.size() && sq < 0; ++h)
        if (q_[hot_[h]].state == kRts && !q_[hot_[h]].dead) sq = static_cast<int>(hot_[h]);
      const bool stall = (static_cast<int>(qi) == sq && (cyc_ / 12000) % 2 == 0) || (qi == hot_[0] && (cyc_ / 12000) % 2 == 1);
      if (!p.held && !stall && p.state == kRts && p.next != p.pi && p.ring[p.next % p.size()]) {
        // (coverage: is the next WQE held back by the READ limit or a fence now?)
        const Posted& nw = *p.ring[p.next % p.size()];
        unsigned n = 0, na = 0;
        for (uint16_t i = p.ci; i != p.next; ++i) {
          n += p.out[i % kOuts].read;
          na += p.out[i % kOuts].atom;
        }
        if (nw.rd() && !nw.err && n >= p.max_rd) p.rd_blocked = true;
        if (nw.fence && !nw.err && n) p.fence_blocked = true;
        if (nw.fence && !nw.err && na) p.fence_atom = true;
      }
      if (!p.held && !stall) {
        if (p.state == kErr) {
          p.ci = p.next;                     // the flush completes every entry
        } else {
          const unsigned most = static_cast<unsigned>(u(1, kOuts));
          for (unsigned n = 0; n < most && p.ci != p.next; ++n) {
            const Entry& e = p.out[p.ci % kOuts];
            if (e.err || !e.done || cyc_ < e.ack_at) break;
            ++p.ci;
          }
        }
      }
      if (p.ci != ci0) marks_.push_back(qi);
      if (p.ci == p.next && !p.held) {
        p.live = false;
        live_[li] = live_.back();
        live_.pop_back();
      }
    }
    // A go-back racing a local error: offered while the failing WQE is checked, taken after it failed
    // the QP (its ERR still to come), which ignores it.
    const bool racing = last_dead_ >= 0 && !msg_held_ && chance(rng_, 0.7);
    if (!msg_held_ && !live_.empty() && (racing || chance_nz(rng_, k.rewind) || chance_nz(rng_, k.fail))) {
      const bool f = !racing && chance(rng_, k.fail / (k.fail + k.rewind));
      const unsigned qi = racing ? static_cast<unsigned>(last_dead_) : live_[u(0, live_.size() - 1)];
      last_dead_ = -1;
      Qp& p = q_[qi];
      const Entry& e = p.out[p.ci % kOuts];
      if (p.state == kRts && p.ci != p.next && !e.err && !(p.ud && !f)) {   // (no NAK ever rewinds a UD QP)
        msg_held_ = true;
        p.held = true;
        msg_ = Msg{};
        msg_.fail = f;
        msg_.qp = qi;
        msg_.idx = p.ci;
        msg_.psn = e.first;
        msg_.rnr = !f && chance(rng_, 0.4);
        if (msg_.rnr) msg_.due = chance(rng_, 0.1) ? cyc_ - std::min<uint64_t>(cyc_, u(0, 100)) : cyc_ + u(0, 3000);
        else msg_.due = rng_();
      }
    }
  }

  // ---------------------------------------------------------------- one cycle
  void step(const Knobs* k) {
    // ---------------- drive
    top_->now_i = cyc_;
    // Registered reads: the context's QP and MR ports, the completer's ci copy.
    zero(top_->qp_rd_i);
    pack_view(kReqView, q_[qp_rd_].cfg.data(), top_->qp_rd_i.data(), 0);
    const Mr& m = mr_[mr_rd_];
    pack_mr(m, top_->mr_rd_i.data());
    top_->ci_rdata_i = ci_rd_;
    top_->local_mac_i = lmac_;
    top_->local_ip_i = lip_;
    // QPs the completer failed go to ERR; the completer marks them.
    for (size_t i = 0; i < errs_.size();) {
      if (errs_[i].first <= cyc_) {
        to_err(errs_[i].second);
        marks_.push_back(errs_[i].second);
        errs_[i] = errs_.back();
        errs_.pop_back();
      } else {
        ++i;
      }
    }
    // Commands: a QP to ERR, a QP from INIT/RTR to RTS (with a kick).
    if (k && chance_nz(rng_, k->cmd_err)) {
      const unsigned qi = !live_.empty() && chance(rng_, 0.5) ? live_[u(0, live_.size() - 1)] : pick_qp();
      if (q_[qi].state == kRts && !q_[qi].held) {
        if (q_[qi].pending()) cov_.hit("err_cuts_message");
        to_err(qi);
        kicks_.push_back(qi);
        cov_.hit("cmd_err");
      }
    }
    if (k && chance(rng_, 0.002)) {
      const unsigned qi = static_cast<unsigned>(u(0, kNumQp - 1));
      if (q_[qi].state == kInit || q_[qi].state == kRtr) {
        to_rts(qi);
        if (q_[qi].pi != q_[qi].next) cov_.hit("kick_to_rts");
      }
    }
    top_->init_sq_i = init_qp_ >= 0;
    top_->init_qp_i = init_qp_ >= 0 ? static_cast<unsigned>(init_qp_) : 0;
    top_->init_psn_i = init_qp_ >= 0 ? q_[static_cast<unsigned>(init_qp_)].psn : 0;
    // Set ports (doorbell, kicks, mark) only after set_ready_o (db_ready_o) in the cycle before.
    top_->db_valid_i = 0;
    top_->db_idx_i = static_cast<uint16_t>(u(0, 4095));
    top_->db_pi_i = static_cast<uint16_t>(rng_());
    if (k && chance(rng_, k->db)) {
      if (!set_ready_) {
        cov_.hit("db_backpressure");
      } else if (chance(rng_, 0.02)) {
        top_->db_valid_i = 1;
        top_->db_idx_i = static_cast<uint16_t>(u(kNumQp, 4095));  // no such QP: ignored
        cov_.hit("db_out_of_range");
      } else {
        const unsigned qi = pick_qp();
        Qp& p = q_[qi];
        const unsigned n = static_cast<unsigned>(u(1, 4));
        for (unsigned i = 0; i < n && static_cast<uint16_t>(p.pi - p.ci) < p.size(); ++i) {
          p.ring[p.pi % p.size()] = make_wqe(p, *k);
          ++p.pi;
        }
        top_->db_valid_i = 1;
        top_->db_idx_i = static_cast<uint16_t>(qi);
        top_->db_pi_i = p.pi;
        cov_.hit("doorbell");
      }
    }
    top_->kick_i = 0;
    top_->kick_qp_i = 0;
    for (unsigned j = 0; j < 2 && set_ready_ && !kicks_.empty(); ++j) {
      top_->kick_i |= 1u << j;
      top_->kick_qp_i |= kicks_.front() << (kQpW * j);
      kicks_.pop_front();
    }
    if (k) completer(*k);
    top_->mark_i = 0;
    top_->mark_qp_i = static_cast<uint16_t>(u(0, kNumQp - 1));
    if (set_ready_ && !marks_.empty() && (!k || chance(rng_, 0.7))) {
      top_->mark_i = 1;
      top_->mark_qp_i = static_cast<uint16_t>(marks_.front());
      marks_.pop_front();
    }
    top_->msg_valid_i = msg_held_;
    zero(top_->msg_i);
    if (msg_held_) {
      set_sig_bits(top_->msg_i, kMsgKind, 1, msg_.fail);
      set_sig_bits(top_->msg_i, kMsgQp, 16, msg_.qp);
      set_sig_bits(top_->msg_i, kMsgIdx, 16, msg_.idx);
      set_sig_bits(top_->msg_i, kMsgPsn, 24, msg_.psn);
      set_sig_bits(top_->msg_i, kMsgRnr, 1, msg_.rnr);
      set_sig_bits(top_->msg_i, kMsgDue, 64, msg_.due);
    }
    // Reads of the requester's next (the completer's) and of the PSN table (QUERY_QP).
    const bool nx_re = forced_nx_ >= 0 || (k && chance(rng_, 0.3));
    const unsigned nx_q = forced_nx_ >= 0 ? static_cast<unsigned>(forced_nx_) : static_cast<unsigned>(u(0, kNumQp - 1));
    top_->nx_re_i = nx_re;
    top_->nx_raddr_i = nx_q;
    const unsigned query_q = forced_query_ >= 0 ? static_cast<unsigned>(forced_query_) : pick_qp();
    top_->query_qp_i = query_q;
    // DMA responses, in request order
    bool beat = false, beat_last = false;
    top_->rsp_wqe_valid_i = 0;
    top_->rsp_pay_valid_i = 0;
    top_->rsp_last_i = 0;
    if (!chunks_.empty() && cyc_ >= chunks_.front().at && !(k && chance_nz(rng_, k->gap))) {
      Chunk& c = chunks_.front();
      const unsigned align = static_cast<unsigned>(c.addr % kBytes);
      const unsigned nbeats = (align + c.len + kBytes - 1) / kBytes;
      const int off = static_cast<int>(c.sent * kBytes) - static_cast<int>(align);
      uint64_t be = 0;
      for (unsigned i = 0; i < kBytes; ++i) {
        const int o = off + static_cast<int>(i);
        uint8_t b = static_cast<uint8_t>(rng_());
        if (o >= 0 && static_cast<unsigned>(o) < c.len) {
          b = c.wqe ? c.b[static_cast<unsigned>(o)] : host(c.addr + static_cast<unsigned>(o));
          be |= 1ull << i;
        }
        set_byte(top_->rsp_data_i.data(), i, b);
      }
      (c.wqe ? top_->rsp_wqe_valid_i : top_->rsp_pay_valid_i) = 1;
      top_->rsp_off_i = static_cast<uint16_t>(off) & 0x3FFF;
      set_sig_bits(top_->rsp_be_i, 0, kBytes, be);
      ++c.sent;
      beat_last = c.sent == nbeats;
      top_->rsp_last_i = beat_last;
      beat = true;
    }
    const bool rd_ready = !k || chance(rng_, k->rd_ready);
    top_->rd_ready_i = rd_ready;
    const bool pkt_ready = !k || chance(rng_, k->pkt_ready);
    // The completer takes a UD QP's own acknowledgements when no responder ACK competes (random).
    const bool uack_ready = !k || chance(rng_, k->pkt_ready);
    top_->uack_ready_i = uack_ready;
    top_->pkt_ready_i = pkt_ready;
    const bool lerr_ready = !k || chance(rng_, k->lerr_ready);
    top_->lerr_ready_i = lerr_ready;
    uint32_t free_mask = 0;
    for (size_t i = 0; i < frees_.size();) {
      if (frees_[i].first <= cyc_) {
        free_mask |= 1u << frees_[i].second;
        slot_busy_[frees_[i].second] = false;
        frees_[i] = frees_.back();
        frees_.pop_back();
      } else {
        ++i;
      }
    }
    top_->slot_free_i = free_mask;
    if (k) {
      hot_share_ = k->hot;
      knobs_max_free_ = k->max_free;
      knobs_ack_lat_ = k->ack_lat;
    }
    top_->eval();

    // ---------------- check
    // Registered outputs owed by the previous cycle's ring write.
    if (bool(top_->prot_err_o) != prot_exp_) return fail("prot_err_o ", int(top_->prot_err_o), ", model ", prot_exp_);
    prot_exp_ = false;
    if (bool(top_->ckick_o) != (ckick_exp_ >= 0) || (ckick_exp_ >= 0 && top_->ckick_qp_o != unsigned(ckick_exp_)))
      return fail("ckick_o ", int(top_->ckick_o), " QP ", int(top_->ckick_qp_o), ", model ", ckick_exp_);
    ckick_exp_ = -1;
    // Reads answered from the words as they were before the previous cycle's writes.
    if (nx_chk_ >= 0) {
      if (top_->nx_rdata_o != nx_exp_)
        return fail("next of QP ", nx_chk_, " read by the completer: ", top_->nx_rdata_o, ", model ", nx_exp_);
      cov_.hit("nx_read");
    }
    if (query_chk_ >= 0) {
      if (top_->query_psn_o != query_exp_)
        return fail("QUERY_QP PSN of QP ", query_chk_, ": ", top_->query_psn_o, ", model ", query_exp_);
      cov_.hit("query_psn");
    }
    nx_chk_ = nx_re && init_qp_ < 0 && q_[nx_q].inited ? static_cast<int>(nx_q) : -1;
    nx_exp_ = q_[nx_q].next;
    const Qp& qq = q_[query_q];
    const bool settled_psn = qq.inited && qq.psn_known && !qq.pending() && init_qp_ < 0;
    query_chk_ = settled_psn ? static_cast<int>(query_q) : -1;
    query_exp_ = qq.psn;
    // wake_at_o: never after the end of an RNR wait that is still ahead (waits taken before this cycle)
    if (cyc_ % 61 == 0)
      for (unsigned i = 0; i < kNumQp; ++i)
        if (q_[i].wait && !q_[i].dead && q_[i].due > cyc_ + 1 && top_->wake_at_o > q_[i].due)
          return fail("wake_at_o ", top_->wake_at_o, " after QP ", i, "'s RNR wait ends at ", q_[i].due);
    // Handshakes held and stable
    if (rd_held_ && (!top_->rd_valid_o || top_->rd_addr_o != rd_addr_ || top_->rd_len_o != rd_len_ ||
                     bool(top_->rd_is_pay_o) != rd_pay_))
      return fail("DMA read request changed before it was taken");
    if (pkt_held_) {
      if (!top_->pkt_valid_o || top_->pkt_slot_o != pkt_slot_) return fail("packet changed before it was taken");
      for (unsigned i = 0; i < wire::kRoceHdrWords; ++i)
        if (top_->pkt_hdr_o[i] != pkt_hdr_[i]) return fail("packet header changed before it was taken");
    }
    if (lerr_held_ && (!top_->lerr_valid_o || top_->lerr_qp_o != lerr_qp_))
      return fail("local error changed before it was taken");
    // UD: every datagram handed out is acknowledged by the requester itself, once, and nothing else is.
    if (uack_held_ && (!top_->uack_valid_o || top_->uack_qp_o != uack_qp_ || top_->uack_psn_o != uack_psn_))
      return fail("UD acknowledgement changed before it was taken");
    uack_held_ = top_->uack_valid_o && !uack_ready;
    uack_qp_ = top_->uack_qp_o;
    uack_psn_ = top_->uack_psn_o;
    if (top_->uack_valid_o && !uack_ready) cov_.hit("ud_uack_backpressure");
    if (top_->uack_valid_o && uack_ready) {
      if (!q_[top_->uack_qp_o].ud) return fail("UD acknowledgement for RC QP ", top_->uack_qp_o);
      int& bal = ud_bal_[{top_->uack_qp_o, top_->uack_psn_o}];
      if (--bal < -1) return fail("UD acknowledgement of QP ", top_->uack_qp_o, " PSN ", top_->uack_psn_o, " twice");
      cov_.hit("ud_uack");
    }
    rd_held_ = top_->rd_valid_o && !rd_ready;
    rd_addr_ = top_->rd_addr_o;
    rd_len_ = top_->rd_len_o;
    rd_pay_ = top_->rd_is_pay_o;
    pkt_held_ = top_->pkt_valid_o && !pkt_ready;
    pkt_slot_ = top_->pkt_slot_o;
    for (unsigned i = 0; i < wire::kRoceHdrWords; ++i) pkt_hdr_[i] = top_->pkt_hdr_o[i];
    lerr_held_ = top_->lerr_valid_o && !lerr_ready;
    lerr_qp_ = top_->lerr_qp_o;
    if (top_->rd_valid_o && !rd_ready) cov_.hit("rd_backpressure");
    if (top_->pkt_valid_o && !pkt_ready) cov_.hit("pkt_backpressure");
    if (msg_held_ && !top_->msg_ready_o) cov_.hit("msg_backpressure");
    if (top_->lerr_valid_o && !lerr_ready) cov_.hit("lerr_backpressure");
    // Local errors: the failed QP, in order; the completer takes it and the QP goes to ERR.
    if (top_->lerr_valid_o) {
      if (lerr_exp_.empty()) return fail("lerr_valid_o (QP ", top_->lerr_qp_o, ") without a local error");
      if (top_->lerr_qp_o != lerr_exp_.front()) return fail("lerr_qp_o ", top_->lerr_qp_o, ", model ", lerr_exp_.front());
      if (lerr_ready) {
        errs_.push_back({cyc_ + u(1, 30), lerr_exp_.front()});
        lerr_exp_.pop_front();
      }
    }
    // DMA read requests
    if (top_->rd_valid_o && rd_ready) {
      const uint64_t a = top_->rd_addr_o;
      const uint32_t len = top_->rd_len_o;
      Chunk c{a, len, 0, cyc_ + 1 + (k ? u(0, k->max_lat) : 0), !top_->rd_is_pay_o, {}};
      if (c.wqe) {
        auto f = base_qp_.upper_bound(a);
        if (f == base_qp_.begin()) return fail("WQE read at ", hex(a), ": no ring there");
        --f;
        const unsigned qi = f->second;
        const Qp& p = q_[qi];
        if (p.sq_base != f->first || (a - p.sq_base) % kStride || (a - p.sq_base) / kStride >= p.size() || len != kStride)
          return fail("WQE read ", hex(a), "+", len, ": not one WQE of a ring");
        const unsigned slot = static_cast<unsigned>((a - p.sq_base) / kStride);
        if (slot != p.next % p.size() || p.next == p.pi)
          return fail("QP ", qi, ": WQE read of ring entry ", slot, ", next WQE ", p.next, " (", p.pi, " posted)");
        if (static_cast<uint16_t>(p.next - p.ci) >= kOuts) return fail("QP ", qi, ": WQE read with a full window");
        if (p.state != kErr && (p.state != kRts || p.dead || (p.wait && cyc_ < p.due)))
          return fail("QP ", qi, ": WQE read in state ", p.state, " dead ", p.dead, " rnr wait ", p.wait);
        c.b = p.ring[slot]->b;
        // (a go-back races the failing WQE's error; not one that waits for READs in flight first)
        const Posted& nw = *p.ring[slot];
        unsigned n = 0;
        for (uint16_t i = p.ci; i != p.next; ++i) n += p.out[i % kOuts].read;
        const bool waits = (nw.rd() && n >= p.max_rd) || (nw.fence && n);
        const bool no_wait = nw.err == st::LOC_QP_OP_ERR || (nw.atom && nw.err == st::LOC_LEN_ERR);
        if (nw.err && p.state == kRts && (no_wait || !waits)) last_dead_ = static_cast<int>(qi);
      } else {
        if (!reads_ || nread_ >= reads_->reads.size())
          return fail("payload read ", hex(a), "+", len, " with none expected");
        const Piece& e = reads_->reads[nread_];
        if (a != e.addr || len != e.len)
          return fail("payload read ", nread_, " of the message: ", hex(a), "+", len, ", model ", hex(e.addr), "+", e.len);
        ++nread_;
      }
      chunks_.push_back(c);
    }
    // TX buffer writes
    if (top_->txb_wr_o) {
      const uint64_t be = sig_bits(top_->txb_be_o, 0, kBytes);
      for (unsigned i = 0; i < kBytes; ++i)
        if (lane(be, i)) buf_[(top_->txb_pos_o + i) % (kNslot * 4096)] = byte_of(top_->txb_data_o.data(), i);
    }
    // Packets
    if (top_->pkt_valid_o && pkt_ready) {
      uint32_t hwd[wire::kRoceHdrWords];
      for (unsigned i = 0; i < wire::kRoceHdrWords; ++i) hwd[i] = top_->pkt_hdr_o[i];
      packet(wire::unpack_hdr(hwd), top_->pkt_slot_o);
      if (failed()) return;
    }
    // Ring writes, then the completer's message
    if (trace_ && top_->o_we_o)
      std::printf("%llu: ring QP %u entry %u err %u\n", (unsigned long long)cyc_,
                  unsigned(top_->o_waddr_o >> kOutW), unsigned(top_->o_waddr_o & (kOuts - 1)),
                  unsigned(get_bits(top_->o_wdata_o.data(), kOutErr, 8)));
    if (trace_ && top_->rd_valid_o && rd_ready)
      std::printf("%llu: read %s %llx+%u\n", (unsigned long long)cyc_, top_->rd_is_pay_o ? "pay" : "wqe",
                  (unsigned long long)top_->rd_addr_o, unsigned(top_->rd_len_o));
    if (trace_ && top_->msg_ready_o)
      std::printf("%llu: msg QP %u taken: fail %d idx %u psn %u rnr %d due %llu dead %d pending %d\n",
                  (unsigned long long)cyc_, msg_.qp, msg_.fail, msg_.idx, msg_.psn, msg_.rnr, (unsigned long long)msg_.due,
                  q_[msg_.qp].dead, q_[msg_.qp].pending());
    if (top_->o_we_o) {
      ring_write(top_->o_waddr_o, top_->o_wdata_o.data());
      if (failed()) return;
    }
    if (top_->msg_ready_o) {
      if (!msg_held_) return fail("msg_ready_o without a message");
      take_msg();
    }
    if (beat && beat_last) chunks_.pop_front();

    set_ready_ = top_->db_ready_o;
    qp_rd_ = static_cast<unsigned>(top_->qp_idx_o);
    mr_rd_ = static_cast<unsigned>(top_->mr_idx_o);
    if (top_->ci_re_o) ci_rd_ = q_[top_->ci_raddr_o].ci;
    clock_tick(*top_, *ctx_);
    ++cyc_;
  }

  bool qp_settled(const Qp& p) const {
    bool some = false;  // a reading with nothing but cut messages left
    for (const auto& h : p.hyps) {
      bool all = true;
      for (const auto& m : h.msgs) all = all && m.trunc;
      some = some || all;
    }
    if (!some) return false;
    if (p.state == kErr) return p.next == p.pi && p.ci == p.next && !p.held;
    if (p.dead) return false;  // goes to ERR
    return p.next == p.pi && p.ci == p.next && !p.held;
  }
  bool settled() const {
    if (msg_held_ || !lerr_exp_.empty() || !errs_.empty() || !marks_.empty() || !kicks_.empty() || !chunks_.empty())
      return false;
    for (unsigned i = 0; i < kNumQp; ++i)
      if (!qp_settled(q_[i])) return false;
    return true;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_requester> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<Qp> q_;
  std::array<Mr, kNumMr> mr_{};
  std::vector<unsigned> hot_, live_;
  std::map<uint64_t, unsigned> base_qp_;
  std::map<uint32_t, unsigned> by_dqpn_;
  double hot_share_ = 0.5;
  uint64_t cyc_ = 0, packets_ = 0, serial_ = 0, lmac_ = 0;
  const bool trace_ = std::getenv("TMNIC_TRACE") != nullptr;  // events, one line each
  uint32_t lip_ = 0;
  unsigned qp_rd_ = 0, mr_rd_ = 0, knobs_max_free_ = 0, knobs_ack_lat_ = 1;
  uint16_t ci_rd_ = 0;
  bool set_ready_ = false, prot_exp_ = false, msg_held_ = false;
  int last_dead_ = -1, ckick_exp_ = -1, init_qp_ = -1, forced_query_ = -1, forced_nx_ = -1, nx_chk_ = -1, query_chk_ = -1;
  uint32_t nx_exp_ = 0, query_exp_ = 0;
  Msg msg_;
  std::deque<unsigned> lerr_exp_, marks_, kicks_;
  std::vector<std::pair<uint64_t, unsigned>> errs_, frees_;
  std::deque<Chunk> chunks_;
  std::shared_ptr<const Posted> reads_;
  size_t nread_ = 0;
  std::array<bool, kNslot> slot_busy_{};
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(kNslot * 4096, 0);
  // handshake stability
  bool rd_held_ = false, rd_pay_ = false, pkt_held_ = false, lerr_held_ = false, uack_held_ = false;
  uint32_t uack_qp_ = 0, uack_psn_ = 0;
  std::map<std::pair<unsigned, uint32_t>, int> ud_bal_;   // datagrams sent minus acknowledged, per {QP, PSN}
  uint64_t rd_addr_ = 0;
  uint32_t rd_len_ = 0, pkt_slot_ = 0, lerr_qp_ = 0;
  std::array<uint32_t, wire::kRoceHdrWords> pkt_hdr_{};
};

TEST(Requester, RandomTrafficAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0, packets = 0;
  const uint64_t n = 60000ull * test_scale();
  // (db: doorbells, hot: share of them to the hot QPs, ack: completer looks at a QP, rewind/fail/
  //  cmd_err: per cycle, rd/pkt/lerr: ready, gap: DMA beat gaps, big: long SGEs, lat: DMA latency,
  //  free: slot free delay, rtt: ACK delay)
  //                  db    hot  ack   rewind fail    cmd_err  rd   gap  pkt  lerr big  lat free rtt
  const Knobs busy{"busy", 0.08, 0.5, 0.3, 0.004, 0.0002, 0.0002, 0.6, 0.2, 0.6, 0.5, 0.2, 8, 20, 400};
  const Knobs fast{"fast", 0.15, 0.8, 0.8, 0.002, 0.0001, 0.0001, 1.0, 0.0, 1.0, 1.0, 0.05, 0, 0, 1500};
  const Knobs slow{"slow", 0.04, 0.9, 0.05, 0.01, 0.0004, 0.0004, 0.3, 0.5, 0.2, 0.2, 0.1, 40, 200, 2000};
  for (uint64_t seed : seeds({1, 2, 3})) {
    Stopwatch one;
    Coverage cov(coverage_points());
    ReqBench b(seed, cov);
    for (const Knobs* k : {&busy, &fast, &slow}) {
      b.run(*k, n);
      b.drain(*k);
    }
    cycles += b.cycles();
    packets += b.packets();
    total.merge(cov);
    std::printf("[seed] %llu: %llu cycles, %llu packets, %.2f s\n", (unsigned long long)seed,
                (unsigned long long)b.cycles(), (unsigned long long)b.packets(), one.seconds());
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(packets, 1000u);
  report_speed("requester", "mix", cycles, sw.seconds());
  total.report("tmnic_requester");
}

}  // namespace
