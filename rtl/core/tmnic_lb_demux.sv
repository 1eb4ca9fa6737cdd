// Loopback switch on the TX side: a frame whose IPv4 destination is the port's own address goes
// back to the receive path inside the NIC; every other frame goes to the MAC. The decision is taken
// where the destination IP (frame bytes 30..33) is complete and held until tlast:
//   - beats of 34 bytes or more (DATA_W = 512): on the first beat, combinationally;
//   - narrower beats (DATA_W = 256): the address straddles the first two beats, so every beat passes
//     through a register (one cycle of latency, full rate) and a frame's first beat leaves once the
//     second one is offered (or at once if it is the frame's last: a frame that short goes to the
//     MAC). idle_o is low while a beat is held.
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
  input  logic              m_lb_tready_i,

  output logic              idle_o         // no beat held (always at DATA_W = 512)
);
  localparam int unsigned IP_END = 34;   // the destination IP ends before frame byte 34
  if (2 * BYTES < IP_END) begin : g_chk
    $fatal(1, "tmnic_lb_demux: the IPv4 destination (frame bytes 30..33) must be within the first two beats");
  end

  if (BYTES >= IP_END) begin : g_first
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
    assign idle_o = 1'b1;

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        in_frame_q <= 1'b0;
        lb_q <= 1'b0;
      end else if (s_tvalid_i && s_tready_o) begin
        in_frame_q <= !s_tlast_i;
        lb_q <= lb;
      end
    end
  end else begin : g_second
    // The held beat (v_q, first_q: it starts a frame) and the frame's decision once taken (lb_q).
    logic              v_q, v_d, first_q, first_d, sop_q, sop_d, lb_q, lb_d;
    logic [DATA_W-1:0] d_q;
    logic [BYTES-1:0]  k_q;
    logic              l_q;
    /* verilator lint_off UNUSEDSIGNAL */   // (only bytes 30..33 of the two beats)
    wire [2*DATA_W-1:0] two = {s_tdata_i, d_q};   // a first beat held, the second offered
    /* verilator lint_on UNUSEDSIGNAL */
    wire [31:0] dst_ip = {two[30*8 +: 8], two[31*8 +: 8], two[32*8 +: 8], two[33*8 +: 8]};
    // A first beat is decided with the next beat of its frame (if it is the last one: the MAC).
    // (Valid and decision are separate from the handshake: the receive mux's ready depends on them.)
    wire out_valid = v_q && (!first_q || l_q || s_tvalid_i);
    wire lb = first_q ? (!l_q && dst_ip == local_ip_i) : lb_q;
    wire fire = out_valid && (lb ? m_lb_tready_i : m_mac_tready_i);
    assign s_tready_o = !v_q || fire;

    always_comb begin
      v_d = v_q && !fire;
      first_d = first_q;
      sop_d = sop_q;
      lb_d = (fire && first_q) ? lb : lb_q;
      if (s_tvalid_i && s_tready_o) begin
        v_d = 1'b1;
        first_d = sop_q;
        sop_d = s_tlast_i;
      end
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        v_q <= 1'b0;
        first_q <= 1'b0;
        sop_q <= 1'b1;
        lb_q <= 1'b0;
      end else begin
        v_q <= v_d;
        first_q <= first_d;
        sop_q <= sop_d;
        lb_q <= lb_d;
      end
    end
    always_ff @(posedge clk_i) begin
      if (s_tvalid_i && s_tready_o) begin
        d_q <= s_tdata_i;
        k_q <= s_tkeep_i;
        l_q <= s_tlast_i;
      end
    end

    assign m_mac_tdata_o = d_q;
    assign m_mac_tkeep_o = k_q;
    assign m_mac_tlast_o = l_q;
    assign m_mac_tvalid_o = out_valid && !lb;
    assign m_lb_tdata_o = d_q;
    assign m_lb_tkeep_o = k_q;
    assign m_lb_tlast_o = l_q;
    assign m_lb_tvalid_o = out_valid && lb;
    assign idle_o = !v_q;

`ifndef SYNTHESIS
    logic chk_q;
    tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
    // (a held first beat is decided on the input beat: it must not change while stalled)
    tmnic_hold_chk #(.W(DATA_W + 1), .NAME("tmnic_lb_demux: input beat")) u_in_hold (
      .clk_i, .rst_ni, .valid_i(s_tvalid_i), .ready_i(s_tready_o), .data_i({s_tdata_i, s_tlast_i}));
    a_out_hold: assert property (@(posedge clk_i) disable iff (!chk_q)
      out_valid && !fire |=> out_valid && $stable(lb))
      else $error("tmnic_lb_demux: offered beat withdrawn or redirected while stalled");
`endif
  end
endmodule
