// tmnic_axil_regs (BAR0) against a register model, driven by the AXI4-Lite master of tb/lib
// (axil_master.hpp) with its five channels running independently: AW and W of a write are
// presented with independent random delays (either may come first, by any number of cycles), valid
// is held until ready (AXI rule for the master), BREADY and RREADY are random.
// Checks: slave-side AXI rules (BVALID/RVALID and RDATA held until accepted, OKAY responses, one
// B per write, R in order), register semantics (read-only identity and limits from hwif.h, MAC,
// IPv4, CTRL, ASYNC_CQ, CMD_ARG words with QUERY read-back (rb_valid_i), CMD_STATUS, unmapped
// addresses read 0 and ignore writes, byte lanes within a word ignored), the command strobe
// (dropped while cmd_busy_i) and the doorbell decode (SQ/RQ/SRQ/CQ at 0x1000/0x2000/0x3000/
// 0x4000 + 4n -> db_type 0..3, db_idx n, db_val = data). The STATS and TM_STATS windows are read
// through the statistics port: the bench plays tmnic_stats with random ready and answer delays and
// checks that each such read makes exactly one request, for the right window and word, held until
// taken, and that the answer (the bench's table at the request's handshake) is the read data.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <vector>

#include "Vtmnic_axil_regs.h"
#include "lib/axil_master.hpp"
#include "lib/bits.hpp"
#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tmnic/hwif.h"

using namespace tmnic::tb;
namespace hw = tmnic::hwif;

namespace {

constexpr uint32_t kDataBytes = 64, kClkMhz = 250, kNumQp = 64, kNumCq = 64, kNumSrq = 16, kNumMr = 64;
constexpr uint32_t kTmEntries = 1024, kTmCaps = 0x0A00, kTmGeom = 0x20090402;  // CMakeLists.txt -G values

struct Knobs {
  double aw_gap, w_gap, ar_gap;  // probability that a channel's next valid waits another cycle
  double bready, rready;
  double p_write;                // share of writes among new transactions
};

class AxilBench {
 public:
  AxilBench(uint64_t seed, Knobs k, Coverage& cov)
      : ctx_(std::make_unique<VerilatedContext>()), top_(std::make_unique<Vtmnic_axil_regs>(ctx_.get())), rng_(seed),
        k_(k), axil_(&rng_, {k.aw_gap, k.w_gap, k.ar_gap, k.bready, k.rready}), cov_(cov) {
    top_->clk_i = 0;
    top_->rst_ni = 0;
    top_->s_axil_awvalid_i = 0;
    top_->s_axil_wvalid_i = 0;
    top_->s_axil_arvalid_i = 0;
    top_->s_axil_bready_i = 0;
    top_->db_ready_i = 1;
    top_->s_axil_rready_i = 0;
    top_->cmd_busy_i = 0;
    top_->cmd_err_i = 0;
    top_->rb_valid_i = 0;
    top_->eval();
    for (int i = 0; i < 3; ++i) tick();
    top_->rst_ni = 1;
    top_->eval();
    for (auto& s : stats_) s = static_cast<uint32_t>(rng_());
    for (auto& s : tm_stats_) s = static_cast<uint32_t>(rng_());
    top_->st_rd_ready_i = 0;
    top_->st_rsp_valid_i = 0;
  }
  ~AxilBench() { top_->final(); }

  // n_wr writes and n_rd reads, then wait for every response.
  void run(unsigned n, uint64_t max_cycles) {
    const uint64_t end = cycles_ + max_cycles;
    while ((generated_ < n || pending()) && cycles_ < end && !errors_) cycle(generated_ < n);
    ASSERT_EQ(errors_, 0u);
    ASSERT_FALSE(pending()) << "transactions pending after " << max_cycles << " cycles (deadlock?)";
    EXPECT_EQ(b_count_, writes_done_);
    for (int i = 0; i < 4; ++i) cycle(false);
    EXPECT_EQ(errors_, 0u);
  }
  void idle(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) cycle(false);
  }
  uint64_t cycles() const { return cycles_; }
  uint64_t transactions() const { return generated_; }

 private:
  bool pending() const {
    return axil_.aw_queued() || axil_.w_queued() || b_count_ < writes_done_ || !rd_q_.empty() || axil_.ar_queued() ||
           top_->s_axil_bvalid_o || top_->s_axil_rvalid_o || st_due_ != 0;
  }
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

  uint16_t rand_addr() {
    uint16_t a;
    switch (urand(rng_, 0, 11)) {
      case 0: a = static_cast<uint16_t>(urand(rng_, 0, hw::reg::TM_PLACE / 4) * 4); break;                 // control page
      case 1: case 2: a = static_cast<uint16_t>(hw::reg::CMD_ARG0 + 4 * urand(rng_, 0, 31)); break;        // arguments
      case 3: a = static_cast<uint16_t>(chance(rng_, 0.5) ? hw::reg::CMD : hw::reg::CMD_STATUS); break;
      case 4: a = static_cast<uint16_t>(hw::reg::STATS0 + 4 * urand(rng_, 0, hw::stat::COUNT)); break;    // incl. one past
      case 5: case 6: case 7:
        a = static_cast<uint16_t>(0x1000 * urand(rng_, 1, 5) + 4 * (chance(rng_, 0.2) ? 1023 : urand(rng_, 0, 1023)));
        break;                                                                                             // doorbells
      case 8:
        a = static_cast<uint16_t>(chance(rng_, 0.5) ? hw::reg::TM_STATS0 + 4 * urand(rng_, 0, kNumSrq * hw::tmstat::COUNT)  // incl. one past
                                                    : urand(rng_, 0x6000 / 4, 0xFFFF / 4) * 4);
        break;                                                                                             // TM stats, unmapped
      case 9: a = static_cast<uint16_t>(urand(rng_, 0xC8 / 4, 0xFFC / 4) * 4); break;                     // unmapped
      case 10: a = static_cast<uint16_t>(chance(rng_, 0.5) ? hw::reg::MAC_LO : chance(rng_, 0.5) ? hw::reg::MAC_HI
                                        : chance(rng_, 0.5) ? hw::reg::IPV4 : hw::reg::ASYNC_CQ); break;
      default: a = hw::reg::CTRL; break;
    }
    if (chance(rng_, 0.1)) {
      a |= static_cast<uint16_t>(urand(rng_, 1, 3));  // byte address inside the word
      cov_.hit("addr_low_bits_set");
    }
    return a;
  }

  uint32_t read_model(uint16_t addr) {
    const uint16_t a = addr & 0xFFFC;
    if (a >= hw::reg::CMD_ARG0 && a < hw::reg::CMD) return args_[(a - hw::reg::CMD_ARG0) / 4];
    // (The STATS and TM_STATS windows: see stat_read(); their value comes from the statistics port.)
    switch (a) {
      case hw::reg::ID: return hw::DEVICE_ID;
      case hw::reg::ABI_VERSION: return hw::ABI_MAJOR << 16 | hw::ABI_MINOR;
      case hw::reg::DATA_BYTES: return kDataBytes;
      case hw::reg::CLK_MHZ: return kClkMhz;
      case hw::reg::NUM_QP: return kNumQp;
      case hw::reg::NUM_CQ: return kNumCq;
      case hw::reg::NUM_SRQ: return kNumSrq;
      case hw::reg::NUM_MR: return kNumMr;
      case hw::reg::MAX_SGE: return hw::WQE_MAX_SGE;
      case hw::reg::WQE_STRIDE: return hw::WQE_STRIDE;
      case hw::reg::CQE_SIZE: return hw::CQE_SIZE;
      case hw::reg::MAX_LOG_QUEUE: return hw::MAX_LOG_QUEUE;
      case hw::reg::TM_MAX_TAGS: return kTmEntries;
      case hw::reg::TM_CAPS: return kTmCaps;
      case hw::reg::TM_GEOM: return kTmGeom;
      case hw::reg::TM_PLACE: cov_.hit("read_tm_place"); return tm_place_;
      case hw::reg::MAC_LO: return static_cast<uint32_t>(mac_);
      case hw::reg::MAC_HI: return static_cast<uint32_t>(mac_ >> 32);
      case hw::reg::IPV4: return ip_;
      case hw::reg::CTRL: return enable_;
      case hw::reg::ASYNC_CQ: return async_;
      case hw::reg::CMD_STATUS: cov_.hit("read_cmd_status"); return (err_in_ ? 2u : 0u) | (busy_in_ ? 1u : 0u);
      default: return 0;
    }
  }

  // A read of the STATS (tm 0) or TM_STATS (tm 1) window: the word index, or -1.
  static int stat_read(uint16_t addr, bool& tm) {
    const uint16_t a = addr & 0xFFFC;
    tm = false;
    if (a >= hw::reg::STATS0 && a < hw::reg::STATS0 + 4 * hw::stat::COUNT) return (a - hw::reg::STATS0) / 4;
    tm = true;
    if (a >= hw::reg::TM_STATS0 && a < hw::reg::TM_STATS0 + hw::TM_STATS_STRIDE * kNumSrq)
      return (a - hw::reg::TM_STATS0) / 4;
    return -1;
  }

  // The statistics port: one request per statistics read, then the answer after a random delay.
  void stats_port() {
    if (top_->st_rd_valid_o) {
      if (st_req_idx_ < 0) {
        fail("statistics request with no statistics read waiting");
        return;
      }
      if (top_->st_rd_tm_o != st_req_tm_ || top_->st_rd_idx_o != static_cast<uint32_t>(st_req_idx_))
        fail("statistics request for window " + std::to_string(top_->st_rd_tm_o) + " word " +
             std::to_string(top_->st_rd_idx_o) + ", expected " + std::to_string(st_req_tm_) + " word " +
             std::to_string(st_req_idx_));
      if (top_->st_rd_ready_i) {
        const uint32_t v = st_req_tm_ ? tm_stats_[st_req_idx_] : stats_[st_req_idx_];
        cov_.hit(st_req_tm_ ? "read_tm_stats" : "read_stats");
        for (auto& r : rd_q_)
          if (!r.ready) {
            r.val = v;
            r.ready = true;
            break;
          }
        st_req_idx_ = -1;
        st_due_ = cycles_ + static_cast<uint64_t>(urand(rng_, 1, 4));
        if (st_due_ > cycles_ + 1) cov_.hit("stats_answer_delayed");
        st_val_ = v;
      } else {
        cov_.hit("stats_request_stalled");
      }
    }
  }

  // A write taking effect at this cycle's edge; its visible results are checked next cycle.
  void write_model(const AxilMaster::Write& w) {
    const uint16_t a = w.addr & 0xFFFC;
    ++writes_done_;
    if (a >= hw::reg::DB_SQ0 && a < hw::reg::DB_TM0 + 0x1000) {
      exp_db_ = true;
      exp_db_type_ = (a >> 12) - 1;
      exp_db_idx_ = (a & 0xFFF) >> 2;
      exp_db_val_ = w.data;
      static const char* const names[] = {"doorbell_sq", "doorbell_rq", "doorbell_srq", "doorbell_cq", "doorbell_tm"};
      cov_.hit(names[exp_db_type_]);
      if (exp_db_idx_ == 1023) cov_.hit("doorbell_last_index");
      return;
    }
    if (a >= hw::reg::CMD_ARG0 && a < hw::reg::CMD) {
      args_[(a - hw::reg::CMD_ARG0) / 4] = w.data;
      if (rb_now_) cov_.hit("arg_write_same_cycle_as_readback");
      return;
    }
    switch (a) {
      case hw::reg::MAC_LO: mac_ = (mac_ & 0xFFFF00000000ull) | w.data; break;
      case hw::reg::MAC_HI: mac_ = (mac_ & 0xFFFFFFFFull) | (static_cast<uint64_t>(w.data & 0xFFFF) << 32); break;
      case hw::reg::IPV4: ip_ = w.data; break;
      case hw::reg::CTRL: enable_ = w.data & 1; break;
      case hw::reg::ASYNC_CQ: async_ = w.data & 0x8000FFFFu; break;   // EN and CQ; reserved bits read 0
      case hw::reg::CMD:
        exp_cmd_op_ = w.data & 0xFF;
        exp_cmd_idx_ = w.data >> 8;
        if (busy_in_) {
          cov_.hit("cmd_dropped_while_busy");
        } else {
          exp_cmd_ = true;
          cov_.hit("cmd_strobe");
        }
        break;
      default: cov_.hit("write_ignored"); break;
    }
  }

  void cycle(bool gen) {
    // ---------------- new transactions
    if (gen && axil_.w_queued() < 4 && axil_.aw_queued() < 4 && chance(rng_, k_.p_write)) {
      const uint16_t addr = rand_addr();
      const uint32_t data = static_cast<uint32_t>(rng_());
      const uint8_t strb = chance(rng_, 0.8) ? 0xF : static_cast<uint8_t>(urand(rng_, 0, 15));
      axil_.write(addr, data, strb);
      ++generated_;
    }
    if (gen && axil_.ar_queued() < 2 && chance(rng_, 1 - k_.p_write)) {
      axil_.read(rand_addr());
      ++generated_;
    }
    // ---------------- drive: valid held until the handshake; a new valid after a random delay
    axil_.drive_valids(*top_, cycles_);
    axil_.drive_bready(*top_);
    top_->db_ready_i = chance(rng_, 0.8);  // the engines' doorbell paths are full 20 % of the time
    axil_.drive_rready(*top_);
    // Environment: busy/err, statistics, QUERY read-back.
    busy_in_ = chance(rng_, 0.2);
    err_in_ = chance(rng_, 0.3);
    top_->cmd_busy_i = busy_in_;
    top_->cmd_err_i = err_in_;
    if (chance(rng_, 0.05)) stats_[urand(rng_, 0, hw::stat::COUNT - 1)] = static_cast<uint32_t>(rng_());
    if (chance(rng_, 0.05)) tm_stats_[urand(rng_, 0, kNumSrq * hw::tmstat::COUNT - 1)] = static_cast<uint32_t>(rng_());
    top_->st_rd_ready_i = chance(rng_, 0.6);
    top_->st_rsp_valid_i = st_due_ != 0 && st_due_ == cycles_;
    top_->st_rsp_data_i = st_val_;
    if (chance(rng_, 0.05)) tm_place_ = static_cast<uint32_t>(rng_());
    top_->tm_place_i = tm_place_;
    rb_now_ = chance(rng_, 0.03);
    top_->rb_valid_i = rb_now_;
    if (rb_now_)
      for (unsigned i = 0; i < 32; ++i) rb_args_[i] = static_cast<uint32_t>(rng_());
    for (unsigned i = 0; i < 32; ++i) top_->rb_args_i[i] = rb_args_[i];
    top_->eval();

    // ---------------- outputs of this cycle
    check_state();
    stats_port();
    if (st_due_ != 0 && st_due_ == cycles_) st_due_ = 0;
    const AxilMaster::Hs hs = axil_.sample(*top_);
    // B channel (slave rules).
    if (b_hold_ && !top_->s_axil_bvalid_o) fail("BVALID dropped before BREADY");
    if (top_->s_axil_bvalid_o && top_->s_axil_bresp_o != 0) fail("BRESP not OKAY");
    if (top_->s_axil_bvalid_o && top_->s_axil_bready_i) {
      ++b_count_;
      if (b_count_ > writes_done_) fail("B response before its write was accepted");
    }
    if (top_->s_axil_bvalid_o && !top_->s_axil_bready_i) cov_.hit("b_backpressure");
    b_hold_ = top_->s_axil_bvalid_o && !top_->s_axil_bready_i;
    // R channel.
    if (r_hold_ && (!top_->s_axil_rvalid_o || top_->s_axil_rdata_o != r_data_)) fail("RVALID/RDATA changed before RREADY");
    if (top_->s_axil_rvalid_o) {
      if (top_->s_axil_rresp_o != 0) fail("RRESP not OKAY");
      if (rd_q_.empty()) fail("R without AR");
      else if (!rd_q_.front().ready) fail("read 0x" + hex(rd_q_.front().addr) + " answered before its statistics");
      else if (top_->s_axil_rready_i) {
        if (top_->s_axil_rdata_o != rd_q_.front().val)
          fail("read 0x" + hex(rd_q_.front().addr) + " returned 0x" + hex(top_->s_axil_rdata_o) + ", expected 0x" +
               hex(rd_q_.front().val));
        rd_q_.pop_front();
        ++reads_checked_;
      } else cov_.hit("r_backpressure");
    }
    r_hold_ = top_->s_axil_rvalid_o && !top_->s_axil_rready_i;
    r_data_ = top_->s_axil_rdata_o;
    // AR: the value is read from the registers as they are before this cycle's edge.
    const bool ar_hs = hs.ar;
    if (ar_hs) {
      const uint16_t a = static_cast<uint16_t>(hs.ar_addr);
      bool tm = false;
      const int si = stat_read(a, tm);
      if (si >= 0) {
        st_req_tm_ = tm;
        st_req_idx_ = si;
        rd_q_.push_back({a, 0, false});
      } else {
        rd_q_.push_back({a, read_model(a), true});
      }
    }
    if (top_->s_axil_arvalid_i && !top_->s_axil_arready_o) cov_.hit("ar_stall");
    // AW / W handshakes, independently.
    const bool aw_hs = hs.aw, w_hs = hs.w;
    if (top_->s_axil_awvalid_i && top_->s_axil_wvalid_i && top_->s_axil_bvalid_o && !top_->s_axil_bready_i && (aw_hs || w_hs))
      fail("write accepted while its B would have no place");
    if (top_->s_axil_awvalid_i && top_->s_axil_wvalid_i && top_->s_axil_bvalid_o && !top_->s_axil_bready_i)
      cov_.hit("write_held_by_pending_b");
    if (!top_->db_ready_i && (aw_hs || w_hs)) fail("write accepted while the doorbell path was full");
    if (top_->s_axil_awvalid_i && top_->s_axil_wvalid_i && !top_->db_ready_i) cov_.hit("write_held_by_db_ready");
    // Exp. effects of this cycle are visible next cycle: reset the one-cycle pulses first.
    exp_db_ = false;
    exp_cmd_ = false;
    // QUERY read-back lands at this edge, before a write to an argument in the same cycle.
    if (rb_now_) args_ = rb_args_;
    // A write takes effect when both of its halves were accepted.
    if (hs.wr_done) {
      const AxilMaster::Write& w = hs.done;
      if (w.aw_first >= 0 && w.w_first >= 0) {
        if (w.aw_first < w.w_first) cov_.hit("aw_before_w");
        else if (w.w_first < w.aw_first) cov_.hit("w_before_aw");
        else cov_.hit("aw_w_same_cycle");
        if (w.aw_first + 3 <= w.w_first) cov_.hit("aw_3_cycles_before_w");
        if (w.w_first + 3 <= w.aw_first) cov_.hit("w_3_cycles_before_aw");
      }
      if (w.strb != 0xF) cov_.hit("partial_strobe_write");
      if (ar_hs && (hs.ar_addr & 0xFFFC) == (w.addr & 0xFFFC)) cov_.hit("read_write_same_reg_same_cycle");
      write_model(w);
    }
    tick();  // (the master lowers the valids of this edge's handshakes in the next cycle's drive)
  }

  void check_state() {
    if (top_->mac_o != mac_) fail("mac_o 0x" + hex(top_->mac_o) + " expected 0x" + hex(mac_));
    if (top_->ip_o != ip_) fail("ip_o");
    if (top_->enable_o != enable_) fail("enable_o");
    if (top_->async_cq_o != async_) fail("async_cq_o");
    for (unsigned i = 0; i < 32; ++i)
      if (top_->cmd_args_o[i] != args_[i]) {
        fail("cmd_args_o[" + std::to_string(i) + "] = 0x" + hex(top_->cmd_args_o[i]) + ", expected 0x" + hex(args_[i]));
        break;
      }
    if (top_->cmd_valid_o != exp_cmd_) fail(std::string("cmd_valid_o ") + (exp_cmd_ ? "missing" : "unexpected"));
    if (top_->cmd_op_o != exp_cmd_op_ || top_->cmd_idx_o != exp_cmd_idx_) fail("cmd_op_o/cmd_idx_o");
    if (top_->db_valid_o != exp_db_) fail(std::string("db_valid_o ") + (exp_db_ ? "missing" : "unexpected"));
    if (exp_db_ && (top_->db_type_o != exp_db_type_ || top_->db_idx_o != exp_db_idx_ || top_->db_val_o != exp_db_val_))
      fail("doorbell type/idx/val " + std::to_string(top_->db_type_o) + "/" + std::to_string(top_->db_idx_o) + "/0x" +
           hex(top_->db_val_o) + ", expected " + std::to_string(exp_db_type_) + "/" + std::to_string(exp_db_idx_) + "/0x" +
           hex(exp_db_val_));
  }

  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtmnic_axil_regs> top_;
  std::mt19937_64 rng_;
  Knobs k_;
  AxilMaster axil_;
  Coverage& cov_;
  struct Rd {
    uint16_t addr;
    uint32_t val;
    bool ready;  // val known (a statistics read: once its request was taken)
  };
  std::deque<Rd> rd_q_;
  int st_req_idx_ = -1;  // statistics word the outstanding request must carry
  bool st_req_tm_ = false;
  uint64_t st_due_ = 0;  // cycle of the statistics answer (0: none)
  uint32_t st_val_ = 0;
  uint64_t mac_ = 0;
  uint32_t ip_ = 0, enable_ = 0, async_ = 0;
  std::array<uint32_t, 32> args_{}, rb_args_{};
  uint32_t stats_[hw::stat::COUNT] = {};
  uint32_t tm_stats_[kNumSrq * hw::tmstat::COUNT] = {};
  uint32_t tm_place_ = 0;
  bool busy_in_ = false, err_in_ = false, rb_now_ = false;
  bool exp_db_ = false, exp_cmd_ = false, b_hold_ = false, r_hold_ = false;
  uint32_t exp_db_type_ = 0, exp_db_idx_ = 0, exp_db_val_ = 0, exp_cmd_op_ = 0, exp_cmd_idx_ = 0, r_data_ = 0;
  uint64_t cycles_ = 0, generated_ = 0, writes_done_ = 0, b_count_ = 0, reads_checked_ = 0;
  unsigned errors_ = 0;
};

Coverage make_cov() {
  return Coverage({"aw_before_w", "w_before_aw", "aw_w_same_cycle", "aw_3_cycles_before_w", "w_3_cycles_before_aw",
                   "b_backpressure", "r_backpressure", "ar_stall", "write_held_by_pending_b", "write_held_by_db_ready", "doorbell_sq", "doorbell_rq",
                   "doorbell_srq", "doorbell_cq", "doorbell_tm", "doorbell_last_index", "cmd_strobe", "cmd_dropped_while_busy",
                   "write_ignored", "read_stats", "read_tm_stats", "stats_request_stalled", "stats_answer_delayed", "read_tm_place", "read_cmd_status", "addr_low_bits_set", "partial_strobe_write",
                   "arg_write_same_cycle_as_readback", "read_write_same_reg_same_cycle"});
}

TEST(AxilRegs, RandomAccessesIndependentChannels) {
  Coverage cov = make_cov();
  const Knobs mixes[] = {
      {0.5, 0.5, 0.5, 0.5, 0.5, 0.6},   // everything random
      {0.0, 0.8, 0.3, 0.9, 0.9, 0.8},   // AW early, W late
      {0.8, 0.0, 0.3, 0.9, 0.9, 0.8},   // W early, AW late
      {0.0, 0.0, 0.0, 1.0, 1.0, 0.5},   // back to back
      {0.2, 0.2, 0.2, 0.2, 0.2, 0.5},   // slow master responses
  };
  uint64_t cyc = 0, n = 0;
  double secs = 0;
  for (uint64_t seed : seeds({1, 2, 3}))
    for (const Knobs& k : mixes) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      AxilBench b(seed, k, cov);
      Stopwatch sw;
      b.run(30000, 1500000);
      secs += sw.seconds();
      cyc += b.cycles();
      n += b.transactions();
      if (HasFatalFailure()) return;
    }
  report_speed("axil_regs", "busy", cyc, secs);
  std::printf("[axil_regs] %llu transactions\n", (unsigned long long)n);
  cov.report("axil_regs");
}

TEST(AxilRegs, IdleSpeed) {
  Coverage cov = make_cov();
  AxilBench b(1, {1, 1, 1, 1, 1, 0.5}, cov);
  Stopwatch sw;
  b.idle(300000);
  report_speed("axil_regs", "idle", b.cycles(), sw.seconds());
}

}  // namespace
