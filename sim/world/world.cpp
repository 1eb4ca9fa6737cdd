#include "world/world.hpp"

#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "fabric/udp_fabric.hpp"
#include "tmnic/hwif.h"
#include "roce/pcap_writer.hpp"

namespace tmnic::sim {

namespace {
int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
}  // namespace

World::World(const SimConfig& cfg) : cfg_(cfg) {
  if (!cfg_.fabric.empty()) {
    // One NIC per process, on the UDP fabric: claim the address before building the NIC.
    if (cfg_.fabric != "udp")
      throw std::runtime_error("tmnic sim: TMNIC_FABRIC=" + cfg_.fabric + " is not a fabric (udp, or unset)");
    uint32_t addr = 0;
    if (!cfg_.fabric_addr.empty() && (addr = UdpFabric::parse_addr(cfg_.fabric_addr)) == 0)
      throw std::runtime_error("tmnic sim: TMNIC_FABRIC_ADDR=" + cfg_.fabric_addr +
                               " is not an address in 127.0.0.0/8 other than 127.0.0.1");
    fabric_ = std::make_unique<UdpFabric>(addr, cfg_.fabric_rcvbuf);
    cfg_.num_nics = 1;
  }
  irq_handlers_.resize(cfg_.num_nics);
  irq_handled_ = std::make_unique<std::atomic<bool>[]>(size_t(cfg_.num_nics));
  corrupt_.assign(cfg_.num_nics, 0);
  corrupt_skip_.assign(cfg_.num_nics, 0);
  for (int i = 0; i < cfg_.num_nics; i++) {
    nics_.push_back(std::make_unique<NicSim>(i, cfg_));
    nics_.back()->on_tx = [this, i](std::vector<uint8_t>&& f) { deliver(i, std::move(f)); };
    nics_.back()->on_irq = [this, i](uint32_t cq) {
      if (!irq_handled_[i].load()) return;   // nobody listens (raw tests): not kept
      irqs_.push_back({i, cq});
      irq_pending_.store(true);
    };
  }
  if (!cfg.pcap_path.empty()) {
    pcap_ = std::make_unique<roce::PcapWriter>();
    if (!pcap_->open(cfg.pcap_path)) throw std::runtime_error("tmnic sim: cannot open pcap " + cfg.pcap_path);
  }
  // Board configuration: each port's MAC and IPv4 address.
  for (int i = 0; i < num_nics(); i++) {
    uint64_t mac = nic_mac(i);
    mmio_write(i, hwif::reg::MAC_LO, static_cast<uint32_t>(mac));
    mmio_write(i, hwif::reg::MAC_HI, static_cast<uint32_t>(mac >> 32));
    mmio_write(i, hwif::reg::IPV4, nic_ipv4(i));
    mmio_write(i, hwif::reg::CTRL, 1);
  }
  while (!std::all_of(nics_.begin(), nics_.end(), [](auto& n) { return n->quiet(); })) step();
  anchor_wall();
  if (!cfg_.progress.empty() && cfg_.progress != "thread" && cfg_.progress != "inline")
    throw std::runtime_error("tmnic sim: TMNIC_PROGRESS=" + cfg_.progress + " is not a mode (thread, inline)");
  if (cfg_.threaded()) {
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) throw std::runtime_error("tmnic sim: eventfd for the progress thread failed");
    thread_ = std::thread([this] { thread_main(); });
  }
}

void World::set_irq_handler(int nic, IrqHandler h) {
  std::lock_guard<std::mutex> g(irq_mu_);
  irq_handled_[size_t(nic)].store(bool(h));
  irq_handlers_.at(nic) = std::move(h);
}

void World::deliver_irqs() {
  thread_local bool delivering = false;   // a handler's own BAR access must not recurse
  if (delivering || !irq_pending_.load()) return;   // the common case: no lock taken
  std::vector<std::pair<int, uint32_t>> v;
  {
    std::lock_guard<BusLock> g(lock_);
    irq_pending_.store(false);
    v.swap(irqs_);
  }
  std::lock_guard<std::mutex> g(irq_mu_);
  delivering = true;
  for (auto& [nic, cq] : v)
    if (irq_handlers_[nic]) irq_handlers_[nic](cq);
  delivering = false;
}

World::~World() {
  // The progress thread goes first: from here on this thread runs the world alone, so the last
  // counters written are the last ones (the thread's idle writing cannot follow them).
  if (thread_.joinable()) {
    stop_.store(true);
    kick();
    thread_.join();
  }
  // A process's NIC leaves with its process: first it sends what it has accepted (a UD send
  // completes once its payload is read, before its frame is on the wire; a program that exits
  // right after its last completion must not take those datagrams with it). Bounded: 500 ms.
  if (fabric_) {
    std::lock_guard<BusLock> g(lock_);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (!nics_[0]->quiet() && std::chrono::steady_clock::now() < end) step();
    if (!cfg_.fabric_stats.empty()) write_fabric_stats(true);
  }
  if (wake_fd_ >= 0) close(wake_fd_);
}

uint64_t World::nic_mac(int i) const { return fabric_ ? fabric_->mac() : mac_of(i); }
uint32_t World::nic_ipv4(int i) const { return fabric_ ? fabric_->ipv4() : ipv4_of(i); }

void World::deliver(int src, std::vector<uint8_t>&& frame) {
  frames_++;
  if (corrupt_.at(src) > 0 && frame.size() > 60 && corrupt_skip_.at(src) > 0) {
    corrupt_skip_[src]--;
  } else if (corrupt_.at(src) > 0 && frame.size() > 60) {
    corrupt_[src]--;
    frame[54] ^= 0x10;   // first byte after the BTH: payload or extension header, covered by the ICRC
  }
  if (pcap_) pcap_->write(frame, static_cast<uint64_t>(now_ * 1000.0 / cfg_.clk_mhz));
  if (fabric_) {   // every frame leaving the NIC goes to the kernel (its own address never gets here)
    if (pcap_) pcap_->flush();   // (see to_nic)
    fabric_->send(frame);
    return;
  }
  if (frame.size() < 6) return;
  uint64_t dst = 0;
  for (int k = 0; k < 6; k++) dst = (dst << 8) | frame[k];
  for (int i = 0; i < num_nics(); i++) {
    if (i != src && mac_of(i) == dst) {
      nics_[i]->rx_frame(std::move(frame), now_ + cfg_.cycles(cfg_.wire_ns));
      return;
    }
  }
  // No such station: the frame is lost, as on a real switch.
}

bool World::all_quiet(uint64_t* next) const {
  bool quiet = true;
  *next = UINT64_MAX;
  for (auto& n : nics_) {
    quiet = quiet && n->quiet();
    *next = std::min(*next, n->next_event());
  }
  return quiet;
}

void World::step() {
  bool quiet = true;
  for (auto& n : nics_) quiet = quiet && n->quiet();
  if (quiet) {
    uint64_t next = UINT64_MAX;
    for (auto& n : nics_) next = std::min(next, n->next_event());
    if (next != UINT64_MAX && next > now_ + 1) now_ = next - 1;   // nothing can happen before `next`
  }
  for (auto& n : nics_) n->tick(now_);
  now_++;
  cycles_run_++;
  if (!held_.empty()) release_held();   // (fabric mode) a BAR access they waited for is done
}

bool World::progress(uint64_t budget) {
  if (fabric_) return progress_fabric(budget);
  uint64_t writes0 = 0;
  for (auto& n : nics_) writes0 += n->dma_writes_applied();
  uint64_t end = now_ + budget;
  while (now_ < end) {
    uint64_t next;
    const bool quiet = all_quiet(&next);
    if (quiet && next == UINT64_MAX) return false;   // nothing will ever happen without the host
    if (quiet && next >= end) {                      // nothing happens within the budget (e.g. a
      now_ = end;                                    // transport timer far ahead): do not jump past it
      return true;
    }
    step();
    uint64_t writes = 0;
    for (auto& n : nics_) writes += n->dma_writes_applied();
    if (writes != writes0) return true;
  }
  return true;
}

void World::run_until(uint64_t t) {
  while (now_ < t) {
    uint64_t next;
    const bool quiet = all_quiet(&next);
    if (quiet && next >= t) {
      now_ = t;       // nothing happens before t
      return;
    }
    step();
  }
}

bool World::resolve_neighbour(uint32_t ipv4, uint64_t* mac) {
  if (fabric_) {   // every station of the fabric has the MAC derived from its address
    if ((ipv4 >> 24) != 127) return false;
    *mac = UdpFabric::mac_of(ipv4);
    return true;
  }
  for (int i = 0; i < num_nics(); i++) {
    if (mmio_read(i, hwif::reg::IPV4) != ipv4) continue;
    *mac = uint64_t(mmio_read(i, hwif::reg::MAC_HI) & 0xFFFF) << 32 | mmio_read(i, hwif::reg::MAC_LO);
    return true;
  }
  return false;
}

uint32_t World::mmio_read(int nic, uint32_t off) {
  uint64_t ticket = nics_.at(nic)->mmio_read_start(off, now_);
  uint32_t v = 0;
  for (uint64_t guard = 0; !nics_[nic]->mmio_read_result(ticket, now_, &v); guard++) {
    if (guard > 10000000) throw std::runtime_error("tmnic sim: BAR read never completed");
    step();
  }
  return v;
}

}  // namespace tmnic::sim

namespace tmnic::sim {

// ---- fabric mode -------------------------------------------------------------------------------
//
// The NIC's clock is its own, but its peers answer in wall time: an idle NIC must not skip to a
// transport timer (retransmission) faster than wall time passes, or every request would time out
// before the peer process could have answered. So idle stretches advance simulated time at the
// wall clock's rate from the last busy cycle (the anchor) on; busy cycles are evaluated as fast as
// the simulator goes (slower than real time). Waiting for a datagram or for wall time to reach the
// next event sleeps in poll() on the socket, at most kFabricWaitUs per progress() call, so that an
// idle process neither spins nor keeps the driver from looking at its queues.

void World::anchor_wall() {
  anchor_cycle_ = now_;
  anchor_wall_ns_ = mono_ns();
}

uint64_t World::wall_cycle() const {
  int64_t dt = mono_ns() - anchor_wall_ns_;
  return anchor_cycle_ + (dt > 0 ? cfg_.cycles(double(dt)) : 0);
}

void World::write_fabric_stats(bool final) {
  if (!fabric_ || cfg_.fabric_stats.empty()) return;
  std::string path = cfg_.fabric_stats;
  for (size_t p; (p = path.find("%p")) != std::string::npos;) path.replace(p, 2, std::to_string(getpid()));
  const UdpFabric::Counters c = fabric_->counters();
  std::string out = "addr " + UdpFabric::addr_str(fabric_->ipv4()) + "\nfinal " + (final ? "1" : "0") + "\n";
  auto line = [&](const std::string& k, uint64_t v) { out += k + " " + std::to_string(v) + "\n"; };
  line("fabric_tx_frames", c.tx_frames);
  line("fabric_tx_sent", c.tx_sent);
  line("fabric_tx_dropped", c.tx_dropped);
  line("fabric_tx_waits", c.tx_waits);
  line("fabric_tx_wait_us", c.tx_wait_us);
  line("fabric_tx_wait_gave_up", c.tx_wait_gave_up);
  line("fabric_rx_datagrams", c.rx_datagrams);
  line("fabric_rx_dropped", c.rx_dropped);
  line("fabric_rx_kernel_drops", c.rx_kernel_drops);
  line("fabric_rx_queue_max", c.rx_queue_max);
  line("fabric_rx_kernel_queue_max", c.rx_kernel_queue_max);
  line("fabric_rcvbuf", uint64_t(fabric_->rcvbuf()));
  for (auto& [ip, n] : c.peers) {
    line("fabric_tx_to_" + UdpFabric::addr_str(ip), n.first);
    line("fabric_rx_from_" + UdpFabric::addr_str(ip), n.second);
  }
  for (uint32_t i = 0; i < hwif::stat::COUNT; i++)
    line(std::string("nic_") + hwif::stat::name(i), mmio_read(0, hwif::reg::STATS0 + 4 * i));
  line("fabric_rx_held", rx_held_);
  line("cycles", now_);
  const std::string tmp = path + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    const bool ok = std::fwrite(out.data(), 1, out.size(), f) == out.size();
    if (std::fclose(f) == 0 && ok) std::rename(tmp.c_str(), path.c_str());
  }
}

void World::idle_fabric_stats(int64_t* sleep_us) {
  if (!fabric_ || cfg_.fabric_stats.empty()) return;
  const UdpFabric::Counters c = fabric_->counters();
  const uint64_t seen = c.tx_frames + c.tx_dropped + c.rx_datagrams + c.rx_dropped + c.rx_kernel_drops;
  if (seen == stats_seen_) return;
  const int64_t t = mono_ns();
  if (t >= stats_next_ns_) {
    write_fabric_stats(false);
    stats_seen_ = seen;
    stats_next_ns_ = t + 500'000'000;
    return;
  }
  const int64_t us = (stats_next_ns_ - t) / 1000 + 1;
  if (*sleep_us < 0 || *sleep_us > us) *sleep_us = us;
}

int World::fabric_receive() {
  NicSim& n = *nics_[0];
  return fabric_->receive([&](std::vector<uint8_t>&& f) {
    if (held_.empty() && n.mmio_done() == n.mmio_issued()) {
      to_nic(std::move(f));
      return;
    }
    held_.push_back({n.mmio_issued(), std::move(f)});
    rx_held_++;
  });
}

void World::release_held() {
  while (!held_.empty() && held_.front().after <= nics_[0]->mmio_done()) {
    to_nic(std::move(held_.front().bytes));
    held_.pop_front();
  }
}

void World::to_nic(std::vector<uint8_t>&& f) {
  // A fabric process's capture is written through: a process that hangs is killed, and a stdio
  // buffer would take its last frames along (a killed server's 4 KiB buffer once showed 27 of 40
  // datagrams the NIC had received).
  if (pcap_) {
    pcap_->write(f, static_cast<uint64_t>(now_ * 1000.0 / cfg_.clk_mhz));
    pcap_->flush();
  }
  nics_[0]->rx_frame(std::move(f), now_ + 1);
}

bool World::progress_fabric(uint64_t budget) {
  NicSim& n = *nics_[0];
  const uint64_t writes0 = n.dma_writes_applied();
  const uint64_t end = now_ + budget;
  bool any = fabric_receive() > 0, waited = false;
  unsigned since_rx = 0;
  while (now_ < end) {
    const bool quiet = n.quiet();
    const uint64_t next = n.next_event();
    if (quiet) {
      const uint64_t wall = std::max(wall_cycle(), now_);
      if (next == UINT64_MAX || next > wall + 1) {
        // Nothing is due before wall time gets there: let simulated time follow the wall clock,
        // then sleep on the socket (once per call) until a datagram comes or the event is due.
        now_ = std::min({wall, end, next == UINT64_MAX ? UINT64_MAX : next - 1});
        if (waited) return any;
        waited = true;
        int64_t us = kFabricWaitUs;
        if (next != UINT64_MAX) us = std::min<int64_t>(us, int64_t(double(next - wall) / cfg_.clk_mhz) + 1);
        if (fabric_->wait(us)) any = fabric_receive() > 0 || any;
        continue;
      }
    }
    step();   // skips to `next` when quiet
    any = true;
    if (!quiet) anchor_wall();
    if (n.dma_writes_applied() != writes0) return true;
    if (++since_rx == 256) {   // a syscall every 256 cycles: under 1 % of a busy cycle's cost
      since_rx = 0;
      fabric_receive();
    }
  }
  return any;
}

}  // namespace tmnic::sim

namespace tmnic::sim {

// ---- progress thread ---------------------------------------------------------------------------
//
// The thread holds lock() for at most kThreadChunk busy cycles at a time and steps aside while host
// threads wait for it. Idle, simulated time follows the wall clock as in progress_fabric (a
// transport timer fires when the wall clock says so, never because the host was slow) and the
// thread sleeps in poll() on its wake eventfd (kick(): a BAR write) and the fabric's socket, until
// the next event is due, or for good when none is. Sleeping is race-free: the thread announces it
// (sleeping_) and then looks for posted work (kicked_) once more; kick() marks work and then looks
// at sleeping_, so one of the two always sees the other.

void World::kick() {
  kicked_.store(true);
  if (sleeping_.load()) {
    uint64_t one = 1;
    ssize_t r = write(wake_fd_, &one, sizeof one);
    (void)r;   // EAGAIN only when the counter is already huge: the thread is woken anyway
  }
}

void World::wait_progress(int64_t timeout_us) {
  std::unique_lock<std::mutex> g(gen_mu_);
  const uint64_t g0 = gen_;
  gen_cv_.wait_for(g, std::chrono::microseconds(timeout_us), [&] { return gen_ != g0; });
}

bool World::progress_chunk(uint64_t max_cycles, int64_t* sleep_us) {
  uint64_t writes0 = 0;
  for (auto& n : nics_) writes0 += n->dma_writes_applied();
  if (fabric_) fabric_receive();
  *sleep_us = 0;
  for (uint64_t k = 0; k < max_cycles; k++) {
    uint64_t next;
    const bool quiet = all_quiet(&next);
    if (quiet) {
      const uint64_t wall = std::max(wall_cycle(), now_);
      if (next == UINT64_MAX || next > wall + 1) {
        now_ = next == UINT64_MAX ? wall : std::min(wall, next - 1);
        *sleep_us = next == UINT64_MAX ? -1 : int64_t(double(next - wall) / cfg_.clk_mhz) + 1;
        break;
      }
    }
    step();   // skips to `next` when quiet
    if (!quiet) anchor_wall();
  }
  uint64_t writes = 0;
  for (auto& n : nics_) writes += n->dma_writes_applied();
  return writes != writes0;
}

void World::thread_main() {
  pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fabric_ ? fabric_->fd() : -1, POLLIN, 0}};
  while (!stop_.load()) {
    int64_t sleep_us = 0;
    bool wrote = false;
    {
      std::lock_guard<BusLock> g(lock_);
      kicked_.store(false);
      wrote = progress_chunk(kThreadChunk, &sleep_us);
      if (sleep_us != 0) idle_fabric_stats(&sleep_us);
    }
    deliver_irqs();
    if (wrote || sleep_us != 0) {   // something for wait_progress() to see
      std::lock_guard<std::mutex> g(gen_mu_);
      gen_++;
      gen_cv_.notify_all();
    }
    for (int i = 0; i < 1000 && lock_.contended(); i++) sched_yield();
    if (sleep_us == 0) continue;
    sleeping_.store(true);
    if (!kicked_.load() && !stop_.load()) {
      timespec ts{time_t(sleep_us / 1000000), long(sleep_us % 1000000) * 1000};
      ppoll(fds, fabric_ ? 2 : 1, sleep_us < 0 ? nullptr : &ts, nullptr);
      wakeups_.fetch_add(1);
    }
    sleeping_.store(false);
    uint64_t v;
    while (read(wake_fd_, &v, sizeof v) > 0) {
    }
  }
}

}  // namespace tmnic::sim
