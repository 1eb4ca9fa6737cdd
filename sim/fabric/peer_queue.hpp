// Flow control of the UDP fabric (docs/simulation.md "Draining the socket"): a sender does not
// send a datagram that the receiving process's socket has no room for, it waits, as an Ethernet
// port does when its peer sends PAUSE (PFC on a lossless RoCE fabric). The kernel drops a datagram
// that finds a UDP socket's receive queue full and UD never sends it again; that queue is small on
// a machine with default sysctl (net.core.rmem_max 212992: about 50 datagrams of 4 KiB) and can
// fill while the receiving process gets no CPU.
//
// All fabric processes share one kernel, so the sender asks it (NETLINK_SOCK_DIAG, as `ss -um`
// does, no privilege needed) how full the receiver's socket (its address, port 4791) is. Each
// answer gives the peer a credit: what fits below half of its buffer, at most an eighth of the
// buffer, so that a few senders filling the same receiver at once stay below what it holds; the
// next question is asked when the credit is used up. Without room, the sender asks again every
// 100 us, for at most kMaxWaitUs (a receiver stopped in a debugger), then sends anyway.
//
// Not thread-safe: the fabric's sending thread only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace tmnic::sim {

class PeerQueue {
 public:
  static constexpr int64_t kMaxWaitUs = 1000000;

  // `self`: this station's address, whose own socket the first question asks about (a kernel
  // without UDP socket diagnostics leaves flow control off: available() false, why() says why).
  explicit PeerQueue(uint32_t self);
  ~PeerQueue();
  PeerQueue(const PeerQueue&) = delete;
  PeerQueue& operator=(const PeerQueue&) = delete;

  bool available() const { return nl_ >= 0; }
  const std::string& why() const { return why_; }

  // Waits until the socket of `dst` (port 4791) has room for a datagram of `len` bytes, and counts
  // it against the credit. Returns the microseconds waited (0 mostly); *gave_up when it waited
  // kMaxWaitUs in vain. No socket at `dst`: at once (the datagram goes nowhere, as on a switch).
  int64_t wait_room(uint32_t dst, size_t len, bool* gave_up);

  // What a datagram of `len` bytes costs in a receive queue on lo (the kernel's truesize, rounded
  // up: 832 bytes for 64, 8448 for 4096 measured on Linux 6.18).
  static int64_t cost(size_t len) { return int64_t(2 * len + 1024); }

 private:
  // The receive queue of the UDP socket bound to dst:4791: bytes queued and its buffer size.
  // 0: answered; 1: no such socket; -1: no answer (errno).
  int query(uint32_t dst, uint32_t* queued, uint32_t* rcvbuf);

  int nl_ = -1;
  uint32_t seq_ = 0;
  std::string why_;
  std::map<uint32_t, int64_t> credit_;   // peer -> bytes it may still be sent without asking
};

}  // namespace tmnic::sim
