// The NIC that progresses on its own (TMNIC_PROGRESS=thread; docs/simulation.md "Progress"): a
// progress thread advances the world whenever it has work and sleeps otherwise, so that completion
// channels work as with a kernel (an interrupt makes the fd readable; ibv_get_cq_event blocks), a
// program blocked or busy elsewhere still has its transfers and transport timers run, an idle
// process uses no CPU, and application threads post and poll concurrently with the progress thread.
// Built a second time under ThreadSanitizer (make test-tsan).
#include <poll.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <fcntl.h>
#include <thread>

#include "system_test.hpp"

namespace {

using namespace sys;
using Clock = std::chrono::steady_clock;

// Before main (and so before the first ibv_get_device_list creates the world).
const bool kThreaded = [] { return setenv("TMNIC_PROGRESS", "thread", 1) == 0; }();

double cpu_seconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

bool readable(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

// Polls `cq` until `n` completions or `seconds` of wall time (the progress thread does the work).
std::vector<struct ibv_wc> wait_wc(struct ibv_cq* cq, int n, double seconds = 20) {
  std::vector<struct ibv_wc> out;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (int(out.size()) < n && Clock::now() < end) {
    struct ibv_wc wc[16];
    int m = ibv_poll_cq(cq, std::min(16, n - int(out.size())), wc);
    if (m < 0) {
      ADD_FAILURE() << "ibv_poll_cq: " << m;
      break;
    }
    out.insert(out.end(), wc, wc + m);
  }
  return out;
}

class Threads : public SystemTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kThreaded);
    SystemTest::SetUp();
    ASSERT_EQ(tmnic_sim_threaded(), 1) << "the world has no progress thread";
  }
  struct ibv_comp_channel* channel(int dev) {
    struct ibv_comp_channel* ch = ibv_create_comp_channel(ctx_[dev]);
    EXPECT_NE(ch, nullptr);
    if (ch) defer([ch] { EXPECT_EQ(ibv_destroy_comp_channel(ch), 0); });
    return ch;
  }
  // A connected pair NIC 0 -> NIC 1 whose send CQ reports to channel `ch` of NIC 0.
  std::pair<Qp, Qp> pair_with_send_channel(struct ibv_comp_channel* ch) {
    QpOpts so;
    so.scq = cq_on(0, ch);
    return pair(1, so);
  }
  Cq cq_on(int dev, struct ibv_comp_channel* ch, int cqe = 255) {
    Cq c;
    c.cq = ibv_create_cq(ctx_[dev], cqe, nullptr, ch, 0);
    EXPECT_NE(c.cq, nullptr);
    struct ibv_cq* p = c.cq;
    if (p) defer([p] { EXPECT_EQ(ibv_destroy_cq(p), 0); });
    return c;
  }
};

// The receiver blocks in ibv_get_cq_event; another thread sends later. Nothing but the progress
// thread runs the NIC meanwhile, and only the interrupt can wake the receiver.
TEST_F(Threads, BlockedGetCqEventWakesOnInterrupt) {
  struct ibv_comp_channel* ch = channel(1);
  QpOpts ro;
  ro.rcq = cq_on(1, ch);
  auto [s, r] = pair(1, {}, ro);
  Buf sb = buf(0, 4097), rb = buf(1, 4097);
  for (size_t i = 0; i < sb.len; i++) sb.p[i] = pattern(1, i);
  ASSERT_EQ(ibv_req_notify_cq(r.rcq.cq, 0), 0);
  ASSERT_EQ(post_recv(r, 7, {{rb.addr(), uint32_t(rb.len), rb.lkey()}}), 0);
  EXPECT_FALSE(readable(ch->fd, 20)) << "the channel is readable before any completion";
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(post_send(s, 1, {{sb.addr(), uint32_t(sb.len), sb.lkey()}}), 0);
  });
  struct ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  const auto t0 = Clock::now();
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
  sender.join();
  EXPECT_EQ(ev_cq, r.rcq.cq);
  EXPECT_GE(waited, 0.09) << "the event came before the message was sent";
  ibv_ack_cq_events(ev_cq, 1);
  auto wc = wait_wc(r.rcq.cq, 1, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS) << wc_str(wc[0]);
  EXPECT_EQ(wc[0].wr_id, 7u);
  EXPECT_EQ(wc[0].byte_len, sb.len);
  EXPECT_EQ(std::memcmp(sb.p, rb.p, sb.len), 0);
  auto swc = wait_wc(s.scq.cq, 1);
  ASSERT_EQ(swc.size(), 1u);
  EXPECT_EQ(swc[0].status, IBV_WC_SUCCESS);
  // Not armed again: no event for the next completion.
  ASSERT_EQ(post_recv(r, 8, {{rb.addr(), uint32_t(rb.len), rb.lkey()}}), 0);
  ASSERT_EQ(post_send(s, 2, {{sb.addr(), 64, sb.lkey()}}), 0);
  ASSERT_EQ(wait_wc(r.rcq.cq, 1).size(), 1u);
  int fl = fcntl(ch->fd, F_GETFL);
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
  EXPECT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
  EXPECT_EQ(errno, EAGAIN);
}

// poll() on the channel fd: not readable while armed and idle, readable once a completion lands;
// a non-blocking ibv_get_cq_event then returns it, and the next one fails with EAGAIN.
TEST_F(Threads, ChannelFdWorksWithPoll) {
  struct ibv_comp_channel* ch = channel(0);
  auto [s, r] = pair_with_send_channel(ch);
  Buf sb = buf(0, 256), rb = buf(1, 256);
  ASSERT_EQ(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK), 0);
  ASSERT_EQ(ibv_req_notify_cq(s.scq.cq, 0), 0);
  struct ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  EXPECT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(readable(ch->fd, 50));
  ASSERT_EQ(post_recv(r, 1, {{rb.addr(), uint32_t(rb.len), rb.lkey()}}), 0);
  ASSERT_EQ(post_send(s, 1, {{sb.addr(), uint32_t(sb.len), sb.lkey()}}), 0);
  ASSERT_TRUE(readable(ch->fd, 10000)) << "no interrupt for the send completion";
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  EXPECT_EQ(ev_cq, s.scq.cq);
  ibv_ack_cq_events(ev_cq, 1);
  EXPECT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(wait_wc(s.scq.cq, 1).size(), 1u);
}

// Arming a CQ that already holds an unpolled completion reports it at once (the NIC only
// interrupts for the next one; the driver looks).
TEST_F(Threads, ArmWithCompletionWaitingSignalsAtOnce) {
  struct ibv_comp_channel* ch = channel(0);
  auto [s, r] = pair_with_send_channel(ch);
  Buf sb = buf(0, 64), rb = buf(1, 64);
  ASSERT_EQ(post_recv(r, 1, {{rb.addr(), uint32_t(rb.len), rb.lkey()}}), 0);
  ASSERT_EQ(post_send(s, 1, {{sb.addr(), uint32_t(sb.len), sb.lkey()}}), 0);
  ASSERT_EQ(wait_wc(r.rcq.cq, 1).size(), 1u);
  // The send completion is in the CQ (it came before the receive's), unpolled.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(readable(ch->fd, 0));
  ASSERT_EQ(ibv_req_notify_cq(s.scq.cq, 0), 0);
  EXPECT_TRUE(readable(ch->fd, 0));
  struct ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  ibv_ack_cq_events(ev_cq, 1);
  EXPECT_EQ(wait_wc(s.scq.cq, 1).size(), 1u);
}

// A peer that never answers: the transport timer runs while the program sleeps in
// ibv_get_cq_event, and retry exhaustion wakes it with IBV_WC_RETRY_EXC_ERR no sooner than
// (retry_cnt + 1) timeouts of 4.096 us x 2^timeout.
TEST_F(Threads, SilentPeerRetryExceededWhileBlocked) {
  struct ibv_comp_channel* ch = channel(0);
  QpOpts so;
  so.scq = cq_on(0, ch);
  Qp s = qp(0, so);
  Qp r = qp(1);
  ConnOpts c;
  c.timeout = 10;    // 4.19 ms
  c.retry_cnt = 2;
  to_rts(s, r, c);   // r stays in INIT: it drops everything s sends
  Buf sb = buf(0, 64);
  ASSERT_EQ(ibv_req_notify_cq(s.scq.cq, 0), 0);
  const uint64_t t0 = tmnic_sim_now();
  const auto w0 = Clock::now();
  ASSERT_EQ(post_send(s, 9, {{sb.addr(), uint32_t(sb.len), sb.lkey()}}), 0);
  struct ibv_cq* ev_cq = nullptr;
  void* ev_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
  ibv_ack_cq_events(ev_cq, 1);
  const double wall = std::chrono::duration<double>(Clock::now() - w0).count();
  const double sim_us = double(tmnic_sim_now() - t0) / tmnic_sim_clk_mhz();
  auto wc = wait_wc(s.scq.cq, 1, 1);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_RETRY_EXC_ERR) << wc_str(wc[0]);
  EXPECT_EQ(wc[0].wr_id, 9u);
  const double min_us = 3 * 4.096 * 1024;
  EXPECT_GE(sim_us, min_us);
  EXPECT_LT(sim_us, 2 * min_us);
  // Idle simulated time follows the wall clock: the timeouts took real time too.
  EXPECT_GE(wall, 0.9 * min_us * 1e-6);
}

// A process holding open devices, QPs and armed CQs but sending nothing uses (almost) no CPU: the
// progress thread sleeps until woken.
TEST_F(Threads, IdleProcessUsesNoCpu) {
  struct ibv_comp_channel* ch = channel(1);
  QpOpts ro;
  ro.rcq = cq_on(1, ch);
  auto [s, r] = pair(1, {}, ro);
  Buf rb = buf(1, 64);
  ASSERT_EQ(post_recv(r, 1, {{rb.addr(), uint32_t(rb.len), rb.lkey()}}), 0);
  ASSERT_EQ(ibv_req_notify_cq(r.rcq.cq, 0), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let setup traffic settle
  const double c0 = cpu_seconds();
  const uint64_t k0 = tmnic_sim_thread_wakeups();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double used = cpu_seconds() - c0;
  const uint64_t wakeups = tmnic_sim_thread_wakeups() - k0;
  RecordProperty("idle_cpu_share", std::to_string(used / 2.0));
  EXPECT_LT(used / 2.0, 0.01) << "an idle process used " << used << " s of CPU in 2 s";
  EXPECT_LE(wakeups, 2u) << "the progress thread woke while nothing happened";
}

// Poster and poller threads on several QPs at once, against the progress thread: per QP pair a
// thread posts SENDs (a window of 8, sizes 1..4097, data per message) and another polls its send
// CQ; two threads poll one shared receive CQ, check every message's bytes and repost its buffer
// (concurrent ibv_post_recv on one QP). Every message arrives exactly once with its data.
TEST_F(Threads, PostersAndPollers) {
  constexpr int kPairs = 3, kMsgs = 120, kWin = 8, kRecv = 16;
  constexpr uint32_t kMax = 4097;
  Cq rcq = cq(1, 1023, false);
  struct Pair {
    Qp s, r;
    Buf sb, rb;
    std::atomic<int> inflight{0}, sent_ok{0};
    std::vector<std::atomic<int>> seen;
    Pair() : seen(kMsgs) {}
  };
  std::vector<std::unique_ptr<Pair>> p;
  for (int i = 0; i < kPairs; i++) {
    p.push_back(std::make_unique<Pair>());
    QpOpts ro;
    ro.rcq = rcq;
    ro.recv_wr = kRecv;
    auto qs = pair(1, {}, ro);
    p[i]->s = qs.first;
    p[i]->r = qs.second;
    p[i]->sb = buf(0, size_t(kMax) * kWin);
    p[i]->rb = buf(1, size_t(kMax) * kRecv);
    for (int k = 0; k < kRecv; k++)
      ASSERT_EQ(post_recv(p[i]->r, uint64_t(i) << 32 | uint64_t(k),
                          {{p[i]->rb.addr(size_t(k) * kMax), kMax, p[i]->rb.lkey()}}), 0);
  }
  auto size_of = [](int m) { return uint32_t(1 + (m * 997) % kMax); };
  std::atomic<int> received{0}, errors{0};
  std::vector<std::thread> th;
  for (int i = 0; i < kPairs; i++) {
    Pair& q = *p[i];
    th.emplace_back([&q, &errors, size_of] {   // poster
      for (int m = 0; m < kMsgs; m++) {
        const auto end = Clock::now() + std::chrono::seconds(30);
        while (q.inflight.load() >= kWin && Clock::now() < end) std::this_thread::yield();
        uint8_t* d = q.sb.p + size_t(m % kWin) * kMax;
        const uint32_t n = size_of(m);
        for (uint32_t b = 0; b < n; b++) d[b] = pattern(uint32_t(m), b);
        d[0] = uint8_t(m);   // the receiver finds the message number here
        q.inflight.fetch_add(1);
        if (post_send(q.s, uint64_t(m), {{q.sb.addr(size_t(m % kWin) * kMax), n, q.sb.lkey()}}) != 0) errors++;
      }
    });
    th.emplace_back([&q, &errors] {   // send-CQ poller
      int next = 0;
      const auto end = Clock::now() + std::chrono::seconds(60);
      while (next < kMsgs && Clock::now() < end) {
        struct ibv_wc wc[8];
        int n = ibv_poll_cq(q.s.scq.cq, 8, wc);
        for (int k = 0; k < n; k++) {
          if (wc[k].status != IBV_WC_SUCCESS || wc[k].wr_id != uint64_t(next)) errors++;
          next++;
          q.sent_ok.fetch_add(1);
          q.inflight.fetch_sub(1);
        }
      }
    });
  }
  for (int t = 0; t < 2; t++) {
    th.emplace_back([&] {   // receive-CQ pollers (two on one CQ)
      const auto end = Clock::now() + std::chrono::seconds(60);
      while (received.load() < kPairs * kMsgs && Clock::now() < end) {
        struct ibv_wc wc[4];
        int n = ibv_poll_cq(rcq.cq, 4, wc);
        for (int k = 0; k < n; k++) {
          const int i = int(wc[k].wr_id >> 32), slot = int(wc[k].wr_id & 0xFFFF);
          if (wc[k].status != IBV_WC_SUCCESS || i >= kPairs) {
            errors++;
            received++;
            continue;
          }
          Pair& q = *p[i];
          const uint8_t* d = q.rb.p + size_t(slot) * kMax;
          // Message m has number m mod 256 in byte 0 and is the only one of its QP with its size
          // among any 256 in a row; find m from both.
          int m = -1;
          for (int c = d[0]; c < kMsgs; c += 256)
            if (size_of(c) == wc[k].byte_len) m = c;
          bool ok = m >= 0 && wc[k].qp_num == q.r.num();
          for (uint32_t b = 1; ok && b < wc[k].byte_len; b++) ok = d[b] == pattern(uint32_t(m), b);
          if (!ok || q.seen[m].fetch_add(1) != 0) errors++;
          received++;
          if (post_recv(q.r, wc[k].wr_id, {{q.rb.addr(size_t(slot) * kMax), kMax, q.rb.lkey()}}) != 0) errors++;
        }
      }
    });
  }
  for (auto& t : th) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(received.load(), kPairs * kMsgs) << counters();
  for (int i = 0; i < kPairs; i++) {
    EXPECT_EQ(p[i]->sent_ok.load(), kMsgs) << "pair " << i;
    for (int m = 0; m < kMsgs; m++) EXPECT_EQ(p[i]->seen[m].load(), 1) << "pair " << i << " message " << m;
  }
}

// ibv_resize_cq while the NIC (its progress thread) writes completions into the CQ: a poster keeps 8
// SENDs in flight, a poller takes the receive completions and reposts, and a third thread resizes
// the receive CQ back and forth between 15 and 63 entries. Every message arrives once, in order:
// none is lost or duplicated by a switch of rings (a completion being written during the command
// lands in the old ring and is copied; the ones after it go to the new one).
TEST_F(Threads, ResizeCqUnderTraffic) {
  constexpr int kMsgs = 400, kWin = 8, kRecv = 8;
  Cq rcq = cq(1, 15, false);
  QpOpts ro;
  ro.rcq = rcq;
  ro.recv_wr = kRecv;
  auto [s, r] = pair(1, {}, ro);
  ASSERT_TRUE(s.qp && r.qp);
  Buf sb = buf(0, 64 * kWin), rb = buf(1, 64 * kRecv);
  for (int k = 0; k < kRecv; k++) ASSERT_EQ(post_recv(r, uint64_t(k), {sge(rb, 64 * k, 64)}), 0);
  std::atomic<int> inflight{0}, received{0}, errors{0}, resizes{0};
  std::atomic<bool> done{false};
  std::thread poster([&] {   // (it polls its send CQ itself: a window of kWin)
    auto reap = [&] {
      struct ibv_wc wc[8];
      const int n = ibv_poll_cq(s.scq.cq, 8, wc);
      for (int k = 0; k < n; k++) {
        if (wc[k].status != IBV_WC_SUCCESS) errors++;
        inflight.fetch_sub(1);
      }
    };
    for (int m = 0; m < kMsgs; m++) {
      const auto end = Clock::now() + std::chrono::seconds(30);
      while (inflight.load() >= kWin && Clock::now() < end) reap();
      sb.p[64 * (m % kWin)] = uint8_t(m);
      inflight.fetch_add(1);
      if (post_send(s, uint64_t(m), {sge(sb, 64 * (m % kWin), 1 + m % 60)}) != 0) errors++;
    }
    const auto end = Clock::now() + std::chrono::seconds(30);
    while (inflight.load() > 0 && Clock::now() < end) reap();
  });
  std::thread resizer([&] {
    for (int i = 0; !done.load(); i++) {
      if (ibv_resize_cq(rcq.cq, i % 2 ? 15 : 63) != 0) errors++;
      resizes++;
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  const auto end = Clock::now() + std::chrono::seconds(60);
  while (received.load() < kMsgs && Clock::now() < end) {
    struct ibv_wc wc[4];
    const int n = ibv_poll_cq(rcq.cq, 4, wc);
    for (int k = 0; k < n; k++) {
      const int m = received.load();
      const uint8_t* d = rb.p + 64 * wc[k].wr_id;
      if (wc[k].status != IBV_WC_SUCCESS || wc[k].byte_len != uint32_t(1 + m % 60) || d[0] != uint8_t(m)) errors++;
      received++;
      if (post_recv(r, wc[k].wr_id, {sge(rb, 64 * wc[k].wr_id, 64)}) != 0) errors++;
    }
  }
  done = true;
  poster.join();
  resizer.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(received.load(), kMsgs) << counters();
  EXPECT_GT(resizes.load(), 10);
  EXPECT_EQ(counter(1, tmnic::hwif::stat::CQ_OVERFLOW), 0u);
}

}  // namespace
