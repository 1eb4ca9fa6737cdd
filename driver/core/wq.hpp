// A work queue ring (QP send/receive queue, SRQ): 2^n WQE_STRIDE-byte slots in DMA memory, a
// producer index advanced by posting (published to the NIC by a doorbell) and a count of slots
// the driver got back from completions.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "tmnic/hwif.h"
#include "util.hpp"

namespace tmnic {

struct WorkQueue {
  DmaBuffer buf;
  uint32_t log_size = 0;
  uint32_t max_sge = 0;  // per-WQE limit the owner was created with
  // Free-running indices. pi is written by the posting thread (under `lock`), ci by the polling
  // thread: atomics let each read the other's without sharing a lock.
  std::atomic<uint32_t> pi{0};
  std::atomic<uint32_t> ci{0};
  Spinlock lock;

  int alloc(Backend* be, uint32_t wr) {
    log_size = log2_ring(wr);
    return buf.alloc(be, size_t(hwif::WQE_STRIDE) << log_size);
  }
  uint32_t size() const { return 1u << log_size; }
  // One slot stays free (the ring rule shared with CQs), so 2^n - 1 WQEs fit.
  uint32_t capacity() const { return size() - 1; }
  uint32_t outstanding() const { return pi.load(std::memory_order_relaxed) - ci.load(std::memory_order_acquire); }
  uint8_t* slot(uint32_t idx) const { return buf.data() + size_t(idx & (size() - 1)) * hwif::WQE_STRIDE; }

  // A completion for ring index `idx` frees every WQE up to and including it (send queues:
  // unsignaled WQEs complete silently; receive queues complete in order). Indices outside the
  // outstanding range (a stale CQE of a reset queue) are ignored.
  void complete_upto(uint32_t idx) {
    uint32_t c = ci.load(std::memory_order_relaxed);
    uint32_t n = ((idx - c) & (size() - 1)) + 1;
    if (n <= pi.load(std::memory_order_acquire) - c) ci.store(c + n, std::memory_order_release);
  }
  // Back to empty (QP -> RESET): the NIC's indices restart at 0 too.
  void reset() {
    pi.store(0);
    ci.store(0);
    if (buf.data()) std::memset(buf.data(), 0, buf.size());
  }
};

// One scatter/gather entry in the device's SGE layout.
inline hwif::Sge to_hw_sge(const struct ibv_sge& s) { return hwif::Sge{s.addr, s.length, s.lkey}; }

// Builds a receive WQE (wr_id, SGEs; opcode/flags unused) into the WQE_STRIDE bytes at `slot`.
inline void write_recv_wqe(uint8_t* slot, const struct ibv_recv_wr* wr) {
  hwif::Wqe w{};
  w.wr_id = wr->wr_id;
  w.num_sge = uint8_t(wr->num_sge);
  for (int i = 0; i < wr->num_sge && i < int(hwif::WQE_MAX_SGE); i++) w.sge[i] = to_hw_sge(wr->sg_list[i]);
  std::memcpy(slot, &w, sizeof(w));
}

}  // namespace tmnic
