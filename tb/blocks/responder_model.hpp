// The model side of test_responder.cpp (tmnic_rx_engine's block bench): its constants, the per-QP
// and per-message state of the IBA receive model (with the atomic results a QP keeps), the RDMA READ
// and atomic requester state this bench keeps as the completer, the expected events, jobs and atomic
// DMA, the watched words of host memory, and the coverage points. The rules themselves are
// the Bench's (test_responder.cpp); TB_DATA_W and TB_NUM_QP come from the build (defaults below).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "lib/bits.hpp"
#include "lib/cqe_req.hpp"
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

namespace tmnic::tb::rsp_model {

namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;

constexpr unsigned kBytes = TB_DATA_W / 8, kNumQp = TB_NUM_QP, kNumMr = 64, kSrq = 16, kEntries = 1024;
constexpr unsigned kStride = hw::WQE_STRIDE, kNsge = hw::WQE_MAX_SGE, kTmh = hw::TMH_SIZE;
constexpr unsigned kQpW = 31 - static_cast<unsigned>(__builtin_clz(kNumQp));  // $clog2(NUM_QP)
constexpr unsigned kLat = 3;  // wr_data_o follows wr_data_req_i (tmnic_dma_wr DATA_LAT)
constexpr uint32_t kM24 = 0xFFFFFF;
constexpr uint16_t kNoSrq = static_cast<uint16_t>(hw::NO_SRQ);
enum Kind : unsigned { kPlain = 0, kMatched = 1, kUnexp = 2, kNotag = 3 };  // tmnic_pkg rx_kind_e
enum Flags : unsigned { kEnd = 0, kEndImm = 1, kMatch = 2, kWriteImm = 3 };  // rx_cqe_flags_e
constexpr unsigned st(hw::QpState s) { return static_cast<unsigned>(s); }
enum AckKind : unsigned { kAckPkt = 0, kAckRr = 1, kAckRdDone = 2, kAckRdErr = 3 };  // tmnic_pkg ack_kind_e
constexpr unsigned kMaxRd = 4;  // tmnic_pkg MAX_RD_ATOM: READ and atomic jobs a QP may have out, atomic results kept
constexpr unsigned kAtomLen = hw::ATOMIC_LEN;  // bytes an atomic reads and writes (8, aligned)

constexpr uint8_t kSynAck = wire::aeth_syndrome(wire::kAethTypeAck, wire::kAethCreditInvalid);
constexpr uint8_t kSynSeq = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakPsnSeqErr);
constexpr uint8_t kSynInv = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakInvReq);
constexpr uint8_t kSynRemOp = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakRemOpErr);
constexpr uint8_t kSynRemAcc = wire::aeth_syndrome(wire::kAethTypeNak, wire::kNakRemAccessErr);
inline uint8_t syn_rnr(unsigned timer) { return wire::aeth_syndrome(wire::kAethTypeRnrNak, static_cast<uint8_t>(timer)); }
// 24-bit PSN: a at or after b within half the space.
inline bool psn_ge(uint32_t a, uint32_t b) { return ((a - b) & kM24) < 0x800000; }

struct Wqe {
  uint64_t wrid = 0;
  unsigned nsge = 0;  // may exceed kNsge (a protection error)
  std::array<Sge, kNsge> sge{};
};
struct Srq {
  bool valid = false, tm = false;
  uint64_t base = 0;
  unsigned log = 0;
  uint16_t pd = 0, cq = 0, tag_base = 0, pi = 0, ci = 0;
  std::vector<Wqe> ring;
};
// The held message (what its completion needs, and the checked SGE list with the bytes so far).
struct Msg {
  Kind kind = kPlain;
  bool rndv = false, msent = false, bad = false;
  uint64_t wrid = 0, tag = 0, cap = 0, off = 0;
  uint32_t ctx = 0;
  uint16_t idx = 0;
  std::vector<std::pair<uint64_t, uint32_t>> sg;  // IOVA, length of the passing SGEs
};
struct Ev {
  uint8_t syn = 0;
  uint32_t msn = 0, psn = 0;
  bool operator==(const Ev& o) const { return syn == o.syn && msn == o.msn && psn == o.psn; }
};
// A READ WQE in a QP's send queue, as this bench's completer keeps it: its ring index, its scatter
// list, the PSNs of its responses (first .. first + npk - 1) and its length (the list's total). An
// atomic WQE (atom) has one 8-byte SGE and one response, an ATOMIC_ACKNOWLEDGE.
struct RdWqe {
  uint16_t idx = 0;
  Wqe w;
  uint32_t first = 0, npk = 1;
  uint64_t len = 0;
  bool atom = false;
  uint32_t last() const { return (first + npk - 1) & kM24; }
};
// An event on ack_*: an ACK/NAK packet's {qp, AETH, PSN}, a READ response's query (ACK_RR, with the
// verdict this bench's completer gives), its placement (ACK_RDDONE) or its failure (ACK_RDERR:
// the status in the AETH's low byte).
struct AckExp {
  unsigned kind = kAckPkt, q = 0;
  uint32_t aeth = 0, psn = 0;
  bool first = false, last = false, ok = false, atom = false;  // (atom: ACK_RR of an ATOMIC_ACKNOWLEDGE)
  uint16_t idx = 0;
};
// A READ job for the read-response engine; an atomic's (atom) carries the original value in iova
// (memory order: the word's byte 0 in bits [7:0]); exec: an executed atomic's (its write must be
// done before the job is offered), not a duplicate's answer from the saved results.
struct Job {
  unsigned q = 0, pmtu_log = 0;
  uint64_t iova = 0;
  uint32_t len = 0, psn = 0, msn = 0;
  bool atom = false, exec = false;
};
// One of the last kMaxRd atomics a QP executed (its responder's replay table): PSN, original value.
struct AtomRes {
  bool valid = false;
  uint32_t psn = 0;
  uint64_t old = 0;
};
// An atomic request as the peer sent it (for its duplicates).
struct AtomSent {
  uint32_t psn = 0, rkey = 0;
  uint8_t op = 0;
  uint64_t va = 0, swap = 0, cmp = 0;
};
// An executed atomic's DMA, as the model expects it: read 8 bytes at iova once every earlier write
// is done and every byte before wpos (the position of its 8 bytes in the write stream) requested,
// then write them (one request of 8 bytes at iova), then its write's done.
struct AtomDma {
  enum Stage : unsigned { kRead = 0, kWrite = 1, kDone = 2 };
  unsigned q = 0, stage = kRead;
  uint32_t psn = 0;
  uint64_t iova = 0, wpos = 0;
  bool waited = false;  // earlier writes were not done when it arrived
};
// A watched 8-byte word of host memory (an atomic target): its bytes, the write-stream position
// just past the last byte written to it, whether an atomic changed it.
struct MemWord {
  std::array<uint8_t, 8> b{};
  uint64_t last_w = 0;
  bool atom = false;
};
struct Qp {
  std::array<uint32_t, kQpCfgWords> cfg{};  // the context's qp_cfg_t (all bits random)
  bool inited = false, held = false, nak_sent = false;
  bool wr = false;      // the held message is an RDMA WRITE (its range in m.sg, no WQE)
  unsigned lstate = 0;  // the model's state (the context's follows err_o)
  uint32_t epsn = 0, msn = 0;
  uint16_t ci = 0, pi = 0, fl_pi = 0;  // fl_pi: flushes expected up to here
  unsigned pmtu = 256, npk = 0;  // npk: packets of the held message so far
  Msg m;
  std::vector<Wqe> ring;
  std::deque<CqeReq> cqes;      // completions expected, in order
  std::vector<Ev> evs;          // ACK/NAK events, in order, and how many of them were sent
  size_t sent = 0;
  // the peer
  uint32_t ppsn = 0;
  bool pin = false, resync = false;  // in a message; go back to the responder's PSN
  bool pwr = false;                  // the peer's message is an RDMA WRITE
  unsigned prem = 0, plast = 0;      // packets left in the message, bytes of its last packet
  uint64_t guard = 0;                // no doorbell before this cycle (an init)
  bool ud = false;                   // a UD QP (kCfUd): datagrams from anyone with its Q_Key
  uint32_t qkey = 0;
  uint64_t wva = 0;                  // the held WRITE's RETH address and rkey (checked at every packet)
  uint32_t wkey = 0;
  // RDMA READ, responder: jobs given to the READ engine and not finished (IBA 9.7.5.1: at most
  // kMaxRd); the peer's READ bursts
  unsigned rd_out = 0, rburst = 0;
  bool rd_full = false;  // its last READ was dropped for want of resources
  // Atomics, responder: the replay table (its next slot ap), the PSNs executed since the init (the
  // last few: a duplicate of one evicted from the table), the peer's atomics sent (for duplicates),
  // the peer's next packet an atomic at (aw_va, aw_key) (right after a WRITE to that word)
  std::array<AtomRes, kMaxRd> ares{};
  unsigned ap = 0;
  std::deque<uint32_t> aexec, aprev;  // (aprev: the last executed before the init)
  std::deque<AtomSent> ahist;
  bool aw_pend = false;
  unsigned astreak = 0;  // good atomics the peer sends next
  bool adup = false;     // then an old one again
  bool bdup = false;     // initialised right after its atomics: one of those again (aprev)
  uint64_t aw_va = 0;
  uint32_t aw_key = 0;
  // RDMA READ, requester (the bench plays the completer): the READ WQEs outstanding, oldest first;
  // the send queue's next index and PSN; the head READ's last accepted response (acc), its checked
  // scatter list with the bytes placed (rm) and the MR generation of that check
  std::deque<RdWqe> rds;
  uint16_t sq_next = 0;
  uint32_t spsn = 0, acc = 0, rgen = 0;
  bool acc_v = false;
  Msg rm;
};
struct Pkt {
  wire::RoceHdr h;
  std::vector<uint8_t> pay;
};
struct Lookup {
  uint64_t tag = 0;
  bool commit_miss = false, hit = false, unexp = false;
  unsigned srq = 0, handle = 0;
};
struct WrReq {
  uint64_t addr = 0;
  unsigned len = 0;
  std::vector<uint8_t> data;
  int next_off = 0;  // next pull
  bool atom = false;  // an atomic's write
};
struct Pull {
  uint64_t due = 0;
  std::shared_ptr<WrReq> r;
  int off = 0;
};
struct RdRsp {
  uint64_t addr = 0, at = 0;
  unsigned k = 0;
  bool atom = false;  // an atomic's 8-byte read (one beat), else a WQE's
};
struct Verdict {
  uint64_t at = 0;
  bool ok = false;
  uint16_t idx = 0;
};

inline uint64_t cfg_get(const Qp& q, CfgField f) { return get_bits(q.cfg.data(), cfg_lsb(f), kCfgWidth[f]); }
inline void cfg_set(Qp& q, CfgField f, uint64_t v) { set_bits(q.cfg.data(), cfg_lsb(f), kCfgWidth[f], v); }

// The completion rx_cqe reports (mlx5's conventions, as test_rx_cqe models them).
inline CqeReq make_cqe(const Msg& m, unsigned qp, uint16_t rcq, uint16_t scq, uint32_t src_qp, uint8_t status,
                uint32_t len, uint32_t imm, Flags flags) {
  const bool matched = m.kind == kMatched;
  CqeReq r;
  r.cq = m.kind == kPlain ? rcq : scq;
  r.wr_id = m.wrid;
  r.wqe_idx = m.idx;
  r.qp_num = qp;
  r.src_qp = src_qp;
  r.opcode = flags == kWriteImm ? hw::wc_op::RECV_RDMA_WITH_IMM
             : m.kind == kPlain   ? hw::wc_op::RECV
             : m.kind == kNotag   ? hw::wc_op::TM_NO_TAG
                                  : hw::wc_op::TM_RECV;
  r.status = (status == hw::wc_status::SUCCESS && matched && m.rndv) ? hw::wc_status::TM_RNDV_INCOMPLETE : status;
  r.byte_len = len;
  r.imm = imm;
  const uint32_t end = !matched ? 0u
                       : m.msent ? hw::wc_flag::TM_DATA_VALID
                                 : (hw::wc_flag::TM_DATA_VALID | hw::wc_flag::TM_MATCH);
  r.wc_flags = flags == kMatch ? hw::wc_flag::TM_MATCH
               : flags == kEndImm ? (hw::wc_flag::WITH_IMM | end)
               : flags == kWriteImm ? hw::wc_flag::WITH_IMM
                                    : end;
  if (matched) {
    r.tm_tag = m.tag;
    r.tm_app_ctx = m.ctx;
    r.tm_handle = m.idx;
  }
  return r;
}

inline std::vector<std::string> coverage_points() {
  return {"msg_only", "msg_multi_packet", "msg_3plus_packets", "msg_zero_length", "msg_with_imm", "msg_multi_sge",
          "ack_on_ack_req", "dup_reack", "gap_nak", "gap_nak_once", "psn_wrap", "inv_req_first_while_held",
          "inv_req_next_while_idle", "rnr_rq_empty", "rnr_srq", "srq_msg", "prot_err", "len_err", "len_err_later_packet",
          "flush_rq_wqe", "len_err_by_one_byte", "msg_fills_buffer", "flush_held_wqe", "drop_unknown_qp", "drop_reserved_qp", "drop_wrong_peer",
          "drop_not_ready", "drop_err_qp", "drop_not_send", "ack_forwarded", "ack_dropped_not_rts",
          "tm_match_eager", "tm_match_rndv", "tm_unexpected", "tm_notag", "tm_rnr", "qp_first_msg", "qp_last_msg",
          "interleaved_msgs", "qp_set_err_mid_msg", "qp_reinit", "query_psn",
          "stall_cqe", "stall_ev", "stall_ack", "stall_wr", "stall_rd", "stall_lk", "doorbell_rq", "doorbell_srq", "add_pending_on_hit",
          "write_only", "write_multi_packet", "write_zero_length", "write_imm", "write_imm_multi_packet", "write_imm_rnr",
          "write_imm_tm_srq", "write_access_err", "write_len_over", "write_len_short", "write_kind_mismatch",
          "write_flush_held", "write_not_enabled", "ud_datagram", "ud_datagram_imm", "ud_qkey_drop", "ud_no_wqe",
          "ud_len_err", "ud_srq", "ud_op_to_rc_qp", "rc_op_to_ud_qp", "write_mr_invalidated",
          // RDMA READ, responder
          "read_ok", "read_multi_packet", "read_dup", "read_dup_while_held", "read_zero_len", "read_access_err",
          "read_dup_access_err", "read_inv_req_held", "read_no_remote_read", "read_full_drop", "read_dup_full_drop", "read_gap",
          "read_qp_at_limit", "read_job_done_seen", "stall_job",
          // RDMA READ, requester (responses)
          "rresp_first_ok", "rresp_only_ok", "rresp_middle_ok", "rresp_last_ok", "rresp_first_again", "rresp_not_ok",
          "rresp_dup_not_ok", "rresp_gap_not_ok", "rresp_flag_not_ok", "rresp_sqe_not_ok", "rresp_no_read",
          "rresp_drop_not_rts", "rresp_bad_len", "rresp_bad_sge", "rresp_too_many_sge", "rresp_mr_changed_recheck",
          "rresp_mr_invalidated", "rresp_rddone", "rresp_zero_len", "rresp_multi_sge", "mr_changed",
          // Atomics, responder
          "atom_cswap_swapped", "atom_cswap_unchanged", "atom_fadd", "atom_fadd_wrap", "atom_first_word_of_mr",
          "atom_last_word_of_mr", "atom_no_remote_atomic", "atom_misaligned", "atom_inv_req_held", "atom_acc_key",
          "atom_acc_pd", "atom_acc_bounds", "atom_acc_straddle", "atom_acc_mr_right", "atom_acc_mr_invalid",
          "atom_full_drop", "atom_qp_at_limit", "atom_gap", "atom_drop_not_ready", "atom_dup_replayed",
          "atom_dup_while_held", "atom_dup_evicted", "atom_dup_unknown", "atom_dup_before_init", "atom_dup_full_drop", "atom_after_atom_word",
          "atom_wait_writes", "atom_word_write_pending", "atom_word_written_before", "atom_job_stalled", "atom_psn_wrap",
          "atom_read_waited", "atom_then_write_word",
          // Atomics, requester (ATOMIC_ACKNOWLEDGE)
          "atom_ack_placed", "atom_ack_bad_sge", "atom_ack_to_read", "rresp_to_atomic", "atom_ack_no_entry",
          "atom_ack_wrong_psn", "atom_ack_drop_not_rts"};
}

}  // namespace tmnic::tb::rsp_model
