// Device probing, the command interface, resource allocators, the world device table and the
// verbs context.
#include "device.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "cq.hpp"
#include "provider.hpp"
#include "util.hpp"

namespace tmnic {

void set_unsupported_ops(struct verbs_context* vctx);  // unsupported.cpp

// ---- IndexAllocator -------------------------------------------------------------------------

void IndexAllocator::reset(uint32_t first, uint32_t limit) {
  std::lock_guard<std::mutex> g(mu_);
  used_.assign(limit, false);
  first_ = first;
}

int64_t IndexAllocator::alloc() {
  std::lock_guard<std::mutex> g(mu_);
  for (uint32_t i = first_; i < used_.size(); i++) {
    if (!used_[i]) {
      used_[i] = true;
      return i;
    }
  }
  return -1;
}

void IndexAllocator::release(uint32_t idx) {
  std::lock_guard<std::mutex> g(mu_);
  if (idx < used_.size()) used_[idx] = false;
}

// ---- RangeAllocator -------------------------------------------------------------------------

void RangeAllocator::reset(uint32_t limit) {
  std::lock_guard<std::mutex> g(mu_);
  used_.clear();
  limit_ = limit;
}

int64_t RangeAllocator::alloc(uint32_t n) {
  std::lock_guard<std::mutex> g(mu_);
  if (n == 0) return -1;
  uint32_t base = 0;
  for (const auto& r : used_) {  // ordered by base: the gaps in between, lowest first
    if (r.first - base >= n) break;
    base = r.first + r.second;
  }
  if (base > limit_ || limit_ - base < n) return -1;
  used_[base] = n;
  return base;
}

void RangeAllocator::release(uint32_t base) {
  std::lock_guard<std::mutex> g(mu_);
  used_.erase(base);
}

// ---- DmaBuffer ------------------------------------------------------------------------------

int DmaBuffer::alloc(Backend* be, size_t bytes) {
  release();
  size_t len = (bytes + 4095) & ~size_t(4095);
  if (len == 0) len = 4096;
  void* p = std::aligned_alloc(4096, len);
  if (!p) return ENOMEM;
  std::memset(p, 0, len);  // CQ rings rely on it: owner bit 0 everywhere means "nothing new"
  be_ = be;
  buf_ = static_cast<uint8_t*>(p);
  len_ = len;
  iova_ = be->dma_map(buf_, len_);
  return 0;
}

void DmaBuffer::release() {
  if (!buf_) return;
  be_->dma_unmap(iova_, len_);
  std::free(buf_);
  buf_ = nullptr;
  len_ = 0;
}

// ---- Device ---------------------------------------------------------------------------------

uint64_t read_mac(Backend* be) {
  return uint64_t(be->read32(hwif::reg::MAC_HI) & 0xFFFF) << 32 | be->read32(hwif::reg::MAC_LO);
}

int Device::probe() {
  name_ = be_->name();
  uint32_t id = be_->read32(hwif::reg::ID);
  if (id != hwif::DEVICE_ID) {
    std::fprintf(stderr, "tmnic: %s: device ID 0x%08x is not a tmnic NIC (expected 0x%08x)\n",
                 name_.c_str(), id, hwif::DEVICE_ID);
    return ENODEV;
  }
  abi = be_->read32(hwif::reg::ABI_VERSION);
  if ((abi >> 16) != hwif::ABI_MAJOR) {
    std::fprintf(stderr,
                 "tmnic: %s: device ABI %u.%u is incompatible with this driver (ABI %u.%u): the "
                 "major versions must be equal\n",
                 name_.c_str(), abi >> 16, abi & 0xFFFF, hwif::ABI_MAJOR, hwif::ABI_MINOR);
    return EPROTONOSUPPORT;
  }
  // After reset the device clears its QP state table and shows the command interface busy until it
  // is done (commands written meanwhile are dropped): wait for it, as mlx5 waits for the
  // firmware's initializing bit.
  constexpr uint64_t kMaxInitPolls = 100000000;
  for (uint64_t n = 0; be_->read32(hwif::reg::CMD_STATUS) & 1; n++) {
    if (n == kMaxInitPolls) {
      std::fprintf(stderr, "tmnic: %s: the device stays busy after reset\n", name_.c_str());
      return EIO;
    }
    be_->progress();
  }
  data_bytes = be_->read32(hwif::reg::DATA_BYTES);
  clk_mhz = be_->read32(hwif::reg::CLK_MHZ);
  num_qp = be_->read32(hwif::reg::NUM_QP);
  num_cq = be_->read32(hwif::reg::NUM_CQ);
  num_srq = be_->read32(hwif::reg::NUM_SRQ);
  num_mr = be_->read32(hwif::reg::NUM_MR);
  max_sge = be_->read32(hwif::reg::MAX_SGE);
  max_log_queue = be_->read32(hwif::reg::MAX_LOG_QUEUE);
  mac = read_mac(be_.get());
  ipv4 = be_->read32(hwif::reg::IPV4);
  // A CQE names a tag by a 16-bit handle, so one TM-SRQ never holds more than 65536 tags; a larger
  // engine is still shared out in full among several TM-SRQs.
  tm_engine_tags = be_->read32(hwif::reg::TM_MAX_TAGS);
  tm_max_tags = tm_engine_tags > 0x10000 ? 0x10000 : tm_engine_tags;
  tm_caps = be_->read32(hwif::reg::TM_CAPS);
  ops_caps = be_->read32(hwif::reg::OPS_CAPS);
  // The WQE/CQE layouts are compile-time constants of this ABI; a device disagreeing with them,
  // or reporting limits the ABI cannot express (16-bit ring indices, 24-bit MR index), is broken.
  if (be_->read32(hwif::reg::WQE_STRIDE) != hwif::WQE_STRIDE ||
      be_->read32(hwif::reg::CQE_SIZE) != hwif::CQE_SIZE || max_sge > hwif::WQE_MAX_SGE ||
      max_log_queue > 15 || num_qp <= hwif::QPN_FIRST || num_qp > 0xFFFFFF || num_mr > 0xFFFFFF ||
      num_cq > 0xFFFFFF || num_srq >= hwif::NO_SRQ) {
    std::fprintf(stderr, "tmnic: %s: device reports inconsistent limits\n", name_.c_str());
    return ENODEV;
  }
  qpns.reset(hwif::QPN_FIRST, num_qp);
  cqns.reset(0, num_cq);
  srqns.reset(0, num_srq);
  mrns.reset(0, num_mr);
  tm_slots.reset(tm_engine_tags);
  pdns.reset(1, kMaxPd);  // PD 0 is never handed out: a zeroed context field is "no PD"
  mr_gen_.assign(num_mr, 0);
  qp_table_.reset(new std::atomic<tmnic_qp*>[num_qp]);
  for (uint32_t i = 0; i < num_qp; i++) qp_table_[i].store(nullptr);
  irq_cq_.assign(num_cq, nullptr);
  be_->set_irq_handler([this](uint32_t cqn) {
    if (cqn == async_cqn_) {
      poll_async();
      return;
    }
    std::lock_guard<std::mutex> g(irq_mu_);
    if (cqn < irq_cq_.size() && irq_cq_[cqn]) cq_interrupt(irq_cq_[cqn]);
  });
  start_async();
  return 0;
}

Device::~Device() {
  be_->set_irq_handler(nullptr);
  stop_async();
}

void Device::set_irq_cq(uint32_t cqn, tmnic_cq* cq) {
  std::lock_guard<std::mutex> g(irq_mu_);
  if (cqn < irq_cq_.size()) irq_cq_[cqn] = cq;
}

std::shared_ptr<Device> Device::open(const std::shared_ptr<Backend>& be) {
  static std::mutex mu;
  static std::map<Backend*, std::weak_ptr<Device>> open_devs;
  std::lock_guard<std::mutex> g(mu);
  auto it = open_devs.find(be.get());
  if (it != open_devs.end()) {
    if (auto d = it->second.lock()) return d;
  }
  auto dev = std::make_shared<Device>(be);
  if (int err = dev->probe()) {
    errno = err;
    return nullptr;
  }
  open_devs[be.get()] = dev;
  return dev;
}

int Device::cmd(uint32_t opcode, uint32_t index, const uint32_t* args, unsigned nargs,
                uint32_t* out, unsigned nout) {
  // Bound the wait so that a wedged device turns into an error instead of a hung application.
  constexpr uint64_t kMaxPolls = 100000000;
  std::lock_guard<std::mutex> g(cmd_mu_);
  for (unsigned i = 0; i < nargs; i++) be_->write32(hwif::reg::CMD_ARG0 + 4 * i, args[i]);
  be_->write32(hwif::reg::CMD, index << 8 | opcode);
  uint32_t st = be_->read32(hwif::reg::CMD_STATUS);
  for (uint64_t n = 0; st & 1; n++) {
    if (n == kMaxPolls) {
      std::fprintf(stderr, "tmnic: %s: command 0x%02x timed out\n", name_.c_str(), opcode);
      return EIO;
    }
    be_->progress();
    st = be_->read32(hwif::reg::CMD_STATUS);
  }
  if (st & 2) return EIO;
  for (unsigned i = 0; i < nout; i++) out[i] = be_->read32(hwif::reg::CMD_ARG0 + 4 * i);
  return 0;
}

uint8_t Device::next_mr_gen(uint32_t idx) {
  std::lock_guard<std::mutex> g(gen_mu_);
  return ++mr_gen_[idx];
}

// ---- neighbours ------------------------------------------------------------------------------

uint64_t resolve_mac(Backend& be, uint32_t ipv4) {
  uint64_t mac;
  if (be.resolve_neighbour(ipv4, &mac)) return mac & 0xFFFFFFFFFFFFull;
  return uint64_t(0x0200) << 32 | ipv4;
}

bool gid_to_ipv4(const union ibv_gid& gid, uint32_t* ipv4) {
  static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
  if (std::memcmp(gid.raw, prefix, 12) != 0) return false;
  *ipv4 = uint32_t(gid.raw[12]) << 24 | uint32_t(gid.raw[13]) << 16 | uint32_t(gid.raw[14]) << 8 |
          gid.raw[15];
  return true;
}

union ibv_gid ipv4_to_gid(uint32_t ipv4) {
  union ibv_gid gid;
  std::memset(&gid, 0, sizeof(gid));
  gid.raw[10] = gid.raw[11] = 0xFF;
  for (int i = 0; i < 4; i++) gid.raw[12 + i] = uint8_t(ipv4 >> (24 - 8 * i));
  return gid;
}

// ---- context --------------------------------------------------------------------------------

struct ibv_context* alloc_context(struct ibv_device* ibdev, const std::shared_ptr<Backend>& be) {
  auto dev = Device::open(be);
  if (!dev) return nullptr;
  auto* t = new (std::nothrow) tmnic_context();
  if (!t) {
    errno = ENOMEM;
    return nullptr;
  }
  t->dev = dev;
  // The async fd: readable while events are queued (one semaphore count each); blocking unless
  // the application sets O_NONBLOCK, as the kernel's.
  t->async_efd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (t->async_efd < 0) {
    int err = errno;
    delete t;
    errno = err;
    return nullptr;
  }
  struct verbs_context* v = &t->vctx;
  struct ibv_context* ctx = &v->context;
  ctx->device = ibdev;
  // No kernel, so no uverbs command channel; but ibv_context.cmd_fd is an open descriptor on every
  // real device, and programs dup it (pyverbs' shared-PD tests, before ibv_import_device, which
  // answers EOPNOTSUPP here). /dev/null: a valid descriptor that carries nothing.
  t->cmd_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  ctx->cmd_fd = t->cmd_fd;
  ctx->async_fd = t->async_efd;
  ctx->num_comp_vectors = 1;
  pthread_mutex_init(&ctx->mutex, nullptr);
  ctx->abi_compat = reinterpret_cast<void*>(UINTPTR_MAX);  // "this is a verbs_context"
  v->sz = sizeof(struct verbs_context);

  ctx->ops.poll_cq = poll_cq;
  ctx->ops.req_notify_cq = req_notify_cq;
  ctx->ops.post_send = post_send;
  ctx->ops.post_recv = post_recv;
  ctx->ops.post_srq_recv = post_srq_recv;
  set_unsupported_ops(v);  // includes alloc_mw/bind_mw/... and every extended op we lack
  v->query_port = query_port;
  v->query_device_ex = query_device_ex;
  v->create_cq_ex = create_cq_ex;
  v->create_srq_ex = create_srq_ex;
  v->post_srq_ops = post_srq_ops;
  v->create_qp_ex = create_qp_ex;
  return ctx;
}

int free_context(struct ibv_context* ctx) {
  tmnic_context* t = to_tctx(ctx);
  close(t->async_efd);
  if (t->cmd_fd >= 0) close(t->cmd_fd);
  pthread_mutex_destroy(&ctx->mutex);
  delete t;
  return 0;
}

}  // namespace tmnic
