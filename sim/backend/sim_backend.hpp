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

class SimBackend : public Backend {
 public:
  SimBackend(World& w, int nic) : w_(w), nic_(nic) {}
  uint32_t read32(uint32_t off) override { return w_.mmio_read(nic_, off); }
  void write32(uint32_t off, uint32_t val) override { w_.mmio_write(nic_, off, val); }
  uint64_t dma_map(void* va, size_t len) override;
  void dma_unmap(uint64_t iova, size_t len) override;
  void progress() override { w_.progress(); }
  std::string name() const override { return "tmnic" + std::to_string(nic_); }
  bool resolve_neighbour(uint32_t ipv4, uint64_t* mac) override { return w_.resolve_neighbour(ipv4, mac); }
  int nic() const { return nic_; }

 private:
  World& w_;
  int nic_;
};

}  // namespace tmnic::sim
