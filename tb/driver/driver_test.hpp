// Shared fixture: one fake device opened through the provider, plus helpers that play the NIC's
// part (writing CQEs into a CQ ring) and read WQEs back out of rings.
#pragma once
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstring>
#include <memory>

#include "cq.hpp"
#include "fake_backend.hpp"
#include "provider.hpp"
#include "qp.hpp"
#include "srq.hpp"
#include "util.hpp"

namespace tmnic::test {

using fake::Command;

struct CqeFields {
  uint64_t wr_id = 0;
  uint32_t byte_len = 0;
  uint32_t imm = 0;  // raw bytes as stored
  uint32_t qp_num = 0;
  uint32_t src_qp = 0;
  uint32_t wc_flags = 0;
  uint32_t vendor_err = 0;
  uint64_t tm_tag = 0;
  uint32_t tm_app_ctx = 0;
  uint16_t wqe_idx = 0;
  uint16_t tm_handle = 0;
  uint16_t tm_hw_cnt = 0;
  uint8_t opcode = hwif::wc_op::SEND;
  uint8_t status = hwif::wc_status::SUCCESS;
};

// Writes CQE number `n` (free-running producer count) as the NIC would: fields, then the owner
// byte last with phase ((n >> log_size) & 1) ^ 1.
inline void nic_write_cqe(struct ibv_cq* ibcq, uint32_t n, const CqeFields& f) {
  tmnic_cq* cq = to_tcq(ibcq);
  uint8_t* c = cq->ring.data() + size_t(n & ((1u << cq->log_size) - 1)) * hwif::CQE_SIZE;
  namespace o = hwif::cqe;
  std::memset(c, 0, o::OWNER_OFF);
  st64(c + o::WR_ID_OFF, f.wr_id);
  st32(c + o::BYTE_LEN_OFF, f.byte_len);
  std::memcpy(c + o::IMM_OFF, &f.imm, 4);
  st32(c + o::QP_NUM_OFF, f.qp_num);
  st32(c + o::SRC_QP_OFF, f.src_qp);
  st32(c + o::WC_FLAGS_OFF, f.wc_flags);
  st32(c + o::VENDOR_ERR_OFF, f.vendor_err);
  st64(c + o::TM_TAG_OFF, f.tm_tag);
  st32(c + o::TM_APP_CTX_OFF, f.tm_app_ctx);
  st16(c + o::WQE_IDX_OFF, f.wqe_idx);
  st16(c + o::TM_HANDLE_OFF, f.tm_handle);
  st16(c + o::TM_HW_CNT_OFF, f.tm_hw_cnt);
  c[o::OPCODE_OFF] = f.opcode;
  c[o::STATUS_OFF] = f.status;
  __atomic_store_n(c + o::OWNER_OFF, uint8_t(((n >> cq->log_size) & 1) ^ 1), __ATOMIC_RELEASE);
}

class DriverTest : public ::testing::Test {
 protected:
  void SetUp() override { open(fake::Config()); }
  void TearDown() override {
    if (ctx) {
      EXPECT_EQ(tmnic::free_context(ctx), 0);
    }
  }
  void open(const fake::Config& cfg) {
    be = std::make_shared<fake::FakeBackend>(cfg);
    std::memset(&ibdev, 0, sizeof(ibdev));
    ctx = tmnic::alloc_context(&ibdev, be);
    ASSERT_NE(ctx, nullptr);
  }

  struct ibv_pd* make_pd() {
    struct ibv_pd* pd = tmnic::alloc_pd(ctx);
    EXPECT_NE(pd, nullptr);
    return pd;
  }
  struct ibv_cq* make_cq(int cqe = 15) {
    struct ibv_cq* cq = tmnic::create_cq(ctx, cqe, nullptr, nullptr, 0);
    EXPECT_NE(cq, nullptr);
    return cq;
  }
  struct ibv_qp* make_qp(struct ibv_pd* pd, struct ibv_cq* cq, uint32_t send_wr = 7,
                         uint32_t recv_wr = 7, uint32_t sge = 2, struct ibv_srq* srq = nullptr) {
    struct ibv_qp_init_attr a = {};
    a.send_cq = cq;
    a.recv_cq = cq;
    a.srq = srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = send_wr;
    a.cap.max_recv_wr = recv_wr;
    a.cap.max_send_sge = sge;
    a.cap.max_recv_sge = sge;
    struct ibv_qp* qp = tmnic::create_qp(pd, &a);
    EXPECT_NE(qp, nullptr);
    return qp;
  }
  // The attributes rc_pingpong/pyverbs use for each transition.
  static struct ibv_qp_attr init_attr() {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = 1;
    a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    return a;
  }
  static constexpr int kInitMask =
      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  static struct ibv_qp_attr rtr_attr(uint32_t dest_ip, uint32_t dest_qpn, uint32_t rq_psn) {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = rq_psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = tmnic::ipv4_to_gid(dest_ip);
    a.ah_attr.grh.sgid_index = 0;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    return a;
  }
  static constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                  IBV_QP_MIN_RNR_TIMER;
  static struct ibv_qp_attr rts_attr(uint32_t sq_psn) {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = sq_psn;
    a.max_rd_atomic = 1;
    return a;
  }
  static constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;

  void to_rts(struct ibv_qp* qp) {
    struct ibv_qp_attr a = init_attr();
    ASSERT_EQ(tmnic::modify_qp(qp, &a, kInitMask), 0);
    a = rtr_attr(0x0A000002, 5, 100);
    ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtrMask), 0);
    a = rts_attr(200);
    ASSERT_EQ(tmnic::modify_qp(qp, &a, kRtsMask), 0);
  }

  std::shared_ptr<fake::FakeBackend> be;
  struct ibv_device ibdev;
  struct ibv_context* ctx = nullptr;
};

}  // namespace tmnic::test
