// Two frame streams into one, whole frames at a time, alternating when both wait.
module tmnic_axis_mux2 #(
  parameter int unsigned DATA_W = 512,
  localparam int unsigned BYTES = DATA_W / 8
) (
  input  logic clk_i,
  input  logic rst_ni,

  input  logic [1:0][DATA_W-1:0] s_tdata_i,
  input  logic [1:0][BYTES-1:0]  s_tkeep_i,
  input  logic [1:0]             s_tlast_i,
  input  logic [1:0]             s_tvalid_i,
  output logic [1:0]             s_tready_o,

  output logic [DATA_W-1:0] m_tdata_o,
  output logic [BYTES-1:0]  m_tkeep_o,
  output logic              m_tlast_o,
  output logic              m_tvalid_o,
  input  logic              m_tready_i
);
  logic in_frame_q, sel_q, last_sel_q;
  // Between frames: the other input if it waits, else this one.
  wire sel = in_frame_q ? sel_q : (s_tvalid_i[!last_sel_q] ? !last_sel_q : last_sel_q);

  assign m_tdata_o = s_tdata_i[sel];
  assign m_tkeep_o = s_tkeep_i[sel];
  assign m_tlast_o = s_tlast_i[sel];
  assign m_tvalid_o = s_tvalid_i[sel];
  always_comb begin
    s_tready_o = 2'b00;
    s_tready_o[sel] = m_tready_i;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_frame_q <= 1'b0;
      sel_q <= 1'b0;
      last_sel_q <= 1'b1;
    end else if (m_tvalid_o && m_tready_i) begin
      in_frame_q <= !m_tlast_o;
      sel_q <= sel;
      if (m_tlast_o) last_sel_q <= sel;
    end
  end
endmodule
