// tmnic_rd_resp against an independent model of the IBA READ responder's response stream
// (9.7.5.1.3, 9.4.3) and of the block's documented contract (the header comment of the RTL file):
//   - jobs are answered strictly in the order they were taken; a job of length L with path MTU P is
//     ceil(L / P) packets (one for L = 0): READ_RESP_ONLY, or FIRST, MIDDLE..., LAST; PSN = the job's
//     PSN + packet number (24-bit wrap); AETH {ACK with credits invalid, MSN} on FIRST/LAST/ONLY;
//     AckReq, SE, ImmDt, RETH, DETH zero; payload P bytes but the last; addresses from the QP's path
//     (the bench's random path table, read as a registered context port) and the local MAC/IP; UDP
//     source port 0xC000 | QP (the ACK generator's); dest QP from the path; every roce_hdr_t field
//     compared;
//   - payload: one DMA read per packet of exactly its bytes, in order (so every byte of the job's
//     range is read exactly once and nothing outside it), each read held until taken; the packet's
//     bytes read back through the block's TX buffer read port by a TX scheduler model and compared
//     with host memory;
//   - slots handed over in order 0, 1, ..., NSLOT-1, 0, ...; offers held unchanged until taken;
//   - jobs_in_o / jobs_out_o exactly (jobs taken; jobs whose last packet was taken, from the next
//     cycle), the per-QP done count (mod 8) of every done_raddr_i read (a read in cycle r counts the
//     jobs whose last packet was taken before cycle r), busy_o and idle_o every cycle, job_ready_o
//     low through the reset sweep and only when the FIFO holds NUM_QP * MAX_RD_ATOM jobs.
// The DMA answers in order with random latency and gaps, unaligned first beats with partial byte
// enables (tmnic_dma_rd's format); the TX scheduler takes packets with random back-pressure (also in
// stall/burst stretches, so that last packets of jobs of one QP are taken in consecutive cycles:
// the done table's read-modify-write back to back), reads their payload at random and frees slots
// late. Jobs: lengths 0, 1, P-1, P, P+1, 2P, random up to 64 KiB; P 256..4096; PSNs near the wrap;
// hot QPs, QP 0 and NUM_QP-1, repeats of the previous job's QP.
// Atomic jobs (job_atom_i: the original value in job_iova_i) among them: one ATOMIC_ACKNOWLEDGE at the
// job's PSN with the AETH and the value as its 8 payload bytes (byte 0 = the value's bits [7:0]), no
// DMA read; the bench takes each value from 8 bytes of its host memory so that the payload check
// is the same as for READ responses.
// Throughput: back-to-back 4 KiB packets with a DMA of one beat per cycle and a TX scheduler of one
// beat per cycle (the line): the cycles the scheduler waits for a packet are measured and printed,
// and must be none once the first packet is out; also the packet rate of 256-byte and empty
// responses (the packet builder's own per-packet cost).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <string>
#include <vector>

#include "Vtmnic_rd_resp.h"
#include "lib/axi_ref.hpp"
#include "lib/bits.hpp"
#include "lib/clock.hpp"
#include "lib/coverage.hpp"
#include "lib/fail.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"
#include "tmnic/wire.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif
#ifndef TB_NUM_QP
#define TB_NUM_QP 64
#endif

using namespace tmnic::tb;
namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8, kNslot = 8, kNumQp = TB_NUM_QP;
constexpr unsigned kDepth = kNumQp * hw::MAX_RD_ATOM;
constexpr unsigned kCw = 32 - static_cast<unsigned>(__builtin_clz(kDepth));   // $clog2(DEPTH) + 1
constexpr uint32_t kCntMask = (1u << kCw) - 1;
constexpr uint32_t kM24 = 0xFFFFFF;
constexpr uint8_t kSynAck = wire::aeth_syndrome(wire::kAethTypeAck, wire::kAethCreditInvalid);
constexpr uint64_t kSalt = 0x5EED5EEDull;
uint8_t host(uint64_t a) { return mem_byte(kSalt, a); }
static_assert(sizeof(Vtmnic_rd_resp::pkt_hdr_o) == 4 * wire::kRoceHdrWords, "pkt_hdr_o is not a roce_hdr_t");

// The fields in which two headers differ, as "name dut/model" pairs.
std::string hdr_diff(const wire::RoceHdr& a, const wire::RoceHdr& b) {
  std::string s;
  auto f = [&](const char* n, uint64_t x, uint64_t y) {
    if (x != y) s += std::string(n) + " 0x" + hex(x) + "/0x" + hex(y) + " ";
  };
  f("dst_mac", a.dst_mac, b.dst_mac); f("src_mac", a.src_mac, b.src_mac); f("src_ip", a.src_ip, b.src_ip);
  f("dst_ip", a.dst_ip, b.dst_ip); f("ip_tos", a.ip_tos, b.ip_tos); f("ip_ttl", a.ip_ttl, b.ip_ttl);
  f("udp_sport", a.udp_sport, b.udp_sport); f("opcode", a.opcode, b.opcode); f("se", a.se, b.se);
  f("ack_req", a.ack_req, b.ack_req); f("dest_qp", a.dest_qp, b.dest_qp); f("psn", a.psn, b.psn);
  f("reth_va", a.reth_va, b.reth_va); f("reth_rkey", a.reth_rkey, b.reth_rkey); f("reth_len", a.reth_len, b.reth_len);
  f("imm", a.imm, b.imm); f("aeth", a.aeth, b.aeth); f("deth_qkey", a.deth_qkey, b.deth_qkey);
  f("deth_sqp", a.deth_sqp, b.deth_sqp); f("pay_len", a.pay_len, b.pay_len);
  return s + "(dut/model)";
}

struct Path {
  uint64_t dmac;
  uint32_t ip, qpn;
  uint8_t tos, ttl;
};
struct Job {
  unsigned qp = 0, pmtu_log = 8;
  uint64_t iova = 0;
  uint32_t len = 0, psn = 0, msn = 0;
  bool atom = false;         // an atomic's answer: iova is the original value, taken from host bytes src
  uint64_t src = 0;
};
struct Pkt {                // expected packet
  wire::RoceHdr hdr;
  uint64_t addr;            // its payload's host address (pay_len bytes)
  bool last;                // the job's last packet
  unsigned qp;
};
struct Read {
  uint64_t addr;
  unsigned len;
};
struct Chunk {              // a read taken by the DMA, answered beat by beat
  uint64_t addr;
  unsigned len, sent = 0;
  uint64_t at;
};
struct Stream {             // a packet the TX scheduler took: its payload read out of the buffer
  unsigned slot, len, off = 0;
  uint64_t addr;
};

struct Knobs {
  double job, rd_ready, gap, pkt_ready, txb_rd;
  unsigned max_lat, max_free;
  double stall;             // chance per cycle of a TX stall stretch (pkt_ready_i low), then a burst
  unsigned stall_len;
  double small;             // share of jobs of at most one packet
};

std::vector<std::string> coverage_points() {
  return {"op_only", "op_first", "op_middle", "op_last", "zero_length", "len_1", "len_pmtu_minus_1", "len_pmtu",
          "len_pmtu_plus_1", "len_over_16_packets", "pmtu_256", "pmtu_4096", "psn_wrap_in_job", "same_qp_next_job",
          "same_qp_last_taken_adjacent", "same_qp_last_taken_gap_2", "fifo_full", "job_backpressure",
          "read_backpressure", "tx_backpressure", "unaligned_read", "done_read_just_changed", "done_count_wrap",
          "jobs_counter_wrap", "qp_0", "qp_last", "idle_between", "two_last_taken_adjacent", "op_atomic_ack",
          "atomic_after_read", "read_after_atomic"};
}

class RdRespBench {
 public:
  RdRespBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_rd_resp>(ctx_.get())), rng_(seed),
        cov_(cov), paths_(kNumQp), done_(kNumQp, 0), hot_{} {
    for (auto& p : paths_) {
      p.dmac = rng_() & 0xFFFFFFFFFFFFull;
      p.ip = static_cast<uint32_t>(rng_());
      p.qpn = static_cast<uint32_t>(rng_()) & kM24;
      p.tos = static_cast<uint8_t>(rng_());
      p.ttl = static_cast<uint8_t>(rng_());
    }
    for (auto& h : hot_) h = static_cast<unsigned>(u(0, kNumQp - 1));
    lmac_ = rng_() & 0xFFFFFFFFFFFFull;
    lip_ = static_cast<uint32_t>(rng_());
    top_->rst_ni = 0;
    top_->clk_i = 0;
    top_->job_valid_i = 0;
    top_->pkt_ready_i = 0;
    top_->rd_ready_i = 0;
    top_->rsp_valid_i = 0;
    top_->txb_rd_i = 0;
    top_->slot_free_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
  }
  ~RdRespBench() { top_->final(); }

  // Random jobs offered while `cycles` run.
  void run(const Knobs& k, uint64_t cycles) {
    const uint64_t end = cyc_ + cycles;
    while (cyc_ < end && !failed()) {
      // (at most 32 jobs not handed over, as a responder limiting READs per QP keeps it; fill() fills the FIFO)
      if (pending_.empty() && !job_valid_ && in_ - out_ < 32 && chance(rng_, k.job)) pending_.push_back(random_job(k));
      step(k);
    }
  }
  // Offers the given jobs (in order) and runs until every packet is out and every slot returned.
  void jobs(const std::vector<Job>& v, const Knobs& k, uint64_t max_cycles) {
    pending_.insert(pending_.end(), v.begin(), v.end());
    drain(k, max_cycles);
  }
  void drain(const Knobs& k, uint64_t max_cycles) {
    const uint64_t end = cyc_ + max_cycles;
    while (!quiet() && cyc_ < end && !failed()) step(k);
    if (!failed() && !quiet()) fail("not drained after ", max_cycles, " cycles: ", exp_pkts_.size(), " packets, ",
                                   streams_.size() + frees_.size(), " slots outstanding");
    for (int i = 0; i < 4 && !failed(); ++i) step(k);
    if (!failed() && !top_->idle_o) fail("idle_o low after a drain");
  }
  // Stalls the TX side and offers jobs until the FIFO refuses one (it holds DEPTH), then drains.
  void fill(const Knobs& k) {
    tx_stall_ = true;
    full_seen_ = false;
    uint64_t guard = cyc_ + 40 * kDepth + 10000;
    while (!full_seen_ && cyc_ < guard && !failed()) {
      if (pending_.empty()) {
        Job j = random_job(k);
        if (!j.atom) j.len = static_cast<uint32_t>(u(0, 1) ? 0 : u(1, 300));
        pending_.push_back(j);
      }
      step(k);
    }
    if (!failed() && !full_seen_) fail("job FIFO never full");
    tx_stall_ = false;
    drain(k, 400 * kDepth + 100000);
  }

  bool failed() const { return ::testing::Test::HasFailure(); }
  uint64_t cycles() const { return cyc_; }
  uint64_t packets() const { return taken_; }
  uint64_t jobs_taken() const { return in_; }
  unsigned first_ready() const { return first_ready_; }

  // Throughput mode: the TX scheduler as the line (takes the next packet in the cycle it reads the
  // current one's last beat, one beat per cycle), the DMA one beat per cycle after `lat` cycles.
  struct Rate {
    uint64_t pkts = 0, beats = 0, cycles = 0, waited = 0;
  };
  Rate line_rate(const std::vector<Job>& v, unsigned lat) {
    line_ = true;
    line_lat_ = lat;
    rate_ = {};
    first_taken_ = last_taken_ = 0;
    jobs(v, Knobs{1, 1, 0, 1, 1, lat, 0, 0, 0, 0}, 2000000);
    line_ = false;
    rate_.cycles = last_taken_ - first_taken_;
    return rate_;
  }

 private:
  template <class... A>
  void fail(const A&... a) {
    fail_at(cyc_, a...);
  }
  uint64_t u(uint64_t lo, uint64_t hi) { return urand(rng_, lo, hi); }
  bool quiet() const {
    return pending_.empty() && !job_valid_ && exp_pkts_.empty() && streams_.empty() && frees_.empty() && chunks_.empty();
  }

  unsigned random_qp() {
    switch (u(0, 9)) {
      case 0: return 0;
      case 1: return kNumQp - 1;
      case 2: case 3: return last_qp_;
      case 4: case 5: case 6: return hot_[u(0, hot_.size() - 1)];
      default: return static_cast<unsigned>(u(0, kNumQp - 1));
    }
  }
  Job random_job(const Knobs& k) {
    Job j;
    j.qp = random_qp();
    last_qp_ = j.qp;
    j.pmtu_log = static_cast<unsigned>(u(8, 12));
    const uint32_t p = 1u << j.pmtu_log;
    if (!line_ && chance(rng_, 0.12)) {
      j.atom = true;
      j.len = hw::ATOMIC_LEN;
      j.src = rng_() >> u(0, 20);
      for (unsigned b = 0; b < 8; ++b) j.iova |= uint64_t(host(j.src + b)) << (8 * b);
    } else if (chance(rng_, k.small)) {
      switch (u(0, 3)) {
        case 0: j.len = 0; break;
        case 1: j.len = 1; break;
        case 2: j.len = p; break;
        default: j.len = static_cast<uint32_t>(u(1, p)); break;
      }
    } else {
      switch (u(0, 7)) {
        case 0: j.len = p - 1; break;
        case 1: j.len = p + 1; break;
        case 2: j.len = 2 * p; break;
        case 3: j.len = static_cast<uint32_t>(u(1, 3 * p)); break;
        case 4: j.len = static_cast<uint32_t>(u(1, 65536)); break;
        case 5: j.len = 65536; break;
        default: j.len = static_cast<uint32_t>(u(1, 8192)); break;
      }
    }
    if (!j.atom) {
      switch (u(0, 4)) {
        case 0: j.iova = (u(0, 1ull << 40) << 12) + 4096 - u(1, 2 * kBytes); break;   // just below a page end
        case 1: j.iova = u(0, 1ull << 48) << 6; break;                                // beat aligned (512)
        case 2: j.iova = 0xFFFFFFFFFFFFFFFFull - j.len - u(0, 100000); break;         // the top of the space
        default: j.iova = rng_() >> u(0, 20); break;
      }
      if (j.iova + j.len < j.iova) j.iova -= j.len;   // (no wrap past 2^64)
    }
    j.psn = chance(rng_, 0.3) ? static_cast<uint32_t>(kM24 - u(0, 40)) : static_cast<uint32_t>(rng_()) & kM24;
    j.msn = static_cast<uint32_t>(rng_()) & kM24;
    return j;
  }

  // The packets and reads of a job taken by the block, as the IBA and the contract say.
  void expand(const Job& j) {
    const uint32_t p = 1u << j.pmtu_log;
    const uint32_t n = j.len == 0 ? 1 : (j.len + p - 1) / p;
    const Path& pa = paths_[j.qp];
    for (uint32_t i = 0; i < n; ++i) {
      const bool first = i == 0, last = i + 1 == n;
      Pkt k;
      wire::RoceHdr& h = k.hdr;
      h.dst_mac = pa.dmac;
      h.src_mac = lmac_;
      h.src_ip = lip_;
      h.dst_ip = pa.ip;
      h.ip_tos = pa.tos;
      h.ip_ttl = pa.ttl;
      h.udp_sport = static_cast<uint16_t>(0xC000 | j.qp);
      h.opcode = j.atom ? wire::kAtomicAck
                 : first && last ? wire::kReadRespOnly : first ? wire::kReadRespFirst : last ? wire::kReadRespLast
                                                                                           : wire::kReadRespMiddle;
      h.dest_qp = pa.qpn;
      h.psn = (j.psn + i) & kM24;
      h.aeth = (static_cast<uint32_t>(kSynAck) << 24) | j.msn;
      h.pay_len = static_cast<uint16_t>(last ? j.len - i * p : p);
      k.addr = j.atom ? j.src : j.iova + static_cast<uint64_t>(i) * p;
      k.last = last;
      k.qp = j.qp;
      exp_pkts_.push_back(k);
      if (h.pay_len && !j.atom) exp_reads_.push_back({k.addr, h.pay_len});
      if (h.psn == 0 && i > 0) cov_.hit("psn_wrap_in_job");
    }
    cov_.hit(j.len == 0 ? "zero_length" : j.len == 1 ? "len_1" : j.len == p - 1 ? "len_pmtu_minus_1"
             : j.len == p ? "len_pmtu" : j.len == p + 1 ? "len_pmtu_plus_1" : "len_other");
    if (n > 16) cov_.hit("len_over_16_packets");
    if (p == 256) cov_.hit("pmtu_256");
    if (p == 4096) cov_.hit("pmtu_4096");
    if (in_ > 0 && j.qp == prev_job_qp_) cov_.hit("same_qp_next_job");
    if (in_ > 0 && j.atom && !prev_atom_) cov_.hit("atomic_after_read");
    if (in_ > 0 && !j.atom && prev_atom_) cov_.hit("read_after_atomic");
    prev_atom_ = j.atom;
    if (j.qp == 0) cov_.hit("qp_0");
    if (j.qp == kNumQp - 1) cov_.hit("qp_last");
    prev_job_qp_ = j.qp;
  }

  void step(const Knobs& k) {
    // ---------------- drive
    if (!job_valid_ && !pending_.empty()) {
      job_ = pending_.front();
      pending_.pop_front();
      job_valid_ = true;
    }
    top_->job_valid_i = job_valid_;
    top_->job_qp_i = job_.qp;
    top_->job_iova_i = job_.iova;
    top_->job_len_i = job_.len;
    top_->job_psn_i = job_.psn;
    top_->job_msn_i = job_.msn;
    top_->job_pmtu_log_i = job_.pmtu_log;
    top_->job_atom_i = job_.atom;
    // done table: a random QP (often one with traffic), its count as of before this cycle's edge
    const unsigned dq = chance(rng_, 0.5) ? last_qp_ : chance(rng_, 0.5) ? hot_[u(0, hot_.size() - 1)]
                                                                         : static_cast<unsigned>(u(0, kNumQp - 1));
    top_->done_raddr_i = dq;
    // context: registered read of the path table at the index of the previous cycle
    const Path& pa = paths_[path_idx_];
    set_sig_bits(top_->path_i, 0, 8, pa.ttl);
    set_sig_bits(top_->path_i, 8, 8, pa.tos);
    set_sig_bits(top_->path_i, 16, 24, pa.qpn);
    set_sig_bits(top_->path_i, 40, 32, pa.ip);
    set_sig_bits(top_->path_i, 72, 48, pa.dmac);
    top_->local_mac_i = lmac_;
    top_->local_ip_i = lip_;
    // DMA
    const bool rd_ready = chance(rng_, k.rd_ready);
    top_->rd_ready_i = rd_ready;
    bool beat = false;
    top_->rsp_valid_i = 0;
    top_->rsp_last_i = 0;
    if (!chunks_.empty() && cyc_ >= chunks_.front().at && !chance_nz(rng_, k.gap)) {
      Chunk& c = chunks_.front();
      const unsigned align = static_cast<unsigned>(c.addr % kBytes);
      const unsigned nbeats = (align + c.len + kBytes - 1) / kBytes;
      const int off = static_cast<int>(c.sent * kBytes) - static_cast<int>(align);
      uint64_t be = 0;
      for (unsigned i = 0; i < kBytes; ++i) {
        const int o = off + static_cast<int>(i);
        uint8_t b = static_cast<uint8_t>(rng_());
        if (o >= 0 && static_cast<unsigned>(o) < c.len) {
          b = host(c.addr + static_cast<unsigned>(o));
          be |= 1ull << i;
        }
        set_byte(top_->rsp_data_i.data(), i, b);
      }
      if (align && c.sent == 0) cov_.hit("unaligned_read");
      top_->rsp_valid_i = 1;
      top_->rsp_off_i = static_cast<uint16_t>(off) & 0x3FFF;
      set_sig_bits(top_->rsp_be_i, 0, kBytes, be);
      ++c.sent;
      top_->rsp_last_i = c.sent == nbeats;
      beat = true;
    }
    // TX scheduler: takes a packet (it holds two at most), reads the oldest one's payload
    bool pkt_ready;
    bool rd_now = false;
    unsigned rd_len = 0;
    uint64_t rd_addr = 0;
    if (line_) {
      // the line: one beat per cycle; the next packet is taken with the current one's last read
      if (!streams_.empty()) {
        Stream& s = streams_.front();
        rd_now = true;
        top_->txb_pos_i = s.slot * 4096 + s.off;
        rd_len = std::min(kBytes, s.len - s.off);
        rd_addr = s.addr + s.off;
        s.off += kBytes;
      }
      pkt_ready = streams_.empty() || (streams_.size() == 1 && streams_.front().off >= streams_.front().len);
      if (pkt_ready && !top_->pkt_valid_o && taken_ > 0 && !exp_pkts_.empty()) ++rate_.waited;
    } else {
      if (tx_stall_left_ == 0 && chance_nz(rng_, k.stall)) {
        tx_stall_left_ = static_cast<unsigned>(u(1, k.stall_len));
        tx_burst_left_ = static_cast<unsigned>(u(1, 2 * k.stall_len));
      }
      if (tx_stall_left_) --tx_stall_left_;
      else if (tx_burst_left_) --tx_burst_left_;
      const bool stalled = tx_stall_ || tx_stall_left_ > 0;
      pkt_ready = !stalled && streams_.size() < 2 && (tx_burst_left_ > 0 || chance(rng_, k.pkt_ready));
      if (!streams_.empty() && chance(rng_, k.txb_rd)) {
        Stream& s = streams_.front();
        rd_now = true;
        top_->txb_pos_i = s.slot * 4096 + s.off;
        rd_len = std::min(kBytes, s.len - s.off);
        rd_addr = s.addr + s.off;
        s.off += kBytes;
      }
    }
    top_->txb_rd_i = rd_now;
    if (!streams_.empty() && streams_.front().off >= streams_.front().len) {
      frees_.push_back({cyc_ + 2 + u(0, k.max_free), streams_.front().slot});   // (after its last read's data)
      streams_.pop_front();
    }
    top_->pkt_ready_i = pkt_ready;
    uint32_t free_mask = 0;
    for (auto it = frees_.begin(); it != frees_.end();) {
      if (it->first <= cyc_) {
        free_mask |= 1u << it->second;
        it = frees_.erase(it);
      } else {
        ++it;
      }
    }
    top_->slot_free_i = free_mask;
    top_->eval();

    // ---------------- check
    if (top_->job_ready_o && !inited_) {
      inited_ = true;
      first_ready_ = static_cast<unsigned>(cyc_);
    }
    if (!inited_ && top_->idle_o) return fail("idle_o during the reset sweep");
    if (inited_ && !top_->job_ready_o) {
      if (in_ - out_ < kDepth) return fail("job_ready_o low with ", in_ - out_, " jobs not handed over (FIFO holds ", kDepth, ")");
    }
    if (top_->jobs_in_o != (in_ & kCntMask)) return fail("jobs_in_o ", top_->jobs_in_o, ", model ", in_ & kCntMask);
    if (top_->jobs_out_o != (out_ & kCntMask)) return fail("jobs_out_o ", top_->jobs_out_o, ", model ", out_ & kCntMask);
    if (bool(top_->busy_o) != (in_ != out_)) return fail("busy_o ", int(top_->busy_o), " with ", in_ - out_, " jobs not handed over");
    const bool idle_exp = inited_ && in_ == out_ && held_ == 0;
    if (bool(top_->idle_o) != idle_exp)
      return fail("idle_o ", int(top_->idle_o), ", model ", idle_exp, " (", in_ - out_, " jobs, ", held_, " slots held)");
    if (idle_exp && taken_ > 0) cov_.hit("idle_between");
    if (done_chk_) {
      if (top_->done_rdata_o != done_exp_)
        return fail("done count of QP ", done_q_, ": ", int(top_->done_rdata_o), ", model ", done_exp_);
      if (done_q_ == last_done_qp_ && done_at_ + 1 == cyc_ - 1) cov_.hit("done_read_just_changed");
    }
    done_chk_ = true;
    done_q_ = dq;
    done_exp_ = done_[dq] & 7;
    // payload read back two cycles ago (the TX buffer's RD_LAT 2: a registered block-RAM read)
    if (rd_pend2_) {
      for (unsigned i = 0; i < rd_pend2_len_; ++i)
        if (byte_of(top_->txb_data_o.data(), i) != host(rd_pend2_addr_ + i))
          return fail("payload byte at host 0x", std::hex, rd_pend2_addr_ + i, std::dec, " wrong in the TX buffer");
    }
    rd_pend2_ = rd_pend_;
    rd_pend2_len_ = rd_pend_len_;
    rd_pend2_addr_ = rd_pend_addr_;
    rd_pend_ = rd_now;
    rd_pend_len_ = rd_len;
    rd_pend_addr_ = rd_addr;
    // DMA read requests
    if (rd_hold_ && (!top_->rd_valid_o || top_->rd_addr_o != rd_held_.addr || top_->rd_len_o != rd_held_.len))
      return fail("payload read changed or withdrawn before it was taken");
    rd_hold_ = top_->rd_valid_o && !rd_ready;
    if (top_->rd_valid_o) {
      if (exp_reads_.empty()) return fail("payload read 0x", std::hex, top_->rd_addr_o, std::dec, " with none expected");
      const Read& r = exp_reads_.front();
      if (top_->rd_addr_o != r.addr || top_->rd_len_o != r.len)
        return fail("payload read 0x", std::hex, top_->rd_addr_o, "+", std::dec, top_->rd_len_o, ", model 0x", std::hex,
                    r.addr, "+", std::dec, r.len);
      rd_held_ = r;
      if (rd_ready) {
        chunks_.push_back({r.addr, r.len, 0, cyc_ + 1 + (line_ ? line_lat_ : u(0, k.max_lat))});
        exp_reads_.pop_front();
      } else {
        cov_.hit("read_backpressure");
      }
    }
    // packets offered to the TX scheduler
    uint32_t hw[wire::kRoceHdrWords];
    for (unsigned i = 0; i < wire::kRoceHdrWords; ++i) hw[i] = top_->pkt_hdr_o[i];
    if (pkt_hold_) {
      bool same = top_->pkt_valid_o && top_->pkt_slot_o == slot_held_;
      for (unsigned i = 0; same && i < wire::kRoceHdrWords; ++i) same = hw[i] == hdr_held_[i];
      if (!same) return fail("offered packet changed or withdrawn before it was taken");
    }
    pkt_hold_ = top_->pkt_valid_o && !pkt_ready;
    if (pkt_hold_) {
      std::copy(hw, hw + wire::kRoceHdrWords, hdr_held_.begin());
      slot_held_ = top_->pkt_slot_o;
      cov_.hit("tx_backpressure");
    }
    bool took_last = false;
    if (top_->pkt_valid_o && pkt_ready) {
      if (exp_pkts_.empty()) return fail("packet offered with none expected");
      const Pkt& p = exp_pkts_.front();
      wire::RoceHdr h = wire::unpack_hdr(hw);
      // (the AETH is not on the wire with MIDDLE, nor a RETH with any response: the frame builder
      // sends those fields only with the opcodes that carry them)
      if (!wire::bth_has_aeth(h.opcode)) h.aeth = p.hdr.aeth;
      if (!wire::bth_has_reth(h.opcode)) {
        h.reth_va = p.hdr.reth_va;
        h.reth_rkey = p.hdr.reth_rkey;
        h.reth_len = p.hdr.reth_len;
      }
      if (h != p.hdr) return fail("packet ", taken_, " header differs: ", hdr_diff(h, p.hdr));
      if (top_->pkt_slot_o != slot_next_) return fail("slot ", int(top_->pkt_slot_o), ", model ", slot_next_);
      if (p.hdr.opcode == wire::kReadRespOnly) cov_.hit("op_only");
      if (p.hdr.opcode == wire::kReadRespFirst) cov_.hit("op_first");
      if (p.hdr.opcode == wire::kReadRespMiddle) cov_.hit("op_middle");
      if (p.hdr.opcode == wire::kReadRespLast) cov_.hit("op_last");
      if (p.hdr.opcode == wire::kAtomicAck) cov_.hit("op_atomic_ack");
      streams_.push_back({slot_next_, p.hdr.pay_len, 0, p.addr});
      if (p.hdr.pay_len == 0) {                       // nothing to read: freed at once (or late)
        frees_.push_back({cyc_ + 1 + u(0, k.max_free), slot_next_});
        streams_.pop_back();
      }
      slot_next_ = (slot_next_ + 1) % kNslot;
      ++held_;
      ++taken_;
      if (line_) {
        if (taken_ == 1 || rate_.pkts == 0) first_taken_ = cyc_;
        last_taken_ = cyc_;
        ++rate_.pkts;
        rate_.beats += (p.hdr.pay_len + kBytes - 1) / kBytes;
      }
      if (p.last) {
        took_last = true;
        if (last_taken_at_ + 1 == cyc_) cov_.hit("two_last_taken_adjacent");
        if (p.qp == last_done_qp_ && last_taken_at_ + 1 == cyc_) cov_.hit("same_qp_last_taken_adjacent");
        if (p.qp == last_done_qp_ && last_taken_at_ + 2 == cyc_) cov_.hit("same_qp_last_taken_gap_2");
        if ((done_[p.qp] & 7) == 7) cov_.hit("done_count_wrap");
        ++done_[p.qp];
        last_done_qp_ = p.qp;
        last_taken_at_ = cyc_;
        done_at_ = cyc_;
      }
      exp_pkts_.pop_front();
    }
    // jobs
    if (job_valid_ && inited_ && !top_->job_ready_o) {
      cov_.hit("job_backpressure");
      if (in_ - out_ >= kDepth) {
        cov_.hit("fifo_full");
        full_seen_ = true;
      }
    }
    const bool job_take = job_valid_ && top_->job_ready_o;
    path_idx_ = top_->path_idx_o;

    // ---------------- model of this edge
    if (job_take) {
      expand(job_);
      ++in_;
      if ((in_ & kCntMask) == 0) cov_.hit("jobs_counter_wrap");
      job_valid_ = false;
    }
    if (took_last) ++out_;
    for (unsigned s = 0; s < kNslot; ++s)
      if ((free_mask >> s) & 1) --held_;
    if (beat && top_->rsp_last_i) chunks_.pop_front();
    clock_tick(*top_, *ctx_);
    ++cyc_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_rd_resp> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  std::vector<Path> paths_;
  std::vector<uint32_t> done_;
  std::array<unsigned, 3> hot_;
  uint64_t lmac_ = 0, cyc_ = 0, in_ = 0, out_ = 0, taken_ = 0;
  uint32_t lip_ = 0;
  std::deque<Job> pending_;
  Job job_;
  bool prev_atom_ = false;
  bool job_valid_ = false, inited_ = false, full_seen_ = false, tx_stall_ = false;
  unsigned first_ready_ = 0, last_qp_ = 0, prev_job_qp_ = 0, path_idx_ = 0, slot_next_ = 0, held_ = 0;
  unsigned tx_stall_left_ = 0, tx_burst_left_ = 0;
  std::deque<Pkt> exp_pkts_;
  std::deque<Read> exp_reads_;
  std::deque<Chunk> chunks_;
  std::deque<Stream> streams_;
  std::vector<std::pair<uint64_t, unsigned>> frees_;
  bool rd_hold_ = false, pkt_hold_ = false, rd_pend_ = false, rd_pend2_ = false, done_chk_ = false;
  Read rd_held_{};
  std::array<uint32_t, wire::kRoceHdrWords> hdr_held_{};
  unsigned slot_held_ = 0, rd_pend_len_ = 0, rd_pend2_len_ = 0, done_q_ = 0, done_exp_ = 0, last_done_qp_ = ~0u;
  uint64_t rd_pend_addr_ = 0, rd_pend2_addr_ = 0, last_taken_at_ = ~0ull - 4, done_at_ = ~0ull - 4;
  // throughput mode
  bool line_ = false;
  unsigned line_lat_ = 0;
  Rate rate_;
  uint64_t first_taken_ = 0, last_taken_ = 0;
};

constexpr Knobs kMixBack{0.5, 0.6, 0.2, 0.6, 0.7, 8, 20, 0.002, 60, 0.4};     // back-pressure everywhere
constexpr Knobs kMixFast{1.0, 1.0, 0.0, 1.0, 1.0, 2, 0, 0, 0, 0.5};            // as fast as it goes
constexpr Knobs kMixSlow{0.3, 0.3, 0.5, 0.2, 0.5, 40, 200, 0, 0, 0.3};         // slow memory and wire
constexpr Knobs kMixBurst{0.9, 0.9, 0.1, 0.3, 1.0, 4, 4, 0.02, 80, 0.9};       // short jobs, TX stalls and bursts

TEST(RdResp, RandomJobsAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0, packets = 0, jobs = 0;
  const unsigned scale = test_scale();
  for (uint64_t seed : seeds({1, 2, 3})) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Coverage cov(coverage_points());
    RdRespBench b(seed, cov);
    b.run(kMixBack, 80000 * scale);
    b.drain(kMixBack, 2000000);
    b.run(kMixFast, 40000 * scale);
    b.drain(kMixFast, 2000000);
    b.run(kMixBurst, 60000 * scale);
    b.drain(kMixBurst, 2000000);
    b.run(kMixSlow, 40000 * scale);
    b.drain(kMixSlow, 2000000);
    b.fill(kMixBurst);
    b.fill(kMixBack);   // (also wraps jobs_in_o/jobs_out_o at 1024 QPs: 2^CW = 8192 jobs)
    EXPECT_EQ(b.first_ready(), kNumQp) << "job_ready_o not high exactly after the NUM_QP-cycle sweep";
    cycles += b.cycles();
    packets += b.packets();
    jobs += b.jobs_taken();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  report_speed("rd_resp", "mix", cycles, sw.seconds());
  std::printf("[rd_resp] %llu jobs, %llu packets\n", (unsigned long long)jobs, (unsigned long long)packets);
  total.report("tmnic_rd_resp");
}

// Back-to-back 4 KiB responses: jobs of 64 KiB at PMTU 4096, beat-aligned, a DMA of one beat per
// cycle after 40 cycles, the line one beat per cycle.
TEST(RdResp, LineRate) {
  Coverage cov({});
  RdRespBench b(7, cov);
  std::mt19937_64 r(7);
  std::vector<Job> v;
  for (unsigned i = 0; i < 12; ++i)
    v.push_back({static_cast<unsigned>(urand(r, 0, kNumQp - 1)), 12, urand(r, 0, 1ull << 40) << 12, 65536,
                 static_cast<uint32_t>(r()) & kM24, 0, });
  for (auto& j : v) j.msn = j.psn;
  const auto rt = b.line_rate(v, 40);
  ASSERT_FALSE(::testing::Test::HasFailure());
  const double per = double(rt.cycles) / double(rt.pkts - 1);
  std::printf("[rd_resp] line rate: %llu packets of 4096 B (%u beats each) in %llu cycles after the first: %.2f cycles "
              "per packet; the TX side waited %llu cycles for a packet (%.3f per packet)\n",
              (unsigned long long)rt.pkts, 4096 / kBytes, (unsigned long long)rt.cycles, per,
              (unsigned long long)rt.waited, double(rt.waited) / double(rt.pkts));
  EXPECT_EQ(rt.pkts, 12u * 16u);
  EXPECT_EQ(rt.waited, 0u) << "the block left the line idle between 4 KiB packets";
  EXPECT_LE(per, 4096.0 / kBytes + 0.01);
}

// The packet builder's own rate: 256-byte packets and empty responses with an ideal DMA and line.
TEST(RdResp, SmallPacketRate) {
  Coverage cov({});
  for (unsigned len : {256u, 0u}) {
    RdRespBench b(11, cov);
    std::vector<Job> v;
    if (len) v.push_back({3, 8, 0x10000, 256 * 400, 5, 9});          // one job of 400 packets
    else for (unsigned i = 0; i < 400; ++i) v.push_back({i % kNumQp, 8, 0x10000, 0, i, i});  // 400 jobs
    const auto rt = b.line_rate(v, 0);
    ASSERT_FALSE(::testing::Test::HasFailure());
    std::printf("[rd_resp] %s: %.2f cycles per packet (%llu packets)\n",
                len ? "256-byte packets of one job" : "empty responses, one job each",
                double(rt.cycles) / double(rt.pkts - 1), (unsigned long long)rt.pkts);
  }
}

TEST(RdResp, IdleSpeed) {
  Coverage cov({});
  RdRespBench b(1, cov);
  Stopwatch sw;
  b.run(Knobs{0, 1, 0, 1, 1, 0, 0, 0, 0, 0}, 200000);
  ASSERT_FALSE(::testing::Test::HasFailure());
  report_speed("rd_resp", "idle", 200000, sw.seconds());
}

}  // namespace
