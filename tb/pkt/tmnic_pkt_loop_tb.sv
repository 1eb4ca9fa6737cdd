// Loop testbench top: tmnic_pkt_tx -> (gated link) -> tmnic_pkt_rx, for round-trip tests and
// simulation-speed measurements of the two blocks together.
module tmnic_pkt_loop_tb
  import tmnic_hwif_pkg::*;
  import tmnic_pkg::*;
#(
  parameter int unsigned DATA_W = 512
) (
  input  logic                clk_i,
  input  logic                rst_ni,

  // Parser's local addresses.
  input  logic [47:0]         local_mac_i,
  input  logic [31:0]         local_ip_i,

  // Builder inputs.
  input  roce_hdr_t           s_hdr_i,
  input  logic                s_hdr_valid_i,
  output logic                s_hdr_ready_o,
  input  logic [DATA_W-1:0]   s_pay_tdata_i,
  input  logic [DATA_W/8-1:0] s_pay_tkeep_i,
  input  logic                s_pay_tlast_i,
  input  logic                s_pay_tvalid_i,
  output logic                s_pay_tready_o,

  // Link gate: when low, no beat crosses from the builder to the parser this cycle.
  input  logic                link_en_i,

  // Parser outputs.
  output roce_hdr_t           m_hdr_o,
  output logic                m_hdr_valid_o,
  input  logic                m_hdr_ready_i,
  output logic [DATA_W-1:0]   m_pay_tdata_o,
  output logic [DATA_W/8-1:0] m_pay_tkeep_o,
  output logic                m_pay_tlast_o,
  output logic                m_pay_tvalid_o,
  input  logic                m_pay_tready_i,
  output logic                drop_icrc_o,
  output logic                drop_hdr_o,
  output logic                accept_o
);

  logic [DATA_W-1:0]   l_tdata;
  logic [DATA_W/8-1:0] l_tkeep;
  logic                l_tlast, tx_tvalid, rx_tready;

  tmnic_pkt_tx #(
    .DATA_W (DATA_W)
  ) u_tx (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .s_hdr_i         (s_hdr_i),
    .s_hdr_valid_i   (s_hdr_valid_i),
    .s_hdr_ready_o   (s_hdr_ready_o),
    .s_pay_tdata_i   (s_pay_tdata_i),
    .s_pay_tkeep_i   (s_pay_tkeep_i),
    .s_pay_tlast_i   (s_pay_tlast_i),
    .s_pay_tvalid_i  (s_pay_tvalid_i),
    .s_pay_tready_o  (s_pay_tready_o),
    .m_axis_tdata_o  (l_tdata),
    .m_axis_tkeep_o  (l_tkeep),
    .m_axis_tlast_o  (l_tlast),
    .m_axis_tvalid_o (tx_tvalid),
    .m_axis_tready_i (rx_tready && link_en_i)
  );

  tmnic_pkt_rx #(
    .DATA_W (DATA_W)
  ) u_rx (
    .clk_i           (clk_i),
    .rst_ni          (rst_ni),
    .local_mac_i     (local_mac_i),
    .local_ip_i      (local_ip_i),
    .s_axis_tdata_i  (l_tdata),
    .s_axis_tkeep_i  (l_tkeep),
    .s_axis_tlast_i  (l_tlast),
    .s_axis_tvalid_i (tx_tvalid && link_en_i),
    .s_axis_tready_o (rx_tready),
    .m_hdr_o         (m_hdr_o),
    .m_hdr_valid_o   (m_hdr_valid_o),
    .m_hdr_ready_i   (m_hdr_ready_i),
    .m_pay_tdata_o   (m_pay_tdata_o),
    .m_pay_tkeep_o   (m_pay_tkeep_o),
    .m_pay_tlast_o   (m_pay_tlast_o),
    .m_pay_tvalid_o  (m_pay_tvalid_o),
    .m_pay_tready_i  (m_pay_tready_i),
    .drop_icrc_o     (drop_icrc_o),
    .drop_hdr_o      (drop_hdr_o),
    .accept_o        (accept_o)
  );

endmodule
