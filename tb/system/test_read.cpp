// RDMA READ through the verbs API on the simulated NICs (ibv_post_send(3) IBV_WR_RDMA_READ,
// ibv_reg_mr(3) REMOTE_READ, qp_access_flags, max_rd_atomic): sizes 0, 1, PMTU-1, PMTU, PMTU+1 and
// 4 MiB scattered into several SGEs, in loopback and between two NICs, every byte checked and the
// bytes around the scatter list untouched; many READs in flight among SENDs; the device attributes;
// the protection rules (an MR without REMOTE_READ, an rkey past the MR's end, a wrong rkey, a
// deregistered MR, a QP without REMOTE_READ, a bad local scatter list), each with the IBA's status
// at the requester and, for the remote ones, the responder's async event and the QPs in ERR; lost
// READ requests and responses recovered by the transport timer or go-back-N, the data delivered once.
#include "system_test.hpp"

namespace {

using namespace sys;

constexpr unsigned kRemoteRead = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;

int post_read(const Qp& q, uint64_t wr_id, std::vector<struct ibv_sge> sg, uint64_t raddr, uint32_t rkey,
              unsigned flags = IBV_SEND_SIGNALED) {
  struct ibv_send_wr wr = {};
  wr.wr_id = wr_id;
  wr.sg_list = sg.empty() ? nullptr : sg.data();
  wr.num_sge = int(sg.size());
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  struct ibv_send_wr* bad = nullptr;
  return ibv_post_send(q.qp, &wr, &bad);
}

class Read : public SystemTest, public ::testing::WithParamInterface<int> {
 protected:
  int rdev() const { return GetParam(); }  // 0 loopback, 1 second NIC
  // A connected pair whose responder accepts remote reads (or not); the requester keeps up to
  // max_rd READs in flight.
  std::pair<Qp, Qp> rpair(unsigned raccess = kRemoteRead, uint8_t max_rd = 4) {
    QpOpts so, ro;
    so.send_sge = 3;
    ro.access = raccess;
    ConnOpts c;
    c.max_rd_atomic = max_rd;
    return pair(rdev(), so, ro, c);
  }
};

TEST_P(Read, DeviceReportsReadResources) {
  struct ibv_device_attr a;
  ASSERT_EQ(ibv_query_device(ctx_[0], &a), 0);
  EXPECT_EQ(a.max_qp_rd_atom, int(tmnic::hwif::MAX_RD_ATOM));
  EXPECT_EQ(a.max_qp_init_rd_atom, int(tmnic::hwif::MAX_RD_ATOM));
  EXPECT_EQ(a.max_res_rd_atom, int(tmnic::hwif::MAX_RD_ATOM) * a.max_qp);
  EXPECT_EQ(a.max_sge_rd, a.max_sge);
  // atomics exactly when the NIC executes them (test_atomic.cpp)
  const bool atomic = tmnic::hwif::regf::ops_caps::ATOMIC.get(tmnic_sim_read_reg(0, tmnic::hwif::reg::OPS_CAPS));
  EXPECT_EQ(a.atomic_cap, atomic ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE);
}

TEST_P(Read, ReadSizesLandExactly) {
  auto [s, r] = rpair();
  ASSERT_TRUE(s.qp && r.qp);
  const uint32_t pmtu = mtu_bytes(ConnOpts{}.mtu);
  const std::vector<uint32_t> sizes = {0, 1, pmtu - 1, pmtu, pmtu + 1, 4u << 20};
  Buf src = buf(rdev(), (4u << 20) + 64, kRemoteRead);
  Buf dst = buf(0, (4u << 20) + 64);
  for (size_t i = 0; i < src.len; i++) src.p[i] = pattern(9, i);
  for (size_t k = 0; k < sizes.size(); k++) {
    std::memset(dst.p, 0xEE, dst.len);
    const uint32_t n = sizes[k];
    // scattered into up to three SGEs of unequal length
    const std::vector<struct ibv_sge> sg = sges3(dst, 32, n);
    ASSERT_EQ(post_read(s, k, sg, src.addr(1), src.mr->rkey), 0) << n;
    auto wc = poll(s.scq, 1);
    ASSERT_EQ(wc.size(), 1u) << n;
    EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << n << ": " << wc_str(wc[0]);
    EXPECT_EQ(wc[0].opcode, IBV_WC_RDMA_READ) << n;
    EXPECT_EQ(wc[0].wr_id, k);
    EXPECT_EQ(std::memcmp(dst.p + 32, src.p + 1, n), 0) << "data of a " << n << "-byte READ";
    EXPECT_EQ(dst.p[31], 0xEE) << n;
    EXPECT_EQ(dst.p[32 + n], 0xEE) << n;
  }
  EXPECT_TRUE(drain(r.rcq).empty()) << "a READ completes nothing at the responder";
}

// 64 READs of 3000 bytes and SENDs between them, posted at once (max_rd_atomic 4 and 1): every
// completion in posting order, every byte in place.
TEST_P(Read, ManyReadsInFlightAmongSends) {
  for (uint8_t max_rd : {uint8_t(4), uint8_t(1)}) {
    SCOPED_TRACE(int(max_rd));
    QpOpts so, ro;
    so.send_wr = 256;
    ro.access = kRemoteRead;
    ro.recv_wr = 256;
    ConnOpts c;
    c.max_rd_atomic = max_rd;
    auto [s, r] = pair(rdev(), so, ro, c);
    ASSERT_TRUE(s.qp && r.qp);
    Buf src = buf(rdev(), 64 * 4096, kRemoteRead);
    Buf dst = buf(0, 64 * 4096);
    Buf msg = buf(0, 64);
    Buf rbuf = buf(rdev(), 64 * 64);
    for (size_t i = 0; i < src.len; i++) src.p[i] = pattern(21, i);
    for (int i = 0; i < 64; i++) ASSERT_EQ(post_recv(r, 1000 + i, {{rbuf.addr(64 * i), 64, rbuf.lkey()}}), 0);
    for (int i = 0; i < 64; i++) {
      ASSERT_EQ(post_read(s, 2 * i, {{dst.addr(4096 * i), 3000, dst.lkey()}}, src.addr(4096 * i + i), src.mr->rkey), 0);
      ASSERT_EQ(post_send(s, 2 * i + 1, {{msg.addr(), 16, msg.lkey()}}), 0);
    }
    auto wc = poll(s.scq, 128);
    ASSERT_EQ(wc.size(), 128u);
    for (int i = 0; i < 128; i++) {
      EXPECT_EQ(wc[i].wr_id, uint64_t(i)) << "completions in posting order";
      EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << wc_str(wc[i]);
      EXPECT_EQ(wc[i].opcode, (i % 2) ? IBV_WC_SEND : IBV_WC_RDMA_READ) << i;
    }
    for (int i = 0; i < 64; i++) EXPECT_EQ(std::memcmp(dst.p + 4096 * i, src.p + 4096 * i + i, 3000), 0) << i;
    EXPECT_EQ(poll(r.rcq, 64).size(), 64u);
  }
}

// Each violation: the requester's status, no byte of the local scatter list written, the QPs in ERR
// (both for a remote violation: the responder's async event says why).
TEST_P(Read, ProtectionViolations) {
  struct Case { const char* what; unsigned mr_access, qp_access; int rkey_delta; size_t off; enum ibv_wc_status st; bool dereg; };
  const std::vector<Case> cases = {
      {"MR without REMOTE_READ", IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, kRemoteRead, 0, 0, IBV_WC_REM_ACCESS_ERR, false},
      {"one byte past the MR", kRemoteRead, kRemoteRead, 0, 4096 - 99, IBV_WC_REM_ACCESS_ERR, false},
      {"wrong rkey", kRemoteRead, kRemoteRead, 1, 0, IBV_WC_REM_ACCESS_ERR, false},
      {"deregistered MR", kRemoteRead, kRemoteRead, 0, 0, IBV_WC_REM_ACCESS_ERR, true},
      {"QP without REMOTE_READ", kRemoteRead, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0, 0, IBV_WC_REM_INV_REQ_ERR, false},
  };
  for (const Case& c : cases) {
    auto [s, r] = rpair(c.qp_access);
    ASSERT_TRUE(s.qp && r.qp) << c.what;
    Buf dst = buf(0, 4096);
    std::memset(dst.p, 0xA5, dst.len);
    Buf src = buf(-1, 4096);
    struct ibv_mr* mr = ibv_reg_mr(pd_[rdev()], src.p, src.len, c.mr_access);
    ASSERT_NE(mr, nullptr) << c.what;
    const uint32_t rkey = mr->rkey + c.rkey_delta;
    if (c.dereg) {
      ASSERT_EQ(ibv_dereg_mr(mr), 0);
      mr = nullptr;
    }
    ASSERT_EQ(post_read(s, 1, {{dst.addr(), 100, dst.lkey()}}, src.addr(c.off), rkey), 0) << c.what;
    auto wc = poll(s.scq, 1);
    ASSERT_EQ(wc.size(), 1u) << c.what;
    EXPECT_EQ(wc[0].status, c.st) << c.what << ": " << wc_str(wc[0]);
    for (size_t i = 0; i < dst.len; i++) ASSERT_EQ(dst.p[i], 0xA5) << c.what << ": scatter byte " << i << " written";
    EXPECT_EQ(state(s), IBV_QPS_ERR) << c.what;
    EXPECT_EQ(state(r), IBV_QPS_ERR) << c.what;
    const enum ibv_event_type want =
        c.st == IBV_WC_REM_ACCESS_ERR ? IBV_EVENT_QP_ACCESS_ERR : IBV_EVENT_QP_REQ_ERR;
    auto evs = async_events(rdev());
    ASSERT_EQ(evs.size(), 1u) << c.what;
    EXPECT_EQ(evs[0].event_type, want) << c.what;
    EXPECT_EQ(evs[0].element.qp, r.qp) << c.what;
    if (mr) {
      EXPECT_EQ(ibv_dereg_mr(mr), 0);
    }
  }
  // A local scatter list without LOCAL_WRITE: LOC_PROT_ERR, nothing sent.
  auto [s, r] = rpair();
  ASSERT_TRUE(s.qp && r.qp);
  Buf ro = buf(0, 4096, IBV_ACCESS_REMOTE_READ);   // (no LOCAL_WRITE)
  Buf src = buf(rdev(), 4096, kRemoteRead);
  const uint32_t tx = counter(0, tmnic::hwif::stat::TX_PKTS);
  ASSERT_EQ(post_read(s, 9, {{ro.addr(), 100, ro.lkey()}}, src.addr(), src.mr->rkey), 0);
  auto wc = poll(s.scq, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR) << wc_str(wc[0]);
  EXPECT_EQ(counter(0, tmnic::hwif::stat::TX_PKTS), tx) << "a READ request went out";
}

// Lost READ frames between two NICs: the request (only the local ACK timeout reveals it), a middle
// response (the next response is out of order: dropped, the timer goes back), the last response.
// Each READ is delivered intact and completes SUCCESS exactly once.
using ReadLoss = SystemTest;
TEST_F(ReadLoss, LostFramesRecovered) {
  ConnOpts c;
  c.timeout = 4;    // 65.5 us
  c.retry_cnt = 3;
  c.max_rd_atomic = 4;
  QpOpts so, ro;
  ro.access = kRemoteRead;
  auto [s, r] = pair(1, so, ro, c);
  ASSERT_TRUE(s.qp && r.qp);
  Buf src = buf(1, 4 * 8192, kRemoteRead);
  Buf dst = buf(0, 4 * 8192);
  struct Case { const char* what; int nic, skip; };
  const Case cases[] = {{"READ request lost", 0, 0}, {"middle response lost", 1, 1}, {"last response lost", 1, 3}};
  for (int m = 0; m < 3; m++) {
    const Case& k = cases[m];
    SCOPED_TRACE(k.what);
    for (uint32_t i = 0; i < 4000; i++) src.p[size_t(m) * 8192 + i] = pattern(80 + m, i);
    const uint32_t retx = counter(0, tmnic::hwif::stat::RETRANSMITS);
    tmnic_sim_corrupt_tx_after(k.nic, k.skip, 1);   // 4000 bytes: 4 response frames of 1 KiB
    ASSERT_EQ(post_read(s, m, {{dst.addr(size_t(m) * 8192), 4000, dst.lkey()}}, src.addr(size_t(m) * 8192),
                        src.mr->rkey), 0);
    auto sc = poll(s.scq, 1);
    ASSERT_EQ(sc.size(), 1u) << "never completed";
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    EXPECT_EQ(sc[0].opcode, IBV_WC_RDMA_READ);
    EXPECT_EQ(std::memcmp(dst.p + size_t(m) * 8192, src.p + size_t(m) * 8192, 4000), 0) << "data";
    EXPECT_GT(counter(0, tmnic::hwif::stat::RETRANSMITS), retx) << "the loss was recovered by a rewind";
    EXPECT_TRUE(drain(s.scq).empty()) << "completed once";
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, Read, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param ? "TwoNics" : "Loopback"; });

}  // namespace
