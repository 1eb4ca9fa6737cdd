// MPI-like tag matching through the verbs API: several senders, thousands of tagged eager messages
// with random tags and sizes, receives with exact tags and wildcards posted before and after the
// messages arrive. A small MPI-style layer on top of the TM-SRQ does what UCX does: a receive first
// searches the unexpected queue, otherwise it is added to the hardware list (with the software
// unexpected count, IBV_OPS_TM_SYNC); unexpected messages go to the unexpected queue or complete an
// out-of-phase (disabled) receive, which is then deleted; every unexpected message is followed by a
// TAG_SYNC. Checks: every message delivered exactly once with the right data, and MPI's
// non-overtaking order (a receive never gets a message while an earlier message of the same sender
// that it also matches went to a receive posted after it).
#include <infiniband/tm_types.h>

#include <deque>
#include <list>
#include <map>
#include <random>

#include "system_test.hpp"

using namespace sys;

namespace {

constexpr uint64_t kSrcMask = 0xFFFFFFFF00000000ull, kTagMask = 0x00000000FFFFFFFFull;
constexpr uint32_t kMaxMsg = 3000, kRecvBuf = 4096, kSrqBufs = 64, kMaxTags = 256, kMaxPosted = 96;

struct Msg {
  uint32_t src, seq, id, len;
  bool early;   // sent without waiting for its receive to be in the hardware list
  uint64_t tag() const { return (uint64_t(src) << 32) | (seq * 2654435761u % 13); }   // 13 user tags
};
struct Recv {
  uint32_t id;              // post order
  uint64_t tag, mask;
  int got = -1;             // message id
  bool in_hw = false;
  bool confirmed = false;   // its TM_ADD completion arrived (the hardware has the entry)
  uint32_t handle = 0;
};

bool matches(const Recv& r, uint64_t tag) { return ((tag ^ r.tag) & r.mask) == 0; }

class TmMpi : public SystemTest {};

TEST_F(TmMpi, ThousandsOfTaggedMessagesInMpiOrder) {
  std::mt19937_64 rng(0x7A6);
  const int kSenders = 3;
  const int kMsgs = std::getenv("TMNIC_TM_MSGS") ? std::atoi(std::getenv("TMNIC_TM_MSGS")) : 2400;
  const bool debug = std::getenv("TMNIC_TM_DEBUG") != nullptr;
  uint64_t iter = 0;
  // Receiver: NIC 1, one TM-SRQ; extended CQ with TM info for all its completions.
  struct ibv_cq_init_attr_ex ca = {};
  ca.cqe = 4095;
  ca.wc_flags = IBV_WC_EX_WITH_TM_INFO | IBV_WC_STANDARD_FLAGS;
  struct ibv_cq_ex* rcq = ibv_create_cq_ex(ctx_[1], &ca);
  ASSERT_NE(rcq, nullptr) << std::strerror(errno);
  defer([rcq] { EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(rcq)), 0); });
  struct ibv_srq_init_attr_ex sa = {};
  sa.attr.max_wr = 256;
  sa.attr.max_sge = 1;
  sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
  sa.srq_type = IBV_SRQT_TM;
  sa.pd = pd_[1];
  sa.cq = ibv_cq_ex_to_cq(rcq);
  sa.tm_cap.max_num_tags = kMaxTags;
  sa.tm_cap.max_ops = 512;
  struct ibv_srq* srq = ibv_create_srq_ex(ctx_[1], &sa);
  ASSERT_NE(srq, nullptr) << std::strerror(errno);
  defer([srq] { EXPECT_EQ(ibv_destroy_srq(srq), 0); });

  Buf rbuf = buf(1, size_t(kMaxPosted + 8) * kRecvBuf * 2 + 4096);   // receive buffers (by slot)
  Buf sbufm = buf(1, size_t(kSrqBufs) * kRecvBuf);                      // SRQ (unexpected) buffers
  Buf tx[kSenders] = {buf(0, 1 << 20), buf(0, 1 << 20), buf(1, 1 << 20)};
  // Senders 0 and 1 on NIC 0 (wire), sender 2 on NIC 1 (loopback), each to its own receiver QP.
  Qp sq[kSenders], rq[kSenders];
  QpOpts ro;
  ro.srq = srq;
  ro.scq = Cq{ibv_cq_ex_to_cq(rcq), rcq};
  ro.send_wr = 1;
  for (int s = 0; s < kSenders; s++) {
    QpOpts so;
    so.send_wr = 64;
    sq[s] = qp(s == 2 ? 1 : 0, so);
    rq[s] = qp(1, ro);
    ASSERT_TRUE(sq[s].qp && rq[s].qp);
    connect(sq[s], rq[s]);
  }
  for (uint32_t i = 0; i < kSrqBufs; i++) ASSERT_EQ(post_srq(srq, 1000000 + i, {sge(sbufm, size_t(i) * kRecvBuf, kRecvBuf)}), 0);

  // Messages, per sender in sequence; receives: one per message, its pattern derived from it.
  std::vector<Msg> msgs;
  std::vector<std::deque<uint32_t>> to_send(kSenders);
  for (int i = 0; i < kMsgs; i++) {
    uint32_t s = uint32_t(rng() % kSenders);
    Msg m{s, uint32_t(to_send[s].size()), uint32_t(i), uint32_t(rng() % 5 == 0 ? 0 : rng() % kMaxMsg), rng() % 10 == 0};
    to_send[s].push_back(m.id);
    msgs.push_back(m);
  }
  std::vector<Recv> recvs;
  std::vector<uint32_t> recv_of_msg(kMsgs);   // the receive generated for each message
  {
    std::vector<uint32_t> order(kMsgs);
    for (int i = 0; i < kMsgs; i++) order[i] = uint32_t(i);
    // Mostly in message order, locally shuffled, so receives come both before and after arrival.
    for (int i = 0; i + 1 < kMsgs; i++) if (rng() % 3 == 0) std::swap(order[i], order[std::min(kMsgs - 1, i + 1 + int(rng() % 6))]);
    for (uint32_t k = 0; k < uint32_t(kMsgs); k++) {
      const Msg& m = msgs[order[k]];
      int kind = int(rng() % 20);
      uint64_t mask = kind < 12 ? ~0ull : kind < 15 ? kSrcMask : kind < 18 ? kTagMask : 0;   // exact, ANY_TAG, ANY_SOURCE, both
      recvs.push_back(Recv{k, m.tag() & mask, mask});
      recv_of_msg[m.id] = k;
    }
  }

  std::list<uint32_t> posted;                 // receives not yet completed, in post order
  std::deque<std::pair<uint32_t, uint32_t>> unexp;   // (message id, SRQ buffer slot) in arrival order
  std::vector<uint8_t> uq_data;
  std::map<uint32_t, std::vector<uint8_t>> unexp_payload;
  std::map<uint64_t, uint32_t> hw_wrid;       // recv_wr_id -> receive id
  std::map<uint32_t, uint32_t> matched_mid;   // receive id -> the message its MATCH named
  std::vector<int> msg_recv(kMsgs, -1);       // message -> receive that got it
  uint32_t unexp_cnt = 0, next_recv = 0, free_slot = 0, syncs_pending = 0, dels_pending = 0;
  std::vector<uint32_t> slot_of(kMsgs + 1, 0);
  int inflight[kSenders] = {};
  uint64_t stranded = 0, adds_confirmed = 0, adds_posted = 0, match_only = 0;

  auto check_data = [&](uint32_t mid, const uint8_t* p, uint32_t len) {
    const Msg& m = msgs[mid];
    EXPECT_EQ(len, m.len) << "message " << mid;
    for (uint32_t i = 0; i < std::min(len, m.len); i++)
      if (p[i] != pattern(mid, i)) { ADD_FAILURE() << "message " << mid << " byte " << i; break; }
  };
  auto complete = [&](uint32_t rid, uint32_t mid) {
    ASSERT_EQ(recvs[rid].got, -1) << "receive " << rid << " completed twice";
    ASSERT_EQ(msg_recv[mid], -1) << "message " << mid << " delivered twice";
    recvs[rid].got = int(mid);
    msg_recv[mid] = int(rid);
    posted.remove(rid);
  };
  auto post_ops = [&](struct ibv_ops_wr* op) {
    struct ibv_ops_wr* bad = nullptr;
    int ret = ibv_post_srq_ops(srq, op, &bad);
    EXPECT_EQ(ret, 0) << "ibv_post_srq_ops: " << std::strerror(ret);
    return ret;
  };
  auto sync = [&]() {
    struct ibv_ops_wr op = {};
    op.wr_id = 7;
    op.opcode = IBV_WR_TAG_SYNC;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = unexp_cnt;
    if (post_ops(&op) == 0) syncs_pending++;
  };
  // MPI_Irecv: the unexpected queue first (earliest arrival that matches), else the hardware list.
  auto post_recv_mpi = [&](uint32_t rid) {
    Recv& r = recvs[rid];
    for (auto it = unexp.begin(); it != unexp.end(); ++it) {
      if (matches(r, msgs[it->first].tag())) {
        posted.push_back(rid);
        auto& d = unexp_payload[it->first];
        check_data(it->first, d.data(), uint32_t(d.size()));
        complete(rid, it->first);
        unexp_payload.erase(it->first);
        unexp.erase(it);
        return;
      }
    }
    uint32_t slot = free_slot++ % (2 * kMaxPosted);
    slot_of[rid] = slot;
    struct ibv_sge sg = sge(rbuf, size_t(slot) * kRecvBuf, kRecvBuf);
    struct ibv_ops_wr op = {};
    op.wr_id = 0x200000000ull | rid;
    op.opcode = IBV_WR_TAG_ADD;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;   // as UCX: signaled, carries the software count
    op.tm.unexpected_cnt = unexp_cnt;
    op.tm.add.recv_wr_id = 0x100000000ull | rid;
    op.tm.add.sg_list = &sg;
    op.tm.add.num_sge = 1;
    op.tm.add.tag = r.tag;
    op.tm.add.mask = r.mask;
    ASSERT_EQ(post_ops(&op), 0);
    if (debug) std::printf("add t=%llu rid=%u tag=%#llx mask=%#llx handle=%u cnt=%u\n", (unsigned long long)tmnic_sim_now(),
                           rid, (unsigned long long)r.tag, (unsigned long long)r.mask, op.tm.handle, unexp_cnt);
    r.in_hw = true;
    adds_posted++;
    r.handle = op.tm.handle;
    hw_wrid[op.tm.add.recv_wr_id] = rid;
    posted.push_back(rid);
  };

  Cq rcqw{ibv_cq_ex_to_cq(rcq), rcq};
  auto m_early = [&](uint32_t mid) { return msgs[mid].early; };
  size_t sent = 0, delivered = 0;
  Stall stall(60'000'000);
  while (delivered < size_t(kMsgs)) {
    bool progress = false;
    // Post some receives (bounded by the hardware list) and send some messages.
    for (int k = 0; k < 4 && next_recv < uint32_t(kMsgs) && posted.size() < kMaxPosted; k++) {
      if (rng() % 2) break;
      post_recv_mpi(next_recv++);
      progress = true;
    }
    for (int s = 0; s < kSenders; s++) {
      if (to_send[s].empty() || inflight[s] >= 48 || rng() % 3 == 0) continue;
      uint32_t mid = to_send[s].front();
      // Mostly after its receive was posted (the common MPI case, matched in hardware), sometimes
      // before (unexpected, and the phase protocol that follows).
      const Recv& want = recvs[recv_of_msg[mid]];
      if (!(want.confirmed || want.got >= 0) && !m_early(mid)) continue;
      to_send[s].pop_front();
      const Msg& m = msgs[mid];
      uint8_t* p = tx[s].p + (size_t(m.seq) % 64) * (kMaxMsg + 64);
      struct ibv_tmh* h = reinterpret_cast<struct ibv_tmh*>(p);
      h->opcode = IBV_TMH_EAGER;
      std::memset(h->reserved, 0, 3);
      h->app_ctx = htonl(mid);
      h->tag = htobe64(m.tag());
      for (uint32_t i = 0; i < m.len; i++) p[16 + i] = pattern(mid, i);
      ASSERT_EQ(post_send(sq[s], mid, {sge(tx[s], size_t(p - tx[s].p), 16 + m.len)}), 0);
      inflight[s]++;
      sent++;
      if (debug) std::printf("send t=%llu mid=%u tag=%#llx len=%u\n", (unsigned long long)tmnic_sim_now(), mid,
                             (unsigned long long)m.tag(), m.len);
      progress = true;
    }
    // Sender completions.
    for (int s = 0; s < kSenders; s++) {
      std::vector<struct ibv_wc> wc;
      poll_once(sq[s].scq, 32, &wc);
      for (auto& w : wc) {
        ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
        inflight[s]--;
        progress = true;
      }
    }
    // Receiver completions (TM info read while the entry is current).
    struct ibv_poll_cq_attr pa = {};
    if (ibv_start_poll(rcq, &pa) == 0) {
      do {
        progress = true;
        const uint64_t wr_id = rcq->wr_id;
        const enum ibv_wc_status st = rcq->status;
        const enum ibv_wc_opcode opc = ibv_wc_read_opcode(rcq);
        const unsigned flags = ibv_wc_read_wc_flags(rcq);
        const uint32_t len = ibv_wc_read_byte_len(rcq);
        struct ibv_wc_tm_info ti = {};
        ibv_wc_read_tm_info(rcq, &ti);
        if (debug)
          std::printf("cqe t=%llu op=%d st=%d flags=%#x wr_id=%#llx len=%u tag=%#llx priv=%u unexp_cnt=%u\n",
                      (unsigned long long)tmnic_sim_now(), int(opc), int(st), flags, (unsigned long long)wr_id, len,
                      (unsigned long long)ti.tag, ti.priv, unexp_cnt);
        if (opc == IBV_WC_TM_SYNC) {
          EXPECT_EQ(st, IBV_WC_SUCCESS);
          syncs_pending--;
        } else if (opc == IBV_WC_TM_DEL) {
          EXPECT_EQ(st, IBV_WC_SUCCESS) << "a disabled receive must still be deletable";
          dels_pending--;
        } else if (opc == IBV_WC_TM_ADD) {
          EXPECT_EQ(st, IBV_WC_SUCCESS);
          ASSERT_GE(wr_id, 0x200000000ull);
          recvs[uint32_t(wr_id - 0x200000000ull)].confirmed = true;
          adds_confirmed++;
          if (flags & IBV_WC_TM_SYNC_REQ) sync();     // added out of phase
        } else if (opc == IBV_WC_TM_RECV && (flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID))) {
          ASSERT_EQ(st, IBV_WC_SUCCESS) << "matched receive " << wr_id;
          ASSERT_TRUE(hw_wrid.count(wr_id)) << "unknown recv_wr_id " << wr_id;
          const uint32_t rid = hw_wrid[wr_id];
          // MATCH names the message (TMH tag and app_ctx); the DATA_VALID-only completion of a
          // multi-packet message carries no TMH (tm_info 0, as mlx5): take the MATCH's.
          uint32_t mid;
          if (flags & IBV_WC_TM_MATCH) {
            mid = ti.priv;
            ASSERT_LT(mid, uint32_t(kMsgs));
            EXPECT_EQ(ti.tag, msgs[mid].tag());
            EXPECT_TRUE(matches(recvs[rid], ti.tag)) << "receive " << rid << " got a tag it does not match";
            matched_mid[rid] = mid;
          } else {
            ASSERT_TRUE(matched_mid.count(rid)) << "DATA_VALID without MATCH for receive " << rid;
            mid = matched_mid[rid];
            EXPECT_EQ(ti.tag, 0u);
            EXPECT_EQ(ti.priv, 0u);
          }
          if (flags == IBV_WC_TM_MATCH) match_only++;
          if (flags & IBV_WC_TM_DATA_VALID) {
            check_data(mid, rbuf.p + size_t(slot_of[rid]) * kRecvBuf, len);
            complete(rid, mid);
            hw_wrid.erase(wr_id);
          }
        } else if (opc == IBV_WC_TM_RECV) {
          // Unexpected: the whole message (TMH first) in an SRQ buffer.
          ASSERT_EQ(st, IBV_WC_SUCCESS);
          ASSERT_GE(wr_id, 1000000u);
          const uint32_t slot = uint32_t(wr_id - 1000000);
          const uint8_t* p = sbufm.p + size_t(slot) * kRecvBuf;
          const struct ibv_tmh* h = reinterpret_cast<const struct ibv_tmh*>(p);
          const uint32_t mid = ntohl(h->app_ctx);
          ASSERT_LT(mid, uint32_t(kMsgs));
          EXPECT_EQ(be64toh(h->tag), msgs[mid].tag());
          ASSERT_GE(len, 16u);
          unexp_cnt++;
          // An out-of-phase receive posted earlier may match it: it takes the message.
          int taker = -1;
          for (uint32_t rid : posted) if (matches(recvs[rid], msgs[mid].tag())) { taker = int(rid); break; }
          if (taker >= 0) {
            check_data(mid, p + 16, len - 16);
            Recv& r = recvs[uint32_t(taker)];
            EXPECT_TRUE(r.in_hw);
            struct ibv_ops_wr op = {};
            op.wr_id = 9;
            op.opcode = IBV_WR_TAG_DEL;
            op.flags = IBV_OPS_SIGNALED;
            op.tm.handle = r.handle;
            if (post_ops(&op) == 0) dels_pending++;
            hw_wrid.erase(0x100000000ull | r.id);
            complete(uint32_t(taker), mid);
          } else {
            unexp.push_back({mid, slot});
            unexp_payload[mid] = std::vector<uint8_t>(p + 16, p + len);
          }
          sync();
          EXPECT_EQ(post_srq(srq, wr_id, {sge(sbufm, size_t(slot) * kRecvBuf, kRecvBuf)}), 0);
        } else {
          ADD_FAILURE() << "unexpected completion opcode " << int(opc) << " status " << int(st);
        }
      } while (ibv_next_poll(rcq) == 0);
      ibv_end_poll(rcq);
    }
    // Messages taken from the unexpected queue at post time count as delivered.
    delivered = 0;
    for (int i = 0; i < kMsgs; i++) delivered += msg_recv[i] >= 0;
    // Every receive posted, all messages sent, nothing in flight: a stranded state (greedy MPI
    // matching with wildcards can leave messages that fit no remaining receive). Post fully
    // wildcarded receives for them, and delete the receives nothing will match.
    if (next_recv == uint32_t(kMsgs) && sent == size_t(kMsgs) && !progress && !unexp.empty() && syncs_pending == 0 &&
        dels_pending == 0) {
      bool all_sent = true;
      for (int s = 0; s < kSenders; s++) all_sent &= inflight[s] == 0;
      if (all_sent) {
        stranded++;
        recvs.push_back(Recv{uint32_t(recvs.size()), 0, 0});
        post_recv_mpi(uint32_t(recvs.size() - 1));
        progress = true;
      }
    }
    if (debug && ++iter % 20000 == 0)
      std::printf("iter %llu t=%llu delivered %zu sent %zu uq %zu posted %zu unexp_cnt %u syncs %u dels %u next_recv %u\n",
                  (unsigned long long)iter, (unsigned long long)tmnic_sim_now(), delivered, sent, unexp.size(),
                  posted.size(), unexp_cnt, syncs_pending, dels_pending, next_recv);
    if (debug && (++iter % 100) == 0) {
      std::printf("  tm stats:");
      for (uint32_t k = 0; k < tmnic::hwif::tmstat::COUNT; k++)
        std::printf(" %s=%#x", tmnic::hwif::tmstat::name(k), tmnic_sim_read_reg(1, tmnic::hwif::reg::TM_STATS0 + 4 * k));
      std::printf("\n");
    }
    if (stall.stuck(progress)) {
      ADD_FAILURE() << "no progress: delivered " << delivered << " of " << kMsgs << ", sent " << sent << ", unexpected queue "
                    << unexp.size() << ", posted " << posted.size() << counters();
      break;
    }
  }
  EXPECT_EQ(delivered, size_t(kMsgs)) << counters();
  for (int i = 0; i < kMsgs; i++) EXPECT_GE(msg_recv[i], 0) << "message " << i << " never delivered";
  // Non-overtaking: for a receive R that got message m of sender s, every earlier message of s that
  // R also matches went to a receive posted before R.
  uint64_t checked = 0;
  for (const Recv& r : recvs) {
    if (r.got < 0) continue;
    const Msg& m = msgs[uint32_t(r.got)];
    for (uint32_t j = 0; j < uint32_t(kMsgs); j++) {
      const Msg& e = msgs[j];
      if (e.src != m.src || e.seq >= m.seq || !matches(r, e.tag())) continue;
      checked++;
      ASSERT_GE(msg_recv[j], 0);
      EXPECT_LT(uint32_t(msg_recv[j]), r.id) << "receive " << r.id << " got message " << m.id << " (sender " << m.src
                                            << " seq " << m.seq << ") although earlier message " << j << " matched it";
    }
  }
  EXPECT_GT(checked, 1000u) << "the order check must have something to check";
  // Receives nothing matched any more are cancelled: DEL succeeds for each.
  for (uint32_t rid : std::vector<uint32_t>(posted.begin(), posted.end())) {
    struct ibv_ops_wr op = {};
    op.wr_id = 11;
    op.opcode = IBV_WR_TAG_DEL;
    op.flags = IBV_OPS_SIGNALED;
    op.tm.handle = recvs[rid].handle;
    ASSERT_EQ(post_ops(&op), 0);
    auto w = sys::poll(rcqw, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].status, IBV_WC_SUCCESS);
  }
  uint32_t occ = tmnic_sim_read_reg(1, tmnic::hwif::reg::TM_STATS0 + tmnic::hwif::tmstat::OCCUPANCY * 4 +
                                           tmnic::hwif::TM_STATS_STRIDE * 0);
  const uint32_t expected_hw = tmnic_sim_read_reg(1, tmnic::hwif::reg::TM_STATS0 + tmnic::hwif::tmstat::EXPECTED * 4);
  EXPECT_GT(expected_hw, uint32_t(kMsgs) / 4) << "most messages should be matched by the hardware";
  EXPECT_GT(unexp_cnt, 0u) << "some messages should arrive unexpected";
  EXPECT_GT(match_only, 100u) << "multi-packet messages complete in two steps (MATCH, then DATA_VALID)";
  EXPECT_EQ(adds_confirmed, adds_posted) << "every ADD completes once";
  std::printf("tm-mpi: %d messages, %u matched in hardware, %u unexpected, %llu stranded re-posts, %llu order checks, occupancy now %u\n",
              kMsgs, expected_hw, unexp_cnt, (unsigned long long)stranded, (unsigned long long)checked, occ);
}

}  // namespace
