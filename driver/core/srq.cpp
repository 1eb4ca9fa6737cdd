#include "srq.hpp"

#include <cerrno>
#include <cstring>
#include <new>

#include "cq.hpp"
#include "provider.hpp"

namespace tmnic {

namespace {
namespace a = hwif::cmd::set_srq;
constexpr unsigned kSetSrqWords = a::TAG_NUM + 1;

// The SET_SRQ words of `srq` (valid or being invalidated). A TM-SRQ's invalidation repeats its
// tag range and rings, so the NIC can clear the engine entries either way.
void srq_words(const tmnic_srq* srq, uint32_t valid, uint32_t* args) {
  std::memset(args, 0, sizeof(uint32_t) * kSetSrqWords);
  args[a::VALID] = valid;
  if (!valid && !srq->tm) return;  // basic SRQ: all zero
  const uint64_t base = srq->wq.buf.iova();
  args[a::BASE_LO] = uint32_t(base);
  args[a::BASE_HI] = uint32_t(base >> 32);
  args[a::LOG_SIZE] = srq->wq.log_size;
  args[a::PD] = srq->pd->pdn;
  if (const TmSrq* tm = srq->tm.get()) {
    const uint64_t ops = tm->ring.iova();
    args[a::TM] = 1;
    args[a::OPS_BASE_LO] = uint32_t(ops);
    args[a::OPS_BASE_HI] = uint32_t(ops >> 32);
    args[a::OPS_LOG_SIZE] = tm->log_size;
    args[a::CQ] = tm->cq->cqn;
    args[a::TAG_BASE] = tm->tag_base;
    args[a::TAG_NUM] = tm->max_num_tags;
  }
}

int set_srq(Device& d, const tmnic_srq* srq, uint32_t valid) {
  uint32_t args[kSetSrqWords];
  srq_words(srq, valid, args);
  return d.cmd(hwif::cmd::SET_SRQ, srq->srqn, args, kSetSrqWords);
}

void free_srq(Device& d, tmnic_srq* srq) {
  tm_srq_destroy(d, srq);
  srq->wq.buf.release();
  d.srqns.release(srq->srqn);
  delete srq;
}
}  // namespace

struct ibv_srq* create_srq_ex(struct ibv_context* ctx, struct ibv_srq_init_attr_ex* attr) {
  Device& d = to_dev(ctx);
  // libibverbs (ibv_cmd_create_srq_ex): unknown attribute bits EOPNOTSUPP, no PD EINVAL.
  if (attr->comp_mask >= IBV_SRQ_INIT_ATTR_RESERVED) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd || attr->pd->context != ctx) {
    errno = EINVAL;
    return nullptr;
  }
  const uint32_t type =
      (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ? raw_enum(attr->srq_type) : uint32_t(IBV_SRQT_BASIC);
  if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC && type != IBV_SRQT_TM) {
    errno = EINVAL;  // mlx5
    return nullptr;
  }
  // XRC needs hardware that does not exist yet.
  if (type == IBV_SRQT_XRC || (attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  uint32_t max_wr = (1u << d.max_log_queue) - 1;
  if (attr->attr.max_wr < 1 || attr->attr.max_wr > max_wr || attr->attr.max_sge > d.max_sge) {
    errno = EINVAL;
    return nullptr;
  }
  int64_t srqn = d.srqns.alloc();
  if (srqn < 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* srq = new (std::nothrow) tmnic_srq();
  if (!srq) {
    d.srqns.release(uint32_t(srqn));
    errno = ENOMEM;
    return nullptr;
  }
  srq->dev = &d;
  srq->srqn = uint32_t(srqn);
  srq->pd = to_tpd(attr->pd);
  srq->wq.max_sge = attr->attr.max_sge ? attr->attr.max_sge : 1;
  int err = type == IBV_SRQT_TM ? tm_srq_create(d, srq, attr) : 0;
  if (!err) err = srq->wq.alloc(d.be(), attr->attr.max_wr);
  if (!err) err = set_srq(d, srq, 1);
  if (err) {
    free_srq(d, srq);
    errno = err;
    return nullptr;
  }
  srq->pd->usecnt++;
  struct ibv_srq* s = &srq->ibv;
  s->context = ctx;
  s->srq_context = attr->srq_context;
  s->pd = attr->pd;
  s->handle = srq->srqn;
  pthread_mutex_init(&s->mutex, nullptr);
  pthread_cond_init(&s->cond, nullptr);
  attr->attr.max_wr = srq->wq.capacity();
  attr->attr.max_sge = srq->wq.max_sge;
  return s;  // srq_limit at creation is ignored, as the verbs spec says
}

struct ibv_srq* create_srq(struct ibv_pd* pd, struct ibv_srq_init_attr* attr) {
  struct ibv_srq_init_attr_ex ex = {};
  ex.srq_context = attr->srq_context;
  ex.attr = attr->attr;
  ex.comp_mask = IBV_SRQ_INIT_ATTR_PD;
  ex.pd = pd;
  struct ibv_srq* srq = create_srq_ex(pd->context, &ex);
  if (srq) attr->attr = ex.attr;
  return srq;
}

int modify_srq(struct ibv_srq* ibsrq, struct ibv_srq_attr* attr, int mask) {
  tmnic_srq* srq = to_tsrq(ibsrq);
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  // No resize (IBV_DEVICE_SRQ_RESIZE is not advertised): EINVAL like mlx5, and nothing changes.
  if (mask & IBV_SRQ_MAX_WR) return EINVAL;
  if (mask & IBV_SRQ_LIMIT) {
    if (attr->srq_limit > srq->wq.capacity()) return EINVAL;
    srq->limit.store(attr->srq_limit);
  }
  return 0;
}

int query_srq(struct ibv_srq* ibsrq, struct ibv_srq_attr* attr) {
  tmnic_srq* srq = to_tsrq(ibsrq);
  attr->max_wr = srq->wq.capacity();
  attr->max_sge = srq->wq.max_sge;
  attr->srq_limit = srq->limit.load();
  return 0;
}

int destroy_srq(struct ibv_srq* ibsrq) {
  tmnic_srq* srq = to_tsrq(ibsrq);
  if (srq->usecnt.load() != 0) return EBUSY;
  Device& d = *srq->dev;
  // Invalidation also clears a TM-SRQ's engine entries; the NIC writes nothing for it afterwards.
  int err = set_srq(d, srq, 0);
  if (err) return err;
  drop_async_events(ibsrq->context, reinterpret_cast<uintptr_t>(ibsrq));  // unread: gone
  pthread_mutex_lock(&ibsrq->mutex);  // the events it has read must have been acked
  while (ibsrq->events_completed != srq->events_reported)
    pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
  pthread_mutex_unlock(&ibsrq->mutex);
  srq->pd->usecnt--;
  pthread_mutex_destroy(&ibsrq->mutex);
  pthread_cond_destroy(&ibsrq->cond);
  free_srq(d, srq);
  return 0;
}

int post_srq_recv(struct ibv_srq* ibsrq, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr) {
  tmnic_srq* srq = to_tsrq(ibsrq);
  WorkQueue& wq = srq->wq;
  int err = 0;
  wq.lock.lock();
  uint32_t pi = wq.pi.load(std::memory_order_relaxed);
  const uint32_t start = pi;
  for (; wr; wr = wr->next) {
    if (wr->num_sge < 0 || uint32_t(wr->num_sge) > wq.max_sge) {
      err = EINVAL;
      break;
    }
    if (pi - wq.ci.load(std::memory_order_acquire) >= wq.capacity()) {
      err = ENOMEM;
      break;
    }
    write_recv_wqe(wq.slot(pi), wr);
    pi++;
  }
  if (err) *bad_wr = wr;
  if (pi != start) {
    wq.pi.store(pi, std::memory_order_release);
    // WQEs must be visible in memory before the NIC learns about them.
    barrier_to_device();
    srq->dev->write32(hwif::reg::DB_SRQ0 + 4 * srq->srqn, pi & 0xFFFF);
  }
  wq.lock.unlock();
  return err;
}

void srq_complete(tmnic_srq* srq) {
  WorkQueue& wq = srq->wq;
  // Several CQs (one per attached QP) may be polled concurrently: advance ci atomically.
  uint32_t c = wq.ci.load(std::memory_order_relaxed);
  do {
    if (c == wq.pi.load(std::memory_order_acquire)) return;  // stale CQE: nothing outstanding
  } while (!wq.ci.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel));
  // Low watermark: the driver learns of consumption when polling, so the event fires then.
  uint32_t lim = srq->limit.load();
  if (lim && wq.outstanding() < lim && srq->limit.compare_exchange_strong(lim, 0)) {
    // (Counted on the SRQ when the application reads it: take_async_event.)
    post_async_event(srq->ibv.context, reinterpret_cast<uintptr_t>(&srq->ibv), IBV_EVENT_SRQ_LIMIT_REACHED);
  }
}

}  // namespace tmnic
