// C++ reference model of RoCEv2 (IPv4, RC) frames as built by rtl/pkt/tmnic_pkt_tx.sv and
// accepted by rtl/pkt/tmnic_pkt_rx.sv. Byte layout and ICRC: shared/reference/roce-wire.md §1-2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tmnic::roce {

// BTH opcodes (RC), as in tmnic_pkg.
enum Opcode : uint8_t {
  kSendFirst = 0x00,
  kSendMiddle = 0x01,
  kSendLast = 0x02,
  kSendLastImm = 0x03,
  kSendOnly = 0x04,
  kSendOnlyImm = 0x05,
  kWriteFirst = 0x06,
  kWriteMiddle = 0x07,
  kWriteLast = 0x08,
  kWriteLastImm = 0x09,
  kWriteOnly = 0x0A,
  kWriteOnlyImm = 0x0B,
  kReadReq = 0x0C,
  kReadRespFirst = 0x0D,
  kReadRespMiddle = 0x0E,
  kReadRespLast = 0x0F,
  kReadRespOnly = 0x10,
  kAck = 0x11,
};

constexpr uint16_t kRoceUdpPort = 4791;
constexpr size_t kEthHdrLen = 14;
constexpr size_t kIpOff = 14;
constexpr size_t kUdpOff = 34;
constexpr size_t kBthOff = 42;
constexpr size_t kBthLen = 12;
constexpr size_t kIcrcLen = 4;
constexpr size_t kMaxPmtu = 4096;
// Longest frame the parser accepts (no FCS): tmnic_pkg::MAX_FRAME_LEN.
constexpr size_t kMaxFrameLen = 14 + 20 + 8 + 12 + 20 + kMaxPmtu + 4;
// CRC register after 8 bytes of 0xFF (the masked LRH).
constexpr uint32_t kIcrcSeed = 0xDEBB20E3u;

// Mirror of tmnic_pkg::roce_hdr_t. Which extension headers exist follows from the opcode.
struct RoceHdr {
  uint64_t dst_mac = 0;  // 48 bits; byte 0 on the wire is bits [47:40]
  uint64_t src_mac = 0;  // 48 bits
  uint32_t src_ip = 0;   // a.b.c.d = 0xaabbccdd
  uint32_t dst_ip = 0;
  uint16_t udp_sport = 0;
  uint8_t opcode = 0;
  bool se = false;
  bool ack_req = false;
  uint32_t dest_qp = 0;  // 24 bits
  uint32_t psn = 0;      // 24 bits
  uint64_t reth_va = 0;
  uint32_t reth_rkey = 0;
  uint32_t reth_len = 0;
  uint32_t imm = 0;      // [31:24] is the first byte on the wire
  uint32_t aeth = 0;     // {syndrome[31:24], msn[23:0]}
  uint16_t pay_len = 0;  // 13 bits

  bool operator==(const RoceHdr& o) const;
  bool operator!=(const RoceHdr& o) const { return !(*this == o); }
};

// Extension-header bytes after the BTH (tmnic_pkg::bth_ext_len); 0 for unsupported opcodes.
unsigned bth_ext_len(uint8_t op);
bool bth_op_supported(uint8_t op);
bool bth_has_imm(uint8_t op);
bool bth_has_reth(uint8_t op);
bool bth_has_aeth(uint8_t op);
// (-pay_len) & 3
inline unsigned pad_count(unsigned pay_len) { return (0u - pay_len) & 3u; }
// Header length (Ethernet .. extension headers): 54 + ext.
inline unsigned hdr_len(uint8_t op) { return 54 + bth_ext_len(op); }
// Frame length produced by build_frame (no FCS, no min-size padding).
inline size_t frame_len(const RoceHdr& h) {
  return hdr_len(h.opcode) + h.pay_len + pad_count(h.pay_len) + kIcrcLen;
}
// `h` with the extension-header fields its opcode does not carry zeroed: what the parser returns
// for a frame built from `h`.
RoceHdr canonical(const RoceHdr& h);

// Plain CRC-32 register update (reflected 0xEDB88320, no pre/post inversion).
uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n);
// ICRC over an IPv4 RoCEv2 packet: `ip` points at the IPv4 header, `n` bytes are covered (IP header
// through pad, i.e. IP total length - 4). Applies the TOS/TTL/IP csum/UDP csum/BTH[4] masks and
// returns the value whose little-endian bytes go on the wire (zlib.crc32 of the masked string).
uint32_t icrc(const uint8_t* ip, size_t n);

// Builds the exact frame bytes (Ethernet .. ICRC) the RTL builder emits for `h` and `payload`
// (h.pay_len bytes; may be null when pay_len == 0). TOS 0, ID 0, DF, TTL 64, UDP checksum 0,
// P_Key 0xFFFF, M = 0, TVer 0, byte 4 = 0, pad zero.
std::vector<uint8_t> build_frame(const RoceHdr& h, const uint8_t* payload);
// Recomputes the IPv4 header checksum of a frame in place.
void fix_ip_csum(std::vector<uint8_t>& frame);
// Recomputes the ICRC in place, locating it from the UDP length (frame must be long enough).
void fix_icrc(std::vector<uint8_t>& frame);

// Why parse_frame dropped a frame. Everything but kBadIcrc is counted as drop_hdr by the RTL.
enum class ParseError {
  kOk = 0,
  kTooShort,     // cannot hold the headers the lengths claim / truncated
  kTooLong,      // frame longer than kMaxFrameLen
  kEtherType,    // != 0x0800
  kIpVerIhl,     // != 0x45
  kIpFragment,   // MF set or fragment offset != 0
  kIpProto,      // != 17
  kUdpPort,      // dport != 4791
  kLenMismatch,  // IP total length != UDP length + 20
  kDstMac,       // != local MAC
  kDstIp,        // != local IP
  kTver,         // BTH TVer != 0
  kPkey,         // P_Key[14:0] != 0x7FFF
  kOpcode,       // !bth_op_supported
  kBadIcrc,      // header fine, ICRC wrong
};
const char* to_string(ParseError e);
inline bool is_hdr_drop(ParseError e) { return e != ParseError::kOk && e != ParseError::kBadIcrc; }

// Addresses the parser compares the destination against.
struct LocalAddr {
  uint64_t mac = 0;
  uint32_t ip = 0;
};

// Parses one received frame (may carry padding after the ICRC) with the RTL parser's acceptance
// rules. Returns true and fills *hdr / *payload (if non-null) when the frame is accepted;
// otherwise returns false and sets *err (if non-null). Without `local` the destination MAC/IP are
// not checked. Header rules are checked before the ICRC.
bool parse_frame(const uint8_t* frame, size_t len, RoceHdr* hdr, std::vector<uint8_t>* payload,
                 ParseError* err, const LocalAddr* local = nullptr);

// Packing to/from the Verilator representation of roce_hdr_t (a 439-bit packed struct, first
// field in the MSBs; 32-bit words, word 0 = bits [31:0]).
constexpr unsigned kRoceHdrBits = 439;
constexpr unsigned kRoceHdrWords = (kRoceHdrBits + 31) / 32;
void pack_hdr(const RoceHdr& h, uint32_t* words);
RoceHdr unpack_hdr(const uint32_t* words);

}  // namespace tmnic::roce
