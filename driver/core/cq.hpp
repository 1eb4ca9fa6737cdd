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
  // Autonomous device: an interrupt came (or arming found a completion waiting) and
  // ibv_get_cq_event has not reported it yet. One event per interrupt, as a kernel queues them,
  // whether or not the CQE has been polled meanwhile (the NIC is disarmed either way).
  std::atomic<bool> event_pending{false};
  uint32_t comp_events_reported = 0;  // events handed out by ibv_get_cq_event; under ibv.mutex
  uint32_t async_events_reported = 0;  // IBV_EVENT_CQ_ERR handed out by ibv_get_async_event; ibv.mutex
  std::atomic<int> usecnt{0};         // QPs and TM-SRQs using this CQ: destroy fails with EBUSY
  // Created by ibv_create_cq_ex (mlx5's MLX5_CQ_FLAGS_EXTENDED): only such a CQ may take a TM-SRQ.
  bool extended = false;
  // The TM-SRQ whose completions (list ops, tagged receives) arrive here; set while it exists,
  // under `lock`. List-op CQEs carry no SRQ number, so a CQ serves at most one TM-SRQ.
  tmnic_srq* tm_srq = nullptr;
  // Extended polling (start_poll .. end_poll): the CQE the read_* callbacks look at, and what the
  // driver made of it (wr_id/status are in `ibv`).
  const uint8_t* cur = nullptr;
  unsigned cur_wc_flags = 0;
  enum ibv_wc_opcode cur_opcode = IBV_WC_SEND;
  bool cur_tm_info = false;
  uint64_t cur_tm_tag = 0;
  uint32_t cur_tm_priv = 0;
  bool consumed = false;  // a CQE was consumed since start_poll: end_poll rings the doorbell
};

inline tmnic_cq* to_tcq(struct ibv_cq* cq) { return reinterpret_cast<tmnic_cq*>(cq); }
inline tmnic_cq* to_tcq(struct ibv_cq_ex* cq) { return reinterpret_cast<tmnic_cq*>(cq); }

namespace tmnic {
// What the application is told about one CQE: the fields the driver may change (tag matching
// reports a tag's recv_wr_id, computes SYNC_REQ, refuses unknown handles).
struct Completion {
  uint64_t wr_id = 0;
  enum ibv_wc_status status = IBV_WC_SUCCESS;
  enum ibv_wc_opcode opcode = IBV_WC_SEND;  // the CQE's, unless the driver translates it
  unsigned wc_flags = 0;  // enum ibv_wc_flags
  // A tag completion: ibv_wc_read_tm_info reports tm_tag/tm_priv (else zero). Matched CQEs: the
  // CQE's TM_TAG/APP_CTX; a rendezvous READ's error: the tag recorded at ADD, app_ctx 0.
  bool tm_info = false;
  uint64_t tm_tag = 0;
  uint32_t tm_priv = 0;
  // An internal completion the application never sees (a rendezvous FIN's error or flush): the
  // pollers consume it and go on to the next CQE.
  bool skip = false;
};
// Interprets the CQE at the consumer index; called exactly once per CQE (tag-matching and
// rendezvous bookkeeping happen here), before cq_consume; a `skip` one is consumed unseen.
void cq_parse(tmnic_cq* cq, const uint8_t* cqe, Completion* out);
// The CQE at the consumer index if the NIC has written it (acquire: its fields are then valid),
// else nullptr.
const uint8_t* cq_peek(tmnic_cq* cq);
// The owner bit the NIC gives the CQE of ring index idx in a ring of 2^log entries (hwif CQE.OWNER:
// the pass's phase, inverted; a new ring is zeroed).
inline uint8_t cqe_owner(uint32_t idx, uint32_t log) { return uint8_t(((idx >> log) & 1) ^ 1); }
// Entry idx of the ring at `ring` (2^log entries) if the NIC has written it in idx's pass, else
// null. The NIC writes the owner byte last; the acquire orders the reads of the other fields after it.
inline const uint8_t* cqe_if_new(const uint8_t* ring, uint32_t idx, uint32_t log) {
  const uint8_t* c = ring + size_t(idx & ((1u << log) - 1)) * hwif::CQE_SIZE;
  return (__atomic_load_n(c + hwif::cqe::OWNER_OFF, __ATOMIC_ACQUIRE) & 1) == cqe_owner(idx, log) ? c : nullptr;
}
// The CQE's WC_FLAGS as enum ibv_wc_flags (IBV_WC_GRH only on a UD QP's receive completions).
unsigned cqe_wc_flags(const Device& d, const uint8_t* cqe);
// Whether `qp` is a UD QP (qp.cpp; the CQ code does not see struct tmnic_qp).
bool qp_is_ud(const tmnic_qp* qp);
// The TM-SRQ of a rendezvous QP (RC, on a TM-SRQ, no send queue, on a device with TM_CAPS.RC);
// null for every other QP (qp.cpp).
tmnic_srq* qp_rndv_srq(const tmnic_qp* qp);
// Consumes the CQE at the consumer index: frees the work-queue slots it completes.
void cq_consume(tmnic_cq* cq, const uint8_t* cqe);
// Tells the NIC how far the ring has been consumed (DB_CQ; `arm` requests an event).
void cq_doorbell(tmnic_cq* cq, bool arm);
// Removes the unpolled CQEs of QP `qpn` (being reset or destroyed); SRQ receive entries among
// them return their SRQ slot. Tag-matching CQEs stay: they belong to the TM-SRQ.
// `rndv_srq`: the QP is a rendezvous QP of that TM-SRQ and `cq` is the SRQ's CQ; its internal
// send-side CQEs are dropped too, a READ's releasing its tag.
void cq_clean(tmnic_cq* cq, uint32_t qpn, tmnic_srq* srq, tmnic_srq* rndv_srq = nullptr);
// Removes the unpolled tag-matching CQEs (the TM-SRQ of the CQ is being destroyed).
void cq_clean_tm(tmnic_cq* cq);
// Installs the ibv_cq_ex start_poll/next_poll/end_poll/read_* callbacks (cq_ex.cpp).
void cq_ex_init_ops(tmnic_cq* cq);
// SET_CQ: (re)configures or (valid 0) disables CQ `cqn` in the NIC. errno-style result.
int set_cq(Device& d, uint32_t cqn, uint64_t base, uint32_t log_size, uint32_t valid, bool keep = false);
// The interrupt of an armed CQ with a completion channel (autonomous device; called by the
// device's interrupt handler): marks the event pending and makes the channel's fd readable.
void cq_interrupt(tmnic_cq* cq);
// Frees the send/receive/SRQ slots a CQE completes (qp.cpp).
void reclaim_wqes(Device& dev, const uint8_t* cqe);
}  // namespace tmnic
