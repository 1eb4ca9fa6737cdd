// C++ reference model of RoCEv2 (IPv4, RC) frames as built by rtl/pkt/tmnic_pkt_tx.sv and
// accepted by rtl/pkt/tmnic_pkt_rx.sv. Byte layout and ICRC: shared/reference/roce-wire.md §1-2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tmnic/hwif.h"
#include "tmnic/wire.h"

namespace tmnic::roce {

// The wire-protocol numbers (opcodes and their extension headers, header sizes, UDP port, ICRC seed)
// and the engines' packet header RoceHdr with its Verilator packing come from hwif/spec.py.
using namespace tmnic::wire;

// (-pay_len) & 3
inline unsigned pad_count(unsigned pay_len) { return (0u - pay_len) & 3u; }
// Header length (Ethernet .. extension headers): BTH offset + BTH + extension headers.
inline unsigned hdr_len(uint8_t op) { return unsigned(kBthOff + kBthLen) + bth_ext_len(op); }
// Frame length produced by build_frame (no FCS, no min-size padding).
inline size_t frame_len(const RoceHdr& h) {
  return hdr_len(h.opcode) + h.pay_len + pad_count(h.pay_len) + kIcrcLen;
}
// The GRH (IBA 8.3) a UD receive buffer starts with on RoCEv2 over IPv4: kGrhLen bytes, 20 zero bytes
// then the frame's IPv4 header (as mlx5 places it; rdma-core's ibv_init_ah_from_wc reads it there).
constexpr unsigned kGrhLen = hwif::GRH_LEN;
std::vector<uint8_t> grh_of(const uint8_t* frame);
// `h` with the extension-header fields its opcode does not carry zeroed: what the parser returns
// for a frame built from `h` (a UD datagram's pay_len counts the kGrhLen bytes of GRH in front of
// its payload, which the parser delivers first).
RoceHdr canonical(const RoceHdr& h);

// Plain CRC-32 register update (reflected polynomial kCrc32PolyRefl, no pre/post inversion).
uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n);
// ICRC over an IPv4 RoCEv2 packet: `ip` points at the IPv4 header, `n` bytes are covered (IP header
// through pad, i.e. IP total length - 4). Applies the TOS/TTL/IP csum/UDP csum/BTH[4] masks and
// returns the value whose little-endian bytes go on the wire (zlib.crc32 of the masked string).
uint32_t icrc(const uint8_t* ip, size_t n);

// Builds the exact frame bytes (Ethernet .. ICRC) the RTL builder emits for `h` and `payload`
// (h.pay_len bytes; may be null when pay_len == 0). TOS h.ip_tos, ID 0, DF, TTL h.ip_ttl, UDP checksum 0,
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
// not checked. Header rules are checked before the ICRC. A UD datagram's payload starts with its GRH
// (grh_of), as the RTL parser delivers it.
bool parse_frame(const uint8_t* frame, size_t len, RoceHdr* hdr, std::vector<uint8_t>* payload,
                 ParseError* err, const LocalAddr* local = nullptr);

}  // namespace tmnic::roce
