// UD queue pairs and address handles (hwif 1.5): creation caps and gating by OPS_CAPS.UD, the
// modify_qp attribute table of UD, SET_QP TYPE/QKEY/PATH_MTU, UD send WQE bytes (UD_QKEY, the
// Q_Key high-bit rule, the UD_AV at WQE_UD_AV_OFF) through ibv_post_send and ibv_qp_ex,
// ibv_create_ah checks, ibv_init_ah_from_wc on a crafted GRH, and UD receive completions.
#include <array>
#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace q = hwif::cmd::set_qp;
namespace w = hwif::wqe;

// A NIC of ABI 1.5 with the UD bit (and RDMA WRITE and atomics, to show UD refuses them anyway).
fake::Config ud_config() {
  fake::Config c;
  c.abi = hwif::ABI_MAJOR << 16 | 5;
  c.ops_caps = hwif::regf::ops_caps::UD.put(1) | hwif::regf::ops_caps::RDMA_WRITE.put(1) |
               hwif::regf::ops_caps::ATOMIC.put(1);
  c.tm_max_tags = 64;  // for the TM-SRQ refusal
  return c;
}

constexpr uint32_t kPeerIp = 0x0A000002;           // 10.0.0.2
constexpr uint8_t kTclass = 0xB8, kHopLimit = 9;     // the test AH's GRH traffic class and hop limit
constexpr uint64_t kPeerMac = 0x0A0B0C0D0E0Full;  // 0a:0b:0c:0d:0e:0f

class UdTest : public DriverTest {
 protected:
  void SetUp() override {
    open(ud_config());
    be->neighbours[kPeerIp] = kPeerMac;
    pd = make_pd();
    cq = make_cq(63);
  }
  void TearDown() override {
    for (struct ibv_ah* ah : ahs) EXPECT_EQ(tmnic::destroy_ah(ah), 0);
    for (struct ibv_qp* qp : qps) EXPECT_EQ(tmnic::destroy_qp(qp), 0);
    EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    DriverTest::TearDown();
  }
  // Reopens the test's device with another configuration (no objects may exist).
  void reopen(const fake::Config& c) {
    EXPECT_EQ(tmnic::destroy_cq(cq), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    EXPECT_EQ(tmnic::free_context(ctx), 0);
    ctx = nullptr;
    open(c);
    pd = make_pd();
    cq = make_cq(63);
  }
  struct ibv_qp_init_attr_ex ud_attr(uint32_t send_sge = 2, uint32_t max_inline = 0) {
    struct ibv_qp_init_attr_ex a = {};
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    a.send_cq = cq;
    a.recv_cq = cq;
    a.qp_type = IBV_QPT_UD;
    a.cap.max_send_wr = 7;
    a.cap.max_recv_wr = 7;
    a.cap.max_send_sge = send_sge;
    a.cap.max_recv_sge = 2;
    a.cap.max_inline_data = max_inline;
    return a;
  }
  struct ibv_qp* make_ud_qp(uint32_t send_sge = 2, uint64_t send_ops = 0) {
    struct ibv_qp_init_attr_ex a = ud_attr(send_sge);
    if (send_ops) {
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = send_ops;
    }
    struct ibv_qp* qp = tmnic::create_qp_ex(ctx, &a);
    EXPECT_NE(qp, nullptr);
    if (qp) qps.push_back(qp);
    return qp;
  }
  static constexpr int kUdInitMask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  void ud_to_rts(struct ibv_qp* qp, uint32_t qkey, uint32_t sq_psn = 0) {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_INIT;
    a.port_num = 1;
    a.qkey = qkey;
    ASSERT_EQ(tmnic::modify_qp(qp, &a, kUdInitMask), 0);
    a = {};
    a.qp_state = IBV_QPS_RTR;
    ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
    a = {};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = sq_psn;
    ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }
  static struct ibv_ah_attr ah_attr(uint32_t ip) {
    struct ibv_ah_attr a = {};
    a.is_global = 1;
    a.grh.dgid = tmnic::ipv4_to_gid(ip);
    a.grh.sgid_index = 0;
    a.grh.hop_limit = kHopLimit;
    a.grh.traffic_class = kTclass;
    a.port_num = 1;
    return a;
  }
  struct ibv_ah* make_ah(uint32_t ip = kPeerIp) {
    struct ibv_ah_attr a = ah_attr(ip);
    struct ibv_ah* ah = tmnic::create_ah(pd, &a);
    EXPECT_NE(ah, nullptr);
    if (ah) ahs.push_back(ah);
    return ah;
  }
  Command last_set_qp() const { return be->commands_with(hwif::cmd::SET_QP).back(); }
  static hwif::UdAv av_at(const uint8_t* slot) {
    hwif::UdAv av;
    std::memcpy(&av, slot + hwif::WQE_UD_AV_OFF, sizeof(av));
    return av;
  }
  static void expect_peer_av(const uint8_t* slot, uint32_t dqpn) {
    hwif::UdAv av = av_at(slot);
    EXPECT_EQ(ld32(slot + hwif::WQE_UD_AV_OFF + hwif::ud_av::DEST_IP_OFF), kPeerIp);
    EXPECT_EQ(av.dest_ip, kPeerIp);
    EXPECT_EQ(av.dqpn, dqpn);
    const uint8_t mac[6] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};
    EXPECT_EQ(std::memcmp(av.dmac, mac, 6), 0);
    EXPECT_EQ(av.tclass, kTclass);      // the AH's GRH traffic class and hop limit: IPv4 TOS and TTL
    EXPECT_EQ(av.hop_limit, kHopLimit);
  }
  uint32_t sq_db(struct ibv_qp* qp) const { return hwif::reg::DB_SQ0 + 4 * qp->qp_num; }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq* cq = nullptr;
  std::vector<struct ibv_qp*> qps;
  std::vector<struct ibv_ah*> ahs;
};

// ---- creation ------------------------------------------------------------------------------

TEST_F(UdTest, CreateReportsUdCapsAndProgramsTypeAndMtu) {
  struct ibv_qp_init_attr_ex a = ud_attr(hwif::UD_MAX_SGE, hwif::UD_MAX_INLINE);
  struct ibv_qp* qp = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(qp, nullptr);
  qps.push_back(qp);
  EXPECT_EQ(qp->qp_type, IBV_QPT_UD);
  EXPECT_EQ(a.cap.max_send_sge, hwif::UD_MAX_SGE);
  EXPECT_EQ(a.cap.max_inline_data, hwif::UD_MAX_INLINE);  // not WQE_MAX_INLINE: the UD_AV is there
  EXPECT_EQ(a.cap.max_send_wr, 7u);
  EXPECT_EQ(a.cap.max_recv_sge, 2u);
  Command c = last_set_qp();
  EXPECT_EQ(c.index, qp->qp_num);
  EXPECT_EQ(c.args[q::TYPE], hwif::cmd::QP_TYPE_UD);
  EXPECT_EQ(c.args[q::PATH_MTU], uint32_t(IBV_MTU_4096));  // the port's active MTU
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RESET));
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
  EXPECT_EQ(c.args[q::DEST_QPN] | c.args[q::DEST_IP] | c.args[q::DMAC_LO] | c.args[q::DMAC_HI] |
                c.args[q::ACCESS] | c.args[q::QKEY],
            0u);
  // An RC QP on the same device says RC, with no Q_Key.
  struct ibv_qp* rc = make_qp(pd, cq);
  ASSERT_NE(rc, nullptr);
  qps.push_back(rc);
  EXPECT_EQ(last_set_qp().args[q::TYPE], hwif::cmd::QP_TYPE_RC);
  EXPECT_EQ(last_set_qp().args[q::QKEY], 0u);
  EXPECT_EQ(last_set_qp().args[q::PATH_MTU], 0u);  // RC: set at RTR

  struct ibv_device_attr da;
  ASSERT_EQ(tmnic::query_device(ctx, &da), 0);
  EXPECT_EQ(da.max_ah, int(Device::kMaxAh));
}

TEST_F(UdTest, CreateRejectsUdLimitsAndTmSrq) {
  struct ibv_qp_init_attr_ex a = ud_attr(hwif::UD_MAX_SGE + 1);  // 6: the RC limit, not UD's
  errno = 0;
  EXPECT_EQ(tmnic::create_qp_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a = ud_attr(1, hwif::UD_MAX_INLINE + 1);
  errno = 0;
  EXPECT_EQ(tmnic::create_qp_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  // send_ops_flags: datagrams only, even though this NIC executes RDMA WRITE and atomics on RC.
  a = ud_attr();
  a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  for (uint64_t f : {uint64_t(IBV_QP_EX_WITH_RDMA_WRITE), uint64_t(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP),
                     uint64_t(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)}) {
    a.send_ops_flags = IBV_QP_EX_WITH_SEND | f;
    errno = 0;
    EXPECT_EQ(tmnic::create_qp_ex(ctx, &a), nullptr) << f;
    EXPECT_EQ(errno, EOPNOTSUPP) << f;
  }
  a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
  struct ibv_qp* ok = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(ok, nullptr);
  qps.push_back(ok);

  // A basic SRQ is fine, a tag-matching one is not (TM is RC-only).
  struct ibv_srq_init_attr sa = {};
  sa.attr.max_wr = 7;
  sa.attr.max_sge = 1;
  struct ibv_srq* srq = tmnic::create_srq(pd, &sa);
  ASSERT_NE(srq, nullptr);
  a = ud_attr();
  a.srq = srq;
  struct ibv_qp* on_srq = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(on_srq, nullptr);
  EXPECT_EQ(a.cap.max_recv_wr, 0u);
  EXPECT_EQ(last_set_qp().args[q::SRQ], to_tsrq(srq)->srqn);

  struct ibv_cq_init_attr_ex ca = {};
  ca.cqe = 15;
  ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO;
  struct ibv_cq_ex* xcq = tmnic::create_cq_ex(ctx, &ca);
  ASSERT_NE(xcq, nullptr);
  struct ibv_srq_init_attr_ex ta = {};
  ta.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
                 IBV_SRQ_INIT_ATTR_TM;
  ta.srq_type = IBV_SRQT_TM;
  ta.pd = pd;
  ta.cq = ibv_cq_ex_to_cq(xcq);
  ta.attr.max_wr = 7;
  ta.attr.max_sge = 1;
  ta.tm_cap.max_num_tags = 4;
  ta.tm_cap.max_ops = 4;
  struct ibv_srq* tm = tmnic::create_srq_ex(ctx, &ta);
  ASSERT_NE(tm, nullptr);
  a = ud_attr();
  a.srq = tm;
  size_t cmds = be->commands.size();
  errno = 0;
  EXPECT_EQ(tmnic::create_qp_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(be->commands.size(), cmds);  // refused before anything reached the NIC
  a.qp_type = IBV_QPT_RC;  // the same SRQ serves an RC QP
  struct ibv_qp* rc = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(rc, nullptr);

  EXPECT_EQ(tmnic::destroy_qp(rc), 0);
  EXPECT_EQ(tmnic::destroy_qp(on_srq), 0);
  EXPECT_EQ(tmnic::destroy_srq(tm), 0);
  EXPECT_EQ(tmnic::destroy_srq(srq), 0);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(xcq)), 0);
}

TEST_F(UdTest, UdNeedsTheOpsCapsBitAndAbi15) {
  for (int variant = 0; variant < 2; variant++) {
    fake::Config c = ud_config();
    if (variant == 0)
      c.ops_caps = hwif::regf::ops_caps::RDMA_WRITE.put(1);  // ABI 1.5, no UD bit
    else
      c.abi = hwif::ABI_MAJOR << 16 | 4;  // the UD bit on a 1.4 device means nothing
    reopen(c);
    struct ibv_qp_init_attr_ex a = ud_attr();
    errno = 0;
    EXPECT_EQ(tmnic::create_qp_ex(ctx, &a), nullptr) << variant;
    EXPECT_EQ(errno, EOPNOTSUPP) << variant;
    struct ibv_ah_attr aa = ah_attr(kPeerIp);
    errno = 0;
    EXPECT_EQ(tmnic::create_ah(pd, &aa), nullptr);
    EXPECT_EQ(errno, EOPNOTSUPP);
    struct ibv_device_attr da;
    ASSERT_EQ(tmnic::query_device(ctx, &da), 0);
    EXPECT_EQ(da.max_ah, 0);
  }
}

// ---- modify_qp ----------------------------------------------------------------------------

TEST_F(UdTest, ModifyAttributeTablePerTransition) {
  struct ibv_qp* qp = make_ud_qp();
  ASSERT_NE(qp, nullptr);
  const size_t n0 = be->commands_with(hwif::cmd::SET_QP).size();
  struct ibv_qp_attr a = {};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qkey = 0x11112222;
  // RESET->INIT: QKEY is required; ACCESS_FLAGS (RC's) is not allowed.
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, kUdInitMask | IBV_QP_ACCESS_FLAGS), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY | IBV_QP_PORT), EINVAL);
  EXPECT_EQ(be->commands_with(hwif::cmd::SET_QP).size(), n0);  // nothing sent
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, kUdInitMask), 0);
  Command c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_INIT));
  EXPECT_EQ(c.args[q::QKEY], 0x11112222u);
  EXPECT_EQ(c.args[q::TYPE], hwif::cmd::QP_TYPE_UD);
  EXPECT_EQ(c.args[q::PATH_MTU], uint32_t(IBV_MTU_4096));
  EXPECT_EQ(c.args[q::INIT], 0u);

  // INIT->RTR: nothing but the state is needed; RC's path attributes are EINVAL.
  struct ibv_qp_attr r = rtr_attr(kPeerIp, 5, 100);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_AV), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_PATH_MTU), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_DEST_QPN), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_RQ_PSN), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, IBV_QP_STATE | IBV_QP_MAX_DEST_RD_ATOMIC), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &r, kRtrMask), EINVAL);  // the RC mask as a whole
  EXPECT_EQ(qp->state, IBV_QPS_INIT);
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.qkey = 0x33334444;  // optional here
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_QKEY), 0);
  c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RTR));
  EXPECT_EQ(c.args[q::QKEY], 0x33334444u);
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_RQ);
  EXPECT_EQ(c.args[q::DEST_QPN] | c.args[q::DEST_IP] | c.args[q::RQ_PSN], 0u);

  // RTR->RTS: SQ_PSN is required; RC's retry attributes are EINVAL.
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0x1ABCDEF;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
  struct ibv_qp_attr t = rts_attr(7);
  EXPECT_EQ(tmnic::modify_qp(qp, &t, kRtsMask), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT), EINVAL);
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  c = last_set_qp();
  EXPECT_EQ(c.args[q::STATE], uint32_t(IBV_QPS_RTS));
  EXPECT_EQ(c.args[q::SQ_PSN], 0xABCDEFu);
  EXPECT_EQ(c.args[q::INIT], hwif::cmd::QP_INIT_SQ);
  EXPECT_EQ(c.args[q::QKEY], 0x33334444u);  // kept

  // RTS->RTS: a new Q_Key; nothing of RC's.
  a = {};
  a.qkey = 0x55556666;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_QKEY), 0);
  EXPECT_EQ(last_set_qp().args[q::QKEY], 0x55556666u);
  a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS), EINVAL);
  a.min_rnr_timer = 1;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_MIN_RNR_TIMER), EINVAL);

  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_QKEY, &qi), 0);
  EXPECT_EQ(qa.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(qa.qkey, 0x55556666u);
  EXPECT_EQ(qa.sq_psn, 0xABCDEFu);
  EXPECT_EQ(qa.path_mtu, IBV_MTU_4096);
  EXPECT_EQ(qa.port_num, 1);
  EXPECT_EQ(qi.qp_type, IBV_QPT_UD);
  EXPECT_EQ(qi.cap.max_send_sge, 2u);
  EXPECT_EQ(qi.cap.max_inline_data, hwif::UD_MAX_INLINE);
  EXPECT_EQ(qi.send_cq, cq);

  // ERR and RESET from anywhere, as for RC; back to INIT needs the Q_Key again.
  a = {};
  a.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  a.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE), 0);
  EXPECT_EQ(last_set_qp().args[q::INIT], hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
  EXPECT_EQ(last_set_qp().args[q::TYPE], hwif::cmd::QP_TYPE_UD);
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  EXPECT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
}

TEST_F(UdTest, RcTableUnchangedQkeyIsNotAnRcAttribute) {
  struct ibv_qp* rc = make_qp(pd, cq);
  ASSERT_NE(rc, nullptr);
  qps.push_back(rc);
  struct ibv_qp_attr a = init_attr();
  a.qkey = 1;
  EXPECT_EQ(tmnic::modify_qp(rc, &a, kInitMask | IBV_QP_QKEY), EINVAL);
  EXPECT_EQ(tmnic::modify_qp(rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
            EINVAL);
  to_rts(rc);
  EXPECT_EQ(last_set_qp().args[q::TYPE], hwif::cmd::QP_TYPE_RC);
  EXPECT_EQ(last_set_qp().args[q::QKEY], 0u);
}

// ---- post_send -------------------------------------------------------------------------------

TEST_F(UdTest, PostSendWqeBytes) {
  struct ibv_qp* qp = make_ud_qp(hwif::UD_MAX_SGE);
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 0x0000BEEF);
  struct ibv_ah* ah = make_ah();
  ASSERT_NE(ah, nullptr);

  struct ibv_sge sg[hwif::UD_MAX_SGE];
  for (uint32_t i = 0; i < hwif::UD_MAX_SGE; i++) sg[i] = {0x10000u + 0x1000u * i, 100 + i, 0x300 | i};
  struct ibv_send_wr wr[3] = {};
  wr[0].wr_id = 0xA1;
  wr[0].opcode = IBV_WR_SEND;
  wr[0].send_flags = IBV_SEND_SIGNALED;
  wr[0].sg_list = sg;
  wr[0].num_sge = hwif::UD_MAX_SGE;
  wr[0].wr.ud.ah = ah;
  wr[0].wr.ud.remote_qpn = 0x123456;
  wr[0].wr.ud.remote_qkey = 0x7ABCDEF0;  // bit 31 clear: sent as given
  wr[0].next = &wr[1];
  wr[1] = wr[0];
  wr[1].wr_id = 0xA2;
  wr[1].opcode = IBV_WR_SEND_WITH_IMM;
  wr[1].imm_data = htobe32(0x01020304);
  wr[1].num_sge = 1;
  wr[1].wr.ud.remote_qkey = 0x80000000;  // bit 31 set: the QP's own Q_Key
  wr[1].next = &wr[2];
  wr[2] = wr[1];
  wr[2].wr_id = 0xA3;
  wr[2].wr.ud.remote_qkey = 0xFFFFFFFF;
  wr[2].next = nullptr;
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, wr, &bad), 0);
  ASSERT_EQ(be->doorbells_at(sq_db(qp)).size(), 1u);
  EXPECT_EQ(be->doorbells_at(sq_db(qp)).back().val, 3u);

  const uint8_t* s = to_tqp(qp)->sq.slot(0);
  EXPECT_EQ(ld64(s + w::WR_ID_OFF), 0xA1u);
  EXPECT_EQ(s[w::OPCODE_OFF], hwif::wqe_op::SEND);
  EXPECT_EQ(s[w::FLAGS_OFF], hwif::wqe_flag::SIGNALED);
  EXPECT_EQ(s[w::NUM_SGE_OFF], hwif::UD_MAX_SGE);
  EXPECT_EQ(ld32(s + w::UD_QKEY_OFF), 0x7ABCDEF0u);
  EXPECT_EQ(ld64(s + w::RADDR_OFF), 0u);  // nothing of RDMA
  for (uint32_t i = 0; i < hwif::UD_MAX_SGE; i++) {
    const uint8_t* e = s + w::SGE_OFF + w::SGE_LEN * i;
    EXPECT_EQ(ld64(e + hwif::sge::ADDR_OFF), 0x10000u + 0x1000u * i);
    EXPECT_EQ(ld32(e + hwif::sge::LENGTH_OFF), 100 + i);
    EXPECT_EQ(ld32(e + hwif::sge::LKEY_OFF), 0x300 | i);
  }
  expect_peer_av(s, 0x123456);

  s = to_tqp(qp)->sq.slot(1);
  EXPECT_EQ(s[w::OPCODE_OFF], hwif::wqe_op::SEND_WITH_IMM);
  const uint8_t imm[4] = {1, 2, 3, 4};
  EXPECT_EQ(std::memcmp(s + w::IMM_OFF, imm, 4), 0);
  EXPECT_EQ(ld32(s + w::UD_QKEY_OFF), 0x0000BEEFu);
  EXPECT_EQ(s[w::NUM_SGE_OFF], 1);
  expect_peer_av(s, 0x123456);
  EXPECT_EQ(ld32(to_tqp(qp)->sq.slot(2) + w::UD_QKEY_OFF), 0x0000BEEFu);

  // The QP's Q_Key as it is when the WR is posted (RTS->RTS changed it).
  struct ibv_qp_attr a = {};
  a.qkey = 0x00C0FFEE;
  ASSERT_EQ(tmnic::modify_qp(qp, &a, IBV_QP_QKEY), 0);
  wr[2].next = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, &wr[2], &bad), 0);
  EXPECT_EQ(ld32(to_tqp(qp)->sq.slot(3) + w::UD_QKEY_OFF), 0x00C0FFEEu);
}

TEST_F(UdTest, PostSendInlineUpToTheUdAv) {
  struct ibv_qp_init_attr_ex ia = ud_attr(2, hwif::UD_MAX_INLINE);
  struct ibv_qp* qp = tmnic::create_qp_ex(ctx, &ia);
  ASSERT_NE(qp, nullptr);
  qps.push_back(qp);
  ud_to_rts(qp, 1);
  struct ibv_ah* ah = make_ah();
  std::vector<uint8_t> payload(hwif::UD_MAX_INLINE + 1);
  for (size_t i = 0; i < payload.size(); i++) payload[i] = uint8_t(0x80 + i);
  struct ibv_sge sg[2] = {{uintptr_t(payload.data()), 50, 0},
                          {uintptr_t(payload.data() + 50), hwif::UD_MAX_INLINE - 50, 0}};
  struct ibv_send_wr wr = {};
  wr.wr_id = 9;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_INLINE;
  wr.sg_list = sg;
  wr.num_sge = 2;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = 77;
  wr.wr.ud.remote_qkey = 5;
  struct ibv_send_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_send(qp, &wr, &bad), 0);
  const uint8_t* s = to_tqp(qp)->sq.slot(0);
  EXPECT_EQ(s[w::FLAGS_OFF], hwif::wqe_flag::INLINE);
  EXPECT_EQ(ld32(s + w::INLINE_LEN_OFF), hwif::UD_MAX_INLINE);
  EXPECT_EQ(std::memcmp(s + w::INLINE_DATA_OFF, payload.data(), hwif::UD_MAX_INLINE), 0);
  expect_peer_av(s, 77);
  EXPECT_EQ(ld32(s + w::UD_QKEY_OFF), 5u);

  // One byte more would overwrite the UD_AV: EINVAL, nothing posted.
  sg[1].length++;
  wr.wr_id = 10;
  bad = nullptr;
  EXPECT_EQ(tmnic::post_send(qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  EXPECT_EQ(be->doorbells_at(sq_db(qp)).size(), 1u);
}

TEST_F(UdTest, PostSendBadWrs) {
  struct ibv_qp* qp = make_ud_qp(2);
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 1);
  struct ibv_ah* ah = make_ah();
  struct ibv_sge sg = {0x1000, 8, 0x100};
  auto send = [&](uint64_t id) {
    struct ibv_send_wr wr = {};
    wr.wr_id = id;
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.wr.ud.ah = ah;
    wr.wr.ud.remote_qpn = 3;
    wr.wr.ud.remote_qkey = 4;
    return wr;
  };
  // Each bad WR second in a chain: the first is posted and announced, *bad_wr is the second.
  std::vector<struct ibv_send_wr> bads;
  struct ibv_send_wr b = send(2);
  b.opcode = IBV_WR_RDMA_WRITE;  // the NIC executes WRITE on RC, never on UD
  bads.push_back(b);
  b = send(2);
  b.opcode = IBV_WR_RDMA_READ;
  bads.push_back(b);
  b = send(2);
  b.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;  // the NIC executes atomics on RC only (as mlx5's UD QPs)
  bads.push_back(b);
  b = send(2);
  b.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
  bads.push_back(b);
  b = send(2);
  b.wr.ud.remote_qpn = 0x1000000;  // above 24 bits
  bads.push_back(b);
  b = send(2);
  b.wr.ud.ah = nullptr;
  bads.push_back(b);
  b = send(2);
  b.num_sge = 3;  // > max_send_sge
  bads.push_back(b);
  uint32_t pi = 0;
  for (size_t i = 0; i < bads.size(); i++) {
    struct ibv_send_wr first = send(1);
    first.next = &bads[i];
    struct ibv_send_wr* bad = nullptr;
    EXPECT_EQ(tmnic::post_send(qp, &first, &bad), EINVAL) << i;
    EXPECT_EQ(bad, &bads[i]) << i;
    pi++;
    ASSERT_EQ(be->doorbells_at(sq_db(qp)).size(), i + 1);
    EXPECT_EQ(be->doorbells_at(sq_db(qp)).back().val, pi) << i;
    // Slot reclaim for the next round (the send CQE of WQE pi - 1).
    nic_write_cqe(cq, uint32_t(i), CqeFields{1, 0, 0, qp->qp_num, 0, 0, 0, 0, 0, uint16_t(pi - 1)});
    struct ibv_wc wc;
    ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  }
}

// ---- the extended post-send API ------------------------------------------------------------

TEST_F(UdTest, QpExUdWqesEqualPostSend) {
  struct ibv_qp* qp = make_ud_qp(2, IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM);
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 0x99);
  struct ibv_ah* ah = make_ah();
  struct ibv_qp_ex* x = &to_tqp(qp)->ibv;

  // Reference bytes from ibv_post_send.
  struct ibv_sge sg = {0x4000, 33, 0x201};
  struct ibv_send_wr wr = {};
  wr.wr_id = 5;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htobe32(0xAABBCCDD);
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.sg_list = &sg;
  wr.num_sge = 1;
  wr.wr.ud.ah = ah;
  wr.wr.ud.remote_qpn = 0xABCDE;
  wr.wr.ud.remote_qkey = 0x80000001;
  struct ibv_send_wr* bad;
  ASSERT_EQ(tmnic::post_send(qp, &wr, &bad), 0);

  // The same WR twice through ibv_wr_*, setters in both orders.
  x->wr_start(x);
  x->wr_id = 5;
  x->wr_flags = IBV_SEND_SIGNALED;
  x->wr_send_imm(x, htobe32(0xAABBCCDD));
  x->wr_set_ud_addr(x, ah, 0xABCDE, 0x80000001);
  x->wr_set_sge(x, 0x201, 0x4000, 33);
  x->wr_send_imm(x, htobe32(0xAABBCCDD));
  x->wr_set_sge(x, 0x201, 0x4000, 33);
  x->wr_set_ud_addr(x, ah, 0xABCDE, 0x80000001);
  ASSERT_EQ(x->wr_complete(x), 0);
  const uint8_t* ref = to_tqp(qp)->sq.slot(0);
  EXPECT_EQ(ld32(ref + w::UD_QKEY_OFF), 0x99u);
  expect_peer_av(ref, 0xABCDE);
  EXPECT_EQ(std::memcmp(ref, to_tqp(qp)->sq.slot(1), hwif::WQE_STRIDE), 0);
  EXPECT_EQ(std::memcmp(ref, to_tqp(qp)->sq.slot(2), hwif::WQE_STRIDE), 0);
  EXPECT_EQ(be->doorbells_at(sq_db(qp)).back().val, 3u);

  // Inline data through the extended API stops before the UD_AV too.
  std::vector<uint8_t> data(hwif::UD_MAX_INLINE + 1, 0x5A);
  x->wr_start(x);
  x->wr_send(x);
  x->wr_set_ud_addr(x, ah, 1, 1);
  x->wr_set_inline_data(x, data.data(), data.size());
  EXPECT_EQ(x->wr_complete(x), ENOMEM);
  x->wr_start(x);
  x->wr_send(x);
  x->wr_set_inline_data(x, data.data(), hwif::UD_MAX_INLINE);
  x->wr_set_ud_addr(x, ah, 0x42, 1);
  ASSERT_EQ(x->wr_complete(x), 0);
  const uint8_t* s = to_tqp(qp)->sq.slot(3);
  EXPECT_EQ(ld32(s + w::INLINE_LEN_OFF), hwif::UD_MAX_INLINE);
  expect_peer_av(s, 0x42);
  EXPECT_EQ(be->doorbells_at(sq_db(qp)).back().val, 4u);
}

TEST_F(UdTest, QpExUdErrors) {
  struct ibv_qp* qp = make_ud_qp(2, IBV_QP_EX_WITH_SEND);
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 1);
  struct ibv_ah* ah = make_ah();
  struct ibv_qp_ex* x = &to_tqp(qp)->ibv;
  const size_t dbs = be->doorbells.size();
  struct Case {
    const char* what;
    void (*run)(struct ibv_qp_ex*, struct ibv_ah*);
  };
  const Case cases[] = {
      {"no destination",
       [](struct ibv_qp_ex* x, struct ibv_ah*) {
         x->wr_send(x);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"no data",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_send(x);
         x->wr_set_ud_addr(x, ah, 1, 1);
       }},
      {"RDMA WRITE on UD",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_rdma_write(x, 1, 0x1000);
         x->wr_set_ud_addr(x, ah, 1, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"CMP_AND_SWP on UD",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_atomic_cmp_swp(x, 1, 0x1000, 2, 3);
         x->wr_set_ud_addr(x, ah, 1, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"FETCH_AND_ADD on UD",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_atomic_fetch_add(x, 1, 0x1000, 2);
         x->wr_set_ud_addr(x, ah, 1, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"two destinations",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_send(x);
         x->wr_set_ud_addr(x, ah, 1, 1);
         x->wr_set_ud_addr(x, ah, 1, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"QPN above 24 bits",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) {
         x->wr_send(x);
         x->wr_set_ud_addr(x, ah, 0x1000000, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"no AH",
       [](struct ibv_qp_ex* x, struct ibv_ah*) {
         x->wr_send(x);
         x->wr_set_ud_addr(x, nullptr, 1, 1);
         x->wr_set_sge(x, 1, 0x1000, 8);
       }},
      {"address without a builder",
       [](struct ibv_qp_ex* x, struct ibv_ah* ah) { x->wr_set_ud_addr(x, ah, 1, 1); }},
  };
  for (const Case& c : cases) {
    x->wr_start(x);
    c.run(x, ah);
    EXPECT_EQ(x->wr_complete(x), EINVAL) << c.what;
    EXPECT_EQ(to_tqp(qp)->sq.pi.load(), 0u) << c.what;
  }
  EXPECT_EQ(be->doorbells.size(), dbs);

  // On an RC QP there is no UD address to set.
  struct ibv_qp_init_attr_ex a = {};
  a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  a.pd = pd;
  a.send_cq = a.recv_cq = cq;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = a.cap.max_recv_wr = 3;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.send_ops_flags = IBV_QP_EX_WITH_SEND;
  struct ibv_qp* rc = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(rc, nullptr);
  qps.push_back(rc);
  to_rts(rc);
  struct ibv_qp_ex* rx = &to_tqp(rc)->ibv;
  rx->wr_start(rx);
  rx->wr_send(rx);
  rx->wr_set_ud_addr(rx, ah, 1, 1);
  rx->wr_set_sge(rx, 1, 0x1000, 8);
  EXPECT_EQ(rx->wr_complete(rx), EINVAL);
  rx->wr_start(rx);
  rx->wr_send(rx);
  rx->wr_set_sge(rx, 1, 0x1000, 8);
  EXPECT_EQ(rx->wr_complete(rx), 0);  // RC's WRs need no address
}

// ---- address handles ------------------------------------------------------------------------

TEST_F(UdTest, CreateAhChecksAndResolves) {
  struct ibv_ah_attr a = ah_attr(kPeerIp);
  struct ibv_ah* ah = tmnic::create_ah(pd, &a);
  ASSERT_NE(ah, nullptr);
  EXPECT_EQ(ah->context, ctx);
  EXPECT_EQ(ah->pd, pd);
  EXPECT_EQ(to_tah(ah)->dest_ip, kPeerIp);
  EXPECT_EQ(to_tah(ah)->dmac, kPeerMac);
  EXPECT_EQ(tmnic::dealloc_pd(pd), EBUSY);  // the AH uses it
  // No neighbour entry: the locally administered 02:00:a:b:c:d, as for RC's IBV_QP_AV.
  a = ah_attr(0xC0A80107);
  struct ibv_ah* other = tmnic::create_ah(pd, &a);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(to_tah(other)->dmac, 0x0200C0A80107ull);
  EXPECT_NE(other->handle, ah->handle);

  struct Bad {
    const char* what;
    void (*edit)(struct ibv_ah_attr*);
  };
  const Bad bads[] = {
      {"no GRH", [](struct ibv_ah_attr* a) { a->is_global = 0; }},
      {"sgid_index 1", [](struct ibv_ah_attr* a) { a->grh.sgid_index = 1; }},
      {"port 2", [](struct ibv_ah_attr* a) { a->port_num = 2; }},
      {"port 0", [](struct ibv_ah_attr* a) { a->port_num = 0; }},
      {"IPv6 DGID", [](struct ibv_ah_attr* a) { a->grh.dgid.raw[0] = 0xFE; }},
      {"IPv4 multicast", [](struct ibv_ah_attr* a) { a->grh.dgid = tmnic::ipv4_to_gid(0xE0000001); }},
  };
  for (const Bad& b : bads) {
    a = ah_attr(kPeerIp);
    b.edit(&a);
    errno = 0;
    EXPECT_EQ(tmnic::create_ah(pd, &a), nullptr) << b.what;
    EXPECT_EQ(errno, EINVAL) << b.what;
  }
  EXPECT_EQ(tmnic::destroy_ah(other), 0);
  EXPECT_EQ(tmnic::destroy_ah(ah), 0);
  EXPECT_EQ(to_dev(ctx).num_ah.load(), 0u);
}

// The 40 bytes a UD receive starts with: 20 zero bytes, then an IPv4 header (checksum filled).
std::array<uint8_t, 40> grh_ipv4(uint32_t saddr, uint32_t daddr, uint8_t tos, uint8_t ttl) {
  std::array<uint8_t, 40> g{};
  uint8_t* h = g.data() + 20;
  h[0] = 0x45;
  h[1] = tos;
  h[2] = 0;
  h[3] = 20 + 8 + 12 + 64 + 4;  // IP + UDP + BTH + DETH... (any total length)
  h[6] = 0x40;  // DF
  h[8] = ttl;
  h[9] = 17;  // UDP
  for (int i = 0; i < 4; i++) {
    h[12 + i] = uint8_t(saddr >> (24 - 8 * i));
    h[16 + i] = uint8_t(daddr >> (24 - 8 * i));
  }
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(h[i]) << 8 | h[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  h[10] = uint8_t(~sum >> 8);
  h[11] = uint8_t(~sum);
  return g;
}

TEST_F(UdTest, InitAhFromWcParsesTheGrh) {
  const uint32_t own = be->config().ipv4;  // 10.0.0.1
  auto g = grh_ipv4(0x0A000007, own, 0x28, 63);
  struct ibv_wc wc = {};
  wc.wc_flags = IBV_WC_GRH;
  wc.src_qp = 0x77;
  struct ibv_ah_attr a;
  std::memset(&a, 0xEE, sizeof(a));
  ASSERT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(g.data()), &a),
            0);
  EXPECT_EQ(a.is_global, 1);
  EXPECT_EQ(std::memcmp(a.grh.dgid.raw, tmnic::ipv4_to_gid(0x0A000007).raw, 16), 0);
  EXPECT_EQ(a.grh.sgid_index, 0);
  EXPECT_EQ(a.grh.hop_limit, 63);  // the received TTL, as libibverbs
  EXPECT_EQ(a.grh.traffic_class, 0x28);
  EXPECT_EQ(a.grh.flow_label, 0u);
  EXPECT_EQ(a.port_num, 1);
  EXPECT_EQ(a.dlid, 0);
  EXPECT_EQ(a.sl, 0);
  EXPECT_EQ(a.src_path_bits, 0);
  EXPECT_EQ(a.static_rate, 0);
  // ... which makes an AH to the sender.
  struct ibv_ah* ah = tmnic::create_ah(pd, &a);
  ASSERT_NE(ah, nullptr);
  ahs.push_back(ah);
  EXPECT_EQ(to_tah(ah)->dest_ip, 0x0A000007u);

  // An IPv6-looking first byte with a valid IPv4 header behind it is IPv4 (libibverbs' rule).
  auto g6 = g;
  g6[0] = 0x60;
  ASSERT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(g6.data()), &a),
            0);
  EXPECT_EQ(a.grh.hop_limit, 63);
  // ... and with a broken checksum it is an IPv6 GRH, which this NIC never writes: EINVAL.
  g6[20 + 10] ^= 1;
  EXPECT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(g6.data()), &a),
            EINVAL);
  // Neither version: EPROTONOSUPPORT (libibverbs').
  auto gx = g;
  gx[20] = 0x55;
  EXPECT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(gx.data()), &a),
            EPROTONOSUPPORT);
  // The packet was not addressed to our GID / was multicast / wrong port: no reply address.
  auto gn = grh_ipv4(0x0A000007, 0x0A000009, 0, 64);
  EXPECT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(gn.data()), &a),
            EINVAL);
  auto gm = grh_ipv4(0x0A000007, 0xE0000001, 0, 64);
  EXPECT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(gm.data()), &a),
            EINVAL);
  EXPECT_EQ(tmnic::init_ah_from_wc(ctx, 2, &wc, reinterpret_cast<struct ibv_grh*>(g.data()), &a),
            EINVAL);
  // No GRH in the completion: libibverbs fills the LID fields only (success), and that attribute
  // makes no RoCE AH.
  wc.wc_flags = 0;
  ASSERT_EQ(tmnic::init_ah_from_wc(ctx, 1, &wc, reinterpret_cast<struct ibv_grh*>(g.data()), &a),
            0);
  EXPECT_EQ(a.is_global, 0);
  errno = 0;
  EXPECT_EQ(tmnic::create_ah(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

// ---- receive completions ---------------------------------------------------------------------

TEST_F(UdTest, UdReceiveCompletionReportsGrhAndSource) {
  struct ibv_qp* qp = make_ud_qp();
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 1);
  // A UD receive WQE is an RC one: wr_id and SGEs.
  static uint8_t buf[hwif::GRH_LEN + 256];
  struct ibv_sge sg = {uintptr_t(buf), sizeof(buf), 0x111};
  struct ibv_recv_wr rwr = {};
  rwr.wr_id = 0xB0;
  rwr.sg_list = &sg;
  rwr.num_sge = 1;
  struct ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(tmnic::post_recv(qp, &rwr, &rbad), 0);
  const uint8_t* r = to_tqp(qp)->rq.slot(0);
  EXPECT_EQ(ld64(r + w::WR_ID_OFF), 0xB0u);
  EXPECT_EQ(r[w::NUM_SGE_OFF], 1);
  EXPECT_EQ(ld64(r + w::SGE_OFF + hwif::sge::ADDR_OFF), uintptr_t(buf));

  CqeFields f;
  f.wr_id = 0xB0;
  f.byte_len = hwif::GRH_LEN + 100;
  f.imm = 0x44332211;
  f.qp_num = qp->qp_num;
  f.src_qp = 0xABCDEF;
  f.wc_flags = hwif::wc_flag::GRH | hwif::wc_flag::WITH_IMM;
  f.opcode = hwif::wc_op::RECV;
  f.wqe_idx = 0;
  nic_write_cqe(cq, 0, f);
  struct ibv_wc wc;
  std::memset(&wc, 0xEE, sizeof(wc));
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, 0xB0u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.byte_len, hwif::GRH_LEN + 100);  // the GRH counts
  EXPECT_EQ(wc.qp_num, qp->qp_num);
  EXPECT_EQ(wc.src_qp, 0xABCDEFu);
  EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_GRH | IBV_WC_WITH_IMM));
  EXPECT_EQ(wc.imm_data, 0x44332211u);
  EXPECT_EQ(wc.slid, 0);
  EXPECT_EQ(wc.sl, 0);
  EXPECT_EQ(wc.dlid_path_bits, 0);
  EXPECT_EQ(wc.pkey_index, 0);
  EXPECT_EQ(to_tqp(qp)->rq.outstanding(), 0u);  // the receive slot came back

  // The same CQE on an RC QP: the GRH bit is not the RC's (nothing leads its buffer).
  struct ibv_qp* rc = make_qp(pd, cq);
  ASSERT_NE(rc, nullptr);
  qps.push_back(rc);
  to_rts(rc);
  ASSERT_EQ(tmnic::post_recv(rc, &rwr, &rbad), 0);
  f.qp_num = rc->qp_num;
  nic_write_cqe(cq, 1, f);
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_WITH_IMM));
  // And a UD send completion carries no GRH either.
  f.qp_num = qp->qp_num;
  f.opcode = hwif::wc_op::SEND;
  nic_write_cqe(cq, 2, f);
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  EXPECT_EQ(wc.wc_flags & IBV_WC_GRH, 0u);
}

TEST_F(UdTest, UdReceiveCompletionThroughTheExtendedCq) {
  struct ibv_cq_init_attr_ex ca = {};
  ca.cqe = 15;
  ca.wc_flags = IBV_WC_STANDARD_FLAGS;
  struct ibv_cq_ex* xcq = tmnic::create_cq_ex(ctx, &ca);
  ASSERT_NE(xcq, nullptr);
  struct ibv_qp_init_attr_ex a = ud_attr();
  a.recv_cq = ibv_cq_ex_to_cq(xcq);
  struct ibv_qp* qp = tmnic::create_qp_ex(ctx, &a);
  ASSERT_NE(qp, nullptr);
  ud_to_rts(qp, 1);
  struct ibv_sge sg = {0x8000, 1024, 0x111};
  struct ibv_recv_wr rwr = {};
  rwr.wr_id = 0xC0;
  rwr.sg_list = &sg;
  rwr.num_sge = 1;
  struct ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(tmnic::post_recv(qp, &rwr, &rbad), 0);
  CqeFields f;
  f.wr_id = 0xC0;
  f.byte_len = hwif::GRH_LEN + 7;
  f.qp_num = qp->qp_num;
  f.src_qp = 0x654321;
  f.wc_flags = hwif::wc_flag::GRH;
  f.opcode = hwif::wc_op::RECV;
  nic_write_cqe(ibv_cq_ex_to_cq(xcq), 0, f);
  struct ibv_poll_cq_attr pa = {};
  ASSERT_EQ(xcq->start_poll(xcq, &pa), 0);
  EXPECT_EQ(xcq->wr_id, 0xC0u);
  EXPECT_EQ(xcq->status, IBV_WC_SUCCESS);
  EXPECT_EQ(xcq->read_opcode(xcq), IBV_WC_RECV);
  EXPECT_EQ(xcq->read_byte_len(xcq), hwif::GRH_LEN + 7);
  EXPECT_EQ(xcq->read_src_qp(xcq), 0x654321u);
  EXPECT_EQ(xcq->read_wc_flags(xcq), unsigned(IBV_WC_GRH));
  EXPECT_EQ(xcq->read_qp_num(xcq), qp->qp_num);
  EXPECT_EQ(xcq->read_slid(xcq), 0u);
  EXPECT_EQ(xcq->read_sl(xcq), 0);
  EXPECT_EQ(xcq->read_dlid_path_bits(xcq), 0);
  xcq->end_poll(xcq);
  EXPECT_EQ(tmnic::destroy_qp(qp), 0);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(xcq)), 0);
}

}  // namespace
}  // namespace tmnic::test
