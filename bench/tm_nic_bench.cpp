// Tag matching in the whole NIC (one simulated NIC, loopback RC): list-operation throughput through
// the op ring, tagged-message latency (doorbell to TM completion in host memory), and simulator
// speed with a full tag list: idle with the clock running, lightly loaded (one tagged message every
// 10 us, idle stretches skipped) and loaded (back-to-back tagged messages). Prints one JSON object.
// Built once per engine size (tm_nic_bench_<N>, TM_ENTRIES = N); simulated figures are
// deterministic, wall-clock ones depend on the machine.
//   tm_nic_bench_<N> [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "raw/raw_host.hpp"

using namespace tmnic;
using namespace tmnic::raw;
using Clock = std::chrono::steady_clock;
namespace hw = tmnic::hwif;

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double secs(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

constexpr uint32_t kSrq = 1, kSend = 2, kRecv = 3;

// One NIC: QP 2 sends to QP 3 on TM-SRQ 1 that owns every engine entry.
struct Bench {
  sim::World w;
  Node n;
  TmSrq t;
  uint32_t entries;
  explicit Bench(const sim::SimConfig& c, uint32_t e) : w(c), n(w, 0), t(n, kSrq, 0, e, 12), entries(e) {
    RawHost::QpCfg s = n.qp(kRecv, 0);
    s.srq = hw::NO_SRQ;
    n.h.set_qp(kSend, s);
    RawHost::QpCfg r = n.qp(kSend, 0);
    r.srq = kSrq;
    n.h.set_qp(kRecv, r);
    for (int i = 0; i < 64; i++) t.post(9000 + i, n.va(3 << 20) + 4096 * i, 4096);   // for unexpected ones
  }
  void settle() { while (w.progress(1000)) {} }
  void add(uint32_t h, uint64_t tag, bool signaled, bool db = true) {
    t.op(h, hw::tm_opcode::ADD, signaled ? hw::tm_op_flag::SIGNALED : 0, h, tag, ~0ull, n.va(1 << 20) + 64 * (h % 1024), 64,
         Node::kKey, 0, db);
  }
  void send(uint64_t wr_id, uint64_t tag, uint32_t payload, bool signaled = false) {
    uint8_t* m = n.data.p + 256 * (wr_id % 512);
    TmSrq::put_tmh(m, hw::tmh_op::EAGER, tag, uint32_t(wr_id));
    n.post_send(kSend, wr_id, hw::wqe_op::SEND, signaled ? hw::wqe_flag::SIGNALED : 0,
                {{n.va(256 * (wr_id % 512)), 16 + payload, Node::kKey}});
  }
  // Fills the list: entry h has tag 0x1000 + h; measures the simulated time until all are in.
  uint64_t fill(uint32_t count) {
    uint64_t t0 = w.now();
    for (uint32_t h = 0; h < count; h++) add(h, 0x1000 + h, false, (h % 64 == 63) || h + 1 == count);
    while (t.stat(hw::tmstat::OCCUPANCY) < count && w.progress(2000)) {}
    return w.now() - t0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  sim::SimConfig cfg;   // documented defaults, not the environment
  cfg.num_nics = 1;
  const double ns = 1000.0 / cfg.clk_mhz;
  std::string json = "{\n";
  char buf[768];
  auto add = [&](const char* fmt, auto... v) { std::snprintf(buf, sizeof buf, fmt, v...); json += buf; };
  uint32_t entries = 0;
  {
    sim::World w(cfg);
    RawHost h(w, 0);
    entries = h.rd(hw::reg::TM_MAX_TAGS);
  }
  add("  \"tm_entries\": %u,\n  \"clock_mhz\": %.0f,\n", entries, cfg.clk_mhz);

  // ---- list operations through the op ring: ADD until full, then DEL everything
  {
    Bench b(cfg, entries);
    uint64_t add_cyc = b.fill(entries);
    uint64_t t0 = b.w.now();
    for (uint32_t h = 0; h < entries; h++)
      b.t.op(h, hw::tm_opcode::DEL, 0, h, 0, 0, 0, 0, Node::kKey, 0, (h % 64 == 63) || h + 1 == entries);
    while (b.t.stat(hw::tmstat::OCCUPANCY) > 0 && b.w.progress(2000)) {}
    uint64_t del_cyc = b.w.now() - t0;
    add("  \"list_ops\": {\"adds\": %u, \"add_cycles\": %lu, \"adds_per_us\": %.1f, \"dels\": %u, \"del_cycles\": %lu, "
        "\"dels_per_us\": %.1f, \"note\": \"64 ops per doorbell, fetched 8 per DMA read\"},\n",
        entries, (unsigned long)add_cyc, entries / (add_cyc * ns / 1000.0), entries, (unsigned long)del_cyc,
        entries / (del_cyc * ns / 1000.0));
  }

  // ---- latency of an 8-byte tagged eager SEND, doorbell to TM completion visible (loopback)
  for (uint32_t occ : {1u, entries}) {
    Bench b(cfg, entries);
    b.fill(occ - 1);
    b.settle();
    std::vector<double> lat_match, lat_unexp;
    const int iters = quick ? 11 : 51;
    for (int i = 0; i < iters; i++) {
      // Newest entry matches (the whole list is in front of it in MPI order).
      b.add(occ - 1, 0x9000 + i, false);
      b.settle();
      uint64_t t0 = b.w.now();
      b.send(i, 0x9000 + i, 8);
      Cqe c;
      uint64_t got = 0;
      while (!got) {
        while (b.n.poll(&c)) if (c.opcode == hw::wc_op::TM_RECV) got = b.w.now();
        if (!got && !b.w.progress(100000)) break;
      }
      lat_match.push_back(double(got - t0));
      b.settle();
      while (b.n.poll(&c)) {}
    }
    for (int i = 0; i < iters; i++) {
      uint64_t t0 = b.w.now();
      b.send(1000 + i, 0xDEAD0000 + i, 8);   // matches nothing: unexpected, into an SRQ buffer
      Cqe c;
      uint64_t got = 0;
      while (!got) {
        while (b.n.poll(&c)) if (c.opcode == hw::wc_op::TM_RECV) got = b.w.now();
        if (!got && !b.w.progress(100000)) break;
      }
      lat_unexp.push_back(double(got - t0));
      b.t.post(9000 + i, b.n.va(3 << 20) + 4096 * (i % 64), 4096);
      b.settle();
      while (b.n.poll(&c)) {}
    }
    add("  \"latency_8B_occupancy_%u\": {\"matched_cycles_median\": %.0f, \"matched_ns\": %.0f, "
        "\"unexpected_cycles_median\": %.0f, \"unexpected_ns\": %.0f},\n",
        occ, median(lat_match), median(lat_match) * ns, median(lat_unexp), median(lat_unexp) * ns);
  }

  // ---- simulator speed, full list, clock running, nothing happening (no skipping)
  {
    Bench b(cfg, entries);
    b.fill(entries);
    b.settle();
    const uint64_t cycles = quick ? 100000 : 1000000;
    uint64_t now = b.w.now();
    auto wall0 = Clock::now();
    for (uint64_t i = 0; i < cycles; i++) b.w.nic(0).tick(now + i);
    double wall = secs(wall0);
    add("  \"sim_speed_idle_full_list\": {\"cycles\": %lu, \"wall_s\": %.3f, \"cycles_per_s\": %.0f},\n",
        (unsigned long)cycles, wall, double(cycles) / wall);
  }

  // ---- lightly loaded, full list: one tagged 64-byte message every 10 us matching the newest entry,
  // which is then re-added; simulated cycles per wall second (idle stretches skipped)
  {
    Bench b(cfg, entries);
    b.fill(entries - 1);
    b.settle();
    const int msgs = quick ? 30 : 300;
    const uint64_t gap = uint64_t(10000.0 / ns);
    uint64_t t0 = b.w.now(), run0 = b.w.cycles_run();
    auto wall0 = Clock::now();
    int matched = 0;
    for (int i = 0; i < msgs; i++) {
      uint64_t start = b.w.now();
      b.add(entries - 1, 0x20000 + i, false);
      b.send(i, 0x20000 + i, 64);
      Cqe c;
      bool done = false;
      while (!done) {
        while (b.n.poll(&c)) if (c.opcode == hw::wc_op::TM_RECV) { done = true; matched += (c.wc_flags & hw::wc_flag::TM_MATCH) != 0; }
        if (!done && !b.w.progress(100000)) break;
      }
      b.w.run_until(start + gap);
    }
    double wall = secs(wall0);
    uint64_t cyc = b.w.now() - t0;
    add("  \"sim_speed_light_load_full_list\": {\"messages\": %d, \"matched\": %d, \"interval_us\": 10, "
        "\"simulated_cycles\": %lu, \"evaluated_cycles\": %lu, \"wall_s\": %.3f, \"simulated_cycles_per_s\": %.0f},\n",
        msgs, matched, (unsigned long)cyc, (unsigned long)(b.w.cycles_run() - run0), wall, double(cyc) / wall);
  }

  // ---- loaded, full list: back-to-back 64-byte tagged messages, each matching an entry that is
  // re-added right after (the list stays full)
  {
    Bench b(cfg, entries);
    b.fill(entries);
    b.settle();
    const int msgs = quick ? 200 : 2000;
    uint64_t t0 = b.w.now(), run0 = b.w.cycles_run();
    auto wall0 = Clock::now();
    int sent = 0, matched = 0;
    Cqe c;
    while (matched < msgs) {
      while (sent < msgs && sent - matched < 32) {
        b.send(sent, 0x1000 + uint32_t(sent) % entries, 64);
        sent++;
      }
      bool any = false;
      while (b.n.poll(&c)) {
        any = true;
        if (c.opcode == hw::wc_op::TM_RECV && (c.wc_flags & hw::wc_flag::TM_MATCH)) {
          matched++;
          b.add(c.tm_handle, 0x1000 + c.tm_handle, false);
        }
      }
      if (!any && !b.w.progress(20000)) break;
    }
    double wall = secs(wall0);
    uint64_t cyc = b.w.now() - t0;
    add("  \"sim_speed_loaded_full_list\": {\"messages\": %d, \"matched\": %d, \"simulated_cycles\": %lu, "
        "\"messages_per_us\": %.2f, \"evaluated_cycles\": %lu, \"wall_s\": %.3f, \"cycles_per_s\": %.0f}\n",
        msgs, matched, (unsigned long)cyc, matched / (cyc * ns / 1000.0), (unsigned long)(b.w.cycles_run() - run0), wall,
        double(b.w.cycles_run() - run0) / wall);
  }
  json += "}\n";
  std::fputs(json.c_str(), stdout);
  return 0;
}
