// The simulated world: N NICs on one clock, joined by a wire (an Ethernet switch with a fixed
// latency that delivers each frame to the NIC owning its destination MAC), with an optional pcap
// of the wire. Time is counted in NIC clock cycles; cycles in which nothing can happen are skipped.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "host/sim_config.hpp"
#include "nic/nic_sim.hpp"

namespace tmnic::roce { class PcapWriter; }

namespace tmnic::sim {

class UdpFabric;

// The world's lock. A plain mutex lets a thread that releases and retakes it in a loop (the progress
// thread) starve the others; this one counts the threads waiting for it, so that the loop can step
// aside (contended()) until they have had their turn.
class BusLock {
 public:
  void lock() {
    waiting_.fetch_add(1);
    mu_.lock();
    waiting_.fetch_sub(1);
  }
  void unlock() { mu_.unlock(); }
  bool contended() const { return waiting_.load() != 0; }

 private:
  std::mutex mu_;
  std::atomic<int> waiting_{0};
};

class World {
 public:
  explicit World(const SimConfig& cfg);
  ~World();

  // ---- threads (docs/simulation.md "Progress") ------------------------------------------------
  // The world itself is not thread-safe: outside the progress thread, every caller holds lock()
  // (the driver's backend and the control API do).
  BusLock& lock() { return lock_; }
  // True when a progress thread advances the world (SimConfig::progress "thread"): the host CPU then
  // never needs to call progress(); it posts work (kick()) and waits (wait_progress()).
  bool threaded() const { return thread_.joinable(); }
  // The host posted work (a BAR write): wakes a sleeping progress thread. Call without lock().
  void kick();
  // Waits until the progress thread has made progress (a DMA write landed, or it found nothing left
  // to do), at most `timeout_us`. Call without lock().
  void wait_progress(int64_t timeout_us);
  // Progress-thread bookkeeping, for tests and reports: wake-ups from sleep.
  uint64_t thread_wakeups() const { return wakeups_.load(); }

  // Interrupts. A NIC's interrupts are queued while the world runs (under lock()) and handed to
  // its handler by deliver_irqs(), which a caller runs after releasing lock(): a handler may then
  // use the NIC's BAR (ring a doorbell) but not read it (a BAR read runs the world and would
  // deliver recursively; such interrupts wait for the next delivery). set_irq_handler does not
  // need lock(); after it returns, the old handler is not running and never runs again.
  using IrqHandler = std::function<void(uint32_t cqn)>;
  void set_irq_handler(int nic, IrqHandler h);
  void deliver_irqs();

  const SimConfig& config() const { return cfg_; }
  int num_nics() const { return static_cast<int>(nics_.size()); }
  NicSim& nic(int i) { return *nics_.at(i); }
  uint64_t now() const { return now_; }
  // MAC and IPv4 address the board configuration gives NIC i of the in-process world (written into
  // its BAR at start). In fabric mode the one NIC has the fabric's address instead (nic_ipv4()).
  static uint64_t mac_of(int i) { return 0x020000000001ull + i; }
  static uint32_t ipv4_of(int i) { return 0x0A000001u + i; }  // 10.0.0.(i+1)
  uint64_t nic_mac(int i) const;
  uint32_t nic_ipv4(int i) const;
  // The UDP fabric (TMNIC_FABRIC=udp), or null for the in-process world.
  UdpFabric* fabric() { return fabric_.get(); }
  // Datagrams that waited for earlier host writes before entering the NIC (under lock()).
  uint64_t fabric_rx_held() const { return rx_held_; }

  // Advance one cycle, or jump over cycles in which nothing can happen.
  void step();
  // Advance until a DMA write lands in host memory, the world has nothing left to do, or
  // `budget` cycles have passed. Returns true if anything happened.
  // In fabric mode it also receives datagrams, and waits on the socket (up to kFabricWaitUs) instead
  // of returning at once when nothing is due (see progress_fabric).
  bool progress(uint64_t budget = 200000);
  static constexpr int64_t kFabricWaitUs = 1000;
  // Busy cycles the progress thread evaluates per hold of lock(): a BAR access of the host waits at
  // most this long (about 32 x 3.4 us at the simulator's speed) for its turn.
  static constexpr uint64_t kThreadChunk = 32;
  // Advance to cycle t, skipping every stretch in which nothing can happen (the host is idle
  // until then, e.g. between messages of a lightly loaded run).
  void run_until(uint64_t t);
  // The MAC of the NIC whose IPv4 register holds `ipv4` (read through their BARs, as an ARP exchange
  // would ask them); false when no NIC of this world has that address.
  bool resolve_neighbour(uint32_t ipv4, uint64_t* mac);
  // Blocking BAR read (the CPU stalls for the round trip) and posted BAR write.
  uint32_t mmio_read(int nic, uint32_t off);
  void mmio_write(int nic, uint32_t off, uint32_t val) { nics_.at(nic)->mmio_write(off, val, now_); }

  // Fault injection: flip a bit inside the ICRC-covered bytes of NIC nic's next `count` wire frames,
  // after letting `skip` frames through intact (e.g. the last packet of a multi-packet message).
  void corrupt_tx(int nic, int count, int skip = 0) {
    corrupt_.at(nic) += count;
    corrupt_skip_.at(nic) = skip;
  }

  // TMNIC_FABRIC_STATS (docs/simulation.md "Counting datagrams"): writes the fabric's counters and
  // the NIC's statistics registers to the configured file (BAR reads: the world runs meanwhile).
  // Under lock(); `final`: the world is going.
  void write_fabric_stats(bool final);

  uint64_t cycles_run() const { return cycles_run_; }   // cycles actually evaluated (not skipped)
  uint64_t frames_on_wire() const { return frames_; }

 private:
  void deliver(int src, std::vector<uint8_t>&& frame);
  // Every NIC quiet? *next: the earliest cycle any of them needs the clock (UINT64_MAX: never).
  bool all_quiet(uint64_t* next) const;
  bool progress_fabric(uint64_t budget);
  // One hold of the progress thread: at most `max_cycles` busy cycles. When nothing is due before
  // wall time gets there, simulated time follows the wall clock and *sleep_us says how long the
  // thread may sleep (-1: until woken); 0 while busy. Returns true if a DMA write landed.
  bool progress_chunk(uint64_t max_cycles, int64_t* sleep_us);
  void thread_main();
  int fabric_receive();   // datagrams waiting on the socket -> NIC 0's MAC RX; returns how many
  // Fabric mode: a datagram waits (held_) until every BAR access the host issued before it was
  // read has reached the NIC (docs/simulation.md "Host writes before datagrams"): those are the
  // NIC's BAR accesses done when it may go (`after`). release_held() hands over those that may.
  struct HeldFrame {
    uint64_t after;
    std::vector<uint8_t> bytes;
  };
  std::deque<HeldFrame> held_;
  uint64_t rx_held_ = 0;   // datagrams that had to wait
  void release_held();
  void to_nic(std::vector<uint8_t>&& f);
  // Fabric mode: the cycle that wall time allows an idle NIC to reach (see progress_fabric).
  uint64_t wall_cycle() const;
  void anchor_wall();
  // The progress thread is about to sleep: writes the stats file if the fabric's counters changed
  // since it was last written, or shortens *sleep_us to when that may be done (every 500 ms at
  // most: each writing reads the NIC's 23 statistics registers, some 5000 busy cycles).
  void idle_fabric_stats(int64_t* sleep_us);
  uint64_t stats_seen_ = UINT64_MAX;   // the fabric's counters (their sum) when last written
  int64_t stats_next_ns_ = 0;

  std::unique_ptr<UdpFabric> fabric_;
  uint64_t anchor_cycle_ = 0;
  int64_t anchor_wall_ns_ = 0;

  SimConfig cfg_;
  BusLock lock_;
  std::thread thread_;
  std::atomic<bool> stop_{false}, sleeping_{false}, kicked_{false};
  std::atomic<uint64_t> wakeups_{0};
  int wake_fd_ = -1;                 // eventfd: kick() -> the sleeping progress thread
  std::mutex gen_mu_;                // progress generation, for wait_progress()
  std::condition_variable gen_cv_;
  uint64_t gen_ = 0;
  std::vector<std::pair<int, uint32_t>> irqs_;   // raised, not yet delivered: (NIC, CQ); under lock_
  std::atomic<bool> irq_pending_{false};          // irqs_ is not empty (read without lock_)
  std::mutex irq_mu_;                              // the handlers and their calls
  std::vector<IrqHandler> irq_handlers_;
  std::unique_ptr<std::atomic<bool>[]> irq_handled_;   // per NIC: a handler is set
  std::vector<std::unique_ptr<NicSim>> nics_;
  std::unique_ptr<roce::PcapWriter> pcap_;
  uint64_t now_ = 0;
  uint64_t cycles_run_ = 0;
  uint64_t frames_ = 0;
  std::vector<int> corrupt_, corrupt_skip_;
};

}  // namespace tmnic::sim
