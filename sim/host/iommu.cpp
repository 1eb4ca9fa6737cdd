#include "host/iommu.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tmnic::sim {

void Iommu::map(uint64_t iova, void* host, uint64_t len) {
  if ((iova % kPage) || (reinterpret_cast<uintptr_t>(host) % kPage) || (len % kPage) || len == 0)
    throw std::invalid_argument("iommu: map needs page-aligned iova, host address and length");
  auto next = regions_.lower_bound(iova);
  if (next != regions_.end() && next->first < iova + len)
    throw std::invalid_argument("iommu: mapping overlaps an existing one");
  if (next != regions_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.len > iova) throw std::invalid_argument("iommu: mapping overlaps an existing one");
  }
  regions_[iova] = Region{len, static_cast<uint8_t*>(host)};
}

void Iommu::unmap(uint64_t iova) {
  if (regions_.erase(iova) == 0) throw std::invalid_argument("iommu: unmap of an IOVA that is not mapped");
}

uint64_t Iommu::alloc_iova(uint64_t len) {
  uint64_t base = next_iova_;
  // Leave an unmapped guard page after every range, so that an overrun faults.
  next_iova_ += ((len + kPage - 1) / kPage + 1) * kPage;
  return base;
}

void Iommu::fault(const std::string& msg) {
  if (on_fault_) on_fault_(msg);
  std::fprintf(stderr, "tmnic sim: IOMMU FAULT: %s\n", msg.c_str());
  std::fflush(stderr);
  std::abort();
}

uint8_t* Iommu::translate(uint64_t iova, size_t len, bool is_write) {
  auto it = regions_.upper_bound(iova);
  if (it != regions_.begin()) {
    --it;
    if (iova >= it->first && iova + len <= it->first + it->second.len) return it->second.host + (iova - it->first);
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "DMA %s of %zu bytes at IOVA 0x%" PRIx64 " is outside every mapping",
                is_write ? "write" : "read", len, iova);
  fault(buf);
}

void Iommu::read(uint64_t iova, void* dst, size_t len) {
  // An access may span two mappings that happen to be adjacent; translate page by page.
  auto* d = static_cast<uint8_t*>(dst);
  while (len) {
    size_t n = std::min<size_t>(len, kPage - (iova % kPage));
    const uint8_t* h = translate(iova, n, false);
    if (observer_) observer_(false, iova, h, n);
    std::memcpy(d, h, n);
    d += n; iova += n; len -= n; bytes_read_ += n;
  }
}

void Iommu::write(uint64_t iova, const void* src, size_t len, const uint8_t* byte_en) {
  auto* s = static_cast<const uint8_t*>(src);
  size_t done = 0;
  while (done < len) {
    size_t n = std::min<size_t>(len - done, kPage - ((iova + done) % kPage));
    uint8_t* h = translate(iova + done, n, true);
    if (observer_) observer_(true, iova + done, h, n);
    // Byte stores with release order: a CPU thread that reads a byte of this write with acquire
    // order (the driver's CQE owner bit) then sees every earlier DMA write of the NIC, as PCIe's
    // ordered posted writes promise, also while a progress thread runs the NIC (on x86 these are
    // plain stores; they cost about 1 % of an idle cycle's evaluation at most).
    for (size_t i = 0; i < n; i++)
      if (!byte_en || byte_en[done + i]) __atomic_store_n(h + i, s[done + i], __ATOMIC_RELEASE);
    done += n;
  }
  bytes_written_ += len;
}

}  // namespace tmnic::sim
