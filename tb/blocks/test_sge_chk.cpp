// tmnic_sge_chk against a model of the IBA local protection check: an SGE passes when its lkey
// selects a valid MR whose key equals it, of the caller's PD, with [addr, addr+length) inside
// [va, va+len) (65-bit sums: no wrap-around) and, for a scatter list, LOCAL_WRITE access. The walk
// emits each passing SGE (index, IOVA = addr - va + iova, length) and stops at the first failure;
// done carries ok (all passed and nsge <= NSGE) and the sum of the passed lengths.
// Checked: the whole output stream of every walk, and its timing (one SGE per cycle, three stages; done
// with the last or the failing SGE's result).
// Stimulus: a random MR table (keys that match or not, PDs, access bits, invalid entries, regions at
// the top of the address space); SGE lists of 0..8 entries whose addresses sit inside, on and one
// byte past each bound, with zero lengths, wrapped sums, foreign keys; random start gaps.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "Vtmnic_sge_chk.h"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "mr.hpp"

using namespace tmnic::tb;

namespace {

constexpr unsigned kNumMr = 64, kNsge = 6, kSgeBits = 128, kKeyShift = 8;

struct Out {
  unsigned idx;
  uint64_t iova;
  uint32_t len;
  bool operator==(const Out& o) const { return idx == o.idx && iova == o.iova && len == o.len; }
};

// The IBA local protection check, written independently of the RTL: 128-bit sums, no wrap.
bool mr_ok(const Mr& m, const Sge& s, uint32_t pd, unsigned need) {
  const unsigned __int128 end_a = static_cast<unsigned __int128>(s.addr) + s.len;
  const unsigned __int128 end_m = static_cast<unsigned __int128>(m.va) + m.len;
  return m.valid && m.key == s.key && m.pd == pd && s.addr >= m.va && end_a <= end_m && (m.access & need) == need;
}

class SgeChkBench {
 public:
  SgeChkBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_sge_chk>(ctx_.get())), rng_(seed),
        cov_(cov) {
    ctx_->randReset(2);
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->start_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    new_table();
  }
  ~SgeChkBench() { top_->final(); }

  void new_table() {
    for (unsigned i = 0; i < kNumMr; ++i) {
      Mr& m = mr_[i];
      m.valid = chance(rng_, 0.9);
      m.key = (i << kKeyShift) | static_cast<uint32_t>(urand(rng_, 0, 255)) | (static_cast<uint32_t>(urand(rng_, 0, 3)) << 14);
      m.pd = static_cast<uint32_t>(urand(rng_, 1, 3));
      m.access = static_cast<uint32_t>(urand(rng_, 0, 7));
      switch (urand(rng_, 0, 3)) {
        case 0: m.len = urand(rng_, 0, 64); break;
        case 1: m.len = urand(rng_, 1, 1ull << 20); break;
        case 2: m.len = urand(rng_, 1, 1ull << 40); break;
        default: m.len = ~0ull - urand(rng_, 0, 1ull << 32); break;  // almost the whole space
      }
      const uint64_t room = ~0ull - m.len;  // va + len must not wrap for a sane region
      m.va = chance(rng_, 0.2) ? room - urand(rng_, 0, std::min<uint64_t>(room, 4096)) : urand(rng_, 0, room);
      m.iova = rng_();
    }
  }

  // One SGE aimed at MR i (or any key), with its address at a chosen place relative to the bounds.
  Sge make_sge() {
    const unsigned i = static_cast<unsigned>(urand(rng_, 0, kNumMr - 1));
    const Mr& m = mr_[i];
    Sge s;
    s.key = chance(rng_, 0.9) ? m.key : static_cast<uint32_t>(rng_());
    const uint64_t span = std::min<uint64_t>(m.len, 1ull << 31);
    switch (urand(rng_, 0, 7)) {
      case 0:  // inside
        s.addr = m.va + urand(rng_, 0, span);
        s.len = static_cast<uint32_t>(urand(rng_, 0, std::min<uint64_t>(m.va + span - s.addr, 0xFFFFFFFFull)));
        break;
      case 1: s.addr = m.va; s.len = static_cast<uint32_t>(std::min<uint64_t>(m.len, 0xFFFFFFFFull)); break;
      case 2:  // ends exactly at the end / one byte past it
      case 3: {
        const uint32_t l = static_cast<uint32_t>(urand(rng_, 1, std::min<uint64_t>(m.len ? m.len : 1, 4096)));
        s.len = l;
        s.addr = m.va + m.len - l + (urand(rng_, 0, 1));
        break;
      }
      case 4: s.addr = m.va - 1; s.len = static_cast<uint32_t>(urand(rng_, 1, 64)); break;  // one byte below
      case 5: s.addr = m.va + m.len; s.len = 0; break;                                     // empty, at the end
      case 6: s.addr = ~0ull - urand(rng_, 0, 16); s.len = static_cast<uint32_t>(urand(rng_, 1, 64)); break;  // sum wraps
      default: s.addr = rng_(); s.len = static_cast<uint32_t>(rng_()); break;
    }
    return s;
  }

  // One walk: a random list (some with every SGE made to pass), then the output stream checked.
  void walk() {
    const unsigned nsge = chance(rng_, 0.1) ? static_cast<unsigned>(urand(rng_, 7, 9))
                                            : static_cast<unsigned>(urand(rng_, 0, kNsge));
    const uint32_t pd = static_cast<uint32_t>(urand(rng_, 1, 3));
    // Access rights the walk needs: none (a gather list), LOCAL_WRITE (a scatter list), or any mask
    // (the responder's rkey check: REMOTE_WRITE or REMOTE_READ).
    const unsigned need = chance(rng_, 0.4) ? 0u : chance(rng_, 0.5) ? 1u : static_cast<unsigned>(urand(rng_, 1, 7));
    const bool all_good = chance(rng_, 0.3);
    std::array<Sge, kNsge> sg{};
    for (unsigned k = 0; k < kNsge; ++k) {
      sg[k] = make_sge();
      if (all_good && k < nsge) {  // steer into a passing SGE of a suitable MR, when one exists
        for (unsigned t = 0; t < 64 && !mr_ok(mr_[mr_index(sg[k].key)], sg[k], pd, need); ++t) sg[k] = make_sge();
      }
    }
    // Model.
    std::vector<Out> exp;
    uint64_t total = 0;
    bool ok = true, failed = false;
    unsigned checked = 0;
    const unsigned n = std::min(nsge, kNsge);
    for (unsigned k = 0; k < n; ++k) {
      ++checked;
      const Mr& m = mr_[mr_index(sg[k].key)];
      if (!mr_ok(m, sg[k], pd, need)) {
        ok = false;
        failed = true;
        note_failure(m, sg[k], pd, need, k, n);
        break;
      }
      exp.push_back({k, sg[k].addr - m.va + m.iova, sg[k].len});
      total += sg[k].len;
    }
    if (nsge > kNsge) {
      ok = false;
      cov_.hit("too_many_sges");
    }
    if (n == 0) cov_.hit("no_sges");
    if (ok && n == kNsge) cov_.hit("six_pass");
    if (ok && n > 0) cov_.hit("all_pass");

    // Drive: a gap, the start, then inputs held until done.
    for (uint64_t g = urand(rng_, 0, 2); g > 0; --g) cycle(false);
    top_->nsge_i = nsge;
    top_->pd_i = pd;
    top_->access_i = need;
    for (unsigned k = 0; k < kNsge; ++k) {
      uint32_t* w = top_->sge_i.data();
      const unsigned b = k * kSgeBits;
      set_bits(w, b, 64, sg[k].addr);
      set_bits(w, b + 64, 32, sg[k].len);
      set_bits(w, b + 96, 32, sg[k].key);
    }
    ASSERT_TRUE(top_->idle_o) << "not idle before a start";
    cycle(true);
    std::vector<Out> got;
    unsigned cycles = 0;
    bool done = false;
    while (!done && cycles < 32) {
      cycle(false);
      ++cycles;
      if (top_->out_valid_o) got.push_back({top_->out_idx_o, top_->out_iova_o, top_->out_len_o});
      if (top_->done_o) {
        done = true;
        EXPECT_EQ(bool(top_->ok_o), ok) << "ok";
        if (ok) {
          EXPECT_EQ(top_->total_o, total) << "total";
        }
      }
    }
    ASSERT_TRUE(done) << "no done";
    // Nothing more from this walk: no SGE and no done after its done.
    for (int q = 0; q < 3; ++q) {
      cycle(false);
      EXPECT_FALSE(top_->out_valid_o || top_->done_o) << "output after done (nsge " << nsge << ")";
    }
    EXPECT_EQ(got.size(), exp.size()) << "SGEs emitted";
    for (size_t k = 0; k < std::min(got.size(), exp.size()); ++k) {
      EXPECT_TRUE(got[k] == exp[k]) << "SGE " << k << ": idx " << got[k].idx << " iova " << std::hex << got[k].iova
                                    << " len " << got[k].len << ", expected idx " << exp[k].idx << " iova "
                                    << exp[k].iova << " len " << exp[k].len;
    }
    // Timing: one SGE per cycle through three stages, each result three cycles after its SGE was
    // taken; done with the last or the failing SGE's result (one cycle after the start when there is
    // none).
    const unsigned want = failed ? checked + 2 : (n == 0 ? 1u : n + 2);
    EXPECT_EQ(cycles, want) << "done after " << cycles << " cycles (nsge " << nsge << ", checked " << checked << ")";
    ++walks_;
  }

  uint64_t walks() const { return walks_; }

 private:
  static unsigned mr_index(uint32_t key) { return (key >> kKeyShift) % kNumMr; }

  void note_failure(const Mr& m, const Sge& s, uint32_t pd, unsigned need, unsigned k, unsigned n) {
    const unsigned __int128 end_a = static_cast<unsigned __int128>(s.addr) + s.len;
    if (!m.valid) cov_.hit("fail_invalid_mr");
    else if (m.key != s.key) cov_.hit("fail_key");
    else if (m.pd != pd) cov_.hit("fail_pd");
    else if (s.addr < m.va) cov_.hit("fail_below");
    else if (end_a > static_cast<unsigned __int128>(m.va) + m.len) {
      cov_.hit(end_a > ~0ull ? "fail_sum_wraps" : "fail_past_end");
    } else if ((need & 1) && !(m.access & 1)) {
      cov_.hit("fail_no_local_write");
    } else if ((m.access & need) != need) {
      cov_.hit("fail_no_remote_access");
    }
    if (k == 0) cov_.hit("fail_first");
    if (k > 0 && k + 1 == n) cov_.hit("fail_last");
  }

  // One clock with the MR read answered as tmnic_ctx's block-RAM port does: mr_rd_i is the MR that
  // mr_idx_o named in the previous cycle.
  void cycle(bool start) {
    top_->start_i = start;
    const Mr& m = mr_[mr_rd_idx_];
    pack_mr(m, top_->mr_rd_i.data());
    top_->eval();
    mr_rd_idx_ = top_->mr_idx_o % kNumMr;
    tick();
  }
  void tick() { clock_tick(*top_, *ctx_); }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_sge_chk> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::array<Mr, kNumMr> mr_{};
  unsigned mr_rd_idx_ = 0;   // the MR mr_rd_i shows (mr_idx_o at the last edge)
  uint64_t walks_ = 0;
};

TEST(SgeChk, WalksAgainstModel) {
  Coverage cov({"fail_invalid_mr", "fail_key", "fail_pd", "fail_below", "fail_past_end", "fail_sum_wraps",
                "fail_no_local_write", "fail_no_remote_access", "fail_first", "fail_last", "too_many_sges", "no_sges", "all_pass",
                "six_pass"});
  uint64_t walks = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    SgeChkBench b(seed, cov);
    for (int t = 0; t < 8 && !HasFailure(); ++t) {
      for (int i = 0; i < 500 && !HasFailure(); ++i) b.walk();
      b.new_table();
    }
    walks += b.walks();
  }
  std::printf("[sge_chk] %llu walks\n", (unsigned long long)walks);
  cov.report("sge_chk");
}

}  // namespace
