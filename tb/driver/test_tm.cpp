// Tag matching (TM-SRQ): creation, ibv_post_srq_ops (op WQE bytes, doorbells, handles, errors),
// TM completions (injected into the CQ ring as the NIC would write them) and tm_caps.
#include <cstdlib>
#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace s = hwif::cmd::set_srq;
namespace o = hwif::tm_op;

constexpr uint32_t kEngineTags = 16;

// What the application gets from one extended-CQ poll.
struct Polled {
  uint64_t wr_id = 0;
  enum ibv_wc_status status = IBV_WC_SUCCESS;
  enum ibv_wc_opcode opcode = IBV_WC_SEND;
  unsigned flags = 0;
  uint32_t byte_len = 0;
  uint32_t qp_num = 0;
  struct ibv_wc_tm_info tm = {};
};

class TmTest : public DriverTest {
 protected:
  void SetUp() override {
    fake::Config cfg;
    cfg.tm_max_tags = kEngineTags;
    cfg.tm_caps = tm_caps_reg;
    open(cfg);
    pd = make_pd();
    cq = make_cq_ex();
    srq = create_tm(cq, 4, 10);
    ASSERT_NE(srq, nullptr);
  }
  void TearDown() override {
    if (srq) {
      EXPECT_EQ(tmnic::destroy_srq(srq), 0);
    }
    EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
    EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
    EXPECT_TRUE(be->mappings.empty());
    EXPECT_EQ(be->bad_unmaps, 0);
    DriverTest::TearDown();
  }

  struct ibv_cq_ex* make_cq_ex(int cqe = 63) {
    struct ibv_cq_init_attr_ex a = {};
    a.cqe = uint32_t(cqe);
    a.wc_flags = IBV_WC_EX_WITH_TM_INFO | IBV_WC_STANDARD_FLAGS;  // what pyverbs asks for
    struct ibv_cq_ex* c = tmnic::create_cq_ex(ctx, &a);
    EXPECT_NE(c, nullptr);
    return c;
  }
  struct ibv_srq_init_attr_ex tm_attr(struct ibv_cq_ex* c, uint32_t tags, uint32_t ops) {
    struct ibv_srq_init_attr_ex a = {};
    a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
                  IBV_SRQ_INIT_ATTR_TM;
    a.srq_type = IBV_SRQT_TM;
    a.pd = pd;
    a.cq = c ? ibv_cq_ex_to_cq(c) : nullptr;
    a.attr.max_wr = 7;
    a.attr.max_sge = 1;
    a.tm_cap.max_num_tags = tags;
    a.tm_cap.max_ops = ops;
    return a;
  }
  struct ibv_srq* create_tm(struct ibv_cq_ex* c, uint32_t tags, uint32_t ops,
                            uint32_t* max_ops_out = nullptr) {
    struct ibv_srq_init_attr_ex a = tm_attr(c, tags, ops);
    struct ibv_srq* r = tmnic::create_srq_ex(ctx, &a);
    if (r && max_ops_out) *max_ops_out = a.tm_cap.max_ops;
    return r;
  }
  // errno of a create that must fail (and leaves no command, mapping or number behind).
  int create_fails(struct ibv_srq_init_attr_ex a) {
    size_t cmds = be->commands.size(), maps = be->mappings.size();
    errno = 0;
    struct ibv_srq* r = tmnic::create_srq_ex(ctx, &a);
    EXPECT_EQ(r, nullptr);
    if (r) tmnic::destroy_srq(r);
    EXPECT_EQ(be->commands.size(), cmds);
    EXPECT_EQ(be->mappings.size(), maps);
    return errno;
  }

  // The last SET_SRQ of `r` and the op WQE at ring index `idx`, found through the ring address
  // the driver gave the NIC (the fake maps by identity).
  Command set_srq_of(struct ibv_srq* r) {
    Command last;
    for (const auto& c : be->commands_with(hwif::cmd::SET_SRQ))
      if (c.index == to_tsrq(r)->srqn) last = c;
    return last;
  }
  const uint8_t* op_wqe(struct ibv_srq* r, uint32_t idx) {
    Command c = set_srq_of(r);
    uint64_t base = uint64_t(c.args[s::OPS_BASE_HI]) << 32 | c.args[s::OPS_BASE_LO];
    uint32_t n = 1u << c.args[s::OPS_LOG_SIZE];
    return reinterpret_cast<const uint8_t*>(uintptr_t(base)) + (idx % n) * hwif::TM_OP_STRIDE;
  }
  uint32_t db() const { return hwif::reg::DB_TM0 + 4 * to_tsrq(srq)->srqn; }

  static struct ibv_ops_wr add_op(uint64_t wr_id, uint64_t recv_wr_id, uint64_t tag,
                                  int flags = IBV_OPS_SIGNALED) {
    struct ibv_ops_wr w = {};
    w.wr_id = wr_id;
    w.opcode = IBV_WR_TAG_ADD;
    w.flags = flags;
    w.tm.add.recv_wr_id = recv_wr_id;
    w.tm.add.tag = tag;
    w.tm.add.mask = 0xffff;
    w.tm.handle = 0xdead;  // output
    return w;
  }
  static struct ibv_ops_wr del_op(uint64_t wr_id, uint32_t handle, int flags = IBV_OPS_SIGNALED) {
    struct ibv_ops_wr w = {};
    w.wr_id = wr_id;
    w.opcode = IBV_WR_TAG_DEL;
    w.flags = flags;
    w.tm.handle = handle;
    return w;
  }
  static struct ibv_ops_wr sync_op(uint64_t wr_id, uint32_t cnt,
                                   int flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC) {
    struct ibv_ops_wr w = {};
    w.wr_id = wr_id;
    w.opcode = IBV_WR_TAG_SYNC;
    w.flags = flags;
    w.tm.unexpected_cnt = cnt;
    return w;
  }
  int post1(struct ibv_ops_wr* w) {
    struct ibv_ops_wr* bad = nullptr;
    w->next = nullptr;
    int err = tmnic::post_srq_ops(srq, w, &bad);
    EXPECT_EQ(bad, err ? w : nullptr);
    return err;
  }
  // ADD (signaled by default); returns the handle.
  uint32_t add(uint64_t recv_wr_id, uint64_t tag = 1, int flags = IBV_OPS_SIGNALED) {
    struct ibv_ops_wr w = add_op(recv_wr_id + 1000, recv_wr_id, tag, flags);
    EXPECT_EQ(post1(&w), 0);
    return w.tm.handle;
  }

  // The NIC's side: completions on the TM-SRQ's CQ.
  void nic(const CqeFields& f) { nic_write_cqe(ibv_cq_ex_to_cq(cq), produced++, f); }
  void nic_listop(uint8_t opcode, uint64_t wr_id, uint16_t ring_idx, uint16_t handle,
                  uint16_t hw_cnt = 0, uint8_t status = hwif::wc_status::SUCCESS) {
    CqeFields f;
    f.opcode = opcode;
    f.wr_id = wr_id;
    f.wqe_idx = ring_idx;
    f.tm_handle = handle;
    f.tm_hw_cnt = hw_cnt;
    f.status = status;
    nic(f);
  }
  void nic_match(uint16_t handle, uint32_t flags, uint32_t byte_len = 100, uint64_t tag = 1,
                 uint8_t status = hwif::wc_status::SUCCESS) {
    CqeFields f;
    f.opcode = hwif::wc_op::TM_RECV;
    f.wc_flags = flags;
    f.tm_handle = handle;
    f.byte_len = byte_len;
    f.tm_tag = tag;
    f.tm_app_ctx = 0xC0FFEE;
    f.qp_num = 9;
    f.status = status;
    nic(f);
  }
  void nic_unexpected(uint64_t wr_id, uint16_t srq_idx, uint8_t opcode = hwif::wc_op::TM_RECV) {
    CqeFields f;
    f.opcode = opcode;
    f.wr_id = wr_id;
    f.wqe_idx = srq_idx;
    f.byte_len = 1024;
    f.qp_num = 9;
    nic(f);
  }
  Polled poll() {
    Polled p;
    struct ibv_poll_cq_attr pa = {};
    int r = ibv_start_poll(cq, &pa);
    EXPECT_EQ(r, 0);
    if (r) return p;
    p.wr_id = cq->wr_id;
    p.status = cq->status;
    p.opcode = ibv_wc_read_opcode(cq);
    p.flags = ibv_wc_read_wc_flags(cq);
    p.byte_len = ibv_wc_read_byte_len(cq);
    p.qp_num = ibv_wc_read_qp_num(cq);
    ibv_wc_read_tm_info(cq, &p.tm);
    ibv_end_poll(cq);
    return p;
  }
  bool cq_empty() {
    struct ibv_poll_cq_attr pa = {};
    if (ibv_start_poll(cq, &pa) == ENOENT) return true;
    ibv_end_poll(cq);
    return false;
  }
  // Polls the list-op CQE of a signaled op, checking opcode and wr_id.
  void poll_listop(enum ibv_wc_opcode opcode, uint64_t wr_id, unsigned flags = 0,
                   enum ibv_wc_status status = IBV_WC_SUCCESS) {
    Polled p = poll();
    EXPECT_EQ(p.opcode, opcode);
    EXPECT_EQ(p.wr_id, wr_id);
    EXPECT_EQ(p.flags, flags);
    EXPECT_EQ(p.status, status);
    EXPECT_EQ(p.tm.tag, 0u);
    EXPECT_EQ(p.tm.priv, 0u);
  }

  struct ibv_pd* pd = nullptr;
  struct ibv_cq_ex* cq = nullptr;
  struct ibv_srq* srq = nullptr;
  uint32_t produced = 0;
  uint32_t tm_caps_reg = 0;  // TM_CAPS of the fake NIC (TmRndvTest: RC)
};

// ---- creation -------------------------------------------------------------------------------

TEST_F(TmTest, CreateProgramsSetSrqAndDestroyInvalidates) {
  Command c = set_srq_of(srq);
  EXPECT_EQ(c.args[s::VALID], 1u);
  EXPECT_EQ(c.args[s::TM], 1u);
  EXPECT_EQ(c.args[s::PD], to_tpd(pd)->pdn);
  EXPECT_EQ(c.args[s::LOG_SIZE], 3u);
  EXPECT_EQ(c.args[s::CQ], to_tcq(cq)->cqn);
  EXPECT_EQ(c.args[s::TAG_BASE], 0u);
  EXPECT_EQ(c.args[s::TAG_NUM], 4u);
  EXPECT_EQ(c.args[s::OPS_LOG_SIZE], 4u);  // max_ops 10 -> 16
  uint64_t ops = uint64_t(c.args[s::OPS_BASE_HI]) << 32 | c.args[s::OPS_BASE_LO];
  EXPECT_EQ(ops % 64, 0u);
  ASSERT_EQ(be->mappings.count(ops), 1u);
  EXPECT_GE(be->mappings.find(ops)->second, 16u * hwif::TM_OP_STRIDE);
  for (uint32_t i = 0; i < 16 * hwif::TM_OP_STRIDE; i++)
    ASSERT_EQ(reinterpret_cast<const uint8_t*>(uintptr_t(ops))[i], 0) << i;  // zeroed
  EXPECT_NE(ops, to_tsrq(srq)->wq.buf.iova());

  // The reported max_ops is the ring size; the second SRQ's tags follow the first one's.
  struct ibv_cq_ex* cq2 = make_cq_ex();
  uint32_t max_ops = 0;
  struct ibv_srq* srq2 = create_tm(cq2, 5, 1, &max_ops);
  ASSERT_NE(srq2, nullptr);
  EXPECT_EQ(max_ops, 1u);
  Command c2 = set_srq_of(srq2);
  EXPECT_EQ(c2.args[s::TAG_BASE], 4u);
  EXPECT_EQ(c2.args[s::TAG_NUM], 5u);
  EXPECT_EQ(c2.args[s::OPS_LOG_SIZE], 0u);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq2)), EBUSY);  // the SRQ uses it

  ASSERT_EQ(tmnic::destroy_srq(srq2), 0);
  Command d = be->commands.back();
  EXPECT_EQ(d.opcode, hwif::cmd::SET_SRQ);
  EXPECT_EQ(d.index, c2.index);
  EXPECT_EQ(d.args[s::VALID], 0u);
  EXPECT_EQ(d.args[s::TAG_BASE], 4u);
  EXPECT_EQ(d.args[s::TAG_NUM], 5u);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq2)), 0);
  EXPECT_EQ(be->mappings.count(ops), 1u);  // only srq2's rings went away
}

TEST_F(TmTest, CreateRejects) {
  struct ibv_srq_init_attr_ex a = tm_attr(cq, 4, 4);
  a.comp_mask &= ~IBV_SRQ_INIT_ATTR_CQ;
  EXPECT_EQ(create_fails(a), EINVAL);
  a = tm_attr(cq, 4, 4);
  a.comp_mask &= ~IBV_SRQ_INIT_ATTR_TM;
  EXPECT_EQ(create_fails(a), EINVAL);
  EXPECT_EQ(create_fails(tm_attr(cq, 0, 4)), EINVAL);                // no tags
  EXPECT_EQ(create_fails(tm_attr(cq, kEngineTags + 1, 4)), EINVAL);  // > tm_caps.max_num_tags
  EXPECT_EQ(create_fails(tm_attr(cq, 4, (1u << 15) + 1)), EINVAL);   // > tm_caps.max_ops
  a = tm_attr(cq, 4, 4);
  a.comp_mask |= IBV_SRQ_INIT_ATTR_RESERVED;
  EXPECT_EQ(create_fails(a), EOPNOTSUPP);
  a = tm_attr(cq, 4, 4);
  a.comp_mask &= ~IBV_SRQ_INIT_ATTR_PD;
  EXPECT_EQ(create_fails(a), EINVAL);
  a = tm_attr(cq, 4, 4);
  a.pd = nullptr;
  EXPECT_EQ(create_fails(a), EINVAL);
  a = tm_attr(nullptr, 4, 4);
  EXPECT_EQ(create_fails(a), EINVAL);
  // A CQ from ibv_create_cq cannot report TM information (mlx5: EINVAL).
  struct ibv_cq* legacy = make_cq(15);
  a = tm_attr(cq, 4, 4);
  a.cq = legacy;
  EXPECT_EQ(create_fails(a), EINVAL);
  // The fixture's SRQ already owns `cq`.
  EXPECT_EQ(create_fails(tm_attr(cq, 4, 4)), EINVAL);
  EXPECT_EQ(tmnic::destroy_cq(legacy), 0);

  // A basic SRQ ignores the TM attributes.
  a = tm_attr(nullptr, 0, 0);
  a.srq_type = IBV_SRQT_BASIC;
  struct ibv_srq* basic = tmnic::create_srq_ex(ctx, &a);
  ASSERT_NE(basic, nullptr);
  EXPECT_EQ(set_srq_of(basic).args[s::TM], 0u);
  EXPECT_EQ(tmnic::destroy_srq(basic), 0);
}

TEST_F(TmTest, EngineSlotsSharedFirstFitAndFreedAtDestroy) {
  // 16 engine entries, 4 taken by the fixture's SRQ: 10 fit, then 3 do not.
  struct ibv_cq_ex* c1 = make_cq_ex();
  struct ibv_cq_ex* c2 = make_cq_ex();
  struct ibv_srq* a = create_tm(c1, 10, 4);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(set_srq_of(a).args[s::TAG_BASE], 4u);
  EXPECT_EQ(create_fails(tm_attr(c2, 3, 4)), ENOMEM);
  struct ibv_srq* b = create_tm(c2, 2, 4);  // exactly the rest
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(set_srq_of(b).args[s::TAG_BASE], 14u);
  ASSERT_EQ(tmnic::destroy_srq(b), 0);
  // Freeing the fixture's range leaves a 4-entry hole at 0, first fit for small SRQs.
  ASSERT_EQ(tmnic::destroy_srq(srq), 0);
  srq = create_tm(cq, 3, 4);
  ASSERT_NE(srq, nullptr);
  EXPECT_EQ(set_srq_of(srq).args[s::TAG_BASE], 0u);
  EXPECT_EQ(create_fails(tm_attr(c2, 4, 4)), ENOMEM);  // 1 + 2 free, not contiguous
  ASSERT_EQ(tmnic::destroy_srq(a), 0);
  b = create_tm(c2, 12, 4);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(set_srq_of(b).args[s::TAG_BASE], 3u);
  EXPECT_EQ(tmnic::destroy_srq(b), 0);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(c1)), 0);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(c2)), 0);
}

TEST_F(DriverTest, TmSrqNeedsTagMatchingHardware) {
  // TM_MAX_TAGS = 0: max_num_tags exceeds the device's 0, EINVAL as mlx5 (kernel) answers.
  struct ibv_pd* pd = make_pd();
  struct ibv_cq_init_attr_ex ca = {};
  ca.cqe = 15;
  ca.wc_flags = IBV_WC_EX_WITH_TM_INFO;
  struct ibv_cq_ex* cq = tmnic::create_cq_ex(ctx, &ca);
  ASSERT_NE(cq, nullptr);
  struct ibv_srq_init_attr_ex a = {};
  a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ |
                IBV_SRQ_INIT_ATTR_TM;
  a.srq_type = IBV_SRQT_TM;
  a.pd = pd;
  a.cq = ibv_cq_ex_to_cq(cq);
  a.attr.max_wr = 4;
  a.tm_cap.max_num_tags = 1;
  a.tm_cap.max_ops = 1;
  errno = 0;
  EXPECT_EQ(tmnic::create_srq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_TRUE(be->commands_with(hwif::cmd::SET_SRQ).empty());
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
}

// ---- list operations ------------------------------------------------------------------------

TEST_F(TmTest, OpWqeBytesAndOneDoorbellPerCall) {
  struct ibv_sge sge = {0x1122334455667788ull, 0x400, 0xABCD01};
  struct ibv_ops_wr w[4];
  w[0] = add_op(0x0102030405060708ull, 77, 0xFEDCBA9876543210ull,
                IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC);
  w[0].tm.add.mask = 0x0F0F0F0F0F0F0F0Full;
  w[0].tm.add.sg_list = &sge;
  w[0].tm.add.num_sge = 1;
  w[0].tm.unexpected_cnt = 0x12345;  // 16 bits reach the NIC
  w[1] = add_op(9, 78, 0x42, 0);     // unsignaled, no SGE: empty buffer
  w[2] = del_op(10, 0, IBV_OPS_SIGNALED);
  w[3] = sync_op(11, 0xBEEF, IBV_OPS_TM_SYNC);  // unsignaled
  for (int i = 0; i < 3; i++) w[i].next = &w[i + 1];
  w[3].next = nullptr;
  struct ibv_ops_wr* bad = nullptr;
  ASSERT_EQ(tmnic::post_srq_ops(srq, w, &bad), 0);
  EXPECT_EQ(bad, nullptr);
  EXPECT_EQ(w[0].tm.handle, 0u);
  EXPECT_EQ(w[1].tm.handle, 1u);
  auto dbs = be->doorbells_at(db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 4u);

  uint8_t e[4][hwif::TM_OP_STRIDE] = {};
  st64(e[0] + o::WR_ID_OFF, 0x0102030405060708ull);
  e[0][o::OPCODE_OFF] = hwif::tm_opcode::ADD;
  e[0][o::FLAGS_OFF] = hwif::tm_op_flag::SIGNALED | hwif::tm_op_flag::SW_CNT;
  st16(e[0] + o::SW_CNT_OFF, 0x2345);
  st32(e[0] + o::HANDLE_OFF, 0);
  st64(e[0] + o::TAG_OFF, 0xFEDCBA9876543210ull);
  st64(e[0] + o::MASK_OFF, 0x0F0F0F0F0F0F0F0Full);
  st64(e[0] + o::SGE_OFF, 0x1122334455667788ull);
  st32(e[0] + o::SGE_OFF + 8, 0x400);
  st32(e[0] + o::SGE_OFF + 12, 0xABCD01);
  st64(e[1] + o::WR_ID_OFF, 9);
  e[1][o::OPCODE_OFF] = hwif::tm_opcode::ADD;
  st32(e[1] + o::HANDLE_OFF, 1);
  st64(e[1] + o::TAG_OFF, 0x42);
  st64(e[1] + o::MASK_OFF, 0xffff);
  st64(e[2] + o::WR_ID_OFF, 10);
  e[2][o::OPCODE_OFF] = hwif::tm_opcode::DEL;
  e[2][o::FLAGS_OFF] = hwif::tm_op_flag::SIGNALED;
  st64(e[3] + o::WR_ID_OFF, 11);
  e[3][o::OPCODE_OFF] = hwif::tm_opcode::SYNC;
  e[3][o::FLAGS_OFF] = hwif::tm_op_flag::SW_CNT;
  st16(e[3] + o::SW_CNT_OFF, 0xBEEF);
  for (int i = 0; i < 4; i++)
    for (uint32_t b = 0; b < hwif::TM_OP_STRIDE; b++)
      EXPECT_EQ(op_wqe(srq, i)[b], e[i][b]) << "op " << i << " byte " << b;

  // A zero-length SGE is written as given (an empty buffer too).
  struct ibv_sge empty = {0x5000, 0, 0x77};
  struct ibv_ops_wr z = add_op(12, 79, 3, 0);
  z.tm.add.sg_list = &empty;
  z.tm.add.num_sge = 1;
  ASSERT_EQ(post1(&z), 0);
  EXPECT_EQ(ld64(op_wqe(srq, 4) + o::SGE_OFF), 0x5000u);
  EXPECT_EQ(ld32(op_wqe(srq, 4) + o::SGE_OFF + 8), 0u);
  EXPECT_EQ(ld32(op_wqe(srq, 4) + o::SGE_OFF + 12), 0x77u);
  EXPECT_EQ(be->doorbells_at(db()).back().val, 5u);
  EXPECT_EQ(be->doorbells_at(db()).size(), 2u);
}

TEST_F(TmTest, HandlesComeBackOnlyAfterEveryExpectedCqe) {
  // Four signaled ADDs fill the 4-tag list; a fifth in the same call is ENOMEM, the others are
  // posted and announced by one doorbell.
  struct ibv_ops_wr w[5];
  for (int i = 0; i < 5; i++) {
    w[i] = add_op(100 + i, 200 + i, i);
    w[i].next = i < 4 ? &w[i + 1] : nullptr;
  }
  struct ibv_ops_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_srq_ops(srq, w, &bad), ENOMEM);
  EXPECT_EQ(bad, &w[4]);
  EXPECT_EQ(w[4].tm.handle, 0xdeadu);
  for (uint32_t i = 0; i < 4; i++) EXPECT_EQ(w[i].tm.handle, i);
  ASSERT_EQ(be->doorbells_at(db()).size(), 1u);
  EXPECT_EQ(be->doorbells_at(db())[0].val, 4u);
  for (uint16_t i = 0; i < 4; i++) nic_listop(hwif::wc_op::TM_ADD, 100 + i, i, i);
  for (uint16_t i = 0; i < 4; i++) poll_listop(IBV_WC_TM_ADD, 100 + i);
  struct ibv_ops_wr x = add_op(1, 2, 3);
  EXPECT_EQ(post1(&x), ENOMEM);  // the consumptions are still to come

  // Handle 1: MATCH alone keeps it, DATA_VALID frees it.
  nic_match(1, hwif::wc_flag::TM_MATCH, 0);
  Polled p = poll();
  EXPECT_EQ(p.wr_id, 201u);
  EXPECT_EQ(post1(&x), ENOMEM);
  nic_match(1, hwif::wc_flag::TM_DATA_VALID, 5000);
  p = poll();
  EXPECT_EQ(p.wr_id, 201u);
  EXPECT_EQ(p.status, IBV_WC_SUCCESS);
  EXPECT_EQ(add(300), 1u);

  // Handle 2: an unsignaled DEL gives it back at once (assumed to succeed, as mlx5).
  struct ibv_ops_wr d = del_op(50, 2, 0);
  ASSERT_EQ(post1(&d), 0);
  // Handle 3: a signaled DEL holds it until its CQE. FIFO order: 2 first, then 3.
  d = del_op(51, 3);
  ASSERT_EQ(post1(&d), 0);
  EXPECT_EQ(add(301), 2u);
  EXPECT_EQ(post1(&x), ENOMEM);
  // Ring indices so far: 0-3 ADD, 4 ADD(h1), 5 DEL(h2), 6 DEL(h3), 7 ADD(h2).
  nic_listop(hwif::wc_op::TM_ADD, 1000 + 300, 4, 1);
  poll_listop(IBV_WC_TM_ADD, 1300);
  nic_listop(hwif::wc_op::TM_DEL, 51, 6, 3);
  poll_listop(IBV_WC_TM_DEL, 51);
  EXPECT_EQ(add(302), 3u);  // success: no consumption expected any more

  // Handle 0: a DEL that fails (the tag was consumed meanwhile) keeps it until the consumption.
  d = del_op(52, 0);
  ASSERT_EQ(post1(&d), 0);
  nic_listop(hwif::wc_op::TM_ADD, 1301, 7, 2);
  poll_listop(IBV_WC_TM_ADD, 1301);
  nic_listop(hwif::wc_op::TM_ADD, 1302, 8, 3);
  poll_listop(IBV_WC_TM_ADD, 1302);
  nic_listop(hwif::wc_op::TM_DEL, 52, 9, 0, 0, hwif::wc_status::TM_ERR);
  poll_listop(IBV_WC_TM_DEL, 52, 0, IBV_WC_TM_ERR);
  EXPECT_EQ(post1(&x), ENOMEM);
  nic_match(0, hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID);
  p = poll();
  EXPECT_EQ(p.wr_id, 200u);
  EXPECT_EQ(add(303), 0u);
  EXPECT_TRUE(cq_empty());

  // DEL of a handle that is not live, twice, or out of range: EINVAL, nothing posted.
  size_t n = be->doorbells_at(db()).size();
  d = del_op(53, 2, 0);
  ASSERT_EQ(post1(&d), 0);
  EXPECT_EQ(post1(&d), EINVAL);
  d = del_op(54, 4);
  EXPECT_EQ(post1(&d), EINVAL);
  EXPECT_EQ(be->doorbells_at(db()).size(), n + 1);
}

TEST_F(TmTest, FullOpRingIsEnomemUntilASignaledOpCompletes) {
  // A second SRQ with a 4-op ring.
  ASSERT_EQ(tmnic::destroy_srq(srq), 0);
  uint32_t max_ops = 0;
  srq = create_tm(cq, 4, 3, &max_ops);
  ASSERT_NE(srq, nullptr);
  EXPECT_EQ(max_ops, 4u);
  struct ibv_ops_wr w[6];
  for (int i = 0; i < 6; i++) {
    w[i] = sync_op(i, 0, i == 2 ? IBV_OPS_SIGNALED : 0);
    w[i].next = i < 5 ? &w[i + 1] : nullptr;
  }
  struct ibv_ops_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_srq_ops(srq, w, &bad), ENOMEM);
  EXPECT_EQ(bad, &w[4]);
  auto dbs = be->doorbells_at(db());
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 4u);
  EXPECT_EQ(tmnic::post_srq_ops(srq, &w[4], &bad), ENOMEM);  // still full: no doorbell
  EXPECT_EQ(bad, &w[4]);
  EXPECT_EQ(be->doorbells_at(db()).size(), 1u);
  // The signaled op (ring index 2) completes: indices 0..2 are free again, 3 is not known yet.
  nic_listop(hwif::wc_op::TM_SYNC, 2, 2, 0, 5);
  poll_listop(IBV_WC_TM_SYNC, 2);  // never SYNC_REQ on a SYNC
  w[5].next = nullptr;
  w[4].next = &w[5];
  struct ibv_ops_wr w6 = sync_op(6, 0, 0), w7 = sync_op(7, 0, 0);
  w[5].next = &w6;
  w6.next = &w7;
  w7.next = nullptr;
  EXPECT_EQ(tmnic::post_srq_ops(srq, &w[4], &bad), ENOMEM);
  EXPECT_EQ(bad, &w7);
  EXPECT_EQ(be->doorbells_at(db()).back().val, 7u);
  EXPECT_EQ(ld64(op_wqe(srq, 6)), 6u);  // ring index 6 = slot 2
}

TEST_F(TmTest, BadOpsAreEinvalAndEarlierOpsArePosted) {
  // A basic SRQ has no tag list.
  struct ibv_srq_init_attr bs = {};
  bs.attr.max_wr = 4;
  struct ibv_srq* basic = tmnic::create_srq(pd, &bs);
  ASSERT_NE(basic, nullptr);
  struct ibv_ops_wr w[3];
  w[0] = sync_op(1, 0);
  w[0].next = nullptr;
  struct ibv_ops_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_srq_ops(basic, w, &bad), EINVAL);
  EXPECT_EQ(bad, &w[0]);
  EXPECT_TRUE(be->doorbells.empty());
  EXPECT_EQ(tmnic::destroy_srq(basic), 0);

  // Unknown opcode after a good op: the good one is posted, the doorbell rung for it.
  w[0] = sync_op(1, 0, 0);
  w[1] = sync_op(2, 0, 0);
  const uint32_t bad_opcode = 7;  // not an enumerator: stored as raw bytes, as a C caller could
  std::memcpy(&w[1].opcode, &bad_opcode, sizeof(bad_opcode));
  w[0].next = &w[1];
  w[1].next = nullptr;
  EXPECT_EQ(tmnic::post_srq_ops(srq, w, &bad), EINVAL);
  EXPECT_EQ(bad, &w[1]);
  ASSERT_EQ(be->doorbells_at(db()).size(), 1u);
  EXPECT_EQ(be->doorbells_at(db())[0].val, 1u);
  // More than one SGE in a tagged buffer (tm_caps.max_sge = 1).
  struct ibv_sge sg[2] = {};
  w[2] = add_op(3, 4, 5);
  w[2].tm.add.sg_list = sg;
  w[2].tm.add.num_sge = 2;
  EXPECT_EQ(post1(&w[2]), EINVAL);
  EXPECT_EQ(be->doorbells_at(db()).size(), 1u);
  EXPECT_EQ(add(5), 0u);  // the refused ADD took no handle
}

// ---- completions ----------------------------------------------------------------------------

TEST_F(TmTest, MatchedCompletions) {
  uint32_t h0 = add(500, 0x10);
  uint32_t h1 = add(501, 0x11);
  nic_listop(hwif::wc_op::TM_ADD, 1500, 0, 0);
  nic_listop(hwif::wc_op::TM_ADD, 1501, 1, 1);
  poll_listop(IBV_WC_TM_ADD, 1500);
  poll_listop(IBV_WC_TM_ADD, 1501);
  // Single-packet eager: one CQE, MATCH | DATA_VALID, the tag's recv_wr_id, TMH info.
  nic_match(uint16_t(h0), hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID, 1008,
            0xAAAABBBBCCCCDDDDull);
  Polled p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(p.status, IBV_WC_SUCCESS);
  EXPECT_EQ(p.wr_id, 500u);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
  EXPECT_EQ(p.byte_len, 1008u);
  EXPECT_EQ(p.qp_num, 9u);
  EXPECT_EQ(p.tm.tag, 0xAAAABBBBCCCCDDDDull);
  EXPECT_EQ(p.tm.priv, 0xC0FFEEu);
  // Multi-packet: MATCH first (it names the tag), then DATA_VALID with immediate data (as mlx5's
  // second completion, it carries no TMH: tm_info reads 0 whatever the CQE holds).
  nic_match(uint16_t(h1), hwif::wc_flag::TM_MATCH, 0, 0x11);
  nic_match(uint16_t(h1), hwif::wc_flag::TM_DATA_VALID | hwif::wc_flag::WITH_IMM, 70000, 0x11);
  p = poll();
  EXPECT_EQ(p.wr_id, 501u);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_MATCH));
  EXPECT_EQ(p.byte_len, 0u);
  EXPECT_EQ(p.tm.tag, 0x11u);
  p = poll();
  EXPECT_EQ(p.wr_id, 501u);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_DATA_VALID | IBV_WC_WITH_IMM));
  EXPECT_EQ(p.byte_len, 70000u);
  EXPECT_EQ(p.tm.tag, 0u);
  EXPECT_EQ(p.tm.priv, 0u);
  // Both handles are free again; a completion for a handle that expects none is GENERAL_ERR, as
  // is one for a handle outside the list.
  nic_match(uint16_t(h0), hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID);
  p = poll();
  EXPECT_EQ(p.status, IBV_WC_GENERAL_ERR);
  EXPECT_EQ(p.wr_id, 0u);
  nic_match(0xFFFF, hwif::wc_flag::TM_DATA_VALID);
  p = poll();
  EXPECT_EQ(p.status, IBV_WC_GENERAL_ERR);

  // Rendezvous without offload: TMH+RVH in the buffer, status RNDV_INCOMPLETE, tag released.
  uint32_t h = add(502, 0x12, 0);
  nic_match(uint16_t(h), hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID, 65536, 0x12,
            hwif::wc_status::TM_RNDV_INCOMPLETE);
  p = poll();
  EXPECT_EQ(p.status, IBV_WC_TM_RNDV_INCOMPLETE);
  EXPECT_EQ(p.wr_id, 502u);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID));
  EXPECT_EQ(p.byte_len, 65536u);
  EXPECT_EQ(p.tm.tag, 0x12u);
  // An error (buffer too small) also ends the tag.
  uint32_t h2 = add(503, 0x13, 0);
  nic_match(uint16_t(h2), hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID, 10, 0x13,
            hwif::wc_status::LOC_LEN_ERR);
  p = poll();
  EXPECT_EQ(p.status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(p.wr_id, 503u);
  // All four tags are free: four unsignaled ADDs fit, a fifth does not.
  for (int i = 0; i < 4; i++) add(600 + i, 1, 0);
  struct ibv_ops_wr x = add_op(1, 2, 3, 0);
  EXPECT_EQ(post1(&x), ENOMEM);

  // The legacy poll path reports the same.
  nic_match(0, hwif::wc_flag::TM_MATCH, 0, 0x99);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 1);
  EXPECT_EQ(wc.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(wc.wr_id, 600u);
  EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_TM_MATCH));
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

TEST_F(TmTest, UnexpectedAndNoTagUseSrqBuffersAndAskForSyncAtTheGap) {
  struct ibv_sge sge = {0x8000, 1024, 0x100};
  std::vector<struct ibv_recv_wr> rw(7);
  for (int i = 0; i < 7; i++) {
    rw[i].wr_id = 40 + i;
    rw[i].sg_list = &sge;
    rw[i].num_sge = 1;
    rw[i].next = i < 6 ? &rw[i + 1] : nullptr;
  }
  struct ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(tmnic::post_srq_recv(srq, rw.data(), &rbad), 0);
  EXPECT_EQ(to_tsrq(srq)->wq.outstanding(), 7u);

  CqeFields f;
  f.opcode = hwif::wc_op::TM_RECV;
  f.wr_id = 40;
  f.byte_len = 1024;
  f.tm_tag = 0x1234;  // whatever the CQE says: no tm_info for an unexpected message
  nic(f);
  Polled p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(p.wr_id, 40u);
  EXPECT_EQ(p.flags, 0u);
  EXPECT_EQ(p.byte_len, 1024u);  // the whole message, TMH included
  EXPECT_EQ(p.tm.tag, 0u);
  EXPECT_EQ(p.tm.priv, 0u);
  EXPECT_EQ(to_tsrq(srq)->wq.outstanding(), 6u);

  nic_unexpected(41, 1, hwif::wc_op::TM_NO_TAG);
  p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_TM_NO_TAG);
  EXPECT_EQ(p.wr_id, 41u);
  EXPECT_EQ(p.flags, 0u);
  EXPECT_EQ(p.tm.tag, 0u);
  EXPECT_EQ(to_tsrq(srq)->wq.outstanding(), 5u);

  // 1 unexpected so far (NO_TAG does not count). SYNC_REQ comes with the unexpected message that
  // makes the gap exceed 0x3fff: number 0x4000.
  for (uint32_t n = 2; n <= 0x4000; n++) {
    nic_unexpected(n, 0);
    p = poll();
    ASSERT_EQ(p.flags, n == 0x4000 ? unsigned(IBV_WC_TM_SYNC_REQ) : 0u) << n;
  }
  // An explicit SYNC reporting 0x3fff handled leaves a gap of 2 (mlx5 would only learn the count
  // from an ADD).
  struct ibv_ops_wr w = sync_op(27, 0x3fff);
  ASSERT_EQ(post1(&w), 0);
  nic_listop(hwif::wc_op::TM_SYNC, 27, 0, 0, 0x4000);
  poll_listop(IBV_WC_TM_SYNC, 27);
  nic_unexpected(7, 0);
  EXPECT_EQ(poll().flags, 0u);
  // A count behind by 0x4000 again asks again.
  w = sync_op(28, 0x1, IBV_OPS_TM_SYNC);
  ASSERT_EQ(post1(&w), 0);
  nic_unexpected(8, 0);
  EXPECT_EQ(poll().flags, unsigned(IBV_WC_TM_SYNC_REQ));
}

TEST_F(TmTest, ListOpSyncReqWhenHardwareCountDiffersFromTheTagsPhase) {
  // Added with no count reported (phase 0); the NIC has seen 1 unexpected message.
  add(1, 1);
  nic_listop(hwif::wc_op::TM_ADD, 1001, 0, 0, 1);
  poll_listop(IBV_WC_TM_ADD, 1001, IBV_WC_TM_SYNC_REQ);
  // Added in phase (16-bit counts: 0x10001 is 1 to the NIC).
  struct ibv_ops_wr w = add_op(2, 2, 2, IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC);
  w.tm.unexpected_cnt = 0x10001;
  ASSERT_EQ(post1(&w), 0);
  nic_listop(hwif::wc_op::TM_ADD, 2, 1, 1, 1);
  poll_listop(IBV_WC_TM_ADD, 2);
  // A DEL reports the deleted tag's phase: tag 0 still out of phase.
  struct ibv_ops_wr d = del_op(3, 0);
  ASSERT_EQ(post1(&d), 0);
  nic_listop(hwif::wc_op::TM_DEL, 3, 2, 0, 1);
  poll_listop(IBV_WC_TM_DEL, 3, IBV_WC_TM_SYNC_REQ);
  d = del_op(4, 1);
  ASSERT_EQ(post1(&d), 0);
  nic_listop(hwif::wc_op::TM_DEL, 4, 3, 1, 1);
  poll_listop(IBV_WC_TM_DEL, 4);
  // The legacy path computes it too.
  add(5, 5);
  nic_listop(hwif::wc_op::TM_ADD, 1005, 4, 0, 9);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(ibv_cq_ex_to_cq(cq), 1, &wc), 1);
  EXPECT_EQ(wc.opcode, IBV_WC_TM_ADD);
  EXPECT_EQ(wc.wr_id, 1005u);
  EXPECT_EQ(wc.wc_flags, unsigned(IBV_WC_TM_SYNC_REQ));
}

TEST_F(TmTest, DestroyDropsUnpolledTmCqesAndQpDestroyKeepsThem) {
  struct ibv_qp_init_attr qa = {};
  qa.send_cq = ibv_cq_ex_to_cq(cq);
  qa.recv_cq = ibv_cq_ex_to_cq(cq);
  qa.srq = srq;
  qa.qp_type = IBV_QPT_RC;
  struct ibv_qp* qp = tmnic::create_qp(pd, &qa);  // zero caps, as pyverbs' TM server QP
  ASSERT_NE(qp, nullptr);
  struct ibv_recv_wr rw = {};
  struct ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(tmnic::post_srq_recv(srq, &rw, &rbad), 0);
  CqeFields f;
  f.opcode = hwif::wc_op::TM_RECV;
  f.qp_num = qp->qp_num;
  f.wr_id = 66;
  nic(f);
  ASSERT_EQ(tmnic::destroy_qp(qp), 0);  // the SRQ's completion stays
  Polled p = poll();
  EXPECT_EQ(p.wr_id, 66u);
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(to_tsrq(srq)->wq.outstanding(), 0u);

  add(1, 1);
  nic_listop(hwif::wc_op::TM_ADD, 1001, 0, 0);
  f = CqeFields();
  f.opcode = hwif::wc_op::SEND;
  f.qp_num = 77;
  f.wr_id = 5;
  nic(f);
  nic_match(0, hwif::wc_flag::TM_MATCH);
  ASSERT_EQ(tmnic::destroy_srq(srq), 0);
  srq = nullptr;
  p = poll();
  EXPECT_EQ(p.wr_id, 5u);
  EXPECT_EQ(p.opcode, IBV_WC_SEND);
  EXPECT_TRUE(cq_empty());
}

// ---- rendezvous offload (TM_CAPS.RC) --------------------------------------------------------

class TmRndvTest : public TmTest {
 protected:
  TmRndvTest() { tm_caps_reg = 1; }
  // An RC QP on the fixture's TM-SRQ; max_send_wr 0 makes it a rendezvous QP.
  struct ibv_qp* tm_qp(uint32_t send_wr, struct ibv_cq* scq = nullptr) {
    struct ibv_qp_init_attr a = {};
    a.send_cq = scq ? scq : ibv_cq_ex_to_cq(cq);
    a.recv_cq = ibv_cq_ex_to_cq(cq);
    a.srq = srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = send_wr;
    a.cap.max_send_sge = 1;
    struct ibv_qp* q = tmnic::create_qp(pd, &a);
    EXPECT_NE(q, nullptr);
    if (q) {
      EXPECT_TRUE(send_wr ? a.cap.max_send_wr >= send_wr : a.cap.max_send_wr == 0) << a.cap.max_send_wr;
    }
    return q;
  }
  Command last_set_qp(struct ibv_qp* q) {
    Command last;
    for (const auto& c : be->commands_with(hwif::cmd::SET_QP))
      if (c.index == q->qp_num) last = c;
    return last;
  }
  // The NIC's internal send-side CQE of rendezvous QP `q` for tag handle h.
  void nic_internal(struct ibv_qp* q, uint16_t h, bool fin, uint8_t status, uint8_t opcode = hwif::wc_op::RDMA_READ) {
    CqeFields f;
    f.opcode = opcode;
    f.status = status;
    f.wr_id = uint64_t(hwif::RNDV_WRID_MARK) << 56 | (fin ? 1ull << hwif::RNDV_WRID_FIN_BIT : 0) | h;
    f.qp_num = q->qp_num;
    f.wqe_idx = fin ? 1 : 0;
    nic(f);
  }
  int expect_cqe(uint32_t h) const { return to_tsrq(srq)->tm->tags[h].expect_cqe; }
};

TEST_F(TmRndvTest, RendezvousQpHasTheNicsSendQueueAndNoHostRing) {
  struct ibv_cq* user_scq = make_cq(15);
  struct ibv_qp* q = tm_qp(0, user_scq);
  ASSERT_NE(q, nullptr);
  namespace qa = hwif::cmd::set_qp;
  Command c = last_set_qp(q);
  const uint64_t base = uint64_t(c.args[qa::SQ_BASE_HI]) << 32 | c.args[qa::SQ_BASE_LO];
  EXPECT_EQ(base, (1ull << hwif::NIC_SPACE_BIT) + (uint64_t(q->qp_num) << hwif::RNDV_QP_SHIFT));
  EXPECT_EQ(c.args[qa::SQ_LOG_SIZE], hwif::RNDV_SQ_LOG);
  EXPECT_EQ(c.args[qa::SEND_CQ], to_tcq(cq)->cqn);  // the TM-SRQ's CQ, not the one given
  EXPECT_EQ(c.args[qa::RECV_CQ], to_tcq(cq)->cqn);
  EXPECT_EQ(c.args[qa::SRQ], to_tsrq(srq)->srqn);
  EXPECT_EQ(be->mappings.count(base), 0u);
  EXPECT_EQ(to_tqp(q)->sq.buf.data(), nullptr);
  // The context keeps these through every transition.
  to_rts(q);
  c = last_set_qp(q);
  EXPECT_EQ(uint64_t(c.args[qa::SQ_BASE_HI]) << 32 | c.args[qa::SQ_BASE_LO], base);
  EXPECT_EQ(c.args[qa::SQ_LOG_SIZE], hwif::RNDV_SQ_LOG);
  EXPECT_EQ(c.args[qa::SEND_CQ], to_tcq(cq)->cqn);
  struct ibv_qp_attr qa2;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(tmnic::query_qp(q, &qa2, IBV_QP_CAP, &qi), 0);
  EXPECT_EQ(qa2.cap.max_send_wr, 0u);
  // No send queue: posting fails as on any QP without one, and rings no doorbell.
  size_t writes = be->doorbells.size();
  struct ibv_send_wr wr = {};
  wr.opcode = IBV_WR_SEND;
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(tmnic::post_send(q, &wr, &bad), ENOMEM);
  EXPECT_EQ(bad, &wr);
  EXPECT_EQ(be->doorbells.size(), writes);
  // RESET and back keeps the NIC's queue.
  struct ibv_qp_attr r = {};
  r.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(tmnic::modify_qp(q, &r, IBV_QP_STATE), 0);
  c = last_set_qp(q);
  EXPECT_EQ(uint64_t(c.args[qa::SQ_BASE_HI]) << 32 | c.args[qa::SQ_BASE_LO], base);
  EXPECT_EQ(tmnic::destroy_qp(q), 0);

  // With a send queue of its own, a QP on the TM-SRQ is an ordinary one (RNDV not offloaded).
  struct ibv_qp* o = tm_qp(4, user_scq);
  ASSERT_NE(o, nullptr);
  c = last_set_qp(o);
  EXPECT_EQ(uint64_t(c.args[qa::SQ_BASE_HI]) << 32 | c.args[qa::SQ_BASE_LO], to_tqp(o)->sq.buf.iova());
  EXPECT_EQ(c.args[qa::SEND_CQ], to_tcq(user_scq)->cqn);
  EXPECT_FALSE(to_tqp(o)->rndv);
  EXPECT_EQ(tmnic::destroy_qp(o), 0);
  EXPECT_EQ(tmnic::destroy_cq(user_scq), 0);
}

TEST_F(TmTest, NoRendezvousQpWithoutTmCapsRc) {
  struct ibv_qp_init_attr a = {};
  a.send_cq = a.recv_cq = ibv_cq_ex_to_cq(cq);
  a.srq = srq;
  a.qp_type = IBV_QPT_RC;
  struct ibv_qp* q = tmnic::create_qp(pd, &a);
  ASSERT_NE(q, nullptr);
  EXPECT_FALSE(to_tqp(q)->rndv);
  Command last;
  for (const auto& c : be->commands_with(hwif::cmd::SET_QP))
    if (c.index == q->qp_num) last = c;
  namespace qa = hwif::cmd::set_qp;
  EXPECT_EQ(uint64_t(last.args[qa::SQ_BASE_HI]) << 32 | last.args[qa::SQ_BASE_LO], to_tqp(q)->sq.buf.iova());
  EXPECT_EQ(tmnic::destroy_qp(q), 0);
}

TEST_F(TmRndvTest, MatchThenDataValidReleaseTheTagOnce) {
  struct ibv_qp* q = tm_qp(0);
  ASSERT_NE(q, nullptr);
  uint32_t h = add(7, 0x1234);
  nic_listop(hwif::wc_op::TM_ADD, 1007, 0, uint16_t(h));
  poll_listop(IBV_WC_TM_ADD, 1007);
  EXPECT_EQ(expect_cqe(h), 1);
  nic_match(uint16_t(h), hwif::wc_flag::TM_MATCH, 0, 0x1234);
  Polled p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_MATCH));
  EXPECT_EQ(p.wr_id, 7u);
  EXPECT_EQ(p.tm.tag, 0x1234u);
  EXPECT_EQ(p.tm.priv, 0xC0FFEEu);
  EXPECT_EQ(expect_cqe(h), 1);  // MATCH alone does not end the consumption
  nic_match(uint16_t(h), hwif::wc_flag::TM_DATA_VALID, 4096, 0x1234);
  p = poll();
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_DATA_VALID));
  EXPECT_EQ(p.wr_id, 7u);
  EXPECT_EQ(p.byte_len, 4096u);
  EXPECT_EQ(p.tm.tag, 0u);  // the second completion carries no TMH (mlx5; pyverbs test_tm_rndv)
  EXPECT_EQ(p.tm.priv, 0u);
  EXPECT_EQ(p.status, IBV_WC_SUCCESS);
  EXPECT_EQ(expect_cqe(h), 0);  // free again
  EXPECT_TRUE(cq_empty());
  EXPECT_EQ(tmnic::destroy_qp(q), 0);
}

TEST_F(TmRndvTest, ReadErrorBecomesTheTagsCompletionAndFinIsSilentExtendedCq) {
  struct ibv_qp* q = tm_qp(0);
  ASSERT_NE(q, nullptr);
  uint32_t h = add(42, 0xABCD, 0);  // unsignaled ADD: one expected CQE
  nic_match(uint16_t(h), hwif::wc_flag::TM_MATCH, 0, 0xABCD);
  EXPECT_EQ(poll().flags, unsigned(IBV_WC_TM_MATCH));
  // A FIN flush (of an earlier rendezvous) before the READ's error: never seen.
  nic_internal(q, 3, true, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  nic_internal(q, uint16_t(h), false, hwif::wc_status::REM_ACCESS_ERR);
  nic_internal(q, uint16_t(h), true, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  Polled p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(p.status, IBV_WC_REM_ACCESS_ERR);
  EXPECT_EQ(p.wr_id, 42u);
  EXPECT_EQ(p.flags, unsigned(IBV_WC_TM_DATA_VALID));
  EXPECT_EQ(p.tm.tag, 0xABCDu);  // the posted tag
  EXPECT_EQ(p.tm.priv, 0u);
  EXPECT_EQ(p.qp_num, q->qp_num);
  EXPECT_EQ(expect_cqe(h), 0);
  EXPECT_TRUE(cq_empty());  // the trailing FIN flush was consumed unseen
  EXPECT_EQ(to_tcq(cq)->ci, produced);
  // The doorbell told the NIC every CQE was consumed, the silent ones included.
  EXPECT_EQ(be->doorbells.back().off, hwif::reg::DB_CQ0 + 4 * to_tcq(cq)->cqn);
  EXPECT_EQ(be->doorbells.back().val & 0xFFFF, produced);
  EXPECT_EQ(tmnic::destroy_qp(q), 0);
}

TEST_F(TmRndvTest, ReadErrorAndSilentFinThroughIbvPollCq) {
  struct ibv_qp* q = tm_qp(0);
  ASSERT_NE(q, nullptr);
  uint32_t h1 = add(1, 0x11, 0), h2 = add(2, 0x22, 0);
  nic_internal(q, uint16_t(h1), true, hwif::wc_status::RETRY_EXC_ERR, hwif::wc_op::SEND);
  nic_internal(q, uint16_t(h2), false, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  nic_internal(q, 9, true, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  struct ibv_wc wc[4];
  std::memset(wc, 0, sizeof(wc));
  ASSERT_EQ(tmnic::poll_cq(ibv_cq_ex_to_cq(cq), 4, wc), 1);
  EXPECT_EQ(wc[0].opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].wc_flags, unsigned(IBV_WC_TM_DATA_VALID));
  EXPECT_EQ(wc[0].qp_num, q->qp_num);
  EXPECT_EQ(expect_cqe(h2), 0);
  EXPECT_EQ(expect_cqe(h1), 1);  // a FIN's CQE releases nothing
  EXPECT_EQ(tmnic::poll_cq(ibv_cq_ex_to_cq(cq), 4, wc), 0);
  EXPECT_EQ(to_tcq(cq)->ci, produced);
  // Only FINs left: start_poll consumes them and reports an empty CQ.
  nic_internal(q, uint16_t(h1), true, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  EXPECT_TRUE(cq_empty());
  EXPECT_EQ(to_tcq(cq)->ci, produced);
  // A READ error for a handle that holds no tag: GENERAL_ERR, as mlx5 for an unknown index.
  nic_internal(q, 15, false, hwif::wc_status::REM_ACCESS_ERR);
  Polled p = poll();
  EXPECT_EQ(p.status, IBV_WC_GENERAL_ERR);
  EXPECT_EQ(p.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(tmnic::destroy_qp(q), 0);
}

TEST_F(TmRndvTest, OrdinaryQpsSendCompletionsOnTheTmCqAreNotTouched) {
  // A QP with its own send queue whose send CQ is the TM-SRQ's: even a wr_id that looks like the
  // NIC's internal one is the application's.
  struct ibv_qp* o = tm_qp(4);
  ASSERT_NE(o, nullptr);
  const uint64_t wr_id = uint64_t(hwif::RNDV_WRID_MARK) << 56 | 1ull << hwif::RNDV_WRID_FIN_BIT | 2;
  CqeFields f;
  f.opcode = hwif::wc_op::SEND;
  f.wr_id = wr_id;
  f.qp_num = o->qp_num;
  nic(f);
  Polled p = poll();
  EXPECT_EQ(p.opcode, IBV_WC_SEND);
  EXPECT_EQ(p.wr_id, wr_id);
  EXPECT_EQ(p.flags, 0u);
  EXPECT_EQ(tmnic::destroy_qp(o), 0);
}

TEST_F(TmRndvTest, DestroyDropsInternalCompletionsAndReleasesTheirTags) {
  struct ibv_qp* q = tm_qp(0);
  ASSERT_NE(q, nullptr);
  uint32_t h = add(5, 0x55, 0);
  nic_internal(q, uint16_t(h), false, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  nic_internal(q, uint16_t(h), true, hwif::wc_status::WR_FLUSH_ERR, hwif::wc_op::SEND);
  EXPECT_EQ(expect_cqe(h), 1);
  EXPECT_EQ(tmnic::destroy_qp(q), 0);
  EXPECT_EQ(expect_cqe(h), 0);
  EXPECT_TRUE(cq_empty());
}

// ---- capabilities ---------------------------------------------------------------------------

TEST_F(DriverTest, TmCapsFollowTheRegisters) {
  auto caps = [&]() {
    struct ibv_device_attr_ex ax;
    std::memset(&ax, 0xA5, sizeof(ax));
    EXPECT_EQ(tmnic::query_device_ex(ctx, nullptr, &ax, sizeof(ax)), 0);
    return ax.tm_caps;
  };
  struct ibv_tm_caps c = caps();  // TM_MAX_TAGS = 0: no tag matching at all
  EXPECT_EQ(c.max_num_tags, 0u);
  EXPECT_EQ(c.max_ops, 0u);
  EXPECT_EQ(c.max_sge, 0u);
  EXPECT_EQ(c.flags, 0u);
  EXPECT_EQ(c.max_rndv_hdr_size, 0u);

  ASSERT_EQ(tmnic::free_context(ctx), 0);
  fake::Config cfg;
  cfg.tm_max_tags = 1024;
  cfg.tm_caps = 0x0800;  // sequence bits only: no rendezvous offload
  open(cfg);
  c = caps();
  EXPECT_EQ(c.max_num_tags, 1024u);
  EXPECT_EQ(c.max_ops, 1u << 15);
  EXPECT_EQ(c.max_sge, 1u);
  EXPECT_EQ(c.flags, 0u);
  EXPECT_EQ(c.max_rndv_hdr_size, 0u);
  // No override any more: the environment variable the driver once read changes nothing.
  setenv("TMNIC_TM_CAP_RC", "1", 1);
  EXPECT_EQ(caps().flags, 0u);
  unsetenv("TMNIC_TM_CAP_RC");

  ASSERT_EQ(tmnic::free_context(ctx), 0);
  cfg.tm_max_tags = 100000;  // more than a 16-bit handle can name: one SRQ gets 65536
  cfg.tm_caps = 0x0801;      // TM_CAPS.RC
  open(cfg);
  c = caps();
  EXPECT_EQ(c.max_num_tags, 65536u);
  EXPECT_EQ(c.flags, uint32_t(IBV_TM_CAP_RC));
  EXPECT_EQ(c.max_rndv_hdr_size, hwif::MAX_RNDV_HDR);
}

}  // namespace
}  // namespace tmnic::test
