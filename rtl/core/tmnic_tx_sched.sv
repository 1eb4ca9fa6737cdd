// TX scheduler: chooses the next frame for the frame builder. ACK/NAK packets from the receive
// engine (header only) go first, because a waiting requester costs more than a delayed data packet.
// Data packets come from two sources, each with its payload in a slot of its own TX buffer: the
// send engine's packets (pkt_*, buffer port txb_*) and the READ responses (rr_*, buffer port txb2_*);
// between the two, round robin per packet, so neither waits for more than one packet of the other
// (plus ACKs). A data packet's payload is streamed out of its tmnic_shift_buf and its slot then
// returned to its source. The buffers answer a read TXB_LAT cycles later (2: a registered block-RAM
// read, then the byte shift): the beats go through a small output FIFO, and a read is issued only
// while the FIFO has room for every beat in flight, so the payload streams at one beat per cycle
// under any back-pressure.
module tmnic_tx_sched import tmnic_hwif_pkg::*, tmnic_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NSLOT = 8,
  parameter int unsigned TXB_LAT = 2,   // TX buffer read latency (tmnic_shift_buf RD_LAT): 1 or 2
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned TXB_POS_W = 12 + SLOT_W
) (
  input  logic clk_i,
  input  logic rst_ni,

  // ACK/NAK headers (no payload)
  input  roce_hdr_t ack_hdr_i,
  input  logic      ack_valid_i,
  output logic      ack_ready_o,
  // Data packets of the send engine: header plus payload in TX buffer slot pkt_slot_i
  input  roce_hdr_t pkt_hdr_i,
  input  logic [SLOT_W-1:0] pkt_slot_i,
  input  logic      pkt_valid_i,
  output logic      pkt_ready_o,
  output logic [NSLOT-1:0] slot_free_o, // pulse: slot sent, may be refilled
  // READ responses: header plus payload in slot rr_slot_i of the read-response buffer
  input  roce_hdr_t rr_hdr_i,
  input  logic [SLOT_W-1:0] rr_slot_i,
  input  logic      rr_valid_i,
  output logic      rr_ready_o,
  output logic [NSLOT-1:0] rr_slot_free_o, // pulse: slot sent, may be refilled

  // TX buffer read ports (data TXB_LAT cycles after the read): the send engine's, the READ responses'
  output logic                 txb_rd_o,
  output logic [TXB_POS_W-1:0] txb_pos_o,
  input  logic [DATA_W-1:0]    txb_data_i,
  output logic                 txb2_rd_o,
  output logic [TXB_POS_W-1:0] txb2_pos_o,
  input  logic [DATA_W-1:0]    txb2_data_i,

  // To the frame builder
  output roce_hdr_t          m_hdr_o,
  output logic               m_hdr_valid_o,
  input  logic               m_hdr_ready_i,
  output logic [DATA_W-1:0]  m_pay_tdata_o,
  output logic [BYTES-1:0]   m_pay_tkeep_o,
  output logic               m_pay_tlast_o,
  output logic               m_pay_tvalid_o,
  input  logic               m_pay_tready_i,

  output logic idle_o
);
  if (NSLOT < 2 || (NSLOT & (NSLOT - 1)) != 0) begin : g_chk_slot
    $fatal(1, "tmnic_tx_sched: NSLOT must be a power of two >= 2");
  end
  if (DATA_W < 64 || DATA_W > 4096 || (DATA_W & (DATA_W - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_tx_sched: DATA_W must be a power of two, 64..4096");
  end
  if (TXB_LAT < 1 || TXB_LAT > 2) begin : g_chk_lat
    $fatal(1, "tmnic_tx_sched: TXB_LAT must be 1 or 2");
  end
  // Output FIFO: the beats in flight in the buffer, the one on the output and one to spare keep a
  // read in every cycle while the frame builder takes a beat in every cycle.
  localparam int unsigned FDEPTH = 4;

  // Control (reset)
  logic busy_q, busy_d;                 // streaming a data packet's payload
  logic src_q, src_d;                   // its source: 0 send engine, 1 READ responses
  logic turn_q, turn_d;                 // the READ responses had the last data turn
  logic hdr_valid_d;
  logic [NSLOT-1:0] free_d, rr_free_d;
  // Payload (no reset)
  logic [SLOT_W-1:0] slot_q, slot_d;
  logic [12:0] left_q, left_d;          // payload bytes not yet read from the buffer
  logic [11:0] off_q, off_d;            // buffer offset in the slot of the next read
  // Reads in flight: a read issued k + 1 cycles ago (k < TXB_LAT), with its beat's byte count to
  // the packet's end (the beat's tkeep) and whether it is the packet's last
  logic [TXB_LAT-1:0]       rv_q;
  logic [TXB_LAT-1:0][12:0] rbl_q;
  logic [TXB_LAT-1:0]       rlast_q;
  logic hdr_ld;                         // load m_hdr_o from the source taken (a wide copy: enabled only then)
  logic [12:0] pay_len;                 // the data packet's payload length

  wire start_free = !m_hdr_valid_o && !busy_q;
  wire take_rr = rr_valid_i && (!pkt_valid_i || !turn_q);   // round robin between the data sources
  assign ack_ready_o = start_free && ack_valid_i;
  assign pkt_ready_o = start_free && !ack_valid_i && pkt_valid_i && !take_rr;
  assign rr_ready_o = start_free && !ack_valid_i && take_rr;

  // The output FIFO has room for this read's beat once the beats in flight are in
  logic [$clog2(FDEPTH):0] f_level;
  logic f_ready, f_push;
  logic [$clog2(TXB_LAT + 1)-1:0] n_fly;
  always_comb begin
    n_fly = '0;
    for (int k = 0; k < int'(TXB_LAT); k++) n_fly = n_fly + $bits(n_fly)'(rv_q[k]);
  end
  wire rd = busy_q && (left_q != 13'd0) && (32'(f_level) + 32'(n_fly) < 32'(FDEPTH));
  assign txb_rd_o = rd && !src_q;
  assign txb2_rd_o = rd && src_q;
  assign txb_pos_o = {slot_q, off_q};
  assign txb2_pos_o = {slot_q, off_q};
  // The beat read TXB_LAT cycles ago is on the source's buffer output now (src_q does not change
  // while a packet's beats are in flight: the next packet starts after its last beat left).
  wire [12:0] f_bl = rbl_q[TXB_LAT-1];
  assign f_push = rv_q[TXB_LAT-1];
  tmnic_fifo #(.WIDTH(DATA_W + BYTES + 1), .DEPTH(FDEPTH), .OUT_REG(1)) u_out (
    .clk_i, .rst_ni,
    .s_data_i({src_q ? txb2_data_i : txb_data_i,
               (f_bl >= 13'(BYTES)) ? {BYTES{1'b1}} : ~(BYTES'({BYTES{1'b1}} << f_bl[$clog2(BYTES)-1:0])),
               rlast_q[TXB_LAT-1]}),
    .s_valid_i(f_push), .s_ready_o(f_ready),
    .m_data_o({m_pay_tdata_o, m_pay_tkeep_o, m_pay_tlast_o}), .m_valid_o(m_pay_tvalid_o),
    .m_ready_i(m_pay_tready_i), .level_o(f_level));

  always_comb begin
    busy_d = busy_q; src_d = src_q; turn_d = turn_q;
    slot_d = slot_q; left_d = left_q; off_d = off_q;
    hdr_valid_d = m_hdr_valid_o && !m_hdr_ready_i;
    free_d = '0;
    rr_free_d = '0;
    hdr_ld = 1'b0;
    pay_len = rr_ready_o ? rr_hdr_i.pay_len : pkt_hdr_i.pay_len;

    if (ack_ready_o) begin
      hdr_ld = 1'b1;
      hdr_valid_d = 1'b1;
    end else if (pkt_ready_o || rr_ready_o) begin
      hdr_ld = 1'b1;
      hdr_valid_d = 1'b1;
      src_d = rr_ready_o;
      turn_d = rr_ready_o;
      slot_d = rr_ready_o ? rr_slot_i : pkt_slot_i;
      left_d = pay_len;
      off_d = '0;
      if (pay_len == 13'd0) begin
        if (rr_ready_o) rr_free_d[rr_slot_i] = 1'b1;
        else free_d[pkt_slot_i] = 1'b1;
      end else begin
        busy_d = 1'b1;
      end
    end
    if (rd) begin
      left_d = (left_q <= 13'(BYTES)) ? 13'd0 : left_q - 13'(BYTES);
      off_d = off_q + 12'(BYTES);
    end
    // The packet's last beat leaves: its slot has been read out, return it.
    if (m_pay_tvalid_o && m_pay_tready_i && m_pay_tlast_o) begin
      busy_d = 1'b0;
      if (src_q) rr_free_d[slot_q] = 1'b1;
      else free_d[slot_q] = 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      m_hdr_valid_o <= 1'b0;
      rv_q <= '0;
      busy_q <= 1'b0;
      src_q <= 1'b0;
      turn_q <= 1'b0;
      slot_free_o <= '0;
      rr_slot_free_o <= '0;
    end else begin
      m_hdr_valid_o <= hdr_valid_d;
      rv_q <= TXB_LAT'({rv_q, rd});                     // (shift in the read of this cycle)
      busy_q <= busy_d;
      src_q <= src_d;
      turn_q <= turn_d;
      slot_free_o <= free_d;
      rr_slot_free_o <= rr_free_d;
    end
  end
  always_ff @(posedge clk_i) begin
    if (hdr_ld) m_hdr_o <= ack_ready_o ? ack_hdr_i : rr_ready_o ? rr_hdr_i : pkt_hdr_i;
    slot_q <= slot_d;
    left_q <= left_d;
    off_q <= off_d;
    rbl_q <= (TXB_LAT * 13)'({rbl_q, left_q});
    rlast_q <= TXB_LAT'({rlast_q, left_q <= 13'(BYTES)});
  end

  assign idle_o = !busy_q && !m_hdr_valid_o && !m_pay_tvalid_o;
  wire unused_f = f_ready;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // This block's offers are held until taken (each source checks its own: tmnic_ack_gen's and
  // tmnic_tx_gather's hold checks, one per data source).
  tmnic_hold_chk #(.W($bits(roce_hdr_t)), .NAME("tmnic_tx_sched: header output")) u_hdr_hold (
    .clk_i, .rst_ni, .valid_i(m_hdr_valid_o), .ready_i(m_hdr_ready_i), .data_i(m_hdr_o));
  tmnic_hold_chk #(.W(DATA_W + BYTES + 1), .NAME("tmnic_tx_sched: payload output")) u_pay_hold (
    .clk_i, .rst_ni, .valid_i(m_pay_tvalid_o), .ready_i(m_pay_tready_i),
    .data_i({m_pay_tdata_o, m_pay_tkeep_o, m_pay_tlast_o}));
  a_one_take: assert property (@(posedge clk_i) disable iff (!chk_q) $onehot0({ack_ready_o, pkt_ready_o, rr_ready_o}))
    else $error("tmnic_tx_sched: two packets taken in one cycle");
  a_free_once: assert property (@(posedge clk_i) disable iff (!chk_q) $onehot0(free_d) && $onehot0(rr_free_d))
    else $error("tmnic_tx_sched: two slots of one source returned in one cycle");
  a_fifo_room: assert property (@(posedge clk_i) disable iff (!chk_q) f_push |-> f_ready)
    else $error("tmnic_tx_sched: a buffer beat arrived with the output FIFO full");
  a_one_read: assert property (@(posedge clk_i) disable iff (!chk_q) !(txb_rd_o && txb2_rd_o))
    else $error("tmnic_tx_sched: both buffers read");
`endif
endmodule
