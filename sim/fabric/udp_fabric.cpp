#include "fabric/udp_fabric.hpp"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "fabric/peer_queue.hpp"

namespace tmnic::sim {

namespace {
constexpr uint32_t kLoopbackNet = 0x7F000000u;   // 127.0.0.0/8
constexpr uint32_t kLocalhost = 0x7F000001u;     // 127.0.0.1: left to everything else
// Automatic choice: 127.0.h.l with l in 2..254 (no .0/.1/.255 host parts, never 127.0.0.1).
constexpr uint32_t kAutoHosts = 253;
constexpr uint32_t kAutoCount = 256 * kAutoHosts;
constexpr uint32_t kAutoTries = 4096;
constexpr size_t kEth = 14, kIp = 20, kUdp = 8, kHdr = kEth + kIp + kUdp;

uint32_t auto_candidate(uint32_t i) {
  i %= kAutoCount;
  return kLoopbackNet | (i / kAutoHosts) << 8 | (2 + i % kAutoHosts);
}

sockaddr_in sin_of(uint32_t ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  a.sin_port = htons(port);
  return a;
}

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
uint32_t be32(const uint8_t* p) { return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8); p[1] = uint8_t(v); }
void put32(uint8_t* p, uint32_t v) { put16(p, uint16_t(v >> 16)); put16(p + 2, uint16_t(v)); }

// A UDP socket bound to ip:port, with the options that make the kernel's IPv4 header agree with the
// NIC's (see the header comment). -1 with errno set when the bind fails.
int bound_socket(uint32_t ip, uint16_t port, bool reuse = false) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  if (reuse) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  int pmtu = IP_PMTUDISC_DO;   // DF set, ID 0 for an unconnected socket
  setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
  int on = 1;                  // UDP checksum 0 ("none" in IPv4), as in the NIC's frames; otherwise
  setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &on, sizeof(on));   // lo shows a partial (offloaded) one
  sockaddr_in a = sin_of(ip, port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}
}  // namespace

uint32_t UdpFabric::parse_addr(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return 0;
  uint32_t ip = ntohl(a.s_addr);
  if ((ip & 0xFF000000u) != kLoopbackNet || ip == kLocalhost || ip == kLoopbackNet) return 0;
  return ip;
}

std::string UdpFabric::addr_str(uint32_t ipv4) {
  char b[INET_ADDRSTRLEN];
  in_addr a{};
  a.s_addr = htonl(ipv4);
  inet_ntop(AF_INET, &a, b, sizeof(b));
  return b;
}

UdpFabric::UdpFabric(uint32_t addr, int rcvbuf) {
  if (addr != 0) {
    rx_fd_ = bound_socket(addr, kRocePort);
    if (rx_fd_ < 0)
      throw std::runtime_error("tmnic fabric: cannot claim " + addr_str(addr) + ":4791: " + std::strerror(errno));
    ip_ = addr;
  } else {
    uint32_t start = uint32_t(getpid()) * 2654435761u % kAutoCount;   // spread neighbouring pids
    for (uint32_t k = 0; k < kAutoTries && rx_fd_ < 0; k++) {
      uint32_t ip = auto_candidate(start + k);
      rx_fd_ = bound_socket(ip, kRocePort);
      if (rx_fd_ >= 0) ip_ = ip;
      else if (errno != EADDRINUSE) throw std::runtime_error(std::string("tmnic fabric: cannot bind ") +
                                                             addr_str(ip) + ":4791: " + std::strerror(errno));
    }
    if (rx_fd_ < 0) throw std::runtime_error("tmnic fabric: no free address in 127.0.0.0/16 after 4096 tries");
  }
  int on = 1;
  setsockopt(rx_fd_, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
  setsockopt(rx_fd_, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
  setsockopt(rx_fd_, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on));
  setsockopt(rx_fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  ready_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ready_fd_ < 0 || stop_fd_ < 0) {
    for (int fd : {ready_fd_, stop_fd_, rx_fd_})
      if (fd >= 0) close(fd);
    throw std::runtime_error("tmnic fabric: eventfd for the socket's reader thread failed");
  }
  reader_ = std::thread([this] { reader_main(); });
  flow_ = std::make_unique<PeerQueue>(ip_);
  if (!flow_->available())
    std::fprintf(stderr, "tmnic fabric %s: no flow control, a peer's full receive queue may drop datagrams: %s\n",
                 addr_str(ip_).c_str(), flow_->why().c_str());
}

int UdpFabric::rcvbuf() const {
  int v = 0;
  socklen_t l = sizeof(v);
  getsockopt(rx_fd_, SOL_SOCKET, SO_RCVBUF, &v, &l);
  return v;
}

UdpFabric::~UdpFabric() {
  uint64_t one = 1;
  ssize_t r = write(stop_fd_, &one, sizeof one);
  (void)r;   // (a fresh eventfd cannot be full)
  reader_.join();
  for (auto& [port, t] : tx_socks_)
    if (t.fd >= 0) close(t.fd);
  for (int fd : {rx_fd_, ready_fd_, stop_fd_}) close(fd);
}

void UdpFabric::kernel_queue(uint32_t* bytes, uint32_t* drops) const {
  uint32_t mi[SK_MEMINFO_VARS] = {};
  socklen_t l = sizeof mi;
  if (getsockopt(rx_fd_, SOL_SOCKET, SO_MEMINFO, mi, &l) != 0) l = 0;
  *bytes = l > SK_MEMINFO_RMEM_ALLOC * sizeof(uint32_t) ? mi[SK_MEMINFO_RMEM_ALLOC] : 0;
  *drops = l > SK_MEMINFO_DROPS * sizeof(uint32_t) ? mi[SK_MEMINFO_DROPS] : 0;
}

UdpFabric::Counters UdpFabric::counters() const {
  uint32_t bytes, drops;
  kernel_queue(&bytes, &drops);
  std::lock_guard<std::mutex> g(mu_);
  Counters c = c_;
  c.rx_kernel_drops = drops;
  return c;
}

void UdpFabric::reader_main() {
  pollfd p[2] = {{rx_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  std::vector<uint8_t> f;
  uint32_t drops_seen = 0;
  for (;;) {
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents) return;
    // What piled up in the kernel's queue while this thread waited for a CPU (its margin).
    uint32_t bytes, drops;
    kernel_queue(&bytes, &drops);
    {
      std::lock_guard<std::mutex> g(mu_);
      c_.rx_kernel_queue_max = std::max<uint64_t>(c_.rx_kernel_queue_max, bytes);
    }
    // Every waiting datagram, before anything else: the kernel's queue is the one that drops.
    // The consumer is told after each batch (a full queue is read out in batches of 64).
    for (bool more = true; more;) {
      int n = 0;
      bool over = false;
      while (n < 64 && (more = receive_one(&f))) {
        std::lock_guard<std::mutex> g(mu_);
        if (rx_q_bytes_ + f.size() > kMaxQueuedBytes) {
          c_.rx_dropped++;
          over = true;
          continue;
        }
        rx_q_bytes_ += f.size();
        rx_q_.push_back(std::move(f));
        c_.rx_queue_max = std::max<uint64_t>(c_.rx_queue_max, rx_q_.size());
        n++;
      }
      if (n > 0) {
        uint64_t one = 1;
        ssize_t r = write(ready_fd_, &one, sizeof one);
        (void)r;   // EAGAIN only when the counter is huge: it is readable anyway
      }
      if (over) warn("more than 256 MiB of datagrams that the NIC has not taken", nullptr);
    }
    kernel_queue(&bytes, &drops);
    if (drops != drops_seen) {   // lost for good (UD): say so, a peer's program may now wait forever
      drops_seen = drops;
      warn("the kernel dropped datagrams to this NIC: its socket's receive queue was full (SO_RCVBUF " +
               std::to_string(rcvbuf()) + ")",
           nullptr);
    }
  }
}

std::deque<std::vector<uint8_t>> UdpFabric::take() {
  uint64_t v;
  ssize_t r = read(ready_fd_, &v, sizeof v);   // first: a datagram queued from now on sets it again
  (void)r;
  std::deque<std::vector<uint8_t>> q;
  std::lock_guard<std::mutex> g(mu_);
  q.swap(rx_q_);
  rx_q_bytes_ = 0;
  return q;
}

void UdpFabric::warn(const std::string& what, uint64_t* count) {
  std::lock_guard<std::mutex> g(mu_);
  if (count) (*count)++;
  if (warned_[what]) return;
  warned_[what] = true;
  std::fprintf(stderr, "tmnic fabric %s: %s (frame dropped; said once)\n", addr_str(ip_).c_str(), what.c_str());
}

UdpFabric::TxSock& UdpFabric::tx_socket(uint16_t sport) {
  auto it = tx_socks_.find(sport);
  if (it != tx_socks_.end()) return it->second;
  // SO_REUSEADDR: the port may coexist with another program's socket on it that allows the same.
  int fd = bound_socket(ip_, sport, true);
  if (fd < 0)
    warn("cannot bind " + addr_str(ip_) + ":" + std::to_string(sport) + " for the NIC's UDP source port: " +
         std::strerror(errno), nullptr);   // (each frame for it is counted by send())
  TxSock& t = tx_socks_[sport];
  t.fd = fd;
  return t;
}

bool UdpFabric::send(const std::vector<uint8_t>& f) {
  {
    std::lock_guard<std::mutex> g(mu_);
    c_.tx_frames++;
  }
  if (f.size() < kHdr || be16(&f[12]) != 0x0800 || f[14] != 0x45 || f[23] != 17 ||
      be16(&f[36]) != kRocePort) {
    warn("a frame that is not IPv4/UDP to port 4791", &c_.tx_dropped);
    return false;
  }
  const uint8_t* ip = &f[kEth];
  const uint16_t ip_len = be16(ip + 2), udp_len = be16(ip + kIp + 4);
  if (ip_len != f.size() - kEth || udp_len != ip_len - kIp) {
    warn("IP/UDP lengths that disagree with the frame", &c_.tx_dropped);
    return false;
  }
  // Fields of the ICRC that the kernel chooses: what an unconnected IP_PMTUDISC_DO socket sends.
  if (be16(ip + 4) != 0 || be16(ip + 6) != 0x4000) {
    warn("IP ID/flags other than 0/DF, which the kernel would not send", &c_.tx_dropped);
    return false;
  }
  if (be32(ip + 12) != ip_) {
    warn("a source address other than this station's", &c_.tx_dropped);
    return false;
  }
  TxSock& sock = tx_socket(be16(ip + kIp));
  const int fd = sock.fd;
  if (fd < 0) {
    std::lock_guard<std::mutex> g(mu_);
    c_.tx_dropped++;
    return false;
  }
  // TOS and TTL are not covered by the ICRC; the kernel's header carries the frame's anyway (the
  // QP's or address handle's GRH traffic class and hop limit), so a capture shows what the NIC sent.
  if (sock.tos != ip[1]) {
    int tos = ip[1];
    if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) == 0) sock.tos = tos;
  }
  if (sock.ttl != ip[8]) {
    int ttl = ip[8];
    if (setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) == 0) sock.ttl = ttl;
  }
  sockaddr_in dst = sin_of(be32(ip + 16), kRocePort);
  bool gave_up = false;
  const int64_t waited = flow_->wait_room(be32(ip + 16), udp_len - kUdp, &gave_up);
  if (waited > 0 || gave_up) {
    std::lock_guard<std::mutex> g(mu_);
    c_.tx_waits++;
    c_.tx_wait_us += uint64_t(waited);
    c_.tx_wait_gave_up += gave_up;
  }
  // The socket blocks when its send buffer is full; a signal (EINTR) or a momentary lack of memory
  // (ENOBUFS) is tried again, 100 times over about 10 ms, before the frame is given up.
  ssize_t n = -1;
  for (int tries = 0; tries < 100; tries++) {
    n = sendto(fd, &f[kHdr], udp_len - kUdp, 0, reinterpret_cast<sockaddr*>(&dst), sizeof(dst));
    if (n >= 0 || (errno != EINTR && errno != ENOBUFS && errno != EAGAIN)) break;
    if (errno != EINTR) usleep(100);
  }
  if (n != ssize_t(udp_len - kUdp)) {
    warn(std::string("sendto: ") + std::strerror(errno), &c_.tx_dropped);
    return false;
  }
  std::lock_guard<std::mutex> g(mu_);
  c_.tx_sent++;
  c_.peers[be32(ip + 16)].first++;
  return true;
}

bool UdpFabric::receive_one(std::vector<uint8_t>* frame) {
  static thread_local std::vector<uint8_t> buf(65536);
  sockaddr_in src{};
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) uint8_t ctl[256];
  msghdr m{};
  m.msg_name = &src;
  m.msg_namelen = sizeof(src);
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof(ctl);
  ssize_t n = recvmsg(rx_fd_, &m, MSG_DONTWAIT);
  if (n < 0) return false;
  if (m.msg_flags & MSG_TRUNC) {
    warn("a datagram longer than 64 KiB", &c_.rx_dropped);
    return receive_one(frame);
  }
  uint32_t dst_ip = ip_;
  uint8_t tos = 0, ttl = 64;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != IPPROTO_IP) continue;
    if (c->cmsg_type == IP_PKTINFO) {
      in_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof(pi));
      dst_ip = ntohl(pi.ipi_addr.s_addr);   // the header's destination address
    } else if (c->cmsg_type == IP_TOS) {
      tos = *CMSG_DATA(c);
    } else if (c->cmsg_type == IP_TTL) {
      int v;
      std::memcpy(&v, CMSG_DATA(c), sizeof(v));
      ttl = uint8_t(v);
    }
  }
  const uint32_t src_ip = ntohl(src.sin_addr.s_addr);
  frame->assign(kHdr + size_t(n), 0);
  uint8_t* f = frame->data();
  const uint64_t dmac = mac(), smac = mac_of(src_ip);
  for (int k = 0; k < 6; k++) {
    f[k] = uint8_t(dmac >> (40 - 8 * k));
    f[6 + k] = uint8_t(smac >> (40 - 8 * k));
  }
  put16(f + 12, 0x0800);
  uint8_t* ip = f + kEth;
  ip[0] = 0x45;
  ip[1] = tos;
  put16(ip + 2, uint16_t(kIp + kUdp + size_t(n)));
  put16(ip + 4, 0);         // ID and flags: what every fabric sender's kernel sends (not visible
  put16(ip + 6, 0x4000);    // to a UDP socket)
  ip[8] = ttl;
  ip[9] = 17;
  put32(ip + 12, src_ip);
  put32(ip + 16, dst_ip);
  uint32_t sum = 0;
  for (size_t k = 0; k < kIp; k += 2) sum += be16(ip + k);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  put16(ip + 10, uint16_t(~sum));
  uint8_t* udp = ip + kIp;
  put16(udp, ntohs(src.sin_port));
  put16(udp + 2, kRocePort);
  put16(udp + 4, uint16_t(kUdp + size_t(n)));
  put16(udp + 6, 0);        // not covered by the ICRC; the NIC does not check it
  std::memcpy(f + kHdr, buf.data(), size_t(n));
  std::lock_guard<std::mutex> g(mu_);
  c_.rx_datagrams++;
  c_.peers[src_ip].second++;
  return true;
}

bool UdpFabric::wait(int64_t timeout_us) {
  pollfd p{ready_fd_, POLLIN, 0};
  if (timeout_us < 0) timeout_us = 0;
  timespec ts{time_t(timeout_us / 1000000), long(timeout_us % 1000000) * 1000};
  return ppoll(&p, 1, &ts, nullptr) > 0;
}

}  // namespace tmnic::sim
