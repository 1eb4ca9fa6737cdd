// RDMA WRITE at the HW/SW interface, without the driver (IBA 9.4.3, 9.7.4.1, 10.6.7.2): the
// requester's WRITE packets with their RETH, the responder's rkey check against the MR table
// (valid, key, PD of the QP, bounds, REMOTE_WRITE), data placement, WRITE_WITH_IMM consuming a
// receive WQE, and what a violation does on both sides: NAK remote access error, REM_ACCESS_ERR at
// the requester, both QPs to ERR and not one DMA access to the target region.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "rdma_node.hpp"

using namespace tmnic;
using namespace tmnic::raw;

using namespace tmnic::raw::rdma;
namespace acc = hwif::access;


// Every size class (empty, one byte, around a beat, around the 1 KiB PMTU, several packets) in
// loopback and between two NICs; one message gathered from three SGEs. The bytes land exactly in the
// named range (the bytes around it unchanged), the requester completes with opcode RDMA_WRITE, and
// no receive WQE is consumed (the SEND after the WRITEs takes the first SRQ WQE).
TEST(TopRdma, WriteOfEverySizeLandsExactly) {
  for (int nics : {1, 2}) {
    sim::World w(cfg(nics));
    RdmaNode a(w, 0);
    std::unique_ptr<RdmaNode> bp = nics == 2 ? std::make_unique<RdmaNode>(w, 1) : nullptr;
    RdmaNode& b = nics == 2 ? *bp : a;
    ASSERT_TRUE(a.ok && b.ok);
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, nics - 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    std::memset(b.target.p, 0xEE, b.target.len);
    fill(a.data.p, 1 << 20, 7);
    const std::vector<uint32_t> sizes = {0, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 10000, 65536};
    size_t dst = 5;
    std::vector<size_t> dsts;
    for (size_t i = 0; i < sizes.size(); i++) {
      dsts.push_back(dst);
      a.post_write(2, i, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED, {{a.va(1000 * i + 3), sizes[i], Node::kKey}},
                   b.tva(dst), RdmaNode::kTKey);
      dst += sizes[i] + 32;
    }
    // Gathered from three SGEs into one range.
    const size_t g_dst = dst;
    a.post_write(2, 50, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED,
                 {{a.va(200000), 700, Node::kKey}, {a.va(300001), 1500, Node::kKey}, {a.va(400002), 3, Node::kKey}},
                 b.tva(g_dst), RdmaNode::kTKey);
    // A SEND after them: takes SRQ WQE 77, the first one posted.
    b.post_srq(77, {{b.va(3 << 20), 100, Node::kKey}});
    a.post_send(2, 51, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{a.va(0), 10, Node::kKey}});
    auto got = wait_cqes(w, nics == 2 ? std::vector<Node*>{&a, &b} : std::vector<Node*>{&a}, sizes.size() + 3);
    ASSERT_EQ(got.size(), sizes.size() + 3);
    std::map<uint64_t, Cqe> c;
    for (auto& g : got) c[g.second.wr_id] = g.second;
    for (size_t i = 0; i < sizes.size(); i++) {
      ASSERT_TRUE(c.count(i)) << i;
      EXPECT_EQ(c[i].status, 0) << i;
      EXPECT_EQ(c[i].opcode, hwif::wc_op::RDMA_WRITE) << i;
      EXPECT_EQ(std::memcmp(b.target.p + dsts[i], a.data.p + 1000 * i + 3, sizes[i]), 0) << "size " << sizes[i];
      EXPECT_EQ(b.target.p[dsts[i] + sizes[i]], 0xEE) << "byte after the range, size " << sizes[i];
      EXPECT_EQ(b.target.p[dsts[i] - 1], 0xEE) << "byte before the range, size " << sizes[i];
    }
    EXPECT_EQ(c[50].status, 0);
    EXPECT_EQ(std::memcmp(b.target.p + g_dst, a.data.p + 200000, 700), 0);
    EXPECT_EQ(std::memcmp(b.target.p + g_dst + 700, a.data.p + 300001, 1500), 0);
    EXPECT_EQ(std::memcmp(b.target.p + g_dst + 2200, a.data.p + 400002, 3), 0);
    ASSERT_TRUE(c.count(77));
    EXPECT_EQ(c[77].opcode, hwif::wc_op::RECV);
    EXPECT_EQ(c[77].byte_len, 10u);
    EXPECT_EQ(b.qp_state(5), 3u) << "the responder stays in RTS";
  }
}

// WRITE_WITH_IMM: the data goes to the RETH range; the receive WQE it consumes (here from the SRQ,
// posted only after the requester met an RNR NAK) completes as RECV_RDMA_WITH_IMM with the
// immediate and the WRITE's length, and its own buffer is not written.
TEST(TopRdma, WriteWithImmConsumesAReceiveWqe) {
  for (uint32_t len : {0u, 40u, 3000u}) {
    sim::World w(cfg(2));
    RdmaNode a(w, 0), b(w, 1);
    ASSERT_TRUE(a.ok && b.ok);
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    fill(a.data.p, 8192, len);
    std::memset(b.data.p, 0x5C, 4096);
    a.post_write(2, 1, hwif::wqe_op::RDMA_WRITE_WITH_IMM, hwif::wqe_flag::SIGNALED, {{a.va(0), len, Node::kKey}},
                 b.tva(100), RdmaNode::kTKey, 0xA1B2C3D4);
    for (int i = 0; i < 20 && b.stat(hwif::stat::TX_RNR_NAKS) == 0; i++) w.progress(10000);
    EXPECT_GT(b.stat(hwif::stat::TX_RNR_NAKS), 0u) << "no receive WQE: RNR NAK";
    b.post_srq(9, {{b.va(0), 4096, Node::kKey}});
    auto got = wait_cqes(w, {&a, &b}, 2);
    ASSERT_EQ(got.size(), 2u) << len;
    for (auto& g : got) {
      EXPECT_EQ(g.second.status, 0);
      if (g.first == 0) {
        EXPECT_EQ(g.second.opcode, hwif::wc_op::RDMA_WRITE);
      } else {
        EXPECT_EQ(g.second.wr_id, 9u);
        EXPECT_EQ(g.second.opcode, hwif::wc_op::RECV_RDMA_WITH_IMM);
        EXPECT_EQ(g.second.byte_len, len);
        EXPECT_EQ(g.second.imm, 0xA1B2C3D4u);
        EXPECT_EQ(g.second.wc_flags & hwif::wc_flag::WITH_IMM, hwif::wc_flag::WITH_IMM);
        EXPECT_EQ(g.second.qp_num, 5u);
      }
    }
    EXPECT_EQ(std::memcmp(b.target.p + 100, a.data.p, len), 0);
    for (int i = 0; i < 4096; i++) ASSERT_EQ(b.data.p[i], 0x5C) << "the receive WQE's buffer was written at " << i;
  }
}

// Each protection violation: the requester's WRITE completes with REM_ACCESS_ERR, the responder
// makes no DMA access to its region at all, and both QPs end in ERR; a later WQE is flushed.
TEST(TopRdma, ProtectionViolationsAreNakedWithoutDma) {
  struct Case { const char* what; uint32_t access, pd, rkey; uint64_t off; uint32_t len; };
  const uint32_t k = RdmaNode::kTKey;
  const std::vector<Case> cases = {
      {"wrong rkey", acc::REMOTE_WRITE, 1, k ^ 0x01, 0, 100},
      {"rkey of another PD", acc::REMOTE_WRITE, 2, k, 0, 100},
      {"one byte past the end", acc::REMOTE_WRITE, 1, k, (1 << 20) - 99, 100},
      {"below the start", acc::REMOTE_WRITE, 1, k, uint64_t(-1), 100},
      {"no REMOTE_WRITE", acc::LOCAL_WRITE | acc::REMOTE_READ, 1, k, 0, 100},
      {"multi-packet, no REMOTE_WRITE", acc::LOCAL_WRITE, 1, k, 0, 5000},
  };
  for (const Case& t : cases) {
    sim::World w(cfg(2));
    RdmaNode a(w, 0), b(w, 1, t.access, t.pd);
    ASSERT_TRUE(a.ok && b.ok) << t.what;
    ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
    ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
    Watch watch(b);
    a.post_write(2, 1, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED, {{a.va(0), t.len, Node::kKey}},
                 b.tva(0) + t.off, t.rkey);
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
    EXPECT_GT(b.stat(hwif::stat::TX_NAKS), 0u) << t.what;
  }
}

// A zero-length WRITE names no memory, so no key is checked (rxe does the same; the IBA does not
// require an R_Key for a zero-length RDMA operation): it completes even against a region without
// remote rights and a bogus rkey, and touches nothing.
TEST(TopRdma, ZeroLengthWriteNeedsNoKey) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0), b(w, 1, acc::LOCAL_WRITE);   // no remote rights at all
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  Watch watch(b);
  a.post_write(2, 1, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED, {}, 0, 0xDEAD);
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, 0);
  EXPECT_EQ(got[0].second.opcode, hwif::wc_op::RDMA_WRITE);
  EXPECT_EQ(watch.hits, 0u);
  EXPECT_EQ(b.qp_state(5), 3u);
}

// ibv_dereg_mr with a WRITE in flight: the target's MR is invalidated (SET_MR, VALID 0) while a
// 256-packet WRITE into it arrives. The command is busy until the responder is quiet; from then on
// not one byte reaches the region (the next packet's check of the held range fails), the requester
// completes with REM_ACCESS_ERR and the responder QP is in ERR. The bytes placed before are the
// source's.
TEST(TopRdma, InvalidatedKeyStopsAWriteInFlight) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0), b(w, 1);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  fill(a.data.p, 1 << 18, 3);
  std::memset(b.target.p, 0, b.target.len);
  Watch watch(b);
  const uint32_t len = 1 << 18;   // 256 packets of 1 KiB
  a.post_write(2, 1, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED, {{a.va(0), len, Node::kKey}}, b.tva(0),
               RdmaNode::kTKey);
  for (int i = 0; i < 1000 && watch.hits < 20; i++) w.progress(200);
  ASSERT_GE(watch.hits, 20u) << "the WRITE did not start";
  ASSERT_LT(watch.hits, 200u) << "the WRITE finished before the key could be invalidated";
  // SET_MR MR 2 invalid, and wait until the command is done (as ibv_dereg_mr does before unmapping)
  b.h.cmd(hwif::cmd::SET_MR, 2, {{hwif::cmd::set_mr::VALID, 0}});
  while (b.h.rd(hwif::reg::CMD_STATUS) & 1) {}
  const uint64_t at_invalidate = watch.hits;
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, hwif::wc_status::REM_ACCESS_ERR);
  EXPECT_EQ(watch.hits, at_invalidate) << "DMA into the region after its key was invalidated";
  EXPECT_EQ(b.qp_state(5), 6u);
  // What did land is the source's prefix (whole packets of 1 KiB).
  const size_t landed = landed_prefix(b.target.p, a.data.p, len);
  EXPECT_GT(landed, 0u);
  EXPECT_LT(landed, size_t(len));
  for (size_t i = landed; i < len; i++) ASSERT_EQ(b.target.p[i], 0) << "byte " << i << " written after the stop";
}

// A WRITE to a QP whose qp_access_flags lack REMOTE_WRITE (SET_QP.ACCESS) is an invalid request
// (IBA 9.7.4.1.2, as rxe and mlx5 answer it): NAK invalid request, REM_INV_REQ_ERR at the requester,
// no DMA, the responder QP in ERR; even though the MR itself grants REMOTE_WRITE.
TEST(TopRdma, WriteToQpWithoutRemoteWriteIsInvalid) {
  sim::World w(cfg(2));
  RdmaNode a(w, 0), b(w, 1);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  RawHost::QpCfg qb = b.qp(2, 0);
  qb.access = acc::REMOTE_READ;
  ASSERT_EQ(b.h.set_qp(5, qb), 0u);
  Watch watch(b);
  a.post_write(2, 1, hwif::wqe_op::RDMA_WRITE, hwif::wqe_flag::SIGNALED, {{a.va(0), 3000, Node::kKey}}, b.tva(0),
               RdmaNode::kTKey);
  auto got = wait_cqes(w, {&a}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, hwif::wc_status::REM_INV_REQ_ERR);
  EXPECT_EQ(watch.hits, 0u);
  EXPECT_EQ(b.qp_state(5), 6u);
}
