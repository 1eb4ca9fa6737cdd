// The UDP fabric: the MAC port of this process's one simulated NIC, carried as real RoCEv2 UDP
// datagrams (destination port 4791) between loopback addresses, so that NICs of different processes
// talk to each other through the kernel (TMNIC_FABRIC=udp; docs/simulation.md).
//
// Addresses. A process claims 127.a.b.c by binding a UDP socket to 127.a.b.c:4791: the bind is an
// atomic claim that the kernel releases when the process exits or is killed. Without a configured
// address (TMNIC_FABRIC_ADDR) candidates are tried from one derived from the pid on (never
// 127.0.0.1). The NIC's MAC is derived from its address (02:00:a.b.c.d, what the driver assumes for
// an unresolved neighbour), so no ARP is needed.
//
// Sending. A frame's IP and UDP headers are covered by its ICRC (IBA annex A17: all but TOS, TTL and
// the two checksums), so the datagram the kernel builds must carry exactly the header fields the NIC
// put in its frame. The NIC sends IP ID 0 with DF set (rtl/pkt/tmnic_pkt_tx.sv), and the kernel does
// the same for an unconnected UDP socket with IP_MTU_DISCOVER = IP_PMTUDISC_DO (a connected socket
// gets a per-socket counter, the default PMTU mode a hashed ID); the UDP source port is the one the
// socket is bound to. So frames are sent by unconnected sockets bound to <own address>:<the frame's
// UDP source port>, one per source port, opened when a frame first needs it.
//
// Receiving. The 4791 socket receives the datagrams; IP_PKTINFO, IP_RECVTOS and IP_RECVTTL give the
// header fields a UDP socket can see. The frame handed to the NIC is rebuilt from them, the sender's
// address and port and the datagram's length; ID 0 and DF (which a UDP socket cannot see) are what
// every fabric sender's kernel puts in. The NIC's ICRC check then passes exactly when the datagram
// arrived as its sender's NIC built it.
//
// Not losing datagrams (docs/simulation.md "Draining the socket"). The kernel drops a datagram that
// finds the socket's receive queue full, and UD never sends it again. So the socket is not read by
// the simulation, which reads only between slices of busy cycles and may get no CPU for a while,
// but by a reader thread of the fabric that does nothing else: it sleeps in poll() until a datagram
// comes and moves every waiting datagram into an in-process queue (bounded only by
// kMaxQueuedBytes), and receive() takes them from there. And a sender waits while the receiver's
// socket has no room (PeerQueue: flow control through the shared kernel's socket diagnostics).
// What the kernel still drops is counted (rx_kernel_drops) and said on stderr.
//
// Threads: send(), receive() and wait() from one thread at a time (the World's caller); the reader
// thread is the fabric's own; counters() from any thread.
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tmnic::sim {

class PeerQueue;

class UdpFabric {
 public:
  static constexpr uint16_t kRocePort = 4791;

  // Claims `addr` (host order; 0: choose one) by binding its 4791 socket, asking for a receive
  // buffer of `rcvbuf` bytes. Throws std::runtime_error with the reason when that is impossible
  // (e.g. the configured address is taken).
  explicit UdpFabric(uint32_t addr = 0, int rcvbuf = 8 << 20);
  ~UdpFabric();
  UdpFabric(const UdpFabric&) = delete;
  UdpFabric& operator=(const UdpFabric&) = delete;

  uint32_t ipv4() const { return ip_; }
  // The MAC of the station owning `ipv4` on the fabric: 02:00 followed by the address.
  static uint64_t mac_of(uint32_t ipv4) { return uint64_t(0x0200) << 32 | ipv4; }
  uint64_t mac() const { return mac_of(ip_); }
  // Parses "127.a.b.c"; 0 when it is not an address in 127.0.0.0/8 other than 127.0.0.1.
  static uint32_t parse_addr(const std::string& s);
  static std::string addr_str(uint32_t ipv4);

  // Sends one frame leaving the NIC's MAC (Ethernet/IPv4/UDP/RoCE). Returns false (and says why
  // once per reason on stderr) when the frame cannot go out as built: not IPv4/UDP to port 4791,
  // a source address other than this station's, IP header fields the kernel would not send.
  bool send(const std::vector<uint8_t>& frame);
  // Hands every datagram received so far, in order, as frames for the NIC to on_frame, without
  // blocking. Returns how many.
  template <class F> int receive(F&& on_frame) {
    std::deque<std::vector<uint8_t>> q = take();
    for (auto& f : q) on_frame(std::move(f));
    return int(q.size());
  }
  // Waits up to `timeout_us` for a datagram (true: one is waiting).
  bool wait(int64_t timeout_us);
  int fd() const { return ready_fd_; }   // readable when a datagram waits (a progress thread's poll set)
  int rcvbuf() const;                    // the receive buffer the kernel gave (SO_RCVBUF)
  // Datagrams the reader thread may hold that the NIC has not taken: beyond this many bytes it
  // drops them (rx_dropped, said once): a process whose NIC takes nothing for minutes.
  static constexpr size_t kMaxQueuedBytes = size_t(256) << 20;

  // Counters (docs/simulation.md "Counting datagrams"): frames the NIC handed to send(), datagrams
  // the kernel took (sendto succeeded), frames refused or failed; datagrams read from the socket,
  // those read but not queued for the NIC, and those the kernel dropped for this socket because its
  // receive queue was full (SO_MEMINFO, as of the call). Per peer address: datagrams sent to it and
  // received from it.
  struct Counters {
    uint64_t tx_frames = 0, tx_sent = 0, tx_dropped = 0;
    uint64_t tx_waits = 0, tx_wait_us = 0, tx_wait_gave_up = 0;   // flow control (PeerQueue)
    uint64_t rx_datagrams = 0, rx_dropped = 0, rx_kernel_drops = 0;
    uint64_t rx_queue_max = 0;          // most datagrams the in-process queue held at once
    uint64_t rx_kernel_queue_max = 0;   // most bytes the kernel's queue held when the reader woke
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> peers;   // address -> (sent to, received from)
  };
  Counters counters() const;

 private:
  bool receive_one(std::vector<uint8_t>* frame);   // reader thread
  void kernel_queue(uint32_t* bytes, uint32_t* drops) const;   // the socket's queue now
  void reader_main();
  std::deque<std::vector<uint8_t>> take();
  // A socket bound to ip_:sport (fd -1: bind failed) and the IP_TOS / IP_TTL it has now.
  struct TxSock {
    int fd = -1;
    int tos = 0, ttl = 64;
  };
  TxSock& tx_socket(uint16_t sport);
  // Says `what` once on stderr and counts it in *count (may be null). Takes mu_.
  void warn(const std::string& what, uint64_t* count);

  uint32_t ip_ = 0;
  int rx_fd_ = -1;
  int ready_fd_ = -1;   // eventfd: the reader thread queued datagrams
  int stop_fd_ = -1;    // eventfd: the reader thread is to end
  std::map<uint16_t, TxSock> tx_socks_;   // by UDP source port
  std::unique_ptr<PeerQueue> flow_;
  mutable std::mutex mu_;            // c_, warned_, rx_q_, rx_q_bytes_
  std::map<std::string, bool> warned_;
  Counters c_;
  std::deque<std::vector<uint8_t>> rx_q_;
  size_t rx_q_bytes_ = 0;
  std::thread reader_;
};

}  // namespace tmnic::sim
