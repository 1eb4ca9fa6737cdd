// System tests of the extended post-send API (ibv_qp_ex: ibv_wr_start ... ibv_wr_complete) on the
// simulated NICs: SEND and SEND_WITH_IMM batches with SGE lists and inline data, from one NIC to
// itself (loopback) and to the other NIC; every byte and completion is checked. A failed or
// aborted batch sends nothing. send_ops_flags follow the NIC's OPS_CAPS register.
#include "system_test.hpp"

namespace {

using namespace sys;
namespace st = tmnic::hwif::stat;

constexpr uint8_t kSentinel = 0xEE;

class QpExBase : public SystemTest {
 protected:
  // An RC QP created with ibv_create_qp_ex and send_ops_flags `ops`, moved to INIT; q.qp is null
  // (errno set) when creation fails.
  Qp qp_ex(int dev, uint64_t ops, uint32_t send_sge = 2) {
    Qp q;
    q.dev = dev;
    q.scq = cq(dev, 255, false);
    q.rcq = q.scq;
    struct ibv_qp_init_attr_ex a = {};
    a.send_cq = q.scq.cq;
    a.recv_cq = q.rcq.cq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = 64;
    a.cap.max_recv_wr = 64;
    a.cap.max_send_sge = send_sge;
    a.cap.max_recv_sge = 1;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.pd = pd_[dev];
    a.send_ops_flags = ops;
    q.qp = ibv_create_qp_ex(ctx_[dev], &a);
    if (q.qp) adopt(q, true, IBV_ACCESS_LOCAL_WRITE);
    return q;
  }
};

class QpEx : public QpExBase, public ::testing::WithParamInterface<int> {
 protected:
  int rdev() const { return GetParam(); }  // receiver device: 0 loopback, 1 second NIC
};

using QpExCaps = QpExBase;

// One message of the batch: how it is posted, and what the receiver must see.
struct Msg {
  bool imm;
  bool inline_data;
  bool signaled;
  std::vector<uint32_t> parts;  // SGE / inline buffer lengths
};

// One batch of SENDs and SEND_WITH_IMMs mixing SGE lists, single SGEs, inline lists, single
// inline buffers, zero-length and multi-packet messages, signaled and unsignaled: one doorbell,
// every message arrives intact and in order with its immediate data, and the signaled sends
// complete with their wr_id.
TEST_P(QpEx, SendAndSendImmBatch) {
  Qp s = qp_ex(0, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
  ASSERT_NE(s.qp, nullptr) << "ibv_create_qp_ex: " << std::strerror(errno);
  Qp r = qp(rdev());
  ASSERT_NE(r.qp, nullptr);
  connect(s, r);
  struct ibv_qp_ex* x = ibv_qp_to_qp_ex(s.qp);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(ibv_qp_to_qp_ex(r.qp), nullptr);  // created without send_ops_flags

  const std::vector<Msg> msgs = {
      {false, false, true, {1000}},         {true, false, true, {7, 3000}},
      {false, true, false, {40, 56}},       {true, true, true, {17}},
      {false, false, false, {0}},           {true, false, true, {}},
      {false, false, true, {4096, 1}},      {true, true, false, {1}},
      {false, true, true, {96}},            {true, false, true, {2500}},
  };
  Buf sb = buf(0, 1 << 16);
  Buf rb = buf(rdev(), msgs.size() * 8192);
  std::memset(rb.p, kSentinel, rb.len);
  for (size_t m = 0; m < msgs.size(); m++)
    ASSERT_EQ(post_recv(r, 100 + m, {sge(rb, m * 8192, 8192)}), 0);

  const uint32_t pkts0 = counter(0, st::TX_PKTS) - counter(0, st::TX_ACKS);
  ibv_wr_start(x);
  size_t off = 0;
  std::vector<uint32_t> total(msgs.size());
  std::vector<std::pair<uint8_t*, uint32_t>> inline_src;
  for (size_t m = 0; m < msgs.size(); m++) {
    const Msg& g = msgs[m];
    x->wr_id = m;
    x->wr_flags = g.signaled ? IBV_SEND_SIGNALED : 0;
    if (g.imm)
      ibv_wr_send_imm(x, htonl(0xA0000000u + uint32_t(m)));
    else
      ibv_wr_send(x);
    std::vector<struct ibv_sge> sg;
    std::vector<struct ibv_data_buf> db;
    for (uint32_t len : g.parts) {
      for (uint32_t i = 0; i < len; i++) sb.p[off + i] = pattern(uint32_t(m), total[m] + i);
      sg.push_back(sge(sb, off, len));
      db.push_back({sb.p + off, len});
      if (g.inline_data) inline_src.emplace_back(sb.p + off, len);
      off += len + 13;  // gaps between the parts
      total[m] += len;
    }
    if (g.inline_data && db.size() == 1)
      ibv_wr_set_inline_data(x, db[0].addr, db[0].length);
    else if (g.inline_data)
      ibv_wr_set_inline_data_list(x, db.size(), db.data());
    else if (sg.size() == 1)
      ibv_wr_set_sge(x, sg[0].lkey, sg[0].addr, sg[0].length);
    else
      ibv_wr_set_sge_list(x, sg.size(), sg.data());
  }
  ASSERT_EQ(ibv_wr_complete(x), 0);
  // Inline payloads were copied at the setter: their sources may change at once.
  for (const auto& [p, len] : inline_src) std::memset(p, 0x5A, len);

  size_t nsig = 0;
  for (const Msg& g : msgs) nsig += g.signaled;
  auto sc = poll(s.scq, int(nsig));
  ASSERT_EQ(sc.size(), nsig) << counters();
  size_t k = 0;
  for (size_t m = 0; m < msgs.size(); m++) {
    if (!msgs[m].signaled) continue;
    EXPECT_EQ(sc[k].status, IBV_WC_SUCCESS) << wc_str(sc[k]);
    EXPECT_EQ(sc[k].opcode, IBV_WC_SEND);
    EXPECT_EQ(sc[k].wr_id, m);
    EXPECT_EQ(sc[k].qp_num, s.num());
    k++;
  }
  auto rc = poll(r.rcq, int(msgs.size()));
  ASSERT_EQ(rc.size(), msgs.size()) << counters();
  for (size_t m = 0; m < msgs.size(); m++) {
    SCOPED_TRACE("message " + std::to_string(m));
    EXPECT_EQ(rc[m].status, IBV_WC_SUCCESS) << wc_str(rc[m]);
    EXPECT_EQ(rc[m].opcode, IBV_WC_RECV);
    EXPECT_EQ(rc[m].wr_id, 100 + m);
    EXPECT_EQ(rc[m].byte_len, total[m]);
    EXPECT_EQ(rc[m].src_qp, s.num());
    if (msgs[m].imm) {
      EXPECT_EQ(rc[m].wc_flags, unsigned(IBV_WC_WITH_IMM));
      EXPECT_EQ(ntohl(rc[m].imm_data), 0xA0000000u + m);
    } else {
      EXPECT_EQ(rc[m].wc_flags, 0u);
    }
    const uint8_t* p = rb.p + m * 8192;
    for (uint32_t i = 0; i < total[m]; i++)
      if (p[i] != pattern(uint32_t(m), i)) {
        ADD_FAILURE() << "byte " << i << " differs";
        break;
      }
    EXPECT_EQ(p[total[m]], kSentinel);
  }
  // Requests on the wire: one per message up to 4096 B (PMTU 1024: the 4097-byte one takes 5,
  // the 3007- and 2500-byte ones 3).
  uint32_t expect_pkts = 0;
  for (uint32_t t : total) expect_pkts += t == 0 ? 1 : (t + 1023) / 1024;
  EXPECT_EQ(counter(0, st::TX_PKTS) - counter(0, st::TX_ACKS) - pkts0, expect_pkts);
}

// A batch whose first error is latched (too many SGEs) sends nothing, nor does an aborted batch:
// the receive stays posted, no completion appears on either side, and the next batch uses the
// same ring slots.
TEST_P(QpEx, FailedAndAbortedBatchesSendNothing) {
  Qp s = qp_ex(0, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, /*send_sge=*/1);
  ASSERT_NE(s.qp, nullptr) << "ibv_create_qp_ex: " << std::strerror(errno);
  Qp r = qp(rdev());
  ASSERT_NE(r.qp, nullptr);
  connect(s, r);
  struct ibv_qp_ex* x = ibv_qp_to_qp_ex(s.qp);
  ASSERT_NE(x, nullptr);
  Buf sb = buf(0, 4096);
  Buf rb = buf(rdev(), 4096);
  ASSERT_EQ(post_recv(r, 77, {sge(rb, 0, 4096)}), 0);
  for (uint32_t i = 0; i < 64; i++) sb.p[i] = pattern(5, i);
  struct ibv_sge two[2] = {sge(sb, 0, 32), sge(sb, 32, 32)};

  const uint32_t pkts0 = counter(0, st::TX_PKTS);
  ibv_wr_start(x);
  x->wr_id = 1;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(x);
  ibv_wr_set_sge(x, sb.lkey(), sb.addr(), 64);
  x->wr_id = 2;
  ibv_wr_send_imm(x, htonl(2));
  ibv_wr_set_sge_list(x, 2, two);  // max_send_sge is 1
  EXPECT_EQ(ibv_wr_complete(x), ENOMEM);

  ibv_wr_start(x);
  x->wr_id = 3;
  ibv_wr_send(x);
  ibv_wr_set_sge(x, sb.lkey(), sb.addr(), 64);
  ibv_wr_abort(x);

  EXPECT_TRUE(drain(s.scq).empty());
  EXPECT_TRUE(drain(r.rcq).empty());
  EXPECT_EQ(counter(0, st::TX_PKTS), pkts0) << "a failed or aborted batch reached the wire";

  ibv_wr_start(x);
  x->wr_id = 4;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send_imm(x, htonl(0x1234));
  ibv_wr_set_sge(x, sb.lkey(), sb.addr(), 64);
  ASSERT_EQ(ibv_wr_complete(x), 0);
  auto sc = poll(s.scq, 1);
  ASSERT_EQ(sc.size(), 1u) << counters();
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
  EXPECT_EQ(sc[0].wr_id, 4u);
  auto rc = poll(r.rcq, 1);
  ASSERT_EQ(rc.size(), 1u) << counters();
  EXPECT_EQ(rc[0].wr_id, 77u);
  EXPECT_EQ(rc[0].byte_len, 64u);
  EXPECT_EQ(ntohl(rc[0].imm_data), 0x1234u);
  EXPECT_EQ(std::memcmp(rb.p, sb.p, 64), 0);
  EXPECT_TRUE(drain(s.scq).empty());  // the failed batch's WQEs never complete later
}

// send_ops_flags: SEND and SEND_WITH_IMM always; RDMA WRITE/READ and the atomics exactly when the
// NIC's OPS_CAPS register has their bit, and so does the query's atomic_cap.
TEST_F(QpExCaps, SendOpsFlagsFollowOpsCaps) {
  namespace oc = tmnic::hwif::regf::ops_caps;
  const uint32_t caps = tmnic_sim_read_reg(0, tmnic::hwif::reg::OPS_CAPS);
  struct Case {
    uint64_t ops;
    bool ok;
  };
  const Case cases[] = {
      {IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM, true},
      {IBV_QP_EX_WITH_RDMA_WRITE, oc::RDMA_WRITE.get(caps) != 0},
      {IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, oc::RDMA_WRITE.get(caps) != 0},
      {IBV_QP_EX_WITH_RDMA_READ, oc::RDMA_READ.get(caps) != 0},
      {IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, oc::ATOMIC.get(caps) != 0},
      {IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, oc::ATOMIC.get(caps) != 0},
      {IBV_QP_EX_WITH_ATOMIC_WRITE, false},
      {IBV_QP_EX_WITH_BIND_MW, false},
  };
  for (const Case& c : cases) {
    errno = 0;
    Qp q = qp_ex(0, c.ops);
    EXPECT_EQ(q.qp != nullptr, c.ok) << "send_ops_flags " << c.ops;
    if (!c.ok) {
      EXPECT_EQ(errno, EOPNOTSUPP) << "send_ops_flags " << c.ops;
    }
  }
  struct ibv_device_attr a;
  ASSERT_EQ(ibv_query_device(ctx_[0], &a), 0);
  EXPECT_EQ(a.atomic_cap, oc::ATOMIC.get(caps) ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE);
  if (!oc::RDMA_READ.get(caps) && !oc::ATOMIC.get(caps)) {
    EXPECT_EQ(a.max_qp_rd_atom, 0);
    EXPECT_EQ(a.max_qp_init_rd_atom, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, QpEx, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::string("TwoNics") : std::string("Loopback");
                         });

}  // namespace
