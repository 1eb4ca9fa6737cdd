// Tag matching at the HW/SW interface, without the driver: a TM-SRQ configured by SET_SRQ, list
// operations written into its op ring, TM messages sent over loopback from a plain RC QP to a QP on
// the TM-SRQ. Checks completions (opcode, flags, handle, tag, app_ctx, byte_len, hw_cnt), where the
// data lands, phase synchronisation, MPI order, errors and the per-SRQ statistics registers.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "raw/raw_host.hpp"

using namespace tmnic;
using namespace tmnic::raw;

namespace {

namespace hw = tmnic::hwif;
constexpr uint8_t kEager = hw::tmh_op::EAGER, kRndv = hw::tmh_op::RNDV, kNoTag = hw::tmh_op::NO_TAG;
constexpr uint32_t kTmSrq = 1, kOpsLog = 6, kTagNum = 64, kTagBase = 100;
constexpr uint32_t kSender = 2, kReceiver = 3;

sim::SimConfig cfg() {
  sim::SimConfig c = sim::SimConfig::from_env();
  c.num_nics = 1;
  return c;
}

// One NIC: QP 2 (plain) sends to QP 3, which receives through TM-SRQ 1 (SRQ ring + op ring, CQ 0).
struct TmBench {
  sim::World w{cfg()};
  Node n{w, 0};
  TmSrq t{n, kTmSrq, kTagBase, kTagNum, kOpsLog};
  DmaBuf& tsrq = t.ring;
  DmaBuf& ops = t.ops;
  uint32_t& ops_pi = t.ops_pi;
  size_t msg_off = 0;   // next free byte for outgoing messages (first MiB of data)

  explicit TmBench(uint32_t mtu = 3) {
    EXPECT_TRUE(n.ok);
    EXPECT_TRUE(t.ok);
    RawHost::QpCfg s = n.qp(kReceiver, 0);
    s.srq = hw::NO_SRQ;
    s.mtu = mtu;
    s.rq_base = 0;
    EXPECT_EQ(n.h.set_qp(kSender, s), 0u);
    RawHost::QpCfg r = n.qp(kSender, 0);
    r.srq = kTmSrq;
    r.mtu = mtu;
    EXPECT_EQ(n.h.set_qp(kReceiver, r), 0u);
  }
  void op(uint64_t wr_id, uint8_t opcode, uint8_t flags, uint32_t handle, uint64_t tag = 0, uint64_t mask = 0,
          uint64_t addr = 0, uint32_t len = 0, uint32_t lkey = Node::kKey, uint16_t sw_cnt = 0) {
    t.op(wr_id, opcode, flags, handle, tag, mask, addr, len, lkey, sw_cnt);
  }
  void add(uint64_t wr_id, uint32_t handle, uint64_t tag, uint64_t mask, size_t buf_off, uint32_t len,
           bool signaled = true, int sw_cnt = -1) {
    uint8_t f = (signaled ? hw::tm_op_flag::SIGNALED : 0) | (sw_cnt >= 0 ? hw::tm_op_flag::SW_CNT : 0);
    op(wr_id, hw::tm_opcode::ADD, f, handle, tag, mask, n.va(buf_off), len, Node::kKey, uint16_t(sw_cnt < 0 ? 0 : sw_cnt));
  }
  void post_tsrq(uint64_t wr_id, size_t off, uint32_t len) { t.post(wr_id, n.va(off), len); }
  // Builds TMH + payload in the send area and posts it; returns the message's offset in data.
  size_t send(uint64_t wr_id, uint8_t tmh_op, uint64_t tag, uint32_t app_ctx, uint32_t payload, uint32_t seed,
              uint32_t total_override = ~0u) {
    size_t off = msg_off;
    uint8_t* m = n.data.p + off;
    TmSrq::put_tmh(m, tmh_op, tag, app_ctx);
    for (uint32_t i = 0; i < payload; i++) m[16 + i] = uint8_t(seed * 31 + i * 7 + (i >> 8));
    uint32_t total = total_override != ~0u ? total_override : 16 + payload;
    msg_off += (total + 127) & ~size_t(63);
    n.post_send(kSender, wr_id, hw::wqe_op::SEND, hw::wqe_flag::SIGNALED, {{n.va(off), total, Node::kKey}});
    return off;
  }
  std::vector<Cqe> wait(size_t k, uint64_t cycles = 4000000) {
    std::vector<Cqe> out;
    for (auto& g : wait_cqes(w, {&n}, k, cycles)) out.push_back(g.second);
    return out;
  }
  // Completions of the receive side and list ops (opcode >= RECV), sends dropped.
  std::vector<Cqe> wait_rx(size_t k, uint64_t cycles = 4000000) {
    std::vector<Cqe> out;
    uint64_t end = w.now() + cycles;
    while (out.size() < k && w.now() < end) {
      Cqe c;
      bool any = false;
      while (n.poll(&c)) { any = true; if (c.opcode >= hw::wc_op::RECV) out.push_back(c); }
      if (!any && !w.progress(100000)) break;
    }
    return out;
  }
  template <class F>
  void until(F pred, uint64_t cycles) {
    uint64_t end = w.now() + cycles;
    while (!pred() && w.now() < end) w.progress(2000);
  }
  uint32_t tmstat(uint32_t k) { return t.stat(k); }
};

constexpr size_t kBufs = 2 << 20;   // tagged and SRQ buffers live from 2 MiB on

}  // namespace

TEST(TopTm, CapabilityRegisters) {
  TmBench b;
  EXPECT_EQ(b.n.h.rd(hw::reg::TM_MAX_TAGS), 1024u);
  // The RC bit: rendezvous offload on rendezvous QPs (tb/top/test_top_rndv.cpp)
  EXPECT_EQ(hw::regf::tm_caps::RC.get(b.n.h.rd(hw::reg::TM_CAPS)), 1u);
  // Out-of-range engine ranges and a bad CQ are refused.
  EXPECT_EQ(b.n.h.set_srq_tm(2, b.tsrq.iova, 4, 1, b.ops.iova, 4, 0, 1000, 100) & 2u, 2u);
  EXPECT_EQ(b.n.h.set_srq_tm(2, b.tsrq.iova, 4, 1, b.ops.iova, 4, 0, 0, 0) & 2u, 2u);
  EXPECT_EQ(b.n.h.set_srq_tm(2, b.tsrq.iova, 4, 1, b.ops.iova + 8, 4, 0, 0, 8) & 2u, 2u);
  EXPECT_EQ(b.n.h.set_srq_tm(2, b.tsrq.iova, 4, 1, b.ops.iova, 4, 9999, 0, 8) & 2u, 2u);
}

TEST(TopTm, ExpectedEagerSingleAndMultiPacket) {
  TmBench b(3);   // MTU 1024
  b.add(11, 5, 0x1234, ~0ull, kBufs, 8192);
  b.add(12, 6, 0x5678, ~0ull, kBufs + 8192, 8192);
  auto adds = b.wait_rx(2);
  ASSERT_EQ(adds.size(), 2u);
  for (int i = 0; i < 2; i++) {
    EXPECT_EQ(adds[i].opcode, hw::wc_op::TM_ADD);
    EXPECT_EQ(adds[i].status, hw::wc_status::SUCCESS);
    EXPECT_EQ(adds[i].wr_id, 11u + i);
    EXPECT_EQ(adds[i].tm_handle, 5u + i);
    EXPECT_EQ(adds[i].tm_hw_cnt, 0u);
    EXPECT_EQ(adds[i].wqe_idx, i);
  }
  size_t m1 = b.send(1, kEager, 0x1234, 0xA1B2C3D4, 100, 1);
  auto c1 = b.wait_rx(1);
  ASSERT_EQ(c1.size(), 1u);
  EXPECT_EQ(c1[0].opcode, hw::wc_op::TM_RECV);
  EXPECT_EQ(c1[0].status, hw::wc_status::SUCCESS);
  EXPECT_EQ(c1[0].wc_flags, hw::wc_flag::TM_MATCH | hw::wc_flag::TM_DATA_VALID);
  EXPECT_EQ(c1[0].tm_handle, 5u);
  EXPECT_EQ(c1[0].tm_tag, 0x1234u);
  EXPECT_EQ(c1[0].tm_app_ctx, 0xA1B2C3D4u);
  EXPECT_EQ(c1[0].byte_len, 100u) << "byte_len excludes the TMH";
  EXPECT_EQ(c1[0].qp_num, kReceiver);
  EXPECT_EQ(std::memcmp(b.n.data.p + kBufs, b.n.data.p + m1 + 16, 100), 0) << "payload without TMH at buffer offset 0";
  size_t m2 = b.send(2, kEager, 0x5678, 7, 5000, 2);   // 5 packets at MTU 1024
  auto c2 = b.wait_rx(2);
  ASSERT_EQ(c2.size(), 2u);
  EXPECT_EQ(c2[0].wc_flags, hw::wc_flag::TM_MATCH) << "first completion: match, data follows";
  EXPECT_EQ(c2[0].tm_handle, 6u);
  EXPECT_EQ(c2[0].tm_tag, 0x5678u);
  EXPECT_EQ(c2[1].wc_flags, hw::wc_flag::TM_DATA_VALID);
  EXPECT_EQ(c2[1].tm_handle, 6u);
  EXPECT_EQ(c2[1].tm_tag, 0x5678u);
  EXPECT_EQ(c2[1].byte_len, 5000u);
  EXPECT_EQ(std::memcmp(b.n.data.p + kBufs + 8192, b.n.data.p + m2 + 16, 5000), 0);
  EXPECT_EQ(b.tmstat(hw::tmstat::EXPECTED), 2u);
  EXPECT_EQ(b.tmstat(hw::tmstat::OCCUPANCY), 0u);
  EXPECT_EQ(b.tmstat(hw::tmstat::HIGH_WATER), 2u);
}

TEST(TopTm, UnexpectedThenPhaseSync) {
  TmBench b;
  for (int i = 0; i < 4; i++) b.post_tsrq(900 + i, kBufs + 0x10000 * (i + 1), 4096);
  size_t m1 = b.send(1, kEager, 0x77, 3, 200, 3);        // nothing posted: unexpected
  auto c1 = b.wait_rx(1);
  ASSERT_EQ(c1.size(), 1u);
  EXPECT_EQ(c1[0].opcode, hw::wc_op::TM_RECV);
  EXPECT_EQ(c1[0].wc_flags, 0u);
  EXPECT_EQ(c1[0].wr_id, 900u);
  EXPECT_EQ(c1[0].byte_len, 216u) << "the whole message, TMH included";
  EXPECT_EQ(c1[0].tm_tag, 0u);
  EXPECT_EQ(std::memcmp(b.n.data.p + kBufs + 0x10000, b.n.data.p + m1, 216), 0);
  // Added out of phase (software has not reported the unexpected message): disabled.
  b.add(21, 1, 0x88, ~0ull, kBufs, 4096, true, 0);
  auto a1 = b.wait_rx(1);
  ASSERT_EQ(a1.size(), 1u);
  EXPECT_EQ(a1[0].tm_hw_cnt, 1u);
  EXPECT_EQ(b.tmstat(hw::tmstat::DISABLED), 1u);
  b.send(2, kEager, 0x88, 4, 50, 4);
  auto c2 = b.wait_rx(1);
  ASSERT_EQ(c2.size(), 1u);
  EXPECT_EQ(c2[0].wc_flags, 0u) << "a disabled entry must not match";
  EXPECT_EQ(c2[0].wr_id, 901u);
  // SYNC with a stale count keeps it disabled; the right count (2) enables it.
  b.op(31, hw::tm_opcode::SYNC, hw::tm_op_flag::SIGNALED | hw::tm_op_flag::SW_CNT, 0, 0, 0, 0, 0, 0, 1);
  b.op(32, hw::tm_opcode::SYNC, hw::tm_op_flag::SIGNALED | hw::tm_op_flag::SW_CNT, 0, 0, 0, 0, 0, 0, 2);
  auto s = b.wait_rx(2);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].opcode, hw::wc_op::TM_SYNC);
  EXPECT_EQ(s[1].opcode, hw::wc_op::TM_SYNC);
  EXPECT_EQ(s[1].tm_hw_cnt, 2u);
  EXPECT_EQ(b.tmstat(hw::tmstat::DISABLED), 0u);
  EXPECT_EQ(b.tmstat(hw::tmstat::PHASE), (2u << 16) | 2u);
  size_t m3 = b.send(3, kEager, 0x88, 5, 60, 5);
  auto c3 = b.wait_rx(1);
  ASSERT_EQ(c3.size(), 1u);
  EXPECT_EQ(c3[0].wc_flags, hw::wc_flag::TM_MATCH | hw::wc_flag::TM_DATA_VALID);
  EXPECT_EQ(c3[0].tm_handle, 1u);
  EXPECT_EQ(std::memcmp(b.n.data.p + kBufs, b.n.data.p + m3 + 16, 60), 0);
  EXPECT_EQ(b.tmstat(hw::tmstat::UNEXPECTED), 2u);
  EXPECT_EQ(b.tmstat(hw::tmstat::SYNCS), 3u);
}

TEST(TopTm, NoTagShortAndReservedGoToSrqWhole) {
  TmBench b;
  for (int i = 0; i < 4; i++) b.post_tsrq(700 + i, kBufs + 0x1000 * i, 4096);
  b.add(1, 0, 0x1, ~0ull, kBufs + 0x100000, 256, false);   // must not be matched by any of these
  size_t m1 = b.send(1, kNoTag, 0x1, 0, 40, 6);
  size_t m2 = b.send(2, kEager, 0x1, 0, 0, 7, 9);            // tagged but shorter than a TMH
  size_t m3 = b.send(3, 0x42, 0x1, 0, 10, 8);                // reserved TMH opcode
  auto c = b.wait_rx(3);
  ASSERT_EQ(c.size(), 3u);
  uint32_t lens[3] = {56, 9, 26};
  size_t offs[3] = {m1, m2, m3};
  for (int i = 0; i < 3; i++) {
    EXPECT_EQ(c[i].opcode, hw::wc_op::TM_NO_TAG) << i;
    EXPECT_EQ(c[i].wc_flags, 0u) << i;
    EXPECT_EQ(c[i].wr_id, 700u + i) << i;
    EXPECT_EQ(c[i].byte_len, lens[i]) << i;
    EXPECT_EQ(std::memcmp(b.n.data.p + kBufs + 0x1000 * i, b.n.data.p + offs[i], lens[i]), 0) << i;
  }
  EXPECT_EQ(b.tmstat(hw::tmstat::NO_TAG), 3u);
  EXPECT_EQ(b.tmstat(hw::tmstat::OCCUPANCY), 1u);
  EXPECT_EQ(b.tmstat(hw::tmstat::PHASE), 0u) << "NO_TAG messages do not count as unexpected";
}

TEST(TopTm, MpiOrderWildcardsAndDelete) {
  TmBench b;
  b.add(1, 10, 0x500, ~0ull, kBufs + 0x0000, 256, false);   // oldest exact
  b.add(2, 11, 0x000, 0, kBufs + 0x1000, 256, false);       // wildcard (mask 0)
  b.add(3, 12, 0x500, ~0ull, kBufs + 0x2000, 256, false);
  b.add(4, 13, 0x5FF, 0xF00, kBufs + 0x3000, 256, false);   // partial mask: 0x5xx
  b.add(5, 14, 0x600, ~0ull, kBufs + 0x4000, 256, false);
  b.op(6, hw::tm_opcode::DEL, hw::tm_op_flag::SIGNALED, 14);           // delete in the middle... at the end
  b.op(7, hw::tm_opcode::DEL, hw::tm_op_flag::SIGNALED, 10);           // ...and the oldest
  auto d = b.wait_rx(2);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].opcode, hw::wc_op::TM_DEL);
  EXPECT_EQ(d[0].status, hw::wc_status::SUCCESS);
  EXPECT_EQ(d[1].status, hw::wc_status::SUCCESS);
  // 0x500 now matches the wildcard (older than handle 12), then 12, then the partial mask 13.
  b.send(1, kEager, 0x500, 0, 8, 9);
  b.send(2, kEager, 0x500, 0, 8, 10);
  b.send(3, kEager, 0x500, 0, 8, 11);
  auto c = b.wait_rx(3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].tm_handle, 11u);
  EXPECT_EQ(c[1].tm_handle, 12u);
  EXPECT_EQ(c[2].tm_handle, 13u);
  // Deleting a consumed entry fails with TM_ERR; so do bad handles and opcodes.
  b.op(8, hw::tm_opcode::DEL, hw::tm_op_flag::SIGNALED, 12);
  b.op(9, hw::tm_opcode::DEL, hw::tm_op_flag::SIGNALED, kTagNum);   // outside the SRQ's range
  b.op(10, 7, hw::tm_op_flag::SIGNALED, 0);                          // unknown opcode
  auto e = b.wait_rx(3);
  ASSERT_EQ(e.size(), 3u);
  for (auto& x : e) EXPECT_EQ(x.status, hw::wc_status::TM_ERR) << x.wr_id;
  EXPECT_EQ(b.tmstat(hw::tmstat::OCCUPANCY), 0u);
}

TEST(TopTm, TaggedBufferTooSmallIsAnErrorWithoutOverrun) {
  TmBench b;
  std::memset(b.n.data.p + kBufs, 0xEE, 512);
  b.add(1, 3, 0x9, ~0ull, kBufs, 64, false);
  b.send(77, kEager, 0x9, 0, 100, 12);
  auto c = b.wait(2);
  ASSERT_EQ(c.size(), 2u);
  std::map<uint8_t, Cqe> by_op;
  for (auto& x : c) by_op[x.opcode] = x;
  ASSERT_TRUE(by_op.count(hw::wc_op::TM_RECV));
  EXPECT_EQ(by_op[hw::wc_op::TM_RECV].status, hw::wc_status::LOC_LEN_ERR);
  EXPECT_EQ(by_op[hw::wc_op::TM_RECV].tm_handle, 3u);
  EXPECT_EQ(by_op[hw::wc_op::TM_RECV].wc_flags, hw::wc_flag::TM_MATCH | hw::wc_flag::TM_DATA_VALID);
  ASSERT_TRUE(by_op.count(hw::wc_op::SEND));
  EXPECT_EQ(by_op[hw::wc_op::SEND].status, hw::wc_status::REM_INV_REQ_ERR);
  for (int i = 0; i < 512; i++) ASSERT_EQ(b.n.data.p[kBufs + i], 0xEE) << "no byte of the too-small buffer is written, byte " << i;
}

TEST(TopTm, RendezvousIsCompletedIncompleteWithHeaders) {
  TmBench b;
  b.add(1, 4, 0xABC, ~0ull, kBufs, 1024, false);
  size_t m = b.send(1, kRndv, 0xABC, 0x55, 48, 13);   // TMH + RVH + 32 bytes of metadata
  auto c = b.wait_rx(1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].opcode, hw::wc_op::TM_RECV);
  EXPECT_EQ(c[0].status, hw::wc_status::TM_RNDV_INCOMPLETE);
  EXPECT_EQ(c[0].wc_flags, hw::wc_flag::TM_MATCH | hw::wc_flag::TM_DATA_VALID);
  EXPECT_EQ(c[0].tm_tag, 0xABCu);
  EXPECT_EQ(c[0].byte_len, 64u);
  EXPECT_EQ(std::memcmp(b.n.data.p + kBufs, b.n.data.p + m, 64), 0) << "TMH and RVH are scattered into the tagged buffer";
}

TEST(TopTm, UnexpectedWithEmptySrqIsRnrAndNotCounted) {
  TmBench b;
  b.send(1, kEager, 0x31, 0, 32, 14);
  b.until([&] { return b.n.h.rd(hw::reg::STATS0 + 4 * hw::stat::TX_RNR_NAKS) >= 2; }, 3000000);
  EXPECT_GE(b.n.h.rd(hw::reg::STATS0 + 4 * hw::stat::TX_RNR_NAKS), 2u);
  EXPECT_EQ(b.tmstat(hw::tmstat::PHASE), 0u) << "a message that was RNR-NAKed is not an unexpected message";
  b.post_tsrq(5, kBufs, 4096);
  auto c = b.wait_rx(1);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].wr_id, 5u);
  EXPECT_EQ(b.tmstat(hw::tmstat::PHASE), 1u << 16);
}

TEST(TopTm, BadLkeyOnTaggedBufferIsProtectionErrorWithoutDma) {
  TmBench b;
  uint64_t touched = 0;
  uint64_t lo = b.n.data.iova + kBufs, hi = lo + 4096;
  b.n.h.mmu().set_observer([&](bool write, uint64_t iova, const uint8_t*, size_t len) {
    if (write && iova < hi && iova + len > lo) touched++;
  });
  b.op(1, hw::tm_opcode::ADD, 0, 2, 0x42, ~0ull, b.n.va(kBufs), 4096, Node::kKey ^ 1);
  b.send(1, kEager, 0x42, 0, 64, 15);
  auto c = b.wait(2);
  ASSERT_EQ(c.size(), 2u);
  bool seen = false;
  for (auto& x : c) if (x.opcode == hw::wc_op::TM_RECV) {
    seen = true;
    EXPECT_EQ(x.status, hw::wc_status::LOC_PROT_ERR);
    EXPECT_EQ(x.tm_handle, 2u);
  }
  EXPECT_TRUE(seen);
  EXPECT_EQ(touched, 0u);
}

TEST(TopTm, ReconfiguringTheSrqClearsItsEntries) {
  TmBench b;
  for (uint32_t h = 0; h < 8; h++) b.add(h, h, 0x100 + h, ~0ull, kBufs + 256 * h, 256, false);
  b.until([&] { return b.tmstat(hw::tmstat::OCCUPANCY) == 8; }, 1000000);
  ASSERT_EQ(b.tmstat(hw::tmstat::OCCUPANCY), 8u);
  ASSERT_EQ(b.n.h.set_srq_tm(kTmSrq, b.tsrq.iova, Node::kLog, 1, b.ops.iova, kOpsLog, 0, kTagBase, kTagNum), 0u);
  b.ops_pi = 0;
  b.until([&] { return b.tmstat(hw::tmstat::OCCUPANCY) == 0; }, 1000000);
  EXPECT_EQ(b.tmstat(hw::tmstat::OCCUPANCY), 0u);
  EXPECT_EQ(b.tmstat(hw::tmstat::HIGH_WATER), 0u);
}
