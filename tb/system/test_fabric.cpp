// The UDP fabric between processes (TMNIC_FABRIC=udp): each process has its own NIC with its own
// loopback address, and the NICs' RoCEv2 frames travel as UDP datagrams through the kernel. These
// tests are processes talking to each other (Debian's ibv_rc_pingpong / ibv_srq_pingpong /
// ibv_ud_pingpong and perftest, RC and UD, and
// tmnic_fabric_peer on our libibverbs.so.1), address claims by concurrent and killed processes, and
// a capture on lo checked by scapy's RoCE layer and tshark's independent ICRC check.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shell_util.hpp"

namespace {

using namespace sys;
using Clock = std::chrono::steady_clock;

// A child process: argv[0] is a path, `env` is added to this process's environment (the fabric,
// the drop-in library); stdout and stderr go to files.
class Proc {
 public:
  Proc(std::vector<std::string> argv, std::vector<std::string> env, const std::string& out, const std::string& err)
      : out_(out), err_(err) {
    std::fflush(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      std::freopen(out.c_str(), "w", stdout);
      std::freopen(err.c_str(), "w", stderr);
      for (auto& e : env) putenv(const_cast<char*>(e.c_str()));
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
      a.push_back(nullptr);
      execv(a[0], a.data());
      _exit(127);
    }
  }
  ~Proc() {
    if (pid_ > 0 && !done_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // Exit status, -1 when killed by a signal, -2 when still running after `timeout` (then killed).
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(25)) {
    auto end = Clock::now() + timeout;
    for (;;) {
      int st;
      pid_t r = waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        done_ = true;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      if (Clock::now() > end) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        done_ = true;
        return -2;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  void signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }
  // Waits until stdout holds a line starting with `prefix`; returns the rest of it ("" on timeout).
  std::string wait_line(const std::string& prefix, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    auto end = Clock::now() + timeout;
    for (;;) {
      for (auto& l : lines(out()))
        if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
      if (Clock::now() >= end) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

 private:
  pid_t pid_ = -1;
  bool done_ = false;
  std::string out_, err_;
};

const std::vector<std::string> kFabricEnv = {"LD_LIBRARY_PATH=" TMNIC_VERBS_DIR, "TMNIC_FABRIC=udp"};

std::vector<std::string> env_with(std::vector<std::string> extra) {
  std::vector<std::string> e = kFabricEnv;
  e.insert(e.end(), extra.begin(), extra.end());
  return e;
}

// A TCP port for a pingpong's out-of-band exchange: different per test process and per call, so
// that tests running in parallel (ctest -j) do not meet.
int next_port() {
  static int n = 0;
  return 20000 + int((getpid() * 37 + n++ * 7919) % 30000);
}

bool have(const char* path) { return access(path, X_OK) == 0; }

// Some socket in LISTEN state on TCP port `port` (IPv4 or IPv6).
bool tcp_listening(int port) {
  char want[16];
  std::snprintf(want, sizeof want, ":%04X", port);
  for (const char* f : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    for (auto& l : lines(slurp(f))) {
      std::istringstream in(l);
      std::string sl, local, remote, st;
      in >> sl >> local >> remote >> st;
      if (local.size() > 5 && local.compare(local.size() - 5, 5, want) == 0 && st == "0A") return true;
    }
  }
  return false;
}

struct PingpongResult {
  int server = 0, client = 0;
  std::string server_out, client_out, server_err, client_err;
  std::string server_stats, client_stats;   // TMNIC_FABRIC_STATS of each process
  std::string log() const {
    return "server (" + std::to_string(server) + "):\n" + server_out + server_err + "client (" +
           std::to_string(client) + "):\n" + client_out + client_err +
           (server_stats.empty() ? "" : "server's counters:\n" + server_stats + "client's counters:\n" + client_stats);
  }
};

// Debian's pingpong `tool` as a server and a client process, each on its own fabric NIC (the GID
// index option is -g for ibverbs-utils, -x for perftest). Each process writes its fabric's and
// NIC's counters (TMNIC_FABRIC_STATS, docs/simulation.md "Counting datagrams") into the result.
PingpongResult pingpong(const Tmp& tmp, const std::string& tool, std::vector<std::string> args,
                        std::vector<std::string> client_env = {}, const std::string& gid_opt = "-g") {
  const std::string port = std::to_string(next_port());
  std::vector<std::string> a = {tool, "-d", "tmnic0", gid_opt, "0", "-p", port};
  a.insert(a.end(), args.begin(), args.end());
  std::remove(tmp.path("server.stats").c_str());
  std::remove(tmp.path("client.stats").c_str());
  Proc server(a, env_with({"TMNIC_FABRIC_STATS=" + tmp.path("server.stats")}), tmp.path("server.out"),
              tmp.path("server.err"));
  client_env.push_back("TMNIC_FABRIC_STATS=" + tmp.path("client.stats"));
  // The client connects once, so wait until the server listens on the TCP port.
  for (auto end = Clock::now() + std::chrono::seconds(10); !tcp_listening(std::stoi(port)) && Clock::now() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  a.push_back("localhost");
  PingpongResult r;
  {
    Proc client(a, env_with(client_env), tmp.path("client.out"), tmp.path("client.err"));
    r.client = client.wait();
    r.client_out = client.out();
    r.client_err = client.err();
  }
  r.server = server.wait(std::chrono::seconds(10));
  r.server_out = server.out();
  r.server_err = server.err();
  r.server_stats = slurp(tmp.path("server.stats"));
  r.client_stats = slurp(tmp.path("client.stats"));
  return r;
}

// "key value" lines.
std::map<std::string, std::string> keys(const std::string& text) {
  std::map<std::string, std::string> m;
  for (auto& l : lines(text)) {
    std::istringstream in(l);
    std::string k, v;
    if (in >> k >> v) m[k] = v;
  }
  return m;
}

// Not one datagram lost between the two processes of `r`, by their counters: each process's world
// wrote them as it went (final 1); what each fabric sent to the other the other's socket received
// (the kernel dropped none, no sender gave up waiting for room); each NIC parsed every datagram its
// fabric received, and no datagram found the NIC without a receive WQE (UD drops those for good).
void expect_no_datagram_lost(const PingpongResult& r) {
  auto s = keys(r.server_stats), c = keys(r.client_stats);
  ASSERT_EQ(s["final"], "1") << r.log();
  ASSERT_EQ(c["final"], "1") << r.log();
  const std::string sa = s["addr"], ca = c["addr"];
  EXPECT_NE(c["fabric_tx_to_" + sa], "") << r.log();
  EXPECT_EQ(c["fabric_tx_to_" + sa], s["fabric_rx_from_" + ca]) << "client -> server\n" << r.log();
  EXPECT_EQ(s["fabric_tx_to_" + ca], c["fabric_rx_from_" + sa]) << "server -> client\n" << r.log();
  for (auto* m : {&s, &c}) {
    for (const char* k : {"fabric_tx_dropped", "fabric_tx_wait_gave_up", "fabric_rx_dropped", "fabric_rx_kernel_drops",
                          "nic_rx_ud_no_wqe", "nic_rx_drop_icrc", "nic_rx_drop_hdr", "nic_rx_drop_qp"})
      EXPECT_EQ((*m)[k], "0") << k << "\n" << r.log();
    EXPECT_EQ((*m)["nic_rx_pkts"], (*m)["fabric_rx_datagrams"]) << r.log();
  }
}

// "GID ::ffff:a.b.c.d" of a pingpong's "local address:" line.
std::string local_ipv4(const std::string& out) {
  for (auto& l : lines(out)) {
    auto p = l.find("local address:");
    auto g = l.find("GID ::ffff:");
    if (p != std::string::npos && g != std::string::npos) return l.substr(g + 11);
  }
  return "";
}

void expect_pingpong_ok(const PingpongResult& r, const std::string& iters) {
  EXPECT_EQ(r.server, 0) << r.log();
  EXPECT_EQ(r.client, 0) << r.log();
  EXPECT_NE(r.server_out.find(iters + " iters in"), std::string::npos) << r.log();
  EXPECT_NE(r.client_out.find(iters + " iters in"), std::string::npos) << r.log();
  // Two processes, two NICs, two addresses in 127/8.
  std::string a = local_ipv4(r.server_out), b = local_ipv4(r.client_out);
  EXPECT_EQ(a.rfind("127.", 0), 0u) << r.log();
  EXPECT_EQ(b.rfind("127.", 0), 0u) << r.log();
  EXPECT_NE(a, b) << r.log();
}

// The sizes issue 12 names, with the tool's own check of every received buffer (-c).
TEST(Fabric, RcPingpong) {
  if (!have(TMNIC_RC_PINGPONG)) GTEST_SKIP() << TMNIC_RC_PINGPONG " not installed (ibverbs-utils)";
  Tmp tmp("tmnic_fabric_");
  for (const char* size : {"1", "1024", "4097", "65536"}) {
    SCOPED_TRACE(std::string("size ") + size);
    expect_pingpong_ok(pingpong(tmp, TMNIC_RC_PINGPONG, {"-n", "10", "-s", size, "-c"}), "10");
  }
}

// Debian's perftest `tools` between two processes at `sizes` (64 and 4097 by default), 50
// iterations, with `extra` options; the client's result line has the size and iteration count.
// `datagrams` (UD): no datagram was lost on the way (expect_no_datagram_lost), which perftest cannot
// recover from (its UD server would wait forever, as on any lossy network).
// `size_opt` false: the tool has no -s (ib_atomic_bw: 8 bytes), `sizes` names the result row only.
void perftest_runs(const std::vector<const char*>& tools, std::vector<const char*> sizes = {"64", "4097"},
                   const std::vector<std::string>& extra = {}, bool datagrams = false, bool size_opt = true) {
  for (const char* tool : tools) {
    const std::string path = std::string(TMNIC_PERFTEST_DIR) + "/" + tool;
    if (!have(path.c_str())) GTEST_SKIP() << path << " not installed (perftest)";
    Tmp tmp("tmnic_fabric_");
    for (const char* size : sizes) {
      SCOPED_TRACE(std::string(tool) + " size " + size);
      std::vector<std::string> args = {"-n", "50"};
      if (size_opt) {
        args.push_back("-s");
        args.push_back(size);
      }
      args.insert(args.end(), extra.begin(), extra.end());
      PingpongResult r = pingpong(tmp, path, args, {}, "-x");
      EXPECT_EQ(r.server, 0) << r.log();
      EXPECT_EQ(r.client, 0) << r.log();
      bool row = false;
      for (auto& l : lines(r.client_out)) {
        std::istringstream in(l);
        std::string b, n;
        in >> b >> n;
        if (b == size && n == "50") row = true;
      }
      EXPECT_TRUE(row) << "no result row for " << size << " bytes x 50\n" << r.log();
      if (datagrams) expect_no_datagram_lost(r);
    }
  }
}

// RC SEND latency and bandwidth (both sides poll their CQs).
TEST(Fabric, PerftestSendLatAndBw) { perftest_runs({"ib_send_lat", "ib_send_bw"}); }

// UD SEND latency and bandwidth (-c UD: address handles, datagrams up to the 4096-byte MTU), one
// attempt each, every datagram accounted for. (ib_send_bw's server posts its 50 receives and then
// tells the client to start: under CPU load its datagrams used to reach the NIC before those
// doorbells, docs/simulation.md "Host writes before datagrams".)
TEST(Fabric, PerftestUdSendLatAndBw) {
  perftest_runs({"ib_send_lat", "ib_send_bw"}, {"64", "4096"}, {"-c", "UD"}, true);
}

// RC RDMA WRITE latency and bandwidth: the passive side of ib_write_bw only waits on its TCP socket
// while the NIC (its progress thread) places the data; ib_write_lat's server polls memory.
TEST(Fabric, PerftestWriteLatAndBw) { perftest_runs({"ib_write_lat", "ib_write_bw"}); }

// RC RDMA READ latency and bandwidth: the client READs the server's buffer (perftest asks for
// max_rd_atomic = the device's max_qp_rd_atom, MAX_RD_ATOM READs in flight); the server's NIC answers
// alone while its process waits on the TCP socket.
TEST(Fabric, PerftestReadLatAndBw) { perftest_runs({"ib_read_lat", "ib_read_bw"}); }

// What Debian's `ibv_devinfo -v -d tmnic0` on the fabric says the device's atomic_cap is.
std::string fabric_atomic_cap() {
  Tmp tmp("tmnic_fabric_");
  Proc p({"/usr/bin/ibv_devinfo", "-v", "-d", "tmnic0"}, kFabricEnv, tmp.path("devinfo.out"), tmp.path("devinfo.err"));
  if (p.wait() != 0) return "";
  for (auto& l : lines(p.out())) {
    std::istringstream in(l);
    std::string k, v;
    if (in >> k >> v && k == "atomic_cap:") return v;
  }
  return "";
}

// RC atomics bandwidth: ib_atomic_bw's client posts FETCH_AND_ADD resp. CMP_AND_SWAP on the
// server's 8-byte buffer (max_rd_atomic = the device's max_qp_rd_atom), the server's NIC answers
// alone. Skipped while the device reports no atomics (perftest refuses to run then).
TEST(Fabric, PerftestAtomicBw) {
  if (!have("/usr/bin/ibv_devinfo")) GTEST_SKIP() << "/usr/bin/ibv_devinfo not installed (ibverbs-utils)";
  const std::string cap = fabric_atomic_cap();
  ASSERT_NE(cap, "") << "ibv_devinfo -v did not report atomic_cap";
  if (cap == "ATOMIC_NONE")
    GTEST_SKIP() << "the device reports no atomics (atomic_cap ATOMIC_NONE: OPS_CAPS.ATOMIC is 0 until the RTL "
                    "executes them)";
  EXPECT_EQ(cap, "ATOMIC_HCA");
  for (const char* type : {"FETCH_AND_ADD", "CMP_AND_SWAP"}) {
    SCOPED_TRACE(type);
    perftest_runs({"ib_atomic_bw"}, {"8"}, {"-A", type}, false, false);
  }
}

// Event mode: completion channels (driver/verbs/events.cpp) signalled by the NIC's interrupts; the
// pingpong blocks in ibv_get_cq_event while the progress thread runs the NIC.
TEST(Fabric, RcPingpongEvents) {
  if (!have(TMNIC_RC_PINGPONG)) GTEST_SKIP() << TMNIC_RC_PINGPONG " not installed (ibverbs-utils)";
  Tmp tmp("tmnic_fabric_");
  for (const char* size : {"1", "4097"}) {
    SCOPED_TRACE(std::string("size ") + size);
    expect_pingpong_ok(pingpong(tmp, TMNIC_RC_PINGPONG, {"-n", "10", "-s", size, "-e"}), "10");
  }
}

// Datagrams (ibv_ud_pingpong: the server answers each sender from its receive completion with an
// address handle made from the GRH, ibv_create_ah_from_wc), polling and sleeping on events, with
// the tool's own check of every received buffer (-c); up to the port's MTU, as the tool allows.
TEST(Fabric, UdPingpong) {
  if (!have(TMNIC_UD_PINGPONG)) GTEST_SKIP() << TMNIC_UD_PINGPONG " not installed (ibverbs-utils)";
  Tmp tmp("tmnic_fabric_");
  // (one attempt each, every datagram accounted for, as perftest_runs' UD runs)
  auto run = [&](std::vector<std::string> args, const std::string& iters) {
    PingpongResult r = pingpong(tmp, TMNIC_UD_PINGPONG, args);
    expect_pingpong_ok(r, iters);
    expect_no_datagram_lost(r);
  };
  for (const char* size : {"1", "1024", "4096"}) {
    SCOPED_TRACE(std::string("size ") + size);
    run({"-n", "20", "-s", size, "-c"}, "20");
  }
  SCOPED_TRACE("event mode, size 4096");
  run({"-n", "10", "-s", "4096", "-e", "-c"}, "10");
}

TEST(Fabric, SrqPingpong) {
  if (!have(TMNIC_SRQ_PINGPONG)) GTEST_SKIP() << TMNIC_SRQ_PINGPONG " not installed (ibverbs-utils)";
  Tmp tmp("tmnic_fabric_");
  for (const char* size : {"1", "1024", "4097", "65536"}) {
    SCOPED_TRACE(std::string("size ") + size);
    expect_pingpong_ok(pingpong(tmp, TMNIC_SRQ_PINGPONG, {"-n", "10", "-s", size, "-c"}), "10");
  }
  SCOPED_TRACE("event mode, size 4097");
  expect_pingpong_ok(pingpong(tmp, TMNIC_SRQ_PINGPONG, {"-n", "10", "-s", "4097", "-e", "-c"}), "10");
}

std::map<std::string, double> kv(const std::string& out) {
  std::map<std::string, double> m;
  for (auto& l : lines(out)) {
    std::istringstream in(l);
    std::string role, key, val;
    in >> role >> key >> val;
    if (key != "addr") m[role + "." + key] = std::strtod(val.c_str(), nullptr);
  }
  return m;
}

// A process with an open device, a connected QP, a posted receive and an armed CQ, doing nothing:
// its progress thread sleeps, and the whole process uses under 1 % of a core.
TEST(Fabric, IdleProcessUsesNoCpu) {
  Tmp tmp("tmnic_fabric_");
  Proc p({TMNIC_FABRIC_PEER, "idle", "--ms", "2000"}, kFabricEnv, tmp.path("o"), tmp.path("e"));
  ASSERT_EQ(p.wait(), 0) << p.out() << p.err();
  auto m = kv(p.out());
  EXPECT_EQ(m["idle.threaded"], 1) << p.out();
  ASSERT_GT(m["idle.idle_wall_s"], 1.9) << p.out();
  EXPECT_LT(m["idle.idle_cpu_s"] / m["idle.idle_wall_s"], 0.01) << p.out();
  RecordProperty("idle_cpu_share", std::to_string(m["idle.idle_cpu_s"] / m["idle.idle_wall_s"]));
}

// Every byte of 20 round trips arrives; no frame is dropped by either NIC (the ICRC check passes on
// every datagram the kernel delivered intact).
TEST(Fabric, PairExchangesCheckedData) {
  Tmp tmp("tmnic_fabric_");
  Proc p({TMNIC_FABRIC_PEER, "pair", "--iters", "20", "--size", "4097"}, kFabricEnv, tmp.path("o"), tmp.path("e"));
  ASSERT_EQ(p.wait(), 0) << p.out() << p.err();
  auto m = kv(p.out());
  EXPECT_EQ(m["server.rx_drop_icrc"], 0) << p.out();
  EXPECT_EQ(m["client.rx_drop_icrc"], 0) << p.out();
  EXPECT_EQ(m["server.rx_drop_hdr"], 0) << p.out();
  EXPECT_EQ(m["client.rx_drop_hdr"], 0) << p.out();
  EXPECT_GT(m["client.evaluated"], 0) << p.out();
}

// Datagrams whose ICRC-covered bytes changed on the way are dropped by the receiving NIC's ICRC
// check, exactly those, and RC retransmission delivers the messages anyway.
TEST(Fabric, CorruptedDatagramsAreDropped) {
  Tmp tmp("tmnic_fabric_");
  Proc p({TMNIC_FABRIC_PEER, "pair", "--iters", "5", "--size", "1", "--corrupt", "3"}, kFabricEnv, tmp.path("o"),
         tmp.path("e"));
  ASSERT_EQ(p.wait(), 0) << p.out() << p.err();
  auto m = kv(p.out());
  EXPECT_EQ(m["server.rx_drop_icrc"], 3) << p.out();
  EXPECT_EQ(m["client.rx_drop_icrc"], 0) << p.out();
}

// Traffic to the NIC's own address stays inside the NIC: the checked messages arrive and not one
// frame goes to the fabric (the process's TMNIC_PCAP, which records the fabric's frames, stays empty).
TEST(Fabric, TrafficToItselfStaysInTheNic) {
  Tmp tmp("tmnic_fabric_");
  Proc p({TMNIC_FABRIC_PEER, "self", "--iters", "10"}, env_with({"TMNIC_PCAP=" + tmp.path("self.pcap")}),
         tmp.path("o"), tmp.path("e"));
  ASSERT_EQ(p.wait(), 0) << p.out() << p.err();
  EXPECT_EQ(slurp(tmp.path("self.pcap")).size(), 24u) << "frames left the NIC";   // pcap header only
}

// Processes started at the same moment claim distinct addresses; all hold them at the same time.
TEST(Fabric, ConcurrentProcessesGetDistinctAddresses) {
  Tmp tmp("tmnic_fabric_");
  constexpr int kProcs = 8;
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  const long long at = (long long)(now.tv_sec) * 1000000000LL + now.tv_nsec + 400000000LL;
  std::vector<std::unique_ptr<Proc>> ps;
  for (int i = 0; i < kProcs; i++)
    ps.push_back(std::make_unique<Proc>(
        std::vector<std::string>{TMNIC_FABRIC_PEER, "addr", "--at", std::to_string(at), "--hold-ms", "1500"},
        kFabricEnv, tmp.path("o" + std::to_string(i)), tmp.path("e" + std::to_string(i))));
  std::set<std::string> addrs;
  for (int i = 0; i < kProcs; i++) {
    ASSERT_EQ(ps[i]->wait(), 0) << ps[i]->out() << ps[i]->err();
    std::string a = ps[i]->wait_line("addr ", std::chrono::milliseconds(0));
    EXPECT_EQ(a.rfind("127.", 0), 0u) << ps[i]->out();
    EXPECT_NE(a, "127.0.0.1");
    addrs.insert(a);
  }
  EXPECT_EQ(addrs.size(), size_t(kProcs));
}

// A configured address is claimed exactly; while a process holds it another cannot have it, and
// after the holder is killed (SIGKILL: no cleanup of its own) a new process takes it.
TEST(Fabric, KilledProcessReleasesItsAddress) {
  Tmp tmp("tmnic_fabric_");
  Proc holder({TMNIC_FABRIC_PEER, "addr", "--hold-ms", "60000"}, kFabricEnv, tmp.path("h.out"), tmp.path("h.err"));
  const std::string addr = holder.wait_line("addr ");
  ASSERT_EQ(addr.rfind("127.", 0), 0u) << holder.out() << holder.err();
  {
    Proc second({TMNIC_FABRIC_PEER, "addr"}, env_with({"TMNIC_FABRIC_ADDR=" + addr}), tmp.path("s.out"),
                tmp.path("s.err"));
    EXPECT_EQ(second.wait(), 2) << second.out() << second.err();   // no device
    EXPECT_NE(second.err().find("cannot claim " + addr + ":4791"), std::string::npos) << second.err();
  }
  holder.signal(SIGKILL);
  EXPECT_EQ(holder.wait(), -1);
  Proc third({TMNIC_FABRIC_PEER, "addr"}, env_with({"TMNIC_FABRIC_ADDR=" + addr}), tmp.path("t.out"),
             tmp.path("t.err"));
  EXPECT_EQ(third.wait(), 0) << third.out() << third.err();
  EXPECT_EQ(third.wait_line("addr ", std::chrono::milliseconds(0)), addr);
}

TEST(Fabric, BadConfigurationGivesNoDevice) {
  Tmp tmp("tmnic_fabric_");
  for (const char* e : {"TMNIC_FABRIC_ADDR=127.0.0.1", "TMNIC_FABRIC_ADDR=10.0.0.5", "TMNIC_FABRIC=tcp"}) {
    Proc p({TMNIC_FABRIC_PEER, "addr"}, env_with({e}), tmp.path("o"), tmp.path("e"));
    EXPECT_EQ(p.wait(), 2) << e << "\n" << p.out() << p.err();
    EXPECT_NE(p.err().find("tmnic sim: TMNIC_FABRIC"), std::string::npos) << e << "\n" << p.err();
  }
}

// A capture on lo of a pingpong between two fabric processes (4097-byte messages: multi-packet
// SENDs and ACKs): every datagram between their addresses is RoCEv2 with a correct ICRC by scapy's
// RoCE layer and by tshark with the independent Lua check, and the IP datagrams on lo are byte for
// byte those the client's NIC built (its own pcap, TMNIC_PCAP): the kernel sent the NIC's headers.
// A capture on lo of `tool`'s pingpong between two processes, checked frame by frame (below).
void capture_check(const char* tool, std::vector<std::string> args);

TEST(Fabric, LoopbackCaptureHasCorrectIcrc) {
  capture_check(TMNIC_RC_PINGPONG, {"-n", "10", "-s", "4097"});
}

// The same for datagrams (UD SEND_ONLY with a DETH, SEND_ONLY_IMM never sent by the tool).
TEST(Fabric, UdCaptureHasCorrectIcrc) {
  capture_check(TMNIC_UD_PINGPONG, {"-n", "10", "-s", "2048"});
}

void capture_check(const char* tool, std::vector<std::string> args) {
  if (std::string(TMNIC_DUMPCAP).empty() || std::string(TMNIC_TSHARK).empty())
    GTEST_SKIP() << "dumpcap/tshark not found at configure time (scripts/setup.sh installs tshark)";
  if (!have(tool)) GTEST_SKIP() << tool << " not installed (ibverbs-utils)";
  std::string out;
  if (run("/usr/bin/python3 -c 'import scapy.contrib.roce' 2>/dev/null", &out) != 0)
    GTEST_SKIP() << "python3-scapy's RoCE layer is not importable by /usr/bin/python3";
  Tmp tmp("tmnic_fabric_");
  const std::string all = tmp.path("lo.pcap");
  Proc cap({TMNIC_DUMPCAP, "-i", "lo", "-f", "udp port 4791", "-P", "-w", all}, {}, tmp.path("cap.out"),
           tmp.path("cap.err"));
  // dumpcap says "Capturing on" once it captures; if it exits first it cannot capture here.
  auto end = Clock::now() + std::chrono::seconds(10);
  while (cap.err().find("Capturing on") == std::string::npos) {
    int st;
    if (waitpid(cap.pid(), &st, WNOHANG) == cap.pid()) {
      std::string why = cap.err();
      (void)cap.wait();   // reaped already; mark done
      GTEST_SKIP() << "cannot capture on lo (needs root or CAP_NET_RAW/CAP_NET_ADMIN for dumpcap): " << why;
    }
    ASSERT_LT(Clock::now(), end) << "dumpcap did not start: " << cap.err();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string nic_pcap = tmp.path("nic.pcap");
  PingpongResult r = pingpong(tmp, tool, args, {"TMNIC_PCAP=" + nic_pcap});
  expect_pingpong_ok(r, "10");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));   // the last frames reach the file
  cap.signal(SIGINT);
  ASSERT_EQ(cap.wait(std::chrono::seconds(10)), 0) << cap.err();
  const std::string a = local_ipv4(r.server_out), b = local_ipv4(r.client_out);
  ASSERT_FALSE(a.empty() || b.empty()) << r.log();

  // Only this pair's datagrams (other fabric users may share lo).
  const std::string mine = tmp.path("mine.pcap");
  ASSERT_EQ(run(std::string(TMNIC_TSHARK) + " -n -r " + all + " -Y 'ip.addr==" + a + " && ip.addr==" + b +
                    "' -F pcap -w " + mine + " 2>&1",
                &out),
            0)
      << out;
  // scapy's RoCE layer (and zlib) recompute every ICRC.
  EXPECT_EQ(run("/usr/bin/python3 " TMNIC_SCAPY_ICRC " " + mine + " 2>&1", &out), 0) << out;
  std::string frames = lines(out).empty() ? "" : lines(out).back();
  // tshark: every frame IPv4/UDP 4791 with a BTH and a good ICRC by the Lua check, nothing malformed,
  // no checksum complaint (the UDP checksum is 0 as in the NIC's frames, the IP checksum is right).
  const std::string tshark = std::string(TMNIC_TSHARK) + " -n -r " + mine +
                             " -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE"
                             " --disable-protocol infiniband.eoib -X lua_script:" TMNIC_ICRC_LUA " ";
  ASSERT_EQ(run(tshark +
                    "-Y '!(ip && udp.dstport==4791 && infiniband.bth && roce_icrc.status==1) || _ws.malformed || "
                    "_ws.expert.severity>=warning || ip.checksum.status==\"Bad\"' 2>/dev/null",
                &out),
            0);
  EXPECT_EQ(out, "") << "frames tshark does not accept as RoCEv2 with a good ICRC";
  ASSERT_EQ(run(tshark + "-T fields -e roce_icrc.status 2>/dev/null | sort | uniq -c", &out), 0);
  EXPECT_NE(out.find(" 1\n"), std::string::npos) << out;
  // The IP datagrams on lo equal the client NIC's frames from the IP header on (TX and RX).
  ASSERT_EQ(run("/usr/bin/python3 - " + mine + " " + nic_pcap + " 2>&1 <<'EOF'\n"
                "import sys\n"
                "from scapy.all import rdpcap\n"
                "def dgram(raw):\n"
                "    return raw[14:14 + int.from_bytes(raw[16:18], 'big')]\n"
                "lo = [dgram(bytes(p)) for p in rdpcap(sys.argv[1])]\n"
                "nic = [dgram(bytes(p)) for p in rdpcap(sys.argv[2])]\n"
                "missing = [d for d in nic if d not in set(lo)]\n"
                "extra = [d for d in lo if d not in set(nic)]\n"
                "print(len(lo), len(nic), len(missing), len(extra))\n"
                "sys.exit(1 if missing or extra or not nic else 0)\n"
                "EOF",
                &out),
            0)
      << "lo datagrams, NIC frames, NIC frames not on lo, lo datagrams not from the NIC: " << out << "\n" << frames;
}

}  // namespace
