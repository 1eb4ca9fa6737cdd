// Wide-word packing: bit fields, bytes and 32-bit words of Verilator's packed signals.
// Verilator holds a signal of up to 64 bits as an integer (CData/SData/IData/QData) and a wider
// one as VlWide<N>: N little-endian 32-bit words, bit 0 = LSB of word 0, byte 0 = bits 7:0.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace tmnic::tb {

inline uint64_t mask64(unsigned n) { return n >= 64 ? ~0ull : ((1ull << n) - 1); }

// ---- bit fields of a word array (VlWide::data()) ----------------------------------------------
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
// A field (up to 64 bits) of any signal: an integer or a VlWide.
template <class T>
inline uint64_t sig_bits(const T& s, unsigned lsb, unsigned w) {
  if constexpr (std::is_integral_v<T>) {
    return (static_cast<uint64_t>(s) >> lsb) & mask64(w);
  } else {
    return get_bits(s.data(), lsb, w);
  }
}

// The setter twin of sig_bits: a field (up to 64 bits) of an integer or VlWide signal.
template <class T>
inline void set_sig_bits(T& s, unsigned lsb, unsigned w, uint64_t v) {
  if constexpr (std::is_integral_v<T>) {
    const uint64_t m = mask64(w) << lsb;
    s = static_cast<T>((static_cast<uint64_t>(s) & ~m) | ((v << lsb) & m));
  } else {
    set_bits(s.data(), lsb, w, v);
  }
}

// ---- bytes -------------------------------------------------------------------------------------
// Byte i of a signal held as 32-bit words.
inline uint8_t byte_of(const uint32_t* w, unsigned i) { return static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4))); }
inline void set_byte(uint32_t* w, unsigned i, uint8_t b) {
  w[i / 4] = (w[i / 4] & ~(0xFFu << (8 * (i % 4)))) | (static_cast<uint32_t>(b) << (8 * (i % 4)));
}
// Lane i of a byte-enable / keep / strobe mask of up to 64 lanes.
inline bool lane(uint64_t m, unsigned i) { return (m >> i) & 1; }

// n bytes into a signal, byte 0 lowest; the rest of the signal becomes 0.
template <std::size_t N>
inline void set_bytes(VlWide<N>& w, const uint8_t* src, std::size_t n) {
  for (std::size_t i = 0; i < N; ++i) {
    uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::size_t b = 4 * i + k;
      if (b < n) v |= static_cast<uint32_t>(src[b]) << (8 * k);
    }
    w[i] = v;
  }
}
template <std::size_t N>
inline void get_bytes(const VlWide<N>& w, uint8_t* dst, std::size_t n) {
  for (std::size_t b = 0; b < n && b < 4 * N; ++b) dst[b] = static_cast<uint8_t>(w[b / 4] >> (8 * (b % 4)));
}
template <class T>
inline void set_bytes(T& v, const uint8_t* src, std::size_t n) {
  uint64_t x = 0;
  for (std::size_t b = 0; b < n && b < sizeof(T); ++b) x |= static_cast<uint64_t>(src[b]) << (8 * b);
  v = static_cast<T>(x);
}
template <class T>
inline void get_bytes(const T& v, uint8_t* dst, std::size_t n) {
  for (std::size_t b = 0; b < n && b < sizeof(T); ++b) dst[b] = static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * b));
}

// A whole beat of Bytes bytes (a multiple of 4) to or from a VlWide, by copy: the fast path of the
// simulated NIC (host little-endian, as Verilator's word order).
template <std::size_t Bytes, std::size_t N>
inline void put_beat(VlWide<N>& w, const uint8_t* src) {
  static_assert(Bytes % 4 == 0 && Bytes <= 4 * N, "beat wider than the signal");
  std::memcpy(w.data(), src, Bytes);
}
template <std::size_t Bytes, std::size_t N>
inline void take_beat(const VlWide<N>& w, uint8_t* dst) {
  static_assert(Bytes % 4 == 0 && Bytes <= 4 * N, "beat wider than the signal");
  std::memcpy(dst, w.data(), Bytes);
}

// Bytes held by a wide Verilated signal type (VlWide<N>: N 32-bit words), e.g. of a model's port:
// wide_bytes_v<decltype(Vtop::port)> is the port's width in bytes, rounded up to 32 bits.
template <class T>
struct WideWords;
template <std::size_t N>
struct WideWords<VlWide<N>> : std::integral_constant<std::size_t, N> {};
template <class T>
inline constexpr std::size_t wide_bytes_v = 4 * WideWords<std::remove_cv_t<std::remove_reference_t<T>>>::value;

// ---- 32-bit words ------------------------------------------------------------------------------
template <std::size_t N>
inline void set_words(VlWide<N>& w, const uint32_t* src) {
  for (std::size_t i = 0; i < N; ++i) w[i] = src[i];
}
template <std::size_t N>
inline void get_words(const VlWide<N>& w, uint32_t* dst) {
  for (std::size_t i = 0; i < N; ++i) dst[i] = w[i];
}

// Lower-case hex of a value, no prefix (failure messages).
inline std::string hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%llx", (unsigned long long)v);
  return b;
}

}  // namespace tmnic::tb
