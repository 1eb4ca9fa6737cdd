// Tag-matching engine benchmark: JSON on stdout (not a test). Measures, in simulated cycles, the
// match latency (lookup handshake -> response) and the lookup rate at list occupancies
// 1/16/256/1024 of distinct exact tags, for a same-tag stream and with 25 % wildcard entries
// (N_ENTRIES = 1024, default geometry); ADD and DEL throughput; the simulation speed of the engine
// alone (idle, 1 lookup per 16 cycles, 1 per cycle) with a full list at 1024 and 16384 entries; and
// two software matchers on the same kind of stream (wall clock: noisy, median of 5 runs). The ns per
// match of the engine at the clock it reached placed and routed on ECP5 (syn/tm_engine_report.json,
// median of the seeds) is printed beside the software numbers when that report is present.
//
// Engine at occupancy K: K entries with distinct exact tags (spread over the SRQs); batches of K
// back-to-back lookups (every one hits, random order), the K entries re-posted between batches, so
// every lookup of a batch sees between K and 1 entries (occupancy K = the batch's start).
// "accept_per_cycle" counts lookups accepted per cycle from the first to the last acceptance of a
// batch (the decision rate); "lookups_per_cycle" also counts the pipeline's fill and drain.
// Software at occupancy K: the same K tags posted (1 in 16 masked on the low 8 bits), then random
// lookups of live tags, each matched entry re-posted at once (occupancy stays K).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <list>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <verilated.h>

#include "Vtm1024.h"
#include "Vtm16k.h"
namespace {

using Clock = std::chrono::steady_clock;
double secs_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Minimal driver (no model): requests from a queue, one slot per channel, responses counted.
template <class V>
class Drv {
 public:
  explicit Drv(unsigned n) : n_(n), ctx_(std::make_unique<VerilatedContext>()), t_(std::make_unique<V>(ctx_.get())) {
    t_->clk_i = 0;
    t_->rst_ni = 0;
    t_->op_valid_i = 0;
    t_->lk_valid_i = 0;
    t_->eval();
    for (int i = 0; i < 3; ++i) tick();
    t_->rst_ni = 1;
    t_->eval();
    while (!t_->lk_ready_o) tick(), t_->eval();  // the reset pass over the tables
  }
  ~Drv() { t_->final(); }
  void tick() {
    t_->clk_i = 1;
    t_->eval();
    t_->clk_i = 0;
    ++cyc_;
  }
  // Presents an op until accepted and waits for its response.
  bool op(unsigned code, unsigned h, uint64_t tag, uint64_t mask, unsigned srq = 0) {
    t_->op_valid_i = 1;
    t_->op_code_i = code;
    t_->op_srq_i = srq;
    t_->op_handle_i = h;
    t_->op_tag_i = tag;
    t_->op_mask_i = mask;
    t_->op_sw_cnt_vld_i = 0;
    for (;;) {
      t_->eval();
      const bool acc = t_->op_ready_o;
      tick();
      if (acc) break;
    }
    t_->op_valid_i = 0;
    for (;;) {
      t_->eval();
      if (t_->op_rsp_valid_o) return t_->op_rsp_ok_o;
      tick();
    }
  }
  // Streams lookups (tags), each presented as soon as the previous one was accepted; returns cycles
  // from the first accept to the last response and records per-lookup latency.
  uint64_t lookups(const std::vector<std::pair<unsigned, uint64_t>>& tags, std::vector<uint32_t>& lat,
                   unsigned* hits, uint64_t* accept_span = nullptr) {
    size_t next = 0, done = 0;
    std::vector<uint64_t> acc_cyc;
    const uint64_t c0 = cyc_;
    while (done < tags.size()) {
      t_->lk_valid_i = next < tags.size();
      if (next < tags.size()) {
        t_->lk_srq_i = tags[next].first;
        t_->lk_tag_i = tags[next].second;
        t_->lk_commit_miss_i = 0;
      }
      t_->eval();
      if (t_->lk_rsp_valid_o) {
        lat.push_back(static_cast<uint32_t>(cyc_ - acc_cyc[done]));
        *hits += t_->lk_rsp_hit_o;
        ++done;
      }
      if (t_->lk_valid_i && t_->lk_ready_o) acc_cyc.push_back(cyc_), ++next;
      tick();
    }
    t_->lk_valid_i = 0;
    if (accept_span) *accept_span += acc_cyc.back() - acc_cyc.front() + 1;
    return cyc_ - c0;
  }
  // Simulation speed: cycles/s with one lookup (always a miss, not committed) every `every` cycles
  // (0: idle) on a list of `occ` entries.
  double speed(unsigned every, uint64_t cycles) {
    const auto t0 = Clock::now();
    for (uint64_t c = 0; c < cycles; ++c) {
      t_->lk_valid_i = every && (c % every == 0);
      t_->lk_srq_i = 0;
      t_->lk_tag_i = 0xdead0000 + c;
      t_->lk_commit_miss_i = 0;
      t_->eval();
      tick();
    }
    t_->lk_valid_i = 0;
    return cycles / secs_since(t0);
  }
  V& top() { return *t_; }
  uint64_t cycles() const { return cyc_; }

 private:
  unsigned n_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<V> t_;
  uint64_t cyc_ = 0;
};

uint32_t pct(std::vector<uint32_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
}

// ---------------------------------------------------------------- software baselines
struct Posted {
  uint64_t tag, mask;
  unsigned handle;
  uint64_t seq;
};

// MPI posted-receive queue: a linked list walked from the front.
class ListMatcher {
 public:
  void post(uint64_t tag, uint64_t mask, unsigned h) { l_.push_back({tag, mask, h, seq_++}); }
  int match(uint64_t tag) {
    for (auto it = l_.begin(); it != l_.end(); ++it)
      if (((tag ^ it->tag) & it->mask) == 0) {
        const int h = static_cast<int>(it->handle);
        l_.erase(it);
        return h;
      }
    return -1;
  }

 private:
  std::list<Posted> l_;
  uint64_t seq_ = 0;
};

// Exact tags in a hash map of per-tag FIFOs, wildcard (masked) entries in an ordered list; a match
// takes the older (sequence number) of the exact FIFO head and the first matching wildcard.
class HashMatcher {
 public:
  void post(uint64_t tag, uint64_t mask, unsigned h) {
    if (mask == ~0ull) exact_[tag].push_back({tag, mask, h, seq_++});
    else wild_.push_back({tag, mask, h, seq_++});
  }
  int match(uint64_t tag) {
    auto e = exact_.find(tag);
    const Posted* ex = (e != exact_.end() && !e->second.empty()) ? &e->second.front() : nullptr;
    auto w = wild_.begin();
    for (; w != wild_.end(); ++w) {
      if (ex && w->seq > ex->seq) {
        w = wild_.end();
        break;
      }
      if (((tag ^ w->tag) & w->mask) == 0) break;
    }
    if (w != wild_.end()) {
      const int h = static_cast<int>(w->handle);
      wild_.erase(w);
      return h;
    }
    if (ex) {
      const int h = static_cast<int>(ex->handle);
      e->second.pop_front();
      return h;
    }
    return -1;
  }

 private:
  std::unordered_map<uint64_t, std::list<Posted>> exact_;
  std::list<Posted> wild_;
  uint64_t seq_ = 0;
};

// Stream at occupancy k: posted tags 0..k-1 (exact; 1 in 16 is a wildcard on the low 8 bits),
// then `n` matches each for a random live tag, the matched entry re-posted with the same tag.
template <class M>
double sw_ns_per_match(unsigned k, unsigned n, uint64_t seed) {
  std::vector<double> runs;
  for (int r = 0; r < 5; ++r) {
    M m;
    std::mt19937_64 rng(seed);
    for (unsigned i = 0; i < k; ++i) m.post(i, (i % 16 == 15) ? ~0xffull : ~0ull, i);
    std::vector<uint64_t> q(n);
    for (auto& t : q) t = rng() % k;
    unsigned sink = 0;
    const auto t0 = Clock::now();
    for (uint64_t t : q) {
      const int h = m.match(t);
      sink += static_cast<unsigned>(h);
      if (h >= 0) m.post(t, ~0ull, static_cast<unsigned>(h));
    }
    runs.push_back(secs_since(t0) * 1e9 / n);
    if (sink == 0xffffffffu) std::printf(" ");
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// ---------------------------------------------------------------- engine measurements
struct Ent {
  unsigned srq;
  uint64_t tag, mask;
};

// Batches of lookups at occupancy k: every entry looked up once per batch (random order, all hit),
// then re-posted. kind: "exact" distinct exact tags; "same_tag" one tag for all; "wildcard_25"
// a quarter of the entries ANY_TAG-like (low 32 bits masked), lookups aimed at each entry.
template <class V>
std::string occupancy_point(unsigned n, unsigned k, const char* kind) {
  Drv<V> d(n);
  std::mt19937_64 rng(k * 31 + 7);
  std::vector<Ent> ents;
  const bool same = std::string(kind) == "same_tag", wild = std::string(kind) == "wildcard_25";
  for (unsigned i = 0; i < k; ++i) {
    const unsigned srq = same ? 0 : unsigned(rng() % 16);
    const uint64_t tag = same ? 42 : (rng() << 16) | i;
    const uint64_t mask = (wild && i % 4 == 3) ? ~0ull << 32 : ~0ull;
    ents.push_back({srq, tag & mask, mask});
  }
  for (unsigned i = 0; i < k; ++i) d.op(0, i, ents[i].tag, ents[i].mask, ents[i].srq);
  std::vector<uint32_t> lat;
  uint64_t cyc = 0, span = 0, nlk = 0;
  unsigned hits = 0;
  for (int b = 0; b < std::max(1, 4096 / int(std::max(k, 1u))) && nlk < 4096; ++b) {
    std::vector<unsigned> order(k);
    for (unsigned i = 0; i < k; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::pair<unsigned, uint64_t>> q;
    for (unsigned i : order) q.push_back({ents[i].srq, ents[i].tag | (rng() & ~ents[i].mask)});
    cyc += d.lookups(q, lat, &hits, &span);
    nlk += k;
    // Re-post: the consumed handles (whichever entry each lookup took) are all free again.
    for (unsigned i = 0; i < k; ++i) d.op(0, i, ents[i].tag, ents[i].mask, ents[i].srq);
  }
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "{\"occupancy\": %u, \"kind\": \"%s\", \"lookups\": %llu, \"hits\": %u, \"latency_p50\": %u, "
                "\"latency_p99\": %u, \"latency_max\": %u, \"accept_per_cycle\": %.3f, \"lookups_per_cycle\": %.3f}",
                k, kind, (unsigned long long)nlk, hits, pct(lat, 0.5), pct(lat, 0.99), pct(lat, 1.0),
                double(nlk) / double(span), double(nlk) / double(cyc));
  return buf;
}

template <class V>
std::string op_throughput(unsigned n) {
  Drv<V> d(n);
  // ADD then DEL of every handle, streamed (a new op presented as soon as the last was accepted).
  auto stream = [&](unsigned code) {
    const uint64_t c0 = d.cycles();
    unsigned sent = 0, rsp = 0;
    while (rsp < n) {
      auto& t = d.top();
      t.op_valid_i = sent < n;
      t.op_code_i = code;
      t.op_srq_i = sent % 16;
      t.op_handle_i = sent;
      t.op_tag_i = (uint64_t(sent) * 0x9E3779B97F4A7C15ull) >> 8;
      t.op_mask_i = ~0ull;
      t.op_sw_cnt_vld_i = 0;
      t.eval();
      rsp += t.op_rsp_valid_o;
      if (t.op_valid_i && t.op_ready_o) ++sent;
      d.tick();
    }
    d.top().op_valid_i = 0;
    return double(n) / double(d.cycles() - c0);
  };
  const double add = stream(0);
  const double del = stream(1);
  char buf[128];
  std::snprintf(buf, sizeof buf, "{\"add_per_cycle\": %.3f, \"del_per_cycle\": %.3f}", add, del);
  return buf;
}

template <class V>
std::string sim_speed(unsigned n) {
  Drv<V> d(n);
  for (unsigned i = 0; i < n; ++i) d.op(0, i, (uint64_t(i) << 20) | i, ~0ull, i % 16);  // full list
  const uint64_t cyc = 200000;
  std::vector<double> idle, l16, l1;
  for (int r = 0; r < 3; ++r) {
    idle.push_back(d.speed(0, cyc * 2));
    l16.push_back(d.speed(16, cyc));
    l1.push_back(d.speed(1, cyc));
  }
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  char buf[192];
  std::snprintf(buf, sizeof buf,
                "{\"n_entries\": %u, \"idle_cycles_per_s\": %.0f, \"lookup_every_16_cycles_per_s\": %.0f, "
                "\"lookup_every_cycle_cycles_per_s\": %.0f}",
                n, med(idle), med(l16), med(l1));
  return buf;
}

// Median Fmax (MHz) of the 1024-entry engine placed and routed on ECP5, from the synthesis report.
double pnr_fmax_mhz() {
  std::ifstream f(TMNIC_REPO "/syn/tm_engine_report.json");
  if (!f) return 0;
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string s = ss.str();
  // the default 1024-entry variant's record (the report also holds smaller ones)
  const auto v = s.find("\"key\": \"N_ENTRIES=1024,NUM_SRQ=16,N_CLASS=2,N_WAYS=4,N_BUCKETS=512,");
  if (v == std::string::npos) return 0;
  const auto next = s.find("\"key\":", v + 1);
  const auto p = s.find("\"fmax_median_mhz\"", v);
  if (p == std::string::npos || (next != std::string::npos && p > next)) return 0;
  return std::strtod(s.c_str() + s.find(':', p) + 1, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  Verilated::commandArgs(argc, argv);
  // --probe CYCLES: only the 1024-entry engine, full list, one lookup per cycle, for CYCLES cycles
  // (a fixed workload to count instructions per simulated cycle, e.g. under valgrind --tool=callgrind).
  if (argc == 3 && std::string(argv[1]) == "--probe") {
    Drv<Vtm1024> d(1024);
    for (unsigned i = 0; i < 1024; ++i) d.op(0, i, (uint64_t(i) << 20) | i, ~0ull, i % 16);
    const uint64_t c0 = d.cycles();
    const double cps = d.speed(1, std::strtoull(argv[2], nullptr, 0));
    std::printf("{\"probe_cycles\": %llu, \"cycles_per_s\": %.0f}\n", (unsigned long long)(d.cycles() - c0), cps);
    return 0;
  }
  const auto t0 = Clock::now();
  std::printf("{\n  \"bench\": \"tm_engine\",\n  \"note\": \"engine numbers in simulated cycles; software and "
              "simulation speeds are wall clock on this machine (noisy, median of runs)\",\n");
  std::printf("  \"engine_1024\": {\n    \"lookups\": [");
  const unsigned occs[] = {1, 16, 256, 1024};
  bool first = true;
  for (const char* kind : {"exact", "same_tag", "wildcard_25"})
    for (unsigned k : occs) {
      std::printf("%s\n      %s", first ? "" : ",", occupancy_point<Vtm1024>(1024, k, kind).c_str());
      first = false;
    }
  std::printf("],\n    \"list_ops\": %s},\n", op_throughput<Vtm1024>(1024).c_str());
  std::printf("  \"sim_speed\": [\n    %s,\n    %s],\n", sim_speed<Vtm1024>(1024).c_str(),
              sim_speed<Vtm16k>(16384).c_str());
  const double fmax = pnr_fmax_mhz();
  std::printf("  \"software_ns_per_match\": [");
  for (unsigned i = 0; i < 4; ++i) {
    const unsigned k = occs[i], n = k >= 256 ? 20000 : 200000;
    std::printf("%s\n    {\"occupancy\": %u, \"linked_list\": %.1f, \"hashed\": %.1f}", i ? "," : "", k,
                sw_ns_per_match<ListMatcher>(k, n, 7), sw_ns_per_match<HashMatcher>(k, n, 7));
  }
  std::printf("],\n  \"engine_ns_per_match_at_ecp5_fmax\": ");
  if (fmax > 0)
    std::printf("{\"n_entries\": 1024, \"fmax_mhz\": %.1f, \"ns_per_match_sustained\": %.2f, "
                "\"note\": \"1 decision per cycle; median of the seeds placed (syn/tm_engine_report.json)\"}",
                fmax, 1000.0 / fmax);
  else
    std::printf("null");
  std::printf(",\n  \"bench_wall_s\": %.1f\n}\n", secs_since(t0));
  return 0;
}
