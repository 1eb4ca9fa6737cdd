// RDMA READ at the HW/SW interface, without the driver (IBA 9.4.3, 9.7.4.1.3, 9.7.5.1.3): the
// requester's READ request with its RETH, the responder's rkey check against the MR table (valid,
// key, PD of the QP, bounds, REMOTE_READ), the read-response packets and their placement into the
// READ WQE's scatter list, READs in flight beside SENDs and WRITEs, and what a violation does on
// both sides: NAK remote access error, REM_ACCESS_ERR at the requester, the responder QP in ERR and
// not one DMA access to the protected region; a bad local scatter list fails before anything is sent.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "rdma_node.hpp"

using namespace tmnic;
using namespace tmnic::raw;
using namespace tmnic::raw::rdma;
namespace acc = hwif::access;

namespace {

constexpr uint32_t kReadAccess = acc::LOCAL_WRITE | acc::REMOTE_READ;

void post_read(RdmaNode& n, uint32_t qpn, uint64_t wr_id, const Sges& sges, uint64_t raddr, uint32_t rkey,
               uint8_t flags = hwif::wqe_flag::SIGNALED) {
  n.post_write(qpn, wr_id, hwif::wqe_op::RDMA_READ, flags, sges, raddr, rkey);
}

}  // namespace

// Every size class (empty, one byte, around a beat, around the 1 KiB PMTU, several packets, 64 KiB)
// in loopback and between two NICs, all posted at once (the requester keeps MAX_RD_ATOM in flight);
// one READ scattered into three SGEs. The bytes land exactly in the scatter list (the bytes around
// it unchanged), every READ completes in order with opcode RDMA_READ, and the responder is unchanged.
TEST(TopRead, ReadOfEverySizeLandsExactly) {
  for (int nics : {1, 2}) {
    SCOPED_TRACE(nics);
    sim::World w(cfg(nics));
    RdmaNode a(w, 0, kReadAccess);
    std::unique_ptr<RdmaNode> bp = nics == 2 ? std::make_unique<RdmaNode>(w, 1, kReadAccess) : nullptr;
    RdmaNode& b = nics == 2 ? *bp : a;
    ASSERT_TRUE(a.ok && b.ok);
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, nics - 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    fill(b.target.p, b.target.len, 11);
    std::memset(a.data.p, 0xEE, 1 << 20);
    const std::vector<uint32_t> sizes = {0, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 10000, 65536};
    size_t dst = 5, src = 0;
    std::vector<size_t> dsts, srcs;
    for (size_t i = 0; i < sizes.size(); i++) {
      dsts.push_back(dst);
      srcs.push_back(src);
      post_read(a, 2, i, {{a.va(dst), sizes[i], Node::kKey}}, b.tva(src), RdmaNode::kTKey);
      dst += sizes[i] + 32;
      src += sizes[i] + 7;
    }
    // Scattered into three SGEs.
    const size_t g_src = 600000;
    post_read(a, 2, 50, {{a.va(700000), 700, Node::kKey}, {a.va(800001), 1500, Node::kKey}, {a.va(900002), 3, Node::kKey}},
              b.tva(g_src), RdmaNode::kTKey);
    auto got = wait_cqes(w, {&a}, sizes.size() + 1);
    ASSERT_EQ(got.size(), sizes.size() + 1);
    std::vector<uint64_t> order;
    std::map<uint64_t, Cqe> c;
    for (auto& g : got) {
      c[g.second.wr_id] = g.second;
      order.push_back(g.second.wr_id);
    }
    for (size_t i = 0; i < sizes.size(); i++) {
      ASSERT_TRUE(c.count(i)) << i;
      EXPECT_EQ(order[i], i) << "completions in posting order";
      EXPECT_EQ(c[i].status, 0) << i;
      EXPECT_EQ(c[i].opcode, hwif::wc_op::RDMA_READ) << i;
      EXPECT_EQ(std::memcmp(a.data.p + dsts[i], b.target.p + srcs[i], sizes[i]), 0) << "size " << sizes[i];
      EXPECT_EQ(a.data.p[dsts[i] + sizes[i]], 0xEE) << "byte after the range, size " << sizes[i];
      EXPECT_EQ(a.data.p[dsts[i] - 1], 0xEE) << "byte before the range, size " << sizes[i];
    }
    EXPECT_EQ(c[50].status, 0);
    EXPECT_EQ(std::memcmp(a.data.p + 700000, b.target.p + g_src, 700), 0);
    EXPECT_EQ(std::memcmp(a.data.p + 800001, b.target.p + g_src + 700, 1500), 0);
    EXPECT_EQ(std::memcmp(a.data.p + 900002, b.target.p + g_src + 2200, 3), 0);
    EXPECT_EQ(a.data.p[900005], 0xEE);
    EXPECT_EQ(b.qp_state(5), 3u) << "the responder stays in RTS";
    EXPECT_EQ(a.qp_state(2), 3u);
  }
}

// READs among SENDs and WRITEs on one QP, with max_rd_atomic 1 (each READ waits for the previous
// one) and MAX_RD_ATOM: every completion in posting order, every byte where it belongs; the SENDs
// after a READ are acknowledged only after its responses (they complete after it).
TEST(TopRead, ReadsAmongSendsAndWritesInOrder) {
  for (uint32_t max_rd : {1u, hwif::MAX_RD_ATOM}) {
    SCOPED_TRACE(max_rd);
    sim::World w(cfg(2));
    RdmaNode a(w, 0, kReadAccess | acc::REMOTE_WRITE), b(w, 1, kReadAccess | acc::REMOTE_WRITE);
    ASSERT_TRUE(a.ok && b.ok);
    RawHost::QpCfg qa = a.qp(5, 1);
    qa.max_rd = max_rd;
    ASSERT_EQ(a.h.set_qp(2, qa), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    fill(b.target.p, 1 << 16, 5);
    fill(a.data.p + (1 << 20), 1 << 16, 6);
    std::memset(a.data.p, 0, 1 << 20);
    for (int i = 0; i < 40; i++) b.post_srq(1000 + i, {{b.va(i * 4096), 4096, Node::kKey}});
    std::vector<uint64_t> want;
    for (int i = 0; i < 40; i++) {
      const uint32_t len = 100 + 97 * i;
      switch (i % 4) {
        case 0: case 3:
          post_read(a, 2, i, {{a.va(i * 8192), len, Node::kKey}}, b.tva(i * 1000), RdmaNode::kTKey);
          break;
        case 1:
          a.post_send(2, i, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{a.va((1 << 20) + i), len % 4096, Node::kKey}});
          break;
        default:
          a.post_write(2, i, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED,
                       {{a.va((1 << 20) + 7 * i), len, Node::kKey}}, b.tva((1 << 19) + i * 8192), RdmaNode::kTKey);
      }
      want.push_back(i);
    }
    auto got = wait_cqes(w, {&a}, 40);
    ASSERT_EQ(got.size(), 40u);
    for (int i = 0; i < 40; i++) {
      const uint32_t len = 100 + 97 * i;
      EXPECT_EQ(got[i].second.wr_id, uint64_t(i)) << "completions in posting order";
      EXPECT_EQ(got[i].second.status, 0) << i;
      if (i % 4 == 0 || i % 4 == 3) {
        EXPECT_EQ(got[i].second.opcode, hwif::wc_op::RDMA_READ);
        EXPECT_EQ(std::memcmp(a.data.p + i * 8192, b.target.p + i * 1000, len), 0) << i;
      } else if (i % 4 == 2) {
        EXPECT_EQ(std::memcmp(b.target.p + (1 << 19) + i * 8192, a.data.p + (1 << 20) + 7 * i, len), 0) << i;
      }
    }
    EXPECT_EQ(a.qp_state(2), 3u);
    EXPECT_EQ(b.qp_state(5), 3u);
  }
}

// Each protection violation of a READ: the requester completes with REM_ACCESS_ERR, the responder
// makes no DMA access to its region at all, both QPs end in ERR, a later WQE is flushed.
TEST(TopRead, ProtectionViolationsAreNakedWithoutDma) {
  struct Case { const char* what; uint32_t access, pd, rkey; uint64_t off; uint32_t len; };
  const uint32_t k = RdmaNode::kTKey;
  const std::vector<Case> cases = {
      {"wrong rkey", kReadAccess, 1, k ^ 0x01, 0, 100},
      {"rkey of another PD", kReadAccess, 2, k, 0, 100},
      {"one byte past the end", kReadAccess, 1, k, (1 << 20) - 99, 100},
      {"below the start", kReadAccess, 1, k, uint64_t(-1), 100},
      {"no REMOTE_READ", acc::LOCAL_WRITE | acc::REMOTE_WRITE, 1, k, 0, 100},
      {"multi-packet, no REMOTE_READ", acc::LOCAL_WRITE, 1, k, 0, 5000},
  };
  for (const Case& t : cases) {
    sim::World w(cfg(2));
    RdmaNode a(w, 0, kReadAccess), b(w, 1, t.access, t.pd);
    ASSERT_TRUE(a.ok && b.ok) << t.what;
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    Watch watch(b);
    std::memset(a.data.p, 0x77, 8192);
    post_read(a, 2, 1, {{a.va(0), t.len, Node::kKey}}, b.tva(0) + t.off, t.rkey);
    a.post_send(2, 2, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{a.va(0), 8, Node::kKey}});
    auto got = wait_cqes(w, {&a}, 2);
    ASSERT_EQ(got.size(), 2u) << t.what;
    EXPECT_EQ(got[0].second.wr_id, 1u) << t.what;
    EXPECT_EQ(got[0].second.status, hwif::wc_status::REM_ACCESS_ERR) << t.what;
    EXPECT_EQ(got[1].second.wr_id, 2u) << t.what;
    EXPECT_EQ(got[1].second.status, hwif::wc_status::WR_FLUSH_ERR) << t.what;
    EXPECT_EQ(watch.hits, 0u) << t.what << ": DMA touched the protected region";
    EXPECT_EQ(b.qp_state(5), 6u) << t.what << ": the responder QP goes to ERR";
    EXPECT_EQ(a.qp_state(2), 6u) << t.what << ": the requester QP goes to ERR";
    for (int i = 0; i < 8192; i++) ASSERT_EQ(a.data.p[i], 0x77) << t.what << ": scatter list written at " << i;
  }
}

// A READ whose local scatter list fails the protection check (a key of no MR, or an MR without
// LOCAL_WRITE) completes with LOC_PROT_ERR before anything is sent: no READ request on the wire.
TEST(TopRead, BadScatterListFailsLocallyWithoutARequest) {
  for (bool no_local_write : {false, true}) {
    sim::World w(cfg(2));
    RdmaNode a(w, 0, kReadAccess), b(w, 1, kReadAccess);
    ASSERT_TRUE(a.ok && b.ok);
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    Watch watch(b);
    // MR 3: readable but not writable locally
    ASSERT_EQ(a.h.set_mr(3, (3u << 8) | 1, 1, a.va(1 << 21), 4096, a.data.iova + (1 << 21), acc::REMOTE_READ), 0u);
    const uint32_t lkey = no_local_write ? ((3u << 8) | 1) : (Node::kKey ^ 0x80);
    const uint64_t addr = no_local_write ? a.va(1 << 21) : a.va(0);
    post_read(a, 2, 1, {{addr, 100, lkey}}, b.tva(0), RdmaNode::kTKey);
    auto got = wait_cqes(w, {&a}, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].second.status, hwif::wc_status::LOC_PROT_ERR);
    EXPECT_EQ(watch.hits, 0u);
    EXPECT_EQ(a.stat(hwif::stat::TX_PKTS), 0u) << "a READ request was sent";
    EXPECT_EQ(a.qp_state(2), 6u);
  }
}

// A READ to a QP whose qp_access_flags lack REMOTE_READ is an invalid request (IBA 9.7.4.1.2):
// REM_INV_REQ_ERR at the requester, no DMA, the responder QP in ERR, though the MR grants REMOTE_READ.
TEST(TopRead, ReadToQpWithoutRemoteReadIsInvalid) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kReadAccess), b(w, 1, kReadAccess);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  RawHost::QpCfg qb = b.qp(2, 0);
  qb.access = acc::REMOTE_WRITE;
  ASSERT_EQ(b.h.set_qp(5, qb), 0u);
  Watch watch(b);
  post_read(a, 2, 1, {{a.va(0), 3000, Node::kKey}}, b.tva(0), RdmaNode::kTKey);
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, hwif::wc_status::REM_INV_REQ_ERR);
  EXPECT_EQ(watch.hits, 0u);
  EXPECT_EQ(b.qp_state(5), 6u);
}

// A zero-length READ names no memory: no key is checked (as for a zero-length WRITE) and nothing is
// touched; it completes with a READ_RESP_ONLY of no payload.
TEST(TopRead, ZeroLengthReadNeedsNoKey) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kReadAccess), b(w, 1, acc::LOCAL_WRITE);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  Watch watch(b);
  post_read(a, 2, 1, {}, 0, 0xDEAD);
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, 0);
  EXPECT_EQ(got[0].second.opcode, hwif::wc_op::RDMA_READ);
  EXPECT_EQ(watch.hits, 0u);
  EXPECT_EQ(b.qp_state(5), 3u);
}

// ibv_dereg_mr of the READ's own scatter list with the READ in flight: the requester's MR is
// invalidated (SET_MR, VALID 0) while a 256-packet READ lands in it. Once the command is done not
// one byte more reaches the region (the next response finds the MR table changed and checks the
// READ's list again, which fails), the READ completes with LOC_PROT_ERR and the QP is in ERR. The
// bytes placed before are the source's.
TEST(TopRead, InvalidatedLocalKeyStopsAReadInFlight) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kReadAccess), b(w, 1, kReadAccess);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  const uint32_t len = 1 << 18;   // 256 responses of 1 KiB
  fill(b.target.p, len, 4);
  std::memset(a.data.p, 0, len);
  const uint64_t lo = a.data.iova, hi = a.data.iova + len;
  uint64_t hits = 0;
  a.h.mmu().set_observer([&](bool, uint64_t iova, const uint8_t*, size_t n) {
    if (iova < hi && iova + n > lo) hits++;
  });
  post_read(a, 2, 1, {{a.va(0), len, Node::kKey}}, b.tva(0), RdmaNode::kTKey);
  for (int i = 0; i < 1000 && hits < 20; i++) w.progress(200);
  ASSERT_GE(hits, 20u) << "the READ's data did not start to land";
  ASSERT_LT(hits, 200u) << "the READ finished before the key could be invalidated";
  a.h.cmd(hwif::cmd::SET_MR, 1, {{hwif::cmd::set_mr::VALID, 0}});
  while (a.h.rd(hwif::reg::CMD_STATUS) & 1) {}
  const uint64_t at_invalidate = hits;
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, hwif::wc_status::LOC_PROT_ERR);
  EXPECT_EQ(got[0].second.opcode, hwif::wc_op::RDMA_READ);
  EXPECT_EQ(hits, at_invalidate) << "DMA into the scatter list after its key was invalidated";
  EXPECT_EQ(a.qp_state(2), 6u);
  const size_t landed = landed_prefix(a.data.p, b.target.p, len);
  EXPECT_GT(landed, 0u);
  EXPECT_LT(landed, size_t(len));
  for (size_t i = landed; i < len; i++) ASSERT_EQ(a.data.p[i], 0) << "byte " << i << " written after the stop";
}

// ibv_dereg_mr of the READ's source at the responder with a READ being answered: the key is invalid
// for every request from the command on (a READ arriving later is NAKed), and the command is busy
// until the responses already accepted are out, so that once it is done not one DMA access touches
// the region. (The accepted READ completes with its data: the responder checked its range before.)
TEST(TopRead, InvalidatedRemoteKeyWaitsForTheReadBeingAnswered) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0, kReadAccess), b(w, 1, kReadAccess);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  const uint32_t len = 1 << 18;
  fill(b.target.p, len, 8);
  Watch watch(b);
  post_read(a, 2, 1, {{a.va(0), len, Node::kKey}}, b.tva(0), RdmaNode::kTKey);
  for (int i = 0; i < 1000 && watch.hits < 20; i++) w.progress(200);
  ASSERT_GE(watch.hits, 20u) << "the responder did not start reading";
  b.h.cmd(hwif::cmd::SET_MR, 2, {{hwif::cmd::set_mr::VALID, 0}});
  while (b.h.rd(hwif::reg::CMD_STATUS) & 1) {}
  const uint64_t at_invalidate = watch.hits;
  // A READ after the invalidation: NAKed, no access.
  post_read(a, 2, 2, {{a.va(len), 100, Node::kKey}}, b.tva(0), RdmaNode::kTKey);
  auto got = wait_cqes(w, {&a}, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].second.status, 0);
  EXPECT_EQ(std::memcmp(a.data.p, b.target.p, len), 0);
  EXPECT_EQ(got[1].second.status, hwif::wc_status::REM_ACCESS_ERR);
  EXPECT_EQ(watch.hits, at_invalidate) << "DMA from the region after its key's invalidation was done";
  EXPECT_EQ(b.qp_state(5), 6u);
}
