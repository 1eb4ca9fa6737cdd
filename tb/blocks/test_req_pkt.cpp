// tmnic_req_pkt against a model of the requester's packetisation (IBA 9.4/9.7: a SEND or RDMA WRITE
// message cut into PMTU packets, FIRST/MIDDLE/LAST or ONLY, WITH_IMM on the last, AckReq on the last,
// SE on a SEND's last or a WRITE's with an immediate, a WRITE's RETH on its first packet), of an RDMA
// READ request (one READ_REQ packet with the RETH {remote address, rkey, length}, AckReq, no payload
// and no payload read whatever the length, SE never) and of the responder's READ responses (9.7.5.1.3:
// READ_RESP_FIRST/MIDDLE/LAST or ONLY by position, AETH aeth_i, AckReq and SE never, payload gathered
// like a SEND's), of an atomic request (IBA 9.4.5: one CmpSwap or FetchAdd packet with the AtomicETH
// {remote address, rkey, swap/add data, compare data}, the header's length field ATOMIC_LEN whatever
// the message length, AckReq, no payload and no payload read even with an SGE, SE never) and of an
// ATOMIC_ACK (AETH aeth_i, its AtomicAckETH the 8 inline bytes: the packet's 8 payload bytes in the
// slot, AckReq and SE never):
//   - for each packet: the header handed to the TX scheduler (opcode, payload length, PSN, AckReq,
//     SE, immediate, addresses), in allocation order;
//   - its payload reads: the packet's byte range walked over the message's SGE list from a cursor
//     that carries over between packets (empty SGEs stepped over), one read per contiguous piece,
//     each held until the DMA takes it;
//   - its payload in the TX buffer slot when the packet is handed over: the host bytes the pieces
//     name, or the WQE's inline bytes;
//   - done_o once per packet with last_o = the message's last packet, ready_o, empty_o, idle_o.
// The DMA answers reads in order with random latency and gaps, unaligned first beats with partial
// byte enables (tmnic_dma_rd's response format); the TX scheduler takes packets with random
// back-pressure and frees slots after a random delay; the requester starts packets at random times
// and new messages (SEND, WRITE, READ request or READ response, atomic request or ATOMIC_ACK; random
// lengths 0..16 KiB, 0..6 SGEs with empty ones, inline up to 96 bytes for SEND/WRITE, a READ
// request's length up to 2^31 with no SGEs, an atomic request's 8 with its one SGE or any without;
// random swap/compare operands with every message (sent only by the atomic requests); PMTU
// 256..4096) as soon as the previous message's last packet is done.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "Vtmnic_req_pkt.h"
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

using namespace tmnic::tb;
namespace hw = tmnic::hwif;
namespace wire = tmnic::wire;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8, kNslot = 8, kBufBytes = kNslot * 4096;
constexpr unsigned kInline = hw::WQE_MAX_INLINE, kNsge = hw::WQE_MAX_SGE;
constexpr uint64_t kSalt = 0xC0FFEE;
uint8_t host(uint64_t a) { return mem_byte(kSalt, a); }

struct Piece {
  uint64_t addr;
  unsigned len;
};
struct Pkt {
  wire::RoceHdr hdr;
  std::vector<uint8_t> pay;
  std::deque<Piece> reads;   // expected payload reads, in order
  unsigned slot = 0;
};
struct Chunk {              // a read taken by the DMA, answered beat by beat
  uint64_t addr;
  unsigned len, sent = 0;
  uint64_t at;
};

class PktBench {
 public:
  PktBench(uint64_t seed, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_req_pkt>(ctx_.get())), rng_(seed),
        cov_(cov) {
    top_->rst_ni = 0;
    top_->clk_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) clock_tick(*top_, *ctx_);
    top_->rst_ni = 1;
    top_->eval();
    path_dmac_ = rng_() & 0xFFFFFFFFFFFFull;
    path_ip_ = static_cast<uint32_t>(rng_());
    path_tos_ = static_cast<uint8_t>(rng_());
    path_ttl_ = static_cast<uint8_t>(rng_());
    path_qpn_ = static_cast<uint32_t>(rng_()) & 0xFFFFFF;
    lmac_ = rng_() & 0xFFFFFFFFFFFFull;
    lip_ = static_cast<uint32_t>(rng_());
  }
  ~PktBench() { top_->final(); }

  struct Knobs {
    double go, rd_ready, gap, pkt_ready;
    unsigned max_lat, max_free;
  };
  void run(const Knobs& k, uint64_t cycles) {
    for (uint64_t c = 0; c < cycles && !::testing::Test::HasFailure(); ++c) step(k);
  }
  uint64_t cycles() const { return cyc_; }
  uint64_t packets() const { return handed_; }

 private:
  template <class... A>
  void fail(const A&... a) {
    fail_at(cyc_, a...);
  }
  uint64_t u(uint64_t lo, uint64_t hi) { return urand(rng_, lo, hi); }

  // A new message: its SGEs (written one per cycle from the next cycle on) or inline bytes.
  void new_message() {
    // the kind: SEND, RDMA WRITE (RETH on the first packet), READ request, READ response, atomic
    // request (CMP_SWAP or FETCH_ADD), ATOMIC_ACK (a response: rresp_i with atom_ack_i)
    const unsigned kind = static_cast<unsigned>(u(0, 23));
    write_ = kind >= 8 && kind < 13;
    read_ = kind >= 13 && kind < 16;
    rresp_ = kind >= 16 && kind < 20;
    atomic_ = kind >= 20 && kind < 22;
    atom_ack_ = kind >= 22;
    if (atom_ack_) rresp_ = true;
    atom_cs_ = chance(rng_, 0.5);
    swap_ = rng_();
    cmp_ = rng_();
    inline_ = atom_ack_ || (!read_ && !rresp_ && !atomic_ && chance(rng_, 0.3));
    pmtu_log_ = static_cast<unsigned>(u(8, 12));
    imm_ = chance(rng_, 0.3);          // (ignored by READ requests and responses)
    aeth_ = static_cast<uint32_t>(rng_());
    raddr_ = rng_();
    rkey_ = static_cast<uint32_t>(rng_());
    imm_data_ = static_cast<uint32_t>(rng_());
    solicited_ = chance(rng_, 0.3);
    sport_ = static_cast<uint16_t>(0xC000 | u(0, 63));
    sges_.clear();
    if (read_) {
      // (the length it asks for, any: no payload leaves with the request)
      switch (u(0, 3)) {
        case 0: msg_len_ = 0; cov_.hit("read_req_zero"); break;
        case 1: msg_len_ = static_cast<uint32_t>(u(1, 1u << pmtu_log_)); break;
        default: msg_len_ = static_cast<uint32_t>(u((1u << pmtu_log_) + 1, 1u << 31)); cov_.hit("read_req_over_pmtu"); break;
      }
    } else if (atomic_) {
      // the requester's: one 8-byte SGE (where the original value lands: never read here); or any
      // length and no SGE (the header's length is ATOMIC_LEN all the same)
      if (chance(rng_, 0.5)) {
        msg_len_ = hw::ATOMIC_LEN;
        sges_.push_back({(u(0, 1ull << 40) << 3), hw::ATOMIC_LEN});
        cov_.hit("atomic_with_sge");
      } else {
        msg_len_ = static_cast<uint32_t>(u(0, 1u << 31));
      }
    } else if (atom_ack_) {
      msg_len_ = hw::ATOMIC_LEN;   // the original value, big-endian bytes as read from memory
      for (auto& b : inl_) b = static_cast<uint8_t>(rng_());
    } else if (inline_) {
      msg_len_ = static_cast<uint32_t>(chance(rng_, 0.1) ? 0 : u(1, kInline));
      for (auto& b : inl_) b = static_cast<uint8_t>(rng_());
      cov_.hit("inline");
    } else {
      const unsigned n = static_cast<unsigned>(u(0, kNsge));
      msg_len_ = 0;
      for (unsigned i = 0; i < n; ++i) {
        Piece s;
        s.addr = (u(0, 1ull << 40) << 4) + u(0, 63);
        switch (u(0, 4)) {
          case 0: s.len = 0; cov_.hit("empty_sge"); break;
          case 1: s.len = static_cast<unsigned>(u(1, 64)); break;
          default: s.len = static_cast<unsigned>(u(1, 6000)); break;
        }
        msg_len_ += s.len;
        sges_.push_back(s);
      }
      if (msg_len_ == 0) cov_.hit("empty_message");
    }
    off_ = 0;
    sgi_ = 0;
    sgo_ = 0;
    sg_wr_ = 0;
    in_msg_ = true;
  }

  // The next packet of the message, as the model cuts it.
  Pkt make_packet() {
    Pkt p;
    const uint32_t pmtu = 1u << pmtu_log_;
    const bool req_only = read_ || atomic_;   // one request packet, no payload
    const bool first = off_ == 0, last = req_only || msg_len_ - off_ <= pmtu;
    const unsigned len = req_only ? 0 : last ? msg_len_ - off_ : pmtu;
    wire::RoceHdr& h = p.hdr;
    h.dst_mac = path_dmac_;
    h.src_mac = lmac_;
    h.src_ip = lip_;
    h.dst_ip = path_ip_;
    h.ip_tos = path_tos_;
    h.ip_ttl = path_ttl_;
    h.udp_sport = sport_;
    h.dest_qp = path_qpn_;
    h.psn = psn_ & 0xFFFFFF;
    h.pay_len = static_cast<uint16_t>(len);
    h.ack_req = last && !rresp_;   // (a READ response asks for nothing)
    // IBA: SE on a SEND's last packet, a WRITE's with ImmDt; never on a READ or atomic request or a response
    h.se = last && solicited_ && !req_only && !rresp_ && (!write_ || imm_);
    h.imm = imm_data_;
    h.aeth = aeth_;              // (on the wire with FIRST/LAST/ONLY responses only; the field is aeth_i)
    h.reth_va = raddr_;          // (compared only where the opcode carries a RETH)
    h.reth_rkey = rkey_;
    h.reth_len = msg_len_;
    h.atom_swap = swap_;         // (compared only where the opcode carries an AtomicETH)
    h.atom_cmp = cmp_;
    if (solicited_ && last && (read_ || rresp_)) cov_.hit("solicited_ignored_by_read");
    if (solicited_ && atomic_) cov_.hit("solicited_ignored_by_atomic");
    if (read_) {
      h.opcode = wire::kReadReq;
      cov_.hit("read_req");
    } else if (atomic_) {
      h.opcode = atom_cs_ ? wire::kCmpSwap : wire::kFetchAdd;
      h.reth_len = hw::ATOMIC_LEN;   // (the parser's value: not on the wire)
      cov_.hit(atom_cs_ ? "atomic_cs" : "atomic_fa");
    } else if (atom_ack_) {
      h.opcode = wire::kAtomicAck;
      cov_.hit("atomic_ack");
    } else if (rresp_) {
      h.opcode = first && last ? wire::kReadRespOnly : first ? wire::kReadRespFirst
                 : last        ? wire::kReadRespLast : wire::kReadRespMiddle;
      cov_.hit(first && last ? "rresp_only" : first ? "rresp_first" : last ? "rresp_last" : "rresp_middle");
      if (first && last && len == 0) cov_.hit("rresp_empty");
    } else if (write_) {
      h.opcode = first && last ? (imm_ ? wire::kWriteOnlyImm : wire::kWriteOnly)
                 : first       ? wire::kWriteFirst
                 : last        ? (imm_ ? wire::kWriteLastImm : wire::kWriteLast)
                               : wire::kWriteMiddle;
      // (the RETH names the whole message: remote address, rkey, total length)
      cov_.hit(first && last ? "write_only" : first ? "write_first" : last ? "write_last" : "write_middle");
    } else {
      h.opcode = first && last ? (imm_ ? wire::kSendOnlyImm : wire::kSendOnly)
                 : first       ? wire::kSendFirst
                 : last        ? (imm_ ? wire::kSendLastImm : wire::kSendLast)
                               : wire::kSendMiddle;
    }
    if (inline_) {
      p.pay.assign(inl_.begin(), inl_.begin() + len);
    } else {
      unsigned rest = len;
      while (rest > 0) {
        while (sgi_ < sges_.size() && sgo_ == sges_[sgi_].len) {  // exhausted or empty SGEs
          ++sgi_;
          sgo_ = 0;
        }
        const Piece& s = sges_[sgi_];
        const unsigned n = std::min(rest, s.len - sgo_);
        p.reads.push_back({s.addr + sgo_, n});
        for (unsigned i = 0; i < n; ++i) p.pay.push_back(host(s.addr + sgo_ + i));
        sgo_ += n;
        rest -= n;
      }
      if (p.reads.size() > 1) cov_.hit("packet_spans_sges");
      if (first && !last) cov_.hit("multi_packet");
    }
    exp_last_ = last;
    off_ += len;
    ++psn_;
    return p;
  }

  void step(const Knobs& k) {
    // ---------------- drive
    const bool busy_pkt = building_;
    const bool msg_new = !in_msg_ && !busy_pkt && chance(rng_, 0.5);
    if (msg_new) new_message();
    top_->msg_new_i = msg_new;
    top_->msg_len_i = msg_len_;
    top_->inline_i = inline_;
    if (msg_new)
      for (unsigned i = 0; i < kInline; ++i) set_byte(top_->inl_bytes_i.data(), i, inl_[i]);
    top_->imm_i = imm_;
    top_->write_i = write_;
    top_->read_i = read_;
    top_->rresp_i = rresp_;
    top_->atomic_i = atomic_;
    top_->atom_cs_i = atom_cs_;
    top_->swap_i = swap_;
    top_->cmp_i = cmp_;
    top_->atom_ack_i = atom_ack_;
    top_->aeth_i = aeth_;
    top_->raddr_i = raddr_;
    top_->rkey_i = rkey_;
    top_->imm_data_i = imm_data_;
    top_->solicited_i = solicited_;
    // SGE writes (as the checker passes them), after the message starts and before its first packet
    const bool sg_we = in_msg_ && !msg_new && sg_wr_ < sges_.size();
    top_->sg_we_i = sg_we;
    if (sg_we) {
      top_->sg_idx_i = sg_wr_;
      top_->sg_iova_i = sges_[sg_wr_].addr;
      top_->sg_len_i = sges_[sg_wr_].len;
    }
    // qp_path_t {dmac, dest_ip, dest_qpn, tclass, hop_limit}, the last in the LSBs
    set_sig_bits(top_->path_i, 0, 8, path_ttl_);
    set_sig_bits(top_->path_i, 8, 8, path_tos_);
    set_sig_bits(top_->path_i, 16, 24, path_qpn_);
    set_sig_bits(top_->path_i, 40, 32, path_ip_);
    set_sig_bits(top_->path_i, 72, 48, path_dmac_);
    top_->pmtu_log_i = pmtu_log_;
    top_->local_mac_i = lmac_;
    top_->local_ip_i = lip_;
    top_->udp_sport_i = sport_;
    top_->psn_i = psn_ & 0xFFFFFF;
    top_->eval();
    const bool can_go = in_msg_ && !msg_new && !sg_we && sg_wr_ == sges_.size() && !building_;
    const bool go = can_go && top_->ready_o && chance(rng_, k.go);
    top_->go_i = go;
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
    // TX scheduler
    const bool pkt_ready = chance(rng_, k.pkt_ready);
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
    if (bool(top_->empty_o) != chunks_.empty())
      return fail("empty_o ", int(top_->empty_o), " with ", chunks_.size(), " payload reads in flight");
    if (top_->done_o) {
      if (!building_) return fail("done_o without a packet");
      if (bool(top_->last_o) != exp_last_) return fail("last_o ", int(top_->last_o), ", model ", exp_last_);
      if (!cur_.reads.empty()) return fail("done_o with ", cur_.reads.size(), " payload reads not issued");
      building_ = false;
      if (exp_last_) in_msg_ = false;
    }
    if (top_->rd_valid_o) {
      if (!building_ || cur_.reads.empty()) return fail("payload read with none expected");
      const Piece& p = cur_.reads.front();
      if (top_->rd_addr_o != p.addr || top_->rd_len_o != p.len)
        return fail("payload read 0x", std::hex, top_->rd_addr_o, "+", std::dec, top_->rd_len_o, ", model 0x", std::hex,
                    p.addr, "+", std::dec, p.len);
      if (rd_ready) {
        chunks_.push_back({p.addr, p.len, 0, cyc_ + 1 + u(0, k.max_lat)});
        cur_.reads.pop_front();
      } else {
        cov_.hit("read_backpressure");
      }
    }
    if (top_->txb_wr_o) {
      const uint64_t be = sig_bits(top_->txb_be_o, 0, kBytes);
      for (unsigned i = 0; i < kBytes; ++i)
        if (lane(be, i)) buf_[(top_->txb_pos_o + i) % kBufBytes] = byte_of(top_->txb_data_o.data(), i);
    }
    if (top_->pkt_valid_o) {
      if (sent_.empty()) return fail("packet handed over with none allocated");
      Pkt& p = sent_.front();
      uint32_t hw[wire::kRoceHdrWords];
      for (unsigned i = 0; i < wire::kRoceHdrWords; ++i) hw[i] = top_->pkt_hdr_o[i];
      wire::RoceHdr h = wire::unpack_hdr(hw);
      // The RETH fields matter only where the opcode carries a RETH or an AtomicETH (its VA and rkey;
      // its length the parser's ATOMIC_LEN), the operands only with an AtomicETH (the frame builder
      // sends them then).
      if (!wire::bth_has_reth(h.opcode) && !wire::bth_has_atomiceth(h.opcode)) {
        h.reth_va = p.hdr.reth_va;
        h.reth_rkey = p.hdr.reth_rkey;
        h.reth_len = p.hdr.reth_len;
      }
      if (!wire::bth_has_atomiceth(h.opcode)) {
        h.atom_swap = p.hdr.atom_swap;
        h.atom_cmp = p.hdr.atom_cmp;
      }
      if (h != p.hdr)
        return fail("header {op ", int(h.opcode), " len ", h.pay_len, " psn ", h.psn, " ack ", h.ack_req, " se ", h.se,
                    " imm ", h.imm, " aeth ", h.aeth, " reth_len ", h.reth_len, " va ", h.reth_va, " rkey ", h.reth_rkey,
                    " swap ", h.atom_swap, " cmp ", h.atom_cmp, "}, model {", int(p.hdr.opcode), " ", p.hdr.pay_len, " ",
                    p.hdr.psn, " ", p.hdr.ack_req, " ", p.hdr.se, " ", p.hdr.imm, " ", p.hdr.aeth, " ", p.hdr.reth_len, " ",
                    p.hdr.reth_va, " ", p.hdr.reth_rkey, " ", p.hdr.atom_swap, " ", p.hdr.atom_cmp, "}");
      if (top_->pkt_slot_o != p.slot) return fail("slot ", int(top_->pkt_slot_o), ", model ", p.slot);
      if (pkt_ready) {
        for (unsigned i = 0; i < p.pay.size(); ++i)
          if (buf_[p.slot * 4096 + i] != p.pay[i])
            return fail("payload byte ", i, " of a ", p.pay.size(), "-byte packet (psn ", p.hdr.psn, ")");
        frees_.push_back({cyc_ + 1 + u(0, k.max_free), p.slot});
        sent_.pop_front();
        ++handed_;
        cov_.hit(p.pay.empty() ? "empty_packet" : "packet");
      } else {
        cov_.hit("tx_backpressure");
      }
    }

    // ---------------- model of this edge
    if (beat && top_->rsp_last_i) chunks_.pop_front();
    if (sg_we) ++sg_wr_;
    if (go) {
      cur_ = make_packet();
      cur_.slot = slot_next_;
      slot_next_ = (slot_next_ + 1) % kNslot;
      sent_.push_back(cur_);
      cur_.pay.clear();
      building_ = true;
      if (inline_) cov_.hit(msg_len_ > kBytes ? "inline_two_words" : "inline_one_word");
    }
    clock_tick(*top_, *ctx_);
    ++cyc_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_req_pkt> top_;
  std::mt19937_64 rng_;
  Coverage& cov_;
  uint64_t cyc_ = 0, handed_ = 0, path_dmac_ = 0, lmac_ = 0;
  uint8_t path_tos_ = 0, path_ttl_ = 0;
  uint32_t path_ip_ = 0, path_qpn_ = 0, lip_ = 0, msg_len_ = 0, off_ = 0, imm_data_ = 0, psn_ = 0xFFFFF0;
  uint16_t sport_ = 0xC000;
  unsigned pmtu_log_ = 10, sgi_ = 0, sgo_ = 0, sg_wr_ = 0, slot_next_ = 0;
  bool inline_ = false, imm_ = false, solicited_ = false, in_msg_ = false, building_ = false, exp_last_ = false;
  bool write_ = false, read_ = false, rresp_ = false, atomic_ = false, atom_cs_ = false, atom_ack_ = false;
  uint64_t swap_ = 0, cmp_ = 0;
  uint32_t aeth_ = 0;
  uint64_t raddr_ = 0;
  uint32_t rkey_ = 0;
  std::array<uint8_t, kInline> inl_{};
  std::vector<Piece> sges_;
  Pkt cur_;
  std::deque<Pkt> sent_;
  std::deque<Chunk> chunks_;
  std::vector<std::pair<uint64_t, unsigned>> frees_;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(kBufBytes, 0);
};

std::vector<std::string> coverage_points() {
  return {"read_req", "read_req_zero", "read_req_over_pmtu", "rresp_only", "rresp_first", "rresp_middle", "rresp_last",
          "rresp_empty", "solicited_ignored_by_read", "write_only", "write_first", "write_middle", "write_last", "inline", "inline_one_word", "inline_two_words", "empty_sge", "empty_message", "empty_packet", "packet",
          "packet_spans_sges", "multi_packet", "unaligned_read", "read_backpressure", "tx_backpressure",
          "atomic_cs", "atomic_fa", "atomic_with_sge", "atomic_ack", "solicited_ignored_by_atomic"};
}

TEST(ReqPkt, RandomMessagesAgainstModel) {
  Coverage total(coverage_points());
  Stopwatch sw;
  uint64_t cycles = 0, packets = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    Coverage cov(coverage_points());
    PktBench b(seed, cov);
    b.run({0.7, 0.6, 0.2, 0.6, 8, 20}, 40000);   // back-pressure everywhere
    b.run({1.0, 1.0, 0.0, 1.0, 0, 0}, 20000);     // as fast as it goes
    b.run({0.3, 0.3, 0.5, 0.2, 40, 200}, 20000);  // slow memory, slow wire: slots run out
    cycles += b.cycles();
    packets += b.packets();
    total.merge(cov);
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(packets, 2000u);
  report_speed("req_pkt", "mix", cycles, sw.seconds());
  total.report("tmnic_req_pkt");
}

}  // namespace
