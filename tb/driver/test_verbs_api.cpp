// The exported libibverbs API of the drop-in library, as an application sees it (linked against
// our libibverbs.so.1 with the fake backend's world: one device tmnic0, 10.0.0.1).
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <fcntl.h>

#include <cerrno>
#include <cstring>

extern "C" int ibv_query_gid_type(struct ibv_context*, uint8_t, unsigned int, int*);

namespace {

class VerbsApi : public ::testing::Test {
 protected:
  void SetUp() override {
    list = ibv_get_device_list(&n);
    ASSERT_NE(list, nullptr);
    ASSERT_GE(n, 1);
    ctx = ibv_open_device(list[0]);
    ASSERT_NE(ctx, nullptr);
  }
  void TearDown() override {
    EXPECT_EQ(ibv_close_device(ctx), 0);
    ibv_free_device_list(list);
  }
  struct ibv_device** list = nullptr;
  int n = 0;
  struct ibv_context* ctx = nullptr;
};

TEST_F(VerbsApi, DeviceListAndNames) {
  EXPECT_STREQ(ibv_get_device_name(list[0]), "tmnic0");
  EXPECT_EQ(list[n], nullptr);
  EXPECT_EQ(list[0]->node_type, IBV_NODE_CA);
  EXPECT_EQ(list[0]->transport_type, IBV_TRANSPORT_IB);
  EXPECT_STREQ(list[0]->ibdev_path, "/sys/class/infiniband/tmnic0");
  EXPECT_EQ(ibv_get_device_index(list[0]), 0);
  EXPECT_EQ(be64toh(ibv_get_device_guid(list[0])), 0x000000FFFE000001ull);
  EXPECT_EQ(ctx->device, list[0]);
}

TEST_F(VerbsApi, InlineWrappersReachTheProvider) {
  struct ibv_port_attr p;
  ASSERT_EQ(ibv_query_port(ctx, 1, &p), 0);
  EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(ibv_query_port(ctx, 0, &p), EINVAL);
  struct ibv_device_attr_ex ax;
  ASSERT_EQ(ibv_query_device_ex(ctx, nullptr, &ax), 0);
  EXPECT_GT(ax.orig_attr.max_qp, 0);
  union ibv_gid gid;
  ASSERT_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
  EXPECT_EQ(gid.raw[10], 0xFF);
  EXPECT_EQ(gid.raw[15], 1);
  errno = 0;
  EXPECT_EQ(ibv_query_gid(ctx, 1, 1, &gid), -1);
  EXPECT_EQ(errno, EINVAL);
  struct ibv_gid_entry e[2];
  EXPECT_EQ(ibv_query_gid_table(ctx, e, 2, 0), 1);
  EXPECT_EQ(ibv_query_gid_ex(ctx, 1, 0, e, 0), 0);
  int type = -1;
  EXPECT_EQ(ibv_query_gid_type(ctx, 1, 0, &type), 0);
  EXPECT_EQ(type, 1);  // IBV_GID_TYPE_SYSFS_ROCE_V2
  __be16 pkey;
  EXPECT_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
  EXPECT_EQ(ibv_get_pkey_index(ctx, 1, pkey), 0);
  struct ibv_td_init_attr td = {};
  errno = 0;
  EXPECT_EQ(ibv_alloc_td(ctx, &td), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(ibv_qp_to_qp_ex(nullptr), nullptr);
}

TEST_F(VerbsApi, ObjectsThroughTheExportedApi) {
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  ASSERT_NE(pd, nullptr);
  static char buf[4096];
  struct ibv_mr* mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->addr, buf);
  struct ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  ASSERT_NE(ch, nullptr);
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, ch, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), EBUSY);
  struct ibv_srq_init_attr sa = {};
  sa.attr.max_wr = 16;
  sa.attr.max_sge = 1;
  struct ibv_srq* srq = ibv_create_srq(pd, &sa);
  ASSERT_NE(srq, nullptr);
  struct ibv_qp_init_attr qa = {};
  qa.send_cq = cq;
  qa.recv_cq = cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = 1;
  qa.cap.max_recv_wr = 8;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  struct ibv_qp* qp = ibv_create_qp(pd, &qa);
  ASSERT_NE(qp, nullptr);
  struct ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  ASSERT_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                      IBV_QP_ACCESS_FLAGS),
            0);
  EXPECT_EQ(qp->state, IBV_QPS_INIT);
  struct ibv_sge sge = {uintptr_t(buf), 64, mr->lkey};
  struct ibv_recv_wr rwr = {};
  rwr.sg_list = &sge;
  rwr.num_sge = 1;
  struct ibv_recv_wr* rbad;
  EXPECT_EQ(ibv_post_recv(qp, &rwr, &rbad), 0);
  EXPECT_EQ(ibv_post_srq_recv(srq, &rwr, &rbad), 0);
  struct ibv_send_wr swr = {};
  struct ibv_send_wr* sbad = nullptr;
  EXPECT_EQ(ibv_post_send(qp, &swr, &sbad), EINVAL);  // INIT
  EXPECT_EQ(sbad, &swr);
  struct ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0);
  EXPECT_EQ(ibv_req_notify_cq(cq, 0), 0);
  // The channel fd is always readable; a non-blocking get_cq_event reports "nothing yet".
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, O_NONBLOCK), 0);
  struct ibv_cq* ev_cq;
  void* ev_ctx;
  errno = 0;
  EXPECT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(ibv_create_ah(pd, nullptr), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);

  EXPECT_EQ(ibv_destroy_qp(qp), 0);
  EXPECT_EQ(ibv_destroy_srq(srq), 0);
  EXPECT_EQ(ibv_destroy_cq(cq), 0);
  EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
  EXPECT_EQ(ibv_dereg_mr(mr), 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

// ibv_init_ah_from_wc needs no UD (it parses a GRH): libibverbs' -1 + errno convention; the fake
// world's device (ABI 1.3) has no UD, so no AH comes of it.
TEST_F(VerbsApi, InitAhFromWcAndCreateAhWithoutUd) {
  struct ibv_pd* pd = ibv_alloc_pd(ctx);
  ASSERT_NE(pd, nullptr);
  uint8_t grh[40] = {};
  const uint8_t ip[20] = {0x45, 0x00, 0x00, 0x3c, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0,
                          10,   0,    0,    9,    10, 0, 0, 1};  // 10.0.0.9 -> 10.0.0.1, TTL 64
  std::memcpy(grh + 20, ip, sizeof(ip));
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(grh[20 + i]) << 8 | grh[21 + i];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  grh[30] = uint8_t(~sum >> 8);
  grh[31] = uint8_t(~sum);
  struct ibv_wc wc = {};
  wc.wc_flags = IBV_WC_GRH;
  struct ibv_ah_attr a;
  ASSERT_EQ(ibv_init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(grh), &a), 0);
  EXPECT_EQ(a.is_global, 1);
  EXPECT_EQ(a.grh.dgid.raw[15], 9);
  EXPECT_EQ(a.grh.hop_limit, 64);
  errno = 0;
  EXPECT_EQ(ibv_init_ah_from_wc(ctx, 2, &wc, reinterpret_cast<struct ibv_grh*>(grh), &a), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(ibv_create_ah_from_wc(pd, &wc, reinterpret_cast<struct ibv_grh*>(grh), 1), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  struct ibv_device_attr da;
  ASSERT_EQ(ibv_query_device(ctx, &da), 0);
  EXPECT_EQ(da.max_ah, 0);
  EXPECT_EQ(ibv_dealloc_pd(pd), 0);
}

TEST(VerbsStrings, MatchRdmaCore) {
  EXPECT_STREQ(ibv_wc_status_str(IBV_WC_WR_FLUSH_ERR), "Work Request Flushed Error");
  EXPECT_STREQ(ibv_wc_status_str(static_cast<enum ibv_wc_status>(99)), "unknown");
  EXPECT_STREQ(ibv_port_state_str(IBV_PORT_ACTIVE), "active");
  EXPECT_STREQ(ibv_node_type_str(IBV_NODE_CA), "InfiniBand channel adapter");
  EXPECT_STREQ(ibv_event_type_str(IBV_EVENT_SRQ_LIMIT_REACHED), "SRQ limit reached");
  EXPECT_EQ(ibv_rate_to_mbps(IBV_RATE_100_GBPS), 103125);
  EXPECT_EQ(mult_to_ibv_rate(4), IBV_RATE_10_GBPS);
}

}  // namespace
