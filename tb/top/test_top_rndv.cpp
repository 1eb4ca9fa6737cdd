// Hardware rendezvous at the HW/SW interface, without the driver (docs/architecture.md "Rendezvous
// offload"): a rendezvous QP (RC on a TM-SRQ whose send queue is the NIC's own, SQ_BASE in the
// NIC's space) receives a one-packet RNDV request (TMH + RVH) that matches a posted tag; the NIC
// completes MATCH, RDMA-READs the RVH's bytes from the sender's region into the tagged buffer,
// completes DATA_VALID and sends the FIN (the TMH with opcode FIN, and the RVH) back. Checks every
// completion's fields and order per side, the data byte for byte, what is not offloaded, a READ the
// sender refuses (the error completion with the internal wr_id, both QPs in ERR, no DMA into the
// buffer) and more rendezvous than the QP's slots.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "rdma_node.hpp"

using namespace tmnic;
using namespace tmnic::raw;
using namespace tmnic::raw::rdma;
namespace hw = tmnic::hwif;

namespace {

constexpr uint32_t kSend = 2, kRecv = 3, kTmSrq = 1, kTagBase = 0, kTagNum = 64;
constexpr size_t kReqOff = (3 << 20) + (512 << 10);   // the requests, in a's data region
constexpr size_t kFinOff = 3 << 20;    // a's receive buffers (the FINs)
constexpr size_t kBufOff = 1 << 20;    // the tagged buffers, in b's data region
constexpr uint8_t kPad = 0xEE;

uint64_t rndv_sq_base(uint32_t qpn) { return (1ull << hw::NIC_SPACE_BIT) + (uint64_t(qpn) << hw::RNDV_QP_SHIFT); }
uint64_t rndv_wrid(uint32_t handle, bool fin) {
  return (uint64_t(hw::RNDV_WRID_MARK) << 56) | (fin ? 1ull << hw::RNDV_WRID_FIN_BIT : 0) | handle;
}

// a (QP 2, plain RC, receives on its SRQ 0) sends rendezvous requests to b's QP 3 on TM-SRQ 1;
// the source is a's target region (MR 2, REMOTE_READ). One NIC (loopback) or two.
struct Rndv {
  sim::World w;
  std::unique_ptr<RdmaNode> na, nb;
  RdmaNode& a;
  RdmaNode& b;
  TmSrq t;
  int fins = 0;
  explicit Rndv(int nics, bool rv_qp = true, uint32_t mtu = 5)
      : w(cfg(nics)), na(new RdmaNode(w, 0, acc::LOCAL_WRITE | acc::REMOTE_READ)),
        nb(nics == 2 ? new RdmaNode(w, 1) : nullptr), a(*na), b(nb ? *nb : *na), t(b, kTmSrq, kTagBase, kTagNum, 6) {
    EXPECT_TRUE(a.ok && b.ok && t.ok);
    const int pa = 0, pb = nics == 2 ? 1 : 0;
    RawHost::QpCfg s = a.qp(kRecv, pb);
    s.mtu = mtu;
    EXPECT_EQ(a.h.set_qp(kSend, s), 0u);
    RawHost::QpCfg r = b.qp(kSend, pa);
    r.mtu = mtu;
    r.srq = kTmSrq;
    if (rv_qp) {
      r.sq_base = rndv_sq_base(kRecv);
      r.sq_log = hw::RNDV_SQ_LOG;
    }
    EXPECT_EQ(b.h.set_qp(kRecv, r), 0u);
    for (int i = 0; i < 32; i++) post_fin_buf();
    fill(a.target.p, a.target.len, 7);
  }
  void post_fin_buf() {
    a.post_srq(5000 + fins, {{a.va(kFinOff + 64 * fins), 64, Node::kKey}});
    fins++;
  }
  void add(uint32_t h, uint64_t tag, size_t off, uint32_t len) {
    std::memset(b.data.p + off, kPad, len + 64);
    t.op(h, hw::tm_opcode::ADD, 0, h, tag, ~0ull, b.va(off), len, Node::kKey);
  }
  // The request (64 bytes: TMH, RVH, 32 bytes of metadata) in a's data region, sent.
  void request(uint32_t i, uint64_t tag, uint32_t ctx, uint64_t va, uint32_t rkey, uint32_t len, uint32_t bytes = 64) {
    uint8_t* m = a.data.p + kReqOff + 64 * i;
    std::memset(m, 0x5C, 64);
    TmSrq::put_tmh(m, hw::tmh_op::RNDV, tag, ctx);
    TmSrq::put_rvh(m + 16, va, rkey, len);
    a.post_send(kSend, 100 + i, hw::wqe_op::SEND, hw::wqe_flag::SIGNALED, {{a.va(kReqOff + 64 * i), bytes, Node::kKey}});
  }
  std::vector<std::pair<int, Cqe>> cqes(size_t n) {
    std::vector<Node*> nodes = {&a};
    if (nb) nodes.push_back(&b);
    return wait_cqes(w, nodes, n);
  }
  size_t extra() {   // completions that should not exist
    for (int i = 0; i < 50 && w.progress(10000); i++) {}
    return cqes(1000).size();
  }
};

struct Seen {
  int match = -1, data = -1, send = -1, fin = -1;
  Cqe cm{}, cd{}, cs{}, cf{};
};
// Sorts one rendezvous's four completions (by kind), remembering their positions per side.
Seen sort(const std::vector<std::pair<int, Cqe>>& got, bool loopback) {
  Seen s;
  int pos_a = 0, pos_b = 0;
  for (const auto& [node, c] : got) {
    const bool on_b = loopback ? (c.qp_num == kRecv) : node == 1;
    int& pos = on_b ? pos_b : pos_a;
    if (c.opcode == hw::wc_op::TM_RECV && c.wc_flags == hw::wc_flag::TM_MATCH) { s.match = pos; s.cm = c; }
    else if (c.opcode == hw::wc_op::TM_RECV && c.wc_flags == hw::wc_flag::TM_DATA_VALID) { s.data = pos; s.cd = c; }
    else if (c.opcode == hw::wc_op::SEND) { s.send = pos; s.cs = c; }
    else if (c.opcode == hw::wc_op::RECV) { s.fin = pos; s.cf = c; }
    else ADD_FAILURE() << "unexpected completion opcode " << int(c.opcode) << " status " << int(c.status);
    pos++;
  }
  return s;
}

}  // namespace

// The whole exchange for lengths from 0 to 1 MiB at PMTU 4096 and 1024, in loopback and between
// two NICs: b: MATCH (status SUCCESS, handle, tag, app_ctx) then DATA_VALID (byte_len = the RVH's
// length, same handle/tag/app_ctx); a: its SEND, then the FIN as a 32-byte receive (TMH with opcode
// FIN, app_ctx, tag, then the RVH). The buffer holds the sender's bytes exactly, nothing past them
// is touched, and nothing else completes (the internal READ and FIN are silent).
TEST(TopRndv, MatchedRequestReadsTheDataAndSendsTheFin) {
  for (int nics : {1, 2})
    for (uint32_t mtu : {5u, 3u})
      for (uint32_t len : {0u, 1u, 4095u, 4097u, 65536u, 1u << 20}) {
        if (mtu == 3 && len > 65536) continue;
        SCOPED_TRACE(testing::Message() << nics << " NICs, mtu " << mtu << ", len " << len);
        Rndv r(nics, true, mtu);
        const uint64_t tag = 0x1234567890ABCDEFull + len;
        const uint32_t ctx = 0xC0FFEE00 + len, h = 5;
        r.add(h, tag, kBufOff, len + 100);
        const size_t src = len > 4096 ? 0 : 777;
        r.request(0, tag, ctx, r.a.tva(src), RdmaNode::kTKey, len);
        auto got = r.cqes(4);
        ASSERT_EQ(got.size(), 4u);
        Seen s = sort(got, nics == 1);
        ASSERT_GE(s.match, 0);
        ASSERT_GE(s.data, 0);
        ASSERT_GE(s.send, 0);
        ASSERT_GE(s.fin, 0);
        EXPECT_LT(s.match, s.data);
        EXPECT_LT(s.send, s.fin);
        for (const Cqe* c : {&s.cm, &s.cd}) {
          EXPECT_EQ(c->status, hw::wc_status::SUCCESS);
          EXPECT_EQ(c->tm_handle, h);
          EXPECT_EQ(c->tm_tag, tag);
          EXPECT_EQ(c->tm_app_ctx, ctx);
          EXPECT_EQ(c->qp_num, kRecv);
        }
        EXPECT_EQ(s.cd.byte_len, len);
        EXPECT_EQ(s.cs.status, hw::wc_status::SUCCESS);
        EXPECT_EQ(s.cs.wr_id, 100u);
        EXPECT_EQ(s.cf.status, hw::wc_status::SUCCESS);
        EXPECT_EQ(s.cf.byte_len, hw::RNDV_FIN_LEN);
        EXPECT_EQ(s.cf.wr_id, 5000u);
        // The FIN: the request's TMH with opcode FIN, then its RVH.
        std::vector<uint8_t> fin(32);
        TmSrq::put_tmh(fin.data(), hw::tmh_op::FIN, tag, ctx);
        TmSrq::put_rvh(fin.data() + 16, r.a.tva(src), RdmaNode::kTKey, len);
        EXPECT_EQ(std::memcmp(r.a.data.p + kFinOff, fin.data(), 32), 0);
        EXPECT_EQ(std::memcmp(r.b.data.p + kBufOff, r.a.target.p + src, len), 0);
        for (uint32_t k = len; k < len + 100; k++)
          if (r.b.data.p[kBufOff + k] != kPad) {
            ADD_FAILURE() << "byte " << k << " of the tagged buffer written past the data";
            break;
          }
        EXPECT_EQ(r.extra(), 0u);
        EXPECT_EQ(r.b.qp_state(kRecv), uint32_t(hw::QpState::RTS));
      }
}

// Not offloaded, as before (TM_RNDV_INCOMPLETE, TMH and RVH in the buffer, the sender's region never
// read): a tagged buffer shorter than the RVH's length; a QP with a send queue of its own; a request
// longer than one packet. And an unexpected request lands whole in an SRQ buffer.
TEST(TopRndv, WhatIsNotOffloadedCompletesIncomplete) {
  for (int c = 0; c < 4; c++) {
    SCOPED_TRACE(c);
    Rndv r(1, /*rv_qp=*/c != 1, /*mtu=*/c == 2 ? 1 : 5);
    Watch watch(r.a);
    const uint32_t len = 8192, bytes = c == 2 ? 300 : 64;
    if (c == 3) {   // no tag: unexpected, whole into the TM-SRQ's next buffer
      std::memset(r.b.data.p + kBufOff, kPad, 4096);
      r.t.post(77, r.b.va(kBufOff), 4096);
      r.request(0, 0xAB, 77, r.a.tva(0), RdmaNode::kTKey, len, bytes);
      auto got = r.cqes(2);
      ASSERT_EQ(got.size(), 2u);
      const Cqe& e = got[0].second.opcode == hw::wc_op::TM_RECV ? got[0].second : got[1].second;
      EXPECT_EQ(e.opcode, hw::wc_op::TM_RECV);
      EXPECT_EQ(e.status, hw::wc_status::SUCCESS);
      EXPECT_EQ(e.wc_flags, 0u);
      EXPECT_EQ(e.wr_id, 77u);
      EXPECT_EQ(e.byte_len, 64u);
      EXPECT_EQ(std::memcmp(r.b.data.p + kBufOff, r.a.data.p + kReqOff, 64), 0);
      EXPECT_EQ(r.extra(), 0u);
      EXPECT_EQ(watch.hits, 0u);
      continue;
    }
    r.add(9, 0xAB, kBufOff, c == 0 ? len - 1 : len + 4096);
    if (c == 2) {   // the request and its metadata over two 256-byte packets
      uint8_t* m = r.a.data.p + kReqOff;
      std::memset(m, 0x5C, bytes);
    }
    r.request(0, 0xAB, 77, r.a.tva(0), RdmaNode::kTKey, len, bytes);
    // the SEND, and one TM completion (two for the two-packet request: MATCH, then the end)
    auto got = r.cqes(c == 2 ? 3 : 2);
    ASSERT_EQ(got.size(), c == 2 ? 3u : 2u);
    int tms = 0, sends = 0;
    for (const auto& [node, e] : got) {
      if (e.opcode == hw::wc_op::SEND) {
        EXPECT_EQ(e.status, hw::wc_status::SUCCESS);
        sends++;
        continue;
      }
      EXPECT_EQ(e.opcode, hw::wc_op::TM_RECV);
      EXPECT_EQ(e.status, hw::wc_status::TM_RNDV_INCOMPLETE);
      EXPECT_EQ(e.tm_handle, 9u);
      EXPECT_EQ(e.tm_tag, 0xABu);
      tms++;
    }
    EXPECT_EQ(sends, 1);
    EXPECT_EQ(tms, c == 2 ? 2 : 1);
    EXPECT_EQ(std::memcmp(r.b.data.p + kBufOff, r.a.data.p + kReqOff, 32), 0);   // TMH + RVH
    EXPECT_EQ(r.extra(), 0u);
    EXPECT_EQ(watch.hits, 0u);
  }
}

// A READ the sender refuses (an RVH past the end of its region, a wrong rkey): the sender's responder
// NAKs it (remote access error) and fails its QP; b completes MATCH, then the internal READ's error
// completion (opcode RDMA_READ, REM_ACCESS_ERR, wr_id RNDV_WRID_MARK | handle) and the FIN's flush
// (WR_FLUSH_ERR, the FIN bit) on the TM-SRQ's CQ, its QP in ERR; the tagged buffer is untouched.
TEST(TopRndv, ReadRefusedBySenderFailsTheTag) {
  for (int nics : {1, 2})
    for (int c = 0; c < 2; c++) {
      SCOPED_TRACE(testing::Message() << nics << " NICs, case " << c);
      Rndv r(nics);
      const uint32_t h = 3, len = 8192;
      r.add(h, 0x77, kBufOff, len);
      uint64_t bytes_in = 0;
      const uint64_t lo = r.b.data.iova + kBufOff, hi = lo + len + 64;
      r.b.h.mmu().set_observer([&](bool, uint64_t iova, const uint8_t*, size_t n) {
        if (iova < hi && iova + n > lo) bytes_in++;
      });
      if (c == 0) r.request(0, 0x77, 1, r.a.tva(r.a.target.len - 100), RdmaNode::kTKey, len);
      else r.request(0, 0x77, 1, r.a.tva(0), RdmaNode::kTKey ^ 0x100, len);
      auto got = r.cqes(4);
      ASSERT_GE(got.size(), 4u);
      bool match = false, rd_err = false, fin_flush = false, send_ok = false;
      for (const auto& [node, e] : got) {
        if (e.opcode == hw::wc_op::TM_RECV && e.wc_flags == hw::wc_flag::TM_MATCH) match = true;
        else if (e.wr_id == rndv_wrid(h, false)) {
          EXPECT_EQ(e.status, hw::wc_status::REM_ACCESS_ERR);
          EXPECT_EQ(e.opcode, hw::wc_op::RDMA_READ);
          EXPECT_EQ(e.qp_num, kRecv);
          rd_err = true;
        } else if (e.wr_id == rndv_wrid(h, true)) {
          EXPECT_EQ(e.status, hw::wc_status::WR_FLUSH_ERR);
          fin_flush = true;
        } else if (e.opcode == hw::wc_op::SEND && e.wr_id == 100) {
          EXPECT_EQ(e.status, hw::wc_status::SUCCESS);
          send_ok = true;
        }
      }
      EXPECT_TRUE(match && rd_err && fin_flush && send_ok);
      EXPECT_EQ(r.b.qp_state(kRecv), uint32_t(hw::QpState::ERR));
      EXPECT_EQ(r.a.qp_state(kSend), uint32_t(hw::QpState::ERR));
      EXPECT_EQ(bytes_in, 0u);
    }
}

// Twelve requests posted back to back on one QP (RNDV_SLOTS of them under way at a time: the others
// are RNR-NAKed and come again): each completes MATCH then DATA_VALID with its own data, a FIN each.
TEST(TopRndv, MoreRequestsThanSlotsAllComplete) {
  for (int nics : {1, 2}) {
    SCOPED_TRACE(nics);
    Rndv r(nics);
    constexpr uint32_t kN = 12, kLen = 20000;
    for (uint32_t i = 0; i < kN; i++) r.add(i, 0x500 + i, kBufOff + i * 32768, kLen);
    for (uint32_t i = 0; i < kN; i++) r.request(i, 0x500 + i, i, r.a.tva(i * 40000), RdmaNode::kTKey, kLen - i);
    auto got = r.cqes(4 * kN);
    ASSERT_EQ(got.size(), 4 * kN);
    std::vector<int> match(kN, 0), data(kN, 0);
    int fins = 0;
    for (const auto& [node, e] : got) {
      EXPECT_EQ(e.status, hw::wc_status::SUCCESS);
      if (e.opcode == hw::wc_op::TM_RECV) {
        ASSERT_LT(e.tm_handle, kN);
        if (e.wc_flags == hw::wc_flag::TM_MATCH) { EXPECT_EQ(data[e.tm_handle], 0); match[e.tm_handle]++; }
        if (e.wc_flags == hw::wc_flag::TM_DATA_VALID) {
          EXPECT_EQ(match[e.tm_handle], 1);
          EXPECT_EQ(e.byte_len, kLen - e.tm_handle);
          data[e.tm_handle]++;
        }
      } else if (e.opcode == hw::wc_op::RECV) {
        fins++;
      }
    }
    EXPECT_EQ(fins, int(kN));
    for (uint32_t i = 0; i < kN; i++) {
      EXPECT_EQ(match[i], 1);
      EXPECT_EQ(data[i], 1);
      EXPECT_EQ(std::memcmp(r.b.data.p + kBufOff + i * 32768, r.a.target.p + i * 40000, kLen - i), 0) << i;
    }
    EXPECT_GT(r.b.stat(hw::stat::TX_RNR_NAKS), 0u);   // (the slots were full at least once)
    EXPECT_EQ(r.extra(), 0u);
  }
}
