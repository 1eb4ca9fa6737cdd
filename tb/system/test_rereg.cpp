// System tests of ibv_rereg_mr (issue 11) on the simulated NICs, seen through RDMA WRITE: the
// responder NIC checks an incoming WRITE's rkey against the MR table (valid, key, PD, bounds,
// REMOTE_WRITE), so a rereg that rewrites the table entry shows up on the wire. The rkey is kept
// across every rereg (as mlx5 keeps it). A WRITE that fails puts both QPs in ERR: each phase after
// an error uses a fresh connected pair.
#include "system_test.hpp"

namespace {

using namespace sys;

constexpr uint32_t kLen = 512;  // bytes per WRITE

class Rereg : public SystemTest, public ::testing::WithParamInterface<int> {
 protected:
  int rdev() const { return GetParam(); }  // target device: 0 loopback, 1 second NIC

  // A connected RC pair, requester on NIC 0, responder on rdev() with REMOTE_WRITE in its
  // qp_access_flags, both on pd (nullptr: the test's PD of each NIC).
  std::pair<Qp, Qp> write_pair() {
    QpOpts ro;
    ro.to_init = false;
    Qp s = qp(0);
    Qp r = qp(rdev(), ro);
    EXPECT_TRUE(s.qp && r.qp);
    if (!s.qp || !r.qp) return {s, r};
    struct ibv_qp_attr at = {};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    EXPECT_EQ(ibv_modify_qp(r.qp, &at,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
              0);
    connect(s, r);
    return {s, r};
  }

  // Posts one signaled RDMA WRITE of src[0, kLen) to (remote_addr, rkey) and returns its status.
  struct ibv_wc write(const Qp& s, const Buf& src, uint64_t remote_addr, uint32_t rkey,
                      uint64_t wr_id) {
    struct ibv_sge sg = sge(src, 0, kLen);
    struct ibv_send_wr wr = {};
    wr.wr_id = wr_id;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    struct ibv_send_wr* bad = nullptr;
    struct ibv_wc none = {};
    none.status = IBV_WC_GENERAL_ERR;
    if (ibv_post_send(s.qp, &wr, &bad) != 0) {
      ADD_FAILURE() << "ibv_post_send: " << std::strerror(errno);
      return none;
    }
    auto c = poll(s.scq, 1);
    if (c.size() != 1) {
      ADD_FAILURE() << "no completion for the WRITE" << counters();
      return none;
    }
    EXPECT_EQ(c[0].wr_id, wr_id);
    return c[0];
  }

  static void fill(const Buf& b, uint32_t m) {
    for (uint32_t i = 0; i < kLen; i++) b.p[i] = pattern(m, i);
  }
  static bool holds(const uint8_t* p, uint32_t m) {
    for (uint32_t i = 0; i < kLen; i++)
      if (p[i] != pattern(m, i)) return false;
    return true;
  }
  static bool zero(const uint8_t* p, size_t len) {
    for (size_t i = 0; i < len; i++)
      if (p[i]) return false;
    return true;
  }
};

// LOCAL_WRITE only: a remote WRITE is rejected and writes nothing. After
// rereg(CHANGE_ACCESS, LOCAL_WRITE | REMOTE_WRITE) the same rkey works and the data lands.
TEST_P(Rereg, ChangeAccessAllowsRemoteWrite) {
  Buf src = buf(0, 4096);
  Buf dst = buf(rdev(), 4096, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(dst.mr, nullptr);
  const uint32_t rkey = dst.mr->rkey, lkey = dst.mr->lkey;
  fill(src, 1);

  auto [s1, r1] = write_pair();
  ASSERT_TRUE(s1.qp && r1.qp);
  struct ibv_wc wc = write(s1, src, dst.addr(), rkey, 1);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << wc_str(wc);
  run_for(100'000);
  EXPECT_TRUE(zero(dst.p, 4096)) << "a rejected WRITE wrote";

  ASSERT_EQ(ibv_rereg_mr(dst.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE),
            0)
      << std::strerror(errno);
  EXPECT_EQ(dst.mr->rkey, rkey);
  EXPECT_EQ(dst.mr->lkey, lkey);
  EXPECT_EQ(dst.mr->addr, dst.p);
  EXPECT_EQ(dst.mr->length, dst.len);
  EXPECT_EQ(dst.mr->pd, pd_[rdev()]);

  auto [s2, r2] = write_pair();
  ASSERT_TRUE(s2.qp && r2.qp);
  wc = write(s2, src, dst.addr(64), rkey, 2);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc_str(wc);
  EXPECT_TRUE(holds(dst.p + 64, 1)) << "the WRITE did not land";
  EXPECT_TRUE(zero(dst.p, 64));
  EXPECT_TRUE(zero(dst.p + 64 + kLen, 4096 - 64 - kLen));

  // And back: LOCAL_WRITE only rejects again (the same pair is still in RTS).
  ASSERT_EQ(ibv_rereg_mr(dst.mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                         IBV_ACCESS_LOCAL_WRITE),
            0);
  fill(src, 3);
  wc = write(s2, src, dst.addr(64), rkey, 3);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << wc_str(wc);
  run_for(100'000);
  EXPECT_TRUE(holds(dst.p + 64, 1)) << "a rejected WRITE wrote";
}

// CHANGE_TRANSLATION to another buffer: the same rkey now addresses the new buffer (iova = its
// address); WRITEs land there and not in the old one, and the old addresses are out of bounds.
TEST_P(Rereg, ChangeTranslationMovesWrites) {
  Buf src = buf(0, 4096);
  Buf fresh = buf(-1, 8192);  // allocated first: freed after the MR that ends up on it
  Buf dst = buf(rdev(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(dst.mr, nullptr);
  const uint32_t rkey = dst.mr->rkey;

  auto [s, r] = write_pair();
  ASSERT_TRUE(s.qp && r.qp);
  fill(src, 1);
  struct ibv_wc wc = write(s, src, dst.addr(), rkey, 1);
  ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << wc_str(wc);
  EXPECT_TRUE(holds(dst.p, 1));
  std::memset(dst.p, 0, dst.len);

  ASSERT_EQ(ibv_rereg_mr(dst.mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, fresh.p, fresh.len, 0),
            0)
      << std::strerror(errno);
  EXPECT_EQ(dst.mr->rkey, rkey);
  EXPECT_EQ(dst.mr->addr, fresh.p);
  EXPECT_EQ(dst.mr->length, fresh.len);

  fill(src, 2);
  wc = write(s, src, fresh.addr(8192 - kLen), rkey, 2);  // the end of the new, longer range
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc_str(wc);
  EXPECT_TRUE(holds(fresh.p + 8192 - kLen, 2)) << "the WRITE did not land in the new buffer";
  EXPECT_TRUE(zero(fresh.p, 8192 - kLen));
  EXPECT_TRUE(zero(dst.p, dst.len)) << "the old buffer was written";

  // The old buffer's addresses are outside the MR now.
  fill(src, 3);
  wc = write(s, src, dst.addr(), rkey, 3);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << wc_str(wc);
  run_for(100'000);
  EXPECT_TRUE(zero(dst.p, dst.len)) << "the old buffer was written";
  EXPECT_TRUE(holds(fresh.p + 8192 - kLen, 2));
}

// CHANGE_PD: the MR moves to a PD the responder QP is not on, so its rkey is refused; moved back
// (together with new access bits) it works again. PD use counts follow the MR.
TEST_P(Rereg, ChangePdFollowsProtectionDomain) {
  struct ibv_pd* other = ibv_alloc_pd(ctx_[rdev()]);
  ASSERT_NE(other, nullptr);
  defer([other] { EXPECT_EQ(ibv_dealloc_pd(other), 0); });
  Buf src = buf(0, 4096);
  Buf dst = buf(rdev(), 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  ASSERT_NE(dst.mr, nullptr);
  const uint32_t rkey = dst.mr->rkey;

  ASSERT_EQ(ibv_rereg_mr(dst.mr, IBV_REREG_MR_CHANGE_PD, other, nullptr, 0, 0), 0);
  EXPECT_EQ(dst.mr->pd, other);
  EXPECT_EQ(dst.mr->rkey, rkey);
  EXPECT_EQ(ibv_dealloc_pd(other), EBUSY);

  fill(src, 1);
  auto [s1, r1] = write_pair();
  ASSERT_TRUE(s1.qp && r1.qp);
  struct ibv_wc wc = write(s1, src, dst.addr(), rkey, 1);
  EXPECT_EQ(wc.status, IBV_WC_REM_ACCESS_ERR) << wc_str(wc);
  run_for(100'000);
  EXPECT_TRUE(zero(dst.p, dst.len)) << "a rejected WRITE wrote";

  ASSERT_EQ(ibv_rereg_mr(dst.mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
                         pd_[rdev()], nullptr, 0,
                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ),
            0);
  EXPECT_EQ(dst.mr->pd, pd_[rdev()]);
  auto [s2, r2] = write_pair();
  ASSERT_TRUE(s2.qp && r2.qp);
  wc = write(s2, src, dst.addr(), rkey, 2);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS) << wc_str(wc);
  EXPECT_TRUE(holds(dst.p, 1));
}

// libibverbs' return codes: input errors caught before the provider are IBV_REREG_MR_ERR_INPUT,
// errors of the "command" IBV_REREG_MR_ERR_CMD; errno says why. Nothing changes on an error.
TEST_P(Rereg, ErrorCodes) {
  Buf dst = buf(rdev(), 4096, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(dst.mr, nullptr);
  struct ibv_mr* mr = dst.mr;
  const struct ibv_mr before = *mr;
  char other[64];
  struct Case {
    int flags;
    struct ibv_pd* pd;
    void* addr;
    size_t len;
    int access;
    int ret, err;
  };
  const Case cases[] = {
      {IBV_REREG_MR_FLAGS_SUPPORTED + 1, nullptr, nullptr, 0, 0, IBV_REREG_MR_ERR_INPUT, EINVAL},
      {IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, nullptr, 64, 0, IBV_REREG_MR_ERR_INPUT, EINVAL},
      {IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, other, 0, 0, IBV_REREG_MR_ERR_INPUT, EINVAL},
      {IBV_REREG_MR_CHANGE_PD, pd_[rdev()], nullptr, 0, IBV_ACCESS_LOCAL_WRITE,
       IBV_REREG_MR_ERR_INPUT, EINVAL},  // access without CHANGE_ACCESS
      {0, nullptr, nullptr, 0, 0, IBV_REREG_MR_ERR_CMD, EINVAL},
      {IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_REMOTE_WRITE,
       IBV_REREG_MR_ERR_CMD, EINVAL},
      {IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_REMOTE_ATOMIC,
       IBV_REREG_MR_ERR_CMD, EINVAL},  // needs LOCAL_WRITE, with or without atomics
      {IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, IBV_REREG_MR_ERR_CMD, EOPNOTSUPP},  // no MWs
      {IBV_REREG_MR_CHANGE_PD, nullptr, nullptr, 0, 0, IBV_REREG_MR_ERR_CMD, EINVAL},
      {IBV_REREG_MR_CHANGE_PD, pd_[1 - rdev()], nullptr, 0, 0, IBV_REREG_MR_ERR_CMD,
       EINVAL},  // a PD of the other NIC's context
  };
  int i = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + std::to_string(i++));
    errno = 0;
    EXPECT_EQ(ibv_rereg_mr(mr, c.flags, c.pd, c.addr, c.len, c.access), c.ret);
    EXPECT_EQ(errno, c.err);
  }
  EXPECT_EQ(std::memcmp(&before, mr, sizeof(before)), 0) << "a failed rereg changed the MR";
}

INSTANTIATE_TEST_SUITE_P(Topology, Rereg, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::string("TwoNics") : std::string("Loopback");
                         });

}  // namespace
