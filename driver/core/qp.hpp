// Queue pair (RC or UD): send and receive rings plus the shadow of the NIC's QP context (SET_QP
// words).
#pragma once
#include <infiniband/verbs.h>

#include <cstdint>
#include <mutex>

#include "cq.hpp"
#include "device.hpp"
#include "pd.hpp"
#include "srq.hpp"
#include "ah.hpp"
#include "wq.hpp"

namespace tmnic {
constexpr unsigned kSetQpWords = hwif::cmd::set_qp::MAX_RD_ATOMIC + 1;  // (MAX_RD_ATOMIC is the last argument)
}

struct tmnic_qp {
  struct ibv_qp_ex ibv;  // first; ibv.qp_base is the struct ibv_qp applications see
  tmnic::Device* dev = nullptr;
  tmnic_pd* pd = nullptr;
  tmnic_cq* send_cq = nullptr;
  tmnic_cq* recv_cq = nullptr;
  tmnic_srq* srq = nullptr;  // receives come from the SRQ; `rq` is unused
  tmnic::WorkQueue sq, rq;
  uint32_t max_inline = 0;
  bool sq_sig_all = false;
  // IBV_QPT_UD: send WQEs carry a UD_AV and Q_Key, at most UD_MAX_SGE SGEs / UD_MAX_INLINE bytes.
  bool ud = false;
  // A rendezvous QP (docs/tag-matching.md, "Rendezvous"): RC on a TM-SRQ, created with
  // max_send_wr 0 on a device with TM_CAPS.RC. Its send queue is the NIC's own (SQ_BASE in NIC
  // space, RNDV_SQ_LOG, SEND_CQ = the TM-SRQ's CQ); `sq` has no ring and capacity 0, so posting
  // sends fails as on any QP without a send queue.
  bool rndv = false;
  // The QP's Q_Key (IBV_QP_QKEY), sent instead of wr.ud.remote_qkey when that has bit 31 set.
  // Written by modify_qp after its SET_QP, read by the post paths.
  std::atomic<uint32_t> qkey{0};
  // Created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS: ibv_qp_to_qp_ex returns &ibv (qp_ex.cpp).
  bool has_qp_ex = false;
  // The ibv_qp_ex batch between wr_start and wr_complete/wr_abort, owned by the thread that holds
  // sq.lock: the next ring index, the first error (mlx5 keeps only that one), and the WQE of the
  // last builder while it waits for its setters: the data setter, and on a UD QP also
  // wr_set_ud_addr (either order, as mlx5 counts its setters).
  struct {
    uint32_t start = 0, pi = 0;
    int err = 0;
    bool pending = false;
    bool have_data = false, have_addr = false;
    tmnic::hwif::Wqe wqe{};
  } batch;
  std::mutex modify_mu;  // serializes modify_qp / query_qp (shadow + command)
  // Async events of this QP the application has read (take_async_event), under ibv.qp_base.mutex:
  // ibv_destroy_qp waits until it has acked as many.
  uint32_t events_reported = 0;
  // IBV_EVENT_QP_LAST_WQE_REACHED was posted since the QP last entered ERR (cleared at RESET).
  std::atomic<bool> last_wqe_reported{false};
  // IBV_EVENT_QP_FATAL was posted since the QP last left RESET (the NIC may report each lost
  // completion of a flushing QP; the application hears of it once).
  std::atomic<bool> fatal_reported{false};
  // Every SET_QP carries the full context, so the driver keeps all of it.
  uint32_t cfg[tmnic::kSetQpWords] = {};
  // The attributes of the last successful modify_qp, for ibv_query_qp (the NIC keeps only what
  // it needs, e.g. no access flags or pkey index).
  struct ibv_qp_attr attr = {};
};

inline tmnic_qp* to_tqp(struct ibv_qp* qp) { return reinterpret_cast<tmnic_qp*>(qp); }

namespace tmnic {
// An ASYNC_EVENT record of kind AEV_* for QP `qpn` (async_events.cpp; under the device's async lock).
void qp_async_event(Device& d, uint32_t qpn, uint8_t kind);
// The QP is in ERR now (by the NIC or by ibv_modify_qp): a QP of an SRQ posts Last WQE Reached, once.
void qp_entered_err(tmnic_qp* qp);
}  // namespace tmnic

namespace tmnic {
// Sends SET_QP for `qp` with the words `cfg` and the given INIT bits.
int send_set_qp(tmnic_qp* qp, const uint32_t* cfg, uint32_t init_bits);
// Drops the QP's unpolled completions from its CQs (reset, destroy).
void cq_clean_qp(tmnic_qp* qp);

// ---- The send-WQE builder shared by ibv_post_send (qp_post.cpp) and ibv_qp_ex (qp_ex.cpp) ----
// A WQE is built in a local hwif::Wqe in two steps, header then data, and only a complete one is
// copied into the ring, so both interfaces write identical bytes for the same request.

// Whether the NIC executes `op`: SEND and SEND_WITH_IMM always, RDMA WRITE (+IMM), RDMA READ and
// the atomics (CMP_AND_SWP, FETCH_AND_ADD) only when the device's OPS_CAPS register has their bit.
bool send_op_supported(const Device& d, enum ibv_wr_opcode op);
// ... on this QP: a UD QP sends datagrams only (SEND, SEND_WITH_IMM).
bool qp_send_op_supported(const tmnic_qp* qp, enum ibv_wr_opcode op);
// The IBV_QP_EX_WITH_* flags the device executes (for send_ops_flags) on a QP of `type`.
uint64_t supported_send_ops(const Device& d, enum ibv_qp_type type);
// Header of a new WQE in `w` (zeroed first): wr_id, opcode, SIGNALED (from IBV_SEND_SIGNALED or
// sq_sig_all) / SOLICITED / FENCE from `send_flags`, `imm` (raw) for the *_WITH_IMM opcodes,
// rkey/raddr for RDMA and atomics. EINVAL for an opcode the device does not execute on this QP.
int wqe_begin(const tmnic_qp* qp, enum ibv_wr_opcode op, uint64_t wr_id, unsigned send_flags,
              __be32 imm, uint32_t rkey, uint64_t raddr, hwif::Wqe* w);
// The ATOMIC operands of an atomic WQE (host order) at WQE_ATOMIC_OFF: CMP_AND_SWP swaps in
// `swap_add` when the remote value equals `compare`; FETCH_AND_ADD adds `swap_add`.
void wqe_set_atomic(hwif::Wqe* w, uint64_t swap_add, uint64_t compare);
// Data as SGEs: ENOMEM if n exceeds the QP's max_send_sge (mlx5's code for it); EINVAL for an
// atomic unless it is exactly one SGE of ATOMIC_LEN (8) bytes (its result buffer).
int wqe_set_sges(const tmnic_qp* qp, hwif::Wqe* w, size_t n, const struct ibv_sge* sg);
// Data copied inline: EINVAL for RDMA READ and atomics (their data goes the other way); ENOMEM if
// the total exceeds max_inline_data (mlx5's code for it).
int wqe_set_inline(const tmnic_qp* qp, hwif::Wqe* w, size_t n, const struct ibv_data_buf* bufs);
// The destination of a UD send: UD_QKEY (the QP's own Q_Key when bit 31 of `remote_qkey` is set,
// IBA 10.2.4 / ibv_post_send(3)) and the UD_AV at WQE_UD_AV_OFF from the AH. EINVAL for an AH that
// is not this context's or a remote QPN above 24 bits.
int wqe_set_ud(const tmnic_qp* qp, hwif::Wqe* w, struct ibv_ah* ah, uint32_t remote_qpn,
               uint32_t remote_qkey);
// Publishes WQEs [.., pi) of `wq` to the NIC through doorbell register `db` (release fence first).
void ring_doorbell(Device& d, WorkQueue& wq, uint32_t pi, uint32_t db);
// Whether the QP's state lets sends be posted (RTS, SQD, SQE, ERR; not RESET/INIT/RTR).
inline bool sq_postable(enum ibv_qp_state st) {
  return st != IBV_QPS_RESET && st != IBV_QPS_INIT && st != IBV_QPS_RTR;
}
// Fills the ibv_qp_ex function table of a QP created with send_ops_flags (qp_ex.cpp).
void qp_ex_init_ops(tmnic_qp* qp);
}  // namespace tmnic
