// ibv_post_send / ibv_post_recv: WQE bytes, doorbells, bad_wr rules, slot reclaim.
#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace w = hwif::wqe;

class PostTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    pd = make_pd();
    cq = make_cq(63);
    qp = make_qp(pd, cq, /*send_wr=*/7, /*recv_wr=*/7, /*sge=*/2);  // 8-slot rings
    ASSERT_NE(qp, nullptr);
  }
  void TearDown() override {
    EXPECT_EQ(tmnic::destroy_qp(qp), 0);
    EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    EXPECT_TRUE(be->mappings.empty());
    EXPECT_EQ(be->bad_unmaps, 0);
    DriverTest::TearDown();
  }
  uint32_t sq_db() const { return hwif::reg::DB_SQ0 + 4 * qp->qp_num; }
  uint32_t rq_db() const { return hwif::reg::DB_RQ0 + 4 * qp->qp_num; }
  const uint8_t* sq_slot(uint32_t i) const { return to_tqp(qp)->sq.slot(i); }
  const uint8_t* rq_slot(uint32_t i) const { return to_tqp(qp)->rq.slot(i); }
  static bool all_zero(const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; i++)
      if (p[i]) return false;
    return true;
  }
  // A chain of `n` one-SGE SENDs, wr_id = first + i.
  void chain(std::vector<struct ibv_send_wr>& wrs, std::vector<struct ibv_sge>& sges, int n,
             uint64_t first = 1) {
    wrs.assign(n, ibv_send_wr());
    sges.assign(n, ibv_sge());
    for (int i = 0; i < n; i++) {
      sges[i] = {0x1000u + 0x100u * i, 64, 0x100 | unsigned(i)};
      wrs[i].wr_id = first + i;
      wrs[i].sg_list = &sges[i];
      wrs[i].num_sge = 1;
      wrs[i].opcode = IBV_WR_SEND;
      wrs[i].next = i + 1 < n ? &wrs[i + 1] : nullptr;
    }
  }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  struct ibv_qp* qp = nullptr;
};

TEST_F(PostTest, SendInResetInitRtrIsEinval) {
  std::vector<struct ibv_send_wr> wrs;
  std::vector<struct ibv_sge> sges;
  chain(wrs, sges, 2);
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[0], &bad), EINVAL);  // RESET
  EXPECT_EQ(bad, &wrs[0]);
  struct ibv_qp_attr a = init_attr();
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kInitMask), 0);
  bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[0], &bad), EINVAL);  // INIT
  EXPECT_EQ(bad, &wrs[0]);
  a = rtr_attr(0x0A000002, 3, 0);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), 0);
  bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[0], &bad), EINVAL);  // RTR
  EXPECT_EQ(bad, &wrs[0]);
  EXPECT_TRUE(be->doorbells_at(sq_db()).empty());
  EXPECT_TRUE(all_zero(sq_slot(0), hwif::WQE_STRIDE));
}

TEST_F(PostTest, SendWqeBytesAndOneDoorbellPerBatch) {
  to_rts(qp);
  struct ibv_sge s0[2] = {{0x1122334455667788ull, 0x1000, 0xAABBCC01}, {0x2000, 16, 0x202}};
  struct ibv_send_wr wr[2] = {};
  wr[0].wr_id = 0xDEADBEEFCAFEF00Dull;
  wr[0].sg_list = s0;
  wr[0].num_sge = 2;
  wr[0].opcode = IBV_WR_SEND_WITH_IMM;
  wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
  wr[0].imm_data = htobe32(0x01020304);
  wr[0].next = &wr[1];
  wr[1].wr_id = 7;
  wr[1].sg_list = &s0[1];
  wr[1].num_sge = 1;
  wr[1].opcode = IBV_WR_SEND;  // unsignaled
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, wr, &bad), 0);

  const uint8_t* p = sq_slot(0);
  EXPECT_EQ(ld64(p + w::WR_ID_OFF), 0xDEADBEEFCAFEF00Dull);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::SEND_WITH_IMM);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED | hwif::wqe_flag::SOLICITED);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 2);
  EXPECT_EQ(p[11], 0);  // reserved
  const uint8_t imm[4] = {1, 2, 3, 4};  // raw: network order as given
  EXPECT_EQ(std::memcmp(p + w::IMM_OFF, imm, 4), 0);
  EXPECT_EQ(ld32(p + w::INLINE_LEN_OFF), 0u);
  EXPECT_TRUE(all_zero(p + 20, 12));
  EXPECT_EQ(ld64(p + 32), 0x1122334455667788ull);
  EXPECT_EQ(ld32(p + 40), 0x1000u);
  EXPECT_EQ(ld32(p + 44), 0xAABBCC01u);
  EXPECT_EQ(ld64(p + 48), 0x2000u);
  EXPECT_EQ(ld32(p + 56), 16u);
  EXPECT_EQ(ld32(p + 60), 0x202u);
  EXPECT_TRUE(all_zero(p + 64, 64));  // unused SGE slots

  p = sq_slot(1);
  EXPECT_EQ(ld64(p), 7u);
  EXPECT_EQ(p[w::OPCODE_OFF], hwif::wqe_op::SEND);
  EXPECT_EQ(p[w::FLAGS_OFF], 0);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 1);

  auto dbs = be->doorbells_at(sq_db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 2u);  // new producer index
}

TEST_F(PostTest, SqSigAllSignalsEveryWqe) {
  struct ibv_qp_init_attr a = {};
  a.send_cq = cq;
  a.recv_cq = cq;
  a.qp_type = IBV_QPT_RC;
  a.sq_sig_all = 1;
  a.cap.max_send_wr = 3;
  a.cap.max_send_sge = 1;
  struct ibv_qp* q2 = tmnic::create_qp(pd, &a);
  ASSERT_NE(q2, nullptr);
  to_rts(q2);
  struct ibv_send_wr wr = {};
  wr.opcode = IBV_WR_SEND;
  struct ibv_send_wr* bad;
  ASSERT_EQ(tmnic::post_send(q2, &wr, &bad), 0);
  EXPECT_EQ(to_tqp(q2)->sq.slot(0)[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED);
  EXPECT_EQ(tmnic::destroy_qp(q2), 0);
}

TEST_F(PostTest, TooManySgesIsEinvalAtThatWr) {
  to_rts(qp);
  std::vector<struct ibv_send_wr> wrs;
  std::vector<struct ibv_sge> sges;
  chain(wrs, sges, 4);
  struct ibv_sge many[3] = {};
  wrs[2].sg_list = many;
  wrs[2].num_sge = 3;  // max_send_sge is 2
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[0], &bad), EINVAL);
  EXPECT_EQ(bad, &wrs[2]);
  // The two WRs before it were posted and announced; nothing at or after it was written.
  EXPECT_EQ(ld64(sq_slot(0)), 1u);
  EXPECT_EQ(ld64(sq_slot(1)), 2u);
  EXPECT_TRUE(all_zero(sq_slot(2), hwif::WQE_STRIDE));
  EXPECT_TRUE(all_zero(sq_slot(3), hwif::WQE_STRIDE));
  auto dbs = be->doorbells_at(sq_db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 2u);
}

TEST_F(PostTest, UnsupportedOpcodeIsEinval) {
  to_rts(qp);
  struct ibv_send_wr wr = {};
  wr.opcode = IBV_WR_RDMA_WRITE;
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  EXPECT_TRUE(be->doorbells_at(sq_db()).empty());
}

TEST_F(PostTest, FullSendQueueIsEnomemAndCompletionsFreeSlots) {
  to_rts(qp);
  std::vector<struct ibv_send_wr> wrs;
  std::vector<struct ibv_sge> sges;
  chain(wrs, sges, 9);  // capacity is 7
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[0], &bad), ENOMEM);
  EXPECT_EQ(bad, &wrs[7]);
  EXPECT_TRUE(all_zero(sq_slot(7), hwif::WQE_STRIDE));
  ASSERT_EQ(be->doorbells_at(sq_db()).back().val, 7u);
  bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wrs[7], &bad), ENOMEM);  // still full
  EXPECT_EQ(bad, &wrs[7]);

  // A signaled completion of WQE 2 frees WQEs 0..2 (0 and 1 were unsignaled).
  CqeFields f;
  f.qp_num = qp->qp_num;
  f.wqe_idx = 2;
  f.wr_id = 3;
  nic_write_cqe(cq, 0, f);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(to_tqp(qp)->sq.outstanding(), 4u);
  wrs[8].next = nullptr;
  wrs[7].next = &wrs[8];
  ASSERT_EQ(tmnic::post_send(qp, &wrs[7], &bad), 0);
  EXPECT_EQ(ld64(sq_slot(7)), 8u);
  EXPECT_EQ(ld64(sq_slot(8)), 9u);  // wrapped into slot 0
  EXPECT_EQ(be->doorbells_at(sq_db()).back().val, 9u);

  // A stale index (not outstanding) frees nothing.
  f.wqe_idx = 2;
  nic_write_cqe(cq, 1, f);
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(to_tqp(qp)->sq.outstanding(), 6u);
}

TEST_F(PostTest, InlineCopiesPayloadAndChecksSize) {
  to_rts(qp);
  uint8_t data[96];
  for (int i = 0; i < 96; i++) data[i] = uint8_t(i + 1);
  struct ibv_sge s[2] = {{uintptr_t(data), 40, 0}, {uintptr_t(data + 40), 56, 0}};
  struct ibv_send_wr wr = {};
  wr.wr_id = 5;
  wr.sg_list = s;
  wr.num_sge = 2;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, &wr, &bad), 0);
  const uint8_t* p = sq_slot(0);
  EXPECT_EQ(p[w::FLAGS_OFF], hwif::wqe_flag::INLINE | hwif::wqe_flag::SIGNALED);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 0);
  EXPECT_EQ(ld32(p + w::INLINE_LEN_OFF), 96u);
  EXPECT_EQ(std::memcmp(p + 32, data, 96), 0);

  s[1].length = 57;  // 97 bytes > WQE_MAX_INLINE
  bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  EXPECT_EQ(be->doorbells_at(sq_db()).size(), 1u);

  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_CAP, &qi), 0);
  EXPECT_EQ(qa.cap.max_inline_data, 96u);
  EXPECT_EQ(qi.cap.max_inline_data, 96u);
  EXPECT_EQ(qa.cap.max_send_wr, 7u);
  EXPECT_EQ(qa.cap.max_send_sge, 2u);
}

TEST_F(PostTest, PostInErrStillWritesAndRings) {
  to_rts(qp);
  struct ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  struct ibv_send_wr wr = {};
  wr.wr_id = 42;
  wr.opcode = IBV_WR_SEND;
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, &wr, &bad), 0);  // the NIC flushes it
  EXPECT_EQ(ld64(sq_slot(0)), 42u);
  EXPECT_EQ(be->doorbells_at(sq_db()).back().val, 1u);
}

TEST_F(PostTest, RecvWqesDoorbellAndErrors) {
  struct ibv_sge s[3] = {{0x5000, 256, 0x301}, {0x6000, 128, 0x302}, {}};
  struct ibv_recv_wr wr[3] = {};
  wr[0].wr_id = 11;
  wr[0].sg_list = s;
  wr[0].num_sge = 2;
  wr[0].next = &wr[1];
  wr[1].wr_id = 12;
  wr[1].sg_list = s;
  wr[1].num_sge = 1;
  wr[1].next = &wr[2];
  wr[2].wr_id = 13;
  wr[2].sg_list = s;
  wr[2].num_sge = 3;  // too many
  struct ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_recv(qp, wr, &bad), EINVAL);  // RESET
  EXPECT_EQ(bad, &wr[0]);
  struct ibv_qp_attr a = init_attr();
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kInitMask), 0);
  bad = nullptr;
  EXPECT_EQ(tmnic::post_recv(qp, wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr[2]);
  const uint8_t* p = rq_slot(0);
  EXPECT_EQ(ld64(p), 11u);
  EXPECT_EQ(p[w::OPCODE_OFF], 0);
  EXPECT_EQ(p[w::FLAGS_OFF], 0);
  EXPECT_EQ(p[w::NUM_SGE_OFF], 2);
  EXPECT_EQ(ld64(p + 32), 0x5000u);
  EXPECT_EQ(ld32(p + 40), 256u);
  EXPECT_EQ(ld32(p + 44), 0x301u);
  EXPECT_EQ(ld64(p + 48), 0x6000u);
  EXPECT_EQ(ld64(rq_slot(1)), 12u);
  EXPECT_TRUE(all_zero(rq_slot(2), hwif::WQE_STRIDE));
  auto dbs = be->doorbells_at(rq_db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 2u);

  // RTR re-announces receives posted in INIT after the receive state was initialised.
  a = rtr_attr(0x0A000002, 3, 0);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), 0);
  dbs = be->doorbells_at(rq_db());
  ASSERT_EQ(dbs.size(), 2u);
  EXPECT_EQ(dbs[1].val, 2u);

  // Receive completions free their slots in order.
  CqeFields f;
  f.qp_num = qp->qp_num;
  f.opcode = hwif::wc_op::RECV;
  f.wqe_idx = 0;
  nic_write_cqe(cq, 0, f);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(to_tqp(qp)->rq.outstanding(), 1u);
}

}  // namespace
}  // namespace tmnic::test
