// tmnic: RoCEv2 RC NIC core.
//   BAR0 (AXI4-Lite slave): registers, command mailbox, doorbells, statistics.
//   DMA (AXI4 master): WQE fetch, payload gather/scatter, CQE writes, by IO virtual address.
//   MAC (AXI4-Stream): Ethernet frames without FCS; frames to the port's own IPv4 address are
//   looped back inside the NIC.
//   Tag matching: TM-SRQs with a hardware matching engine of TM_ENTRIES entries shared by all of
//   them (hashed class tables, wildcard CAM, spill lists: docs/tag-matching-engine.md).
// Block diagram and data flow: docs/architecture.md.
module tmnic_top import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_CQ = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned CLK_MHZ = 250,
  parameter int unsigned TM_ENTRIES = 1024,
  parameter int unsigned TM_CLASSES = 2,             // matching engine: mask classes,
  parameter int unsigned TM_WAYS = 4,                // ways per class table,
  parameter int unsigned TM_BUCKETS = TM_ENTRIES / 2,  // buckets per way,
  parameter int unsigned TM_CAM = 32,                // wildcard CAM entries,
  parameter int unsigned TM_SEQ_W = 62,              // sequence-number bits
  localparam int unsigned BYTES = DATA_W / 8
) (
  input  logic        clk_i,
  input  logic        rst_ni,
  input  logic [63:0] now_i,          // free-running cycle count (timers); lets a harness skip idle time

  // BAR0
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

  // DMA master (INCR bursts, size = DATA_W, ID 0)
  output logic [63:0]       m_axi_araddr_o,
  output logic [7:0]        m_axi_arlen_o,
  output logic              m_axi_arvalid_o,
  input  logic              m_axi_arready_i,
  input  logic [DATA_W-1:0] m_axi_rdata_i,
  input  logic              m_axi_rlast_i,
  input  logic              m_axi_rvalid_i,
  output logic              m_axi_rready_o,
  output logic [63:0]       m_axi_awaddr_o,
  output logic [7:0]        m_axi_awlen_o,
  output logic              m_axi_awvalid_o,
  input  logic              m_axi_awready_i,
  output logic [DATA_W-1:0] m_axi_wdata_o,
  output logic [BYTES-1:0]  m_axi_wstrb_o,
  output logic              m_axi_wlast_o,
  output logic              m_axi_wvalid_o,
  input  logic              m_axi_wready_i,
  input  logic              m_axi_bvalid_i,
  output logic              m_axi_bready_o,

  // MAC
  output logic [DATA_W-1:0] m_axis_tx_tdata_o,
  output logic [BYTES-1:0]  m_axis_tx_tkeep_o,
  output logic              m_axis_tx_tlast_o,
  output logic              m_axis_tx_tvalid_o,
  input  logic              m_axis_tx_tready_i,
  input  logic [DATA_W-1:0] s_axis_rx_tdata_i,
  input  logic [BYTES-1:0]  s_axis_rx_tkeep_i,
  input  logic              s_axis_rx_tlast_i,
  input  logic              s_axis_rx_tvalid_i,
  output logic              s_axis_rx_tready_o,

  // Completion events
  output logic        irq_o,
  output logic [15:0] irq_cq_o,

  // Harness support: nothing moves until a BAR write, a frame, or now_i reaches wake_at_o.
  output logic        idle_o,
  output logic [63:0] wake_at_o
);
  localparam int unsigned QP_W = $clog2(NUM_QP);
  localparam int unsigned TM_H_W = $clog2(TM_ENTRIES);
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ);
  // The datapath widths that the DMA engines, the frame builder and parser and the CQ writer
  // implement (each block checks its own; this says it once, for the whole NIC).
  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_top: DATA_W must be 256 or 512 (tmnic_dma_rd/dma_wr, tmnic_pkt_tx/pkt_rx, tmnic_cq_writer)");
  end
  if (CLK_MHZ == 0) begin : g_chk_c
    $fatal(1, "tmnic_top: CLK_MHZ must be > 0");
  end

  // ---------------------------------------------------------------- BAR0 and contexts
  logic [47:0] mac;
  logic [31:0] ip;
  logic enable;
  logic cmd_valid, cmd_err, cmd_busy, rb_valid, cfg_changed;
  // The CQ writer's lost completions: the QP to fail (its state read first), the context's record
  logic cq_err, fat_valid, fat_ready, fat_err;
  logic [15:0] cq_err_cq, fat_qp, cqw_qp;
  logic [QP_W-1:0] fat_err_qp;
  logic [2:0] cqw_state;
  logic sq_quiet, rx_quiet, sq_idle, rx_idle, txs_idle, cqw_idle, dma_wr_idle, tmo_quiet, tmo_idle, tme_idle;
  logic aev_idle;
  logic rdr_busy, rdr_idle;   // the read-response engine: a READ job out, nothing to do
  reg_async_cq_t async_cq;
  logic [7:0] cmd_op;
  logic [23:0] cmd_idx;
  logic [NUM_CMD_ARGS-1:0][31:0] cmd_args, rb_args;
  logic db_valid;
  logic sq_db_ready, rx_db_ready;  // the engines' schedulers have room for a doorbell
  logic [2:0] db_type;
  logic [11:0] db_idx;
  logic [31:0] db_val;
  logic [NUM_STATS-1:0] stat_inc;
  logic st_rd_valid, st_rd_ready, st_rd_tm, st_rsp_valid;  // register block <-> statistics unit
  logic [13:0] st_rd_idx;
  logic [31:0] st_rsp_data;
  logic [$clog2(TM_CAM + 1)-1:0] tm_cam_used;  // matching-engine entries on the slower paths
  logic [$clog2(TM_ENTRIES):0] tm_spilled;

  // Send-queue operations beyond SEND that the engines execute (OPS_CAPS register): a bit is set
  // only in the commit that makes the operation work end to end.
  localparam reg_ops_caps_t OPS_CAPS = '{rdma_write: 1'b1, rdma_read: 1'b1, ud: 1'b1, atomic: 1'b1, default: '0};
  // TM_CAPS.RC (rendezvous offload, IBV_TM_CAP_RC): the driver sets up rendezvous QPs
  // (docs/tag-matching.md "Rendezvous").
  localparam bit TM_CAPS_RC = 1'b1;

  tmnic_axil_regs #(.DATA_BYTES_P(BYTES), .CLK_MHZ_P(CLK_MHZ), .NUM_QP_P(NUM_QP), .NUM_CQ_P(NUM_CQ),
                    .NUM_SRQ_P(NUM_SRQ), .NUM_MR_P(NUM_MR), .TM_ENTRIES_P(TM_ENTRIES),
                    .TM_CAPS_P({16'd0, 8'(TM_SEQ_W), 8'(TM_CAPS_RC)}), .OPS_CAPS_P(32'(OPS_CAPS)),
                    .TM_GEOM_P({8'(TM_CAM), 8'($clog2(TM_BUCKETS)), 8'(TM_WAYS), 8'(TM_CLASSES)})) u_regs (
    .clk_i, .rst_ni,
    .s_axil_awaddr_i, .s_axil_awvalid_i, .s_axil_awready_o, .s_axil_wdata_i, .s_axil_wstrb_i,
    .s_axil_wvalid_i, .s_axil_wready_o, .s_axil_bresp_o, .s_axil_bvalid_o, .s_axil_bready_i,
    .s_axil_araddr_i, .s_axil_arvalid_i, .s_axil_arready_o, .s_axil_rdata_o, .s_axil_rresp_o,
    .s_axil_rvalid_o, .s_axil_rready_i,
    .mac_o(mac), .ip_o(ip), .enable_o(enable), .async_cq_o(async_cq),
    .cmd_valid_o(cmd_valid), .cmd_op_o(cmd_op), .cmd_idx_o(cmd_idx), .cmd_args_o(cmd_args),
    .cmd_busy_i(cmd_busy), .cmd_err_i(cmd_err), .rb_valid_i(rb_valid), .rb_args_i(rb_args),
    .db_valid_o(db_valid), .db_type_o(db_type), .db_idx_o(db_idx), .db_val_o(db_val), .db_ready_i(sq_db_ready && rx_db_ready),
    .st_rd_valid_o(st_rd_valid), .st_rd_ready_i(st_rd_ready), .st_rd_tm_o(st_rd_tm), .st_rd_idx_o(st_rd_idx),
    .st_rsp_valid_i(st_rsp_valid), .st_rsp_data_i(st_rsp_data),
    .tm_place_i({16'(tm_spilled), 16'(tm_cam_used)}));

  // Context read ports: QP 0 requester, 1..2 completer, 3..5 receive engine; MR 0 send, 1 receive.
  // QP configuration read ports, each with its engine's view (tmnic_pkg)
  logic [QP_W-1:0] req_qp, rsp_qp, ack_qp, cqe_qp;
  logic [1:0][QP_W-1:0] cmp_qp;
  qp_req_cfg_t req_cfg;
  qp_cmp_cfg_t [1:0] cmp_cfg;
  qp_rsp_cfg_t rsp_cfg;
  qp_path_t ack_path, rdr_path;
  logic [31:0] mr_gen;
  logic [QP_W-1:0] rdr_qp;
  logic [23:0] cqe_src_qp;
  logic [1:0][$clog2(NUM_MR)-1:0] mr_rd_idx;
  mr_t [1:0] mr_rd;
  logic [$clog2(NUM_CQ)-1:0] cq_rd_idx;
  cq_cfg_t cq_rd;
  logic [$clog2(NUM_SRQ)-1:0] srq_rd_idx, srq2_rd_idx;
  srq_cfg_t srq_rd, srq2_rd;
  logic init_sq, init_rq, cq_reset, srq_reset, qp_set;
  logic [QP_W-1:0] init_qp, query_qp;
  logic [23:0] init_sq_psn, init_rq_psn, query_sq_psn, query_rq_psn;
  logic [15:0] cq_reset_idx, srq_reset_idx;
  logic err_sq, err_rq;
  logic [QP_W-1:0] err_sq_qp, err_rq_qp;

  tmnic_ctx #(.NUM_QP(NUM_QP), .NUM_CQ(NUM_CQ), .NUM_SRQ(NUM_SRQ), .NUM_MR(NUM_MR),
              .TM_ENTRIES(TM_ENTRIES)) u_ctx (
    .clk_i, .rst_ni,
    .cmd_valid_i(cmd_valid), .cmd_op_i(cmd_op), .cmd_idx_i(cmd_idx), .cmd_args_i(cmd_args),
    .cmd_err_o(cmd_err), .cmd_busy_o(cmd_busy),
    .quiet_i(sq_quiet && rx_quiet && tmo_quiet && cqw_idle && dma_wr_idle && aev_idle && !rdr_busy),
    .rb_valid_o(rb_valid), .rb_args_o(rb_args),
    .query_qp_o(query_qp), .query_sq_psn_i(query_sq_psn), .query_rq_psn_i(query_rq_psn),
    .req_qp_i(req_qp), .req_cfg_o(req_cfg), .cmp_qp_i(cmp_qp), .cmp_cfg_o(cmp_cfg),
    .rsp_qp_i(rsp_qp), .rsp_cfg_o(rsp_cfg), .ack_qp_i(ack_qp), .ack_path_o(ack_path),
    .rdr_qp_i(rdr_qp), .rdr_path_o(rdr_path),
    .cqe_qp_i(cqe_qp), .cqe_src_qp_o(cqe_src_qp),
    .mr_rd_idx_i(mr_rd_idx), .mr_rd_o(mr_rd), .cq_rd_idx_i(cq_rd_idx), .cq_rd_o(cq_rd),
    .srq_rd_idx_i(srq_rd_idx), .srq_rd_o(srq_rd), .srq2_rd_idx_i(srq2_rd_idx), .srq2_rd_o(srq2_rd),
    .init_sq_o(init_sq), .init_rq_o(init_rq), .init_qp_o(init_qp), .qp_set_o(qp_set), .init_sq_psn_o(init_sq_psn),
    .init_rq_psn_o(init_rq_psn), .cq_reset_o(cq_reset), .cq_reset_idx_o(cq_reset_idx),
    .srq_reset_o(srq_reset), .srq_reset_idx_o(srq_reset_idx),
    .err_sq_i(err_sq), .err_sq_qp_i(err_sq_qp), .err_rq_i(err_rq), .err_rq_qp_i(err_rq_qp),
    .fat_valid_i(fat_valid), .fat_ready_o(fat_ready), .fat_qp_i(fat_qp[QP_W-1:0]),
    .fat_o(fat_err), .fat_qp_o(fat_err_qp), .cqw_qp_i(cqw_qp[QP_W-1:0]), .cqw_state_o(cqw_state),
    .mr_gen_o(mr_gen));

  // Engines rescan their queues after any command has taken effect.
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) cfg_changed <= 1'b0;
    else cfg_changed <= cmd_valid;
  end

  // ---------------------------------------------------------------- DMA
  localparam int unsigned RD_SQ_WQE = 0, RD_SQ_PAY = 1, RD_RQ_WQE = 2, RD_TM_OP = 3, RD_RR_PAY = 4;
  logic [4:0][63:0] rd_addr;
  logic [4:0][12:0] rd_len;
  logic [4:0] rd_valid, rd_ready;
  logic rsp_valid, rsp_last;
  logic [2:0] rsp_client;
  logic [DATA_W-1:0] rsp_data;
  logic signed [13:0] rsp_off;
  logic [BYTES-1:0] rsp_be;
  logic dma_rd_burst, dma_wr_burst;

  // The DMA reads go through tmnic_rndv_sq: those of the NIC's own memory (NIC_SPACE_BIT: the
  // rendezvous QPs' internal send queues) are served there, the others by the host.
  logic [63:0] dr_araddr;
  logic [7:0]  dr_arlen;
  logic        dr_arvalid, dr_arready, dr_rlast, dr_rvalid, dr_rready, rvsq_idle;
  logic [DATA_W-1:0] dr_rdata;
  tmnic_dma_rd #(.DATA_W(DATA_W), .NCLI(5)) u_dma_rd (
    .clk_i, .rst_ni,
    .req_addr_i(rd_addr), .req_len_i(rd_len), .req_valid_i(rd_valid), .req_ready_o(rd_ready),
    .rsp_valid_o(rsp_valid), .rsp_client_o(rsp_client), .rsp_data_o(rsp_data), .rsp_off_o(rsp_off),
    .rsp_be_o(rsp_be), .rsp_last_o(rsp_last),
    .m_axi_araddr_o(dr_araddr), .m_axi_arlen_o(dr_arlen), .m_axi_arvalid_o(dr_arvalid), .m_axi_arready_i(dr_arready),
    .m_axi_rdata_i(dr_rdata), .m_axi_rlast_i(dr_rlast), .m_axi_rvalid_i(dr_rvalid), .m_axi_rready_o(dr_rready),
    .burst_o(dma_rd_burst));
  logic rv_we;
  logic [QP_W-1:0] rv_qp;
  logic [$clog2(RNDV_SLOTS)-1:0] rv_slot;
  rndv_desc_t rv_desc;
  tmnic_rndv_sq #(.DATA_W(DATA_W), .NUM_QP(NUM_QP)) u_rvsq (
    .clk_i, .rst_ni,
    .we_i(rv_we), .we_qp_i(rv_qp), .we_slot_i(rv_slot), .we_desc_i(rv_desc),
    .s_araddr_i(dr_araddr), .s_arlen_i(dr_arlen), .s_arvalid_i(dr_arvalid), .s_arready_o(dr_arready),
    .s_rdata_o(dr_rdata), .s_rlast_o(dr_rlast), .s_rvalid_o(dr_rvalid), .s_rready_i(dr_rready),
    .m_araddr_o(m_axi_araddr_o), .m_arlen_o(m_axi_arlen_o), .m_arvalid_o(m_axi_arvalid_o), .m_arready_i(m_axi_arready_i),
    .m_rdata_i(m_axi_rdata_i), .m_rlast_i(m_axi_rlast_i), .m_rvalid_i(m_axi_rvalid_i), .m_rready_o(m_axi_rready_o),
    .idle_o(rvsq_idle));

  localparam int unsigned WR_SCATTER = 0, WR_CQE = 1;
  logic [1:0][63:0] wr_addr;
  logic [1:0][12:0] wr_len;
  logic [1:0] wr_valid, wr_ready, wr_data_req, wr_done;
  logic signed [13:0] wr_data_off;
  logic [1:0][DATA_W-1:0] wr_data;

  // Clients answer a data pull two cycles later (the receive buffer's registered read, then its shift).
  tmnic_dma_wr #(.DATA_W(DATA_W), .NCLI(2), .DATA_LAT(3)) u_dma_wr (
    .clk_i, .rst_ni,
    .req_addr_i(wr_addr), .req_len_i(wr_len), .req_valid_i(wr_valid), .req_ready_o(wr_ready),
    .data_req_o(wr_data_req), .data_off_o(wr_data_off), .data_i(wr_data), .done_o(wr_done),
    .m_axi_awaddr_o, .m_axi_awlen_o, .m_axi_awvalid_o, .m_axi_awready_i,
    .m_axi_wdata_o, .m_axi_wstrb_o, .m_axi_wlast_o, .m_axi_wvalid_o, .m_axi_wready_i,
    .m_axi_bvalid_i, .m_axi_bready_o, .burst_o(dma_wr_burst), .idle_o(dma_wr_idle));

  // ---------------------------------------------------------------- send side
  logic sq_rd_valid, sq_rd_is_pay;
  logic [63:0] sq_rd_addr;
  logic [12:0] sq_rd_len;
  assign rd_addr[RD_SQ_WQE] = sq_rd_addr;
  assign rd_addr[RD_SQ_PAY] = sq_rd_addr;
  assign rd_len[RD_SQ_WQE] = sq_rd_len;
  assign rd_len[RD_SQ_PAY] = sq_rd_len;
  assign rd_valid[RD_SQ_WQE] = sq_rd_valid && !sq_rd_is_pay;
  assign rd_valid[RD_SQ_PAY] = sq_rd_valid && sq_rd_is_pay;

  localparam int unsigned NSLOT = 8;          // 4 KiB TX slots: packets in preparation or waiting
  localparam int unsigned SQ_OUTS = 16;       // messages sent and not yet completed, per QP
  logic txb_wr, txb_rd;
  logic [12+$clog2(NSLOT)-1:0] txb_wpos, txb_rpos;
  logic [DATA_W-1:0] txb_wdata, txb_rdata;
  logic [BYTES-1:0] txb_be;
  tmnic_shift_buf #(.DATA_W(DATA_W), .DEPTH(NSLOT * 4096 / BYTES), .RD_LAT(2)) u_txb (
    .clk_i, .wr_en_i(txb_wr), .wr_pos_i(txb_wpos), .wr_data_i(txb_wdata), .wr_be_i(txb_be),
    .rd_en_i(txb_rd), .rd_pos_i(txb_rpos), .rd_data_o(txb_rdata));

  roce_hdr_t sq_pkt_hdr, ack_hdr, tx_hdr;
  logic [$clog2(NSLOT)-1:0] sq_pkt_slot;
  logic sq_pkt_valid, sq_pkt_ready, ack_tx_valid, ack_tx_ready;
  logic [NSLOT-1:0] slot_free;
  cqe_req_t [3:0] cqe;
  logic [3:0] cqe_valid, cqe_ready;
  logic [2:0] err_rq_kind;
  logic       note_rq;        // the responder's events that fail nothing (COMM_EST)
  logic st_async_drop;
  logic ack_ev_valid, ack_ev_ready;
  logic [QP_W-1:0] ack_ev_qp;
  logic [31:0] ack_ev_aeth;
  logic [23:0] ack_ev_psn;
  logic st_retx, st_rx_rnr, st_rx_nak, st_rx_ack, st_sq_prot;
  // The completer's ACK events: the responder's (ACK/NAK packets) first, then the requester's own
  // for UD datagrams it has sent (no ACK comes back for those)
  logic uack_valid, uack_ready;
  logic [QP_W-1:0] uack_qp;
  logic [23:0] uack_psn;
  logic cmp_ack_ready;
  // READ responses at the requester: the receive engine's events (query, placed, failed) and the
  // completer's verdicts
  ack_kind_e ack_ev_kind;
  logic ack_ev_first, ack_ev_last, ack_ev_atom;
  logic cmp_vr_valid, cmp_vr_ok;
  logic [15:0] cmp_vr_idx;
  assign ack_ev_ready = cmp_ack_ready;
  assign uack_ready = cmp_ack_ready && !ack_ev_valid;
  // Requester <-> completer
  sq_msg_t sq_msg;
  sq_out_t o_wdata;
  logic sq_msg_valid, sq_msg_ready, sq_mark, o_we, nx_re, ci_re, lerr_valid, lerr_ready, ckick;
  logic req_idle, comp_idle, req_quiet, comp_quiet;
  logic [63:0] req_wake_at, comp_wake_at;
  logic [QP_W-1:0] sq_mark_qp, nx_raddr, ci_raddr, lerr_qp, ckick_qp;
  logic [QP_W+$clog2(SQ_OUTS)-1:0] o_waddr;
  logic [15:0] nx_rdata, ci_rdata, rci_rdata;
  logic rci_re;
  logic [QP_W-1:0] rci_raddr;

  // Send-queue doorbells: the host's, and the receive engine's for a rendezvous QP's internal WQEs,
  // which takes the port in a cycle without a host doorbell while the scheduler has room.
  logic rv_db_valid, rv_db_ready;
  logic [QP_W-1:0] rv_db_qp;
  logic [15:0] rv_db_pi;
  wire host_sq_db = db_valid && db_type == 3'd0;
  assign rv_db_ready = !host_sq_db && sq_db_ready;
  wire sq_db_go = host_sq_db || (rv_db_valid && rv_db_ready);
  wire [11:0] sq_db_idx = host_sq_db ? db_idx : 12'(rv_db_qp);
  wire [15:0] sq_db_pi = host_sq_db ? db_val[15:0] : rv_db_pi;
  tmnic_requester #(.DATA_W(DATA_W), .NUM_QP(NUM_QP), .NUM_MR(NUM_MR), .OUTS(SQ_OUTS), .NSLOT(NSLOT)) u_req (
    .clk_i, .rst_ni, .now_i,
    .qp_idx_o(req_qp), .qp_rd_i(req_cfg), .mr_idx_o(mr_rd_idx[0]),
    .mr_rd_i(mr_rd[0]), .local_mac_i(mac), .local_ip_i(ip),
    .kick_i({err_rq, qp_set}), .kick_qp_i({err_rq_qp, init_qp}),
    .init_sq_i(init_sq), .init_qp_i(init_qp), .init_psn_i(init_sq_psn),
    .db_valid_i(sq_db_go), .db_idx_i(sq_db_idx), .db_pi_i(sq_db_pi), .db_ready_o(sq_db_ready),
    .msg_i(sq_msg), .msg_valid_i(sq_msg_valid), .msg_ready_o(sq_msg_ready), .mark_i(sq_mark), .mark_qp_i(sq_mark_qp),
    .ci_re_o(ci_re), .ci_raddr_o(ci_raddr), .ci_rdata_i(ci_rdata),
    .o_we_o(o_we), .o_waddr_o(o_waddr), .o_wdata_o(o_wdata),
    .nx_re_i(nx_re), .nx_raddr_i(nx_raddr), .nx_rdata_o(nx_rdata),
    .lerr_valid_o(lerr_valid), .lerr_ready_i(lerr_ready), .lerr_qp_o(lerr_qp),
    .ckick_o(ckick), .ckick_qp_o(ckick_qp),
    .uack_valid_o(uack_valid), .uack_ready_i(uack_ready), .uack_qp_o(uack_qp), .uack_psn_o(uack_psn),
    .rd_addr_o(sq_rd_addr), .rd_len_o(sq_rd_len), .rd_valid_o(sq_rd_valid),
    .rd_ready_i(sq_rd_is_pay ? rd_ready[RD_SQ_PAY] : rd_ready[RD_SQ_WQE]), .rd_is_pay_o(sq_rd_is_pay),
    .rsp_wqe_valid_i(rsp_valid && rsp_client == 3'(RD_SQ_WQE)),
    .rsp_pay_valid_i(rsp_valid && rsp_client == 3'(RD_SQ_PAY)),
    .rsp_data_i(rsp_data), .rsp_off_i(rsp_off), .rsp_be_i(rsp_be), .rsp_last_i(rsp_last),
    .txb_wr_o(txb_wr), .txb_pos_o(txb_wpos), .txb_data_o(txb_wdata), .txb_be_o(txb_be),
    .pkt_hdr_o(sq_pkt_hdr), .pkt_slot_o(sq_pkt_slot), .pkt_valid_o(sq_pkt_valid), .pkt_ready_i(sq_pkt_ready),
    .slot_free_i(slot_free),
    .query_qp_i(query_qp), .query_psn_o(query_sq_psn),
    .prot_err_o(st_sq_prot), .quiet_o(req_quiet), .idle_o(req_idle), .wake_at_o(req_wake_at));

  tmnic_completer #(.NUM_QP(NUM_QP), .CLK_MHZ(CLK_MHZ), .OUTS(SQ_OUTS)) u_comp (
    .clk_i, .rst_ni, .now_i,
    .qp_idx_o(cmp_qp), .qp_rd_i(cmp_cfg), .init_i(init_sq), .init_qp_i(init_qp),
    .kick_i({ckick, err_rq, qp_set}), .kick_qp_i({ckick_qp, err_rq_qp, init_qp}),
    .ack_valid_i(ack_ev_valid || uack_valid), .ack_ready_o(cmp_ack_ready),
    .ack_qp_i(ack_ev_valid ? ack_ev_qp : uack_qp),
    .ack_aeth_i(ack_ev_valid ? ack_ev_aeth : {AETH_SYN_ACK, 24'd0}),
    .ack_psn_i(ack_ev_valid ? ack_ev_psn : uack_psn), .ack_local_i(!ack_ev_valid),
    .ack_kind_i(ack_ev_valid ? ack_ev_kind : ACK_PKT), .ack_first_i(ack_ev_first), .ack_last_i(ack_ev_last),
    .ack_atom_i(ack_ev_valid && ack_ev_atom),   // (the UD self-acknowledgements are never atomic)
    .vr_valid_o(cmp_vr_valid), .vr_ok_o(cmp_vr_ok), .vr_idx_o(cmp_vr_idx),
    .lerr_valid_i(lerr_valid), .lerr_ready_o(lerr_ready), .lerr_qp_i(lerr_qp),
    .o_we_i(o_we), .o_waddr_i(o_waddr), .o_wdata_i(o_wdata),
    .nx_re_o(nx_re), .nx_raddr_o(nx_raddr), .nx_rdata_i(nx_rdata),
    .ci_re_i(ci_re), .ci_raddr_i(ci_raddr), .ci_rdata_o(ci_rdata),
    .rci_re_i(rci_re), .rci_raddr_i(rci_raddr), .rci_rdata_o(rci_rdata),
    .msg_o(sq_msg), .msg_valid_o(sq_msg_valid), .msg_ready_i(sq_msg_ready), .mark_o(sq_mark), .mark_qp_o(sq_mark_qp),
    .cqe_o(cqe[0]), .cqe_valid_o(cqe_valid[0]), .cqe_ready_i(cqe_ready[0]),
    .err_o(err_sq), .err_qp_o(err_sq_qp),
    .retransmit_o(st_retx), .rx_rnr_o(st_rx_rnr), .rx_nak_o(st_rx_nak), .rx_ack_o(st_rx_ack),
    .quiet_o(comp_quiet), .idle_o(comp_idle), .wake_at_o(comp_wake_at));
  // The harness's next event: the requester's RNR timers, the completer's transport timers.
  assign wake_at_o = (req_wake_at < comp_wake_at) ? req_wake_at : comp_wake_at;
  assign sq_idle = req_idle && comp_idle;
  assign sq_quiet = req_quiet && comp_quiet;

  logic [DATA_W-1:0] btx_tdata;
  logic [BYTES-1:0] btx_tkeep;
  logic btx_tlast, btx_tvalid, btx_tready;
  logic [DATA_W-1:0] pay_tdata;
  logic [BYTES-1:0] pay_tkeep;
  logic pay_tlast, pay_tvalid, pay_tready, tx_hdr_valid, tx_hdr_ready;

  // READ responses (tmnic_rd_resp, below): the scheduler's third source, with its own buffer.
  roce_hdr_t rr_pkt_hdr;
  logic [$clog2(NSLOT)-1:0] rr_pkt_slot;
  logic rr_pkt_valid, rr_pkt_ready, txb2_rd;
  logic [NSLOT-1:0] rr_slot_free;
  logic [12+$clog2(NSLOT)-1:0] txb2_rpos;
  logic [DATA_W-1:0] txb2_rdata;

  tmnic_tx_sched #(.DATA_W(DATA_W), .NSLOT(NSLOT)) u_txs (
    .clk_i, .rst_ni,
    .ack_hdr_i(ack_hdr), .ack_valid_i(ack_tx_valid), .ack_ready_o(ack_tx_ready),
    .pkt_hdr_i(sq_pkt_hdr), .pkt_slot_i(sq_pkt_slot), .pkt_valid_i(sq_pkt_valid), .pkt_ready_o(sq_pkt_ready),
    .slot_free_o(slot_free),
    .rr_hdr_i(rr_pkt_hdr), .rr_slot_i(rr_pkt_slot), .rr_valid_i(rr_pkt_valid), .rr_ready_o(rr_pkt_ready),
    .rr_slot_free_o(rr_slot_free),
    .txb_rd_o(txb_rd), .txb_pos_o(txb_rpos), .txb_data_i(txb_rdata),
    .txb2_rd_o(txb2_rd), .txb2_pos_o(txb2_rpos), .txb2_data_i(txb2_rdata),
    .m_hdr_o(tx_hdr), .m_hdr_valid_o(tx_hdr_valid), .m_hdr_ready_i(tx_hdr_ready),
    .m_pay_tdata_o(pay_tdata), .m_pay_tkeep_o(pay_tkeep), .m_pay_tlast_o(pay_tlast),
    .m_pay_tvalid_o(pay_tvalid), .m_pay_tready_i(pay_tready), .idle_o(txs_idle));

  tmnic_pkt_tx #(.DATA_W(DATA_W)) u_pkt_tx (
    .clk_i, .rst_ni,
    .s_hdr_i(tx_hdr), .s_hdr_valid_i(tx_hdr_valid), .s_hdr_ready_o(tx_hdr_ready),
    .s_pay_tdata_i(pay_tdata), .s_pay_tkeep_i(pay_tkeep), .s_pay_tlast_i(pay_tlast),
    .s_pay_tvalid_i(pay_tvalid), .s_pay_tready_o(pay_tready),
    .m_axis_tdata_o(btx_tdata), .m_axis_tkeep_o(btx_tkeep), .m_axis_tlast_o(btx_tlast),
    .m_axis_tvalid_o(btx_tvalid), .m_axis_tready_i(btx_tready));

  logic [DATA_W-1:0] lb_tdata;
  logic [BYTES-1:0] lb_tkeep;
  logic lb_tlast, lb_tvalid, lb_tready, lb_idle;
  tmnic_lb_demux #(.DATA_W(DATA_W)) u_lb (
    .clk_i, .rst_ni, .local_ip_i(ip),
    .s_tdata_i(btx_tdata), .s_tkeep_i(btx_tkeep), .s_tlast_i(btx_tlast), .s_tvalid_i(btx_tvalid),
    .s_tready_o(btx_tready),
    .m_mac_tdata_o(m_axis_tx_tdata_o), .m_mac_tkeep_o(m_axis_tx_tkeep_o), .m_mac_tlast_o(m_axis_tx_tlast_o),
    .m_mac_tvalid_o(m_axis_tx_tvalid_o), .m_mac_tready_i(m_axis_tx_tready_i),
    .m_lb_tdata_o(lb_tdata), .m_lb_tkeep_o(lb_tkeep), .m_lb_tlast_o(lb_tlast), .m_lb_tvalid_o(lb_tvalid),
    .m_lb_tready_i(lb_tready), .idle_o(lb_idle));

  // ---------------------------------------------------------------- receive side
  logic [DATA_W-1:0] rx_tdata;
  logic [BYTES-1:0] rx_tkeep;
  logic rx_tlast, rx_tvalid, rx_tready;
  logic [1:0] mux_tready;
  tmnic_axis_mux2 #(.DATA_W(DATA_W)) u_rx_mux (
    .clk_i, .rst_ni,
    .s_tdata_i({lb_tdata, s_axis_rx_tdata_i}), .s_tkeep_i({lb_tkeep, s_axis_rx_tkeep_i}),
    .s_tlast_i({lb_tlast, s_axis_rx_tlast_i}), .s_tvalid_i({lb_tvalid, s_axis_rx_tvalid_i}),
    .s_tready_o(mux_tready),
    .m_tdata_o(rx_tdata), .m_tkeep_o(rx_tkeep), .m_tlast_o(rx_tlast), .m_tvalid_o(rx_tvalid),
    .m_tready_i(rx_tready));
  assign s_axis_rx_tready_o = mux_tready[0];
  assign lb_tready = mux_tready[1];

  roce_hdr_t prx_hdr;
  logic prx_hdr_valid, prx_hdr_ready;
  logic [DATA_W-1:0] prx_tdata;
  logic [BYTES-1:0] prx_tkeep;
  logic prx_tlast, prx_tvalid, prx_tready;
  logic st_drop_icrc, st_drop_hdr, st_rx_accept;
  tmnic_pkt_rx #(.DATA_W(DATA_W)) u_pkt_rx (
    .clk_i, .rst_ni, .local_mac_i(mac), .local_ip_i(ip),
    .s_axis_tdata_i(rx_tdata), .s_axis_tkeep_i(rx_tkeep), .s_axis_tlast_i(rx_tlast),
    .s_axis_tvalid_i(rx_tvalid), .s_axis_tready_o(rx_tready),
    .m_hdr_o(prx_hdr), .m_hdr_valid_o(prx_hdr_valid), .m_hdr_ready_i(prx_hdr_ready),
    .m_pay_tdata_o(prx_tdata), .m_pay_tkeep_o(prx_tkeep), .m_pay_tlast_o(prx_tlast),
    .m_pay_tvalid_o(prx_tvalid), .m_pay_tready_i(prx_tready),
    .drop_icrc_o(st_drop_icrc), .drop_hdr_o(st_drop_hdr), .accept_o(st_rx_accept));

  logic st_drop_qp, st_tx_ack, st_tx_rnr, st_tx_nak, st_dup, st_psn_err, st_rx_prot, st_drop_qkey, st_ud_nowqe;
  // ---------------------------------------------------------------- tag matching
  logic lk_valid, lk_ready, lk_commit_miss, lk_rsp_valid, lk_rsp_hit, lk_rsp_unexp, lk_rsp_blocked;
  logic [SRQ_W-1:0] lk_srq;
  logic [63:0] lk_tag;
  logic [TM_H_W-1:0] lk_rsp_handle;
  logic eo_valid, eo_ready, eo_sw_cnt_vld, eo_rsp_valid, eo_rsp_ok;
  logic [1:0] eo_code;
  logic [SRQ_W-1:0] eo_srq;
  logic [TM_H_W-1:0] eo_handle;
  logic [63:0] eo_tag, eo_mask;
  logic [15:0] eo_sw_cnt, eo_rsp_hw_cnt;
  logic [NUM_SRQ-1:0][TM_H_W:0] tm_occ, tm_disabled;
  logic [NUM_SRQ-1:0][15:0] tm_hw_cnt, tm_sw_cnt;
  logic tb_we, tb_re, add_pend;
  logic [TM_H_W-1:0] tb_waddr, tb_raddr, add_pend_handle;
  logic [127:0] tb_wdata, tb_rdata;
  logic st_tm_exp, st_tm_unexp, st_tm_notag, st_tm_sync;
  logic [SRQ_W-1:0] st_tm_srq, st_tm_sync_srq;

  tmnic_tm_ops #(.DATA_W(DATA_W), .NUM_SRQ(NUM_SRQ), .TM_ENTRIES(TM_ENTRIES)) u_tm_ops (
    .clk_i, .rst_ni,
    .db_valid_i(db_valid && db_type == 3'd4), .db_idx_i(db_idx), .db_pi_i(db_val[15:0]),
    .srq_reset_i(srq_reset), .srq_reset_idx_i(srq_reset_idx),
    .srq_idx_o(srq2_rd_idx), .srq_rd_i(srq2_rd),
    .rd_addr_o(rd_addr[RD_TM_OP]), .rd_len_o(rd_len[RD_TM_OP]), .rd_valid_o(rd_valid[RD_TM_OP]),
    .rd_ready_i(rd_ready[RD_TM_OP]), .rsp_valid_i(rsp_valid && rsp_client == 3'(RD_TM_OP)),
    .rsp_data_i(rsp_data), .rsp_off_i(rsp_off), .rsp_last_i(rsp_last),
    .eo_valid_o(eo_valid), .eo_ready_i(eo_ready), .eo_code_o(eo_code), .eo_srq_o(eo_srq),
    .eo_handle_o(eo_handle), .eo_tag_o(eo_tag), .eo_mask_o(eo_mask), .eo_sw_cnt_vld_o(eo_sw_cnt_vld),
    .eo_sw_cnt_o(eo_sw_cnt), .eo_rsp_valid_i(eo_rsp_valid), .eo_rsp_ok_i(eo_rsp_ok),
    .eo_rsp_hw_cnt_i(eo_rsp_hw_cnt),
    .tb_we_o(tb_we), .tb_waddr_o(tb_waddr), .tb_wdata_o(tb_wdata),
    .add_pend_o(add_pend), .add_pend_handle_o(add_pend_handle),
    .cqe_o(cqe[2]), .cqe_valid_o(cqe_valid[2]), .cqe_ready_i(cqe_ready[2]),
    .sync_o(st_tm_sync), .sync_srq_o(st_tm_sync_srq), .quiet_o(tmo_quiet), .idle_o(tmo_idle));

  tmnic_tm_engine #(.N_ENTRIES(TM_ENTRIES), .NUM_SRQ(NUM_SRQ), .N_CLASS(TM_CLASSES), .N_WAYS(TM_WAYS),
                    .N_BUCKETS(TM_BUCKETS), .CAM_W(TM_CAM), .SEQ_W(TM_SEQ_W)) u_tm (
    .clk_i, .rst_ni,
    .op_valid_i(eo_valid), .op_ready_o(eo_ready), .op_code_i(eo_code), .op_srq_i(eo_srq),
    .op_handle_i(eo_handle), .op_tag_i(eo_tag), .op_mask_i(eo_mask), .op_sw_cnt_vld_i(eo_sw_cnt_vld),
    .op_sw_cnt_i(eo_sw_cnt), .op_rsp_valid_o(eo_rsp_valid), .op_rsp_ok_o(eo_rsp_ok),
    .op_rsp_hw_cnt_o(eo_rsp_hw_cnt),
    .lk_valid_i(lk_valid), .lk_ready_o(lk_ready), .lk_srq_i(lk_srq), .lk_tag_i(lk_tag),
    .lk_commit_miss_i(lk_commit_miss), .lk_rsp_valid_o(lk_rsp_valid), .lk_rsp_hit_o(lk_rsp_hit),
    .lk_rsp_handle_o(lk_rsp_handle), .lk_rsp_unexp_o(lk_rsp_unexp), .lk_rsp_blocked_o(lk_rsp_blocked),
    .occ_o(tm_occ), .disabled_o(tm_disabled), .hw_cnt_o(tm_hw_cnt), .sw_cnt_o(tm_sw_cnt),
    .cam_used_o(tm_cam_used), .spilled_o(tm_spilled), .idle_o(tme_idle));

  // Tagged buffers {lkey, length, addr} by engine handle: written by ADDs, read on a match.
  tmnic_ram_sdp #(.WIDTH(128), .DEPTH(TM_ENTRIES), .NO_COLLISION(1'b1)) u_tag_buf (
    .clk_i, .we_i(tb_we), .waddr_i(tb_waddr), .wdata_i(tb_wdata),
    .re_i(tb_re), .raddr_i(tb_raddr), .rdata_o(tb_rdata));

  // READ: the responder's jobs for the read-response engine, its done counts; the requester's READ
  // responses checked by the completer (ack kinds, verdicts).
  logic            job_valid, job_ready;
  logic [QP_W-1:0] job_qp;
  logic [63:0]     job_iova;
  logic [31:0]     job_len;
  logic [23:0]     job_psn, job_msn;
  logic [3:0]      job_pmtu_log;
  logic            job_atom;
  logic [QP_W-1:0] rdone_raddr;
  logic [2:0]      rdone_rdata;

  // The read-response engine: the responder's READ jobs, answered in order on the TX scheduler's
  // third source; the ACK generator counts jobs given and sent (READ responses before later ACKs).
  localparam int unsigned RD_CW = $clog2(NUM_QP * MAX_RD_ATOM) + 1;
  logic [RD_CW-1:0] rdr_jobs_in, rdr_jobs_out, rdr_jobs_out_q;
  tmnic_rd_resp #(.DATA_W(DATA_W), .NUM_QP(NUM_QP), .NSLOT(NSLOT)) u_rdr (
    .clk_i, .rst_ni,
    .job_valid_i(job_valid), .job_ready_o(job_ready), .job_qp_i(job_qp), .job_iova_i(job_iova), .job_len_i(job_len),
    .job_psn_i(job_psn), .job_msn_i(job_msn), .job_pmtu_log_i(job_pmtu_log), .job_atom_i(job_atom),
    .done_raddr_i(rdone_raddr), .done_rdata_o(rdone_rdata),
    .jobs_in_o(rdr_jobs_in), .jobs_out_o(rdr_jobs_out),
    .path_idx_o(rdr_qp), .path_i(rdr_path), .local_mac_i(mac), .local_ip_i(ip),
    .rd_addr_o(rd_addr[RD_RR_PAY]), .rd_len_o(rd_len[RD_RR_PAY]), .rd_valid_o(rd_valid[RD_RR_PAY]),
    .rd_ready_i(rd_ready[RD_RR_PAY]), .rsp_valid_i(rsp_valid && rsp_client == 3'(RD_RR_PAY)),
    .rsp_data_i(rsp_data), .rsp_off_i(rsp_off), .rsp_be_i(rsp_be), .rsp_last_i(rsp_last),
    .pkt_hdr_o(rr_pkt_hdr), .pkt_slot_o(rr_pkt_slot), .pkt_valid_o(rr_pkt_valid), .pkt_ready_i(rr_pkt_ready),
    .slot_free_i(rr_slot_free), .txb_rd_i(txb2_rd), .txb_pos_i(txb2_rpos), .txb_data_o(txb2_rdata),
    .busy_o(rdr_busy), .idle_o(rdr_idle));
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rdr_jobs_out_q <= '0;
    else rdr_jobs_out_q <= rdr_jobs_out;
  end
  wire unused_rdr = ^{rdr_jobs_in};

  // The responder; its ACK/NAK events go to the ACK generator below.
  logic            ag_ev_valid, ag_ev_ready, ag_idle, rsp_idle;
  logic [QP_W-1:0] ag_ev_qp;
  logic [7:0]      ag_ev_syn;
  logic [23:0]     ag_ev_msn, ag_ev_psn;
  tmnic_rx_engine #(.DATA_W(DATA_W), .NUM_QP(NUM_QP), .NUM_MR(NUM_MR), .NUM_SRQ(NUM_SRQ),
                    .TM_ENTRIES(TM_ENTRIES)) u_rx (
    .clk_i, .rst_ni,
    .qp_idx_o(rsp_qp), .qp_rd_i(rsp_cfg),
    .cqe_qp_o(cqe_qp), .cqe_src_qp_i(cqe_src_qp),
    .mr_idx_o(mr_rd_idx[1]), .mr_rd_i(mr_rd[1]), .mr_gen_i(mr_gen), .srq_idx_o(srq_rd_idx), .srq_rd_i(srq_rd),
    .kick_i({err_sq, qp_set}), .kick_qp_i({err_sq_qp, init_qp}), .init_rq_i(init_rq), .init_qp_i(init_qp), .init_psn_i(init_rq_psn),
    .srq_reset_i(srq_reset), .srq_reset_idx_i(srq_reset_idx),
    .db_valid_i(db_valid && (db_type == 3'd1 || db_type == 3'd2)), .db_srq_i(db_type == 3'd2), .db_ready_o(rx_db_ready),
    .db_idx_i(db_idx), .db_pi_i(db_val[15:0]),
    .s_hdr_i(prx_hdr), .s_hdr_valid_i(prx_hdr_valid), .s_hdr_ready_o(prx_hdr_ready),
    .s_pay_tdata_i(prx_tdata), .s_pay_tkeep_i(prx_tkeep), .s_pay_tlast_i(prx_tlast),
    .s_pay_tvalid_i(prx_tvalid), .s_pay_tready_o(prx_tready),
    .ack_valid_o(ack_ev_valid), .ack_ready_i(ack_ev_ready), .ack_qp_o(ack_ev_qp), .ack_aeth_o(ack_ev_aeth),
    .ack_psn_o(ack_ev_psn), .ack_kind_o(ack_ev_kind), .ack_first_o(ack_ev_first), .ack_last_o(ack_ev_last),
    .ack_atom_o(ack_ev_atom),
    .vr_valid_i(cmp_vr_valid), .vr_ok_i(cmp_vr_ok), .vr_idx_i(cmp_vr_idx),
    .job_valid_o(job_valid), .job_ready_i(job_ready), .job_qp_o(job_qp), .job_iova_o(job_iova), .job_len_o(job_len),
    .job_psn_o(job_psn), .job_msn_o(job_msn), .job_pmtu_log_o(job_pmtu_log), .job_atom_o(job_atom),
    .rdone_raddr_o(rdone_raddr), .rdone_rdata_i(rdone_rdata),
    .rci_re_o(rci_re), .rci_raddr_o(rci_raddr), .rci_rdata_i(rci_rdata),
    .rv_we_o(rv_we), .rv_qp_o(rv_qp), .rv_slot_o(rv_slot), .rv_desc_o(rv_desc),
    .rv_db_valid_o(rv_db_valid), .rv_db_ready_i(rv_db_ready), .rv_db_qp_o(rv_db_qp), .rv_db_pi_o(rv_db_pi),
    .ev_valid_o(ag_ev_valid), .ev_ready_i(ag_ev_ready), .ev_qp_o(ag_ev_qp), .ev_syn_o(ag_ev_syn),
    .ev_msn_o(ag_ev_msn), .ev_psn_o(ag_ev_psn),
    .rd_addr_o(rd_addr[RD_RQ_WQE]), .rd_len_o(rd_len[RD_RQ_WQE]), .rd_valid_o(rd_valid[RD_RQ_WQE]),
    .rd_ready_i(rd_ready[RD_RQ_WQE]), .rsp_valid_i(rsp_valid && rsp_client == 3'(RD_RQ_WQE)),
    .rsp_data_i(rsp_data), .rsp_off_i(rsp_off), .rsp_last_i(rsp_last),
    .wr_addr_o(wr_addr[WR_SCATTER]), .wr_len_o(wr_len[WR_SCATTER]), .wr_valid_o(wr_valid[WR_SCATTER]),
    .wr_ready_i(wr_ready[WR_SCATTER]), .wr_data_req_i(wr_data_req[WR_SCATTER]), .wr_data_off_i(wr_data_off),
    .wr_data_o(wr_data[WR_SCATTER]), .wr_done_i(wr_done[WR_SCATTER]),
    .lk_valid_o(lk_valid), .lk_ready_i(lk_ready), .lk_srq_o(lk_srq), .lk_tag_o(lk_tag),
    .lk_commit_miss_o(lk_commit_miss), .lk_rsp_valid_i(lk_rsp_valid), .lk_rsp_hit_i(lk_rsp_hit),
    .lk_rsp_handle_i(lk_rsp_handle), .lk_rsp_unexp_i(lk_rsp_unexp), .lk_rsp_blocked_i(lk_rsp_blocked),
    .tb_re_o(tb_re), .tb_raddr_o(tb_raddr), .tb_rdata_i(tb_rdata),
    .add_pend_i(add_pend), .add_pend_handle_i(add_pend_handle),
    .tm_exp_o(st_tm_exp), .tm_unexp_o(st_tm_unexp), .tm_notag_o(st_tm_notag), .tm_srq_o(st_tm_srq),
    .cqe_o(cqe[1]), .cqe_valid_o(cqe_valid[1]), .cqe_ready_i(cqe_ready[1]),
    .err_o(err_rq), .err_qp_o(err_rq_qp), .err_kind_o(err_rq_kind), .note_o(note_rq), .query_qp_i(query_qp), .query_psn_o(query_rq_psn),
    .drop_qp_o(st_drop_qp), .tx_ack_o(st_tx_ack), .tx_rnr_o(st_tx_rnr), .tx_nak_o(st_tx_nak),
    .dup_o(st_dup), .psn_err_o(st_psn_err), .prot_err_o(st_rx_prot),
    .drop_qkey_o(st_drop_qkey), .ud_nowqe_o(st_ud_nowqe), .quiet_o(rx_quiet), .idle_o(rsp_idle));

  // ACK/NAK packets for the responder's events (peer's address from the context).
  tmnic_ack_gen #(.NUM_QP(NUM_QP)) u_ack_gen (
    .clk_i, .rst_ni,
    .ev_valid_i(ag_ev_valid), .ev_ready_o(ag_ev_ready), .ev_qp_i(ag_ev_qp), .ev_syn_i(ag_ev_syn),
    .ev_msn_i(ag_ev_msn), .ev_psn_i(ag_ev_psn), .job_in_i(job_valid && job_ready),
    .job_out_i(rdr_jobs_out != rdr_jobs_out_q),
    .cfg_idx_o(ack_qp), .cfg_i(ack_path), .local_mac_i(mac), .local_ip_i(ip),
    .tx_hdr_o(ack_hdr), .tx_valid_o(ack_tx_valid), .tx_ready_i(ack_tx_ready), .idle_o(ag_idle));
  assign rx_idle = rsp_idle && ag_idle;

  // ---------------------------------------------------------------- completions
  // Asynchronous event records (a QP moved to ERR by an engine) go to the ASYNC_CQ as CQEs.
  tmnic_async_ev #(.NUM_QP(NUM_QP)) u_async (
    .clk_i, .rst_ni, .cfg_i(async_cq),
    .sq_err_i(err_sq), .sq_err_qp_i(err_sq_qp),
    .rq_err_i(err_rq || note_rq), .rq_err_qp_i(err_rq_qp), .rq_err_kind_i(err_rq_kind),
    .cq_err_i(cq_err), .cq_err_cq_i(cq_err_cq), .fat_i(fat_err), .fat_qp_i(fat_err_qp),
    .cqe_o(cqe[3]), .cqe_valid_o(cqe_valid[3]), .cqe_ready_i(cqe_ready[3]),
    .drop_o(st_async_drop), .idle_o(aev_idle));

  logic st_cqe, st_cq_ovf;
  tmnic_cq_writer #(.DATA_W(DATA_W), .NUM_CQ(NUM_CQ), .NSRC(4), .DATA_LAT(3)) u_cqw (
    .clk_i, .rst_ni,
    .req_i(cqe), .req_valid_i(cqe_valid), .req_ready_o(cqe_ready),
    .cq_idx_o(cq_rd_idx), .cq_rd_i(cq_rd), .cq_reset_i(cq_reset), .cq_reset_idx_i(cq_reset_idx),
    .db_valid_i(db_valid && db_type == 3'd3), .db_idx_i(db_idx), .db_val_i(db_val),
    .dma_addr_o(wr_addr[WR_CQE]), .dma_len_o(wr_len[WR_CQE]), .dma_valid_o(wr_valid[WR_CQE]),
    .dma_ready_i(wr_ready[WR_CQE]), .dma_data_req_i(wr_data_req[WR_CQE]), .dma_data_off_i(wr_data_off),
    .dma_data_o(wr_data[WR_CQE]), .dma_done_i(wr_done[WR_CQE]),
    .irq_o, .irq_cq_o, .cqe_o(st_cqe), .overflow_o(st_cq_ovf),
    .cq_err_o(cq_err), .cq_err_cq_o(cq_err_cq),
    .fat_valid_o(fat_valid), .fat_ready_i(fat_ready), .fat_qp_o(fat_qp),
    .qp_set_i(qp_set), .qp_set_idx_i(16'(init_qp)), .qp_idx_o(cqw_qp), .qp_state_i(cqw_state),
    .idle_o(cqw_idle));

  // ---------------------------------------------------------------- statistics
  logic st_tx_pkt, st_lb;
  assign st_tx_pkt = btx_tvalid && btx_tready && btx_tlast;
  assign st_lb = lb_tvalid && lb_tready && lb_tlast;
  always_comb begin
    stat_inc = '0;
    stat_inc[STAT_TX_PKTS] = st_tx_pkt;
    stat_inc[STAT_RX_PKTS] = st_rx_accept;
    stat_inc[STAT_RX_DROP_ICRC] = st_drop_icrc;
    stat_inc[STAT_RX_DROP_HDR] = st_drop_hdr;
    stat_inc[STAT_RX_DROP_QP] = st_drop_qp;
    stat_inc[STAT_TX_ACKS] = st_tx_ack || st_tx_rnr || st_tx_nak;
    stat_inc[STAT_RX_ACKS] = st_rx_ack;
    stat_inc[STAT_TX_RNR_NAKS] = st_tx_rnr;
    stat_inc[STAT_RX_RNR_NAKS] = st_rx_rnr;
    stat_inc[STAT_TX_NAKS] = st_tx_nak;
    stat_inc[STAT_RX_NAKS] = st_rx_nak;
    stat_inc[STAT_RETRANSMITS] = st_retx;
    stat_inc[STAT_CQES] = st_cqe;
    stat_inc[STAT_RX_DUP] = st_dup;
    stat_inc[STAT_RX_PSN_ERR] = st_psn_err;
    stat_inc[STAT_LOOPBACK] = st_lb;
    stat_inc[STAT_DMA_RD_REQ] = dma_rd_burst;
    stat_inc[STAT_DMA_WR_REQ] = dma_wr_burst;
    stat_inc[STAT_CQ_OVERFLOW] = st_cq_ovf;
    stat_inc[STAT_PROT_ERR] = st_sq_prot || st_rx_prot;
    stat_inc[STAT_ASYNC_DROP] = st_async_drop;
    stat_inc[STAT_RX_DROP_QKEY] = st_drop_qkey;
    stat_inc[STAT_RX_UD_NO_WQE] = st_ud_nowqe;
  end
  tmnic_stats #(.NUM_SRQ(NUM_SRQ), .H_W(TM_H_W)) u_stats (
    .clk_i, .rst_ni, .inc_i(stat_inc),
    .tm_exp_i(st_tm_exp), .tm_unexp_i(st_tm_unexp), .tm_notag_i(st_tm_notag), .tm_srq_i(st_tm_srq),
    .tm_sync_i(st_tm_sync), .tm_sync_srq_i(st_tm_sync_srq), .srq_reset_i(srq_reset), .srq_reset_idx_i(srq_reset_idx),
    .occ_i(tm_occ), .disabled_i(tm_disabled), .hw_cnt_i(tm_hw_cnt), .sw_cnt_i(tm_sw_cnt),
    .rd_valid_i(st_rd_valid), .rd_ready_o(st_rd_ready), .rd_tm_i(st_rd_tm), .rd_idx_i(st_rd_idx),
    .rsp_valid_o(st_rsp_valid), .rsp_data_o(st_rsp_data));

  // Frames inside the builder and the parser pipelines (they have no idle output of their own):
  // builder: header taken, last beat not out yet; parser: last beat in, neither passed on nor dropped.
  logic [7:0] tx_frames_q, rx_frames_q;
  wire tx_in = tx_hdr_valid && tx_hdr_ready;
  wire tx_out = btx_tvalid && btx_tready && btx_tlast;
  wire rx_in = rx_tvalid && rx_tready && rx_tlast;
  wire rx_out = (prx_hdr_valid && prx_hdr_ready) || st_drop_icrc || st_drop_hdr;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tx_frames_q <= '0;
      rx_frames_q <= '0;
    end else begin
      tx_frames_q <= tx_frames_q + {7'd0, tx_in} - {7'd0, tx_out};
      rx_frames_q <= rx_frames_q + {7'd0, rx_in} - {7'd0, rx_out};
    end
  end

  // Idle: no engine has work; only a BAR access, an incoming frame or the RNR timer can start any.
  assign idle_o = sq_idle && rx_idle && txs_idle && cqw_idle && dma_wr_idle && tmo_idle && tme_idle && lb_idle && aev_idle &&
                  rdr_idle && rvsq_idle &&
                  !m_axi_arvalid_o && !dr_arvalid &&
                  !rsp_valid && !btx_tvalid && !rx_tvalid && !prx_hdr_valid && !cmd_valid && !db_valid &&
                  !cfg_changed && !cmd_busy && !sq_rd_valid && (tx_frames_q == 8'd0) && (rx_frames_q == 8'd0) &&
                  !ack_ev_valid;

  // CTRL.enable is reserved for a port gate (frames flow regardless in this version).
  wire unused_ok = ^{enable, fat_qp >> QP_W, cqw_qp >> QP_W};   // (a completion's QP is always < NUM_QP)
endmodule
