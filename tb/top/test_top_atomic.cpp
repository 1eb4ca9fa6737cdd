// Atomics at the HW/SW interface, without the driver (IBA 9.4.5, 9.7.5.1.1, 9.7.5.2.3): CMP_SWAP and
// FETCH_ADD requests with their AtomicETH, the responder's check of the 8 bytes (rkey, PD, bounds,
// REMOTE_ATOMIC, the QP's REMOTE_ATOMIC, 8-byte alignment), the read-modify-write in host memory
// (the word big-endian, as ConnectX keeps it), the ATOMIC_ACKNOWLEDGE placed into the WQE's SGE, the
// original value saved for a duplicate and returned without a second execution, atomics ordered
// with the WRITEs and READs around them, and what a violation does: NAK, the status at the
// requester, the responder QP in ERR and not one DMA access to the protected region.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>

#include "rdma_node.hpp"

using namespace tmnic;
using namespace tmnic::raw;
using namespace tmnic::raw::rdma;
namespace acc = hwif::access;

namespace {

constexpr uint32_t kAtomAccess = acc::LOCAL_WRITE | acc::REMOTE_ATOMIC | acc::REMOTE_READ | acc::REMOTE_WRITE;

// A send queue of its own (the Node's ring serves one QP at a time: a QP's WQE index is a slot).
struct SendRing {
  DmaBuf buf;
  uint32_t pi = 0;
  explicit SendRing(RdmaNode& n) : buf(n.h.mmu(), (1u << Node::kLog) * hwif::WQE_STRIDE) {}
};

// An atomic WQE: one 8-byte SGE for the original value, the operands at WQE_ATOMIC_OFF; on the
// Node's send ring, or on `ring`.
void post_atomic(RdmaNode& n, uint32_t qpn, uint64_t wr_id, bool cswap, uint64_t local_va, uint64_t raddr,
                 uint32_t rkey, uint64_t swap_add, uint64_t compare = 0, uint8_t flags = hwif::wqe_flag::SIGNALED,
                 uint32_t lkey = Node::kKey, SendRing* ring = nullptr) {
  uint8_t* base = ring ? ring->buf.p : n.sq.p;
  uint32_t& pi = ring ? ring->pi : n.sq_pi;
  uint8_t* slot = base + (pi % (1u << Node::kLog)) * hwif::WQE_STRIDE;
  RawHost::put_wqe(slot, wr_id, cswap ? hwif::wqe_op::ATOMIC_CMP_AND_SWP : hwif::wqe_op::ATOMIC_FETCH_AND_ADD, flags,
                   {{local_va, hwif::ATOMIC_LEN, lkey}});
  std::memcpy(slot + hwif::wqe::RKEY_OFF, &rkey, 4);
  std::memcpy(slot + hwif::wqe::RADDR_OFF, &raddr, 8);
  std::memcpy(slot + hwif::WQE_ATOMIC_OFF + hwif::atomic::SWAP_ADD_OFF, &swap_add, 8);
  std::memcpy(slot + hwif::WQE_ATOMIC_OFF + hwif::atomic::COMPARE_OFF, &compare, 8);
  pi++;
  n.h.wr(hwif::reg::DB_SQ0 + 4 * qpn, pi & 0xFFFF);
}

// The 8 bytes at p as the big-endian integer the NIC operates on, and back.
uint64_t be_get(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = (v << 8) | p[i];
  return v;
}
void be_put(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = uint8_t(v);
}

}  // namespace

// FETCH_ADD (with carries across bytes and the 64-bit wrap) and CMP_SWAP (equal and not equal) on
// words across the target, in loopback and between two NICs: the word becomes what the IBA says,
// the bytes around it stay, the original value lands big-endian in the local SGE (and nothing
// beside it), every atomic completes in order with its opcode; the responder stays in RTS.
TEST(TopAtomic, FetchAddAndCompareSwapOfWordsLandExactly) {
  struct Op { bool cswap; uint64_t init, swap_add, compare; };
  const std::vector<Op> ops = {
      {false, 0, 1, 0},
      {false, 0x00000000FFFFFFFFull, 1, 0},                 // carry into the upper half
      {false, 0xFFFFFFFFFFFFFFFFull, 2, 0},                 // wraps to 1
      {false, 0x0102030405060708ull, 0x1010101010101010ull, 0},
      {true, 0x1122334455667788ull, 0xCAFEF00DDEADBEEFull, 0x1122334455667788ull},   // equal: swapped
      {true, 0x1122334455667788ull, 0xCAFEF00DDEADBEEFull, 0x1122334455667789ull},   // not equal: kept
      {true, 0, 7, 0},
      {false, 0x8000000000000000ull, 0x8000000000000000ull, 0},
  };
  for (int nics : {1, 2}) {
    SCOPED_TRACE(nics);
    sim::World w(cfg(nics));
    RdmaNode a(w, 0, kAtomAccess);
    std::unique_ptr<RdmaNode> bp = nics == 2 ? std::make_unique<RdmaNode>(w, 1, kAtomAccess) : nullptr;
    RdmaNode& b = nics == 2 ? *bp : a;
    ASSERT_TRUE(a.ok && b.ok);
    RawHost::QpCfg qa = a.qp(5, nics - 1), qb = b.qp(2, 0);
    qa.access = qb.access = kAtomAccess;
    ASSERT_EQ(a.h.set_qp(2, qa), 0u);
    ASSERT_EQ(b.h.set_qp(5, qb), 0u);
    fill(b.target.p, 1 << 16, 3);
    std::memset(a.data.p, 0xEE, 1 << 16);
    std::vector<uint8_t> before(b.target.p, b.target.p + (1 << 16));
    for (size_t i = 0; i < ops.size(); i++) {
      const size_t off = 8 * (97 * i + 1);   // 8-byte aligned, various lanes of a beat
      be_put(b.target.p + off, ops[i].init);
      be_put(before.data() + off, ops[i].init);
      post_atomic(a, 2, i, ops[i].cswap, a.va(64 * i + 16), b.tva(off), RdmaNode::kTKey, ops[i].swap_add, ops[i].compare);
    }
    auto got = wait_cqes(w, {&a}, ops.size());
    ASSERT_EQ(got.size(), ops.size());
    for (size_t i = 0; i < ops.size(); i++) {
      const Op& o = ops[i];
      const size_t off = 8 * (97 * i + 1);
      EXPECT_EQ(got[i].second.wr_id, i) << "completions in posting order";
      EXPECT_EQ(got[i].second.status, 0) << i;
      EXPECT_EQ(got[i].second.opcode, o.cswap ? hwif::wc_op::COMP_SWAP : hwif::wc_op::FETCH_ADD) << i;
      const uint64_t want = o.cswap ? (o.init == o.compare ? o.swap_add : o.init) : o.init + o.swap_add;
      EXPECT_EQ(be_get(b.target.p + off), want) << "op " << i;
      be_put(before.data() + off, want);
      EXPECT_EQ(be_get(a.data.p + 64 * i + 16), o.init) << "original value of op " << i;
      EXPECT_EQ(a.data.p[64 * i + 15], 0xEE) << i;
      EXPECT_EQ(a.data.p[64 * i + 24], 0xEE) << i;
    }
    EXPECT_EQ(std::memcmp(b.target.p, before.data(), before.size()), 0) << "a byte beside the words changed";
    EXPECT_EQ(b.qp_state(5), 3u);
    EXPECT_EQ(a.qp_state(2), 3u);
  }
}

// Several QPs of two NICs add to one counter at once, each with MAX_RD_ATOM atomics in flight: the
// sum is exact and the original values are exactly 0, 1, ..., n-1 (each add saw every earlier one).
TEST(TopAtomic, ConcurrentFetchAddFromSeveralQpsSumsExactly) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kAtomAccess), b(w, 1, kAtomAccess);
  ASSERT_TRUE(a.ok && b.ok);
  constexpr uint32_t kQps = 4, kPer = 24;
  std::vector<std::unique_ptr<SendRing>> rings;
  for (uint32_t q = 0; q < kQps; q++) {
    rings.push_back(std::make_unique<SendRing>(a));
    RawHost::QpCfg qa = a.qp(10 + q, 1), qb = b.qp(2 + q, 0);
    qa.sq_base = rings.back()->buf.iova;
    qa.access = qb.access = kAtomAccess;
    ASSERT_EQ(a.h.set_qp(2 + q, qa), 0u);
    ASSERT_EQ(b.h.set_qp(10 + q, qb), 0u);
  }
  be_put(b.target.p + 4096, 0);
  // The QPs' WQEs posted interleaved, each QP on its own ring.
  for (uint32_t i = 0; i < kPer; i++)
    for (uint32_t q = 0; q < kQps; q++)
      post_atomic(a, 2 + q, q * 1000 + i, false, a.va(8 * (q * kPer + i)), b.tva(4096), RdmaNode::kTKey, 1, 0,
                  hwif::wqe_flag::SIGNALED, Node::kKey, rings[q].get());
  auto got = wait_cqes(w, {&a}, kQps * kPer);
  ASSERT_EQ(got.size(), size_t(kQps * kPer));
  std::set<uint64_t> seen;
  for (auto& g : got) EXPECT_EQ(g.second.status, 0);
  for (uint32_t k = 0; k < kQps * kPer; k++) seen.insert(be_get(a.data.p + 8 * k));
  EXPECT_EQ(be_get(b.target.p + 4096), uint64_t(kQps * kPer));
  EXPECT_EQ(seen.size(), size_t(kQps * kPer)) << "two adds returned the same original value";
  EXPECT_EQ(*seen.rbegin(), uint64_t(kQps * kPer - 1));
}

// Order on one QP: a WRITE of the word, then a FETCH_ADD on it (it adds to the written value: the
// WRITE's bytes reached memory first), then a fenced READ of it (it sees the sum), then a
// CMP_SWAP against the sum; all in posting order.
TEST(TopAtomic, AtomicsOrderedWithWritesAndReads) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kAtomAccess), b(w, 1, kAtomAccess);
  ASSERT_TRUE(a.ok && b.ok);
  RawHost::QpCfg qa = a.qp(5, 1), qb = b.qp(2, 0);
  qa.access = qb.access = kAtomAccess;
  ASSERT_EQ(a.h.set_qp(2, qa), 0u);
  ASSERT_EQ(b.h.set_qp(5, qb), 0u);
  for (int round = 0; round < 8; round++) {
    const size_t base = 1024 * round;
    be_put(a.data.p + base, 1000 + round);                      // the WRITE's source
    a.post_write(2, 10 * round + 0, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED,
                 {{a.va(base), 8, Node::kKey}}, b.tva(base), RdmaNode::kTKey);
    post_atomic(a, 2, 10 * round + 1, false, a.va(base + 64), b.tva(base), RdmaNode::kTKey, 5);
    a.post_write(2, 10 * round + 2, hwif::wqe_op::RDMA_READ, hwif::wqe_flag::SIGNALED | hwif::wqe_flag::FENCE,
                 {{a.va(base + 128), 8, Node::kKey}}, b.tva(base), RdmaNode::kTKey);
    post_atomic(a, 2, 10 * round + 3, true, a.va(base + 192), b.tva(base), RdmaNode::kTKey, 77, 1005 + round);
  }
  auto got = wait_cqes(w, {&a}, 32);
  ASSERT_EQ(got.size(), 32u);
  for (int round = 0; round < 8; round++) {
    const size_t base = 1024 * round;
    for (int k = 0; k < 4; k++) {
      EXPECT_EQ(got[4 * round + k].second.wr_id, uint64_t(10 * round + k));
      EXPECT_EQ(got[4 * round + k].second.status, 0);
    }
    EXPECT_EQ(be_get(a.data.p + base + 64), uint64_t(1000 + round)) << "the add saw the WRITE";
    EXPECT_EQ(be_get(a.data.p + base + 128), uint64_t(1005 + round)) << "the READ saw the add";
    EXPECT_EQ(be_get(a.data.p + base + 192), uint64_t(1005 + round));
    EXPECT_EQ(be_get(b.target.p + base), 77u) << "the swap happened";
  }
}

// Each protection violation: the requester completes with REM_ACCESS_ERR (key, PD, bounds, the
// MR's REMOTE_ATOMIC) or REM_INV_REQ_ERR (a QP without REMOTE_ATOMIC, a misaligned address), the
// responder makes no DMA access to its region at all, both QPs end in ERR, a later WQE is flushed,
// and the local SGE is never written.
TEST(TopAtomic, ProtectionViolationsAreNakedWithoutDma) {
  struct Case { const char* what; uint32_t mr_access, qp_access, pd, rkey; uint64_t off; uint8_t status; };
  const uint32_t k = RdmaNode::kTKey;
  const uint8_t rae = hwif::wc_status::REM_ACCESS_ERR, rir = hwif::wc_status::REM_INV_REQ_ERR;
  const std::vector<Case> cases = {
      {"wrong rkey", kAtomAccess, kAtomAccess, 1, k ^ 0x01, 0, rae},
      {"rkey of another PD", kAtomAccess, kAtomAccess, 2, k, 0, rae},
      {"crossing the end", kAtomAccess, kAtomAccess, 1, k, (1 << 20) - 8 + 8, rae},
      {"MR without REMOTE_ATOMIC", acc::LOCAL_WRITE | acc::REMOTE_READ | acc::REMOTE_WRITE, kAtomAccess, 1, k, 0, rae},
      {"QP without REMOTE_ATOMIC", kAtomAccess, acc::REMOTE_READ | acc::REMOTE_WRITE, 1, k, 0, rir},
      {"misaligned address", kAtomAccess, kAtomAccess, 1, k, 4, rir},
  };
  for (const Case& t : cases) {
    sim::World w(cfg(2));
    RdmaNode a(w, 0, kAtomAccess), b(w, 1, t.mr_access, t.pd);
    ASSERT_TRUE(a.ok && b.ok) << t.what;
    RawHost::QpCfg qa = a.qp(5, 1), qb = b.qp(2, 0);
    qa.access = kAtomAccess;
    qb.access = t.qp_access;
    ASSERT_EQ(a.h.set_qp(2, qa), 0u);
    ASSERT_EQ(b.h.set_qp(5, qb), 0u);
    Watch watch(b);
    std::memset(a.data.p, 0x77, 64);
    post_atomic(a, 2, 1, false, a.va(8), b.tva(0) + t.off, t.rkey, 1);
    a.post_send(2, 2, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{a.va(0), 8, Node::kKey}});
    auto got = wait_cqes(w, {&a}, 2);
    ASSERT_EQ(got.size(), 2u) << t.what;
    EXPECT_EQ(got[0].second.wr_id, 1u) << t.what;
    EXPECT_EQ(got[0].second.status, t.status) << t.what;
    EXPECT_EQ(got[1].second.status, hwif::wc_status::WR_FLUSH_ERR) << t.what;
    EXPECT_EQ(watch.hits, 0u) << t.what << ": DMA touched the protected region";
    EXPECT_EQ(b.qp_state(5), 6u) << t.what << ": the responder QP goes to ERR";
    EXPECT_EQ(a.qp_state(2), 6u) << t.what << ": the requester QP goes to ERR";
    for (int i = 0; i < 64; i++) ASSERT_EQ(a.data.p[i], 0x77) << t.what << ": local buffer written at " << i;
  }
}

// A lost ATOMIC_ACKNOWLEDGE: the requester's timer sends the atomic again, the responder finds it
// behind its expected PSN and answers it from the saved result: the counter moves once, and the
// completion carries the value before that one move. Then the QP goes on normally.
TEST(TopAtomic, DuplicateAtomicIsAnsweredFromTheSavedResult) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kAtomAccess), b(w, 1, kAtomAccess);
  ASSERT_TRUE(a.ok && b.ok);
  RawHost::QpCfg qa = a.qp(5, 1), qb = b.qp(2, 0);
  qa.access = qb.access = kAtomAccess;
  qa.timeout = 6;   // 262 us: the retry comes soon
  ASSERT_EQ(a.h.set_qp(2, qa), 0u);
  ASSERT_EQ(b.h.set_qp(5, qb), 0u);
  be_put(b.target.p, 40);
  w.corrupt_tx(1, 1);   // the responder's next frame (the ATOMIC_ACK) arrives with a bad ICRC
  post_atomic(a, 2, 1, false, a.va(0), b.tva(0), RdmaNode::kTKey, 2);
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, 0);
  EXPECT_EQ(be_get(a.data.p), 40u) << "the duplicate's answer is the first execution's original value";
  EXPECT_EQ(be_get(b.target.p), 42u) << "the atomic was executed more than once";
  EXPECT_GE(a.stat(hwif::stat::RETRANSMITS), 1u) << "the atomic was not sent again";
  EXPECT_GE(b.stat(hwif::stat::RX_DUP), 1u) << "the responder did not see a duplicate";
  post_atomic(a, 2, 2, false, a.va(8), b.tva(0), RdmaNode::kTKey, 3);
  got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, 0);
  EXPECT_EQ(be_get(a.data.p + 8), 42u);
  EXPECT_EQ(be_get(b.target.p), 45u);
}
