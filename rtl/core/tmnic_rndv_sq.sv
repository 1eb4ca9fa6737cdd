// Rendezvous send queues: the internal send queue of every rendezvous QP (docs/tag-matching.md
// "Rendezvous") lives in NIC memory at (1 << NIC_SPACE_BIT) + (QP << RNDV_QP_SHIFT), RNDV_SQ_LOG
// WQEs of WQE_STRIDE bytes. The engines fetch its WQEs with ordinary DMA reads; this block sits
// between tmnic_dma_rd's AXI4 read master and the host port and answers every burst whose address
// has bit NIC_SPACE_BIT set from a descriptor table (one rndv_desc_t per QP and slot, written by the
// receive engine at the match), synthesising the WQE bytes: ring entry 2s is slot s's RDMA READ
// into the tagged buffer, entry 2s + 1 its FIN (an inline SEND of the TMH and RVH). Every other
// burst goes to the host unchanged. Responses return in AR order across both (AXI ID 0).
//
// Contract: an internal burst lies within one WQE (tmnic_dma_rd's WQE fetches are aligned reads of
// one WQE, asserted); anything else at an internal address (a QP past NUM_QP, a burst across a WQE)
// reads as zero beats of the right count. A slot is never written in the cycle its descriptor is
// read (the receive engine writes a slot only while its WQEs are not fetched; asserted by the RAM).
module tmnic_rndv_sq import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,     // 256 or 512
  parameter int unsigned NUM_QP = 64,      // power of two >= 2
  parameter int unsigned MAX_OUT = 8,      // AR bursts in flight through the block (>= tmnic_dma_rd's MAX_OUT), power of two
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned SL_W = $clog2(RNDV_SLOTS)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Descriptor writes (the receive engine, at a rendezvous match): slot (we_qp_i, we_slot_i).
  input  logic             we_i,
  input  logic [QP_W-1:0]  we_qp_i,
  input  logic [SL_W-1:0]  we_slot_i,
  input  rndv_desc_t       we_desc_i,

  // AXI4 read slave (from tmnic_dma_rd).
  input  logic [63:0]       s_araddr_i,
  input  logic [7:0]        s_arlen_i,
  input  logic              s_arvalid_i,
  output logic              s_arready_o,
  output logic [DATA_W-1:0] s_rdata_o,
  output logic              s_rlast_o,
  output logic              s_rvalid_o,
  input  logic              s_rready_i,

  // AXI4 read master (to the host).
  output logic [63:0]       m_araddr_o,
  output logic [7:0]        m_arlen_o,
  output logic              m_arvalid_o,
  input  logic              m_arready_i,
  input  logic [DATA_W-1:0] m_rdata_i,
  input  logic              m_rlast_i,
  input  logic              m_rvalid_i,
  output logic              m_rready_o,

  output logic idle_o    // no burst in flight through the block and none being served
);
  localparam int unsigned BYTES = DATA_W / 8;
  localparam int unsigned LANE_W = $clog2(BYTES);
  localparam int unsigned WQE_BEATS = WQE_STRIDE / BYTES;
  localparam int unsigned BEAT_W = (WQE_BEATS > 1) ? $clog2(WQE_BEATS) : 1;
  localparam int unsigned STRIDE_LOG = $clog2(WQE_STRIDE);
  localparam int unsigned OUT_W = $clog2(MAX_OUT);

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_rndv_sq: DATA_W must be 256 or 512");
  end
  if (NUM_QP < 2 || (NUM_QP & (NUM_QP - 1)) != 0) begin : g_chk_q
    $fatal(1, "tmnic_rndv_sq: NUM_QP must be a power of two >= 2");
  end
  if (MAX_OUT < 2 || (MAX_OUT & (MAX_OUT - 1)) != 0) begin : g_chk_o
    $fatal(1, "tmnic_rndv_sq: MAX_OUT must be a power of two >= 2");
  end
  // The address decode below relies on the generated layout: a QP's queue is its 2^RNDV_SQ_LOG
  // WQEs, one slot per READ/FIN pair, and the queues of all QPs fit below the space bit.
  if (RNDV_SLOTS < 2 || (1 << RNDV_SQ_LOG) != 2 * RNDV_SLOTS) begin : g_chk_sl
    $fatal(1, "tmnic_rndv_sq: 2^RNDV_SQ_LOG must be 2 * RNDV_SLOTS >= 4");
  end
  if (RNDV_QP_SHIFT != STRIDE_LOG + RNDV_SQ_LOG || (1 << STRIDE_LOG) != WQE_STRIDE || WQE_BEATS < 2) begin : g_chk_st
    $fatal(1, "tmnic_rndv_sq: RNDV_QP_SHIFT must be log2(WQE_STRIDE) + RNDV_SQ_LOG, WQE_STRIDE a power of two >= 2 beats");
  end
  if (NIC_SPACE_BIT != 63 || RNDV_QP_SHIFT + QP_W >= NIC_SPACE_BIT) begin : g_chk_sp
    $fatal(1, "tmnic_rndv_sq: NIC_SPACE_BIT must be 63 and the queues of NUM_QP QPs below it");
  end
  if (WQE_INLINE_DATA_OFF + RNDV_FIN_LEN > WQE_STRIDE || WQE_SGE_OFF + WQE_SGE_LEN > WQE_STRIDE) begin : g_chk_l
    $fatal(1, "tmnic_rndv_sq: the FIN's inline data and the READ's SGE must fit in a WQE");
  end

  // ---------------------------------------------------------------- the WQE bytes
  // Little-endian bytes: byte i of the WQE is bits [8i +: 8]. Raw (wire-order) fields are byte
  // swapped into it. Called only under an enable in an always_ff (the beat register), so that the
  // wide formatting costs simulation time only while a burst is served.
  // Byte swaps as loops: yosys-slang takes a streaming operator only as a whole assignment's source.
  function automatic logic [31:0] bswap32(logic [31:0] x);
    for (int i = 0; i < 4; i++) bswap32[8*i +: 8] = x[8*(3-i) +: 8];
  endfunction
  function automatic logic [63:0] bswap64(logic [63:0] x);
    for (int i = 0; i < 8; i++) bswap64[8*i +: 8] = x[8*(7-i) +: 8];
  endfunction
  function automatic logic [8*WQE_STRIDE-1:0] wqe_bytes(rndv_desc_t d, logic fin);
    logic [8*WQE_STRIDE-1:0] w;
    logic [8*RNDV_FIN_LEN-1:0] raw;   // the FIN's payload, byte 0 in bits [7:0]
    w = '0;
    w[8*WQE_WR_ID_OFF +: 64] = {8'(RNDV_WRID_MARK), 39'd0, fin, d.handle};
    if (!fin) begin
      w[8*WQE_OPCODE_OFF +: 8] = WQE_OP_RDMA_READ;
      w[8*WQE_NUM_SGE_OFF +: 8] = 8'd1;
      w[8*WQE_RKEY_OFF +: 32] = d.rkey;
      w[8*WQE_RADDR_OFF +: 64] = d.va;
      w[8*WQE_SGE_OFF +: 128] = {d.lkey, d.len, d.addr};   // SGE: ADDR, LENGTH, LKEY little-endian
    end else begin
      w[8*WQE_OPCODE_OFF +: 8] = WQE_OP_SEND;
      w[8*WQE_FLAGS_OFF +: 8] = 8'((1 << WQE_FLAG_INLINE_BIT) | (1 << WQE_FLAG_FENCE_BIT));
      w[8*WQE_INLINE_LEN_OFF +: 32] = 32'(RNDV_FIN_LEN);
      // TMH {op, 3 reserved, ctx BE32, tag BE64} then RVH {va BE64, rkey BE32, len BE32}.
      raw = {bswap32(d.len), bswap32(d.rkey), bswap64(d.va), bswap64(d.tag), bswap32(d.ctx), 24'd0, TMH_FIN};
      w[8*WQE_INLINE_DATA_OFF +: 8*RNDV_FIN_LEN] = raw;
    end
    return w;
  endfunction
  function automatic logic [DATA_W-1:0] wqe_beat(rndv_desc_t d, logic fin, logic [BEAT_W-1:0] beat);
    logic [8*WQE_STRIDE-1:0] w;
    w = wqe_bytes(d, fin);
    return w[DATA_W * beat +: DATA_W];
  endfunction

  // ---------------------------------------------------------------- AR routing
  // The order FIFO holds one bit per accepted burst (1: internal) until its last beat has been
  // loaded into the R register; its head selects the R source. The internal AR queue holds what
  // the server needs of each internal burst.
  typedef struct packed {
    logic              bad;    // out of range: zero beats
    logic [QP_W-1:0]   qp;
    logic [SL_W-1:0]   slot;
    logic              fin;
    logic [BEAT_W-1:0] beat;   // first beat within the WQE
    logic [7:0]        len;    // arlen
  } iar_t;

  wire ar_int = s_araddr_i[NIC_SPACE_BIT];
  logic ord_ready, ord_valid, ord_head, ord_pop;
  logic [OUT_W:0] ord_level;
  logic iq_ready, iq_valid, iq_pop;
  iar_t iq_in, iq_out;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [OUT_W:0] iq_level;   // never above ord_level: the queue is full only with the order FIFO
  /* verilator lint_on UNUSEDSIGNAL */

  wire m_ar_free = !m_arvalid_o || m_arready_i;
  assign s_arready_o = ord_ready && (ar_int ? iq_ready : m_ar_free);
  wire ar_fire = s_arvalid_i && s_arready_o;
  wire m_ar_load = ar_fire && !ar_int;

  // Decode of an internal address: the offset below the space bit is {qp, ring entry, byte}.
  wire [BEAT_W-1:0] ar_beat = BEAT_W'(s_araddr_i[STRIDE_LOG-1:LANE_W]);
  wire ar_qp_bad = |s_araddr_i[NIC_SPACE_BIT-1:RNDV_QP_SHIFT+QP_W];
  wire ar_cross = (9'(ar_beat) + 9'(s_arlen_i)) >= 9'(WQE_BEATS);
  always_comb begin
    iq_in.bad = ar_qp_bad || ar_cross;
    iq_in.qp = s_araddr_i[RNDV_QP_SHIFT +: QP_W];
    iq_in.slot = s_araddr_i[STRIDE_LOG + 1 +: SL_W];
    iq_in.fin = s_araddr_i[STRIDE_LOG];
    iq_in.beat = ar_beat;
    iq_in.len = s_arlen_i;
  end

  tmnic_fifo #(.WIDTH(1), .DEPTH(MAX_OUT)) u_ord (
    .clk_i, .rst_ni,
    .s_data_i(ar_int), .s_valid_i(ar_fire), .s_ready_o(ord_ready),
    .m_data_o(ord_head), .m_valid_o(ord_valid), .m_ready_i(ord_pop), .level_o(ord_level));
  tmnic_fifo #(.WIDTH($bits(iar_t)), .DEPTH(MAX_OUT)) u_iq (
    .clk_i, .rst_ni,
    .s_data_i(iq_in), .s_valid_i(ar_fire && ar_int), .s_ready_o(iq_ready),
    .m_data_o(iq_out), .m_valid_o(iq_valid), .m_ready_i(iq_pop), .level_o(iq_level));

  // Host AR register: m_arvalid_o is a flip-flop, loaded straight from the slave port.
  wire m_arvalid_d = m_ar_load || (m_arvalid_o && !m_arready_i);

  // ---------------------------------------------------------------- internal server
  // One descriptor read per burst (registered RAM: the word is there the cycle after), then one
  // beat per cycle from the RAM's output, which holds while no other read is issued. The next
  // burst's read is issued with the current burst's last beat, so internal bursts follow each
  // other without a gap. An out-of-range burst reads nothing (its address bits name no slot).
  logic              srv_busy_q, srv_busy_d;
  logic              cur_bad_q, cur_bad_d, cur_fin_q, cur_fin_d;
  logic [BEAT_W-1:0] cur_beat_q, cur_beat_d;
  logic [7:0]        cur_left_q, cur_left_d;   // beats after the current one
  rndv_desc_t        desc;

  tmnic_ram_sdp #(.WIDTH($bits(rndv_desc_t)), .DEPTH(NUM_QP * RNDV_SLOTS), .NO_COLLISION(1'b1)) u_desc (
    .clk_i, .we_i, .waddr_i({we_qp_i, we_slot_i}), .wdata_i(we_desc_i),
    .re_i(iq_pop && !iq_out.bad), .raddr_i({iq_out.qp, iq_out.slot}), .rdata_o(desc));

  // ---------------------------------------------------------------- R side
  // One output register stage; a beat is loaded into it when it is empty or being taken, from the
  // source the order FIFO's head names. The host's R waits while the head is internal.
  wire out_en = !s_rvalid_o || s_rready_i;
  assign m_rready_o = ord_valid && !ord_head && out_en;
  wire h_take = m_rvalid_i && m_rready_o;
  wire i_take = ord_valid && ord_head && srv_busy_q && out_en;
  wire i_last = (cur_left_q == 8'd0);
  wire r_load = h_take || i_take;
  wire r_last = h_take ? m_rlast_i : i_last;
  assign ord_pop = r_load && r_last;
  assign iq_pop = iq_valid && (!srv_busy_q || (i_take && i_last));
  logic s_rvalid_d;

  always_comb begin
    srv_busy_d = srv_busy_q;
    cur_bad_d = cur_bad_q; cur_fin_d = cur_fin_q; cur_beat_d = cur_beat_q; cur_left_d = cur_left_q;
    if (i_take) begin
      cur_beat_d = cur_beat_q + 1'b1;
      cur_left_d = cur_left_q - 1'b1;
      if (i_last) srv_busy_d = 1'b0;
    end
    if (iq_pop) begin
      srv_busy_d = 1'b1;
      cur_bad_d = iq_out.bad;
      cur_fin_d = iq_out.fin;
      cur_beat_d = iq_out.beat;
      cur_left_d = iq_out.len;
    end
    s_rvalid_d = r_load || (s_rvalid_o && !s_rready_i);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      m_arvalid_o <= 1'b0;
      srv_busy_q <= 1'b0;
      s_rvalid_o <= 1'b0;
    end else begin
      m_arvalid_o <= m_arvalid_d;
      srv_busy_q <= srv_busy_d;
      s_rvalid_o <= s_rvalid_d;
    end
  end
  always_ff @(posedge clk_i) begin
    cur_bad_q <= cur_bad_d; cur_fin_q <= cur_fin_d; cur_beat_q <= cur_beat_d; cur_left_q <= cur_left_d;
    if (m_ar_load) begin
      m_araddr_o <= s_araddr_i;
      m_arlen_o <= s_arlen_i;
    end
    // The beat: formatted only when an internal beat is loaded (see wqe_bytes).
    if (r_load) begin
      s_rlast_o <= r_last;
      if (h_take) s_rdata_o <= m_rdata_i;
      else if (cur_bad_q) s_rdata_o <= '0;
      else s_rdata_o <= wqe_beat(desc, cur_fin_q, cur_beat_q);
    end
  end

  assign idle_o = (ord_level == '0) && !s_rvalid_o;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  tmnic_hold_chk #(.W(72), .NAME("tmnic_rndv_sq: s_ar")) u_s_ar_hold (
    .clk_i, .rst_ni, .valid_i(s_arvalid_i), .ready_i(s_arready_o), .data_i({s_araddr_i, s_arlen_i}));
  tmnic_hold_chk #(.W(72), .NAME("tmnic_rndv_sq: m_ar")) u_m_ar_hold (
    .clk_i, .rst_ni, .valid_i(m_arvalid_o), .ready_i(m_arready_i), .data_i({m_araddr_o, m_arlen_o}));
  tmnic_hold_chk #(.W(DATA_W + 1), .NAME("tmnic_rndv_sq: s_r")) u_s_r_hold (
    .clk_i, .rst_ni, .valid_i(s_rvalid_o), .ready_i(s_rready_i), .data_i({s_rdata_o, s_rlast_o}));
  tmnic_hold_chk #(.W(DATA_W + 1), .NAME("tmnic_rndv_sq: m_r")) u_m_r_hold (
    .clk_i, .rst_ni, .valid_i(m_rvalid_i), .ready_i(m_rready_o), .data_i({m_rdata_i, m_rlast_i}));
  a_int_one_wqe: assert property (@(posedge clk_i) disable iff (!chk_q)
    ar_fire && ar_int |-> !ar_cross)
    else $error("tmnic_rndv_sq: internal burst 0x%h len %0d leaves its WQE", s_araddr_i, s_arlen_i);
  a_int_aligned: assert property (@(posedge clk_i) disable iff (!chk_q)
    ar_fire && ar_int |-> s_araddr_i[LANE_W-1:0] == '0)
    else $error("tmnic_rndv_sq: internal burst 0x%h not beat aligned", s_araddr_i);
  // The internal queue pops before the order FIFO does, so it is never fuller.
  a_iq_level: assert property (@(posedge clk_i) disable iff (!chk_q) iq_level <= ord_level)
    else $error("tmnic_rndv_sq: internal AR queue ahead of the order FIFO");
  a_r_overwrite: assert property (@(posedge clk_i) disable iff (!chk_q) r_load |-> out_en)
    else $error("tmnic_rndv_sq: R register overwritten");
  a_srv_head: assert property (@(posedge clk_i) disable iff (!chk_q) srv_busy_q |-> ord_valid)
    else $error("tmnic_rndv_sq: internal burst served without an order entry");
`endif
endmodule
