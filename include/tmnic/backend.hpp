// The driver's only view of a device: BAR0 access, DMA mapping and a way to let the device make
// progress. The simulation (default) and a real card (VFIO, later) implement it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tmnic {

class Backend {
 public:
  virtual ~Backend() = default;
  // 32-bit access to BAR0 at byte offset `off`.
  virtual uint32_t read32(uint32_t off) = 0;
  virtual void write32(uint32_t off, uint32_t val) = 0;
  // Make [va, va+len) reachable by device DMA; returns the IO virtual address. The range stays
  // mapped, and the memory must stay valid, until dma_unmap. Any DMA outside a mapping is a bug
  // that the simulation reports as a failure.
  virtual uint64_t dma_map(void* va, size_t len) = 0;
  virtual void dma_unmap(uint64_t iova, size_t len) = 0;
  // Called by the driver when it waits for the device (empty poll, command busy). A simulation
  // advances its clock; an autonomous device (a card, a simulation with a progress thread) waits a
  // little (at most about a millisecond) for something to happen.
  virtual void progress() = 0;
  // Called before the driver looks at what the device has produced so far where hardware would
  // have produced it already (ibv_resize_cq's count of unpolled completions): a simulation that
  // advances only when asked runs until it has done the work posted to it; a device that advances
  // by itself does nothing.
  virtual void settle() {}
  // True when the device advances by itself, whatever the driver does: then completion events come
  // from interrupts (set_irq_handler) and nothing needs progress() to happen.
  virtual bool autonomous() const = 0;
  // Interrupt delivery: `h` is called with the CQ number whenever the device raises the interrupt of
  // an armed CQ (DB_CQ ARM), after that CQ's completion is visible in host memory. It runs in the
  // device's context (a simulation's progress thread or a waiting driver call, a card's interrupt
  // thread), one call at a time; it may write32 (re-arm a CQ) but not read32. Null removes the
  // handler; once set_irq_handler returns, the old one is not running and never runs again.
  virtual void set_irq_handler(std::function<void(uint32_t cqn)> h) = 0;
  // Device name, e.g. "tmnic0".
  virtual std::string name() const = 0;
  // Neighbour resolution for RoCE: the MAC address (48 bits) of the host owning `ipv4` on this
  // device's network, as the kernel's neighbour table gives it for a real port and the simulated
  // world's switch for a simulated NIC. false: not known.
  virtual bool resolve_neighbour(uint32_t ipv4, uint64_t* mac) = 0;
};

// All devices of the configured backend (TMNIC_BACKEND=sim, the default; see docs/howto.md).
std::vector<std::shared_ptr<Backend>> open_backends();

}  // namespace tmnic
