// Producer-index table of a queue engine: one 16-bit word per queue, written by doorbells and
// zeroed by a queue initialisation, read by the engine through a registered read port
// (tmnic_ram_sdp, one write port).
//
// An initialisation wins the write port; a doorbell arriving in the same cycle waits one cycle in
// a holding register and is written then (so a doorbell never gets lost behind an init, and a
// doorbell for the queue being initialised lands after the zero). One holding register is enough
// unless an init comes while a doorbell is held and another arrives: a hold outlives its init only
// while doorbells come every cycle, and inits are paced by commands (tens of cycles apart). An
// assertion checks it.
module tmnic_pi_tab #(
  parameter int unsigned N = 64,           // queues, >= 2
  localparam int unsigned IDX_W = $clog2(N)
) (
  input  logic             clk_i,
  input  logic             rst_ni,

  input  logic             db_i,           // doorbell: queue db_idx_i's producer index is db_pi_i
  input  logic [IDX_W-1:0] db_idx_i,
  input  logic [15:0]      db_pi_i,
  input  logic             init_i,         // queue init_idx_i's producer index becomes 0
  input  logic [IDX_W-1:0] init_idx_i,

  input  logic             re_i,           // read port: rdata_o one cycle after re_i
  input  logic [IDX_W-1:0] raddr_i,
  output logic [15:0]      rdata_o,

  output logic             hold_o          // a doorbell is waiting to be written
);
  if (N < 2) begin : g_chk_n
    $fatal(1, "tmnic_pi_tab: N must be >= 2");
  end

  logic             hold_q, hold_d;
  logic [IDX_W-1:0] hold_idx_q, hold_idx_d;
  logic [15:0]      hold_pi_q, hold_pi_d;
  logic             we;
  logic [IDX_W-1:0] waddr;
  logic [15:0]      wdata;

  tmnic_ram_sdp #(.WIDTH(16), .DEPTH(N)) u_ram (
    .clk_i, .we_i(we), .waddr_i(waddr), .wdata_i(wdata),
    .re_i, .raddr_i, .rdata_o);

  always_comb begin
    hold_d = 1'b0;
    hold_idx_d = hold_idx_q;
    hold_pi_d = hold_pi_q;
    we = 1'b1;
    waddr = db_idx_i;
    wdata = db_pi_i;
    if (init_i) begin
      waddr = init_idx_i;
      wdata = '0;
      hold_d = hold_q;
      if (db_i) begin hold_d = 1'b1; hold_idx_d = db_idx_i; hold_pi_d = db_pi_i; end
    end else if (hold_q) begin
      waddr = hold_idx_q;
      wdata = hold_pi_q;
      if (db_i) begin hold_d = 1'b1; hold_idx_d = db_idx_i; hold_pi_d = db_pi_i; end
    end else begin
      we = db_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) hold_q <= 1'b0;
    else         hold_q <= hold_d;
  end

  always_ff @(posedge clk_i) begin
    hold_idx_q <= hold_idx_d;
    hold_pi_q <= hold_pi_d;
  end

  assign hold_o = hold_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_db_lost: assert property (@(posedge clk_i) disable iff (!chk_q) !(init_i && hold_q && db_i))
    else $error("tmnic_pi_tab: doorbell lost behind an init");
`endif
endmodule
