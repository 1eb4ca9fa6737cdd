// System tests: helpers shared by the test executables in tb/system. Everything goes through the
// standard verbs API (Debian's <infiniband/verbs.h>) on our drop-in libibverbs.so.1, whose devices
// are the NICs of one simulated world per process; sim_control.h inspects and steers that world.
#pragma once

#include <fcntl.h>
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim_control.h"
#include "tmnic/hwif.h"

namespace sys {

// ------------------------------------------------------------------------------------------------
// Simulated world.

inline uint32_t counter(int nic, uint32_t index) {
  return tmnic_sim_read_reg(nic, tmnic::hwif::reg::STATS0 + 4 * index);
}

// All statistics counters of both NICs, for failure messages.
inline std::string counters() {
  std::string out;
  for (int n = 0; n < 2; n++) {
    out += "\n  tmnic" + std::to_string(n) + ":";
    for (uint32_t i = 0; i < tmnic::hwif::stat::COUNT; i++)
      out += std::string(" ") + tmnic::hwif::stat::name(i) + "=" + std::to_string(counter(n, i));
  }
  return out;
}

// Runs the world for `cycles` simulated cycles, or until nothing is left to do (tmnic_sim_run
// returns after every DMA write that lands, so it is called in a loop).
inline void run_for(uint64_t cycles) {
  const uint64_t end = tmnic_sim_now() + cycles;
  int stuck = 0;
  while (tmnic_sim_now() < end && stuck < 3) {
    uint64_t t = tmnic_sim_now();
    tmnic_sim_run(end - t);
    stuck = tmnic_sim_now() == t ? stuck + 1 : 0;
  }
}

// Watchdog for traffic loops: stuck() is true when no completion came for `budget` simulated
// cycles, or the world went idle (simulated time stopped) with work still expected.
class Stall {
 public:
  explicit Stall(uint64_t budget = 40'000'000) : budget_(budget), last_(tmnic_sim_now()), t_(last_) {}
  bool stuck(bool progress) {
    const uint64_t now = tmnic_sim_now();
    if (progress) {
      last_ = now;
      idle_ = 0;
    } else {
      idle_ = now == t_ ? idle_ + 1 : 0;
    }
    t_ = now;
    return now - last_ >= budget_ || idle_ >= 1000;
  }

 private:
  uint64_t budget_, last_, t_;
  int idle_ = 0;
};

inline uint64_t us_to_cycles(double us) { return uint64_t(us * tmnic_sim_clk_mhz()); }

// Byte `i` of message `m`: differs per message and per position (and is never constant over 256 B).
inline uint8_t pattern(uint32_t m, uint64_t i) {
  return uint8_t((m * 2654435761u) >> 24) ^ uint8_t(i * 131 + (i >> 8) + 7);
}

inline uint32_t mtu_bytes(enum ibv_mtu m) { return 128u << int(m); }

// ------------------------------------------------------------------------------------------------
// Completions, from either ibv_poll_cq or the extended CQ (start/next/end_poll).

struct Cq {
  struct ibv_cq* cq = nullptr;
  struct ibv_cq_ex* ex = nullptr;  // set when created with ibv_create_cq_ex (polled that way)
};

inline struct ibv_wc read_ex(struct ibv_cq_ex* ex) {
  struct ibv_wc w;
  std::memset(&w, 0, sizeof(w));
  w.wr_id = ex->wr_id;
  w.status = ex->status;
  w.opcode = ibv_wc_read_opcode(ex);
  w.vendor_err = ibv_wc_read_vendor_err(ex);
  w.byte_len = ibv_wc_read_byte_len(ex);
  w.wc_flags = ibv_wc_read_wc_flags(ex);
  if (w.wc_flags & IBV_WC_WITH_IMM) w.imm_data = ibv_wc_read_imm_data(ex);
  w.qp_num = ibv_wc_read_qp_num(ex);
  w.src_qp = ibv_wc_read_src_qp(ex);
  return w;
}

// Polls up to `max` completions once (an empty poll advances the simulation).
inline int poll_once(const Cq& c, int max, std::vector<struct ibv_wc>* out) {
  if (!c.ex) {
    struct ibv_wc wc[32];
    int m = ibv_poll_cq(c.cq, max < 32 ? max : 32, wc);
    if (m > 0) out->insert(out->end(), wc, wc + m);
    return m;
  }
  struct ibv_poll_cq_attr attr = {};
  int ret = ibv_start_poll(c.ex, &attr);
  if (ret == ENOENT) return 0;
  if (ret) return -ret;
  int m = 0;
  for (;;) {
    out->push_back(read_ex(c.ex));
    if (++m >= max) break;
    ret = ibv_next_poll(c.ex);
    if (ret == ENOENT) break;
    if (ret) {
      m = -ret;
      break;
    }
  }
  ibv_end_poll(c.ex);
  return m;
}

// Polls until `n` completions arrived, the world went idle for good (nothing can ever arrive), or
// `budget` simulated cycles passed. Returns what arrived (possibly fewer or more than n).
inline std::vector<struct ibv_wc> poll(const Cq& c, int n, uint64_t budget = 40'000'000) {
  std::vector<struct ibv_wc> out;
  const uint64_t end = tmnic_sim_now() + budget;
  int idle = 0;
  while (int(out.size()) < n && tmnic_sim_now() < end && idle < 64) {
    uint64_t t = tmnic_sim_now();
    int m = poll_once(c, n - int(out.size()), &out);
    if (m < 0) {
      ADD_FAILURE() << "poll failed: " << m;
      break;
    }
    idle = (m == 0 && tmnic_sim_now() == t) ? idle + 1 : 0;
  }
  return out;
}

// Lets the world settle (everything in flight lands) and returns whatever completed.
inline std::vector<struct ibv_wc> drain(const Cq& c, uint64_t cycles = 2'000'000) {
  run_for(cycles);
  std::vector<struct ibv_wc> out;
  while (poll_once(c, 32, &out) > 0) {
  }
  return out;
}

inline std::string wc_str(const struct ibv_wc& w) {
  char b[256];
  std::snprintf(b, sizeof b, "wr_id=%llu status=%s(%d) opcode=%d byte_len=%u qp=%u src_qp=%u flags=%#x imm=%#x",
                (unsigned long long)w.wr_id, ibv_wc_status_str(w.status), int(w.status), int(w.opcode),
                w.byte_len, w.qp_num, w.src_qp, w.wc_flags, ntohl(w.imm_data));
  return b;
}

// ------------------------------------------------------------------------------------------------
// Host buffers and verbs objects, released in reverse order at the end of a test.

struct Buf {
  uint8_t* p = nullptr;
  size_t len = 0;
  struct ibv_mr* mr = nullptr;
  uint32_t lkey() const { return mr->lkey; }
  uint64_t addr(size_t off = 0) const { return uint64_t(uintptr_t(p + off)); }
};

// Up to three SGEs of unequal length covering bytes [off, off + n) of `b` (none for n = 0; one
// while n < 3): a gather or scatter list that crosses SGE boundaries at odd offsets.
inline std::vector<struct ibv_sge> sges3(const Buf& b, size_t off, uint32_t n) {
  std::vector<struct ibv_sge> sg;
  const uint32_t a = n / 3, c = n / 2 - n / 3;
  if (n == 0) return sg;
  sg.push_back({b.addr(off), a ? a : n, b.lkey()});
  if (a) {
    sg.push_back({b.addr(off + a), c, b.lkey()});
    sg.push_back({b.addr(off + a + c), n - a - c, b.lkey()});
  }
  return sg;
}

struct Qp {
  struct ibv_qp* qp = nullptr;
  int dev = 0;  // index into SystemTest::ctx_ (0 = tmnic0, 1 = tmnic1)
  Cq scq, rcq;
  struct ibv_srq* srq = nullptr;
  std::shared_ptr<bool> alive;  // false once destroyed by the test itself
  uint32_t num() const { return qp->qp_num; }
};

struct QpOpts {
  uint32_t send_wr = 64, recv_wr = 64, send_sge = 1, recv_sge = 1;
  struct ibv_srq* srq = nullptr;
  Cq scq, rcq;                 // existing CQs (created when cq is null)
  bool ex_cq = false;          // create the CQs with ibv_create_cq_ex
  int cqe = 1023;
  bool to_init = true;         // false: leave the QP in RESET
  unsigned access = IBV_ACCESS_LOCAL_WRITE;   // qp_access_flags at INIT
};

struct ConnOpts {
  enum ibv_mtu mtu = IBV_MTU_1024;
  uint32_t psn = 0x123;
  uint8_t min_rnr_timer = 1;   // 0.01 ms
  uint8_t rnr_retry = 7;       // infinite
  uint8_t timeout = 14;        // local ACK timeout 4.096 us << 14 = 67 ms
  uint8_t retry_cnt = 7;
  uint8_t max_rd_atomic = 0;   // RDMA READs in flight (0: the NIC allows one, as mlx5 does)
};

class SystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    list_ = ibv_get_device_list(&n);
    ASSERT_NE(list_, nullptr);
    ASSERT_GE(n, 2) << "the system tests need two simulated NICs (TMNIC_SIM_NICS >= 2)";
    for (int d = 0; d < 2; d++) {
      std::string want = "tmnic" + std::to_string(d);
      struct ibv_device* dev = nullptr;
      for (int i = 0; i < n; i++)
        if (want == ibv_get_device_name(list_[i])) dev = list_[i];
      ASSERT_NE(dev, nullptr) << want << " not listed";
      ctx_[d] = ibv_open_device(dev);
      ASSERT_NE(ctx_[d], nullptr);
      pd_[d] = ibv_alloc_pd(ctx_[d]);
      ASSERT_NE(pd_[d], nullptr);
      ASSERT_EQ(ibv_query_gid(ctx_[d], 1, 0, &gid_[d]), 0);
    }
    // A run on another build of the drop-in library (the 256-bit NICs: tb/system/CMakeLists.txt)
    // names the datapath width it is for, so that it cannot pass on the default library instead.
    if (const char* w = std::getenv("TMNIC_EXPECT_DATA_BYTES")) {
      for (int d = 0; d < 2; d++)
        ASSERT_EQ(tmnic_sim_read_reg(d, tmnic::hwif::reg::DATA_BYTES), uint32_t(std::strtoul(w, nullptr, 0)))
            << "tmnic" << d << ": not the NIC this run is for (LD_LIBRARY_PATH)";
    }
  }
  void TearDown() override {
    for (auto it = cleanup_.rbegin(); it != cleanup_.rend(); ++it) (*it)();
    cleanup_.clear();
    for (int d = 0; d < 2; d++) {
      if (pd_[d]) {
        EXPECT_EQ(ibv_dealloc_pd(pd_[d]), 0);
      }
      if (ctx_[d]) {
        EXPECT_EQ(ibv_close_device(ctx_[d]), 0);
      }
    }
    if (list_) ibv_free_device_list(list_);
  }
  void defer(std::function<void()> f) { cleanup_.push_back(std::move(f)); }

  // The async events device `dev`'s context has now (after letting the world settle), acked.
  std::vector<struct ibv_async_event> async_events(int dev) {
    const int fd = ctx_[dev]->async_fd;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    run_for(100000);
    std::vector<struct ibv_async_event> out;
    struct ibv_async_event ev;
    while (ibv_get_async_event(ctx_[dev], &ev) == 0) {
      out.push_back(ev);
      ibv_ack_async_event(&ev);
    }
    return out;
  }

  // Page-aligned host buffer of `len` bytes, registered on device `dev` (not when dev < 0).
  Buf buf(int dev, size_t len, int access = IBV_ACCESS_LOCAL_WRITE) {
    Buf b;
    b.len = len;
    size_t alloc = (len + 4095) & ~size_t(4095);
    b.p = static_cast<uint8_t*>(std::aligned_alloc(4096, alloc ? alloc : 4096));
    std::memset(b.p, 0, alloc ? alloc : 4096);
    uint8_t* p = b.p;
    defer([p] { std::free(p); });
    if (dev >= 0) {
      b.mr = ibv_reg_mr(pd_[dev], b.p, len, access);
      EXPECT_NE(b.mr, nullptr) << "ibv_reg_mr: " << std::strerror(errno);
      if (b.mr) {
        struct ibv_mr* mr = b.mr;
        defer([mr] { EXPECT_EQ(ibv_dereg_mr(mr), 0); });
      }
    }
    return b;
  }

  Cq cq(int dev, int cqe, bool ex) {
    Cq c;
    if (ex) {
      struct ibv_cq_init_attr_ex a = {};
      a.cqe = uint32_t(cqe);
      a.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
                   IBV_WC_EX_WITH_SRC_QP;
      c.ex = ibv_create_cq_ex(ctx_[dev], &a);
      EXPECT_NE(c.ex, nullptr) << "ibv_create_cq_ex: " << std::strerror(errno);
      if (c.ex) c.cq = ibv_cq_ex_to_cq(c.ex);
    } else {
      c.cq = ibv_create_cq(ctx_[dev], cqe, nullptr, nullptr, 0);
      EXPECT_NE(c.cq, nullptr) << "ibv_create_cq: " << std::strerror(errno);
    }
    if (c.cq) {
      struct ibv_cq* p = c.cq;
      defer([p] { EXPECT_EQ(ibv_destroy_cq(p), 0); });
    }
    return c;
  }

  struct ibv_srq* srq(int dev, uint32_t max_wr, uint32_t max_sge) {
    struct ibv_srq_init_attr a = {};
    a.attr.max_wr = max_wr;
    a.attr.max_sge = max_sge;
    struct ibv_srq* s = ibv_create_srq(pd_[dev], &a);
    EXPECT_NE(s, nullptr) << "ibv_create_srq: " << std::strerror(errno);
    if (s) defer([s] { EXPECT_EQ(ibv_destroy_srq(s), 0); });
    return s;
  }

  // An RC QP on device `dev`, moved to INIT.
  Qp qp(int dev, QpOpts o = {}) {
    Qp q;
    q.dev = dev;
    q.scq = o.scq.cq ? o.scq : cq(dev, o.cqe, o.ex_cq);
    q.rcq = o.rcq.cq ? o.rcq : (o.scq.cq ? o.scq : cq(dev, o.cqe, o.ex_cq));
    q.srq = o.srq;
    struct ibv_qp_init_attr a = {};
    a.send_cq = q.scq.cq;
    a.recv_cq = q.rcq.cq;
    a.srq = o.srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = o.send_wr;
    a.cap.max_recv_wr = o.srq ? 0 : o.recv_wr;
    a.cap.max_send_sge = o.send_sge;
    a.cap.max_recv_sge = o.srq ? 0 : o.recv_sge;
    q.qp = ibv_create_qp(pd_[dev], &a);
    EXPECT_NE(q.qp, nullptr) << "ibv_create_qp: " << std::strerror(errno);
    if (q.qp) adopt(q, o.to_init, o.access);
    return q;
  }

  // A QP just created: destroyed at the end of the test unless the test did it (destroy()), and
  // moved to INIT with `access` as its qp_access_flags when to_init.
  void adopt(Qp& q, bool to_init, unsigned access) {
    struct ibv_qp* p = q.qp;
    q.alive = std::make_shared<bool>(true);
    defer([p, alive = q.alive] {
      if (*alive) {
        EXPECT_EQ(ibv_destroy_qp(p), 0);
      }
    });
    if (!to_init) return;
    struct ibv_qp_attr at = {};
    at.qp_state = IBV_QPS_INIT;
    at.port_num = 1;
    at.qp_access_flags = access;
    EXPECT_EQ(ibv_modify_qp(q.qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
  }

  // Destroys a QP before the end of the test.
  static int destroy(const Qp& q) {
    *q.alive = false;
    return ibv_destroy_qp(q.qp);
  }

  // Moves `q` to RTR then RTS towards `peer` (as rc_pingpong does).
  void to_rts(const Qp& q, const Qp& peer, const ConnOpts& c) {
    to_rtr(q, peer, c);
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RTS;
    a.timeout = c.timeout;
    a.retry_cnt = c.retry_cnt;
    a.rnr_retry = c.rnr_retry;
    a.sq_psn = c.psn;
    a.max_rd_atomic = c.max_rd_atomic;
    ASSERT_EQ(ibv_modify_qp(q.qp, &a,
                            IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                IBV_QP_MAX_QP_RD_ATOMIC),
              0);
  }
  // Moves `q` (INIT) to RTR towards `peer`.
  void to_rtr(const Qp& q, const Qp& peer, const ConnOpts& c) {
    struct ibv_qp_attr a = {};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = c.mtu;
    a.dest_qp_num = peer.num();
    a.rq_psn = c.psn;
    a.max_dest_rd_atomic = c.max_rd_atomic;
    a.min_rnr_timer = c.min_rnr_timer;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = gid_[peer.dev];
    a.ah_attr.grh.sgid_index = 0;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.port_num = 1;
    ASSERT_EQ(ibv_modify_qp(q.qp, &a,
                            IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER),
              0);
  }
  void connect(const Qp& a, const Qp& b, const ConnOpts& c = {}) {
    to_rts(a, b, c);
    to_rts(b, a, c);
  }
  // A connected pair: sender on device 0, receiver on device `rdev` (0 = loopback, 1 = two NICs).
  std::pair<Qp, Qp> pair(int rdev, QpOpts so = {}, QpOpts ro = {}, ConnOpts c = {}) {
    Qp s = qp(0, so);
    Qp r = qp(rdev, ro);
    if (s.qp && r.qp) connect(s, r, c);
    return {s, r};
  }

  static int post_send(const Qp& q, uint64_t wr_id, std::vector<struct ibv_sge> sg,
                       enum ibv_wr_opcode op = IBV_WR_SEND, uint32_t imm_host = 0,
                       unsigned flags = IBV_SEND_SIGNALED) {
    struct ibv_send_wr wr = {};
    wr.wr_id = wr_id;
    wr.sg_list = sg.empty() ? nullptr : sg.data();
    wr.num_sge = int(sg.size());
    wr.opcode = op;
    wr.send_flags = flags;
    wr.imm_data = htonl(imm_host);
    struct ibv_send_wr* bad = nullptr;
    return ibv_post_send(q.qp, &wr, &bad);
  }
  static int post_recv(const Qp& q, uint64_t wr_id, std::vector<struct ibv_sge> sg) {
    struct ibv_recv_wr wr = {};
    wr.wr_id = wr_id;
    wr.sg_list = sg.empty() ? nullptr : sg.data();
    wr.num_sge = int(sg.size());
    struct ibv_recv_wr* bad = nullptr;
    return q.srq ? ibv_post_srq_recv(q.srq, &wr, &bad) : ibv_post_recv(q.qp, &wr, &bad);
  }
  static int post_srq(struct ibv_srq* s, uint64_t wr_id, std::vector<struct ibv_sge> sg) {
    struct ibv_recv_wr wr = {};
    wr.wr_id = wr_id;
    wr.sg_list = sg.empty() ? nullptr : sg.data();
    wr.num_sge = int(sg.size());
    struct ibv_recv_wr* bad = nullptr;
    return ibv_post_srq_recv(s, &wr, &bad);
  }
  static enum ibv_qp_state state(const Qp& q) {
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr i;
    EXPECT_EQ(ibv_query_qp(q.qp, &a, IBV_QP_STATE, &i), 0);
    return a.qp_state;
  }

  struct ibv_device** list_ = nullptr;
  struct ibv_context* ctx_[2] = {};
  struct ibv_pd* pd_[2] = {};
  union ibv_gid gid_[2];
  std::vector<std::function<void()>> cleanup_;
};

inline struct ibv_sge sge(const Buf& b, size_t off, uint32_t len) {
  return {b.addr(off), len, b.mr ? b.lkey() : 0};
}

}  // namespace sys
