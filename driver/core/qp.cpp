// QP creation, destruction, query, and slot reclaim from completions.
#include "qp.hpp"

#include <cerrno>
#include <new>

#include "provider.hpp"
#include "tm.hpp"

namespace tmnic {

namespace q = hwif::cmd::set_qp;

int send_set_qp(tmnic_qp* qp, const uint32_t* cfg, uint32_t init_bits) {
  uint32_t args[kSetQpWords];
  std::memcpy(args, cfg, sizeof(args));
  args[q::INIT] = init_bits;
  return qp->dev->cmd(hwif::cmd::SET_QP, qp->ibv.qp_base.qp_num, args, kSetQpWords);
}

bool qp_is_ud(const tmnic_qp* qp) { return qp->ud; }

tmnic_srq* qp_rndv_srq(const tmnic_qp* qp) { return qp->rndv ? qp->srq : nullptr; }

void cq_clean_qp(tmnic_qp* qp) {
  const uint32_t qpn = qp->ibv.qp_base.qp_num;
  // A rendezvous QP's internal completions go to its TM-SRQ's CQ, whichever CQs it was given.
  tmnic_srq* rs = qp_rndv_srq(qp);
  tmnic_cq* tcq = rs ? rs->tm->cq : nullptr;
  cq_clean(qp->recv_cq, qpn, qp->srq, qp->recv_cq == tcq ? rs : nullptr);
  if (qp->send_cq != qp->recv_cq) cq_clean(qp->send_cq, qpn, nullptr, qp->send_cq == tcq ? rs : nullptr);
  if (tcq && tcq != qp->recv_cq && tcq != qp->send_cq) cq_clean(tcq, qpn, nullptr, rs);
}

namespace {

int check_caps(const Device& d, const struct ibv_qp_init_attr_ex* a) {
  uint32_t max_wr = (1u << d.max_log_queue) - 1;
  const struct ibv_qp_cap& c = a->cap;
  // A UD send WQE gives its last SGE slot to the UD_AV: fewer SGEs, less inline data.
  const bool ud = a->qp_type == IBV_QPT_UD;
  const uint32_t max_send_sge = ud && d.max_sge > hwif::UD_MAX_SGE ? hwif::UD_MAX_SGE : d.max_sge;
  const uint32_t max_inline = ud ? hwif::UD_MAX_INLINE : Device::kMaxInline;
  if (c.max_send_wr > max_wr || c.max_send_sge > max_send_sge || c.max_inline_data > max_inline)
    return EINVAL;
  if (!a->srq && (c.max_recv_wr > max_wr || c.max_recv_sge > d.max_sge)) return EINVAL;
  return 0;
}

void free_qp(Device& d, tmnic_qp* qp, uint32_t qpn) {
  qp->sq.buf.release();
  qp->rq.buf.release();
  d.qpns.release(qpn);
  delete qp;
}

}  // namespace

struct ibv_qp* create_qp_ex(struct ibv_context* ctx, struct ibv_qp_init_attr_ex* attr) {
  Device& d = to_dev(ctx);
  const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
                         IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
                         IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH |
                         IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  if ((attr->comp_mask & ~known) || !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd ||
      !attr->send_cq || !attr->recv_cq) {
    errno = EINVAL;
    return nullptr;
  }
  // RC, and UD when the NIC executes it (OPS_CAPS.UD, ABI >= 1.5); no UC/XRC/RSS/TSO, no creation
  // flags. send_ops_flags may ask only for operations the NIC executes on the QP type (mlx5:
  // EOPNOTSUPP for one it cannot do).
  const bool ex = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  const bool ud = attr->qp_type == IBV_QPT_UD;
  if ((attr->qp_type != IBV_QPT_RC && !(ud && d.ud_supported())) ||
      (attr->comp_mask & (IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_MAX_TSO_HEADER |
                          IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH)) ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags) ||
      (ex && (attr->send_ops_flags & ~supported_send_ops(d, attr->qp_type)))) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  // Tag matching is an RC protocol (rdma-core: TM-SRQs serve RC QPs): a UD QP on a TM-SRQ is EINVAL.
  if (ud && attr->srq && to_tsrq(attr->srq)->tm) {
    errno = EINVAL;
    return nullptr;
  }
  if (int err = check_caps(d, attr)) {
    errno = err;
    return nullptr;
  }
  int64_t qpn = d.qpns.alloc();
  if (qpn < 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* qp = new (std::nothrow) tmnic_qp();
  if (!qp) {
    d.qpns.release(uint32_t(qpn));
    errno = ENOMEM;
    return nullptr;
  }
  qp->dev = &d;
  qp->pd = to_tpd(attr->pd);
  qp->send_cq = to_tcq(attr->send_cq);
  qp->recv_cq = to_tcq(attr->recv_cq);
  qp->srq = attr->srq ? to_tsrq(attr->srq) : nullptr;
  qp->sq_sig_all = attr->sq_sig_all;
  qp->ud = ud;
  // mlx5's kernel gives a QP the rendezvous offload only when it has no send queue and its SRQ is
  // a TM-SRQ (pyverbs' test_tm_rndv creates it with max_send_wr 0); here also only when the NIC
  // offloads rendezvous (TM_CAPS.RC). Such a QP's send queue belongs to the NIC.
  qp->rndv = !ud && qp->srq && qp->srq->tm && attr->cap.max_send_wr == 0 &&
             hwif::regf::tm_caps::RC.get(d.tm_caps) != 0;
  if (ex) {
    qp->has_qp_ex = true;
    qp_ex_init_ops(qp);
  }
  // The WQE always has room for WQE_MAX_INLINE bytes (UD: UD_MAX_INLINE, up to its UD_AV), so
  // that much is reported and allowed.
  qp->max_inline = ud ? hwif::UD_MAX_INLINE : Device::kMaxInline;
  // At least one SGE per WQE, as every provider grants (a zero request still allows 1).
  qp->sq.max_sge = attr->cap.max_send_sge ? attr->cap.max_send_sge : 1;
  int err = qp->rndv ? 0 : qp->sq.alloc(d.be(), attr->cap.max_send_wr);
  if (!err && !qp->srq) {
    qp->rq.max_sge = attr->cap.max_recv_sge ? attr->cap.max_recv_sge : 1;
    err = qp->rq.alloc(d.be(), attr->cap.max_recv_wr);
  }
  struct ibv_qp* iq = &qp->ibv.qp_base;
  iq->qp_num = uint32_t(qpn);
  if (!err) {
    uint32_t* c = qp->cfg;
    c[q::STATE] = IBV_QPS_RESET;
    c[q::PD] = qp->pd->pdn;
    c[q::SEND_CQ] = qp->send_cq->cqn;
    c[q::RECV_CQ] = qp->recv_cq->cqn;
    c[q::SRQ] = qp->srq ? qp->srq->srqn : hwif::NO_SRQ;
    c[q::SQ_BASE_LO] = uint32_t(qp->sq.buf.iova());
    c[q::SQ_BASE_HI] = uint32_t(qp->sq.buf.iova() >> 32);
    c[q::SQ_LOG_SIZE] = qp->sq.log_size;
    if (qp->rndv) {
      // The NIC's internal send queue of the QP (hwif RNDV_SQ_LOG): the RDMA READ into the tagged
      // buffer and the FIN of each offloaded rendezvous; their error completions go to the
      // TM-SRQ's CQ, where the driver turns them into the tag's completion.
      const uint64_t base = (uint64_t(1) << hwif::NIC_SPACE_BIT) + (uint64_t(qpn) << hwif::RNDV_QP_SHIFT);
      c[q::SQ_BASE_LO] = uint32_t(base);
      c[q::SQ_BASE_HI] = uint32_t(base >> 32);
      c[q::SQ_LOG_SIZE] = hwif::RNDV_SQ_LOG;
      c[q::SEND_CQ] = qp->srq->tm->cq->cqn;
    }
    if (!qp->srq) {
      c[q::RQ_BASE_LO] = uint32_t(qp->rq.buf.iova());
      c[q::RQ_BASE_HI] = uint32_t(qp->rq.buf.iova() >> 32);
      c[q::RQ_LOG_SIZE] = qp->rq.log_size;
    }
    // The transport. A UD QP's messages are bounded by the port's MTU (the NIC fails a longer
    // send with LOC_LEN_ERR); its destination and Q_Key come with each WQE, the QP's Q_Key from
    // IBV_QP_QKEY. RC words a UD QP does not use (DEST_*, DMAC_*, RQ_PSN, timers, ACCESS) stay 0.
    c[q::TYPE] = ud ? hwif::cmd::QP_TYPE_UD : hwif::cmd::QP_TYPE_RC;
    if (ud) c[q::PATH_MTU] = Device::kActiveMtu;
    // Program the context in RESET with clean indices before the QP number becomes visible.
    err = send_set_qp(qp, c, hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
  }
  if (err) {
    free_qp(d, qp, uint32_t(qpn));
    errno = err;
    return nullptr;
  }
  iq->context = ctx;
  iq->qp_context = attr->qp_context;
  iq->pd = attr->pd;
  iq->send_cq = attr->send_cq;
  iq->recv_cq = attr->recv_cq;
  iq->srq = attr->srq;
  iq->handle = uint32_t(qpn);
  iq->state = IBV_QPS_RESET;
  iq->qp_type = attr->qp_type;
  pthread_mutex_init(&iq->mutex, nullptr);
  pthread_cond_init(&iq->cond, nullptr);
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.path_mig_state = IBV_MIG_MIGRATED;
  qp->attr.port_num = 1;
  if (ud) qp->attr.path_mtu = Device::kActiveMtu;  // what the UD QP uses (query reports it)
  qp->pd->usecnt++;
  qp->send_cq->usecnt++;
  qp->recv_cq->usecnt++;
  if (qp->srq) qp->srq->usecnt++;
  attr->cap.max_send_wr = qp->sq.capacity();
  attr->cap.max_send_sge = qp->sq.max_sge;
  attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.capacity();
  attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
  attr->cap.max_inline_data = qp->max_inline;
  d.set_qp(iq->qp_num, qp);
  return iq;
}

struct ibv_qp* create_qp(struct ibv_pd* pd, struct ibv_qp_init_attr* attr) {
  struct ibv_qp_init_attr_ex ex = {};
  ex.qp_context = attr->qp_context;
  ex.send_cq = attr->send_cq;
  ex.recv_cq = attr->recv_cq;
  ex.srq = attr->srq;
  ex.cap = attr->cap;
  ex.qp_type = attr->qp_type;
  ex.sq_sig_all = attr->sq_sig_all;
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  struct ibv_qp* qp = create_qp_ex(pd->context, &ex);
  if (qp) attr->cap = ex.cap;
  return qp;
}

int destroy_qp(struct ibv_qp* ibqp) {
  tmnic_qp* qp = to_tqp(ibqp);
  Device& d = *qp->dev;
  // Quiesce the context (RESET) before its rings are unmapped and freed.
  uint32_t cfg[kSetQpWords];
  std::memcpy(cfg, qp->cfg, sizeof(cfg));
  cfg[q::STATE] = IBV_QPS_RESET;
  int err = send_set_qp(qp, cfg, hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ);
  if (err) return err;
  d.unset_qp(ibqp->qp_num);  // CQEs and event records still queued for it are ignored
  cq_clean_qp(qp);
  // As the kernel and libibverbs: unread events of the QP are dropped, and destroy waits until
  // every one the application has read is acked.
  drop_async_events(ibqp->context, reinterpret_cast<uintptr_t>(ibqp));
  pthread_mutex_lock(&ibqp->mutex);
  while (ibqp->events_completed != qp->events_reported) pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
  pthread_mutex_unlock(&ibqp->mutex);
  qp->pd->usecnt--;
  qp->send_cq->usecnt--;
  qp->recv_cq->usecnt--;
  if (qp->srq) qp->srq->usecnt--;
  pthread_mutex_destroy(&ibqp->mutex);
  pthread_cond_destroy(&ibqp->cond);
  free_qp(d, qp, ibqp->qp_num);
  return 0;
}

int query_qp(struct ibv_qp* ibqp, struct ibv_qp_attr* attr, int attr_mask,
             struct ibv_qp_init_attr* init_attr) {
  tmnic_qp* qp = to_tqp(ibqp);
  std::lock_guard<std::mutex> g(qp->modify_mu);
  *attr = qp->attr;
  // The NIC may have moved the QP to ERR by itself (retries exhausted), and it owns the current
  // PSNs: ask it when those are wanted. Everything else is the driver's shadow (rc_pingpong's
  // IBV_QP_CAP query costs no command).
  const int dynamic = IBV_QP_STATE | IBV_QP_CUR_STATE | IBV_QP_SQ_PSN | IBV_QP_RQ_PSN;
  if (attr_mask & dynamic) {
    namespace qq = hwif::cmd::query_qp;
    uint32_t out[qq::RQ_PSN + 1];
    if (int err = qp->dev->cmd(hwif::cmd::QUERY_QP, ibqp->qp_num, nullptr, 0, out, qq::RQ_PSN + 1))
      return err;
    if (out[qq::STATE] <= IBV_QPS_ERR)
      ibqp->state = static_cast<enum ibv_qp_state>(out[qq::STATE]);
    attr->sq_psn = out[qq::SQ_PSN] & 0xFFFFFF;
    attr->rq_psn = out[qq::RQ_PSN] & 0xFFFFFF;
  }
  attr->qp_state = ibqp->state;
  attr->cur_qp_state = ibqp->state;
  attr->cap.max_send_wr = qp->sq.capacity();
  attr->cap.max_send_sge = qp->sq.max_sge;
  attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.capacity();
  attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
  attr->cap.max_inline_data = qp->max_inline;
  if (init_attr) {
    std::memset(init_attr, 0, sizeof(*init_attr));
    init_attr->qp_context = ibqp->qp_context;
    init_attr->send_cq = ibqp->send_cq;
    init_attr->recv_cq = ibqp->recv_cq;
    init_attr->srq = ibqp->srq;
    init_attr->cap = attr->cap;
    init_attr->qp_type = ibqp->qp_type;
    init_attr->sq_sig_all = qp->sq_sig_all;
  }
  return 0;
}

void reclaim_wqes(Device& dev, const uint8_t* cqe) {
  // Tag-matching CQEs are the TM-SRQ's business (tm_parse_cqe frees the SRQ slot of an
  // unexpected or NO_TAG receive; matched receives and list ops use none).
  if (is_tm_opcode(cqe[hwif::cqe::OPCODE_OFF])) return;
  tmnic_qp* qp = dev.qp(ld32(cqe + hwif::cqe::QP_NUM_OFF));
  if (!qp) return;
  uint32_t idx = ld16(cqe + hwif::cqe::WQE_IDX_OFF);
  // Receive-side opcodes are IBV_WC_RECV (128) and above; flushed WQEs carry their queue's
  // opcode too (SEND or RECV), which is how a flush finds its ring.
  if (cqe[hwif::cqe::OPCODE_OFF] & IBV_WC_RECV) {
    if (qp->srq)
      srq_complete(qp->srq);
    else
      qp->rq.complete_upto(idx);
  } else if (!qp->rndv) {  // a rendezvous QP's send queue is the NIC's: nothing to free
    qp->sq.complete_upto(idx);
  }
}

}  // namespace tmnic
