// One tmnic NIC as the provider sees it (BAR0 limits, the command interface, resource number
// allocators) and the verbs context wrapper around it.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <deque>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tmnic/backend.hpp"
#include "tmnic/hwif.h"
#include "util.hpp"

struct tmnic_qp;
struct tmnic_cq;

namespace tmnic {

// Hands out the numbers [first, limit) of one resource table (QPN, CQN, SRQN, MR index, PDN).
// Lowest free number first, so that numbers are small and runs are reproducible (readable
// simulation traces).
class IndexAllocator {
 public:
  void reset(uint32_t first, uint32_t limit);
  int64_t alloc();  // -1 when the table is full
  void release(uint32_t idx);
  uint32_t limit() const { return uint32_t(used_.size()); }

 private:
  std::mutex mu_;
  std::vector<bool> used_;
  uint32_t first_ = 0;
};

// Hands out contiguous ranges of [0, limit): the tag-matching engine's entries, shared by all
// TM-SRQs of a device (each gets [base, base + n)). First fit, lowest base first.
class RangeAllocator {
 public:
  void reset(uint32_t limit);
  int64_t alloc(uint32_t n);  // base of the range, or -1 when no gap of n entries is left
  void release(uint32_t base);

 private:
  std::mutex mu_;
  std::map<uint32_t, uint32_t> used_;  // base -> length
  uint32_t limit_ = 0;
};

class Device {
 public:
  // Opens the device behind `be`, or returns the Device already opened on it (contexts of one
  // process share the hardware tables, so they must share the allocators too). Refuses (nullptr,
  // errno ENODEV / EPROTONOSUPPORT, message on stderr) a device whose ID is not tmnic's or whose
  // ABI major differs from the one this driver was generated against.
  static std::shared_ptr<Device> open(const std::shared_ptr<Backend>& be);
  explicit Device(std::shared_ptr<Backend> be) : be_(std::move(be)) {}
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Backend* be() const { return be_.get(); }
  const std::string& name() const { return name_; }

  // Executes one command: CMD_ARG words, CMD = index << 8 | opcode, then polls CMD_STATUS,
  // letting the device progress while busy. Reads back `nout` argument words (QUERY_*) on
  // success. Returns 0, or EIO if the device set the error bit (bad index/opcode: nothing
  // changed) or never finished.
  int cmd(uint32_t opcode, uint32_t index, const uint32_t* args, unsigned nargs,
          uint32_t* out = nullptr, unsigned nout = 0);
  void write32(uint32_t off, uint32_t val) { be_->write32(off, val); }
  void progress() { be_->progress(); }

  // Per-index generation counter of the MR table: the low 8 bits of a new MR's key, so a stale
  // key of a deregistered MR does not match the entry's next owner.
  uint8_t next_mr_gen(uint32_t idx);

  // QPN -> QP, for CQ polling (slot reclaim). Lock-free reads from the poll path.
  void set_qp(uint32_t qpn, tmnic_qp* qp) { qp_table_[qpn].store(qp, std::memory_order_release); }
  tmnic_qp* qp(uint32_t qpn) const {
    return qpn < num_qp ? qp_table_[qpn].load(std::memory_order_acquire) : nullptr;
  }

  // Completion events. On an autonomous device (Backend::autonomous) the interrupt of an armed CQ
  // is handed to cq_interrupt() for the CQ that set_irq_cq(cqn, cq) names (null: none). After
  // set_irq_cq returns, the handler no longer uses the old CQ (or its channel).
  bool autonomous() const { return be_->autonomous(); }
  void set_irq_cq(uint32_t cqn, tmnic_cq* cq);

  // The NIC's asynchronous event records (hwif ASYNC_CQ; async_events.cpp): a CQ of the driver's
  // own that the NIC writes {kind, QP} records to, each with an interrupt. poll_async() turns the
  // new ones into async events of the QPs' contexts (ibv_get_async_event); the interrupt handler
  // calls it. unset_qp() is set_qp(qpn, nullptr) ordered against it: once it returns, no record
  // reaches that QP any more.
  void poll_async();
  void unset_qp(uint32_t qpn);
  // CQN -> CQ for the NIC's CQ error records: set_cq_obj(cqn, cq) at create, null at destroy
  // (ordered against poll_async as unset_qp is).
  void set_cq_obj(uint32_t cqn, tmnic_cq* cq);
  uint32_t async_cqn() const { return async_cqn_; }  // kNoAsyncCq when there is none
  static constexpr uint32_t kNoAsyncCq = UINT32_MAX;

  // Read-only registers, read once at open.
  uint32_t abi = 0, data_bytes = 0, clk_mhz = 0;
  uint32_t num_qp = 0, num_cq = 0, num_srq = 0, num_mr = 0, max_sge = 0, max_log_queue = 0;
  uint64_t mac = 0;    // 48-bit, byte 0 (first on the wire) in bits 47:40
  uint32_t ipv4 = 0;   // a.b.c.d as 0xaabbccdd
  // Tag matching: engine entries (TM_MAX_TAGS, 0 = none), the most one TM-SRQ may have (at most
  // 65536: CQEs name a tag by a 16-bit handle) and TM_CAPS (bit 0: rendezvous offload).
  uint32_t tm_engine_tags = 0, tm_max_tags = 0, tm_caps = 0;
  // OPS_CAPS: the send-queue operations beyond SEND the NIC executes (bit 0 RDMA WRITE incl.
  // WRITE_WITH_IMM, bit 1 RDMA READ, bit 2 UD QPs, bit 3 atomics). The driver accepts and reports
  // only those.
  uint32_t ops_caps = 0;
  // UD queue pairs (and so address handles): OPS_CAPS.UD on a device of ABI 1.5 or later (the
  // SET_QP TYPE/QKEY words and the UD send WQE are 1.5's).
  bool ud_supported() const {
    return (abi & 0xFFFF) >= 5 && hwif::regf::ops_caps::UD.get(ops_caps) != 0;
  }
  // RDMA READ: OPS_CAPS.RDMA_READ (first set by a device of ABI 1.9, which has
  // SET_QP.MAX_RD_ATOMIC and the MAX_RD_ATOM resources).
  bool read_supported() const { return hwif::regf::ops_caps::RDMA_READ.get(ops_caps) != 0; }
  // Atomics (CMP_AND_SWP, FETCH_AND_ADD on RC, as requester and responder, IBV_ATOMIC_HCA):
  // OPS_CAPS.ATOMIC (first set by a device of ABI 1.10, whose WQE carries the ATOMIC operands).
  bool atomic_supported() const { return hwif::regf::ops_caps::ATOMIC.get(ops_caps) != 0; }
  // Address handles are software objects (the WQE carries the resolved destination); the
  // driver hands out at most kMaxAh per device (ibv_query_device max_ah).
  std::atomic<uint32_t> num_ah{0};
  std::atomic<uint32_t> next_ah_handle{0};

  IndexAllocator qpns, cqns, srqns, mrns, pdns;
  RangeAllocator tm_slots;  // engine entries of the TM-SRQs
  static constexpr uint32_t kMaxPd = 1u << 16;  // PDs are only numbers written into MR/QP/SRQ
  static constexpr uint32_t kMaxInline = hwif::WQE_MAX_INLINE;
  static constexpr uint32_t kMaxAh = 1u << 16;
  // The port's MTU (ibv_query_port active_mtu = max_mtu); a UD QP's PATH_MTU.
  static constexpr enum ibv_mtu kActiveMtu = IBV_MTU_4096;

 private:
  int probe();  // reads and checks the read-only registers
  void start_async();  // takes a CQ for the event records (none left: no NIC events)
  void stop_async();

  std::shared_ptr<Backend> be_;
  std::string name_;
  std::mutex cmd_mu_;
  std::unique_ptr<std::atomic<tmnic_qp*>[]> qp_table_;
  std::vector<tmnic_cq*> cq_table_;  // under async_mu_
  std::mutex gen_mu_;
  std::vector<uint8_t> mr_gen_;
  std::mutex async_mu_;             // poll_async against itself and unset_qp
  DmaBuffer async_ring_;
  uint32_t async_cqn_ = kNoAsyncCq, async_ci_ = 0;
  static constexpr uint32_t kAsyncLog = 8;  // 256 records
  std::mutex irq_mu_;               // the interrupt handler against set_irq_cq
  std::vector<tmnic_cq*> irq_cq_;   // CQN -> CQ with a completion channel, or null
};

// MAC register pair <-> 48-bit MAC.
uint64_t read_mac(Backend* be);

// Destination MAC for a RoCEv2 peer reached through `be`: what its neighbour resolution gives;
// otherwise the locally administered 02:00:a:b:c:d.
uint64_t resolve_mac(Backend& be, uint32_t ipv4);

// IPv4 of an IPv4-mapped GID (::ffff:a.b.c.d); false for any other GID.
bool gid_to_ipv4(const union ibv_gid& gid, uint32_t* ipv4);
union ibv_gid ipv4_to_gid(uint32_t ipv4);

}  // namespace tmnic

// A queued async event (read back by ibv_get_async_event).
struct tmnic_async_event {
  uint64_t element;  // struct ibv_srq/qp/cq pointer, or port number
  uint32_t event_type;
  uint32_t reserved;
};

// The verbs context of one open device (rdma-core provider style: the public struct first).
struct tmnic_context {
  struct verbs_context vctx;  // must stay first: the library converts pointers by casting
  std::shared_ptr<tmnic::Device> dev;
  // Async events (ibv_get_async_event): a queue and a semaphore eventfd (ibv_context.async_fd) with
  // one count per queued record, as the kernel's async event file. See async_events.cpp.
  int async_efd = -1;
  std::mutex async_mu;
  std::deque<struct tmnic_async_event> async_q;
  int cmd_fd = -1;                // ibv_context.cmd_fd: /dev/null (there is no uverbs channel)
  std::mutex cq_mu;              // protects cqs
  std::vector<tmnic_cq*> cqs;    // scanned by ibv_get_cq_event
};


inline tmnic_context* to_tctx(struct ibv_context* ctx) {
  return reinterpret_cast<tmnic_context*>(verbs_get_ctx(ctx));
}
inline tmnic::Device& to_dev(struct ibv_context* ctx) { return *to_tctx(ctx)->dev; }
