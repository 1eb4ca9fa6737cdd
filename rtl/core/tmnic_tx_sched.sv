// TX scheduler: chooses the next frame for the frame builder. ACK/NAK packets from the receive
// engine (header only) go first, because a waiting requester costs more than a delayed data packet;
// data packets from the send engine come with their payload in a TX buffer slot, which this block
// streams out of tmnic_shift_buf and then frees.
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
  // Data packets: header plus payload in TX buffer slot pkt_slot_i
  input  roce_hdr_t pkt_hdr_i,
  input  logic [SLOT_W-1:0] pkt_slot_i,
  input  logic      pkt_valid_i,
  output logic      pkt_ready_o,
  output logic [NSLOT-1:0] slot_free_o, // pulse: slot sent, may be refilled

  // TX buffer read port
  output logic                 txb_rd_o,
  output logic [TXB_POS_W-1:0] txb_pos_o,
  input  logic [DATA_W-1:0]    txb_data_i,

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
  logic busy_q;                 // streaming a data packet's payload
  logic [SLOT_W-1:0] slot_q;
  logic [12:0] left_q;          // payload bytes not yet read from the buffer
  logic [12:0] off_q;
  logic [12:0] beat_left_q;     // bytes in the beat on the output
  logic last_q;

  wire start_ack = !m_hdr_valid_o && !busy_q && ack_valid_i;
  wire start_pkt = !m_hdr_valid_o && !busy_q && !ack_valid_i && pkt_valid_i;
  assign ack_ready_o = start_ack;
  assign pkt_ready_o = start_pkt;

  wire out_free = !m_pay_tvalid_o || m_pay_tready_i;
  assign txb_rd_o = busy_q && (left_q != 13'd0) && out_free;
  assign txb_pos_o = {slot_q, off_q[11:0]};
  assign m_pay_tdata_o = txb_data_i;
  assign m_pay_tkeep_o = (beat_left_q >= 13'(BYTES)) ? '1 : ~(BYTES'({BYTES{1'b1}} << beat_left_q[$clog2(BYTES)-1:0]));
  assign m_pay_tlast_o = last_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      m_hdr_o <= '0;
      m_hdr_valid_o <= 1'b0;
      m_pay_tvalid_o <= 1'b0;
      busy_q <= 1'b0;
      slot_q <= '0;
      left_q <= '0;
      off_q <= '0;
      beat_left_q <= '0;
      last_q <= 1'b0;
      slot_free_o <= '0;
    end else begin
      slot_free_o <= '0;
      if (m_hdr_valid_o && m_hdr_ready_i) m_hdr_valid_o <= 1'b0;
      if (start_ack) begin
        m_hdr_o <= ack_hdr_i;
        m_hdr_valid_o <= 1'b1;
      end else if (start_pkt) begin
        m_hdr_o <= pkt_hdr_i;
        m_hdr_valid_o <= 1'b1;
        slot_q <= pkt_slot_i;
        left_q <= pkt_hdr_i.pay_len;
        off_q <= '0;
        if (pkt_hdr_i.pay_len == 13'd0) slot_free_o[pkt_slot_i] <= 1'b1;
        else busy_q <= 1'b1;
      end
      if (txb_rd_o) begin
        m_pay_tvalid_o <= 1'b1;
        beat_left_q <= left_q;
        last_q <= (left_q <= 13'(BYTES));
        left_q <= (left_q <= 13'(BYTES)) ? 13'd0 : left_q - 13'(BYTES);
        off_q <= off_q + 13'(BYTES);
      end else if (m_pay_tvalid_o && m_pay_tready_i) begin
        m_pay_tvalid_o <= 1'b0;
      end
      if (m_pay_tvalid_o && m_pay_tready_i && last_q) begin
        busy_q <= 1'b0;
        last_q <= 1'b0;
        slot_free_o[slot_q] <= 1'b1;
      end
    end
  end

  assign idle_o = !busy_q && !m_hdr_valid_o && !m_pay_tvalid_o;
endmodule
