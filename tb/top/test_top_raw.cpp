// Top-level tests of tmnic_top at the HW/SW interface, without the driver: registers, commands,
// doorbells, WQE fetch, segmentation, loopback and two-NIC delivery, RNR, protection errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <random>

#include "raw/raw_host.hpp"

using namespace tmnic;
using namespace tmnic::raw;

namespace {

sim::SimConfig cfg(int nics) {
  sim::SimConfig c = sim::SimConfig::from_env();   // TMNIC_WAVES etc. apply
  c.num_nics = nics;
  return c;
}

}  // namespace

TEST(TopRaw, IdentityAndLimits) {
  sim::World w(cfg(1));
  RawHost h(w, 0);
  EXPECT_EQ(h.rd(hwif::reg::ID), hwif::DEVICE_ID);
  EXPECT_EQ(h.rd(hwif::reg::ABI_VERSION) >> 16, hwif::ABI_MAJOR);
  EXPECT_EQ(h.rd(hwif::reg::DATA_BYTES), sim::NicSim::beat_bytes()) << "the register tells the model's port width";
  EXPECT_EQ(h.rd(hwif::reg::MAX_SGE), hwif::WQE_MAX_SGE);
  EXPECT_EQ(h.rd(hwif::reg::IPV4), sim::World::ipv4_of(0));
  EXPECT_EQ(h.rd(hwif::reg::MAC_LO), uint32_t(sim::World::mac_of(0)));
  EXPECT_EQ(h.cmd(0x77, 0, {}) & 2u, 2u) << "unknown command must set the error bit";
  EXPECT_EQ(h.set_cq(9999, 0, 4) & 2u, 2u) << "CQ index out of range must set the error bit";
}

TEST(TopRaw, LoopbackSendsOfEverySize) {
  sim::World w(cfg(1));
  Node n(w, 0);
  ASSERT_TRUE(n.ok);
  ASSERT_EQ(n.h.set_qp(2, n.qp(3, 0)), 0u);
  ASSERT_EQ(n.h.set_qp(3, n.qp(2, 0)), 0u);
  std::vector<uint32_t> sizes = {0, 1, 63, 64, 65, 1023, 1024, 1025, 4096, 10000, 65536};
  std::mt19937 rng(5);
  for (size_t i = 0; i < sizes.size(); i++) n.post_srq(100 + i, {{n.va(2 << 20) + i * 70000, 70000, Node::kKey}});
  size_t src = 0;
  std::vector<size_t> src_off;
  for (size_t i = 0; i < sizes.size(); i++) {
    src_off.push_back(src + 3);   // unaligned source
    for (uint32_t b = 0; b < sizes[i]; b++) n.data.p[src + 3 + b] = uint8_t(rng());
    n.post_send(2, i, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{n.va(src + 3), sizes[i], Node::kKey}});
    src += sizes[i] + 64;
  }
  auto got = wait_cqes(w, {&n}, 2 * sizes.size());
  for (auto& g : got) if (got.size() != 2 * sizes.size())
    std::printf("cqe wr_id %lu op %u status %u len %u\n", (unsigned long)g.second.wr_id, g.second.opcode, g.second.status, g.second.byte_len);
  ASSERT_EQ(got.size(), 2 * sizes.size());
  std::map<uint64_t, Cqe> recv, send;
  for (auto& g : got) (g.second.opcode == hwif::wc_op::RECV ? recv : send)[g.second.wr_id] = g.second;
  for (size_t i = 0; i < sizes.size(); i++) {
    ASSERT_TRUE(send.count(i)) << "send completion " << i;
    EXPECT_EQ(send[i].status, 0) << i;
    ASSERT_TRUE(recv.count(100 + i)) << "recv completion " << i;
    const Cqe& c = recv[100 + i];
    EXPECT_EQ(c.status, 0) << i;
    EXPECT_EQ(c.byte_len, sizes[i]) << i;
    EXPECT_EQ(c.qp_num, 3u);
    EXPECT_EQ(c.src_qp, 2u);
    EXPECT_EQ(std::memcmp(n.data.p + (2 << 20) + i * 70000, n.data.p + src_off[i], sizes[i]), 0) << "data of message " << i;
  }
  EXPECT_GT(n.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::LOOPBACK), 0u);
  EXPECT_EQ(n.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::RX_DROP_ICRC), 0u);
}

TEST(TopRaw, TwoNicsAndRnr) {
  sim::World w(cfg(2));
  Node a(w, 0), b(w, 1);
  ASSERT_TRUE(a.ok && b.ok);
  ASSERT_EQ(a.h.set_qp(2, a.qp(5, 1)), 0u);
  ASSERT_EQ(b.h.set_qp(5, b.qp(2, 0)), 0u);
  for (uint32_t k = 0; k < 5000; k++) a.data.p[k] = uint8_t(k * 7);
  // No receive buffer yet: the responder answers RNR NAK, the requester retries forever (rnr_retry 7).
  a.post_send(2, 1, hwif::wqe_op::SEND_WITH_IMM, hwif::wqe_flag::SIGNALED, {{a.va(0), 2000, Node::kKey}, {a.va(2000), 3000, Node::kKey}}, 0x11223344);
  for (int i = 0; i < 20 && b.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::TX_RNR_NAKS) == 0; i++) w.progress(10000);
  EXPECT_GT(b.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::TX_RNR_NAKS), 0u);
  b.post_srq(77, {{b.va(100), 1000, Node::kKey}, {b.va(9000), 8000, Node::kKey}});
  auto got = wait_cqes(w, {&a, &b}, 2);
  ASSERT_EQ(got.size(), 2u);
  for (auto& g : got) {
    EXPECT_EQ(g.second.status, 0);
    if (g.first == 1) {
      EXPECT_EQ(g.second.wr_id, 77u);
      EXPECT_EQ(g.second.byte_len, 5000u);
      EXPECT_EQ(g.second.wc_flags & hwif::wc_flag::WITH_IMM, hwif::wc_flag::WITH_IMM);
      uint32_t imm_wire = 0;
      std::memcpy(&imm_wire, "\x44\x33\x22\x11", 4);
      EXPECT_EQ(g.second.imm, 0x11223344u);
    }
  }
  EXPECT_EQ(std::memcmp(b.data.p + 100, a.data.p, 1000), 0);
  EXPECT_EQ(std::memcmp(b.data.p + 9000, a.data.p + 1000, 4000), 0);
  EXPECT_GT(a.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::RETRANSMITS), 0u);
}

TEST(TopRaw, BadLkeyGivesProtectionErrorAndNoPayloadDma) {
  sim::World w(cfg(1));
  Node n(w, 0);
  ASSERT_TRUE(n.ok);
  ASSERT_EQ(n.h.set_qp(2, n.qp(3, 0)), 0u);
  ASSERT_EQ(n.h.set_qp(3, n.qp(2, 0)), 0u);
  uint64_t touched = 0;
  uint64_t lo = n.data.iova, hi = n.data.iova + n.data.len;
  n.h.mmu().set_observer([&](bool, uint64_t iova, const uint8_t*, size_t len) { if (iova < hi && iova + len > lo) touched++; });
  n.post_send(2, 9, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{n.va(0), 100, Node::kKey ^ 1}});
  auto got = wait_cqes(w, {&n}, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].second.status, hwif::wc_status::LOC_PROT_ERR);
  EXPECT_EQ(got[0].second.wr_id, 9u);
  EXPECT_EQ(touched, 0u) << "no DMA may touch the buffer of a WQE that fails the protection check";
  EXPECT_EQ(n.h.rd(hwif::reg::STATS0 + 4 * hwif::stat::PROT_ERR), 1u);
}

// Many QPs at once, spread over the whole QP range of the device (the lowest, the highest, one in
// every sixteenth of the range), each with its own send ring, in loopback pairs. Every QP posts its
// messages before any is sent, so the send engine's scheduler has many ready QPs at a time. Each
// send completes once, in order per QP; each message arrives once, in order per QP, with its bytes.
TEST(TopRaw, ManyQpsAcrossTheRange) {
  sim::World w(cfg(1));
  Node n(w, 0);
  ASSERT_TRUE(n.ok);
  const uint32_t nqp = n.h.rd(hwif::reg::NUM_QP);
  std::vector<uint32_t> qps;
  auto add = [&](uint32_t q) { if (q >= hwif::QPN_FIRST && q < nqp && std::find(qps.begin(), qps.end(), q) == qps.end()) qps.push_back(q); };
  for (uint32_t q = hwif::QPN_FIRST; q < hwif::QPN_FIRST + 16; q++) add(q);
  for (uint32_t k = 1; k < 16; k++) add(k * (nqp / 16) + 5);
  for (uint32_t q = nqp - 16; q < nqp; q++) add(q);
  if (qps.size() % 2) qps.erase(qps.begin() + 16);   // pairs; keep the lowest and the highest
  ASSERT_GE(qps.size(), 32u);
  EXPECT_EQ(qps.back(), nqp - 1) << "the highest QP is part of the test";
  std::printf("[info] device with %u QPs: %zu of them in use, QP %u to QP %u\n", nqp, qps.size(), qps.front(), qps.back());
  constexpr uint32_t kLog = 3, kMsgs = 2;
  std::map<uint32_t, uint32_t> peer;
  std::vector<std::unique_ptr<DmaBuf>> rings;
  for (size_t i = 0; i < qps.size(); i += 2) {
    peer[qps[i]] = qps[i + 1];
    peer[qps[i + 1]] = qps[i];
  }
  std::map<uint32_t, size_t> ring_of;
  for (uint32_t q : qps) {
    rings.push_back(std::make_unique<DmaBuf>(n.h.mmu(), (1u << kLog) * hwif::WQE_STRIDE));
    ring_of[q] = rings.size() - 1;
    RawHost::QpCfg c = n.qp(peer[q], 0);
    c.sq_base = rings.back()->iova;
    c.sq_log = kLog;
    ASSERT_EQ(n.h.set_qp(q, c), 0u) << "QP " << q;
  }
  // Receive buffers: 2 KiB each, one per message.
  const size_t nmsg = qps.size() * kMsgs;
  const size_t rbase = 2 << 20;
  for (size_t i = 0; i < nmsg; i++) n.post_srq(1000 + i, {{n.va(rbase + i * 2048), 2048, Node::kKey}});
  // Messages: random sizes 0..2048 from random places of the first MiB.
  std::mt19937 rng(11);
  for (size_t b = 0; b < (1u << 20); b++) n.data.p[b] = uint8_t(rng());
  struct Msg { size_t off; uint32_t len; };
  std::map<uint32_t, std::vector<Msg>> sent;
  for (uint32_t k = 0; k < kMsgs; k++)
    for (uint32_t q : qps) {
      Msg m{rng() % ((1u << 20) - 2048), uint32_t(rng() % 2049)};
      sent[q].push_back(m);
      RawHost::put_wqe(rings[ring_of[q]]->p + k * hwif::WQE_STRIDE, (uint64_t(q) << 8) | k, hwif::wqe_op::SEND,
                       hwif::wqe_flag::SIGNALED, {{n.va(m.off), m.len, Node::kKey}});
    }
  for (uint32_t q : qps) n.h.wr(hwif::reg::DB_SQ0 + 4 * q, kMsgs);
  auto got = wait_cqes(w, {&n}, 2 * nmsg);
  ASSERT_EQ(got.size(), 2 * nmsg);
  std::map<uint32_t, uint32_t> next_send, next_recv;
  for (auto& g : got) {
    const Cqe& c = g.second;
    ASSERT_EQ(c.status, 0) << "wr_id " << c.wr_id;
    if (c.opcode == hwif::wc_op::RECV) {
      // Arrived on QP qp_num, sent by its peer: the peer's next message, byte for byte.
      ASSERT_TRUE(peer.count(c.qp_num)) << "receive on QP " << c.qp_num;
      const uint32_t src = peer[c.qp_num];
      const uint32_t k = next_recv[src]++;
      ASSERT_LT(k, kMsgs) << "QP " << src << " delivered too often";
      const Msg& m = sent[src][k];
      EXPECT_EQ(c.byte_len, m.len) << "message " << k << " of QP " << src;
      const size_t slot = c.wr_id - 1000;
      EXPECT_EQ(std::memcmp(n.data.p + rbase + slot * 2048, n.data.p + m.off, m.len), 0)
          << "payload of message " << k << " of QP " << src;
    } else {
      const uint32_t q = uint32_t(c.wr_id >> 8), k = uint32_t(c.wr_id & 0xFF);
      EXPECT_EQ(c.qp_num, q);
      EXPECT_EQ(k, next_send[q]++) << "send completions of QP " << q << " out of order";
    }
  }
  for (uint32_t q : qps) {
    EXPECT_EQ(next_send[q], kMsgs) << "QP " << q;
    EXPECT_EQ(next_recv[q], kMsgs) << "QP " << q;
  }
}
