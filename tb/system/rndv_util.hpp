// Helpers of the rendezvous system tests (test_rndv.cpp, test_rndv_mpi.cpp): TM-SRQ servers with
// rendezvous QPs (RC, on the TM-SRQ, max_send_wr 0), TMH/RVH building and parsing, and polling an
// extended CQ with the TM information of each completion.
#pragma once

#include <infiniband/tm_types.h>

#include "system_test.hpp"

namespace sys {

// A completion of an extended CQ together with its tm_info (read while it is current).
struct TmWc {
  struct ibv_wc wc;
  struct ibv_wc_tm_info tm;
};

inline std::string tmwc_str(const TmWc& t) {
  char b[96];
  std::snprintf(b, sizeof b, " tag=%#llx priv=%#x", (unsigned long long)t.tm.tag, t.tm.priv);
  return wc_str(t.wc) + b;
}

// Polls up to `max` completions of `ex` once.
inline int poll_tm_once(struct ibv_cq_ex* ex, int max, std::vector<TmWc>* out) {
  struct ibv_poll_cq_attr attr = {};
  int ret = ibv_start_poll(ex, &attr);
  if (ret == ENOENT) return 0;
  if (ret) return -ret;
  int m = 0;
  for (;;) {
    TmWc t;
    t.wc = read_ex(ex);
    t.tm = {};
    ibv_wc_read_tm_info(ex, &t.tm);
    out->push_back(t);
    if (++m >= max) break;
    ret = ibv_next_poll(ex);
    if (ret == ENOENT) break;
    if (ret) {
      m = -ret;
      break;
    }
  }
  ibv_end_poll(ex);
  return m;
}

// Polls until `n` completions arrived or the world went idle / `budget` cycles passed.
inline std::vector<TmWc> poll_tm(struct ibv_cq_ex* ex, int n, uint64_t budget = 40'000'000) {
  std::vector<TmWc> out;
  const uint64_t end = tmnic_sim_now() + budget;
  int idle = 0;
  while (int(out.size()) < n && tmnic_sim_now() < end && idle < 64) {
    uint64_t t = tmnic_sim_now();
    int m = poll_tm_once(ex, n - int(out.size()), &out);
    if (m < 0) {
      ADD_FAILURE() << "poll failed: " << m;
      break;
    }
    idle = (m == 0 && tmnic_sim_now() == t) ? idle + 1 : 0;
  }
  return out;
}

inline std::vector<TmWc> drain_tm(struct ibv_cq_ex* ex, uint64_t cycles = 2'000'000) {
  run_for(cycles);
  std::vector<TmWc> out;
  while (poll_tm_once(ex, 32, &out) > 0) {
  }
  return out;
}

inline void put_be(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; i++) p[i] = uint8_t(v >> (8 * (n - 1 - i)));
}
inline uint64_t get_be(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v = v << 8 | p[i];
  return v;
}

// TMH(op, app_ctx, tag) + RVH(va, rkey, len) at p (32 bytes, all big-endian as on the wire).
inline void put_rndv_hdr(uint8_t* p, uint8_t op, uint32_t app_ctx, uint64_t tag, uint64_t va, uint32_t rkey,
                         uint32_t len) {
  p[0] = op;
  p[1] = p[2] = p[3] = 0;
  put_be(p + 4, app_ctx, 4);
  put_be(p + 8, tag, 8);
  put_be(p + 16, va, 8);
  put_be(p + 24, rkey, 4);
  put_be(p + 28, len, 4);
}
inline void put_tmh(uint8_t* p, uint8_t op, uint32_t app_ctx, uint64_t tag) {
  p[0] = op;
  p[1] = p[2] = p[3] = 0;
  put_be(p + 4, app_ctx, 4);
  put_be(p + 8, tag, 8);
}

// A TM-SRQ (on device `dev`) with its extended CQ and SRQ buffers.
struct TmServer {
  int dev = 0;
  struct ibv_cq_ex* cq = nullptr;
  Cq cqw;  // the same CQ for the QP helpers
  struct ibv_srq* srq = nullptr;
  Buf srq_bufs;
  uint32_t srq_buf_len = 0, srq_n = 0;
  uint32_t unexp_cnt = 0;
};

class RndvTestBase : public SystemTest {
 protected:
  static constexpr unsigned kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

  bool rndv_offloaded(int dev) {
    struct ibv_device_attr_ex a = {};
    return ibv_query_device_ex(ctx_[dev], nullptr, &a) == 0 && (a.tm_caps.flags & IBV_TM_CAP_RC);
  }

  // TM-SRQ with `tags` entries and `nbufs` SRQ buffers of `buf_len` bytes posted (wr_id = 1000000 + i).
  TmServer tm_server(int dev, uint32_t tags = 64, uint32_t nbufs = 33, uint32_t buf_len = 1024, int cqe = 1023) {
    TmServer s;
    s.dev = dev;
    struct ibv_cq_init_attr_ex ca = {};
    ca.cqe = uint32_t(cqe);
    ca.wc_flags = IBV_WC_EX_WITH_TM_INFO | IBV_WC_STANDARD_FLAGS;
    s.cq = ibv_create_cq_ex(ctx_[dev], &ca);
    EXPECT_NE(s.cq, nullptr) << std::strerror(errno);
    if (!s.cq) return s;
    struct ibv_cq_ex* c = s.cq;
    defer([c] { EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(c)), 0); });
    s.cqw = Cq{ibv_cq_ex_to_cq(s.cq), s.cq};
    struct ibv_srq_init_attr_ex sa = {};
    sa.attr.max_wr = nbufs + 16;
    sa.attr.max_sge = 1;
    sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
    sa.srq_type = IBV_SRQT_TM;
    sa.pd = pd_[dev];
    sa.cq = ibv_cq_ex_to_cq(s.cq);
    sa.tm_cap.max_num_tags = tags;
    sa.tm_cap.max_ops = 256;
    s.srq = ibv_create_srq_ex(ctx_[dev], &sa);
    EXPECT_NE(s.srq, nullptr) << std::strerror(errno);
    if (!s.srq) return s;
    struct ibv_srq* sr = s.srq;
    defer([sr] { EXPECT_EQ(ibv_destroy_srq(sr), 0); });
    s.srq_buf_len = buf_len;
    s.srq_n = nbufs;
    s.srq_bufs = buf(dev, size_t(nbufs) * buf_len);
    for (uint32_t i = 0; i < nbufs; i++)
      EXPECT_EQ(post_srq(s.srq, 1000000 + i, {sge(s.srq_bufs, size_t(i) * buf_len, buf_len)}), 0);
    return s;
  }
  // Reposts SRQ buffer `wr_id` (after its unexpected / NO_TAG completion was handled).
  void repost_srq(TmServer& s, uint64_t wr_id) {
    const uint32_t i = uint32_t(wr_id - 1000000);
    EXPECT_EQ(post_srq(s.srq, wr_id, {sge(s.srq_bufs, size_t(i) * s.srq_buf_len, s.srq_buf_len)}), 0);
  }
  const uint8_t* srq_buf(const TmServer& s, uint64_t wr_id) const {
    return s.srq_bufs.p + size_t(wr_id - 1000000) * s.srq_buf_len;
  }

  // An RC QP on the server's TM-SRQ: max_send_wr 0 makes it a rendezvous QP (as pyverbs' test_tm_rndv).
  Qp tm_qp(const TmServer& s, uint32_t send_wr = 0) {
    QpOpts o;
    o.srq = s.srq;
    o.scq = s.cqw;
    o.send_wr = send_wr;
    o.access = kAccess;
    return qp(s.dev, o);
  }
  // A plain RC client QP on device `dev` with its own receive queue and one CQ for both sides (so
  // that the order of its SEND and RECV completions shows).
  Qp client_qp(int dev, uint32_t send_wr = 64, uint32_t recv_wr = 64) {
    QpOpts o;
    o.scq = o.rcq = cq(dev, 1023, false);
    o.send_wr = send_wr;
    o.recv_wr = recv_wr;
    o.access = kAccess;
    return qp(dev, o);
  }

  // ADD of a tagged buffer; with `wait`, polls its TM_ADD completion. Returns the handle.
  uint32_t add_tag(TmServer& s, uint64_t recv_wr_id, uint64_t tag, const struct ibv_sge& sg, bool wait = true,
                   uint64_t mask = ~0ull) {
    struct ibv_sge g = sg;
    struct ibv_ops_wr op = {};
    op.wr_id = 0xADD00000ull + recv_wr_id;
    op.opcode = IBV_WR_TAG_ADD;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = s.unexp_cnt;
    op.tm.add.recv_wr_id = recv_wr_id;
    op.tm.add.sg_list = &g;
    op.tm.add.num_sge = 1;
    op.tm.add.tag = tag;
    op.tm.add.mask = mask;
    struct ibv_ops_wr* bad = nullptr;
    EXPECT_EQ(ibv_post_srq_ops(s.srq, &op, &bad), 0);
    if (wait) {
      auto w = poll_tm(s.cq, 1);
      EXPECT_EQ(w.size(), 1u);
      if (!w.empty()) {
        EXPECT_EQ(w[0].wc.opcode, IBV_WC_TM_ADD) << tmwc_str(w[0]);
        EXPECT_EQ(w[0].wc.status, IBV_WC_SUCCESS) << tmwc_str(w[0]);
        EXPECT_EQ(w[0].wc.wr_id, op.wr_id);
      }
    }
    return op.tm.handle;
  }
  // IBV_WR_TAG_SYNC with the server's unexpected count; polls its completion.
  void sync(TmServer& s) {
    struct ibv_ops_wr op = {};
    op.wr_id = 27;
    op.opcode = IBV_WR_TAG_SYNC;
    op.flags = IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = s.unexp_cnt;
    struct ibv_ops_wr* bad = nullptr;
    ASSERT_EQ(ibv_post_srq_ops(s.srq, &op, &bad), 0);
    auto w = poll_tm(s.cq, 1);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].wc.opcode, IBV_WC_TM_SYNC) << tmwc_str(w[0]);
    EXPECT_EQ(w[0].wc.status, IBV_WC_SUCCESS);
  }

  // The client's rendezvous request: TMH(RNDV, app_ctx, tag) + RVH(va, rkey, len) + `meta` bytes
  // of metadata, sent from `req` at offset `off`.
  static int send_rndv(const Qp& c, const Buf& req, size_t off, uint64_t wr_id, uint64_t tag, uint32_t app_ctx,
                       uint64_t va, uint32_t rkey, uint32_t len, uint32_t meta = 32) {
    put_rndv_hdr(req.p + off, IBV_TMH_RNDV, app_ctx, tag, va, rkey, len);
    for (uint32_t i = 0; i < meta; i++) req.p[off + 32 + i] = uint8_t(0x90 + i);
    return post_send(c, wr_id, {sge(req, off, 32 + meta)});
  }

  // The 32 bytes of a FIN for that request, as the NIC must send them.
  static std::vector<uint8_t> fin_bytes(uint32_t app_ctx, uint64_t tag, uint64_t va, uint32_t rkey, uint32_t len) {
    std::vector<uint8_t> f(32);
    put_rndv_hdr(f.data(), IBV_TMH_FIN, app_ctx, tag, va, rkey, len);
    return f;
  }
};

}  // namespace sys
