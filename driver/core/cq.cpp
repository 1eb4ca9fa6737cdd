#include "cq.hpp"

#include <unistd.h>

#include <cerrno>
#include <new>

#include "provider.hpp"
#include "srq.hpp"
#include "tm.hpp"

namespace tmnic {

namespace {
// The CQE carries libibverbs' opcode and status values directly (hwif/spec.py says so); make the
// compiler hold both sides to it.
static_assert(hwif::wc_op::SEND == IBV_WC_SEND && hwif::wc_op::RECV == IBV_WC_RECV &&
                  hwif::wc_op::RDMA_WRITE == IBV_WC_RDMA_WRITE &&
                  hwif::wc_op::RDMA_READ == IBV_WC_RDMA_READ &&
                  hwif::wc_op::RECV_RDMA_WITH_IMM == IBV_WC_RECV_RDMA_WITH_IMM,
              "opcodes");
// Slot reclaim (qp.cpp) tells the queues apart by IBV_WC_RECV: requester opcodes free SQ slots,
// RECV_RDMA_WITH_IMM (a WRITE_WITH_IMM consumed a receive) frees an RQ/SRQ slot like RECV.
static_assert(!(hwif::wc_op::RDMA_WRITE & IBV_WC_RECV) && !(hwif::wc_op::RDMA_READ & IBV_WC_RECV) &&
                  (hwif::wc_op::RECV_RDMA_WITH_IMM & IBV_WC_RECV),
              "receive-side opcodes");
static_assert(hwif::wc_status::SUCCESS == IBV_WC_SUCCESS &&
                  hwif::wc_status::LOC_LEN_ERR == IBV_WC_LOC_LEN_ERR &&
                  hwif::wc_status::LOC_QP_OP_ERR == IBV_WC_LOC_QP_OP_ERR &&
                  hwif::wc_status::LOC_PROT_ERR == IBV_WC_LOC_PROT_ERR &&
                  hwif::wc_status::WR_FLUSH_ERR == IBV_WC_WR_FLUSH_ERR &&
                  hwif::wc_status::BAD_RESP_ERR == IBV_WC_BAD_RESP_ERR &&
                  hwif::wc_status::REM_INV_REQ_ERR == IBV_WC_REM_INV_REQ_ERR &&
                  hwif::wc_status::REM_ACCESS_ERR == IBV_WC_REM_ACCESS_ERR &&
                  hwif::wc_status::REM_OP_ERR == IBV_WC_REM_OP_ERR &&
                  hwif::wc_status::RETRY_EXC_ERR == IBV_WC_RETRY_EXC_ERR &&
                  hwif::wc_status::RNR_RETRY_EXC_ERR == IBV_WC_RNR_RETRY_EXC_ERR &&
                  hwif::wc_status::GENERAL_ERR == IBV_WC_GENERAL_ERR,
              "status codes");
static_assert(hwif::wc_op::TM_ADD == IBV_WC_TM_ADD && hwif::wc_op::TM_DEL == IBV_WC_TM_DEL &&
                  hwif::wc_op::TM_SYNC == IBV_WC_TM_SYNC && hwif::wc_op::TM_RECV == IBV_WC_TM_RECV &&
                  hwif::wc_op::TM_NO_TAG == IBV_WC_TM_NO_TAG,
              "tag-matching opcodes");
static_assert(hwif::wc_status::TM_ERR == IBV_WC_TM_ERR &&
                  hwif::wc_status::TM_RNDV_INCOMPLETE == IBV_WC_TM_RNDV_INCOMPLETE,
              "tag-matching status codes");
static_assert(hwif::wc_flag::TM_MATCH == IBV_WC_TM_MATCH &&
                  hwif::wc_flag::TM_DATA_VALID == IBV_WC_TM_DATA_VALID &&
                  hwif::wc_flag::GRH == IBV_WC_GRH && hwif::wc_flag::WITH_IMM == IBV_WC_WITH_IMM,
              "completion flags");

constexpr uint64_t kSupportedWcFlags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_TM_INFO;

void fill_wc(const uint8_t* c, const Completion& cp, struct ibv_wc* wc) {
  namespace f = hwif::cqe;
  wc->wr_id = cp.wr_id;
  wc->status = cp.status;
  wc->opcode = cp.opcode;
  wc->vendor_err = ld32(c + f::VENDOR_ERR_OFF);
  wc->byte_len = ld32(c + f::BYTE_LEN_OFF);
  std::memcpy(&wc->imm_data, c + f::IMM_OFF, 4);  // raw: network order as received
  wc->qp_num = ld32(c + f::QP_NUM_OFF);
  wc->src_qp = ld32(c + f::SRC_QP_OFF);
  wc->wc_flags = cp.wc_flags;
  wc->pkey_index = 0;
  wc->slid = 0;
  wc->sl = 0;
  wc->dlid_path_bits = 0;
}
}  // namespace

int set_cq(Device& d, uint32_t cqn, uint64_t base, uint32_t log_size, uint32_t valid, bool keep) {
  namespace a = hwif::cmd::set_cq;
  uint32_t args[a::KEEP + 1] = {};
  args[a::BASE_LO] = uint32_t(base);
  args[a::BASE_HI] = uint32_t(base >> 32);
  args[a::LOG_SIZE] = log_size;
  args[a::VALID] = valid;
  args[a::KEEP] = keep;
  return d.cmd(hwif::cmd::SET_CQ, cqn, args, a::KEEP + 1);
}

// ibv_resize_cq: a new ring of at least `cqe` entries. The NIC switches rings with SET_CQ.KEEP
// (indices and arm request kept; a completion being written goes to the old ring, and the
// command is busy until it has landed), then the unpolled entries are copied to the new ring at
// their indices with the new ring's owner bit. The new ring's other slots are marked "not new" for
// the index each will next hold, so that the owner rule holds from any consumer index. Shrinking
// below the unpolled entries is EINVAL (as mlx5).
int resize_cq(struct ibv_cq* ibcq, int cqe) {
  tmnic_cq* cq = to_tcq(ibcq);
  Device& d = *cq->dev;
  const uint32_t max_cqe = (1u << d.max_log_queue) - 1;
  if (cqe < 1 || uint32_t(cqe) > max_cqe) return EINVAL;
  const uint32_t new_log = log2_ring(uint32_t(cqe)), new_size = 1u << new_log;
  // The completions of work already posted count as a NIC's would (a simulation that runs only
  // when asked catches up first).
  d.be()->settle();
  if (!cq->single_threaded) cq->lock.lock();
  auto unlock = [&] {
    if (!cq->single_threaded) cq->lock.unlock();
  };
  const uint32_t old_log = cq->log_size, old_size = 1u << old_log;
  auto entry = [&](uint32_t idx) { return cqe_if_new(cq->ring.data(), idx, old_log); };
  uint32_t unpolled = 0;
  while (unpolled < old_size && entry(cq->ci + unpolled)) unpolled++;
  if (unpolled > new_size - 1) {
    unlock();
    return EINVAL;
  }
  if (new_log == old_log) {
    unlock();
    return 0;
  }
  DmaBuffer ring;
  int err = ring.alloc(d.be(), size_t(hwif::CQE_SIZE) << new_log);
  if (err) {
    unlock();
    return err;
  }
  for (uint32_t k = 0; k < new_size; k++) {  // slot of index ci + k: "not new" for that index
    const uint32_t idx = cq->ci + k;
    ring.data()[size_t(idx & (new_size - 1)) * hwif::CQE_SIZE + hwif::cqe::OWNER_OFF] = cqe_owner(idx, new_log) ^ 1;
  }
  barrier_to_device();
  err = set_cq(d, cq->cqn, ring.iova(), new_log, 1, true);
  if (err) {
    unlock();
    return err;
  }
  // The NIC writes only the new ring now: what the old one holds beyond ci moves over.
  for (uint32_t idx = cq->ci; idx - cq->ci < old_size; idx++) {
    const uint8_t* c = entry(idx);
    if (!c) break;
    uint8_t* n = ring.data() + size_t(idx & (new_size - 1)) * hwif::CQE_SIZE;
    std::memcpy(n, c, hwif::CQE_SIZE - 1);
    __atomic_store_n(n + hwif::cqe::OWNER_OFF, cqe_owner(idx, new_log), __ATOMIC_RELEASE);
  }
  cq->ring.swap(ring);  // (the old ring is released when `ring` goes)
  cq->log_size = new_log;
  cq->ibv.cqe = int(new_size - 1);
  unlock();
  return 0;
}

unsigned cqe_wc_flags(const Device& d, const uint8_t* cqe) {
  // CQE.WC_FLAGS uses the ibv_wc_flags values, but only the bits the hardware defines are passed
  // on, and GRH only where it defines it (the receive completion of a UD QP: GRH_LEN bytes of GRH
  // lead the buffer), so a stray bit in a CQE can never reach the application as a flag it did
  // not earn; an application that saw IBV_WC_GRH would parse its buffer's first 40 bytes.
  uint32_t v = ld32(cqe + hwif::cqe::WC_FLAGS_OFF);
  unsigned out = 0;
  if (v & hwif::wc_flag::WITH_IMM) out |= IBV_WC_WITH_IMM;
  if ((v & hwif::wc_flag::GRH) && (cqe[hwif::cqe::OPCODE_OFF] & IBV_WC_RECV) &&
      !is_tm_opcode(cqe[hwif::cqe::OPCODE_OFF])) {
    const tmnic_qp* qp = d.qp(ld32(cqe + hwif::cqe::QP_NUM_OFF));
    if (qp && qp_is_ud(qp)) out |= IBV_WC_GRH;
  }
  return out;
}

void cq_parse(tmnic_cq* cq, const uint8_t* cqe, Completion* out) {
  const uint8_t opcode = cqe[hwif::cqe::OPCODE_OFF];
  out->wr_id = ld64(cqe + hwif::cqe::WR_ID_OFF);
  out->status = static_cast<enum ibv_wc_status>(cqe[hwif::cqe::STATUS_OFF]);
  out->opcode = static_cast<enum ibv_wc_opcode>(opcode);
  out->wc_flags = cqe_wc_flags(*cq->dev, cqe);
  out->tm_info = false;
  out->tm_tag = 0;
  out->tm_priv = 0;
  out->skip = false;
  // Tag-matching CQEs only arrive on a TM-SRQ's CQ; one without its SRQ (a stray entry) is passed
  // on as written.
  if (!cq->tm_srq) return;
  if (is_tm_opcode(opcode)) {
    tm_parse_cqe(cq->tm_srq, cqe, out);
  } else if (!(opcode & IBV_WC_RECV)) {
    // A send-side CQE on a TM-SRQ's CQ: a rendezvous QP's internal WQE when the QP is one of
    // this SRQ's rendezvous QPs (their SEND_CQ is the SRQ's CQ; they have no send queue of the
    // application's).
    const tmnic_qp* qp = cq->dev->qp(ld32(cqe + hwif::cqe::QP_NUM_OFF));
    if (qp && qp_rndv_srq(qp) == cq->tm_srq) tm_parse_rndv_cqe(cq->tm_srq, cqe, out);
  }
}

const uint8_t* cq_peek(tmnic_cq* cq) { return cqe_if_new(cq->ring.data(), cq->ci, cq->log_size); }

void cq_consume(tmnic_cq* cq, const uint8_t* cqe) {
  reclaim_wqes(*cq->dev, cqe);
  cq->ci++;
}

void cq_doorbell(tmnic_cq* cq, bool arm) {
  cq->dev->write32(hwif::reg::DB_CQ0 + 4 * cq->cqn, (cq->ci & 0xFFFF) | (arm ? 1u << 31 : 0));
}

namespace {
// Drops the unpolled CQEs for which `drop(cqe)` is true (it may act on them, e.g. return an SRQ
// slot). Entries behind them move up; each destination keeps the owner bit of its own slot.
template <typename Pred>
void cq_remove_if(tmnic_cq* cq, Pred drop) {
  const bool locked = !cq->single_threaded && cq->lock.lock_unless_held();
  const uint32_t mask = (1u << cq->log_size) - 1;
  auto slot = [&](uint32_t i) { return cq->ring.data() + size_t(i & mask) * hwif::CQE_SIZE; };
  uint32_t end = cq->ci;
  while (end - cq->ci <= mask && cqe_if_new(cq->ring.data(), end, cq->log_size)) end++;
  uint32_t nfreed = 0;
  for (uint32_t i = end; i-- != cq->ci;) {
    uint8_t* c = slot(i);
    if (drop(c)) {
      nfreed++;
    } else if (nfreed) {
      uint8_t* dst = slot(i + nfreed);
      std::memcpy(dst, c, hwif::CQE_SIZE - 1);
      dst[hwif::cqe::OWNER_OFF] = cqe_owner(i + nfreed, cq->log_size);
    }
  }
  if (nfreed) {
    cq->ci += nfreed;
    cq_doorbell(cq, false);
  }
  if (locked) cq->lock.unlock();
}
}  // namespace

void cq_clean(tmnic_cq* cq, uint32_t qpn, tmnic_srq* srq, tmnic_srq* rndv_srq) {
  // As mlx5's __mlx5_cq_clean: drop the unpolled CQEs of a QP that is being reset or destroyed,
  // so the application never sees completions of a QP that no longer exists. Tag-matching CQEs
  // are the TM-SRQ's (tags, unexpected-message counts) and stay.
  cq_remove_if(cq, [&](const uint8_t* c) {
    if (ld32(c + hwif::cqe::QP_NUM_OFF) != qpn || is_tm_opcode(c[hwif::cqe::OPCODE_OFF]))
      return false;
    const bool recv = c[hwif::cqe::OPCODE_OFF] & IBV_WC_RECV;
    // A receive WQE of an SRQ was used up: give its slot back.
    if (srq && recv) srq_complete(srq);
    // A rendezvous QP's internal WQE (its send side has no other): a READ's tag is released.
    if (rndv_srq && !recv) tm_drop_rndv_cqe(rndv_srq, c);
    return true;
  });
}

void cq_clean_tm(tmnic_cq* cq) {
  cq_remove_if(cq, [](const uint8_t* c) { return is_tm_opcode(c[hwif::cqe::OPCODE_OFF]); });
}

namespace {
struct ibv_cq_ex* create_cq_common(struct ibv_context* ctx, struct ibv_cq_init_attr_ex* attr,
                                   bool extended) {
  Device& d = to_dev(ctx);
  const uint32_t known_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
  if (attr->comp_mask & ~known_mask) {
    errno = EINVAL;
    return nullptr;
  }
  uint32_t flags = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) ? attr->flags : 0;
  if ((attr->wc_flags & ~kSupportedWcFlags) || (flags & ~uint32_t(IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
    errno = EOPNOTSUPP;  // timestamps, CVLAN, flow tag, IGNORE_OVERRUN: no hardware for them
    return nullptr;
  }
  uint32_t max_cqe = (1u << d.max_log_queue) - 1;
  if (attr->cqe < 1 || attr->cqe > max_cqe || attr->comp_vector >= uint32_t(ctx->num_comp_vectors)) {
    errno = EINVAL;
    return nullptr;
  }
  int64_t cqn = d.cqns.alloc();
  if (cqn < 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* cq = new (std::nothrow) tmnic_cq();
  if (!cq) {
    d.cqns.release(uint32_t(cqn));
    errno = ENOMEM;
    return nullptr;
  }
  cq->dev = &d;
  cq->cqn = uint32_t(cqn);
  cq->log_size = log2_ring(attr->cqe);
  cq->single_threaded = flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
  cq->wc_flags = attr->wc_flags;
  cq->extended = extended;
  int err = cq->ring.alloc(d.be(), size_t(hwif::CQE_SIZE) << cq->log_size);
  if (!err) err = set_cq(d, cq->cqn, cq->ring.iova(), cq->log_size, 1);
  if (err) {
    cq->ring.release();
    d.cqns.release(cq->cqn);
    delete cq;
    errno = err;
    return nullptr;
  }
  struct ibv_cq_ex* c = &cq->ibv;
  c->context = ctx;
  c->channel = attr->channel;
  if (attr->channel) __atomic_add_fetch(&attr->channel->refcnt, 1, __ATOMIC_RELAXED);
  c->cq_context = attr->cq_context;
  c->handle = cq->cqn;
  c->cqe = int((1u << cq->log_size) - 1);
  pthread_mutex_init(&c->mutex, nullptr);
  pthread_cond_init(&c->cond, nullptr);
  cq_ex_init_ops(cq);
  tmnic_context* t = to_tctx(ctx);
  {
    std::lock_guard<std::mutex> g(t->cq_mu);
    t->cqs.push_back(cq);
  }
  if (attr->channel) d.set_irq_cq(cq->cqn, cq);
  d.set_cq_obj(cq->cqn, cq);
  return c;
}
}  // namespace

struct ibv_cq_ex* create_cq_ex(struct ibv_context* ctx, struct ibv_cq_init_attr_ex* attr) {
  return create_cq_common(ctx, attr, true);
}

struct ibv_cq* create_cq(struct ibv_context* ctx, int cqe, void* cq_context,
                         struct ibv_comp_channel* channel, int comp_vector) {
  if (cqe < 1 || comp_vector < 0) {
    errno = EINVAL;
    return nullptr;
  }
  struct ibv_cq_init_attr_ex attr = {};
  attr.cqe = uint32_t(cqe);
  attr.cq_context = cq_context;
  attr.channel = channel;
  attr.comp_vector = uint32_t(comp_vector);
  attr.wc_flags = IBV_WC_STANDARD_FLAGS;
  struct ibv_cq_ex* cq = create_cq_common(ctx, &attr, false);
  return cq ? ibv_cq_ex_to_cq(cq) : nullptr;
}

int destroy_cq(struct ibv_cq* ibcq) {
  tmnic_cq* cq = to_tcq(ibcq);
  if (cq->usecnt.load() != 0) return EBUSY;
  Device& d = *cq->dev;
  int err = set_cq(d, cq->cqn, 0, 0, 0);
  if (err) return err;
  d.set_irq_cq(cq->cqn, nullptr);  // the channel may be destroyed (its fd closed) after this
  d.set_cq_obj(cq->cqn, nullptr);  // no CQ error record reaches it after this
  drop_async_events(ibcq->context, reinterpret_cast<uintptr_t>(ibcq));
  tmnic_context* t = to_tctx(ibcq->context);
  {
    std::lock_guard<std::mutex> g(t->cq_mu);
    for (auto it = t->cqs.begin(); it != t->cqs.end(); ++it) {
      if (*it == cq) {
        t->cqs.erase(it);
        break;
      }
    }
  }
  // As libibverbs: wait until every event handed out by ibv_get_cq_event has been acked.
  pthread_mutex_lock(&ibcq->mutex);
  while (ibcq->comp_events_completed != cq->comp_events_reported ||
         ibcq->async_events_completed != cq->async_events_reported)
    pthread_cond_wait(&ibcq->cond, &ibcq->mutex);
  pthread_mutex_unlock(&ibcq->mutex);
  if (ibcq->channel) __atomic_sub_fetch(&ibcq->channel->refcnt, 1, __ATOMIC_RELAXED);
  cq->ring.release();
  d.cqns.release(cq->cqn);
  pthread_mutex_destroy(&ibcq->mutex);
  pthread_cond_destroy(&ibcq->cond);
  delete cq;
  return 0;
}

int poll_cq(struct ibv_cq* ibcq, int num_entries, struct ibv_wc* wc) {
  tmnic_cq* cq = to_tcq(ibcq);
  if (!cq->single_threaded) cq->lock.lock();
  int n = 0;
  bool consumed = false;
  while (n < num_entries) {
    const uint8_t* c = cq_peek(cq);
    if (!c) break;
    Completion cp;
    cq_parse(cq, c, &cp);
    if (!cp.skip) fill_wc(c, cp, &wc[n++]);
    cq_consume(cq, c);
    consumed = true;
  }
  if (consumed) cq_doorbell(cq, false);  // once per call, not per CQE
  if (!cq->single_threaded) cq->lock.unlock();
  // Nothing new: give a simulated device time to produce completions (no-op on hardware).
  if (n == 0 && num_entries > 0) cq->dev->progress();
  return n;
}

int req_notify_cq(struct ibv_cq* ibcq, int solicited_only) {
  // The hardware has a single arm bit: a solicited-only request is armed for every completion,
  // which at worst wakes the application early (permitted: events may be spurious).
  tmnic_cq* cq = to_tcq(ibcq);
  if (!cq->single_threaded) cq->lock.lock();
  cq->armed.store(true);
  cq_doorbell(cq, true);
  // The NIC interrupts for the next completion only; one already waiting must be reported too (as
  // mlx5 does when the arm doorbell's consumer index is behind the producer): the channel looks
  // again. "Already waiting" must include a CQE the NIC wrote while the arm doorbell was on its
  // way: a BAR read returns only after the NIC has taken the posted doorbell, and behind every DMA
  // write the NIC issued before (PCIe ordering), so after it a CQE is either visible here or was
  // written armed and interrupts. (If one lands between, the fd is signalled twice: harmless.)
  // An inline simulation needs none of this: ibv_get_cq_event looks at the CQ itself.
  if (cq->dev->autonomous()) (void)cq->dev->be()->read32(hwif::reg::ABI_VERSION);
  const bool waiting = cq_peek(cq) != nullptr;
  if (!cq->single_threaded) cq->lock.unlock();
  if (waiting && ibcq->channel && cq->dev->autonomous()) cq_interrupt(cq);
  return 0;
}

void cq_interrupt(tmnic_cq* cq) {
  cq->event_pending.store(true);
  uint64_t one = 1;
  ssize_t r = write(cq->ibv.channel->fd, &one, sizeof one);
  (void)r;  // only fails when the counter is near 2^64: the fd is readable then anyway
}

struct ibv_cq* take_cq_event(struct ibv_context* ctx, struct ibv_comp_channel* channel) {
  tmnic_context* t = to_tctx(ctx);
  const bool autonomous = t->dev->autonomous();
  {
    std::lock_guard<std::mutex> g(t->cq_mu);
    for (tmnic_cq* cq : t->cqs) {
      if (cq->ibv.channel != channel) continue;
      bool event;
      if (autonomous) {   // the interrupts say which CQs have an event
        event = cq->event_pending.exchange(false);
      } else {            // an armed CQ holding a new CQE
        if (!cq->armed.load()) continue;
        if (!cq->single_threaded) cq->lock.lock();
        event = cq_peek(cq) != nullptr;
        if (!cq->single_threaded) cq->lock.unlock();
      }
      if (!event) continue;
      cq->armed.store(false);  // one event per arm, as on hardware
      pthread_mutex_lock(&cq->ibv.mutex);
      cq->comp_events_reported++;
      pthread_mutex_unlock(&cq->ibv.mutex);
      return ibv_cq_ex_to_cq(&cq->ibv);
    }
  }
  if (!autonomous) t->dev->progress();  // an autonomous device signals the channel
  return nullptr;
}

void ack_cq_events(struct ibv_cq* cq, unsigned int nevents) {
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

}  // namespace tmnic
