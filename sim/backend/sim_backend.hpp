// The simulation backend of the driver: every device the driver opens is a NIC of one
// process-wide simulated World, created on first use from SimConfig::from_env().
#pragma once
#include "tmnic/backend.hpp"
#include "world/world.hpp"

namespace tmnic::sim {

// The process-wide world (created on first call).
World& global_world();
// Replace the world (tests that need a fresh one or their own configuration); drops devices' state.
void reset_global_world(const SimConfig& cfg);

// Every call holds the world's lock (World::lock()), so that threads of the application and the
// world's progress thread may use it at once.
class SimBackend : public Backend {
 public:
  SimBackend(World& w, int nic) : w_(w), nic_(nic) {}
  uint32_t read32(uint32_t off) override;
  void write32(uint32_t off, uint32_t val) override;
  uint64_t dma_map(void* va, size_t len) override;
  void dma_unmap(uint64_t iova, size_t len) override;
  void progress() override;
  void settle() override;
  bool autonomous() const override { return w_.threaded(); }
  void set_irq_handler(std::function<void(uint32_t)> h) override;
  std::string name() const override { return "tmnic" + std::to_string(nic_); }
  bool resolve_neighbour(uint32_t ipv4, uint64_t* mac) override;
  int nic() const { return nic_; }

 private:
  World& w_;
  int nic_;
};

}  // namespace tmnic::sim
