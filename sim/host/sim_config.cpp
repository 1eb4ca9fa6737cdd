#include "host/sim_config.hpp"

#include <cstdlib>

namespace tmnic::sim {

namespace {
void env_double(const char* name, double* v) {
  if (const char* s = std::getenv(name)) *v = std::strtod(s, nullptr);
}
}  // namespace

SimConfig SimConfig::from_env() {
  SimConfig c;
  env_double("TMNIC_SIM_CLK_MHZ", &c.clk_mhz);
  env_double("TMNIC_SIM_MMIO_WRITE_NS", &c.mmio_write_ns);
  env_double("TMNIC_SIM_MMIO_READ_NS", &c.mmio_read_ns);
  env_double("TMNIC_SIM_DMA_READ_NS", &c.dma_read_ns);
  env_double("TMNIC_SIM_DMA_WRITE_NS", &c.dma_write_ns);
  env_double("TMNIC_SIM_PCIE_GBYTE_S", &c.pcie_gbyte_s);
  env_double("TMNIC_SIM_WIRE_NS", &c.wire_ns);
  env_double("TMNIC_SIM_LINE_GBIT_S", &c.line_gbit_s);
  if (const char* s = std::getenv("TMNIC_SIM_SEED")) c.seed = std::strtoull(s, nullptr, 0);
  if (const char* s = std::getenv("TMNIC_SIM_JITTER")) c.jitter_cycles = static_cast<uint32_t>(std::strtoul(s, nullptr, 0));
  if (const char* s = std::getenv("TMNIC_SIM_NICS")) c.num_nics = std::atoi(s);
  if (const char* s = std::getenv("TMNIC_PCAP")) c.pcap_path = s;
  if (const char* s = std::getenv("TMNIC_WAVES")) c.waves_prefix = s;
  if (const char* s = std::getenv("TMNIC_FABRIC")) c.fabric = s;
  if (const char* s = std::getenv("TMNIC_FABRIC_ADDR")) c.fabric_addr = s;
  if (const char* s = std::getenv("TMNIC_FABRIC_STATS")) c.fabric_stats = s;
  if (const char* s = std::getenv("TMNIC_FABRIC_RCVBUF")) c.fabric_rcvbuf = std::atoi(s);
  if (const char* s = std::getenv("TMNIC_PROGRESS")) c.progress = s;
  if (c.num_nics < 1) c.num_nics = 1;
  return c;
}

}  // namespace tmnic::sim
