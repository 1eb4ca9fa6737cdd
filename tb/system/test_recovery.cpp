// System tests, recovery under load: RNR NAKs with many messages in flight (go back to the oldest
// unacknowledged message), corrupted frames inside a stream (recovered through the responder's
// PSN-sequence NAK; there every loss is followed by more traffic, so the recovery comes before the
// 67 ms local ACK timeout), a lost last packet, lost ONLY packet and lost ACK recovered by the local
// ACK timeout alone, a silent peer ending in RETRY_EXC_ERR after retry_cnt retries, a QP brought
// back from ERR through RESET, zero-length SGEs, and loopback plus wire traffic at once.
#include <random>

#include "system_test.hpp"

namespace {

using namespace sys;
namespace st = tmnic::hwif::stat;

class Recovery : public SystemTest {
 protected:
  // Checks that receive completion `w` is message `m` (in order) of `len` bytes landed at `p`.
  static void check_msg(const struct ibv_wc& w, uint64_t m, uint32_t len, const uint8_t* p) {
    ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
    ASSERT_EQ(w.byte_len, len) << "message " << m;
    for (uint32_t i = 0; i < len; i++)
      ASSERT_EQ(p[i], pattern(uint32_t(m), i)) << "message " << m << " byte " << i;
  }
};

class RecoveryTopo : public Recovery, public ::testing::WithParamInterface<int> {};

// An SRQ with only 3 buffers behind 48 messages posted at once: the responder RNR-NAKs whenever it
// runs dry, the requester rewinds to the oldest unacknowledged message each time. Every message
// must arrive exactly once, in order, intact; every send completes once, in order.
TEST_P(RecoveryTopo, RnrWithManyMessagesInFlight) {
  constexpr int kMsgs = 48, kBufs = 3;
  constexpr uint32_t kSlot = 8192;
  struct ibv_srq* q = srq(GetParam(), 15, 1);
  ASSERT_NE(q, nullptr);
  QpOpts so, ro;
  so.send_wr = 63;
  ro.srq = q;
  ConnOpts c;
  c.min_rnr_timer = 1;
  auto [s, r] = pair(GetParam(), so, ro, c);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, size_t(kMsgs) * kSlot), rb = buf(GetParam(), size_t(kBufs) * kSlot);
  std::vector<uint32_t> len(kMsgs);
  for (int m = 0; m < kMsgs; m++) {
    len[m] = 1 + (uint32_t(m) * 2609) % (kSlot - 1);  // 1..8191: 1 to 8 packets
    for (uint32_t i = 0; i < len[m]; i++) sb.p[size_t(m) * kSlot + i] = pattern(m, i);
  }
  for (int b = 0; b < kBufs; b++) ASSERT_EQ(post_srq(q, b, {sge(rb, size_t(b) * kSlot, kSlot)}), 0);
  const uint32_t rnr0 = counter(GetParam(), st::TX_RNR_NAKS);
  for (int m = 0; m < kMsgs; m++) ASSERT_EQ(post_send(s, m, {sge(sb, size_t(m) * kSlot, len[m])}), 0);
  int rdone = 0, sdone = 0;
  std::vector<uint64_t> used;
  Stall stall;
  while (rdone < kMsgs || sdone < kMsgs) {
    std::vector<struct ibv_wc> rw, sw;
    ASSERT_GE(poll_once(r.rcq, 8, &rw), 0);
    for (auto& w : rw) {
      ASSERT_LT(w.wr_id, uint64_t(kBufs));
      check_msg(w, rdone, len[rdone], rb.p + w.wr_id * kSlot);
      if (HasFatalFailure()) return;
      rdone++;
      used.push_back(w.wr_id);
    }
    // The buffers go back only once all are used, and a few microseconds later: the SRQ runs dry
    // while messages are in flight.
    if (used.size() == size_t(kBufs)) {
      run_for(us_to_cycles(3 + rdone % 7));
      for (uint64_t b : used) ASSERT_EQ(post_srq(q, b, {sge(rb, b * kSlot, kSlot)}), 0);
      used.clear();
    }
    ASSERT_GE(poll_once(s.scq, 8, &sw), 0);
    for (auto& w : sw) {
      ASSERT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      ASSERT_EQ(w.wr_id, uint64_t(sdone)) << "send completions in order, once each";
      sdone++;
    }
    ASSERT_FALSE(stall.stuck(!rw.empty() || !sw.empty())) << "stuck: received " << rdone << ", sent " << sdone;
  }
  EXPECT_GT(counter(GetParam(), st::TX_RNR_NAKS), rnr0) << "the SRQ ran dry: RNR NAKs expected";
  EXPECT_TRUE(drain(r.rcq).empty());
  EXPECT_TRUE(drain(s.scq).empty());
}

// Loopback (tmnic0 -> tmnic0) and wire (tmnic0 -> tmnic1) streams at the same time through one NIC.
TEST_F(Recovery, LoopbackAndWireConcurrently) {
  constexpr int kMsgs = 200;
  constexpr uint32_t kSlot = 8192;
  QpOpts so;
  so.send_wr = 31;
  QpOpts ro;
  ro.recv_wr = 31;
  auto [s0, r0] = pair(0, so, ro);
  auto [s1, r1] = pair(1, so, ro);
  ASSERT_TRUE(s0.qp && r0.qp && s1.qp && r1.qp);
  const Qp* snd[2] = {&s0, &s1};
  const Qp* rcv[2] = {&r0, &r1};
  Buf sb = buf(0, 2 * 16 * kSlot);
  Buf rb[2] = {buf(0, 16 * kSlot), buf(1, 16 * kSlot)};
  int posted[2] = {0, 0}, rdone[2] = {0, 0}, sdone[2] = {0, 0};
  auto len_of = [](int p, int m) { return uint32_t(1 + (m * 1237 + p * 511) % (kSlot - 1)); };
  Stall stall;
  while (rdone[0] < kMsgs || rdone[1] < kMsgs || sdone[0] < kMsgs || sdone[1] < kMsgs) {
    bool any = false;
    for (int p = 0; p < 2; p++) {
      while (posted[p] < kMsgs && posted[p] - std::min(rdone[p], sdone[p]) < 16) {
        int m = posted[p]++;
        size_t slot = size_t(m % 16) * kSlot;
        uint32_t len = len_of(p, m);
        for (uint32_t i = 0; i < len; i++) sb.p[size_t(p) * 16 * kSlot + slot + i] = pattern(m + 1000 * p, i);
        ASSERT_EQ(post_recv(*rcv[p], m, {sge(rb[p], slot, kSlot)}), 0);
        ASSERT_EQ(post_send(*snd[p], m, {sge(sb, size_t(p) * 16 * kSlot + slot, len)}), 0);
      }
      std::vector<struct ibv_wc> w;
      ASSERT_GE(poll_once(rcv[p]->rcq, 16, &w), 0);
      for (auto& x : w) {
        ASSERT_EQ(x.status, IBV_WC_SUCCESS) << wc_str(x);
        ASSERT_EQ(x.wr_id, uint64_t(rdone[p]));
        uint32_t len = len_of(p, rdone[p]);
        ASSERT_EQ(x.byte_len, len);
        const uint8_t* d = rb[p].p + size_t(rdone[p] % 16) * kSlot;
        for (uint32_t i = 0; i < len; i++) ASSERT_EQ(d[i], pattern(rdone[p] + 1000 * p, i)) << "stream " << p;
        rdone[p]++;
        any = true;
      }
      w.clear();
      ASSERT_GE(poll_once(snd[p]->scq, 16, &w), 0);
      for (auto& x : w) {
        ASSERT_EQ(x.status, IBV_WC_SUCCESS) << wc_str(x);
        ASSERT_EQ(x.wr_id, uint64_t(sdone[p]));
        sdone[p]++;
        any = true;
      }
    }
    ASSERT_FALSE(stall.stuck(any)) << "stuck";
  }
  EXPECT_GE(counter(0, st::LOOPBACK), uint32_t(kMsgs));
}

// Corrupted frames inside a stream of messages, in both directions of the wire (request frames
// from tmnic0, ACKs from tmnic1). What the transport implements: a lost request is detected by the
// responder when a later packet arrives (PSN-sequence NAK, sent once until the expected PSN comes),
// the requester goes back N; a lost ACK is covered by a later one. No ACK timer exists yet, so the
// test keeps traffic flowing after every loss and injects the next fault only once the previous
// one is repaired (a lost retransmission or a lost last frame would hang the connection).
// Every message arrives once, in order, intact, and every send completes once, in order.
TEST_F(Recovery, CorruptedFramesInAStreamRecover) {
  constexpr int kBatch = 10, kMsgs = 150;
  constexpr uint32_t kSlot = 4096;
  QpOpts so, ro;
  so.send_wr = 63;
  ro.recv_wr = 255;
  auto [s, r] = pair(1, so, ro);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, size_t(kMsgs) * kSlot), rb = buf(1, size_t(kMsgs) * kSlot);
  std::vector<uint32_t> len(kMsgs);
  for (int m = 0; m < kMsgs; m++) {
    len[m] = 1 + (uint32_t(m) * 1733) % kSlot;
    for (uint32_t i = 0; i < len[m]; i++) sb.p[size_t(m) * kSlot + i] = pattern(m, i);
    ASSERT_EQ(post_recv(r, m, {sge(rb, size_t(m) * kSlot, kSlot)}), 0);
  }
  auto drops = [] { return counter(1, st::RX_DROP_ICRC) + counter(0, st::RX_DROP_ICRC); };
  const uint32_t drop0 = drops(), psn_err0 = counter(1, st::RX_PSN_ERR);
  int injected = 0, rdone = 0, sdone = 0, posted = 0;
  std::mt19937 rng(7);
  Stall stall;
  auto post_batch = [&] {
    for (int k = 0; k < kBatch && posted < kMsgs; k++, posted++)
      ASSERT_EQ(post_send(s, posted, {sge(sb, size_t(posted) * kSlot, len[posted])}), 0);
  };
  // Polls both CQs once, checks what completed; false when stuck.
  auto pump = [&]() -> bool {
    std::vector<struct ibv_wc> w;
    EXPECT_GE(poll_once(r.rcq, 16, &w), 0);
    bool any = !w.empty();
    for (auto& x : w) {
      EXPECT_EQ(x.wr_id, uint64_t(rdone)) << "in order, once";
      check_msg(x, rdone, len[rdone], rb.p + size_t(rdone) * kSlot);
      rdone++;
    }
    w.clear();
    EXPECT_GE(poll_once(s.scq, 16, &w), 0);
    any = any || !w.empty();
    for (auto& x : w) {
      EXPECT_EQ(x.status, IBV_WC_SUCCESS) << wc_str(x);
      EXPECT_EQ(x.wr_id, uint64_t(sdone)) << "in order, once";
      sdone++;
    }
    return !HasFailure() && !stall.stuck(any);
  };
  auto why = [&] {  // what a failure message says
    return "after " + std::to_string(injected) + " faults: received " + std::to_string(rdone) + ", sent " +
           std::to_string(sdone) + " of " + std::to_string(posted) + counters();
  };
  post_batch();
  while (posted + kBatch < kMsgs) {
    run_for(rng() % 1500);
    const uint32_t d = drops();
    tmnic_sim_corrupt_tx(injected % 2, 1);  // alternately a request frame and an ACK
    injected++;
    while (drops() == d) {  // until the fault hit a frame
      ASSERT_TRUE(pump()) << why();
      if (sdone == posted && rdone == posted) post_batch();  // all went out intact: the fault hits the next
    }
    const int before = posted;  // the lost frame belongs to one of these messages
    post_batch();               // traffic after the loss
    while (sdone < before || rdone < before) ASSERT_TRUE(pump()) << why();  // repaired
  }
  while (posted < kMsgs) post_batch();
  while (sdone < kMsgs || rdone < kMsgs) ASSERT_TRUE(pump()) << why();
  EXPECT_EQ(drops() - drop0, uint32_t(injected)) << "every fault hit a frame and was counted";
  EXPECT_GT(counter(1, st::RX_PSN_ERR), psn_err0) << "lost requests were noticed by the PSN check";
  EXPECT_TRUE(drain(r.rcq).empty());
  EXPECT_TRUE(drain(s.scq).empty());
}

// A connection that failed (receive buffer too small: both QPs in ERR) is taken through RESET and
// connected again with new PSNs: no stale completion shows up and traffic works, in both directions.
TEST_F(Recovery, QpReusableAfterErrorThroughReset) {
  auto [s, r] = pair(1);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, 8192), rb = buf(1, 8192);
  ASSERT_EQ(post_recv(r, 1, {sge(rb, 0, 10)}), 0);
  ASSERT_EQ(post_recv(r, 2, {sge(rb, 0, 8192)}), 0);
  ASSERT_EQ(post_send(s, 1, {sge(sb, 0, 100)}), 0);
  ASSERT_EQ(post_send(s, 2, {sge(sb, 0, 100)}), 0);
  auto sc = poll(s.scq, 2);
  ASSERT_EQ(sc.size(), 2u);
  EXPECT_EQ(sc[0].status, IBV_WC_REM_INV_REQ_ERR) << wc_str(sc[0]);
  EXPECT_EQ(sc[1].status, IBV_WC_WR_FLUSH_ERR) << wc_str(sc[1]);
  ASSERT_EQ(state(s), IBV_QPS_ERR);
  ASSERT_EQ(state(r), IBV_QPS_ERR);
  // Leave receive completions unpolled: the reset drops them (as mlx5).
  run_for(100000);
  for (const Qp* q : {&s, &r}) {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE), 0);
    a = {};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
    ASSERT_EQ(ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
  }
  ConnOpts c;
  c.psn = 0xABCDE;
  connect(s, r, c);
  EXPECT_TRUE(drain(s.scq).empty()) << "no stale send completion";
  EXPECT_TRUE(drain(r.rcq).empty()) << "no stale receive completion";
  for (int dir = 0; dir < 2; dir++) {
    const Qp& a = dir ? r : s;
    const Qp& b = dir ? s : r;
    const Buf& ab = dir ? rb : sb;
    const Buf& bb = dir ? sb : rb;
    for (int m = 0; m < 5; m++) {
      uint32_t len = 500 + 1500 * m;
      for (uint32_t i = 0; i < len; i++) ab.p[i] = pattern(m + 10 * dir, i);
      ASSERT_EQ(post_recv(b, m, {sge(bb, 0, 8192)}), 0);
      ASSERT_EQ(post_send(a, m, {sge(ab, 0, len)}), 0);
      auto x = poll(a.scq, 1);
      ASSERT_EQ(x.size(), 1u);
      EXPECT_EQ(x[0].status, IBV_WC_SUCCESS) << wc_str(x[0]);
      auto y = poll(b.rcq, 1);
      ASSERT_EQ(y.size(), 1u);
      check_msg(y[0], m + 10 * dir, len, bb.p);
    }
  }
}

// A QP destroyed while its sends are being RNR-NAKed (work in flight in the NIC), then a new QP on
// the same device (the QP number may be reused) connected to a fresh peer: nothing of the old
// connection leaks into the new one (no stale completion, no stale PSN), traffic works.
TEST_F(Recovery, DestroyQpWithWorkInFlightThenReuse) {
  Buf sb = buf(0, 8192), rb = buf(1, 8192);
  for (uint32_t i = 0; i < 8192; i++) sb.p[i] = pattern(77, i);
  uint32_t old_qpn;
  {
    Qp s = qp(0), r = qp(1);
    ASSERT_TRUE(s.qp && r.qp);
    connect(s, r);
    for (int k = 0; k < 4; k++) ASSERT_EQ(post_send(s, k, {sge(sb, 0, 3000)}), 0);  // no receive: RNR
    run_for(us_to_cycles(30));
    EXPECT_GT(counter(1, st::TX_RNR_NAKS), 0u);
    old_qpn = s.num();
    ASSERT_EQ(destroy(s), 0);
    run_for(us_to_cycles(50));
  }
  const uint32_t tx0 = counter(0, st::TX_PKTS);
  run_for(us_to_cycles(50));
  EXPECT_EQ(counter(0, st::TX_PKTS), tx0) << "the destroyed QP stopped sending";
  ConnOpts c;
  c.psn = 0x777;
  Qp s2 = qp(0), r2 = qp(1);
  ASSERT_TRUE(s2.qp && r2.qp);
  connect(s2, r2, c);
  std::printf("old QPN %u, new QPN %u\n", old_qpn, s2.num());
  for (int m = 0; m < 3; m++) {
    ASSERT_EQ(post_recv(r2, m, {sge(rb, 0, 8192)}), 0);
    ASSERT_EQ(post_send(s2, m, {sge(sb, 0, 5000)}), 0);
    auto sc = poll(s2.scq, 1);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(sc[0].wr_id, uint64_t(m));
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    auto rc = poll(r2.rcq, 1);
    ASSERT_EQ(rc.size(), 1u);
    check_msg(rc[0], 77, 5000, rb.p);
    EXPECT_EQ(rc[0].src_qp, s2.num());
  }
  EXPECT_TRUE(drain(s2.scq).empty());
  EXPECT_TRUE(drain(r2.rcq).empty());
}

// Destroying a QP whose sends are in flight: once ibv_destroy_qp has returned, its rings are
// unmapped and freed, so the NIC must never touch them again (the simulated IOMMU aborts the
// process on a DMA outside every mapping: a device use-after-free). Each attempt runs in a child
// process (death-test fork) and destroys the QP a different number of cycles after posting, so
// that the SET_QP(RESET) command lands while a WQE fetch or payload read is outstanding.
TEST_F(Recovery, DestroyQpWithSendsInFlightNeverTouchesFreedRings) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent has threads: re-exec, do not fork
  auto attempt = [this](uint64_t delay) {
    Buf sb = buf(0, 8192), rb = buf(1, 8192);
    Qp s = qp(0), r = qp(1);
    connect(s, r);
    post_recv(r, 1, {sge(rb, 0, 8192)});
    for (int k = 0; k < 4; k++) post_send(s, k, {sge(sb, 0, 3000)});
    run_for(delay);
    int err = destroy(s);
    run_for(us_to_cycles(50));
    std::exit(err);
  };
  for (uint64_t delay = 0; delay <= 500; delay += 25)
    EXPECT_EXIT(attempt(delay), ::testing::ExitedWithCode(0), "") << "QP destroyed " << delay << " cycles after posting";
}

// The same on the receiving side: the responder QP is destroyed while messages are arriving (receive
// WQE fetches, payload and CQE writes in flight); its receive ring must not be touched afterwards.
// (The receive buffers stay registered: only the QP's own rings are freed.)
TEST_F(Recovery, DestroyReceiverQpWithTrafficInFlightNeverTouchesFreedRings) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent has threads: re-exec, do not fork
  auto attempt = [this](uint64_t delay) {
    Buf sb = buf(0, 8192), rb = buf(1, 4 * 8192);
    Qp s = qp(0), r = qp(1);
    connect(s, r);
    for (int k = 0; k < 4; k++) post_recv(r, k, {sge(rb, 8192 * k, 8192)});
    for (int k = 0; k < 4; k++) post_send(s, k, {sge(sb, 0, 3000)});
    run_for(delay);
    int err = destroy(r);
    run_for(us_to_cycles(50));
    std::exit(err);
  };
  for (uint64_t delay = 0; delay <= 1500; delay += 50)
    EXPECT_EXIT(attempt(delay), ::testing::ExitedWithCode(0), "") << "QP destroyed " << delay << " cycles after posting";
}

// Requests for a QP number that does not exist on the receiving NIC, or from a peer the QP is not
// connected to, are dropped and counted (RX_DROP_QP); nothing is delivered.
TEST_F(Recovery, PacketsForTheWrongQpAreDroppedAndCounted) {
  Qp s = qp(0), r = qp(1), other = qp(1);
  ASSERT_TRUE(s.qp && r.qp && other.qp);
  Buf sb = buf(0, 4096), rb = buf(1, 4096);
  // s is connected to r, but r is connected to `other`'s number (not to s).
  Qp fake = r;
  fake.qp = other.qp;
  to_rts(s, r, {});
  to_rts(r, fake, {});
  ASSERT_EQ(post_recv(r, 1, {sge(rb, 0, 4096)}), 0);
  const uint32_t drop0 = counter(1, st::RX_DROP_QP);
  ASSERT_EQ(post_send(s, 1, {sge(sb, 0, 100)}), 0);
  EXPECT_TRUE(poll(r.rcq, 1, us_to_cycles(50)).empty()) << "a request from a foreign QP is not executed";
  EXPECT_TRUE(drain(s.scq).empty());
  EXPECT_EQ(counter(1, st::RX_DROP_QP), drop0 + 1);
}

// Zero-length SGEs inside a gather or scatter list are legal and contribute nothing; a receive
// WQE with no SGE at all takes a 0-byte message, and a 1-byte message into it is a length error.
TEST_P(RecoveryTopo, ZeroLengthSgesAndEmptyReceive) {
  QpOpts so, ro;
  so.send_sge = 3;
  ro.recv_sge = 3;
  auto [s, r] = pair(GetParam(), so, ro);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, 4096), rb = buf(GetParam(), 4096);
  for (uint32_t i = 0; i < 4096; i++) sb.p[i] = pattern(5, i);
  std::memset(rb.p, 0xEE, 4096);
  ASSERT_EQ(post_recv(r, 1, {sge(rb, 0, 60), sge(rb, 100, 0), sge(rb, 200, 1000)}), 0);
  ASSERT_EQ(post_send(s, 1, {sge(sb, 0, 100), sge(sb, 1000, 0), sge(sb, 100, 50)}), 0);
  auto sc = poll(s.scq, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
  auto rc = poll(r.rcq, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
  EXPECT_EQ(rc[0].byte_len, 150u);
  EXPECT_EQ(std::memcmp(rb.p, sb.p, 60), 0);
  EXPECT_EQ(std::memcmp(rb.p + 200, sb.p + 60, 90), 0);
  EXPECT_EQ(rb.p[60], 0xEE);
  EXPECT_EQ(rb.p[100], 0xEE);
  EXPECT_EQ(rb.p[290], 0xEE);
  // 0-byte message into a receive WQE without SGEs.
  ASSERT_EQ(post_recv(r, 2, {}), 0);
  ASSERT_EQ(post_send(s, 2, {}), 0);
  sc = poll(s.scq, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
  rc = poll(r.rcq, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
  EXPECT_EQ(rc[0].byte_len, 0u);
  // 1 byte into a receive WQE without SGEs: length error on both sides.
  ASSERT_EQ(post_recv(r, 3, {}), 0);
  ASSERT_EQ(post_send(s, 3, {sge(sb, 0, 1)}), 0);
  rc = poll(r.rcq, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_LOC_LEN_ERR) << wc_str(rc[0]);
  sc = poll(s.scq, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_REM_INV_REQ_ERR) << wc_str(sc[0]);
}

// ---- The transport timer (IBA 9.7.6.1.3 local ACK timeout, 9.7.6.1.4 retry counter) -------------
// T = 4.096 us << timeout. The completer arms the timer when a message enters its ring (just before
// its first packet) and finds expiries with a sweep of its QP table (one QP a cycle), so an expiry
// is seen between T and T + NUM_QP cycles + a few; the send completion then needs the REWIND, the
// resend, the ACK and the CQE's DMA write: a few microseconds.
double tmo_us(unsigned t) { return 4.096 * double(1u << t); }
constexpr double kTmoSlackUs = 12;   // per expiry: sweep (<= 1024 cycles) + resend, ACK, CQE write

// Lost frames that no later traffic reveals (no PSN-sequence NAK follows): the last packet of a
// 3-packet SEND, the ONLY packet of a SEND, and the ACK of a SEND. Each message is delivered exactly
// once, intact, after one local ACK timeout; its send completion is SUCCESS.
TEST_F(Recovery, LostLastPacketOnlyPacketAndAckRecoveredByTimeout) {
  ConnOpts c;
  c.timeout = 4;    // 65.5 us
  c.retry_cnt = 3;
  auto [s, r] = pair(1, {}, {}, c);
  ASSERT_TRUE(s.qp && r.qp);
  struct ibv_qp_attr qa = {};
  struct ibv_qp_init_attr qi = {};
  ASSERT_EQ(ibv_query_qp(s.qp, &qa, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, &qi), 0);
  EXPECT_EQ(qa.timeout, 4);
  EXPECT_EQ(qa.retry_cnt, 3);
  EXPECT_EQ(qa.rnr_retry, 7);
  Buf sb = buf(0, 3 * 8192), rb = buf(1, 3 * 8192);
  const uint32_t lens[3] = {3000, 500, 300};   // 3 packets (MTU 1024), 1, 1
  for (int m = 0; m < 3; m++)
    for (uint32_t i = 0; i < lens[m]; i++) sb.p[size_t(m) * 8192 + i] = pattern(40 + m, i);
  const double t_us = tmo_us(c.timeout);
  for (int m = 0; m < 3; m++) {
    SCOPED_TRACE(m == 0 ? "last packet lost" : m == 1 ? "only packet lost" : "ACK lost");
    const uint32_t drop_r = counter(1, st::RX_DROP_ICRC), drop_s = counter(0, st::RX_DROP_ICRC),
                   retx = counter(0, st::RETRANSMITS);
    ASSERT_EQ(post_recv(r, m, {sge(rb, size_t(m) * 8192, 8192)}), 0);
    if (m == 0) tmnic_sim_corrupt_tx_after(0, 2, 1);   // the third request frame
    else if (m == 1) tmnic_sim_corrupt_tx(0, 1);       // the only request frame
    else tmnic_sim_corrupt_tx(1, 1);                   // the ACK
    const uint64_t t0 = tmnic_sim_now();
    ASSERT_EQ(post_send(s, m, {sge(sb, size_t(m) * 8192, lens[m])}), 0);
    auto sc = poll(s.scq, 1);
    ASSERT_EQ(sc.size(), 1u) << "never completed: the timer did not recover the loss";
    const double dt = double(tmnic_sim_now() - t0) / tmnic_sim_clk_mhz();
    EXPECT_EQ(sc[0].wr_id, uint64_t(m));
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    EXPECT_GE(dt, t_us) << "completed before the timeout: the loss was not where intended";
    EXPECT_LE(dt, t_us + kTmoSlackUs) << "one timeout expected";
    std::printf("[timer] %s: completed %.2f us after the post, T = %.3f us\n",
                m == 0 ? "last packet lost" : m == 1 ? "only packet lost" : "ACK lost", dt, t_us);
    auto rc = drain(r.rcq);
    ASSERT_EQ(rc.size(), 1u) << "delivered exactly once";
    EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
    EXPECT_EQ(rc[0].wr_id, uint64_t(m));
    EXPECT_EQ(rc[0].byte_len, lens[m]);
    for (uint32_t i = 0; i < lens[m]; i++)
      ASSERT_EQ(rb.p[size_t(m) * 8192 + i], pattern(40 + m, i)) << "byte " << i;
    EXPECT_EQ(counter(m == 2 ? 0 : 1, st::RX_DROP_ICRC), (m == 2 ? drop_s : drop_r) + 1);
    EXPECT_EQ(counter(0, st::RETRANSMITS), retx + 1) << "one go-back-N after the timeout";
    EXPECT_TRUE(drain(s.scq).empty());
  }
}

// A silent peer (its QP in ERR drops every request): after retry_cnt timeouts, each followed by a
// resend of everything outstanding, the oldest send completes with RETRY_EXC_ERR at about
// (retry_cnt + 1) x T after it was posted, the others are flushed, the QP is in ERR. retry_cnt 7 is
// not infinite (the second QP).
TEST_P(RecoveryTopo, SilentPeerEndsInRetryExceeded) {
  for (uint8_t retry : {2, 7}) {
    SCOPED_TRACE("retry_cnt " + std::to_string(retry));
    ConnOpts c;
    c.timeout = 3;    // 32.8 us
    c.retry_cnt = retry;
    auto [s, r] = pair(GetParam(), {}, {}, c);
    ASSERT_TRUE(s.qp && r.qp);
    struct ibv_qp_attr qa = {};
    struct ibv_qp_init_attr qi = {};
    ASSERT_EQ(ibv_query_qp(s.qp, &qa, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT, &qi), 0);
    EXPECT_EQ(qa.timeout, 3);
    EXPECT_EQ(qa.retry_cnt, retry);
    struct ibv_qp_attr e = {};
    e.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(ibv_modify_qp(r.qp, &e, IBV_QP_STATE), 0);
    Buf sb = buf(0, 8192);
    const uint32_t retx = counter(0, st::RETRANSMITS);
    const uint64_t t0 = tmnic_sim_now();
    for (int k = 0; k < 3; k++) ASSERT_EQ(post_send(s, 10 + k, {sge(sb, 0, k == 1 ? 2500 : 100)}), 0);
    auto sc = poll(s.scq, 3);
    ASSERT_EQ(sc.size(), 3u) << "the sender hangs";
    const double dt = double(tmnic_sim_now() - t0) / tmnic_sim_clk_mhz();
    const double want = (retry + 1) * tmo_us(c.timeout);
    EXPECT_EQ(sc[0].wr_id, 10u);
    EXPECT_EQ(sc[0].status, IBV_WC_RETRY_EXC_ERR) << wc_str(sc[0]);
    for (int k = 1; k < 3; k++) {
      EXPECT_EQ(sc[k].wr_id, uint64_t(10 + k));
      EXPECT_EQ(sc[k].status, IBV_WC_WR_FLUSH_ERR) << wc_str(sc[k]);
    }
    EXPECT_GE(dt, want) << "failed before (retry_cnt + 1) timeouts";
    EXPECT_LE(dt, want + (retry + 1) * kTmoSlackUs) << "failed late";
    std::printf("[timer] silent peer, retry_cnt %u: RETRY_EXC_ERR %.2f us after the post, (retry_cnt + 1) x T = %.3f us\n",
                unsigned(retry), dt, want);
    EXPECT_EQ(counter(0, st::RETRANSMITS), retx + retry) << "retry_cnt go-back-N resends";
    qa = {};
    ASSERT_EQ(ibv_query_qp(s.qp, &qa, IBV_QP_STATE, &qi), 0);
    EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
    EXPECT_TRUE(drain(s.scq).empty());
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, RecoveryTopo, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::string("TwoNics") : std::string("Loopback");
                         });

}  // namespace
