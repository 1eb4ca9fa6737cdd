// Shared helpers of the per-block RTL tests: seeds, functional-coverage counters, bit access into
// Verilator's packed signals, simulation-speed measurement.
#pragma once

#include <gtest/gtest.h>
#include <verilated.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tmnic::blk {

// Seeds of a randomised test: $TMNIC_SEED (one seed or a comma-separated list) or the defaults.
inline std::vector<uint64_t> seeds(std::vector<uint64_t> defaults) {
  const char* s = std::getenv("TMNIC_SEED");
  if (!s || !*s) return defaults;
  std::vector<uint64_t> v;
  std::string str(s);
  size_t p = 0;
  while (p < str.size()) {
    size_t q = str.find(',', p);
    if (q == std::string::npos) q = str.size();
    if (q > p) v.push_back(std::strtoull(str.substr(p, q - p).c_str(), nullptr, 0));
    p = q + 1;
  }
  return v.empty() ? defaults : v;
}

// Functional coverage: named counters. The ones declared up front must each be hit; others are
// counted and printed only.
class Coverage {
 public:
  explicit Coverage(std::vector<std::string> names) {
    for (auto& n : names) {
      c_[n] = 0;
      req_[n] = true;
    }
  }
  void hit(const std::string& n, uint64_t k = 1) { c_[n] += k; }
  void max(const std::string& n, uint64_t v) {
    auto& x = c_[n];
    if (v > x) x = v;
  }
  uint64_t get(const std::string& n) const { return c_.at(n); }
  // Prints every counter and fails the test for each one that was never hit.
  void report(const char* title) const {
    std::printf("[coverage] %s\n", title);
    for (auto& [n, v] : c_)
      std::printf("[coverage]   %-36s %llu%s\n", n.c_str(), (unsigned long long)v, req_.count(n) ? "" : " (info)");
    for (auto& [n, v] : c_)
      if (req_.count(n)) {
        EXPECT_GT(v, 0u) << "coverage point never hit: " << n;
      }
  }
  void merge(const Coverage& o) {
    for (auto& [n, v] : o.c_) c_[n] += v;
  }

 private:
  std::map<std::string, uint64_t> c_;
  std::map<std::string, bool> req_;
};

// ---- bits of packed signals (little-endian 32-bit words, bit 0 = LSB of word 0) ----------------
inline uint64_t get_bits(const uint32_t* w, unsigned lsb, unsigned width) {
  uint64_t v = 0;
  for (unsigned i = 0; i < width;) {
    const unsigned b = lsb + i, wi = b / 32, bo = b % 32;
    const unsigned n = std::min(32 - bo, width - i);
    const uint64_t part = (static_cast<uint64_t>(w[wi]) >> bo) & ((n == 64) ? ~0ull : ((1ull << n) - 1));
    v |= part << i;
    i += n;
  }
  return v;
}
inline void set_bits(uint32_t* w, unsigned lsb, unsigned width, uint64_t v) {
  for (unsigned i = 0; i < width;) {
    const unsigned b = lsb + i, wi = b / 32, bo = b % 32;
    const unsigned n = std::min(32 - bo, width - i);
    const uint32_t m = (n == 32) ? 0xFFFFFFFFu : (((1u << n) - 1) << bo);
    w[wi] = (w[wi] & ~m) | (static_cast<uint32_t>((v >> i) << bo) & m);
    i += n;
  }
}
inline uint64_t mask64(unsigned n) { return n >= 64 ? ~0ull : ((1ull << n) - 1); }

// Byte i of a DATA_W-bit signal held as 32-bit words.
inline uint8_t byte_of(const uint32_t* w, unsigned i) { return static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4))); }
inline void set_byte(uint32_t* w, unsigned i, uint8_t b) {
  w[i / 4] = (w[i / 4] & ~(0xFFu << (8 * (i % 4)))) | (static_cast<uint32_t>(b) << (8 * (i % 4)));
}

// A byte-enable / keep mask of up to 64 lanes held in a Verilator signal (QData or IData).
inline bool lane(uint64_t m, unsigned i) { return (m >> i) & 1; }

// ---- timing ---------------------------------------------------------------------------------------
class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  std::chrono::steady_clock::time_point t0_;
};
inline void report_speed(const char* block, const char* what, uint64_t cycles, double s) {
  std::printf("[speed] %-14s %-5s %10llu cycles in %6.3f s = %8.0f kcycles/s\n", block, what,
              (unsigned long long)cycles, s, s > 0 ? cycles / s / 1e3 : 0.0);
}

// One clock period of a Verilated block whose clock is clk_i (inputs set before, outputs read after).
template <class Top>
inline void clock_tick(Top& top, VerilatedContext& ctx) {
  top.clk_i = 1;
  top.eval();
  top.clk_i = 0;
  top.eval();
  ctx.timeInc(1);
}

// Random helpers.
inline bool chance(std::mt19937_64& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
inline uint64_t urand(std::mt19937_64& r, uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(r);
}

}  // namespace tmnic::blk
