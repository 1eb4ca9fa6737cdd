// Device open checks, the command interface, device/port/GID queries, MAC resolution.
#include <fcntl.h>
#include <unistd.h>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

TEST(DeviceOpen, RefusesWrongId) {
  fake::Config cfg;
  cfg.id = 0x12345678;
  auto be = std::make_shared<fake::FakeBackend>(cfg);
  struct ibv_device dev = {};
  testing::internal::CaptureStderr();
  errno = 0;
  EXPECT_EQ(tmnic::alloc_context(&dev, be), nullptr);
  EXPECT_EQ(errno, ENODEV);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("0x12345678 is not a tmnic"), std::string::npos) << err;
  EXPECT_TRUE(be->commands.empty());  // nothing was touched
}

TEST(DeviceOpen, RefusesOtherAbiMajor) {
  fake::Config cfg;
  cfg.abi = (hwif::ABI_MAJOR + 1) << 16;
  auto be = std::make_shared<fake::FakeBackend>(cfg);
  struct ibv_device dev = {};
  testing::internal::CaptureStderr();
  errno = 0;
  EXPECT_EQ(tmnic::alloc_context(&dev, be), nullptr);
  EXPECT_EQ(errno, EPROTONOSUPPORT);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("ABI 2.0 is incompatible"), std::string::npos) << err;
}

TEST(DeviceOpen, AcceptsNewerAbiMinor) {
  fake::Config cfg;
  cfg.abi = hwif::ABI_MAJOR << 16 | (hwif::ABI_MINOR + 3);
  auto be = std::make_shared<fake::FakeBackend>(cfg);
  struct ibv_device dev = {};
  struct ibv_context* ctx = tmnic::alloc_context(&dev, be);
  ASSERT_NE(ctx, nullptr);
  EXPECT_EQ(tmnic::free_context(ctx), 0);
}

TEST(DeviceOpen, ContextsOfOneDeviceShareAllocators) {
  auto be = std::make_shared<fake::FakeBackend>();
  struct ibv_device dev = {};
  struct ibv_context* a = tmnic::alloc_context(&dev, be);
  struct ibv_context* b = tmnic::alloc_context(&dev, be);
  ASSERT_TRUE(a && b);
  struct ibv_pd* pa = tmnic::alloc_pd(a);
  struct ibv_pd* pb = tmnic::alloc_pd(b);
  EXPECT_NE(pa->handle, pb->handle);
  EXPECT_EQ(tmnic::dealloc_pd(pa), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pb), 0);
  tmnic::free_context(a);
  tmnic::free_context(b);
}

TEST_F(DriverTest, ContextLayout) {
  EXPECT_EQ(ctx->abi_compat, reinterpret_cast<void*>(UINTPTR_MAX));
  struct verbs_context* v = verbs_get_ctx(ctx);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->sz, sizeof(struct verbs_context));
  EXPECT_NE(ctx->ops.poll_cq, nullptr);
  EXPECT_NE(ctx->ops.post_send, nullptr);
  EXPECT_NE(ctx->ops.post_recv, nullptr);
  EXPECT_NE(ctx->ops.post_srq_recv, nullptr);
  EXPECT_NE(ctx->ops.req_notify_cq, nullptr);
  EXPECT_NE(verbs_get_ctx_op(ctx, query_port), nullptr);
  EXPECT_NE(verbs_get_ctx_op(ctx, create_qp_ex), nullptr);
  EXPECT_GE(ctx->async_fd, 0);
  // cmd_fd is an open descriptor, as on every real device (programs dup it), that carries nothing.
  ASSERT_GE(ctx->cmd_fd, 0);
  EXPECT_NE(fcntl(ctx->cmd_fd, F_GETFD), -1);
  EXPECT_EQ(write(ctx->cmd_fd, "x", 1), 1);
  EXPECT_EQ(ctx->num_comp_vectors, 1);
  // Unsupported extended verbs fail cleanly (every slot is set, NULL-checked or not).
  struct ibv_td_init_attr td = {};
  errno = 0;
  EXPECT_EQ(v->alloc_td(ctx, &td), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(v->close_xrcd(nullptr), EOPNOTSUPP);
  // Tag-list operations exist, and refuse an SRQ that is not a TM-SRQ (as mlx5).
  struct ibv_pd* pd = make_pd();
  struct ibv_srq_init_attr sa = {};
  sa.attr.max_wr = 1;
  struct ibv_srq* srq = tmnic::create_srq(pd, &sa);
  ASSERT_NE(srq, nullptr);
  struct ibv_ops_wr op = {};
  struct ibv_ops_wr* bad = nullptr;
  EXPECT_EQ(verbs_get_ctx(ctx)->post_srq_ops(srq, &op, &bad), EINVAL);
  EXPECT_EQ(bad, &op);
  EXPECT_EQ(tmnic::destroy_srq(srq), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
}

TEST_F(DriverTest, CommandWaitsWhileBusyAndReportsError) {
  be->busy_polls = 3;
  int before = be->progress_calls;
  struct ibv_pd* pd = make_pd();
  char buf[64];
  struct ibv_mr* mr = tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf), 0);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(be->progress_calls - before, 3);  // progress() once per busy poll
  be->busy_polls = 0;
  be->fail_opcode = hwif::cmd::SET_MR;
  errno = 0;
  EXPECT_EQ(tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf), 0), nullptr);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(be->mappings.size(), 1u);  // the failed registration was unmapped again
  be->fail_opcode = 0xFFFFFFFF;
  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
}

TEST_F(DriverTest, QueryDeviceReportsHardwareLimits) {
  struct ibv_device_attr a;
  ASSERT_EQ(tmnic::query_device(ctx, &a), 0);
  const fake::Config& c = be->config();
  EXPECT_EQ(a.max_qp, int(c.num_qp - 2));
  EXPECT_EQ(a.max_cq, int(c.num_cq));
  EXPECT_EQ(a.max_srq, int(c.num_srq));
  EXPECT_EQ(a.max_mr, int(c.num_mr));
  EXPECT_EQ(a.max_qp_wr, (1 << 15) - 1);
  EXPECT_EQ(a.max_srq_wr, (1 << 15) - 1);
  EXPECT_EQ(a.max_cqe, (1 << 15) - 1);
  EXPECT_EQ(a.max_sge, int(c.max_sge));
  EXPECT_EQ(a.max_qp_rd_atom, 0);
  EXPECT_EQ(a.atomic_cap, IBV_ATOMIC_NONE);
  EXPECT_EQ(a.page_size_cap, 4096u);
  EXPECT_EQ(a.max_mr_size, uint64_t(1) << 32);
  EXPECT_EQ(a.phys_port_cnt, 1);
  EXPECT_EQ(a.max_pkeys, 1);
  EXPECT_NE(a.vendor_id, 0u);
  EXPECT_EQ(std::string(a.fw_ver),   // the device's ABI version
            "tmnic " + std::to_string(be->config().abi >> 16) + "." + std::to_string(be->config().abi & 0xFFFF));
  // EUI-64 of 02:00:00:00:00:01 -> 00:00:00:ff:fe:00:00:01
  EXPECT_EQ(be64toh(a.node_guid), 0x000000FFFE000001ull);
  EXPECT_EQ(a.sys_image_guid, a.node_guid);

  struct ibv_device_attr_ex ax;
  ASSERT_EQ(verbs_get_ctx(ctx)->query_device_ex(ctx, nullptr, &ax, sizeof(ax)), 0);
  EXPECT_EQ(ax.orig_attr.max_qp, a.max_qp);
  EXPECT_EQ(ax.phys_port_cnt_ex, 1u);
  EXPECT_EQ(ax.tm_caps.max_num_tags, 0u);  // the default fake device has no tag matching
}

TEST_F(DriverTest, QueryPortAndGid) {
  struct ibv_port_attr p;
  ASSERT_EQ(tmnic::query_port(ctx, 1, &p, sizeof(p)), 0);
  EXPECT_EQ(p.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(p.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(p.active_mtu, IBV_MTU_4096);
  EXPECT_EQ(p.gid_tbl_len, 1);
  EXPECT_EQ(p.pkey_tbl_len, 1);
  EXPECT_EQ(p.lid, 0);
  EXPECT_EQ(tmnic::query_port(ctx, 2, &p, sizeof(p)), EINVAL);

  union ibv_gid gid;
  ASSERT_EQ(tmnic::query_gid(ctx, 1, 0, &gid), 0);
  const uint8_t want[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1};
  EXPECT_EQ(std::memcmp(gid.raw, want, 16), 0);
  EXPECT_EQ(tmnic::query_gid(ctx, 1, 1, &gid), EINVAL);
  struct ibv_gid_entry e;
  ASSERT_EQ(tmnic::query_gid_ex(ctx, 1, 0, &e, 0, sizeof(e)), 0);
  EXPECT_EQ(e.gid_type, uint32_t(IBV_GID_TYPE_ROCE_V2));
  struct ibv_gid_entry tbl[4];
  EXPECT_EQ(tmnic::query_gid_table(ctx, tbl, 4, 0, sizeof(tbl[0])), 1);
  EXPECT_EQ(tmnic::query_gid_table(ctx, tbl, 0, 0, sizeof(tbl[0])), -EINVAL);
  __be16 pkey;
  ASSERT_EQ(tmnic::query_pkey(ctx, 1, 0, &pkey), 0);
  EXPECT_EQ(pkey, 0xFFFF);
}

TEST(Neighbour, ResolveMacAsksTheBackendElseFallsBack) {
  fake::FakeBackend be;
  be.neighbours[0xC0A80107] = 0x02AABBCCDDEEull;  // 192.168.1.7
  EXPECT_EQ(tmnic::resolve_mac(be, 0xC0A80107), 0x02AABBCCDDEEull);
  EXPECT_EQ(tmnic::resolve_mac(be, 0x0A0B0C0D), 0x02000A0B0C0Dull);
}

}  // namespace
}  // namespace tmnic::test
