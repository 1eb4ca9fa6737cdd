// Rendezvous offload through the verbs API (docs/tag-matching.md "Rendezvous"), in loopback and
// between two NICs. rdma-core's pyverbs test_tm_rndv flow: a server TM-SRQ with a rendezvous QP
// (RC, max_send_wr 0), a client RC QP with receives; the client sends a 64-byte SEND of
// TMH(RNDV, tag) + RVH(its buffer) + metadata; completions: server MATCH, client SEND then RECV of
// the FIN (32 bytes: every byte checked), server DATA_VALID (its tm_info 0, as mlx5 and pyverbs);
// the data byte for byte
// and nothing past its length in the tagged buffer touched. Then the cases the NIC does not
// offload (tagged buffer too small, unexpected request, a TM-SRQ QP with its own send queue), the
// READ's errors (RVH outside the sender's region, a bad rkey: the tag's error completion, both QPs
// in ERR), more rendezvous than RNDV_SLOTS back to back on one QP, and several QPs at once.
//
// Every test skips while the NIC does not offload rendezvous (no IBV_TM_CAP_RC: TM_CAPS.RC 0).
#include "rndv_util.hpp"

namespace {

using namespace sys;

class Rndv : public RndvTestBase, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    RndvTestBase::SetUp();
    if (HasFatalFailure()) return;
    if (!rndv_offloaded(0) || !rndv_offloaded(1))
      GTEST_SKIP() << "the NIC does not offload rendezvous (tm_caps.flags without IBV_TM_CAP_RC: TM_CAPS.RC is 0)";
  }
  int sdev() const { return GetParam(); }  // the server's NIC: 0 loopback, 1 second NIC (client on 0)

  struct World {
    TmServer s;
    Qp sq;  // the server's rendezvous QP
    Qp cq;  // the client
  };
  World world(uint32_t tags = 64) {
    World w;
    w.s = tm_server(sdev(), tags);
    if (!w.s.srq) return w;
    w.sq = tm_qp(w.s);
    w.cq = client_qp(0);
    if (w.sq.qp && w.cq.qp) connect(w.cq, w.sq);
    return w;
  }

  // One whole offloaded rendezvous of `len` bytes; every completion and byte checked. The FIN
  // goes to a new receive (wr_id 77), or to `fin_posted` when the client has one posted already.
  void one_rndv(World& w, uint32_t len, uint64_t tag, uint32_t app_ctx, const Buf* fin_posted = nullptr) {
    SCOPED_TRACE("len " + std::to_string(len));
    const size_t slack = 4096;
    Buf src = buf(0, len ? len : 64, kAccess);   // the client's buffer (REMOTE_READ)
    Buf dst = buf(sdev(), size_t(len) + slack);  // the tagged buffer
    Buf req = buf(0, 256);
    Buf fin = fin_posted ? *fin_posted : buf(0, 128);
    for (uint32_t i = 0; i < len; i++) src.p[i] = pattern(app_ctx, i);
    std::memset(dst.p, 0xEE, dst.len);
    std::memset(fin.p, 0xCC, fin.len);
    if (!fin_posted) {
      ASSERT_EQ(post_recv(w.cq, 77, {sge(fin, 0, 128)}), 0);
    }
    const uint64_t recv_wr_id = 0x5000 + tag;
    add_tag(w.s, recv_wr_id, tag, sge(dst, 0, uint32_t(dst.len)));
    ASSERT_EQ(send_rndv(w.cq, req, 0, 9, tag, app_ctx, src.addr(), src.mr->rkey, len), 0);

    auto m = poll_tm(w.s.cq, 1);
    ASSERT_EQ(m.size(), 1u) << "no MATCH completion" << counters();
    EXPECT_EQ(m[0].wc.status, IBV_WC_SUCCESS) << tmwc_str(m[0]);
    EXPECT_EQ(m[0].wc.opcode, IBV_WC_TM_RECV);
    EXPECT_EQ(m[0].wc.wc_flags, unsigned(IBV_WC_TM_MATCH)) << tmwc_str(m[0]);
    EXPECT_EQ(m[0].wc.wr_id, recv_wr_id);
    EXPECT_EQ(m[0].wc.qp_num, w.sq.num());
    EXPECT_EQ(m[0].tm.tag, tag);
    EXPECT_EQ(m[0].tm.priv, app_ctx);

    auto c = poll(w.cq.scq, 2);
    ASSERT_EQ(c.size(), 2u) << "client: SEND and the FIN expected" << counters();
    EXPECT_EQ(c[0].status, IBV_WC_SUCCESS) << wc_str(c[0]);
    EXPECT_EQ(c[0].opcode, IBV_WC_SEND) << wc_str(c[0]);
    EXPECT_EQ(c[0].wr_id, 9u);
    EXPECT_EQ(c[1].status, IBV_WC_SUCCESS) << wc_str(c[1]);
    EXPECT_EQ(c[1].opcode, IBV_WC_RECV) << wc_str(c[1]);
    EXPECT_EQ(c[1].wr_id, 77u);
    EXPECT_EQ(c[1].wc_flags, 0u);
    EXPECT_EQ(c[1].byte_len, tmnic::hwif::RNDV_FIN_LEN);
    const auto want = fin_bytes(app_ctx, tag, src.addr(), src.mr->rkey, len);
    for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(fin.p[i], want[i]) << "FIN byte " << i;
    for (size_t i = want.size(); i < fin.len; i++) ASSERT_EQ(fin.p[i], 0xCC) << "FIN buffer byte " << i << " written";

    auto d = poll_tm(w.s.cq, 1);
    ASSERT_EQ(d.size(), 1u) << "no DATA_VALID completion";
    EXPECT_EQ(d[0].wc.status, IBV_WC_SUCCESS) << tmwc_str(d[0]);
    EXPECT_EQ(d[0].wc.opcode, IBV_WC_TM_RECV);
    EXPECT_EQ(d[0].wc.wc_flags, unsigned(IBV_WC_TM_DATA_VALID)) << tmwc_str(d[0]);
    EXPECT_EQ(d[0].wc.wr_id, recv_wr_id);
    EXPECT_EQ(d[0].wc.byte_len, len);
    // As mlx5 (the TMH is in the CQE "upon match" only) and pyverbs' test_tm_rndv: tm_info 0.
    EXPECT_EQ(d[0].tm.tag, 0u);
    EXPECT_EQ(d[0].tm.priv, 0u);
    for (uint32_t i = 0; i < len; i++)
      if (dst.p[i] != src.p[i]) {
        ADD_FAILURE() << "tagged buffer byte " << i << " of " << len;
        break;
      }
    for (size_t i = len; i < dst.len; i++) ASSERT_EQ(dst.p[i], 0xEE) << "tagged buffer byte " << i << " past len";
    EXPECT_TRUE(drain_tm(w.s.cq, 200000).empty()) << "the READ and the FIN complete silently";
    EXPECT_TRUE(drain(w.cq.scq, 0).empty());
  }
};

// The pyverbs flow (1 KiB, as test_tm_rndv) and the lengths around the MTU, up to 1 MiB; all on
// one pair of QPs, one after the other.
TEST_P(Rndv, OffloadedLengths) {
  World w = world();
  ASSERT_TRUE(w.sq.qp && w.cq.qp);
  const uint32_t pmtu = mtu_bytes(ConnOpts().mtu);
  const uint32_t lens[] = {1024, 0, 1, pmtu - 1, pmtu + 1, 64 * 1024, 1024 * 1024};
  uint64_t tag = 1;
  for (uint32_t len : lens) {
    one_rndv(w, len, tag, 0xA000 + uint32_t(tag));
    tag++;
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(state(w.sq), IBV_QPS_RTS);
  EXPECT_EQ(state(w.cq), IBV_QPS_RTS);
  // The rendezvous QP has no send queue of the application's.
  struct ibv_send_wr wr = {};
  wr.opcode = IBV_WR_SEND;
  struct ibv_send_wr* bad = nullptr;
  EXPECT_NE(ibv_post_send(w.sq.qp, &wr, &bad), 0);
  EXPECT_EQ(bad, &wr);
}

// A tagged buffer smaller than the RVH's length: not offloaded. TM_RNDV_INCOMPLETE with the
// request (TMH, RVH, metadata) in the buffer; no READ (the client sends nothing but its request),
// no FIN.
TEST_P(Rndv, SmallBufferIsSoftwareRendezvous) {
  World w = world();
  ASSERT_TRUE(w.sq.qp && w.cq.qp);
  const uint32_t len = 64 * 1024;
  Buf src = buf(0, len, kAccess);
  Buf dst = buf(sdev(), 4096);
  Buf req = buf(0, 256);
  Buf fin = buf(0, 128);
  std::memset(dst.p, 0xEE, dst.len);
  ASSERT_EQ(post_recv(w.cq, 77, {sge(fin, 0, 128)}), 0);
  add_tag(w.s, 0x51, 0x51, sge(dst, 0, 1000));
  const uint32_t tx0 = counter(0, tmnic::hwif::stat::TX_PKTS);
  ASSERT_EQ(send_rndv(w.cq, req, 0, 9, 0x51, 0xBEEF, src.addr(), src.mr->rkey, len), 0);
  auto m = poll_tm(w.s.cq, 1);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].wc.status, IBV_WC_TM_RNDV_INCOMPLETE) << tmwc_str(m[0]);
  EXPECT_EQ(m[0].wc.opcode, IBV_WC_TM_RECV);
  EXPECT_TRUE(m[0].wc.wc_flags & IBV_WC_TM_MATCH) << tmwc_str(m[0]);
  EXPECT_EQ(m[0].wc.wr_id, 0x51u);
  EXPECT_EQ(m[0].tm.tag, 0x51u);
  EXPECT_EQ(std::memcmp(dst.p, req.p, 64), 0) << "the request's headers in the tagged buffer";
  for (size_t i = 64; i < dst.len; i++) ASSERT_EQ(dst.p[i], 0xEE) << "byte " << i;
  auto c = drain(w.cq.scq);
  ASSERT_EQ(c.size(), 1u) << "only the client's SEND completes (no FIN)";
  EXPECT_EQ(c[0].opcode, IBV_WC_SEND);
  EXPECT_LT(counter(0, tmnic::hwif::stat::TX_PKTS) - tx0, 8u) << "the client's buffer was read";
  if (!(m[0].wc.wc_flags & IBV_WC_TM_DATA_VALID)) {  // (the tag's data completion, if split)
    auto d = poll_tm(w.s.cq, 1);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_TRUE(d[0].wc.wc_flags & IBV_WC_TM_DATA_VALID);
  }
  EXPECT_TRUE(drain_tm(w.s.cq).empty());
  EXPECT_EQ(state(w.sq), IBV_QPS_RTS);
}

// An unexpected rendezvous request lands whole in an SRQ buffer (TM_RECV without flags); the NIC
// reads nothing and sends no FIN.
TEST_P(Rndv, UnexpectedRequestGoesToTheSrq) {
  World w = world();
  ASSERT_TRUE(w.sq.qp && w.cq.qp);
  Buf src = buf(0, 4096, kAccess);
  Buf req = buf(0, 256);
  Buf fin = buf(0, 128);
  ASSERT_EQ(post_recv(w.cq, 77, {sge(fin, 0, 128)}), 0);
  const uint32_t tx0 = counter(0, tmnic::hwif::stat::TX_PKTS);
  ASSERT_EQ(send_rndv(w.cq, req, 0, 9, 0x777, 5, src.addr(), src.mr->rkey, 4096), 0);
  auto u = poll_tm(w.s.cq, 1);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].wc.status, IBV_WC_SUCCESS) << tmwc_str(u[0]);
  EXPECT_EQ(u[0].wc.opcode, IBV_WC_TM_RECV);
  EXPECT_EQ(u[0].wc.wc_flags, 0u);
  EXPECT_EQ(u[0].wc.byte_len, 64u);
  EXPECT_EQ(u[0].tm.tag, 0u);
  ASSERT_GE(u[0].wc.wr_id, 1000000u);
  EXPECT_EQ(std::memcmp(srq_buf(w.s, u[0].wc.wr_id), req.p, 64), 0);
  w.s.unexp_cnt++;
  sync(w.s);
  auto c = drain(w.cq.scq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].opcode, IBV_WC_SEND);
  EXPECT_LT(counter(0, tmnic::hwif::stat::TX_PKTS) - tx0, 8u);
  for (size_t i = 0; i < fin.len; i++) ASSERT_EQ(fin.p[i], 0) << "no FIN: byte " << i;
  repost_srq(w.s, u[0].wc.wr_id);
  // The QP still offloads the next one (its FIN takes the receive posted above).
  one_rndv(w, 3000, 0x778, 6, &fin);
}

// A QP of the TM-SRQ with a send queue of its own is not a rendezvous QP: TM_RNDV_INCOMPLETE.
TEST_P(Rndv, QpWithItsOwnSendQueueIsNotOffloaded) {
  TmServer s = tm_server(sdev());
  ASSERT_NE(s.srq, nullptr);
  Qp sq = tm_qp(s, 4);
  Qp cq = client_qp(0);
  ASSERT_TRUE(sq.qp && cq.qp);
  connect(cq, sq);
  Buf src = buf(0, 2048, kAccess);
  Buf dst = buf(sdev(), 4096);
  Buf req = buf(0, 256);
  std::memset(dst.p, 0xEE, dst.len);
  add_tag(s, 0x61, 0x61, sge(dst, 0, 4096));
  ASSERT_EQ(send_rndv(cq, req, 0, 9, 0x61, 1, src.addr(), src.mr->rkey, 2048), 0);
  auto m = poll_tm(s.cq, 1);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].wc.status, IBV_WC_TM_RNDV_INCOMPLETE) << tmwc_str(m[0]);
  EXPECT_EQ(m[0].wc.wr_id, 0x61u);
  EXPECT_EQ(std::memcmp(dst.p, req.p, 64), 0);
  for (size_t i = 64; i < dst.len; i++) ASSERT_EQ(dst.p[i], 0xEE) << "byte " << i;
  if (!(m[0].wc.wc_flags & IBV_WC_TM_DATA_VALID)) {
    EXPECT_EQ(poll_tm(s.cq, 1).size(), 1u);
  }
  auto c = drain(cq.scq);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].opcode, IBV_WC_SEND);
}

// The READ fails at the sender (RVH outside its region; a bad rkey): the server gets the tag's
// completion with REM_ACCESS_ERR (and its wr_id and tag), both QPs are in ERR with their async
// events, the tagged buffer is untouched and nothing else completes on the server.
TEST_P(Rndv, ReadErrorsCompleteTheTag) {
  struct Case {
    const char* what;
    uint64_t va_off;
    uint32_t rkey_xor, len;
    bool legacy_poll;  // the server's error completion through ibv_poll_cq
  };
  const Case cases[] = {
      {"RVH past the end of the region", 2048, 0, 4096, false},
      {"bad rkey", 0, 0x100, 1024, true},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    World w = world();
    ASSERT_TRUE(w.sq.qp && w.cq.qp);
    Buf src = buf(0, 4096, kAccess);
    Buf dst = buf(sdev(), 8192);
    Buf req = buf(0, 256);
    Buf fin = buf(0, 128);
    std::memset(dst.p, 0xEE, dst.len);
    ASSERT_EQ(post_recv(w.cq, 77, {sge(fin, 0, 128)}), 0);
    async_events(0);
    async_events(sdev());
    const uint64_t tag = 0xF00D;
    add_tag(w.s, 0x99, tag, sge(dst, 0, 8192));
    ASSERT_EQ(send_rndv(w.cq, req, 0, 9, tag, 3, src.addr(k.va_off), src.mr->rkey ^ k.rkey_xor, k.len), 0);
    auto m = poll_tm(w.s.cq, 1);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].wc.wc_flags, unsigned(IBV_WC_TM_MATCH)) << tmwc_str(m[0]);
    struct ibv_wc e = {};
    uint64_t etag = 0;
    if (k.legacy_poll) {
      auto v = poll(Cq{ibv_cq_ex_to_cq(w.s.cq), nullptr}, 1);
      ASSERT_EQ(v.size(), 1u) << "no error completion" << counters();
      e = v[0];
      etag = tag;  // (ibv_poll_cq has no tm_info)
    } else {
      auto v = poll_tm(w.s.cq, 1);
      ASSERT_EQ(v.size(), 1u) << "no error completion" << counters();
      e = v[0].wc;
      etag = v[0].tm.tag;
    }
    EXPECT_EQ(e.status, IBV_WC_REM_ACCESS_ERR) << wc_str(e);
    EXPECT_EQ(e.opcode, IBV_WC_TM_RECV) << wc_str(e);
    EXPECT_EQ(e.wr_id, 0x99u);
    EXPECT_EQ(e.wc_flags, unsigned(IBV_WC_TM_DATA_VALID));
    EXPECT_EQ(e.qp_num, w.sq.num());
    EXPECT_EQ(etag, tag);
    for (size_t i = 0; i < dst.len; i++) ASSERT_EQ(dst.p[i], 0xEE) << "tagged buffer byte " << i;
    EXPECT_TRUE(drain_tm(w.s.cq).empty()) << "the FIN's flush is internal";
    EXPECT_EQ(state(w.sq), IBV_QPS_ERR);
    EXPECT_EQ(state(w.cq), IBV_QPS_ERR);
    auto c = drain(w.cq.scq);
    ASSERT_GE(c.size(), 1u);
    EXPECT_EQ(c[0].opcode, IBV_WC_SEND);
    EXPECT_EQ(c[0].status, IBV_WC_SUCCESS) << wc_str(c[0]);
    for (size_t i = 1; i < c.size(); i++) EXPECT_EQ(c[i].status, IBV_WC_WR_FLUSH_ERR) << "no FIN: " << wc_str(c[i]);
    std::vector<struct ibv_async_event> evs = async_events(0);
    if (sdev() != 0) {
      auto more = async_events(sdev());
      evs.insert(evs.end(), more.begin(), more.end());
    }
    bool client_access = false, server_err = false;
    for (auto& ev : evs) {
      if (ev.element.qp == w.cq.qp && ev.event_type == IBV_EVENT_QP_ACCESS_ERR) client_access = true;
      if (ev.element.qp == w.sq.qp && ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) server_err = true;
    }
    EXPECT_TRUE(client_access) << "the client's responder reports the access error";
    EXPECT_TRUE(server_err) << "the server's QP (of an SRQ) entered ERR: Last WQE Reached";
    // The tag was released: a new ADD can use all the tags again, the SRQ is fine.
    if (HasFatalFailure()) return;
  }
}

// More rendezvous than RNDV_SLOTS in flight on one QP, posted back to back: the extra requests
// are RNR-NAKed and retried, all complete with their data.
TEST_P(Rndv, MoreThanTheSlotsBackToBack) {
  World w = world();
  ASSERT_TRUE(w.sq.qp && w.cq.qp);
  const int n = 6;
  static_assert(n > int(tmnic::hwif::RNDV_SLOTS), "more than the NIC's slots");
  std::vector<Buf> src, dst;
  Buf req = buf(0, 64 * n);
  Buf fin = buf(0, 64 * n);
  for (int i = 0; i < n; i++) {
    const uint32_t len = 2000 + 1500 * uint32_t(i);
    src.push_back(buf(0, len, kAccess));
    dst.push_back(buf(sdev(), len + 100));
    for (uint32_t k = 0; k < len; k++) src[i].p[k] = pattern(100 + i, k);
    std::memset(dst[i].p, 0xEE, dst[i].len);
    ASSERT_EQ(post_recv(w.cq, 200 + i, {sge(fin, 64 * i, 64)}), 0);
    add_tag(w.s, 300 + i, 0x100 + i, sge(dst[i], 0, uint32_t(dst[i].len)));
  }
  for (int i = 0; i < n; i++)
    ASSERT_EQ(send_rndv(w.cq, req, 64 * i, 400 + i, 0x100 + i, uint32_t(i), src[i].addr(), src[i].mr->rkey,
                        uint32_t(src[i].len)),
              0);
  auto sv = poll_tm(w.s.cq, 2 * n);
  ASSERT_EQ(sv.size(), size_t(2 * n)) << counters();
  std::vector<int> matched(n, 0), done(n, 0);
  for (auto& t : sv) {
    ASSERT_EQ(t.wc.status, IBV_WC_SUCCESS) << tmwc_str(t);
    ASSERT_GE(t.wc.wr_id, 300u);
    const int i = int(t.wc.wr_id - 300);
    ASSERT_LT(i, n);
    EXPECT_EQ(t.tm.tag, t.wc.wc_flags & IBV_WC_TM_MATCH ? uint64_t(0x100 + i) : 0u);
    if (t.wc.wc_flags == IBV_WC_TM_MATCH) {
      EXPECT_EQ(done[i], 0) << "DATA_VALID before MATCH";
      matched[i]++;
    } else {
      EXPECT_EQ(t.wc.wc_flags, unsigned(IBV_WC_TM_DATA_VALID)) << tmwc_str(t);
      EXPECT_EQ(t.wc.byte_len, uint32_t(src[i].len));
      done[i]++;
    }
  }
  for (int i = 0; i < n; i++) {
    EXPECT_EQ(matched[i], 1) << i;
    EXPECT_EQ(done[i], 1) << i;
    EXPECT_EQ(std::memcmp(dst[i].p, src[i].p, src[i].len), 0) << "data of " << i;
    for (size_t k = src[i].len; k < dst[i].len; k++) ASSERT_EQ(dst[i].p[k], 0xEE) << i << " byte " << k;
  }
  auto c = poll(w.cq.scq, 2 * n);
  ASSERT_EQ(c.size(), size_t(2 * n));
  int fins = 0;
  for (auto& x : c) {
    EXPECT_EQ(x.status, IBV_WC_SUCCESS) << wc_str(x);
    if (x.opcode != IBV_WC_RECV) continue;
    const int i = int(x.wr_id - 200);
    EXPECT_EQ(i, fins) << "FINs in order";
    const auto want = fin_bytes(uint32_t(fins), 0x100 + fins, src[fins].addr(), src[fins].mr->rkey,
                                uint32_t(src[fins].len));
    EXPECT_EQ(std::memcmp(fin.p + 64 * fins, want.data(), 32), 0) << "FIN " << fins;
    fins++;
  }
  EXPECT_EQ(fins, n);
  EXPECT_TRUE(drain_tm(w.s.cq).empty());
}

// Several rendezvous QPs of one TM-SRQ at once, two transfers each, interleaved.
TEST_P(Rndv, SeveralQpsAtOnce) {
  TmServer s = tm_server(sdev());
  ASSERT_NE(s.srq, nullptr);
  const int nq = 3, per = 2;
  std::vector<Qp> sqs, cqs;
  for (int q = 0; q < nq; q++) {
    sqs.push_back(tm_qp(s));
    cqs.push_back(client_qp(0));
    ASSERT_TRUE(sqs[q].qp && cqs[q].qp);
    connect(cqs[q], sqs[q]);
  }
  std::vector<Buf> src, dst;
  Buf req = buf(0, 64 * nq * per);
  Buf fin = buf(0, 64 * nq * per);
  for (int i = 0; i < nq * per; i++) {
    const uint32_t len = 5000 + 3333 * uint32_t(i);
    src.push_back(buf(0, len, kAccess));
    dst.push_back(buf(sdev(), len));
    for (uint32_t k = 0; k < len; k++) src[i].p[k] = pattern(500 + i, k);
    ASSERT_EQ(post_recv(cqs[i % nq], 200 + i, {sge(fin, 64 * i, 64)}), 0);
    add_tag(s, 300 + i, 0x9000 + i, sge(dst[i], 0, len));
  }
  for (int i = 0; i < nq * per; i++)
    ASSERT_EQ(send_rndv(cqs[i % nq], req, 64 * i, 400 + i, 0x9000 + i, uint32_t(i), src[i].addr(), src[i].mr->rkey,
                        uint32_t(src[i].len)),
              0);
  auto sv = poll_tm(s.cq, 2 * nq * per);
  ASSERT_EQ(sv.size(), size_t(2 * nq * per)) << counters();
  int done = 0;
  for (auto& t : sv) {
    ASSERT_EQ(t.wc.status, IBV_WC_SUCCESS) << tmwc_str(t);
    const int i = int(t.wc.wr_id - 300);
    ASSERT_TRUE(i >= 0 && i < nq * per);
    EXPECT_EQ(t.wc.qp_num, sqs[i % nq].num());
    if (t.wc.wc_flags & IBV_WC_TM_DATA_VALID) done++;
  }
  EXPECT_EQ(done, nq * per);
  for (int i = 0; i < nq * per; i++) EXPECT_EQ(std::memcmp(dst[i].p, src[i].p, src[i].len), 0) << "data of " << i;
  for (int q = 0; q < nq; q++) {
    auto c = poll(cqs[q].scq, 2 * per);
    ASSERT_EQ(c.size(), size_t(2 * per));
    for (auto& x : c) EXPECT_EQ(x.status, IBV_WC_SUCCESS) << wc_str(x);
  }
}

INSTANTIATE_TEST_SUITE_P(Topology, Rndv, ::testing::Values(0, 1),
                         [](const ::testing::TestParamInfo<int>& i) { return i.param ? "TwoNics" : "Loopback"; });

}  // namespace
