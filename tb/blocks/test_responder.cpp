// tmnic_rx_engine (the responder of every QP, with all its blocks) against an independent model of
// the IBA receive rules (IBA 9.7; the engine's header comment; docs/tag-matching.md for TM-SRQs).
// Model, per QP: expected PSN (24-bit wrap), MSN, receive-queue consumer/producer index, the held
// message (receive WQE, checked SGE list, bytes received). At each header the bench hands the engine,
// the model decides, in the order of tmnic_rx_check's rules written from the IBA:
//   - unknown QP (reserved 0/1 or >= NUM_QP), wrong peer IP, QP not able to receive, not a SEND,
//     RDMA WRITE, READ or atomic (e.g. SEND_WITH_INV): dropped (payload discarded); an ACK/NAK packet for a QP that can
//     send goes out on ack_* unchanged ({qp, AETH, PSN}), else it is dropped;
//   - PSN behind the expected one (half-window rule): duplicate, re-ACKed with {MSN, ePSN-1}, not
//     executed; ahead: sequence-error NAK {MSN, ePSN} once per gap;
//   - FIRST/ONLY while a message is held, MIDDLE/LAST while none is: NAK invalid request, QP to ERR;
//   - a first packet takes a receive WQE: the QP's receive queue, its SRQ, or on a TM-SRQ by the
//     tag lookup (hit: the tag buffer, EAGER's TMH skipped; unexpected miss: next SRQ WQE; untagged:
//     next SRQ WQE); none: RNR NAK with the QP's min_rnr_timer, packet dropped;
//   - SGEs that fail the local protection check (or too many): LOC_PROT_ERR completion, NAK remote
//     operational error, QP to ERR; a packet that does not fit in what is left of the buffer:
//     LOC_LEN_ERR completion, NAK invalid request, QP to ERR;
//   - else every delivered byte is scattered to the SGEs (IOVA), PSN advances, the last packet
//     completes (byte_len, imm, wr_id, index, flags, CQ, opcode as mlx5), MSN advances, AckReq -> ACK;
//   - a QP in ERR flushes its held WQE and then every posted receive WQE with WR_FLUSH_ERR;
//   - RDMA WRITE (IBA 9.7.4.1.4, 10.6.7.2): the first packet's RETH range is checked (rkey's MR valid,
//     key, the QP's PD, bounds, REMOTE_WRITE; zero length: no check), the bytes go to that range, a
//     MIDDLE/LAST of the other kind than the held message is an invalid request; a bad range: NAK
//     remote access error; more or fewer bytes than the RETH length: NAK invalid request; both QP to
//     ERR, no DMA; WRITE_WITH_IMM's last packet takes the next receive WQE (queue or SRQ, also a
//     TM-SRQ's, no lookup, no SGE check; none: RNR) and completes RECV_RDMA_WITH_IMM, byte_len the
//     WRITE's length; a held WRITE is not flushed (no WQE); every later packet checks the range again
//     (an MR invalidated meanwhile: NAK remote access error);
//   - RDMA READ request (IBA 9.7.5.1, this NIC the target): at the expected PSN inside a SEND/WRITE
//     message or to a QP without REMOTE_READ: NAK invalid request, QP to ERR; else (also behind the
//     expected PSN: a duplicate is executed again, IBA 9.7.5.1.1) with MAX_RD_ATOM (4) jobs of the QP
//     out: dropped, nothing changes; else the RETH range checked as a WRITE's with REMOTE_READ (zero
//     length: no check): bad -> NAK remote access error, QP to ERR (AEV_QP_ACCESS_ERR), no job; good ->
//     one job {QP, IOVA (0 for zero length), length, PSN, MSN after this READ (a duplicate: the
//     current), PMTU}, the expected PSN past its max(1, ceil(len / PMTU)) responses, MSN + 1 (a
//     duplicate: neither), no ACK/NAK. Jobs out per QP: given since its init less finished since; the
//     bench plays tmnic_rd_resp (takes jobs, finishes them in order after a delay, answers the done
//     count read one cycle later, write-first);
//   - RDMA READ response (this NIC the requester) to a QP that can send, else dropped: an ACK_RR event
//     ({qp, AETH, PSN, FIRST/LAST}); the bench plays the completer: per QP the READ WQEs it put in
//     the send queue ring (their PSN ranges) and its verdict rule (the head READ, the QP in RTS/SQD,
//     FIRST/ONLY at its first PSN, MIDDLE/LAST right after the last accepted, LAST iff its last PSN),
//     given after a random delay. Not ok: dropped. Ok: a FIRST/ONLY fetches the READ WQE (its address
//     checked) and checks its scatter list (LOCAL_WRITE, the QP's PD); a MIDDLE/LAST does so again when
//     mr_gen_i moved since; a bad list: ACK_RDERR LOC_PROT_ERR; a payload other than PMTU
//     (FIRST/MIDDLE) or the rest (LAST/ONLY): ACK_RDERR BAD_RESP_ERR; no DMA either way; else its
//     bytes are scattered (checked as a receive's) and LAST/ONLY reports ACK_RDDONE with its PSN.
//   - atomic request (CMP_SWAP, FETCH_ADD; IBA 9.4.5, 9.7.5.1; the AtomicETH's VA and R_Key in the
//     RETH fields, reth_len 8 as the parser sets it, no payload): at the expected PSN inside a
//     message, to a QP without REMOTE_ATOMIC or at a VA not 8-byte aligned: NAK invalid request, QP
//     to ERR (AEV_QP_REQ_ERR); else with MAX_RD_ATOM jobs of the QP out (READs and atomics alike):
//     dropped, nothing changes; else the 8 bytes checked as a READ's range with REMOTE_ATOMIC: bad ->
//     NAK remote access error, QP to ERR (AEV_QP_ACCESS_ERR), no DMA at all; good -> executed: an
//     8-byte DMA read at the IOVA, issued only once every earlier write request of the engine is
//     done, the new value from the big-endian word m0<<56|..|m7 (CMP_SWAP: swap if equal to compare;
//     FETCH_ADD: + add, mod 2^64), an 8-byte DMA write of it at the same IOVA, then one job {original
//     value (memory order) as IOVA, 8, PSN, MSN after it, atom}; PSN and MSN + 1, no ACK/NAK. The
//     result is kept (the QP's last MAX_RD_ATOM, cleared by an init). A duplicate atomic (behind the
//     expected PSN) is counted; with fewer than MAX_RD_ATOM jobs out, if its PSN is kept, a job with
//     the kept value and the current MSN, no DMA; else dropped.
//   - ATOMIC_ACKNOWLEDGE (this NIC the requester): a one-packet READ response (ACK_RR FIRST and LAST,
//     ack_atom) whose 8 payload bytes go to the atomic WQE's one SGE as a READ_RESP_ONLY's; the
//     completer's verdict also wants the response's kind to match the head WQE's.
// Host memory, for the atomics: a few watched 8-byte words per MR (the atomic targets) are kept
// twice, as the model's accepted packets leave them (an atomic's original value) and as the done
// DMA writes left them (what the bench's DMA read returns); every write request's bytes are applied
// to both.
// Checked: every DMA write request and every pulled byte against the expected (IOVA, byte) stream of
// the scatter (byte for byte, in order); every WQE read address; every lookup (tag, commit_miss,
// SRQ); every completion (per QP in order, all cqe_req_t fields); every forwarded ACK (in order);
// every error pulse (its kind for READ and atomic errors); every READ job (all fields incl. job_atom,
// none unexpected; an executed atomic's not before its write is done); every atomic DMA read (its
// IOVA and length, none but an executed atomic's, not before every earlier write is done) and write
// (one request of its 8 bytes at its IOVA, after its read); every ack_* event (kind, QP, AETH or
// status, PSN, FIRST/LAST, ack_atom); every ACK/NAK event to the ACK generator ({QP, syndrome, MSN, PSN}, per QP in
// order, all sent by the end; the generator's merging and headers are test_ack_gen's); statistics pulses counted; QUERY_QP's PSN when idle; stability of every
// offered output while stalled; nothing left over after a drain.
// Stimulus: a peer per QP sending SENDs and WRITEs of 0..several PMTU with random PMTU (RETHs mostly
// valid, some a byte long or short, out of bounds, foreign keys, MRs without REMOTE_WRITE), READ
// requests (bursts that fill the QP's jobs, zero and long lengths, bad ranges, duplicates, inside a
// message), atomics (to QPs with and without REMOTE_ATOMIC; watched words, misaligned, out of
// bounds, straddling an MR's end, foreign keys, other PDs' MRs, MRs without REMOTE_ATOMIC or
// invalid; inside a message; in READ bursts and streaks; right after a WRITE over their word, whose
// completion may be slow; duplicates of recent atomics, of ones no longer kept and at PSNs that were
// none), ATOMIC_ACKNOWLEDGEs (for atomic WQEs, for READs, for none), READ responses (in order, again, ahead, of the wrong kind or length, of no READ) against
// READ WQEs with good and bad scatter lists, MRs invalidated and made valid between packets (mr_gen_i), interleaved across
// QPs (hot QPs incl. QPN_FIRST and NUM_QP-1), duplicates, gaps (the peer goes back after the NAK),
// bad opcode sequences, ACK packets, foreign and unknown QPs; receive-queue and SRQ doorbells; QPs set
// to ERR by a command (kick) mid-message, re-initialised later; random latency and gaps on the DMA
// read, the lookup port and the payload stream, random ready on the DMA write client (data pulled
// three cycles ahead of its check, done some cycles later), back-pressure on every output.
// The model's constants, state structs and coverage points are in responder_model.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "Vtmnic_rx_engine.h"
#include "lib/axis.hpp"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/cqe_req.hpp"
#include "lib/fail.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "mr.hpp"
#include "qp_cfg.hpp"
#include "responder_model.hpp"
#include "tmnic/hwif.h"
#include "tmnic/wire.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;

namespace {

using namespace tmnic::tb::rsp_model;

struct Knobs {
  const char* name;
  double pkt_gap, pay_gap;                       // header and payload gaps
  double rdy_cqe, rdy_tx, rdy_ack, rdy_wr, rdy_rd, rdy_lk, pull;  // ready / pull chances
  unsigned max_lat;                              // DMA read and lookup latency
  double db;                                     // doorbell chance per cycle
  double hot;                                    // share of packets on the hot QPs
  unsigned max_msg_pkts;
  double tx_stall;                               // chance per cycle of a long TX stall
};

class Bench {
 public:
  Bench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), rng_(seed), arng_(seed ^ 0xA70Bull), cov_(cov), pay_(kBytes, &rng_) {
    ctx_->randReset(2);
    ctx_->randSeed(static_cast<int>(seed & 0x7fffffff));
    top_ = std::make_unique<Vtmnic_rx_engine>(ctx_.get());
    local_ip_ = static_cast<uint32_t>(rng_());
    local_mac_ = rng_() & mask64(48);
    make_tables();
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
    hot_ = {hw::QPN_FIRST, kNumQp - 1, static_cast<unsigned>(u(hw::QPN_FIRST, kNumQp - 1)),
            static_cast<unsigned>(u(hw::QPN_FIRST, kNumQp - 1))};
  }
  ~Bench() { top_->final(); }

  uint64_t cycles() const { return cyc_; }
  uint64_t messages() const { return msgs_; }

  // Every QP that receives: SET_QP with the receive-state init, one at a time.
  void init_all() {
    for (unsigned q = hw::QPN_FIRST; q < kNumQp && !failed(); ++q)
      if (qp_[q].lstate != st(hw::QpState::RESET)) pending_inits_.push_back(q);
    Knobs k{"init", 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 1, 0};
    for (uint64_t t = 0; !pending_inits_.empty() && t < 20 * kNumQp + 5000 && !failed(); ++t) step(k, false);
    if (!pending_inits_.empty()) fail("QP inits not done");
  }
  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !failed(); ++c) step(k, true);
    drain(k);
  }

 private:
  template <class... A>
  void fail(const A&... a) {
    if (!failed_) fail_at(cyc_, a...);
    failed_ = true;
  }
  bool failed() const { return failed_ || ::testing::Test::HasFailure(); }
  uint64_t u(uint64_t lo, uint64_t hi) { return urand(rng_, lo, hi); }

  // ---------------------------------------------------------------- configuration
  void make_tables() {
    for (unsigned i = 0; i < kNumMr; ++i) {
      Mr& m = mr_[i];
      m.valid = chance(rng_, 0.95);
      m.key = (i << hw::MR_KEY_SHIFT) | static_cast<uint32_t>(u(0, 255));
      m.pd = static_cast<uint32_t>(u(1, 3));
      m.access = static_cast<uint32_t>(u(0, 7)) | (chance(rng_, 0.85) ? hw::access::LOCAL_WRITE : 0u) |
                 (chance(arng_, 0.6) ? hw::access::REMOTE_ATOMIC : 0u);
      m.len = u(1ull << 16, 1ull << 22);
      m.va = u(0, 1ull << 40) << 12;
      m.iova = rng_() & ~0xFFFull;
      // Its atomic targets (watched: the model and the host memory keep their bytes): the first and
      // the last aligned word inside it, and a few more, some of them neighbours.
      std::vector<uint64_t>& pw = pool_[i];
      pw = {m.va, ((m.va + m.len) & ~7ull) - 8};
      for (unsigned w = 0; w < 6; ++w) {
        const uint64_t a = (m.va + urand(arng_, 0, m.len - 8)) & ~7ull;
        pw.push_back(a);
        if (w < 2) pw.push_back(a + 8 <= m.va + m.len - 8 ? a + 8 : a - 8);
      }
      for (uint64_t a : pw) {
        MemWord mw;
        for (auto& b : mw.b) b = static_cast<uint8_t>(arng_());
        mmem_[a - m.va + m.iova] = mw;
        hmem_[a - m.va + m.iova] = mw.b;
      }
    }
    for (unsigned s = 0; s < kSrq; ++s) {
      Srq& c = srq_[s];
      c.valid = s != kSrq - 1;  // the last one invalid
      c.tm = s < 4;
      c.base = u(0, 1ull << 36) << 12;
      c.log = static_cast<unsigned>(u(2, 6));
      c.pd = static_cast<uint16_t>(u(1, 3));
      c.cq = static_cast<uint16_t>(rng_());
      c.tag_base = static_cast<uint16_t>(chance(rng_, 0.5) ? 0 : u(0, kEntries - 1));
      c.ring.assign(1u << c.log, Wqe{});
    }
    for (auto& t : tb_) t = make_sge(static_cast<uint32_t>(u(1, 3)), static_cast<uint32_t>(u(0, 9000)), 0.05);
    for (unsigned q = 0; q < kNumQp; ++q) {
      Qp& Q = qp_[q];
      for (auto& w : Q.cfg) w = static_cast<uint32_t>(rng_());
      // A UD QP now and then (fixed for the run; its receive queue or a plain SRQ, never a TM one).
      Q.ud = q >= hw::QPN_FIRST && chance(rng_, 0.15);
      Q.qkey = static_cast<uint32_t>(rng_());
      cfg_set(Q, kCfUd, Q.ud);
      cfg_set(Q, kCfQkey, Q.qkey);
      const unsigned r = static_cast<unsigned>(u(0, 99));
      Q.lstate = r < 65 ? st(hw::QpState::RTS) : r < 80 ? st(hw::QpState::RTR) : r < 85 ? st(hw::QpState::SQE)
                 : r < 90 ? st(hw::QpState::SQD)
                 : r < 95 ? st(hw::QpState::INIT) : st(hw::QpState::RESET);
      if (q < hw::QPN_FIRST) Q.lstate = st(hw::QpState::RTS);  // reserved: dropped whatever the state
      cfg_set(Q, kCfState, Q.lstate);
      configure(Q);
    }
  }
  // A new (re-)configuration of a QP's receive side; the peer stays.
  void configure(Qp& Q) {
    cfg_set(Q, kCfPd, u(1, 3));
    const unsigned r = static_cast<unsigned>(u(0, 9));
    cfg_set(Q, kCfSrq, r < 7 ? kNoSrq : (r < 9 && !Q.ud) ? u(0, 3) : u(4, kSrq - 1));
    cfg_set(Q, kCfRqBase, u(0, 1ull << 36) << 12);
    cfg_set(Q, kCfRqLog, u(1, 5));
    cfg_set(Q, kCfMinRnr, u(0, 31));
    // (qp_access_flags: mostly with REMOTE_WRITE, REMOTE_READ and REMOTE_ATOMIC; without one a WRITE,
    // READ or atomic is an invalid request)
    cfg_set(Q, kCfRemAccess, u(0, 7) | (chance(rng_, 0.85) ? hw::access::REMOTE_WRITE : 0u) |
                                 (chance(rng_, 0.85) ? hw::access::REMOTE_READ : 0u) |
                                 (chance(arng_, 0.94) ? hw::access::REMOTE_ATOMIC : 0u));
    Q.ring.assign(1u << cfg_get(Q, kCfRqLog), Wqe{});
    static constexpr unsigned kPmtu[] = {256, 512, 1024, 2048, 4096};
    const unsigned pl = static_cast<unsigned>(u(0, 4));
    Q.pmtu = kPmtu[pl];
    cfg_set(Q, kCfPmtuLog, 8 + pl);  // (the responses a READ is answered with, and expects)
    // The send queue (READ WQEs); its ring holds the outstanding READs and a few more (post_read).
    cfg_set(Q, kCfSqBase, u(0, 1ull << 36) << 12);
    cfg_set(Q, kCfSqLog, u(5, 7));
    Q.rds.clear();
    Q.acc_v = false;
    Q.sq_next = static_cast<uint16_t>(rng_());
    Q.spsn = static_cast<uint32_t>(chance(rng_, 0.3) ? u(kM24 - 8, kM24) : (rng_() & kM24));
  }
  Sge make_sge(uint32_t pd, uint32_t len, double bad) {
    Sge s;
    const unsigned i0 = static_cast<unsigned>(u(0, kNumMr - 1));
    for (unsigned t = 0; t < kNumMr; ++t) {
      const Mr& g = mr_[(i0 + t) % kNumMr];
      if (g.valid && g.pd == pd && (g.access & hw::access::LOCAL_WRITE) && g.len >= len) {
        s.key = g.key;
        s.addr = g.va + u(0, g.len - len);
        s.len = len;
        break;
      }
    }
    if (chance(rng_, bad)) {
      const Mr& m = mr_[(s.key >> hw::MR_KEY_SHIFT) % kNumMr];
      switch (u(0, 3)) {
        case 0: s.key ^= static_cast<uint32_t>(u(1, 255)); break;  // foreign key
        case 1: s.addr = m.va + m.len - s.len + 1; break;           // one byte past the end
        case 2: s.addr = m.va - 1; break;                            // one byte below
        default: s.key = mr_[u(0, kNumMr - 1)].key; break;           // any MR (PD, access)
      }
    }
    return s;
  }
  // An RDMA WRITE's (READ's) range: inside an MR of the PD with REMOTE_WRITE (REMOTE_READ), or
  // (chance `bad`) broken as make_sge breaks one, or in an MR without the right.
  Sge make_rsge(uint32_t pd, uint32_t len, double bad, uint32_t right = hw::access::REMOTE_WRITE) {
    Sge s;
    s.key = static_cast<uint32_t>(rng_());
    s.addr = rng_();
    s.len = len;
    const unsigned i0 = static_cast<unsigned>(u(0, kNumMr - 1));
    const bool no_right = chance(rng_, bad / 2);
    for (unsigned t = 0; t < kNumMr; ++t) {
      const Mr& g = mr_[(i0 + t) % kNumMr];
      if (g.valid && g.pd == pd && bool(g.access & right) != no_right && g.len >= len) {
        s.key = g.key;
        s.addr = g.va + u(0, g.len - len);
        break;
      }
    }
    if (chance(rng_, bad / 2)) {
      const Mr& m = mr_[(s.key >> hw::MR_KEY_SHIFT) % kNumMr];
      switch (u(0, 2)) {
        case 0: s.key ^= static_cast<uint32_t>(u(1, 255)); break;  // foreign key
        case 1: s.addr = m.va + m.len - s.len + 1; break;           // one byte past the end
        default: s.addr = m.va - 1; break;                           // one byte below
      }
    }
    return s;
  }
  Wqe make_wqe(uint32_t pd) {
    Wqe w;
    w.wrid = rng_();
    const unsigned r = static_cast<unsigned>(u(0, 99));
    w.nsge = r < 3 ? 0 : r < 4 ? static_cast<unsigned>(u(kNsge + 1, 15)) : static_cast<unsigned>(u(1, r < 40 ? 1 : 4));
    const double bad = chance(rng_, 0.03) ? 0.5 : 0.0;
    for (unsigned k = 0; k < kNsge; ++k) {
      const unsigned len = chance(rng_, 0.08) ? 0 : chance(rng_, 0.2) ? static_cast<unsigned>(u(1, 700))
                                                                     : static_cast<unsigned>(u(2048, 16000));
      w.sge[k] = make_sge(pd, len, bad);
    }
    return w;
  }
  // A READ WQE: a scatter list of 0..4 SGEs (sometimes too many, sometimes a bad one) whose total
  // is a few PMTU at most.
  Wqe make_read_wqe(uint32_t pd, unsigned pmtu) {
    Wqe w;
    w.wrid = rng_();
    const unsigned r = static_cast<unsigned>(u(0, 99));
    w.nsge = r < 5 ? 0 : r < 7 ? static_cast<unsigned>(u(kNsge + 1, 15)) : static_cast<unsigned>(u(1, r < 50 ? 1 : 4));
    const double bad = chance(rng_, 0.05) ? 0.5 : 0.0;
    for (unsigned k = 0; k < kNsge; ++k) {
      const unsigned len = chance(rng_, 0.1) ? 0 : static_cast<unsigned>(u(1, 2 * pmtu));
      w.sge[k] = make_sge(pd, len, bad);
    }
    return w;
  }
  // The WQE's bytes in host memory (a send-queue WQE has an opcode).
  void store_wqe(uint64_t addr, const Wqe& w, int opcode = -1) {
    std::array<uint8_t, kStride> b{};
    for (auto& x : b) x = static_cast<uint8_t>(rng_());
    if (opcode >= 0) b[hw::wqe::OPCODE_OFF] = static_cast<uint8_t>(opcode);
    for (unsigned i = 0; i < 8; ++i) b[hw::wqe::WR_ID_OFF + i] = static_cast<uint8_t>(w.wrid >> (8 * i));
    b[hw::wqe::NUM_SGE_OFF] = static_cast<uint8_t>(w.nsge);
    for (unsigned k = 0; k < kNsge; ++k) {
      uint8_t* p = &b[hw::wqe::SGE_OFF + hw::wqe::SGE_LEN * k];
      for (unsigned i = 0; i < 8; ++i) p[hw::sge::ADDR_OFF + i] = static_cast<uint8_t>(w.sge[k].addr >> (8 * i));
      for (unsigned i = 0; i < 4; ++i) p[hw::sge::LENGTH_OFF + i] = static_cast<uint8_t>(w.sge[k].len >> (8 * i));
      for (unsigned i = 0; i < 4; ++i) p[hw::sge::LKEY_OFF + i] = static_cast<uint8_t>(w.sge[k].key >> (8 * i));
    }
    mem_[addr] = b;
  }
  uint64_t rq_addr(const Qp& Q, uint16_t idx) const {
    return cfg_get(Q, kCfRqBase) + (uint64_t(idx) & ((1ull << cfg_get(Q, kCfRqLog)) - 1)) * kStride;
  }
  uint64_t sq_addr(const Qp& Q, uint16_t idx) const {
    return cfg_get(Q, kCfSqBase) + (uint64_t(idx) & ((1ull << cfg_get(Q, kCfSqLog)) - 1)) * kStride;
  }
  uint64_t srq_addr(const Srq& S, uint16_t idx) const { return S.base + (uint64_t(idx) & ((1ull << S.log) - 1)) * kStride; }

  // IBA local protection (LOCAL_WRITE) of a scatter list with the PD of its queue.
  bool mr_ok(const Sge& s, uint32_t pd) const {
    const Mr& m = mr_[(s.key >> hw::MR_KEY_SHIFT) % kNumMr];
    const unsigned __int128 end_a = static_cast<unsigned __int128>(s.addr) + s.len;
    const unsigned __int128 end_m = static_cast<unsigned __int128>(m.va) + m.len;
    return m.valid && m.key == s.key && m.pd == pd && s.addr >= m.va && end_a <= end_m &&
           (m.access & hw::access::LOCAL_WRITE);
  }
  // IBA remote protection of an RDMA WRITE's or READ's range (C9-?, 10.6.7.2): the rkey's MR valid,
  // its key, the QP's PD, [va, va + len) inside it, the right (REMOTE_WRITE, REMOTE_READ) granted.
  // The range's IOVA in *iova.
  bool rkey_ok(uint64_t va, uint32_t len, uint32_t rkey, uint32_t pd, uint32_t right, uint64_t* iova) const {
    const Mr& r = mr_[(rkey >> hw::MR_KEY_SHIFT) % kNumMr];
    const unsigned __int128 end_a = static_cast<unsigned __int128>(va) + len;
    const unsigned __int128 end_m = static_cast<unsigned __int128>(r.va) + r.len;
    *iova = va - r.va + r.iova;
    return r.valid && r.key == rkey && r.pd == pd && va >= r.va && end_a <= end_m && (r.access & right);
  }
  // An RDMA WRITE's range. A zero-length range is not checked.
  void check_rkey(Msg& m, uint64_t va, uint32_t len, uint32_t rkey, uint32_t pd) {
    m = Msg{};
    m.cap = len;
    if (len == 0) return;
    uint64_t iova = 0;
    m.bad = !rkey_ok(va, len, rkey, pd, hw::access::REMOTE_WRITE, &iova);
    if (!m.bad) m.sg.push_back({iova, len});
  }
  void check_sges(Msg& m, const Sge* sg, unsigned n, uint32_t pd) {
    m.bad = n > kNsge;
    m.cap = 0;
    m.sg.clear();
    for (unsigned i = 0; i < std::min(n, kNsge) && !m.bad; ++i) {
      if (!mr_ok(sg[i], pd)) {
        m.bad = true;
        break;
      }
      const Mr& r = mr_[(sg[i].key >> hw::MR_KEY_SHIFT) % kNumMr];
      m.sg.push_back({sg[i].addr - r.va + r.iova, sg[i].len});
      m.cap += sg[i].len;
    }
  }

  // ---------------------------------------------------------------- the model's decisions
  bool can_recv(unsigned s) const {
    return s == st(hw::QpState::RTR) || s == st(hw::QpState::RTS) || s == st(hw::QpState::SQD) ||
           s == st(hw::QpState::SQE);
  }
  bool can_send(unsigned s) const {
    return s == st(hw::QpState::RTS) || s == st(hw::QpState::SQD) || s == st(hw::QpState::SQE);
  }
  void event(unsigned q, uint8_t syn, uint32_t msn, uint32_t psn) {
    qp_[q].evs.push_back({syn, msn & kM24, psn & kM24});
    ++n_ev_;
  }
  // A datagram's completion: its sender from the DETH, IBV_WC_GRH.
  void expect_ud_cqe(unsigned q, const Msg& m, uint8_t status, uint32_t len, uint32_t imm, Flags f, uint32_t sqp) {
    expect_cqe(q, m, status, len, imm, f);
    qp_[q].cqes.back().src_qp = sqp;
    qp_[q].cqes.back().wc_flags |= hw::wc_flag::GRH;
  }
  void expect_cqe(unsigned q, const Msg& m, uint8_t status, uint32_t len, uint32_t imm, Flags f) {
    Qp& Q = qp_[q];
    const uint16_t s = static_cast<uint16_t>(cfg_get(Q, kCfSrq));
    Q.cqes.push_back(make_cqe(m, q, static_cast<uint16_t>(cfg_get(Q, kCfRecvCq)), s < kSrq ? srq_[s].cq : 0,
                              static_cast<uint32_t>(cfg_get(Q, kCfDestQpn)), status, len, imm, f));
  }
  // The QP goes to ERR: its held WQE and its receive queue are flushed.
  // (kind: the err_kind_o expected, AEV_*; -1 not checked)
  void to_err(unsigned q, bool engine, int kind = -1) {
    Qp& Q = qp_[q];
    Q.lstate = st(hw::QpState::ERR);
    if (engine) err_exp_.push_back({q, kind});
    if (Q.held && Q.wr) {
      cov_.hit("write_flush_held");  // (a WRITE holds no WQE: nothing to flush)
      Q.held = false;
    } else if (Q.held) {
      expect_cqe(q, Q.m, hw::wc_status::WR_FLUSH_ERR, 0, 0, kEnd);
      cov_.hit("flush_held_wqe");
      Q.held = false;
    }
    Q.fl_pi = Q.ci;
    extend_flush(q);
  }
  void extend_flush(unsigned q) {
    Qp& Q = qp_[q];
    if (cfg_get(Q, kCfSrq) != kNoSrq) return;  // an SRQ is not flushed
    for (; Q.fl_pi != Q.pi; ++Q.fl_pi) {
      Msg m;
      m.wrid = Q.ring[Q.fl_pi & (Q.ring.size() - 1)].wrid;
      m.idx = Q.fl_pi;
      expect_cqe(q, m, hw::wc_status::WR_FLUSH_ERR, 0, 0, kEnd);
      ++rd_exp_[rq_addr(Q, Q.fl_pi)];
      cov_.hit("flush_rq_wqe");
    }
    // (ci stays: the flushed slots are not free until the engine has read them)
  }

  // A WRITE_WITH_IMM's receive WQE: the next of the QP's receive queue or SRQ (a TM-SRQ's too, with
  // no lookup), not checked; false when there is none (RNR).
  bool take_imm_wqe(unsigned q, Msg& m) {
    Qp& Q = qp_[q];
    const uint16_t sn = static_cast<uint16_t>(cfg_get(Q, kCfSrq));
    m.kind = kPlain;
    if (sn == kNoSrq) {
      if (Q.ci == Q.pi) return false;
      ++rd_exp_[rq_addr(Q, Q.ci)];
      m.wrid = Q.ring[Q.ci & (Q.ring.size() - 1)].wrid;
      m.idx = Q.ci++;
      return true;
    }
    Srq& S = srq_[sn];
    if (!S.valid || S.ci == S.pi) return false;
    ++rd_exp_[srq_addr(S, S.ci)];
    m.wrid = S.ring[S.ci & (S.ring.size() - 1)].wrid;
    m.idx = S.ci++;
    if (S.tm) cov_.hit("write_imm_tm_srq");
    return true;
  }

  // Scatter: message byte m.off + i lands at its SGE's IOVA (and in the model's memory).
  void scatter(const Msg& m, const Pkt& p, unsigned skip, unsigned del) {
    if (del == 0) return;
    uint64_t o = m.off;
    size_t k = 0;
    while (k < m.sg.size() && o >= m.sg[k].second) o -= m.sg[k++].second;
    if (k > 0 || del > m.sg[0].second - o) cov_.hit("msg_multi_sge");
    for (unsigned i = 0; i < del;) {
      while (o >= m.sg[k].second) {
        o = 0;
        ++k;
      }
      const unsigned n = static_cast<unsigned>(std::min<uint64_t>(del - i, m.sg[k].second - o));
      expect_write(m.sg[k].first + o, &p.pay[skip + i], n);
      i += n;
      o += n;
    }
  }
  // n bytes the engine must write at IOVA a, next in its write stream; the model's memory has them
  // from now on (the watched words among them: mem_apply).
  void expect_write(uint64_t a, const uint8_t* d, unsigned n, bool atomic = false) {
    for (unsigned i = 0; i < n; ++i) wr_exp_.push_back({a + i, d[i]});
    wr_push_ += n;
    for (auto it = mmem_.lower_bound(a & ~7ull); it != mmem_.end() && it->first < a + n; ++it)
      for (unsigned j = 0; j < 8; ++j)
        if (it->first + j >= a && it->first + j < a + n) {
          it->second.b[j] = d[it->first + j - a];
          it->second.last_w = wr_push_;
          if (it->second.atom && !atomic) cov_.hit("atom_then_write_word");
        }
  }
  // A write done in host memory: its watched words change.
  void host_write(const WrReq& r) {
    for (auto it = hmem_.lower_bound(r.addr & ~7ull); it != hmem_.end() && it->first < r.addr + r.len; ++it)
      for (unsigned j = 0; j < 8; ++j)
        if (it->first + j >= r.addr && it->first + j < r.addr + r.len) it->second[j] = r.data[it->first + j - r.addr];
  }

  // A packet for a UD QP, or a UD opcode (docs/architecture.md, UD): datagrams only, to UD QPs
  // only, from anyone, no PSN; a wrong Q_Key or no receive WQE drops it (counted, no NAK); a buffer
  // too small completes LOC_LEN_ERR and the QP goes on; a bad SGE fails the QP (no NAK). The
  // payload (the parser's) starts with the GRH and counts it.
  void accept_ud(const Pkt& p, unsigned q) {
    const wire::RoceHdr& h = p.h;
    Qp& Q = qp_[q];
    const bool ud_op = h.opcode == wire::kUdSendOnly || h.opcode == wire::kUdSendOnlyImm;
    if (!Q.ud || !ud_op || !can_recv(Q.lstate)) {
      ++n_drop_;
      cov_.hit(!Q.ud ? "ud_op_to_rc_qp" : !ud_op ? "rc_op_to_ud_qp" : "ud_drop_not_ready");
      return;
    }
    if (h.deth_qkey != Q.qkey) {
      ++n_qkey_;
      cov_.hit("ud_qkey_drop");
      return;
    }
    Msg m;
    const uint16_t sn = static_cast<uint16_t>(cfg_get(Q, kCfSrq));
    Srq* S = sn == kNoSrq ? nullptr : &srq_[sn];   // (never a TM-SRQ: configure())
    if (S ? (!S->valid || S->ci == S->pi) : Q.ci == Q.pi) {
      ++n_nowqe_;
      cov_.hit("ud_no_wqe");
      return;
    }
    const std::vector<Wqe>& ring = S ? S->ring : Q.ring;
    uint16_t& ci = S ? S->ci : Q.ci;
    const Wqe& w = ring[ci & (ring.size() - 1)];
    ++rd_exp_[S ? srq_addr(*S, ci) : rq_addr(Q, ci)];
    m.wrid = w.wrid;
    m.idx = ci++;
    check_sges(m, w.sge.data(), w.nsge, S ? S->pd : static_cast<uint32_t>(cfg_get(Q, kCfPd)));
    if (S) cov_.hit("ud_srq");
    const unsigned del = static_cast<unsigned>(p.pay.size());
    const bool imm = h.opcode == wire::kUdSendOnlyImm;
    if (m.bad) {
      expect_cqe(q, m, hw::wc_status::LOC_PROT_ERR, 0, 0, kEnd);
      ++n_prot_;
      cov_.hit("ud_prot_err");
      to_err(q, true);
      return;
    }
    if (m.cap < del) {
      expect_ud_cqe(q, m, hw::wc_status::LOC_LEN_ERR, del, 0, kEnd, h.deth_sqp);
      cov_.hit("ud_len_err");
      return;
    }
    scatter(m, p, 0, del);
    Q.epsn = (Q.epsn + 1) & kM24;   // (the engine counts executed packets on a UD QP too; nothing reads it)
    expect_ud_cqe(q, m, hw::wc_status::SUCCESS, del, imm ? h.imm : 0, imm ? kEndImm : kEnd, h.deth_sqp);
    ++msgs_;
    cov_.hit(imm ? "ud_datagram_imm" : "ud_datagram");
  }

  void accept(const Pkt& p) {
    const wire::RoceHdr& h = p.h;
    const unsigned op = h.opcode;
    if (h.dest_qp >= kNumQp || h.dest_qp < hw::QPN_FIRST) {
      cov_.hit(h.dest_qp >= kNumQp ? "drop_unknown_qp" : "drop_reserved_qp");
      ++n_drop_;
      return;
    }
    const unsigned q = h.dest_qp;
    Qp& Q = qp_[q];
    if (Q.ud || op == wire::kUdSendOnly || op == wire::kUdSendOnlyImm) return accept_ud(p, q);
    if (h.src_ip != cfg_get(Q, kCfDestIp)) {
      cov_.hit("drop_wrong_peer");
      ++n_drop_;
      return;
    }
    if (op == wire::kAck) {
      if (can_send(Q.lstate)) {
        AckExp e;
        e.q = q;
        e.aeth = h.aeth;
        e.psn = h.psn;
        ack_exp_.push_back(e);
        cov_.hit("ack_forwarded");
      } else {
        ++n_drop_;
        cov_.hit("ack_dropped_not_rts");
      }
      return;
    }
    if ((op >= wire::kReadRespFirst && op <= wire::kReadRespOnly) || op == wire::kAtomicAck) return accept_rresp(p, q);
    const bool write = op >= wire::kWriteFirst && op <= wire::kWriteOnlyImm;
    const bool read = op == wire::kReadReq;
    const bool atomic = op == wire::kCmpSwap || op == wire::kFetchAdd;
    if ((op > wire::kSendOnlyImm && !write && !read && !atomic) || !can_recv(Q.lstate)) {
      ++n_drop_;
      cov_.hit(op > wire::kSendOnlyImm && !write && !read && !atomic ? "drop_not_send"
               : Q.lstate == st(hw::QpState::ERR) ? "drop_err_qp" : "drop_not_ready");
      if (atomic) cov_.hit("atom_drop_not_ready");
      return;
    }
    if (h.psn != Q.epsn) {
      if (psn_ge(h.psn, Q.epsn)) {
        ++n_psn_err_;
        if (!Q.nak_sent) {
          Q.nak_sent = true;
          event(q, kSynSeq, Q.msn, Q.epsn);
          ++n_nak_;
          cov_.hit("gap_nak");
        } else {
          cov_.hit("gap_nak_once");
        }
        if (read) cov_.hit("read_gap");
        if (atomic) cov_.hit("atom_gap");
        Q.resync = true;
      } else if (read) {
        read_request(p, q, true);  // a duplicate READ is executed again (IBA 9.7.5.1.1)
      } else if (atomic) {
        atomic_dup(p, q);          // a duplicate atomic is answered from the saved result, never executed
      } else {
        ++n_dup_;
        ++n_ack_;
        event(q, kSynAck, Q.msn, Q.epsn - 1);
        cov_.hit("dup_reack");
      }
      return;
    }
    const bool first = op == wire::kSendFirst || op == wire::kSendOnly || op == wire::kSendOnlyImm ||
                       op == wire::kWriteFirst || op == wire::kWriteOnly || op == wire::kWriteOnlyImm;
    const bool last = op == wire::kSendLast || op == wire::kSendLastImm || op == wire::kSendOnly || op == wire::kSendOnlyImm ||
                      op == wire::kWriteLast || op == wire::kWriteLastImm || op == wire::kWriteOnly ||
                      op == wire::kWriteOnlyImm;
    const bool imm = op == wire::kSendLastImm || op == wire::kSendOnlyImm || op == wire::kWriteLastImm ||
                     op == wire::kWriteOnlyImm;
    if (read) {
      // IBA 9.7.5.1.2 / 9.7.4.1.2 (rxe's check_op_valid): a READ inside a SEND/WRITE message, or to a
      // QP without REMOTE_READ, is an invalid request.
      const bool rd_en = cfg_get(Q, kCfRemAccess) & hw::access::REMOTE_READ;
      if (Q.held || !rd_en) {
        event(q, kSynInv, Q.msn, h.psn);
        ++n_nak_;
        cov_.hit(Q.held ? "read_inv_req_held" : "read_no_remote_read");
        to_err(q, true, static_cast<int>(hw::AEV_QP_REQ_ERR));
        return;
      }
      return read_request(p, q, false);
    }
    if (atomic) {
      // IBA 9.4.5 / 9.7.4.1.2: an atomic inside a SEND/WRITE message, to a QP without REMOTE_ATOMIC,
      // or at a VA not 8-byte aligned is an invalid request.
      const bool at_en = cfg_get(Q, kCfRemAccess) & hw::access::REMOTE_ATOMIC;
      if (Q.held || !at_en || (h.reth_va & 7) != 0) {
        event(q, kSynInv, Q.msn, h.psn);
        ++n_nak_;
        cov_.hit(Q.held ? "atom_inv_req_held" : !at_en ? "atom_no_remote_atomic" : "atom_misaligned");
        to_err(q, true, static_cast<int>(hw::AEV_QP_REQ_ERR));
        return;
      }
      return atomic_exec(p, q);
    }
    const bool wr_en = cfg_get(Q, kCfRemAccess) & hw::access::REMOTE_WRITE;
    if (first == Q.held || (Q.held && Q.wr != write) || (write && !wr_en)) {
      event(q, kSynInv, Q.msn, h.psn);
      ++n_nak_;
      cov_.hit(first == Q.held ? (first ? "inv_req_first_while_held" : "inv_req_next_while_idle")
               : (Q.held && Q.wr != write) ? "write_kind_mismatch" : "write_not_enabled");
      to_err(q, true);
      return;
    }
    for (unsigned o : busy_qps_)
      if (o != q && qp_[o].held) {
        cov_.hit("interleaved_msgs");
        break;
      }
    unsigned skip = 0;
    bool imm_taken = false;  // a WRITE_WITH_IMM's receive WQE was taken by this packet
    auto rnr_nak = [&]() {
      event(q, syn_rnr(static_cast<unsigned>(cfg_get(Q, kCfMinRnr))), Q.msn, h.psn);
      ++n_rnr_;
      Q.resync = true;
    };
    if (write && first) {
      Msg m;
      check_rkey(m, h.reth_va, h.reth_len, h.reth_rkey, static_cast<uint32_t>(cfg_get(Q, kCfPd)));
      if (imm && !m.bad) {
        if (!take_imm_wqe(q, m)) {
          cov_.hit("write_imm_rnr");
          return rnr_nak();
        }
        imm_taken = true;
      }
      Q.m = m;
      Q.held = true;
      Q.wr = true;
      Q.npk = 0;
      Q.wva = h.reth_va;
      Q.wkey = h.reth_rkey;
    } else if (write) {
      // A later packet: the held range is checked again (its MR may have been invalidated since).
      uint64_t iova = 0;
      if (!rkey_ok(Q.wva, static_cast<uint32_t>(Q.m.cap), Q.wkey, static_cast<uint32_t>(cfg_get(Q, kCfPd)),
                   hw::access::REMOTE_WRITE, &iova)) {
        Q.m.bad = true;
        cov_.hit("write_mr_invalidated");
      } else if (imm) {  // WRITE_LAST_IMM
        if (!take_imm_wqe(q, Q.m)) {
          cov_.hit("write_imm_rnr");
          return rnr_nak();
        }
        imm_taken = true;
      }
    } else if (first) {
      Msg m;
      const uint16_t sn = static_cast<uint16_t>(cfg_get(Q, kCfSrq));
      bool rnr = false;
      auto take_srq = [&](Kind kind) {
        Srq& S = srq_[sn];
        const Wqe& w = S.ring[S.ci & (S.ring.size() - 1)];
        ++rd_exp_[srq_addr(S, S.ci)];
        m.kind = kind;
        m.wrid = w.wrid;
        m.idx = S.ci++;
        check_sges(m, w.sge.data(), w.nsge, S.pd);
        cov_.hit("srq_msg");
      };
      if (sn == kNoSrq) {
        if (Q.ci == Q.pi) {
          rnr = true;
          cov_.hit("rnr_rq_empty");
        } else {
          const Wqe& w = Q.ring[Q.ci & (Q.ring.size() - 1)];
          ++rd_exp_[rq_addr(Q, Q.ci)];
          m.wrid = w.wrid;
          m.idx = Q.ci++;
          check_sges(m, w.sge.data(), w.nsge, static_cast<uint32_t>(cfg_get(Q, kCfPd)));
        }
      } else {
        const Srq& S = srq_[sn];
        const bool has = S.valid && S.ci != S.pi;
        const bool tagged = S.valid && S.tm && p.pay.size() >= kTmh &&
                            (p.pay[0] == hw::tmh_op::EAGER || p.pay[0] == hw::tmh_op::RNDV);
        if (!tagged) {
          if (!has) {
            rnr = true;
            cov_.hit("rnr_srq");
          } else {
            take_srq(S.valid && S.tm ? kNotag : kPlain);
            if (S.tm) cov_.hit("tm_notag");
          }
        } else {
          Lookup l;
          for (unsigned i = 0; i < 8; ++i) l.tag = (l.tag << 8) | p.pay[8 + i];
          uint32_t tctx = 0;
          for (unsigned i = 0; i < 4; ++i) tctx = (tctx << 8) | p.pay[4 + i];
          l.commit_miss = has;
          l.srq = sn;
          const unsigned r = static_cast<unsigned>(u(0, 9));
          l.hit = r < 5;
          l.unexp = !l.hit && r < 8 && has;
          if (l.hit) {
            l.handle = static_cast<unsigned>(u(0, kEntries - 1));
            m.kind = kMatched;
            m.rndv = p.pay[0] == hw::tmh_op::RNDV;
            m.tag = l.tag;
            m.ctx = tctx;
            m.idx = static_cast<uint16_t>(l.handle - S.tag_base);
            skip = m.rndv ? 0 : kTmh;
            check_sges(m, &tb_[l.handle], 1, S.pd);
            cov_.hit(m.rndv ? "tm_match_rndv" : "tm_match_eager");
          } else if (l.unexp) {
            take_srq(kUnexp);
            cov_.hit("tm_unexpected");
          } else {
            rnr = true;
            cov_.hit("tm_rnr");
          }
          lk_exp_.push_back(l);
        }
      }
      if (rnr) return rnr_nak();
      Q.m = m;
      Q.held = true;
      Q.wr = false;
      Q.npk = 0;
    }
    ++Q.npk;
    const unsigned del = static_cast<unsigned>(p.pay.size()) - skip;
    if (Q.wr && (Q.m.bad || Q.m.cap - Q.m.off < del || (last && Q.m.cap - Q.m.off != del))) {
      // A WRITE's errors: no WQE to complete, unless a WRITE_WITH_IMM's was just taken (rxe's statuses).
      if (imm_taken)
        expect_cqe(q, Q.m, Q.m.bad ? hw::wc_status::REM_ACCESS_ERR : hw::wc_status::REM_INV_REQ_ERR, 0, 0, kEnd);
      event(q, Q.m.bad ? kSynRemAcc : kSynInv, Q.msn, h.psn);
      ++n_nak_;
      cov_.hit(Q.m.bad ? "write_access_err" : Q.m.cap - Q.m.off < del ? "write_len_over" : "write_len_short");
      Q.held = false;
      to_err(q, true);
      return;
    }
    if (Q.m.bad || Q.m.cap - Q.m.off < del) {
      expect_cqe(q, Q.m, Q.m.bad ? hw::wc_status::LOC_PROT_ERR : hw::wc_status::LOC_LEN_ERR, 0, 0, kEnd);
      event(q, Q.m.bad ? kSynRemOp : kSynInv, Q.msn, h.psn);
      ++n_nak_;
      if (Q.m.bad) ++n_prot_;
      cov_.hit(Q.m.bad ? "prot_err" : "len_err");
      if (!Q.m.bad && !first) cov_.hit("len_err_later_packet");
      if (!Q.m.bad && Q.m.off + del == Q.m.cap + 1) cov_.hit("len_err_by_one_byte");
      Q.held = false;
      to_err(q, true);
      return;
    }
    scatter(Q.m, p, skip, del);
    if (Q.epsn == kM24) cov_.hit("psn_wrap");
    Q.epsn = (Q.epsn + 1) & kM24;
    Q.nak_sent = false;
    Q.m.off += del;
    if (last && Q.wr) {
      if (imm) expect_cqe(q, Q.m, hw::wc_status::SUCCESS, static_cast<uint32_t>(Q.m.off), h.imm, kWriteImm);
      Q.msn = (Q.msn + 1) & kM24;
      Q.held = false;
      ++msgs_;
      cov_.hit(imm ? (Q.npk == 1 ? "write_imm" : "write_imm_multi_packet") : Q.npk == 1 ? "write_only" : "write_multi_packet");
      if (Q.m.off == 0) cov_.hit("write_zero_length");
    } else if (last) {
      expect_cqe(q, Q.m, hw::wc_status::SUCCESS, static_cast<uint32_t>(Q.m.off), imm ? h.imm : 0, imm ? kEndImm : kEnd);
      Q.msn = (Q.msn + 1) & kM24;
      Q.held = false;
      ++msgs_;
      cov_.hit(Q.npk == 1 ? "msg_only" : "msg_multi_packet");
      if (Q.npk >= 3) cov_.hit("msg_3plus_packets");
      if (Q.m.off == 0) cov_.hit("msg_zero_length");
      if (Q.m.off == Q.m.cap) cov_.hit("msg_fills_buffer");
      if (imm) cov_.hit("msg_with_imm");
      if (q == hw::QPN_FIRST) cov_.hit("qp_first_msg");
      if (q == kNumQp - 1) cov_.hit("qp_last_msg");
    } else if (Q.m.kind == kMatched && !Q.m.msent) {
      expect_cqe(q, Q.m, hw::wc_status::SUCCESS, 0, 0, kMatch);
      Q.m.msent = true;
    }
    if (h.ack_req) {
      event(q, kSynAck, Q.msn, h.psn);
      ++n_ack_;
      cov_.hit("ack_on_ack_req");
    }
  }

  // An RDMA READ request at the expected PSN (dup false) or behind it (dup true: executed again with
  // its own RETH, IBA 9.7.5.1.1, changing neither the expected PSN nor the MSN). With kMaxRd jobs
  // of the QP out it is dropped unanswered (responder resources, IBA 9.7.5.1); a RETH range that
  // fails the REMOTE_READ check: NAK remote access error, QP to ERR (class C), no job; else a job
  // {QP, IOVA, length, PSN, MSN after this READ, PMTU} and the expected PSN past its responses.
  void read_request(const Pkt& p, unsigned q, bool dup) {
    const wire::RoceHdr& h = p.h;
    Qp& Q = qp_[q];
    if (Q.rd_out >= kMaxRd) {
      cov_.hit(dup ? "read_dup_full_drop" : "read_full_drop");
      Q.rd_full = true;
      return;
    }
    if (Q.rd_full) cov_.hit("read_job_done_seen");  // (a job finished since: the READ engine's count read)
    if (qp_fin_cyc_[q] == cyc_ && cyc_ > 0) cov_.hit("read_done_same_cycle");  // (info: the write-first read)
    Q.rd_full = false;
    uint64_t iova = 0;
    if (h.reth_len != 0 && !rkey_ok(h.reth_va, h.reth_len, h.reth_rkey, static_cast<uint32_t>(cfg_get(Q, kCfPd)),
                                    hw::access::REMOTE_READ, &iova)) {
      event(q, kSynRemAcc, Q.msn, h.psn);
      ++n_nak_;
      cov_.hit(dup ? "read_dup_access_err" : "read_access_err");
      to_err(q, true, static_cast<int>(hw::AEV_QP_ACCESS_ERR));
      return;
    }
    const unsigned lg = 31 - static_cast<unsigned>(__builtin_clz(Q.pmtu));
    const uint64_t npk = h.reth_len == 0 ? 1 : ((uint64_t(h.reth_len) - 1) >> lg) + 1;
    if (!dup) {
      if (((Q.epsn + npk) & kM24) < Q.epsn) cov_.hit("psn_wrap");
      Q.epsn = static_cast<uint32_t>((Q.epsn + npk) & kM24);
      Q.msn = (Q.msn + 1) & kM24;
      Q.nak_sent = false;
      cov_.hit("read_ok");
      if (npk > 1) cov_.hit("read_multi_packet");
    } else {
      cov_.hit("read_dup");
      if (Q.held) cov_.hit("read_dup_while_held");
    }
    if (h.reth_len == 0) cov_.hit("read_zero_len");
    Job j;
    j.q = q;
    j.pmtu_log = lg;
    j.iova = h.reth_len == 0 ? 0 : iova;
    j.len = h.reth_len;
    j.psn = h.psn;
    j.msn = Q.msn;
    job_exp_.push_back(j);
    if (++Q.rd_out == kMaxRd) cov_.hit("read_qp_at_limit");
  }

  // An atomic request at the expected PSN, valid (IBA 9.4.5, 9.7.5.1): with kMaxRd jobs of the QP out
  // dropped unanswered; its 8 bytes checked as a READ's range with REMOTE_ATOMIC: bad -> NAK remote
  // access error, QP to ERR (class C), no DMA at all; else executed: the word read (memory order
  // m0..m7, the big-endian integer m0<<56|..|m7) once every earlier write is done, the new value
  // (CMP_SWAP: swap if old == compare, else old; FETCH_ADD: old + add mod 2^64) written back, its
  // result saved for duplicates (the oldest of kMaxRd slots replaced) and a job {original value,
  // 8, PSN, MSN after it}; the expected PSN and the MSN move by one, no ACK/NAK.
  void atomic_exec(const Pkt& p, unsigned q) {
    const wire::RoceHdr& h = p.h;
    Qp& Q = qp_[q];
    if (Q.rd_out >= kMaxRd) {
      cov_.hit("atom_full_drop");
      Q.rd_full = true;
      return;
    }
    Q.rd_full = false;
    uint64_t iova = 0;
    const uint32_t pd = static_cast<uint32_t>(cfg_get(Q, kCfPd));
    if (!rkey_ok(h.reth_va, kAtomLen, h.reth_rkey, pd, hw::access::REMOTE_ATOMIC, &iova)) {
      const Mr& r = mr_[(h.reth_rkey >> hw::MR_KEY_SHIFT) % kNumMr];
      const uint64_t end = r.va + r.len;
      cov_.hit(!r.valid ? "atom_acc_mr_invalid" : r.key != h.reth_rkey ? "atom_acc_key" : r.pd != pd ? "atom_acc_pd"
               : (h.reth_va < end && h.reth_va + kAtomLen > end) ? "atom_acc_straddle"
               : (h.reth_va < r.va || h.reth_va + kAtomLen > end) ? "atom_acc_bounds" : "atom_acc_mr_right");
      event(q, kSynRemAcc, Q.msn, h.psn);
      ++n_nak_;
      to_err(q, true, static_cast<int>(hw::AEV_QP_ACCESS_ERR));
      return;
    }
    auto it = mmem_.find(iova);
    if (it == mmem_.end()) return fail("bench: an atomic to VA 0x", hex(h.reth_va), " (IOVA 0x", hex(iova), "), not a watched word");
    const Mr& r = mr_[(h.reth_rkey >> hw::MR_KEY_SHIFT) % kNumMr];
    if (h.reth_va == r.va) cov_.hit("atom_first_word_of_mr");
    if (h.reth_va == ((r.va + r.len) & ~7ull) - 8) cov_.hit("atom_last_word_of_mr");
    MemWord& w = it->second;
    if (w.atom) cov_.hit("atom_after_atom_word");
    if (w.last_w > 0) cov_.hit("atom_word_written_before");
    if (w.last_w > wr_done_pos_) cov_.hit("atom_word_write_pending");
    if (wr_push_ != wr_done_pos_) cov_.hit("atom_wait_writes");
    uint64_t old_le = 0, old_be = 0;
    for (unsigned i = 0; i < 8; ++i) {
      old_le |= uint64_t(w.b[i]) << (8 * i);
      old_be = (old_be << 8) | w.b[i];
    }
    uint64_t new_be = 0;
    if (h.opcode == wire::kCmpSwap) {
      new_be = old_be == h.atom_cmp ? h.atom_swap : old_be;
      cov_.hit(old_be == h.atom_cmp ? "atom_cswap_swapped" : "atom_cswap_unchanged");
    } else {
      new_be = old_be + h.atom_swap;
      cov_.hit(new_be < old_be ? "atom_fadd_wrap" : "atom_fadd");
    }
    std::array<uint8_t, 8> nb{};
    for (unsigned i = 0; i < 8; ++i) nb[i] = static_cast<uint8_t>(new_be >> (8 * (7 - i)));
    AtomDma d;
    d.q = q;
    d.psn = h.psn;
    d.iova = iova;
    d.wpos = wr_push_;
    d.waited = wr_push_ != wr_done_pos_;
    at_exp_.push_back(d);
    expect_write(iova, nb.data(), kAtomLen, true);
    w.atom = true;
    Q.ares[Q.ap] = {true, h.psn, old_le};
    Q.ap = (Q.ap + 1) % kMaxRd;
    Q.aexec.push_back(h.psn);
    if (Q.aexec.size() > 32) Q.aexec.pop_front();
    cov_.max("atom_exec_per_qp_max", Q.aexec.size());
    if (Q.epsn == kM24) cov_.hit("atom_psn_wrap");
    Q.epsn = (Q.epsn + 1) & kM24;
    Q.msn = (Q.msn + 1) & kM24;
    Q.nak_sent = false;
    Job j;
    j.q = q;
    j.pmtu_log = 31 - static_cast<unsigned>(__builtin_clz(Q.pmtu));
    j.iova = old_le;
    j.len = kAtomLen;
    j.psn = h.psn;
    j.msn = Q.msn;
    j.atom = j.exec = true;
    job_exp_.push_back(j);
    if (++Q.rd_out == kMaxRd) cov_.hit("atom_qp_at_limit");
  }
  // A duplicate atomic (behind the expected PSN): counted; with kMaxRd jobs of the QP out dropped;
  // else answered from the QP's saved results if its PSN is there (a job {saved original value, 8,
  // PSN, the current MSN}: no DMA, the expected PSN and the MSN stay), else dropped.
  void atomic_dup(const Pkt& p, unsigned q) {
    const wire::RoceHdr& h = p.h;
    Qp& Q = qp_[q];
    ++n_dup_;
    if (Q.rd_out >= kMaxRd) {
      cov_.hit("atom_dup_full_drop");
      return;
    }
    const AtomRes* hit = nullptr;
    for (const AtomRes& a : Q.ares)
      if (a.valid && a.psn == h.psn) hit = &a;
    if (!hit) {
      const bool seen = std::find(Q.aexec.begin(), Q.aexec.end(), h.psn) != Q.aexec.end();
      const bool before = std::find(Q.aprev.begin(), Q.aprev.end(), h.psn) != Q.aprev.end();
      cov_.hit(seen ? "atom_dup_evicted" : before ? "atom_dup_before_init" : "atom_dup_unknown");
      return;
    }
    cov_.hit("atom_dup_replayed");
    if (Q.held) cov_.hit("atom_dup_while_held");
    Job j;
    j.q = q;
    j.pmtu_log = 31 - static_cast<unsigned>(__builtin_clz(Q.pmtu));
    j.iova = hit->old;
    j.len = kAtomLen;
    j.psn = h.psn;
    j.msn = Q.msn;
    j.atom = true;
    job_exp_.push_back(j);
    if (++Q.rd_out == kMaxRd) cov_.hit("atom_qp_at_limit");
  }

  // An RDMA READ response for QP q (the requester of the READ): dropped unless the QP can send;
  // else a query to the completer (ACK_RR), whose verdict this bench gives by the completer's rule
  // (docs/architecture.md, tmnic_completer): the head READ of the send queue, the QP sending (RTS,
  // SQD), FIRST/ONLY at its first PSN (a FIRST again restarts it), MIDDLE/LAST right after the last
  // accepted one, LAST/ONLY exactly at its last PSN, and of the head's kind (an ATOMIC_ACKNOWLEDGE,
  // a one-packet response of 8 bytes, for an atomic WQE; READ responses for a READ). Not ok: dropped. Ok: a FIRST/ONLY fetches the
  // READ WQE from the send queue and checks its scatter list (LOCAL_WRITE, the QP's PD), a
  // MIDDLE/LAST does so again when the MR generation changed since; a bad list fails the READ with
  // LOC_PROT_ERR (ACK_RDERR), a payload other than PMTU (FIRST/MIDDLE) or the rest (LAST/ONLY) with
  // BAD_RESP_ERR, no DMA; else the bytes are scattered on, and LAST/ONLY reports ACK_RDDONE. The
  // responder's PSN, MSN and receive queue are not touched.
  void accept_rresp(const Pkt& p, unsigned q) {
    const wire::RoceHdr& h = p.h;
    Qp& Q = qp_[q];
    const unsigned op = h.opcode;
    const bool aack = op == wire::kAtomicAck;
    if (!can_send(Q.lstate)) {
      ++n_drop_;
      cov_.hit(aack ? "atom_ack_drop_not_rts" : "rresp_drop_not_rts");
      return;
    }
    const bool first = op == wire::kReadRespFirst || op == wire::kReadRespOnly || aack;
    const bool last = op == wire::kReadRespLast || op == wire::kReadRespOnly || aack;
    AckExp e;
    e.kind = kAckRr;
    e.q = q;
    e.aeth = h.aeth;
    e.psn = h.psn;
    e.first = first;
    e.last = last;
    e.atom = aack;
    const RdWqe* hd = Q.rds.empty() ? nullptr : &Q.rds.front();
    const bool sending = Q.lstate == st(hw::QpState::RTS) || Q.lstate == st(hw::QpState::SQD);
    e.ok = hd && sending && psn_ge(h.psn, hd->first) && psn_ge(hd->last(), h.psn) &&
           (first ? h.psn == hd->first : (Q.acc_v && h.psn == ((Q.acc + 1) & kM24) && h.psn != hd->first)) &&
           (last == (h.psn == hd->last())) && hd->atom == aack;
    e.idx = hd ? hd->idx : static_cast<uint16_t>(rng_());
    ack_exp_.push_back(e);
    if (!e.ok) {
      const uint32_t next = !hd ? 0 : Q.acc_v ? ((Q.acc + 1) & kM24) : hd->first;  // the response it waits for
      cov_.hit("rresp_not_ok");
      if (hd && sending && hd->atom != aack && h.psn == hd->first) cov_.hit(aack ? "atom_ack_to_read" : "rresp_to_atomic");
      if (aack && !hd) cov_.hit("atom_ack_no_entry");
      if (aack && hd && h.psn != hd->first) cov_.hit("atom_ack_wrong_psn");
      if (!hd) cov_.hit("rresp_no_read");
      else if (!sending) cov_.hit("rresp_sqe_not_ok");
      else if (Q.acc_v && psn_ge(Q.acc, h.psn) && psn_ge(h.psn, hd->first)) cov_.hit("rresp_dup_not_ok");
      else if (psn_ge(h.psn, (next + 1) & kM24) && psn_ge(hd->last(), h.psn)) cov_.hit("rresp_gap_not_ok");
      else if (h.psn == next) cov_.hit("rresp_flag_not_ok");
      return;
    }
    if (first && Q.acc_v) cov_.hit("rresp_first_again");
    Q.acc_v = true;
    Q.acc = h.psn;
    const RdWqe w = *hd;
    auto fail_read = [&](uint8_t status) {
      AckExp f;
      f.kind = kAckRdErr;
      f.q = q;
      f.aeth = status;
      f.psn = h.psn;
      ack_exp_.push_back(f);
      Q.rds.pop_front();
      Q.acc_v = false;
    };
    if (first || Q.rgen != mr_gen_) {
      ++rd_exp_[sq_addr(Q, w.idx)];
      Msg m;
      check_sges(m, w.w.sge.data(), w.w.nsge, static_cast<uint32_t>(cfg_get(Q, kCfPd)));
      Q.rgen = mr_gen_;
      if (first) {
        Q.rm = m;
        Q.rm.off = 0;
      } else {
        Q.rm.bad = m.bad;
        cov_.hit(m.bad ? "rresp_mr_invalidated" : "rresp_mr_changed_recheck");
      }
    }
    const unsigned n = static_cast<unsigned>(p.pay.size());
    const uint64_t rest = Q.rm.cap - Q.rm.off;
    if (Q.rm.bad) {
      ++n_prot_;
      cov_.hit(w.atom ? "atom_ack_bad_sge" : w.w.nsge > kNsge ? "rresp_too_many_sge" : "rresp_bad_sge");
      return fail_read(hw::wc_status::LOC_PROT_ERR);
    }
    if (n > rest || (!last && n != Q.pmtu) || (last && n != rest)) {
      cov_.hit("rresp_bad_len");
      return fail_read(hw::wc_status::BAD_RESP_ERR);
    }
    scatter(Q.rm, p, 0, n);
    Q.rm.off += n;
    cov_.hit(aack ? "atom_ack_placed" : op == wire::kReadRespFirst ? "rresp_first_ok"
             : op == wire::kReadRespOnly ? "rresp_only_ok" : op == wire::kReadRespMiddle ? "rresp_middle_ok"
                                         : "rresp_last_ok");
    if (last) {
      AckExp d;
      d.kind = kAckRdDone;
      d.q = q;
      d.psn = h.psn;
      ack_exp_.push_back(d);
      Q.rds.pop_front();
      Q.acc_v = false;
      cov_.hit("rresp_rddone");
      if (Q.rm.cap == 0) cov_.hit("rresp_zero_len");
      if (std::count_if(Q.rm.sg.begin(), Q.rm.sg.end(), [](const auto& g) { return g.second > 0; }) > 1)
        cov_.hit("rresp_multi_sge");
    }
  }

  // ---------------------------------------------------------------- the peers
  unsigned pick_qp(const Knobs& k) {
    if (chance(rng_, k.hot)) return hot_[u(0, hot_.size() - 1)];
    return static_cast<unsigned>(u(0, kNumQp - 1));
  }
  void gen_packet(const Knobs& k) {
    Pkt p;
    wire::RoceHdr& h = p.h;
    h.dst_mac = local_mac_;
    h.src_mac = rng_() & mask64(48);
    h.dst_ip = local_ip_;
    h.udp_sport = static_cast<uint16_t>(rng_());
    h.se = chance(rng_, 0.1);
    h.reth_va = rng_();
    h.reth_rkey = static_cast<uint32_t>(rng_());
    h.reth_len = static_cast<uint32_t>(rng_());
    h.imm = static_cast<uint32_t>(rng_());
    unsigned q = pick_qp(k);
    if (qp_[burst_q_].rburst > 0 && chance(rng_, 0.5)) q = burst_q_;  // (a READ burst: its jobs pile up)
    // (the atomic that follows a WRITE over its word comes right after it, mostly)
    const bool aw = aw_q_ >= 0 && chance(rng_, 0.8);
    if (aw) q = static_cast<unsigned>(aw_q_);
    aw_q_ = -1;
    // (a QP initialised right after its atomics: its peer's next request comes soon, mostly, and is
    // one of those atomics again; so that their duplicates meet the cleared table at any NUM_QP)
    const bool bd = !aw && bd_q_ >= 0 && chance(rng_, 0.5);
    if (bd) q = static_cast<unsigned>(bd_q_);
    if (bd || (bd_q_ >= 0 && !qp_[static_cast<unsigned>(bd_q_)].bdup)) bd_q_ = -1;
    Qp& Q = qp_[q];
    h.dest_qp = q;
    h.src_ip = static_cast<uint32_t>(cfg_get(Q, kCfDestIp));
    const unsigned r = (aw || bd) ? 999 : static_cast<unsigned>(u(0, 999));
    auto rand_pay = [&](unsigned n) {
      p.pay.resize(n);
      for (auto& b : p.pay) b = static_cast<uint8_t>(rng_());
    };
    if (r < 10) {  // an unknown QP number
      h.dest_qp = static_cast<uint32_t>(u(kNumQp, kM24));
      h.opcode = wire::kSendOnly;
      rand_pay(static_cast<unsigned>(u(0, 300)));
    } else if (r < 20) {  // another peer
      h.src_ip ^= static_cast<uint32_t>(u(1, 0xFFFFFFFF));
      h.opcode = static_cast<uint8_t>(u(wire::kSendFirst, wire::kSendOnlyImm));
      h.psn = Q.epsn;
      rand_pay(static_cast<unsigned>(u(0, 300)));
    } else if (r < 30) {  // an RC opcode this responder does not execute (SEND_WITH_INV etc.): dropped
      h.opcode = static_cast<uint8_t>(u(0x15, 0x1F));
      h.psn = Q.epsn;
      rand_pay(static_cast<unsigned>(u(0, 300)));
    } else if (r < 60) {  // an ACK/NAK for the send side
      h.opcode = wire::kAck;
      h.aeth = static_cast<uint32_t>(rng_());
      h.psn = static_cast<uint32_t>(rng_() & kM24);
    } else if (Q.ud || r < 70) {
      // A datagram (to an RC QP: dropped), from anyone, usually with the right Q_Key; sometimes an
      // RC SEND to a UD QP (dropped). The payload is the parser's: the GRH, then the data.
      const unsigned r2 = static_cast<unsigned>(u(0, 99));
      h.opcode = r2 < 5 ? wire::kSendOnly : r2 < 35 ? wire::kUdSendOnlyImm : wire::kUdSendOnly;
      h.deth_qkey = chance(rng_, 0.85) ? Q.qkey : static_cast<uint32_t>(rng_());
      h.deth_sqp = static_cast<uint32_t>(rng_() & kM24);
      h.src_ip = static_cast<uint32_t>(rng_());
      h.psn = static_cast<uint32_t>(rng_() & kM24);
      // Sometimes exactly the capacity of the receive WQE it will take, or one byte more.
      unsigned n = hw::GRH_LEN + static_cast<unsigned>(u(0, 1200));
      if (cfg_get(Q, kCfSrq) == kNoSrq && Q.ci != Q.pi && chance(rng_, 0.15)) {
        const Wqe& w = Q.ring[Q.ci & (Q.ring.size() - 1)];
        Msg m;
        check_sges(m, w.sge.data(), w.nsge, static_cast<uint32_t>(cfg_get(Q, kCfPd)));
        const uint64_t total = m.cap + (chance(rng_, 0.4) ? 1 : 0);
        if (!m.bad && total >= hw::GRH_LEN && total <= 4096 + hw::GRH_LEN) n = static_cast<unsigned>(total);
      }
      rand_pay(n);
    } else if (r < 160) {  // an RDMA READ response (this QP is the READ's requester)
      rresp_packet(k, q, p);
    } else {
      peer_packet(k, q, p);
    }
    h.pay_len = static_cast<uint16_t>(p.pay.size());
    if (!p.pay.empty()) pay_.push(p.pay);
    hq_.push_back(std::move(p));
  }
  // A READ WQE posted on QP q's send queue (at most four outstanding; indices 1..2 apart, other WQEs
  // between them, as are PSNs: the ring always has room for the outstanding ones and a few more); now
  // and then an atomic WQE (one SGE of 8 bytes, sometimes a bad one; one response).
  void post_read(unsigned q) {
    Qp& Q = qp_[q];
    RdWqe r;
    r.idx = Q.sq_next;
    const uint32_t pd = static_cast<uint32_t>(cfg_get(Q, kCfPd));
    r.atom = chance(rng_, 0.3);
    if (r.atom) {
      r.w = make_read_wqe(pd, Q.pmtu);  // (SGEs 2.. are noise: the operands are there)
      r.w.nsge = 1;
      r.w.sge[0] = make_sge(pd, kAtomLen, 0.06);
    } else {
      r.w = make_read_wqe(pd, Q.pmtu);
    }
    for (unsigned i = 0; i < std::min(r.w.nsge, kNsge); ++i) r.len += r.w.sge[i].len;
    r.npk = r.len == 0 ? 1 : static_cast<uint32_t>((r.len + Q.pmtu - 1) / Q.pmtu);
    r.first = Q.spsn;
    store_wqe(sq_addr(Q, r.idx), r.w,
              !r.atom ? hw::wqe_op::RDMA_READ
              : chance(rng_, 0.5) ? hw::wqe_op::ATOMIC_CMP_AND_SWP : hw::wqe_op::ATOMIC_FETCH_AND_ADD);
    Q.sq_next = static_cast<uint16_t>(Q.sq_next + u(1, 2));
    Q.spsn = (Q.spsn + r.npk + static_cast<uint32_t>(u(0, 2))) & kM24;
    Q.rds.push_back(r);
  }
  // A READ response to QP q: mostly the next one of its oldest READ with the right length; now and
  // then one again, one ahead, with the wrong FIRST/LAST kind, of the next READ, of no READ, or of
  // the wrong length.
  void rresp_packet(const Knobs& k, unsigned q, Pkt& p) {
    wire::RoceHdr& h = p.h;
    // (mostly to a QP that can take responses: many are in ERR or RTR)
    for (unsigned t = 0; t < 8 && !can_send(qp_[q].lstate) && chance(rng_, 0.9); ++t) {
      q = pick_qp(k);
      h.dest_qp = q;
      h.src_ip = static_cast<uint32_t>(cfg_get(qp_[q], kCfDestIp));
    }
    Qp& Q = qp_[q];
    h.aeth = static_cast<uint32_t>(rng_());
    h.ack_req = chance(rng_, 0.1);
    // (now and then a response when none is outstanding)
    if (q >= hw::QPN_FIRST && Q.inited && Q.rds.size() < 4 && chance(rng_, Q.rds.empty() ? 0.95 : 0.08)) post_read(q);
    auto set_op = [&](bool first, bool last) {
      h.opcode = first ? (last ? wire::kReadRespOnly : wire::kReadRespFirst)
                       : (last ? wire::kReadRespLast : wire::kReadRespMiddle);
    };
    unsigned n = 0;
    if (Q.rds.empty() || chance(rng_, 0.03)) {
      h.psn = chance(rng_, 0.5) ? Q.spsn : static_cast<uint32_t>(rng_() & kM24);
      h.opcode = static_cast<uint8_t>(u(wire::kReadRespFirst, wire::kReadRespOnly + 2));  // (+2: ATOMIC_ACK)
      if (h.opcode == wire::kAck) h.opcode = wire::kAtomicAck;
      n = h.opcode == wire::kAtomicAck ? kAtomLen : static_cast<unsigned>(u(0, Q.pmtu));
    } else {
      const RdWqe& hd = (Q.rds.size() > 1 && chance(rng_, 0.03)) ? Q.rds[1] : Q.rds.front();
      const bool head = &hd == &Q.rds.front();
      uint32_t pos = (head && Q.acc_v) ? ((Q.acc + 1 - hd.first) & kM24) : 0;  // packet number
      const unsigned r = static_cast<unsigned>(u(0, 99));
      if (r < 4) pos = 0;                                          // its FIRST again
      else if (r < 10 && pos > 0) pos -= (pos > 1 && chance(rng_, 0.7)) ? 1 : static_cast<uint32_t>(u(1, pos));  // one again
      else if (r < 13) pos += 1;                                   // one lost
      pos = std::min(pos, hd.npk);
      h.psn = (hd.first + pos) & kM24;
      bool first = pos == 0, last = pos + 1 == hd.npk;
      if (r >= 13 && r < 16) (chance(rng_, 0.5) ? first : last) ^= true;  // the wrong kind
      set_op(first, last);
      n = pos + 1 < hd.npk ? Q.pmtu : static_cast<unsigned>(hd.len - uint64_t(hd.npk - 1) * Q.pmtu);
      if (!last && pos + 1 == hd.npk) n = Q.pmtu;
      if (chance(rng_, 0.04)) {  // the wrong length
        const unsigned r2 = static_cast<unsigned>(u(0, 3));
        n = r2 == 0 ? n + 1 : (r2 == 1 && n > 0) ? n - 1 : r2 == 2 ? 0 : static_cast<unsigned>(u(0, 4096));
      }
      // An atomic's response is an ATOMIC_ACKNOWLEDGE (its 8 payload bytes the original value: the
      // parser's), now and then a READ response instead; a READ's now and then an ATOMIC_ACKNOWLEDGE.
      if (hd.atom ? chance(rng_, 0.93) : chance(rng_, 0.02)) {
        h.opcode = wire::kAtomicAck;
        n = kAtomLen;
      }
    }
    n = std::min(n, 4096u);
    p.pay.resize(n);
    for (auto& b : p.pay) b = static_cast<uint8_t>(rng_());
  }

  // An MR of the PD (pd_eq) or of another one, with all of `rights` and none of `lacks`, valid or
  // not, from a random start; -1 none.
  int find_mr(uint32_t pd, bool pd_eq, uint32_t rights, uint32_t lacks = 0, bool valid = true) {
    const unsigned i0 = static_cast<unsigned>(u(0, kNumMr - 1));
    for (unsigned t = 0; t < kNumMr; ++t) {
      const unsigned i = (i0 + t) % kNumMr;
      const Mr& g = mr_[i];
      if (g.valid == valid && (g.pd == pd) == pd_eq && (g.access & rights) == rights && (g.access & lacks) == 0)
        return static_cast<int>(i);
    }
    return -1;
  }
  // An atomic's target {VA, rkey} for a QP of PD pd: mostly a watched word of an MR of the PD with
  // REMOTE_ATOMIC (now and then the QP's last one again); else misaligned, out of bounds (below,
  // straddling the end, past it), a foreign key, an MR of another PD, one without REMOTE_ATOMIC, an
  // invalid one.
  std::pair<uint64_t, uint32_t> atomic_target(Qp& Q, uint32_t pd, bool good) {
    const unsigned r = static_cast<unsigned>(u(0, good ? 84 : 99));
    if (r < 25 && !Q.ahist.empty()) {
      const AtomSent& a = Q.ahist.back();
      const Mr& m = mr_[(a.rkey >> hw::MR_KEY_SHIFT) % kNumMr];
      if (m.key == a.rkey && (a.va & 7) == 0 && a.va >= m.va && a.va + kAtomLen <= m.va + m.len) return {a.va, a.rkey};
    }
    int i = find_mr(pd, true, hw::access::REMOTE_ATOMIC);
    if (r >= 94) {
      const int j = r < 96 ? find_mr(pd, false, hw::access::REMOTE_ATOMIC)            // another PD's
                    : r < 98 ? find_mr(pd, true, 0, hw::access::REMOTE_ATOMIC)         // without the right
                             : find_mr(pd, true, 0, 0, false);                          // an invalid MR
      if (j >= 0) i = j;
    }
    if (i < 0) return {rng_() & ~7ull, static_cast<uint32_t>(rng_())};
    const Mr& m = mr_[i];
    uint64_t va = pool_[i][u(0, pool_[i].size() - 1)];
    uint32_t key = m.key;
    if (r >= 85 && r < 88) va += u(1, 7);                                     // misaligned
    else if (r >= 88 && r < 92) {                                             // out of bounds
      const uint64_t end = m.va + m.len;
      const unsigned b = static_cast<unsigned>(u(0, 2));
      va = b == 0 ? m.va - 8 : (b == 1 && (end & 7) != 0) ? (end & ~7ull) : ((end + 7) & ~7ull);
      if ((end & 7) != 0 && chance(rng_, 0.3)) va = end & ~7ull;  // (straddling the end, more often)
    } else if (r >= 92 && r < 94) key ^= static_cast<uint32_t>(u(1, 255));    // foreign key
    return {va, key};
  }
  // QP q's peer sends an atomic request (its header fields; the PSN is the caller's), to (va, key)
  // when given (a word just written), else to atomic_target's.
  void atomic_req(Qp& Q, wire::RoceHdr& h, bool at_word = false, bool good = false) {
    h.opcode = chance(rng_, 0.5) ? wire::kCmpSwap : wire::kFetchAdd;
    std::tie(h.reth_va, h.reth_rkey) = at_word ? std::make_pair(Q.aw_va, Q.aw_key)
                                               : atomic_target(Q, static_cast<uint32_t>(cfg_get(Q, kCfPd)), good);
    h.reth_len = kAtomLen;  // (the parser's: ATOMIC_LEN)
    h.ack_req = chance(rng_, 0.3);
    h.atom_swap = rng_();
    h.atom_cmp = rng_();
    const unsigned r = static_cast<unsigned>(u(0, 9));
    if (h.opcode == wire::kFetchAdd && r < 3) h.atom_swap = u(0, 300);          // small adds (carries)
    if (h.opcode == wire::kFetchAdd && r == 3) h.atom_swap = ~u(0, 300);        // wraps
    // a compare that matches (the word as the model has it now: the packets queued before may change it)
    const Mr& m = mr_[(h.reth_rkey >> hw::MR_KEY_SHIFT) % kNumMr];
    auto it = mmem_.find(h.reth_va - m.va + m.iova);
    if (h.opcode == wire::kCmpSwap && it != mmem_.end() && r < 6) {
      uint64_t be = 0;
      for (uint8_t b : it->second.b) be = (be << 8) | b;
      h.atom_cmp = be;
    }
    AtomSent a;
    a.psn = h.psn;
    a.op = h.opcode;
    a.va = h.reth_va;
    a.rkey = h.reth_rkey;
    a.swap = h.atom_swap;
    a.cmp = h.atom_cmp;
    Q.ahist.push_back(a);
    if (Q.ahist.size() > 12) Q.ahist.pop_front();
  }

  // The next packet of QP q's peer: a SEND in sequence, or a duplicate, a gap, a bad sequence.
  void peer_packet(const Knobs& k, unsigned q, Pkt& p) {
    Qp& Q = qp_[q];
    wire::RoceHdr& h = p.h;
    if (Q.resync || chance(rng_, 0.01)) {  // go back to the responder's PSN (it NAKed)
      Q.resync = false;
      Q.ppsn = Q.epsn;
      Q.pin = Q.held;
      Q.pwr = Q.wr;
      if (Q.pin) {
        Q.prem = static_cast<unsigned>(u(1, 3));
        Q.plast = static_cast<unsigned>(u(1, Q.pmtu));
      }
    }
    const unsigned r = static_cast<unsigned>(u(0, 999));
    bool advance = true;
    uint32_t adv = 1;  // PSNs the packet takes (a READ request: its responses')
    // An RDMA READ request: its RETH mostly inside an MR with REMOTE_READ, sometimes bad, of 0 bytes,
    // or long; returns its number of responses.
    auto read_req = [&](double bad) -> uint32_t {
      h.opcode = wire::kReadReq;
      const unsigned r2 = static_cast<unsigned>(u(0, 99));
      const uint32_t len = r2 < 8 ? 0 : r2 < 85 ? static_cast<uint32_t>(u(1, 4 * Q.pmtu))
                           : r2 < 99 ? static_cast<uint32_t>(u(1, 1u << 20)) : static_cast<uint32_t>(rng_());
      const Sge rs = make_rsge(static_cast<uint32_t>(cfg_get(Q, kCfPd)), len, bad, hw::access::REMOTE_READ);
      h.reth_va = rs.addr;
      h.reth_rkey = rs.key;
      h.reth_len = len;
      h.ack_req = chance(rng_, 0.3);
      return len == 0 ? 1u : static_cast<uint32_t>(((uint64_t(len) - 1) / Q.pmtu + 1) & kM24);
    };
    // (a requester whose READs are slow to come back sends one again: its timer)
    const bool adup = Q.adup;  // (after a streak of atomics: one of its first ones again)
    Q.adup = false;
    const bool bdup = Q.bdup && !Q.aprev.empty() && Q.ahist.empty();  // (right after its init: bd_q_)
    Q.bdup = false;
    if (r < 25 || (Q.rd_out >= kMaxRd && chance(rng_, 0.3)) || adup || bdup) {  // a duplicate: any SEND behind, a READ or atomic
      h.psn = (Q.ppsn - static_cast<uint32_t>(u(1, 4))) & kM24;
      if (!Q.aprev.empty() && Q.ahist.empty() && (bdup || chance(rng_, 0.3))) {
        // An atomic at the PSN of one the QP executed before its init (the init forgot it)
        h.psn = Q.aprev[u(0, Q.aprev.size() - 1)];
        atomic_req(Q, h);
        Q.ahist.pop_back();
        return;
      }
      if (!Q.ahist.empty() && (adup || chance(rng_, 0.5))) {
        // An atomic sent before, again (its ATOMIC_ACKNOWLEDGE was lost): mostly one of the last
        // few, sometimes an old one (no longer in the responder's table); or an atomic at a PSN
        // that was none.
        const size_t n = Q.ahist.size();
        const AtomSent a = Q.ahist[chance(rng_, 0.7) ? n - 1 - u(0, std::min<size_t>(n, 4) - 1) : u(0, n - 1)];
        h.psn = a.psn;
        atomic_req(Q, h);
        if (chance(rng_, 0.9)) {
          h.opcode = a.op;
          h.reth_va = a.va;
          h.reth_rkey = a.rkey;
          h.atom_swap = a.swap;
          h.atom_cmp = a.cmp;
        }
        Q.ahist.pop_back();  // (atomic_req recorded it: a duplicate is not a new atomic)
        if (Q.aexec.size() > kMaxRd && (adup || chance(rng_, 0.5)))  // a very old one (its result no longer kept)
          h.psn = Q.aexec[u(0, Q.aexec.size() - 1 - kMaxRd)];
        else if (chance(rng_, 0.1))  // at a PSN that was no atomic, mostly
          h.psn = (Q.ppsn - static_cast<uint32_t>(u(1, 6))) & kM24;
        return;
      }
      if (r >= 25 || chance(rng_, 0.35)) {
        read_req(0.1);
        return;
      }
      h.opcode = static_cast<uint8_t>(u(wire::kSendFirst, wire::kSendOnlyImm));
      h.ack_req = chance(rng_, 0.5);
      p.pay.resize(u(0, 100));
      for (auto& b : p.pay) b = static_cast<uint8_t>(rng_());
      return;
    }
    if (r < 45) Q.ppsn = (Q.ppsn + static_cast<uint32_t>(u(1, 3))) & kM24;  // packets lost: a gap
    h.psn = Q.ppsn;
    unsigned n = 0;
    if (r >= 45 && r < 55) {  // a bad opcode sequence
      const unsigned b = static_cast<unsigned>(u(0, 7));
      if (Q.pin) h.opcode = b == 0 ? wire::kSendOnly : b == 1 ? wire::kWriteOnly : b < 4 ? wire::kReadReq : b >= 6 ? wire::kCmpSwap : Q.pwr ? wire::kSendMiddle : wire::kWriteMiddle;
      else h.opcode = b < 2 ? wire::kSendMiddle : wire::kWriteMiddle;
      n = static_cast<unsigned>(u(0, 64));
      if (h.opcode == wire::kReadReq) {
        read_req(0.04);
        n = 0;
      } else if (h.opcode == wire::kCmpSwap) {  // an atomic inside a message
        atomic_req(Q, h);
        n = 0;
      }
      advance = false;
    } else if (!Q.pin && (Q.aw_pend || Q.astreak > 0 || (Q.rburst == 0 && chance(rng_, 0.06)))) {
      // An atomic request (right after a WRITE that covered its word, if there was one); now and
      // then a streak of good ones (a QP that executes many: its old results leave the table).
      if (Q.astreak > 0) {
        if (--Q.astreak == 0) Q.adup = chance(rng_, 0.5);
      } else if (!Q.aw_pend && chance(rng_, 0.1)) Q.astreak = static_cast<unsigned>(u(4, 10));
      atomic_req(Q, h, Q.aw_pend, Q.astreak > 0);
      if (Q.aw_pend) cov_.hit("atom_after_write_sent");
      Q.aw_pend = false;
    } else if (!Q.pin && (Q.rburst > 0 || chance(rng_, 0.1))) {
      // An RDMA READ request (now and then a burst of them on this QP: its jobs pile up).
      if (Q.rburst > 0) --Q.rburst;
      else if (chance(rng_, 0.4)) {
        Q.rburst = static_cast<unsigned>(u(3, 8));
        burst_q_ = q;
      }
      if (chance(rng_, 0.15)) atomic_req(Q, h);  // (atomics and READs share the QP's jobs)
      else adv = read_req(0.04);
    } else if (!Q.pin) {
      // A new message: its length in packets and bytes.
      unsigned np = chance(rng_, 0.55) ? 1 : static_cast<unsigned>(u(2, k.max_msg_pkts));
      unsigned lastb = np == 1 ? (chance(rng_, 0.08) ? 0 : static_cast<unsigned>(u(1, Q.pmtu)))
                               : static_cast<unsigned>(u(1, Q.pmtu));
      Q.pwr = chance(rng_, 0.3);
      // Sometimes exactly the capacity of the receive WQE it will take, or one byte more.
      if (!Q.pwr && cfg_get(Q, kCfSrq) == kNoSrq && Q.ci != Q.pi && chance(rng_, 0.15)) {
        const Wqe& w = Q.ring[Q.ci & (Q.ring.size() - 1)];
        Msg m;
        check_sges(m, w.sge.data(), w.nsge, static_cast<uint32_t>(cfg_get(Q, kCfPd)));
        const uint64_t total = m.cap + (chance(rng_, 0.4) ? 1 : 0);
        if (!m.bad && total <= uint64_t(k.max_msg_pkts) * Q.pmtu) {
          np = total == 0 ? 1 : static_cast<unsigned>((total + Q.pmtu - 1) / Q.pmtu);
          lastb = static_cast<unsigned>(total - uint64_t(np - 1) * Q.pmtu);
        }
      }
      if (Q.pwr) {  // an RDMA WRITE: its RETH, usually right, sometimes a byte off or a bad range
        const uint64_t total = uint64_t(np - 1) * Q.pmtu + lastb;
        const unsigned r2 = static_cast<unsigned>(u(0, 99));
        h.reth_len = static_cast<uint32_t>(r2 < 4 ? total + 1 : (r2 < 8 && total > 0) ? total - 1 : total);
        const Sge rs = make_rsge(static_cast<uint32_t>(cfg_get(Q, kCfPd)), h.reth_len, 0.1);
        h.reth_va = rs.addr;
        h.reth_rkey = rs.key;
        // Now and then over an atomic target, which the next packet is an atomic to (its read must
        // wait for these bytes to be written).
        const int i = chance(rng_, 0.2) ? find_mr(static_cast<uint32_t>(cfg_get(Q, kCfPd)), true,
                                                  hw::access::REMOTE_WRITE | hw::access::REMOTE_ATOMIC)
                                        : -1;
        if (i >= 0 && h.reth_len < mr_[i].len) {
          const Mr& m = mr_[i];
          const uint64_t word = pool_[i][u(0, pool_[i].size() - 1)];
          const uint64_t len = h.reth_len;
          uint64_t va = len >= 8 ? word - u(0, len - 8) : word + u(0, 8 - len);
          va = std::clamp(va, m.va, m.va + m.len - len);
          h.reth_va = va;
          h.reth_rkey = m.key;
          Q.aw_pend = true;
          Q.aw_va = word;
          Q.aw_key = m.key;
        }
      }
      if (np == 1) {
        h.opcode = Q.pwr ? (chance(rng_, 0.3) ? wire::kWriteOnlyImm : wire::kWriteOnly)
                         : (chance(rng_, 0.3) ? wire::kSendOnlyImm : wire::kSendOnly);
        n = lastb;
        if (Q.aw_pend) aw_q_ = static_cast<int>(q);
      } else {
        h.opcode = Q.pwr ? wire::kWriteFirst : wire::kSendFirst;
        n = Q.pmtu;
        Q.pin = true;
        Q.prem = np - 1;
        Q.plast = lastb;
      }
      // On a TM-SRQ, a TMH up front.
      const uint16_t sn = static_cast<uint16_t>(cfg_get(Q, kCfSrq));
      if (!Q.pwr && sn < kSrq && srq_[sn].tm && n >= kTmh) tmh_ = true;
    } else if (Q.prem == 1) {
      h.opcode = Q.pwr ? (chance(rng_, 0.3) ? wire::kWriteLastImm : wire::kWriteLast)
                       : (chance(rng_, 0.3) ? wire::kSendLastImm : wire::kSendLast);
      n = Q.plast;
      Q.pin = false;
      Q.prem = 0;
      if (Q.aw_pend) aw_q_ = static_cast<int>(q);
    } else {
      h.opcode = Q.pwr ? wire::kWriteMiddle : wire::kSendMiddle;
      n = Q.pmtu;
      --Q.prem;
    }
    const bool lastp = h.opcode == wire::kSendLast || h.opcode == wire::kSendLastImm ||
                       h.opcode == wire::kSendOnly || h.opcode == wire::kSendOnlyImm || h.opcode == wire::kWriteLast ||
                       h.opcode == wire::kWriteLastImm || h.opcode == wire::kWriteOnly || h.opcode == wire::kWriteOnlyImm;
    if (h.opcode != wire::kReadReq) h.ack_req = chance(rng_, lastp ? 0.7 : 0.1);
    p.pay.resize(n);
    for (auto& b : p.pay) b = static_cast<uint8_t>(rng_());
    if (tmh_) {
      tmh_ = false;
      const unsigned o = static_cast<unsigned>(u(0, 9));
      p.pay[0] = o < 5 ? hw::tmh_op::EAGER : o < 7 ? hw::tmh_op::RNDV : o < 9 ? hw::tmh_op::NO_TAG : p.pay[0];
    }
    if (advance) Q.ppsn = (Q.ppsn + adv) & kM24;
  }

  // ---------------------------------------------------------------- host actions
  // Is QP q (or, for an SRQ, any QP on it) the subject of a header in flight or about to be offered?
  bool qp_near(unsigned q) const {
    if (busy_ && busy_q_ == q) return true;
    for (size_t i = 0; i < hq_.size() && i < 3; ++i)
      if (hq_[i].h.dest_qp == q) return true;
    return false;
  }
  bool srq_near(unsigned s) const {
    auto on = [&](uint32_t q) { return q < kNumQp && cfg_get(qp_[q], kCfSrq) == s; };
    if (busy_ && on(busy_q_)) return true;
    for (size_t i = 0; i < hq_.size() && i < 3; ++i)
      if (on(hq_[i].h.dest_qp)) return true;
    return false;
  }
  // One host action per cycle (doorbell, SET_QP to ERR, re-init, a kick), only when the scheduler
  // had room in the previous cycle.
  void host_action(const Knobs& k, bool traffic) {
    top_->db_valid_i = 0;
    top_->db_srq_i = 0;
    top_->db_idx_i = static_cast<uint32_t>(rng_() & 0xFFF);
    top_->db_pi_i = static_cast<uint32_t>(rng_() & 0xFFFF);
    top_->kick_i = 0;
    top_->init_rq_i = 0;
    top_->init_qp_i = static_cast<uint32_t>(u(0, kNumQp - 1));
    top_->init_psn_i = static_cast<uint32_t>(rng_() & kM24);
    if (kick_gap_ > 0) --kick_gap_;
    if (!db_ready_q_) return;
    // QP inits: when the engine is idle (no init pending) and nothing of the QP is near.
    if (!pending_inits_.empty()) {
      const unsigned q = pending_inits_.front();
      if (idle_q_ && !hdr_take_q_ && !qp_near(q) && kick_gap_ == 0) {
        pending_inits_.pop_front();
        init_qp(q);
      }
      return;
    }
    if (!traffic) return;
    if (kick_gap_ > 0) {
      // (kicks and inits a few cycles apart, as commands are)
    } else if (chance(rng_, 0.002)) {  // SET_QP to ERR (a command) mid-traffic
      const unsigned q = pick_qp(k);
      if (q >= hw::QPN_FIRST && can_recv(qp_[q].lstate) && !qp_near(q)) {
        if (qp_[q].held) cov_.hit("qp_set_err_mid_msg");
        to_err(q, false);
        cfg_set(qp_[q], kCfState, st(hw::QpState::ERR));
        top_->kick_i = 1;
        kick_qp(0, q);
        kick_gap_ = 4;
        return;
      }
    } else if (chance(rng_, 0.01)) {  // a QP in ERR whose flush is over comes back
      const unsigned q = pick_qp(k);
      const Qp& Q = qp_[q];
      // (and no READ job of it out: the engine's word starts at the READ engine's done count. In
      // tmnic_top every command stays busy until the READ engine has no job (tmnic_ctx quiet_i
      // includes !rdr_busy) and a QP in ERR or RESET takes no READ, so an init never meets a job of
      // its QP; one that did would leave the QP's count below the engine's, and every later READ of
      // the QP would be dropped as over MAX_RD_ATOM)
      if (q >= hw::QPN_FIRST && Q.lstate == st(hw::QpState::ERR) && Q.cqes.empty() && err_exp_.empty() && !qp_near(q) &&
          !rd_outstanding() && Q.rd_out == 0) {
        pending_inits_.push_back(q);
        reinit_.insert(q);
        return;
      }
    } else if (chance(rng_, 0.005)) {  // the send engine's error kick: a look at the QP, nothing more
      top_->kick_i = 2;
      kick_qp(1, static_cast<unsigned>(u(0, kNumQp - 1)));
      kick_gap_ = 4;
      return;
    }
    if (!chance(rng_, k.db)) return;
    if (chance(rng_, 0.75)) {  // receive queue: post 1..4 WQEs
      const unsigned q = chance(rng_, 0.05) ? static_cast<unsigned>(u(kNumQp, 4095)) : pick_qp(k);
      if (q >= kNumQp) {  // out of range: ignored
        top_->db_valid_i = 1;
        top_->db_idx_i = q;
        return;
      }
      Qp& Q = qp_[q];
      if (!Q.inited || qp_near(q) || cyc_ < Q.guard) return;
      const unsigned room = static_cast<unsigned>(Q.ring.size() - static_cast<uint16_t>(Q.pi - Q.ci));
      const unsigned n = std::min<unsigned>(room, static_cast<unsigned>(u(0, 4)));
      const uint32_t pd = static_cast<uint32_t>(cfg_get(Q, kCfPd));
      for (unsigned i = 0; i < n; ++i) {
        const Wqe w = make_wqe(pd);
        Q.ring[Q.pi & (Q.ring.size() - 1)] = w;
        store_wqe(rq_addr(Q, Q.pi), w);
        ++Q.pi;
      }
      top_->db_valid_i = 1;
      top_->db_idx_i = q;
      top_->db_pi_i = Q.pi;
      if (Q.lstate == st(hw::QpState::ERR)) extend_flush(q);
      cov_.hit("doorbell_rq");
    } else {
      const unsigned s = static_cast<unsigned>(u(0, kSrq - 2));
      Srq& S = srq_[s];
      if (srq_near(s)) return;
      const unsigned room = static_cast<unsigned>(S.ring.size() - static_cast<uint16_t>(S.pi - S.ci));
      const unsigned n = std::min<unsigned>(room, static_cast<unsigned>(u(1, 4)));
      for (unsigned i = 0; i < n; ++i) {
        const Wqe w = make_wqe(S.pd);
        S.ring[S.pi & (S.ring.size() - 1)] = w;
        store_wqe(srq_addr(S, S.pi), w);
        ++S.pi;
      }
      top_->db_valid_i = 1;
      top_->db_srq_i = 1;
      top_->db_idx_i = s;
      top_->db_pi_i = S.pi;
      cov_.hit("doorbell_srq");
    }
  }
  // SET_MR between packets: an MR invalidated (mostly one that a READ in progress or a held WRITE
  // uses), one made valid again, or none (the generation alone moves: a READ's list is checked
  // again and passes).
  void mr_change() {
    const unsigned r = static_cast<unsigned>(u(0, 99));
    std::vector<unsigned> c;
    if (r < 40) {
      for (unsigned q = 0; q < kNumQp; ++q) {
        const Qp& Q = qp_[q];
        if (Q.acc_v && !Q.rds.empty())
          for (unsigned i = 0; i < std::min(Q.rds.front().w.nsge, kNsge); ++i)
            c.push_back((Q.rds.front().w.sge[i].key >> hw::MR_KEY_SHIFT) % kNumMr);
        if (Q.held && Q.wr) c.push_back((Q.wkey >> hw::MR_KEY_SHIFT) % kNumMr);
      }
      if (!c.empty()) mr_[c[u(0, c.size() - 1)]].valid = false;
    } else if (r < 85) {
      for (unsigned i = 0; i < kNumMr; ++i)
        if (!mr_[i].valid) c.push_back(i);
      if (!c.empty()) mr_[c[u(0, c.size() - 1)]].valid = true;
    } else if (r < 90) {
      mr_[u(0, kNumMr - 1)].valid = false;
    }
    ++mr_gen_;
    cov_.hit("mr_changed");
  }
  void kick_qp(unsigned k, unsigned q) { set_sig_bits(top_->kick_qp_i, k * kQpW, kQpW, q); }
  bool rd_outstanding() const {
    for (auto& [a, n] : rd_exp_)
      if (n) return true;
    return false;
  }
  void init_qp(unsigned q) {
    Qp& Q = qp_[q];
    if (reinit_.count(q)) {
      reinit_.erase(q);
      configure(Q);
      // (now and then SQE or SQD, as at the start: errors, atomic ones too, take those QPs to ERR)
      const unsigned r = static_cast<unsigned>(u(0, 99));
      Q.lstate = r < 72 ? st(hw::QpState::RTS) : r < 92 ? st(hw::QpState::RTR)
                 : r < 96 ? st(hw::QpState::SQE) : st(hw::QpState::SQD);
      cfg_set(Q, kCfState, Q.lstate);
      cov_.hit("qp_reinit");
    }
    uint32_t psn = static_cast<uint32_t>(chance(rng_, 0.3) ? u(kM24 - 8, kM24) : (rng_() & kM24));
    // (now and then right after where the QP was, so that the atomics it executed before are behind
    // the new expected PSN: their duplicates must not find the results the init cleared)
    Q.aprev.clear();
    if (!Q.aexec.empty() && chance(rng_, 0.5)) {
      psn = (Q.epsn + static_cast<uint32_t>(u(0, 2))) & kM24;
      Q.aprev.assign(Q.aexec.end() - std::min<size_t>(Q.aexec.size(), kMaxRd), Q.aexec.end());
    }
    Q.bdup = !Q.aprev.empty();
    if (Q.bdup) bd_q_ = static_cast<int>(q);
    Q.inited = true;
    Q.epsn = Q.ppsn = psn;
    Q.msn = 0;
    Q.ci = Q.pi = Q.fl_pi = 0;
    Q.held = Q.nak_sent = Q.pin = Q.resync = false;
    Q.acc_v = false;
    Q.rgen = 0;
    Q.rburst = 0;
    Q.ares = {};  // (an init clears the saved atomic results)
    Q.ap = 0;
    Q.aexec.clear();
    Q.ahist.clear();
    Q.aw_pend = false;
    Q.astreak = 0;
    Q.adup = false;
    if (Q.rd_out != 0) fail("QP ", q, " initialised with READ jobs out");
    Q.guard = cyc_ + 4;
    init_cyc_ = cyc_;
    top_->init_rq_i = 1;
    top_->init_qp_i = q;
    top_->init_psn_i = psn;
    top_->kick_i = 1;  // SET_QP kicks the QP as well
    kick_qp(0, q);
    kick_gap_ = 4;
  }

  // ---------------------------------------------------------------- one cycle
  void drive_cfg() {
    // Registered reads: each word is the one its index named in the previous cycle.
    const Qp& Q = qp_[qp_idx_q_];
    pack_view(kRspView, Q.cfg.data(), top_->qp_rd_i.data(), 0);
    top_->cqe_src_qp_i = static_cast<uint32_t>(cfg_get(qp_[cqe_idx_q_], kCfDestQpn));
    const Mr& m = mr_[mr_idx_q_];
    pack_mr(m, top_->mr_rd_i.data());
    const Srq& c = srq_[srq_idx_q_];
    auto& w = top_->srq_rd_i;
    for (unsigned i = 0; i < 7; ++i) w[i] = static_cast<uint32_t>(rng_());  // ops ring and tag_num: noise
    w[6] &= (1u << (202 - 192)) - 1;
    set_sig_bits(w, 201, 1, c.valid);
    set_sig_bits(w, 137, 64, c.base);
    set_sig_bits(w, 133, 4, c.log);
    set_sig_bits(w, 117, 16, c.pd);
    set_sig_bits(w, 116, 1, c.tm);
    set_sig_bits(w, 32, 16, c.cq);
    set_sig_bits(w, 16, 16, c.tag_base);
    const Sge& t = tb_[tb_raddr_q_];
    set_sig_bits(top_->tb_rdata_i, 0, 64, t.addr);
    set_sig_bits(top_->tb_rdata_i, 64, 32, t.len);
    set_sig_bits(top_->tb_rdata_i, 96, 32, t.key);
  }

  void step(const Knobs& k, bool traffic) {
    // ---------------- drive
    drive_cfg();
    top_->srq_reset_i = 0;
    top_->srq_reset_idx_i = 0;
    // An ADD still on its way to the tag buffer: sometimes on the handle just matched (the buffer
    // read waits for it; the tag buffer here never changes, so the outcome does not).
    if (add_pend_ > 0) {
      --add_pend_;
    } else if (chance(rng_, 0.01)) {
      add_pend_ = static_cast<unsigned>(u(1, 12));
      add_pend_h_ = chance(rng_, 0.7) ? last_hit_ : static_cast<unsigned>(u(0, kEntries - 1));
    }
    top_->add_pend_i = add_pend_ > 0;
    top_->add_pend_handle_i = add_pend_ > 0 ? add_pend_h_ : static_cast<unsigned>(u(0, kEntries - 1));
    if (add_pend_ > 0 && add_pend_h_ == last_hit_ && !lk_rsp_.empty() && lk_rsp_.front().hit) cov_.hit("add_pending_on_hit");
    if (traffic && hq_.size() < 3 && pending_inits_.empty()) gen_packet(k);  // (a re-init waits for quiet)
    if (!hdr_valid_ && !hq_.empty() && !chance_nz(rng_, k.pkt_gap)) {
      hdr_valid_ = true;
      uint32_t w[wire::kRoceHdrWords];
      wire::pack_hdr(hq_.front().h, w);
      for (unsigned i = 0; i < wire::kRoceHdrWords; ++i) top_->s_hdr_i[i] = w[i];
    }
    top_->s_hdr_valid_i = hdr_valid_;
    pay_.set_gap_prob(k.pay_gap);
    pay_.drive(top_->s_pay_tdata_i, top_->s_pay_tkeep_i, top_->s_pay_tlast_i, top_->s_pay_tvalid_i);
    host_action(k, traffic);
    // query: a QP whose PSN the model knows, when nothing is in flight
    query_chk_ = false;
    if (idle_q_ && !hdr_take_q_ && cyc_ > init_cyc_ + 3 && chance(rng_, 0.3)) {
      const unsigned q = static_cast<unsigned>(u(0, kNumQp - 1));
      if (qp_[q].inited) {
        query_chk_ = true;
        query_psn_ = qp_[q].epsn;
        query_qp_ = q;
      }
    }
    top_->query_qp_i = query_chk_ ? query_qp_ : static_cast<unsigned>(u(0, kNumQp - 1));
    // DMA read responses (in order)
    bool beat = false;
    const bool rd_beat = !rd_q_.empty() && cyc_ >= rd_q_.front().at && !chance_nz(rng_, k.pay_gap);
    if (rd_beat && rd_q_.front().atom) {
      // An atomic's 8 bytes: one beat, its lanes bus-aligned (tmnic_dma_rd: lane i is byte
      // rsp_off + i of the request), the word as host memory has it now; the other lanes noise.
      const RdRsp& r = rd_q_.front();
      const uint64_t base = r.addr & ~uint64_t(kBytes - 1);
      const auto& w = hmem_.at(r.addr);
      beat = true;
      for (unsigned i = 0; i < kBytes; ++i)
        set_byte(top_->rsp_data_i.data(), i,
                 base + i >= r.addr && base + i < r.addr + kAtomLen ? w[base + i - r.addr] : static_cast<uint8_t>(rng_()));
      top_->rsp_off_i = static_cast<int16_t>(static_cast<int64_t>(base - r.addr)) & 0x3FFF;
      top_->rsp_last_i = 1;
    } else if (rd_beat) {
      RdRsp& r = rd_q_.front();
      const auto& b = mem_.at(r.addr);
      beat = true;
      for (unsigned i = 0; i < kBytes; ++i) set_byte(top_->rsp_data_i.data(), i, b[r.k * kBytes + i]);
      top_->rsp_off_i = static_cast<int16_t>(r.k * kBytes);
      top_->rsp_last_i = r.k + 1 == kStride / kBytes;
    } else {
      for (unsigned i = 0; i < kBytes / 4; ++i) top_->rsp_data_i[i] = static_cast<uint32_t>(rng_());
      top_->rsp_last_i = 0;
    }
    top_->rsp_valid_i = beat;
    top_->rd_ready_i = chance(rng_, k.rdy_rd);
    // Lookup port
    top_->lk_ready_i = chance(rng_, k.rdy_lk) && lk_rsp_.empty();
    const bool lk_rsp = !lk_rsp_.empty() && cyc_ >= lk_at_;
    top_->lk_rsp_valid_i = lk_rsp;
    top_->lk_rsp_hit_i = lk_rsp && lk_rsp_.front().hit;
    top_->lk_rsp_unexp_i = lk_rsp && lk_rsp_.front().unexp;
    top_->lk_rsp_blocked_i = lk_rsp && !lk_rsp_.front().hit && !lk_rsp_.front().unexp && chance(rng_, 0.5);
    top_->lk_rsp_handle_i = lk_rsp && lk_rsp_.front().hit ? lk_rsp_.front().handle : static_cast<unsigned>(u(0, kEntries - 1));
    // DMA write client: a pull of the current request, the next request only after its last pull
    bool pull = false;
    int pull_off = 0;
    if (wr_cur_ && wr_cur_->next_off < static_cast<int>(wr_cur_->len) && chance(rng_, k.pull)) {
      pull = true;
      pull_off = wr_cur_->next_off;
    }
    top_->wr_data_req_i = pull;
    top_->wr_data_off_i = static_cast<uint16_t>(pull_off) & 0x3FFF;
    const bool cur_done = !wr_cur_ || wr_cur_->next_off + (pull ? static_cast<int>(kBytes) : 0) >= static_cast<int>(wr_cur_->len);
    top_->wr_ready_i = cur_done && chance(rng_, k.rdy_wr);
    const bool done = !done_at_.empty() && cyc_ >= done_at_.front();
    top_->wr_done_i = done;
    top_->ack_ready_i = chance(rng_, k.rdy_ack);
    // The READ engine (tmnic_rd_resp's part): jobs taken at random, finished in order after a random
    // delay (now and then a long stall), its per-QP done count (mod 8) read one cycle after
    // rdone_raddr_o, write-first (a count incremented in the cycle of the read is seen).
    if (rd_stall_ > 0) --rd_stall_;
    else if (chance(rng_, 0.001)) rd_stall_ = static_cast<unsigned>(u(100, 1500));
    if (rd_stall_ == 0 && !fin_q_.empty() && cyc_ >= fin_q_.front().second) {
      const unsigned q = fin_q_.front().first;
      fin_q_.pop_front();
      done_cnt_[q] = (done_cnt_[q] + 1) & 7;
      if (qp_[q].rd_out == 0) return fail("READ job of QP ", q, " finished, none out");
      --qp_[q].rd_out;
      qp_fin_cyc_[q] = cyc_;
    }
    top_->job_ready_i = chance(rng_, k.rdy_ack);
    top_->rdone_rdata_i = rdone_q_;
    // The completer's verdicts on READ responses (one per ACK_RR event, some cycles after it)
    top_->vr_valid_i = 0;
    top_->vr_ok_i = chance(rng_, 0.5);
    top_->vr_idx_i = static_cast<uint16_t>(rng_());
    if (!vr_q_.empty() && cyc_ >= vr_q_.front().at) {
      top_->vr_valid_i = 1;
      top_->vr_ok_i = vr_q_.front().ok;
      top_->vr_idx_i = vr_q_.front().idx;
      vr_q_.pop_front();
    }
    // The MR table changes (SET_MR; the context's generation counts it) only while the engine is
    // quiet, between packets.
    if (traffic && idle_q_ && !hdr_take_q_ && pending_inits_.empty() && chance(rng_, 0.04)) mr_change();
    top_->mr_gen_i = mr_gen_;
    // ACK/NAK events: random ready, and in some phases long stalls (the responder waits meanwhile)
    if (tx_stall_ > 0) --tx_stall_;
    else if (chance_nz(rng_, k.tx_stall)) tx_stall_ = static_cast<unsigned>(u(50, 400));
    top_->ev_ready_i = tx_stall_ == 0 && chance(rng_, k.rdy_tx);
    top_->cqe_ready_i = chance(rng_, k.rdy_cqe);
    top_->eval();

    // ---------------- sample and check
    sample(k, pull, pull_off, beat, lk_rsp, done);
    if (failed()) return;
    clock_tick(*top_, *ctx_);
    ++cyc_;
  }

  void sample(const Knobs& k, bool pull, int pull_off, bool beat, bool lk_rsp, bool done) {
    // Packet headers and payload
    const bool hdr_take = hdr_valid_ && top_->s_hdr_ready_o;
    if (top_->s_hdr_ready_o) busy_ = false;
    if (hdr_take) {
      const Pkt p = std::move(hq_.front());
      hq_.pop_front();
      hdr_valid_ = false;
      busy_ = true;
      busy_q_ = p.h.dest_qp;
      last_q_ = p.h.dest_qp;
      last_op_ = p.h.opcode;
      last_psn_ = p.h.psn;
      last_len_ = static_cast<unsigned>(p.pay.size());
      if (busy_q_ < kNumQp) {
        busy_qps_.insert(busy_q_);
      }
      accept(p);
      if (busy_qps_.size() > 64) busy_qps_.clear();
    }
    pay_.handshake(top_->s_pay_tready_o);
    // ACKs passed to the send side
    check_stable(ack_st_, top_->ack_valid_o, top_->ack_ready_i,
                 {top_->ack_qp_o, top_->ack_aeth_o, top_->ack_psn_o, top_->ack_kind_o, top_->ack_first_o, top_->ack_last_o,
                  top_->ack_atom_o},
                 "ACK event", "stall_ack");
    if (top_->ack_valid_o && top_->ack_ready_i) {
      if (ack_exp_.empty())
        return fail("ACK event of kind ", unsigned(top_->ack_kind_o), " for QP ", unsigned(top_->ack_qp_o), " not expected");
      const AckExp e = ack_exp_.front();
      ack_exp_.pop_front();
      // (the AETH is the packet's for ACK_PKT and ACK_RR, the status for ACK_RDERR; ACK_RDDONE's is
      // not used; FIRST/LAST only for ACK_RR)
      const bool aeth_ok = e.kind == kAckRdDone || top_->ack_aeth_o == e.aeth;
      const bool fl_ok = e.kind != kAckRr || (bool(top_->ack_first_o) == e.first && bool(top_->ack_last_o) == e.last &&
                                              bool(top_->ack_atom_o) == e.atom);
      if (top_->ack_kind_o != e.kind || top_->ack_qp_o != e.q || !aeth_ok || top_->ack_psn_o != e.psn || !fl_ok)
        return fail("ACK event {kind ", unsigned(top_->ack_kind_o), " qp ", unsigned(top_->ack_qp_o), " aeth 0x", hex(top_->ack_aeth_o),
                    " psn 0x", hex(top_->ack_psn_o), " first ", int(top_->ack_first_o), " last ", int(top_->ack_last_o),
                    " atom ", int(top_->ack_atom_o), "}, model {", e.kind, " ", e.q, " 0x", hex(e.aeth), " 0x", hex(e.psn),
                    " ", e.first, " ", e.last, " ", e.atom, "}");
      if (e.kind == kAckRr) vr_q_.push_back({cyc_ + 1 + u(0, k.max_lat), e.ok, e.idx});
    }
    // READ jobs: each one the model expects, in order, every field
    check_stable(job_st_, top_->job_valid_o, top_->job_ready_i,
                 {top_->job_qp_o, top_->job_iova_o, top_->job_len_o, top_->job_psn_o, top_->job_msn_o,
                  top_->job_pmtu_log_o, top_->job_atom_o}, "READ job", "stall_job");
    if (top_->job_valid_o && !top_->job_ready_i && top_->job_atom_o) cov_.hit("atom_job_stalled");
    // (an executed atomic's result goes out once its write is done)
    if (top_->job_valid_o && top_->job_atom_o && !job_exp_.empty() && job_exp_.front().exec && !at_exp_.empty())
      return fail("atomic job of QP ", unsigned(top_->job_qp_o), " psn 0x", hex(top_->job_psn_o),
                  " offered before its write is done");
    if (top_->job_valid_o && top_->job_ready_i) {
      if (job_exp_.empty()) return fail("READ job for QP ", unsigned(top_->job_qp_o), " not expected");
      const Job j = job_exp_.front();
      job_exp_.pop_front();
      if (top_->job_qp_o != j.q || top_->job_iova_o != j.iova || top_->job_len_o != j.len || top_->job_psn_o != j.psn ||
          top_->job_msn_o != j.msn || top_->job_pmtu_log_o != j.pmtu_log || bool(top_->job_atom_o) != j.atom)
        return fail("READ job {qp ", unsigned(top_->job_qp_o), " iova 0x", hex(top_->job_iova_o), " len ", top_->job_len_o,
                    " psn 0x", hex(top_->job_psn_o), " msn 0x", hex(top_->job_msn_o), " pmtu_log ",
                    unsigned(top_->job_pmtu_log_o), " atom ", int(top_->job_atom_o), "}, model {", j.q, " 0x", hex(j.iova),
                    " ", j.len, " 0x", hex(j.psn), " 0x", hex(j.msn), " ", j.pmtu_log, " ", j.atom, "}");
      fin_last_ = std::max(fin_last_ + 1, cyc_ + 1 + u(0, chance(rng_, 0.3) ? 600 : 60));
      fin_q_.push_back({j.q, fin_last_});
    }
    rdone_q_ = done_cnt_[top_->rdone_raddr_o % kNumQp];
    // ACK/NAK events to the ACK generator
    check_stable(ev_st_, top_->ev_valid_o, top_->ev_ready_i,
                 {top_->ev_qp_o, top_->ev_syn_o, top_->ev_msn_o, top_->ev_psn_o}, "ACK/NAK event", "stall_ev");
    if (top_->ev_valid_o && top_->ev_ready_i) ack_nak_event();
    // Completions
    {
      std::vector<uint64_t> v(top_->cqe_o.data(), top_->cqe_o.data() + kCqeReqBits / 32);
      check_stable(cqe_st_, top_->cqe_valid_o, top_->cqe_ready_i, v, "completion", "stall_cqe");
    }
    if (top_->cqe_valid_o && top_->cqe_ready_i) {
      const CqeReq c = unpack_cqe_req(top_->cqe_o.data(), 0);
      if (c.qp_num >= kNumQp || qp_[c.qp_num].cqes.empty())
        return fail("completion for QP ", c.qp_num, " (wr_id 0x", hex(c.wr_id), " status ", unsigned(c.status), ") not expected");
      const CqeReq w = qp_[c.qp_num].cqes.front();
      qp_[c.qp_num].cqes.pop_front();
      if (!(c == w))
        return fail("completion of QP ", c.qp_num, ": {cq ", c.cq, " wr_id 0x", hex(c.wr_id), " len ", c.byte_len, " imm 0x",
                    hex(c.imm), " src_qp 0x", hex(c.src_qp), " flags 0x", hex(c.wc_flags), " idx ", c.wqe_idx, " op ",
                    unsigned(c.opcode), " status ", unsigned(c.status), " tag 0x", hex(c.tm_tag), " ctx 0x",
                    hex(c.tm_app_ctx), " handle ", c.tm_handle, "}, model {", w.cq, " 0x", hex(w.wr_id), " ", w.byte_len,
                    " 0x", hex(w.imm), " 0x", hex(w.src_qp), " 0x", hex(w.wc_flags), " ", w.wqe_idx, " ",
                    unsigned(w.opcode), " ", unsigned(w.status), " 0x", hex(w.tm_tag), " 0x", hex(w.tm_app_ctx), " ",
                    w.tm_handle, "}");
    }
    // Engine errors (the context sets the QP to ERR for the next read)
    if (top_->err_o) {
      if (err_exp_.empty() || err_exp_.front().first != top_->err_qp_o)
        return fail("err_o for QP ", unsigned(top_->err_qp_o), ", model ", err_exp_.empty() ? std::string("none") : std::to_string(err_exp_.front().first));
      if (err_exp_.front().second >= 0 && unsigned(top_->err_kind_o) != unsigned(err_exp_.front().second))
        return fail("err_o for QP ", unsigned(top_->err_qp_o), " of kind ", unsigned(top_->err_kind_o), ", model ", err_exp_.front().second);
      err_exp_.pop_front();
      cfg_set(qp_[top_->err_qp_o], kCfState, st(hw::QpState::ERR));
    }
    // Receive WQE reads
    check_stable(rd_st_, top_->rd_valid_o, top_->rd_ready_i, {top_->rd_addr_o, top_->rd_len_o}, "WQE read", "stall_rd");
    if (beat) {
      if (rd_q_.front().atom || ++rd_q_.front().k == kStride / kBytes) rd_q_.pop_front();
    }
    // An atomic's read (8 bytes): the next executed atomic's, at its IOVA, only once every byte the
    // engine wrote before it is requested and every write request is done (wr_done_i; a done in
    // this very cycle is too late).
    if (top_->rd_valid_o && top_->rd_len_o == kAtomLen) {
      AtomDma* a = at_exp_.empty() ? nullptr : &at_exp_.front();
      if (!a || a->stage != AtomDma::kRead || top_->rd_addr_o != a->iova)
        return fail("DMA read of 0x", hex(top_->rd_addr_o), "+", top_->rd_len_o, " not expected (model: ",
                    !a ? std::string("no atomic") : "atomic of QP " + std::to_string(a->q) + " psn 0x" + hex(a->psn) +
                    " at 0x" + hex(a->iova) + (a->stage != AtomDma::kRead ? " already read" : ""), ")");
      if (wr_pop_ != a->wpos || n_wr_req_ != n_wr_done_)
        return fail("atomic read of QP ", a->q, " psn 0x", hex(a->psn), " at 0x", hex(a->iova), " issued with ",
                    a->wpos - std::min(a->wpos, wr_pop_), " earlier bytes not requested and ", n_wr_req_ - n_wr_done_,
                    " earlier write requests not done");
      if (top_->rd_ready_i) {
        a->stage = AtomDma::kWrite;
        if (a->waited) cov_.hit("atom_read_waited");
        RdRsp rr;
        rr.addr = a->iova;
        rr.at = cyc_ + 1 + u(0, k.max_lat);
        rr.atom = true;
        rd_q_.push_back(rr);
      }
    } else if (top_->rd_valid_o && top_->rd_ready_i) {
      auto it = rd_exp_.find(top_->rd_addr_o);
      if (it == rd_exp_.end() || it->second == 0 || top_->rd_len_o != kStride)
        return fail("WQE read of 0x", hex(top_->rd_addr_o), "+", top_->rd_len_o, " not expected");
      --it->second;
      rd_q_.push_back({top_->rd_addr_o, cyc_ + 1 + u(0, k.max_lat), 0});
    }
    // Lookups and the tag buffer
    check_stable(lk_st_, top_->lk_valid_o, top_->lk_ready_i,
                 {top_->lk_tag_o, top_->lk_commit_miss_o, top_->lk_srq_o}, "lookup", "stall_lk");
    if (lk_rsp) lk_rsp_.pop_front();
    if (top_->lk_valid_o && top_->lk_ready_i) {
      if (lk_exp_.empty()) return fail("lookup not expected");
      const Lookup l = lk_exp_.front();
      lk_exp_.pop_front();
      if (top_->lk_tag_o != l.tag || bool(top_->lk_commit_miss_o) != l.commit_miss || top_->lk_srq_o != l.srq)
        return fail("lookup {tag 0x", hex(top_->lk_tag_o), " commit_miss ", int(top_->lk_commit_miss_o), " srq ",
                    int(top_->lk_srq_o), "}, model {0x", hex(l.tag), " ", l.commit_miss, " ", l.srq, "}");
      lk_rsp_.push_back(l);
      if (l.hit) last_hit_ = l.handle;
      lk_at_ = cyc_ + 1 + u(0, k.max_lat);
    }
    if (top_->tb_re_o) tb_raddr_q_ = top_->tb_raddr_o;
    // DMA writes: the request's bytes against the scatter stream, the pulled data three cycles later
    check_stable(wr_st_, top_->wr_valid_o, top_->wr_ready_i, {top_->wr_addr_o, top_->wr_len_o}, "DMA write", "stall_wr");
    if (!pulls_.empty() && pulls_.front().due == cyc_) {
      const Pull& pl = pulls_.front();
      for (unsigned i = 0; i < kBytes; ++i) {
        const int o = pl.off + static_cast<int>(i);
        // (an atomic's value is in every 8-byte lane group: the engine's documented data, whatever
        // the strobes take)
        if (pl.r->atom && byte_of(top_->wr_data_o.data(), i) != pl.r->data[i % kAtomLen])
          return fail("atomic write to 0x", hex(pl.r->addr), ": data lane ", i, " is 0x", hex(byte_of(top_->wr_data_o.data(), i)),
                      ", model (the value in every lane group) 0x", hex(pl.r->data[i % kAtomLen]));
        if (o < 0 || o >= static_cast<int>(pl.r->len)) continue;
        const uint8_t b = byte_of(top_->wr_data_o.data(), i);
        if (b != pl.r->data[o])
          return fail("DMA write to 0x", hex(pl.r->addr + o), " (request 0x", hex(pl.r->addr), "+", pl.r->len,
                      " byte ", o, "): 0x", hex(b), ", model 0x", hex(pl.r->data[o]));
      }
      pulls_.pop_front();
    }
    if (pull) {
      pulls_.push_back({cyc_ + kLat, wr_cur_, pull_off});
      wr_cur_->next_off += static_cast<int>(kBytes);
      if (wr_cur_->next_off >= static_cast<int>(wr_cur_->len)) {
        // (now and then a write whose completion is slow: what follows it waits, an atomic's read)
        done_last_ = std::max(done_last_ + 1, cyc_ + kLat + 1 + (chance(rng_, 0.02) ? u(30, 250) : u(0, 6)));
        done_at_.push_back(done_last_);
        done_req_.push_back(wr_cur_);
      }
    }
    if (done) {
      // The write is in host memory now; an atomic's write done: the atomic is over.
      const std::shared_ptr<WrReq> r = done_req_.front();
      done_at_.pop_front();
      done_req_.pop_front();
      host_write(*r);
      ++n_wr_done_;
      wr_done_pos_ += r->len;
      if (r->atom) {
        if (at_exp_.empty() || at_exp_.front().stage != AtomDma::kDone) return fail("atomic write done, none expected");
        at_exp_.pop_front();
      }
    }
    if (top_->wr_valid_o && top_->wr_ready_i) {
      auto r = std::make_shared<WrReq>();
      r->addr = top_->wr_addr_o;
      r->len = top_->wr_len_o;
      // An executed atomic's bytes in the stream: exactly its 8 bytes at its IOVA in one request,
      // after its read.
      for (AtomDma& a : at_exp_)
        if (a.wpos >= wr_pop_ && a.wpos < wr_pop_ + r->len) {
          if (a.stage != AtomDma::kWrite || a.wpos != wr_pop_ || r->addr != a.iova || r->len != kAtomLen || rd_q_.size())
            return fail("DMA write 0x", hex(r->addr), "+", r->len, ": the atomic of QP ", a.q, " psn 0x", hex(a.psn),
                        " at 0x", hex(a.iova), a.stage == AtomDma::kRead ? " not read yet" : !rd_q_.empty() ? " still being read" : "",
                        " (model: one request of 8 bytes at its IOVA, stream byte ", a.wpos, ", this request starts at ",
                        wr_pop_, ")");
          a.stage = AtomDma::kDone;
          r->atom = true;
        }
      ++n_wr_req_;
      // (at most a packet's payload: 4096 bytes, a UD datagram's with its GRH in front)
      if (r->len == 0 || r->len > 4096 + hw::GRH_LEN) return fail("DMA write of ", r->len, " bytes to 0x", hex(r->addr), " (last header: QP ", last_q_, " opcode 0x", hex(last_op_), " psn 0x", hex(last_psn_), " ", last_len_, " bytes; model next byte at 0x", wr_exp_.empty() ? std::string("-") : hex(wr_exp_.front().first), ")");
      for (unsigned i = 0; i < r->len; ++i) {
        if (wr_exp_.empty() || wr_exp_.front().first != r->addr + i)
          return fail("DMA write 0x", hex(r->addr), "+", r->len, ": byte ", i, " lands at 0x", hex(r->addr + i), ", model ",
                      wr_exp_.empty() ? std::string("no more bytes") : "0x" + hex(wr_exp_.front().first));
        r->data.push_back(wr_exp_.front().second);
        wr_exp_.pop_front();
        ++wr_pop_;
      }
      r->next_off = -static_cast<int>(r->addr % kBytes);
      wr_cur_ = r;
    }
    // Statistics pulses
    n_rtl_[0] += top_->drop_qp_o;
    n_rtl_[1] += top_->tx_ack_o;
    n_rtl_[2] += top_->tx_rnr_o;
    n_rtl_[3] += top_->tx_nak_o;
    n_rtl_[4] += top_->dup_o;
    n_rtl_[5] += top_->psn_err_o;
    n_rtl_[6] += top_->prot_err_o;
    n_rtl_[7] += top_->drop_qkey_o;
    n_rtl_[8] += top_->ud_nowqe_o;
    // QUERY_QP
    if (query_chk_q_) {
      if (top_->query_psn_o != query_psn_q_)
        return fail("query_psn_o of QP ", query_qp_q_, ": 0x", hex(top_->query_psn_o), ", model 0x", hex(query_psn_q_));
      cov_.hit("query_psn");
    }
    query_chk_q_ = query_chk_;
    query_psn_q_ = query_psn_;
    query_qp_q_ = query_qp_;
    // The registered reads' indices, the flow control of the next cycle
    qp_idx_q_ = top_->qp_idx_o;
    cqe_idx_q_ = top_->cqe_qp_o;
    mr_idx_q_ = top_->mr_idx_o;
    srq_idx_q_ = top_->srq_idx_o;
    db_ready_q_ = top_->db_ready_o;
    idle_q_ = top_->idle_o;
    hdr_take_q_ = hdr_take;
  }

  // An ACK/NAK event taken by the ACK generator: its QP's next one in the model.
  void ack_nak_event() {
    const unsigned q = top_->ev_qp_o;
    if (q >= kNumQp) return fail("ACK/NAK event for QP ", q);
    Qp& Q = qp_[q];
    const Ev got{static_cast<uint8_t>(top_->ev_syn_o), top_->ev_msn_o & kM24, top_->ev_psn_o & kM24};
    if (Q.sent >= Q.evs.size())
      return fail("ACK/NAK event of QP ", q, " {syndrome 0x", hex(got.syn), " msn 0x", hex(got.msn), " psn 0x",
                  hex(got.psn), "} not expected");
    const Ev& e = Q.evs[Q.sent];
    if (!(got == e))
      return fail("ACK/NAK event of QP ", q, " {syndrome 0x", hex(got.syn), " msn 0x", hex(got.msn), " psn 0x",
                  hex(got.psn), "}, model {0x", hex(e.syn), " 0x", hex(e.msn), " 0x", hex(e.psn), "}");
    ++Q.sent;
    ++n_sent_;
  }

  void check_stable(std::vector<uint64_t>& held, bool valid, bool ready, std::vector<uint64_t> v, const char* what,
                    const char* cov) {
    if (!held.empty()) {
      if (!valid) return fail(what, " withdrawn while stalled");
      if (v != held) return fail(what, " changed while stalled");
    }
    held.clear();
    if (valid && !ready) {
      held = std::move(v);
      cov_.hit(cov);
    }
  }

  void drain(const Knobs& k) {
    Knobs d = k;
    d.rdy_cqe = std::max(d.rdy_cqe, 0.5);
    d.rdy_tx = std::max(d.rdy_tx, 0.5);
    d.tx_stall = 0;
    unsigned quiet = 0;
    for (uint64_t t = 0; t < 200000 && quiet < 50 && !failed(); ++t) {
      step(d, false);
      const bool exp_left = !wr_exp_.empty() || !ack_exp_.empty() || !lk_exp_.empty() || !err_exp_.empty() || !hq_.empty() ||
                            !pay_.idle() || !job_exp_.empty() || !vr_q_.empty() || !fin_q_.empty() || !at_exp_.empty();
      quiet = (top_->idle_o && !exp_left && pending_inits_.empty()) ? quiet + 1 : 0;
    }
    if (failed()) return;
    if (quiet < 50) return fail("no drain: idle_o ", int(top_->idle_o), ", ", hq_.size(), " headers, ", wr_exp_.size(),
                                " bytes to write, ", ack_exp_.size(), " ACKs to pass, ", lk_exp_.size(), " lookups, ",
                                job_exp_.size(), " READ jobs");
    for (unsigned q = 0; q < kNumQp; ++q) {
      const Qp& Q = qp_[q];
      if (!Q.cqes.empty())
        return fail("drained, QP ", q, " still expects ", Q.cqes.size(), " completions (first: wr_id 0x",
                    hex(Q.cqes.front().wr_id), " status ", unsigned(Q.cqes.front().status), ")");
      if (Q.rd_out != 0) return fail("drained, QP ", q, " still has ", Q.rd_out, " READ jobs out");
      if (Q.sent != Q.evs.size())
        return fail("drained, QP ", q, ": ", Q.evs.size() - Q.sent, " of its ACK/NAK events never sent (first {0x",
                    hex(Q.evs[Q.sent].syn), " ", hex(Q.evs[Q.sent].msn), " ", hex(Q.evs[Q.sent].psn), "})");
    }
    if (rd_outstanding()) return fail("drained with WQE reads never made");
    for (auto& Q : qp_) {
      Q.evs.clear();
      Q.sent = 0;
    }
    const uint64_t model[9] = {n_drop_, n_ack_, n_rnr_, n_nak_, n_dup_, n_psn_err_, n_prot_, n_qkey_, n_nowqe_};
    static const char* const names[9] = {"drop_qp", "tx_ack", "tx_rnr", "tx_nak", "dup", "psn_err", "prot_err",
                                         "drop_qkey", "ud_nowqe"};
    for (unsigned i = 0; i < 9; ++i)
      if (n_rtl_[i] != model[i]) return fail("statistics ", names[i], "_o pulsed ", n_rtl_[i], " times, model ", model[i]);
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rx_engine> top_;
  std::mt19937_64 rng_;
  std::mt19937_64 arng_;  // the atomics' part of the tables (the rest of a seed's tables as before atomics)
  Coverage& cov_;
  StreamSource pay_;
  uint64_t cyc_ = 0, msgs_ = 0, local_mac_ = 0;
  uint32_t local_ip_ = 0;
  bool failed_ = false;
  std::array<Mr, kNumMr> mr_{};
  std::array<Srq, kSrq> srq_{};
  std::array<Sge, kEntries> tb_{};
  std::array<Qp, kNumQp> qp_{};
  std::vector<unsigned> hot_;
  std::unordered_map<uint64_t, std::array<uint8_t, kStride>> mem_;
  std::map<uint64_t, unsigned> rd_exp_;
  std::deque<RdRsp> rd_q_;
  std::deque<AckExp> ack_exp_;
  std::deque<Job> job_exp_;
  std::deque<std::pair<unsigned, uint64_t>> fin_q_;  // jobs taken: QP, when its last packet goes
  std::array<unsigned, kNumQp> done_cnt_{};
  std::array<uint64_t, kNumQp> qp_fin_cyc_{};
  std::deque<Verdict> vr_q_;
  uint64_t fin_last_ = 0;
  unsigned rdone_q_ = 0, rd_stall_ = 0, burst_q_ = 0;
  uint32_t mr_gen_ = 0;
  std::deque<unsigned> pending_inits_;
  std::deque<std::pair<unsigned, int>> err_exp_;
  std::set<unsigned> reinit_, busy_qps_;
  std::deque<Lookup> lk_exp_, lk_rsp_;
  uint64_t lk_at_ = 0;
  std::deque<std::pair<uint64_t, uint8_t>> wr_exp_;
  // Atomics: each MR's watched words (VA), the model's memory (as the accepted packets leave it) and
  // the host's (as the done writes left it) at those words' IOVAs, the executed atomics' DMA; the
  // write stream's bytes pushed (model), requested (engine) and done, write requests and dones
  std::array<std::vector<uint64_t>, kNumMr> pool_{};
  std::map<uint64_t, MemWord> mmem_;
  std::map<uint64_t, std::array<uint8_t, 8>> hmem_;
  std::deque<AtomDma> at_exp_;
  std::deque<std::shared_ptr<WrReq>> done_req_;
  uint64_t wr_push_ = 0, wr_pop_ = 0, wr_done_pos_ = 0, n_wr_req_ = 0, n_wr_done_ = 0;
  int aw_q_ = -1;  // the QP whose WRITE over an atomic target just ended
  int bd_q_ = -1;  // the QP just initialised right after its atomics (Qp::bdup)
  std::shared_ptr<WrReq> wr_cur_;
  std::deque<Pull> pulls_;
  std::deque<uint64_t> done_at_;
  std::deque<Pkt> hq_;
  bool hdr_valid_ = false, busy_ = false, tmh_ = false;
  uint32_t busy_q_ = 0, last_q_ = 0, last_op_ = 0, last_psn_ = 0;
  unsigned last_len_ = 0;
  std::vector<uint64_t> ack_st_, ev_st_, cqe_st_, rd_st_, lk_st_, wr_st_, job_st_;
  unsigned qp_idx_q_ = 0, cqe_idx_q_ = 0, mr_idx_q_ = 0, srq_idx_q_ = 0, tb_raddr_q_ = 0;
  bool db_ready_q_ = false, idle_q_ = false, hdr_take_q_ = false;
  unsigned kick_gap_ = 0, tx_stall_ = 0, add_pend_ = 0, add_pend_h_ = 0, last_hit_ = 0;
  uint64_t init_cyc_ = 0, done_last_ = 0;
  bool query_chk_ = false, query_chk_q_ = false;
  uint32_t query_psn_ = 0, query_psn_q_ = 0;
  unsigned query_qp_ = 0, query_qp_q_ = 0;
  uint64_t n_drop_ = 0, n_ack_ = 0, n_rnr_ = 0, n_nak_ = 0, n_dup_ = 0, n_psn_err_ = 0, n_prot_ = 0, n_ev_ = 0, n_sent_ = 0;
  uint64_t n_rtl_[9] = {};
  uint64_t n_qkey_ = 0, n_nowqe_ = 0;
};

TEST(Responder, RandomTrafficAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0, msgs = 0;
  const uint64_t n = 180000 * test_scale();  // (150000 before atomics took their share)
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Coverage cov(coverage_points());
    Bench b(seed, cov);
    b.init_all();
    //     name     pkt_gap pay_gap cqe  tx   ack  wr   rd   lk   pull lat db    hot  pkts tx_stall
    b.run({"mix", 0.2, 0.2, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.8, 8, 0.05, 0.5, 5, 0.001}, n);
    b.run({"fast", 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1, 0.08, 0.3, 3, 0.0}, n);
    b.run({"stalls", 0.4, 0.4, 0.2, 0.15, 0.3, 0.3, 0.3, 0.3, 0.4, 30, 0.05, 0.7, 6, 0.003}, n);
    cycles += b.cycles();
    msgs += b.messages();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(msgs, 300u);
  std::printf("[responder] %llu messages completed\n", (unsigned long long)msgs);
  report_speed("rx_engine", "mix", cycles, sw.seconds());
  total.report("tmnic_rx_engine");
}

}  // namespace
