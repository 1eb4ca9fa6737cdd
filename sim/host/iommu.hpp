// Simulated IOMMU: the only way the simulated NIC reaches host memory. The driver (through its
// backend) maps host pages at IO virtual addresses; every DMA access is translated page by page,
// and an access to an unmapped IOVA is a fault that fails the run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace tmnic::sim {

class Iommu {
 public:
  static constexpr uint64_t kPage = 4096;

  // Maps [iova, iova+len) to host memory at `host`; both page aligned, len a multiple of kPage.
  void map(uint64_t iova, void* host, uint64_t len);
  void unmap(uint64_t iova);
  // Allocates an unused, page-aligned IOVA range of `len` bytes (never reused while mapped).
  uint64_t alloc_iova(uint64_t len);

  // Copy between the device and host memory; any byte outside a mapping is a fault.
  void read(uint64_t iova, void* dst, size_t len);
  void write(uint64_t iova, const void* src, size_t len, const uint8_t* byte_en = nullptr);

  // Called on a fault before the run is failed; tests may install a handler that throws.
  using FaultHandler = std::function<void(const std::string&)>;
  void set_fault_handler(FaultHandler h) { on_fault_ = std::move(h); }

  // Access log: every DMA access is reported to the observer (tests check "no DMA at all").
  using Observer = std::function<void(bool is_write, uint64_t iova, const uint8_t* host, size_t len)>;
  void set_observer(Observer o) { observer_ = std::move(o); }

  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  struct Region {
    uint64_t len;
    uint8_t* host;
  };
  uint8_t* translate(uint64_t iova, size_t len, bool is_write);
  [[noreturn]] void fault(const std::string& msg);

  std::map<uint64_t, Region> regions_;  // by IOVA start
  uint64_t next_iova_ = 0x10000000ull;  // IOVAs never alias host virtual addresses by construction
  uint64_t bytes_read_ = 0, bytes_written_ = 0;
  FaultHandler on_fault_;
  Observer observer_;
};

}  // namespace tmnic::sim
