#include "nic/nic_sim.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "Vtmnic_top.h"
#include "lib/axi_mem.hpp"
#include "lib/bits.hpp"
#include "verilated.h"
#if TMNIC_SIM_TRACE
#include "verilated_fst_c.h"
#endif

namespace tmnic::sim {

namespace {
// Bytes per beat (tmnic_top DATA_W / 8): the width of the model's ports, whatever -GDATA_W it was
// Verilated with. Every DMA and MAC port has it.
constexpr int kBeat = int(tb::wide_bytes_v<decltype(Vtmnic_top::m_axis_tx_tdata_o)>);
static_assert(kBeat == int(tb::wide_bytes_v<decltype(Vtmnic_top::s_axis_rx_tdata_i)>) &&
              kBeat == int(tb::wide_bytes_v<decltype(Vtmnic_top::m_axi_rdata_i)>) &&
              kBeat == int(tb::wide_bytes_v<decltype(Vtmnic_top::m_axi_wdata_o)>),
              "tmnic_top's DMA and MAC ports have one width");
static_assert(kBeat >= 32 && kBeat <= 64, "the beat fits the strobe and keep masks (64 lanes)");
constexpr uint32_t kMaxReadBursts = 32;
// One FST sample (no-op without waveforms, or in a model built without tracing).
void dump_waves(VerilatedFstC* t, uint64_t time) {
#if TMNIC_SIM_TRACE
  if (t) t->dump(time);
#else
  (void)t;
  (void)time;
#endif
}
}  // namespace

class NicSim::Dma : public tb::AxiMem<kBeat, Iommu> {
 public:
  using AxiMem::AxiMem;
};

unsigned NicSim::beat_bytes() { return kBeat; }

NicSim::NicSim(int index, const SimConfig& cfg)
    : index_(index), cfg_(cfg), ctx_(std::make_unique<VerilatedContext>()), rng_(cfg.seed + 7919u * index),
      dma_(std::make_unique<Dma>(iommu_)) {
  ctx_->traceEverOn(!cfg.waves_prefix.empty());
  top_ = std::make_unique<Vtmnic_top>(ctx_.get(), ("nic" + std::to_string(index)).c_str());
  if (!cfg.waves_prefix.empty()) {
#if TMNIC_SIM_TRACE
    trace_ = {new VerilatedFstC, [](VerilatedFstC* t) { t->close(); delete t; }};
    top_->trace(trace_.get(), 99);
    trace_->open((cfg.waves_prefix + std::to_string(index) + ".fst").c_str());
#else
    // TMNIC_WAVES is read by every simulation in the process; say so instead of failing.
    std::fprintf(stderr, "tmnic: nic%d: no waveforms, this NIC model was built without tracing "
                 "(tmnic_nic_model NO_TRACE)\n", index);
#endif
  }
  rd_bpc_ = wr_bpc_ = cfg.bytes_per_cycle(cfg.pcie_gbyte_s);
  tx_bpc_ = cfg.bytes_per_cycle(cfg.line_gbit_s / 8.0);
  // Reset for a few cycles.
  top_->rst_ni = 0;
  top_->clk_i = 0;
  top_->eval();
  for (int i = 0; i < 4; i++) {
    top_->clk_i = 1; top_->eval();
    top_->clk_i = 0; top_->eval();
  }
  top_->rst_ni = 1;
  top_->eval();
}

NicSim::~NicSim() {
  trace_.reset();  // close the waveform file before the model's final()
  top_->final();
}

void NicSim::mmio_write(uint32_t off, uint32_t val, uint64_t now) {
  mmio_q_.push_back({true, off, val, now + cfg_.cycles(cfg_.mmio_write_ns), 0});
  mmio_issued_++;
}

uint64_t NicSim::mmio_read_start(uint32_t off, uint64_t now) {
  uint64_t t = next_ticket_++;
  mmio_q_.push_back({false, off, 0, now + cfg_.cycles(cfg_.mmio_read_ns / 2), t});
  mmio_issued_++;
  return t;
}

bool NicSim::mmio_read_result(uint64_t ticket, uint64_t now, uint32_t* val) {
  for (auto it = read_results_.begin(); it != read_results_.end(); ++it) {
    if (it->first == ticket && it->second.second <= now) {
      *val = it->second.first;
      read_results_.erase(it);
      return true;
    }
  }
  return false;
}

void NicSim::rx_frame(std::vector<uint8_t> frame, uint64_t at) { rx_q_.push_back({std::move(frame), at}); }

bool NicSim::quiet() const {
  return top_->idle_o && !mmio_busy_ && dma_->idle() && tx_frame_.empty() && (rx_q_.empty() || rx_off_ == 0) && read_results_.empty();
}

uint64_t NicSim::next_event() const {
  uint64_t t = top_->wake_at_o;
  if (!mmio_q_.empty()) t = std::min(t, mmio_q_.front().due);
  if (!rx_q_.empty()) t = std::min(t, rx_q_.front().arrival);
  t = std::min(t, dma_->next_due());
  for (auto& r : read_results_) t = std::min(t, r.second.second);
  if (!irq_q_.empty()) t = std::min(t, irq_q_.front().first);
  return t;
}

void NicSim::drive_inputs(uint64_t now) {
  Vtmnic_top& t = *top_;
  t.now_i = now;
  // Credits accumulate per cycle; skipped idle cycles only saturate them.
  uint64_t dt = now > last_now_ ? now - last_now_ : 1;
  last_now_ = now;
  rd_credit_ = std::min(rd_credit_ + rd_bpc_ * dt, 4.0 * kBeat);
  wr_credit_ = std::min(wr_credit_ + wr_bpc_ * dt, 4.0 * kBeat);
  tx_credit_ = std::min(tx_credit_ + tx_bpc_ * dt, 4.0 * kBeat);

  // Posted DMA writes become visible in host memory in order. The write response of a burst is due
  // when its last beat is in host memory: a NIC that has its B responses knows its writes are
  // visible (what the context's busy bit relies on before memory is freed).
  writes_applied_ += dma_->apply_writes(now, [&](uint64_t a) { log(now, Ev::kDmaWrite, a); });
  while (!irq_q_.empty() && irq_q_.front().first <= now) {
    irqs_++;
    if (on_irq) on_irq(irq_q_.front().second);
    irq_q_.pop_front();
  }

  // BAR0: one AXI-Lite transaction at a time, in order (reads do not pass posted writes).
  if (!mmio_busy_ && !mmio_q_.empty() && mmio_q_.front().due <= now) {
    mmio_busy_ = true;
    const Mmio& m = mmio_q_.front();
    if (m.write)
      bar_.write(m.off & 0xFFFF, m.val, 0xF);
    else
      bar_.read(m.off & 0xFFFF);
  }
  bar_.drive(t, now);

  // DMA read data: the oldest burst whose latency has elapsed, paced by the link bandwidth.
  t.m_axi_arready_i = dma_->rd_bursts() < kMaxReadBursts;
  t.m_axi_rvalid_i = 0;
  if (dma_->r_due(now) && rd_credit_ >= kBeat) {
    if (!dma_->r_mid_burst()) log(now, Ev::kDmaReadData, dma_->r_front().addr);
    dma_->r_beat(t.m_axi_rdata_i, t.m_axi_rlast_i);
    t.m_axi_rvalid_i = 1;
  }
  // DMA writes: accepted at link bandwidth once their address is known.
  t.m_axi_awready_i = 1;
  t.m_axi_wready_i = dma_->w_has_aw() && wr_credit_ >= kBeat;
  t.m_axi_bvalid_i = dma_->b_valid(now);

  // MAC RX
  t.s_axis_rx_tvalid_i = 0;
  if (!rx_q_.empty() && rx_q_.front().arrival <= now) {
    const auto& f = rx_q_.front().bytes;
    uint8_t beat[kBeat] = {};
    size_t n = std::min<size_t>(kBeat, f.size() - rx_off_);
    std::memcpy(beat, f.data() + rx_off_, n);
    tb::put_beat<kBeat>(t.s_axis_rx_tdata_i, beat);
    t.s_axis_rx_tkeep_i = static_cast<std::remove_reference_t<decltype(t.s_axis_rx_tkeep_i)>>(tb::mask64(unsigned(n)));
    t.s_axis_rx_tlast_i = (rx_off_ + n == f.size());
    t.s_axis_rx_tvalid_i = 1;
  }
  // MAC TX at line rate
  t.m_axis_tx_tready_i = tx_credit_ >= kBeat;
}

void NicSim::tick(uint64_t now) {
  drive_inputs(now);
  Vtmnic_top& t = *top_;
  t.clk_i = 0;
  t.eval();
  dump_waves(trace_.get(), 2 * now);

  // Sample every handshake before the rising edge.
  const tb::AxilMaster::Hs axil = bar_.sample(t);
  bool ar = t.m_axi_arvalid_o && t.m_axi_arready_i;
  uint64_t ar_addr = t.m_axi_araddr_o;
  uint32_t ar_len = t.m_axi_arlen_o;
  bool r = t.m_axi_rvalid_i && t.m_axi_rready_o;
  bool aw = t.m_axi_awvalid_o && t.m_axi_awready_i;
  uint64_t aw_addr = t.m_axi_awaddr_o;
  uint32_t aw_len = t.m_axi_awlen_o;
  bool w = t.m_axi_wvalid_o && t.m_axi_wready_i;
  bool b = t.m_axi_bvalid_i && t.m_axi_bready_o;
  bool rx = t.s_axis_rx_tvalid_i && t.s_axis_rx_tready_o;
  bool tx = t.m_axis_tx_tvalid_o && t.m_axis_tx_tready_i;
  if (w) {
    const uint64_t visible = now + cfg_.cycles(cfg_.dma_write_ns);
    if (dma_->w(t.m_axi_wdata_o, t.m_axi_wstrb_o, t.m_axi_wlast_o, visible)) dma_->b_push(visible);
    if (!dma_->ok()) throw std::runtime_error("tmnic sim: AXI " + dma_->errors());
    wr_credit_ -= kBeat;
  }
  if (tx) {
    if (tx_frame_.empty()) log(now, Ev::kTxFrame);
    uint8_t beat[kBeat];
    tb::take_beat<kBeat>(t.m_axis_tx_tdata_o, beat);
    uint64_t keep = t.m_axis_tx_tkeep_o;
    int n = 0;
    while (n < kBeat && ((keep >> n) & 1)) n++;
    tx_frame_.insert(tx_frame_.end(), beat, beat + n);
    tx_credit_ -= kBeat;
    if (t.m_axis_tx_tlast_o) {
      std::vector<uint8_t> f;
      f.swap(tx_frame_);
      if (on_tx) on_tx(std::move(f));
    }
  }

  t.clk_i = 1;
  t.eval();
  dump_waves(trace_.get(), 2 * now + 1);
  // irq_o is a one-cycle pulse from a register: seen right after the edge that raises it, since
  // the NIC may be idle (and the next cycles skipped) from then on. The interrupt is a posted write
  // (MSI-X) behind the CQE's: it reaches the host as late as a DMA write issued now would, so after
  // the CQE (the cq writer raises it when the CQE's last beat has left; drive_inputs delivers it).
  if (t.irq_o) irq_q_.push_back({now + cfg_.cycles(cfg_.dma_write_ns), uint32_t(t.irq_cq_o)});

  // Apply the transfers to the host-side models.
  if (mmio_busy_) {
    Mmio& m = mmio_q_.front();
    if (m.write) {
      if (axil.w) log(now, Ev::kMmioWrite, m.off);
      if (axil.b) {   // the write response ends the transaction
        mmio_q_.pop_front();
        mmio_busy_ = false;
        mmio_done_++;
      }
    } else {
      if (axil.r) {
        read_results_.push_back({m.ticket, {axil.rdata, now + cfg_.cycles(cfg_.mmio_read_ns / 2)}});
        mmio_q_.pop_front();
        mmio_busy_ = false;
        mmio_done_++;
      }
    }
  }
  if (ar) {
    log(now, Ev::kDmaReadReq, ar_addr);
    uint64_t jitter = cfg_.jitter_cycles ? rng_() % (cfg_.jitter_cycles + 1) : 0;
    dma_->ar(ar_addr, ar_len, now + cfg_.cycles(cfg_.dma_read_ns) + jitter);
  }
  if (r) {
    rd_credit_ -= kBeat;
    dma_->r_taken();
  }
  if (aw) dma_->aw(aw_addr, aw_len);
  if (b) dma_->b_taken();
  if (rx) {
    if (rx_off_ == 0) log(now, Ev::kRxFrame);
    rx_off_ += kBeat;
    if (rx_off_ >= rx_q_.front().bytes.size()) {
      rx_q_.pop_front();
      rx_off_ = 0;
    }
  }
}

}  // namespace tmnic::sim
