// Receive WQE source of the responder: where the WQE that a message lands in comes from.
//   - A QP's own receive queue: the caller names the ring and the index (it keeps the QP's
//     consumer index in its QP table; the flush path reads the same way).
//   - An SRQ: this block keeps every SRQ's producer index (doorbells) and consumer index, tells
//     whether SRQ srq_i has a WQE posted and not taken (avail_o) and which one is next (ci_o); a
//     fetch from the SRQ takes that WQE (ci + 1 in the request cycle). Reconfiguring an SRQ zeroes
//     both indices.
//   - A matched tag's buffer (TM-SRQ): {lkey, length, addr} loaded with tb_ld_i stands in for the
//     WQE as one SGE with wr_id 0, until the next fetch.
// WQEs are read by tmnic_wqe_fetch (one at a time); the WQE's fields are valid from the cycle after
// last_o until the next request. The caller issues a request only while no fetch is in flight
// (it waits for last_o; asserted by the fetcher).
// The per-SRQ indices are flip-flops: NUM_SRQ is small (16), and a doorbell, a fetch and a reset
// may touch three different SRQs in one cycle.
module tmnic_rq_src import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_SRQ = 16,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned NSGE = WQE_MAX_SGE
) (
  input  logic clk_i,
  input  logic rst_ni,

  // SRQ doorbells (producer index of SRQ db_idx_i; others than 0..NUM_SRQ-1 are ignored) and
  // reconfiguration
  input  logic             db_i,
  input  logic [11:0]      db_idx_i,
  input  logic [15:0]      db_pi_i,
  input  logic             srq_reset_i,
  input  logic [15:0]      srq_reset_idx_i,

  // SRQ srq_i: a WQE is posted and not taken, and the index of the next one
  input  logic [SRQ_W-1:0] srq_i,
  output logic             avail_o,
  output logic [15:0]      ci_o,

  // Fetch: the next WQE of SRQ srq_i (req_srq_i) or WQE req_idx_i of the ring {req_base_i,
  // req_log_i}; an SRQ's ring is also named by the caller (from the SRQ's configuration)
  input  logic             req_i,
  input  logic             req_srq_i,
  input  logic [63:0]      req_base_i,
  input  logic [4:0]       req_log_i,
  input  logic [15:0]      req_idx_i,
  input  logic             tb_ld_i,
  input  logic [127:0]     tb_sge_i,

  output logic             last_o,             // the fetched WQE is complete at this cycle's edge
  output logic [63:0]      wrid_o,
  output logic [7:0]       nsge_o,
  output sge_t [NSGE-1:0]  sges_o,

  // DMA read client
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic               rsp_last_i
);
  if ((NUM_SRQ & (NUM_SRQ - 1)) != 0 || NUM_SRQ < 2 || NUM_SRQ > 4096) begin : g_chk
    $fatal(1, "tmnic_rq_src: NUM_SRQ must be a power of two in 2..4096");
  end

  logic [NUM_SRQ-1:0][15:0] pi_q, ci_q;
  logic                     from_tb_q;
  logic [127:0]             tb_q;

  assign avail_o = ci_q[srq_i] != pi_q[srq_i];
  assign ci_o = ci_q[srq_i];

  logic [WQE_STRIDE*8-1:0] wqe;
  logic                    ready;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [1:0]              n;                 // (always one WQE)
  /* verilator lint_on UNUSEDSIGNAL */
  tmnic_wqe_fetch #(.DATA_W(DATA_W), .STRIDE(WQE_STRIDE), .BATCH(1)) u_fetch (
    .clk_i, .rst_ni,
    .req_valid_i(req_i), .req_ready_o(ready), .req_base_i, .req_log_i,
    .req_idx_i(req_srq_i ? ci_q[srq_i] : req_idx_i), .req_count_i(16'd1), .n_o(n),
    .rd_addr_o, .rd_len_o, .rd_valid_o, .rd_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_off_i, .rsp_last_i,
    .last_o, .sel_i(1'b0), .wqe_o(wqe));

  always_comb begin
    wrid_o = from_tb_q ? 64'd0 : wqe[WQE_WR_ID_OFF*8 +: 64];
    nsge_o = from_tb_q ? 8'd1 : wqe[WQE_NUM_SGE_OFF*8 +: 8];
    for (int k = 0; k < int'(NSGE); k++) sges_o[k] = sge_t'(wqe[WQE_SGE_OFF*8 + 128*k +: 128]);
    if (from_tb_q) sges_o[0] = sge_t'(tb_q);
  end

  wire             db_ok = db_i && db_idx_i < 12'(NUM_SRQ);
  wire             rst_ok = srq_reset_i && srq_reset_idx_i < 16'(NUM_SRQ);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pi_q <= '0;
      ci_q <= '0;
      from_tb_q <= 1'b0;
    end else begin
      if (db_ok) pi_q[db_idx_i[SRQ_W-1:0]] <= db_pi_i;
      if (req_i && req_srq_i) ci_q[srq_i] <= ci_q[srq_i] + 16'd1;
      if (rst_ok) begin
        pi_q[srq_reset_idx_i[SRQ_W-1:0]] <= '0;
        ci_q[srq_reset_idx_i[SRQ_W-1:0]] <= '0;
      end
      from_tb_q <= tb_ld_i || (from_tb_q && !req_i);   // a fetched WQE replaces the tag buffer
    end
  end
  always_ff @(posedge clk_i) if (tb_ld_i) tb_q <= tb_sge_i;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_req_ready: assert property (@(posedge clk_i) disable iff (!chk_q) req_i |-> ready)
    else $error("tmnic_rq_src: fetch requested while one is in flight");
  a_tb_not_req: assert property (@(posedge clk_i) disable iff (!chk_q) !(tb_ld_i && req_i))
    else $error("tmnic_rq_src: tag buffer loaded in the cycle of a fetch request");
`endif
endmodule
