// RoCEv2 (IPv4) frame parser with a store-and-forward frame buffer.
//
// Every frame is written into a circular buffer (tmnic_ram_sdp, one DATA_W word per beat, each
// frame starting on a word) while its ICRC is computed and its header captured. At tlast the frame
// is either committed (a descriptor {header, start word, end word, header length} queued) or
// dropped (the write pointer rewinds to the frame start). A reader pops descriptors, presents the
// header on m_hdr and streams the payload out of the buffer realigned to byte 0. See
// rtl/pkt/README.md for the acceptance rules and the pipeline.
//
// This module only connects the pipeline's blocks:
//   tmnic_pkt_rx_parse  write side: input register I, parse/ICRC stage C, buffer write and
//                       commit/drop W, admission, descriptor FIFO
//   u_buf               the frame buffer (BUF_BYTES, registered read)
//   tmnic_pkt_rx_rd     read side: descriptor pop -> m_hdr register, payload read issue against
//                       credits, 4-entry read FIFO (head in flip-flops), buffer release pointer
//   tmnic_pkt_rx_align  realigner: payload words -> payload packed from byte 0 -> m_pay register
// One payload beat per cycle within a frame; a payload spanning more than one buffer word costs
// one extra cycle per frame (its first word only primes the realigner, or its last word yields
// two output beats).
module tmnic_pkt_rx
  import tmnic_hwif_pkg::*;
#(
  parameter int unsigned DATA_W     = 512,    // stream width in bits: 256 or 512
  parameter int unsigned BUF_BYTES  = 16384,  // frame buffer size (power of two)
  parameter int unsigned DESC_DEPTH = 16      // committed frames the buffer can hold (power of two)
) (
  input  logic                clk_i,
  input  logic                rst_ni,

  // Local addresses: frames to other destinations are dropped (drop_hdr).
  input  logic [47:0]         local_mac_i,
  input  logic [31:0]         local_ip_i,

  // Frames in (from the MAC or the internal loopback); may carry padding after the ICRC.
  input  logic [DATA_W-1:0]   s_axis_tdata_i,
  input  logic [DATA_W/8-1:0] s_axis_tkeep_i,
  input  logic                s_axis_tlast_i,
  input  logic                s_axis_tvalid_i,
  output logic                s_axis_tready_o,

  // Accepted packets: one header descriptor each ...
  output roce_hdr_t           m_hdr_o,
  output logic                m_hdr_valid_o,
  input  logic                m_hdr_ready_i,

  // ... and, if pay_len > 0, the payload packed from byte 0 with tlast on its last beat.
  output logic [DATA_W-1:0]   m_pay_tdata_o,
  output logic [DATA_W/8-1:0] m_pay_tkeep_o,
  output logic                m_pay_tlast_o,
  output logic                m_pay_tvalid_o,
  input  logic                m_pay_tready_i,

  // One-cycle pulses, exactly one per received frame.
  output logic                drop_icrc_o,
  output logic                drop_hdr_o,
  output logic                accept_o
);

  localparam int unsigned W         = DATA_W / 8;
  localparam int unsigned LW        = $clog2(W);
  localparam int unsigned DEPTH     = BUF_BYTES / W;                    // buffer words
  localparam int unsigned AW        = $clog2(DEPTH);
  localparam int unsigned MAX_BEATS = (MAX_FRAME_LEN + W - 1) / W;      // words of a longest frame

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_pkt_rx: DATA_W must be 256 or 512");
  end
  if ((BUF_BYTES & (BUF_BYTES - 1)) != 0 || DEPTH < MAX_BEATS + 2) begin : g_chk_buf
    $fatal(1, "tmnic_pkt_rx: BUF_BYTES must be a power of two >= MAX_FRAME_LEN + 2 beats");
  end
  if (DESC_DEPTH < 4 || (DESC_DEPTH & (DESC_DEPTH - 1)) != 0) begin : g_chk_desc
    $fatal(1, "tmnic_pkt_rx: DESC_DEPTH must be a power of two >= 4");
  end

  // Write side -> buffer, descriptors; read side -> release pointer.
  logic              buf_we, buf_re;
  logic [AW-1:0]     buf_waddr, buf_raddr;
  logic [DATA_W-1:0] buf_wdata, buf_rdata;
  logic [AW:0]       rel_ptr;
  roce_hdr_t         desc_hdr;
  logic [AW-1:0]     desc_start;
  logic [AW:0]       desc_fend;
  logic [6:0]        desc_hl;
  logic              desc_valid, desc_ready;
  // Read side -> realigner.
  logic [DATA_W-1:0] word_data;
  logic              word_first, word_last, word_flush, word_valid, word_ready;
  logic [LW-1:0]     word_sh;
  logic [LW:0]       word_lcnt;

  tmnic_pkt_rx_parse #(
    .DATA_W     (DATA_W),
    .BUF_BYTES  (BUF_BYTES),
    .DESC_DEPTH (DESC_DEPTH)
  ) u_parse (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .local_mac_i     (local_mac_i),
    .local_ip_i      (local_ip_i),
    .s_axis_tdata_i  (s_axis_tdata_i),
    .s_axis_tkeep_i  (s_axis_tkeep_i),
    .s_axis_tlast_i  (s_axis_tlast_i),
    .s_axis_tvalid_i (s_axis_tvalid_i),
    .s_axis_tready_o (s_axis_tready_o),
    .buf_we_o        (buf_we),
    .buf_waddr_o     (buf_waddr),
    .buf_wdata_o     (buf_wdata),
    .rel_ptr_i       (rel_ptr),
    .desc_hdr_o      (desc_hdr),
    .desc_start_o    (desc_start),
    .desc_fend_o     (desc_fend),
    .desc_hl_o       (desc_hl),
    .desc_valid_o    (desc_valid),
    .desc_ready_i    (desc_ready),
    .drop_icrc_o     (drop_icrc_o),
    .drop_hdr_o      (drop_hdr_o),
    .accept_o        (accept_o)
  );

  tmnic_ram_sdp #(
    .WIDTH        (DATA_W),
    .DEPTH        (DEPTH),
    .NO_COLLISION (1'b1)  // a word is read only after its frame was committed, written again
  ) u_buf (               // only after it was released
    .clk_i   (clk_i),
    .we_i    (buf_we),
    .waddr_i (buf_waddr),
    .wdata_i (buf_wdata),
    .re_i    (buf_re),
    .raddr_i (buf_raddr),
    .rdata_o (buf_rdata)
  );

  tmnic_pkt_rx_rd #(
    .DATA_W    (DATA_W),
    .BUF_BYTES (BUF_BYTES)
  ) u_rd (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .desc_hdr_i    (desc_hdr),
    .desc_start_i  (desc_start),
    .desc_fend_i   (desc_fend),
    .desc_hl_i     (desc_hl),
    .desc_valid_i  (desc_valid),
    .desc_ready_o  (desc_ready),
    .m_hdr_o       (m_hdr_o),
    .m_hdr_valid_o (m_hdr_valid_o),
    .m_hdr_ready_i (m_hdr_ready_i),
    .buf_re_o      (buf_re),
    .buf_raddr_o   (buf_raddr),
    .buf_rdata_i   (buf_rdata),
    .rel_ptr_o     (rel_ptr),
    .word_data_o   (word_data),
    .word_first_o  (word_first),
    .word_last_o   (word_last),
    .word_flush_o  (word_flush),
    .word_sh_o     (word_sh),
    .word_lcnt_o   (word_lcnt),
    .word_valid_o  (word_valid),
    .word_ready_i  (word_ready)
  );

  tmnic_pkt_rx_align #(
    .DATA_W (DATA_W)
  ) u_align (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .word_data_i    (word_data),
    .word_first_i   (word_first),
    .word_last_i    (word_last),
    .word_flush_i   (word_flush),
    .word_sh_i      (word_sh),
    .word_lcnt_i    (word_lcnt),
    .word_valid_i   (word_valid),
    .word_ready_o   (word_ready),
    .m_pay_tdata_o  (m_pay_tdata_o),
    .m_pay_tkeep_o  (m_pay_tkeep_o),
    .m_pay_tlast_o  (m_pay_tlast_o),
    .m_pay_tvalid_o (m_pay_tvalid_o),
    .m_pay_tready_i (m_pay_tready_i)
  );

endmodule
