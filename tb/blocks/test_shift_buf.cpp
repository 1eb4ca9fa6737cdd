// tmnic_shift_buf against a byte-array model: random unaligned window writes with byte enables
// (wrapping at the buffer end) and random window reads, every read compared TB_RD_LAT cycles after
// it was issued (back-to-back reads pipelined); the read port holds its data when not enabled; a
// read and a write in the same cycle see the old bytes.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "Vtmnic_shift_buf.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_DEPTH
#define TB_DEPTH 512
#endif
#ifndef TB_RD_LAT
#define TB_RD_LAT 1
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kSize = TB_DEPTH * kBytes;  // buffer bytes
constexpr unsigned kWords = TB_DATA_W / 32;

class ShiftBufBench {
 public:
  explicit ShiftBufBench(uint64_t seed)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_shift_buf>(ctx_.get())), rng_(seed),
        mem_(kSize, 0) {
    top_->clk_i = 0;
    top_->wr_en_i = 0;
    top_->rd_en_i = 0;
    top_->eval();
  }
  ~ShiftBufBench() { top_->final(); }

  std::mt19937_64& rng() { return rng_; }

  // One clock cycle with the given port values; checks the read result after the edge.
  void cycle(bool wr, unsigned wpos, const uint8_t* wdata, uint64_t be, bool rd, unsigned rpos) {
    top_->wr_en_i = wr;
    top_->wr_pos_i = wpos;
    for (unsigned i = 0; i < kBytes; ++i) set_byte(top_->wr_data_i.data(), i, wdata[i]);
    top_->wr_be_i = be;
    top_->rd_en_i = rd;
    top_->rd_pos_i = rpos;
    top_->eval();
    // Model: the read sees the bytes before this cycle's write; its data shows TB_RD_LAT edges later.
    if (rd) {
      Pending p{cycles_ + TB_RD_LAT, rpos, std::vector<uint8_t>(kBytes)};
      for (unsigned i = 0; i < kBytes; ++i) p.exp[i] = mem_[(rpos + i) % kSize];
      pend_.push_back(std::move(p));
    }
    if (wr)
      for (unsigned i = 0; i < kBytes; ++i)
        if (lane(be, i)) mem_[(wpos + i) % kSize] = wdata[i];
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    top_->eval();
    ++cycles_;
    bool fresh = false;
    while (!pend_.empty() && pend_.front().due <= cycles_) {
      cur_ = std::move(pend_.front());
      pend_.pop_front();
      cov_rd_ = fresh = true;
    }
    if (cov_rd_) {
      for (unsigned i = 0; i < kBytes; ++i) {
        const uint8_t got = byte_of(top_->rd_data_o.data(), i);
        if (got != cur_.exp[i]) {
          ADD_FAILURE() << "cycle " << cycles_ << " read at " << cur_.rpos << " lane " << i << ": got 0x"
                        << std::hex << unsigned(got) << " exp 0x" << unsigned(cur_.exp[i]) << std::dec
                        << (fresh ? "" : " (hold, no read due)");
          ++errors_;
          return;
        }
      }
    }
  }
  uint64_t cycles() const { return cycles_; }
  unsigned errors() const { return errors_; }

 private:
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_shift_buf> top_;
  std::mt19937_64 rng_;
  std::vector<uint8_t> mem_;
  struct Pending {
    uint64_t due;  // cycle count after the edge that shows the data
    unsigned rpos;
    std::vector<uint8_t> exp;
  };
  std::deque<Pending> pend_;  // reads in flight
  Pending cur_;               // the read whose data rd_data_o holds
  bool cov_rd_ = false;
  uint64_t cycles_ = 0;
  unsigned errors_ = 0;
};

uint64_t full_be() { return kBytes == 64 ? ~0ull : ((1ull << kBytes) - 1); }

TEST(ShiftBuf, RandomWindowsAgainstByteModel) {
  Coverage cov({"write_unaligned", "write_wraps_end", "write_partial_be", "write_empty_be", "write_contig_range",
                "read_unaligned", "read_wraps_end", "read_same_cycle_overlap", "read_hold_no_en",
                "read_after_write_next_cycle"});
  uint64_t total_cycles = 0;
  double total_s = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    ShiftBufBench b(seed);
    auto& r = b.rng();
    uint8_t data[kBytes];
    // Fill the whole buffer so every read is defined.
    for (unsigned p = 0; p < kSize; p += kBytes) {
      for (auto& d : data) d = static_cast<uint8_t>(r());
      b.cycle(true, p, data, full_be(), false, 0);
    }
    Stopwatch sw;
    const uint64_t c0 = b.cycles();
    unsigned last_wpos = 0;
    bool last_wr = false;
    for (int n = 0; n < 150000 && !b.errors(); ++n) {
      auto pick_pos = [&]() -> unsigned {
        switch (urand(r, 0, 5)) {
          case 0: return static_cast<unsigned>(urand(r, 0, TB_DEPTH - 1)) * kBytes;            // aligned
          case 1: return static_cast<unsigned>(kSize - urand(r, 1, kBytes - 1));              // wraps the end
          case 2: return (last_wpos + static_cast<unsigned>(urand(r, 0, 2 * kBytes))) % kSize;  // near the last write
          default: return static_cast<unsigned>(urand(r, 0, kSize - 1));
        }
      };
      const bool wr = chance(r, 0.6);
      const unsigned wpos = pick_pos();
      for (auto& d : data) d = static_cast<uint8_t>(r());
      uint64_t be;
      switch (urand(r, 0, 4)) {
        case 0: be = full_be(); break;
        case 1: be = 0; break;
        case 2: {  // contiguous range of lanes, as the DMA and gather logic produce
          const unsigned lo = static_cast<unsigned>(urand(r, 0, kBytes - 1));
          const unsigned hi = static_cast<unsigned>(urand(r, lo + 1, kBytes));
          be = (hi - lo >= 64 ? ~0ull : ((1ull << (hi - lo)) - 1)) << lo;
          if (wr) cov.hit("write_contig_range");
          break;
        }
        default: be = r() & full_be();
      }
      const bool rd = chance(r, 0.6);
      unsigned rpos;
      if (wr && chance(r, 0.2)) rpos = (wpos + kSize - static_cast<unsigned>(urand(r, 0, kBytes - 1))) % kSize;
      else if (last_wr && chance(r, 0.2)) rpos = last_wpos;
      else rpos = pick_pos();
      if (wr) {
        if (wpos % kBytes) cov.hit("write_unaligned");
        if (wpos + kBytes > kSize && (be >> (kSize - wpos))) cov.hit("write_wraps_end");
        if (be != full_be() && be) cov.hit("write_partial_be");
        if (!be) cov.hit("write_empty_be");
      }
      if (rd) {
        if (rpos % kBytes) cov.hit("read_unaligned");
        if (rpos + kBytes > kSize) cov.hit("read_wraps_end");
        if (wr && be) {
          const unsigned d = (wpos + kSize - rpos) % kSize;
          if (d < kBytes || (rpos + kSize - wpos) % kSize < kBytes) cov.hit("read_same_cycle_overlap");
        }
        if (last_wr && rpos == last_wpos) cov.hit("read_after_write_next_cycle");
      } else {
        cov.hit("read_hold_no_en");
      }
      b.cycle(wr, wpos, data, be, rd, rpos);
      last_wr = wr;
      if (wr) last_wpos = wpos;
    }
    EXPECT_EQ(b.errors(), 0u);
    total_cycles += b.cycles() - c0;
    total_s += sw.seconds();
  }
  report_speed("shift_buf", "busy", total_cycles, total_s);
  cov.report("shift_buf");
}

TEST(ShiftBuf, IdleSpeed) {
  ShiftBufBench b(7);
  uint8_t data[kBytes] = {};
  Stopwatch sw;
  const uint64_t n = 300000;
  for (uint64_t i = 0; i < n; ++i) b.cycle(false, 0, data, 0, false, 0);
  report_speed("shift_buf", "idle", n, sw.seconds());
}

}  // namespace
