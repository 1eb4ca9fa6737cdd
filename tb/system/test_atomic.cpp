// Atomics through the verbs API on the simulated NICs (ibv_post_send(3) IBV_WR_ATOMIC_CMP_AND_SWP /
// IBV_WR_ATOMIC_FETCH_AND_ADD, ibv_wr_atomic_* of ibv_qp_ex, ibv_reg_mr(3) REMOTE_ATOMIC,
// qp_access_flags, max_rd_atomic), in loopback and between two NICs: compare-and-swap hit and miss
// and fetch-and-add with every byte of the remote word and of the local result checked (both
// big-endian in memory, as on ConnectX), the bytes around them untouched; concurrent fetch-and-adds
// from several QPs on one counter; atomics interleaved with RDMA WRITEs and READs on one QP
// (ordering, FENCE); the protection rules (wrong rkey, another PD's rkey, an MR or a QP without
// REMOTE_ATOMIC, an unaligned or out-of-range address, a deregistered MR) with the requester's
// status, the responder's async event, both QPs in ERR and the target unchanged; a lost request and
// lost ATOMIC_ACKs: the requester resends, the responder answers the duplicate from its replay
// cache without executing it again.
//
// Every test but AtomicCaps.GatingFollowsOpsCaps skips while the device reports no atomics
// (atomic_cap IBV_ATOMIC_NONE, OPS_CAPS.ATOMIC = 0); with atomics reported they must pass.
#include <set>

#include "system_test.hpp"

namespace {

using namespace sys;

constexpr unsigned kAtomicAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
constexpr unsigned kAllRemote =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// The 8 bytes at p as a big-endian integer, and back.
uint64_t get_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (56 - 8 * i));
}

int post_atomic(const Qp& q, uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge result, uint64_t raddr,
                uint32_t rkey, uint64_t compare_add, uint64_t swap = 0, unsigned flags = IBV_SEND_SIGNALED) {
  struct ibv_send_wr wr = {};
  wr.wr_id = wr_id;
  wr.sg_list = &result;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = flags;
  wr.wr.atomic.remote_addr = raddr;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = compare_add;
  wr.wr.atomic.swap = swap;
  struct ibv_send_wr* bad = nullptr;
  return ibv_post_send(q.qp, &wr, &bad);
}

int post_rdma(const Qp& q, uint64_t wr_id, enum ibv_wr_opcode op, struct ibv_sge s, uint64_t raddr, uint32_t rkey,
              unsigned flags = IBV_SEND_SIGNALED) {
  struct ibv_send_wr wr = {};
  wr.wr_id = wr_id;
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = op;
  wr.send_flags = flags;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  struct ibv_send_wr* bad = nullptr;
  return ibv_post_send(q.qp, &wr, &bad);
}

bool device_has_atomics(struct ibv_context* ctx) {
  struct ibv_device_attr a;
  return ibv_query_device(ctx, &a) == 0 && a.atomic_cap != IBV_ATOMIC_NONE;
}

#define SKIP_WITHOUT_ATOMICS()                                                                                 \
  do {                                                                                                         \
    if (!device_has_atomics(ctx_[0]) || !device_has_atomics(ctx_[1]))                                          \
      GTEST_SKIP() << "the device reports no atomics (atomic_cap IBV_ATOMIC_NONE: OPS_CAPS.ATOMIC is 0 until " \
                      "the RTL executes them)";                                                                \
  } while (0)

class Atomic : public SystemTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    SystemTest::SetUp();
    if (HasFatalFailure()) return;
    SKIP_WITHOUT_ATOMICS();
  }
  int rdev() const { return GetParam(); }  // 0 loopback, 1 second NIC
  // A connected pair whose responder accepts `raccess`; up to max_rd READs/atomics in flight.
  std::pair<Qp, Qp> apair(unsigned raccess = kAtomicAccess, uint8_t max_rd = 4, ConnOpts c = {}) {
    QpOpts so, ro;
    ro.access = raccess;
    c.max_rd_atomic = max_rd;
    return pair(rdev(), so, ro, c);
  }
  // One signaled atomic, polled: its completion.
  struct ibv_wc one(const Qp& s, enum ibv_wr_opcode op, struct ibv_sge res, uint64_t raddr, uint32_t rkey,
                    uint64_t compare_add, uint64_t swap = 0) {
    struct ibv_wc w = {};
    w.status = IBV_WC_GENERAL_ERR;
    EXPECT_EQ(post_atomic(s, 7, op, res, raddr, rkey, compare_add, swap), 0);
    auto wc = poll(s.scq, 1);
    EXPECT_EQ(wc.size(), 1u) << "no completion";
    return wc.empty() ? w : wc[0];
  }
};

// Compare-and-swap: a hit swaps, a miss does not; both return the original value. Bytes checked
// one by one (big-endian in memory on both sides), the bytes around untouched.
TEST_P(Atomic, CompareAndSwapHitAndMiss) {
  auto [s, r] = apair();
  ASSERT_TRUE(s.qp && r.qp);
  Buf t = buf(rdev(), 64, kAtomicAccess);
  Buf res = buf(0, 64);
  for (size_t i = 0; i < t.len; i++) t.p[i] = pattern(3, i);
  std::vector<uint8_t> around(t.p, t.p + t.len);
  const uint8_t orig[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  std::memcpy(t.p + 16, orig, 8);
  std::memset(res.p, 0xEE, res.len);

  // hit: compare equals the remote value (0x0102030405060708 as a big-endian integer)
  auto w = one(s, IBV_WR_ATOMIC_CMP_AND_SWP, {res.addr(8), 8, res.lkey()}, t.addr(16), t.mr->rkey,
               0x0102030405060708ull, 0x1122334455667788ull);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
  EXPECT_EQ(w.opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(w.wr_id, 7u);
  EXPECT_EQ(std::memcmp(res.p + 8, orig, 8), 0) << "the original value, big-endian";
  const uint8_t swapped[8] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  EXPECT_EQ(std::memcmp(t.p + 16, swapped, 8), 0) << "the swapped-in value, big-endian";
  for (size_t i = 0; i < 64; i++) {
    if (i >= 16 && i < 24) continue;
    ASSERT_EQ(t.p[i], around[i]) << "target byte " << i;
  }
  for (size_t i = 0; i < 64; i++) {
    if (i >= 8 && i < 16) continue;
    ASSERT_EQ(res.p[i], 0xEE) << "result byte " << i;
  }

  // miss: the remote value stays, the result is the current value
  std::memset(res.p, 0xEE, res.len);
  w = one(s, IBV_WR_ATOMIC_CMP_AND_SWP, {res.addr(40), 8, res.lkey()}, t.addr(16), t.mr->rkey,
          0x0102030405060708ull, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
  EXPECT_EQ(w.opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(std::memcmp(res.p + 40, swapped, 8), 0);
  EXPECT_EQ(std::memcmp(t.p + 16, swapped, 8), 0) << "a miss changed the remote word";
  // compare differs only in the lowest byte of the integer (the last byte in memory): still a miss
  w = one(s, IBV_WR_ATOMIC_CMP_AND_SWP, {res.addr(0), 8, res.lkey()}, t.addr(16), t.mr->rkey,
          0x1122334455667789ull, 0);
  EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
  EXPECT_EQ(get_be64(t.p + 16), 0x1122334455667788ull);
  EXPECT_TRUE(drain(r.rcq).empty()) << "an atomic completes nothing at the responder";
  EXPECT_EQ(state(s), IBV_QPS_RTS);
  EXPECT_EQ(state(r), IBV_QPS_RTS);
}

// Fetch-and-add on the big-endian word: carries across bytes and 32-bit halves, 64-bit wrap.
TEST_P(Atomic, FetchAndAdd) {
  auto [s, r] = apair();
  ASSERT_TRUE(s.qp && r.qp);
  Buf t = buf(rdev(), 32, kAtomicAccess);
  Buf res = buf(0, 32);
  for (size_t i = 0; i < t.len; i++) t.p[i] = pattern(4, i);
  std::vector<uint8_t> around(t.p, t.p + t.len);
  struct Step {
    uint64_t before, add, after;
  };
  const Step steps[] = {
      {0x00000000FFFFFFFFull, 1, 0x0000000100000000ull},                    // carry into the upper half
      {0x0000000100000000ull, 0xFFFFFFFFFFFFFFFFull, 0x00000000FFFFFFFFull},  // adding -1
      {0xFFFFFFFFFFFFFFFFull, 2, 1},                                          // 64-bit wrap
      {0x0123456789ABCDEFull, 0x1111111111111111ull, 0x123456789ABCDF00ull},
      {42, 0, 42},                                                            // add 0: a plain atomic read
  };
  for (const Step& k : steps) {
    SCOPED_TRACE(k.before);
    put_be64(t.p + 8, k.before);
    std::memset(res.p, 0xEE, res.len);
    auto w = one(s, IBV_WR_ATOMIC_FETCH_AND_ADD, {res.addr(16), 8, res.lkey()}, t.addr(8), t.mr->rkey, k.add,
                 0xDEADBEEF /* swap: ignored */);
    EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
    EXPECT_EQ(w.opcode, IBV_WC_FETCH_ADD);
    EXPECT_EQ(get_be64(res.p + 16), k.before) << "original value";
    EXPECT_EQ(get_be64(t.p + 8), k.after) << "remote value";
    for (size_t i = 0; i < 32; i++) {
      if (i >= 8 && i < 16) continue;
      ASSERT_EQ(t.p[i], around[i]) << "target byte " << i;
    }
    for (size_t i = 0; i < 32; i++) {
      if (i >= 16 && i < 24) continue;
      ASSERT_EQ(res.p[i], 0xEE) << "result byte " << i;
    }
  }
  EXPECT_TRUE(drain(r.rcq).empty());
}

// The same through ibv_qp_ex (ibv_wr_atomic_cmp_swp / ibv_wr_atomic_fetch_add), in one batch.
TEST_P(Atomic, ExtendedApi) {
  Qp s;
  s.dev = 0;
  s.scq = s.rcq = cq(0, 255, false);
  struct ibv_qp_init_attr_ex a = {};
  a.send_cq = a.recv_cq = s.scq.cq;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = a.cap.max_recv_wr = 16;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  a.pd = pd_[0];
  a.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  s.qp = ibv_create_qp_ex(ctx_[0], &a);
  ASSERT_NE(s.qp, nullptr) << std::strerror(errno);
  adopt(s, true, IBV_ACCESS_LOCAL_WRITE);
  QpOpts ro;
  ro.access = kAtomicAccess;
  Qp r = qp(rdev(), ro);
  ASSERT_NE(r.qp, nullptr);
  ConnOpts c;
  c.max_rd_atomic = 4;
  connect(s, r, c);
  Buf t = buf(rdev(), 16, kAtomicAccess);
  Buf res = buf(0, 16);
  put_be64(t.p, 1000);
  struct ibv_qp_ex* x = ibv_qp_to_qp_ex(s.qp);
  ASSERT_NE(x, nullptr);
  ibv_wr_start(x);
  x->wr_id = 1;
  x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_atomic_cmp_swp(x, t.mr->rkey, t.addr(), 1000, 2000);
  ibv_wr_set_sge(x, res.lkey(), res.addr(0), 8);
  x->wr_id = 2;
  ibv_wr_atomic_fetch_add(x, t.mr->rkey, t.addr(), 5);
  ibv_wr_set_sge(x, res.lkey(), res.addr(8), 8);
  ASSERT_EQ(ibv_wr_complete(x), 0);
  auto wc = poll(s.scq, 2);
  ASSERT_EQ(wc.size(), 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << wc_str(wc[0]);
  EXPECT_EQ(wc[0].opcode, IBV_WC_COMP_SWAP);
  EXPECT_EQ(wc[1].status, IBV_WC_SUCCESS) << wc_str(wc[1]);
  EXPECT_EQ(wc[1].opcode, IBV_WC_FETCH_ADD);
  EXPECT_EQ(get_be64(res.p), 1000u);
  EXPECT_EQ(get_be64(res.p + 8), 2000u);
  EXPECT_EQ(get_be64(t.p), 2005u);
}

// 4 QPs x 16 fetch-and-adds of 1 on one counter, all posted at once (max_rd_atomic 4 each): the
// counter advances by exactly 64, the 64 originals are distinct (exactly the 64 values it passed
// through), and each QP's own originals increase in its posting order.
TEST_P(Atomic, ConcurrentFetchAddFromFourQps) {
  constexpr int kQps = 4, kEach = 16;
  std::vector<std::pair<Qp, Qp>> pairs;
  for (int k = 0; k < kQps; k++) {
    pairs.push_back(apair());
    ASSERT_TRUE(pairs.back().first.qp && pairs.back().second.qp);
  }
  Buf t = buf(rdev(), 64, kAtomicAccess);
  Buf res = buf(0, 8 * kQps * kEach);
  const uint64_t start = 0x00000000FFFFFFE0ull;  // crosses the 32-bit carry half-way
  put_be64(t.p + 24, start);
  std::memset(res.p, 0xEE, res.len);
  for (int i = 0; i < kEach; i++)
    for (int k = 0; k < kQps; k++) {
      const int n = k * kEach + i;
      ASSERT_EQ(post_atomic(pairs[k].first, uint64_t(n), IBV_WR_ATOMIC_FETCH_AND_ADD, {res.addr(8 * n), 8, res.lkey()},
                            t.addr(24), t.mr->rkey, 1),
                0);
    }
  std::set<uint64_t> seen;
  for (int k = 0; k < kQps; k++) {
    auto wc = poll(pairs[k].first.scq, kEach);
    ASSERT_EQ(wc.size(), size_t(kEach)) << "QP " << k;
    uint64_t prev = 0;
    for (int i = 0; i < kEach; i++) {
      EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << wc_str(wc[i]);
      EXPECT_EQ(wc[i].opcode, IBV_WC_FETCH_ADD);
      EXPECT_EQ(wc[i].wr_id, uint64_t(k * kEach + i)) << "completions in posting order";
      const uint64_t v = get_be64(res.p + 8 * (k * kEach + i));
      EXPECT_TRUE(seen.insert(v).second) << "original value " << v << " returned twice";
      if (i) {
        EXPECT_GT(v, prev) << "QP " << k << ": its atomics executed out of order";
      }
      prev = v;
    }
  }
  EXPECT_EQ(get_be64(t.p + 24), start + kQps * kEach) << "the counter";
  ASSERT_EQ(seen.size(), size_t(kQps * kEach));
  EXPECT_EQ(*seen.begin(), start);
  EXPECT_EQ(*seen.rbegin(), start + kQps * kEach - 1);
}

// On one QP: WRITE, FETCH_AND_ADD, READ (FENCE), CMP_AND_SWP, READ (FENCE), WRITE (FENCE),
// FETCH_AND_ADD, READ (FENCE) of one remote word: each operation sees the ones before it, the
// completions come in posting order.
TEST_P(Atomic, InterleavedWithWritesAndReads) {
  for (uint8_t max_rd : {uint8_t(4), uint8_t(1)}) {
    SCOPED_TRACE(int(max_rd));
    auto [s, r] = apair(kAllRemote, max_rd);
    ASSERT_TRUE(s.qp && r.qp);
    Buf t = buf(rdev(), 64, kAllRemote);
    Buf l = buf(0, 256);
    std::memset(l.p, 0xEE, l.len);
    put_be64(l.p + 0, 100);  // WRITE source 1
    put_be64(l.p + 8, 9);    // WRITE source 2
    const uint32_t rk = t.mr->rkey;
    const uint64_t ra = t.addr(32);
    auto sg = [&](size_t off) { return ibv_sge{l.addr(off), 8, l.lkey()}; };
    ASSERT_EQ(post_rdma(s, 0, IBV_WR_RDMA_WRITE, sg(0), ra, rk), 0);
    ASSERT_EQ(post_atomic(s, 1, IBV_WR_ATOMIC_FETCH_AND_ADD, sg(64), ra, rk, 5), 0);
    ASSERT_EQ(post_rdma(s, 2, IBV_WR_RDMA_READ, sg(72), ra, rk, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
    ASSERT_EQ(post_atomic(s, 3, IBV_WR_ATOMIC_CMP_AND_SWP, sg(80), ra, rk, 105, 7), 0);
    ASSERT_EQ(post_rdma(s, 4, IBV_WR_RDMA_READ, sg(88), ra, rk, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
    ASSERT_EQ(post_rdma(s, 5, IBV_WR_RDMA_WRITE, sg(8), ra, rk, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
    ASSERT_EQ(post_atomic(s, 6, IBV_WR_ATOMIC_FETCH_AND_ADD, sg(96), ra, rk, 0x100), 0);
    ASSERT_EQ(post_rdma(s, 7, IBV_WR_RDMA_READ, sg(104), ra, rk, IBV_SEND_SIGNALED | IBV_SEND_FENCE), 0);
    auto wc = poll(s.scq, 8);
    ASSERT_EQ(wc.size(), 8u);
    const enum ibv_wc_opcode ops[8] = {IBV_WC_RDMA_WRITE, IBV_WC_FETCH_ADD, IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP,
                                       IBV_WC_RDMA_READ,  IBV_WC_RDMA_WRITE, IBV_WC_FETCH_ADD, IBV_WC_RDMA_READ};
    for (int i = 0; i < 8; i++) {
      EXPECT_EQ(wc[i].wr_id, uint64_t(i)) << "completions in posting order";
      EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS) << wc_str(wc[i]);
      EXPECT_EQ(wc[i].opcode, ops[i]) << i;
    }
    EXPECT_EQ(get_be64(l.p + 64), 100u) << "FETCH_AND_ADD saw the WRITE before it";
    EXPECT_EQ(get_be64(l.p + 72), 105u) << "READ saw the FETCH_AND_ADD";
    EXPECT_EQ(get_be64(l.p + 80), 105u) << "CMP_AND_SWP's original";
    EXPECT_EQ(get_be64(l.p + 88), 7u) << "READ saw the swap";
    EXPECT_EQ(get_be64(l.p + 96), 9u) << "FETCH_AND_ADD saw the second WRITE";
    EXPECT_EQ(get_be64(l.p + 104), 9u + 0x100) << "last READ";
    EXPECT_EQ(get_be64(t.p + 32), 9u + 0x100);
    EXPECT_EQ(l.p[112], 0xEE);
  }
}

// Each violation: the requester's status, the local result buffer and the remote memory unchanged,
// both QPs in ERR, and the responder's async event (ACCESS_ERR for a remote access violation,
// REQ_ERR for an invalid request).
TEST_P(Atomic, ProtectionViolations) {
  struct ibv_pd* other_pd = ibv_alloc_pd(ctx_[rdev()]);
  ASSERT_NE(other_pd, nullptr);
  defer([other_pd] { EXPECT_EQ(ibv_dealloc_pd(other_pd), 0); });
  constexpr unsigned kNoAtomic = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  struct Case {
    const char* what;
    unsigned mr_access, qp_access;
    bool other_pd;
    int rkey_delta;
    size_t len, off;
    bool dereg;
    enum ibv_wc_status st;
  };
  const std::vector<Case> cases = {
      {"wrong rkey", kAtomicAccess, kAtomicAccess, false, 1, 4096, 64, false, IBV_WC_REM_ACCESS_ERR},
      {"rkey of another PD", kAtomicAccess, kAtomicAccess, true, 0, 4096, 64, false, IBV_WC_REM_ACCESS_ERR},
      {"MR without REMOTE_ATOMIC", kNoAtomic, kAtomicAccess, false, 0, 4096, 64, false, IBV_WC_REM_ACCESS_ERR},
      {"8 bytes past the MR's end", kAtomicAccess, kAtomicAccess, false, 0, 4092, 4088, false, IBV_WC_REM_ACCESS_ERR},
      {"deregistered MR", kAtomicAccess, kAtomicAccess, false, 0, 4096, 64, true, IBV_WC_REM_ACCESS_ERR},
      {"QP without REMOTE_ATOMIC", kAtomicAccess, kNoAtomic, false, 0, 4096, 64, false, IBV_WC_REM_INV_REQ_ERR},
      {"unaligned address", kAtomicAccess, kAtomicAccess, false, 0, 4096, 68, false, IBV_WC_REM_INV_REQ_ERR},
  };
  for (auto op : {IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.what) + (op == IBV_WR_ATOMIC_CMP_AND_SWP ? " (CMP_AND_SWP)" : " (FETCH_AND_ADD)"));
      auto [s, r] = apair(c.qp_access);
      ASSERT_TRUE(s.qp && r.qp);
      Buf res = buf(0, 64);
      std::memset(res.p, 0xA5, res.len);
      Buf t = buf(-1, 4096);
      for (size_t i = 0; i < t.len; i++) t.p[i] = pattern(50, i);
      put_be64(t.p + (c.off & ~size_t(7)), 77);  // what a CMP_AND_SWP compares with
      std::vector<uint8_t> before(t.p, t.p + t.len);
      struct ibv_mr* mr = ibv_reg_mr(c.other_pd ? other_pd : pd_[rdev()], t.p, c.len, c.mr_access);
      ASSERT_NE(mr, nullptr) << std::strerror(errno);
      const uint32_t rkey = mr->rkey + c.rkey_delta;
      if (c.dereg) {
        ASSERT_EQ(ibv_dereg_mr(mr), 0);
        mr = nullptr;
      }
      ASSERT_EQ(post_atomic(s, 1, op, {res.addr(8), 8, res.lkey()}, t.addr(c.off), rkey, 77, 88), 0);
      auto wc = poll(s.scq, 1);
      ASSERT_EQ(wc.size(), 1u);
      EXPECT_EQ(wc[0].status, c.st) << wc_str(wc[0]);
      for (size_t i = 0; i < res.len; i++) ASSERT_EQ(res.p[i], 0xA5) << "result byte " << i << " written";
      EXPECT_EQ(std::memcmp(t.p, before.data(), t.len), 0) << "the target memory changed";
      EXPECT_EQ(state(s), IBV_QPS_ERR);
      EXPECT_EQ(state(r), IBV_QPS_ERR);
      const enum ibv_event_type want =
          c.st == IBV_WC_REM_ACCESS_ERR ? IBV_EVENT_QP_ACCESS_ERR : IBV_EVENT_QP_REQ_ERR;
      auto evs = async_events(rdev());
      ASSERT_EQ(evs.size(), 1u);
      EXPECT_EQ(evs[0].event_type, want);
      EXPECT_EQ(evs[0].element.qp, r.qp);
      if (mr) {
        EXPECT_EQ(ibv_dereg_mr(mr), 0);
      }
    }
  }
}

// A result buffer without LOCAL_WRITE: LOC_PROT_ERR, nothing sent, the remote word unchanged.
TEST_P(Atomic, LocalResultBufferNeedsLocalWrite) {
  auto [s, r] = apair();
  ASSERT_TRUE(s.qp && r.qp);
  Buf ro = buf(0, 64, IBV_ACCESS_REMOTE_READ);  // (no LOCAL_WRITE)
  Buf t = buf(rdev(), 64, kAtomicAccess);
  put_be64(t.p, 5);
  const uint32_t tx = counter(0, tmnic::hwif::stat::TX_PKTS);
  auto w = one(s, IBV_WR_ATOMIC_FETCH_AND_ADD, {ro.addr(), 8, ro.lkey()}, t.addr(), t.mr->rkey, 1);
  EXPECT_EQ(w.status, IBV_WC_LOC_PROT_ERR) << wc_str(w);
  EXPECT_EQ(counter(0, tmnic::hwif::stat::TX_PKTS), tx) << "an atomic request went out";
  EXPECT_EQ(get_be64(t.p), 5u);
}

// Lost frames between two NICs: the request (only the local ACK timeout reveals it), and the
// ATOMIC_ACK of a FETCH_AND_ADD and of a CMP_AND_SWP hit: the requester resends the request with
// its PSN, the responder recognises the duplicate and answers it from its replay cache without
// executing it again (the counter advances once; the swap's original is not the swapped value).
class AtomicLoss : public SystemTest {
 protected:
  void SetUp() override {
    SystemTest::SetUp();
    if (HasFatalFailure()) return;
    SKIP_WITHOUT_ATOMICS();
  }
};

TEST_F(AtomicLoss, LostRequestAndLostAckExecuteOnce) {
  ConnOpts c;
  c.timeout = 4;  // 65.5 us
  c.retry_cnt = 3;
  c.max_rd_atomic = 4;
  QpOpts so, ro;
  ro.access = kAtomicAccess;
  auto [s, r] = pair(1, so, ro, c);
  ASSERT_TRUE(s.qp && r.qp);
  Buf t = buf(1, 64, kAtomicAccess);
  Buf res = buf(0, 64);
  struct Case {
    const char* what;
    int nic;  // whose next frame is lost: 0 the request, 1 the ATOMIC_ACK
    enum ibv_wr_opcode op;
    uint64_t before, compare_add, swap, after;
  };
  const Case cases[] = {
      {"FETCH_AND_ADD request lost", 0, IBV_WR_ATOMIC_FETCH_AND_ADD, 1000, 7, 0, 1007},
      {"FETCH_AND_ADD ATOMIC_ACK lost", 1, IBV_WR_ATOMIC_FETCH_AND_ADD, 2000, 7, 0, 2007},
      {"CMP_AND_SWP ATOMIC_ACK lost", 1, IBV_WR_ATOMIC_CMP_AND_SWP, 3000, 3000, 4000, 4000},
      {"FETCH_AND_ADD after the replays", -1, IBV_WR_ATOMIC_FETCH_AND_ADD, 5000, 1, 0, 5001},
  };
  int m = 0;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    put_be64(t.p + 8 * m, k.before);
    std::memset(res.p, 0xEE, res.len);
    const uint32_t retx = counter(0, tmnic::hwif::stat::RETRANSMITS);
    if (k.nic >= 0) tmnic_sim_corrupt_tx_after(k.nic, 0, 1);
    ASSERT_EQ(post_atomic(s, uint64_t(m), k.op, {res.addr(8), 8, res.lkey()}, t.addr(8 * m), t.mr->rkey,
                          k.compare_add, k.swap),
              0);
    auto sc = poll(s.scq, 1);
    ASSERT_EQ(sc.size(), 1u) << "never completed";
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    EXPECT_EQ(sc[0].wr_id, uint64_t(m));
    EXPECT_EQ(get_be64(res.p + 8), k.before) << "the original value";
    EXPECT_EQ(res.p[0], 0xEE);
    EXPECT_EQ(res.p[16], 0xEE);
    EXPECT_EQ(get_be64(t.p + 8 * m), k.after) << "executed exactly once";
    if (k.nic >= 0) {
      EXPECT_GT(counter(0, tmnic::hwif::stat::RETRANSMITS), retx) << "the loss was recovered by a resend";
    }
    EXPECT_TRUE(drain(s.scq).empty()) << "completed once";
    EXPECT_EQ(get_be64(t.p + 8 * m), k.after) << "a late duplicate executed";
    m++;
  }
  EXPECT_EQ(state(s), IBV_QPS_RTS);
  EXPECT_EQ(state(r), IBV_QPS_RTS);
}

// Runs with or without atomics: what the device reports, what the driver accepts and refuses.
class AtomicCaps : public SystemTest {};

TEST_F(AtomicCaps, GatingFollowsOpsCaps) {
  namespace oc = tmnic::hwif::regf::ops_caps;
  for (int d = 0; d < 2; d++) {
    SCOPED_TRACE(d);
    const bool hw = oc::ATOMIC.get(tmnic_sim_read_reg(d, tmnic::hwif::reg::OPS_CAPS)) != 0;
    struct ibv_device_attr a;
    ASSERT_EQ(ibv_query_device(ctx_[d], &a), 0);
    EXPECT_EQ(a.atomic_cap, hw ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE);
    struct ibv_device_attr_ex x;
    ASSERT_EQ(ibv_query_device_ex(ctx_[d], nullptr, &x), 0);
    EXPECT_EQ(x.orig_attr.atomic_cap, a.atomic_cap);
    if (hw) {
      EXPECT_EQ(a.max_qp_rd_atom, int(tmnic::hwif::MAX_RD_ATOM));
      EXPECT_EQ(a.max_qp_init_rd_atom, int(tmnic::hwif::MAX_RD_ATOM));
    }
    // MR access: REMOTE_ATOMIC needs LOCAL_WRITE on any device, and atomics.
    uint8_t* p = static_cast<uint8_t*>(std::aligned_alloc(4096, 4096));
    errno = 0;
    EXPECT_EQ(ibv_reg_mr(pd_[d], p, 4096, IBV_ACCESS_REMOTE_ATOMIC), nullptr);
    EXPECT_EQ(errno, EINVAL);
    errno = 0;
    struct ibv_mr* mr = ibv_reg_mr(pd_[d], p, 4096, kAtomicAccess);
    EXPECT_EQ(mr != nullptr, hw);
    if (mr) {
      EXPECT_EQ(ibv_dereg_mr(mr), 0);
    } else {
      EXPECT_EQ(errno, EOPNOTSUPP);
    }
    std::free(p);
    // send_ops_flags with atomics: only with them.
    Qp q;
    q.dev = d;
    q.scq = q.rcq = cq(d, 15, false);
    struct ibv_qp_init_attr_ex ia = {};
    ia.send_cq = ia.recv_cq = q.scq.cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = ia.cap.max_recv_wr = 4;
    ia.cap.max_send_sge = 2;
    ia.cap.max_recv_sge = 1;
    ia.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    ia.pd = pd_[d];
    ia.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
    errno = 0;
    q.qp = ibv_create_qp_ex(ctx_[d], &ia);
    EXPECT_EQ(q.qp != nullptr, hw);
    if (!q.qp) {
      EXPECT_EQ(errno, EOPNOTSUPP);
      ia.send_ops_flags = IBV_QP_EX_WITH_SEND;
      q.qp = ibv_create_qp_ex(ctx_[d], &ia);
      ASSERT_NE(q.qp, nullptr);
    }
    adopt(q, true, IBV_ACCESS_LOCAL_WRITE);
  }
  // Posting: on an RC QP in RTS, EINVAL + bad_wr without atomics; with them, the driver's rules
  // (exactly one 8-byte SGE, not inline) still refuse these.
  const bool hw = device_has_atomics(ctx_[0]);
  QpOpts so;
  so.send_sge = 2;
  auto [s, r] = pair(1, so);
  ASSERT_TRUE(s.qp && r.qp);
  Buf res = buf(0, 64);
  struct ibv_sge sg[2] = {{res.addr(0), 8, res.lkey()}, {res.addr(8), 8, res.lkey()}};
  struct Bad {
    const char* what;
    int num_sge;
    uint32_t len;
    unsigned flags;
    bool refused_with_atomics;
  };
  const Bad bads[] = {
      {"one 8-byte SGE", 1, 8, 0, false},      {"no SGE", 0, 8, 0, true},
      {"two SGEs", 2, 8, 0, true},             {"4-byte SGE", 1, 4, 0, true},
      {"16-byte SGE", 1, 16, 0, true},         {"inline", 1, 8, IBV_SEND_INLINE, true},
  };
  for (const Bad& b : bads) {
    if (hw && !b.refused_with_atomics) continue;  // (would be executed: a real atomic on r)
    SCOPED_TRACE(b.what);
    for (auto op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD}) {
      struct ibv_sge l[2] = {sg[0], sg[1]};
      l[0].length = b.len;
      struct ibv_send_wr wr = {};
      wr.opcode = op;
      wr.sg_list = l;
      wr.num_sge = b.num_sge;
      wr.send_flags = IBV_SEND_SIGNALED | b.flags;
      wr.wr.atomic.remote_addr = 0x1000;
      wr.wr.atomic.rkey = 1;
      struct ibv_send_wr* bad = nullptr;
      EXPECT_EQ(ibv_post_send(s.qp, &wr, &bad), EINVAL);
      EXPECT_EQ(bad, &wr);
    }
  }
  EXPECT_TRUE(drain(s.scq).empty()) << "a refused WR completed";
  EXPECT_EQ(state(s), IBV_QPS_RTS);
}

INSTANTIATE_TEST_SUITE_P(Topology, Atomic, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param ? "TwoNics" : "Loopback"; });

}  // namespace
