#include "fabric/peer_queue.hpp"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tmnic::sim {

namespace {
constexpr uint16_t kRocePort = 4791;
constexpr int64_t kRetryUs = 100;

int64_t mono_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}
}  // namespace

PeerQueue::PeerQueue(uint32_t self) {
  nl_ = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (nl_ < 0) {
    why_ = std::string("no NETLINK_SOCK_DIAG socket: ") + std::strerror(errno);
    return;
  }
  timeval tv{0, 200000};   // an answer comes at once; never hang the simulation on a lost one
  setsockopt(nl_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  uint32_t queued, rcvbuf;
  if (query(self, &queued, &rcvbuf) != 0) {   // our own socket exists: anything else is no support
    why_ = std::string("the kernel does not describe UDP sockets (udp_diag): ") + std::strerror(errno);
    close(nl_);
    nl_ = -1;
  }
}

PeerQueue::~PeerQueue() {
  if (nl_ >= 0) close(nl_);
}

int PeerQueue::query(uint32_t dst, uint32_t* queued, uint32_t* rcvbuf) {
  struct {
    nlmsghdr nh;
    inet_diag_req_v2 r;
  } q{};
  q.nh.nlmsg_len = sizeof(q);
  q.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  q.nh.nlmsg_flags = NLM_F_REQUEST;
  q.nh.nlmsg_seq = ++seq_;
  q.r.sdiag_family = AF_INET;
  q.r.sdiag_protocol = IPPROTO_UDP;
  q.r.idiag_ext = 1 << (INET_DIAG_SKMEMINFO - 1);
  q.r.idiag_states = ~0u;
  // Looked up as the socket a datagram to dst:4791 would reach (source left 0).
  q.r.id.idiag_dport = htons(kRocePort);
  q.r.id.idiag_dst[0] = htonl(dst);
  q.r.id.idiag_cookie[0] = q.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  if (send(nl_, &q, sizeof(q), 0) != ssize_t(sizeof(q))) return -1;
  alignas(nlmsghdr) uint8_t buf[8192];
  for (;;) {   // (skips an answer to an earlier question that timed out)
    ssize_t n = recv(nl_, buf, sizeof(buf), 0);
    if (n < 0) return -1;
    for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, size_t(n)); h = NLMSG_NEXT(h, n)) {
      if (h->nlmsg_seq != seq_) continue;
      if (h->nlmsg_type == NLMSG_ERROR) {
        const int err = -static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
        if (err == ENOENT) return 1;
        errno = err;
        return -1;
      }
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
      auto* m = static_cast<inet_diag_msg*>(NLMSG_DATA(h));
      int len = int(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
      for (auto* a = reinterpret_cast<rtattr*>(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        if (a->rta_type != INET_DIAG_SKMEMINFO || RTA_PAYLOAD(a) < SK_MEMINFO_RCVBUF * 4 + 4) continue;
        const auto* mi = static_cast<const uint32_t*>(RTA_DATA(a));
        *queued = mi[SK_MEMINFO_RMEM_ALLOC];
        *rcvbuf = mi[SK_MEMINFO_RCVBUF];
        return 0;
      }
      errno = ENODATA;
      return -1;
    }
  }
}

int64_t PeerQueue::wait_room(uint32_t dst, size_t len, bool* gave_up) {
  *gave_up = false;
  if (nl_ < 0) return 0;
  const int64_t need = cost(len);
  int64_t& credit = credit_[dst];
  if (credit >= need) {
    credit -= need;
    return 0;
  }
  const int64_t t0 = mono_us();
  for (bool first = true;; first = false) {
    uint32_t queued = 0, rcvbuf = 0;
    const int r = query(dst, &queued, &rcvbuf);
    if (r != 0) {   // nobody there (or no answer): nothing to wait for
      credit = 0;
      return first ? 0 : mono_us() - t0;
    }
    const int64_t room = int64_t(rcvbuf) / 2 - int64_t(queued);
    if (room >= need) {
      credit = std::min(room, int64_t(rcvbuf) / 8);
      credit = std::max<int64_t>(credit - need, 0);
      return first ? 0 : std::max<int64_t>(mono_us() - t0, 1);
    }
    const int64_t waited = mono_us() - t0;
    if (waited >= kMaxWaitUs) {
      *gave_up = true;
      credit = 0;
      return waited;
    }
    usleep(kRetryUs);
  }
}

}  // namespace tmnic::sim
