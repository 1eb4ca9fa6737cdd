// Loopback switch on the TX side: a frame whose IPv4 destination is the port's own address goes
// back to the receive path inside the NIC; every other frame goes to the MAC. The decision is taken
// on the first beat (destination IP at frame bytes 30..33) and held until tlast.
module tmnic_lb_demux #(
  parameter int unsigned DATA_W = 512,
  localparam int unsigned BYTES = DATA_W / 8
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [31:0] local_ip_i,

  input  logic [DATA_W-1:0] s_tdata_i,
  input  logic [BYTES-1:0]  s_tkeep_i,
  input  logic              s_tlast_i,
  input  logic              s_tvalid_i,
  output logic              s_tready_o,

  output logic [DATA_W-1:0] m_mac_tdata_o,
  output logic [BYTES-1:0]  m_mac_tkeep_o,
  output logic              m_mac_tlast_o,
  output logic              m_mac_tvalid_o,
  input  logic              m_mac_tready_i,

  output logic [DATA_W-1:0] m_lb_tdata_o,
  output logic [BYTES-1:0]  m_lb_tkeep_o,
  output logic              m_lb_tlast_o,
  output logic              m_lb_tvalid_o,
  input  logic              m_lb_tready_i
);
  if (DATA_W < 256) begin : g_chk
    $fatal(1, "tmnic_lb_demux: the IPv4 destination must be in the first beat (DATA_W >= 256)");
  end

  logic in_frame_q, lb_q;
  wire [31:0] dst_ip = {s_tdata_i[30*8 +: 8], s_tdata_i[31*8 +: 8], s_tdata_i[32*8 +: 8], s_tdata_i[33*8 +: 8]};
  wire lb = in_frame_q ? lb_q : (dst_ip == local_ip_i);

  assign m_mac_tdata_o = s_tdata_i;
  assign m_mac_tkeep_o = s_tkeep_i;
  assign m_mac_tlast_o = s_tlast_i;
  assign m_mac_tvalid_o = s_tvalid_i && !lb;
  assign m_lb_tdata_o = s_tdata_i;
  assign m_lb_tkeep_o = s_tkeep_i;
  assign m_lb_tlast_o = s_tlast_i;
  assign m_lb_tvalid_o = s_tvalid_i && lb;
  assign s_tready_o = lb ? m_lb_tready_i : m_mac_tready_i;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_frame_q <= 1'b0;
      lb_q <= 1'b0;
    end else if (s_tvalid_i && s_tready_o) begin
      in_frame_q <= !s_tlast_i;
      lb_q <= lb;
    end
  end
endmodule
