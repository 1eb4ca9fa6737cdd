// ibv_modify_qp for RC and UD: the IB state machine with the attribute rules of the IBA spec (the
// kernel's ib_modify_qp_is_ok table, one table per QP type), then one full SET_QP from the shadow
// context.
#include <cerrno>

#include "provider.hpp"
#include "qp.hpp"

namespace tmnic {

namespace {

namespace q = hwif::cmd::set_qp;

struct Rule {
  bool valid;
  uint32_t req;  // attributes that must be given (besides IBV_QP_STATE)
  uint32_t opt;  // attributes that may be given
};

// One legal transition of a QP type: the IBA's attribute rules (ibv_modify_qp(3), the kernel's
// ib_modify_qp_is_ok table) for the states this NIC implements. SQD/SQE (drain, UD/UC send-queue
// error) have no hardware: EINVAL. Anything else on the way to RESET or ERR is in any_to_reset_err.
struct Edge {
  enum ibv_qp_state cur, next;
  uint32_t req, opt;
};

constexpr uint32_t kRcInit = IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
constexpr Edge kRcEdges[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, kRcInit, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0, kRcInit},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
         IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR, IBV_QPS_RTS,
     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
         IBV_QP_PATH_MIG_STATE},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE |
         IBV_QP_MIN_RNR_TIMER},
};

// UD: no path, no remote QP, no access rights, no retries; the Q_Key is set at RESET->INIT and may
// change later. So every RC-only attribute (AV, PATH_MTU, DEST_QPN, RQ_PSN, timers, retry counts,
// RD_ATOMIC limits, ACCESS_FLAGS) is EINVAL on a UD QP.
constexpr Edge kUdEdges[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
    {IBV_QPS_INIT, IBV_QPS_RTR, 0, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
    {IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0, IBV_QP_CUR_STATE | IBV_QP_QKEY},
};

template <size_t N>
Rule find(const Edge (&edges)[N], enum ibv_qp_state cur, enum ibv_qp_state next) {
  for (const Edge& e : edges)
    if (e.cur == cur && e.next == next) return {true, e.req, e.opt};
  return {false, 0, 0};
}

Rule rule(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next) {
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) return {true, 0, 0};  // from any state
  return type == IBV_QPT_UD ? find(kUdEdges, cur, next) : find(kRcEdges, cur, next);
}

// Value checks of the attributes present in `mask`; fills the address words of `cfg`.
int check_and_apply(Device& dev, const struct ibv_qp_attr* a, int mask, uint32_t* cfg) {
  if ((mask & IBV_QP_PORT) && a->port_num != 1) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0) return EINVAL;  // one P_Key
  if ((mask & IBV_QP_ACCESS_FLAGS) &&
      (a->qp_access_flags & ~unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
    return EINVAL;
  // The remote operations the responder accepts (an RDMA WRITE without REMOTE_WRITE is NAKed).
  if (mask & IBV_QP_ACCESS_FLAGS)
    cfg[q::ACCESS] = a->qp_access_flags & (hwif::access::REMOTE_WRITE | hwif::access::REMOTE_READ | hwif::access::REMOTE_ATOMIC);
  // No automatic path migration: no alternate path, and the path is always "migrated".
  if (mask & IBV_QP_ALT_PATH) return EINVAL;
  if ((mask & IBV_QP_PATH_MIG_STATE) && a->path_mig_state != IBV_MIG_MIGRATED) return EINVAL;
  if (mask & IBV_QP_AV) {
    const struct ibv_ah_attr& ah = a->ah_attr;
    uint32_t ip;
    // RoCEv2 over IPv4: the address must be global (GRH) with an IPv4-mapped destination GID
    // from our one-entry GID table, as the kernel demands a GRH on RoCE.
    if (!ah.is_global || ah.grh.sgid_index != 0 || (ah.port_num != 0 && ah.port_num != 1) ||
        !gid_to_ipv4(ah.grh.dgid, &ip))
      return EINVAL;
    uint64_t mac = resolve_mac(*dev.be(), ip);
    cfg[q::DEST_IP] = ip;
    cfg[q::DMAC_LO] = uint32_t(mac);
    cfg[q::DMAC_HI] = uint32_t(mac >> 32) & 0xFFFF;
    // RoCEv2: the GRH's traffic class and hop limit are the IPv4 TOS and TTL of the QP's packets
    cfg[q::TCLASS] = ah.grh.traffic_class;
    cfg[q::HOP_LIMIT] = ah.grh.hop_limit;
  }
  if (mask & IBV_QP_PATH_MTU) {
    if (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096) return EINVAL;
    cfg[q::PATH_MTU] = a->path_mtu;
  }
  if (mask & IBV_QP_DEST_QPN) {
    if (a->dest_qp_num > 0xFFFFFF) return EINVAL;
    cfg[q::DEST_QPN] = a->dest_qp_num;
  }
  if (mask & IBV_QP_RQ_PSN) cfg[q::RQ_PSN] = a->rq_psn & 0xFFFFFF;  // PSNs are 24-bit
  if (mask & IBV_QP_SQ_PSN) cfg[q::SQ_PSN] = a->sq_psn & 0xFFFFFF;
  if (mask & IBV_QP_QKEY) cfg[q::QKEY] = a->qkey;  // (UD only: the rule table allows it nowhere else)
  if (mask & IBV_QP_MIN_RNR_TIMER) {
    if (a->min_rnr_timer > 31) return EINVAL;
    cfg[q::MIN_RNR_TIMER] = a->min_rnr_timer;
  }
  if (mask & IBV_QP_TIMEOUT) {
    if (a->timeout > 31) return EINVAL;
    cfg[q::TIMEOUT] = a->timeout;
  }
  if (mask & IBV_QP_RETRY_CNT) {
    if (a->retry_cnt > 7) return EINVAL;
    cfg[q::RETRY_CNT] = a->retry_cnt;
  }
  if (mask & IBV_QP_RNR_RETRY) {
    if (a->rnr_retry > 7) return EINVAL;
    cfg[q::RNR_RETRY] = a->rnr_retry;
  }
  // IBA: a QP's READ/atomic limits may not exceed the device's (max_qp_init_rd_atom,
  // max_qp_rd_atom). The send queue keeps max_rd_atomic READs in flight (0 is taken as 1 by the
  // NIC); the responder always has MAX_RD_ATOM resources, at least max_dest_rd_atomic.
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
    if (a->max_rd_atomic > hwif::MAX_RD_ATOM) return EINVAL;
    cfg[q::MAX_RD_ATOMIC] = a->max_rd_atomic;
  }
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > hwif::MAX_RD_ATOM) return EINVAL;
  return 0;
}

// Copies the given attributes into the query shadow.
void remember(struct ibv_qp_attr* s, const struct ibv_qp_attr* a, int mask) {
  if (mask & IBV_QP_ACCESS_FLAGS) s->qp_access_flags = a->qp_access_flags;
  if (mask & IBV_QP_PKEY_INDEX) s->pkey_index = a->pkey_index;
  if (mask & IBV_QP_PORT) s->port_num = a->port_num;
  if (mask & IBV_QP_AV) s->ah_attr = a->ah_attr;
  if (mask & IBV_QP_PATH_MTU) s->path_mtu = a->path_mtu;
  if (mask & IBV_QP_DEST_QPN) s->dest_qp_num = a->dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) s->rq_psn = a->rq_psn & 0xFFFFFF;
  if (mask & IBV_QP_SQ_PSN) s->sq_psn = a->sq_psn & 0xFFFFFF;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) s->max_dest_rd_atomic = a->max_dest_rd_atomic;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) s->max_rd_atomic = a->max_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) s->min_rnr_timer = a->min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) s->timeout = a->timeout;
  if (mask & IBV_QP_RETRY_CNT) s->retry_cnt = a->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) s->rnr_retry = a->rnr_retry;
  if (mask & IBV_QP_QKEY) s->qkey = a->qkey;
}

}  // namespace

int modify_qp(struct ibv_qp* ibqp, struct ibv_qp_attr* attr, int mask) {
  tmnic_qp* qp = to_tqp(ibqp);
  std::lock_guard<std::mutex> g(qp->modify_mu);
  enum ibv_qp_state cur = ibqp->state;
  if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur) return EINVAL;
  enum ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
  if (next > IBV_QPS_ERR) return EINVAL;
  Rule r = rule(ibqp->qp_type, cur, next);
  uint32_t given = uint32_t(mask) & ~uint32_t(IBV_QP_STATE);
  if (!r.valid || (given & r.req) != r.req || (given & ~(r.req | r.opt))) return EINVAL;

  uint32_t cfg[kSetQpWords];
  std::memcpy(cfg, qp->cfg, sizeof(cfg));
  if (int err = check_and_apply(*qp->dev, attr, mask, cfg)) return err;
  cfg[q::STATE] = next;
  // (Re)initialise the dynamic state where the IB state machine starts it: the receive side when
  // the QP becomes able to receive (RTR, from RQ_PSN), the send side at RTS (from SQ_PSN), both
  // when the QP is reset.
  uint32_t init = 0;
  if (next == IBV_QPS_RESET) init = hwif::cmd::QP_INIT_SQ | hwif::cmd::QP_INIT_RQ;
  if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) init = hwif::cmd::QP_INIT_RQ;
  if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) init = hwif::cmd::QP_INIT_SQ;
  if (int err = send_set_qp(qp, cfg, init)) return err;

  std::memcpy(qp->cfg, cfg, sizeof(cfg));
  qp->qkey.store(cfg[q::QKEY], std::memory_order_relaxed);
  remember(&qp->attr, attr, mask);
  qp->attr.qp_state = next;
  if (next == IBV_QPS_RESET) {
    // Outstanding WQEs are gone (with their completions); the rings restart at index 0 like
    // the NIC's.
    cq_clean_qp(qp);
    qp->sq.lock.lock();
    qp->sq.reset();
    qp->sq.lock.unlock();
    qp->rq.lock.lock();
    qp->rq.reset();
    qp->rq.lock.unlock();
  }
  if ((init & hwif::cmd::QP_INIT_RQ) && next == IBV_QPS_RTR) {
    // Receives may be posted in INIT. Re-announce them after the receive state was
    // (re)initialised; the doorbell carries an absolute producer index, so this is harmless if
    // the NIC kept it.
    qp->rq.lock.lock();
    uint32_t pi = qp->rq.pi.load();
    if (pi) qp->dev->write32(hwif::reg::DB_RQ0 + 4 * ibqp->qp_num, pi & 0xFFFF);
    qp->rq.lock.unlock();
  }
  ibqp->state = next;  // libibverbs does this after a successful modify; pyverbs reads it
  // IBA 11.6.2 (Last WQE Reached): a QP of an SRQ in ERR consumes no more SRQ WQEs. Once SET_QP
  // has completed, the NIC has the QP in ERR, so the event is true now; software uses it to know
  // when the QP's last receive completion is in the CQ before destroying the QP (UCX, MPI).
  // (Once per entry into ERR: the NIC may have moved it there first and said so.)
  if (next == IBV_QPS_ERR) qp_entered_err(qp);
  if (next == IBV_QPS_RESET) {
    qp->last_wqe_reported.store(false);
    qp->fatal_reported.store(false);
  }
  return 0;
}

}  // namespace tmnic
