// Tests of the C++ RoCEv2 reference model (sim/roce) against roce-wire.md, and of the pcap writer.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <cstring>
#include <random>

#include "pkt_common.hpp"
#include "roce/pcap_writer.hpp"
#include "roce/roce_model.hpp"

using namespace tmnic::roce;
using namespace tmnic::tb;

namespace {

uint32_t wire_icrc(const std::vector<uint8_t>& f) {
  const size_t n = f.size();
  return f[n - 4] | f[n - 3] << 8 | f[n - 2] << 16 | static_cast<uint32_t>(f[n - 1]) << 24;
}

}  // namespace

TEST(RoceModel, Crc32MatchesZlib) {
  const char* s = "123456789";
  EXPECT_EQ(~crc32_update(0xFFFFFFFFu, reinterpret_cast<const uint8_t*>(s), 9), 0xCBF43926u);
  const uint8_t ff[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(crc32_update(0xFFFFFFFFu, ff, 8), kIcrcSeed);
}

TEST(RoceModel, IcrcVector1Ack) {
  const auto f = vector1_frame();
  ASSERT_EQ(f.size(), 62u);
  EXPECT_EQ(icrc(f.data() + kIpOff, f.size() - kIpOff - 4), 0xA0BBD1A8u);
  EXPECT_EQ(wire_icrc(f), 0xA0BBD1A8u);
  // The builder makes the captured frame from its header struct, byte for byte.
  const auto built = build_frame(vector1_hdr(), nullptr);
  EXPECT_EQ(built, f) << hex_dump(built);
  // TOS and TTL are masked out of the ICRC: other values keep it.
  auto h = vector1_hdr();
  h.ip_tos = 0xB8;
  h.ip_ttl = 1;
  const auto other = build_frame(h, nullptr);
  EXPECT_EQ(wire_icrc(other), 0xA0BBD1A8u);
  EXPECT_EQ(other[15], 0xB8);
  EXPECT_EQ(other[22], 1);
}

TEST(RoceModel, IcrcVector2SendOnly) {
  const auto f = vector2_frame();
  ASSERT_EQ(f.size(), 82u);
  EXPECT_EQ(wire_icrc(f), 0xF2233B66u);
  EXPECT_EQ(icrc(f.data() + kIpOff, f.size() - kIpOff - 4), 0xF2233B66u);
  const auto pay = vector2_payload();
  ASSERT_EQ(pay.size(), 21u);
  const auto built = build_frame(vector2_hdr(), pay.data());
  EXPECT_EQ(built, f) << hex_dump(built);
}

TEST(RoceModel, ParseVectors) {
  RoceHdr h;
  std::vector<uint8_t> pay;
  ParseError e;
  auto f1 = vector1_frame();
  LocalAddr l1{0x020000000001ull, 0x0a000001};
  ASSERT_TRUE(parse_frame(f1.data(), f1.size(), &h, &pay, &e, &l1)) << to_string(e);
  EXPECT_EQ(h, vector1_hdr());
  EXPECT_TRUE(pay.empty());
  // Padded to the Ethernet minimum: still accepted.
  f1.resize(64, 0);
  EXPECT_TRUE(parse_frame(f1.data(), f1.size(), &h, &pay, &e, &l1));

  const auto f2 = vector2_frame();
  LocalAddr l2{0x020000000002ull, 0x0a000002};
  ASSERT_TRUE(parse_frame(f2.data(), f2.size(), &h, &pay, &e, &l2)) << to_string(e);
  EXPECT_EQ(h, vector2_hdr());
  EXPECT_EQ(pay, vector2_payload());
  // Wrong local address.
  EXPECT_FALSE(parse_frame(f2.data(), f2.size(), &h, &pay, &e, &l1));
  EXPECT_EQ(e, ParseError::kDstMac);
}

TEST(RoceModel, MaskedFieldsDoNotChangeIcrc) {
  auto f = vector2_frame();
  const uint32_t c = wire_icrc(f);
  for (size_t off : {15u, 22u, 24u, 25u, 40u, 41u, 46u}) {
    auto g = f;
    g[off] ^= 0xA5;
    EXPECT_EQ(icrc(g.data() + kIpOff, g.size() - kIpOff - 4), c) << off;
  }
  auto g = f;
  g[16 + 14] ^= 1;  // src IP is covered
  EXPECT_NE(icrc(g.data() + kIpOff, g.size() - kIpOff - 4), c);
}

TEST(RoceModel, RoundTripAllOpcodes) {
  std::mt19937_64 rng(7);
  for (int op : supported_opcodes()) {
    for (unsigned len : edge_pay_lens(64)) {
      RoceHdr h = random_hdr(rng, len);
      h.opcode = static_cast<uint8_t>(op);
      const auto pay = random_bytes(rng, len);
      const auto f = build_frame(h, pay.data());
      ASSERT_EQ(f.size(), frame_len(h));
      ASSERT_EQ((f.size() - 42) % 4, 0u);  // ICRC 4-byte aligned relative to the BTH
      RoceHdr got;
      std::vector<uint8_t> gp;
      ParseError e;
      LocalAddr l{h.dst_mac, h.dst_ip};
      const bool ok = parse_frame(f.data(), f.size(), &got, &gp, &e, &l);
      if (f.size() > kMaxFrameLen) {
        EXPECT_FALSE(ok);
        EXPECT_EQ(e, ParseError::kTooLong);
        continue;
      }
      ASSERT_TRUE(ok) << "op " << op << " len " << len << " " << to_string(e);
      EXPECT_EQ(got, canonical(h)) << "op " << op << " len " << len;
      if (bth_has_deth(h.opcode)) {  // the GRH in front: 20 zero bytes, then the IPv4 header
        ASSERT_EQ(gp.size(), kGrhLen + pay.size());
        EXPECT_EQ(std::vector<uint8_t>(gp.begin(), gp.begin() + 20), std::vector<uint8_t>(20, 0));
        EXPECT_EQ(0, std::memcmp(gp.data() + 20, f.data() + kIpOff, 20));
        EXPECT_EQ(std::vector<uint8_t>(gp.begin() + kGrhLen, gp.end()), pay);
      } else {
        EXPECT_EQ(gp, pay);
      }
    }
  }
}

TEST(RoceModel, HeaderRules) {
  std::mt19937_64 rng(3);
  RoceHdr h = random_hdr(rng, 100);
  h.opcode = kWriteOnly;
  const auto pay = random_bytes(rng, 100);
  const auto good = build_frame(h, pay.data());
  const LocalAddr l{h.dst_mac, h.dst_ip};
  auto check = [&](std::vector<uint8_t> f, ParseError want, bool fix = true) {
    if (fix) fix_icrc(f);
    ParseError e = ParseError::kOk;
    EXPECT_FALSE(parse_frame(f.data(), f.size(), nullptr, nullptr, &e, &l));
    EXPECT_EQ(e, want) << to_string(e) << " want " << to_string(want);
  };
  ParseError e;
  ASSERT_TRUE(parse_frame(good.data(), good.size(), nullptr, nullptr, &e, &l));
  auto f = good;
  f[12] = 0x86;
  check(f, ParseError::kEtherType);
  f = good;
  f[14] = 0x46;
  check(f, ParseError::kIpVerIhl);
  f = good;
  f[20] |= 0x20;  // MF
  check(f, ParseError::kIpFragment);
  f = good;
  f[21] = 1;  // offset
  check(f, ParseError::kIpFragment);
  f = good;
  f[23] = 6;
  check(f, ParseError::kIpProto);
  f = good;
  f[37] ^= 1;
  check(f, ParseError::kUdpPort);
  f = good;
  f[17] += 4;
  check(f, ParseError::kLenMismatch);
  f = good;
  f.resize(f.size() - 1);
  check(f, ParseError::kTooShort, false);
  f = good;
  f[5] ^= 1;
  check(f, ParseError::kDstMac);
  f = good;
  f[33] ^= 1;
  check(f, ParseError::kDstIp);
  f = good;
  f[43] |= 1;
  check(f, ParseError::kTver);
  f = good;
  f[45] ^= 2;
  check(f, ParseError::kPkey);
  f = good;
  f[42] = 0x66;  // (UD SEND_ONLY 0x64 and _IMM 0x65 are supported; 0x66 is not)
  check(f, ParseError::kOpcode);
  f = good;
  f.resize(kMaxFrameLen + 1, 0);
  check(f, ParseError::kTooLong, false);
  f = good;
  f[55] ^= 0x10;
  check(f, ParseError::kBadIcrc, false);
  // P_Key 0x7FFF (limited member) is accepted; only the low 15 bits are compared.
  f = good;
  f[44] = 0x7F;
  fix_icrc(f);
  EXPECT_TRUE(parse_frame(f.data(), f.size(), nullptr, nullptr, &e, &l));
}

TEST(RoceModel, PackUnpack) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100; ++i) {
    RoceHdr h = canonical(random_hdr(rng, rng() & 0x1FFF));
    h.reth_va = rng();
    h.reth_rkey = static_cast<uint32_t>(rng());
    h.imm = static_cast<uint32_t>(rng());
    h.aeth = static_cast<uint32_t>(rng());
    uint32_t w[kRoceHdrWords];
    pack_hdr(h, w);
    EXPECT_EQ(w[kRoceHdrWords - 1] >> (kRoceHdrBits % 32), 0u);
    EXPECT_EQ(unpack_hdr(w), h);
  }
  RoceHdr h;
  h.pay_len = 1;
  h.dst_mac = 0x800000000000ull;
  uint32_t w[kRoceHdrWords];
  pack_hdr(h, w);
  EXPECT_EQ(w[0], 1u);
  EXPECT_EQ(w[kRoceHdrWords - 1], 1u << ((kRoceHdrBits - 1) % 32));
}

TEST(PcapWriter, WritesNanosecondEthernetCapture) {
  const std::string path = ::testing::TempDir() + "tmnic_pcap_test.pcap";
  {
    PcapWriter w;
    ASSERT_TRUE(w.open(path));
    ASSERT_TRUE(w.write(vector1_frame(), 1500000123ull));
    ASSERT_TRUE(w.write(vector2_frame(), 2000000000ull));
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  ASSERT_EQ(b.size(), 24u + 16 + 62 + 16 + 82);
  auto le32 = [&](size_t o) {
    return b[o] | b[o + 1] << 8 | b[o + 2] << 16 | static_cast<uint32_t>(b[o + 3]) << 24;
  };
  EXPECT_EQ(le32(0), 0xA1B23C4Du);
  EXPECT_EQ(le32(20), 1u);  // Ethernet
  EXPECT_EQ(le32(24), 1u);
  EXPECT_EQ(le32(28), 500000123u);
  EXPECT_EQ(le32(32), 62u);
  EXPECT_EQ(le32(36), 62u);
  // A 58-byte frame is padded to 60 in the file.
  {
    PcapWriter w(path);
    std::vector<uint8_t> shortf(58, 0xEE);
    ASSERT_TRUE(w.write(shortf, 0));
  }
  std::ifstream in2(path, std::ios::binary);
  std::vector<uint8_t> c((std::istreambuf_iterator<char>(in2)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  ASSERT_EQ(c.size(), 24u + 16 + 60);
  EXPECT_EQ(c[24 + 16 + 57], 0xEE);
  EXPECT_EQ(c[24 + 16 + 58], 0);
  EXPECT_EQ(c[24 + 8], 60);
}
