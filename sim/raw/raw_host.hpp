// A minimal host for top-level tests and benchmarks: sets up queues on simulated NICs by writing the HW/SW
// interface directly (no driver), so that RTL behaviour can be checked independently of the
// driver. Everything it writes follows docs/hw-sw-interface.md.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "tmnic/hwif.h"
#include "world/world.hpp"

namespace tmnic::raw {

namespace hw = tmnic::hwif;

// Page-aligned, zeroed host buffer mapped into one NIC's IOMMU.
struct DmaBuf {
  uint8_t* p = nullptr;
  size_t len = 0;
  uint64_t iova = 0;
  sim::Iommu* mmu = nullptr;
  DmaBuf(sim::Iommu& m, size_t n) : len((n + 4095) & ~size_t(4095)), mmu(&m) {
    p = static_cast<uint8_t*>(std::aligned_alloc(4096, len));
    std::memset(p, 0, len);
    iova = m.alloc_iova(len);
    m.map(iova, p, len);
  }
  ~DmaBuf() { mmu->unmap(iova); std::free(p); }
  DmaBuf(const DmaBuf&) = delete;
  DmaBuf& operator=(const DmaBuf&) = delete;
};

class RawHost {
 public:
  // Waits for the NIC's post-reset table sweep (CMD_STATUS busy), as the driver does at open.
  RawHost(sim::World& w, int nic) : w_(w), nic_(nic) {
    for (int n = 0; rd(hw::reg::CMD_STATUS) & 1; n++) {
      if (n == 1000000) throw std::runtime_error("tmnic: NIC stays busy after reset");
      w_.step();   // (each BAR read also advances the world by its round trip)
    }
  }
  sim::World& world() { return w_; }
  sim::Iommu& mmu() { return w_.nic(nic_).iommu(); }
  uint32_t rd(uint32_t off) { return w_.mmio_read(nic_, off); }
  void wr(uint32_t off, uint32_t v) { w_.mmio_write(nic_, off, v); }

  // Runs a command; returns CMD_STATUS once it is done.
  uint32_t cmd(uint32_t op, uint32_t idx, const std::vector<std::pair<uint32_t, uint32_t>>& args) {
    for (auto& a : args) wr(hw::reg::CMD_ARG0 + 4 * a.first, a.second);
    wr(hw::reg::CMD, (idx << 8) | op);
    // (as the driver does: a command may take longer than one BAR read, e.g. while the engines
    // take a QP's new state)
    uint32_t st = rd(hw::reg::CMD_STATUS);
    for (int i = 0; i < 1000 && (st & hw::regf::cmd_status::BUSY.mask()); ++i) st = rd(hw::reg::CMD_STATUS);
    return st;
  }
  uint32_t set_mr(uint32_t idx, uint32_t key, uint32_t pd, uint64_t va, uint64_t len, uint64_t iova, uint32_t access) {
    namespace a = hw::cmd::set_mr;
    return cmd(hw::cmd::SET_MR, idx, {{a::VA_LO, uint32_t(va)}, {a::VA_HI, uint32_t(va >> 32)},
               {a::LEN_LO, uint32_t(len)}, {a::LEN_HI, uint32_t(len >> 32)}, {a::IOVA_LO, uint32_t(iova)},
               {a::IOVA_HI, uint32_t(iova >> 32)}, {a::KEY, key}, {a::PD, pd}, {a::ACCESS, access}, {a::VALID, 1}});
  }
  uint32_t set_cq(uint32_t idx, uint64_t base, uint32_t log) {
    namespace a = hw::cmd::set_cq;
    return cmd(hw::cmd::SET_CQ, idx, {{a::BASE_LO, uint32_t(base)}, {a::BASE_HI, uint32_t(base >> 32)},
               {a::LOG_SIZE, log}, {a::VALID, 1}});
  }
  uint32_t set_srq(uint32_t idx, uint64_t base, uint32_t log, uint32_t pd) {
    namespace a = hw::cmd::set_srq;
    return cmd(hw::cmd::SET_SRQ, idx, {{a::BASE_LO, uint32_t(base)}, {a::BASE_HI, uint32_t(base >> 32)},
               {a::LOG_SIZE, log}, {a::PD, pd}, {a::VALID, 1}});
  }
  // A TM-SRQ: receive ring, list-op ring, CQ for all its completions, engine entries [tag_base, +tag_num).
  uint32_t set_srq_tm(uint32_t idx, uint64_t base, uint32_t log, uint32_t pd, uint64_t ops_base, uint32_t ops_log,
                      uint32_t cq, uint32_t tag_base, uint32_t tag_num, uint32_t valid = 1) {
    namespace a = hw::cmd::set_srq;
    return cmd(hw::cmd::SET_SRQ, idx, {{a::BASE_LO, uint32_t(base)}, {a::BASE_HI, uint32_t(base >> 32)},
               {a::LOG_SIZE, log}, {a::PD, pd}, {a::VALID, valid}, {a::TM, 1},
               {a::OPS_BASE_LO, uint32_t(ops_base)}, {a::OPS_BASE_HI, uint32_t(ops_base >> 32)},
               {a::OPS_LOG_SIZE, ops_log}, {a::CQ, cq}, {a::TAG_BASE, tag_base}, {a::TAG_NUM, tag_num}});
  }
  struct QpCfg {
    uint32_t state = 3, pd = 1, send_cq = 0, recv_cq = 0, srq = hw::NO_SRQ;
    uint64_t sq_base = 0; uint32_t sq_log = 6; uint64_t rq_base = 0; uint32_t rq_log = 6;
    uint32_t mtu = 3, dest_qpn = 0, dest_ip = 0, sq_psn = 0, rq_psn = 0;
    uint64_t dmac = 0; uint32_t min_rnr = 1, rnr_retry = 7, init = 3;
    uint32_t access = hw::access::REMOTE_WRITE | hw::access::REMOTE_READ;   // qp_access_flags
    uint32_t type = hw::cmd::QP_TYPE_RC, qkey = 0;
    uint32_t tclass = 0, hop_limit = 64;   // IPv4 TOS and TTL
    uint32_t max_rd = hw::MAX_RD_ATOM;     // RDMA READs in flight
    uint32_t timeout = 14;                 // local ACK timeout 4.096 us << timeout
  };
  uint32_t set_qp(uint32_t qpn, const QpCfg& c) {
    namespace a = hw::cmd::set_qp;
    return cmd(hw::cmd::SET_QP, qpn, {{a::STATE, c.state}, {a::PD, c.pd}, {a::SEND_CQ, c.send_cq},
               {a::RECV_CQ, c.recv_cq}, {a::SRQ, c.srq}, {a::SQ_BASE_LO, uint32_t(c.sq_base)},
               {a::SQ_BASE_HI, uint32_t(c.sq_base >> 32)}, {a::SQ_LOG_SIZE, c.sq_log},
               {a::RQ_BASE_LO, uint32_t(c.rq_base)}, {a::RQ_BASE_HI, uint32_t(c.rq_base >> 32)},
               {a::RQ_LOG_SIZE, c.rq_log}, {a::PATH_MTU, c.mtu}, {a::DEST_QPN, c.dest_qpn},
               {a::DEST_IP, c.dest_ip}, {a::SQ_PSN, c.sq_psn}, {a::RQ_PSN, c.rq_psn},
               {a::DMAC_LO, uint32_t(c.dmac)}, {a::DMAC_HI, uint32_t(c.dmac >> 32)},
               {a::MIN_RNR_TIMER, c.min_rnr}, {a::RNR_RETRY, c.rnr_retry}, {a::RETRY_CNT, 7},
               {a::TIMEOUT, c.timeout}, {a::INIT, c.init}, {a::ACCESS, c.access}, {a::TYPE, c.type}, {a::QKEY, c.qkey},
               {a::TCLASS, c.tclass}, {a::HOP_LIMIT, c.hop_limit}, {a::MAX_RD_ATOMIC, c.max_rd}});
  }

  static void put_wqe(uint8_t* slot, uint64_t wr_id, uint8_t op, uint8_t flags,
                      const std::vector<std::tuple<uint64_t, uint32_t, uint32_t>>& sges, uint32_t imm = 0) {
    std::memset(slot, 0, hw::WQE_STRIDE);
    std::memcpy(slot + hw::wqe::WR_ID_OFF, &wr_id, 8);
    slot[hw::wqe::OPCODE_OFF] = op;
    slot[hw::wqe::FLAGS_OFF] = flags;
    slot[hw::wqe::NUM_SGE_OFF] = static_cast<uint8_t>(sges.size());
    std::memcpy(slot + hw::wqe::IMM_OFF, &imm, 4);
    for (size_t i = 0; i < sges.size(); i++) {
      uint8_t* s = slot + hw::wqe::SGE_OFF + 16 * i;
      std::memcpy(s + hw::sge::ADDR_OFF, &std::get<0>(sges[i]), 8);
      std::memcpy(s + hw::sge::LENGTH_OFF, &std::get<1>(sges[i]), 4);
      std::memcpy(s + hw::sge::LKEY_OFF, &std::get<2>(sges[i]), 4);
    }
  }

 private:
  sim::World& w_;
  int nic_;
};

// Reads CQE `ci` of a ring of 2^log entries if the NIC has written it.
struct Cqe {
  uint64_t wr_id; uint32_t byte_len, imm, qp_num, src_qp, wc_flags; uint16_t wqe_idx; uint8_t opcode, status;
  uint64_t tm_tag; uint32_t tm_app_ctx; uint16_t tm_handle, tm_hw_cnt;
};
inline bool cqe_ready(const uint8_t* ring, uint32_t log, uint32_t ci, Cqe* out) {
  const uint8_t* e = ring + size_t(ci & ((1u << log) - 1)) * hw::CQE_SIZE;
  uint8_t owner = e[hw::cqe::OWNER_OFF] & 1;
  if (owner != (((ci >> log) & 1) ^ 1)) return false;
  std::memcpy(&out->wr_id, e + hw::cqe::WR_ID_OFF, 8);
  std::memcpy(&out->byte_len, e + hw::cqe::BYTE_LEN_OFF, 4);
  std::memcpy(&out->imm, e + hw::cqe::IMM_OFF, 4);
  std::memcpy(&out->qp_num, e + hw::cqe::QP_NUM_OFF, 4);
  std::memcpy(&out->src_qp, e + hw::cqe::SRC_QP_OFF, 4);
  std::memcpy(&out->wc_flags, e + hw::cqe::WC_FLAGS_OFF, 4);
  std::memcpy(&out->wqe_idx, e + hw::cqe::WQE_IDX_OFF, 2);
  out->opcode = e[hw::cqe::OPCODE_OFF];
  out->status = e[hw::cqe::STATUS_OFF];
  std::memcpy(&out->tm_tag, e + hw::cqe::TM_TAG_OFF, 8);
  std::memcpy(&out->tm_app_ctx, e + hw::cqe::TM_APP_CTX_OFF, 4);
  std::memcpy(&out->tm_handle, e + hw::cqe::TM_HANDLE_OFF, 2);
  std::memcpy(&out->tm_hw_cnt, e + hw::cqe::TM_HW_CNT_OFF, 2);
  return true;
}

// One NIC's resources for simple RC traffic: CQ 0, SRQ 0, one send ring shared by its QPs, and a
// 4 MiB data region registered as MR 1 (PD 1).
struct Node {
  RawHost h;
  DmaBuf cq, srq, sq, data;
  uint32_t cq_ci = 0, srq_pi = 0, sq_pi = 0;
  bool ok = false;   // the setup commands succeeded
  static constexpr uint32_t kLog = 8;
  static constexpr uint32_t kKey = (1u << 8) | 0x5A;
  Node(sim::World& w, int nic)
      : h(w, nic), cq(h.mmu(), (1u << kLog) * hwif::CQE_SIZE), srq(h.mmu(), (1u << kLog) * hwif::WQE_STRIDE),
        sq(h.mmu(), (1u << kLog) * hwif::WQE_STRIDE),
        data(h.mmu(), 4 << 20) {
    ok = h.set_cq(0, cq.iova, kLog) == 0 && h.set_srq(0, srq.iova, kLog, 1) == 0 &&
         h.set_mr(1, kKey, 1, reinterpret_cast<uint64_t>(data.p), data.len, data.iova, 1) == 0;
  }
  uint64_t va(size_t off) const { return reinterpret_cast<uint64_t>(data.p) + off; }
  void post_srq(uint64_t wr_id, std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> sges) {
    RawHost::put_wqe(srq.p + (srq_pi % (1u << kLog)) * hwif::WQE_STRIDE, wr_id, 0, 0, sges);
    srq_pi++;
    h.wr(hwif::reg::DB_SRQ0, srq_pi & 0xFFFF);
  }
  void post_send(uint32_t qpn, uint64_t wr_id, uint8_t op, uint8_t flags,
                 std::vector<std::tuple<uint64_t, uint32_t, uint32_t>> sges, uint32_t imm = 0) {
    RawHost::put_wqe(sq.p + (sq_pi % (1u << kLog)) * hwif::WQE_STRIDE, wr_id, op, flags, sges, imm);
    sq_pi++;
    h.wr(hwif::reg::DB_SQ0 + 4 * qpn, sq_pi & 0xFFFF);
  }
  bool poll(Cqe* c) {
    if (!cqe_ready(cq.p, kLog, cq_ci, c)) return false;
    cq_ci++;
    h.wr(hwif::reg::DB_CQ0, cq_ci & 0xFFFF);
    return true;
  }
  RawHost::QpCfg qp(uint32_t dest_qpn, int peer) {
    RawHost::QpCfg c;
    c.sq_base = sq.iova; c.sq_log = kLog; c.srq = 0; c.dest_qpn = dest_qpn;
    c.dest_ip = sim::World::ipv4_of(peer); c.dmac = sim::World::mac_of(peer);
    return c;
  }
};

// A TM-SRQ on a Node: SRQ ring + list-op ring, completions on the node's CQ 0, engine entries
// [tag_base, tag_base + tag_num). Writes list-op WQEs and TM messages exactly as
// docs/hw-sw-interface.md lays them out.
struct TmSrq {
  Node& n;
  uint32_t idx, ops_log;
  DmaBuf ring, ops;
  uint32_t ring_pi = 0, ops_pi = 0;
  bool ok = false;
  TmSrq(Node& node, uint32_t srq_idx, uint32_t tag_base, uint32_t tag_num, uint32_t ops_log2 = 10)
      : n(node), idx(srq_idx), ops_log(ops_log2), ring(n.h.mmu(), (1u << Node::kLog) * hwif::WQE_STRIDE),
        ops(n.h.mmu(), (size_t(1) << ops_log2) * hwif::TM_OP_STRIDE) {
    ok = n.h.set_srq_tm(idx, ring.iova, Node::kLog, 1, ops.iova, ops_log, 0, tag_base, tag_num) == 0;
  }
  // Writes one op WQE; rings the doorbell when `ring_db` (one doorbell may cover a batch).
  void op(uint64_t wr_id, uint8_t opcode, uint8_t flags, uint32_t handle, uint64_t tag = 0, uint64_t mask = 0,
          uint64_t addr = 0, uint32_t len = 0, uint32_t lkey = Node::kKey, uint16_t sw_cnt = 0, bool ring_db = true) {
    uint8_t* e = ops.p + (ops_pi % (1u << ops_log)) * hwif::TM_OP_STRIDE;
    std::memset(e, 0, hwif::TM_OP_STRIDE);
    std::memcpy(e + hw::tm_op::WR_ID_OFF, &wr_id, 8);
    e[hw::tm_op::OPCODE_OFF] = opcode;
    e[hw::tm_op::FLAGS_OFF] = flags;
    std::memcpy(e + hw::tm_op::SW_CNT_OFF, &sw_cnt, 2);
    std::memcpy(e + hw::tm_op::HANDLE_OFF, &handle, 4);
    std::memcpy(e + hw::tm_op::TAG_OFF, &tag, 8);
    std::memcpy(e + hw::tm_op::MASK_OFF, &mask, 8);
    std::memcpy(e + hw::tm_op::SGE_OFF + hw::sge::ADDR_OFF, &addr, 8);
    std::memcpy(e + hw::tm_op::SGE_OFF + hw::sge::LENGTH_OFF, &len, 4);
    std::memcpy(e + hw::tm_op::SGE_OFF + hw::sge::LKEY_OFF, &lkey, 4);
    ops_pi++;
    if (ring_db) doorbell();
  }
  void doorbell() { n.h.wr(hw::reg::DB_TM0 + 4 * idx, ops_pi & 0xFFFF); }
  void post(uint64_t wr_id, uint64_t va, uint32_t len) {
    RawHost::put_wqe(ring.p + (ring_pi % (1u << Node::kLog)) * hwif::WQE_STRIDE, wr_id, 0, 0, {{va, len, Node::kKey}});
    ring_pi++;
    n.h.wr(hw::reg::DB_SRQ0 + 4 * idx, ring_pi & 0xFFFF);
  }
  uint32_t stat(uint32_t k) { return n.h.rd(hw::reg::TM_STATS0 + hw::TM_STATS_STRIDE * idx + 4 * k); }
  // TMH (opcode, app_ctx, tag; big-endian on the wire) at p.
  static void put_tmh(uint8_t* p, uint8_t tmh_op, uint64_t tag, uint32_t app_ctx) {
    p[0] = tmh_op;
    p[1] = p[2] = p[3] = 0;
    for (int i = 0; i < 4; i++) p[4 + i] = uint8_t(app_ctx >> (24 - 8 * i));
    for (int i = 0; i < 8; i++) p[8 + i] = uint8_t(tag >> (56 - 8 * i));
  }
  // RVH (va BE64, rkey BE32, len BE32) at p: a rendezvous request's 16 bytes after its TMH.
  static void put_rvh(uint8_t* p, uint64_t va, uint32_t rkey, uint32_t len) {
    for (int i = 0; i < 8; i++) p[i] = uint8_t(va >> (56 - 8 * i));
    for (int i = 0; i < 4; i++) p[8 + i] = uint8_t(rkey >> (24 - 8 * i));
    for (int i = 0; i < 4; i++) p[12 + i] = uint8_t(len >> (24 - 8 * i));
  }
};

// Waits for n CQEs across the given nodes (collected in order of arrival).
inline std::vector<std::pair<int, Cqe>> wait_cqes(sim::World& w, std::vector<Node*> nodes, size_t n, uint64_t max_cycles = 20000000) {
  std::vector<std::pair<int, Cqe>> got;
  uint64_t end = w.now() + max_cycles;
  while (got.size() < n && w.now() < end) {
    Cqe c;
    bool any = false;
    for (size_t i = 0; i < nodes.size(); i++)
      while (nodes[i]->poll(&c)) { got.push_back({int(i), c}); any = true; }
    if (!any && !w.progress(100000)) break;
  }
  return got;
}

}  // namespace tmnic::raw
