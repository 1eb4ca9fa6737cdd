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

uint32_t SimBackend::read32(uint32_t off) {
  uint32_t v;
  {
    std::lock_guard<BusLock> g(w_.lock());
    v = w_.mmio_read(nic_, off);   // the CPU stalls for the round trip: the world runs meanwhile
  }
  // The cycles run for the read may have started work (a frame arrived, a DMA due) that a sleeping
  // progress thread does not know about, and raised interrupts.
  if (w_.threaded()) w_.kick();
  w_.deliver_irqs();
  return v;
}

void SimBackend::write32(uint32_t off, uint32_t val) {
  {
    std::lock_guard<BusLock> g(w_.lock());
    w_.mmio_write(nic_, off, val);
  }
  if (w_.threaded()) w_.kick();
}

void SimBackend::progress() {
  if (w_.threaded()) {
    w_.wait_progress(World::kFabricWaitUs);
    return;
  }
  {
    std::lock_guard<BusLock> g(w_.lock());
    w_.progress();
  }
  w_.deliver_irqs();
}

void SimBackend::settle() {
  if (w_.threaded()) return;   // (it runs by itself)
  {
    std::lock_guard<BusLock> g(w_.lock());
    // Until nothing is left to do (or 10 M cycles, 40 ms at 250 MHz, if a timer keeps it busy).
    const uint64_t end = w_.now() + 10'000'000;
    while (w_.now() < end && w_.progress(end - w_.now())) {
    }
  }
  w_.deliver_irqs();
}

void SimBackend::set_irq_handler(std::function<void(uint32_t)> h) { w_.set_irq_handler(nic_, std::move(h)); }

bool SimBackend::resolve_neighbour(uint32_t ipv4, uint64_t* mac) {
  std::lock_guard<BusLock> g(w_.lock());
  return w_.resolve_neighbour(ipv4, mac);
}

uint64_t SimBackend::dma_map(void* va, size_t len) {
  std::lock_guard<BusLock> g(w_.lock());
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
  std::lock_guard<BusLock> g(w_.lock());
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
