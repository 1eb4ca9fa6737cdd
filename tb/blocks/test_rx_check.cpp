// tmnic_rx_check (the responder's packet checks) against a model written from the IBA rules
// (9.7.5.1 responder checks, 9.7.5.1.1 duplicates, 9.7.5.1.2 opcode sequence) and mlx5's silent drop
// of packets for unknown QPs or from another peer. SEND and RDMA WRITE requests are executed; a
// MIDDLE/LAST of the other kind than the held message is an invalid request. The block is combinational: each input vector
// is evaluated and every output compared.
// Stimulus: every opcode of the 8-bit space (RC SENDs and ACK most often), PSNs at, just ahead of and
// just behind the expected PSN, at both ends of the 2^23 window and across the 2^24 wrap, destination
// QPs at the limits (reserved 0 and 1, NUM_QP - 1, NUM_QP, far out of range), source IP equal to the
// peer's or not, every QP state, message held or not.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "Vtmnic_rx_check.h"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"
#include "tmnic/wire.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;

namespace {

constexpr uint32_t kNumQp = 64;
constexpr uint32_t kPsnMod = 1u << 24;
enum Verdict : unsigned { kDrop, kAck, kDup, kGap, kInvReq, kFirst, kNext, kUd, kQkey, kRead, kDupRead, kRresp,
                          kAtomic, kDupAtomic };  // tmnic_pkg::rx_verdict_e
const char* const kVerdictName[] = {"drop", "ack", "dup", "gap", "inv_req", "first", "next", "ud", "qkey", "read",
                                    "dup_read", "rresp", "atomic", "dup_atomic"};

struct In {
  uint8_t opcode;
  uint32_t psn, dest_qp, src_ip, state, peer_ip, epsn;
  bool held, held_wr, wr_en, rd_en, at_en, at_al;
  bool ud, qkey_ok;  // the QP is UD; the DETH's Q_Key is the QP's
};
struct Out {
  unsigned verdict;
  bool first, last, imm, write, read, atomic, rfirst, rlast, atom_ack;
};

Out model(const In& i) {
  using S = hw::QpState;
  const auto st = static_cast<S>(i.state);
  Out o{};
  const uint8_t op = i.opcode;
  o.write = op == wire::kWriteFirst || op == wire::kWriteMiddle || op == wire::kWriteLast || op == wire::kWriteLastImm ||
            op == wire::kWriteOnly || op == wire::kWriteOnlyImm;
  const bool ud_op = op == wire::kUdSendOnly || op == wire::kUdSendOnlyImm;  // a datagram is one packet
  o.first = op == wire::kSendFirst || op == wire::kSendOnly || op == wire::kSendOnlyImm || op == wire::kWriteFirst ||
            op == wire::kWriteOnly || op == wire::kWriteOnlyImm || ud_op;
  o.last = op == wire::kSendLast || op == wire::kSendLastImm || op == wire::kSendOnly || op == wire::kSendOnlyImm ||
           op == wire::kWriteLast || op == wire::kWriteLastImm || op == wire::kWriteOnly || op == wire::kWriteOnlyImm || ud_op;
  o.imm = op == wire::kSendLastImm || op == wire::kSendOnlyImm || op == wire::kWriteLastImm || op == wire::kWriteOnlyImm ||
          op == wire::kUdSendOnlyImm;
  o.read = op == wire::kReadReq;
  o.atomic = op == wire::kCmpSwap || op == wire::kFetchAdd;
  // An ATOMIC_ACKNOWLEDGE is a one-packet response (its AtomicAckETH is its payload)
  o.atom_ack = op == wire::kAtomicAck;
  const bool rresp = (op >= wire::kReadRespFirst && op <= wire::kReadRespOnly) || o.atom_ack;
  o.rfirst = op == wire::kReadRespFirst || op == wire::kReadRespOnly || o.atom_ack;
  o.rlast = op == wire::kReadRespLast || op == wire::kReadRespOnly || o.atom_ack;
  const bool can_send = st == S::RTS || st == S::SQD || st == S::SQE;
  const bool can_recv = can_send || st == S::RTR;
  const bool is_send = i.opcode <= wire::kSendOnlyImm;
  const bool qpn_ok = i.dest_qp >= hw::QPN_FIRST && i.dest_qp < kNumQp;
  if (i.ud || ud_op) {
    // UD (IBA 9.6, 10.2.4): datagrams only, to UD QPs only, from anyone, no PSN or sequence
    // checks; a wrong Q_Key is dropped (C10-15).
    o.verdict = (!qpn_ok || !i.ud || !ud_op || !can_recv) ? kDrop : i.qkey_ok ? kUd : kQkey;
  } else if (!qpn_ok || i.src_ip != i.peer_ip) {
    o.verdict = kDrop;
  } else if (i.opcode == wire::kAck) {
    o.verdict = can_send ? kAck : kDrop;
  } else if (rresp) {
    // READ responses are the requester's (its completer checks their PSN)
    o.verdict = can_send ? kRresp : kDrop;
  } else if (!(is_send || o.write || o.read || o.atomic) || !can_recv) {
    o.verdict = kDrop;
  } else if (i.psn != i.epsn) {
    // Behind the expected PSN by 1 .. 2^23: a duplicate (a READ is executed again, an atomic answered
    // from its saved result: IBA 9.7.5.1.1); otherwise ahead of it: a gap.
    const uint32_t behind = (i.epsn - i.psn) & (kPsnMod - 1);
    o.verdict = (behind >= 1 && behind <= (1u << 23)) ? (o.read ? kDupRead : o.atomic ? kDupAtomic : kDup) : kGap;
  } else if (o.read) {
    // A READ inside a message, or to a QP without REMOTE_READ (IBA 9.7.4.1.2)
    o.verdict = (i.held || !i.rd_en) ? kInvReq : kRead;
  } else if (o.atomic) {
    // The same for an atomic (REMOTE_ATOMIC), and a VA not 8-byte aligned (IBA 9.4.5)
    o.verdict = (i.held || !i.at_en || !i.at_al) ? kInvReq : kAtomic;
  } else if (o.first == i.held || (i.held && i.held_wr != o.write) || (o.write && !i.wr_en)) {
    // FIRST/ONLY inside a message, MIDDLE/LAST outside one or of another kind, a WRITE to a QP
    // without REMOTE_WRITE (IBA 9.7.4.1.2)
    o.verdict = kInvReq;
  } else {
    o.verdict = o.first ? kFirst : kNext;
  }
  return o;
}

TEST(RxCheck, RandomHeadersAgainstIbaModel) {
  Coverage cov({"drop", "ack", "dup", "gap", "inv_req", "first", "next", "drop_reserved_qp", "drop_qp_range",
                "drop_peer", "drop_state", "drop_opcode", "ack_not_sending", "dup_window_end", "gap_window_end",
                "psn_wrap_dup", "psn_wrap_gap", "write_first", "write_next", "write_in_send", "send_in_write", "write_not_enabled",
                "ud", "qkey", "ud_op_on_rc_qp", "rc_op_on_ud_qp", "ud_drop_state",
                "read", "dup_read", "rresp", "read_in_message", "read_not_enabled", "rresp_not_sending",
                "atomic", "dup_atomic", "atomic_in_message", "atomic_not_enabled", "atomic_misaligned",
                "atom_ack"});
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vtmnic_rx_check>(ctx.get());
  uint64_t n = 0;
  Stopwatch sw;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 200000; ++k, ++n) {
      In i{};
      static const uint8_t kCommon[] = {wire::kSendFirst, wire::kSendMiddle, wire::kSendLast, wire::kSendLastImm,
                                        wire::kSendOnly, wire::kSendOnlyImm, wire::kAck, wire::kWriteFirst,
                                        wire::kWriteMiddle, wire::kWriteLast, wire::kWriteLastImm, wire::kWriteOnly,
                                        wire::kWriteOnlyImm, wire::kUdSendOnly, wire::kUdSendOnlyImm,
                                        wire::kReadReq, wire::kReadRespFirst, wire::kReadRespMiddle,
                                        wire::kReadRespLast, wire::kReadRespOnly, wire::kCmpSwap,
                                        wire::kFetchAdd, wire::kAtomicAck};
      i.opcode = chance(rng, 0.85) ? kCommon[urand(rng, 0, 22)] : static_cast<uint8_t>(urand(rng, 0, 255));
      i.epsn = chance(rng, 0.2) ? static_cast<uint32_t>(urand(rng, 0, 3)) | (chance(rng, 0.5) ? kPsnMod - 4 : 0)
                                : static_cast<uint32_t>(urand(rng, 0, kPsnMod - 1));
      const uint32_t d = chance(rng, 0.5) ? 0u
                         : chance(rng, 0.3) ? static_cast<uint32_t>(urand(rng, 1, 3))
                         : chance(rng, 0.3) ? (kPsnMod - static_cast<uint32_t>(urand(rng, 1, 3)))
                         : chance(rng, 0.5) ? (1u << 23) + static_cast<uint32_t>(urand(rng, 0, 2)) - 1
                                            : static_cast<uint32_t>(urand(rng, 0, kPsnMod - 1));
      i.psn = (i.epsn + d) & (kPsnMod - 1);
      const uint32_t qp_pick = static_cast<uint32_t>(urand(rng, 0, 9));
      i.dest_qp = qp_pick == 0 ? static_cast<uint32_t>(urand(rng, 0, 1))
                  : qp_pick == 1 ? kNumQp - 1
                  : qp_pick == 2 ? kNumQp + static_cast<uint32_t>(urand(rng, 0, 1))
                  : qp_pick == 3 ? static_cast<uint32_t>(urand(rng, kNumQp, kPsnMod - 1))
                                 : static_cast<uint32_t>(urand(rng, hw::QPN_FIRST, kNumQp - 1));
      i.peer_ip = static_cast<uint32_t>(rng());
      i.src_ip = chance(rng, 0.9) ? i.peer_ip : i.peer_ip ^ (1u << urand(rng, 0, 31));
      i.state = chance(rng, 0.6) ? static_cast<uint32_t>(urand(rng, 2, 5)) : static_cast<uint32_t>(urand(rng, 0, 7));
      i.held = chance(rng, 0.5);
      i.held_wr = chance(rng, 0.5);
      i.wr_en = chance(rng, 0.8);
      i.rd_en = chance(rng, 0.8);
      i.at_en = chance(rng, 0.8);
      i.at_al = chance(rng, 0.8);
      i.ud = chance(rng, 0.2);
      i.qkey_ok = chance(rng, 0.8);
      top->opcode_i = i.opcode;
      top->psn_i = i.psn;
      top->dest_qp_i = i.dest_qp;
      top->src_ip_i = i.src_ip;
      top->state_i = i.state;
      top->peer_ip_i = i.peer_ip;
      top->epsn_i = i.epsn;
      top->held_i = i.held;
      top->held_wr_i = i.held_wr;
      top->wr_en_i = i.wr_en;
      top->rd_en_i = i.rd_en;
      top->at_en_i = i.at_en;
      top->at_al_i = i.at_al;
      top->ud_i = i.ud;
      top->qkey_ok_i = i.qkey_ok;
      top->eval();
      const Out m = model(i);
      const unsigned got = top->verdict_o;
      if (got != m.verdict || top->first_o != m.first || top->last_o != m.last || top->imm_o != m.imm ||
          top->write_o != m.write || top->read_o != m.read || top->atomic_o != m.atomic ||
          top->rresp_first_o != m.rfirst || top->rresp_last_o != m.rlast || top->atom_ack_o != m.atom_ack) {
        ADD_FAILURE() << "opcode " << unsigned(i.opcode) << " psn " << i.psn << " epsn " << i.epsn << " qp " << i.dest_qp
                      << " state " << i.state << " peer " << (i.src_ip == i.peer_ip) << " held " << i.held << ": verdict "
                      << got << " (model " << kVerdictName[m.verdict] << "), first/last/imm " << unsigned(top->first_o)
                      << unsigned(top->last_o) << unsigned(top->imm_o) << " (model " << m.first << m.last << m.imm << ")";
        return;
      }
      cov.hit(kVerdictName[m.verdict]);
      const bool qp_ok = i.dest_qp >= hw::QPN_FIRST && i.dest_qp < kNumQp;
      const bool ud_op = i.opcode == wire::kUdSendOnly || i.opcode == wire::kUdSendOnlyImm;
      if (m.verdict == kDrop && (i.ud || ud_op)) {
        if (!i.ud) cov.hit("ud_op_on_rc_qp");
        else if (!ud_op) cov.hit("rc_op_on_ud_qp");
        else if (qp_ok) cov.hit("ud_drop_state");
      } else if (m.verdict == kDrop) {
        if (i.dest_qp < hw::QPN_FIRST) cov.hit("drop_reserved_qp");
        else if (!qp_ok) cov.hit("drop_qp_range");
        else if (i.src_ip != i.peer_ip) cov.hit("drop_peer");
        else if (i.opcode == wire::kAck) cov.hit("ack_not_sending");
        else if (i.opcode > wire::kWriteOnlyImm) cov.hit("drop_opcode");
        else cov.hit("drop_state");
      }
      if (m.read && m.verdict == kInvReq && i.held) cov.hit("read_in_message");
      if (m.read && m.verdict == kInvReq && !i.held && !i.rd_en) cov.hit("read_not_enabled");
      if (m.atomic && m.verdict == kInvReq && i.held) cov.hit("atomic_in_message");
      if (m.atomic && m.verdict == kInvReq && !i.held && !i.at_en) cov.hit("atomic_not_enabled");
      if (m.atomic && m.verdict == kInvReq && !i.held && i.at_en && !i.at_al) cov.hit("atomic_misaligned");
      if (m.atom_ack && m.verdict == kRresp) cov.hit("atom_ack");
      if (i.opcode >= wire::kReadRespFirst && i.opcode <= wire::kReadRespOnly && m.verdict == kDrop &&
          qp_ok && i.src_ip == i.peer_ip && !i.ud)
        cov.hit("rresp_not_sending");
      if (m.write && m.verdict == kFirst) cov.hit("write_first");
      if (m.write && m.verdict == kNext) cov.hit("write_next");
      if (m.verdict == kInvReq && !m.first && i.held && i.held_wr != m.write)
        cov.hit(m.write ? "write_in_send" : "send_in_write");
      if (m.verdict == kInvReq && m.write && !i.wr_en && (m.first != i.held) && !(i.held && i.held_wr != m.write))
        cov.hit("write_not_enabled");
      const uint32_t behind = (i.epsn - i.psn) & (kPsnMod - 1);
      if (m.verdict == kDup && behind == (1u << 23)) cov.hit("dup_window_end");
      if (m.verdict == kGap && behind == (1u << 23) - 1 + 2) cov.hit("gap_window_end");  // 2^23 + 1 behind = 2^23 - 1 ahead
      if (m.verdict == kDup && i.psn > i.epsn) cov.hit("psn_wrap_dup");
      if (m.verdict == kGap && i.psn < i.epsn) cov.hit("psn_wrap_gap");
    }
  }
  top->final();
  report_speed("rx_check", "random", n, sw.seconds());
  cov.report("rx_check");
}

}  // namespace
