// QP creation and the modify_qp state machine: attribute validation and SET_QP words.
#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace q = hwif::cmd::set_qp;

class ModifyTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    pd = make_pd();
    cq = make_cq(31);
    qp = make_qp(pd, cq, 15, 31, 1);
    ASSERT_NE(qp, nullptr);
  }
  void TearDown() override {
    EXPECT_EQ(tmnic::destroy_qp(qp), 0);
    EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    EXPECT_TRUE(be->mappings.empty());
    DriverTest::TearDown();
  }
  Command last_set_qp() const { return be->commands_with(hwif::cmd::SET_QP).back(); }
  size_t n_set_qp() const { return be->commands_with(hwif::cmd::SET_QP).size(); }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  struct ibv_qp* qp = nullptr;
};

TEST_F(ModifyTest, CreateProgramsResetContext) {
  EXPECT_GE(qp->qp_num, hwif::QPN_FIRST);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  Command c = last_set_qp();
  EXPECT_EQ(c.index, qp->qp_num);
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RESET));
  EXPECT_EQ(c.args[q::PD], to_tpd(pd)->pdn);
  EXPECT_EQ(c.args[q::SEND_CQ], to_tcq(cq)->cqn);
  EXPECT_EQ(c.args[q::RECV_CQ], to_tcq(cq)->cqn);
  EXPECT_EQ(c.args[q::SRQ], hwif::NO_SRQ);
  EXPECT_EQ(c.args[q::SQ_LOG_SIZE], 4u);  // 15 + 1
  EXPECT_EQ(c.args[q::RQ_LOG_SIZE], 5u);  // 31 + 1
  uint64_t sq = uint64_t(c.args[q::SQ_BASE_HI]) << 32 | c.args[q::SQ_BASE_LO];
  uint64_t rq = uint64_t(c.args[q::RQ_BASE_HI]) << 32 | c.args[q::RQ_BASE_LO];
  EXPECT_EQ(sq, to_tqp(qp)->sq.buf.iova());
  EXPECT_EQ(rq, to_tqp(qp)->rq.buf.iova());
  EXPECT_EQ(sq % 4096, 0u);
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
  EXPECT_EQ(tmnic::destroy_cq(cq), EBUSY);  // used by the QP
}

TEST_F(ModifyTest, CreateRejects) {
  struct ibv_qp_init_attr a = {};
  a.send_cq = cq;
  a.recv_cq = cq;
  a.qp_type = IBV_QPT_UD;
  a.cap.max_send_wr = 1;
  errno = 0;
  EXPECT_EQ(tmnic::create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = 1 << 15;  // > max_qp_wr
  EXPECT_EQ(tmnic::create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.cap.max_send_wr = 1;
  a.cap.max_send_sge = hwif::WQE_MAX_SGE + 1;
  EXPECT_EQ(tmnic::create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.cap.max_send_sge = 1;
  a.cap.max_inline_data = 97;
  EXPECT_EQ(tmnic::create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.cap.max_inline_data = 0;
  a.send_cq = nullptr;
  EXPECT_EQ(tmnic::create_qp(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(ModifyTest, FullPathSetQpWords) {
  struct ibv_qp_attr a = init_attr();
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kInitMask), 0);
  EXPECT_EQ(qp->state, IBV_QPS_INIT);
  Command c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_INIT));
  EXPECT_EQ(c.args[q::INIT], 0u);
  // qp_access_flags: the remote rights reach the responder (SET_QP.ACCESS); LOCAL_WRITE is not its.
  EXPECT_EQ(c.args[q::ACCESS], hwif::access::REMOTE_WRITE);

  a = rtr_attr(0x0A000001, 0x123456, 0xABCDEF12);  // own IP: the backend resolves it to its MAC
  a.min_rnr_timer = 14;
  a.ah_attr.grh.traffic_class = 0x6A;
  a.ah_attr.grh.hop_limit = 3;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), 0);
  EXPECT_EQ(qp->state, IBV_QPS_RTR);
  c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RTR));
  EXPECT_EQ(c.args[q::PATH_MTU], uint32_t(IBV_MTU_1024));
  EXPECT_EQ(c.args[q::DEST_QPN], 0x123456u);
  EXPECT_EQ(c.args[q::DEST_IP], 0x0A000001u);
  EXPECT_EQ(c.args[q::DMAC_LO], 0x00000001u);  // 02:00:00:00:00:01
  EXPECT_EQ(c.args[q::DMAC_HI], 0x0200u);
  EXPECT_EQ(c.args[q::TCLASS], 0x6Au);      // the GRH's traffic class and hop limit: IPv4 TOS, TTL
  EXPECT_EQ(c.args[q::HOP_LIMIT], 3u);
  EXPECT_EQ(c.args[q::RQ_PSN], 0xCDEF12u);  // 24 bits
  EXPECT_EQ(c.args[q::MIN_RNR_TIMER], 14u);
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_RQ);
  // Context words set at creation are carried along.
  EXPECT_EQ(c.args[q::SQ_LOG_SIZE], 4u);
  EXPECT_EQ(c.args[q::PD], to_tpd(pd)->pdn);

  a = rts_attr(0x1000042);
  a.max_rd_atomic = uint8_t(hwif::MAX_RD_ATOM + 1);   // over the device's limit (mlx5 checks it too)
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtsMask), EINVAL);
  a.max_rd_atomic = 1;
  a.timeout = 18;
  a.retry_cnt = 6;
  a.rnr_retry = 5;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtsMask), 0);
  EXPECT_EQ(qp->state, IBV_QPS_RTS);
  c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RTS));
  EXPECT_EQ(c.args[q::SQ_PSN], 0x42u);
  EXPECT_EQ(c.args[q::TIMEOUT], 18u);
  EXPECT_EQ(c.args[q::RETRY_CNT], 6u);
  EXPECT_EQ(c.args[q::RNR_RETRY], 5u);
  EXPECT_EQ(c.args[q::MAX_RD_ATOMIC], 1u);   // (rts_attr's max_rd_atomic)
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_SQ);
  EXPECT_EQ(c.args[q::DEST_QPN], 0x123456u);  // RTR words kept
  EXPECT_EQ(c.args[q::RQ_PSN], 0xCDEF12u);
  EXPECT_EQ(c.args[q::ACCESS], hwif::access::REMOTE_WRITE);  // INIT's access kept

  // RTS -> RTS: new access flags (REMOTE_READ | REMOTE_ATOMIC instead of REMOTE_WRITE).
  a = {};
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
  EXPECT_EQ(last_set_qp().args[q::ACCESS], hwif::access::REMOTE_READ | hwif::access::REMOTE_ATOMIC);
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), 0);
  EXPECT_EQ(last_set_qp().args[q::ACCESS], hwif::access::REMOTE_WRITE);

  // RTS -> RTS with an optional attribute only.
  a = {};
  a.min_rnr_timer = 3;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER), 0);
  EXPECT_EQ(last_set_qp().args[q::MIN_RNR_TIMER], 3u);
  EXPECT_EQ(last_set_qp().args[q::INIT], 0u);

  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_AV, &qi), 0);
  EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(qa.dest_qp_num, 0x123456u);
  EXPECT_EQ(qa.sq_psn, 0x42u);
  EXPECT_EQ(qa.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(qa.qp_access_flags, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  EXPECT_EQ(qa.ah_attr.is_global, 1);
  EXPECT_EQ(qi.qp_type, IBV_QPT_RC);
  // The transport timer's attributes read back as set (the completer runs the timer with them).
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, &qi), 0);
  EXPECT_EQ(qa.timeout, 18);
  EXPECT_EQ(qa.retry_cnt, 6);
  EXPECT_EQ(qa.rnr_retry, 5);

  a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  EXPECT_EQ(last_set_qp().args[q::STATE], uint32_t(IBV_QPS_ERR));
  EXPECT_EQ(last_set_qp().args[q::INIT], 0u);
  a.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  EXPECT_EQ(last_set_qp().args[q::INIT], hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
}

TEST_F(ModifyTest, MissingRequiredOrExtraAttributesAreEinval) {
  size_t before = n_set_qp();
  struct ibv_qp_attr a = init_attr();
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kInitMask & ~IBV_QP_PORT), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kInitMask | IBV_QP_SQ_PSN), EINVAL);  // not allowed here
  a.qp_state = IBV_QPS_RTR;  // RESET -> RTR skips INIT
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), EINVAL);
  a.qp_state = IBV_QPS_SQD;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  EXPECT_EQ(n_set_qp(), before);  // nothing reached the device

  a = init_attr();
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kInitMask), 0);
  a = rtr_attr(0x0A000002, 9, 1);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask & ~IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
  a.ah_attr.is_global = 0;  // RoCE needs a GRH
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), EINVAL);
  a = rtr_attr(0x0A000002, 9, 1);
  std::memset(a.ah_attr.grh.dgid.raw, 0, 16);
  a.ah_attr.grh.dgid.raw[0] = 0xFE;  // fe80::/64 is not IPv4-mapped
  a.ah_attr.grh.dgid.raw[1] = 0x80;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), EINVAL);
  a = rtr_attr(0x0A000002, 9, 1);
  a.path_mtu = static_cast<enum ibv_mtu>(6);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), EINVAL);
  a = rtr_attr(0x0A000002, 9, 1);
  a.min_rnr_timer = 32;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), EINVAL);
  a = rtr_attr(0x0A000002, 9, 1);
  a.cur_qp_state = IBV_QPS_RTS;  // wrong current state
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtrMask | IBV_QP_CUR_STATE), EINVAL);
  EXPECT_EQ(qp->state, IBV_QPS_INIT);

  a = rtr_attr(0x0A000002, 9, 1);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), 0);
  a = rts_attr(5);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtsMask & ~IBV_QP_SQ_PSN), EINVAL);
  a.retry_cnt = 8;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtsMask), EINVAL);
  a = rts_attr(5);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kRtsMask | IBV_QP_DEST_QPN), EINVAL);
  struct ibv_qp_attr none = {};
  EXPECT_EQ(tmnic::modify_qp(qp, &none, IBV_QP_TIMEOUT), EINVAL);  // RTR -> RTR
  a = {};
  a.qp_state = IBV_QPS_ERR;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
  EXPECT_EQ(qp->state, IBV_QPS_RTR);
  a = rts_attr(5);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtsMask), 0);
}

TEST_F(ModifyTest, QueryCapNeedsNoCommandButStateAsksTheNic) {
  size_t before = be->commands.size();
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_CAP, &qi), 0);
  EXPECT_EQ(be->commands.size(), before);
  EXPECT_EQ(qa.cap.max_recv_wr, 31u);
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_STATE, &qi), 0);
  ASSERT_EQ(be->commands.size(), before + 1);
  EXPECT_EQ(be->commands.back().opcode, hwif::cmd::QUERY_QP);
  EXPECT_EQ(be->commands.back().index, qp->qp_num);
  EXPECT_EQ(qa.qp_state, IBV_QPS_RESET);
}

TEST_F(ModifyTest, DestroyDropsTheQpsUnpolledCompletions) {
  struct ibv_qp* other = make_qp(pd, cq, 3, 3, 1);
  ASSERT_NE(other, nullptr);
  struct ibv_cq* small = make_cq(3);  // 4 entries: the clean has to move entries across the wrap
  struct ibv_qp* a = make_qp(pd, small, 3, 3, 1);
  struct ibv_qp* b = make_qp(pd, small, 3, 3, 1);
  // Consume 2 first, so the 4 live entries occupy slots 2,3,0,1 (phase changes at slot 0).
  CqeFields f;
  f.qp_num = b->qp_num;
  f.wqe_idx = 0xFFFF;  // never outstanding: no reclaim
  for (uint32_t i = 0; i < 2; i++) nic_write_cqe(small, i, f);
  struct ibv_wc wc[4];
  ASSERT_EQ(tmnic::poll_cq(small, 4, wc), 2);
  const uint32_t owners[4] = {a->qp_num, b->qp_num, a->qp_num, b->qp_num};
  for (uint32_t i = 0; i < 4; i++) {
    f.qp_num = owners[i];
    f.wr_id = 10 + i;
    nic_write_cqe(small, 2 + i, f);
  }
  ASSERT_EQ(tmnic::destroy_qp(a), 0);
  ASSERT_EQ(tmnic::poll_cq(small, 4, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 11u);
  EXPECT_EQ(wc[1].wr_id, 13u);
  EXPECT_EQ(wc[0].qp_num, b->qp_num);
  // The NIC's next CQE (number 6) is found where it belongs.
  f.wr_id = 99;
  nic_write_cqe(small, 6, f);
  ASSERT_EQ(tmnic::poll_cq(small, 4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 99u);
  EXPECT_EQ(tmnic::destroy_qp(b), 0);
  EXPECT_EQ(tmnic::destroy_cq(small), 0);
  EXPECT_EQ(tmnic::destroy_qp(other), 0);
}

TEST_F(ModifyTest, ResetClearsRings) {
  to_rts(qp);
  struct ibv_send_wr wr = {};
  wr.opcode = IBV_WR_SEND;
  struct ibv_send_wr* bad;
  ASSERT_EQ(tmnic::post_send(qp, &wr, &bad), 0);
  EXPECT_EQ(to_tqp(qp)->sq.outstanding(), 1u);
  struct ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  EXPECT_EQ(to_tqp(qp)->sq.outstanding(), 0u);
  EXPECT_EQ(to_tqp(qp)->sq.pi.load(), 0u);
}

}  // namespace
}  // namespace tmnic::test
