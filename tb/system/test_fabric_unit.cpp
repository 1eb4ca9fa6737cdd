// The UDP fabric's parts in one process (docs/simulation.md "Fabric between processes"): the socket
// reader that keeps the kernel's receive queue from overflowing while the simulation is busy, and the
// world's rule that a datagram enters the NIC only after the BAR writes its host issued before it was
// read. Both were behind UD runs that hung under CPU load (a datagram lost for good); the tests make
// each situation happen on purpose instead of waiting for a loaded machine to do it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "fabric/udp_fabric.hpp"
#include "nic/nic_sim.hpp"
#include "tmnic/hwif.h"
#include "world/world.hpp"

namespace {

using tmnic::sim::NicSim;
using tmnic::sim::SimConfig;
using tmnic::sim::UdpFabric;
using tmnic::sim::World;

// What a machine with Debian's default sysctl gives (net.core.rmem_max 212992, doubled by the
// kernel): about 50 datagrams of 4 KiB on lo.
constexpr int kDebianRcvbuf = 212992;

void put16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}
void put32(uint8_t* p, uint32_t v) {
  put16(p, uint16_t(v >> 16));
  put16(p + 2, uint16_t(v));
}

// A frame as a NIC at `src` sends it to `dst`: Ethernet, IPv4 (ID 0, DF, TTL 64), UDP to 4791 from
// `sport`, then `payload` bytes whose first four are `seq` (not RoCE: the NIC drops it, but its MAC
// takes it and the fabric carries it like any other).
std::vector<uint8_t> frame(uint32_t src, uint32_t dst, uint32_t seq, size_t payload, uint16_t sport = 0xC001) {
  std::vector<uint8_t> f(42 + payload, 0);
  put16(&f[12], 0x0800);
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  put16(ip + 2, uint16_t(20 + 8 + payload));
  put16(ip + 6, 0x4000);
  ip[8] = 64;
  ip[9] = 17;
  put32(ip + 12, src);
  put32(ip + 16, dst);
  put16(ip + 20, sport);
  put16(ip + 22, UdpFabric::kRocePort);
  put16(ip + 24, uint16_t(8 + payload));
  put32(&f[42], seq);
  return f;
}

uint32_t seq_of(const std::vector<uint8_t>& f) {
  return f.size() < 46 ? ~0u : uint32_t(f[42]) << 24 | uint32_t(f[43]) << 16 | uint32_t(f[44]) << 8 | f[45];
}

// Sends `count` frames of `size` payload bytes, one every `gap_us` (busy-waited: usleep's slack
// would make the flood gentler than asked for).
void flood(UdpFabric& from, uint32_t to, int count, size_t size, int gap_us) {
  using Clock = std::chrono::steady_clock;
  auto next = Clock::now();
  for (int i = 0; i < count; i++) {
    while (Clock::now() < next) {
    }
    ASSERT_TRUE(from.send(frame(from.ipv4(), to, uint32_t(i), size)));
    next += std::chrono::microseconds(gap_us);
  }
}

// 500 datagrams of 4 KiB, 10 times what its Debian-sized receive buffer holds, sent to a fabric
// whose user takes nothing until the last one was sent (a process busy simulating): all arrive, in
// order, and the kernel dropped none. The pace (one per ms) is twice what a simulated NIC manages
// (about 500 per s of 4 KiB). A plain socket with the same buffer, flooded and read only afterwards,
// keeps at most what its queue holds: the reader thread is what keeps them.
TEST(FabricSocket, BusyReceiverLosesNothing) {
  constexpr int kCount = 500;
  constexpr size_t kSize = 4096;
  UdpFabric rx(0, kDebianRcvbuf), tx;
  ASSERT_NE(rx.ipv4(), tx.ipv4());
  flood(tx, rx.ipv4(), kCount, kSize, 1000);
  // Everything sent is in the reader's hands within a moment; nothing was taken before.
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
       rx.counters().rx_datagrams < kCount && std::chrono::steady_clock::now() < end;)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<uint32_t> seqs;
  rx.receive([&](std::vector<uint8_t>&& f) {
    EXPECT_EQ(f.size(), 42 + kSize);
    seqs.push_back(seq_of(f));
  });
  const UdpFabric::Counters c = rx.counters(), t = tx.counters();
  EXPECT_EQ(t.tx_sent, uint64_t(kCount));
  EXPECT_EQ(t.tx_wait_gave_up, 0u);
  EXPECT_EQ(t.peers.at(rx.ipv4()).first, uint64_t(kCount));
  EXPECT_EQ(c.rx_kernel_drops, 0u) << "rcvbuf " << rx.rcvbuf();
  EXPECT_EQ(c.rx_datagrams, uint64_t(kCount));
  EXPECT_EQ(c.peers.at(tx.ipv4()).second, uint64_t(kCount));
  ASSERT_EQ(seqs.size(), size_t(kCount));
  for (int i = 0; i < kCount; i++) ASSERT_EQ(seqs[i], uint32_t(i)) << "out of order at " << i;
  EXPECT_GT(c.rx_queue_max, 50u) << "the in-process queue held more than the kernel's would";
  RecordProperty("rx_queue_max", std::to_string(c.rx_queue_max));
  // (what piled up in the kernel's queue while the reader thread waited for a CPU: its margin)
  RecordProperty("rx_kernel_queue_max", std::to_string(c.rx_kernel_queue_max));
  EXPECT_LT(c.rx_kernel_queue_max, uint64_t(rx.rcvbuf()));

  // The control: the same buffer without a reader.
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  int buf = kDebianRcvbuf;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(0x7F000001);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  socklen_t al = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &al);
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  std::vector<uint8_t> payload(kSize, 0x5A);
  for (int i = 0; i < kCount; i++) {
    ASSERT_EQ(sendto(s, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof(a)),
              ssize_t(kSize));
  }
  int kept = 0;
  while (recv(fd, payload.data(), payload.size(), MSG_DONTWAIT) > 0) kept++;
  close(s);
  close(fd);
  EXPECT_LT(kept, kCount / 4) << "the kernel's queue alone held the flood: the test proves nothing";
  RecordProperty("plain_socket_kept", std::to_string(kept));
}

// A UDP socket bound to 127.1.x.y:4791 (the first free one) with a Debian-sized buffer.
int plain_4791(uint32_t* ip) {
  for (uint32_t k = 0; k < 4096; k++) {
    *ip = 0x7F010000u | (uint32_t(getpid()) + k) % 250 << 8 | (2 + k % 250);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int buf = kDebianRcvbuf;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(*ip);
    a.sin_port = htons(UdpFabric::kRocePort);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) return fd;
    close(fd);
  }
  return -1;
}

// A receiver that reads nothing for 300 ms (a process whose reader thread gets no CPU; here a plain
// socket with a Debian-sized buffer, which holds 50 of these datagrams): the sender's fabric waits
// for room (flow control) instead of overflowing it, and all 200 datagrams arrive, in order, none
// dropped by the kernel. Without flow control 150 of them are lost.
TEST(FabricSocket, SenderWaitsForAStalledReceiver) {
  constexpr int kCount = 200;
  constexpr size_t kSize = 4096;
  uint32_t ip = 0;
  const int fd = plain_4791(&ip);
  ASSERT_GE(fd, 0);
  UdpFabric tx;
  std::thread sender([&] { flood(tx, ip, kCount, kSize, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::vector<uint8_t> buf(65536);
  std::vector<uint32_t> seqs;
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  while (seqs.size() < size_t(kCount)) {
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n < 0) break;
    EXPECT_EQ(n, ssize_t(kSize));
    seqs.push_back(uint32_t(buf[0]) << 24 | uint32_t(buf[1]) << 16 | uint32_t(buf[2]) << 8 | buf[3]);
  }
  sender.join();
  uint32_t mi[SK_MEMINFO_VARS] = {};
  socklen_t l = sizeof(mi);
  ASSERT_EQ(getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &l), 0);
  close(fd);
  EXPECT_EQ(mi[SK_MEMINFO_DROPS], 0u) << "datagrams the kernel dropped";
  ASSERT_EQ(seqs.size(), size_t(kCount));
  for (int i = 0; i < kCount; i++) ASSERT_EQ(seqs[i], uint32_t(i)) << "out of order at " << i;
  const UdpFabric::Counters t = tx.counters();
  EXPECT_GT(t.tx_waits, 0u) << "the sender never had to wait: the test proves nothing";
  EXPECT_GT(t.tx_wait_us, 200000u);
  EXPECT_EQ(t.tx_wait_gave_up, 0u);
  RecordProperty("tx_wait_us", std::to_string(t.tx_wait_us));
}

// A world on the fabric, run inline (deterministic): 50 posted BAR writes are issued (the receive
// doorbells a UD server posts before it tells its client to start), then a datagram arrives before
// the world has run a cycle. Its NIC's MAC takes the datagram only after the 50th write has reached
// the NIC; without the rule it entered at once, before the first write (a UD NIC then finds no
// receive WQE: rx_ud_no_wqe).
TEST(FabricWorld, DatagramWaitsForEarlierHostWrites) {
  SimConfig cfg;
  cfg.fabric = "udp";
  cfg.progress = "inline";
  World w(cfg);
  std::vector<NicSim::Event> log;
  w.nic(0).set_event_log(&log);
  UdpFabric peer;
  const uint32_t mac_lo = uint32_t(w.nic_mac(0));
  {
    std::lock_guard<tmnic::sim::BusLock> g(w.lock());
    for (int i = 0; i < 50; i++) w.mmio_write(0, tmnic::hwif::reg::MAC_LO, mac_lo);   // (its own value)
  }
  ASSERT_TRUE(peer.send(frame(peer.ipv4(), w.nic_ipv4(0), 7, 64)));
  ASSERT_TRUE(w.fabric()->wait(2000000)) << "the datagram did not come";
  const uint64_t t0 = w.now();
  {
    std::lock_guard<tmnic::sim::BusLock> g(w.lock());
    for (int k = 0; k < 100 && w.fabric_rx_held() == 0; k++) w.progress(1);
    EXPECT_EQ(w.fabric_rx_held(), 1u);
    while (w.progress()) {
    }
  }
  uint64_t last_write = 0, rx = 0;
  int writes = 0;
  for (auto& e : log) {
    if (e.kind == NicSim::Ev::kMmioWrite) {
      last_write = e.cycle;
      writes++;
    }
    if (e.kind == NicSim::Ev::kRxFrame && rx == 0) rx = e.cycle;
  }
  EXPECT_EQ(writes, 50);
  ASSERT_NE(rx, 0u) << "the datagram never entered the NIC";
  EXPECT_GT(rx, last_write) << "it entered at cycle " << rx - t0 << " after the writes were issued";
  EXPECT_LE(rx, last_write + 4) << "and no later than it had to";
}

// Datagrams flood a world whose progress thread runs it (the fabric's default): the socket's reader
// thread, the progress thread and this thread (BAR writes through the world's lock) at once, for
// ThreadSanitizer (make test-tsan); every datagram reaches the NIC's MAC.
TEST(FabricWorld, ThreadsCarryEveryDatagram) {
  SimConfig cfg;
  cfg.fabric = "udp";
  cfg.progress = "thread";
  World w(cfg);
  std::vector<NicSim::Event> log;
  {
    std::lock_guard<tmnic::sim::BusLock> g(w.lock());
    w.nic(0).set_event_log(&log);
  }
  UdpFabric peer;
  constexpr int kCount = 300;
  std::thread poster([&] {
    const uint32_t mac_lo = uint32_t(w.nic_mac(0));
    for (int i = 0; i < kCount; i++) {
      {
        std::lock_guard<tmnic::sim::BusLock> g(w.lock());
        w.mmio_write(0, tmnic::hwif::reg::MAC_LO, mac_lo);
      }
      w.kick();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  flood(peer, w.nic_ipv4(0), kCount, 1024, 200);
  poster.join();
  int frames = 0;
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       frames < kCount && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<tmnic::sim::BusLock> g(w.lock());
    frames = 0;
    for (auto& e : log) frames += e.kind == NicSim::Ev::kRxFrame;
  }
  EXPECT_EQ(frames, kCount);
  const UdpFabric::Counters c = w.fabric()->counters();
  EXPECT_EQ(c.rx_datagrams, uint64_t(kCount));
  EXPECT_EQ(c.rx_kernel_drops, 0u);
  std::lock_guard<tmnic::sim::BusLock> g(w.lock());
  w.nic(0).set_event_log(nullptr);
}

}  // namespace
