// Per-SRQ tag-matching statistics, readable through BAR0 (TM_STATS window, TMSTAT_* words):
// event counters (expected, unexpected, no-tag, syncs), the engine's live occupancy, its high-water
// mark, the disabled-entry count and the 16-bit phase counters. Reconfiguring an SRQ zeroes its
// counters and high-water mark. Counters change only on events, so their simulation cost follows
// activity; the engine's levels are sampled every cycle (a few bits per SRQ).
module tmnic_tm_stats import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned H_W = 10,           // engine handle width: levels are H_W+1 bits
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Events, each for one SRQ
  input  logic             exp_i,
  input  logic             unexp_i,
  input  logic             notag_i,
  input  logic [SRQ_W-1:0] rx_srq_i,        // SRQ of exp_i / unexp_i / notag_i
  input  logic             sync_i,
  input  logic [SRQ_W-1:0] sync_srq_i,
  input  logic             reset_i,         // SRQ reconfigured
  input  logic [15:0]      reset_idx_i,

  // Engine levels per SRQ
  input  logic [NUM_SRQ-1:0][H_W:0] occ_i,
  input  logic [NUM_SRQ-1:0][H_W:0] disabled_i,
  input  logic [NUM_SRQ-1:0][15:0]  hw_cnt_i,
  input  logic [NUM_SRQ-1:0][15:0]  sw_cnt_i,

  output logic [NUM_SRQ*NUM_TM_STATS-1:0][31:0] stats_o
);
  if (NUM_TM_STATS != 8 || H_W > 31 || (NUM_SRQ & (NUM_SRQ - 1)) != 0 || NUM_SRQ < 2) begin : g_chk
    $fatal(1, "tmnic_tm_stats: expects 8 statistics words per SRQ, H_W <= 31, NUM_SRQ a power of two >= 2");
  end

  logic [31:0] exp_q [NUM_SRQ];
  logic [31:0] unexp_q [NUM_SRQ];
  logic [31:0] notag_q [NUM_SRQ];
  logic [31:0] sync_q [NUM_SRQ];
  logic [H_W:0] hwm_q [NUM_SRQ];
  // After a reconfiguration the engine clears the SRQ's old entries a few cycles later: the
  // high-water mark restarts once the occupancy has been 0.
  logic [NUM_SRQ-1:0] hold_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int i = 0; i < NUM_SRQ; i++) begin
        exp_q[i] <= '0; unexp_q[i] <= '0; notag_q[i] <= '0; sync_q[i] <= '0; hwm_q[i] <= '0;
      end
      hold_q <= '0;
    end else begin
      if (exp_i) exp_q[rx_srq_i] <= exp_q[rx_srq_i] + 32'd1;
      if (unexp_i) unexp_q[rx_srq_i] <= unexp_q[rx_srq_i] + 32'd1;
      if (notag_i) notag_q[rx_srq_i] <= notag_q[rx_srq_i] + 32'd1;
      if (sync_i) sync_q[sync_srq_i] <= sync_q[sync_srq_i] + 32'd1;
      for (int i = 0; i < NUM_SRQ; i++) begin
        if (occ_i[i] == '0) hold_q[i] <= 1'b0;
        else if (!hold_q[i] && occ_i[i] > hwm_q[i]) hwm_q[i] <= occ_i[i];
      end
      if (reset_i && reset_idx_i < 16'(NUM_SRQ)) begin
        exp_q[reset_idx_i[SRQ_W-1:0]] <= '0;
        unexp_q[reset_idx_i[SRQ_W-1:0]] <= '0;
        notag_q[reset_idx_i[SRQ_W-1:0]] <= '0;
        sync_q[reset_idx_i[SRQ_W-1:0]] <= '0;
        hwm_q[reset_idx_i[SRQ_W-1:0]] <= '0;
        hold_q[reset_idx_i[SRQ_W-1:0]] <= 1'b1;
      end
    end
  end

  always_comb begin
    for (int i = 0; i < NUM_SRQ; i++) begin
      stats_o[i*NUM_TM_STATS + TMSTAT_EXPECTED] = exp_q[i];
      stats_o[i*NUM_TM_STATS + TMSTAT_UNEXPECTED] = unexp_q[i];
      stats_o[i*NUM_TM_STATS + TMSTAT_NO_TAG] = notag_q[i];
      stats_o[i*NUM_TM_STATS + TMSTAT_SYNCS] = sync_q[i];
      stats_o[i*NUM_TM_STATS + TMSTAT_OCCUPANCY] = 32'(occ_i[i]);
      stats_o[i*NUM_TM_STATS + TMSTAT_HIGH_WATER] = 32'(hwm_q[i]);
      stats_o[i*NUM_TM_STATS + TMSTAT_DISABLED] = 32'(disabled_i[i]);
      stats_o[i*NUM_TM_STATS + TMSTAT_PHASE] = {hw_cnt_i[i], sw_cnt_i[i]};
    end
  end
endmodule
