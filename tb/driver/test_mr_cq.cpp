// Memory registration and completion queues.
#include <sys/eventfd.h>
#include <unistd.h>

#include <vector>

#include "driver_test.hpp"

namespace tmnic::test {
namespace {

namespace m = hwif::cmd::set_mr;

TEST_F(DriverTest, RegMrProgramsTableAndDeregInvalidatesBeforeUnmap) {
  struct ibv_pd* pd = make_pd();
  std::vector<uint8_t> buf(8192);
  unsigned acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  struct ibv_mr* mr = tmnic::reg_mr(pd, buf.data(), buf.size(), 0x10000, acc);
  ASSERT_NE(mr, nullptr);
  auto sets = be->commands_with(hwif::cmd::SET_MR);
  ASSERT_EQ(sets.size(), 1u);
  const auto& c = sets[0];
  uint32_t index = c.index;
  EXPECT_EQ(mr->lkey, index << hwif::MR_KEY_SHIFT | 1u);  // generation 1
  EXPECT_EQ(mr->rkey, mr->lkey);
  EXPECT_EQ(c.args[m::KEY], mr->lkey);
  EXPECT_EQ(uint64_t(c.args[m::VA_HI]) << 32 | c.args[m::VA_LO], 0x10000u);  // the iova
  EXPECT_EQ(uint64_t(c.args[m::LEN_HI]) << 32 | c.args[m::LEN_LO], buf.size());
  uint64_t dma = uint64_t(c.args[m::IOVA_HI]) << 32 | c.args[m::IOVA_LO];
  EXPECT_EQ(dma, uintptr_t(buf.data()));  // fake maps by identity
  EXPECT_EQ(be->mappings.count(dma), 1u);
  EXPECT_EQ(c.args[m::PD], to_tpd(pd)->pdn);
  EXPECT_EQ(c.args[m::ACCESS], 7u);
  EXPECT_EQ(c.args[m::VALID], 1u);
  EXPECT_EQ(tmnic::dealloc_pd(pd), EBUSY);  // the MR still uses it

  ASSERT_EQ(tmnic::dereg_mr(mr), 0);
  sets = be->commands_with(hwif::cmd::SET_MR);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[1].index, index);
  EXPECT_EQ(sets[1].args[m::VALID], 0u);
  EXPECT_TRUE(be->mappings.empty());
  EXPECT_EQ(be->bad_unmaps, 0);

  // The same table entry comes back with the next generation: the old key stays invalid.
  struct ibv_mr* mr2 = tmnic::reg_mr(pd, buf.data(), 64, uintptr_t(buf.data()), 0);
  ASSERT_NE(mr2, nullptr);
  EXPECT_EQ(mr2->lkey, index << hwif::MR_KEY_SHIFT | 2u);
  EXPECT_EQ(tmnic::dereg_mr(mr2), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
}

TEST_F(DriverTest, RegMrRejectsBadAccess) {
  struct ibv_pd* pd = make_pd();
  char buf[64];
  errno = 0;
  EXPECT_EQ(tmnic::reg_mr(pd, buf, sizeof(buf), 0, IBV_ACCESS_REMOTE_WRITE), nullptr);
  EXPECT_EQ(errno, EINVAL);  // remote write needs local write
  EXPECT_EQ(tmnic::reg_mr(pd, buf, sizeof(buf), 0, IBV_ACCESS_REMOTE_ATOMIC | 1), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(tmnic::reg_mr(pd, buf, 0, 0, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  // Optional-range bits (relaxed ordering) may be ignored.
  struct ibv_mr* mr = tmnic::reg_mr(pd, buf, sizeof(buf), 0, IBV_ACCESS_RELAXED_ORDERING);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_TRUE(be->mappings.empty());
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
}

// The fields of a SET_MR command, for the rereg tests.
struct MrEntry {
  uint64_t va, len, dma;
  uint32_t key, pd, access, valid;
};
MrEntry entry(const Command& c) {
  return {uint64_t(c.args[m::VA_HI]) << 32 | c.args[m::VA_LO],
          uint64_t(c.args[m::LEN_HI]) << 32 | c.args[m::LEN_LO],
          uint64_t(c.args[m::IOVA_HI]) << 32 | c.args[m::IOVA_LO],
          c.args[m::KEY],
          c.args[m::PD],
          c.args[m::ACCESS],
          c.args[m::VALID]};
}

TEST_F(DriverTest, ReregMrChangeAccessRewritesEntryKeepingKey) {
  struct ibv_pd* pd = make_pd();
  std::vector<uint8_t> buf(4096);
  struct ibv_mr* mr = tmnic::reg_mr(pd, buf.data(), buf.size(), 0x5000, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  uint32_t key = mr->lkey;
  auto before = entry(be->commands_with(hwif::cmd::SET_MR).back());
  ASSERT_EQ(tmnic::rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                            IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                IBV_ACCESS_RELAXED_ORDERING),
            0);
  auto sets = be->commands_with(hwif::cmd::SET_MR);
  ASSERT_EQ(sets.size(), 2u);
  auto e = entry(sets[1]);
  EXPECT_EQ(sets[1].index, sets[0].index);
  EXPECT_EQ(e.va, 0x5000u);  // the iova of the registration stays
  EXPECT_EQ(e.len, before.len);
  EXPECT_EQ(e.dma, before.dma);
  EXPECT_EQ(e.key, key);
  EXPECT_EQ(e.pd, before.pd);
  EXPECT_EQ(e.access, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  EXPECT_EQ(e.valid, 1u);
  EXPECT_EQ(mr->lkey, key);
  EXPECT_EQ(mr->rkey, key);
  EXPECT_EQ(mr->addr, buf.data());
  EXPECT_EQ(mr->length, buf.size());
  EXPECT_EQ(be->mappings.size(), 1u);  // no new mapping, none dropped

  // A later PD-only change keeps the new access.
  struct ibv_pd* pd2 = make_pd();
  ASSERT_EQ(tmnic::rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, nullptr, 0, 0), 0);
  e = entry(be->commands_with(hwif::cmd::SET_MR).back());
  EXPECT_EQ(e.access, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  EXPECT_EQ(e.pd, to_tpd(pd2)->pdn);
  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_TRUE(be->mappings.empty());
  EXPECT_EQ(be->bad_unmaps, 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd2), 0);
}

TEST_F(DriverTest, ReregMrChangePdMovesUseCount) {
  struct ibv_pd* pd = make_pd();
  struct ibv_pd* pd2 = make_pd();
  char buf[256];
  struct ibv_mr* mr = tmnic::reg_mr(pd, buf, sizeof(buf), uintptr_t(buf), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(to_tpd(pd)->usecnt, 1);
  ASSERT_EQ(tmnic::rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, nullptr, 0, 0), 0);
  auto e = entry(be->commands_with(hwif::cmd::SET_MR).back());
  EXPECT_EQ(e.pd, to_tpd(pd2)->pdn);
  EXPECT_EQ(e.access, unsigned(IBV_ACCESS_LOCAL_WRITE));
  EXPECT_EQ(e.va, uintptr_t(buf));
  EXPECT_EQ(mr->pd, pd2);
  EXPECT_EQ(to_tpd(pd)->usecnt, 0);
  EXPECT_EQ(to_tpd(pd2)->usecnt, 1);
  EXPECT_EQ(tmnic::dealloc_pd(pd2), EBUSY);  // the MR now uses pd2
  // The same PD again: counts unchanged.
  ASSERT_EQ(tmnic::rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, nullptr, 0, 0), 0);
  EXPECT_EQ(to_tpd(pd2)->usecnt, 1);
  // The old PD is free once the MR has left it.
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_EQ(to_tpd(pd2)->usecnt, 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd2), 0);
}

TEST_F(DriverTest, ReregMrChangeTranslationMapsFirstUnmapsAfterCommand) {
  struct ibv_pd* pd = make_pd();
  std::vector<uint8_t> a(4096), b(8192);
  unsigned acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  struct ibv_mr* mr = tmnic::reg_mr(pd, a.data(), a.size(), 0x7000, acc);
  ASSERT_NE(mr, nullptr);
  uint32_t key = mr->lkey;
  uint64_t old_dma = uintptr_t(a.data()), new_dma = uintptr_t(b.data());
  // While the SET_MR executes, both ranges are mapped: the new one is there for the NIC, the old
  // one may still be in use until the command completes.
  int seen = 0;
  be->on_command = [&](const Command& c) {
    if (c.opcode != hwif::cmd::SET_MR) return;
    seen++;
    EXPECT_EQ(be->mappings.count(old_dma), 1u);
    EXPECT_EQ(be->mappings.count(new_dma), 1u);
  };
  ASSERT_EQ(tmnic::rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, b.data(), b.size(), 0),
            0);
  be->on_command = nullptr;
  EXPECT_EQ(seen, 1);
  auto e = entry(be->commands_with(hwif::cmd::SET_MR).back());
  EXPECT_EQ(e.va, uintptr_t(b.data()));  // a new translation's iova is its address
  EXPECT_EQ(e.len, b.size());
  EXPECT_EQ(e.dma, new_dma);
  EXPECT_EQ(e.key, key);
  EXPECT_EQ(e.pd, to_tpd(pd)->pdn);
  EXPECT_EQ(e.access, acc);
  EXPECT_EQ(e.valid, 1u);
  EXPECT_EQ(be->mappings.count(old_dma), 0u);
  EXPECT_EQ(be->mappings.count(new_dma), 1u);
  EXPECT_EQ(mr->addr, b.data());
  EXPECT_EQ(mr->length, b.size());
  EXPECT_EQ(mr->lkey, key);
  EXPECT_EQ(mr->rkey, key);

  // All three at once.
  struct ibv_pd* pd2 = make_pd();
  ASSERT_EQ(tmnic::rereg_mr(mr,
                            IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
                                IBV_REREG_MR_CHANGE_ACCESS,
                            pd2, a.data(), 128, IBV_ACCESS_REMOTE_READ),
            0);
  e = entry(be->commands_with(hwif::cmd::SET_MR).back());
  EXPECT_EQ(e.va, uintptr_t(a.data()));
  EXPECT_EQ(e.len, 128u);
  EXPECT_EQ(e.dma, old_dma);
  EXPECT_EQ(e.key, key);
  EXPECT_EQ(e.pd, to_tpd(pd2)->pdn);
  EXPECT_EQ(e.access, unsigned(IBV_ACCESS_REMOTE_READ));
  EXPECT_EQ(be->mappings.size(), 1u);
  EXPECT_EQ(be->mappings.count(old_dma), 1u);
  EXPECT_EQ(to_tpd(pd)->usecnt, 0);
  EXPECT_EQ(to_tpd(pd2)->usecnt, 1);
  EXPECT_EQ(mr->pd, pd2);
  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_TRUE(be->mappings.empty());
  EXPECT_EQ(be->bad_unmaps, 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd2), 0);
}

TEST_F(DriverTest, ReregMrBadInputChangesNothing) {
  struct ibv_pd* pd = make_pd();
  std::vector<uint8_t> a(4096), b(4096);
  struct ibv_mr* mr = tmnic::reg_mr(pd, a.data(), a.size(), uintptr_t(a.data()),
                                    IBV_ACCESS_LOCAL_WRITE);
  ASSERT_NE(mr, nullptr);
  size_t n = be->commands.size();
  auto rereg = [&](int flags, struct ibv_pd* p, void* addr, size_t len, unsigned acc) {
    return tmnic::rereg_mr(mr, flags, p, addr, len, acc);
  };
  EXPECT_EQ(rereg(0, nullptr, nullptr, 0, 0), EINVAL);                // nothing to change
  EXPECT_EQ(rereg(IBV_REREG_MR_FLAGS_SUPPORTED + 1, nullptr, nullptr, 0, 0), EINVAL);
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_REMOTE_WRITE),
            EINVAL);                                                  // needs LOCAL_WRITE
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, 1u << 12), EINVAL);  // unknown
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0,
                  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC),
            EOPNOTSUPP);
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_ACCESS, nullptr, nullptr, 0, IBV_ACCESS_MW_BIND),
            EOPNOTSUPP);
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_PD, nullptr, nullptr, 0, 0), EINVAL);  // no PD
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, nullptr, 64, 0), EINVAL);
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_TRANSLATION, nullptr, b.data(), 0, 0), EINVAL);
  // A bad part fails the whole call, even with a valid translation.
  EXPECT_EQ(rereg(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, nullptr, b.data(),
                  b.size(), IBV_ACCESS_REMOTE_WRITE),
            EINVAL);
  EXPECT_EQ(be->commands.size(), n);  // no command was issued
  EXPECT_EQ(be->mappings.size(), 1u);
  EXPECT_EQ(mr->addr, a.data());
  EXPECT_EQ(to_tpd(pd)->usecnt, 1);

  // The command fails: the new range is unmapped again, the old one and the MR are untouched.
  struct ibv_pd* pd2 = make_pd();
  be->fail_opcode = hwif::cmd::SET_MR;
  EXPECT_NE(rereg(IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD, pd2, b.data(),
                  b.size(), 0),
            0);
  be->fail_opcode = 0xFFFFFFFF;
  EXPECT_EQ(be->commands_with(hwif::cmd::SET_MR).size(), 2u);
  EXPECT_EQ(be->mappings.size(), 1u);
  EXPECT_EQ(be->mappings.count(uintptr_t(a.data())), 1u);
  EXPECT_EQ(be->bad_unmaps, 0);
  EXPECT_EQ(mr->addr, a.data());
  EXPECT_EQ(mr->length, a.size());
  EXPECT_EQ(mr->pd, pd);
  EXPECT_EQ(to_tpd(pd)->usecnt, 1);
  EXPECT_EQ(to_tpd(pd2)->usecnt, 0);

  EXPECT_EQ(tmnic::dereg_mr(mr), 0);
  EXPECT_TRUE(be->mappings.empty());
  EXPECT_EQ(be->bad_unmaps, 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd2), 0);
}

TEST_F(DriverTest, CreateCqSizesAndSetCq) {
  struct ibv_cq* cq = make_cq(100);  // 100 + 1 -> 128 entries
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->cqe, 127);
  auto sets = be->commands_with(hwif::cmd::SET_CQ);
  ASSERT_EQ(sets.size(), 1u);
  namespace c = hwif::cmd::set_cq;
  EXPECT_EQ(sets[0].args[c::LOG_SIZE], 7u);
  EXPECT_EQ(sets[0].args[c::VALID], 1u);
  uint64_t base = uint64_t(sets[0].args[c::BASE_HI]) << 32 | sets[0].args[c::BASE_LO];
  EXPECT_EQ(base % 4096, 0u);
  EXPECT_EQ(be->mappings.count(base), 1u);
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
  EXPECT_EQ(be->commands_with(hwif::cmd::SET_CQ).back().args[c::VALID], 0u);
  EXPECT_TRUE(be->mappings.empty());

  errno = 0;
  EXPECT_EQ(tmnic::create_cq(ctx, 0, nullptr, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(tmnic::create_cq(ctx, 1 << 15, nullptr, nullptr, 0), nullptr);  // > max_cqe
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(tmnic::create_cq(ctx, 4, nullptr, nullptr, 1), nullptr);  // comp_vector
  EXPECT_EQ(errno, EINVAL);
  cq = make_cq((1 << 15) - 1);  // max_cqe is really creatable
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
}

TEST_F(DriverTest, PollFollowsOwnerBitAcrossWrap) {
  struct ibv_cq* cq = make_cq(3);  // 4 entries
  const uint32_t db = hwif::reg::DB_CQ0 + 4 * to_tcq(cq)->cqn;
  struct ibv_wc wc[8];
  int p0 = be->progress_calls;
  EXPECT_EQ(tmnic::poll_cq(cq, 8, wc), 0);
  EXPECT_EQ(be->progress_calls, p0 + 1);  // empty poll lets the device run
  EXPECT_TRUE(be->doorbells_at(db).empty());

  uint32_t produced = 0, consumed = 0;
  // Three rounds of 3 CQEs: the ring (4 entries) wraps twice, the phase flips each time.
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3; i++) {
      CqeFields f;
      f.wr_id = 1000 + produced;
      f.qp_num = 77;  // no such QP: nothing to reclaim
      f.byte_len = produced;
      f.opcode = hwif::wc_op::RECV;
      f.wc_flags = hwif::wc_flag::WITH_IMM;
      f.imm = 0x11223344;
      nic_write_cqe(cq, produced++, f);
    }
    // Partial poll first, then the rest.
    ASSERT_EQ(tmnic::poll_cq(cq, 2, wc), 2);
    ASSERT_EQ(tmnic::poll_cq(cq, 8, wc + 2), 1);
    for (int i = 0; i < 3; i++, consumed++) {
      EXPECT_EQ(wc[i].wr_id, 1000 + consumed);
      EXPECT_EQ(wc[i].byte_len, consumed);
      EXPECT_EQ(wc[i].opcode, IBV_WC_RECV);
      EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
      EXPECT_EQ(wc[i].qp_num, 77u);
      EXPECT_EQ(wc[i].wc_flags, unsigned(IBV_WC_WITH_IMM));
      uint32_t imm = 0x11223344;
      EXPECT_EQ(std::memcmp(&wc[i].imm_data, &imm, 4), 0);  // raw bytes
    }
    EXPECT_EQ(tmnic::poll_cq(cq, 8, wc), 0);  // stale entries of the old phase are not new
  }
  // One doorbell per poll call that consumed something, carrying the consumer index.
  auto dbs = be->doorbells_at(db);
  ASSERT_EQ(dbs.size(), 6u);
  EXPECT_EQ(dbs[0].val, 2u);
  EXPECT_EQ(dbs[1].val, 3u);
  EXPECT_EQ(dbs.back().val, 9u);
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
}

TEST_F(DriverTest, ExtendedCqPollAndTmInfoAccepted) {
  struct ibv_cq_init_attr_ex a = {};
  a.cqe = 7;
  a.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO;
  struct ibv_cq_ex* cq = tmnic::create_cq_ex(ctx, &a);
  ASSERT_NE(cq, nullptr);
  struct ibv_poll_cq_attr pa = {};
  EXPECT_EQ(ibv_start_poll(cq, &pa), ENOENT);  // no end_poll after ENOENT
  for (uint32_t i = 0; i < 2; i++) {
    CqeFields f;
    f.wr_id = 50 + i;
    f.qp_num = 99;
    f.opcode = hwif::wc_op::RECV;
    f.tm_tag = 0xABCDEF0123456789ull + i;
    f.tm_app_ctx = 0x5555 + i;
    f.byte_len = 7;
    nic_write_cqe(ibv_cq_ex_to_cq(cq), i, f);
  }
  ASSERT_EQ(ibv_start_poll(cq, &pa), 0);
  EXPECT_EQ(cq->wr_id, 50u);
  EXPECT_EQ(cq->status, IBV_WC_SUCCESS);
  EXPECT_EQ(ibv_wc_read_opcode(cq), IBV_WC_RECV);
  EXPECT_EQ(ibv_wc_read_byte_len(cq), 7u);
  EXPECT_EQ(ibv_wc_read_qp_num(cq), 99u);
  // TM information belongs to matched tag completions only (test_tm.cpp): zero here, whatever
  // the CQE's TM fields hold.
  struct ibv_wc_tm_info tm;
  ibv_wc_read_tm_info(cq, &tm);
  EXPECT_EQ(tm.tag, 0u);
  EXPECT_EQ(tm.priv, 0u);
  ASSERT_EQ(ibv_next_poll(cq), 0);
  EXPECT_EQ(cq->wr_id, 51u);
  ibv_wc_read_tm_info(cq, &tm);
  EXPECT_EQ(tm.priv, 0u);
  EXPECT_EQ(ibv_next_poll(cq), ENOENT);
  ibv_end_poll(cq);
  auto dbs = be->doorbells_at(hwif::reg::DB_CQ0 + 4 * to_tcq(cq)->cqn);
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 2u);
  EXPECT_EQ(ibv_start_poll(cq, &pa), ENOENT);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq)), 0);

  a.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
  errno = 0;
  EXPECT_EQ(tmnic::create_cq_ex(ctx, &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(DriverTest, ArmedCqDeliversOneEvent) {
  struct ibv_comp_channel ch = {};
  ch.context = ctx;
  ch.fd = -1;
  struct ibv_cq* cq = tmnic::create_cq(ctx, 7, this, &ch, 0);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(ch.refcnt, 1);
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), nullptr);  // not armed, nothing there
  ASSERT_EQ(tmnic::req_notify_cq(cq, 0), 0);
  auto dbs = be->doorbells_at(hwif::reg::DB_CQ0 + 4 * to_tcq(cq)->cqn);
  ASSERT_EQ(dbs.size(), 1u);
  EXPECT_EQ(dbs[0].val, 1u << 31);  // arm bit, ci 0
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), nullptr);
  nic_write_cqe(cq, 0, CqeFields());
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), cq);
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), nullptr);  // disarmed by the event
  tmnic::ack_cq_events(cq, 1);
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
  EXPECT_EQ(ch.refcnt, 0);
}

// An autonomous device (a card; the simulation with its progress thread): the interrupt of a CQ
// makes its channel's eventfd readable, only while the CQ has a channel; arming a CQ with a
// completion already waiting signals the fd at once; after destroy the handler no longer writes
// to the (possibly reused) fd.
TEST_F(DriverTest, InterruptSignalsTheCompletionChannelFd) {
  fake::Config cfg;
  cfg.autonomous = true;
  EXPECT_EQ(tmnic::free_context(ctx), 0);
  open(cfg);
  ASSERT_TRUE(be->irq) << "the driver installed no interrupt handler";
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct ibv_comp_channel ch = {};
  ch.context = ctx;
  ch.fd = fd;
  auto count = [&] {
    uint64_t v = 0;
    return read(fd, &v, sizeof v) == ssize_t(sizeof v) ? v : 0;
  };
  struct ibv_cq* plain = make_cq();
  struct ibv_cq* cq = tmnic::create_cq(ctx, 7, this, &ch, 0);
  ASSERT_NE(cq, nullptr);
  be->irq(to_tcq(plain)->cqn);  // a CQ without a channel: nothing
  EXPECT_EQ(count(), 0u);
  ASSERT_EQ(tmnic::req_notify_cq(cq, 0), 0);
  EXPECT_EQ(count(), 0u) << "armed with nothing waiting: no signal";
  nic_write_cqe(cq, 0, CqeFields());
  be->irq(to_tcq(cq)->cqn);
  EXPECT_EQ(count(), 1u);
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), cq);
  EXPECT_EQ(be->progress_calls, 0) << "an autonomous device needs no progress()";
  tmnic::ack_cq_events(cq, 1);
  ASSERT_EQ(tmnic::req_notify_cq(cq, 0), 0);  // the CQE is still unpolled
  EXPECT_EQ(count(), 1u) << "armed with a completion waiting: signalled at once";
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), cq);
  tmnic::ack_cq_events(cq, 1);
  // One event per interrupt even when the CQE was polled before ibv_get_cq_event looked (the NIC
  // is disarmed by it; losing the event would leave the application waiting for good).
  ASSERT_EQ(tmnic::req_notify_cq(cq, 0), 0);
  EXPECT_EQ(count(), 1u);   // the unpolled CQE again
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), cq);
  tmnic::ack_cq_events(cq, 1);
  struct ibv_wc wc;
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);
  ASSERT_EQ(tmnic::req_notify_cq(cq, 0), 0);
  EXPECT_EQ(count(), 0u);
  nic_write_cqe(cq, 1, CqeFields());
  be->irq(to_tcq(cq)->cqn);
  ASSERT_EQ(tmnic::poll_cq(cq, 1, &wc), 1);   // polled before the event is taken
  EXPECT_EQ(count(), 1u);
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), cq);
  EXPECT_EQ(tmnic::take_cq_event(ctx, &ch), nullptr);
  tmnic::ack_cq_events(cq, 1);
  const uint32_t cqn = to_tcq(cq)->cqn;
  EXPECT_EQ(tmnic::destroy_cq(cq), 0);
  be->irq(cqn);
  EXPECT_EQ(count(), 0u) << "the handler wrote to a destroyed CQ's channel";
  EXPECT_EQ(tmnic::destroy_cq(plain), 0);
  close(fd);
}

}  // namespace
// An application that leaves an extended poll open (an exception between start_poll and end_poll,
// as rdma-core's own TM test does on an error status) must still be able to destroy its QP: the
// clean-up of the QP's CQEs runs on the thread that holds the CQ lock and must not spin on it.
TEST_F(DriverTest, DestroyQpWithExtendedPollLeftOpenDoesNotHang) {
  struct ibv_cq_init_attr_ex a = {};
  a.cqe = 7;
  a.wc_flags = IBV_WC_STANDARD_FLAGS;
  struct ibv_cq_ex* cq = tmnic::create_cq_ex(ctx, &a);
  ASSERT_NE(cq, nullptr);
  struct ibv_pd* pd = make_pd();
  struct ibv_qp* qp = make_qp(pd, ibv_cq_ex_to_cq(cq));
  for (uint32_t i = 0; i < 2; i++) {
    CqeFields f;
    f.wr_id = 70 + i;
    f.qp_num = qp->qp_num;
    f.opcode = hwif::wc_op::SEND;
    nic_write_cqe(ibv_cq_ex_to_cq(cq), i, f);
  }
  struct ibv_poll_cq_attr pa = {};
  ASSERT_EQ(ibv_start_poll(cq, &pa), 0);   // ... and no end_poll
  EXPECT_EQ(tmnic::destroy_qp(qp), 0);
  EXPECT_EQ(tmnic::dealloc_pd(pd), 0);
  EXPECT_EQ(tmnic::destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

}  // namespace tmnic::test
