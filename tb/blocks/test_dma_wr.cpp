// tmnic_dma_wr against the AXI4 slave model (tb/lib/axi_mem.hpp, its write side) and per-client
// data buffers.
// Stimulus: NCLI clients with random request gaps, random addresses and lengths (1..4096, any
// alignment); each client answers a data pull TB_DATA_LAT cycles after data_req_o from its buffer
// (random garbage in every other cycle and outside the request, so that timing or strobe errors show);
// the slave applies independent random AW/W back-pressure, either accepting W before its AW or
// only after it, and answers B with random latency.
// Checks: AW bursts legal and equal to the reference split (aligned, no 4 KiB crossing, awlen);
// AW/W stable while stalled; every W beat in order with WLAST on the burst's last beat, strobes
// exactly the requested bytes of the beat and the client's data on them; data_off_o of every pull;
// done_o once per request, in the cycle after its last beat is accepted on W; burst_o per AW; idle_o
// never while anything is outstanding and set again once everything is answered.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "Vtmnic_dma_wr.h"
#include "lib/axi_mem.hpp"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_DATA_LAT
#define TB_DATA_LAT 1
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kNcli = 2;
constexpr unsigned kLat = TB_DATA_LAT;  // cycles from data_req_o to the client's answer

struct Knobs {
  double req_gap;
  double aw_stall;
  double w_stall;
  bool w_after_aw;  // slave takes W beats of a burst only after its AW
  unsigned b_lat_max;
};

class DmaWrBench {
 public:
  DmaWrBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_dma_wr>(ctx_.get())), rng_(seed),
        axi_(mem_), k_(k), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->req_valid_i = 0;
    top_->m_axi_awready_i = 0;
    top_->m_axi_wready_i = 0;
    top_->m_axi_bvalid_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~DmaWrBench() { top_->final(); }

  void run(unsigned n_req, uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((issued_ < n_req || !everything_done() || any_valid()) && cycles_ < end && !errors_) cycle(issued_ < n_req);
    ASSERT_EQ(errors_, 0u);
    ASSERT_TRUE(everything_done()) << "requests unfinished after " << max_cycles << " cycles";
    for (int i = 0; i < 10; ++i) cycle(false);
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(top_->idle_o) << "idle_o low with nothing outstanding";
    EXPECT_EQ(burst_pulses_, aw_count_) << "burst_o pulses != AW bursts";
    EXPECT_EQ(done_count_, issued_) << "done_o pulses != requests";
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t done_before_w() const { return done_before_w_; }
  uint64_t requests() const { return issued_; }

 private:
  struct Req {
    unsigned client;
    uint64_t addr;
    unsigned len;
    std::vector<uint8_t> data;
    unsigned beats = 0, pulled = 0, w_beats = 0;
    bool done = false;
  };
  struct Beat {  // one W beat, in order
    size_t req;
    uint64_t addr;
    bool last;  // last beat of its burst
  };

  bool everything_done() const {
    return w_next_ == beats_.size() && pull_next_ == beats_.size() && axi_.b_outstanding() == 0 &&
           aw_next_ == bursts_.size();
  }
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
    for (unsigned c = 0; c < kNcli; ++c) {   // W acceptances of the previous cycle are due now
      if (done_due_next_[c] >= 0) done_due_[c] = done_due_next_[c];
      done_due_next_[c] = -1;
    }
    // ---- inputs
    for (unsigned c = 0; c < kNcli; ++c) {
      auto& cl = cli_[c];
      if (!cl.valid && gen && !chance(rng_, k_.req_gap)) {
        cl.valid = true;
        random_request(rng_, kBytes, cl.addr, cl.len);
      }
      set_bits(top_->req_addr_i.data(), 64 * c, 64, cl.addr);
      uint32_t lens = top_->req_len_i;
      lens = (lens & ~(0x1FFFu << (13 * c))) | (cl.len << (13 * c));
      top_->req_len_i = lens;
    }
    top_->req_valid_i = (cli_[0].valid ? 1 : 0) | (cli_[1].valid ? 2 : 0);
    // Client data: the answer to the pull of kLat cycles ago, garbage elsewhere.
    for (unsigned c = 0; c < kNcli; ++c) {
      uint32_t* w = top_->data_i.data() + c * (TB_DATA_W / 32);
      for (unsigned i = 0; i < TB_DATA_W / 32; ++i) w[i] = static_cast<uint32_t>(rng_());
      const Pull& p = pulls_[c][cycles_ % kLat];
      if (p.req >= 0) {
        const Req& r = reqs_[static_cast<size_t>(p.req)];
        for (unsigned i = 0; i < kBytes; ++i) {
          const long j = p.off + static_cast<long>(i);
          if (j >= 0 && j < static_cast<long>(r.len)) set_byte(w, i, r.data[static_cast<size_t>(j)]);
        }
      }
    }
    top_->m_axi_awready_i = !chance(rng_, k_.aw_stall);
    bool wr = !chance(rng_, k_.w_stall);
    if (k_.w_after_aw && w_next_ < beats_.size() && !axi_.w_has_aw()) wr = false;
    top_->m_axi_wready_i = wr;
    const bool bv = axi_.b_valid(cycles_);
    top_->m_axi_bvalid_i = bv;
    top_->eval();

    // ---- outputs
    if (!top_->m_axi_bready_o) fail("bready low");
    // idle_o: never while something is outstanding.
    const bool busy = pull_next_ < beats_.size() || w_next_ < beats_.size() || axi_.b_outstanding() > 0 ||
                      aw_next_ < bursts_.size() || top_->m_axi_awvalid_o;
    if (top_->idle_o && busy) fail("idle_o while work is outstanding");
    if (!busy && !any_accept_since_ && quiet_ >= 2 && !top_->idle_o) fail("idle_o low although everything is done");
    quiet_ = busy ? 0 : quiet_ + 1;
    if (busy && top_->idle_o == 0) cov_.hit("idle_low_while_busy");
    // done_o: in the cycle after the request's last beat was accepted on W.
    const unsigned done = top_->done_o;
    for (unsigned c = 0; c < kNcli; ++c) {
      const bool exp = done_due_[c] >= 0;
      if (((done >> c) & 1) != exp) fail(std::string("done_o[") + std::to_string(c) + "] " + (exp ? "missing" : "unexpected"));
      if (exp) {
        Req& r = reqs_[static_cast<size_t>(done_due_[c])];
        r.done = true;
        ++done_count_;
        // Comment contract: "the request's last beat went to the W channel".
        if (r.w_beats < r.beats) {
          ++done_before_w_;
          cov_.hit("done_before_last_w_beat");
        }
      }
      done_due_[c] = -1;
    }
    // (this cycle's W acceptance is recorded below, in check_w, into done_due_next_)
    // Pulls (before acceptance: a request granted this cycle is pulled from the next cycle on).
    const unsigned dreq = top_->data_req_o;
    // This cycle's pulls replace those of kLat cycles ago (answered above).
    for (unsigned c = 0; c < kNcli; ++c) pulls_[c][cycles_ % kLat] = Pull{};
    if (dreq) {
      if (__builtin_popcount(dreq) != 1) fail("data_req_o to several clients");
      if (pull_next_ >= beats_.size()) {
        fail("data_req_o without a request");
      } else {
        const Beat& b = beats_[pull_next_];
        Req& r = reqs_[b.req];
        const unsigned c = static_cast<unsigned>(__builtin_ctz(dreq));
        if (c != r.client) fail("data_req_o to client " + std::to_string(c) + ", request of " + std::to_string(r.client));
        const int off = static_cast<int16_t>(static_cast<uint16_t>(top_->data_off_o << 2)) >> 2;
        const long exp_off = static_cast<long>(b.addr - r.addr);
        if (off != exp_off) fail("data_off_o " + std::to_string(off) + " expected " + std::to_string(exp_off));
        pulls_[c][cycles_ % kLat] = Pull{static_cast<long>(b.req), exp_off};
        ++r.pulled;
        ++pull_next_;
      }
    }
    // Request acceptance.
    const unsigned rdy = top_->req_ready_o;
    if (__builtin_popcount(rdy) > 1) fail("several req_ready");
    any_accept_since_ = false;
    for (unsigned c = 0; c < kNcli; ++c)
      if ((rdy >> c) & 1) {
        if (!cli_[c].valid) fail("req_ready without req_valid");
        accept(c);
        cli_[c].valid = false;
        any_accept_since_ = true;
      }
    if (cli_[0].valid && cli_[1].valid) cov_.hit("clients_contending");
    // AW
    const bool awv = top_->m_axi_awvalid_o;
    if (aw_stalled_ && (!awv || top_->m_axi_awaddr_o != aw_addr_ || top_->m_axi_awlen_o != aw_len_))
      fail("AW changed or dropped while stalled");
    aw_stalled_ = awv && !top_->m_axi_awready_i;
    aw_addr_ = top_->m_axi_awaddr_o;
    aw_len_ = top_->m_axi_awlen_o;
    if (aw_stalled_) cov_.hit("aw_stall");
    if (awv && top_->m_axi_awready_i) check_aw(top_->m_axi_awaddr_o, top_->m_axi_awlen_o);
    // W
    const bool wv = top_->m_axi_wvalid_o;
    if (w_stalled_) {
      bool same = wv && top_->m_axi_wstrb_o == w_strb_ && top_->m_axi_wlast_o == w_last_;
      for (unsigned i = 0; same && i < TB_DATA_W / 32; ++i) same = top_->m_axi_wdata_o[i] == w_data_[i];
      if (!same) fail("W beat changed or dropped while stalled");
    }
    w_stalled_ = wv && !wr;
    if (w_stalled_) {
      cov_.hit("w_stall");
      w_strb_ = top_->m_axi_wstrb_o;
      w_last_ = top_->m_axi_wlast_o;
      for (unsigned i = 0; i < TB_DATA_W / 32; ++i) w_data_[i] = top_->m_axi_wdata_o[i];
    }
    if (wv && wr) check_w();
    // B (bready is checked above to be always high)
    if (bv) axi_.b_taken();
    axi_.apply_writes(cycles_);
    if (!axi_.ok()) fail("AXI slave: " + axi_.errors());
    if (top_->burst_o) ++burst_pulses_;
    tick();
  }

  void accept(unsigned c) {
    ++issued_;
    Req r;
    r.client = c;
    r.addr = cli_[c].addr;
    r.len = cli_[c].len;
    r.data.resize(r.len);
    for (auto& d : r.data) d = static_cast<uint8_t>(rng_());
    const size_t ri = reqs_.size();
    for (auto& b : split_bursts(r.addr, r.len, kBytes)) {
      bursts_.push_back(b);
      for (unsigned k = 0; k < b.beats; ++k) beats_.push_back({ri, b.addr + uint64_t(k) * kBytes, k + 1 == b.beats});
      r.beats += b.beats;
    }
    if (r.addr % kBytes) cov_.hit("start_unaligned");
    if ((r.addr + r.len) % kBytes) cov_.hit("end_unaligned");
    if ((r.addr >> 12) != ((r.addr + r.len - 1) >> 12)) cov_.hit("crosses_4k");
    if (r.len == 4096) cov_.hit("len_4096");
    if (r.len == 1) cov_.hit("len_1");
    if (r.addr >> 63) cov_.hit("addr_bit63");
    if (r.beats == 1) cov_.hit("single_beat");
    bytes_ += r.len;
    reqs_.push_back(std::move(r));
  }

  void check_aw(uint64_t addr, unsigned awlen) {
    const unsigned beats = awlen + 1;
    ++aw_count_;
    if (addr % kBytes) fail("awaddr not beat aligned");
    if ((addr >> 12) != ((addr + uint64_t(beats) * kBytes - 1) >> 12)) fail("AW burst crosses 4 KiB");
    if (aw_next_ >= bursts_.size()) {
      fail("unexpected AW");
      return;
    }
    const Burst& b = bursts_[aw_next_];
    if (b.addr != addr || b.beats != beats)
      fail("AW " + std::to_string(addr) + "/" + std::to_string(beats) + " expected " + std::to_string(b.addr) + "/" +
           std::to_string(b.beats));
    if (axi_.w_early() > 0) cov_.hit("w_before_aw");
    if (beats == 4096 / kBytes) cov_.hit("aw_full_page_burst");
    if (axi_.aw(addr, awlen)) burst_complete();
    ++aw_next_;
  }

  void check_w() {
    if (w_next_ >= beats_.size()) {
      fail("unexpected W beat");
      return;
    }
    const Beat& b = beats_[w_next_];
    Req& r = reqs_[b.req];
    if (top_->m_axi_wlast_o != b.last) fail(std::string("WLAST ") + (b.last ? "missing" : "on a middle beat"));
    const uint64_t strb = top_->m_axi_wstrb_o;
    for (unsigned i = 0; i < kBytes; ++i) {
      const uint64_t a = b.addr + i;
      const bool want = a >= r.addr && a < r.addr + r.len;
      if (lane(strb, i) != want) {
        fail("WSTRB lane " + std::to_string(i) + " = " + std::to_string(lane(strb, i)) + " for beat at +" +
             std::to_string(static_cast<long>(b.addr - r.addr)) + " of a " + std::to_string(r.len) + "-byte request");
        return;
      }
      if (want && byte_of(top_->m_axi_wdata_o.data(), i) != r.data[a - r.addr]) {
        fail("W data byte " + std::to_string(a - r.addr) + " wrong");
        return;
      }
    }
    if (strb != (kBytes == 64 ? ~0ull : ((1ull << kBytes) - 1))) cov_.hit("w_partial_strobe");
    if (++r.w_beats == r.beats) done_due_next_[r.client] = static_cast<long>(b.req);
    if (axi_.w(top_->m_axi_wdata_o, strb, top_->m_axi_wlast_o, cycles_)) burst_complete();
    ++w_next_;
  }

  // A burst has its AW and all its W beats: its B comes after a random latency, in order.
  void burst_complete() {
    axi_.b_push(cycles_ + 1 + urand(rng_, 0, k_.b_lat_max));
    cov_.max("max_b_outstanding", axi_.b_outstanding());
  }

  struct Cli {
    bool valid = false;
    uint64_t addr = 0;
    unsigned len = 1;
  };
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_dma_wr> top_;
  std::mt19937_64 rng_;
  NullMem mem_;                  // W beats are checked as they come (check_w), not in memory
  AxiMem<kBytes, NullMem> axi_;  // the AXI4 write slave: bursts, W before/after AW, B order
  Knobs k_;
  Coverage& cov_;
  Cli cli_[kNcli];
  std::deque<Req> reqs_;
  std::vector<Burst> bursts_;
  std::vector<Beat> beats_;
  size_t pull_next_ = 0, w_next_ = 0, aw_next_ = 0;
  struct Pull {
    long req = -1;  // request index, -1: no pull
    long off = 0;
  };
  Pull pulls_[kNcli][kLat];  // the pulls of the last kLat cycles per client, by cycle mod kLat
  long done_due_[kNcli] = {-1, -1};
  long done_due_next_[kNcli] = {-1, -1};
  bool aw_stalled_ = false, w_stalled_ = false, w_last_ = false, any_accept_since_ = false;
  uint64_t aw_addr_ = 0, w_strb_ = 0;
  unsigned aw_len_ = 0, quiet_ = 0;
  uint32_t w_data_[TB_DATA_W / 32] = {};
  uint64_t cycles_ = 0, issued_ = 0, bytes_ = 0, burst_pulses_ = 0, aw_count_ = 0, done_count_ = 0, done_before_w_ = 0;
  unsigned errors_ = 0;
};

Coverage make_cov() {
  return Coverage({"idle_low_while_busy", "clients_contending", "aw_stall", "w_stall", "w_before_aw",
                   "aw_full_page_burst", "w_partial_strobe", "start_unaligned", "end_unaligned", "crosses_4k",
                   "len_4096", "len_1", "addr_bit63", "single_beat", "max_b_outstanding"});
}

const Knobs kMixes[] = {
    {0.3, 0.5, 0.5, false, 30},  // heavy back-pressure, W may lead AW
    {0.3, 0.3, 0.4, true, 60},   // W only after AW, long B latency
    {0.0, 0.05, 0.05, false, 3}, // saturating
    {0.95, 0.2, 0.2, true, 8},   // sparse requests
};

TEST(DmaWr, RandomRequestsAgainstAxiSlave) {
  Coverage cov = make_cov();
  uint64_t cyc = 0, bytes = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    for (const Knobs& k : kMixes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " w_stall " + std::to_string(k.w_stall));
      DmaWrBench b(seed, k, cov);
      Stopwatch sw;
      b.run(5000, 16000000);
      secs += sw.seconds();
      cyc += b.cycles();
      bytes += b.bytes();
      if (HasFatalFailure()) return;
    }
  }
  report_speed("dma_wr", "busy", cyc, secs);
  std::printf("[dma_wr] %llu request bytes written\n", (unsigned long long)bytes);
  cov.report("dma_wr");
}

// The port comment of done_o says "the request's last beat went to the W channel". The CQ writer
// counts a CQE as written and raises irq_o on done; this checks the documented ordering.
TEST(DmaWr, DoneOnlyAfterLastWBeatAsDocumented) {
  Coverage cov = make_cov();
  DmaWrBench b(11, {0.3, 0.3, 0.6, false, 10}, cov);
  b.run(500, 2000000);
  EXPECT_EQ(b.done_before_w(), 0u) << "done_o pulsed before the request's last beat was accepted on W "
                                   << b.done_before_w() << " times in " << b.requests() << " requests";
}

TEST(DmaWr, IdleSpeed) {
  Coverage cov = make_cov();
  DmaWrBench b(9, {1.0, 0, 0, false, 0}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("dma_wr", "idle", 300000, sw.seconds());
}

}  // namespace
