// tmnic benchmark: simulated latency and bandwidth of RC SENDs, RDMA WRITEs and READs, atomics,
// hardware rendezvous and UD datagrams between two simulated NICs, and simulator speed. Prints one JSON object. Simulated figures (cycles, ns at the NIC clock) are
// deterministic for a given configuration; wall-clock figures (cycles/s) depend on the machine.
//   tmnic_bench [--quick]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "raw/raw_host.hpp"

using namespace tmnic;
using namespace tmnic::raw;
using Clock = std::chrono::steady_clock;
using Ev = sim::NicSim::Ev;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

struct Pair {
  sim::World w;
  Node a, b;
  explicit Pair(const sim::SimConfig& c) : w(c), a(w, 0), b(w, 1) {
    a.h.set_qp(2, a.qp(2, 1));
    b.h.set_qp(2, b.qp(2, 0));
  }
};

// Streams `msgs` messages of `len` bytes from a to b (SEND into SRQ buffers, or RDMA WRITE into b's
// region), or from b to a (RDMA READ of b's region into a's buffer, at most MAX_RD_ATOM READs in
// flight; FETCH_AND_ADD of 1 to the first word of b's region, len 8), at most `window` outstanding, path MTU 4096; returns the simulated cycles from the first
// doorbell to the last completion (the receive CQE for SEND, the send CQE for WRITE and READ).
double stream(const sim::SimConfig& cfg, uint8_t op, uint32_t len, int msgs, int window) {
  sim::World w(cfg);
  Node a(w, 0), b(w, 1);
  RawHost::QpCfg qa = a.qp(2, 1), qb = b.qp(2, 0);
  qa.mtu = qb.mtu = 5;   // IBV_MTU_4096
  qb.access |= hwif::access::REMOTE_ATOMIC;
  a.h.set_qp(2, qa);
  b.h.set_qp(2, qb);
  // b's region also takes remote writes, reads and atomics (MR 1, same key)
  b.h.set_mr(1, Node::kKey, 1, b.va(0), b.data.len, b.data.iova,
             hwif::access::LOCAL_WRITE | hwif::access::REMOTE_WRITE | hwif::access::REMOTE_READ |
             hwif::access::REMOTE_ATOMIC);
  const bool atomic = op == hwif::wqe_op::ATOMIC_FETCH_AND_ADD;
  const bool write = op == hwif::wqe_op::RDMA_WRITE || op == hwif::wqe_op::RDMA_READ || atomic;
  if (!write) for (int i = 0; i < msgs; i++) b.post_srq(i, {{b.va(0), len, Node::kKey}});
  while (w.progress(1000)) {}
  const uint64_t t0 = w.now();
  int posted = 0, done = 0, sent = 0;
  Cqe c;
  while (done < msgs) {
    while (posted < msgs && posted - sent < window) {
      uint8_t* slot = a.sq.p + (a.sq_pi % (1u << Node::kLog)) * hwif::WQE_STRIDE;
      RawHost::put_wqe(slot, posted, op, hwif::wqe_flag::SIGNALED, {{a.va(0), len, Node::kKey}});
      const uint64_t raddr = b.va(0);
      std::memcpy(slot + hwif::wqe::RADDR_OFF, &raddr, 8);
      std::memcpy(slot + hwif::wqe::RKEY_OFF, &Node::kKey, 4);
      if (atomic) {
        const uint64_t add = 1;
        std::memcpy(slot + hwif::WQE_ATOMIC_OFF + hwif::atomic::SWAP_ADD_OFF, &add, 8);
      }
      a.sq_pi++;
      a.h.wr(hwif::reg::DB_SQ0 + 4 * 2, a.sq_pi & 0xFFFF);
      posted++;
    }
    bool any = false;
    while (b.poll(&c)) { if (!write) done++; any = true; }
    while (a.poll(&c)) { sent++; if (write) done++; any = true; }
    if (!any && !w.progress(100000)) break;
  }
  return done == msgs ? double(w.now() - t0) : 0.0;
}

// UD datagrams from a's QP 2 to b's QP 2 (both UD, Q_Key 0x1234, path MTU 4096): `msgs` SENDs of
// `len` bytes (<= 4096) into b's SRQ buffers of GRH_LEN + len, at most `window` outstanding. Returns
// the simulated cycles from the first doorbell to the last receive completion; with `lat`, the
// median one-way latency of single datagrams (doorbell to receive CQE) instead.
double ud_stream(const sim::SimConfig& cfg, uint32_t len, int msgs, int window, bool lat) {
  sim::World w(cfg);
  Node a(w, 0), b(w, 1);
  RawHost::QpCfg qa = a.qp(0, 1), qb = b.qp(0, 0);
  for (RawHost::QpCfg* q : {&qa, &qb}) {
    q->mtu = 5;   // IBV_MTU_4096
    q->type = hwif::cmd::QP_TYPE_UD;
    q->qkey = 0x1234;
    q->dest_ip = 0;
    q->dmac = 0;
  }
  a.h.set_qp(2, qa);
  b.h.set_qp(2, qb);
  for (int i = 0; i < msgs; i++) b.post_srq(i, {{b.va(0), hwif::GRH_LEN + len, Node::kKey}});
  while (w.progress(1000)) {}
  auto post = [&](int i) {
    uint8_t* slot = a.sq.p + (a.sq_pi % (1u << Node::kLog)) * hwif::WQE_STRIDE;
    RawHost::put_wqe(slot, uint64_t(i), hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{a.va(0), len, Node::kKey}});
    const uint32_t qkey = 0x1234, ip = sim::World::ipv4_of(1), dqpn = 2;
    const uint64_t mac = sim::World::mac_of(1);
    std::memcpy(slot + hwif::wqe::UD_QKEY_OFF, &qkey, 4);
    uint8_t* av = slot + hwif::WQE_UD_AV_OFF;
    std::memcpy(av + hwif::ud_av::DEST_IP_OFF, &ip, 4);
    std::memcpy(av + hwif::ud_av::DQPN_OFF, &dqpn, 4);
    for (unsigned k = 0; k < 6; k++) av[hwif::ud_av::DMAC_OFF + k] = uint8_t(mac >> (40 - 8 * k));
    a.sq_pi++;
    a.h.wr(hwif::reg::DB_SQ0 + 4 * 2, a.sq_pi & 0xFFFF);
  };
  Cqe c;
  if (lat) {
    std::vector<double> t;
    for (int i = 0; i < msgs; i++) {
      const uint64_t t0 = w.now();
      post(i);
      while (!b.poll(&c))
        if (!w.progress(100000)) return 0.0;
      if (c.status != 0) return 0.0;
      t.push_back(double(w.now() - t0));
      while (a.poll(&c) || w.progress(1000)) {}
    }
    return median(t);
  }
  const uint64_t t0 = w.now();
  int posted = 0, done = 0, sent = 0;
  while (done < msgs) {
    while (posted < msgs && posted - sent < window) post(posted++);
    bool any = false;
    while (b.poll(&c)) { done += c.status == 0; any = true; }
    while (a.poll(&c)) { sent++; any = true; }
    if (!any && !w.progress(100000)) break;
  }
  return done == msgs ? double(w.now() - t0) : 0.0;
}

// First event of kind k at or after cycle t0 (UINT64_MAX if none).
uint64_t first(const std::vector<sim::NicSim::Event>& log, Ev k, uint64_t t0) {
  for (auto& e : log)
    if (e.kind == k && e.cycle >= t0) return e.cycle;
  return UINT64_MAX;
}

// Hardware rendezvous (docs/architecture.md "Rendezvous offload"), PMTU 4096: b's QP 2 is a
// rendezvous QP on TM-SRQ 1 (its send queue the NIC's own), a's QP 2 sends `n` one-packet RNDV
// requests for `len` bytes of a's region (at most `window` outstanding), each matching a tag posted
// on b. Per request: the cycles from b's MATCH completion to its DATA_VALID completion (both as the
// host sees them: the NIC reads the data in between); returns their median, and in *total the
// cycles from the first doorbell to the last DATA_VALID.
double rndv_run(const sim::SimConfig& cfg, uint32_t len, int n, int window, double* total) {
  sim::World w(cfg);
  Node a(w, 0), b(w, 1);
  TmSrq t(b, 1, 0, 64, 6);
  a.h.set_mr(1, Node::kKey, 1, a.va(0), a.data.len, a.data.iova, hwif::access::LOCAL_WRITE | hwif::access::REMOTE_READ);
  RawHost::QpCfg qa = a.qp(2, 1), qb = b.qp(2, 0);
  qa.mtu = qb.mtu = 5;
  qb.srq = 1;
  qb.sq_base = (1ull << hwif::NIC_SPACE_BIT) + (2ull << hwif::RNDV_QP_SHIFT);
  qb.sq_log = hwif::RNDV_SQ_LOG;
  a.h.set_qp(2, qa);
  b.h.set_qp(2, qb);
  for (int i = 0; i < 64; i++) a.post_srq(i, {{a.va((3u << 20) + 64 * i), 64, Node::kKey}});   // the FINs
  while (w.progress(1000)) {}
  std::vector<double> m2d;
  std::vector<uint64_t> t_match(n, 0);
  const uint64_t t0 = w.now();
  int posted = 0, done = 0;
  Cqe c;
  while (done < n) {
    while (posted < n && posted - done < window) {
      const uint32_t h = uint32_t(posted % 64);
      t.op(h, hwif::tm_opcode::ADD, 0, h, 0x100 + posted, ~0ull, b.va(0), len, Node::kKey);
      if (window == 1) while (w.progress(1000)) {}   // (the tag is in before its request is sent)
      uint8_t* m = a.data.p + (2u << 20) + 64 * (posted % 64);
      std::memset(m, 0, 64);
      TmSrq::put_tmh(m, hwif::tmh_op::RNDV, 0x100 + posted, 0);
      TmSrq::put_rvh(m + 16, a.va(0), Node::kKey, len);
      a.post_send(2, posted, hwif::wqe_op::SEND, 0, {{a.va((2u << 20) + 64 * (posted % 64)), 64, Node::kKey}});
      posted++;
    }
    bool any = false;
    while (b.poll(&c)) {
      any = true;
      if (c.opcode != hwif::wc_op::TM_RECV) continue;
      const int i = int(c.tm_tag - 0x100);
      if (c.wc_flags == hwif::wc_flag::TM_MATCH) t_match[i] = w.now();
      if (c.wc_flags == hwif::wc_flag::TM_DATA_VALID) {
        m2d.push_back(double(w.now() - t_match[i]));
        done++;
      }
    }
    while (a.poll(&c)) any = true;
    if (!any && !w.progress(2000)) break;
  }
  *total = done == n ? double(w.now() - t0) : 0.0;
  return done == n ? median(m2d) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  sim::SimConfig cfg;   // documented defaults, not the environment: numbers are comparable
  cfg.num_nics = 2;
  const double ns_per_cycle = 1000.0 / cfg.clk_mhz;
  std::string json = "{\n";
  char buf[512];
  auto add = [&](const char* fmt, auto... v) { std::snprintf(buf, sizeof buf, fmt, v...); json += buf; };

  // ---- one-way latency of an 8-byte SEND: doorbell write -> receive CQE visible in host memory
  {
    Pair p(cfg);
    std::vector<sim::NicSim::Event> la, lb;
    p.w.nic(0).set_event_log(&la);
    p.w.nic(1).set_event_log(&lb);
    std::vector<double> total, to_nic, wqe_fetch, payload, tx_start, wire, rwqe, rdata, cqe;
    const int iters = quick ? 21 : 101;
    for (int i = 0; i < iters; i++) {
      la.clear(); lb.clear();
      p.b.post_srq(1000 + i, {{p.b.va(0), 64, Node::kKey}});
      while (p.w.progress(1000)) {}   // the receive WQE is posted before the timed send
      la.clear(); lb.clear();
      uint64_t t0 = p.w.now();
      p.a.post_send(2, i, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{p.a.va(0), 8, Node::kKey}});
      Cqe c;
      uint64_t t_cqe = 0;
      while (true) {
        if (p.b.poll(&c)) { t_cqe = p.w.now(); break; }
        if (!p.w.progress(100000)) break;
      }
      while (p.a.poll(&c) || p.w.progress(1000)) {}   // drain the send completion and the ACK
      uint64_t db = first(la, Ev::kMmioWrite, t0), rd_wqe = first(la, Ev::kDmaReadReq, t0);
      uint64_t rd_pay = first(la, Ev::kDmaReadData, rd_wqe + 1);
      uint64_t txf = first(la, Ev::kTxFrame, t0), rxf = first(lb, Ev::kRxFrame, t0);
      uint64_t rreq = first(lb, Ev::kDmaReadReq, rxf), rw = first(lb, Ev::kDmaWrite, rxf);
      total.push_back(double(t_cqe - t0));
      to_nic.push_back(double(db - t0));
      wqe_fetch.push_back(double(first(la, Ev::kDmaReadData, rd_wqe) - db));
      payload.push_back(double(txf - first(la, Ev::kDmaReadData, rd_wqe)));
      (void)rd_pay;
      wire.push_back(double(rxf - txf));
      rwqe.push_back(double(first(lb, Ev::kDmaReadData, rreq) - rxf));
      rdata.push_back(double(rw - first(lb, Ev::kDmaReadData, rreq)));
      cqe.push_back(double(t_cqe - rw));
    }
    add("  \"clock_mhz\": %.1f, \"data_bytes\": %u,\n", cfg.clk_mhz, sim::NicSim::beat_bytes());
    add("  \"send_8b_latency\": {\"iterations\": %d, \"median_cycles\": %.0f, \"median_ns\": %.1f,\n", iters,
        median(total), median(total) * ns_per_cycle);
    add("    \"breakdown_ns\": {\"doorbell_mmio\": %.1f, \"wqe_fetch_dma\": %.1f, \"payload_fetch_and_tx\": %.1f, "
        "\"wire_and_rx_parse\": %.1f, \"recv_wqe_fetch_dma\": %.1f, \"payload_write_issue\": %.1f, "
        "\"payload_and_cqe_visible\": %.1f}},\n",
        median(to_nic) * ns_per_cycle, median(wqe_fetch) * ns_per_cycle, median(payload) * ns_per_cycle,
        median(wire) * ns_per_cycle, median(rwqe) * ns_per_cycle, median(rdata) * ns_per_cycle,
        median(cqe) * ns_per_cycle);
  }

  // ---- bandwidth of 64 KiB SENDs with several messages in flight
  {
    Pair p(cfg);
    const int msgs = quick ? 16 : 64;
    const uint32_t len = 64 * 1024;
    for (int i = 0; i < msgs; i++) p.b.post_srq(i, {{p.b.va(0), len, Node::kKey}});
    while (p.w.progress(1000)) {}
    uint64_t run0 = p.w.cycles_run();
    auto wall0 = Clock::now();
    uint64_t t0 = p.w.now();
    int posted = 0, recv = 0, sent = 0;
    Cqe c;
    while (recv < msgs) {
      while (posted < msgs && posted - sent < 8) {
        p.a.post_send(2, posted, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{p.a.va(0), len, Node::kKey}});
        posted++;
      }
      bool any = false;
      while (p.b.poll(&c)) { recv++; any = true; }
      while (p.a.poll(&c)) { sent++; any = true; }
      if (!any && !p.w.progress(100000)) break;
    }
    double cyc = double(p.w.now() - t0);
    double gbit = double(msgs) * len * 8 / (cyc * ns_per_cycle);
    double wall = secs(wall0);
    add("  \"send_64k_bandwidth\": {\"messages\": %d, \"received\": %d, \"cycles\": %.0f, \"gbit_s\": %.2f, "
        "\"line_gbit_s\": %.1f, \"pcie_gbit_s\": %.1f, \"fraction_of_line\": %.3f},\n",
        msgs, recv, cyc, gbit, cfg.line_gbit_s, cfg.pcie_gbyte_s * 8, gbit / cfg.line_gbit_s);
    add("  \"sim_speed_two_nics_loaded\": {\"cycles_evaluated\": %lu, \"wall_s\": %.3f, \"cycles_per_s\": %.0f},\n",
        (unsigned long)(p.w.cycles_run() - run0), wall, double(p.w.cycles_run() - run0) / wall);
  }

  // ---- SEND, RDMA WRITE and RDMA READ bandwidth by message size at PMTU 4096 (issue 11's sweep), against the
  // goodput the link allows after headers. Per 4096-byte packet the frame has 58 header bytes
  // (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4; a WRITE's first packet 16 more for its RETH). The
  // simulated MAC sends whole datapath beats and no FCS/preamble/gap: 4154 bytes take 65 beats of 64
  // (4096 / 4160 = 98.5 % payload); a real 100 GbE port adds 24 bytes of FCS, preamble and
  // inter-frame gap per frame (4096 / 4178 = 98.0 %), given beside it for reference.
  {
    const double beat = sim::NicSim::beat_bytes();
    const double eff = 4096.0 / (std::ceil((4096.0 + 58.0) / beat) * beat);
    const double eff_eth = 4096.0 / (4096.0 + 58.0 + 24.0);
    add("  \"bandwidth_pmtu4096\": {\"line_gbit_s\": %.1f, \"goodput_limit_gbit_s\": %.2f, "
        "\"ethernet_goodput_limit_gbit_s\": %.2f, \"window\": 8, \"sizes\": [\n",
        cfg.line_gbit_s, cfg.line_gbit_s * eff, cfg.line_gbit_s * eff_eth);
    // (--quick, the test suite's smoke run: three sizes, 1 MiB each)
    const std::vector<uint32_t> sizes = quick ? std::vector<uint32_t>{4096, 65536, 1u << 20}
                                              : std::vector<uint32_t>{4096, 16384, 65536, 262144, 1u << 20, 4u << 20};
    for (size_t k = 0; k < sizes.size(); k++) {
      const uint32_t len = sizes[k];
      // enough messages for a steady state: 16 MiB (1 MiB with --quick), at least 8 messages
      const int msgs = std::max<int>(8, int((quick ? (1u << 20) : (16u << 20)) / len));
      const double cs = stream(cfg, hwif::wqe_op::SEND, len, msgs, 8);
      const double cw = stream(cfg, hwif::wqe_op::RDMA_WRITE, len, msgs, 8);
      const double cr = stream(cfg, hwif::wqe_op::RDMA_READ, len, msgs, 8);
      const double gs = cs > 0 ? double(msgs) * len * 8 / (cs * ns_per_cycle) : 0;
      const double gw = cw > 0 ? double(msgs) * len * 8 / (cw * ns_per_cycle) : 0;
      const double gr = cr > 0 ? double(msgs) * len * 8 / (cr * ns_per_cycle) : 0;
      add("    {\"bytes\": %u, \"messages\": %d, \"send_gbit_s\": %.2f, \"send_of_goodput\": %.3f, "
          "\"write_gbit_s\": %.2f, \"write_of_goodput\": %.3f, \"read_gbit_s\": %.2f, \"read_of_goodput\": %.3f}%s\n",
          len, msgs, gs, gs / (cfg.line_gbit_s * eff), gw, gw / (cfg.line_gbit_s * eff), gr,
          gr / (cfg.line_gbit_s * eff), k + 1 < sizes.size() ? "," : "");
    }
    add("  ]},\n");
  }

  // ---- 8-byte RDMA WRITE and READ, one at a time: doorbell to the send completion (the WRITE's ACK
  // or the READ's response placed), mean over n (the host posts the next one when it sees the CQE)
  {
    const int n = quick ? 8 : 64;
    const double w8 = stream(cfg, hwif::wqe_op::RDMA_WRITE, 8, n, 1) / n;
    const double r8 = stream(cfg, hwif::wqe_op::RDMA_READ, 8, n, 1) / n;
    add("  \"rdma_8b_round_trip\": {\"messages\": %d, \"write_cycles\": %.0f, \"write_ns\": %.1f, "
        "\"read_cycles\": %.0f, \"read_ns\": %.1f},\n", n, w8, w8 * ns_per_cycle, r8, r8 * ns_per_cycle);
    // FETCH_AND_ADD: one at a time (doorbell to its completion), and streamed with max_rd_atomic
    // (MAX_RD_ATOM) in flight: the rate the responder's read-modify-write allows
    const int m = quick ? 64 : 1024;
    const double f8 = stream(cfg, hwif::wqe_op::ATOMIC_FETCH_AND_ADD, 8, n, 1) / n;
    const double fc = stream(cfg, hwif::wqe_op::ATOMIC_FETCH_AND_ADD, 8, m, int(hwif::MAX_RD_ATOM));
    add("  \"atomic_fetch_add\": {\"round_trip_cycles\": %.0f, \"round_trip_ns\": %.1f, \"streamed\": %d, "
        "\"window\": %u, \"cycles_per_atomic\": %.1f, \"mops\": %.2f},\n", f8, f8 * ns_per_cycle, m, hwif::MAX_RD_ATOM,
        fc / m, fc > 0 ? 1e3 * m / (fc * ns_per_cycle) : 0.0);
  }

  // ---- 8-byte RDMA WRITE and READ, one at a time, with the breakdown of the round trip from both
  // NICs' event logs (doorbell write -> the send completion visible in host memory)
  for (uint8_t op : {hwif::wqe_op::RDMA_WRITE, hwif::wqe_op::RDMA_READ}) {
    const bool rd = op == hwif::wqe_op::RDMA_READ;
    Pair p(cfg);
    p.b.h.set_mr(1, Node::kKey, 1, p.b.va(0), p.b.data.len, p.b.data.iova,
                 hwif::access::LOCAL_WRITE | hwif::access::REMOTE_WRITE | hwif::access::REMOTE_READ);
    std::vector<sim::NicSim::Event> la, lb;
    p.w.nic(0).set_event_log(&la);
    p.w.nic(1).set_event_log(&lb);
    // phases: a's doorbell MMIO, its WQE fetch, payload fetch (WRITE) and TX, the wire and b's
    // parse, b's work (WRITE: the payload's DMA write issued; READ: the payload's DMA read), b's
    // response frame out, the wire back and a's parse, a's work (READ: the READ WQE fetched again
    // for its scatter list and the payload written), the completion visible
    std::vector<double> total, ph[9], ph_w;
    const int iters = quick ? 21 : 101;
    for (int i = 0; i < iters; i++) {
      while (p.w.progress(1000)) {}
      la.clear(); lb.clear();
      const uint64_t t0 = p.w.now();
      uint8_t* slot = p.a.sq.p + (p.a.sq_pi % (1u << Node::kLog)) * hwif::WQE_STRIDE;
      RawHost::put_wqe(slot, i, op, hwif::wqe_flag::SIGNALED, {{p.a.va(0), 8, Node::kKey}});
      const uint64_t raddr = p.b.va(0);
      std::memcpy(slot + hwif::wqe::RADDR_OFF, &raddr, 8);
      std::memcpy(slot + hwif::wqe::RKEY_OFF, &Node::kKey, 4);
      p.a.sq_pi++;
      p.a.h.wr(hwif::reg::DB_SQ0 + 4 * 2, p.a.sq_pi & 0xFFFF);
      Cqe c;
      uint64_t t_cqe = 0;
      while (true) {
        if (p.a.poll(&c)) { t_cqe = p.w.now(); break; }
        if (!p.w.progress(100000)) break;
      }
      const uint64_t db = first(la, Ev::kMmioWrite, t0);
      const uint64_t wqe = first(la, Ev::kDmaReadData, first(la, Ev::kDmaReadReq, db));
      const uint64_t txf = first(la, Ev::kTxFrame, t0), rxf = first(lb, Ev::kRxFrame, t0);
      // (a WRITE's ACK may leave before its payload's DMA write lands: that phase is 0 for it, and
      // the write's own time after the frame's arrival is reported beside the chain)
      const uint64_t wr_b = first(lb, Ev::kDmaWrite, rxf);
      const uint64_t work_b = rd ? first(lb, Ev::kDmaReadData, rxf) : rxf;
      if (!rd) ph_w.push_back(double(wr_b - rxf));
      const uint64_t tx_b = first(lb, Ev::kTxFrame, rxf), rx_a = first(la, Ev::kRxFrame, tx_b);
      const uint64_t work_a = rd ? first(la, Ev::kDmaWrite, rx_a) : rx_a;
      const uint64_t v[] = {t0, db, wqe, txf, rxf, work_b, tx_b, rx_a, work_a, t_cqe};
      total.push_back(double(t_cqe - t0));
      for (int k = 0; k < 9; k++) ph[k].push_back(double(v[k + 1] - v[k]));
    }
    const double n = ns_per_cycle;
    add("  \"rdma_8b_%s_latency\": {\"iterations\": %d, \"median_cycles\": %.0f, \"median_ns\": %.1f,\n",
        rd ? "read" : "write", iters, median(total), median(total) * n);
    add("    \"breakdown_ns\": {\"doorbell_mmio\": %.1f, \"wqe_fetch_dma\": %.1f, \"%s\": %.1f, "
        "\"wire_and_rx_parse\": %.1f, \"responder_%s\": %.1f, \"responder_to_tx\": %.1f, "
        "\"wire_back_and_rx_parse\": %.1f, \"requester_%s\": %.1f, \"completion_visible\": %.1f}",
        median(ph[0]) * n, median(ph[1]) * n, rd ? "request_build_and_tx" : "payload_fetch_and_tx", median(ph[2]) * n,
        median(ph[3]) * n, rd ? "payload_read" : "ack_before_payload_write", median(ph[4]) * n, median(ph[5]) * n,
        median(ph[6]) * n, rd ? "wqe_refetch_and_payload_write" : "ack_parse", median(ph[7]) * n, median(ph[8]) * n);
    if (!rd) add(", \"responder_payload_dma_write_after_rx_ns\": %.1f", median(ph_w) * n);
    add("},\n");
  }

  // ---- hardware rendezvous: MATCH to DATA_VALID of one rendezvous at a time (64 KiB and 1 MiB), and
  // 1 MiB rendezvous streamed on one QP (RNDV_SLOTS under way), against the READ goodput limit
  {
    const double beat = sim::NicSim::beat_bytes();
    const double limit = cfg.line_gbit_s * 4096.0 / (std::ceil((4096.0 + 58.0) / beat) * beat);
    add("  \"rendezvous_pmtu4096\": {\"goodput_limit_gbit_s\": %.2f, \"single\": [\n", limit);
    const std::vector<uint32_t> lens = {65536, 1u << 20};
    for (size_t k = 0; k < lens.size(); k++) {
      double tot = 0;
      const int iters = quick ? 3 : 9;
      const double m2d = rndv_run(cfg, lens[k], iters, 1, &tot);
      const double g = m2d > 0 ? lens[k] * 8.0 / (m2d * ns_per_cycle) : 0;
      add("    {\"bytes\": %u, \"iterations\": %d, \"match_to_data_valid_cycles\": %.0f, "
          "\"match_to_data_valid_ns\": %.1f, \"gbit_s\": %.2f, \"of_goodput\": %.3f}%s\n",
          lens[k], iters, m2d, m2d * ns_per_cycle, g, g / limit, k + 1 < lens.size() ? "," : "");
    }
    double tot = 0;
    const int n = quick ? 4 : 16;
    rndv_run(cfg, 1u << 20, n, int(hwif::RNDV_SLOTS), &tot);
    const double g = tot > 0 ? double(n) * (1u << 20) * 8 / (tot * ns_per_cycle) : 0;
    add("  ], \"streamed_1m\": {\"rendezvous\": %d, \"window\": %u, \"cycles\": %.0f, \"gbit_s\": %.2f, "
        "\"of_goodput\": %.3f}},\n", n, hwif::RNDV_SLOTS, tot, g, g / limit);
  }

  // ---- UD: one-way latency of an 8-byte datagram, and 4096-byte datagrams streamed (window 8)
  {
    const int n = quick ? 21 : 101;
    const double l = ud_stream(cfg, 8, n, 1, true);
    const int msgs = quick ? 256 : 4096;
    const double cyc = ud_stream(cfg, 4096, msgs, 8, false);
    const double g = cyc > 0 ? double(msgs) * 4096 * 8 / (cyc * ns_per_cycle) : 0;
    add("  \"ud\": {\"send_8b_latency_median_cycles\": %.0f, \"send_8b_latency_median_ns\": %.1f, "
        "\"datagrams_4096b\": %d, \"cycles\": %.0f, \"gbit_s\": %.2f},\n",
        l, l * ns_per_cycle, msgs, cyc, g);
  }

  // ---- lightly loaded: one 8-byte SEND every 10 us between two NICs; simulated cycles per wall
  // second, counting the idle stretches the world skips
  {
    Pair p(cfg);
    const int msgs = quick ? 50 : 500;
    const uint64_t gap = uint64_t(10000.0 / ns_per_cycle);   // 10 us
    for (int i = 0; i < msgs; i++) p.b.post_srq(i, {{p.b.va(0), 64, Node::kKey}});
    while (p.w.progress(1000)) {}
    uint64_t t0 = p.w.now(), run0 = p.w.cycles_run();
    auto wall0 = Clock::now();
    int recv = 0;
    Cqe c;
    for (int i = 0; i < msgs; i++) {
      uint64_t start = p.w.now();
      p.a.post_send(2, i, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{p.a.va(0), 8, Node::kKey}});
      while (true) {
        while (p.a.poll(&c)) {}
        if (p.b.poll(&c)) { recv++; break; }
        if (!p.w.progress(100000)) break;
      }
      p.w.run_until(start + gap);
    }
    double wall = secs(wall0);
    uint64_t cyc = p.w.now() - t0, ev = p.w.cycles_run() - run0;
    add("  \"sim_speed_two_nics_light_load\": {\"messages\": %d, \"received\": %d, \"interval_us\": 10, "
        "\"simulated_cycles\": %lu, \"evaluated_cycles\": %lu, \"wall_s\": %.3f, \"simulated_cycles_per_s\": %.0f, "
        "\"simulated_cycles_per_s_per_nic\": %.0f},\n",
        msgs, recv, (unsigned long)cyc, (unsigned long)ev, wall, double(cyc) / wall, double(cyc) / wall);
  }

  // ---- simulator speed with the clock running and the NICs idle (no skipping)
  for (int nics = 1; nics <= 2; nics++) {
    sim::SimConfig c1 = cfg;
    c1.num_nics = nics;
    sim::World w(c1);
    const uint64_t n = quick ? 200000 : 2000000;
    auto wall0 = Clock::now();
    for (uint64_t i = 0; i < n; i++)
      for (int k = 0; k < nics; k++) w.nic(k).tick(i + 100);
    double wall = secs(wall0);
    add("  \"sim_speed_idle_%d_nic\": {\"cycles\": %lu, \"wall_s\": %.3f, \"cycles_per_s_per_nic\": %.0f},\n", nics,
        (unsigned long)n, wall, double(n) / wall);
  }
  // ---- one NIC loaded: loopback 64 KiB messages
  {
    sim::SimConfig c1 = cfg;
    c1.num_nics = 1;
    sim::World w(c1);
    Node n(w, 0);
    n.h.set_qp(2, n.qp(3, 0));
    n.h.set_qp(3, n.qp(2, 0));
    const int msgs = quick ? 8 : 32;
    for (int i = 0; i < msgs; i++) n.post_srq(i, {{n.va(1 << 20), 65536, Node::kKey}});
    uint64_t run0 = w.cycles_run();
    auto wall0 = Clock::now();
    for (int i = 0; i < msgs; i++) n.post_send(2, i, hwif::wqe_op::SEND, hwif::wqe_flag::SIGNALED, {{n.va(0), 65536, Node::kKey}});
    auto got = wait_cqes(w, {&n}, 2 * msgs);
    double wall = secs(wall0);
    add("  \"sim_speed_one_nic_loaded\": {\"completions\": %zu, \"cycles_evaluated\": %lu, \"wall_s\": %.3f, "
        "\"cycles_per_s\": %.0f}\n", got.size(), (unsigned long)(w.cycles_run() - run0), wall,
        double(w.cycles_run() - run0) / wall);
  }
  json += "}\n";
  std::fputs(json.c_str(), stdout);
  return 0;
}
