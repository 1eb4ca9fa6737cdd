// Shared helpers of the packet-block tests: the roce-wire.md §1.3 test vectors and a random
// RoCEv2 header generator.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "roce/roce_model.hpp"

namespace tmnic::tb {

inline std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> v;
  int hi = -1;
  for (char ch : hex) {
    int d;
    if (ch >= '0' && ch <= '9')
      d = ch - '0';
    else if (ch >= 'a' && ch <= 'f')
      d = ch - 'a' + 10;
    else if (ch >= 'A' && ch <= 'F')
      d = ch - 'A' + 10;
    else
      continue;
    if (hi < 0)
      hi = d;
    else {
      v.push_back(static_cast<uint8_t>(hi << 4 | d));
      hi = -1;
    }
  }
  return v;
}

// roce-wire.md §1.3 vector 1: RC ACKNOWLEDGE 10.0.0.2 -> 10.0.0.1 (TOS 0x02), 62 bytes.
inline std::vector<uint8_t> vector1_frame() {
  return from_hex(
      "02 00 00 00 00 01 02 00 00 00 00 02 08 00 45 02"
      "00 30 00 00 40 00 40 11 26 b9 0a 00 00 02 0a 00"
      "00 01 c0 00 12 b7 00 1c 00 00 11 00 ff ff 00 00"
      "00 11 00 00 00 00 1f 00 00 01 a8 d1 bb a0");
}
inline roce::RoceHdr vector1_hdr() {
  roce::RoceHdr h;
  h.dst_mac = 0x020000000001ull;
  h.src_mac = 0x020000000002ull;
  h.src_ip = 0x0a000002;
  h.dst_ip = 0x0a000001;
  h.ip_tos = 0x02;   // ECT(0), as the vector was captured
  h.ip_ttl = 64;
  h.udp_sport = 0xC000;
  h.opcode = roce::kAck;
  h.dest_qp = 0x11;
  h.psn = 0;
  h.aeth = 0x1F000001;
  h.pay_len = 0;
  return h;
}
// roce-wire.md §1.3 vector 2: eager tagged SEND_ONLY 10.0.0.1 -> 10.0.0.2, AckReq, PadCnt 3.
inline std::vector<uint8_t> vector2_frame() {
  return from_hex(
      "02000000000202000000000108004502004400004000401126a50a0000010a000002c00012b7003000000430ffff"
      "00000012800000000300000011223344010203040506070868656c6c6f000000663b23f2");
}
inline std::vector<uint8_t> vector2_payload() {
  return from_hex("03000000 11223344 0102030405060708 68656c6c6f");
}
inline roce::RoceHdr vector2_hdr() {
  roce::RoceHdr h;
  h.dst_mac = 0x020000000002ull;
  h.src_mac = 0x020000000001ull;
  h.src_ip = 0x0a000001;
  h.dst_ip = 0x0a000002;
  h.ip_tos = 0x02;   // ECT(0), as the vector was captured
  h.ip_ttl = 64;
  h.udp_sport = 0xC000;
  h.opcode = roce::kSendOnly;
  h.ack_req = true;
  h.dest_qp = 0x12;
  h.psn = 0;
  h.pay_len = 21;
  return h;
}
// The vectors carry TOS 0x02; the builder always sends TOS 0. TOS is masked in the ICRC, so the
// builder's frame is the vector with TOS cleared and the IPv4 checksum recomputed.
// Payload lengths that exercise the edges: 0..5, beat-width edges, every PMTU and PMTU-1, 4096.
inline std::vector<unsigned> edge_pay_lens(unsigned w) {
  std::vector<unsigned> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  for (unsigned k : {1u, 2u, 3u}) {
    for (int d = -3; d <= 3; ++d) v.push_back(static_cast<unsigned>(static_cast<int>(k * w) + d));
  }
  for (unsigned pmtu : {256u, 512u, 1024u, 2048u, 4096u}) {
    v.push_back(pmtu - 1);
    v.push_back(pmtu);
  }
  return v;
}

inline unsigned random_pay_len(std::mt19937_64& rng, unsigned w, unsigned max_len = 4096) {
  static thread_local std::vector<unsigned> edges;
  if (edges.empty()) edges = edge_pay_lens(w);
  std::uniform_int_distribution<int> kind(0, 9);
  const int k = kind(rng);
  unsigned n;
  if (k < 3)
    n = edges[std::uniform_int_distribution<size_t>(0, edges.size() - 1)(rng)];
  else if (k < 7)
    n = std::uniform_int_distribution<unsigned>(0, 300)(rng);
  else
    n = std::uniform_int_distribution<unsigned>(0, max_len)(rng);
  return n > max_len ? max_len : n;
}

inline std::vector<uint8_t> random_bytes(std::mt19937_64& rng, size_t n) {
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

// Random header with a supported opcode; every field random (also the extension-header fields
// the opcode does not carry: the builder must ignore them).
// Every opcode the builder and parser support (RC 0..kAck, then the UD ones).
inline std::vector<int> supported_opcodes() {
  std::vector<int> v;
  for (int op = 0; op < 256; ++op)
    if (roce::bth_op_supported(static_cast<uint8_t>(op))) v.push_back(op);
  return v;
}

// A random header; `ud`: the UD opcodes too (a UD datagram's parsed payload has its GRH in front).
inline roce::RoceHdr random_hdr(std::mt19937_64& rng, unsigned pay_len, bool ud = true) {
  roce::RoceHdr h;
  h.dst_mac = rng() & 0xFFFFFFFFFFFFull;
  h.src_mac = rng() & 0xFFFFFFFFFFFFull;
  h.src_ip = static_cast<uint32_t>(rng());
  h.dst_ip = static_cast<uint32_t>(rng());
  h.ip_tos = static_cast<uint8_t>(rng());
  h.ip_ttl = static_cast<uint8_t>(rng());
  h.udp_sport = static_cast<uint16_t>(rng());
  // RC opcodes 0..kAck and the UD ones, all equally likely
  const int k = std::uniform_int_distribution<int>(0, roce::kAck + (ud ? 2 : 0))(rng);
  h.opcode = static_cast<uint8_t>(k <= roce::kAck ? k : k == roce::kAck + 1 ? roce::kUdSendOnly : roce::kUdSendOnlyImm);
  h.se = rng() & 1;
  h.ack_req = rng() & 1;
  h.dest_qp = static_cast<uint32_t>(rng()) & 0xFFFFFF;
  h.psn = static_cast<uint32_t>(rng()) & 0xFFFFFF;
  h.reth_va = rng();
  h.reth_rkey = static_cast<uint32_t>(rng());
  h.reth_len = static_cast<uint32_t>(rng());
  h.imm = static_cast<uint32_t>(rng());
  h.aeth = static_cast<uint32_t>(rng());
  h.deth_qkey = static_cast<uint32_t>(rng());
  h.deth_sqp = static_cast<uint32_t>(rng()) & 0xFFFFFF;
  h.pay_len = static_cast<uint16_t>(pay_len);
  return h;
}

inline std::string hex_dump(const std::vector<uint8_t>& v, size_t max = 128) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) {
    if (i && i % 16 == 0) s += '\n';
    s += d[v[i] >> 4];
    s += d[v[i] & 15];
    s += ' ';
  }
  if (v.size() > max) s += "...";
  return s;
}

// First differing byte index, or -1.
inline long first_diff(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return static_cast<long>(i);
  return a.size() == b.size() ? -1 : static_cast<long>(n);
}

}  // namespace tmnic::tb
