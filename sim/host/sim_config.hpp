// Timing model of the simulated host and network. Defaults approximate a PCIe Gen3 x16 host and a
// 100 Gb/s link; every value can be overridden from the environment (see docs/simulation.md).
#pragma once
#include <cstdint>
#include <string>

namespace tmnic::sim {

struct SimConfig {
  double clk_mhz = 250.0;        // NIC core clock
  // PCIe link model
  double mmio_write_ns = 150.0;  // posted BAR write: CPU store to arrival at the NIC
  double mmio_read_ns = 800.0;   // non-posted BAR read: round trip
  double dma_read_ns = 600.0;    // DMA read request to first data at the NIC
  double dma_write_ns = 200.0;   // DMA write leaving the NIC to visible in host memory
  double pcie_gbyte_s = 12.5;    // usable bandwidth per direction (Gen3 x16: 15.75 raw)
  // Network
  double wire_ns = 500.0;        // propagation + switch latency between NICs
  double line_gbit_s = 100.0;    // MAC transmit rate
  // Determinism: the same seed gives the same cycle counts; jitter adds 0..jitter_cycles to DMA latency
  uint64_t seed = 1;
  uint32_t jitter_cycles = 0;
  std::string pcap_path;         // capture of the wire (empty: none)
  std::string waves_prefix;      // FST waveform per NIC: <prefix><n>.fst (empty: none)
  int num_nics = 2;
  // Fabric between processes (TMNIC_FABRIC): "" is the in-process world of num_nics NICs; "udp" is
  // one NIC whose wire is RoCEv2 UDP datagrams between loopback addresses (sim/fabric/udp_fabric.hpp),
  // at fabric_addr (TMNIC_FABRIC_ADDR, 127.a.b.c) or at an address chosen when empty.
  std::string fabric;
  std::string fabric_addr;
  // TMNIC_FABRIC_STATS: a file (%p: the pid) that the fabric's and the NIC's counters are written to
  // when the process's world goes and, while it lives, whenever its NIC went idle after traffic.
  std::string fabric_stats;
  // TMNIC_FABRIC_RCVBUF: SO_RCVBUF asked for the fabric's receive socket, in bytes (the kernel caps
  // it at net.core.rmem_max and doubles it); e.g. 212992 gives what a machine with Debian's default
  // sysctl gets, whatever this one allows.
  int fabric_rcvbuf = 8 << 20;
  // Who advances the world (TMNIC_PROGRESS): "inline", the thread of the driver call that waits
  // (deterministic, the in-process world's default), or "thread", a progress thread of its own that
  // runs whenever there is work and sleeps otherwise (the fabric's default). Empty: the default.
  std::string progress;
  bool threaded() const { return progress.empty() ? !fabric.empty() : progress == "thread"; }

  uint64_t cycles(double ns) const { return static_cast<uint64_t>(ns * clk_mhz / 1000.0 + 0.5); }
  double bytes_per_cycle(double gbyte_s) const { return gbyte_s * 1000.0 / clk_mhz; }

  // Defaults overridden by TMNIC_SIM_<FIELD> environment variables (e.g. TMNIC_SIM_WIRE_NS).
  static SimConfig from_env();
};

}  // namespace tmnic::sim
