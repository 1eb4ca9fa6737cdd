// One simulated NIC: the Verilated tmnic_top plus the host side of its PCIe link (BAR accesses
// with latency, DMA served through its own IOMMU with latency and bandwidth limits) and its MAC
// port (frames in and out at line rate). Clocked by the World, one cycle per tick().
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "host/iommu.hpp"
#include "host/sim_config.hpp"
#include "lib/axil_master.hpp"

class Vtmnic_top;
class VerilatedContext;
class VerilatedFstC;

namespace tmnic::sim {

class NicSim {
 public:
  NicSim(int index, const SimConfig& cfg);
  ~NicSim();
  NicSim(const NicSim&) = delete;
  NicSim& operator=(const NicSim&) = delete;

  int index() const { return index_; }
  // Bytes per beat of the NIC's DMA and MAC ports (tmnic_top DATA_W / 8), as the model was built.
  static unsigned beat_bytes();
  Iommu& iommu() { return iommu_; }

  // One clock cycle at time `now` (cycles).
  void tick(uint64_t now);
  // Nothing in flight on either side: skipping cycles changes nothing until next_event().
  bool quiet() const;
  // Earliest cycle at which pending host/network work or an RTL timer needs the clock (UINT64_MAX: never).
  uint64_t next_event() const;

  // BAR0 access from the host CPU, issued at cycle `now`.
  void mmio_write(uint32_t off, uint32_t val, uint64_t now);
  uint64_t mmio_read_start(uint32_t off, uint64_t now);   // returns a ticket
  // BAR accesses issued and not yet done on the NIC's AXI4-Lite port (in order: writes and reads).
  uint64_t mmio_issued() const { return mmio_issued_; }
  uint64_t mmio_done() const { return mmio_done_; }
  bool mmio_read_result(uint64_t ticket, uint64_t now, uint32_t* val);

  // A frame arriving from the wire at cycle `at`.
  void rx_frame(std::vector<uint8_t> frame, uint64_t at);
  // Frames leaving on the MAC port.
  std::function<void(std::vector<uint8_t>&&)> on_tx;
  // The interrupt of an armed CQ (irq_o, with the CQ in irq_cq_o), delivered as the host sees it:
  // after that CQ's CQE is visible in host memory.
  std::function<void(uint32_t cqn)> on_irq;

  // Optional log of interface events with their cycle, for latency breakdowns (bench/).
  enum class Ev { kMmioWrite, kDmaReadReq, kDmaReadData, kDmaWrite, kTxFrame, kRxFrame };
  struct Event { uint64_t cycle; Ev kind; uint64_t addr; };
  void set_event_log(std::vector<Event>* log) { log_ = log; }

  uint64_t dma_writes_applied() const { return writes_applied_; }
  uint64_t irq_count() const { return irqs_; }

 private:
  struct Mmio { bool write; uint32_t off; uint32_t val; uint64_t due; uint64_t ticket; };
  struct RxFrame { std::vector<uint8_t> bytes; uint64_t arrival; };

  void drive_inputs(uint64_t now);
  void sample_and_clock(uint64_t now);

  int index_;
  SimConfig cfg_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_top> top_;
  // Null unless waveforms were asked for; the deleter (closes the file) lives where tracing is built.
  std::unique_ptr<VerilatedFstC, void (*)(VerilatedFstC*)> trace_{nullptr, nullptr};
  Iommu iommu_;
  std::mt19937_64 rng_;

  std::deque<Mmio> mmio_q_;
  bool mmio_busy_ = false;        // the head transaction is on the AXI-Lite bus
  tb::AxilMaster bar_;            // BAR0: the AXI4-Lite master (no gaps, BREADY/RREADY high)
  uint64_t next_ticket_ = 1;
  uint64_t mmio_issued_ = 0, mmio_done_ = 0;
  std::deque<std::pair<uint64_t, std::pair<uint32_t, uint64_t>>> read_results_;  // ticket -> (value, ready)

  // Host memory through the IOMMU, as the NIC's AXI4 slave (tb::AxiMem of the model's beat width:
  // defined where the model's header is seen).
  class Dma;
  std::unique_ptr<Dma> dma_;
  double rd_credit_ = 0, wr_credit_ = 0, tx_credit_ = 0;
  double rd_bpc_, wr_bpc_, tx_bpc_;

  std::deque<RxFrame> rx_q_;
  size_t rx_off_ = 0;
  std::vector<uint8_t> tx_frame_;

  void log(uint64_t cycle, Ev k, uint64_t addr = 0) { if (log_) log_->push_back({cycle, k, addr}); }
  std::vector<Event>* log_ = nullptr;
  uint64_t writes_applied_ = 0;
  uint64_t irqs_ = 0;
  std::deque<std::pair<uint64_t, uint32_t>> irq_q_;   // interrupts on their way: (due, CQ)
  uint64_t last_now_ = 0;
};

}  // namespace tmnic::sim
