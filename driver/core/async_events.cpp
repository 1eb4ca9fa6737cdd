// The NIC's asynchronous events (hwif ASYNC_CQ and ASYNC_EVENT records; docs/hw-sw-interface.md).
//
// At open the driver gives the NIC a CQ of its own, the last one (one fewer for applications:
// max_cq says so; a NIC of ABI < 1.4 has no ASYNC_CQ and gets none)
// and names it in ASYNC_CQ. When an engine moves a QP to ERR, the NIC writes a record {kind, QP}
// there and always interrupts for it (no arming, so no arm can race the next record). The
// interrupt handler reads the new records from memory, moves the consumer index on (a doorbell:
// the only BAR access a handler may make) and posts each as events of the QP's context:
//   AEV_QP_REQ_ERR    -> IBV_EVENT_QP_REQ_ERR     (IBA 11.6.3: invalid request local WQ error)
//   AEV_QP_ACCESS_ERR -> IBV_EVENT_QP_ACCESS_ERR  (local access violation WQ error)
//   AEV_QP_ERR        -> nothing by itself: the QP's completions carry the error, as on mlx5
// and, for a QP of an SRQ, IBV_EVENT_QP_LAST_WQE_REACHED (IBA 11.6.2) once per entry into ERR;
//   AEV_QP_FATAL      -> IBV_EVENT_QP_FATAL (IBA C9-218, 11.6.3.1: a completion of the QP was lost,
//                        its CQ in error), once until the QP is reset
//   AEV_CQ_ERR        -> IBV_EVENT_CQ_ERR for the CQ numbered in the record (its first overrun since
//                        it was set up: a completion was lost; IBA 11.6.3.2);
//   AEV_COMM_EST      -> IBV_EVENT_COMM_EST (IBA 11.6.3.1: an RC QP's first request in RTR; the
//                        NIC reports it once per entry into RTR, the QP is not changed).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "cq.hpp"
#include "device.hpp"
#include "provider.hpp"
#include "qp.hpp"
#include "srq.hpp"

namespace tmnic {

void Device::start_async() {
  // ASYNC_CQ exists from ABI 1.4 on; a NIC with a single CQ keeps it for the application. The
  // record queue takes the last CQ, so applications' CQ numbers are those of a NIC without it.
  if ((abi & 0xFFFF) < 4 || num_cq < 2) return;
  const uint32_t cqn = num_cq - 1;
  cqns.reset(0, num_cq - 1);
  if (async_ring_.alloc(be_.get(), size_t(hwif::CQE_SIZE) << kAsyncLog) != 0 ||
      set_cq(*this, cqn, async_ring_.iova(), kAsyncLog, 1) != 0) {
    std::fprintf(stderr, "tmnic: %s: no asynchronous event queue: NIC events are not reported\n", name_.c_str());
    async_ring_.release();
    cqns.reset(0, num_cq);
    return;
  }
  {
    std::lock_guard<std::mutex> g(async_mu_);
    async_cqn_ = cqn;
    async_ci_ = 0;
  }
  namespace f = hwif::regf::async_cq;
  write32(hwif::reg::ASYNC_CQ, f::EN.put(1) | f::CQ.put(cqn));
}

void Device::stop_async() {
  if (async_cqn_ == kNoAsyncCq) return;
  write32(hwif::reg::ASYNC_CQ, 0);
  set_cq(*this, async_cqn_, 0, 0, 0);  // after it, the NIC writes nothing more into the ring
  async_ring_.release();
  async_cqn_ = kNoAsyncCq;
}

void Device::unset_qp(uint32_t qpn) {
  std::lock_guard<std::mutex> g(async_mu_);
  set_qp(qpn, nullptr);
}

void Device::set_cq_obj(uint32_t cqn, tmnic_cq* cq) {
  std::lock_guard<std::mutex> g(async_mu_);
  if (cq_table_.size() < num_cq) cq_table_.resize(num_cq, nullptr);
  if (cqn < cq_table_.size()) cq_table_[cqn] = cq;
}

void Device::poll_async() {
  std::lock_guard<std::mutex> g(async_mu_);
  if (async_cqn_ == kNoAsyncCq) return;
  const uint32_t ci0 = async_ci_;
  for (;;) {
    const uint8_t* c = cqe_if_new(async_ring_.data(), async_ci_, kAsyncLog);
    if (!c) break;
    if (c[hwif::cqe::OPCODE_OFF] == hwif::wc_op::ASYNC_EVENT) {
      const uint32_t num = ld32(c + hwif::cqe::QP_NUM_OFF);
      if (c[hwif::cqe::STATUS_OFF] == hwif::AEV_CQ_ERR) {
        // The CQ overran: IBV_EVENT_CQ_ERR for it, if it still exists (set_cq_obj orders this).
        tmnic_cq* cq = num < cq_table_.size() ? cq_table_[num] : nullptr;
        if (cq)
          post_async_event(cq->ibv.context, reinterpret_cast<uintptr_t>(ibv_cq_ex_to_cq(&cq->ibv)),
                           IBV_EVENT_CQ_ERR);
      } else {
        qp_async_event(*this, num, c[hwif::cqe::STATUS_OFF]);
      }
    }
    async_ci_++;
  }
  if (async_ci_ != ci0) write32(hwif::reg::DB_CQ0 + 4 * async_cqn_, async_ci_ & 0xFFFF);
}

namespace {
void post_qp_event(tmnic_qp* qp, enum ibv_event_type type) {
  struct ibv_qp* ibqp = &qp->ibv.qp_base;
  post_async_event(ibqp->context, reinterpret_cast<uintptr_t>(ibqp), type);
}

constexpr size_t kMaxQueuedEvents = 4096;  // beyond this an application that never reads loses events
}  // namespace

bool is_qp_event(uint32_t t) {
  return t == IBV_EVENT_QP_FATAL || t == IBV_EVENT_QP_REQ_ERR || t == IBV_EVENT_QP_ACCESS_ERR ||
         t == IBV_EVENT_COMM_EST || t == IBV_EVENT_SQ_DRAINED || t == IBV_EVENT_PATH_MIG ||
         t == IBV_EVENT_PATH_MIG_ERR || t == IBV_EVENT_QP_LAST_WQE_REACHED;
}
bool is_srq_event(uint32_t t) { return t == IBV_EVENT_SRQ_ERR || t == IBV_EVENT_SRQ_LIMIT_REACHED; }

// ---- the context's event queue ------------------------------------------------------------------
//
// As the kernel's async event file: an event counts on its QP or SRQ when the application reads it
// (ibv_destroy_qp/srq wait until it has acked as many), and the unread events of an object being
// destroyed are dropped, so a destroy never waits for events nobody will read and no event names a
// freed object. The fd is a semaphore eventfd whose count equals the number of queued events: every
// change of either happens under async_mu (so the read that takes a count never blocks), and a
// blocking reader waits in poll() outside it.

bool post_async_event(struct ibv_context* ctx, uint64_t element, enum ibv_event_type type) {
  tmnic_context* t = to_tctx(ctx);
  std::lock_guard<std::mutex> g(t->async_mu);
  if (t->async_q.size() >= kMaxQueuedEvents) return false;
  uint64_t one = 1;
  if (write(t->async_efd, &one, sizeof one) != ssize_t(sizeof one)) return false;
  t->async_q.push_back({element, uint32_t(type), 0});
  return true;
}

namespace {
void take_count(tmnic_context* t) {  // one queued event leaves: its count too (>= 1: no blocking)
  uint64_t v;
  ssize_t r = read(t->async_efd, &v, sizeof v);
  (void)r;
}
}  // namespace

bool take_async_event(struct ibv_context* ctx, struct ibv_async_event* ev) {
  tmnic_context* t = to_tctx(ctx);
  std::lock_guard<std::mutex> g(t->async_mu);
  if (t->async_q.empty()) return false;
  const tmnic_async_event rec = t->async_q.front();
  t->async_q.pop_front();
  take_count(t);
  ev->event_type = static_cast<enum ibv_event_type>(rec.event_type);
  // Counted under async_mu: a destroy either dropped the event or sees it counted.
  if (is_qp_event(rec.event_type)) {
    ev->element.qp = reinterpret_cast<struct ibv_qp*>(uintptr_t(rec.element));
    pthread_mutex_lock(&ev->element.qp->mutex);
    to_tqp(ev->element.qp)->events_reported++;
    pthread_mutex_unlock(&ev->element.qp->mutex);
  } else if (is_srq_event(rec.event_type)) {
    ev->element.srq = reinterpret_cast<struct ibv_srq*>(uintptr_t(rec.element));
    pthread_mutex_lock(&ev->element.srq->mutex);
    to_tsrq(ev->element.srq)->events_reported++;
    pthread_mutex_unlock(&ev->element.srq->mutex);
  } else if (rec.event_type == IBV_EVENT_CQ_ERR) {
    ev->element.cq = reinterpret_cast<struct ibv_cq*>(uintptr_t(rec.element));
    pthread_mutex_lock(&ev->element.cq->mutex);
    to_tcq(ev->element.cq)->async_events_reported++;
    pthread_mutex_unlock(&ev->element.cq->mutex);
  } else {
    ev->element.port_num = int(rec.element);
  }
  return true;
}

void drop_async_events(struct ibv_context* ctx, uint64_t element) {
  tmnic_context* t = to_tctx(ctx);
  std::lock_guard<std::mutex> g(t->async_mu);
  for (auto it = t->async_q.begin(); it != t->async_q.end();) {
    if (it->element == element && (is_qp_event(it->event_type) || is_srq_event(it->event_type) ||
                                   it->event_type == IBV_EVENT_CQ_ERR)) {
      it = t->async_q.erase(it);
      take_count(t);
    } else {
      ++it;
    }
  }
}

void qp_async_event(Device& d, uint32_t qpn, uint8_t kind) {
  tmnic_qp* qp = d.qp(qpn);
  if (!qp) return;  // destroyed meanwhile (unset_qp orders this)
  if (kind == hwif::AEV_COMM_EST) {   // (the QP is not changed)
    post_qp_event(qp, IBV_EVENT_COMM_EST);
    return;
  }
  if (kind == hwif::AEV_QP_REQ_ERR) post_qp_event(qp, IBV_EVENT_QP_REQ_ERR);
  if (kind == hwif::AEV_QP_ACCESS_ERR) post_qp_event(qp, IBV_EVENT_QP_ACCESS_ERR);
  if (kind == hwif::AEV_QP_FATAL && !qp->fatal_reported.exchange(true)) post_qp_event(qp, IBV_EVENT_QP_FATAL);
  qp_entered_err(qp);
}

void qp_entered_err(tmnic_qp* qp) {
  if (qp->ibv.qp_base.srq && !qp->last_wqe_reported.exchange(true))
    post_qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
}

}  // namespace tmnic
