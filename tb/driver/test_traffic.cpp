// End-to-end RC traffic through the drop-in libibverbs.so.1 and the configured real backend
// (the simulated NIC): built only when TMNIC_BACKEND_LIBS is set. Two QPs on the first two
// devices (or on one device, looped back, when there is only one).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Side {
  struct ibv_context* ctx = nullptr;
  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  struct ibv_srq* srq = nullptr;
  struct ibv_qp* qp = nullptr;
  struct ibv_mr* mr = nullptr;
  std::vector<char> buf = std::vector<char>(1 << 16);
  union ibv_gid gid;
};

class Traffic : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    list_ = ibv_get_device_list(&n);
    ASSERT_TRUE(list_ && n >= 1) << "no tmnic device";
    dev_[0] = list_[0];
    dev_[1] = list_[n > 1 ? 1 : 0];
  }
  void TearDown() override {
    for (Side& s : side_) {
      EXPECT_EQ(s.qp ? ibv_destroy_qp(s.qp) : 0, 0);
      EXPECT_EQ(s.srq ? ibv_destroy_srq(s.srq) : 0, 0);
      EXPECT_EQ(s.cq ? ibv_destroy_cq(s.cq) : 0, 0);
      EXPECT_EQ(s.mr ? ibv_dereg_mr(s.mr) : 0, 0);
      EXPECT_EQ(s.pd ? ibv_dealloc_pd(s.pd) : 0, 0);
      EXPECT_EQ(s.ctx ? ibv_close_device(s.ctx) : 0, 0);
    }
    ibv_free_device_list(list_);
  }

  void open(int i, uint32_t send_wr, uint32_t recv_wr, bool srq) {
    Side& s = side_[i];
    s.ctx = ibv_open_device(dev_[i]);
    ASSERT_NE(s.ctx, nullptr);
    s.pd = ibv_alloc_pd(s.ctx);
    s.mr = ibv_reg_mr(s.pd, s.buf.data(), s.buf.size(), IBV_ACCESS_LOCAL_WRITE);
    s.cq = ibv_create_cq(s.ctx, 63, nullptr, nullptr, 0);
    ASSERT_TRUE(s.pd && s.mr && s.cq);
    if (srq) {
      struct ibv_srq_init_attr sa = {};
      sa.attr.max_wr = 64;
      sa.attr.max_sge = 1;
      s.srq = ibv_create_srq(s.pd, &sa);
      ASSERT_NE(s.srq, nullptr);
    }
    struct ibv_qp_init_attr a = {};
    a.send_cq = a.recv_cq = s.cq;
    a.srq = s.srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = send_wr;
    a.cap.max_recv_wr = recv_wr;
    a.cap.max_send_sge = a.cap.max_recv_sge = 1;
    s.qp = ibv_create_qp(s.pd, &a);
    ASSERT_NE(s.qp, nullptr);
    ASSERT_EQ(ibv_query_gid(s.ctx, 1, 0, &s.gid), 0);
    struct ibv_qp_attr q = {};
    q.qp_state = IBV_QPS_INIT;
    q.port_num = 1;
    q.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
    ASSERT_EQ(ibv_modify_qp(s.qp, &q,
                            IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
              0);
  }
  void connect(int i, uint32_t psn, enum ibv_mtu mtu) {
    Side& s = side_[i];
    Side& r = side_[!i];
    struct ibv_qp_attr q = {};
    q.qp_state = IBV_QPS_RTR;
    q.path_mtu = mtu;
    q.dest_qp_num = r.qp->qp_num;
    q.rq_psn = psn;
    q.max_dest_rd_atomic = 1;
    q.min_rnr_timer = 1;
    q.ah_attr.is_global = 1;
    q.ah_attr.grh.dgid = r.gid;
    q.ah_attr.grh.hop_limit = 1;
    q.ah_attr.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(s.qp, &q,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
              0);
    q = {};
    q.qp_state = IBV_QPS_RTS;
    q.timeout = 14;
    q.retry_cnt = 7;
    q.rnr_retry = 7;
    q.sq_psn = psn;
    q.max_rd_atomic = 1;
    ASSERT_EQ(ibv_modify_qp(s.qp, &q,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
              0);
  }
  void setup(uint32_t send_wr, uint32_t recv_wr, bool srq, uint32_t psn = 100,
             enum ibv_mtu mtu = IBV_MTU_1024) {
    open(0, send_wr, recv_wr, false);
    open(1, send_wr, recv_wr, srq);
    connect(0, psn, mtu);
    connect(1, psn, mtu);
  }
  void post_recv(int i, uint64_t wr_id, size_t off, uint32_t len) {
    Side& s = side_[i];
    struct ibv_sge sge = {uintptr_t(s.buf.data() + off), len, s.mr->lkey};
    struct ibv_recv_wr wr = {};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    struct ibv_recv_wr* bad;
    ASSERT_EQ(s.srq ? ibv_post_srq_recv(s.srq, &wr, &bad) : ibv_post_recv(s.qp, &wr, &bad), 0);
  }
  // Polls until `n` completions arrived (the empty polls advance the simulation).
  std::vector<struct ibv_wc> poll(int i, int n) {
    std::vector<struct ibv_wc> out;
    struct ibv_wc wc[16];
    for (long spin = 0; int(out.size()) < n && spin < 20000000; spin++) {
      int m = ibv_poll_cq(side_[i].cq, 16, wc);
      out.insert(out.end(), wc, wc + m);
    }
    return out;
  }

  struct ibv_device** list_ = nullptr;
  struct ibv_device* dev_[2] = {};
  Side side_[2];
};

TEST_F(Traffic, SendImmInlineAcrossRingWraps) {
  setup(15, 15, false);
  Side& a = side_[0];
  Side& b = side_[1];
  for (int it = 0; it < 150; it++) {  // SQ 16 slots, CQ 64 entries: both wrap several times
    post_recv(1, 1000 + it, 0, 4096);
    uint32_t len = 1 + (it * 37) % 4000;
    bool inl = it % 3 == 0 && len <= 96;
    for (uint32_t i = 0; i < len; i++) a.buf[i] = char(i + it);
    struct ibv_sge sge = {uintptr_t(a.buf.data()), len, a.mr->lkey};
    struct ibv_send_wr wr = {};
    wr.wr_id = it;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = (it & 1) ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0);
    wr.imm_data = htonl(0xABC0 + it);
    struct ibv_send_wr* bad;
    ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
    auto s = poll(0, 1);
    ASSERT_EQ(s.size(), 1u) << "iteration " << it;
    EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
    EXPECT_EQ(s[0].wr_id, uint64_t(it));
    EXPECT_EQ(s[0].opcode, IBV_WC_SEND);
    auto r = poll(1, 1);
    ASSERT_EQ(r.size(), 1u) << "iteration " << it;
    EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(r[0].wr_id, 1000u + it);
    EXPECT_EQ(r[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(r[0].byte_len, len);
    EXPECT_EQ(r[0].qp_num, b.qp->qp_num);
    EXPECT_EQ(r[0].src_qp, a.qp->qp_num);
    if (it & 1) {
      EXPECT_EQ(r[0].wc_flags, unsigned(IBV_WC_WITH_IMM));
      EXPECT_EQ(ntohl(r[0].imm_data), 0xABC0u + it);
    } else {
      EXPECT_EQ(r[0].wc_flags, 0u);
    }
    ASSERT_EQ(std::memcmp(a.buf.data(), b.buf.data(), len), 0) << "iteration " << it;
  }
}

TEST_F(Traffic, UnsignaledBatchesFillTheSendQueue) {
  setup(7, 63, false, 0xFFFFF0, IBV_MTU_4096);  // PSNs wrap through 0xFFFFFF
  Side& a = side_[0];
  uint64_t sent = 0, received = 0;
  for (int round = 0; round < 40; round++) {
    for (int k = 0; k < 7; k++) post_recv(1, received + k, size_t(k) * 8192, 8192);
    struct ibv_send_wr wr[7] = {};
    struct ibv_sge sge = {uintptr_t(a.buf.data()), 5000, a.mr->lkey};
    for (int k = 0; k < 7; k++) {
      wr[k].wr_id = sent + k;
      wr[k].sg_list = &sge;
      wr[k].num_sge = 1;
      wr[k].opcode = IBV_WR_SEND;
      wr[k].send_flags = k == 6 ? IBV_SEND_SIGNALED : 0;  // the one CQE frees all 7 slots
      wr[k].next = k < 6 ? &wr[k + 1] : nullptr;
    }
    struct ibv_send_wr* bad;
    ASSERT_EQ(ibv_post_send(a.qp, wr, &bad), 0) << "round " << round;  // needs all 7 slots
    sent += 7;
    auto s = poll(0, 1);
    ASSERT_EQ(s.size(), 1u);
    EXPECT_EQ(s[0].wr_id, sent - 1);
    EXPECT_EQ(s[0].status, IBV_WC_SUCCESS);
    auto r = poll(1, 7);
    ASSERT_EQ(r.size(), 7u) << "round " << round;
    for (auto& w : r) {
      EXPECT_EQ(w.status, IBV_WC_SUCCESS);
      EXPECT_EQ(w.wr_id, received++);
      EXPECT_EQ(w.byte_len, 5000u);
    }
  }
}

TEST_F(Traffic, SrqReceives) {
  setup(15, 0, true);
  Side& a = side_[0];
  Side& b = side_[1];
  for (int it = 0; it < 100; it++) {  // SRQ of 127 usable slots: reposted one by one
    post_recv(1, 5000 + it, 0, 4096);
    struct ibv_sge sge = {uintptr_t(a.buf.data()), 256, a.mr->lkey};
    struct ibv_send_wr wr = {};
    wr.wr_id = it;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    struct ibv_send_wr* bad;
    ASSERT_EQ(ibv_post_send(a.qp, &wr, &bad), 0);
    ASSERT_EQ(poll(0, 1).size(), 1u);
    auto r = poll(1, 1);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
    EXPECT_EQ(r[0].wr_id, 5000u + it);
    EXPECT_EQ(r[0].qp_num, b.qp->qp_num);  // SRQ completions name the receiving QP
  }
}

TEST_F(Traffic, ErrFlushesOutstandingWork) {
  setup(15, 15, false);
  Side& b = side_[1];
  for (int k = 0; k < 3; k++) post_recv(1, 7001 + k, 0, 64);
  struct ibv_qp_attr e = {};
  e.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(b.qp, &e, IBV_QP_STATE), 0);
  post_recv(1, 7004, 0, 64);  // posted in ERR: flushed by the NIC as well
  auto r = poll(1, 4);
  ASSERT_EQ(r.size(), 4u);
  for (int k = 0; k < 4; k++) {
    EXPECT_EQ(r[k].wr_id, 7001u + k);
    EXPECT_EQ(r[k].status, IBV_WC_WR_FLUSH_ERR);
  }
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(ibv_query_qp(b.qp, &qa, IBV_QP_STATE, &qi), 0);
  EXPECT_EQ(qa.qp_state, IBV_QPS_ERR);
  // Back to RESET and up again: the QP is usable with fresh rings.
  e.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(ibv_modify_qp(b.qp, &e, IBV_QP_STATE), 0);
  EXPECT_EQ(b.qp->state, IBV_QPS_RESET);
}

}  // namespace
