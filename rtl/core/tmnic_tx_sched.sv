// TX scheduler: chooses the next frame for the frame builder. ACK/NAK packets from the receive
// engine (header only) go first, because a waiting requester costs more than a delayed data packet.
// Data packets come from two sources, each with its payload in a slot of its own TX buffer: the
// send engine's packets (pkt_*, buffer port txb_*) and the READ responses (rr_*, buffer port txb2_*);
// between the two, round robin per packet, so neither waits for more than one packet of the other
// (plus ACKs). A data packet's payload is streamed out of its tmnic_shift_buf and its slot then
// returned to its source.
module tmnic_tx_sched import tmnic_hwif_pkg::*, tmnic_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NSLOT = 8,
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

  // TX buffer read ports (data one cycle after the read): the send engine's, the READ responses'
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

  // Control (reset)
  logic busy_q, busy_d;                 // streaming a data packet's payload
  logic src_q, src_d;                   // its source: 0 send engine, 1 READ responses
  logic turn_q, turn_d;                 // the READ responses had the last data turn
  logic hdr_valid_d, pay_valid_d, last_d;
  logic [NSLOT-1:0] free_d, rr_free_d;
  // Payload (no reset)
  logic [SLOT_W-1:0] slot_q, slot_d;
  logic [12:0] left_q, left_d;          // payload bytes not yet read from the buffer
  logic [11:0] off_q, off_d;            // buffer offset in the slot of the next read
  logic [12:0] beat_left_q, beat_left_d; // bytes from the beat on the output to the packet's end
  logic hdr_ld;                         // load m_hdr_o from the source taken (a wide copy: enabled only then)
  logic [12:0] pay_len;                 // the data packet's payload length

  wire start_free = !m_hdr_valid_o && !busy_q;
  wire take_rr = rr_valid_i && (!pkt_valid_i || !turn_q);   // round robin between the data sources
  assign ack_ready_o = start_free && ack_valid_i;
  assign pkt_ready_o = start_free && !ack_valid_i && pkt_valid_i && !take_rr;
  assign rr_ready_o = start_free && !ack_valid_i && take_rr;

  wire out_free = !m_pay_tvalid_o || m_pay_tready_i;
  wire rd = busy_q && (left_q != 13'd0) && out_free;
  assign txb_rd_o = rd && !src_q;
  assign txb2_rd_o = rd && src_q;
  assign txb_pos_o = {slot_q, off_q};
  assign txb2_pos_o = {slot_q, off_q};
  // (the source's buffer holds the beat read last until its next read)
  assign m_pay_tdata_o = src_q ? txb2_data_i : txb_data_i;
  assign m_pay_tkeep_o = (beat_left_q >= 13'(BYTES)) ? '1 : ~(BYTES'({BYTES{1'b1}} << beat_left_q[$clog2(BYTES)-1:0]));

  always_comb begin
    busy_d = busy_q; src_d = src_q; turn_d = turn_q;
    slot_d = slot_q; left_d = left_q; off_d = off_q; beat_left_d = beat_left_q;
    hdr_valid_d = m_hdr_valid_o && !m_hdr_ready_i;
    pay_valid_d = m_pay_tvalid_o && !m_pay_tready_i;
    last_d = m_pay_tlast_o;
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
      pay_valid_d = 1'b1;
      beat_left_d = left_q;
      last_d = (left_q <= 13'(BYTES));
      left_d = (left_q <= 13'(BYTES)) ? 13'd0 : left_q - 13'(BYTES);
      off_d = off_q + 12'(BYTES);
    end
    if (m_pay_tvalid_o && m_pay_tready_i && m_pay_tlast_o) begin
      busy_d = 1'b0;
      if (!rd) last_d = 1'b0;
      if (src_q) rr_free_d[slot_q] = 1'b1;
      else free_d[slot_q] = 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      m_hdr_valid_o <= 1'b0;
      m_pay_tvalid_o <= 1'b0;
      m_pay_tlast_o <= 1'b0;
      busy_q <= 1'b0;
      src_q <= 1'b0;
      turn_q <= 1'b0;
      slot_free_o <= '0;
      rr_slot_free_o <= '0;
    end else begin
      m_hdr_valid_o <= hdr_valid_d;
      m_pay_tvalid_o <= pay_valid_d;
      m_pay_tlast_o <= last_d;
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
    beat_left_q <= beat_left_d;
  end

  assign idle_o = !busy_q && !m_hdr_valid_o && !m_pay_tvalid_o;

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
  a_one_read: assert property (@(posedge clk_i) disable iff (!chk_q) !(txb_rd_o && txb2_rd_o))
    else $error("tmnic_tx_sched: both buffers read");
`endif
endmodule
