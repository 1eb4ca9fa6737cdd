// Shared receive queues.
#include <poll.h>
#include <unistd.h>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

class SrqTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    make_objects();
  }
  void make_objects() {
    pd = make_pd();
    cq = make_cq(63);
    struct ibv_srq_init_attr a = {};
    a.attr.max_wr = 5;  // -> 8 slots, 7 usable
    a.attr.max_sge = 2;
    srq = tmnic::create_srq(pd, &a);
    ASSERT_NE(srq, nullptr);
    EXPECT_EQ(a.attr.max_wr, 7u);
    EXPECT_EQ(a.attr.max_sge, 2u);
  }
  void TearDown() override {
    EXPECT_EQ(tmnic::destroy_srq(srq), 0);
    EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    // Nothing left mapped but the driver's event queue, if the device has one.
    EXPECT_EQ(be->mappings.size(), to_dev(ctx).async_cqn() == Device::kNoAsyncCq ? 0u : 1u);
    DriverTest::TearDown();
  }
  uint32_t db() const { return hwif::reg::DB_SRQ0 + 4 * to_tsrq(srq)->srqn; }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  struct ibv_srq* srq = nullptr;
};

TEST_F(SrqTest, SetSrqWords) {
  auto c = be->commands_with(hwif::cmd::SET_SRQ).back();
  namespace s = hwif::cmd::set_srq;
  EXPECT_EQ(c.index, to_tsrq(srq)->srqn);
  EXPECT_EQ(c.args[s::LOG_SIZE], 3u);
  EXPECT_EQ(c.args[s::PD], to_tpd(pd)->pdn);
  EXPECT_EQ(c.args[s::VALID], 1u);
  EXPECT_EQ(uint64_t(c.args[s::BASE_HI]) << 32 | c.args[s::BASE_LO], to_tsrq(srq)->wq.buf.iova());
}

TEST_F(SrqTest, BatchOneDoorbellAndFullIsEnomem) {
  struct ibv_sge sge = {0x9000, 512, 0x400};
  struct ibv_recv_wr wr[9] = {};
  for (int i = 0; i < 9; i++) {
    wr[i].wr_id = 100 + i;
    wr[i].sg_list = &sge;
    wr[i].num_sge = 1;
    wr[i].next = i < 8 ? &wr[i + 1] : nullptr;
  }
  struct ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_srq_recv(srq, wr, &bad), ENOMEM);
  EXPECT_EQ(bad, &wr[7]);
  auto dbs = be->doorbells_at(db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 7u);
  const uint8_t* p = to_tsrq(srq)->wq.slot(6);
  EXPECT_EQ(ld64(p), 106u);
  EXPECT_EQ(p[hwif::wqe::NUM_SGE_OFF], 1);
  EXPECT_EQ(ld64(p + 32), 0x9000u);
  EXPECT_EQ(ld32(p + 40), 512u);
  EXPECT_EQ(ld32(p + 44), 0x400u);

  // A QP on the SRQ: its receive completions return SRQ slots; it has no receive queue.
  struct ibv_qp* qp = make_qp(pd, cq, 3, 0, 1, srq);
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(be->commands_with(hwif::cmd::SET_QP).back().args[hwif::cmd::set_qp::SRQ],
            to_tsrq(srq)->srqn);
  struct ibv_recv_wr* rbad = nullptr;
  EXPECT_EQ(tmnic::post_recv(qp, wr, &rbad), EINVAL);
  EXPECT_EQ(rbad, &wr[0]);
  EXPECT_EQ(tmnic::destroy_srq(srq), EBUSY);
  CqeFields f;
  f.qp_num = qp->qp_num;
  f.opcode = hwif::wc_op::RECV;
  f.wqe_idx = 0;
  f.wr_id = 100;
  nic_write_cqe(cq, 0, f);
  f.wqe_idx = 1;
  nic_write_cqe(cq, 1, f);
  struct ibv_wc wc[2];
  ASSERT_EQ(tmnic::poll_cq(cq, 2, wc), 2);
  EXPECT_EQ(wc[0].qp_num, qp->qp_num);  // SRQ completions name the receiving QP
  EXPECT_EQ(to_tsrq(srq)->wq.outstanding(), 5u);
  wr[8].next = nullptr;
  bad = nullptr;
  ASSERT_EQ(tmnic::post_srq_recv(srq, &wr[7], &bad), 0);
  EXPECT_EQ(be->doorbells_at(db()).back().val, 9u);
  EXPECT_EQ(tmnic::destroy_qp(qp), 0);

  wr[0].num_sge = 3;  // > max_sge
  wr[0].next = nullptr;
  EXPECT_EQ(tmnic::post_srq_recv(srq, wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr[0]);
}

TEST_F(SrqTest, ModifyQueryAndLimitEvent) {
  struct ibv_srq_attr a = {};
  a.max_wr = 100;
  EXPECT_EQ(tmnic::modify_srq(srq, &a, IBV_SRQ_MAX_WR), EINVAL);  // no resize
  a.srq_limit = 8;
  EXPECT_EQ(tmnic::modify_srq(srq, &a, IBV_SRQ_LIMIT), EINVAL);  // > max_wr
  a.srq_limit = 3;
  ASSERT_EQ(tmnic::modify_srq(srq, &a, IBV_SRQ_LIMIT), 0);
  struct ibv_srq_attr q = {};
  ASSERT_EQ(tmnic::query_srq(srq, &q), 0);
  EXPECT_EQ(q.max_wr, 7u);
  EXPECT_EQ(q.max_sge, 2u);
  EXPECT_EQ(q.srq_limit, 3u);

  struct ibv_qp* qp = make_qp(pd, cq, 3, 0, 1, srq);
  struct ibv_recv_wr wr[4] = {};
  for (int i = 0; i < 4; i++) wr[i].next = i < 3 ? &wr[i + 1] : nullptr;
  struct ibv_recv_wr* bad;
  ASSERT_EQ(tmnic::post_srq_recv(srq, wr, &bad), 0);
  CqeFields f;
  f.qp_num = qp->qp_num;
  f.opcode = hwif::wc_op::RECV;
  nic_write_cqe(cq, 0, f);
  nic_write_cqe(cq, 1, f);
  struct ibv_wc wc[2];
  ASSERT_EQ(tmnic::poll_cq(cq, 2, wc), 2);  // 4 -> 2 outstanding: below the limit of 3
  struct pollfd p = {ctx->async_fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 1) << "the async fd is not readable";
  struct ibv_async_event ev;
  ASSERT_TRUE(tmnic::take_async_event(ctx, &ev));
  EXPECT_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
  EXPECT_EQ(ev.element.srq, srq);
  EXPECT_FALSE(tmnic::take_async_event(ctx, &ev));
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the async fd stays readable with nothing queued";
  ASSERT_EQ(tmnic::query_srq(srq, &q), 0);
  EXPECT_EQ(q.srq_limit, 0u);  // one-shot
  srq->events_completed++;     // the ack (ibv_ack_async_event)
  EXPECT_EQ(tmnic::destroy_qp(qp), 0);
}

TEST_F(SrqTest, CreateRejects) {
  struct ibv_srq_init_attr_ex a = {};
  a.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE;
  a.pd = pd;
  a.srq_type = IBV_SRQT_XRC;  // no XRC hardware
  a.attr.max_wr = 4;
  errno = 0;
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.srq_type = IBV_SRQT_TM;  // without CQ and TM attributes (test_tm.cpp has the rest)
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  const uint32_t bad_type = 7;  // not an enumerator: stored as raw bytes, as a C caller could
  std::memcpy(&a.srq_type, &bad_type, sizeof(bad_type));
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.srq_type = IBV_SRQT_BASIC;
  a.attr.max_wr = 1 << 15;
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.attr.max_wr = 4;
  a.attr.max_sge = hwif::WQE_MAX_SGE + 1;
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

}  // namespace
// A NIC of ABI 1.4 gets the driver's asynchronous event queue at open: the last CQ, named in
// ASYNC_CQ (applications see one CQ fewer). Its records, handed over by the interrupt, become events
// of the QP's context: QP_ACCESS_ERR / QP_REQ_ERR as the responder said, and for a QP of an SRQ Last
// WQE Reached once; a plain AEV_QP_ERR of a QP without SRQ raises nothing; the consumer index goes
// back to the NIC; a record for a destroyed QP is ignored.
TEST_F(SrqTest, NicEventRecordsBecomeQpEvents) {
  EXPECT_EQ(tmnic::destroy_srq(srq), 0);
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::free_context(ctx), 0);
  fake::Config cfg;
  cfg.abi = hwif::ABI_MAJOR << 16 | 4;
  open(cfg);
  const uint32_t acq = cfg.num_cq - 1;
  auto sets = be->commands_with(hwif::cmd::SET_CQ);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].index, acq);
  EXPECT_EQ(be->read32(hwif::reg::ASYNC_CQ), (1u << 31) | acq);
  struct ibv_device_attr da;
  ASSERT_EQ(tmnic::query_device(ctx, &da), 0);
  EXPECT_EQ(da.max_cq, int(cfg.num_cq) - 1);
  make_objects();   // the PD, CQ and SRQ again, on this device
  EXPECT_NE(to_tcq(cq)->cqn, acq);
  struct ibv_qp* sq = make_qp(pd, cq, 3, 0, 1, srq);   // of the SRQ
  struct ibv_qp* pq = make_qp(pd, cq, 3, 3, 1);        // its own receive queue
  const uint64_t base = uint64_t(sets[0].args[hwif::cmd::set_cq::BASE_LO]) |
                        uint64_t(sets[0].args[hwif::cmd::set_cq::BASE_HI]) << 32;
  uint8_t* ring = reinterpret_cast<uint8_t*>(uintptr_t(base));
  auto record = [&](uint32_t n, uint32_t qpn, uint8_t kind) {
    uint8_t* c = ring + size_t(n) * hwif::CQE_SIZE;
    std::memset(c, 0, hwif::CQE_SIZE - 1);
    st32(c + hwif::cqe::QP_NUM_OFF, qpn);
    c[hwif::cqe::OPCODE_OFF] = hwif::wc_op::ASYNC_EVENT;
    c[hwif::cqe::STATUS_OFF] = kind;
    __atomic_store_n(c + hwif::cqe::OWNER_OFF, uint8_t(1), __ATOMIC_RELEASE);
  };
  record(0, pq->qp_num, hwif::AEV_QP_ERR);
  record(1, pq->qp_num, hwif::AEV_QP_REQ_ERR);
  record(2, sq->qp_num, hwif::AEV_QP_ACCESS_ERR);
  record(3, sq->qp_num, hwif::AEV_QP_ERR);   // (already in ERR: no second Last WQE Reached)
  ASSERT_TRUE(be->irq);
  be->irq(acq);
  auto dbs = be->doorbells_at(hwif::reg::DB_CQ0 + 4 * acq);
  ASSERT_FALSE(dbs.empty());
  EXPECT_EQ(dbs.back().val, 4u) << "consumer index after four records (no arm: records always interrupt)";
  std::vector<std::pair<enum ibv_event_type, struct ibv_qp*>> got;
  struct ibv_async_event ev;
  while (tmnic::take_async_event(ctx, &ev)) {
    got.push_back({ev.event_type, ev.element.qp});
    pthread_mutex_lock(&ev.element.qp->mutex);   // the ack (ibv_ack_async_event)
    ev.element.qp->events_completed++;
    pthread_mutex_unlock(&ev.element.qp->mutex);
  }
  const std::vector<std::pair<enum ibv_event_type, struct ibv_qp*>> want = {
      {IBV_EVENT_QP_REQ_ERR, pq}, {IBV_EVENT_QP_ACCESS_ERR, sq}, {IBV_EVENT_QP_LAST_WQE_REACHED, sq}};
  EXPECT_EQ(got, want);
  const uint32_t gone = pq->qp_num;
  EXPECT_EQ(tmnic::destroy_qp(pq), 0);
  record(4, gone, hwif::AEV_QP_REQ_ERR);
  be->irq(acq);
  EXPECT_FALSE(tmnic::take_async_event(ctx, &ev)) << "an event for a destroyed QP";
  EXPECT_EQ(tmnic::destroy_qp(sq), 0);
}

}  // namespace tmnic::test
