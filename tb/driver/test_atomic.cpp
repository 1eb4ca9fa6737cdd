// Atomics (hwif 1.10) in the provider, against the fake device: gating by OPS_CAPS.ATOMIC
// (atomic_cap, send_ops_flags, ibv_post_send and ibv_wr_atomic_* on RC; never on UD: test_ud.cpp),
// the WQE bytes (opcode, RKEY/RADDR from wr.atomic, the ATOMIC operands at WQE_ATOMIC_OFF, the one
// 8-byte result SGE) identical through both post-send interfaces, the posting rules and their
// errnos, REMOTE_ATOMIC on MRs (ibv_reg_mr, ibv_rereg_mr) and QPs, and the CQE opcodes.
#include <functional>
#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace w = hwif::wqe;
namespace oc = hwif::regf::ops_caps;
const uint32_t kAtomic = oc::ATOMIC.put(1);
const uint32_t kAll = oc::RDMA_WRITE.put(1) | oc::RDMA_READ.put(1) | kAtomic;

class AtomicTest : public DriverTest {
 protected:
  void SetUp() override {}  // each test opens the fake device with its OPS_CAPS
  void start(uint32_t ops_caps) {
    fake::Config c;
    c.ops_caps = ops_caps;
    open(c);
    pd = make_pd();
    cq = make_cq(63);
  }
  void restart(uint32_t ops_caps) {
    TearDown();
    start(ops_caps);
  }
  void TearDown() override {
    for (auto* q : qps) EXPECT_EQ(tmnic::destroy_qp(q), 0);
    for (auto* m : mrs) EXPECT_EQ(tmnic::dereg_mr(m), 0);
    if (cq) {
      EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    }
    if (pd) {
      EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    }
    if (be) {
      EXPECT_TRUE(be->mappings.empty());
    }
    DriverTest::TearDown();
    ctx = nullptr;
    qps.clear();
    mrs.clear();
    cq = nullptr;
    pd = nullptr;
  }
  // An RC QP in RTS (8-slot rings, 2 SGEs), with send_ops_flags when `ops` is given; nullptr and
  // errno on failure.
  struct ibv_qp* rc(const uint64_t* ops = nullptr) {
    struct ibv_qp_init_attr_ex a = {};
    a.send_cq = a.recv_cq = cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = a.cap.max_recv_wr = 7;
    a.cap.max_send_sge = a.cap.max_recv_sge = 2;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    if (ops) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = *ops;
    }
    struct ibv_qp* q = tmnic::create_qp_ex(ctx, &a);
    if (!q) return nullptr;
    qps.push_back(q);
    to_rts(q);
    return q;
  }
  struct ibv_qp_ex* rc_ex(uint64_t ops) {
    struct ibv_qp* q = rc(&ops);
    EXPECT_NE(q, nullptr) << "create_qp_ex: " << std::strerror(errno);
    return q ? &to_tqp(q)->ibv : nullptr;
  }
  static uint32_t db(const struct ibv_qp* q) { return hwif::reg::DB_SQ0 + 4 * q->qp_num; }
  static const uint8_t* slot(const struct ibv_qp* q, uint32_t i) {
    return to_tqp(const_cast<struct ibv_qp*>(q))->sq.slot(i);
  }
  static uint32_t pi(const struct ibv_qp* q) {
    return to_tqp(const_cast<struct ibv_qp*>(q))->sq.pi.load();
  }
  // A signaled atomic WR with one 8-byte result SGE.
  static struct ibv_send_wr atomic_wr(enum ibv_wr_opcode op, struct ibv_sge* s) {
    struct ibv_send_wr wr = {};
    wr.wr_id = 77;
    wr.opcode = op;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.sg_list = s;
    wr.num_sge = 1;
    wr.wr.atomic.remote_addr = 0x10000;
    wr.wr.atomic.rkey = 0x1234;
    wr.wr.atomic.compare_add = 5;
    wr.wr.atomic.swap = 6;
    return wr;
  }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  std::vector<struct ibv_qp*> qps;
  std::vector<struct ibv_mr*> mrs;
};

TEST_F(AtomicTest, DeviceReportsAtomicsExactlyWithTheOpsCapsBit) {
  for (uint32_t caps : {0u, oc::RDMA_WRITE.put(1) | oc::RDMA_READ.put(1), kAtomic, kAll}) {
    SCOPED_TRACE(caps);
    restart(caps);
    const bool at = caps & kAtomic;
    struct ibv_device_attr a;
    ASSERT_EQ(tmnic::query_device(ctx, &a), 0);
    EXPECT_EQ(a.atomic_cap, at ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE);
    // MAX_RD_ATOM covers READs and atomics, as requester and as responder.
    const int rd = (at || oc::RDMA_READ.get(caps)) ? int(hwif::MAX_RD_ATOM) : 0;
    EXPECT_EQ(a.max_qp_rd_atom, rd);
    EXPECT_EQ(a.max_qp_init_rd_atom, rd);
    struct ibv_device_attr_ex x;
    ASSERT_EQ(tmnic::query_device_ex(ctx, nullptr, &x, sizeof(x)), 0);
    EXPECT_EQ(x.orig_attr.atomic_cap, a.atomic_cap);
    EXPECT_EQ(x.orig_attr.max_qp_rd_atom, rd);
  }
}

TEST_F(AtomicTest, SendOpsFlagsAcceptAtomicsOnlyWithTheBit) {
  for (uint32_t caps : {oc::RDMA_WRITE.put(1) | oc::RDMA_READ.put(1), kAll}) {
    SCOPED_TRACE(caps);
    restart(caps);
    for (uint64_t f : {uint64_t(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP),
                       uint64_t(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD),
                       uint64_t(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_RDMA_READ)}) {
      uint64_t ops = IBV_QP_EX_WITH_SEND | f;
      errno = 0;
      struct ibv_qp* q = rc(&ops);
      EXPECT_EQ(q != nullptr, (caps & kAtomic) != 0) << f;
      if (!q) {
        EXPECT_EQ(errno, EOPNOTSUPP) << f;
      }
    }
    // ATOMIC_WRITE (IBA 1.5) is not what OPS_CAPS.ATOMIC means: never.
    uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE;
    errno = 0;
    EXPECT_EQ(rc(&ops), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
  }
}

// The same two atomics through ibv_post_send and ibv_wr_*: identical WQE bytes, one doorbell each.
TEST_F(AtomicTest, WqeBytesEqualThroughBothApis) {
  start(kAll);
  struct ibv_qp* old_qp = rc();
  ASSERT_NE(old_qp, nullptr);
  struct ibv_qp_ex* q =
      rc_ex(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
  ASSERT_NE(q, nullptr);
  struct ibv_sge s0 = {0x11223344556600ull, 8, 0xAABB01}, s1 = {0x7000, 8, 0x707};
  struct ibv_send_wr wr[2];
  wr[0] = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, &s0);
  wr[0].wr_id = 1;
  wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  wr[0].wr.atomic.remote_addr = 0x0102030405060708ull;
  wr[0].wr.atomic.rkey = 0xCAFEBABE;
  wr[0].wr.atomic.compare_add = 0x1111222233334444ull;  // compare
  wr[0].wr.atomic.swap = 0x5555666677778888ull;
  wr[0].next = &wr[1];
  wr[1] = atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &s1);
  wr[1].wr_id = 2;
  wr[1].send_flags = 0;
  wr[1].wr.atomic.remote_addr = 0x9000;
  wr[1].wr.atomic.rkey = 0x42;
  wr[1].wr.atomic.compare_add = 0xFFFFFFFFFFFFFFFFull;  // the addend (-1)
  wr[1].wr.atomic.swap = 0xDEAD;                        // ignored by FETCH_AND_ADD
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(old_qp, wr, &bad), 0);

  ibv_wr_start(q);
  q->wr_id = 1;
  q->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
  ibv_wr_atomic_cmp_swp(q, 0xCAFEBABE, 0x0102030405060708ull, 0x1111222233334444ull,
                        0x5555666677778888ull);
  ibv_wr_set_sge(q, s0.lkey, s0.addr, s0.length);
  q->wr_id = 2;
  q->wr_flags = 0;
  ibv_wr_atomic_fetch_add(q, 0x42, 0x9000, 0xFFFFFFFFFFFFFFFFull);
  ibv_wr_set_sge_list(q, 1, &s1);
  ASSERT_EQ(ibv_wr_complete(q), 0);

  for (uint32_t i = 0; i < 2; i++)
    EXPECT_EQ(std::memcmp(slot(old_qp, i), slot(&q->qp_base, i), hwif::WQE_STRIDE), 0) << i;
  ASSERT_EQ(be->doorbells_at(db(old_qp)).size(), 1u);
  auto dbs = be->doorbells_at(db(&q->qp_base));
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 2u);

  // The bytes themselves (a bug shared by both paths shows here).
  const uint8_t* p = slot(&q->qp_base, 0);
  EXPECT_EQ(ld64(p + w::WR_ID_OFF), 1u);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::ATOMIC_CMP_AND_SWP);
  EXPECT_EQ(p[w::OPCODE_OFF], 0x05);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED | hwif::wqe_flag::FENCE);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 1);
  EXPECT_EQ(ld32(p + w::RKEY_OFF), 0xCAFEBABEu);
  EXPECT_EQ(ld64(p + w::RADDR_OFF), 0x0102030405060708ull);
  EXPECT_EQ(ld64(p + w::SGE_OFF), s0.addr);
  EXPECT_EQ(ld32(p + w::SGE_OFF + 8), 8u);
  EXPECT_EQ(ld32(p + w::SGE_OFF + 12), s0.lkey);
  EXPECT_EQ(ld64(p + hwif::WQE_ATOMIC_OFF), 0x5555666677778888ull);      // SWAP_ADD = swap
  EXPECT_EQ(ld64(p + hwif::WQE_ATOMIC_OFF + 8), 0x1111222233334444ull);  // COMPARE
  EXPECT_EQ(ld32(p + w::INLINE_LEN_OFF), 0u);
  for (size_t i = w::SGE_OFF + w::SGE_LEN; i < hwif::WQE_ATOMIC_OFF; i++)
    ASSERT_EQ(p[i], 0) << "byte " << i << " between the SGE and the operands";
  p = slot(&q->qp_base, 1);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::ATOMIC_FETCH_AND_ADD);
  EXPECT_EQ(p[w::OPCODE_OFF], 0x06);
  EXPECT_EQ(p[w::FLAGS_OFF], 0);
  EXPECT_EQ(ld32(p + w::RKEY_OFF), 0x42u);
  EXPECT_EQ(ld64(p + w::RADDR_OFF), 0x9000u);
  EXPECT_EQ(ld64(p + hwif::WQE_ATOMIC_OFF), 0xFFFFFFFFFFFFFFFFull);  // SWAP_ADD = the addend
  EXPECT_EQ(ld64(p + hwif::WQE_ATOMIC_OFF + 8), 0u);                 // COMPARE unused
}

// ibv_post_send's rules for atomics; every rejected WR is the second of a chain: the first is
// posted and announced, *bad_wr is the rejected one, nothing after it.
TEST_F(AtomicTest, PostSendRules) {
  start(kAll);
  struct ibv_qp* q = rc();
  ASSERT_NE(q, nullptr);
  uint8_t buf[32] = {};
  struct ibv_sge good = {0x1000, 8, 1};
  struct ibv_sge two[2] = {{0x1000, 8, 1}, {0x2000, 8, 1}};
  struct ibv_sge len[4] = {{0x1000, 0, 1}, {0x1000, 4, 1}, {0x1000, 7, 1}, {0x1000, 16, 1}};
  struct ibv_sge inl = {uintptr_t(buf), 8, 0};
  struct Case {
    const char* what;
    struct ibv_send_wr wr;
  };
  std::vector<Case> cases;
  for (auto op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
    struct ibv_send_wr x = atomic_wr(op, &good);
    x.num_sge = 0;
    x.sg_list = nullptr;
    cases.push_back({"no result SGE", x});
    x = atomic_wr(op, two);
    x.num_sge = 2;
    cases.push_back({"two SGEs", x});
    for (auto& l : len) {
      x = atomic_wr(op, &l);
      cases.push_back({"SGE length other than 8", x});
    }
    x = atomic_wr(op, &inl);  // the result buffer given as inline data
    x.send_flags |= IBV_SEND_INLINE;
    cases.push_back({"inline", x});
    x = atomic_wr(op, two);
    x.num_sge = 3;  // more than max_send_sge (2)
    cases.push_back({"more SGEs than max_send_sge", x});
  }
  uint32_t posted = 0;
  for (auto& c : cases) {
    SCOPED_TRACE(c.what);
    struct ibv_send_wr first = atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &good);
    first.next = &c.wr;
    struct ibv_send_wr after = atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &good);
    c.wr.next = &after;
    struct ibv_send_wr* bad = nullptr;
    EXPECT_EQ(tmnic::post_send(q, &first, &bad), EINVAL);
    EXPECT_EQ(bad, &c.wr);
    posted++;
    EXPECT_EQ(pi(q), posted);
    ASSERT_FALSE(be->doorbells_at(db(q)).empty());
    EXPECT_EQ(be->doorbells_at(db(q)).back().val, posted);
    // Slot reclaim for the next round: the NIC completes WQE posted - 1 (and all before it).
    CqeFields f;
    f.qp_num = q->qp_num;
    f.wqe_idx = uint16_t(posted - 1);
    f.opcode = hwif::wc_op::FETCH_ADD;
    nic_write_cqe(cq, posted - 1, f);
    struct ibv_wc wc;
    ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  }
  // An unaligned remote address is not the driver's business: posted (the responder NAKs it).
  struct ibv_send_wr x = atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, &good);
  x.wr.atomic.remote_addr = 0x10003;
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(q, &x, &bad), 0);
  EXPECT_EQ(ld64(slot(q, posted) + w::RADDR_OFF), 0x10003u);
}

TEST_F(AtomicTest, PostSendWithoutTheBitIsEinval) {
  start(oc::RDMA_WRITE.put(1) | oc::RDMA_READ.put(1));
  struct ibv_qp* q = rc();
  ASSERT_NE(q, nullptr);
  struct ibv_sge good = {0x1000, 8, 1};
  for (auto op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
    struct ibv_send_wr x = atomic_wr(op, &good);
    struct ibv_send_wr* bad = nullptr;
    EXPECT_EQ(tmnic::post_send(q, &x, &bad), EINVAL) << op;
    EXPECT_EQ(bad, &x);
  }
  EXPECT_EQ(pi(q), 0u);
  EXPECT_TRUE(be->doorbells_at(db(q)).empty());
}

// ibv_wr_atomic_*: a data setter must name exactly one 8-byte SGE; each failure loses the batch.
TEST_F(AtomicTest, QpExRules) {
  start(kAll);
  struct ibv_qp_ex* q =
      rc_ex(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  uint8_t buf[8] = {};
  struct ibv_sge two[2] = {{0x1000, 8, 1}, {0x2000, 8, 1}};
  struct ibv_data_buf db1 = {buf, 8};
  struct Case {
    const char* what;
    int err;
    std::function<void()> run;
  };
  const std::vector<Case> cases = {
      {"length 4", EINVAL, [&] { ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1); ibv_wr_set_sge(q, 1, 0x1000, 4); }},
      {"length 16", EINVAL, [&] { ibv_wr_atomic_cmp_swp(q, 1, 0x1000, 1, 2); ibv_wr_set_sge(q, 1, 0x1000, 16); }},
      {"two SGEs", EINVAL, [&] { ibv_wr_atomic_cmp_swp(q, 1, 0x1000, 1, 2); ibv_wr_set_sge_list(q, 2, two); }},
      {"empty SGE list", EINVAL, [&] { ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1); ibv_wr_set_sge_list(q, 0, two); }},
      {"inline", EINVAL, [&] { ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1); ibv_wr_set_inline_data(q, buf, 8); }},
      {"inline list", EINVAL, [&] { ibv_wr_atomic_cmp_swp(q, 1, 0x1000, 1, 2); ibv_wr_set_inline_data_list(q, 1, &db1); }},
      {"no setter", EINVAL, [&] { ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1); }},
      {"more SGEs than max_send_sge", ENOMEM,
       [&] { ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1); ibv_wr_set_sge_list(q, 3, two); }},
  };
  for (const Case& c : cases) {
    ibv_wr_start(q);
    q->wr_id = 1;
    q->wr_flags = 0;
    ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1);  // a good one first: lost with the batch
    ibv_wr_set_sge(q, 1, 0x1000, 8);
    c.run();
    EXPECT_EQ(ibv_wr_complete(q), c.err) << c.what;
    EXPECT_EQ(pi(b), 0u) << c.what;
  }
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());
  // Unaligned remote address: posted.
  ibv_wr_start(q);
  ibv_wr_atomic_cmp_swp(q, 1, 0x1001, 1, 2);
  ibv_wr_set_sge(q, 1, 0x1000, 8);
  EXPECT_EQ(ibv_wr_complete(q), 0);
  EXPECT_EQ(pi(b), 1u);
}

TEST_F(AtomicTest, QpExBuildersWithoutTheBitLatchEinval) {
  start(oc::RDMA_WRITE.put(1) | oc::RDMA_READ.put(1));
  struct ibv_qp_ex* q = rc_ex(IBV_QP_EX_WITH_SEND);
  ASSERT_NE(q, nullptr);
  for (int k = 0; k < 2; k++) {
    ibv_wr_start(q);
    if (k)
      ibv_wr_atomic_cmp_swp(q, 1, 0x1000, 1, 2);
    else
      ibv_wr_atomic_fetch_add(q, 1, 0x1000, 1);
    ibv_wr_set_sge(q, 1, 0x1000, 8);
    EXPECT_EQ(ibv_wr_complete(q), EINVAL) << k;
  }
  EXPECT_EQ(pi(&q->qp_base), 0u);
  EXPECT_TRUE(be->doorbells_at(db(&q->qp_base)).empty());
}

// REMOTE_ATOMIC on an MR: needs LOCAL_WRITE (EINVAL, whatever the device), and a device with
// atomics (EOPNOTSUPP otherwise); with both, SET_MR's ACCESS has the bit. Also through rereg.
TEST_F(AtomicTest, MrRemoteAtomicAccess) {
  for (uint32_t caps : {0u, kAll}) {
    SCOPED_TRACE(caps);
    restart(caps);
    const bool at = caps & kAtomic;
    static char buf[256];
    errno = 0;
    EXPECT_EQ(tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf), IBV_ACCESS_REMOTE_ATOMIC), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    EXPECT_EQ(tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf),
                            IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ),
              nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    struct ibv_mr* mr = tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf),
                                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
    EXPECT_EQ(mr != nullptr, at);
    if (!mr) {
      EXPECT_EQ(errno, EOPNOTSUPP);
    } else {
      mrs.push_back(mr);
      auto cmds = be->commands_with(hwif::cmd::SET_MR);
      ASSERT_FALSE(cmds.empty());
      EXPECT_EQ(cmds.back().args[hwif::cmd::set_mr::ACCESS],
                hwif::access::LOCAL_WRITE | hwif::access::REMOTE_ATOMIC);
    }
    // rereg: an MR without it gains it (or not), lkey/rkey unchanged.
    struct ibv_mr* m2 = tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf), IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(m2, nullptr);
    mrs.push_back(m2);
    EXPECT_EQ(tmnic::rereg_mr(m2, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                              IBV_ACCESS_REMOTE_ATOMIC),
              EINVAL);
    EXPECT_EQ(tmnic::rereg_mr(m2, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                              IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                                  IBV_ACCESS_REMOTE_WRITE),
              at ? 0 : EOPNOTSUPP);
    if (at) {
      EXPECT_EQ(be->commands_with(hwif::cmd::SET_MR).back().args[hwif::cmd::set_mr::ACCESS],
                hwif::access::LOCAL_WRITE | hwif::access::REMOTE_WRITE |
                    hwif::access::REMOTE_ATOMIC);
    }
  }
}

// qp_access_flags REMOTE_ATOMIC reaches SET_QP.ACCESS (the responder checks it).
TEST_F(AtomicTest, QpAccessRemoteAtomicReachesSetQp) {
  start(kAll);
  struct ibv_qp* q = make_qp(pd, cq);
  ASSERT_NE(q, nullptr);
  qps.push_back(q);
  struct ibv_qp_attr a = init_attr();
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  ASSERT_EQ(tmnic::modify_qp(q, &a, kInitMask), 0);
  auto cmds = be->commands_with(hwif::cmd::SET_QP);
  ASSERT_FALSE(cmds.empty());
  EXPECT_EQ(cmds.back().args[hwif::cmd::set_qp::ACCESS], hwif::access::REMOTE_ATOMIC);
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(q, &qa, IBV_QP_ACCESS_FLAGS, &qi), 0);
  EXPECT_EQ(qa.qp_access_flags, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC));
}

// The atomic CQE opcodes are libibverbs' and free the SQ slots like any requester completion.
TEST_F(AtomicTest, CqeOpcodesAndSlotReclaim) {
  start(kAll);
  struct ibv_qp* q = rc();
  ASSERT_NE(q, nullptr);
  static_assert(hwif::wc_op::COMP_SWAP == IBV_WC_COMP_SWAP &&
                    hwif::wc_op::FETCH_ADD == IBV_WC_FETCH_ADD,
                "CQE opcodes");
  struct ibv_sge s = {0x1000, 8, 1};
  struct ibv_send_wr x[2] = {atomic_wr(IBV_WR_ATOMIC_CMP_AND_SWP, &s),
                             atomic_wr(IBV_WR_ATOMIC_FETCH_AND_ADD, &s)};
  x[0].wr_id = 10;
  x[1].wr_id = 11;
  x[0].next = &x[1];
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(q, x, &bad), 0);
  EXPECT_EQ(to_tqp(q)->sq.outstanding(), 2u);
  CqeFields f;
  f.qp_num = q->qp_num;
  f.wr_id = 10;
  f.wqe_idx = 0;
  f.byte_len = 8;
  f.opcode = hwif::wc_op::COMP_SWAP;
  nic_write_cqe(cq, 0, f);
  f.wr_id = 11;
  f.wqe_idx = 1;
  f.opcode = hwif::wc_op::FETCH_ADD;
  f.status = hwif::wc_status::REM_ACCESS_ERR;
  nic_write_cqe(cq, 1, f);
  struct ibv_wc wc[2];
  ASSERT_EQ(tmnic::poll_cq(cq, 2, wc), 2);
  EXPECT_EQ(wc[0].opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(wc[0].wr_id, 10u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].byte_len, 8u);
  EXPECT_EQ(wc[1].opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(wc[1].status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(to_tqp(q)->sq.outstanding(), 0u);
}

}  // namespace
}  // namespace tmnic::test
