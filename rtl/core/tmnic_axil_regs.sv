// BAR0: AXI4-Lite slave with the control registers, the command mailbox, the statistics counters
// and the per-queue doorbell arrays (map in docs/hw-sw-interface.md, generated from hwif/spec.py).
// Doorbell writes become one-cycle events on the db_* channel; commands become one-cycle strobes.
module tmnic_axil_regs import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_BYTES_P = 64,
  parameter int unsigned CLK_MHZ_P = 250,
  parameter int unsigned NUM_QP_P = 64,
  parameter int unsigned NUM_CQ_P = 64,
  parameter int unsigned NUM_SRQ_P = 16,
  parameter int unsigned NUM_MR_P = 256,
  parameter int unsigned TM_ENTRIES_P = 1024,  // tag-matching engine entries (TM_MAX_TAGS)
  parameter logic [31:0] TM_CAPS_P = 32'd0,     // TM_CAPS register value
  parameter logic [31:0] OPS_CAPS_P = 32'd0,    // OPS_CAPS register value (what the engines execute)
  parameter logic [31:0] TM_GEOM_P = 32'd0      // TM_GEOM register value
) (
  input  logic clk_i,
  input  logic rst_ni,

  // AXI4-Lite slave (BAR0, 64 KiB, 32-bit data)
  input  logic [15:0] s_axil_awaddr_i,
  input  logic        s_axil_awvalid_i,
  output logic        s_axil_awready_o,
  input  logic [31:0] s_axil_wdata_i,
  input  logic [3:0]  s_axil_wstrb_i,
  input  logic        s_axil_wvalid_i,
  output logic        s_axil_wready_o,
  output logic [1:0]  s_axil_bresp_o,
  output logic        s_axil_bvalid_o,
  input  logic        s_axil_bready_i,
  input  logic [15:0] s_axil_araddr_i,
  input  logic        s_axil_arvalid_i,
  output logic        s_axil_arready_o,
  output logic [31:0] s_axil_rdata_o,
  output logic [1:0]  s_axil_rresp_o,
  output logic        s_axil_rvalid_o,
  input  logic        s_axil_rready_i,

  // Port configuration
  output logic [47:0] mac_o,
  output logic [31:0] ip_o,
  output logic        enable_o,
  output reg_async_cq_t async_cq_o,    // ASYNC_CQ: where asynchronous event records go

  // Command mailbox
  output logic                          cmd_valid_o,
  output logic [7:0]                    cmd_op_o,
  output logic [23:0]                   cmd_idx_o,
  output logic [NUM_CMD_ARGS-1:0][31:0] cmd_args_o,
  input  logic                          cmd_busy_i,
  input  logic                          cmd_err_i,
  input  logic                          rb_valid_i,   // QUERY result: overwrite the argument words
  input  logic [NUM_CMD_ARGS-1:0][31:0] rb_args_i,

  // Doorbells: type 0 SQ, 1 RQ, 2 SRQ, 3 CQ, 4 TM-SRQ list-op ring
  output logic        db_valid_o,
  output logic [2:0]  db_type_o,
  output logic [11:0] db_idx_o,
  output logic [31:0] db_val_o,
  input  logic        db_ready_i,   // the engines can take a doorbell in the cycle after a write

  // Statistics unit (tmnic_stats): read port for the STATS and TM_STATS windows
  output logic        st_rd_valid_o,
  input  logic        st_rd_ready_i,
  output logic        st_rd_tm_o,     // 0: STATS window, 1: TM_STATS window
  output logic [13:0] st_rd_idx_o,    // 32-bit word within the window
  input  logic        st_rsp_valid_i, // the answer, any number of cycles later
  input  logic [31:0] st_rsp_data_i,
  input  logic [31:0] tm_place_i   // TM_PLACE register value
);
  localparam int unsigned TMST_BYTES = NUM_SRQ_P * TM_STATS_STRIDE;
  if (TM_STATS_STRIDE != 4 * NUM_TM_STATS || 32'(REG_TM_STATS0) + TMST_BYTES > 32'h10000) begin : g_chk_tm
    $fatal(1, "tmnic_axil_regs: TM statistics window does not fit");
  end
  if (NUM_QP_P > 1024 || NUM_CQ_P > 1024 || NUM_SRQ_P > 1024) begin : g_chk
    $fatal(1, "tmnic_axil_regs: doorbell arrays hold at most 1024 queues each");
  end

  // Argument word index of a CMD_ARG register address.
  function automatic logic [4:0] arg_idx(input logic [15:0] a);
    arg_idx = 5'((a - REG_CMD_ARG0) >> 2);
  endfunction

  // ---------------------------------------------------------------- writes
  // A write waits while the engines' doorbell paths are full (their schedulers' set buffers): the
  // doorbell it may carry comes out one cycle later, and db_ready_i promises room for it then.
  wire wr_go = s_axil_awvalid_i && s_axil_wvalid_i && (!s_axil_bvalid_o || s_axil_bready_i) && db_ready_i;
  assign s_axil_awready_o = wr_go;
  assign s_axil_wready_o = wr_go;
  assign s_axil_bresp_o = 2'b00;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      s_axil_bvalid_o <= 1'b0;
      mac_o <= '0;
      ip_o <= '0;
      enable_o <= 1'b0;
      async_cq_o <= '0;
      cmd_valid_o <= 1'b0;
      cmd_op_o <= '0;
      cmd_idx_o <= '0;
      cmd_args_o <= '0;
      db_valid_o <= 1'b0;
      db_type_o <= '0;
      db_idx_o <= '0;
      db_val_o <= '0;
    end else begin
      cmd_valid_o <= 1'b0;
      db_valid_o <= 1'b0;
      if (s_axil_bvalid_o && s_axil_bready_i) s_axil_bvalid_o <= 1'b0;
      if (rb_valid_i) cmd_args_o <= rb_args_i;
      if (wr_go) begin
        logic [15:0] a;
        a = {s_axil_awaddr_i[15:2], 2'b00};
        s_axil_bvalid_o <= 1'b1;
        if (a >= REG_DB_SQ0 && a < REG_DB_TM0 + 16'h1000) begin
          db_valid_o <= 1'b1;
          db_type_o <= 3'(a[14:12] - 3'd1);
          db_idx_o <= {2'b00, a[11:2]};
          db_val_o <= s_axil_wdata_i;
        end else if (a >= REG_CMD_ARG0 && a < REG_CMD) begin
          cmd_args_o[arg_idx(a)] <= s_axil_wdata_i;
        end else begin
          unique case (a)
            REG_MAC_LO: mac_o[31:0] <= s_axil_wdata_i;
            REG_MAC_HI: mac_o[47:32] <= s_axil_wdata_i[15:0];
            REG_IPV4:   ip_o <= s_axil_wdata_i;
            REG_CTRL:   enable_o <= s_axil_wdata_i[0];
            REG_ASYNC_CQ: async_cq_o <= '{en: s_axil_wdata_i[31], rsvd16: '0, cq: s_axil_wdata_i[15:0]};
            REG_CMD: begin
              cmd_valid_o <= !cmd_busy_i;
              cmd_op_o <= s_axil_wdata_i[7:0];
              cmd_idx_o <= s_axil_wdata_i[31:8];
            end
            default: ;  // writes to read-only or unmapped registers are ignored
          endcase
        end
      end
    end
  end

  // ---------------------------------------------------------------- reads
  // One read at a time (AXI4-Lite reads are rare control accesses). A register, argument or
  // constant is read in two registered stages: stage 1 (at the AR handshake) takes the addressed
  // word of each group into its own register, so the values are those of the handshake cycle, and
  // stage 2 picks the group. A statistics word is a request to tmnic_stats (registered at the
  // handshake) whose answer becomes the read data.
  typedef enum logic {G_ARG, G_REG} rgrp_e;
  logic  r1_q, r1_d;                     // stage 1 holds a read
  logic  st_req_d, st_wait_q, st_wait_d; // statistics read requested / waiting for its answer
  logic  st_tm_d;
  logic [13:0] st_idx_d;
  logic  rvalid_d;
  rgrp_e grp_q, grp_d;
  logic [31:0] arg_q, arg_d, reg_q, reg_d, rdata_d;
  wire rd_go = s_axil_arvalid_i && !r1_q && !s_axil_rvalid_o && !st_rd_valid_o && !st_wait_q;
  assign s_axil_arready_o = rd_go;
  assign s_axil_rresp_o = 2'b00;

  wire [15:0] ra = {s_axil_araddr_i[15:2], 2'b00};
  wire ra_stat = ra >= REG_STATS0 && ra < REG_STATS0 + 16'(4 * NUM_STATS);
  wire ra_tmst = ra >= REG_TM_STATS0 && 32'(ra) < 32'(REG_TM_STATS0) + TMST_BYTES;
  always_comb begin
    r1_d = rd_go && !ra_stat && !ra_tmst;
    st_req_d = (st_rd_valid_o && !st_rd_ready_i) || (rd_go && (ra_stat || ra_tmst));
    st_wait_d = (st_wait_q && !st_rsp_valid_i) || (st_rd_valid_o && st_rd_ready_i);
    st_tm_d = st_rd_tm_o;
    st_idx_d = st_rd_idx_o;
    grp_d = grp_q; arg_d = arg_q; reg_d = reg_q;
    if (rd_go) begin
      st_tm_d = ra_tmst;
      st_idx_d = ra_tmst ? 14'((ra - REG_TM_STATS0) >> 2) : 14'((ra - REG_STATS0) >> 2);
      grp_d = (ra >= REG_CMD_ARG0 && ra < REG_CMD) ? G_ARG : G_REG;
      arg_d = cmd_args_o[arg_idx(ra)];
      unique case (ra)
        REG_ID:            reg_d = DEVICE_ID;
        REG_ABI_VERSION:   reg_d = ABI_VERSION;
        REG_DATA_BYTES:    reg_d = 32'(DATA_BYTES_P);
        REG_CLK_MHZ:       reg_d = 32'(CLK_MHZ_P);
        REG_NUM_QP:        reg_d = 32'(NUM_QP_P);
        REG_NUM_CQ:        reg_d = 32'(NUM_CQ_P);
        REG_NUM_SRQ:       reg_d = 32'(NUM_SRQ_P);
        REG_NUM_MR:        reg_d = 32'(NUM_MR_P);
        REG_MAX_SGE:       reg_d = 32'(WQE_MAX_SGE);
        REG_WQE_STRIDE:    reg_d = 32'(WQE_STRIDE);
        REG_CQE_SIZE:      reg_d = 32'(CQE_SIZE);
        REG_MAX_LOG_QUEUE: reg_d = 32'(MAX_LOG_QUEUE);
        REG_TM_MAX_TAGS:   reg_d = 32'(TM_ENTRIES_P);
        REG_TM_CAPS:       reg_d = TM_CAPS_P;
        REG_OPS_CAPS:      reg_d = OPS_CAPS_P;
        REG_TM_GEOM:       reg_d = TM_GEOM_P;
        REG_TM_PLACE:      reg_d = tm_place_i;
        REG_MAC_LO:        reg_d = mac_o[31:0];
        REG_MAC_HI:        reg_d = {16'd0, mac_o[47:32]};
        REG_IPV4:          reg_d = ip_o;
        REG_CTRL:          reg_d = {31'd0, enable_o};
        REG_ASYNC_CQ:      reg_d = 32'(async_cq_o);
        REG_CMD_STATUS:    reg_d = {30'd0, cmd_err_i, cmd_busy_i};
        default:           reg_d = 32'd0;
      endcase
    end
    rvalid_d = (s_axil_rvalid_o && !s_axil_rready_i) || r1_q || (st_wait_q && st_rsp_valid_i);
    rdata_d = s_axil_rdata_o;
    if (r1_q) rdata_d = (grp_q == G_ARG) ? arg_q : reg_q;
    if (st_wait_q && st_rsp_valid_i) rdata_d = st_rsp_data_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r1_q <= 1'b0;
      st_rd_valid_o <= 1'b0;
      st_wait_q <= 1'b0;
      s_axil_rvalid_o <= 1'b0;
    end else begin
      r1_q <= r1_d;
      st_rd_valid_o <= st_req_d;
      st_wait_q <= st_wait_d;
      s_axil_rvalid_o <= rvalid_d;
    end
  end
  always_ff @(posedge clk_i) begin
    grp_q <= grp_d; arg_q <= arg_d; reg_q <= reg_d;
    st_rd_tm_o <= st_tm_d; st_rd_idx_o <= st_idx_d;
    s_axil_rdata_o <= rdata_d;
  end

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_st_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
    st_rd_valid_o && !st_rd_ready_i |=> st_rd_valid_o && $stable({st_rd_tm_o, st_rd_idx_o}))
    else $error("tmnic_axil_regs: statistics request dropped or changed before it was taken");
  a_st_rsp: assert property (@(posedge clk_i) disable iff (!chk_q) st_rsp_valid_i |-> st_wait_q)
    else $error("tmnic_axil_regs: statistics answer with no read waiting");
  a_r_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
    s_axil_rvalid_o && !s_axil_rready_i |=> s_axil_rvalid_o && $stable(s_axil_rdata_o))
    else $error("tmnic_axil_regs: read data dropped or changed before it was taken");
`endif

  // wstrb is ignored: every register is written as a whole 32-bit word (documented).
  // Byte lanes below 4 select inside a register; accesses are whole words.
  wire unused_ok = ^{s_axil_wstrb_i, s_axil_awaddr_i[1:0], s_axil_araddr_i[1:0]};
endmodule
