// tmnic_dma_rd against the AXI4 slave memory model (tb/lib/axi_mem.hpp) and a request/response
// scoreboard.
// Stimulus: NCLI clients with random request gaps, random addresses and lengths (1..4096, any
// alignment, 4 KiB crossings over-represented); the slave applies random AR back-pressure, random
// R latency per burst and random gaps between beats (R stays in order, ID 0).
// Checks: every AR burst is legal (beat aligned, no 4 KiB crossing, arlen = beats - 1) and equal
// to the reference split of the request; AR stays stable while stalled; at most MAX_OUT bursts in
// flight; the tagged responses (rsp_client/rsp_off/rsp_be/rsp_last) come in request order, one per
// R beat, and reconstruct exactly the requested bytes (each byte once, nothing outside).
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "Vtmnic_dma_rd.h"
#include "lib/axi_mem.hpp"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kNcli = 3;
constexpr unsigned kMaxOut = 8;

struct Req {
  unsigned client;
  uint64_t addr;
  unsigned len;
};

struct Knobs {
  double req_gap;   // probability that an idle client stays idle this cycle
  double ar_stall;  // probability that arready is low
  double r_gap;     // probability of no beat in a cycle where one could go
  unsigned r_lat_max;
};

class DmaRdBench {
 public:
  DmaRdBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_dma_rd>(ctx_.get())), rng_(seed),
        seed_(seed), mem_{seed}, axi_(mem_), k_(k), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->req_valid_i = 0;
    top_->m_axi_arready_i = 0;
    top_->m_axi_rvalid_i = 0;
    top_->m_axi_rlast_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~DmaRdBench() { top_->final(); }

  // Runs until n requests were issued and answered.
  void run(unsigned n_req, uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((issued_ < n_req || !out_.empty() || any_valid()) && cycles_ < end && !errors_) {
      cycle(issued_ < n_req);
    }
    ASSERT_EQ(errors_, 0u);
    ASSERT_TRUE(out_.empty() && !any_valid()) << out_.size() << " requests unanswered after " << max_cycles << " cycles";
    for (int i = 0; i < 20; ++i) cycle(false);
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(exp_bursts_.empty());
    EXPECT_TRUE(axi_.idle());
    EXPECT_EQ(burst_pulses_, ar_count_) << "burst_o pulses != AR bursts";
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t bytes() const { return bytes_; }

 private:
  struct Active {
    Req r;
    int next_off;  // expected rsp_off of the next beat
    std::vector<uint8_t> seen;
  };

  bool any_valid() const {
    for (auto& c : cli_)
      if (c.valid) return true;
    return false;
  }
  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }

  void cycle(bool gen) {
    // ---- drive inputs
    for (unsigned c = 0; c < kNcli; ++c) {
      auto& cl = cli_[c];
      if (!cl.valid && gen && !chance(rng_, k_.req_gap)) {
        cl.valid = true;
        random_request(rng_, kBytes, cl.r.addr, cl.r.len);
        cl.r.client = c;
      }
      set_bits(top_->req_addr_i.data(), 64 * c, 64, cl.r.addr);
      uint64_t lens = top_->req_len_i;
      lens = (lens & ~(0x1FFFull << (13 * c))) | (static_cast<uint64_t>(cl.r.len) << (13 * c));
      top_->req_len_i = lens;
    }
    uint8_t v = 0;
    for (unsigned c = 0; c < kNcli; ++c) v |= cli_[c].valid << c;
    top_->req_valid_i = v;
    if (__builtin_popcount(v) > 1) cov_.hit("clients_contending");
    top_->m_axi_arready_i = !chance(rng_, k_.ar_stall);
    // R channel: the oldest accepted burst whose latency has passed, with random gaps.
    bool rv = false;
    if (axi_.r_due(cycles_) && !chance(rng_, k_.r_gap)) {
      rv = true;
      axi_.r_beat(top_->m_axi_rdata_i, top_->m_axi_rlast_i);
    } else {
      for (unsigned i = 0; i < kBytes / 4; ++i) top_->m_axi_rdata_i[i] = static_cast<uint32_t>(rng_());
      top_->m_axi_rlast_i = rng_() & 1;
      if (axi_.r_mid_burst()) cov_.hit("r_gap_mid_burst");
    }
    top_->m_axi_rvalid_i = rv;
    top_->eval();

    // ---- sample outputs (before the edge)
    const uint8_t ready = top_->req_ready_o;
    for (unsigned c = 0; c < kNcli; ++c) {
      if ((ready >> c) & 1) {
        if (!cli_[c].valid) fail("req_ready without req_valid on client " + std::to_string(c));
        if (__builtin_popcount(top_->req_valid_i) == 1) cov_.hit("request_alone");
        accept(cli_[c].r);
        cli_[c].valid = false;
      }
    }
    if (__builtin_popcount(ready) > 1) fail("more than one req_ready");
    if (!top_->m_axi_rready_o) fail("rready low (the engine promises to take every beat)");
    // AR
    const bool arv = top_->m_axi_arvalid_o;
    if (ar_stalled_ && (!arv || top_->m_axi_araddr_o != ar_hold_addr_ || top_->m_axi_arlen_o != ar_hold_len_))
      fail("AR changed or dropped while stalled");
    ar_stalled_ = arv && !top_->m_axi_arready_i;
    if (ar_stalled_) {
      ar_hold_addr_ = top_->m_axi_araddr_o;
      ar_hold_len_ = top_->m_axi_arlen_o;
      cov_.hit("ar_stall");
    }
    if (arv && top_->m_axi_arready_i) check_ar(top_->m_axi_araddr_o, top_->m_axi_arlen_o);
    // R beat transfer (rready is checked above to be always high)
    if (rv) axi_.r_taken();
    // Responses (registered: they answer R beats of earlier cycles).
    if (top_->rsp_valid_o != prev_rv_) fail("rsp_valid must follow each R beat by exactly one cycle");
    if (top_->rsp_valid_o) check_rsp();
    if (top_->burst_o) ++burst_pulses_;

    tick();
    prev_rv_ = rv;
  }

  void accept(const Req& r) {
    ++issued_;
    Active a;
    a.r = r;
    a.next_off = -static_cast<int>(r.addr % kBytes);
    a.seen.assign(r.len, 0);
    out_.push_back(std::move(a));
    for (auto& b : split_bursts(r.addr, r.len, kBytes)) exp_bursts_.push_back(b);
    if (r.addr % kBytes) cov_.hit("start_unaligned");
    if ((r.addr + r.len) % kBytes) cov_.hit("end_unaligned");
    if ((r.addr >> 12) != ((r.addr + r.len - 1) >> 12)) cov_.hit("crosses_4k");
    if (r.len == 4096) cov_.hit("len_4096");
    if (r.len == 1) cov_.hit("len_1");
    if (r.addr >> 63) cov_.hit("addr_bit63");
    if (r.len == 4096 && r.addr % 4096 == 0) cov_.hit("len_4096_page_aligned");
    const uint64_t bb = (r.addr + r.len - 1) / kBytes - r.addr / kBytes + 1;
    if (bb == 1) cov_.hit("single_beat");
    if (r.addr % kBytes && bb == 1 && (r.addr + r.len) % kBytes) cov_.hit("inside_one_beat_both_ends_unaligned");
    bytes_ += r.len;
  }

  void check_ar(uint64_t addr, unsigned arlen) {
    const unsigned beats = arlen + 1;
    ++ar_count_;
    if (addr % kBytes) fail("araddr not beat aligned");
    if ((addr >> 12) != ((addr + static_cast<uint64_t>(beats) * kBytes - 1) >> 12)) fail("AR burst crosses 4 KiB");
    if (exp_bursts_.empty()) {
      fail("unexpected AR burst");
      return;
    }
    const Burst e = exp_bursts_.front();
    exp_bursts_.pop_front();
    if (e.addr != addr || e.beats != beats)
      fail("AR burst 0x" + hex(addr) + " len " + std::to_string(beats) + ", expected 0x" + hex(e.addr) + " len " +
           std::to_string(e.beats));
    if (beats == 4096 / kBytes) cov_.hit("ar_full_page_burst");
    if (axi_.rd_bursts() >= kMaxOut) fail("more than MAX_OUT bursts in flight");
    axi_.ar(addr, arlen, cycles_ + 1 + urand(rng_, 0, k_.r_lat_max));
    cov_.max("max_bursts_in_flight", axi_.rd_bursts());
    if (axi_.rd_bursts() == kMaxOut) cov_.hit("bursts_in_flight_at_max");
  }

  void check_rsp() {
    if (out_.empty()) {
      fail("response without an outstanding request");
      return;
    }
    auto& a = out_.front();
    const Req& r = a.r;
    if (top_->rsp_client_o != r.client)
      fail("rsp_client " + std::to_string(top_->rsp_client_o) + " expected " + std::to_string(r.client));
    const int off = static_cast<int16_t>(static_cast<uint16_t>(top_->rsp_off_o << 2)) >> 2;  // 14-bit signed
    if (off != a.next_off) fail("rsp_off " + std::to_string(off) + " expected " + std::to_string(a.next_off));
    if (off < 0) cov_.hit("rsp_off_negative");
    a.next_off += kBytes;
    const uint64_t be = top_->rsp_be_o;
    for (unsigned i = 0; i < kBytes; ++i) {
      const long j = off + static_cast<long>(i);
      const bool want = j >= 0 && j < static_cast<long>(r.len);
      if (lane(be, i) != want) {
        fail("rsp_be lane " + std::to_string(i) + " (request byte " + std::to_string(j) + ") is " +
             std::to_string(lane(be, i)) + " for a " + std::to_string(r.len) + "-byte request");
        return;
      }
      if (!want) continue;
      const uint8_t got = byte_of(top_->rsp_data_o.data(), i);
      const uint8_t exp = mem_byte(seed_, r.addr + j);
      if (got != exp) {
        fail("rsp data byte " + std::to_string(j) + " of request at 0x" + hex(r.addr) + ": got " +
             std::to_string(got) + " expected " + std::to_string(exp));
        return;
      }
      if (a.seen[j]++) fail("request byte delivered twice");
    }
    const bool last = r.addr + off + kBytes >= r.addr + r.len;
    if (top_->rsp_last_o != last) fail(std::string("rsp_last ") + (last ? "missing" : "early"));
    if (last) {
      for (unsigned j = 0; j < r.len; ++j)
        if (!a.seen[j]) {
          fail("request byte " + std::to_string(j) + " never delivered");
          break;
        }
      ++answered_;
      out_.pop_front();
    }
  }

  struct Cli {
    bool valid = false;
    Req r{0, 0, 1};
  };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_dma_rd> top_;
  std::mt19937_64 rng_;
  uint64_t seed_;
  SeedMem mem_;                   // host memory: mem_byte(seed, address)
  AxiMem<kBytes, SeedMem> axi_;  // the AXI4 read slave in front of it
  Knobs k_;
  Coverage& cov_;
  Cli cli_[kNcli];
  std::deque<Active> out_;
  std::deque<Burst> exp_bursts_;
  bool prev_rv_ = false;
  uint64_t ar_count_ = 0;
  bool ar_stalled_ = false;
  uint64_t ar_hold_addr_ = 0;
  unsigned ar_hold_len_ = 0;
  uint64_t cycles_ = 0, issued_ = 0, answered_ = 0, bytes_ = 0, burst_pulses_ = 0;
  unsigned errors_ = 0;

 public:
  uint64_t burst_pulses() const { return burst_pulses_; }
};

Coverage make_cov() {
  return Coverage({"clients_contending", "ar_stall", "r_gap_mid_burst", "start_unaligned", "end_unaligned",
                   "crosses_4k", "len_4096", "len_1", "addr_bit63", "len_4096_page_aligned", "single_beat",
                   "inside_one_beat_both_ends_unaligned", "ar_full_page_burst", "max_bursts_in_flight",
                   "bursts_in_flight_at_max", "rsp_off_negative", "request_alone"});
}

TEST(DmaRd, RandomRequestsAgainstAxiMemory) {
  Coverage cov = make_cov();
  // Mixes: heavy back-pressure with long latency, light back-pressure, and a saturating client mix.
  const Knobs mixes[] = {{0.3, 0.5, 0.3, 40}, {0.05, 0.1, 0.05, 4}, {0.0, 0.2, 0.1, 60}, {0.97, 0.3, 0.2, 10}};
  uint64_t cyc = 0, bytes = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " mix ar_stall " + std::to_string(k.ar_stall));
      DmaRdBench b(seed, k, cov);
      Stopwatch sw;
      b.run(6000, 12000000);
      secs += sw.seconds();
      cyc += b.cycles();
      bytes += b.bytes();
      if (HasFatalFailure()) return;
    }
  }
  report_speed("dma_rd", "busy", cyc, secs);
  std::printf("[dma_rd] %llu request bytes read\n", (unsigned long long)bytes);
  cov.report("dma_rd");
}

TEST(DmaRd, IdleSpeed) {
  Coverage cov = make_cov();
  DmaRdBench b(9, {1.0, 0, 0, 0}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("dma_rd", "idle", 300000, sw.seconds());
}

}  // namespace
