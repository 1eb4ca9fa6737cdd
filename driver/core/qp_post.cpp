// ibv_post_send / ibv_post_recv, and the send-WQE builder they share with the ibv_qp_ex API
// (qp_ex.cpp): WQEs are built in the ring, then one doorbell per call.
// Error rules follow rdma-core/mlx5: the failing WR is returned in *bad_wr, the WRs before it are
// posted (and announced), nothing after it is.
#include <cerrno>

#include "provider.hpp"
#include "qp.hpp"

namespace tmnic {

bool send_op_supported(const Device& d, enum ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return hwif::regf::ops_caps::RDMA_WRITE.get(d.ops_caps) != 0;
    case IBV_WR_RDMA_READ:
      return d.read_supported();
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return d.atomic_supported();
    default:
      return false;  // no memory windows, invalidation, TSO, atomic write
  }
}

bool qp_send_op_supported(const tmnic_qp* qp, enum ibv_wr_opcode op) {
  if (qp->ud) return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
  return send_op_supported(*qp->dev, op);
}

uint64_t supported_send_ops(const Device& d, enum ibv_qp_type type) {
  uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
  if (type == IBV_QPT_UD) return ops;  // datagrams: no RDMA
  if (send_op_supported(d, IBV_WR_RDMA_WRITE))
    ops |= IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
  if (send_op_supported(d, IBV_WR_RDMA_READ)) ops |= IBV_QP_EX_WITH_RDMA_READ;
  if (d.atomic_supported())
    ops |= IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  return ops;
}

int wqe_begin(const tmnic_qp* qp, enum ibv_wr_opcode op, uint64_t wr_id, unsigned send_flags,
              __be32 imm, uint32_t rkey, uint64_t raddr, hwif::Wqe* w) {
  if (!qp_send_op_supported(qp, op)) return EINVAL;
  uint8_t hw_op = 0;
  bool rdma = false, with_imm = false;
  switch (op) {
    case IBV_WR_SEND:
      hw_op = hwif::wqe_op::SEND;
      break;
    case IBV_WR_SEND_WITH_IMM:
      hw_op = hwif::wqe_op::SEND_WITH_IMM;
      with_imm = true;
      break;
    case IBV_WR_RDMA_WRITE:
      hw_op = hwif::wqe_op::RDMA_WRITE;
      rdma = true;
      break;
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      hw_op = hwif::wqe_op::RDMA_WRITE_WITH_IMM;
      rdma = with_imm = true;
      break;
    case IBV_WR_RDMA_READ:
      hw_op = hwif::wqe_op::RDMA_READ;
      rdma = true;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      hw_op = hwif::wqe_op::ATOMIC_CMP_AND_SWP;
      rdma = true;  // RKEY/RADDR name the remote 8 bytes, as for RDMA
      break;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      hw_op = hwif::wqe_op::ATOMIC_FETCH_AND_ADD;
      rdma = true;
      break;
    default:
      return EINVAL;
  }
  uint8_t flags = 0;
  if ((send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all) flags |= hwif::wqe_flag::SIGNALED;
  if (send_flags & IBV_SEND_SOLICITED) flags |= hwif::wqe_flag::SOLICITED;
  if (send_flags & IBV_SEND_FENCE) flags |= hwif::wqe_flag::FENCE;
  *w = hwif::Wqe{};  // reserved bytes are zero
  w->wr_id = wr_id;
  w->opcode = hw_op;
  w->flags = flags;
  if (with_imm) std::memcpy(w->imm, &imm, sizeof(w->imm));  // raw: network order as given
  if (rdma) {
    w->rkey = rkey;
    w->raddr = raddr;
  }
  return 0;
}

namespace {
// SGEs that fit a send WQE of the QP: a UD WQE's last SGE slot holds its UD_AV.
size_t wqe_sge_room(const tmnic_qp* qp) { return qp->ud ? hwif::UD_MAX_SGE : hwif::WQE_MAX_SGE; }
size_t wqe_inline_room(const tmnic_qp* qp) {
  return qp->ud ? hwif::UD_MAX_INLINE : hwif::WQE_MAX_INLINE;
}
bool is_atomic(const hwif::Wqe* w) {
  return w->opcode == hwif::wqe_op::ATOMIC_CMP_AND_SWP ||
         w->opcode == hwif::wqe_op::ATOMIC_FETCH_AND_ADD;
}
static_assert(hwif::WQE_ATOMIC_OFF == hwif::wqe::SGE_OFF + 5 * hwif::wqe::SGE_LEN &&
                  hwif::WQE_ATOMIC_OFF + sizeof(hwif::Atomic) == hwif::WQE_STRIDE,
              "the ATOMIC operands take the place of SGE 5; SGE 0 (the result) is free");
static_assert(hwif::WQE_UD_AV_OFF == hwif::wqe::SGE_OFF + hwif::UD_MAX_SGE * hwif::wqe::SGE_LEN &&
                  hwif::WQE_UD_AV_OFF == hwif::wqe::INLINE_DATA_OFF + hwif::UD_MAX_INLINE &&
                  hwif::WQE_UD_AV_OFF + sizeof(hwif::UdAv) == hwif::WQE_STRIDE &&
                  sizeof(hwif::Wqe) == hwif::WQE_STRIDE,
              "the UD_AV follows the last UD SGE / inline byte and ends the WQE");
}  // namespace

void wqe_set_atomic(hwif::Wqe* w, uint64_t swap_add, uint64_t compare) {
  hwif::Atomic a{};
  a.swap_add = swap_add;  // host order: the NIC puts them big-endian into the AtomicETH
  a.compare = compare;
  std::memcpy(reinterpret_cast<uint8_t*>(w) + hwif::WQE_ATOMIC_OFF, &a, sizeof(a));
}

int wqe_set_sges(const tmnic_qp* qp, hwif::Wqe* w, size_t n, const struct ibv_sge* sg) {
  if (n > qp->sq.max_sge || n > wqe_sge_room(qp)) return ENOMEM;
  // An atomic's original value lands in exactly one SGE of ATOMIC_LEN bytes (the WQE has room for
  // no other: its operands are where SGE 5 would be). mlx5 takes any SGE list and writes 8 bytes
  // to each SGE of nonzero length; rxe, like this driver, refuses a length other than 8.
  if (is_atomic(w) && (n != 1 || sg[0].length != hwif::ATOMIC_LEN)) return EINVAL;
  w->num_sge = uint8_t(n);
  for (size_t i = 0; i < n; i++) w->sge[i] = to_hw_sge(sg[i]);
  return 0;
}

int wqe_set_inline(const tmnic_qp* qp, hwif::Wqe* w, size_t n, const struct ibv_data_buf* bufs) {
  // Inline data is payload the requester sends; a READ's data and an atomic's original value come
  // back into SGEs.
  if (w->opcode == hwif::wqe_op::RDMA_READ || is_atomic(w)) return EINVAL;
  // Inline: the payload is copied now, so the buffers need no MR and may be reused at once.
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += bufs[i].length;
  if (total > qp->max_inline || total > wqe_inline_room(qp)) return ENOMEM;
  uint8_t* p = w->inline_data;
  for (size_t i = 0; i < n; i++) {
    if (bufs[i].length) std::memcpy(p, bufs[i].addr, bufs[i].length);
    p += bufs[i].length;
  }
  w->flags |= hwif::wqe_flag::INLINE;
  w->inline_len = uint32_t(total);
  return 0;
}

int wqe_set_ud(const tmnic_qp* qp, hwif::Wqe* w, struct ibv_ah* ibah, uint32_t remote_qpn,
               uint32_t remote_qkey) {
  const tmnic_ah* ah = to_tah(ibah);
  if (!ah || ibah->context != qp->ibv.qp_base.context || remote_qpn > 0xFFFFFF) return EINVAL;
  // IBA 10.2.4 (C10-15): a Q_Key with the high-order bit set is not sent; the QP's own is.
  w->ud_qkey = (remote_qkey & 0x80000000u) ? qp->qkey.load(std::memory_order_relaxed) : remote_qkey;
  hwif::UdAv av{};
  av.dest_ip = ah->dest_ip;
  av.dqpn = remote_qpn;
  for (int i = 0; i < 6; i++) av.dmac[i] = uint8_t(ah->dmac >> (40 - 8 * i));
  av.tclass = ah->tclass;
  av.hop_limit = ah->hop_limit;
  std::memcpy(reinterpret_cast<uint8_t*>(w) + hwif::WQE_UD_AV_OFF, &av, sizeof(av));
  return 0;
}

void ring_doorbell(Device& d, WorkQueue& wq, uint32_t pi, uint32_t db) {
  wq.pi.store(pi, std::memory_order_release);
  // The WQE stores must be visible to the device before the doorbell that announces them.
  barrier_to_device();
  d.write32(db, pi & 0xFFFF);
}

namespace {

// Builds the send WQE for `wr` into `slot`, or returns the errno that rejects it (EINVAL for
// every reason, as this driver always has; nothing is written then).
int build_send_wqe(const tmnic_qp* qp, const struct ibv_send_wr* wr, uint8_t* slot) {
  if (wr->num_sge < 0 || uint32_t(wr->num_sge) > qp->sq.max_sge) return EINVAL;
  hwif::Wqe w;
  // (wr.rdma, wr.atomic and wr.ud share their bytes: the remote fields are read only for an RC QP,
  // whose wqe_begin uses them only for the RDMA and atomic opcodes.)
  const bool atomic =
      wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
  uint32_t rkey = 0;
  uint64_t raddr = 0;
  if (!qp->ud) {
    rkey = atomic ? wr->wr.atomic.rkey : wr->wr.rdma.rkey;
    raddr = atomic ? wr->wr.atomic.remote_addr : wr->wr.rdma.remote_addr;
  }
  if (int err = wqe_begin(qp, wr->opcode, wr->wr_id, wr->send_flags, wr->imm_data, rkey, raddr, &w))
    return err;
  // ibv_post_send(3): compare_add is the compare value of CMP_AND_SWP and the addend of
  // FETCH_AND_ADD; swap is CMP_AND_SWP's new value. (An unaligned remote_addr is not checked
  // here: the responder NAKs it, as on mlx5.)
  if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
    wqe_set_atomic(&w, wr->wr.atomic.swap, wr->wr.atomic.compare_add);
  else if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
    wqe_set_atomic(&w, wr->wr.atomic.compare_add, 0);
  int err;
  if (wr->send_flags & IBV_SEND_INLINE) {
    struct ibv_data_buf bufs[hwif::WQE_MAX_SGE];
    for (int i = 0; i < wr->num_sge; i++) {
      bufs[i].addr = reinterpret_cast<void*>(uintptr_t(wr->sg_list[i].addr));
      bufs[i].length = wr->sg_list[i].length;
    }
    err = wqe_set_inline(qp, &w, size_t(wr->num_sge), bufs);
  } else {
    err = wqe_set_sges(qp, &w, size_t(wr->num_sge), wr->sg_list);
  }
  if (err) return EINVAL;
  // A UD send names its destination in the WR (after the data: the UD_AV ends the WQE).
  if (qp->ud &&
      (err = wqe_set_ud(qp, &w, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey)))
    return err;
  std::memcpy(slot, &w, sizeof(w));
  return 0;
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
    if (!sq_postable(ibqp->state)) {
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
  if (pi != start) ring_doorbell(*qp->dev, sq, pi, hwif::reg::DB_SQ0 + 4 * ibqp->qp_num);
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
  if (pi != start) ring_doorbell(*qp->dev, rq, pi, hwif::reg::DB_RQ0 + 4 * ibqp->qp_num);
  rq.lock.unlock();
  return err;
}

}  // namespace tmnic
