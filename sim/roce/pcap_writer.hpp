// Minimal pcap writer for simulated Ethernet frames (linktype 1, nanosecond timestamps).
// Frames shorter than 60 bytes are zero-padded in the file only, as a MAC would on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tmnic::roce {

class PcapWriter {
 public:
  PcapWriter() = default;
  explicit PcapWriter(const std::string& path) { open(path); }
  ~PcapWriter() { close(); }
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Creates/truncates `path` and writes the global header. Returns false on I/O error.
  bool open(const std::string& path);
  bool is_open() const { return f_ != nullptr; }
  // Appends one frame (without FCS) captured at time_ns.
  bool write(const uint8_t* frame, size_t len, uint64_t time_ns);
  bool write(const std::vector<uint8_t>& frame, uint64_t time_ns) {
    return write(frame.data(), frame.size(), time_ns);
  }
  // Hands what is buffered to the kernel (a process killed later leaves every frame written so far).
  void flush() {
    if (f_) std::fflush(f_);
  }
  void close();

 private:
  std::FILE* f_ = nullptr;
};

}  // namespace tmnic::roce
