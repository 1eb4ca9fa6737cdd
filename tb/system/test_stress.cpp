// System tests, many messages: 8 QPs sharing one SRQ (qp_num/src_qp of every receive completion),
// and 3000 messages of random sizes, SGE splits, opcodes and inline flags with a window of
// outstanding messages, every byte checked, completions read with ibv_poll_cq on one side and the
// extended CQ (ibv_start_poll/ibv_next_poll/ibv_end_poll) on the other. Loopback and two NICs.
#include <random>

#include "system_test.hpp"

namespace {

using namespace sys;
namespace st = tmnic::hwif::stat;

class Stress : public SystemTest, public ::testing::WithParamInterface<int> {
 protected:
  int rdev() const { return GetParam(); }
};

// 8 sender QPs on tmnic0, 8 receiver QPs sharing one SRQ (and one CQ). Each message carries its
// sender index and sequence number; the receive completion must name the receiving QP (qp_num) and
// the sending one (src_qp), and each connection delivers in order.
TEST_P(Stress, EightQpsShareOneSrq) {
  constexpr int kQps = 8, kRounds = 24, kSlot = 4096, kSlots = 64;
  Cq scq = cq(0, 255, false);
  Cq rcq = cq(rdev(), 255, rdev() == 0);  // extended CQ on loopback, plain on two NICs
  struct ibv_srq* s_rq = srq(rdev(), 255, 1);
  ASSERT_NE(s_rq, nullptr);
  std::vector<Qp> snd, rcv;
  for (int k = 0; k < kQps; k++) {
    QpOpts so;
    so.scq = scq;
    snd.push_back(qp(0, so));
    QpOpts ro;
    ro.scq = rcq;  // the receiver's send CQ is unused; share the receive CQ
    ro.rcq = rcq;
    ro.srq = s_rq;
    rcv.push_back(qp(rdev(), ro));
    ASSERT_TRUE(snd.back().qp && rcv.back().qp);
    ConnOpts c;
    c.psn = 0x1000 * k + 0xFFFFF0 * (k & 1);  // some pairs wrap their PSN through 0xFFFFFF
    c.psn &= 0xFFFFFF;
    connect(snd.back(), rcv.back(), c);
  }
  for (int k = 0; k < kQps; k++)
    for (int j = 0; j < kQps; j++)
      if (j != k) {
        ASSERT_NE(rcv[k].num(), rcv[j].num());
      }
  Buf sb = buf(0, kQps * kSlot);
  Buf rb = buf(rdev(), kSlots * kSlot);
  for (int i = 0; i < kSlots; i++) ASSERT_EQ(post_srq(s_rq, i, {sge(rb, size_t(i) * kSlot, kSlot)}), 0);
  const uint32_t rnr0 = counter(rdev(), st::TX_RNR_NAKS);
  std::vector<int> next_seq(kQps, 0);
  int received = 0;
  for (int round = 0; round < kRounds; round++) {
    for (int k = 0; k < kQps; k++) {
      uint32_t m = uint32_t(k * 1000 + round);
      uint32_t len = 8 + (m * 977) % (kSlot - 8);
      uint8_t* p = sb.p + size_t(k) * kSlot;
      p[0] = uint8_t(k);
      p[1] = uint8_t(round);
      p[2] = p[3] = 0xA5;
      for (uint32_t i = 4; i < len; i++) p[i] = pattern(m, i);
      ASSERT_EQ(post_send(snd[k], m, {sge(sb, size_t(k) * kSlot, len)}), 0);
    }
    auto sc = poll(scq, kQps);
    ASSERT_EQ(sc.size(), size_t(kQps)) << "round " << round;
    for (auto& w : sc) EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
    auto rc = poll(rcq, kQps);
    ASSERT_EQ(rc.size(), size_t(kQps)) << "round " << round;
    for (auto& w : rc) {
      ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      ASSERT_LT(w.wr_id, uint64_t(kSlots));
      const uint8_t* p = rb.p + w.wr_id * kSlot;
      int k = p[0];
      ASSERT_LT(k, kQps) << wc_str(w);
      uint32_t m = uint32_t(k * 1000 + p[1]);
      EXPECT_EQ(p[1], next_seq[k]) << "connection " << k << " out of order";
      next_seq[k] = p[1] + 1;
      EXPECT_EQ(w.qp_num, rcv[k].num()) << "receiving QP of connection " << k;
      EXPECT_EQ(w.src_qp, snd[k].num()) << "sending QP of connection " << k;
      EXPECT_EQ(w.opcode, IBV_WC_RECV);
      uint32_t len = 8 + (m * 977) % (kSlot - 8);
      EXPECT_EQ(w.byte_len, len);
      for (uint32_t i = 4; i < len; i++)
        if (p[i] != pattern(m, i)) {
          ADD_FAILURE() << "message " << m << " byte " << i;
          break;
        }
      received++;
      ASSERT_EQ(post_srq(s_rq, w.wr_id, {sge(rb, w.wr_id * kSlot, kSlot)}), 0);  // repost the slot
    }
  }
  EXPECT_EQ(received, kQps * kRounds);
  EXPECT_EQ(counter(rdev(), st::TX_RNR_NAKS), rnr0) << "the SRQ never ran empty";
}

// 3000 messages of random length (0..64 KiB, mostly around the PMTU), random SGE splits (1-3 send,
// 1-2 receive, random alignment), 1/4 SEND_WITH_IMM, inline when small, up to 16 in flight.
TEST_P(Stress, ThreeThousandRandomMessages) {
  constexpr int kMsgs = 3000, kWin = 16;
  constexpr uint32_t kSlot = 65536 + 256;
  const bool ex_send = rdev() == 0;  // loopback: sender polls the extended CQ, receiver ibv_poll_cq
  QpOpts so, ro;
  so.send_sge = 3;
  so.send_wr = 2 * kWin;
  so.scq = cq(0, 255, ex_send);
  ro.recv_sge = 2;
  ro.recv_wr = 2 * kWin;
  ro.scq = cq(rdev(), 255, !ex_send);
  ConnOpts c;
  c.mtu = IBV_MTU_1024;
  auto [s, r] = pair(rdev(), so, ro, c);
  ASSERT_TRUE(s.qp && r.qp);
  ASSERT_TRUE(bool(s.scq.ex) == ex_send && bool(r.rcq.ex) == !ex_send);
  Buf sb = buf(0, size_t(kWin) * kSlot), rb = buf(rdev(), size_t(kWin) * kSlot);

  struct Msg {
    uint32_t len;
    bool imm;
    std::vector<std::pair<uint32_t, uint32_t>> rsg;  // receive SGEs: offset in slot, length
  };
  std::mt19937 rng(20240611);
  auto rnd = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  std::vector<Msg> msgs(kMsgs);
  uint64_t bytes = 0;
  for (auto& m : msgs) {
    uint32_t p = rnd(0, 99);
    m.len = p < 10 ? rnd(0, 96) : p < 75 ? rnd(0, 2100) : p < 97 ? rnd(0, 9000) : rnd(0, 65536);
    m.imm = rnd(0, 3) == 0;
    bytes += m.len;
  }
  const uint64_t t0 = tmnic_sim_now();
  int posted = 0, sdone = 0, rdone = 0;
  Stall stall;
  std::vector<struct ibv_wc> wcs;
  while (rdone < kMsgs || sdone < kMsgs) {
    // Post while the window has room (a slot is free once both completions of its message came).
    while (posted < kMsgs && posted - std::min(sdone, rdone) < kWin) {
      const int id = posted;
      Msg& m = msgs[id];
      const size_t slot = size_t(id % kWin) * kSlot;
      // Receive: 1 or 2 SGEs at a random alignment, together at least the message length.
      uint32_t roff = rnd(0, 63);
      uint32_t cap = kSlot - 64 - roff;
      if (rnd(0, 1)) {
        uint32_t a = rnd(0, std::min(cap, m.len + 50)), gap = rnd(0, 7);
        m.rsg = {{roff, a}, {roff + a + gap, cap - a - gap}};
      } else {
        m.rsg = {{roff, cap}};
      }
      std::memset(rb.p + slot, 0xEE, kSlot);
      std::vector<struct ibv_sge> rs;
      for (auto [o, l] : m.rsg) rs.push_back(sge(rb, slot + o, l));
      ASSERT_EQ(post_recv(r, id, rs), 0);
      // Send: the message at a random offset, cut into 1-3 SGEs.
      uint32_t soff = rnd(0, 63);
      for (uint32_t i = 0; i < m.len; i++) sb.p[slot + soff + i] = pattern(id, i);
      std::vector<struct ibv_sge> ss;
      uint32_t nsge = rnd(1, 3), done = 0;
      for (uint32_t k = 0; k < nsge; k++) {
        uint32_t n = k + 1 == nsge ? m.len - done : rnd(0, m.len - done);
        ss.push_back(sge(sb, slot + soff + done, n));
        done += n;
      }
      unsigned flags = IBV_SEND_SIGNALED;
      if (m.len <= tmnic::hwif::WQE_MAX_INLINE && rnd(0, 2) == 0) flags |= IBV_SEND_INLINE;
      ASSERT_EQ(post_send(s, id, ss, m.imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 0xC0DE0000u + id, flags), 0)
          << "message " << id;
      posted++;
    }
    wcs.clear();
    int ns = poll_once(s.scq, 32, &wcs);
    ASSERT_GE(ns, 0);
    for (auto& w : wcs) {
      ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      ASSERT_EQ(w.wr_id, uint64_t(sdone)) << "send completions in order";
      ASSERT_EQ(w.opcode, IBV_WC_SEND);
      sdone++;
    }
    wcs.clear();
    int nr = poll_once(r.rcq, 32, &wcs);
    ASSERT_GE(nr, 0);
    for (auto& w : wcs) {
      ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      ASSERT_EQ(w.wr_id, uint64_t(rdone)) << "receive completions in order";
      const Msg& m = msgs[rdone];
      const size_t slot = size_t(rdone % kWin) * kSlot;
      ASSERT_EQ(w.byte_len, m.len) << "message " << rdone;
      ASSERT_EQ(w.qp_num, r.num());
      ASSERT_EQ(w.src_qp, s.num());
      if (m.imm) {
        ASSERT_EQ(w.wc_flags, unsigned(IBV_WC_WITH_IMM)) << "message " << rdone;
        ASSERT_EQ(ntohl(w.imm_data), 0xC0DE0000u + rdone);
      } else {
        ASSERT_EQ(w.wc_flags, 0u) << "message " << rdone;
      }
      uint32_t k = 0;
      for (auto [o, l] : m.rsg) {
        for (uint32_t j = 0; j < l && k < m.len; j++, k++)
          ASSERT_EQ(rb.p[slot + o + j], pattern(rdone, k)) << "message " << rdone << " byte " << k;
      }
      ASSERT_EQ(k, m.len);
      rdone++;
    }
    ASSERT_FALSE(stall.stuck(ns || nr))
        << "no completion: sent " << posted << " send-done " << sdone << " recv-done " << rdone;
  }
  const double us = double(tmnic_sim_now() - t0) / tmnic_sim_clk_mhz();
  RecordProperty("simulated_us", std::to_string(us));
  std::printf("3000 messages, %llu bytes in %.1f simulated us (%.2f Gb/s)\n", (unsigned long long)bytes, us,
              bytes * 8 / us / 1000);
  EXPECT_TRUE(drain(s.scq).empty());
  EXPECT_TRUE(drain(r.rcq).empty());
}

INSTANTIATE_TEST_SUITE_P(Topology, Stress, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::string("TwoNics") : std::string("Loopback");
                         });

}  // namespace
