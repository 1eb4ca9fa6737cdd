// tmnic_system_wire: a small verbs program for the system tests that need a process of their own
// (the simulated world reads TMNIC_PCAP / TMNIC_SIM_* once, at the first ibv_get_device_list).
// Runs the traffic of wire_traffic.hpp between tmnic0 and tmnic1, checks every byte, and prints
// "key value" lines: simulated cycles, counters, QP numbers.
//
//   tmnic_system_wire [--pcap FILE] [--corrupt]
//     --pcap FILE  capture the wire (sets TMNIC_PCAP before the world exists)
//     --corrupt    at the end, send one more message whose frame gets a corrupted ICRC (it is
//                  dropped; nothing completes), for negative checks of the capture checkers
// Exit status 0 when everything completed as expected.
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim_control.h"
#include "tmnic/hwif.h"
#include "wire_traffic.hpp"

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tmnic_system_wire: %s (errno %d)\n", what, errno);
  std::exit(1);
}

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  uint8_t* buf = nullptr;  // [0, 64K) send, [64K, 128K) receive
  ibv_gid gid{};
};
constexpr size_t kBuf = 128 * 1024, kRecvOff = 64 * 1024;

uint32_t stat(int nic, uint32_t i) { return tmnic_sim_read_reg(nic, tmnic::hwif::reg::STATS0 + 4 * i); }

void modify(ibv_qp* qp, ibv_qp_attr* a, int mask, const char* what) {
  if (ibv_modify_qp(qp, a, mask)) die(what);
}

void connect(Side& s, const Side& peer, uint32_t sq_psn, uint32_t rq_psn, int d) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  modify(s.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, "INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = peer.qp->qp_num;
  a.rq_psn = rq_psn;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = peer.gid;
  a.ah_attr.grh.hop_limit = wire::kHopLimit[d];
  a.ah_attr.grh.traffic_class = wire::kTclass[d];
  a.ah_attr.port_num = 1;
  modify(s.qp, &a,
         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
             IBV_QP_MIN_RNR_TIMER,
         "RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = sq_psn;
  modify(s.qp, &a,
         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
         "RTS");
}

ibv_wc wait_one(Side& s, const char* what) {
  ibv_wc wc;
  for (long spin = 0; spin < 5'000'000; spin++) {
    int n = ibv_poll_cq(s.cq, 1, &wc);
    if (n < 0) die("ibv_poll_cq");
    if (n == 1) {
      if (wc.status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "%s: completion status %s\n", what, ibv_wc_status_str(wc.status));
        std::exit(1);
      }
      return wc;
    }
  }
  std::fprintf(stderr, "%s: no completion\n", what);
  std::exit(1);
}

void post_recv(Side& s, uint64_t id) {
  ibv_sge g = {uint64_t(uintptr_t(s.buf + kRecvOff)), uint32_t(kBuf - kRecvOff), s.mr->lkey};
  ibv_recv_wr wr{}, *bad;
  wr.wr_id = id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  if (ibv_post_recv(s.qp, &wr, &bad)) die("ibv_post_recv");
}

void post_send(Side& s, uint64_t id, uint32_t len, bool imm, bool inl, bool se) {
  ibv_sge g = {uint64_t(uintptr_t(s.buf)), len, s.mr->lkey};
  ibv_send_wr wr{}, *bad;
  wr.wr_id = id;
  wr.sg_list = &g;
  wr.num_sge = 1;
  wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0) | (se ? IBV_SEND_SOLICITED : 0);
  wr.imm_data = htonl(wire::kImmBase + uint32_t(id));
  if (ibv_post_send(s.qp, &wr, &bad)) die("ibv_post_send");
}

void run_for(uint64_t cycles) {
  uint64_t end = tmnic_sim_now() + cycles;
  while (tmnic_sim_now() < end) {
    uint64_t t = tmnic_sim_now();
    tmnic_sim_run(end - t);
    if (tmnic_sim_now() == t) break;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool corrupt = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--pcap" && i + 1 < argc) {
      setenv("TMNIC_PCAP", argv[++i], 1);
    } else if (a == "--corrupt") {
      corrupt = true;
    } else {
      std::fprintf(stderr, "usage: %s [--pcap FILE] [--corrupt]\n", argv[0]);
      return 2;
    }
  }
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list || n < 2) die("need two devices");
  Side side[2];
  for (int d = 0; d < 2; d++) {
    Side& s = side[d];
    std::string want = "tmnic" + std::to_string(d);
    for (int i = 0; i < n; i++)
      if (want == ibv_get_device_name(list[i])) s.ctx = ibv_open_device(list[i]);
    if (!s.ctx) die("ibv_open_device");
    if (!(s.pd = ibv_alloc_pd(s.ctx))) die("ibv_alloc_pd");
    s.buf = static_cast<uint8_t*>(std::aligned_alloc(4096, kBuf));
    std::memset(s.buf, 0, kBuf);
    if (!(s.mr = ibv_reg_mr(s.pd, s.buf, kBuf, IBV_ACCESS_LOCAL_WRITE))) die("ibv_reg_mr");
    if (!(s.cq = ibv_create_cq(s.ctx, 63, nullptr, nullptr, 0))) die("ibv_create_cq");
    ibv_qp_init_attr qa{};
    qa.send_cq = qa.recv_cq = s.cq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
    qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
    if (!(s.qp = ibv_create_qp(s.pd, &qa))) die("ibv_create_qp");
    if (ibv_query_gid(s.ctx, 1, 0, &s.gid)) die("ibv_query_gid");
  }
  connect(side[0], side[1], wire::kPsn[0], wire::kPsn[1], 0);
  connect(side[1], side[0], wire::kPsn[1], wire::kPsn[0], 1);

  for (int m = 0; m < wire::kNumMsgs; m++) {
    const wire::Msg& msg = wire::kMsgs[m];
    Side& s = side[msg.dir];
    Side& r = side[!msg.dir];
    for (uint32_t i = 0; i < msg.len; i++) s.buf[i] = uint8_t(m * 37 + i * 13 + (i >> 8));
    if (m == 0) {
      post_send(s, m, msg.len, msg.imm, msg.inl, msg.se);  // no receive yet: RNR NAK
      run_for(uint64_t(30 * tmnic_sim_clk_mhz()));
      post_recv(r, m);
    } else {
      post_recv(r, m);
      post_send(s, m, msg.len, msg.imm, msg.inl, msg.se);
    }
    ibv_wc sw = wait_one(s, "send");
    ibv_wc rw = wait_one(r, "receive");
    if (sw.wr_id != uint64_t(m) || rw.wr_id != uint64_t(m) || rw.byte_len != msg.len ||
        std::memcmp(s.buf, r.buf + kRecvOff, msg.len) != 0 ||
        (msg.imm && (!(rw.wc_flags & IBV_WC_WITH_IMM) || ntohl(rw.imm_data) != wire::kImmBase + uint32_t(m)))) {
      std::fprintf(stderr, "message %d: wrong completion or data\n", m);
      return 1;
    }
  }
  int status = 0;
  if (corrupt) {
    const uint32_t drop0 = stat(1, tmnic::hwif::stat::RX_DROP_ICRC);
    post_recv(side[1], 99);
    tmnic_sim_corrupt_tx(0, 1);
    post_send(side[0], 99, 200, false, false, false);
    run_for(uint64_t(100 * tmnic_sim_clk_mhz()));
    ibv_wc wc;
    if (ibv_poll_cq(side[1].cq, 1, &wc) != 0 || ibv_poll_cq(side[0].cq, 1, &wc) != 0) {
      std::fprintf(stderr, "the corrupted message completed\n");
      status = 1;
    }
    if (stat(1, tmnic::hwif::stat::RX_DROP_ICRC) != drop0 + 1) {
      std::fprintf(stderr, "the corrupted frame was not counted\n");
      status = 1;
    }
  }
  std::printf("cycles %" PRIu64 "\n", tmnic_sim_now());
  std::printf("evaluated %" PRIu64 "\n", tmnic_sim_cycles_evaluated());
  for (int d = 0; d < 2; d++) {
    std::printf("qpn%d %u\n", d, side[d].qp->qp_num);
    for (uint32_t i = 0; i < tmnic::hwif::stat::COUNT; i++)
      std::printf("%s%d %u\n", tmnic::hwif::stat::name(i), d, stat(d, i));
  }
  // Orderly teardown (the pcap is flushed when the world goes away at exit).
  for (Side& s : side) {
    if (ibv_destroy_qp(s.qp) || ibv_destroy_cq(s.cq) || ibv_dereg_mr(s.mr) || ibv_dealloc_pd(s.pd) ||
        ibv_close_device(s.ctx))
      die("teardown");
    std::free(s.buf);
  }
  ibv_free_device_list(list);
  return status;
}
