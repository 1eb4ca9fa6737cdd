// Simulation speed of the tests: wall-clock time and [speed] lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace tmnic::tb {

class Stopwatch {
 public:
  Stopwatch() : t0_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// "[speed] <block> <what> <cycles> cycles in <s> s = <k> kcycles/s"
inline void report_speed(const char* block, const char* what, uint64_t cycles, double s) {
  std::printf("[speed] %-14s %-5s %10llu cycles in %6.3f s = %8.0f kcycles/s\n", block, what,
              (unsigned long long)cycles, s, s > 0 ? cycles / s / 1e3 : 0.0);
}

}  // namespace tmnic::tb
