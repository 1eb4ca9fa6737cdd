// The ibv_qp_ex post-send API (qp_ex.cpp) against ibv_post_send (qp_post.cpp): identical WQE
// bytes, mlx5's error latching and rollback, send_ops_flags and RDMA gating by OPS_CAPS, and the
// CQE opcodes of RDMA.
#include <atomic>
#include <thread>
#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace w = hwif::wqe;
constexpr uint32_t kWrite = 1u << hwif::regf::ops_caps::RDMA_WRITE.lsb;
constexpr uint32_t kRead = 1u << hwif::regf::ops_caps::RDMA_READ.lsb;

class QpExTest : public DriverTest {
 protected:
  void SetUp() override {}  // each test opens the fake device with its OPS_CAPS
  void start(uint32_t ops_caps) {
    fake::Config c;
    c.ops_caps = ops_caps;
    open(c);
    pd = make_pd();
    cq = make_cq(63);
  }
  void TearDown() override {
    for (auto* q : qps) EXPECT_EQ(tmnic::destroy_qp(q), 0);
    if (cq) {
      EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    }
    if (pd) {
      EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    }
    if (be) {
      EXPECT_TRUE(be->mappings.empty());
      EXPECT_EQ(be->bad_unmaps, 0);
    }
    DriverTest::TearDown();
    ctx = nullptr;
    qps.clear();
    cq = nullptr;
    pd = nullptr;
  }
  // An RC QP (8-slot rings, 2 SGEs); with send_ops_flags when `ops` is given. nullptr on failure
  // (errno set).
  struct ibv_qp* create(const uint64_t* ops, int sig_all = 0) {
    struct ibv_qp_init_attr_ex a = {};
    a.send_cq = cq;
    a.recv_cq = cq;
    a.qp_type = IBV_QPT_RC;
    a.sq_sig_all = sig_all;
    a.cap.max_send_wr = 7;
    a.cap.max_recv_wr = 7;
    a.cap.max_send_sge = 2;
    a.cap.max_recv_sge = 2;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    if (ops) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = *ops;
    }
    struct ibv_qp* q = tmnic::create_qp_ex(ctx, &a);
    if (q) qps.push_back(q);
    return q;
  }
  struct ibv_qp_ex* create_ex(uint64_t ops, int sig_all = 0) {
    struct ibv_qp* q = create(&ops, sig_all);
    EXPECT_NE(q, nullptr);
    if (!q) return nullptr;
    EXPECT_TRUE(to_tqp(q)->has_qp_ex);
    to_rts(q);
    return &to_tqp(q)->ibv;
  }
  static uint32_t db(const struct ibv_qp* q) { return hwif::reg::DB_SQ0 + 4 * q->qp_num; }
  static const uint8_t* slot(const struct ibv_qp* q, uint32_t i) {
    return to_tqp(const_cast<struct ibv_qp*>(q))->sq.slot(i);
  }
  static uint32_t pi(const struct ibv_qp* q) {
    return to_tqp(const_cast<struct ibv_qp*>(q))->sq.pi.load();
  }
  static bool all_zero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (p[i]) return false;
    return true;
  }
  // One SEND with a single SGE through the new API (no wr_start/complete).
  static void send1(struct ibv_qp_ex* q, uint64_t wr_id) {
    q->wr_id = wr_id;
    q->wr_flags = 0;
    ibv_wr_send(q);
    ibv_wr_set_sge(q, 0x11, 0x1000 + wr_id, 8);
  }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  std::vector<struct ibv_qp*> qps;
};

// One request, described once, posted through both interfaces.
struct Req {
  enum ibv_wr_opcode op;
  unsigned flags;  // ibv_send_flags (IBV_SEND_INLINE: data inline)
  uint64_t wr_id;
  __be32 imm;
  uint32_t rkey;
  uint64_t raddr;
  std::vector<struct ibv_sge> sges;  // also the inline buffers (addr, length)
  bool single;                       // new API: the one-item setter instead of the list setter
};

void post_new(struct ibv_qp_ex* q, const Req& r) {
  q->wr_id = r.wr_id;
  q->wr_flags = r.flags & ~unsigned(IBV_SEND_INLINE);  // the setter decides inline, not the flag
  switch (r.op) {
    case IBV_WR_SEND: ibv_wr_send(q); break;
    case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(q, r.imm); break;
    case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(q, r.rkey, r.raddr); break;
    case IBV_WR_RDMA_WRITE_WITH_IMM: ibv_wr_rdma_write_imm(q, r.rkey, r.raddr, r.imm); break;
    case IBV_WR_RDMA_READ: ibv_wr_rdma_read(q, r.rkey, r.raddr); break;
    default: FAIL() << "opcode";
  }
  if (r.flags & IBV_SEND_INLINE) {
    std::vector<struct ibv_data_buf> b;
    for (const auto& s : r.sges) b.push_back({reinterpret_cast<void*>(uintptr_t(s.addr)), s.length});
    if (r.single)
      ibv_wr_set_inline_data(q, b[0].addr, b[0].length);
    else
      ibv_wr_set_inline_data_list(q, b.size(), b.data());
  } else if (r.single) {
    ibv_wr_set_sge(q, r.sges[0].lkey, r.sges[0].addr, r.sges[0].length);
  } else {
    ibv_wr_set_sge_list(q, r.sges.size(), r.sges.data());
  }
}

// Posts `reqs` through ibv_post_send on one QP and ibv_qp_ex on another; the rings must match
// byte for byte, and each interface rings one doorbell.
void compare(QpExTest* t, struct ibv_qp* old_qp, struct ibv_qp_ex* q, const std::vector<Req>& reqs,
             fake::FakeBackend& be, uint32_t (*dbf)(const struct ibv_qp*),
             const uint8_t* (*slotf)(const struct ibv_qp*, uint32_t)) {
  std::vector<struct ibv_send_wr> wrs(reqs.size());
  for (size_t i = 0; i < reqs.size(); i++) {
    const Req& r = reqs[i];
    wrs[i] = {};
    wrs[i].wr_id = r.wr_id;
    wrs[i].opcode = r.op;
    wrs[i].send_flags = r.flags;
    wrs[i].imm_data = r.imm;
    wrs[i].wr.rdma.rkey = r.rkey;
    wrs[i].wr.rdma.remote_addr = r.raddr;
    wrs[i].sg_list = const_cast<struct ibv_sge*>(r.sges.data());
    wrs[i].num_sge = int(r.sges.size());
    wrs[i].next = i + 1 < reqs.size() ? &wrs[i + 1] : nullptr;
  }
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(old_qp, wrs.data(), &bad), 0);
  ibv_wr_start(q);
  for (const Req& r : reqs) post_new(q, r);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  for (size_t i = 0; i < reqs.size(); i++) {
    EXPECT_EQ(std::memcmp(slotf(old_qp, uint32_t(i)), slotf(&q->qp_base, uint32_t(i)),
                          hwif::WQE_STRIDE),
              0)
        << "WQE " << i;
  }
  ASSERT_EQ(be.doorbells_at(dbf(old_qp)).size(), 1u);
  auto dbs = be.doorbells_at(dbf(&q->qp_base));
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, uint32_t(reqs.size()));
  (void)t;
}

uint8_t g_data[96];

std::vector<Req> send_reqs() {
  for (int i = 0; i < 96; i++) g_data[i] = uint8_t(0xA0 + i);
  const uint64_t d = uintptr_t(g_data);
  return {
      {IBV_WR_SEND, IBV_SEND_SIGNALED, 0x1111222233334444ull, 0, 0, 0,
       {{0x1122334455667788ull, 0x1000, 0xAABBCC01}, {0x2000, 16, 0x202}}, false},
      {IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 2, htobe32(0x01020304), 0, 0,
       {{0x3000, 64, 0x303}}, true},
      {IBV_WR_SEND, IBV_SEND_INLINE | IBV_SEND_FENCE, 3, 0, 0, 0, {{d, 40, 0}, {d + 40, 56, 0}},
       false},
      {IBV_WR_SEND_WITH_IMM, IBV_SEND_INLINE, 4, htobe32(0xCAFE), 0, 0, {{d + 3, 17, 0}}, true},
      {IBV_WR_SEND, 0, 5, 0, 0, 0, {}, false},  // zero-length SEND
      {IBV_WR_SEND, 0, 6, 0, 0, 0, {{0x4000, 0, 0x404}}, true},  // zero-length SGE
  };
}

TEST_F(QpExTest, SendWqesEqualPostSend) {
  start(0);
  struct ibv_qp* old_qp = create(nullptr);
  ASSERT_NE(old_qp, nullptr);
  EXPECT_FALSE(to_tqp(old_qp)->has_qp_ex);
  to_rts(old_qp);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
  ASSERT_NE(q, nullptr);
  auto reqs = send_reqs();
  compare(this, old_qp, q, reqs, *be, db, slot);
  // Spot-check the bytes themselves, so that a bug shared by both paths shows too.
  const uint8_t* p = slot(&q->qp_base, 1);
  EXPECT_EQ(ld64(p + w::WR_ID_OFF), 2u);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::SEND_WITH_IMM);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED | hwif::wqe_flag::SOLICITED);
  const uint8_t imm[4] = {1, 2, 3, 4};
  EXPECT_EQ(std::memcmp(p + w::IMM_OFF, imm, 4), 0);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 1);
  EXPECT_EQ(ld64(p + 32), 0x3000u);
  p = slot(&q->qp_base, 2);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::INLINE | hwif::wqe_flag::FENCE);
  EXPECT_EQ(ld32(p + w::INLINE_LEN_OFF), 96u);
  EXPECT_EQ(std::memcmp(p + 32, g_data, 96), 0);
  EXPECT_TRUE(all_zero(p + w::RKEY_OFF, 12));
}

TEST_F(QpExTest, SqSigAllAppliesToTheNewApi) {
  start(0);
  uint64_t ops = IBV_QP_EX_WITH_SEND;
  struct ibv_qp* q = create(&ops, /*sig_all=*/1);
  ASSERT_NE(q, nullptr);
  to_rts(q);
  struct ibv_qp_ex* x = &to_tqp(q)->ibv;
  ibv_wr_start(x);
  send1(x, 9);
  ASSERT_EQ(ibv_wr_complete(x), 0);
  EXPECT_EQ(slot(q, 0)[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED);
}

TEST_F(QpExTest, RdmaWqesEqualPostSendWithOpsCaps) {
  start(kWrite | kRead);
  struct ibv_qp* old_qp = create(nullptr);
  ASSERT_NE(old_qp, nullptr);
  to_rts(old_qp);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                  IBV_QP_EX_WITH_RDMA_READ);
  ASSERT_NE(q, nullptr);
  for (int i = 0; i < 96; i++) g_data[i] = uint8_t(i);
  const uint64_t d = uintptr_t(g_data);
  std::vector<Req> reqs = {
      {IBV_WR_RDMA_WRITE, IBV_SEND_SIGNALED, 1, 0, 0xABCD1234, 0x0102030405060708ull,
       {{0x5000, 100, 0x505}, {0x6000, 28, 0x606}}, false},
      {IBV_WR_RDMA_WRITE_WITH_IMM, 0, 2, htobe32(0x55667788), 0x77, 0x9000, {{0x7000, 8, 0x707}},
       true},
      {IBV_WR_RDMA_WRITE, IBV_SEND_INLINE, 3, 0, 0x88, 0xA000, {{d, 33, 0}}, true},
      {IBV_WR_RDMA_READ, IBV_SEND_SIGNALED | IBV_SEND_FENCE, 4, 0, 0x99, 0xB000,
       {{0x8000, 4096, 0x808}}, false},
      {IBV_WR_SEND, 0, 5, 0, 0, 0, {{0x9000, 1, 0x909}}, true},  // a SEND in between
  };
  compare(this, old_qp, q, reqs, *be, db, slot);
  const uint8_t* p = slot(&q->qp_base, 0);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::RDMA_WRITE);
  EXPECT_EQ(ld32(p + w::RKEY_OFF), 0xABCD1234u);
  EXPECT_EQ(ld64(p + w::RADDR_OFF), 0x0102030405060708ull);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 2);
  p = slot(&q->qp_base, 1);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::RDMA_WRITE_WITH_IMM);
  const uint8_t imm[4] = {0x55, 0x66, 0x77, 0x88};
  EXPECT_EQ(std::memcmp(p + w::IMM_OFF, imm, 4), 0);
  p = slot(&q->qp_base, 2);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::INLINE);
  EXPECT_EQ(ld32(p + w::INLINE_LEN_OFF), 33u);
  EXPECT_EQ(ld32(p + w::RKEY_OFF), 0x88u);
  p = slot(&q->qp_base, 3);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::RDMA_READ);
  EXPECT_EQ(ld64(p + w::RADDR_OFF), 0xB000u);
  EXPECT_EQ(ld32(p + 40), 4096u);
}

TEST_F(QpExTest, PostSendRdmaNeedsOpsCaps) {
  for (uint32_t caps : {0u, kWrite, kRead, kWrite | kRead}) {
    SCOPED_TRACE(caps);
    TearDown();
    start(caps);
    struct ibv_qp* q = create(nullptr);
    ASSERT_NE(q, nullptr);
    to_rts(q);
    struct ibv_sge s = {0x1000, 8, 1};
    for (auto op : {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ}) {
      struct ibv_send_wr wr = {};
      wr.opcode = op;
      wr.sg_list = &s;
      wr.num_sge = 1;
      struct ibv_send_wr* bad = nullptr;
      bool ok = op == IBV_WR_RDMA_READ ? (caps & kRead) : (caps & kWrite);
      EXPECT_EQ(tmnic::post_send(q, &wr, &bad), ok ? 0 : EINVAL) << op;
      if (!ok) {
        EXPECT_EQ(bad, &wr);
      }
    }
    // READ is never inline (its data comes back); no atomics without OPS_CAPS.ATOMIC
    // (test_atomic.cpp has the device that executes them).
    struct ibv_send_wr wr = {};
    wr.opcode = IBV_WR_RDMA_READ;
    wr.sg_list = &s;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_INLINE;
    struct ibv_send_wr* bad = nullptr;
    EXPECT_EQ(tmnic::post_send(q, &wr, &bad), EINVAL);
    wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    wr.send_flags = 0;
    EXPECT_EQ(tmnic::post_send(q, &wr, &bad), EINVAL);
    struct ibv_device_attr da;
    ASSERT_EQ(tmnic::query_device(ctx, &da), 0);
    EXPECT_EQ(da.atomic_cap, IBV_ATOMIC_NONE);
    // READ resources are reported exactly when READ is executed
    const int rd = (caps & kRead) ? int(hwif::MAX_RD_ATOM) : 0;
    EXPECT_EQ(da.max_qp_rd_atom, rd);
    EXPECT_EQ(da.max_qp_init_rd_atom, rd);
    EXPECT_EQ(da.max_res_rd_atom, rd * (64 - 2));
    EXPECT_EQ(da.max_sge_rd, (caps & kRead) ? int(hwif::WQE_MAX_SGE) : 0);
  }
}

TEST_F(QpExTest, SendOpsFlagsOnlyWhatTheNicExecutes) {
  const uint64_t never[] = {IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
                            IBV_QP_EX_WITH_LOCAL_INV,          IBV_QP_EX_WITH_BIND_MW,
                            IBV_QP_EX_WITH_SEND_WITH_INV,      IBV_QP_EX_WITH_TSO,
                            IBV_QP_EX_WITH_ATOMIC_WRITE,       uint64_t(1) << 40};
  for (uint32_t caps : {0u, kWrite, kRead, kWrite | kRead}) {
    SCOPED_TRACE(caps);
    TearDown();
    start(caps);
    uint64_t ops = 0;  // the comp_mask bit alone also gives an ibv_qp_ex (as mlx5)
    ASSERT_NE(create(&ops), nullptr);
    EXPECT_TRUE(to_tqp(qps.back())->has_qp_ex);
    ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
    ASSERT_NE(create(&ops), nullptr);
    for (uint64_t f : {uint64_t(IBV_QP_EX_WITH_RDMA_WRITE),
                       uint64_t(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)}) {
      ops = IBV_QP_EX_WITH_SEND | f;
      errno = 0;
      struct ibv_qp* q = create(&ops);
      EXPECT_EQ(q != nullptr, (caps & kWrite) != 0);
      if (!q) {
        EXPECT_EQ(errno, EOPNOTSUPP);
      }
    }
    ops = IBV_QP_EX_WITH_RDMA_READ;
    errno = 0;
    struct ibv_qp* q = create(&ops);
    EXPECT_EQ(q != nullptr, (caps & kRead) != 0);
    if (!q) {
      EXPECT_EQ(errno, EOPNOTSUPP);
    }
    for (uint64_t f : never) {
      ops = IBV_QP_EX_WITH_SEND | f;
      errno = 0;
      EXPECT_EQ(create(&ops), nullptr) << f;
      EXPECT_EQ(errno, EOPNOTSUPP);
    }
  }
}

TEST_F(QpExTest, FirstErrorLatchedAndBatchNotPosted) {
  start(0);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_SEND);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  struct ibv_sge three[3] = {};
  uint8_t big[97] = {};

  ibv_wr_start(q);
  send1(q, 1);
  ibv_wr_send(q);
  ibv_wr_set_sge_list(q, 3, three);  // max_send_sge is 2: ENOMEM (mlx5)
  send1(q, 3);
  ibv_wr_atomic_fetch_add(q, 1, 2, 3);  // a later error does not replace the first
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  EXPECT_EQ(pi(b), 0u);
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());

  ibv_wr_start(q);
  ibv_wr_send(q);
  ibv_wr_set_inline_data(q, big, sizeof(big));  // > max_inline_data 96: ENOMEM
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);

  // Operations the NIC lacks, and RDMA without OPS_CAPS: EINVAL, like ibv_post_send.
  auto einval = [&](const char* what, auto&& call) {
    ibv_wr_start(q);
    send1(q, 7);
    call();
    EXPECT_EQ(ibv_wr_complete(q), EINVAL) << what;
    EXPECT_EQ(pi(b), 0u) << what;
  };
  struct ibv_mw_bind_info bi = {};
  uint64_t atomic_arg[2] = {};
  einval("write", [&] { ibv_wr_rdma_write(q, 1, 2); ibv_wr_set_sge(q, 1, 2, 3); });
  einval("write_imm", [&] { ibv_wr_rdma_write_imm(q, 1, 2, 3); ibv_wr_set_sge(q, 1, 2, 3); });
  einval("read", [&] { ibv_wr_rdma_read(q, 1, 2); ibv_wr_set_sge(q, 1, 2, 3); });
  einval("cmp_swp", [&] { ibv_wr_atomic_cmp_swp(q, 1, 2, 3, 4); ibv_wr_set_sge(q, 1, 2, 3); });
  einval("fetch_add", [&] { ibv_wr_atomic_fetch_add(q, 1, 2, 3); });
  einval("bind_mw", [&] { ibv_wr_bind_mw(q, nullptr, 1, &bi); });
  einval("local_inv", [&] { ibv_wr_local_inv(q, 1); });
  einval("send_inv", [&] { ibv_wr_send_inv(q, 1); ibv_wr_set_sge(q, 1, 2, 3); });
  einval("tso", [&] { ibv_wr_send_tso(q, big, 10, 10); });
  einval("atomic_write", [&] { ibv_wr_atomic_write(q, 1, 2, atomic_arg); });
  einval("ud_addr", [&] { send1(q, 8); ibv_wr_set_ud_addr(q, nullptr, 1, 2); });
  einval("xrc_srqn", [&] { send1(q, 8); ibv_wr_set_xrc_srqn(q, 1); });
  einval("builder without setter", [&] { ibv_wr_send(q); });
  einval("two builders", [&] { ibv_wr_send(q); send1(q, 9); });
  einval("setter without builder", [&] { ibv_wr_set_sge(q, 1, 2, 3); });
  einval("two setters", [&] { send1(q, 9); ibv_wr_set_sge(q, 1, 2, 3); });
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());

  // Nothing of the failed batches is outstanding: the next batch starts at slot 0.
  ibv_wr_start(q);
  send1(q, 42);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  EXPECT_EQ(ld64(slot(b, 0)), 42u);
  auto dbs = be->doorbells_at(db(b));
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 1u);
}

TEST_F(QpExTest, ReadIsNeverInline) {
  start(kRead);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_RDMA_READ);
  ASSERT_NE(q, nullptr);
  uint8_t buf[8] = {};
  ibv_wr_start(q);
  ibv_wr_rdma_read(q, 1, 0x1000);
  ibv_wr_set_inline_data(q, buf, sizeof(buf));
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  EXPECT_TRUE(be->doorbells_at(db(&q->qp_base)).empty());
}

TEST_F(QpExTest, AbortPostsNothingAndReleasesTheLock) {
  start(0);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_SEND);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  ibv_wr_start(q);
  send1(q, 1);
  send1(q, 2);
  ibv_wr_abort(q);
  EXPECT_EQ(pi(b), 0u);
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());
  // The SQ lock is free again: ibv_post_send works and writes slot 0.
  struct ibv_sge s = {0x1000, 4, 1};
  struct ibv_send_wr wr = {};
  wr.wr_id = 77;
  wr.opcode = IBV_WR_SEND;
  wr.sg_list = &s;
  wr.num_sge = 1;
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(b, &wr, &bad), 0);
  EXPECT_EQ(ld64(slot(b, 0)), 77u);
  // An empty batch completes without a doorbell.
  ibv_wr_start(q);
  EXPECT_EQ(ibv_wr_complete(q), 0);
  EXPECT_EQ(be->doorbells_at(db(b)).size(), 1u);
}

TEST_F(QpExTest, BatchHoldsTheSqLock) {
  start(0);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_SEND);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  ibv_wr_start(q);
  send1(q, 1);
  std::atomic<bool> posted{false};
  std::thread t([&] {
    struct ibv_sge s = {0x1000, 4, 1};
    struct ibv_send_wr wr = {};
    wr.wr_id = 2;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &s;
    wr.num_sge = 1;
    struct ibv_send_wr* bad = nullptr;
    EXPECT_EQ(tmnic::post_send(b, &wr, &bad), 0);
    posted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(posted.load());  // waits for the batch
  ASSERT_EQ(ibv_wr_complete(q), 0);
  t.join();
  EXPECT_TRUE(posted.load());
  EXPECT_EQ(ld64(slot(b, 0)), 1u);
  EXPECT_EQ(ld64(slot(b, 1)), 2u);
}

TEST_F(QpExTest, FullRingFailsTheWholeBatch) {
  start(0);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_SEND);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  ibv_wr_start(q);
  for (int i = 0; i < 8; i++) send1(q, 1 + i);  // capacity is 7
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);
  EXPECT_EQ(pi(b), 0u);
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());

  ibv_wr_start(q);
  for (int i = 0; i < 7; i++) send1(q, 1 + i);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  auto dbs = be->doorbells_at(db(b));
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 7u);
  ibv_wr_start(q);
  send1(q, 8);
  EXPECT_EQ(ibv_wr_complete(q), ENOMEM);  // still full

  // A completion of WQE 1 frees slots 0 and 1; the next batch wraps around the ring.
  CqeFields f;
  f.qp_num = b->qp_num;
  f.wqe_idx = 1;
  nic_write_cqe(cq, 0, f);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  ibv_wr_start(q);
  send1(q, 8);
  send1(q, 9);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  EXPECT_EQ(ld64(slot(b, 7)), 8u);
  EXPECT_EQ(ld64(slot(b, 8)), 9u);
  EXPECT_EQ(be->doorbells_at(db(b)).back().val, 9u);
}

TEST_F(QpExTest, CompleteBeforeRtsIsEinval) {
  start(0);
  uint64_t ops = IBV_QP_EX_WITH_SEND;
  struct ibv_qp* b = create(&ops);
  ASSERT_NE(b, nullptr);
  struct ibv_qp_ex* q = &to_tqp(b)->ibv;
  ibv_wr_start(q);  // RESET
  send1(q, 1);
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  struct ibv_qp_attr a = init_attr();
  ASSERT_EQ(tmnic::modify_qp(b, &a, kInitMask), 0);
  ibv_wr_start(q);  // INIT
  send1(q, 1);
  EXPECT_EQ(ibv_wr_complete(q), EINVAL);
  EXPECT_EQ(pi(b), 0u);
  EXPECT_TRUE(be->doorbells_at(db(b)).empty());
}

TEST_F(QpExTest, RdmaCqeOpcodesAndSlotReclaim) {
  start(kWrite | kRead);
  struct ibv_qp_ex* q = create_ex(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ);
  ASSERT_NE(q, nullptr);
  struct ibv_qp* b = &q->qp_base;
  ibv_wr_start(q);
  q->wr_id = 1;
  q->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_rdma_write(q, 5, 0x1000);
  ibv_wr_set_sge(q, 1, 0x2000, 8);
  q->wr_id = 2;
  ibv_wr_rdma_read(q, 5, 0x1000);
  ibv_wr_set_sge(q, 1, 0x2000, 8);
  ASSERT_EQ(ibv_wr_complete(q), 0);
  struct ibv_recv_wr rwr = {};
  struct ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(tmnic::post_recv(b, &rwr, &rbad), 0);

  CqeFields f;
  f.qp_num = b->qp_num;
  f.wr_id = 1;
  f.wqe_idx = 0;
  f.opcode = hwif::wc_op::RDMA_WRITE;
  nic_write_cqe(cq, 0, f);
  f.wr_id = 2;
  f.wqe_idx = 1;
  f.opcode = hwif::wc_op::RDMA_READ;
  f.byte_len = 8;
  nic_write_cqe(cq, 1, f);
  f.wr_id = 0;
  f.wqe_idx = 0;
  f.opcode = hwif::wc_op::RECV_RDMA_WITH_IMM;
  f.wc_flags = hwif::wc_flag::WITH_IMM;
  f.imm = 0x44332211;
  f.byte_len = 64;
  nic_write_cqe(cq, 2, f);
  struct ibv_wc wc[3];
  ASSERT_EQ(tmnic::poll_cq(cq, 3, wc), 3);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].opcode, IBV_WC_RDMA_READ);
  EXPECT_EQ(wc[1].byte_len, 8u);
  EXPECT_EQ(wc[2].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(wc[2].wc_flags, unsigned(IBV_WC_WITH_IMM));
  EXPECT_EQ(wc[2].imm_data, 0x44332211u);
  EXPECT_EQ(to_tqp(b)->sq.outstanding(), 0u);  // both requester CQEs freed SQ slots
  EXPECT_EQ(to_tqp(b)->rq.outstanding(), 0u);  // the WRITE_WITH_IMM consumed the receive
}

}  // namespace
}  // namespace tmnic::test
