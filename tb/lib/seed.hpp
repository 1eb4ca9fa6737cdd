// Seeds and random draws of the randomised tests: the one parser of $TMNIC_SEED, the test-size
// knob $TMNIC_TEST_SCALE, and the small draws every bench uses.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace tmnic::tb {

// Seeds of a randomised test: $TMNIC_SEED (one seed or a comma-separated list, decimal or 0x hex)
// or, when it is unset or empty, the test's fixed defaults.
inline std::vector<uint64_t> seeds(std::vector<uint64_t> defaults) {
  const char* s = std::getenv("TMNIC_SEED");
  if (!s || !*s) return defaults;
  std::vector<uint64_t> v;
  const std::string str(s);
  size_t p = 0;
  while (p < str.size()) {
    size_t q = str.find(',', p);
    if (q == std::string::npos) q = str.size();
    if (q > p) v.push_back(std::strtoull(str.substr(p, q - p).c_str(), nullptr, 0));
    p = q + 1;
  }
  return v.empty() ? defaults : v;
}

// Multiplier for the amount of traffic in randomised tests: $TMNIC_TEST_SCALE (default 1).
inline unsigned test_scale() {
  if (const char* s = std::getenv("TMNIC_TEST_SCALE")) {
    const long v = std::strtol(s, nullptr, 0);
    if (v > 0) return static_cast<unsigned>(v);
  }
  return 1;
}

// True with probability p. Always draws one number, whatever p is: a knob at 0 or 1 leaves the
// rest of the random stream as it is with any other value.
inline bool chance(std::mt19937_64& r, double p) { return std::uniform_real_distribution<double>(0, 1)(r) < p; }
// True with probability p, drawing nothing when p <= 0 (the stream bus models' convention: a
// disabled gap or stall knob costs no draw).
inline bool chance_nz(std::mt19937_64& r, double p) {
  return p > 0.0 && std::uniform_real_distribution<double>(0.0, 1.0)(r) < p;
}
// Uniform integer in [lo, hi].
inline uint64_t urand(std::mt19937_64& r, uint64_t lo, uint64_t hi) {
  return std::uniform_int_distribution<uint64_t>(lo, hi)(r);
}

}  // namespace tmnic::tb
