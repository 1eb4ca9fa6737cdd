// ACK/NAK generator of the responder: at most one ACK or NAK pending per QP, sent in the order the
// QPs first asked, whenever the TX scheduler takes one.
//
// The responder posts an event {QP, syndrome, MSN, PSN} per packet that needs an answer and never
// waits for the TX side: an event for a QP that already has one pending replaces its fields
// (a newer ACK supersedes an older one), except that a PSN-sequence NAK never replaces a pending
// NAK (RNR, invalid request, remote error, or an earlier sequence NAK: the requester must see the
// first one; the responder sends one sequence NAK per gap anyway). So a
// TX path blocked by a full receive path (loopback) cannot deadlock the receiver.
//
// RDMA READ responses (tmnic_rd_resp) must precede every later ACK/NAK of their QP on the wire
// (IBA 9.7.5.1.3: a requester takes an ACK beyond an unanswered READ as a lost response). Rather
// than track jobs per QP, each pending word holds a stamp: the number of READ jobs given to the
// read-response engine when its latest event was taken (job_in_i counts them, job_out_i counts
// jobs whose last packet the TX scheduler has taken). A word goes out only once as many jobs are
// out as its stamp says, so a QP's ACK never passes a READ it acknowledges (nor any earlier READ of
// another QP: it may wait for those, at most DEPTH jobs). Stamps are SW bits: a word waits in the
// FIFO behind at most NUM_QP - 1 others, each for at most NUM_QP * MAX_RD_ATOM jobs, so a stamp is
// compared before the counters run 2^(SW-1) apart.
// State in block RAM: a per-QP word {pending, syndrome, MSN, PSN, stamp} and a FIFO of QP numbers (NUM_QP
// deep: a QP is queued only when it has nothing pending, so it cannot overflow). Both have
// registered reads; one FSM owns them. The words are cleared by a sweep after reset (NUM_QP
// cycles, ev_ready_o low meanwhile). An event takes 2 cycles; when nothing is queued and the TX
// output is free it goes out directly (header 2 cycles after the event is taken), else a queued
// ACK takes 3 cycles from the FIFO head to the TX output.
module tmnic_ack_gen import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64,    // power of two, >= 4
  localparam int unsigned QP_W = $clog2(NUM_QP)
) (
  input  logic            clk_i,
  input  logic            rst_ni,

  // Events from the responder
  input  logic            ev_valid_i,
  output logic            ev_ready_o,
  input  logic [QP_W-1:0] ev_qp_i,
  input  logic [7:0]      ev_syn_i,      // AETH syndrome
  input  logic [23:0]     ev_msn_i,
  input  logic [23:0]     ev_psn_i,
  // READ jobs: given to the read-response engine, and sent (their last packet taken for the wire)
  input  logic            job_in_i,
  input  logic            job_out_i,

  // Context read port: the peer of the QP whose ACK is being built. A registered (block-RAM)
  // read: cfg_idx_o is the QP the next cycle needs, cfg_i arrives one cycle after it.
  output logic [QP_W-1:0] cfg_idx_o,
  input  qp_path_t        cfg_i,
  input  logic [47:0]     local_mac_i,
  input  logic [31:0]     local_ip_i,

  // ACK/NAK packets to send
  output roce_hdr_t       tx_hdr_o,
  output logic            tx_valid_o,
  input  logic            tx_ready_i,

  output logic            idle_o          // nothing pending, no event being handled
);
  if (NUM_QP < 4 || (NUM_QP & (NUM_QP - 1)) != 0) begin : g_chk_qp
    $fatal(1, "tmnic_ack_gen: NUM_QP must be a power of two >= 4");
  end

  localparam int unsigned SW = 2 * QP_W + $clog2(MAX_RD_ATOM) + 2;
  typedef struct packed {
    logic [SW-1:0] stamp;     // READ jobs given when the latest event was taken
    logic        pend;
    logic [7:0]  syn;
    logic [23:0] msn;
    logic [23:0] psn;
  } ack_t;

  typedef enum logic [2:0] { A_INIT, A_IDLE, A_EV, A_HEAD, A_POP } state_e;

  // Control (reset)
  state_e          state_q, state_d;
  logic [QP_W:0]   wr_q, wr_d, rd_q, rd_d;     // FIFO pointers
  logic [QP_W-1:0] clr_q, clr_d;               // reset sweep
  logic            tx_valid_d;
  // Payload (no reset)
  logic [QP_W-1:0] ev_qp_q, ev_qp_d, head_q, head_d;
  logic [7:0]      ev_syn_q, ev_syn_d;
  logic [23:0]     ev_msn_q, ev_msn_d, ev_psn_q, ev_psn_d;
  logic            hdr_ld;                      // load tx_hdr_o from {cfg_qp, cfg_i, hdr_w}
  logic [SW-1:0]   jin_q, jout_q;               // READ jobs given, sent
  // A word's READ jobs are all out (modular: jout_q - stamp in [0, 2^(SW-1)))
  function automatic logic jobs_out(input logic [SW-1:0] stamp, input logic [SW-1:0] out);
    logic [SW-1:0] d;
    d = out - stamp;
    jobs_out = !d[SW-1];
  endfunction
  ack_t            hdr_w;

  // ---------------------------------------------------------------- tables
  logic            t_re, t_we;
  logic [QP_W-1:0] t_raddr, t_waddr;
  ack_t            t_wdata, t_rdata;
  tmnic_ram_sdp #(.WIDTH($bits(ack_t)), .DEPTH(NUM_QP), .NO_COLLISION(1'b1)) u_tab (
    .clk_i, .we_i(t_we), .waddr_i(t_waddr), .wdata_i(t_wdata),
    .re_i(t_re), .raddr_i(t_raddr), .rdata_o(t_rdata));

  logic            f_re, f_we;
  logic [QP_W-1:0] f_rdata;
  tmnic_ram_sdp #(.WIDTH(QP_W), .DEPTH(NUM_QP), .NO_COLLISION(1'b1)) u_fifo (
    .clk_i, .we_i(f_we), .waddr_i(wr_q[QP_W-1:0]), .wdata_i(ev_qp_q),
    .re_i(f_re), .raddr_i(rd_q[QP_W-1:0]), .rdata_o(f_rdata));

  wire f_empty = (wr_q == rd_q);
  wire tx_free = !tx_valid_o || tx_ready_i;
  assign ev_ready_o = (state_q == A_IDLE);
  wire [QP_W-1:0] cfg_qp = (state_q == A_EV) ? ev_qp_q : head_q;   // the QP of cfg_i
  assign cfg_idx_o = (state_d == A_EV) ? ev_qp_d : head_d;

  // ---------------------------------------------------------------- next state
  always_comb begin
    state_d = state_q; wr_d = wr_q; rd_d = rd_q; clr_d = clr_q;
    tx_valid_d = tx_valid_o && !tx_ready_i;
    ev_qp_d = ev_qp_q; ev_syn_d = ev_syn_q; ev_msn_d = ev_msn_q; ev_psn_d = ev_psn_q; head_d = head_q;
    t_re = 1'b0; t_raddr = ev_qp_i; t_we = 1'b0; t_waddr = ev_qp_q; t_wdata = t_rdata;
    f_re = 1'b0; f_we = 1'b0;
    hdr_ld = 1'b0; hdr_w = t_rdata;

    unique case (state_q)
      A_INIT: begin
        t_we = 1'b1;
        t_waddr = clr_q;
        t_wdata = '0;
        clr_d = clr_q + 1'b1;
        if (clr_q == QP_W'(NUM_QP - 1)) state_d = A_IDLE;
      end

      // Events first: the responder waits for them; queued ACKs only wait for the TX side.
      A_IDLE: begin
        if (ev_valid_i) begin
          ev_qp_d = ev_qp_i; ev_syn_d = ev_syn_i; ev_msn_d = ev_msn_i; ev_psn_d = ev_psn_i;
          t_re = 1'b1;
          t_raddr = ev_qp_i;
          state_d = A_EV;
        end else if (!f_empty && tx_free) begin
          f_re = 1'b1;
          state_d = A_HEAD;
        end
      end

      // The event's QP word is here: merge, then send at once, queue, or only update.
      A_EV: begin
        t_we = 1'b1;
        t_waddr = ev_qp_q;
        t_wdata = t_rdata;
        if (!(t_rdata.pend && ev_syn_q == AETH_SYN_NAK_PSN_SEQ_ERR && t_rdata.syn != AETH_SYN_ACK)) begin
          t_wdata.syn = ev_syn_q;
          t_wdata.msn = ev_msn_q;
          t_wdata.psn = ev_psn_q;
        end
        t_wdata.stamp = jin_q;               // (a newer event's stamp is never older)
        if (!t_rdata.pend && f_empty && tx_free && jin_q == jout_q) begin
          t_wdata.pend = 1'b0;               // straight out
          hdr_ld = 1'b1;
          hdr_w = t_wdata;
          tx_valid_d = 1'b1;
        end else if (!t_rdata.pend) begin
          t_wdata.pend = 1'b1;
          f_we = 1'b1;
          wr_d = wr_q + 1'b1;
        end
        state_d = A_IDLE;
      end

      A_HEAD: begin
        head_d = f_rdata;
        t_re = 1'b1;
        t_raddr = f_rdata;
        state_d = A_POP;
      end

      // The head goes out once its READ jobs are (else it is looked at again: the FIFO keeps it).
      A_POP: begin
        if (jobs_out(t_rdata.stamp, jout_q)) begin
          t_we = 1'b1;
          t_waddr = head_q;
          t_wdata = t_rdata;
          t_wdata.pend = 1'b0;
          hdr_ld = 1'b1;
          hdr_w = t_rdata;
          tx_valid_d = 1'b1;
          rd_d = rd_q + 1'b1;
        end
        state_d = A_IDLE;
      end

      default: state_d = A_IDLE;
    endcase
  end

  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= A_INIT;
      wr_q <= '0;
      rd_q <= '0;
      clr_q <= '0;
      tx_valid_o <= 1'b0;
      jin_q <= '0;
      jout_q <= '0;
    end else begin
      jin_q <= jin_q + SW'(job_in_i);
      jout_q <= jout_q + SW'(job_out_i);
      state_q <= state_d;
      wr_q <= wr_d;
      rd_q <= rd_d;
      clr_q <= clr_d;
      tx_valid_o <= tx_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    ev_qp_q <= ev_qp_d; ev_syn_q <= ev_syn_d; ev_msn_q <= ev_msn_d; ev_psn_q <= ev_psn_d;
    head_q <= head_d;
  end

  // The header: only the address fields of the QP and the AETH/PSN differ between ACKs.
  always_ff @(posedge clk_i) begin
    if (hdr_ld) begin
      tx_hdr_o <= '0;
      tx_hdr_o.dst_mac <= cfg_i.dmac;
      tx_hdr_o.src_mac <= local_mac_i;
      tx_hdr_o.src_ip <= local_ip_i;
      tx_hdr_o.dst_ip <= cfg_i.dest_ip;
      tx_hdr_o.ip_tos <= cfg_i.tclass;
      tx_hdr_o.ip_ttl <= cfg_i.hop_limit;
      tx_hdr_o.udp_sport <= 16'hC000 | 16'(cfg_qp);
      tx_hdr_o.opcode <= OP_ACK;
      tx_hdr_o.dest_qp <= cfg_i.dest_qpn;
      tx_hdr_o.psn <= hdr_w.psn;
      tx_hdr_o.aeth <= {hdr_w.syn, hdr_w.msn};
    end
  end

  assign idle_o = (state_q == A_IDLE) && f_empty && !tx_valid_o;
  wire unused_ok = ^{hdr_w.pend, hdr_w.stamp};

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // (u_tab and u_fifo assert themselves that a word is never read while written: NO_COLLISION)
  a_fifo_full: assert property (@(posedge clk_i) disable iff (!chk_q)
    f_we |-> (wr_q - rd_q) < (QP_W + 1)'(NUM_QP)) else $error("tmnic_ack_gen: QP FIFO overflow");
  a_fifo_empty: assert property (@(posedge clk_i) disable iff (!chk_q)
    f_re |-> !f_empty) else $error("tmnic_ack_gen: QP FIFO read while empty");
  a_jobs: assert property (@(posedge clk_i) disable iff (!chk_q)
    jin_q - jout_q <= SW'(NUM_QP * MAX_RD_ATOM)) else $error("tmnic_ack_gen: more READ jobs out than the engine holds");
  a_pop_pend: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == A_POP |-> t_rdata.pend) else $error("tmnic_ack_gen: queued QP has nothing pending");
  tmnic_hold_chk #(.W($bits(tx_hdr_o)), .NAME("tmnic_ack_gen: ACK header")) u_tx_hold (
    .clk_i, .rst_ni, .valid_i(tx_valid_o), .ready_i(tx_ready_i), .data_i(tx_hdr_o));
  a_tx_overwrite: assert property (@(posedge clk_i) disable iff (!chk_q)
    hdr_ld |-> tx_free) else $error("tmnic_ack_gen: ACK header overwritten");
  a_ev_take: assert property (@(posedge clk_i) disable iff (!chk_q)
    ev_valid_i && ev_ready_o |=> state_q == A_EV) else $error("tmnic_ack_gen: event taken but not handled");
`endif
endmodule
