#include "backend/sim_control.h"

#include <vector>

#include "backend/sim_backend.hpp"

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

uint64_t tmnic_sim_now(void) { return global_world().now(); }
double tmnic_sim_clk_mhz(void) { return global_world().config().clk_mhz; }
uint64_t tmnic_sim_cycles_evaluated(void) { return global_world().cycles_run(); }
int tmnic_sim_num_nics(void) { return global_world().num_nics(); }
uint32_t tmnic_sim_read_reg(int nic, uint32_t off) { return global_world().mmio_read(nic, off); }

void tmnic_sim_watch(int nic, const void* addr, size_t len) {
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
  auto& w = watches();
  return size_t(nic) < w.size() ? w[nic].hits : 0;
}

void tmnic_sim_corrupt_tx(int nic, int count) { global_world().corrupt_tx(nic, count); }
void tmnic_sim_corrupt_tx_after(int nic, int skip, int count) { global_world().corrupt_tx(nic, count, skip); }

void tmnic_sim_run(uint64_t cycles) { global_world().progress(cycles); }

}  // extern "C"
