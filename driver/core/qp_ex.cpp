// The extended post-send API (struct ibv_qp_ex: ibv_wr_start ... ibv_wr_complete), for QPs
// created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS. Semantics follow rdma-core's mlx5 provider
// (providers/mlx5/qp.c, mlx5_send_wr_*):
//
// * wr_start takes the SQ lock, which wr_complete or wr_abort releases (so a batch is never
//   interleaved with ibv_post_send or another thread's batch).
// * A builder (wr_send, wr_send_imm, wr_rdma_*, wr_atomic_cmp_swp, wr_atomic_fetch_add) reads ibv_qp_ex.wr_id and wr_flags at that call
//   and starts a WQE; its data setter (wr_set_sge, wr_set_sge_list, wr_set_inline_data(_list))
//   completes it. WQEs are built with the builder ibv_post_send uses (qp_post.cpp), so both
//   interfaces write identical bytes.
// * Errors do not stop the calls: the first one is latched and returned by wr_complete, which
//   then posts nothing of the batch (the producer index stays where wr_start found it; mlx5
//   rolls sq.cur_post back the same way) and rings no doorbell. Codes as mlx5: ENOMEM for a full
//   ring, too many SGEs or too much inline data; EINVAL from wr_complete while the QP is in
//   RESET, INIT or RTR (mlx5's wr_complete_error). Otherwise wr_complete rings one doorbell for
//   the whole batch (none for an empty one).
// * mlx5 installs every builder of the QP type whatever send_ops_flags asked for; here every
//   builder of an operation the NIC executes on the QP type works the same way. Builders and
//   setters of what it does not execute (atomic write, memory windows, invalidation, TSO, XRC
//   addressing, RDMA WRITE/READ and the atomics while OPS_CAPS lacks their bit or on a UD QP, and
//   wr_set_ud_addr on an RC QP) latch EINVAL, the code ibv_post_send returns for those opcodes
//   (mlx5 leaves the slots of another QP type's operations NULL; a call through one would crash,
//   so they are never NULL here).
// * On a UD QP a WR needs two setters after its builder, wr_set_ud_addr and a data setter, in
//   either order (mlx5 counts its setters the same way); the WQE enters the ring after the second.
// * Where mlx5 has no defined behaviour, this driver latches EINVAL: a builder not followed by
//   its data setter (before the next builder or wr_complete), a setter with no builder before
//   it, inline data for RDMA READ or an atomic, an atomic's result buffer that is not one SGE of
//   8 bytes.
#include <cerrno>

#include "qp.hpp"

namespace tmnic {
namespace {

tmnic_qp* to_q(struct ibv_qp_ex* q) { return reinterpret_cast<tmnic_qp*>(q); }

void latch(tmnic_qp* qp, int err) {
  if (!qp->batch.err) qp->batch.err = err;
}

void wr_start(struct ibv_qp_ex* q) {
  tmnic_qp* qp = to_q(q);
  qp->sq.lock.lock();
  auto& b = qp->batch;
  b.start = b.pi = qp->sq.pi.load(std::memory_order_relaxed);
  b.err = 0;
  b.pending = false;
}

// Whether the WR being built has all its setters: its data, and on a UD QP its destination.
bool wr_done(const tmnic_qp* qp) { return qp->batch.have_data && (qp->batch.have_addr || !qp->ud); }

// Builder: a new WQE for `op` from wr_id/wr_flags, waiting for its data setter.
void begin(struct ibv_qp_ex* q, enum ibv_wr_opcode op, __be32 imm, uint32_t rkey,
           uint64_t raddr) {
  tmnic_qp* qp = to_q(q);
  auto& b = qp->batch;
  if (b.pending) latch(qp, EINVAL);  // the previous WR never got its data
  b.pending = false;
  if (b.err) return;  // the batch is lost anyway
  if (b.pi - qp->sq.ci.load(std::memory_order_acquire) >= qp->sq.capacity()) {
    latch(qp, ENOMEM);
    return;
  }
  if (int err = wqe_begin(qp, op, q->wr_id, q->wr_flags, imm, rkey, raddr, &b.wqe)) {
    latch(qp, err);
    return;
  }
  b.pending = true;
  b.have_data = b.have_addr = false;
}

// A setter is done (`err` from the shared builder): once the WR has all its setters the WQE goes
// into the ring, unannounced.
void finish(tmnic_qp* qp, int err) {
  auto& b = qp->batch;
  if (err) {
    b.pending = false;
    latch(qp, err);
    return;
  }
  if (!wr_done(qp)) return;
  b.pending = false;
  std::memcpy(qp->sq.slot(b.pi), &b.wqe, sizeof(b.wqe));
  b.pi++;
}

// A data setter may only follow a builder that succeeded (after an error the batch is lost
// anyway), once per WR.
bool setter_ok(tmnic_qp* qp) {
  if (qp->batch.pending && !qp->batch.have_data) {
    qp->batch.have_data = true;
    return true;
  }
  qp->batch.pending = false;
  latch(qp, EINVAL);
  return false;
}

void wr_send(struct ibv_qp_ex* q) { begin(q, IBV_WR_SEND, 0, 0, 0); }
void wr_send_imm(struct ibv_qp_ex* q, __be32 imm) { begin(q, IBV_WR_SEND_WITH_IMM, imm, 0, 0); }
void wr_rdma_write(struct ibv_qp_ex* q, uint32_t rkey, uint64_t raddr) {
  begin(q, IBV_WR_RDMA_WRITE, 0, rkey, raddr);
}
void wr_rdma_write_imm(struct ibv_qp_ex* q, uint32_t rkey, uint64_t raddr, __be32 imm) {
  begin(q, IBV_WR_RDMA_WRITE_WITH_IMM, imm, rkey, raddr);
}
void wr_rdma_read(struct ibv_qp_ex* q, uint32_t rkey, uint64_t raddr) {
  begin(q, IBV_WR_RDMA_READ, 0, rkey, raddr);
}
// Atomics: the operands go into the WQE with the builder; the data setter then names the 8-byte
// result buffer (wr_set_sge, or a list of exactly one such SGE; anything else or inline: EINVAL).
void wr_atomic_cmp_swp(struct ibv_qp_ex* q, uint32_t rkey, uint64_t raddr, uint64_t compare,
                       uint64_t swap) {
  begin(q, IBV_WR_ATOMIC_CMP_AND_SWP, 0, rkey, raddr);
  if (to_q(q)->batch.pending) wqe_set_atomic(&to_q(q)->batch.wqe, swap, compare);
}
void wr_atomic_fetch_add(struct ibv_qp_ex* q, uint32_t rkey, uint64_t raddr, uint64_t add) {
  begin(q, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, rkey, raddr);
  if (to_q(q)->batch.pending) wqe_set_atomic(&to_q(q)->batch.wqe, add, 0);
}

void wr_set_sge(struct ibv_qp_ex* q, uint32_t lkey, uint64_t addr, uint32_t length) {
  tmnic_qp* qp = to_q(q);
  if (!setter_ok(qp)) return;
  struct ibv_sge s = {addr, length, lkey};
  finish(qp, wqe_set_sges(qp, &qp->batch.wqe, 1, &s));
}
void wr_set_sge_list(struct ibv_qp_ex* q, size_t n, const struct ibv_sge* sg) {
  tmnic_qp* qp = to_q(q);
  if (!setter_ok(qp)) return;
  finish(qp, wqe_set_sges(qp, &qp->batch.wqe, n, sg));
}
void wr_set_inline_data(struct ibv_qp_ex* q, void* addr, size_t length) {
  tmnic_qp* qp = to_q(q);
  if (!setter_ok(qp)) return;
  struct ibv_data_buf d = {addr, length};
  finish(qp, wqe_set_inline(qp, &qp->batch.wqe, 1, &d));
}
void wr_set_inline_data_list(struct ibv_qp_ex* q, size_t n, const struct ibv_data_buf* bufs) {
  tmnic_qp* qp = to_q(q);
  if (!setter_ok(qp)) return;
  finish(qp, wqe_set_inline(qp, &qp->batch.wqe, n, bufs));
}

int wr_complete(struct ibv_qp_ex* q) {
  tmnic_qp* qp = to_q(q);
  auto& b = qp->batch;
  if (b.pending) latch(qp, EINVAL);
  b.pending = false;
  int err = b.err;
  if (!sq_postable(q->qp_base.state)) err = EINVAL;
  if (!err && b.pi != b.start)
    ring_doorbell(*qp->dev, qp->sq, b.pi, hwif::reg::DB_SQ0 + 4 * q->qp_base.qp_num);
  qp->sq.lock.unlock();
  return err;
}

void wr_abort(struct ibv_qp_ex* q) {
  tmnic_qp* qp = to_q(q);
  qp->batch.pending = false;  // sq.pi never moved: nothing of the batch is posted
  qp->sq.lock.unlock();
}

// Operations the NIC does not execute: the batch fails with EINVAL.
void unsupported(struct ibv_qp_ex* q) {
  tmnic_qp* qp = to_q(q);
  qp->batch.pending = false;
  latch(qp, EINVAL);
}
void wr_bind_mw(struct ibv_qp_ex* q, struct ibv_mw*, uint32_t, const struct ibv_mw_bind_info*) {
  unsupported(q);
}
void wr_local_inv(struct ibv_qp_ex* q, uint32_t) { unsupported(q); }
void wr_send_inv(struct ibv_qp_ex* q, uint32_t) { unsupported(q); }
void wr_send_tso(struct ibv_qp_ex* q, void*, uint16_t, uint16_t) { unsupported(q); }
// UD destination: on an RC QP there is none to set (mlx5 has no such setter there).
void wr_set_ud_addr(struct ibv_qp_ex* q, struct ibv_ah* ah, uint32_t remote_qpn,
                    uint32_t remote_qkey) {
  tmnic_qp* qp = to_q(q);
  if (!qp->ud) {
    unsupported(q);
    return;
  }
  auto& b = qp->batch;
  if (!b.pending || b.have_addr) {  // no builder before it, or a second one for the WR
    b.pending = false;
    latch(qp, EINVAL);
    return;
  }
  b.have_addr = true;
  finish(qp, wqe_set_ud(qp, &b.wqe, ah, remote_qpn, remote_qkey));
}
void wr_set_xrc_srqn(struct ibv_qp_ex* q, uint32_t) { unsupported(q); }
void wr_atomic_write(struct ibv_qp_ex* q, uint32_t, uint64_t, const void*) { unsupported(q); }

}  // namespace

void qp_ex_init_ops(tmnic_qp* qp) {
  struct ibv_qp_ex* q = &qp->ibv;
  q->wr_start = wr_start;
  q->wr_complete = wr_complete;
  q->wr_abort = wr_abort;
  q->wr_send = wr_send;
  q->wr_send_imm = wr_send_imm;
  q->wr_rdma_write = wr_rdma_write;
  q->wr_rdma_write_imm = wr_rdma_write_imm;
  q->wr_rdma_read = wr_rdma_read;
  q->wr_set_sge = wr_set_sge;
  q->wr_set_sge_list = wr_set_sge_list;
  q->wr_set_inline_data = wr_set_inline_data;
  q->wr_set_inline_data_list = wr_set_inline_data_list;
  q->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  q->wr_atomic_fetch_add = wr_atomic_fetch_add;
  q->wr_bind_mw = wr_bind_mw;
  q->wr_local_inv = wr_local_inv;
  q->wr_send_inv = wr_send_inv;
  q->wr_send_tso = wr_send_tso;
  q->wr_set_ud_addr = wr_set_ud_addr;
  q->wr_set_xrc_srqn = wr_set_xrc_srqn;
  q->wr_atomic_write = wr_atomic_write;
}

}  // namespace tmnic
