// Functional coverage of the randomised tests: named counters, printed as [coverage] lines.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace tmnic::tb {

// Named counters. The ones declared up front must each be hit (report() fails the test for every
// one that stays 0); others are counted and printed only, marked "(info)".
class Coverage {
 public:
  explicit Coverage(std::vector<std::string> names) {
    for (auto& n : names) {
      c_[n] = 0;
      req_[n] = true;
    }
  }
  void hit(const std::string& n, uint64_t k = 1) { c_[n] += k; }
  // Keeps the largest value seen (a high-water mark: hit when it is ever above 0).
  void max(const std::string& n, uint64_t v) {
    auto& x = c_[n];
    if (v > x) x = v;
  }
  uint64_t get(const std::string& n) const { return c_.at(n); }
  // Prints every counter and fails the test for each declared one that was never hit.
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

}  // namespace tmnic::tb
