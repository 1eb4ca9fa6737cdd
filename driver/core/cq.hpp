// Completion queue: a host ring of 2^n CQEs written by the NIC, polled by the owner-bit rule
// without reading the device.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>

#include "device.hpp"
#include "util.hpp"

struct tmnic_srq;

struct tmnic_cq {
  struct ibv_cq_ex ibv;  // first; its leading fields are struct ibv_cq (ibv_cq_ex_to_cq is a cast)
  tmnic::Device* dev = nullptr;
  tmnic::DmaBuffer ring;
  uint32_t log_size = 0;
  uint32_t cqn = 0;
  uint32_t ci = 0;  // free-running consumer index; bit log_size is the expected phase
  tmnic::Spinlock lock;
  bool single_threaded = false;  // IBV_CREATE_CQ_ATTR_SINGLE_THREADED: skip the lock
  uint64_t wc_flags = 0;         // what the extended-CQ user may read
  std::atomic<bool> armed{false};
  uint32_t comp_events_reported = 0;  // events handed out by ibv_get_cq_event; under ibv.mutex
  std::atomic<int> usecnt{0};         // QPs using this CQ: destroy fails with EBUSY
  // Extended polling (start_poll .. end_poll): the CQE the read_* callbacks look at.
  const uint8_t* cur = nullptr;
  bool consumed = false;  // a CQE was consumed since start_poll: end_poll rings the doorbell
};

inline tmnic_cq* to_tcq(struct ibv_cq* cq) { return reinterpret_cast<tmnic_cq*>(cq); }
inline tmnic_cq* to_tcq(struct ibv_cq_ex* cq) { return reinterpret_cast<tmnic_cq*>(cq); }

namespace tmnic {
// The CQE at the consumer index if the NIC has written it (acquire: its fields are then valid),
// else nullptr.
const uint8_t* cq_peek(tmnic_cq* cq);
// The CQE's WC_FLAGS as enum ibv_wc_flags.
unsigned cqe_wc_flags(const uint8_t* cqe);
// Consumes the CQE at the consumer index: frees the work-queue slots it completes.
void cq_consume(tmnic_cq* cq, const uint8_t* cqe);
// Tells the NIC how far the ring has been consumed (DB_CQ; `arm` requests an event).
void cq_doorbell(tmnic_cq* cq, bool arm);
// Removes the unpolled CQEs of QP `qpn` (being reset or destroyed); SRQ receive entries among
// them return their SRQ slot.
void cq_clean(tmnic_cq* cq, uint32_t qpn, tmnic_srq* srq);
// Installs the ibv_cq_ex start_poll/next_poll/end_poll/read_* callbacks (cq_ex.cpp).
void cq_ex_init_ops(tmnic_cq* cq);
// Frees the send/receive/SRQ slots a CQE completes (qp.cpp).
void reclaim_wqes(Device& dev, const uint8_t* cqe);
}  // namespace tmnic
