// A C++ stand-in for a tmnic device, for driver unit tests and for linking libibverbs.so.1 without
// the simulator: serves the read-only registers, completes commands at once (recording them),
// records doorbells, and maps DMA by identity (IOVA = host address).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "tmnic/backend.hpp"
#include "tmnic/hwif.h"

namespace tmnic::fake {

struct Config {
  std::string name = "tmnic0";
  uint32_t id = hwif::DEVICE_ID;
  // ABI 1.3 by default: a NIC without the asynchronous event queue (ASYNC_CQ, 1.4), so that the
  // driver takes no CQ and sends no command at open; tests of the event queue ask for 1.4, tests
  // of UD QPs for 1.5 plus the OPS_CAPS UD bit (test_ud.cpp).
  uint32_t abi = hwif::ABI_MAJOR << 16 | 3;
  uint32_t num_qp = 64;
  uint32_t num_cq = 32;
  uint32_t num_srq = 8;
  uint32_t num_mr = 128;
  uint32_t max_sge = hwif::WQE_MAX_SGE;
  uint32_t max_log_queue = hwif::MAX_LOG_QUEUE;
  uint64_t mac = 0x020000000001ull;  // 02:00:00:00:00:01
  uint32_t ipv4 = 0x0A000001;        // 10.0.0.1
  uint32_t tm_max_tags = 0;          // TM_MAX_TAGS: 0 = no tag matching
  uint32_t tm_caps = 0;              // TM_CAPS (bit 0: rendezvous offload)
  uint32_t ops_caps = 0;             // OPS_CAPS (bit 0: RDMA WRITE(+IMM), 1: RDMA READ, 2: UD)
  bool autonomous = false;           // Backend::autonomous(): completion events from irq
};

struct Command {
  uint32_t opcode = 0;
  uint32_t index = 0;
  std::array<uint32_t, hwif::NUM_CMD_ARGS> args{};
};

struct RegWrite {
  uint32_t off;
  uint32_t val;
};

class FakeBackend : public Backend {
 public:
  explicit FakeBackend(Config cfg = Config());

  uint32_t read32(uint32_t off) override;
  void write32(uint32_t off, uint32_t val) override;
  uint64_t dma_map(void* va, size_t len) override;
  void dma_unmap(uint64_t iova, size_t len) override;
  void progress() override;
  bool autonomous() const override { return cfg_.autonomous; }
  void set_irq_handler(std::function<void(uint32_t)> h) override { irq = std::move(h); }
  std::string name() const override { return cfg_.name; }
  bool resolve_neighbour(uint32_t ipv4, uint64_t* mac) override;

  // --- inspection and fault injection for tests ---
  const Config& config() const { return cfg_; }
  std::vector<Command> commands;       // every executed command, in order
  std::vector<RegWrite> doorbells;     // every write to the doorbell pages (>= DB_SQ0)
  std::multimap<uint64_t, size_t> mappings;  // live DMA mappings: iova -> length
  int bad_unmaps = 0;                  // dma_unmap of something never mapped
  int progress_calls = 0;
  std::function<void()> on_progress;   // runs inside progress(): lets a test "be the NIC"
  std::function<void(uint32_t)> irq;  // the driver's interrupt handler: a test raises CQ interrupts
  std::function<void(const Command&)> on_command;  // runs as each command executes
  uint32_t fail_opcode = 0xFFFFFFFF;   // commands with this opcode set the error bit
  int busy_polls = 0;                  // CMD_STATUS reads that report busy before completing
  std::map<uint32_t, uint64_t> neighbours;  // what resolve_neighbour knows: IPv4 -> MAC

  std::vector<Command> commands_with(uint32_t opcode) const;
  std::vector<RegWrite> doorbells_at(uint32_t off) const;

 private:
  void execute(uint32_t cmd);

  Config cfg_;
  std::mutex mu_;
  std::vector<uint32_t> regs_;
  int busy_left_ = 0;
  std::map<uint32_t, std::array<uint32_t, hwif::NUM_CMD_ARGS>> qp_ctx_;  // for QUERY_QP
};

}  // namespace tmnic::fake
