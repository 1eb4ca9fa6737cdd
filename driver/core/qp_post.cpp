// ibv_post_send / ibv_post_recv: WQEs are built in the ring, then one doorbell per call.
// Error rules follow rdma-core/mlx5: the failing WR is returned in *bad_wr, the WRs before it are
// posted (and announced), nothing after it is.
#include <cerrno>

#include "provider.hpp"
#include "qp.hpp"

namespace tmnic {

namespace {

// Builds the send WQE for `wr` into `slot`, or returns the errno that rejects it.
int build_send_wqe(const tmnic_qp* qp, const struct ibv_send_wr* wr, uint8_t* slot) {
  uint8_t op;
  switch (wr->opcode) {
    case IBV_WR_SEND:
      op = hwif::wqe_op::SEND;
      break;
    case IBV_WR_SEND_WITH_IMM:
      op = hwif::wqe_op::SEND_WITH_IMM;
      break;
    default:
      return EINVAL;  // no RDMA WRITE/READ/atomics in this NIC
  }
  if (wr->num_sge < 0 || uint32_t(wr->num_sge) > qp->sq.max_sge) return EINVAL;
  uint8_t flags = 0;
  if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all) flags |= hwif::wqe_flag::SIGNALED;
  if (wr->send_flags & IBV_SEND_SOLICITED) flags |= hwif::wqe_flag::SOLICITED;
  if (wr->send_flags & IBV_SEND_FENCE) flags |= hwif::wqe_flag::FENCE;

  hwif::Wqe w{};  // reserved bytes are zero
  w.wr_id = wr->wr_id;
  w.opcode = op;
  if (op == hwif::wqe_op::SEND_WITH_IMM) std::memcpy(w.imm, &wr->imm_data, sizeof(w.imm));  // raw
  if (wr->send_flags & IBV_SEND_INLINE) {
    // Inline: the payload is copied now, so the buffers need no MR and may be reused at once.
    uint64_t total = 0;
    for (int i = 0; i < wr->num_sge; i++) total += wr->sg_list[i].length;
    if (total > qp->max_inline || total > sizeof(w.inline_data)) return EINVAL;
    uint8_t* p = w.inline_data;
    for (int i = 0; i < wr->num_sge; i++) {
      std::memcpy(p, reinterpret_cast<const void*>(uintptr_t(wr->sg_list[i].addr)),
                  wr->sg_list[i].length);
      p += wr->sg_list[i].length;
    }
    flags |= hwif::wqe_flag::INLINE;
    w.inline_len = uint32_t(total);
  } else {
    w.num_sge = uint8_t(wr->num_sge);
    for (int i = 0; i < wr->num_sge; i++) w.sge[i] = to_hw_sge(wr->sg_list[i]);
  }
  w.flags = flags;
  std::memcpy(slot, &w, sizeof(w));
  return 0;
}

// Publishes WQEs [.., pi) of `wq` to the NIC through doorbell register `db`.
void ring(Device& d, WorkQueue& wq, uint32_t pi, uint32_t db) {
  wq.pi.store(pi, std::memory_order_release);
  // The WQE stores must be visible to the device before the doorbell that announces them.
  std::atomic_thread_fence(std::memory_order_release);
  d.write32(db, pi & 0xFFFF);
}

}  // namespace

int post_send(struct ibv_qp* ibqp, struct ibv_send_wr* wr, struct ibv_send_wr** bad_wr) {
  tmnic_qp* qp = to_tqp(ibqp);
  WorkQueue& sq = qp->sq;
  int err = 0;
  sq.lock.lock();
  const uint32_t start = sq.pi.load(std::memory_order_relaxed);
  uint32_t pi = start;
  for (; wr; wr = wr->next) {
    // Sending needs RTS; in ERR WQEs are still queued, and the NIC completes them flushed.
    enum ibv_qp_state st = ibqp->state;
    if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR) {
      err = EINVAL;
      break;
    }
    if (pi - sq.ci.load(std::memory_order_acquire) >= sq.capacity()) {
      err = ENOMEM;
      break;
    }
    if ((err = build_send_wqe(qp, wr, sq.slot(pi)))) break;
    pi++;
  }
  if (err) *bad_wr = wr;
  if (pi != start) ring(*qp->dev, sq, pi, hwif::reg::DB_SQ0 + 4 * ibqp->qp_num);
  sq.lock.unlock();
  return err;
}

int post_recv(struct ibv_qp* ibqp, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr) {
  tmnic_qp* qp = to_tqp(ibqp);
  if (qp->srq) {  // receives of this QP come from its SRQ
    *bad_wr = wr;
    return EINVAL;
  }
  WorkQueue& rq = qp->rq;
  int err = 0;
  rq.lock.lock();
  const uint32_t start = rq.pi.load(std::memory_order_relaxed);
  uint32_t pi = start;
  for (; wr; wr = wr->next) {
    if (ibqp->state == IBV_QPS_RESET) {  // receives may be posted from INIT on
      err = EINVAL;
      break;
    }
    if (wr->num_sge < 0 || uint32_t(wr->num_sge) > rq.max_sge) {
      err = EINVAL;
      break;
    }
    if (pi - rq.ci.load(std::memory_order_acquire) >= rq.capacity()) {
      err = ENOMEM;
      break;
    }
    write_recv_wqe(rq.slot(pi), wr);
    pi++;
  }
  if (err) *bad_wr = wr;
  if (pi != start) ring(*qp->dev, rq, pi, hwif::reg::DB_RQ0 + 4 * ibqp->qp_num);
  rq.lock.unlock();
  return err;
}

}  // namespace tmnic
