// tmnic_tx_gather against a model of its contract. A random requester allocates slots in order
// with random headers, gathers each packet's payload (0..4096 bytes) either as random read chunks
// (pushed while chunk_room_o, answered in order by a DMA model with random latency, unaligned
// host addresses, so first beats start before the chunk with partial byte enables) or as one or
// two inline writes, then marks the slot filled. The TX scheduler side takes packets with random
// back-pressure and returns slots after a random delay.
// Checked every cycle: each TX buffer write is exactly the beat the model expects (position, data,
// byte enables, order); packets are handed over in allocation order with their header, only after
// their last write, with the slot's bytes equal to the payload, and within 2 cycles of becoming
// ready to go; slot_free_o, chunk_room_o/chunk_empty_o and idle_o match the model; an offer is
// held stable until taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "Vtmnic_tx_gather.h"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/wire.h"

#ifndef TB_DATA_W
#define TB_DATA_W 512
#endif

using namespace tmnic::tb;

namespace {

constexpr unsigned kBytes = TB_DATA_W / 8;
constexpr unsigned kNslot = 8, kNchunk = 16;
constexpr unsigned kPosBits = 12 + 3;
constexpr unsigned kBufBytes = kNslot * 4096;
constexpr unsigned kHdrBits = tmnic::wire::kRoceHdrBits;
constexpr unsigned kHdrWords = (kHdrBits + 31) / 32;
using Hdr = std::array<uint32_t, kHdrWords>;
using Beat = std::array<uint32_t, kBytes / 4>;

struct Knobs {
  double alloc_gap, push_rate, rsp_rate, pkt_ready, inline_rate;
  unsigned max_len;
};

class GatherBench {
 public:
  GatherBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_tx_gather>(ctx_.get())),
        rng_(seed), k_(k), cov_(cov), buf_(kBufBytes, 0) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    clear_inputs();
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
  }
  ~GatherBench() { top_->final(); }

  void run(unsigned npkts, uint64_t max_cycles) {
    target_ = npkts;
    const uint64_t end = cycles_ + max_cycles;
    while ((taken_ < target_) && cycles_ < end && !errors_) cycle();
    ASSERT_EQ(errors_, 0u);
    ASSERT_EQ(taken_, target_) << "packets not handed over after " << max_cycles << " cycles";
    target_ = taken_;  // no new packets; let slots come back
    for (int i = 0; i < 40 && !errors_; ++i) cycle();
    EXPECT_EQ(errors_, 0u);
    EXPECT_TRUE(top_->idle_o) << "not idle at the end";
  }
  uint64_t cycles() const { return cycles_; }

 private:
  struct Chunk {
    unsigned pos, len, align, slot;
    unsigned sent = 0;  // beats delivered
    uint64_t pushed_at = 0;
  };
  struct Pkt {
    Hdr hdr;
    unsigned slot, len;
    std::vector<uint8_t> pay;
    unsigned pend_writes = 0;  // expected buffer writes not yet seen
    unsigned pend_chunks = 0;  // reads whose last beat has not been driven
    bool filled = false;
    uint64_t ready_at = 0;     // cycle from which it may be handed over (0: not yet)
  };
  struct Write {
    unsigned pos;
    Beat data;
    uint64_t be;
    unsigned slot;
  };

  void fail(const std::string& m) {
    if (!errors_) ADD_FAILURE() << "cycle " << cycles_ << ": " << m;
    ++errors_;
  }
  void tick() {
    top_->clk_i = 1;
    top_->eval();
    top_->clk_i = 0;
    ++cycles_;
  }
  void clear_inputs() {
    top_->alloc_i = 0;
    top_->filled_i = 0;
    top_->chunk_push_i = 0;
    top_->inl_wr_i = 0;
    top_->rsp_valid_i = 0;
    top_->rsp_last_i = 0;
    top_->pkt_ready_i = 0;
    top_->slot_free_i = 0;
  }
  Pkt* filling() { return (!pkts_.empty() && !pkts_.back().filled && alloc_open_) ? &pkts_.back() : nullptr; }

  void cycle() {
    clear_inputs();
    top_->eval();
    // ---------------- compare outputs (state after the previous edge)
    check_write();
    const unsigned busy_model = static_cast<unsigned>(std::count(slot_busy_.begin(), slot_busy_.end(), true));
    if (top_->slot_o != fill_slot_) fail("slot_o");
    if (top_->slot_free_o != !slot_busy_[fill_slot_]) fail("slot_free_o");
    if (top_->chunk_room_o != (inflight_.size() < kNchunk)) fail("chunk_room_o");
    if (top_->chunk_empty_o != inflight_.empty()) fail("chunk_empty_o");
    const bool idle_model = busy_model == 0 && inflight_.empty() && !offer_;
    if (top_->idle_o != idle_model) fail("idle_o");
    check_offer();

    // ---------------- requester
    Pkt* p = filling();
    if (!p) {
      if (taken_ + pkts_.size() < target_ && top_->slot_free_o && !chance(rng_, k_.alloc_gap)) {
        Pkt n;
        for (auto& w : n.hdr) w = static_cast<uint32_t>(rng_());
        n.hdr[kHdrWords - 1] &= (1u << (kHdrBits % 32)) - 1;
        n.slot = fill_slot_;
        const unsigned r = static_cast<unsigned>(urand(rng_, 0, 9));
        n.len = r == 0 ? 0 : r == 1 ? k_.max_len : static_cast<unsigned>(urand(rng_, 1, k_.max_len));
        n.pay.resize(n.len);
        for (auto& b : n.pay) b = static_cast<uint8_t>(rng_());
        for (unsigned i = 0; i < kHdrWords; ++i) top_->hdr_i[i] = n.hdr[i];
        top_->alloc_i = 1;
        slot_busy_[fill_slot_] = true;
        inline_ = n.len <= 2 * kBytes && chance(rng_, k_.inline_rate);
        pkts_.push_back(std::move(n));
        alloc_open_ = true;
        fill_off_ = 0;
        inl_beat_ = 0;
        cov_.hit(pkts_.back().len == 0 ? "zero_length_packet" : "packet");
      } else if (!top_->slot_free_o) {
        cov_.hit("all_slots_busy");
      }
    } else if (inline_) {
      // Inline: one beat per cycle once no read is in flight (the requester waits for that).
      const unsigned nbeats = std::max(1u, (p->len + kBytes - 1) / kBytes);
      if (inl_beat_ < nbeats && top_->chunk_empty_o) {
        Write w{};
        w.pos = p->slot * 4096 + inl_beat_ * kBytes;
        for (unsigned i = 0; i < kBytes; ++i) {
          const unsigned o = inl_beat_ * kBytes + i;
          set_byte(w.data.data(), i, o < p->len ? p->pay[o] : static_cast<uint8_t>(rng_()));
        }
        w.be = kBytes == 64 ? ~0ull : mask64(kBytes);
        w.slot = p->slot;
        top_->inl_wr_i = 1;
        top_->inl_pos_i = w.pos;
        for (unsigned i = 0; i < kBytes / 4; ++i) top_->inl_data_i[i] = w.data[i];
        exp_writes_.push_back(w);
        ++p->pend_writes;
        ++inl_beat_;
        if (nbeats == 2 && inl_beat_ == 2) cov_.hit("inline_two_beats");
      } else if (inl_beat_ == nbeats) {
        mark_filled(*p);
      }
    } else if (fill_off_ < p->len) {
      if (!top_->chunk_room_o) {
        cov_.hit("chunk_fifo_full");
      } else if (chance(rng_, k_.push_rate)) {
        Chunk c;
        c.len = static_cast<unsigned>(urand(rng_, 1, p->len - fill_off_));
        if (chance(rng_, 0.3)) c.len = std::min(c.len, static_cast<unsigned>(urand(rng_, 1, 8)));
        c.pos = p->slot * 4096 + fill_off_;
        c.align = static_cast<unsigned>(urand(rng_, 0, kBytes - 1));
        c.slot = p->slot;
        c.pushed_at = cycles_;
        chunk_src_.push_back(fill_off_);
        ++p->pend_chunks;
        top_->chunk_push_i = 1;
        top_->chunk_pos_i = c.pos;
        inflight_.push_back(c);
        fill_off_ += c.len;
        if (fill_off_ < p->len) cov_.hit("multi_chunk_packet");
      }
    } else {
      mark_filled(*p);
    }

    // ---------------- DMA responses, in order
    drive_response();

    // ---------------- TX scheduler side
    top_->pkt_ready_i = chance(rng_, k_.pkt_ready);
    for (auto it = returns_.begin(); it != returns_.end();) {
      if (it->first <= cycles_) {
        top_->slot_free_i |= 1u << it->second;
        slot_busy_[it->second] = false;
        it = returns_.erase(it);
      } else {
        ++it;
      }
    }
    top_->eval();
    if (top_->pkt_valid_o && top_->pkt_ready_i) accept();
    if (top_->pkt_valid_o && !top_->pkt_ready_i) cov_.hit("offer_back_pressured");
    tick();
  }

  void mark_filled(Pkt& p) {
    top_->filled_i = 1;
    p.filled = true;
    alloc_open_ = false;
    fill_slot_ = (fill_slot_ + 1) % kNslot;
    if (p.pend_writes == 0 && p.pend_chunks == 0) p.ready_at = cycles_ + 1;
  }

  void drive_response() {
    if (inflight_.empty() || !chance(rng_, k_.rsp_rate)) return;
    Chunk& c = inflight_.front();
    if (c.pushed_at == cycles_) return;  // a response comes at the earliest one cycle after its request
    const unsigned nbeats = (c.align + c.len + kBytes - 1) / kBytes;
    const int off = static_cast<int>(c.sent * kBytes) - static_cast<int>(c.align);
    // The packet this chunk belongs to: the oldest one with this slot not yet handed over.
    Pkt* p = nullptr;
    for (auto& q : pkts_)
      if (q.slot == c.slot) {
        p = &q;
        break;
      }
    if (!p) {
      fail("response for a slot with no packet");
      return;
    }
    const unsigned src = chunk_src_.front();
    Write w{};
    w.pos = (c.pos + static_cast<unsigned>(off)) & (kBufBytes - 1);
    w.be = 0;
    for (unsigned i = 0; i < kBytes; ++i) {
      const int o = off + static_cast<int>(i);
      uint8_t b = static_cast<uint8_t>(rng_());
      if (o >= 0 && static_cast<unsigned>(o) < c.len) {
        b = p->pay[src + static_cast<unsigned>(o)];
        w.be |= 1ull << i;
      }
      set_byte(w.data.data(), i, b);
    }
    w.slot = c.slot;
    if (c.align != 0 && c.sent == 0) cov_.hit("unaligned_first_beat");
    top_->rsp_valid_i = 1;
    top_->rsp_off_i = static_cast<uint16_t>(off) & 0x3FFF;
    top_->rsp_be_i = w.be;
    for (unsigned i = 0; i < kBytes / 4; ++i) top_->rsp_data_i[i] = w.data[i];
    ++c.sent;
    top_->rsp_last_i = c.sent == nbeats;
    exp_writes_.push_back(w);
    ++p->pend_writes;
    if (c.sent == nbeats) {
      --p->pend_chunks;
      inflight_.pop_front();
      chunk_src_.pop_front();
    }
  }

  // The buffer write of the previous cycle.
  void check_write() {
    if (!top_->txb_wr_o) {
      return;
    }
    if (exp_writes_.empty()) {
      fail("unexpected TX buffer write");
      return;
    }
    const Write w = exp_writes_.front();
    exp_writes_.pop_front();
    if (top_->txb_pos_o != w.pos) fail("txb_pos_o " + std::to_string(top_->txb_pos_o) + " != " + std::to_string(w.pos));
    if (static_cast<uint64_t>(top_->txb_be_o) != w.be) fail("txb_be_o");
    for (unsigned i = 0; i < kBytes; ++i)
      if (lane(w.be, i)) {
        if (byte_of(top_->txb_data_o.data(), i) != byte_of(w.data.data(), i)) {
          fail("txb_data_o byte " + std::to_string(i));
          break;
        }
        buf_[(w.pos + i) & (kBufBytes - 1)] = byte_of(w.data.data(), i);
      }
    for (auto& p : pkts_)
      if (p.slot == w.slot && p.pend_writes) {
        if (--p.pend_writes == 0 && p.pend_chunks == 0 && p.filled) p.ready_at = cycles_;
        break;
      }
  }

  void check_offer() {
    if (!top_->pkt_valid_o) {
      if (offer_) fail("offer withdrawn before it was taken");
      // The oldest packet, once complete and the previous one taken, is offered within 2 cycles.
      if (!pkts_.empty() && pkts_.front().ready_at && cycles_ > std::max(pkts_.front().ready_at, last_accept_) + 2)
        fail("complete packet not handed over (slot " + std::to_string(pkts_.front().slot) + ", ready at " +
             std::to_string(pkts_.front().ready_at) + ", last accept " + std::to_string(last_accept_) + ", len " +
             std::to_string(pkts_.front().len) + ")");
      return;
    }
    if (pkts_.empty()) {
      fail("offer with no packet");
      return;
    }
    const Pkt& p = pkts_.front();
    if (!offer_) {
      if (!p.filled || p.pend_writes || p.pend_chunks) fail("packet handed over before its data was written");
      if (top_->pkt_slot_o != p.slot) fail("pkt_slot_o out of order");
      for (unsigned i = 0; i < kHdrWords; ++i)
        if (top_->pkt_hdr_o[i] != p.hdr[i]) {
          fail("pkt_hdr_o differs from the allocated header");
          break;
        }
      for (unsigned i = 0; i < p.len; ++i)
        if (buf_[p.slot * 4096 + i] != p.pay[i]) {
          fail("slot payload byte " + std::to_string(i));
          break;
        }
      if (p.ready_at) cov_.max("handover_latency_max", cycles_ - std::max(p.ready_at, last_accept_));
      offer_ = true;
      offer_slot_ = top_->pkt_slot_o;
    } else if (top_->pkt_slot_o != offer_slot_) {
      fail("offer changed while held");
    }
  }

  void accept() {
    const Pkt& p = pkts_.front();
    returns_.push_back({cycles_ + urand(rng_, 1, 20), p.slot});
    pkts_.pop_front();
    offer_ = false;
    last_accept_ = cycles_;
    ++taken_;
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_tx_gather> top_;
  std::mt19937_64 rng_;
  Knobs k_;
  Coverage& cov_;
  std::vector<uint8_t> buf_;
  std::array<bool, kNslot> slot_busy_{};
  std::deque<Pkt> pkts_;
  std::deque<Chunk> inflight_;
  std::deque<unsigned> chunk_src_;  // payload offset of each in-flight chunk
  std::deque<Write> exp_writes_;
  std::vector<std::pair<uint64_t, unsigned>> returns_;
  unsigned fill_slot_ = 0, fill_off_ = 0, inl_beat_ = 0, offer_slot_ = 0, target_ = 0;
  uint64_t cycles_ = 0, errors_ = 0, taken_ = 0, last_accept_ = 0;
  bool alloc_open_ = false, inline_ = false, offer_ = false;
};

TEST(TxGather, RandomPacketsChunksInlineAndBackPressure) {
  Coverage cov({"packet", "zero_length_packet", "multi_chunk_packet", "inline_two_beats", "unaligned_first_beat",
                "chunk_fifo_full", "all_slots_busy", "offer_back_pressured"});
  const Knobs mixes[] = {
      {0.1, 0.9, 0.9, 0.9, 0.3, 4096},   // fast: the chunk FIFO and the slots fill up
      {0.5, 0.3, 0.2, 0.3, 0.3, 512},    // slow responses, heavy back-pressure
      {0.0, 1.0, 1.0, 0.05, 0.1, 64},    // short packets, the TX side almost stalled
  };
  Stopwatch sw;
  uint64_t cyc = 0;
  for (uint64_t seed : seeds({1, 2, 3})) {
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      GatherBench b(seed, k, cov);
      b.run(400, 2000000);
      cyc += b.cycles();
    }
  }
  report_speed("tx_gather", "busy", cyc, sw.seconds());
  cov.report("tx_gather");
  EXPECT_LE(cov.get("handover_latency_max"), 2u);
}

}  // namespace
