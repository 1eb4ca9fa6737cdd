#include "world/world.hpp"

#include <algorithm>
#include <stdexcept>

#include "tmnic/hwif.h"
#include "roce/pcap_writer.hpp"

namespace tmnic::sim {

World::World(const SimConfig& cfg) : cfg_(cfg), corrupt_(cfg.num_nics, 0), corrupt_skip_(cfg.num_nics, 0) {
  for (int i = 0; i < cfg.num_nics; i++) {
    nics_.push_back(std::make_unique<NicSim>(i, cfg));
    nics_.back()->on_tx = [this, i](std::vector<uint8_t>&& f) { deliver(i, std::move(f)); };
  }
  if (!cfg.pcap_path.empty()) {
    pcap_ = std::make_unique<roce::PcapWriter>();
    if (!pcap_->open(cfg.pcap_path)) throw std::runtime_error("tmnic sim: cannot open pcap " + cfg.pcap_path);
  }
  // Board configuration: each port's MAC and IPv4 address.
  for (int i = 0; i < num_nics(); i++) {
    uint64_t mac = mac_of(i);
    mmio_write(i, hwif::reg::MAC_LO, static_cast<uint32_t>(mac));
    mmio_write(i, hwif::reg::MAC_HI, static_cast<uint32_t>(mac >> 32));
    mmio_write(i, hwif::reg::IPV4, ipv4_of(i));
    mmio_write(i, hwif::reg::CTRL, 1);
  }
  while (!std::all_of(nics_.begin(), nics_.end(), [](auto& n) { return n->quiet(); })) step();
}

World::~World() = default;

void World::deliver(int src, std::vector<uint8_t>&& frame) {
  frames_++;
  if (corrupt_.at(src) > 0 && frame.size() > 60 && corrupt_skip_.at(src) > 0) {
    corrupt_skip_[src]--;
  } else if (corrupt_.at(src) > 0 && frame.size() > 60) {
    corrupt_[src]--;
    frame[54] ^= 0x10;   // first byte after the BTH: payload or extension header, covered by the ICRC
  }
  if (pcap_) pcap_->write(frame, static_cast<uint64_t>(now_ * 1000.0 / cfg_.clk_mhz));
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
}

bool World::progress(uint64_t budget) {
  uint64_t writes0 = 0;
  for (auto& n : nics_) writes0 += n->dma_writes_applied();
  uint64_t end = now_ + budget;
  while (now_ < end) {
    bool quiet = true;
    uint64_t next = UINT64_MAX;
    for (auto& n : nics_) {
      quiet = quiet && n->quiet();
      next = std::min(next, n->next_event());
    }
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
    bool quiet = true;
    uint64_t next = UINT64_MAX;
    for (auto& n : nics_) {
      quiet = quiet && n->quiet();
      next = std::min(next, n->next_event());
    }
    if (quiet && next >= t) {
      now_ = t;       // nothing happens before t
      return;
    }
    step();
  }
}

bool World::resolve_neighbour(uint32_t ipv4, uint64_t* mac) {
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
