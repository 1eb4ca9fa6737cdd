// UD queue pairs through the verbs API on two simulated NICs (and one NIC's loopback): datagrams with
// the GRH in front of every receive, address handles (also made from a receive's GRH), Q_Key checks
// with the IBA's high-bit rule, a datagram without a receive WQE, a receive buffer too small, a
// send over the MTU, an SRQ fed by several senders. What IBA ch. 10/11 and ibv_post_send(3) say a
// UD QP does; mlx5's choices where they are silent (docs/architecture.md).
#include <netinet/ip.h>

#include "system_test.hpp"

namespace {

using namespace sys;
namespace hw = tmnic::hwif;

constexpr uint32_t kQkey = 0x11110000;
constexpr uint32_t kGrh = 40;

class Ud : public SystemTest {
 protected:
  // A UD QP on `dev` in RTS with Q_Key `qkey`; its receives come from `srq` if given.
  Qp ud_qp(int dev, uint32_t qkey = kQkey, struct ibv_srq* srq = nullptr, Cq rcq = {}) {
    Qp q;
    q.dev = dev;
    q.scq = cq(dev, 255, false);
    q.rcq = rcq.cq ? rcq : cq(dev, 255, false);
    q.srq = srq;
    struct ibv_qp_init_attr a = {};
    a.send_cq = q.scq.cq;
    a.recv_cq = q.rcq.cq;
    a.srq = srq;
    a.qp_type = IBV_QPT_UD;
    a.cap.max_send_wr = 64;
    a.cap.max_recv_wr = srq ? 0 : 64;
    a.cap.max_send_sge = 2;
    a.cap.max_recv_sge = srq ? 0 : 2;
    q.qp = ibv_create_qp(pd_[dev], &a);
    EXPECT_NE(q.qp, nullptr) << "ibv_create_qp(UD): " << std::strerror(errno);
    if (!q.qp) return q;
    adopt(q, false, 0);
    struct ibv_qp_attr m = {};
    m.qp_state = IBV_QPS_INIT;
    m.pkey_index = 0;
    m.port_num = 1;
    m.qkey = qkey;
    EXPECT_EQ(ibv_modify_qp(q.qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
    m = {};
    m.qp_state = IBV_QPS_RTR;
    EXPECT_EQ(ibv_modify_qp(q.qp, &m, IBV_QP_STATE), 0);
    m = {};
    m.qp_state = IBV_QPS_RTS;
    m.sq_psn = 0x2222;
    EXPECT_EQ(ibv_modify_qp(q.qp, &m, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
    return q;
  }
  // An address handle on device `dev` for device `peer`'s GID (traffic class and hop limit: the
  // datagrams' IPv4 TOS and TTL).
  struct ibv_ah* ah(int dev, int peer, uint8_t tclass = 0, uint8_t hop_limit = 64) {
    struct ibv_ah_attr a = {};
    a.is_global = 1;
    a.grh.dgid = gid_[peer];
    a.grh.sgid_index = 0;
    a.grh.hop_limit = hop_limit;
    a.grh.traffic_class = tclass;
    a.port_num = 1;
    struct ibv_ah* h = ibv_create_ah(pd_[dev], &a);
    EXPECT_NE(h, nullptr) << "ibv_create_ah: " << std::strerror(errno);
    if (h) defer([h] { EXPECT_EQ(ibv_destroy_ah(h), 0); });
    return h;
  }
  static int send(const Qp& q, struct ibv_ah* ah, uint32_t dqpn, uint32_t qkey, const Buf& b, uint32_t len,
                  uint64_t wr_id, bool imm = false, uint32_t imm_data = 0) {
    struct ibv_sge sg = {b.addr(), len, b.lkey()};
    struct ibv_send_wr wr = {}, *bad = nullptr;
    wr.wr_id = wr_id;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.imm_data = htonl(imm_data);
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = dqpn;
    wr.wr.ud.remote_qkey = qkey;
    return ibv_post_send(q.qp, &wr, &bad);
  }
  uint32_t ipv4(int dev) const {
    uint32_t a;
    std::memcpy(&a, gid_[dev].raw + 12, 4);
    return a;  // (network order)
  }
  // The GRH of a received datagram: 20 zero bytes, then the IPv4 header from `src` to `dst`.
  void expect_grh(const uint8_t* g, int src, int dst, uint32_t pay, bool imm = false, uint8_t tos = 0,
                  uint8_t ttl = 64) {
    for (unsigned i = 0; i < 20; i++) ASSERT_EQ(g[i], 0) << "GRH byte " << i;
    struct iphdr ip;
    std::memcpy(&ip, g + 20, sizeof ip);
    EXPECT_EQ(ip.version, 4u);
    EXPECT_EQ(ip.ihl, 5u);
    EXPECT_EQ(ip.protocol, IPPROTO_UDP);
    EXPECT_EQ(ip.saddr, ipv4(src));
    EXPECT_EQ(ip.daddr, ipv4(dst));
    EXPECT_EQ(ip.tos, tos);
    EXPECT_EQ(ip.ttl, ttl);
    // IPv4 + UDP + BTH + DETH (+ ImmDt) + payload + pad + ICRC
    EXPECT_EQ(ntohs(ip.tot_len), 20u + 8 + 12 + 8 + (imm ? 4 : 0) + pay + ((0u - pay) & 3) + 4);
  }
};

// Datagrams of 0, 1, 1000 and 4096 bytes (the MTU) and one with an immediate, between two NICs and
// within one: each lands after its GRH (with the TOS and TTL of the sender's address handle),
// completes with the sender's QP number and IBV_WC_GRH, and the receiver answers the sender with an
// address handle made from that GRH (whose traffic class and hop limit are the received TOS and TTL,
// as libibverbs makes them).
TEST_F(Ud, DatagramsCarryTheGrhAndTheSender) {
  for (int rdev : {1, 0}) {
    SCOPED_TRACE(rdev == 1 ? "two NICs" : "loopback");
    Qp a = ud_qp(0), b = ud_qp(rdev);
    ASSERT_TRUE(a.qp && b.qp);
    struct ibv_ah* ab = ah(0, rdev, 0xB8, 9);
    ASSERT_NE(ab, nullptr);
    const std::vector<uint32_t> sizes = {0, 1, 1000, 4096, 77};
    Buf tx = buf(0, 4096), rx = buf(rdev, sizes.size() * (kGrh + 4096));
    for (size_t i = 0; i < sizes.size(); i++)
      ASSERT_EQ(post_recv(b, i, {{rx.addr(i * (kGrh + 4096)), kGrh + 4096, rx.lkey()}}), 0);
    for (size_t i = 0; i < sizes.size(); i++) {
      for (uint32_t k = 0; k < sizes[i]; k++) tx.p[k] = pattern(uint32_t(i), k);
      ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, sizes[i], 100 + i, i == 4, 0xA5A5F00D), 0);
      auto s = poll(a.scq, 1);
      ASSERT_EQ(s.size(), 1u);
      EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << wc_str(s[0]);
      EXPECT_EQ(s[0].opcode, IBV_WC_SEND);
      auto r = poll(b.rcq, 1);
      ASSERT_EQ(r.size(), 1u) << counters();
      const struct ibv_wc& w = r[0];
      EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      EXPECT_EQ(w.opcode, IBV_WC_RECV);
      EXPECT_EQ(w.wr_id, i);
      EXPECT_EQ(w.byte_len, kGrh + sizes[i]);
      EXPECT_EQ(w.src_qp, a.num());
      EXPECT_EQ(w.qp_num, b.num());
      EXPECT_TRUE(w.wc_flags & IBV_WC_GRH);
      EXPECT_EQ(bool(w.wc_flags & IBV_WC_WITH_IMM), i == 4);
      if (i == 4) {
        EXPECT_EQ(ntohl(w.imm_data), 0xA5A5F00Du);
      }
      const uint8_t* g = rx.p + i * (kGrh + 4096);
      expect_grh(g, 0, rdev, sizes[i], i == 4, 0xB8, 9);
      for (uint32_t k = 0; k < sizes[i]; k++) ASSERT_EQ(g[kGrh + k], pattern(uint32_t(i), k)) << "byte " << k;
    }
    // The answer goes where the GRH says the datagram came from.
    struct ibv_wc w = {};
    w.wc_flags = IBV_WC_GRH;
    w.src_qp = a.num();
    struct ibv_ah* back = ibv_create_ah_from_wc(pd_[rdev], &w, reinterpret_cast<struct ibv_grh*>(rx.p), 1);
    ASSERT_NE(back, nullptr) << std::strerror(errno);
    defer([back] { EXPECT_EQ(ibv_destroy_ah(back), 0); });
    Buf ans = buf(rdev, 64), got = buf(0, kGrh + 64);
    std::memcpy(ans.p, "reply", 5);
    ASSERT_EQ(post_recv(a, 7, {{got.addr(), kGrh + 64, got.lkey()}}), 0);
    ASSERT_EQ(send(b, back, a.num(), kQkey, ans, 5, 8), 0);
    auto r = poll(a.rcq, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(r[0].src_qp, b.num());
    EXPECT_EQ(std::memcmp(got.p + kGrh, "reply", 5), 0);
    expect_grh(got.p, rdev, 0, 5, false, 0xB8, 9);
    EXPECT_EQ(poll(b.scq, 1).size(), 1u);
  }
}

// IBA C10-15: a datagram whose Q_Key is not the QP's is dropped silently and counted; the sender
// still completes (UD is unreliable). A Q_Key with its high bit set means "the sending QP's own
// Q_Key" (ibv_post_send(3)).
TEST_F(Ud, WrongQkeyIsDroppedAndCountedHighBitSendsTheQpsOwn) {
  Qp a = ud_qp(0, kQkey), b = ud_qp(1, kQkey);
  Qp c = ud_qp(0, 0x0BADBEEF);  // a sender whose own Q_Key is wrong for b
  struct ibv_ah* ab = ah(0, 1);
  Buf tx = buf(0, 64), rx = buf(1, 4 * (kGrh + 64));
  for (int i = 0; i < 4; i++) ASSERT_EQ(post_recv(b, i, {{rx.addr(i * (kGrh + 64)), kGrh + 64, rx.lkey()}}), 0);
  const uint32_t drops = counter(1, hw::stat::RX_DROP_QKEY);
  ASSERT_EQ(send(a, ab, b.num(), kQkey + 1, tx, 16, 1), 0);         // wrong
  ASSERT_EQ(send(c, ab, b.num(), 0x80000000u, tx, 16, 2), 0);       // c's own: wrong
  for (const Qp* s : {&a, &c}) {
    auto w = poll(s->scq, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].status, IBV_WC_SUCCESS);
  }
  run_for(20000);
  EXPECT_TRUE(drain(b.rcq).empty());
  EXPECT_EQ(counter(1, hw::stat::RX_DROP_QKEY), drops + 2) << counters();
  ASSERT_EQ(send(a, ab, b.num(), 0x80000000u | 0x1234, tx, 16, 3), 0);  // a's own: right
  auto r = poll(b.rcq, 1);
  ASSERT_EQ(r.size(), 1u) << counters();
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[0].wr_id, 0u);  // the first receive: nothing consumed by the dropped ones
  EXPECT_EQ(r[0].src_qp, a.num());
  // A Q_Key change at RTS takes effect for the next datagram.
  struct ibv_qp_attr m = {};
  m.qkey = kQkey + 1;
  ASSERT_EQ(ibv_modify_qp(b.qp, &m, IBV_QP_QKEY), 0);
  ASSERT_EQ(send(a, ab, b.num(), kQkey + 1, tx, 16, 4), 0);
  r = poll(b.rcq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 1u);
  EXPECT_EQ(counter(1, hw::stat::RX_DROP_QKEY), drops + 2);
}

// No receive WQE: the datagram is dropped and counted, never RNR-NAKed, and the next one lands.
TEST_F(Ud, NoReceiveWqeDropsTheDatagram) {
  Qp a = ud_qp(0), b = ud_qp(1);
  struct ibv_ah* ab = ah(0, 1);
  Buf tx = buf(0, 64), rx = buf(1, kGrh + 64);
  const uint32_t nowqe = counter(1, hw::stat::RX_UD_NO_WQE), rnr = counter(1, hw::stat::TX_RNR_NAKS);
  ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, 10, 1), 0);
  EXPECT_EQ(poll(a.scq, 1).size(), 1u);
  run_for(20000);
  EXPECT_EQ(counter(1, hw::stat::RX_UD_NO_WQE), nowqe + 1) << counters();
  EXPECT_EQ(counter(1, hw::stat::TX_RNR_NAKS), rnr);
  ASSERT_EQ(post_recv(b, 5, {{rx.addr(), kGrh + 64, rx.lkey()}}), 0);
  ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, 10, 2), 0);
  auto r = poll(b.rcq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 5u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
}

// A receive buffer too small for GRH + payload: the WQE completes with LOC_LEN_ERR, nothing is
// written into it, and the QP goes on (IBA class D, as rxe); a send over the MTU fails at the
// sender with LOC_LEN_ERR before any packet leaves, and the sending QP goes to ERR.
TEST_F(Ud, LengthErrorsOnBothSides) {
  Qp a = ud_qp(0), b = ud_qp(1);
  struct ibv_ah* ab = ah(0, 1);
  Buf tx = buf(0, 8192), small = buf(1, 128), big = buf(1, kGrh + 4096);
  std::memset(small.p, 0xEE, 128);
  ASSERT_EQ(post_recv(b, 1, {{small.addr(), 128, small.lkey()}}), 0);
  ASSERT_EQ(post_recv(b, 2, {{big.addr(), kGrh + 4096, big.lkey()}}), 0);
  ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, 100, 1), 0);  // 140 bytes into 128
  auto r = poll(b.rcq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, IBV_WC_LOC_LEN_ERR) << wc_str(r[0]);
  EXPECT_EQ(r[0].wr_id, 1u);
  for (int i = 0; i < 128; i++) ASSERT_EQ(small.p[i], 0xEE) << "byte " << i << " written";
  EXPECT_EQ(state(b), IBV_QPS_RTS);
  ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, 4096, 2), 0);
  r = poll(b.rcq, 1);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(r[0].byte_len, kGrh + 4096);
  EXPECT_EQ(poll(a.scq, 2).size(), 2u);
  // Over the MTU (4096): fails locally, no packet.
  const uint32_t tx_pkts = counter(0, hw::stat::TX_PKTS);
  ASSERT_EQ(send(a, ab, b.num(), kQkey, tx, 4097, 3), 0);
  auto s = poll(a.scq, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, IBV_WC_LOC_LEN_ERR) << wc_str(s[0]);
  EXPECT_EQ(counter(0, hw::stat::TX_PKTS), tx_pkts);
  EXPECT_EQ(state(a), IBV_QPS_ERR);
}

// One UD QP on an SRQ receives from three senders (two on the other NIC, one on its own): every
// datagram once, each with its sender's QP number, in each sender's order.
TEST_F(Ud, SrqFedBySeveralSenders) {
  struct ibv_srq* s = srq(1, 256, 1);
  ASSERT_NE(s, nullptr);
  Qp b = ud_qp(1, kQkey, s);
  Qp senders[3] = {ud_qp(0), ud_qp(0), ud_qp(1)};
  struct ibv_ah* to_b[3] = {ah(0, 1), ah(0, 1), ah(1, 1)};
  const int per = 20;
  Buf rx = buf(1, 3 * per * (kGrh + 256));
  for (int i = 0; i < 3 * per; i++)
    ASSERT_EQ(post_srq(s, i, {{rx.addr(size_t(i) * (kGrh + 256)), kGrh + 256, rx.lkey()}}), 0);
  Buf tx[3] = {buf(0, 256 * per), buf(0, 256 * per), buf(1, 256 * per)};
  for (int m = 0; m < per; m++) {
    for (int k = 0; k < 3; k++) {
      uint8_t* p = tx[k].p + 256 * m;
      p[0] = uint8_t(k);
      p[1] = uint8_t(m);
      struct ibv_sge sg = {tx[k].addr(256 * m), 2 + uint32_t(m), tx[k].lkey()};
      struct ibv_send_wr wr = {}, *bad = nullptr;
      wr.sg_list = &sg;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.wr.ud.ah = to_b[k];
      wr.wr.ud.remote_qpn = b.num();
      wr.wr.ud.remote_qkey = kQkey;
      ASSERT_EQ(ibv_post_send(senders[k].qp, &wr, &bad), 0);
    }
  }
  for (auto& q : senders) EXPECT_EQ(poll(q.scq, per).size(), size_t(per));
  auto r = poll(b.rcq, 3 * per);
  ASSERT_EQ(r.size(), size_t(3 * per)) << counters();
  int next[3] = {0, 0, 0};
  for (auto& w : r) {
    ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
    const uint8_t* p = rx.p + w.wr_id * (kGrh + 256) + kGrh;
    const int k = p[0];
    ASSERT_LT(k, 3);
    EXPECT_EQ(w.src_qp, senders[k].num());
    EXPECT_EQ(p[1], next[k]) << "sender " << k;
    EXPECT_EQ(w.byte_len, kGrh + 2 + uint32_t(next[k]));
    next[k]++;
  }
}

}  // namespace
