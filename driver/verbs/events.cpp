// Completion channels and asynchronous events, without a kernel to deliver them.
//
// Completion events. The channel fd is an eventfd. On an autonomous device (a card, or a simulation
// with a progress thread) the interrupt of an armed CQ makes it readable (Device::set_cq_channel_fd);
// ibv_get_cq_event() finds an armed CQ of the channel that holds a new CQE, and otherwise blocks in
// read() on the fd until the next interrupt, so a program waiting for events uses no CPU, and
// poll()/epoll on the fd work as with a kernel. A readable fd means "look again": it may be
// readable once more than there are events (an interrupt and an arm racing), never less. With
// O_NONBLOCK set, ibv_get_cq_event() fails with EAGAIN when there is nothing, as libibverbs does.
// Otherwise (a simulation advanced by the driver's calls) nothing would ever signal the fd: it is
// permanently readable, and ibv_get_cq_event() calls Backend::progress() until there is an event.
//
// Async events: ibv_context.async_fd is readable while the context's event queue holds events
// (driver/core/async_events.cpp): the NIC's (a QP moved to ERR: QP_REQ_ERR, QP_ACCESS_ERR,
// LAST_WQE_REACHED) and the driver's own (SRQ_LIMIT_REACHED, LAST_WQE_REACHED on ibv_modify_qp).
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "cq.hpp"
#include "device.hpp"
#include "front.hpp"
#include "provider.hpp"
#include "srq.hpp"

TMNIC_EXPORT struct ibv_comp_channel* ibv_create_comp_channel(struct ibv_context* ctx) {
  auto* ch = static_cast<struct ibv_comp_channel*>(calloc(1, sizeof(struct ibv_comp_channel)));
  if (!ch) {
    errno = ENOMEM;
    return nullptr;
  }
  // Driver-advanced simulation: count 1, never read, so permanently readable.
  ch->fd = eventfd(to_dev(ctx).autonomous() ? 0 : 1, EFD_CLOEXEC);
  if (ch->fd < 0) {
    int err = errno;
    free(ch);
    errno = err;
    return nullptr;
  }
  ch->context = ctx;
  ch->refcnt = 0;
  return ch;
}

TMNIC_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel* ch) {
  if (__atomic_load_n(&ch->refcnt, __ATOMIC_RELAXED) != 0) {
    errno = EBUSY;
    return EBUSY;  // CQs still use it
  }
  close(ch->fd);
  free(ch);
  return 0;
}

TMNIC_EXPORT int ibv_get_cq_event(struct ibv_comp_channel* ch, struct ibv_cq** cq,
                                  void** cq_context) {
  const bool nonblock = fcntl(ch->fd, F_GETFL) & O_NONBLOCK;
  const bool autonomous = to_dev(ch->context).autonomous();
  auto take = [&]() {
    struct ibv_cq* c = tmnic::take_cq_event(ch->context, ch);
    if (c) {
      *cq = c;
      *cq_context = c->cq_context;
    }
    return c != nullptr;
  };
  for (;;) {
    if (take()) return 0;
    if (!autonomous) {
      if (nonblock) {
        errno = EAGAIN;
        return -1;
      }
      continue;  // take_cq_event advanced the simulation
    }
    // Consume the fd's count, then look once more: an interrupt after the look above either
    // left its CQE for this look or signals the fd again.
    uint64_t n;
    ssize_t r = read(ch->fd, &n, sizeof n);  // blocks unless O_NONBLOCK
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN) return -1;
    if (take()) return 0;
    if (nonblock) {
      errno = EAGAIN;
      return -1;
    }
  }
}

TMNIC_EXPORT void ibv_ack_cq_events(struct ibv_cq* cq, unsigned int nevents) {
  tmnic::ack_cq_events(cq, nevents);
}

TMNIC_EXPORT int ibv_get_async_event(struct ibv_context* ctx, struct ibv_async_event* event) {
  const bool nonblock = fcntl(ctx->async_fd, F_GETFL) & O_NONBLOCK;
  for (;;) {
    if (tmnic::take_async_event(ctx, event)) return 0;
    if (nonblock) {
      errno = EAGAIN;
      return -1;
    }
    struct pollfd p = {ctx->async_fd, POLLIN, 0};
    if (poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
  }
}

TMNIC_EXPORT void ibv_ack_async_event(struct ibv_async_event* event) {
  // As libibverbs: count the ack on the object so that its destroy can stop waiting.
  pthread_mutex_t* mu = nullptr;
  pthread_cond_t* cond = nullptr;
  uint32_t* completed = nullptr;
  if (tmnic::is_srq_event(event->event_type)) {
    struct ibv_srq* srq = event->element.srq;
    mu = &srq->mutex;
    cond = &srq->cond;
    completed = &srq->events_completed;
  } else if (event->event_type == IBV_EVENT_CQ_ERR) {
    struct ibv_cq* cq = event->element.cq;
    mu = &cq->mutex;
    cond = &cq->cond;
    completed = &cq->async_events_completed;
  } else if (tmnic::is_qp_event(event->event_type)) {
    struct ibv_qp* qp = event->element.qp;
    mu = &qp->mutex;
    cond = &qp->cond;
    completed = &qp->events_completed;
  }
  if (!mu) return;  // port events: nothing counts them
  pthread_mutex_lock(mu);
  (*completed)++;
  pthread_cond_signal(cond);
  pthread_mutex_unlock(mu);
}
