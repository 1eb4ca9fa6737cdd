#include "roce/roce_model.hpp"

#include <array>
#include <cstring>

namespace tmnic::roce {
namespace {

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kCrc32PolyRefl : (c >> 1);
    t[i] = c;
  }
  return t;
}
const std::array<uint32_t, 256> kCrcTable = make_table();

void put_be(uint8_t* p, uint64_t v, unsigned n) {
  for (unsigned i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}
uint64_t get_be(const uint8_t* p, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

uint16_t ip_csum(const uint8_t* ip) {
  uint32_t sum = 0;
  for (unsigned i = 0; i < 20; i += 2) {
    if (i == 10) continue;
    sum += static_cast<uint32_t>(get_be(ip + i, 2));
  }
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

RoceHdr canonical(const RoceHdr& h) {
  RoceHdr r = h;
  r.dst_mac &= 0xFFFFFFFFFFFFull;
  r.src_mac &= 0xFFFFFFFFFFFFull;
  r.dest_qp &= 0xFFFFFF;
  r.psn &= 0xFFFFFF;
  r.pay_len &= 0x1FFF;
  if (!bth_has_reth(h.opcode) && !bth_has_atomiceth(h.opcode)) {
    r.reth_va = 0;
    r.reth_rkey = 0;
    r.reth_len = 0;
  }
  // An atomic request's AtomicETH: VA and R_Key in the RETH fields, the length its ATOMIC_LEN bytes.
  if (bth_has_atomiceth(h.opcode)) {
    r.reth_len = tmnic::hwif::ATOMIC_LEN;
  } else {
    r.atom_swap = 0;
    r.atom_cmp = 0;
  }
  if (!bth_has_imm(h.opcode)) r.imm = 0;
  if (!bth_has_aeth(h.opcode)) r.aeth = 0;
  if (!bth_has_deth(h.opcode)) {
    r.deth_qkey = 0;
    r.deth_sqp = 0;
  }
  r.deth_sqp &= 0xFFFFFF;
  // The parser delivers a UD datagram with its GRH in front.
  if (bth_has_deth(h.opcode)) r.pay_len = static_cast<uint16_t>((r.pay_len + kGrhLen) & 0x1FFF);
  return r;
}

std::vector<uint8_t> grh_of(const uint8_t* frame) {
  std::vector<uint8_t> g(kGrhLen, 0);
  std::memcpy(g.data() + kGrhLen - kIpHdrLen, frame + kIpOff, kIpHdrLen);
  return g;
}

uint32_t crc32_update(uint32_t crc, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) crc = (crc >> 8) ^ kCrcTable[(crc ^ p[i]) & 0xFFu];
  return crc;
}

uint32_t icrc(const uint8_t* ip, size_t n) {
  uint32_t c = kIcrcSeed;
  for (size_t i = 0; i < n; ++i) {
    uint8_t b = ip[i];
    // TOS, TTL, IP checksum, UDP checksum, BTH byte 4 (offsets from the IPv4 header).
    if (i == 1 || i == 8 || i == 10 || i == 11 || i == 26 || i == 27 || i == 32) b = 0xFF;
    c = (c >> 8) ^ kCrcTable[(c ^ b) & 0xFFu];
  }
  return ~c;
}

std::vector<uint8_t> build_frame(const RoceHdr& h, const uint8_t* payload) {
  const unsigned ext = bth_ext_len(h.opcode);
  const unsigned pay = h.pay_len & 0x1FFFu;
  const unsigned pc = pad_count(pay);
  const unsigned udp_len = 8 + 12 + ext + pay + pc + 4;
  const unsigned ip_len = 20 + udp_len;
  std::vector<uint8_t> f(14 + ip_len, 0);
  uint8_t* p = f.data();
  put_be(p + 0, h.dst_mac, 6);
  put_be(p + 6, h.src_mac, 6);
  put_be(p + 12, 0x0800, 2);
  uint8_t* ip = p + kIpOff;
  ip[0] = 0x45;
  ip[1] = h.ip_tos;
  put_be(ip + 2, ip_len, 2);
  put_be(ip + 4, 0, 2);
  put_be(ip + 6, 0x4000, 2);
  ip[8] = h.ip_ttl;
  ip[9] = 17;
  put_be(ip + 12, h.src_ip, 4);
  put_be(ip + 16, h.dst_ip, 4);
  put_be(ip + 10, ip_csum(ip), 2);
  uint8_t* udp = p + kUdpOff;
  put_be(udp + 0, h.udp_sport, 2);
  put_be(udp + 2, kRoceUdpPort, 2);
  put_be(udp + 4, udp_len, 2);
  put_be(udp + 6, 0, 2);
  uint8_t* bth = p + kBthOff;
  bth[0] = h.opcode;
  bth[1] = static_cast<uint8_t>((h.se ? 0x80 : 0) | (pc << 4));
  put_be(bth + 2, 0xFFFF, 2);
  bth[4] = 0;
  put_be(bth + 5, h.dest_qp & 0xFFFFFF, 3);
  bth[8] = h.ack_req ? 0x80 : 0;
  put_be(bth + 9, h.psn & 0xFFFFFF, 3);
  uint8_t* x = bth + kBthLen;
  if (bth_has_deth(h.opcode)) {
    put_be(x + 0, h.deth_qkey, 4);
    x[4] = 0;
    put_be(x + 5, h.deth_sqp & 0xFFFFFF, 3);
    x += 8;
  }
  if (bth_has_reth(h.opcode)) {
    put_be(x + 0, h.reth_va, 8);
    put_be(x + 8, h.reth_rkey, 4);
    put_be(x + 12, h.reth_len, 4);
    x += 16;
  }
  if (bth_has_atomiceth(h.opcode)) {
    put_be(x + 0, h.reth_va, 8);
    put_be(x + 8, h.reth_rkey, 4);
    put_be(x + 12, h.atom_swap, 8);
    put_be(x + 20, h.atom_cmp, 8);
    x += kAtomicethLen;
  }
  if (bth_has_imm(h.opcode)) {
    put_be(x, h.imm, 4);
    x += 4;
  }
  if (bth_has_aeth(h.opcode)) {
    put_be(x, h.aeth, 4);
    x += 4;
  }
  if (pay && payload) std::memcpy(x, payload, pay);
  const uint32_t c = icrc(ip, ip_len - 4);
  uint8_t* ic = p + 14 + ip_len - 4;
  for (int i = 0; i < 4; ++i) ic[i] = static_cast<uint8_t>(c >> (8 * i));
  return f;
}

void fix_ip_csum(std::vector<uint8_t>& f) {
  if (f.size() < 34) return;
  put_be(f.data() + kIpOff + 10, ip_csum(f.data() + kIpOff), 2);
}

void fix_icrc(std::vector<uint8_t>& f) {
  if (f.size() < 42) return;
  const size_t udp_len = get_be(f.data() + kUdpOff + 4, 2);
  const size_t end = kUdpOff + udp_len;  // end of the ICRC
  if (udp_len < 12 || end > f.size()) return;
  const uint32_t c = icrc(f.data() + kIpOff, end - 4 - kIpOff);
  for (int i = 0; i < 4; ++i) f[end - 4 + i] = static_cast<uint8_t>(c >> (8 * i));
}

const char* to_string(ParseError e) {
  switch (e) {
    case ParseError::kOk:
      return "ok";
    case ParseError::kTooShort:
      return "too_short";
    case ParseError::kTooLong:
      return "too_long";
    case ParseError::kEtherType:
      return "ethertype";
    case ParseError::kIpVerIhl:
      return "ip_ver_ihl";
    case ParseError::kIpFragment:
      return "ip_fragment";
    case ParseError::kIpProto:
      return "ip_proto";
    case ParseError::kUdpPort:
      return "udp_port";
    case ParseError::kLenMismatch:
      return "len_mismatch";
    case ParseError::kDstMac:
      return "dst_mac";
    case ParseError::kDstIp:
      return "dst_ip";
    case ParseError::kTver:
      return "tver";
    case ParseError::kPkey:
      return "pkey";
    case ParseError::kOpcode:
      return "opcode";
    case ParseError::kBadIcrc:
      return "bad_icrc";
  }
  return "?";
}

bool parse_frame(const uint8_t* f, size_t len, RoceHdr* hdr, std::vector<uint8_t>* payload,
                 ParseError* err, const LocalAddr* local) {
  auto fail = [err](ParseError e) {
    if (err) *err = e;
    return false;
  };
  if (len > kMaxFrameLen) return fail(ParseError::kTooLong);
  // Anything shorter cannot satisfy the length rules below (14 + 20 + 8 + 12 + 4).
  if (len < 58) return fail(ParseError::kTooShort);
  const uint8_t* ip = f + kIpOff;
  const uint8_t* udp = f + kUdpOff;
  const uint8_t* bth = f + kBthOff;
  if (get_be(f + 12, 2) != 0x0800) return fail(ParseError::kEtherType);
  if (ip[0] != 0x45) return fail(ParseError::kIpVerIhl);
  if (get_be(ip + 6, 2) & 0x3FFF) return fail(ParseError::kIpFragment);
  if (ip[9] != 17) return fail(ParseError::kIpProto);
  if (get_be(udp + 2, 2) != kRoceUdpPort) return fail(ParseError::kUdpPort);
  const size_t ip_len = get_be(ip + 2, 2);
  const size_t udp_len = get_be(udp + 4, 2);
  if (ip_len != udp_len + 20) return fail(ParseError::kLenMismatch);
  if (14 + ip_len > len) return fail(ParseError::kTooShort);
  if (local && get_be(f, 6) != (local->mac & 0xFFFFFFFFFFFFull)) return fail(ParseError::kDstMac);
  if (local && get_be(ip + 16, 4) != local->ip) return fail(ParseError::kDstIp);
  const uint8_t op = bth[0];
  if ((bth[1] & 0x0F) != 0) return fail(ParseError::kTver);
  if ((get_be(bth + 2, 2) & 0x7FFF) != 0x7FFF) return fail(ParseError::kPkey);
  if (!bth_op_supported(op)) return fail(ParseError::kOpcode);
  const unsigned ext = bth_ext_len(op);
  const unsigned pc = (bth[1] >> 4) & 3;
  if (udp_len < 8 + 12 + ext + pc + 4) return fail(ParseError::kTooShort);
  const uint32_t c = icrc(ip, ip_len - 4);
  const uint32_t wire =
      static_cast<uint32_t>(ip[ip_len - 4]) | (static_cast<uint32_t>(ip[ip_len - 3]) << 8) |
      (static_cast<uint32_t>(ip[ip_len - 2]) << 16) | (static_cast<uint32_t>(ip[ip_len - 1]) << 24);
  if (c != wire) return fail(ParseError::kBadIcrc);

  const unsigned pay = static_cast<unsigned>(udp_len - 8 - 12 - ext - pc - 4);
  if (hdr) {
    RoceHdr h;
    h.dst_mac = get_be(f, 6);
    h.src_mac = get_be(f + 6, 6);
    h.src_ip = static_cast<uint32_t>(get_be(ip + 12, 4));
    h.dst_ip = static_cast<uint32_t>(get_be(ip + 16, 4));
    h.ip_tos = ip[1];
    h.ip_ttl = ip[8];
    h.udp_sport = static_cast<uint16_t>(get_be(udp, 2));
    h.opcode = op;
    h.se = (bth[1] & 0x80) != 0;
    h.ack_req = (bth[8] & 0x80) != 0;
    h.dest_qp = static_cast<uint32_t>(get_be(bth + 5, 3));
    h.psn = static_cast<uint32_t>(get_be(bth + 9, 3));
    const uint8_t* x = bth + kBthLen;
    if (bth_has_deth(op)) {
      h.deth_qkey = static_cast<uint32_t>(get_be(x, 4));
      h.deth_sqp = static_cast<uint32_t>(get_be(x + 5, 3));
      x += 8;
    }
    if (bth_has_reth(op)) {
      h.reth_va = get_be(x, 8);
      h.reth_rkey = static_cast<uint32_t>(get_be(x + 8, 4));
      h.reth_len = static_cast<uint32_t>(get_be(x + 12, 4));
      x += 16;
    }
    if (bth_has_atomiceth(op)) {
      h.reth_va = get_be(x, 8);
      h.reth_rkey = static_cast<uint32_t>(get_be(x + 8, 4));
      h.reth_len = tmnic::hwif::ATOMIC_LEN;
      h.atom_swap = get_be(x + 12, 8);
      h.atom_cmp = get_be(x + 20, 8);
      x += kAtomicethLen;
    }
    if (bth_has_imm(op)) {
      h.imm = static_cast<uint32_t>(get_be(x, 4));
      x += 4;
    }
    if (bth_has_aeth(op)) h.aeth = static_cast<uint32_t>(get_be(x, 4));
    h.pay_len = static_cast<uint16_t>(pay + (bth_has_deth(op) ? kGrhLen : 0));
    *hdr = h;
  }
  if (payload) {
    const uint8_t* p = bth + kBthLen + ext;
    payload->clear();
    if (bth_has_deth(op)) *payload = grh_of(f);
    payload->insert(payload->end(), p, p + pay);
  }
  if (err) *err = ParseError::kOk;
  return true;
}

}  // namespace tmnic::roce
