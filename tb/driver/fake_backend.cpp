#include "fake_backend.hpp"

#include <cstdio>
#include <cstdlib>

namespace tmnic::fake {

FakeBackend::FakeBackend(Config cfg) : cfg_(std::move(cfg)), regs_(hwif::BAR0_SIZE / 4, 0) {
  namespace r = hwif::reg;
  neighbours[cfg_.ipv4] = cfg_.mac;  // the device's own address resolves, as through loopback
  regs_[r::ID / 4] = cfg_.id;
  regs_[r::ABI_VERSION / 4] = cfg_.abi;
  regs_[r::DATA_BYTES / 4] = 64;
  regs_[r::CLK_MHZ / 4] = 250;
  regs_[r::NUM_QP / 4] = cfg_.num_qp;
  regs_[r::NUM_CQ / 4] = cfg_.num_cq;
  regs_[r::NUM_SRQ / 4] = cfg_.num_srq;
  regs_[r::NUM_MR / 4] = cfg_.num_mr;
  regs_[r::MAX_SGE / 4] = cfg_.max_sge;
  regs_[r::WQE_STRIDE / 4] = hwif::WQE_STRIDE;
  regs_[r::CQE_SIZE / 4] = hwif::CQE_SIZE;
  regs_[r::MAX_LOG_QUEUE / 4] = cfg_.max_log_queue;
  regs_[r::MAC_LO / 4] = uint32_t(cfg_.mac);
  regs_[r::MAC_HI / 4] = uint32_t(cfg_.mac >> 32) & 0xFFFF;
  regs_[r::IPV4 / 4] = cfg_.ipv4;
  regs_[r::TM_MAX_TAGS / 4] = cfg_.tm_max_tags;
  regs_[r::TM_CAPS / 4] = cfg_.tm_caps;
  regs_[r::OPS_CAPS / 4] = cfg_.ops_caps;
}

uint32_t FakeBackend::read32(uint32_t off) {
  std::lock_guard<std::mutex> g(mu_);
  if (off == hwif::reg::CMD_STATUS) {
    uint32_t st = regs_[off / 4];
    if (busy_left_ > 0) {  // model a command that takes a few polls
      busy_left_--;
      return st | 1;
    }
    return st & ~1u;
  }
  return off < hwif::BAR0_SIZE ? regs_[off / 4] : 0;
}

void FakeBackend::write32(uint32_t off, uint32_t val) {
  std::lock_guard<std::mutex> g(mu_);
  if (off >= hwif::reg::DB_SQ0) {
    doorbells.push_back({off, val});
    return;
  }
  if (off == hwif::reg::CMD) {
    execute(val);
    return;
  }
  if (off < hwif::BAR0_SIZE) regs_[off / 4] = val;
}

void FakeBackend::execute(uint32_t cmd) {
  Command c;
  c.opcode = cmd & 0xFF;
  c.index = cmd >> 8;
  for (uint32_t i = 0; i < hwif::NUM_CMD_ARGS; i++) c.args[i] = regs_[hwif::reg::CMD_ARG0 / 4 + i];
  bool error = c.opcode == fail_opcode || c.opcode > hwif::cmd::QUERY_QP;
  if (!error && c.opcode == hwif::cmd::SET_QP) qp_ctx_[c.index] = c.args;
  if (!error && c.opcode == hwif::cmd::QUERY_QP) {
    // Reads back the QP context: the last SET_QP words (state and PSNs as configured).
    auto it = qp_ctx_.find(c.index);
    if (it == qp_ctx_.end()) {
      error = true;
    } else {
      namespace q = hwif::cmd::query_qp;
      regs_[hwif::reg::CMD_ARG0 / 4 + q::STATE] = it->second[hwif::cmd::set_qp::STATE];
      regs_[hwif::reg::CMD_ARG0 / 4 + q::SQ_PSN] = it->second[hwif::cmd::set_qp::SQ_PSN];
      regs_[hwif::reg::CMD_ARG0 / 4 + q::RQ_PSN] = it->second[hwif::cmd::set_qp::RQ_PSN];
    }
  }
  commands.push_back(c);
  if (on_command) on_command(c);
  regs_[hwif::reg::CMD_STATUS / 4] = error ? 2u : 0u;
  busy_left_ = busy_polls;
}

uint64_t FakeBackend::dma_map(void* va, size_t len) {
  std::lock_guard<std::mutex> g(mu_);
  uint64_t iova = reinterpret_cast<uintptr_t>(va);
  mappings.emplace(iova, len);  // the same range may be mapped more than once
  return iova;
}

void FakeBackend::dma_unmap(uint64_t iova, size_t len) {
  std::lock_guard<std::mutex> g(mu_);
  auto range = mappings.equal_range(iova);
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == len) {
      mappings.erase(it);
      return;
    }
  }
  bad_unmaps++;
}

bool FakeBackend::resolve_neighbour(uint32_t ipv4, uint64_t* mac) {
  auto it = neighbours.find(ipv4);
  if (it == neighbours.end()) return false;
  *mac = it->second;
  return true;
}

void FakeBackend::progress() {
  progress_calls++;
  if (on_progress) on_progress();
}

std::vector<Command> FakeBackend::commands_with(uint32_t opcode) const {
  std::vector<Command> out;
  for (const auto& c : commands)
    if (c.opcode == opcode) out.push_back(c);
  return out;
}

std::vector<RegWrite> FakeBackend::doorbells_at(uint32_t off) const {
  std::vector<RegWrite> out;
  for (const auto& d : doorbells)
    if (d.off == off) out.push_back(d);
  return out;
}

}  // namespace tmnic::fake

namespace tmnic {

// The fake "world" used when libibverbs.so.1 is built without a simulator backend:
// TMNIC_FAKE_DEVICES (default 1) devices tmnic0.., MAC 02:00:00:00:00:0N, IPv4 10.0.0.N.
std::vector<std::shared_ptr<Backend>> open_backends() {
  int n = 1;
  if (const char* env = std::getenv("TMNIC_FAKE_DEVICES")) n = std::atoi(env);
  std::vector<std::shared_ptr<Backend>> out;
  for (int i = 0; i < n; i++) {
    fake::Config cfg;
    cfg.name = "tmnic" + std::to_string(i);
    cfg.mac = 0x020000000001ull + uint64_t(i);
    cfg.ipv4 = 0x0A000001u + uint32_t(i);
    out.push_back(std::make_shared<fake::FakeBackend>(cfg));
  }
  return out;
}

}  // namespace tmnic
