#include "backend/sim_control.h"

#include <vector>

#include "backend/sim_backend.hpp"

using tmnic::sim::BusLock;
using tmnic::sim::global_world;

namespace {
struct Watch {
  const uint8_t* lo = nullptr;
  const uint8_t* hi = nullptr;
  uint64_t hits = 0;
};
std::vector<Watch>& watches() {
  static std::vector<Watch> w;
  return w;
}
}  // namespace

extern "C" {

// Every entry point holds the world's lock: a progress thread may be running it.
#define WORLD_LOCKED std::lock_guard<BusLock> g_(global_world().lock())

uint64_t tmnic_sim_now(void) {
  WORLD_LOCKED;
  return global_world().now();
}
double tmnic_sim_clk_mhz(void) { return global_world().config().clk_mhz; }
uint64_t tmnic_sim_cycles_evaluated(void) {
  WORLD_LOCKED;
  return global_world().cycles_run();
}
int tmnic_sim_num_nics(void) { return global_world().num_nics(); }
int tmnic_sim_threaded(void) { return global_world().threaded() ? 1 : 0; }
uint64_t tmnic_sim_thread_wakeups(void) { return global_world().thread_wakeups(); }
uint32_t tmnic_sim_read_reg(int nic, uint32_t off) {
  uint32_t v;
  {
    WORLD_LOCKED;
    v = global_world().mmio_read(nic, off);
  }
  global_world().deliver_irqs();
  return v;
}

void tmnic_sim_watch(int nic, const void* addr, size_t len) {
  WORLD_LOCKED;
  auto& w = watches();
  if (w.size() < size_t(global_world().num_nics())) w.resize(global_world().num_nics());
  Watch& x = w.at(nic);
  x.lo = static_cast<const uint8_t*>(addr);
  x.hi = x.lo + len;
  x.hits = 0;
  global_world().nic(nic).iommu().set_observer([&x](bool, uint64_t, const uint8_t* host, size_t n) {
    if (host < x.hi && host + n > x.lo) x.hits++;
  });
}

uint64_t tmnic_sim_watch_hits(int nic) {
  WORLD_LOCKED;
  auto& w = watches();
  return size_t(nic) < w.size() ? w[nic].hits : 0;
}

void tmnic_sim_corrupt_tx(int nic, int count) {
  WORLD_LOCKED;
  global_world().corrupt_tx(nic, count);
}
void tmnic_sim_corrupt_tx_after(int nic, int skip, int count) {
  WORLD_LOCKED;
  global_world().corrupt_tx(nic, count, skip);
}

void tmnic_sim_run(uint64_t cycles) {
  auto& w = global_world();
  if (w.threaded()) {   // the world runs by itself: wait until it made some progress
    w.wait_progress(tmnic::sim::World::kFabricWaitUs);
    return;
  }
  {
    WORLD_LOCKED;
    w.progress(cycles);
  }
  w.deliver_irqs();
}

}  // extern "C"
