// Reference helpers of the DMA tests: deterministic host-memory contents, the reference split of a
// request into AXI bursts, random requests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace tmnic::tb {

// Deterministic "host memory" byte at an address (reads), different per byte, page and seed.
inline uint8_t mem_byte(uint64_t seed, uint64_t a) {
  uint64_t z = (a >> 3) * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<uint8_t>(z >> (8 * (a & 7)));
}

// Read-only memory of mem_byte(seed, addr), for AxiMem (axi_mem.hpp); writes are dropped.
struct SeedMem {
  uint64_t seed;
  void read(uint64_t a, uint8_t* dst, size_t n) const {
    for (size_t i = 0; i < n; ++i) dst[i] = mem_byte(seed, a + i);
  }
  void write(uint64_t, const uint8_t*, size_t, const uint8_t*) {}
};

struct Burst {
  uint64_t addr;   // aligned to the beat
  unsigned beats;  // 1..(4096 / beat bytes)
};

// Reference split of a byte-granular request into AXI bursts: beat-aligned, never crossing 4 KiB,
// covering exactly the beats that hold requested bytes.
inline std::vector<Burst> split_bursts(uint64_t addr, unsigned len, unsigned beat_bytes) {
  std::vector<Burst> v;
  const uint64_t end = addr + len;
  uint64_t a = addr & ~static_cast<uint64_t>(beat_bytes - 1);
  while (a < end) {
    const uint64_t page_end = (a | 0xFFFull) + 1;
    const uint64_t be = end < page_end ? end : page_end;
    const unsigned beats = static_cast<unsigned>((be - a + beat_bytes - 1) / beat_bytes);
    v.push_back({a, beats});
    a += static_cast<uint64_t>(beats) * beat_bytes;
  }
  return v;
}

// A random request (address, length 1..4096) with the interesting cases over-represented.
template <class Rng>
inline void random_request(Rng& r, unsigned beat_bytes, uint64_t& addr, unsigned& len) {
  auto u = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(r); };
  uint64_t page = u(0, (1ull << 28) - 1) << 12;  // 40-bit addresses
  if (u(0, 7) == 0) page |= 0x8000000000000000ull | (u(0, 0xFFFF) << 40);  // high address bits set
  switch (u(0, 5)) {
    case 0: addr = page + u(0, 4095); break;                                // anywhere
    case 1: addr = page + 4096 - u(1, 2 * beat_bytes); break;               // just below a page end
    case 2: addr = page + u(0, 4096 / beat_bytes - 1) * beat_bytes; break;  // beat aligned
    case 3: addr = page; break;                                             // page aligned
    default: addr = page + u(0, 4095); break;
  }
  switch (u(0, 7)) {
    case 0: len = static_cast<unsigned>(u(1, beat_bytes)); break;
    case 1: len = 4096; break;
    case 2: len = static_cast<unsigned>(u(1, 64) * beat_bytes); break;  // beat multiples
    case 3: len = static_cast<unsigned>(4096 - u(0, 2 * beat_bytes)); break;
    case 4: len = static_cast<unsigned>(u(1, 300)); break;
    default: len = static_cast<unsigned>(u(1, 4096)); break;
  }
}

}  // namespace tmnic::tb
