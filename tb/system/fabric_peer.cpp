// tmnic_fabric_peer: a verbs program for the UDP fabric tests (TMNIC_FABRIC=udp; test_fabric.cpp).
// Each process has one NIC on the fabric, so everything here happens in processes of their own.
//
//   tmnic_fabric_peer addr [--at REALTIME_NS] [--hold-ms N]
//     waits until CLOCK_REALTIME reaches REALTIME_NS (processes started together open their
//     devices at the same moment), opens tmnic0, prints "addr <IPv4 of its GID>", then keeps the
//     device (and so the address) for N ms (default 0). Exit 2 when there is no device.
//   tmnic_fabric_peer pair [--iters K] [--size S] [--corrupt N]
//     forks; parent and child each open their own NIC, exchange QP numbers and GIDs over a
//     socketpair and run K round trips of S-byte SENDs (client -> server -> client), every byte
//     checked. --corrupt N: the client's NIC corrupts the ICRC-covered part of its first N frames,
//     which the server's NIC must drop (and the client retransmit). Both print "key value" lines
//     prefixed by their role: rx_drop_icrc, rx_drop_hdr, cycles, evaluated, wall_us.
//   tmnic_fabric_peer self [--iters K]
//     one process, two QPs of its NIC connected to each other (the NIC's own address): K checked
//     4097-byte SENDs that the NIC loops back inside.
//   tmnic_fabric_peer idle [--ms N]
//     opens the device, creates a QP in RTS towards itself with a receive posted and an armed CQ on
//     a completion channel, then does nothing for N ms (default 2000) and prints "idle_cpu_s X",
//     "idle_wall_s Y" and "threaded T": the CPU the whole process used meanwhile.
// Exit status 0 when everything completed as expected.
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "sim_control.h"
#include "tmnic/hwif.h"

namespace {

const char* g_role = "peer";

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tmnic_fabric_peer %s: %s (errno %d)\n", g_role, what, errno);
  std::exit(1);
}

uint32_t stat(uint32_t i) { return tmnic_sim_read_reg(0, tmnic::hwif::reg::STATS0 + 4 * i); }

ibv_context* open_nic() {
  int n = 0;
  ibv_device** l = ibv_get_device_list(&n);
  if (!l || n < 1) {
    std::printf("no device\n");
    std::exit(2);
  }
  ibv_context* ctx = ibv_open_device(l[0]);
  ibv_free_device_list(l);
  if (!ctx) die("ibv_open_device");
  return ctx;
}

std::string gid_ipv4(ibv_context* ctx, ibv_gid* gid) {
  if (ibv_query_gid(ctx, 1, 0, gid)) die("ibv_query_gid");
  char b[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, gid->raw + 12, b, sizeof b);
  return b;
}

int addr_main(int argc, char** argv) {
  int64_t at = 0, hold_ms = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--at")) at = std::strtoll(argv[i + 1], nullptr, 0);
    if (!std::strcmp(argv[i], "--hold-ms")) hold_ms = std::strtoll(argv[i + 1], nullptr, 0);
  }
  if (at > 0) {
    timespec ts{time_t(at / 1000000000), long(at % 1000000000)};
    while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
  }
  ibv_context* ctx = open_nic();
  ibv_gid gid;
  std::printf("addr %s\n", gid_ipv4(ctx, &gid).c_str());
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  ibv_close_device(ctx);
  return 0;
}

struct Info {
  uint32_t qpn, psn;
  ibv_gid gid;
};

// INIT -> RTR -> RTS towards `peer`.
void connect_qp(ibv_qp* qp, const Info& me, const Info& peer) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    die("RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = me.psn;
  a.timeout = 12;   // 16.8 ms of (idle, wall-clock-paced) simulated time
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_MAX_QP_RD_ATOMIC))
    die("RTS");
}

// The resources of one side: the NIC, a PD, a CQ, send and receive buffers of `size` bytes with
// their MRs, and the attributes of an RC QP on them.
struct Res {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  std::vector<uint8_t> sbuf, rbuf;
  ibv_mr* smr = nullptr;
  ibv_mr* rmr = nullptr;
  ibv_qp_init_attr qa{};
};
void make_res(Res& r, size_t size) {
  r.ctx = open_nic();
  r.pd = ibv_alloc_pd(r.ctx);
  r.cq = ibv_create_cq(r.ctx, 16, nullptr, nullptr, 0);
  if (!r.pd || !r.cq) die("pd/cq");
  r.sbuf.resize(size);
  r.rbuf.resize(size);
  r.smr = ibv_reg_mr(r.pd, r.sbuf.data(), size, IBV_ACCESS_LOCAL_WRITE);
  r.rmr = ibv_reg_mr(r.pd, r.rbuf.data(), size, IBV_ACCESS_LOCAL_WRITE);
  if (!r.smr || !r.rmr) die("ibv_reg_mr");
  r.qa.send_cq = r.qa.recv_cq = r.cq;
  r.qa.qp_type = IBV_QPT_RC;
  r.qa.cap.max_send_wr = r.qa.cap.max_recv_wr = 4;
  r.qa.cap.max_send_sge = r.qa.cap.max_recv_sge = 1;
}

int pair_main(int argc, char** argv) {
  int iters = 20, corrupt = 0;
  size_t size = 4097;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--size")) size = std::strtoul(argv[i + 1], nullptr, 0);
    if (!std::strcmp(argv[i], "--corrupt")) corrupt = std::atoi(argv[i + 1]);
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) die("socketpair");
  std::fflush(stdout);
  pid_t child = fork();   // before any verbs call: each process gets its own NIC
  if (child < 0) die("fork");
  const bool client = child == 0;
  g_role = client ? "client" : "server";
  int fd = sv[client ? 1 : 0];
  close(sv[client ? 0 : 1]);

  Res res;
  make_res(res, size);
  auto& [ctx, pd, cq, sbuf, rbuf, smr, rmr, qa] = res;
  ibv_qp* qp = ibv_create_qp(pd, &qa);
  if (!qp) die("ibv_create_qp");

  Info me{qp->qp_num, client ? 0x1000u : 0x2000u, {}}, peer{};
  const std::string my_ip = gid_ipv4(ctx, &me.gid);
  if (write(fd, &me, sizeof me) != ssize_t(sizeof me) || read(fd, &peer, sizeof peer) != ssize_t(sizeof peer))
    die("exchange");

  connect_qp(qp, me, peer);

  auto post_recv = [&] {
    ibv_sge s{uintptr_t(rbuf.data()), uint32_t(size), rmr->lkey};
    ibv_recv_wr w{}, *bad;
    w.sg_list = &s;
    w.num_sge = 1;
    if (ibv_post_recv(qp, &w, &bad)) die("ibv_post_recv");
  };
  auto send = [&] {
    ibv_sge s{uintptr_t(sbuf.data()), uint32_t(size), smr->lkey};
    ibv_send_wr w{}, *bad;
    w.sg_list = &s;
    w.num_sge = 1;
    w.opcode = IBV_WR_SEND;
    w.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_send(qp, &w, &bad)) die("ibv_post_send");
  };
  // Waits for one send and one receive completion.
  auto wait_both = [&](int it) {
    int got_send = 0, got_recv = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (!got_send || !got_recv) {
      ibv_wc wc[2];
      int n = ibv_poll_cq(cq, 2, wc);
      if (n < 0) die("ibv_poll_cq");
      for (int k = 0; k < n; k++) {
        if (wc[k].status != IBV_WC_SUCCESS) {
          std::fprintf(stderr, "tmnic_fabric_peer %s: iteration %d: %s\n", g_role, it, ibv_wc_status_str(wc[k].status));
          std::exit(1);
        }
        (wc[k].opcode == IBV_WC_RECV ? got_recv : got_send)++;
      }
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20)) die("no completion for 20 s");
    }
  };
  auto fill = [&](int it) {
    for (size_t k = 0; k < size; k++) sbuf[k] = uint8_t(k * 7 + it * 13 + (client ? 1 : 0));
  };
  auto check = [&](int it, bool from_client) {
    for (size_t k = 0; k < size; k++)
      if (rbuf[k] != uint8_t(k * 7 + it * 13 + (from_client ? 1 : 0))) {
        std::fprintf(stderr, "tmnic_fabric_peer %s: iteration %d: byte %zu wrong\n", g_role, it, k);
        std::exit(1);
      }
  };

  post_recv();
  char go = 1;   // both receive queues are posted before the first SEND
  if (write(fd, &go, 1) != 1 || read(fd, &go, 1) != 1) die("sync");
  if (client && corrupt) tmnic_sim_corrupt_tx(0, corrupt);
  auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = tmnic_sim_now(), e0 = tmnic_sim_cycles_evaluated();
  for (int it = 0; it < iters; it++) {
    if (client) {
      fill(it);
      send();
      wait_both(it);
      check(it, false);
    } else {
      // Receive, then answer; the next receive is posted before the answer goes out.
      for (;;) {
        ibv_wc wc;
        int n = ibv_poll_cq(cq, 1, &wc);
        if (n < 0) die("ibv_poll_cq");
        if (n == 1) {
          if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV) die("receive completion");
          break;
        }
        if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(30)) die("no message for 30 s");
      }
      check(it, true);
      post_recv();
      fill(it);
      send();
      for (;;) {
        ibv_wc wc;
        int n = ibv_poll_cq(cq, 1, &wc);
        if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) die("send completion");
        if (n == 1) break;
      }
      continue;
    }
    post_recv();
  }
  const double wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  // Let the last ACK reach the client before the statistics and the exit.
  if (write(fd, &go, 1) != 1 || read(fd, &go, 1) != 1) die("sync");
  std::printf("%s addr %s\n%s rx_drop_icrc %u\n%s rx_drop_hdr %u\n%s cycles %" PRIu64 "\n%s evaluated %" PRIu64
              "\n%s wall_us %.0f\n",
              g_role, my_ip.c_str(), g_role, stat(tmnic::hwif::stat::RX_DROP_ICRC), g_role,
              stat(tmnic::hwif::stat::RX_DROP_HDR), g_role, tmnic_sim_now() - c0, g_role,
              tmnic_sim_cycles_evaluated() - e0, g_role, wall_us);
  std::fflush(stdout);
  ibv_destroy_qp(qp);
  ibv_dereg_mr(smr);
  ibv_dereg_mr(rmr);
  ibv_destroy_cq(cq);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  if (client) std::_Exit(0);
  int st = 0;
  if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    std::fprintf(stderr, "tmnic_fabric_peer: the client failed\n");
    return 1;
  }
  return 0;
}

// Two QPs of the one NIC connected to each other: the frames go to the NIC's own address, which the
// NIC loops back inside (nothing reaches the fabric: a TMNIC_PCAP of this process stays empty).
int self_main(int argc, char** argv) {
  int iters = 10;
  const size_t size = 4097;
  for (int i = 2; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
  g_role = "self";
  Res res;
  make_res(res, size);
  auto& [ctx, pd, cq, sbuf, rbuf, smr, rmr, qa] = res;
  ibv_qp* qa_ = ibv_create_qp(pd, &qa);
  ibv_qp* qb = ibv_create_qp(pd, &qa);
  if (!qa_ || !qb) die("ibv_create_qp");
  Info a{qa_->qp_num, 0x100, {}}, b{qb->qp_num, 0x200, {}};
  std::printf("self addr %s\n", gid_ipv4(ctx, &a.gid).c_str());
  b.gid = a.gid;
  connect_qp(qa_, a, b);
  connect_qp(qb, b, a);
  for (int it = 0; it < iters; it++) {
    for (size_t k = 0; k < size; k++) sbuf[k] = uint8_t(k * 3 + it);
    ibv_sge rs{uintptr_t(rbuf.data()), uint32_t(size), rmr->lkey}, ss{uintptr_t(sbuf.data()), uint32_t(size), smr->lkey};
    ibv_recv_wr rw{}, *rbad;
    rw.sg_list = &rs;
    rw.num_sge = 1;
    ibv_send_wr sw{}, *sbad;
    sw.sg_list = &ss;
    sw.num_sge = 1;
    sw.opcode = IBV_WR_SEND;
    sw.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_recv(qb, &rw, &rbad) || ibv_post_send(qa_, &sw, &sbad)) die("post");
    int got = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (got < 2) {
      ibv_wc wc;
      int n = ibv_poll_cq(cq, 1, &wc);
      if (n < 0 || (n == 1 && wc.status != IBV_WC_SUCCESS)) die("completion");
      got += n;
      if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20)) die("no completion for 20 s");
    }
    for (size_t k = 0; k < size; k++)
      if (rbuf[k] != uint8_t(k * 3 + it)) die("data");
  }
  std::printf("self rx_drop_icrc %u\n", stat(tmnic::hwif::stat::RX_DROP_ICRC));
  return 0;
}

}  // namespace

int idle_main(int argc, char** argv) {
  int64_t ms = 2000;
  for (int i = 2; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--ms")) ms = std::strtoll(argv[i + 1], nullptr, 0);
  g_role = "idle";
  ibv_context* ctx = open_nic();
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  if (!pd || !ch) die("pd/channel");
  ibv_cq* cq = ibv_create_cq(ctx, 16, nullptr, ch, 0);
  if (!cq) die("ibv_create_cq");
  ibv_qp_init_attr qa{};
  qa.send_cq = qa.recv_cq = cq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = qa.cap.max_recv_wr = 4;
  qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
  ibv_qp* qp = ibv_create_qp(pd, &qa);
  if (!qp) die("ibv_create_qp");
  Info me{qp->qp_num, 1, {}};
  gid_ipv4(ctx, &me.gid);
  connect_qp(qp, me, me);
  std::vector<uint8_t> b(64);
  ibv_mr* mr = ibv_reg_mr(pd, b.data(), b.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) die("ibv_reg_mr");
  ibv_sge sge{uint64_t(uintptr_t(b.data())), 64, mr->lkey};
  ibv_recv_wr rw{};
  rw.sg_list = &sge;
  rw.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (ibv_post_recv(qp, &rw, &bad) || ibv_req_notify_cq(cq, 0)) die("post_recv/req_notify");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));   // setup settles
  auto cpu = [] {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  };
  const double c0 = cpu();
  const auto w0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  const double used = cpu() - c0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  std::printf("idle idle_cpu_s %.6f\nidle idle_wall_s %.6f\nidle threaded %d\n", used, wall, tmnic_sim_threaded());
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
  ibv_destroy_comp_channel(ch);
  ibv_dealloc_pd(pd);
  ibv_close_device(ctx);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && !std::strcmp(argv[1], "idle")) return idle_main(argc, argv);
  if (argc >= 2 && !std::strcmp(argv[1], "addr")) return addr_main(argc, argv);
  if (argc >= 2 && !std::strcmp(argv[1], "pair")) return pair_main(argc, argv);
  if (argc >= 2 && !std::strcmp(argv[1], "self")) return self_main(argc, argv);
  std::fprintf(stderr, "usage: tmnic_fabric_peer addr [--at NS] [--hold-ms N] | pair [--iters K] [--size S] [--corrupt N] | self [--iters K] | idle [--ms N]\n");
  return 2;
}
