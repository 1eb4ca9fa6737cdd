// RDMA READ response engine of the responder (IBA 9.7.5.1.3, 9.4.3): sends the response packets of
// each READ request the receive engine accepted, strictly in the order it accepted them.
//
// The receive engine has checked the request's RETH against the MR table and hands over a job {QP,
// IOVA, length, first PSN, MSN, PMTU}. Jobs wait in a FIFO in block RAM (NUM_QP * MAX_RD_ATOM
// entries: the receive engine admits at most MAX_RD_ATOM per QP, so it is never full; job_ready_o
// still says so). The head job becomes one message of a tmnic_req_pkt in READ-response mode: the
// job's range is the message's only SGE, and one packet per go gives READ_RESP_FIRST/MIDDLE/LAST or
// ONLY by position, AETH {ACK, MSN} on FIRST/LAST/ONLY, PSN = first PSN + packet number. Its
// payload is gathered into this block's own TX buffer, which the TX scheduler reads.
//
// A job ends when the TX scheduler takes its last packet (pkt_valid_o && pkt_ready_i in cycle h):
// jobs_out_o counts it from cycle h+1, and the QP's done count (mod 8) is written in cycle h+1, so a
// done read presented in cycle h+1 or later returns it (the table's reads are write-first). An ACK
// the ACK generator holds until jobs_out_o has passed its stamp is therefore behind the responses.
// jobs_in_o - jobs_out_o is at most DEPTH + NSLOT (queued, being built, in slots): below 2^CW. The
// done counts are cleared only by the sweep after reset (NUM_QP cycles, job_ready_o low).
//
// Per packet the block adds no cycle to tmnic_req_pkt's (go_i whenever ready_o); per job one (the
// message start with the SGE write; the next job's FIFO read overlaps the last packet's done_o).
module tmnic_rd_resp import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,          // power of two >= 4
  parameter int unsigned NSLOT  = 8,           // its own 4 KiB TX buffer slots (power of two >= 2)
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned DEPTH = NUM_QP * MAX_RD_ATOM,   // jobs queued at most
  localparam int unsigned CW = $clog2(DEPTH) + 1,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned TXB_POS_W = 12 + SLOT_W
) (
  input  logic                   clk_i,
  input  logic                   rst_ni,

  // READ jobs from the responder, in the order the requests were accepted (valid held until ready)
  input  logic                   job_valid_i,
  output logic                   job_ready_o,
  input  logic [QP_W-1:0]        job_qp_i,
  input  logic [63:0]            job_iova_i,     // IOVA of the first byte (checked and translated)
  input  logic [31:0]            job_len_i,      // bytes to return (0: one READ_RESP_ONLY, no payload)
  input  logic [23:0]            job_psn_i,      // PSN of the first response (the request's PSN)
  input  logic [23:0]            job_msn_i,      // MSN for the AETH
  input  logic [3:0]             job_pmtu_log_i, // 8..12

  // Jobs finished per QP, mod 8 (registered write-first read: done_rdata_o one cycle after
  // done_raddr_i, counting every job whose last packet was taken before the cycle of the read)
  input  logic [QP_W-1:0]        done_raddr_i,
  output logic [2:0]             done_rdata_o,

  // Global order counters (mod 2^CW): jobs taken; jobs whose last packet the TX scheduler has taken
  output logic [CW-1:0]          jobs_in_o,
  output logic [CW-1:0]          jobs_out_o,

  // Context: the path of the job's QP (registered read: path_i one cycle after path_idx_o)
  output logic [QP_W-1:0]        path_idx_o,
  input  qp_path_t               path_i,
  input  logic [47:0]            local_mac_i,
  input  logic [31:0]            local_ip_i,

  // Payload DMA reads (a client port of tmnic_dma_rd) and its responses to this client
  output logic [63:0]            rd_addr_o,
  output logic [12:0]            rd_len_o,
  output logic                   rd_valid_o,
  input  logic                   rd_ready_i,
  input  logic                   rsp_valid_i,
  input  logic [DATA_W-1:0]      rsp_data_i,
  input  logic signed [13:0]     rsp_off_i,
  input  logic [BYTES-1:0]       rsp_be_i,
  input  logic                   rsp_last_i,

  // Packets to the TX scheduler: header, payload in slot pkt_slot_o of this block's TX buffer
  output roce_hdr_t              pkt_hdr_o,
  output logic [SLOT_W-1:0]      pkt_slot_o,
  output logic                   pkt_valid_o,
  input  logic                   pkt_ready_i,
  input  logic [NSLOT-1:0]       slot_free_i,

  // This block's TX buffer, read port for the TX scheduler (data two cycles after txb_rd_i: RD_LAT 2)
  input  logic                   txb_rd_i,
  input  logic [TXB_POS_W-1:0]   txb_pos_i,
  output logic [DATA_W-1:0]      txb_data_o,

  output logic                   busy_o,   // a job queued or not yet wholly taken by the TX scheduler
  output logic                   idle_o    // nothing queued, built, in flight, offered or unreturned
);
  localparam int unsigned AW = CW - 1;

  if (NUM_QP < 4 || (NUM_QP & (NUM_QP - 1)) != 0) begin : g_chk_qp
    $fatal(1, "tmnic_rd_resp: NUM_QP must be a power of two >= 4");
  end
  if (NSLOT < 2 || (NSLOT & (NSLOT - 1)) != 0) begin : g_chk_slot
    $fatal(1, "tmnic_rd_resp: NSLOT must be a power of two >= 2");
  end
  if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_rd_resp: DATA_W must be a power of two >= 64 (tmnic_req_pkt)");
  end
  // (jobs taken and not handed over, up to DEPTH + NSLOT, must stay below 2^CW for the order counters)
  if (NSLOT >= DEPTH) begin : g_chk_cw
    $fatal(1, "tmnic_rd_resp: NSLOT must be below NUM_QP * MAX_RD_ATOM");
  end
  if (MAX_RD_ATOM < 1 || (MAX_RD_ATOM & (MAX_RD_ATOM - 1)) != 0) begin : g_chk_atom
    $fatal(1, "tmnic_rd_resp: MAX_RD_ATOM must be a power of two (the job FIFO's depth)");
  end

  typedef struct packed {
    logic [QP_W-1:0] qp;
    logic [63:0]     iova;
    logic [31:0]     len;
    logic [23:0]     psn;
    logic [23:0]     msn;
    logic [3:0]      pmtu_log;
  } job_t;

  typedef enum logic [1:0] {R_INIT, R_IDLE, R_LOAD, R_RUN} state_e;

  // Control (reset)
  state_e          state_q, state_d;
  logic [CW-1:0]   wr_q, wr_d, rd_q, rd_d, out_q, out_d;   // job FIFO pointers; jobs handed over
  logic [QP_W-1:0] clr_q, clr_d;                          // done-table sweep after reset
  logic            inc_q, inc_d;                          // a done count to increment
  // Payload (no reset)
  // The job being sent (its IOVA went into the SGE table, its PSN into psn_q)
  logic [QP_W-1:0] qp_q;
  logic [31:0]     len_q;
  logic [23:0]     msn_q;
  logic [3:0]      pmtu_q;
  logic [23:0]     psn_q, psn_d;                          // PSN of its next packet
  logic [QP_W-1:0] inc_qp_q;

  // ---------------------------------------------------------------- job FIFO (block RAM)
  // A read never meets a write of the same word: the FIFO is read only when not empty and written
  // only when not full.
  logic  f_re, job_push, job_ld;
  job_t  f_rdata;
  wire   f_empty = (wr_q == rd_q);
  assign job_ready_o = (state_q != R_INIT) && (wr_q - rd_q) != CW'(DEPTH);
  assign job_push = job_valid_i && job_ready_o;
  tmnic_ram_sdp #(.WIDTH($bits(job_t)), .DEPTH(DEPTH), .NO_COLLISION(1'b1)) u_jobs (
    .clk_i, .we_i(job_push), .waddr_i(wr_q[AW-1:0]),
    .wdata_i({job_qp_i, job_iova_i, job_len_i, job_psn_i, job_msn_i, job_pmtu_log_i}),
    .re_i(f_re), .raddr_i(rd_q[AW-1:0]), .rdata_o(f_rdata));

  // ---------------------------------------------------------------- packet builder
  logic p_ready, p_go, p_done, p_last, p_new, p_sg_we, p_idle, p_empty;
  logic txb_wr;
  logic [TXB_POS_W-1:0] txb_wpos;
  logic [DATA_W-1:0] txb_wdata;
  logic [BYTES-1:0] txb_be;
  tmnic_req_pkt #(.DATA_W(DATA_W), .NSLOT(NSLOT)) u_pkt (
    .clk_i, .rst_ni,
    .msg_new_i(p_new), .msg_len_i(len_q), .inline_i(1'b0), .inl_bytes_i('0), .imm_i(1'b0),
    .write_i(1'b0), .read_i(1'b0), .rresp_i(1'b1), .aeth_i({AETH_SYN_ACK, msn_q}),
    .atomic_i(1'b0), .atom_cs_i(1'b0), .swap_i('0), .cmp_i('0), .atom_ack_i(1'b0),
    .raddr_i('0), .rkey_i('0), .imm_data_i('0), .solicited_i(1'b0), .ud_i(1'b0), .qkey_i('0), .sqp_i('0),
    // (the job's range is the message's only SGE; it is written while the FIFO's word is on f_rdata)
    .sg_we_i(p_sg_we), .sg_idx_i(3'd0), .sg_iova_i(f_rdata.iova), .sg_len_i(f_rdata.len),
    .path_i, .pmtu_log_i(pmtu_q), .local_mac_i, .local_ip_i,
    // (the ACK generator's source port for the QP: one flow per QP)
    .udp_sport_i(16'hC000 | 16'(qp_q)), .psn_i(psn_q),
    .ready_o(p_ready), .go_i(p_go), .done_o(p_done), .last_o(p_last),
    .rd_addr_o, .rd_len_o, .rd_valid_o, .rd_ready_i,
    .rsp_valid_i, .rsp_data_i, .rsp_off_i, .rsp_be_i, .rsp_last_i,
    .txb_wr_o(txb_wr), .txb_pos_o(txb_wpos), .txb_data_o(txb_wdata), .txb_be_o(txb_be),
    .pkt_hdr_o, .pkt_slot_o, .pkt_valid_o, .pkt_ready_i, .slot_free_i,
    .empty_o(p_empty), .idle_o(p_idle));

  tmnic_shift_buf #(.DATA_W(DATA_W), .DEPTH(NSLOT * 4096 / BYTES), .RD_LAT(2)) u_txb (
    .clk_i, .wr_en_i(txb_wr), .wr_pos_i(txb_wpos), .wr_data_i(txb_wdata), .wr_be_i(txb_be),
    .rd_en_i(txb_rd_i), .rd_pos_i(txb_pos_i), .rd_data_o(txb_data_o));

  // The context read follows the job: the FIFO's word while it is loaded, so path_i is there for the
  // first packet in the next cycle and holds while the job is sent.
  assign path_idx_o = (state_q == R_LOAD) ? f_rdata.qp : qp_q;

  // ---------------------------------------------------------------- packets in flight
  // Each packet's {last of its job, QP} from its go to its hand-over (slots are handed over in the
  // order they were allocated; NSLOT packets at most are between the two).
  logic            t_valid, t_ready, t_last, ho;
  logic [QP_W-1:0] t_qp;
  logic [$clog2(NSLOT):0] t_level;
  tmnic_fifo #(.WIDTH(1 + QP_W), .DEPTH(NSLOT), .OUT_REG(1)) u_tags (
    .clk_i, .rst_ni, .s_data_i({p_last, qp_q}), .s_valid_i(p_go), .s_ready_o(t_ready),
    .m_data_o({t_last, t_qp}), .m_valid_o(t_valid), .m_ready_i(ho), .level_o(t_level));
  assign ho = pkt_valid_o && pkt_ready_i;

  // ---------------------------------------------------------------- done counts (block RAM)
  // Two read ports, write-first: the receive engine's, and the increment's at the head packet's QP,
  // whose word is therefore current in the cycle after the hand-over even when the previous job of
  // the same QP was written in that cycle.
  logic             d_we;
  logic [QP_W-1:0]  d_waddr;
  logic [2:0]       d_wdata;
  logic [1:0][2:0]  d_rdata;
  logic [1:0][QP_W-1:0] d_raddr_q;
  tmnic_ram_rdports #(.WIDTH(3), .DEPTH(NUM_QP), .NRD(2)) u_done (
    .clk_i, .we_i(d_we), .waddr_i(d_waddr), .wdata_i(d_wdata),
    .raddr_i({t_qp, done_raddr_i}), .raddr_q_o(d_raddr_q), .rdata_o(d_rdata));
  assign done_rdata_o = d_rdata[0];

  // ---------------------------------------------------------------- next state
  always_comb begin
    state_d = state_q; wr_d = wr_q; rd_d = rd_q; out_d = out_q; clr_d = clr_q;
    psn_d = psn_q;
    f_re = 1'b0; job_ld = 1'b0; p_new = 1'b0; p_sg_we = 1'b0; p_go = 1'b0;
    if (job_push) wr_d = wr_q + 1'b1;

    unique case (state_q)
      R_INIT: begin
        clr_d = clr_q + 1'b1;
        if (clr_q == QP_W'(NUM_QP - 1)) state_d = R_IDLE;
      end
      R_IDLE: if (!f_empty) begin
        f_re = 1'b1;
        rd_d = rd_q + 1'b1;
        state_d = R_LOAD;
      end
      // The job's word is on f_rdata: start the message with its range as SGE 0.
      R_LOAD: begin
        job_ld = 1'b1;
        psn_d = f_rdata.psn;
        p_new = 1'b1;
        p_sg_we = 1'b1;
        state_d = R_RUN;
      end
      // A packet whenever the builder can take one; after the job's last one, the next job (the
      // builder is idle again in the cycle after its done_o).
      R_RUN: begin
        p_go = p_ready;
        if (p_go) psn_d = psn_q + 1'b1;
        if (p_done && p_last) begin
          if (!f_empty) begin
            f_re = 1'b1;
            rd_d = rd_q + 1'b1;
            state_d = R_LOAD;
          end else begin
            state_d = R_IDLE;
          end
        end
      end
      default: state_d = R_IDLE;
    endcase

    inc_d = ho && t_last;
    if (inc_d) out_d = out_q + 1'b1;
    // The sweep clears the counts; later, the increment of the job handed over in the last cycle.
    d_we = (state_q == R_INIT) || inc_q;
    d_waddr = (state_q == R_INIT) ? clr_q : inc_qp_q;
    d_wdata = (state_q == R_INIT) ? 3'd0 : d_rdata[1] + 3'd1;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= R_INIT;
      wr_q <= '0;
      rd_q <= '0;
      out_q <= '0;
      clr_q <= '0;
      inc_q <= 1'b0;
    end else begin
      state_q <= state_d;
      wr_q <= wr_d;
      rd_q <= rd_d;
      out_q <= out_d;
      clr_q <= clr_d;
      inc_q <= inc_d;
    end
  end
  always_ff @(posedge clk_i) begin
    if (job_ld) begin
      qp_q <= f_rdata.qp;
      len_q <= f_rdata.len;
      msn_q <= f_rdata.msn;
      pmtu_q <= f_rdata.pmtu_log;
    end
    psn_q <= psn_d;
    if (inc_d) inc_qp_q <= t_qp;
  end

  assign jobs_in_o = wr_q;
  assign jobs_out_o = out_q;
  assign busy_o = (wr_q != out_q);
  assign idle_o = (state_q == R_IDLE) && f_empty && p_idle && !inc_q;
  wire unused_ok = ^{p_empty, d_raddr_q, t_level};

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  tmnic_hold_chk #(.W($bits(job_t)), .NAME("tmnic_rd_resp: READ job")) u_job_hold (
    .clk_i, .rst_ni, .valid_i(job_valid_i), .ready_i(job_ready_o),
    .data_i({job_qp_i, job_iova_i, job_len_i, job_psn_i, job_msn_i, job_pmtu_log_i}));
  a_job_pmtu: assert property (@(posedge clk_i) disable iff (!chk_q)
    job_valid_i |-> job_pmtu_log_i >= 4'd8 && job_pmtu_log_i <= 4'd12)
    else $error("tmnic_rd_resp: job PMTU out of 256..4096");
  a_fifo_empty: assert property (@(posedge clk_i) disable iff (!chk_q) f_re |-> !f_empty)
    else $error("tmnic_rd_resp: job FIFO read while empty");
  // (queued: DEPTH at most; loaded and not wholly handed over: one per slot, and the one being built)
  a_order: assert property (@(posedge clk_i) disable iff (!chk_q)
    (wr_q - rd_q) <= CW'(DEPTH) && (rd_q - out_q) <= CW'(NSLOT + 1))
    else $error("tmnic_rd_resp: job counters out of order (taken %0d, loaded %0d, out %0d)", wr_q, rd_q, out_q);
  a_tag_room: assert property (@(posedge clk_i) disable iff (!chk_q) p_go |-> t_ready)
    else $error("tmnic_rd_resp: more packets in flight than slots");
  a_tag_ho: assert property (@(posedge clk_i) disable iff (!chk_q) pkt_valid_o |-> t_valid)
    else $error("tmnic_rd_resp: packet offered that was never started");
  a_idle_busy: assert property (@(posedge clk_i) disable iff (!chk_q) idle_o |-> !busy_o)
    else $error("tmnic_rd_resp: idle with a job not handed over");
  a_done_addr: assert property (@(posedge clk_i) disable iff (!chk_q) inc_q |-> d_raddr_q[1] == inc_qp_q)
    else $error("tmnic_rd_resp: done count read for another QP than the one handed over");
`endif
endmodule
