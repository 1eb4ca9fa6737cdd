// Context tables (QP configuration, memory regions, CQs, SRQs) and the command executor.
// Commands from the BAR mailbox write the tables in one cycle and broadcast "reset the dynamic
// state" events to the engines that own that state (send PSN and indices to the send engine,
// receive PSN and indices to the receive engine, CQ and SRQ indices to their owners).
// Engines may force a QP into the error state (err_*_i); a command wins over an engine in the same cycle.
// Tables are memories read through index ports: QP configuration, QP state and MR table in block
// RAM with registered write-first reads (tmnic_ram_rdports: a reader gives the next value of its
// index register), as are the CQ and SRQ tables. Each QP read port has
// its own table holding only the fields its engine reads (tmnic_pkg's qp_*_cfg_t views), all written
// by SET_QP: one wide copy per port would be seven times qp_cfg_t in block RAM, and its write bus
// fanning out to all of them did not route.
// QP state has four writers (commands, the send engine's and the receive engine's errors, the CQ
// writer's lost completions) and one RAM write port: a command writes at once; an engine error writes
// when the port is free, else waits in a one-entry slot per source, and every read port shows ERR for
// a QP whose error waits, so
// readers see exactly what a flip-flop table would. After reset the state RAM is swept to RESET
// (NUM_QP cycles, cmd_busy_o high, every read shows RESET meanwhile): software waits for busy to
// drop before its first command, as mlx5 waits for the firmware's initializing bit.
module tmnic_ctx import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_CQ = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NMR_RD = 2,     // MR read ports
  parameter int unsigned TM_ENTRIES = 0, // tag-matching engine entries (0: no TM-SRQ accepted)
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned CQ_W = $clog2(NUM_CQ),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Command mailbox
  input  logic                          cmd_valid_i,
  input  logic [7:0]                    cmd_op_i,
  input  logic [23:0]                   cmd_idx_i,
  input  logic [NUM_CMD_ARGS-1:0][31:0] cmd_args_i,
  output logic                          cmd_err_o,
  // Busy after a command until the engines and the DMA engines are quiet, so that software may
  // free memory that a reset QP or a disabled CQ/SRQ/MR used as soon as busy drops.
  output logic                          cmd_busy_o,
  input  logic                          quiet_i,
  output logic                          rb_valid_o,
  output logic [NUM_CMD_ARGS-1:0][31:0] rb_args_o,
  // QUERY_QP: the engines report the dynamic PSNs of query_qp_o one cycle later (registered reads);
  // the read-back lands then, and busy covers that cycle
  output logic [QP_W-1:0]               query_qp_o,
  input  logic [23:0]                   query_sq_psn_i,
  input  logic [23:0]                   query_rq_psn_i,

  // Tables: read ports. A port's word is the entry that its index named one cycle earlier
  // (registered block-RAM read, write-first).
  input  logic [QP_W-1:0]                req_qp_i,      // requester
  output qp_req_cfg_t                    req_cfg_o,
  input  logic [1:0][QP_W-1:0]           cmp_qp_i,      // completer (two ports)
  output qp_cmp_cfg_t [1:0]              cmp_cfg_o,
  input  logic [QP_W-1:0]                rsp_qp_i,      // responder
  output qp_rsp_cfg_t                    rsp_cfg_o,
  input  logic [QP_W-1:0]                ack_qp_i,      // ACK/NAK generator
  output qp_path_t                       ack_path_o,
  input  logic [QP_W-1:0]                rdr_qp_i,      // READ response engine
  output qp_path_t                       rdr_path_o,
  input  logic [QP_W-1:0]                cqe_qp_i,      // receive completions: the peer's QP number
  output logic [23:0]                    cqe_src_qp_o,
  input  logic [NMR_RD-1:0][MR_W-1:0]    mr_rd_idx_i,
  output mr_t [NMR_RD-1:0]               mr_rd_o,
  input  logic [CQ_W-1:0]                cq_rd_idx_i,
  output cq_cfg_t                        cq_rd_o,
  input  logic [SRQ_W-1:0]               srq_rd_idx_i,
  output srq_cfg_t                       srq_rd_o,
  input  logic [SRQ_W-1:0]               srq2_rd_idx_i,   // second SRQ port (list-op engine)
  output srq_cfg_t                       srq2_rd_o,

  // Dynamic-state (re)initialisation events
  output logic            init_sq_o,      // QP init_qp_o: send PSN := init_psn_o, indices := 0
  output logic            init_rq_o,      // QP init_qp_o: expected PSN := init_psn_o (rq), MSN, indices := 0
  output logic [QP_W-1:0] init_qp_o,
  output logic            qp_set_o,       // a SET_QP of init_qp_o was applied (state and tables)
  output logic [23:0]     init_sq_psn_o,
  output logic [23:0]     init_rq_psn_o,
  output logic            cq_reset_o,     // CQ cq_reset_idx_o: indices := 0 (not for a resize, SET_CQ.KEEP)
  output logic [15:0]     cq_reset_idx_o,
  output logic            srq_reset_o,    // SRQ srq_reset_idx_o: indices := 0
  output logic [15:0]     srq_reset_idx_o,

  // Engines moving a QP to the error state: each engine at most once every 3 cycles (asserted; the
  // state table's single write port serves commands, at most one per 3 cycles, and both engines)
  input  logic            err_sq_i,
  input  logic [QP_W-1:0] err_sq_qp_i,
  input  logic            err_rq_i,
  input  logic [QP_W-1:0] err_rq_qp_i,
  // The CQ writer: fat_qp_i lost a completion (its CQ in error): move it to ERR (a handshake: taken
  // when this source's waiting slot is free; nothing here waits on the CQ writer). It reads the
  // QP's state through its own port first (registered, as the engines' views), so that it reports
  // only QPs that are not in ERR yet. fat_o: the error was taken (an AEV_QP_FATAL record).
  input  logic            fat_valid_i,
  output logic            fat_ready_o,
  input  logic [QP_W-1:0] fat_qp_i,
  output logic            fat_o,
  output logic [QP_W-1:0] fat_qp_o,
  input  logic [QP_W-1:0] cqw_qp_i,
  output logic [2:0]      cqw_state_o,
  // MR table generation: moves with every SET_MR, in the cycle its entry changes. An engine that
  // keeps checked SGEs across packets (a READ's scatter list) checks them again when it moved.
  output logic [31:0]     mr_gen_o
);
  if ((NUM_QP & (NUM_QP - 1)) != 0 || NUM_QP < 4 || (NUM_MR & (NUM_MR - 1)) != 0 ||
      (NUM_CQ & (NUM_CQ - 1)) != 0 || (NUM_SRQ & (NUM_SRQ - 1)) != 0 || NUM_SRQ < 2 || NUM_CQ < 2) begin : g_chk
    $fatal(1, "tmnic_ctx: NUM_QP, NUM_MR, NUM_CQ, NUM_SRQ must be powers of two (NUM_QP >= 4, others >= 2)");
  end

  wire [QP_W-1:0] cmd_qp = cmd_idx_i[QP_W-1:0];   // the command's QP
  assign query_qp_o = cmd_qp;

  // Validity of MRs, CQs and SRQs: flip-flops with reset, read with the ports' registered indices;
  // the rest of those tables is plain memory (tmnic_ram_rdports, below).
  logic [NUM_MR-1:0]  mr_valid_q;
  logic [NUM_CQ-1:0]  cq_valid_q;
  logic [NUM_SRQ-1:0] srq_valid_q;
  logic     cq_we, srq_we;
  cq_cfg_t  cq_wdata, cq_rdata;
  srq_cfg_t srq_wdata;
  srq_cfg_t [1:0] srq_rdata;
  logic [CQ_W-1:0] cq_ridx_q;
  logic [1:0][SRQ_W-1:0] srq_ridx_q;
  tmnic_ram_rdports #(.WIDTH($bits(cq_cfg_t)), .DEPTH(NUM_CQ), .NRD(1)) u_cq_tab (
    .clk_i, .we_i(cq_we), .waddr_i(cmd_idx_i[CQ_W-1:0]), .wdata_i(cq_wdata),
    .raddr_i(cq_rd_idx_i), .raddr_q_o(cq_ridx_q), .rdata_o(cq_rdata));
  tmnic_ram_rdports #(.WIDTH($bits(srq_cfg_t)), .DEPTH(NUM_SRQ), .NRD(2)) u_srq_tab (
    .clk_i, .we_i(srq_we), .waddr_i(cmd_idx_i[SRQ_W-1:0]), .wdata_i(srq_wdata),
    .raddr_i({srq2_rd_idx_i, srq_rd_idx_i}), .raddr_q_o(srq_ridx_q), .rdata_o(srq_rdata));

  // QP configuration: a table per read port with that port's view less the state (the view's top
  // bits), tmnic_ram_rdports (write-first registered reads). MR table: one copy per read port of
  // mr_t; MR validity stays in flip-flops, read with the registered index.
  logic    qp_we, mr_we;
  qp_cfg_t qp_wdata;
  mr_t     mr_wdata;
  mr_t     [NMR_RD-1:0] mr_rdata;
  logic [NMR_RD-1:0][MR_W-1:0] mr_ridx_q;
  localparam int unsigned REQ_W = $bits(qp_req_cfg_t) - 3, CMP_W = $bits(qp_cmp_cfg_t) - 3,
                          RSP_W = $bits(qp_rsp_cfg_t) - 3;
  qp_req_cfg_t req_w;
  qp_cmp_cfg_t cmp_w;
  qp_rsp_cfg_t rsp_w;
  qp_path_t    path_w;
  logic [REQ_W-1:0] req_rd;
  logic [1:0][CMP_W-1:0] cmp_rd;
  logic [RSP_W-1:0] rsp_rd;
  assign path_w = '{dmac: qp_wdata.dmac, dest_ip: qp_wdata.dest_ip, dest_qpn: qp_wdata.dest_qpn,
                    tclass: qp_wdata.tclass, hop_limit: qp_wdata.hop_limit};
  assign req_w = '{state: '0, pd: qp_wdata.pd, sq_base: qp_wdata.sq_base, sq_log: qp_wdata.sq_log,
                   pmtu_log: qp_wdata.pmtu_log, ud: qp_wdata.ud, max_rd: qp_wdata.max_rd, path: path_w};
  assign cmp_w = '{state: '0, send_cq: qp_wdata.send_cq, rnr_retry: qp_wdata.rnr_retry,
                   retry_cnt: qp_wdata.retry_cnt, timeout: qp_wdata.timeout};
  assign rsp_w = '{state: '0, pd: qp_wdata.pd, recv_cq: qp_wdata.recv_cq, srq: qp_wdata.srq,
                   rq_base: qp_wdata.rq_base, rq_log: qp_wdata.rq_log, dest_ip: qp_wdata.dest_ip,
                   min_rnr_timer: qp_wdata.min_rnr_timer, rem_access: qp_wdata.rem_access,
                   ud: qp_wdata.ud, qkey: qp_wdata.qkey, pmtu_log: qp_wdata.pmtu_log,
                   sq_base: qp_wdata.sq_base, sq_log: qp_wdata.sq_log};
  // (the state has its own table)
  wire unused_qp_wdata = ^{qp_wdata.state, req_w.state, cmp_w.state, rsp_w.state};
  /* verilator lint_off PINCONNECTEMPTY */   // (the state table's ports give the registered indices)
  tmnic_ram_rdports #(.WIDTH(REQ_W), .DEPTH(NUM_QP), .NRD(1)) u_req_tab (
    .clk_i, .we_i(qp_we), .waddr_i(cmd_qp), .wdata_i(req_w[REQ_W-1:0]),
    .raddr_i(req_qp_i), .raddr_q_o(), .rdata_o(req_rd));
  tmnic_ram_rdports #(.WIDTH(CMP_W), .DEPTH(NUM_QP), .NRD(2)) u_cmp_tab (
    .clk_i, .we_i(qp_we), .waddr_i(cmd_qp), .wdata_i(cmp_w[CMP_W-1:0]),
    .raddr_i(cmp_qp_i), .raddr_q_o(), .rdata_o(cmp_rd));
  tmnic_ram_rdports #(.WIDTH(RSP_W), .DEPTH(NUM_QP), .NRD(1)) u_rsp_tab (
    .clk_i, .we_i(qp_we), .waddr_i(cmd_qp), .wdata_i(rsp_w[RSP_W-1:0]),
    .raddr_i(rsp_qp_i), .raddr_q_o(), .rdata_o(rsp_rd));
  tmnic_ram_rdports #(.WIDTH($bits(qp_path_t)), .DEPTH(NUM_QP), .NRD(2)) u_path_tab (
    .clk_i, .we_i(qp_we), .waddr_i(cmd_qp), .wdata_i(path_w),
    .raddr_i({rdr_qp_i, ack_qp_i}), .raddr_q_o(), .rdata_o({rdr_path_o, ack_path_o}));
  tmnic_ram_rdports #(.WIDTH(24), .DEPTH(NUM_QP), .NRD(1)) u_src_qp_tab (
    .clk_i, .we_i(qp_we), .waddr_i(cmd_qp), .wdata_i(qp_wdata.dest_qpn),
    .raddr_i(cqe_qp_i), .raddr_q_o(), .rdata_o(cqe_src_qp_o));
  /* verilator lint_on PINCONNECTEMPTY */
  tmnic_ram_rdports #(.WIDTH($bits(mr_t)), .DEPTH(NUM_MR), .NRD(NMR_RD)) u_mr_tab (
    .clk_i, .we_i(mr_we), .waddr_i(cmd_idx_i[MR_W-1:0]), .wdata_i(mr_wdata),
    .raddr_i(mr_rd_idx_i), .raddr_q_o(mr_ridx_q), .rdata_o(mr_rdata));

  // ---------------------------------------------------------------- QP state
  // Read ports: those of the views with a state (requester, completer 0 and 1, responder), the CQ
  // writer's, then QUERY_QP's (the command's QP, read in the command cycle).
  localparam int unsigned NST_RD = 5;
  logic [NST_RD-1:0][QP_W-1:0] st_rd_idx;
  assign st_rd_idx = {cqw_qp_i, rsp_qp_i, cmp_qp_i, req_qp_i};
  logic              st_we;
  logic [QP_W-1:0]   st_waddr;
  logic [2:0]        st_wdata;
  logic [NST_RD:0][QP_W-1:0] st_ridx_q;
  logic [NST_RD:0][2:0]      st_rdata;
  tmnic_ram_rdports #(.WIDTH(3), .DEPTH(NUM_QP), .NRD(NST_RD + 1)) u_state_tab (
    .clk_i, .we_i(st_we), .waddr_i(st_waddr), .wdata_i(st_wdata),
    .raddr_i({cmd_qp, st_rd_idx}), .raddr_q_o(st_ridx_q), .rdata_o(st_rdata));
  // Errors waiting for the write port (one slot per source: 0 send, 1 receive, 2 lost completion),
  // and the reset sweep.
  localparam int unsigned NERR = 3;
  logic [NERR-1:0]            err_in, e_v_q, e_v_d;
  logic [NERR-1:0][QP_W-1:0]  err_in_qp, e_qp_q, e_qp_d;
  logic                  sweep_q, sweep_d;
  logic [QP_W-1:0]       sweep_idx_q, sweep_idx_d;
  logic [NST_RD:0][2:0]  st_eff;     // state as a flip-flop table would show it
  assign fat_ready_o = !e_v_q[2] && !sweep_q;
  assign err_in = {fat_valid_i && fat_ready_o, err_rq_i, err_sq_i};
  assign err_in_qp = {fat_qp_i, err_rq_qp_i, err_sq_qp_i};
  always_comb begin
    // Engine errors for the QP a command sets in the same cycle lose (the command wins), as do
    // waiting ones (the command overwrites them). Priority on the port: sweep, command, waiting
    // errors (send engine's first, the lost completions' last), new errors; a new error that does not
    // get the port waits,
    // unless the port writes ERR to its QP anyway or its slot already holds that QP.
    e_v_d = e_v_q;
    e_qp_d = e_qp_q;
    for (int e = 0; e < int'(NERR); e++) if (qp_we && e_qp_q[e] == cmd_qp) e_v_d[e] = 1'b0;
    sweep_d = sweep_q; sweep_idx_d = sweep_idx_q;
    st_we = 1'b0; st_waddr = cmd_qp; st_wdata = cmd_args_i[ARG_SET_QP_STATE][2:0];
    if (sweep_q) begin
      st_we = 1'b1; st_waddr = sweep_idx_q; st_wdata = QPS_RESET;
      sweep_idx_d = sweep_idx_q + 1'b1;
      sweep_d = sweep_idx_q != QP_W'(NUM_QP - 1);
    end else if (qp_we) begin
      st_we = 1'b1;
    end
    for (int e = 0; e < int'(NERR); e++) begin
      if (!st_we && e_v_d[e]) begin
        st_we = 1'b1; st_waddr = e_qp_q[e]; st_wdata = QPS_ERR; e_v_d[e] = 1'b0;
      end
    end
    for (int e = 0; e < int'(NERR); e++) begin
      if (err_in[e] && !(qp_we && err_in_qp[e] == cmd_qp)) begin
        if (!st_we) begin
          st_we = 1'b1; st_waddr = err_in_qp[e]; st_wdata = QPS_ERR;
        end else if (!(st_waddr == err_in_qp[e] && st_wdata == QPS_ERR) && !(e_v_d[e] && e_qp_q[e] == err_in_qp[e])) begin
          e_v_d[e] = 1'b1; e_qp_d[e] = err_in_qp[e];
        end
      end
    end
    for (int k = 0; k <= int'(NST_RD); k++) begin
      st_eff[k] = st_rdata[k];
      for (int e = 0; e < int'(NERR); e++) if (e_v_q[e] && e_qp_q[e] == st_ridx_q[k]) st_eff[k] = QPS_ERR;
      if (sweep_q) st_eff[k] = QPS_RESET;
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      e_v_q <= '0;
      sweep_q <= 1'b1;
      sweep_idx_q <= '0;
    end else begin
      e_v_q <= e_v_d;
      sweep_q <= sweep_d;
      sweep_idx_q <= sweep_idx_d;
    end
  end
  always_ff @(posedge clk_i) e_qp_q <= e_qp_d;
  // A lost completion's error taken (a command to the QP in the same cycle wins: no error, no record)
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) fat_o <= 1'b0;
    else fat_o <= err_in[2] && !(qp_we && fat_qp_i == cmd_qp);
  end
  always_ff @(posedge clk_i) if (err_in[2]) fat_qp_o <= fat_qp_i;

  always_comb begin
    req_cfg_o = qp_req_cfg_t'({st_eff[0], req_rd});
    for (int k = 0; k < 2; k++) cmp_cfg_o[k] = qp_cmp_cfg_t'({st_eff[1 + k], cmp_rd[k]});
    rsp_cfg_o = qp_rsp_cfg_t'({st_eff[3], rsp_rd});
    cqw_state_o = st_eff[4];
    for (int k = 0; k < int'(NMR_RD); k++) begin
      mr_rd_o[k] = mr_rdata[k];
      mr_rd_o[k].valid = mr_valid_q[mr_ridx_q[k]];
    end
    cq_rd_o = cq_rdata;
    cq_rd_o.valid = cq_valid_q[cq_ridx_q];
    srq_rd_o = srq_rdata[0];
    srq_rd_o.valid = srq_valid_q[srq_ridx_q[0]];
    srq2_rd_o = srq_rdata[1];
    srq2_rd_o.valid = srq_valid_q[srq_ridx_q[1]];
  end

  // The argument words of the last command, by name.
  function automatic logic [31:0] arg(input int unsigned i);
    arg = cmd_args_i[i];
  endfunction

  function automatic logic [3:0] mtu_log(input logic [31:0] ib_mtu);
    // IB MTU enum 1..5 = 256..4096 bytes
    mtu_log = (ib_mtu >= 32'd1 && ib_mtu <= 32'd5) ? 4'(ib_mtu + 32'd7) : 4'd10;
  endfunction
  // SET_QP.MAX_RD_ATOMIC clamped to 1..MAX_RD_ATOM
  function automatic logic [2:0] rd_clamp(input logic [31:0] n);
    rd_clamp = (n == 32'd0) ? 3'd1 : (n > 32'(MAX_RD_ATOM)) ? 3'(MAX_RD_ATOM) : 3'(n);
  endfunction


  // Which commands are well-formed (index in range, sizes within the hardware limits).
  // NIC_SPACE_BIT: addresses with it are the NIC's own memory (a rendezvous QP's internal send
  // queue, tmnic_rndv_sq): no host ring or MR may name them, so no host-given address ever reaches
  // that memory; a QP's send queue may be exactly its own internal one (RC, RNDV_SQ_LOG).
  localparam int unsigned NS_HI = NIC_SPACE_BIT - 32;
  wire [63:0] rv_base = (64'd1 << NIC_SPACE_BIT) + (64'(cmd_idx_i) << RNDV_QP_SHIFT);
  wire set_qp_sq_ok = !cmd_args_i[ARG_SET_QP_SQ_BASE_HI][NS_HI] ||
                      ({cmd_args_i[ARG_SET_QP_SQ_BASE_HI], cmd_args_i[ARG_SET_QP_SQ_BASE_LO]} == rv_base &&
                       cmd_args_i[ARG_SET_QP_SQ_LOG_SIZE] == 32'(RNDV_SQ_LOG) &&
                       cmd_args_i[ARG_SET_QP_TYPE] == 32'(QP_TYPE_RC));
  wire set_mr_ok = cmd_idx_i < 24'(NUM_MR) &&
                   (cmd_args_i[ARG_SET_MR_VALID] == 32'd0 || !cmd_args_i[ARG_SET_MR_IOVA_HI][NS_HI]);
  // Ring bases must be 64-byte aligned: a CQE or a WQE half is exactly one DMA beat.
  wire set_cq_ok = cmd_idx_i < 24'(NUM_CQ) && cmd_args_i[ARG_SET_CQ_LOG_SIZE] <= MAX_LOG_QUEUE &&
                   cmd_args_i[ARG_SET_CQ_BASE_LO][5:0] == 6'd0 && !cmd_args_i[ARG_SET_CQ_BASE_HI][NS_HI];
  // A TM-SRQ (TM != 0) also needs an aligned op ring, a CQ in range and a non-empty engine range.
  wire [32:0] tag_end = {17'd0, cmd_args_i[ARG_SET_SRQ_TAG_BASE][15:0]} + {17'd0, cmd_args_i[ARG_SET_SRQ_TAG_NUM][15:0]};
  wire set_srq_tm_ok = cmd_args_i[ARG_SET_SRQ_OPS_LOG_SIZE] <= MAX_LOG_QUEUE &&
                       cmd_args_i[ARG_SET_SRQ_OPS_BASE_LO][5:0] == 6'd0 && !cmd_args_i[ARG_SET_SRQ_OPS_BASE_HI][NS_HI] &&
                       cmd_args_i[ARG_SET_SRQ_CQ] < 32'(NUM_CQ) &&
                       cmd_args_i[ARG_SET_SRQ_TAG_NUM][31:16] == 16'd0 && cmd_args_i[ARG_SET_SRQ_TAG_BASE][31:16] == 16'd0 &&
                       cmd_args_i[ARG_SET_SRQ_TAG_NUM] != 32'd0 && tag_end <= 33'(TM_ENTRIES);
  wire set_srq_ok = cmd_idx_i < 24'(NUM_SRQ) && cmd_args_i[ARG_SET_SRQ_LOG_SIZE] <= MAX_LOG_QUEUE &&
                    cmd_args_i[ARG_SET_SRQ_BASE_LO][5:0] == 6'd0 && !cmd_args_i[ARG_SET_SRQ_BASE_HI][NS_HI] &&
                    (cmd_args_i[ARG_SET_SRQ_TM] == 32'd0 || cmd_args_i[ARG_SET_SRQ_VALID] == 32'd0 || set_srq_tm_ok);
  wire set_qp_ok = cmd_idx_i < 24'(NUM_QP) && cmd_idx_i >= 24'(QPN_FIRST) && cmd_args_i[ARG_SET_QP_STATE] <= 32'd6 &&
                   cmd_args_i[ARG_SET_QP_SQ_LOG_SIZE] <= MAX_LOG_QUEUE && cmd_args_i[ARG_SET_QP_RQ_LOG_SIZE] <= MAX_LOG_QUEUE &&
                   cmd_args_i[ARG_SET_QP_SQ_BASE_LO][5:0] == 6'd0 && cmd_args_i[ARG_SET_QP_RQ_BASE_LO][5:0] == 6'd0 &&
                   set_qp_sq_ok && !cmd_args_i[ARG_SET_QP_RQ_BASE_HI][NS_HI] &&
                   (cmd_args_i[ARG_SET_QP_TYPE] == 32'(QP_TYPE_RC) || cmd_args_i[ARG_SET_QP_TYPE] == 32'(QP_TYPE_UD));

  // Table writes: by their command, no reset (validity lives in flops, QP state in its own table).
  assign mr_we = cmd_valid_i && cmd_op_i == CMD_SET_MR && set_mr_ok;
  assign mr_wdata = '{
          valid: cmd_args_i[ARG_SET_MR_VALID] != 0, key: cmd_args_i[ARG_SET_MR_KEY], pd: cmd_args_i[ARG_SET_MR_PD][15:0],
          access: cmd_args_i[ARG_SET_MR_ACCESS][3:0],
          va: {cmd_args_i[ARG_SET_MR_VA_HI], cmd_args_i[ARG_SET_MR_VA_LO]},
          len: {cmd_args_i[ARG_SET_MR_LEN_HI], cmd_args_i[ARG_SET_MR_LEN_LO]},
          iova: {cmd_args_i[ARG_SET_MR_IOVA_HI], cmd_args_i[ARG_SET_MR_IOVA_LO]}};
  assign cq_we = cmd_valid_i && cmd_op_i == CMD_SET_CQ && set_cq_ok;
  assign cq_wdata = '{valid: 1'b0,   // (validity lives in cq_valid_q)
          base: {cmd_args_i[ARG_SET_CQ_BASE_HI], cmd_args_i[ARG_SET_CQ_BASE_LO]}, log_size: cmd_args_i[ARG_SET_CQ_LOG_SIZE][3:0]};
  assign srq_we = cmd_valid_i && cmd_op_i == CMD_SET_SRQ && set_srq_ok;
  assign srq_wdata = '{valid: 1'b0,  // (validity lives in srq_valid_q)
          base: {cmd_args_i[ARG_SET_SRQ_BASE_HI], cmd_args_i[ARG_SET_SRQ_BASE_LO]},
          log_size: cmd_args_i[ARG_SET_SRQ_LOG_SIZE][3:0], pd: cmd_args_i[ARG_SET_SRQ_PD][15:0],
          tm: cmd_args_i[ARG_SET_SRQ_TM] != 0 && cmd_args_i[ARG_SET_SRQ_VALID] != 0,
          ops_base: {cmd_args_i[ARG_SET_SRQ_OPS_BASE_HI], cmd_args_i[ARG_SET_SRQ_OPS_BASE_LO]},
          ops_log: cmd_args_i[ARG_SET_SRQ_OPS_LOG_SIZE][3:0], cq: cmd_args_i[ARG_SET_SRQ_CQ][15:0],
          tag_base: cmd_args_i[ARG_SET_SRQ_TAG_BASE][15:0], tag_num: cmd_args_i[ARG_SET_SRQ_TAG_NUM][15:0]};
  assign qp_we = cmd_valid_i && cmd_op_i == CMD_SET_QP && set_qp_ok;
  assign qp_wdata = '{
          state: cmd_args_i[ARG_SET_QP_STATE][2:0], pd: cmd_args_i[ARG_SET_QP_PD][15:0],
          send_cq: cmd_args_i[ARG_SET_QP_SEND_CQ][15:0], recv_cq: cmd_args_i[ARG_SET_QP_RECV_CQ][15:0],
          srq: cmd_args_i[ARG_SET_QP_SRQ][15:0],
          sq_base: {cmd_args_i[ARG_SET_QP_SQ_BASE_HI], cmd_args_i[ARG_SET_QP_SQ_BASE_LO]},
          sq_log: cmd_args_i[ARG_SET_QP_SQ_LOG_SIZE][3:0],
          rq_base: {cmd_args_i[ARG_SET_QP_RQ_BASE_HI], cmd_args_i[ARG_SET_QP_RQ_BASE_LO]},
          rq_log: cmd_args_i[ARG_SET_QP_RQ_LOG_SIZE][3:0],
          pmtu_log: mtu_log(cmd_args_i[ARG_SET_QP_PATH_MTU]),
          dest_qpn: cmd_args_i[ARG_SET_QP_DEST_QPN][23:0], dest_ip: cmd_args_i[ARG_SET_QP_DEST_IP],
          dmac: {cmd_args_i[ARG_SET_QP_DMAC_HI][15:0], cmd_args_i[ARG_SET_QP_DMAC_LO]},
          min_rnr_timer: cmd_args_i[ARG_SET_QP_MIN_RNR_TIMER][4:0], rnr_retry: cmd_args_i[ARG_SET_QP_RNR_RETRY][2:0],
          retry_cnt: cmd_args_i[ARG_SET_QP_RETRY_CNT][2:0], timeout: cmd_args_i[ARG_SET_QP_TIMEOUT][4:0],
          rem_access: cmd_args_i[ARG_SET_QP_ACCESS][3:0],
          ud: cmd_args_i[ARG_SET_QP_TYPE] == 32'(QP_TYPE_UD), qkey: cmd_args_i[ARG_SET_QP_QKEY],
          tclass: cmd_args_i[ARG_SET_QP_TCLASS][7:0], hop_limit: cmd_args_i[ARG_SET_QP_HOP_LIMIT][7:0],
          max_rd: rd_clamp(cmd_args_i[ARG_SET_QP_MAX_RD_ATOMIC])};

  // Busy: two cycles for the new table contents to reach every engine, then until all is quiet;
  // a QUERY_QP only until its read-back lands.
  logic [1:0] settle_q;
  logic       query_pend_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cmd_busy_o <= 1'b1;   // until the state sweep is done
      settle_q <= '0;
    end else if (sweep_q) begin
      cmd_busy_o <= 1'b1;
    end else if (cmd_valid_i && cmd_op_i != CMD_NOP && cmd_op_i != CMD_QUERY_QP) begin
      cmd_busy_o <= 1'b1;
      settle_q <= 2'd2;
    end else if (cmd_valid_i && cmd_op_i == CMD_QUERY_QP && cmd_idx_i < 24'(NUM_QP)) begin
      cmd_busy_o <= 1'b1;
    end else if (query_pend_q) begin
      cmd_busy_o <= 1'b0;
    end else if (settle_q != 2'd0) begin
      settle_q <= settle_q - 2'd1;
    end else if (quiet_i) begin
      cmd_busy_o <= 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      mr_valid_q <= '0;
      mr_gen_o <= '0;
      cq_valid_q <= '0;
      srq_valid_q <= '0;
      cmd_err_o <= 1'b0;
      rb_valid_o <= 1'b0;
      rb_args_o <= '0;
      init_sq_o <= 1'b0;
      init_rq_o <= 1'b0;
      qp_set_o <= 1'b0;
      query_pend_q <= 1'b0;
      init_qp_o <= '0;
      init_sq_psn_o <= '0;
      init_rq_psn_o <= '0;
      cq_reset_o <= 1'b0;
      cq_reset_idx_o <= '0;
      srq_reset_o <= 1'b0;
      srq_reset_idx_o <= '0;
    end else begin
      rb_valid_o <= 1'b0;
      init_sq_o <= 1'b0;
      init_rq_o <= 1'b0;
      qp_set_o <= 1'b0;
      query_pend_q <= 1'b0;
      if (query_pend_q) begin
        rb_valid_o <= 1'b1;
        rb_args_o[ARG_QUERY_QP_STATE] <= {29'd0, st_eff[NST_RD]};
        rb_args_o[ARG_QUERY_QP_SQ_PSN] <= {8'd0, query_sq_psn_i};
        rb_args_o[ARG_QUERY_QP_RQ_PSN] <= {8'd0, query_rq_psn_i};
      end
      cq_reset_o <= 1'b0;
      srq_reset_o <= 1'b0;
      if (cmd_valid_i) begin
        cmd_err_o <= 1'b0;
        unique case (cmd_op_i)
          CMD_NOP: ;
          CMD_SET_MR: begin
            if (set_mr_ok) begin
              mr_valid_q[cmd_idx_i[MR_W-1:0]] <= cmd_args_i[ARG_SET_MR_VALID] != 0;
              mr_gen_o <= mr_gen_o + 32'd1;
            end else cmd_err_o <= 1'b1;
          end
          CMD_SET_CQ: begin
            if (set_cq_ok) begin
              cq_valid_q[cmd_idx_i[CQ_W-1:0]] <= cmd_args_i[ARG_SET_CQ_VALID] != 0;
              // (a resize keeps the CQ writer's indices and arm bit)
              cq_reset_o <= cmd_args_i[ARG_SET_CQ_KEEP] == 0;
              cq_reset_idx_o <= cmd_idx_i[15:0];
            end else cmd_err_o <= 1'b1;
          end
          CMD_SET_SRQ: begin
            if (set_srq_ok) begin
              srq_valid_q[cmd_idx_i[SRQ_W-1:0]] <= cmd_args_i[ARG_SET_SRQ_VALID] != 0;
              srq_reset_o <= 1'b1;
              srq_reset_idx_o <= cmd_idx_i[15:0];
            end else cmd_err_o <= 1'b1;
          end
          CMD_SET_QP: begin
            if (set_qp_ok) begin
              init_qp_o <= cmd_qp;
              qp_set_o <= 1'b1;
              init_sq_o <= cmd_args_i[ARG_SET_QP_INIT][QP_INIT_SQ_BIT];
              init_rq_o <= cmd_args_i[ARG_SET_QP_INIT][QP_INIT_RQ_BIT];
              init_sq_psn_o <= cmd_args_i[ARG_SET_QP_SQ_PSN][23:0];
              init_rq_psn_o <= cmd_args_i[ARG_SET_QP_RQ_PSN][23:0];
            end else cmd_err_o <= 1'b1;
          end
          CMD_QUERY_QP: begin
            if (cmd_idx_i < 24'(NUM_QP)) begin
              query_pend_q <= 1'b1;
              rb_args_o <= cmd_args_i;
            end else cmd_err_o <= 1'b1;
          end
          default: cmd_err_o <= 1'b1;
        endcase
      end
    end
  end
`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // The write-port budget: engine errors and QP-writing commands at least 3 cycles apart per source,
  // none during the reset sweep; a waiting error is never overwritten by another (the lost
  // completions' source by its handshake).
  for (genvar e = 0; e < 2; e++) begin : g_a_spacing
    a_spacing: assert property (@(posedge clk_i) disable iff (!chk_q) err_in[e] |-> !$past(err_in[e], 1) && !$past(err_in[e], 2))
      else $error("tmnic_ctx: errors of engine %0d (0 send, 1 receive) less than 3 cycles apart", e);
  end
  for (genvar e = 0; e < int'(NERR); e++) begin : g_a_err
    a_slot: assert property (@(posedge clk_i) disable iff (!chk_q) e_v_q[e] && e_v_d[e] |-> e_qp_d[e] == e_qp_q[e])
      else $error("tmnic_ctx: waiting error of engine %0d overwritten", e);
  end
  a_cmd_spacing: assert property (@(posedge clk_i) disable iff (!chk_q) qp_we |-> !$past(qp_we, 1) && !$past(qp_we, 2))
    else $error("tmnic_ctx: SET_QP commands less than 3 cycles apart");
  a_no_err_in_sweep: assert property (@(posedge clk_i) disable iff (!chk_q) sweep_q |-> err_in == '0 && !qp_we)
    else $error("tmnic_ctx: a state write during the reset sweep");
`endif
endmodule
