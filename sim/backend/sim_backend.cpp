#include "backend/sim_backend.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace tmnic::sim {

namespace {
std::unique_ptr<World>& world_slot() {
  static std::unique_ptr<World> w;
  return w;
}
}  // namespace

World& global_world() {
  auto& w = world_slot();
  if (!w) w = std::make_unique<World>(SimConfig::from_env());
  return *w;
}

void reset_global_world(const SimConfig& cfg) {
  world_slot().reset();
  world_slot() = std::make_unique<World>(cfg);
}

uint64_t SimBackend::dma_map(void* va, size_t len) {
  if (len == 0) len = 1;
  auto a = reinterpret_cast<uintptr_t>(va);
  uintptr_t base = a & ~(Iommu::kPage - 1);
  uint64_t span = ((a + len + Iommu::kPage - 1) & ~(Iommu::kPage - 1)) - base;
  Iommu& mmu = w_.nic(nic_).iommu();
  uint64_t iova = mmu.alloc_iova(span);
  mmu.map(iova, reinterpret_cast<void*>(base), span);
  return iova + (a - base);
}

void SimBackend::dma_unmap(uint64_t iova, size_t) {
  w_.nic(nic_).iommu().unmap(iova & ~(Iommu::kPage - 1));
}

}  // namespace tmnic::sim

namespace tmnic {

std::vector<std::shared_ptr<Backend>> open_backends() {
  std::vector<std::shared_ptr<Backend>> v;
  const char* kind = std::getenv("TMNIC_BACKEND");
  if (kind && std::string(kind) != "sim") {
    // A real-card (VFIO) backend does not exist yet; refuse rather than pretend.
    return v;
  }
  sim::World* wp = nullptr;
  try {
    wp = &sim::global_world();
  } catch (const std::exception& e) {   // e.g. the configured fabric address is taken: no device
    std::fprintf(stderr, "%s\n", e.what());
    return v;
  }
  sim::World& w = *wp;
  for (int i = 0; i < w.num_nics(); i++) v.push_back(std::make_shared<sim::SimBackend>(w, i));
  return v;
}

}  // namespace tmnic
