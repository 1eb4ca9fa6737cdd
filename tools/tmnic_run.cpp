// tmnic main job: two simulated NICs exchange RC SENDs through the standard verbs API. NIC 1
// receives through one SRQ shared by several QPs; NIC 0 sends random-size messages round-robin
// over its QPs. Every byte is checked. Prints a summary: messages, bytes, simulated one-way latency
// percentiles (doorbell to receive completion, ns at the NIC clock), simulated bandwidth, and the
// simulator's speed.
//
//   tmnic_run [--messages N] [--qps Q] [--min-size B] [--max-size B] [--window W] [--seed S]
//             [--mtu 256|512|1024|2048|4096] [--pcap FILE] [--waves PREFIX] [--quiet]
#include <infiniband/verbs.h>

#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include "sim_control.h"
#include "tmnic/hwif.h"

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "tmnic_run: %s (errno %d: %s)\n", what, errno, std::strerror(errno));
  std::exit(1);
}

struct Opts {
  int messages = 2000, qps = 4, window = 4, mtu = 1024;
  uint32_t min_size = 1, max_size = 16384;
  uint64_t seed = 1;
  bool quiet = false;
};

ibv_mtu mtu_enum(int b) {
  switch (b) {
    case 256: return IBV_MTU_256;
    case 512: return IBV_MTU_512;
    case 2048: return IBV_MTU_2048;
    case 4096: return IBV_MTU_4096;
    default: return IBV_MTU_1024;
  }
}

// Byte i of message m: a pattern that differs per message and per position.
inline uint8_t pattern(uint32_t m, uint32_t i) { return uint8_t((m * 2654435761u) >> 24) ^ uint8_t(i * 131 + (i >> 8)); }

struct Side {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_srq* srq = nullptr;
  ibv_mr* mr = nullptr;
  uint8_t* buf = nullptr;
  size_t len = 0;
  std::vector<ibv_qp*> qps;
  ibv_gid gid{};
};

void open_side(Side& s, ibv_device* dev, size_t buf_len, int nqp, bool with_srq, int depth) {
  s.ctx = ibv_open_device(dev);
  if (!s.ctx) die("ibv_open_device");
  s.pd = ibv_alloc_pd(s.ctx);
  if (!s.pd) die("ibv_alloc_pd");
  s.len = buf_len;
  s.buf = static_cast<uint8_t*>(std::aligned_alloc(4096, buf_len));
  s.mr = ibv_reg_mr(s.pd, s.buf, buf_len, IBV_ACCESS_LOCAL_WRITE);
  if (!s.mr) die("ibv_reg_mr");
  s.cq = ibv_create_cq(s.ctx, 4 * depth + 64, nullptr, nullptr, 0);
  if (!s.cq) die("ibv_create_cq");
  if (with_srq) {
    ibv_srq_init_attr sa{};
    sa.attr.max_wr = depth;
    sa.attr.max_sge = 1;
    s.srq = ibv_create_srq(s.pd, &sa);
    if (!s.srq) die("ibv_create_srq");
  }
  for (int i = 0; i < nqp; i++) {
    ibv_qp_init_attr qa{};
    qa.send_cq = qa.recv_cq = s.cq;
    qa.srq = s.srq;
    qa.qp_type = IBV_QPT_RC;
    qa.cap.max_send_wr = depth;
    qa.cap.max_send_sge = 1;
    qa.cap.max_recv_wr = with_srq ? 0 : 1;
    qa.cap.max_recv_sge = 1;
    ibv_qp* qp = ibv_create_qp(s.pd, &qa);
    if (!qp) die("ibv_create_qp");
    s.qps.push_back(qp);
  }
  if (ibv_query_gid(s.ctx, 1, 0, &s.gid)) die("ibv_query_gid");
}

void connect(ibv_qp* qp, uint32_t dest_qpn, const ibv_gid& dgid, ibv_mtu mtu) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT");
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = mtu;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = 1000;
  a.max_dest_rd_atomic = 0;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = dgid;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("RTR");
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.sq_psn = 1000;
  a.max_rd_atomic = 0;
  if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                IBV_QP_MAX_QP_RD_ATOMIC)) die("RTS");
}

double pct(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, size_t(p / 100.0 * (v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { if (i + 1 >= argc) { std::fprintf(stderr, "missing value for %s\n", a.c_str()); std::exit(2); } return argv[++i]; };
    if (a == "--messages") o.messages = std::atoi(next());
    else if (a == "--qps") o.qps = std::atoi(next());
    else if (a == "--window") o.window = std::atoi(next());
    else if (a == "--min-size") o.min_size = uint32_t(std::strtoul(next(), nullptr, 0));
    else if (a == "--max-size") o.max_size = uint32_t(std::strtoul(next(), nullptr, 0));
    else if (a == "--seed") o.seed = std::strtoull(next(), nullptr, 0);
    else if (a == "--mtu") o.mtu = std::atoi(next());
    else if (a == "--pcap") setenv("TMNIC_PCAP", next(), 1);
    else if (a == "--waves") setenv("TMNIC_WAVES", next(), 1);
    else if (a == "--quiet") o.quiet = true;
    else { std::fprintf(stderr, "usage: see the comment at the top of tools/tmnic_run.cpp\n"); return 2; }
  }
  if (o.max_size < o.min_size || o.max_size > (1u << 20) || o.qps < 1 || o.qps > 32 || o.window < 1) {
    std::fprintf(stderr, "tmnic_run: bad options\n");
    return 2;
  }
  const int depth = std::max(o.window * o.qps, 64);
  int ndev = 0;
  ibv_device** devs = ibv_get_device_list(&ndev);
  if (!devs || ndev < 2) die("need two devices (TMNIC_SIM_NICS >= 2)");
  Side tx, rx;
  open_side(tx, devs[0], size_t(depth) * o.max_size, o.qps, false, depth);
  open_side(rx, devs[1], size_t(depth) * o.max_size, o.qps, true, depth);
  ibv_free_device_list(devs);
  for (int i = 0; i < o.qps; i++) {
    connect(tx.qps[i], rx.qps[i]->qp_num, rx.gid, mtu_enum(o.mtu));
    connect(rx.qps[i], tx.qps[i]->qp_num, tx.gid, mtu_enum(o.mtu));
  }
  // Receive buffers: slot k of the receive region, reposted after each completion.
  auto post_recv = [&](uint32_t slot) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(rx.buf) + uint64_t(slot) * o.max_size, o.max_size, rx.mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_srq_recv(rx.srq, &wr, &bad)) die("ibv_post_srq_recv");
  };
  for (int k = 0; k < depth; k++) post_recv(uint32_t(k));

  std::mt19937_64 rng(o.seed);
  std::vector<uint32_t> size_of(o.messages);
  for (auto& s : size_of) s = o.min_size + uint32_t(rng() % (uint64_t(o.max_size) - o.min_size + 1));
  std::vector<uint64_t> posted_at(o.messages, 0);
  std::vector<double> lat_ns;
  const double ns_per_cycle = 1000.0 / tmnic_sim_clk_mhz();
  uint64_t t_start = tmnic_sim_now(), eval0 = tmnic_sim_cycles_evaluated(), bytes = 0;
  auto wall0 = std::chrono::steady_clock::now();
  auto last_print = wall0;
  int next = 0, recvd = 0, sent_done = 0, errors = 0;
  std::vector<int> inflight(o.qps, 0);     // messages posted on QP q and not yet received
  std::vector<uint8_t> seen(o.messages, 0);
  const bool tty = isatty(2);
  ibv_wc wc[32];
  auto on_recv = [&](const ibv_wc& w) {
    uint32_t msg = ntohl(w.imm_data);
    if (w.status != IBV_WC_SUCCESS || !(w.wc_flags & IBV_WC_WITH_IMM) || msg >= uint32_t(o.messages) || seen[msg]) {
      std::fprintf(stderr, "bad receive completion: %s, message %u\n", ibv_wc_status_str(w.status), msg);
      errors++;
      return;
    }
    seen[msg] = 1;
    const uint8_t* d = rx.buf + w.wr_id * o.max_size;
    if (w.byte_len != size_of[msg]) {
      std::fprintf(stderr, "message %u: %u bytes, expected %u\n", msg, w.byte_len, size_of[msg]);
      errors++;
    }
    for (uint32_t i = 0; i < w.byte_len && errors == 0; i++)
      if (d[i] != pattern(msg, i)) { std::fprintf(stderr, "message %u byte %u differs\n", msg, i); errors++; }
    if (w.qp_num != rx.qps[msg % o.qps]->qp_num) { std::fprintf(stderr, "message %u on the wrong QP\n", msg); errors++; }
    lat_ns.push_back(double(tmnic_sim_now() - posted_at[msg]) * ns_per_cycle);
    bytes += w.byte_len;
    inflight[msg % o.qps]--;
    recvd++;
    post_recv(uint32_t(w.wr_id));
  };
  while (recvd < o.messages && errors == 0) {
    // Post: one SIGNALED SEND_WITH_IMM per message, imm = message number, from send slot m % depth
    // (a slot is reused only after its send completion, so at most `depth` are in flight).
    while (next < o.messages && next - sent_done < depth && inflight[next % o.qps] < o.window) {
      int q = next % o.qps;
      uint32_t len = size_of[next];
      uint8_t* src = tx.buf + size_t(next % depth) * o.max_size;
      for (uint32_t i = 0; i < len; i++) src[i] = pattern(uint32_t(next), i);
      ibv_sge sge{reinterpret_cast<uintptr_t>(src), len, tx.mr->lkey};
      ibv_send_wr wr{};
      wr.wr_id = uint64_t(next);
      wr.sg_list = &sge;
      wr.num_sge = 1;
      wr.opcode = IBV_WR_SEND_WITH_IMM;
      wr.send_flags = IBV_SEND_SIGNALED;
      wr.imm_data = htonl(uint32_t(next));
      ibv_send_wr* bad = nullptr;
      posted_at[next] = tmnic_sim_now();
      if (ibv_post_send(tx.qps[q], &wr, &bad)) die("ibv_post_send");
      inflight[q]++;
      next++;
    }
    int n = ibv_poll_cq(tx.cq, 32, wc);
    if (n < 0) die("ibv_poll_cq");
    for (int k = 0; k < n; k++) {
      if (wc[k].status != IBV_WC_SUCCESS) {
        std::fprintf(stderr, "send %" PRIu64 ": %s\n", wc[k].wr_id, ibv_wc_status_str(wc[k].status));
        errors++;
      }
      sent_done++;
    }
    int m = ibv_poll_cq(rx.cq, 32, wc);
    if (m < 0) die("ibv_poll_cq");
    for (int k = 0; k < m; k++) on_recv(wc[k]);
    auto now = std::chrono::steady_clock::now();
    if (!o.quiet && tty && std::chrono::duration<double>(now - last_print).count() > 0.5) {
      last_print = now;
      std::fprintf(stderr, "\r  %d/%d messages, simulated %.1f us   ", recvd, o.messages,
                   double(tmnic_sim_now() - t_start) * ns_per_cycle / 1000.0);
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  uint64_t cycles = tmnic_sim_now() - t_start, evaluated = tmnic_sim_cycles_evaluated() - eval0;
  if (!o.quiet && tty) std::fprintf(stderr, "\r%60s\r", "");
  double sim_ns = double(cycles) * ns_per_cycle;
  std::printf("tmnic main job: 2 simulated NICs, %d QPs -> 1 SRQ, path MTU %d, seed %" PRIu64 "\n", o.qps, o.mtu, o.seed);
  std::printf("  messages        %d received of %d (every byte checked), %d errors\n", recvd, o.messages, errors);
  std::printf("  bytes           %" PRIu64 " (sizes %u..%u)\n", bytes, o.min_size, o.max_size);
  std::printf("  simulated time  %.1f us (%" PRIu64 " cycles at %.0f MHz)\n", sim_ns / 1000.0, cycles, tmnic_sim_clk_mhz());
  std::printf("  latency (ns)    p50 %.0f  p90 %.0f  p99 %.0f  max %.0f   (doorbell to receive CQE, up to --window messages queued per QP)\n",
              pct(lat_ns, 50), pct(lat_ns, 90), pct(lat_ns, 99), pct(lat_ns, 100));
  std::printf("  bandwidth       %.2f Gb/s simulated\n", sim_ns > 0 ? double(bytes) * 8 / sim_ns : 0.0);
  std::printf("  simulator       %.2f s wall, %.0f simulated cycles/s (%.0f evaluated cycles/s, %.0f%% of cycles skipped as idle)\n",
              wall, double(cycles) / wall, double(evaluated) / wall, cycles ? 100.0 * double(cycles - evaluated) / double(cycles) : 0.0);
  // NIC statistics (BAR0 counters) of both ports
  for (int nic = 0; nic < 2; nic++) {
    std::printf("  tmnic%d stats   ", nic);
    for (uint32_t k = 0; k < tmnic::hwif::stat::COUNT; k++) {
      uint32_t v = tmnic_sim_read_reg(nic, tmnic::hwif::reg::STATS0 + 4 * k);
      if (v) std::printf(" %s=%u", tmnic::hwif::stat::name(k), v);
    }
    std::printf("\n");
  }
  return errors == 0 && recvd == o.messages ? 0 : 1;
}
