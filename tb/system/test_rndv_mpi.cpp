// MPI-like traffic with rendezvous (docs/tag-matching.md "Rendezvous"): 4 senders, each with its
// own RC QP pair to one receiver's TM-SRQ (the receiver's QP a rendezvous QP), a few thousand
// messages mixed eager (tagged SEND up to 4 KiB) and rendezvous (up to 256 KiB), tags with MPI
// (source, tag) semantics and wildcards, the receiver posting receives sometimes before and
// sometimes after the message arrives. An MPI-style layer does what UCX does:
//  * a receive first searches the unexpected queue, else is ADDed to the hardware list with the
//    software unexpected count (IBV_OPS_TM_SYNC); every unexpected message is followed by a
//    TAG_SYNC, an ADD whose completion asks for it (SYNC_REQ) too;
//  * an expected rendezvous is the NIC's: MATCH, then DATA_VALID when the data is in the tagged
//    buffer; the NIC sends the FIN;
//  * an unexpected rendezvous request (in an SRQ buffer), or one that completes an out-of-phase
//    receive (then DELeted), or a TM_RNDV_INCOMPLETE, is finished in software: the receiver
//    RDMA-READs the data itself and sends the FIN. The rendezvous QP has no send queue, so each
//    sender pair has a second, plain RC QP pair for that.
// Checks: every message delivered exactly once with its data, MPI's non-overtaking order per
// (source, tag), exactly one FIN per rendezvous (every byte), both the offloaded and the software
// path used.
#include <deque>
#include <list>
#include <map>
#include <random>

#include "rndv_util.hpp"

using namespace sys;

namespace {

constexpr uint64_t kSrcMask = 0xFFFFFFFF00000000ull, kTagMask = 0x00000000FFFFFFFFull;
constexpr int kSenders = 4;
constexpr uint32_t kMaxEager = 4096, kMaxRndv = 256 * 1024;
constexpr uint32_t kRecvBuf = kMaxRndv, kRecvSlots = 48, kMaxPosted = 40;
constexpr uint32_t kSrqBufs = 64, kSrqBufLen = 16 + kMaxEager + 48;
constexpr uint32_t kRndvSlots = 8;        // rendezvous per sender awaiting their FIN
constexpr uint32_t kEagerSlots = 64, kEagerStride = kMaxEager + 64;
constexpr uint32_t kFinBufs = 64;         // FIN receives per sender QP

struct Msg {
  uint32_t src, seq, id, len;
  bool rndv;
  bool early;  // sent without waiting for its receive to be in the hardware list
  uint64_t tag() const { return (uint64_t(src) << 32) | (seq * 2654435761u % 11); }  // 11 user tags
};
struct Recv {
  uint32_t id;
  uint64_t tag, mask;
  int got = -1;       // message id
  bool in_hw = false, confirmed = false;
  uint32_t handle = 0;
  int slot = -1;      // receive buffer slot
};
bool matches(const Recv& r, uint64_t tag) { return ((tag ^ r.tag) & r.mask) == 0; }

class RndvMpi : public RndvTestBase {};

TEST_F(RndvMpi, MixedEagerAndRendezvousInMpiOrder) {
  if (!rndv_offloaded(1)) GTEST_SKIP() << "the NIC does not offload rendezvous (TM_CAPS.RC is 0)";
  std::mt19937_64 rng(0x52D7);
  const int kMsgs = std::getenv("TMNIC_RNDV_MSGS") ? std::atoi(std::getenv("TMNIC_RNDV_MSGS")) : 2000;
  const bool debug = std::getenv("TMNIC_TM_DEBUG") != nullptr;

  // Receiver: NIC 1. Senders 0, 1 on NIC 0 (wire), 2, 3 on NIC 1 (loopback).
  TmServer s = tm_server(1, 256, kSrqBufs, kSrqBufLen, 8191);
  ASSERT_NE(s.srq, nullptr);
  Buf rbuf = buf(1, size_t(kRecvSlots) * kRecvBuf);
  Cq hcq = cq(1, 1023, false);  // the receiver's software-rendezvous QPs
  Qp tx_qp[kSenders], rx_qp[kSenders], tx_help[kSenders], rx_help[kSenders];
  Buf txb[kSenders], finb[kSenders];
  for (int i = 0; i < kSenders; i++) {
    const int d = i < 2 ? 0 : 1;
    tx_qp[i] = client_qp(d, 128, kFinBufs);
    rx_qp[i] = tm_qp(s);
    QpOpts ho;
    ho.send_wr = 64;
    ho.recv_wr = 4;
    ho.scq = ho.rcq = hcq;
    ho.access = kAccess;
    rx_help[i] = qp(1, ho);
    tx_help[i] = client_qp(d, 4, kFinBufs);
    ASSERT_TRUE(tx_qp[i].qp && rx_qp[i].qp && tx_help[i].qp && rx_help[i].qp);
    connect(tx_qp[i], rx_qp[i]);
    connect(tx_help[i], rx_help[i]);
    txb[i] = buf(d, size_t(kRndvSlots) * kMaxRndv + size_t(kEagerSlots) * kEagerStride, kAccess);
    finb[i] = buf(d, size_t(2 * kFinBufs) * 64);
    for (uint32_t k = 0; k < kFinBufs; k++) {
      ASSERT_EQ(post_recv(tx_qp[i], k, {sge(finb[i], 64 * k, 64)}), 0);
      ASSERT_EQ(post_recv(tx_help[i], kFinBufs + k, {sge(finb[i], 64 * (kFinBufs + k), 64)}), 0);
    }
  }

  // Messages, per sender in sequence; one receive per message (its pattern derived from it).
  std::vector<Msg> msgs;
  std::vector<std::deque<uint32_t>> to_send(kSenders);
  for (int i = 0; i < kMsgs; i++) {
    const uint32_t src = uint32_t(rng() % kSenders);
    const bool rndv = rng() % 4 == 0;
    uint32_t len;
    if (!rndv)
      len = rng() % 6 == 0 ? 0 : uint32_t(rng() % (kMaxEager + 1));
    else if (rng() % 10 < 5)
      len = uint32_t(rng() % 4097);
    else if (rng() % 10 < 8)
      len = uint32_t(rng() % (64 * 1024 + 1));
    else
      len = uint32_t(rng() % (kMaxRndv + 1));
    Msg m{src, uint32_t(to_send[src].size()), uint32_t(i), len, rndv, rng() % 8 == 0};
    to_send[src].push_back(m.id);
    msgs.push_back(m);
  }
  std::vector<Recv> recvs;
  std::vector<uint32_t> recv_of_msg(kMsgs);
  {
    std::vector<uint32_t> order(kMsgs);
    for (int i = 0; i < kMsgs; i++) order[i] = uint32_t(i);
    for (int i = 0; i + 1 < kMsgs; i++)
      if (rng() % 3 == 0) std::swap(order[i], order[std::min(kMsgs - 1, i + 1 + int(rng() % 6))]);
    for (uint32_t k = 0; k < uint32_t(kMsgs); k++) {
      const Msg& m = msgs[order[k]];
      const int kind = int(rng() % 20);
      const uint64_t mask = kind < 13 ? ~0ull : kind < 16 ? kSrcMask : kind < 19 ? kTagMask : 0;
      recvs.push_back(Recv{k, m.tag() & mask, mask});
      recv_of_msg[m.id] = k;
    }
  }

  // Receiver state.
  std::list<uint32_t> posted;  // receives not yet given a message, in post order
  struct Unexp {
    uint32_t mid;
    std::vector<uint8_t> eager;     // eager payload
    uint64_t va = 0;                // rendezvous: the RVH
    uint32_t rkey = 0, len = 0;
  };
  std::deque<Unexp> unexp;
  std::map<uint64_t, uint32_t> hw_wrid;  // recv_wr_id -> receive
  std::vector<int> msg_recv(kMsgs, -1);  // message -> receive that got it
  std::vector<char> msg_done(kMsgs, 0);  // data checked
  std::vector<uint32_t> free_slots;
  for (uint32_t i = 0; i < kRecvSlots; i++) free_slots.push_back(i);
  uint32_t next_recv = 0, syncs_pending = 0, dels_pending = 0, sw_reads = 0;
  uint64_t hw_rndv = 0, sw_rndv = 0, incomplete = 0, match_only = 0, stranded = 0;
  // Sender state.
  int inflight[kSenders] = {};
  std::vector<std::deque<uint32_t>> rndv_free(kSenders);
  std::map<uint32_t, uint32_t> rndv_slot_of;  // message -> its sender's slot (until the FIN)
  std::vector<int> fins(kMsgs, 0);
  for (int i = 0; i < kSenders; i++)
    for (uint32_t k = 0; k < kRndvSlots; k++) rndv_free[i].push_back(k);
  size_t sent = 0;

  auto src_addr = [&](uint32_t mid) {
    const Msg& m = msgs[mid];
    return txb[m.src].p + size_t(rndv_slot_of[mid]) * kMaxRndv;
  };
  auto check_data = [&](uint32_t mid, const uint8_t* p, uint32_t len) {
    const Msg& m = msgs[mid];
    EXPECT_EQ(len, m.len) << "message " << mid;
    for (uint32_t i = 0; i < std::min(len, m.len); i++)
      if (p[i] != pattern(mid, i)) {
        ADD_FAILURE() << "message " << mid << (m.rndv ? " (rendezvous)" : " (eager)") << " byte " << i << " of " << m.len;
        break;
      }
  };
  auto assign = [&](uint32_t rid, uint32_t mid) {
    ASSERT_EQ(recvs[rid].got, -1) << "receive " << rid << " got two messages";
    ASSERT_EQ(msg_recv[mid], -1) << "message " << mid << " delivered twice";
    recvs[rid].got = int(mid);
    msg_recv[mid] = int(rid);
    posted.remove(rid);
  };
  auto finish = [&](uint32_t rid, uint32_t mid, const uint8_t* p, uint32_t len) {
    check_data(mid, p, len);
    EXPECT_FALSE(msg_done[mid]) << "message " << mid << " completed twice";
    msg_done[mid] = 1;
    if (recvs[rid].slot >= 0) free_slots.push_back(uint32_t(recvs[rid].slot));
    recvs[rid].slot = -1;
  };
  auto slot_ptr = [&](uint32_t rid) { return rbuf.p + size_t(recvs[rid].slot) * kRecvBuf; };
  auto post_ops = [&](struct ibv_ops_wr* op) {
    struct ibv_ops_wr* bad = nullptr;
    int ret = ibv_post_srq_ops(s.srq, op, &bad);
    EXPECT_EQ(ret, 0) << "ibv_post_srq_ops: " << std::strerror(ret);
    return ret;
  };
  auto tag_sync = [&]() {
    struct ibv_ops_wr op = {};
    op.wr_id = 7;
    op.opcode = IBV_WR_TAG_SYNC;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = s.unexp_cnt;
    if (post_ops(&op) == 0) syncs_pending++;
  };
  // Software rendezvous: READ the sender's data into receive rid's slot on the plain QP pair of
  // the message's sender; the FIN follows the READ's completion.
  auto sw_read = [&](uint32_t rid, uint32_t mid, uint64_t va, uint32_t rkey, uint32_t len) {
    if (recvs[rid].slot < 0) {
      ASSERT_FALSE(free_slots.empty());
      recvs[rid].slot = int(free_slots.back());
      free_slots.pop_back();
    }
    struct ibv_sge sg = sge(rbuf, size_t(recvs[rid].slot) * kRecvBuf, len);
    struct ibv_send_wr wr = {};
    wr.wr_id = (uint64_t(rid) << 32) | mid;
    wr.sg_list = len ? &sg : nullptr;
    wr.num_sge = len ? 1 : 0;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = va;
    wr.wr.rdma.rkey = rkey;
    struct ibv_send_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_send(rx_help[msgs[mid].src].qp, &wr, &bad), 0);
    sw_reads++;
    sw_rndv++;
  };
  // MPI_Irecv.
  auto post_recv_mpi = [&](uint32_t rid) {
    Recv& r = recvs[rid];
    for (auto it = unexp.begin(); it != unexp.end(); ++it) {
      if (!matches(r, msgs[it->mid].tag())) continue;
      posted.push_back(rid);
      assign(rid, it->mid);
      if (msgs[it->mid].rndv) {
        sw_read(rid, it->mid, it->va, it->rkey, it->len);
      } else {
        finish(rid, it->mid, it->eager.data(), uint32_t(it->eager.size()));
      }
      unexp.erase(it);
      return;
    }
    ASSERT_FALSE(free_slots.empty());
    r.slot = int(free_slots.back());
    free_slots.pop_back();
    struct ibv_sge sg = sge(rbuf, size_t(r.slot) * kRecvBuf, kRecvBuf);
    struct ibv_ops_wr op = {};
    op.wr_id = 0x200000000ull | rid;
    op.opcode = IBV_WR_TAG_ADD;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = s.unexp_cnt;
    op.tm.add.recv_wr_id = 0x100000000ull | rid;
    op.tm.add.sg_list = &sg;
    op.tm.add.num_sge = 1;
    op.tm.add.tag = r.tag;
    op.tm.add.mask = r.mask;
    ASSERT_EQ(post_ops(&op), 0);
    r.in_hw = true;
    r.handle = op.tm.handle;
    hw_wrid[op.tm.add.recv_wr_id] = rid;
    posted.push_back(rid);
  };
  // A rendezvous request the software finishes (unexpected or RNDV_INCOMPLETE): its TMH + RVH.
  auto parse_rvh = [&](const uint8_t* p, uint32_t* mid, uint64_t* va, uint32_t* rkey, uint32_t* len) {
    *mid = uint32_t(get_be(p + 4, 4));
    *va = get_be(p + 16, 8);
    *rkey = uint32_t(get_be(p + 24, 4));
    *len = uint32_t(get_be(p + 28, 4));
  };

  auto all_done = [&]() {
    for (int i = 0; i < kMsgs; i++)
      if (!msg_done[i] || (msgs[i].rndv && fins[i] != 1)) return false;
    return sw_reads == 0;
  };
  Stall stall(80'000'000);
  uint64_t iter = 0;
  while (!all_done()) {
    bool progress = false;
    iter++;
    for (int k = 0; k < 4 && next_recv < uint32_t(kMsgs) && posted.size() < kMaxPosted && free_slots.size() > 4; k++) {
      if (rng() % 2) break;
      post_recv_mpi(next_recv++);
      if (HasFatalFailure()) return;
      progress = true;
    }
    // Senders.
    for (int i = 0; i < kSenders; i++) {
      if (to_send[i].empty() || inflight[i] >= 48 || rng() % 3 == 0) continue;
      const uint32_t mid = to_send[i].front();
      const Msg& m = msgs[mid];
      const Recv& want = recvs[recv_of_msg[mid]];
      if (!(want.confirmed || want.got >= 0) && !m.early) continue;
      if (m.rndv && rndv_free[i].empty()) continue;
      to_send[i].pop_front();
      uint8_t* eag = txb[i].p + size_t(kRndvSlots) * kMaxRndv + size_t(m.seq % kEagerSlots) * kEagerStride;
      if (m.rndv) {
        rndv_slot_of[mid] = rndv_free[i].front();
        rndv_free[i].pop_front();
        uint8_t* p = src_addr(mid);
        for (uint32_t k = 0; k < m.len; k++) p[k] = pattern(mid, k);
        ASSERT_EQ(send_rndv(tx_qp[i], txb[i], size_t(eag - txb[i].p), mid, m.tag(), mid, uint64_t(uintptr_t(p)),
                            txb[i].mr->rkey, m.len, 16),
                  0);
      } else {
        put_tmh(eag, IBV_TMH_EAGER, mid, m.tag());
        for (uint32_t k = 0; k < m.len; k++) eag[16 + k] = pattern(mid, k);
        ASSERT_EQ(post_send(tx_qp[i], mid, {sge(txb[i], size_t(eag - txb[i].p), 16 + m.len)}), 0);
      }
      inflight[i]++;
      sent++;
      progress = true;
    }
    // Sender completions: SENDs, and FINs on either QP.
    for (int i = 0; i < kSenders; i++) {
      for (const Qp* q : {&tx_qp[i], &tx_help[i]}) {
        std::vector<struct ibv_wc> wc;
        poll_once(q->scq, 32, &wc);
        for (auto& w : wc) {
          progress = true;
          ASSERT_EQ(w.status, IBV_WC_SUCCESS) << "sender " << i << ": " << wc_str(w);
          if (w.opcode == IBV_WC_SEND) {
            inflight[i]--;
            continue;
          }
          ASSERT_EQ(w.opcode, IBV_WC_RECV) << wc_str(w);
          ASSERT_EQ(w.byte_len, tmnic::hwif::RNDV_FIN_LEN) << wc_str(w);
          const uint8_t* f = finb[i].p + 64 * w.wr_id;
          const uint32_t mid = uint32_t(get_be(f + 4, 4));
          ASSERT_LT(mid, uint32_t(kMsgs));
          const Msg& m = msgs[mid];
          ASSERT_TRUE(m.rndv && m.src == uint32_t(i)) << "FIN for message " << mid;
          const auto want = fin_bytes(mid, m.tag(), uint64_t(uintptr_t(src_addr(mid))), txb[i].mr->rkey, m.len);
          EXPECT_EQ(std::memcmp(f, want.data(), 32), 0) << "FIN of message " << mid;
          fins[mid]++;
          EXPECT_EQ(fins[mid], 1) << "message " << mid << ": second FIN";
          rndv_free[i].push_back(rndv_slot_of[mid]);
          EXPECT_EQ(post_recv(*q, w.wr_id, {sge(finb[i], 64 * w.wr_id, 64)}), 0);
        }
      }
    }
    // Receiver: software READs done -> data, FIN.
    {
      std::vector<struct ibv_wc> wc;
      poll_once(hcq, 32, &wc);
      for (auto& w : wc) {
        progress = true;
        ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
        if (w.opcode == IBV_WC_SEND) continue;  // a software FIN went out
        ASSERT_EQ(w.opcode, IBV_WC_RDMA_READ) << wc_str(w);
        const uint32_t rid = uint32_t(w.wr_id >> 32), mid = uint32_t(w.wr_id);
        const Msg& m = msgs[mid];
        finish(rid, mid, slot_ptr(rid), m.len);
        sw_reads--;
        uint8_t f[32];
        put_rndv_hdr(f, IBV_TMH_FIN, mid, m.tag(), uint64_t(uintptr_t(src_addr(mid))), txb[m.src].mr->rkey, m.len);
        struct ibv_sge g = {uint64_t(uintptr_t(f)), 32, 0};
        struct ibv_send_wr fw = {};
        fw.wr_id = mid;
        fw.sg_list = &g;
        fw.num_sge = 1;
        fw.opcode = IBV_WR_SEND;
        fw.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
        struct ibv_send_wr* bad = nullptr;
        ASSERT_EQ(ibv_post_send(rx_help[m.src].qp, &fw, &bad), 0);
      }
    }
    // Receiver: the TM-SRQ's completions.
    std::vector<TmWc> tw;
    poll_tm_once(s.cq, 64, &tw);
    for (const TmWc& t : tw) {
      progress = true;
      const struct ibv_wc& w = t.wc;
      if (debug)
        std::printf("cqe t=%llu %s\n", (unsigned long long)tmnic_sim_now(), tmwc_str(t).c_str());
      if (w.opcode == IBV_WC_TM_SYNC) {
        EXPECT_EQ(w.status, IBV_WC_SUCCESS);
        syncs_pending--;
      } else if (w.opcode == IBV_WC_TM_DEL) {
        EXPECT_EQ(w.status, IBV_WC_SUCCESS) << "a disabled receive must be deletable";
        dels_pending--;
      } else if (w.opcode == IBV_WC_TM_ADD) {
        EXPECT_EQ(w.status, IBV_WC_SUCCESS);
        recvs[uint32_t(w.wr_id - 0x200000000ull)].confirmed = true;
        if (w.wc_flags & IBV_WC_TM_SYNC_REQ) tag_sync();
      } else if (w.opcode == IBV_WC_TM_RECV && (w.wc_flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID))) {
        ASSERT_TRUE(hw_wrid.count(w.wr_id)) << "unknown recv_wr_id: " << tmwc_str(t);
        const uint32_t rid = hw_wrid[w.wr_id];
        // A completion with MATCH names the message (TMH tag, app_ctx); the DATA_VALID-only one
        // that follows carries no TMH (tm_info 0, as mlx5): the receive got its message at MATCH.
        uint32_t mid;
        if (w.wc_flags & IBV_WC_TM_MATCH) {
          mid = t.tm.priv;
          ASSERT_LT(mid, uint32_t(kMsgs)) << tmwc_str(t);
          EXPECT_EQ(t.tm.tag, msgs[mid].tag());
          EXPECT_TRUE(matches(recvs[rid], t.tm.tag)) << "receive " << rid << " got a tag it does not match";
        } else {
          ASSERT_GE(recvs[rid].got, 0) << "DATA_VALID without a MATCH before: " << tmwc_str(t);
          mid = uint32_t(recvs[rid].got);
          EXPECT_EQ(t.tm.tag, 0u);
          EXPECT_EQ(t.tm.priv, 0u);
        }
        const Msg& m = msgs[mid];
        if (w.status == IBV_WC_TM_RNDV_INCOMPLETE) {
          // Not offloaded (should not happen here: the buffers are large enough): finish in software.
          ASSERT_TRUE(m.rndv);
          incomplete++;
          uint32_t mid2, rkey, len;
          uint64_t va;
          parse_rvh(slot_ptr(rid), &mid2, &va, &rkey, &len);
          EXPECT_EQ(mid2, mid);
          if (recvs[rid].got < 0) assign(rid, mid);
          hw_wrid.erase(w.wr_id);
          sw_rndv--;  // (counted as incomplete instead)
          sw_read(rid, mid, va, rkey, len);
          continue;
        }
        ASSERT_EQ(w.status, IBV_WC_SUCCESS) << "matched receive: " << tmwc_str(t);
        if (recvs[rid].got < 0) assign(rid, mid);
        EXPECT_EQ(recvs[rid].got, int(mid));
        if (w.wc_flags == IBV_WC_TM_MATCH) match_only++;
        if (w.wc_flags & IBV_WC_TM_DATA_VALID) {
          finish(rid, mid, slot_ptr(rid), w.byte_len);
          hw_wrid.erase(w.wr_id);
          if (m.rndv) hw_rndv++;
        }
      } else if (w.opcode == IBV_WC_TM_RECV) {
        // Unexpected: the whole message (TMH first) in an SRQ buffer.
        ASSERT_EQ(w.status, IBV_WC_SUCCESS) << tmwc_str(t);
        const uint8_t* p = srq_buf(s, w.wr_id);
        ASSERT_GE(w.byte_len, 16u);
        const uint32_t mid = uint32_t(get_be(p + 4, 4));
        ASSERT_LT(mid, uint32_t(kMsgs));
        const Msg& m = msgs[mid];
        EXPECT_EQ(get_be(p + 8, 8), m.tag());
        EXPECT_EQ(p[0], m.rndv ? IBV_TMH_RNDV : IBV_TMH_EAGER);
        Unexp u{mid, {}};
        if (m.rndv) {
          uint32_t mid2;
          parse_rvh(p, &mid2, &u.va, &u.rkey, &u.len);
          EXPECT_EQ(w.byte_len, 32u + 16u);
        } else {
          u.eager.assign(p + 16, p + w.byte_len);
        }
        s.unexp_cnt++;
        // An out-of-phase receive posted earlier may match it: it takes the message (and is deleted).
        int taker = -1;
        for (uint32_t rid : posted)
          if (matches(recvs[rid], m.tag())) {
            taker = int(rid);
            break;
          }
        if (taker >= 0) {
          Recv& r = recvs[uint32_t(taker)];
          EXPECT_TRUE(r.in_hw);
          struct ibv_ops_wr op = {};
          op.wr_id = 9;
          op.opcode = IBV_WR_TAG_DEL;
          op.flags = IBV_OPS_SIGNALED;
          op.tm.handle = r.handle;
          if (post_ops(&op) == 0) dels_pending++;
          hw_wrid.erase(0x100000000ull | r.id);
          assign(uint32_t(taker), mid);
          if (m.rndv)
            sw_read(uint32_t(taker), mid, u.va, u.rkey, u.len);
          else
            finish(uint32_t(taker), mid, u.eager.data(), uint32_t(u.eager.size()));
        } else {
          unexp.push_back(std::move(u));
        }
        tag_sync();
        repost_srq(s, w.wr_id);
      } else {
        ADD_FAILURE() << "unexpected completion " << tmwc_str(t);
      }
      if (HasFatalFailure()) return;
    }
    // Stranded messages (greedy matching with wildcards): fully wildcarded receives for them.
    if (next_recv >= uint32_t(kMsgs) && sent == size_t(kMsgs) && !progress && !unexp.empty() && syncs_pending == 0 &&
        dels_pending == 0 && sw_reads == 0) {
      bool idle = true;
      for (int i = 0; i < kSenders; i++) idle &= inflight[i] == 0;
      if (idle) {
        stranded++;
        recvs.push_back(Recv{uint32_t(recvs.size()), 0, 0});
        post_recv_mpi(uint32_t(recvs.size() - 1));
        progress = true;
      }
    }
    if (debug && iter % 20000 == 0) {
      size_t done = 0;
      for (int i = 0; i < kMsgs; i++) done += msg_done[i];
      std::printf("iter %llu t=%llu done %zu sent %zu unexp %zu posted %zu reads %u\n", (unsigned long long)iter,
                  (unsigned long long)tmnic_sim_now(), done, sent, unexp.size(), posted.size(), sw_reads);
    }
    if (stall.stuck(progress)) {
      size_t done = 0;
      for (int i = 0; i < kMsgs; i++) done += msg_done[i];
      ADD_FAILURE() << "no progress: " << done << " of " << kMsgs << " delivered, sent " << sent << ", unexpected "
                    << unexp.size() << ", posted " << posted.size() << ", software reads " << sw_reads << counters();
      break;
    }
  }
  for (int i = 0; i < kMsgs; i++) {
    EXPECT_TRUE(msg_done[i]) << "message " << i << " never delivered";
    if (msgs[i].rndv) {
      EXPECT_EQ(fins[i], 1) << "message " << i << ": FINs";
    }
  }
  // Non-overtaking per (source, tag): every earlier message of the same sender that receive R
  // also matches went to a receive posted before R.
  uint64_t checked = 0;
  for (const Recv& r : recvs) {
    if (r.got < 0) continue;
    const Msg& m = msgs[uint32_t(r.got)];
    for (uint32_t j = 0; j < uint32_t(kMsgs); j++) {
      const Msg& e = msgs[j];
      if (e.src != m.src || e.seq >= m.seq || !matches(r, e.tag())) continue;
      checked++;
      ASSERT_GE(msg_recv[j], 0);
      EXPECT_LT(uint32_t(msg_recv[j]), r.id) << "receive " << r.id << " got message " << m.id << " although earlier "
                                            << j << " matched it";
    }
  }
  EXPECT_GT(checked, 500u);
  EXPECT_GT(hw_rndv, 20u) << "rendezvous offloaded by the NIC";
  EXPECT_GT(sw_rndv, 0u) << "unexpected rendezvous finished in software";
  EXPECT_EQ(incomplete, 0u) << "every tagged buffer was large enough";
  EXPECT_GT(s.unexp_cnt, 0u);
  // Receives nothing matched any more are cancelled.
  for (uint32_t rid : std::vector<uint32_t>(posted.begin(), posted.end())) {
    struct ibv_ops_wr op = {};
    op.wr_id = 11;
    op.opcode = IBV_WR_TAG_DEL;
    op.flags = IBV_OPS_SIGNALED;
    op.tm.handle = recvs[rid].handle;
    ASSERT_EQ(post_ops(&op), 0);
    auto w = poll_tm(s.cq, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].wc.status, IBV_WC_SUCCESS);
  }
  std::printf("rndv-mpi: %d messages, %llu rendezvous offloaded, %llu in software, %u unexpected, %llu MATCH-only, "
              "%llu stranded re-posts, %llu order checks, %llu simulated cycles\n",
              kMsgs, (unsigned long long)hw_rndv, (unsigned long long)sw_rndv, s.unexp_cnt,
              (unsigned long long)match_only, (unsigned long long)stranded, (unsigned long long)checked,
              (unsigned long long)tmnic_sim_now());
}

}  // namespace
