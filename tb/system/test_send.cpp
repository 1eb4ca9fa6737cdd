// System tests, RC SEND data path through the verbs API: message sizes around the path MTU,
// multi-SGE gather/scatter, SEND_WITH_IMM, inline sends. Every test runs on one NIC (two QPs of
// tmnic0 talking through the NIC's internal loopback) and across two NICs (tmnic0 -> tmnic1 over the
// simulated wire). Every received byte is compared, and the bytes around the scatter buffers are
// checked to be untouched.
#include "system_test.hpp"

namespace {

using namespace sys;
namespace st = tmnic::hwif::stat;

constexpr uint8_t kSentinel = 0xEE;

class Send : public SystemTest, public ::testing::WithParamInterface<int> {
 protected:
  int rdev() const { return GetParam(); }  // receiver device: 0 loopback, 1 second NIC

  // Sends one message of `len` bytes (pattern of message `m`) and checks both completions, every
  // received byte, the guard bytes after it, and the number of request packets on the wire.
  void send_check(const Qp& s, const Qp& r, const Buf& sb, const Buf& rb, uint32_t m, uint32_t len,
                  uint32_t pmtu) {
    SCOPED_TRACE("message " + std::to_string(m) + " of " + std::to_string(len) + " bytes");
    for (uint32_t i = 0; i < len; i++) sb.p[i] = pattern(m, i);
    std::memset(rb.p, kSentinel, rb.len);
    ASSERT_EQ(post_recv(r, 100 + m, {sge(rb, 0, uint32_t(rb.len))}), 0);
    uint32_t pkts0 = counter(0, st::TX_PKTS) - counter(0, st::TX_ACKS);
    ASSERT_EQ(post_send(s, m, {sge(sb, 0, len)}), 0);
    auto sc = poll(s.scq, 1);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    EXPECT_EQ(sc[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(sc[0].wr_id, m);
    EXPECT_EQ(sc[0].qp_num, s.num());
    auto rc = poll(r.rcq, 1);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
    EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(rc[0].wr_id, 100u + m);
    EXPECT_EQ(rc[0].byte_len, len);
    EXPECT_EQ(rc[0].qp_num, r.num());
    EXPECT_EQ(rc[0].src_qp, s.num());
    EXPECT_EQ(rc[0].wc_flags, 0u);
    size_t bad = 0, first_bad = SIZE_MAX;
    for (uint32_t i = 0; i < len; i++)
      if (rb.p[i] != pattern(m, i)) {
        if (!bad++) first_bad = i;
      }
    EXPECT_EQ(bad, 0u) << "wrong bytes, first at offset " << first_bad;
    for (size_t i = len; i < rb.len; i++)
      if (rb.p[i] != kSentinel) {
        ADD_FAILURE() << "byte " << i << " after the message was written";
        break;
      }
    // Segmentation: max(1, ceil(len / PMTU)) request packets left the sender.
    uint32_t pkts = counter(0, st::TX_PKTS) - counter(0, st::TX_ACKS) - pkts0;
    EXPECT_EQ(pkts, len == 0 ? 1u : (len + pmtu - 1) / pmtu);
  }

  void sizes(enum ibv_mtu mtu) {
    const uint32_t pmtu = mtu_bytes(mtu);
    const uint32_t big = 1u << 20;
    ConnOpts c;
    c.mtu = mtu;
    auto [s, r] = pair(rdev(), {}, {}, c);
    ASSERT_TRUE(s.qp && r.qp);
    Buf sb = buf(0, big);
    Buf rb = buf(rdev(), big + 256);
    uint32_t m = 0;
    for (uint32_t len : {0u, 1u, pmtu - 1, pmtu, pmtu + 1, 2 * pmtu + 3, big}) {
      send_check(s, r, sb, rb, m++, len, pmtu);
      if (HasFatalFailure()) return;
    }
  }
};

TEST_P(Send, SizesAroundMtu1024) { sizes(IBV_MTU_1024); }
TEST_P(Send, SizesAroundMtu4096) { sizes(IBV_MTU_4096); }
TEST_P(Send, SizesAroundMtu256) { sizes(IBV_MTU_256); }

// Gather from 3 SGEs (two MRs, odd offsets and lengths, one crossing a page) and scatter into 4
// receive SGEs of odd sizes and alignments (two MRs); PMTU boundaries fall inside SGEs.
TEST_P(Send, MultiSgeGatherScatter) {
  QpOpts so, ro;
  so.send_sge = 3;
  ro.recv_sge = 4;
  auto [s, r] = pair(rdev(), so, ro);
  ASSERT_TRUE(s.qp && r.qp);
  Buf s1 = buf(0, 16384), s2 = buf(0, 8192);
  Buf r1 = buf(rdev(), 16384), r2 = buf(rdev(), 8192);
  struct Seg {
    const Buf* b;
    size_t off;
    uint32_t len;
  };
  const std::vector<Seg> send_segs = {{&s1, 3, 1}, {&s2, 77, 1503}, {&s1, 4093, 2501}};  // 4005 B
  const std::vector<Seg> recv_segs = {{&r1, 1, 7}, {&r2, 4097, 1500}, {&r1, 33, 13}, {&r1, 9001, 3000}};
  // Message sizes: fills the first three SGEs and part of the fourth; all of it; smaller ones.
  for (uint32_t total : {4005u, 1u, 7u, 8u, 1520u, 1521u}) {
    SCOPED_TRACE("total " + std::to_string(total));
    std::vector<struct ibv_sge> sg;
    std::vector<uint8_t> expect;
    uint32_t left = total;
    for (const Seg& g : send_segs) {
      uint32_t n = std::min(left, g.len);
      if (!n) break;
      for (uint32_t i = 0; i < n; i++) g.b->p[g.off + i] = pattern(total, expect.size() + i);
      expect.insert(expect.end(), g.b->p + g.off, g.b->p + g.off + n);
      sg.push_back(sge(*g.b, g.off, n));
      left -= n;
    }
    if (total == 4005) {
      ASSERT_EQ(sg.size(), 3u);
    }
    std::memset(r1.p, kSentinel, r1.len);
    std::memset(r2.p, kSentinel, r2.len);
    std::vector<struct ibv_sge> rs;
    for (const Seg& g : recv_segs) rs.push_back(sge(*g.b, g.off, g.len));
    ASSERT_EQ(post_recv(r, total, rs), 0);
    ASSERT_EQ(post_send(s, total, sg), 0);
    auto sc = poll(s.scq, 1);
    ASSERT_EQ(sc.size(), 1u);
    EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
    auto rc = poll(r.rcq, 1);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
    EXPECT_EQ(rc[0].byte_len, total);
    // Expected image of both receive buffers: sentinel everywhere except the scattered bytes.
    std::vector<uint8_t> img1(r1.len, kSentinel), img2(r2.len, kSentinel);
    size_t k = 0;
    for (const Seg& g : recv_segs) {
      auto& img = g.b == &r1 ? img1 : img2;
      for (uint32_t i = 0; i < g.len && k < expect.size(); i++) img[g.off + i] = expect[k++];
    }
    ASSERT_EQ(k, expect.size());
    for (size_t i = 0; i < r1.len; i++)
      if (r1.p[i] != img1[i]) {
        ADD_FAILURE() << "receive MR 1 differs at offset " << i;
        break;
      }
    for (size_t i = 0; i < r2.len; i++)
      if (r2.p[i] != img2[i]) {
        ADD_FAILURE() << "receive MR 2 differs at offset " << i;
        break;
      }
  }
}

// All WQE_MAX_SGE entries on both sides, each of a different odd length.
TEST_P(Send, MaxSgeBothSides) {
  struct ibv_device_attr da;
  ASSERT_EQ(ibv_query_device(ctx_[0], &da), 0);
  const uint32_t n = uint32_t(da.max_sge);
  ASSERT_EQ(n, tmnic_sim_read_reg(0, tmnic::hwif::reg::MAX_SGE));
  QpOpts so, ro;
  so.send_sge = n;
  ro.recv_sge = n;
  auto [s, r] = pair(rdev(), so, ro);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, 65536), rb = buf(rdev(), 65536);
  std::memset(rb.p, kSentinel, rb.len);
  std::vector<struct ibv_sge> ss, rs;
  std::vector<uint8_t> expect;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len = 97 + 331 * i, off = 8192 * i + 5 * i + 1;
    for (uint32_t j = 0; j < len; j++) sb.p[off + j] = pattern(7, expect.size() + j);
    expect.insert(expect.end(), sb.p + off, sb.p + off + len);
    ss.push_back(sge(sb, off, len));
  }
  size_t roff = 3;
  std::vector<std::pair<size_t, uint32_t>> rsegs;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t len = i + 1 == n ? 20000 : 211 + 517 * i;
    rsegs.push_back({roff, len});
    rs.push_back(sge(rb, roff, len));
    roff += len + 9;
  }
  ASSERT_EQ(post_recv(r, 1, rs), 0);
  ASSERT_EQ(post_send(s, 2, ss), 0);
  auto sc = poll(s.scq, 1);
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
  auto rc = poll(r.rcq, 1);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
  EXPECT_EQ(rc[0].byte_len, uint32_t(expect.size()));
  std::vector<uint8_t> got;
  for (auto [o, l] : rsegs)
    for (uint32_t j = 0; j < l && got.size() < expect.size(); j++) got.push_back(rb.p[o + j]);
  EXPECT_TRUE(got == expect) << "scattered data differs";
  EXPECT_EQ(rb.p[2], kSentinel);
  EXPECT_EQ(rb.p[rsegs[0].first + rsegs[0].second], kSentinel);  // the 9-byte gaps stay untouched
}

// SEND_WITH_IMM: imm_data is carried in network byte order (ibv_send_wr.imm_data = htonl(x),
// ibv_wc.imm_data = htonl(x)), the receive completion has IBV_WC_WITH_IMM, a plain SEND after it
// has no flag, and the send completion has no flag either.
TEST_P(Send, SendWithImm) {
  auto [s, r] = pair(rdev());
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, 8192), rb = buf(rdev(), 16384);
  const uint32_t imms[] = {0x01020304u, 0u, 0xFFFFFFFEu, 0x80000001u};
  const uint32_t lens[] = {0, 1, 5000, 1024};
  for (int k = 0; k < 4; k++) {
    SCOPED_TRACE("message " + std::to_string(k));
    for (uint32_t i = 0; i < lens[k]; i++) sb.p[i] = pattern(k, i);
    ASSERT_EQ(post_recv(r, 10 + k, {sge(rb, 0, 8192)}), 0);
    ASSERT_EQ(post_send(s, k, {sge(sb, 0, lens[k])}, IBV_WR_SEND_WITH_IMM, imms[k]), 0);
    // A plain SEND right behind it: no IMM flag may leak into its completion.
    ASSERT_EQ(post_recv(r, 20 + k, {sge(rb, 8192, 4096)}), 0);
    ASSERT_EQ(post_send(s, 100 + k, {sge(sb, 0, 3)}), 0);
    auto sc = poll(s.scq, 2);
    ASSERT_EQ(sc.size(), 2u);
    for (auto& w : sc) {
      EXPECT_EQ(w.status, IBV_WC_SUCCESS) << wc_str(w);
      EXPECT_EQ(w.opcode, IBV_WC_SEND);
      EXPECT_EQ(w.wc_flags & IBV_WC_WITH_IMM, 0u);
    }
    auto rc = poll(r.rcq, 2);
    ASSERT_EQ(rc.size(), 2u);
    EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
    EXPECT_EQ(rc[0].wr_id, 10u + k);
    EXPECT_EQ(rc[0].opcode, IBV_WC_RECV);
    EXPECT_EQ(rc[0].wc_flags, unsigned(IBV_WC_WITH_IMM));
    EXPECT_EQ(rc[0].imm_data, htonl(imms[k])) << std::hex << "raw " << rc[0].imm_data;
    EXPECT_EQ(rc[0].byte_len, lens[k]);
    EXPECT_EQ(rc[0].src_qp, s.num());
    EXPECT_EQ(std::memcmp(rb.p, sb.p, lens[k]), 0);
    EXPECT_EQ(rc[1].wr_id, 20u + k);
    EXPECT_EQ(rc[1].wc_flags, 0u) << wc_str(rc[1]);
    EXPECT_EQ(rc[1].byte_len, 3u);
  }
}

// IBV_SEND_INLINE up to max_inline_data (from ibv_query_qp): the payload is copied at post time, so
// the source buffer is unregistered (lkey 0) and overwritten right after ibv_post_send returns.
TEST_P(Send, InlineUpToMaxInline) {
  QpOpts so;
  so.send_sge = 2;
  auto [s, r] = pair(rdev(), so);
  ASSERT_TRUE(s.qp && r.qp);
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  ASSERT_EQ(ibv_query_qp(s.qp, &qa, IBV_QP_CAP, &qi), 0);
  const uint32_t max_inline = qa.cap.max_inline_data;
  ASSERT_GE(max_inline, 1u);
  EXPECT_EQ(max_inline, tmnic::hwif::WQE_MAX_INLINE);
  Buf src = buf(-1, 4096);  // not registered
  Buf rb = buf(rdev(), 4096);
  uint32_t m = 0;
  for (uint32_t len : {0u, 1u, 4u, max_inline / 2 + 1, max_inline - 1, max_inline}) {
    for (int nsge : {1, 2}) {
      SCOPED_TRACE("inline " + std::to_string(len) + " bytes in " + std::to_string(nsge) + " SGEs");
      m++;
      for (uint32_t i = 0; i < len; i++) src.p[100 + i] = pattern(m, i);
      std::vector<struct ibv_sge> sg;
      if (nsge == 1 || len < 2) {
        sg.push_back({src.addr(100), len, 0});
      } else {
        sg.push_back({src.addr(100), len / 2, 0xDEAD});
        sg.push_back({src.addr(100 + len / 2), len - len / 2, 0xBEEF});
      }
      std::memset(rb.p, kSentinel, 256);
      ASSERT_EQ(post_recv(r, m, {sge(rb, 0, 4096)}), 0);
      ASSERT_EQ(post_send(s, m, sg, m % 2 ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM, m,
                          IBV_SEND_SIGNALED | IBV_SEND_INLINE),
                0);
      std::memset(src.p, 0x5A, 4096);  // the NIC must not read the buffer any more
      auto sc = poll(s.scq, 1);
      ASSERT_EQ(sc.size(), 1u);
      EXPECT_EQ(sc[0].status, IBV_WC_SUCCESS) << wc_str(sc[0]);
      auto rc = poll(r.rcq, 1);
      ASSERT_EQ(rc.size(), 1u);
      EXPECT_EQ(rc[0].status, IBV_WC_SUCCESS) << wc_str(rc[0]);
      EXPECT_EQ(rc[0].byte_len, len);
      if (m % 2 == 0) {
        EXPECT_EQ(rc[0].wc_flags, unsigned(IBV_WC_WITH_IMM));
        EXPECT_EQ(ntohl(rc[0].imm_data), m);
      }
      for (uint32_t i = 0; i < len; i++)
        if (rb.p[i] != pattern(m, i)) {
          ADD_FAILURE() << "byte " << i << " differs";
          break;
        }
      EXPECT_EQ(rb.p[len], kSentinel);
    }
  }
  // One byte more than max_inline_data is refused at post time, and bad_wr names it.
  std::vector<uint8_t> big(max_inline + 1, 1);
  struct ibv_sge g = {uint64_t(uintptr_t(big.data())), max_inline + 1, 0};
  struct ibv_send_wr wr = {};
  wr.wr_id = 999;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
  struct ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(s.qp, &wr, &bad), EINVAL);
  EXPECT_EQ(bad, &wr);
  EXPECT_TRUE(drain(s.scq).empty());
}

INSTANTIATE_TEST_SUITE_P(Topology, Send, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return i.param ? std::string("TwoNics") : std::string("Loopback");
                         });

}  // namespace
