// The RDMA tests' node (tb/top/test_top_rdma.cpp, test_top_read.cpp): a raw-harness Node plus a
// target region registered for remote access, WQE posting with a remote address, and a DMA watch.
#pragma once

#include <cstring>
#include <memory>
#include <random>

#include "raw/raw_host.hpp"

namespace tmnic::raw::rdma {

namespace acc = hwif::access;

inline sim::SimConfig cfg(int nics) {
  sim::SimConfig c = sim::SimConfig::from_env();
  c.num_nics = nics;
  return c;
}

using Sges = std::vector<std::tuple<uint64_t, uint32_t, uint32_t>>;

// A Node plus a target region registered for remote access (MR 2, its own key) and QP pairs.
struct RdmaNode : Node {
  DmaBuf target;
  static constexpr uint32_t kTKey = (2u << 8) | 0x33;
  static constexpr uint32_t kTPd = 1;
  RdmaNode(sim::World& w, int nic, uint32_t access = acc::LOCAL_WRITE | acc::REMOTE_WRITE, uint32_t pd = kTPd)
      : Node(w, nic), target(h.mmu(), 1 << 20) {
    ok = ok && h.set_mr(2, kTKey, pd, tva(0), target.len, target.iova, access) == 0;
  }
  uint64_t tva(size_t off) const { return reinterpret_cast<uint64_t>(target.p) + off; }
  // A send WQE with a remote address (RDMA WRITE, WRITE_WITH_IMM, READ)
  void post_write(uint32_t qpn, uint64_t wr_id, uint8_t op, uint8_t flags, const Sges& sges, uint64_t raddr,
                  uint32_t rkey, uint32_t imm = 0) {
    uint8_t* slot = sq.p + (sq_pi % (1u << kLog)) * hwif::WQE_STRIDE;
    RawHost::put_wqe(slot, wr_id, op, flags, sges, imm);
    std::memcpy(slot + hwif::wqe::RKEY_OFF, &rkey, 4);
    std::memcpy(slot + hwif::wqe::RADDR_OFF, &raddr, 8);
    sq_pi++;
    h.wr(hwif::reg::DB_SQ0 + 4 * qpn, sq_pi & 0xFFFF);
  }
  uint32_t stat(uint32_t k) { return h.rd(hwif::reg::STATS0 + 4 * k); }
  uint32_t qp_state(uint32_t qpn) {
    h.cmd(hwif::cmd::QUERY_QP, qpn, {});
    return h.rd(hwif::reg::CMD_ARG0 + 4 * hwif::cmd::query_qp::STATE);
  }
};

// Counts DMA accesses (either direction) that touch [lo, hi) of a NIC's IOVA space.
struct Watch {
  uint64_t lo, hi, hits = 0;
  Watch(RdmaNode& n) : lo(n.target.iova), hi(n.target.iova + n.target.len) {
    n.h.mmu().set_observer([this](bool, uint64_t iova, const uint8_t*, size_t len) {
      if (iova < hi && iova + len > lo) hits++;
    });
  }
};

// Bytes of `dst` equal to `src` from the start, in whole 1 KiB packets (what a transfer stopped
// mid-way placed).
inline size_t landed_prefix(const uint8_t* dst, const uint8_t* src, size_t len) {
  size_t n = 0;
  while (n < len && std::memcmp(dst + n, src + n, 1024) == 0) n += 1024;
  return n;
}

inline void fill(uint8_t* p, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  for (size_t i = 0; i < n; i++) p[i] = uint8_t(rng());
}


}  // namespace tmnic::raw::rdma
