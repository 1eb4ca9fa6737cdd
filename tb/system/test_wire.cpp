// System tests that look at the process from outside: a pcap of the wire checked by tshark (with
// the Lua ICRC postdissector roce_icrc.lua) and by scapy's RoCE layer, determinism of simulated
// time across runs, and Debian's unmodified ibv_devinfo on our libibverbs.so.1. The traffic runs in
// tmnic_system_wire subprocesses, because the simulated world reads TMNIC_PCAP and TMNIC_SIM_* once
// per process.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "shell_util.hpp"
#include "system_test.hpp"
#include "wire_traffic.hpp"

namespace {

using namespace sys;
namespace reg = tmnic::hwif::reg;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> v;
  size_t a = 0;
  for (;;) {
    size_t b = s.find(sep, a);
    v.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) return v;
    a = b + 1;
  }
}

// A scratch directory per test process.

// Runs the capture program; returns its "key value" lines.
std::map<std::string, uint64_t> wire_run(const std::string& env, const std::string& args, int* status) {
  std::string out;
  *status = run(env + " " TMNIC_WIRE_TOOL " " + args, &out);
  std::map<std::string, uint64_t> kv;
  for (auto& l : lines(out)) {
    auto f = split(l, ' ');
    if (f.size() == 2) kv[f[0]] = std::strtoull(f[1].c_str(), nullptr, 0);
  }
  return kv;
}

// tshark with every payload heuristic that misreads RoCE SEND payloads disabled, and the ICRC
// checker loaded. stderr is dropped (as root tshark warns about running as root).
std::string tshark(const std::string& pcap, const std::string& rest) {
  std::string c = std::string(TMNIC_TSHARK) + " -n -r " + pcap +
                  " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE"
                  " --disable-protocol rpcordma --disable-protocol smb_direct --disable-protocol smc"
                  " --disable-protocol nvme-rdma --disable-protocol lnet --disable-protocol iser"
                  " --disable-protocol infiniband_sdp --disable-protocol fcoib --disable-protocol drbd"
                  " --disable-protocol infiniband.eoib -X lua_script:" TMNIC_ICRC_LUA " " + rest + " 2>/dev/null";
  return c;
}
const char* kBadFilter =
    "-Y '!(ip && udp.dstport==4791 && infiniband.bth && roce_icrc.status==1) || _ws.malformed || "
    "_ws.expert.severity>=warning || ip.checksum.status==\"Bad\" || udp.checksum.status==\"Bad\"'";

bool have_tshark() { return std::string(TMNIC_TSHARK).size() > 0; }

// One request packet as expected or as captured.
struct Pkt {
  uint32_t opcode = 0, psn = 0, len = 0, ackreq = 0, se = 0;
  int64_t imm = -1;
  bool operator==(const Pkt& o) const {
    return opcode == o.opcode && psn == o.psn && len == o.len && ackreq == o.ackreq && se == o.se && imm == o.imm;
  }
};
std::ostream& operator<<(std::ostream& os, const Pkt& p) {
  return os << "{op " << p.opcode << " psn " << std::hex << p.psn << std::dec << " len " << p.len << " a "
            << p.ackreq << " se " << p.se << " imm " << p.imm << "}";
}

std::vector<Pkt> expected_requests(int dir) {
  std::vector<Pkt> v;
  uint32_t psn = wire::kPsn[dir];
  for (int m = 0; m < wire::kNumMsgs; m++) {
    const wire::Msg& g = wire::kMsgs[m];
    if (g.dir != dir) continue;
    uint32_t n = wire::packets(g.len);
    for (uint32_t k = 0; k < n; k++) {
      Pkt p;
      bool last = k + 1 == n;
      p.opcode = n == 1 ? (g.imm ? 5 : 4) : k == 0 ? 0 : !last ? 1 : (g.imm ? 3 : 2);
      p.psn = psn;
      psn = (psn + 1) & 0xFFFFFF;
      p.len = last ? g.len - k * wire::kPmtu : wire::kPmtu;
      p.ackreq = last;
      p.se = last && g.se;
      if (last && g.imm) p.imm = wire::kImmBase + uint32_t(m);
      v.push_back(p);
    }
  }
  return v;
}

// The capture of the clean run: every frame RoCEv2 with a good ICRC and without any malformed or
// expert warning; frame count = what both NICs say they sent; per direction, the request packets
// (retransmissions folded) are exactly the segmentation of the messages: opcodes FIRST/MIDDLE/LAST/
// ONLY(+IMM), consecutive PSNs wrapping through 0xFFFFFF, PMTU-sized payloads, PadCnt, AckReq on
// the last packet, SE on the last packet of solicited messages only, ImmDt in network order, DestQP; and the forced RNR NAK (syndrome 0x21) is there.
TEST(Wire, CaptureIsCleanRoceV2) {
  ASSERT_TRUE(have_tshark()) << "tshark not found at configure time (scripts/setup.sh installs it)";
  Tmp tmp("tmnic_system_");
  const std::string pcap = tmp.path("wire.pcap");
  int st;
  auto kv = wire_run("", "--pcap " + pcap, &st);
  ASSERT_EQ(st, 0) << "tmnic_system_wire failed";
  std::string out;
  ASSERT_EQ(run(tshark(pcap, kBadFilter), &out), 0);
  EXPECT_EQ(out, "") << "frames failing the RoCEv2/ICRC/expert check";
  ASSERT_EQ(run(tshark(pcap, ""), &out), 0);
  const auto all = lines(out);
  ASSERT_GT(all.size(), 0u) << "empty capture";
  EXPECT_EQ(all.size(), kv["tx_pkts0"] + kv["tx_pkts1"]) << "frames on the wire vs the NICs' TX_PKTS";
  EXPECT_EQ(kv["rx_drop_icrc0"] + kv["rx_drop_icrc1"] + kv["rx_drop_hdr0"] + kv["rx_drop_hdr1"], 0u);

  ASSERT_EQ(run(tshark(pcap,
                       "-T fields -E separator=, -E occurrence=f -e frame.number -e ip.src -e infiniband.bth.opcode "
                       "-e infiniband.bth.destqp -e infiniband.bth.psn -e infiniband.bth.a -e infiniband.bth.padcnt "
                       "-e infiniband.aeth.syndrome -e infiniband.immdt -e data.len -e roce_icrc.status -e infiniband.bth.se "
                       "-e ip.dsfield -e ip.ttl"),
                &out),
            0);
  std::vector<Pkt> got[2];
  std::map<uint32_t, Pkt> seen[2];
  int acks[2] = {0, 0}, rnr_naks = 0, retransmitted = 0;
  for (auto& l : lines(out)) {
    auto f = split(l, ',');
    ASSERT_EQ(f.size(), 14u) << l;
    ASSERT_EQ(f[10], "1") << "ICRC status: " << l;
    const int dir = f[1] == "10.0.0.1" ? 0 : f[1] == "10.0.0.2" ? 1 : -1;
    ASSERT_GE(dir, 0) << l;
    // The sending QP's GRH traffic class and hop limit, on requests and ACKs alike
    EXPECT_EQ(std::strtoul(f[12].c_str(), nullptr, 0), wire::kTclass[dir]) << "IPv4 TOS: " << l;
    EXPECT_EQ(std::strtoul(f[13].c_str(), nullptr, 0), wire::kHopLimit[dir]) << "IPv4 TTL: " << l;
    const uint32_t op = uint32_t(std::strtoul(f[2].c_str(), nullptr, 0));
    EXPECT_EQ(std::strtoul(f[3].c_str(), nullptr, 0), kv[dir ? "qpn0" : "qpn1"]) << "DestQP: " << l;
    if (op == 0x11) {  // ACKNOWLEDGE
      uint32_t syn = uint32_t(std::strtoul(f[7].c_str(), nullptr, 0));
      if ((syn & 0x60) == 0x20) {
        rnr_naks++;
        EXPECT_EQ(syn, 0x21u) << "RNR NAK with the receiver's min_rnr_timer (1): " << l;
      } else {
        EXPECT_EQ(syn & 0x60, 0u) << "only ACKs and RNR NAKs in this traffic: " << l;
        acks[dir]++;
      }
      continue;
    }
    ASSERT_LE(op, 5u) << "SEND opcodes only: " << l;
    Pkt p;
    p.opcode = op;
    p.psn = uint32_t(std::strtoul(f[4].c_str(), nullptr, 0));
    p.ackreq = uint32_t(std::strtoul(f[5].c_str(), nullptr, 0));
    p.se = uint32_t(std::strtoul(f[11].c_str(), nullptr, 0));
    const uint32_t pad = uint32_t(std::strtoul(f[6].c_str(), nullptr, 0));
    const uint32_t dlen = f[9].empty() ? 0 : uint32_t(std::strtoul(f[9].c_str(), nullptr, 0));
    EXPECT_EQ(dlen % 4, 0u) << "payload + pad is a multiple of 4: " << l;
    ASSERT_LE(pad, dlen) << l;
    p.len = dlen - pad;
    EXPECT_EQ(pad, (4 - p.len % 4) % 4) << "PadCnt: " << l;
    if (!f[8].empty()) p.imm = int64_t(std::strtoull(f[8].c_str(), nullptr, 16));  // bytes, as hex digits
    auto it = seen[dir].find(p.psn);
    if (it != seen[dir].end()) {  // a retransmission must repeat the packet exactly
      EXPECT_EQ(it->second, p) << "retransmitted packet differs: " << l;
      retransmitted++;
      continue;
    }
    seen[dir][p.psn] = p;
    got[dir].push_back(p);
  }
  for (int dir = 0; dir < 2; dir++) {
    SCOPED_TRACE("direction " + std::to_string(dir));
    auto want = expected_requests(dir);
    ASSERT_EQ(got[dir].size(), want.size());
    for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(got[dir][i], want[i]) << "request packet " << i;
    EXPECT_GT(acks[!dir], 0) << "ACKs from the responder";
  }
  EXPECT_GE(rnr_naks, 1) << "message 0 was sent before its receive: RNR NAK expected";
  EXPECT_EQ(uint64_t(rnr_naks), kv["tx_rnr_naks1"]);
  EXPECT_GE(retransmitted, rnr_naks) << "the RNR-NAKed packet is sent again";
}

// Negative control: the same checks flag exactly the one frame whose ICRC was corrupted on the wire.
TEST(Wire, LuaCheckerFlagsTheCorruptedFrame) {
  ASSERT_TRUE(have_tshark()) << "tshark not found at configure time (scripts/setup.sh installs it)";
  Tmp tmp("tmnic_system_");
  const std::string pcap = tmp.path("corrupt.pcap");
  int st;
  auto kv = wire_run("", "--corrupt --pcap " + pcap, &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(kv["rx_drop_icrc1"], 1u);
  std::string out, all;
  ASSERT_EQ(run(tshark(pcap, kBadFilter), &out), 0);
  ASSERT_EQ(run(tshark(pcap, ""), &all), 0);
  auto bad = lines(out);
  ASSERT_EQ(bad.size(), 1u) << out;
  EXPECT_EQ(split(bad[0], ' ').size() > 0, true);
  // It is the last frame of the capture (the message sent after corrupt_tx).
  const std::string n = std::to_string(lines(all).size());
  ASSERT_EQ(run(tshark(pcap, "-Y roce_icrc.status==0 -T fields -e frame.number"), &out), 0);
  EXPECT_EQ(out, n + "\n");
}

// scapy's independent ICRC (scapy.contrib.roce BTH.compute_icrc) and a zlib one agree with the
// wire for every frame of the clean capture, and find exactly the corrupted one in the other.
TEST(Wire, ScapyRecomputesEveryIcrc) {
  std::string out;
  if (run("/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null", &out) != 0)
    GTEST_SKIP() << "python3-scapy's RoCE layer is not importable by /usr/bin/python3";
  Tmp tmp("tmnic_system_");
  int st;
  wire_run("", "--pcap " + tmp.path("wire.pcap"), &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(run("/usr/bin/python3 " TMNIC_SCAPY_ICRC " " + tmp.path("wire.pcap") + " 2>&1", &out), 0) << out;
  wire_run("", "--corrupt --pcap " + tmp.path("corrupt.pcap"), &st);
  ASSERT_EQ(st, 0);
  EXPECT_EQ(run("/usr/bin/python3 " TMNIC_SCAPY_ICRC " " + tmp.path("corrupt.pcap") + " --expect-bad 1 2>&1", &out), 0)
      << out;
}

// The same program with the same TMNIC_SIM_SEED (and DMA latency jitter drawn from it) gives the
// same simulated cycle count, the same number of evaluated cycles and a byte-identical capture
// (timestamps included). A different seed changes the timing, which shows the seed is used.
TEST(Determinism, SameSeedSameCycles) {
  Tmp tmp("tmnic_system_");
  int st;
  const std::string env = "TMNIC_SIM_JITTER=16 TMNIC_SIM_SEED=";
  auto a = wire_run(env + "5", "--pcap " + tmp.path("a.pcap"), &st);
  ASSERT_EQ(st, 0);
  auto b = wire_run(env + "5", "--pcap " + tmp.path("b.pcap"), &st);
  ASSERT_EQ(st, 0);
  auto c = wire_run(env + "6", "--pcap " + tmp.path("c.pcap"), &st);
  ASSERT_EQ(st, 0);
  ASSERT_GT(a["cycles"], 0u);
  EXPECT_EQ(a["cycles"], b["cycles"]);
  EXPECT_EQ(a["evaluated"], b["evaluated"]);
  EXPECT_EQ(a, b) << "every counter of both NICs";
  const std::string pa = slurp(tmp.path("a.pcap")), pb = slurp(tmp.path("b.pcap"));
  EXPECT_GT(pa.size(), 24u);
  EXPECT_TRUE(pa == pb) << "captures differ";
  EXPECT_NE(a["cycles"], c["cycles"]) << "seed 6 gave the same timing as seed 5: is the jitter seeded?";
  EXPECT_EQ(a["tx_pkts0"], c["tx_pkts0"]) << "same traffic";
  std::printf("cycles: seed 5 %llu, %llu; seed 6 %llu\n", (unsigned long long)a["cycles"],
              (unsigned long long)b["cycles"], (unsigned long long)c["cycles"]);
}

// Without jitter (the default) two runs agree too.
TEST(Determinism, DefaultConfigSameCycles) {
  int st;
  auto a = wire_run("", "", &st);
  ASSERT_EQ(st, 0);
  auto b = wire_run("", "", &st);
  ASSERT_EQ(st, 0);
  ASSERT_GT(a["cycles"], 0u);
  EXPECT_EQ(a, b);
}

// Debian's unmodified `ibv_devinfo -v` on our libibverbs.so.1 lists tmnic0 and tmnic1 with the
// attributes the hardware has: limits from the BAR0 registers (read here through the simulation
// API), the GID from the port's IPv4 register, the node GUID from its MAC registers.
TEST(Devinfo, ListsBothNicsWithTrueAttributes) {
  ASSERT_TRUE(std::string(TMNIC_IBV_DEVINFO).size() > 0) << "ibv_devinfo not found (package ibverbs-utils)";
  std::string out;
  ASSERT_EQ(run("LD_LIBRARY_PATH=" TMNIC_VERBS_DIR " " TMNIC_IBV_DEVINFO " -v 2>&1", &out), 0) << out;
  // Split into one block per hca_id.
  std::map<std::string, std::map<std::string, std::string>> dev;
  std::map<std::string, std::string>* cur = nullptr;
  std::vector<std::string> gids;
  for (auto& l : lines(out)) {
    size_t c = l.find(':');
    if (c == std::string::npos) continue;
    std::string k = l.substr(0, c), v = l.substr(c + 1);
    k.erase(0, k.find_first_not_of(" \t"));
    v.erase(0, v.find_first_not_of(" \t"));
    if (k == "hca_id") {
      cur = &dev[v];
      continue;
    }
    if (!cur) continue;
    if (k.rfind("GID[", 0) == 0) k = "GID[0]";  // "GID[  0]"
    if (!cur->count(k)) (*cur)[k] = v;  // first occurrence (device block before port block)
  }
  ASSERT_EQ(dev.size(), 2u) << out;
  int n = tmnic_sim_num_nics();
  ASSERT_GE(n, 2);
  for (int i = 0; i < 2; i++) {
    const std::string name = "tmnic" + std::to_string(i);
    SCOPED_TRACE(name);
    ASSERT_TRUE(dev.count(name)) << out;
    auto& d = dev[name];
    auto num = [&](const char* k) -> int64_t {
      if (!d.count(k)) {
        ADD_FAILURE() << k << " missing";
        return -1;
      }
      return std::strtoll(d[k].c_str(), nullptr, 0);
    };
    const uint32_t qlim = (1u << tmnic_sim_read_reg(i, reg::MAX_LOG_QUEUE)) - 1;
    EXPECT_EQ(num("max_qp"), int64_t(tmnic_sim_read_reg(i, reg::NUM_QP)) - int64_t(tmnic::hwif::QPN_FIRST));
    EXPECT_EQ(num("max_qp_wr"), qlim);
    // One CQ is the driver's asynchronous event queue (ASYNC_CQ).
    EXPECT_EQ(num("max_cq"), int64_t(tmnic_sim_read_reg(i, reg::NUM_CQ)) - 1);
    EXPECT_EQ(num("max_cqe"), qlim);
    EXPECT_EQ(num("max_mr"), tmnic_sim_read_reg(i, reg::NUM_MR));
    EXPECT_EQ(num("max_srq"), tmnic_sim_read_reg(i, reg::NUM_SRQ));
    EXPECT_EQ(num("max_srq_wr"), qlim);
    EXPECT_EQ(num("max_sge"), tmnic_sim_read_reg(i, reg::MAX_SGE));
    EXPECT_EQ(num("max_srq_sge"), tmnic_sim_read_reg(i, reg::MAX_SGE));
    EXPECT_EQ(num("phys_port_cnt"), 1);
    EXPECT_EQ(d["link_layer"], "Ethernet");
    EXPECT_EQ(d["transport"], "InfiniBand (0)");
    EXPECT_EQ(d["state"], "PORT_ACTIVE (4)");
    EXPECT_EQ(d["active_mtu"], "4096 (5)");
    const uint32_t ip = tmnic_sim_read_reg(i, reg::IPV4);
    char gid[64];
    std::snprintf(gid, sizeof gid, "::ffff:%u.%u.%u.%u, RoCE v2", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255,
                  ip & 255);
    EXPECT_EQ(d["GID[0]"], gid);
    EXPECT_EQ(d["GID[0]"], "::ffff:10.0.0." + std::to_string(i + 1) + ", RoCE v2");
    // Node GUID = modified EUI-64 of the port MAC: 02:00:00:00:00:0x -> 0000:00ff:fe00:000x.
    const uint32_t lo = tmnic_sim_read_reg(i, reg::MAC_LO), hi = tmnic_sim_read_reg(i, reg::MAC_HI);
    const uint8_t m[6] = {uint8_t(hi >> 8), uint8_t(hi), uint8_t(lo >> 24), uint8_t(lo >> 16), uint8_t(lo >> 8),
                          uint8_t(lo)};
    char guid[32];
    std::snprintf(guid, sizeof guid, "%02x%02x:%02xff:fe%02x:%02x%02x", m[0] ^ 2, m[1], m[2], m[3], m[4], m[5]);
    EXPECT_EQ(d["node_guid"], guid);
    const uint32_t abi = tmnic_sim_read_reg(i, reg::ABI_VERSION);
    EXPECT_EQ(d["fw_ver"], "tmnic " + std::to_string(abi >> 16) + "." + std::to_string(abi & 0xFFFF));
  }
}

}  // namespace
