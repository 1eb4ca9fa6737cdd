// Small helpers shared by the provider objects: little-endian field access for WQEs/CQEs (the
// HW/SW interface is little-endian whatever the host), a spinlock for the fast paths, and
// page-aligned DMA-able rings, and the one barrier between host-memory stores and a doorbell.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <cstring>

#include "tmnic/backend.hpp"

namespace tmnic {

// Orders the CPU's stores to host memory (WQEs, a ring's producer index) before the doorbell write
// that announces them to the device (mlx5's udma_to_device_barrier). ThreadSanitizer does not
// model fences (GCC refuses them under -fsanitize=thread); there the simulated backend's lock
// around the doorbell gives the same order, and the fence is a compiler barrier only.
inline void barrier_to_device() {
#if defined(__SANITIZE_THREAD__)
  std::atomic_signal_fence(std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_release);
#endif
}

inline void st8(uint8_t* p, uint8_t v) { p[0] = v; }
inline void st16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void st32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = uint8_t(v >> (8 * i));
}
inline void st64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = uint8_t(v >> (8 * i));
}
inline uint16_t ld16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t ld32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t ld64(const uint8_t* p) { return uint64_t(ld32(p)) | uint64_t(ld32(p + 4)) << 32; }

// The value an application stored in an enum field of a verbs struct, read without assuming it is
// one of the enumerators (loading an out-of-range value as the enum type is undefined behaviour,
// and applications do pass garbage).
template <typename E>
inline uint32_t raw_enum(const E& e) {
  static_assert(sizeof(E) == sizeof(uint32_t), "verbs enums are 32-bit");
  uint32_t v;
  std::memcpy(&v, &e, sizeof(v));
  return v;
}

// The post/poll fast paths hold their lock for a few hundred nanoseconds; a spinlock is what
// rdma-core providers use there too (mlx5_spinlock).
class Spinlock {
 public:
  void lock() {
    while (flag_.test_and_set(std::memory_order_acquire)) {
    }
    owner_.store(self(), std::memory_order_relaxed);
  }
  void unlock() {
    owner_.store(0, std::memory_order_relaxed);
    flag_.clear(std::memory_order_release);
  }
  // For destroy/clean paths: locks unless the calling thread already holds the lock (an
  // application that left an extended-CQ poll open, e.g. an exception between start_poll and
  // end_poll, must not hang in ibv_destroy_qp). Returns whether it locked; unlock only then.
  bool lock_unless_held() {
    if (owner_.load(std::memory_order_relaxed) == self()) return false;
    lock();
    return true;
  }

 private:
  static uintptr_t self() { return reinterpret_cast<uintptr_t>(&tls_marker_); }
  static inline thread_local char tls_marker_ = 0;
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
  std::atomic<uintptr_t> owner_{0};
};

// Smallest n with 2^n >= v + 1, i.e. a ring of 2^n slots holds v entries with one slot kept free
// (the same rule for CQs and work queues, so reported capacities are 2^n - 1).
inline uint32_t log2_ring(uint32_t v) {
  uint32_t n = 0;
  while ((uint64_t(1) << n) < uint64_t(v) + 1) n++;
  return n;
}

// A zeroed, page-aligned buffer the device reaches by DMA (WQE and CQE rings).
class DmaBuffer {
 public:
  DmaBuffer() = default;
  DmaBuffer(const DmaBuffer&) = delete;
  DmaBuffer& operator=(const DmaBuffer&) = delete;
  ~DmaBuffer() { release(); }
  // Allocates at least `bytes` (rounded up to whole pages) and maps it. errno-style result.
  int alloc(Backend* be, size_t bytes);
  void release();
  uint8_t* data() const { return buf_; }
  uint64_t iova() const { return iova_; }
  size_t size() const { return len_; }
  void swap(DmaBuffer& o) noexcept {
    std::swap(be_, o.be_);
    std::swap(buf_, o.buf_);
    std::swap(len_, o.len_);
    std::swap(iova_, o.iova_);
  }

 private:
  Backend* be_ = nullptr;
  uint8_t* buf_ = nullptr;
  size_t len_ = 0;
  uint64_t iova_ = 0;
};

}  // namespace tmnic
