#include "roce/pcap_writer.hpp"

#include <cstring>

namespace tmnic::roce {
namespace {

void le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}

constexpr uint32_t kMagicNs = 0xA1B23C4Du;  // nanosecond-resolution pcap
constexpr uint32_t kSnapLen = 65535;
constexpr uint32_t kLinkEthernet = 1;
constexpr size_t kMinFrame = 60;

}  // namespace

bool PcapWriter::open(const std::string& path) {
  close();
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return false;
  uint8_t h[24];
  le32(h + 0, kMagicNs);
  le16(h + 4, 2);
  le16(h + 6, 4);
  le32(h + 8, 0);   // thiszone
  le32(h + 12, 0);  // sigfigs
  le32(h + 16, kSnapLen);
  le32(h + 20, kLinkEthernet);
  if (std::fwrite(h, 1, sizeof h, f_) != sizeof h) {
    close();
    return false;
  }
  return true;
}

bool PcapWriter::write(const uint8_t* frame, size_t len, uint64_t time_ns) {
  if (!f_) return false;
  const size_t file_len = len < kMinFrame ? kMinFrame : len;
  uint8_t h[16];
  le32(h + 0, static_cast<uint32_t>(time_ns / 1000000000ull));
  le32(h + 4, static_cast<uint32_t>(time_ns % 1000000000ull));
  le32(h + 8, static_cast<uint32_t>(file_len));
  le32(h + 12, static_cast<uint32_t>(file_len));
  if (std::fwrite(h, 1, sizeof h, f_) != sizeof h) return false;
  if (len && std::fwrite(frame, 1, len, f_) != len) return false;
  if (file_len > len) {
    static const uint8_t kZero[kMinFrame] = {};
    if (std::fwrite(kZero, 1, file_len - len, f_) != file_len - len) return false;
  }
  return true;
}

void PcapWriter::close() {
  if (f_) {
    std::fclose(f_);
    f_ = nullptr;
  }
}

}  // namespace tmnic::roce
