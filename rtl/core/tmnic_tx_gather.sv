// TX buffer slots of the requester: where each outgoing packet's payload is gathered before the
// TX scheduler streams it.
//
// Slots are allocated, filled and handed over strictly in order. The requester allocates the next
// slot with the packet's header (alloc_i, once slot_free_o), issues the payload reads (one
// chunk_push_i per read, with the buffer position its data goes to) or writes inline bytes
// (inl_wr_i), then marks the slot filled (filled_i). Read responses arrive in request order
// (one chunk after another) and are written to the buffer at their chunk's position; a slot goes to
// the TX scheduler (registered header + slot number, valid/ready) once it is filled and its last
// read response has been written, in allocation order. slot_free_i[s] returns slot s.
//
// Headers are kept in a small RAM (one per slot); its registered read follows the hand-over pointer.
module tmnic_tx_gather import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NSLOT = 8,    // 4 KiB slots, power of two >= 2
  parameter int unsigned NCHUNK = 16,  // payload reads in flight, power of two >= 2
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned POS_W = 12 + SLOT_W,
  localparam int unsigned CH_W = $clog2(NCHUNK)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Allocation (requester)
  output logic              slot_free_o,   // the next slot in order is free
  output logic [SLOT_W-1:0] slot_o,        // the slot being filled
  input  logic              alloc_i,       // allocate slot_o for a packet with header hdr_i
  input  roce_hdr_t         hdr_i,
  input  logic              filled_i,      // every read of slot_o is issued: hand over when complete
  // Payload reads issued by the requester: where each one's data goes
  output logic              chunk_room_o,  // a read may be issued
  output logic              chunk_empty_o, // no read in flight
  input  logic              chunk_push_i,
  input  logic [POS_W-1:0]  chunk_pos_i,   // buffer position of its first byte (slot in the top bits)
  // Inline payload (only while no read is in flight)
  input  logic              inl_wr_i,
  input  logic [POS_W-1:0]  inl_pos_i,
  input  logic [DATA_W-1:0] inl_data_i,

  // Read responses (in request order; rsp_off_i is the beat's byte offset from the chunk's start)
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic [BYTES-1:0]   rsp_be_i,
  input  logic               rsp_last_i,

  // TX buffer write port (tmnic_shift_buf)
  output logic               txb_wr_o,
  output logic [POS_W-1:0]   txb_pos_o,
  output logic [DATA_W-1:0]  txb_data_o,
  output logic [BYTES-1:0]   txb_be_o,

  // Filled slots to the TX scheduler
  output roce_hdr_t          pkt_hdr_o,
  output logic [SLOT_W-1:0]  pkt_slot_o,
  output logic               pkt_valid_o,
  input  logic               pkt_ready_i,
  input  logic [NSLOT-1:0]   slot_free_i,

  output logic               idle_o        // no slot allocated, nothing in flight or offered
);
  if (NSLOT < 2 || (NSLOT & (NSLOT - 1)) != 0) begin : g_chk_slot
    $fatal(1, "tmnic_tx_gather: NSLOT must be a power of two >= 2");
  end
  if (NCHUNK < 2 || (NCHUNK & (NCHUNK - 1)) != 0) begin : g_chk_chunk
    $fatal(1, "tmnic_tx_gather: NCHUNK must be a power of two >= 2");
  end
  if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_tx_gather: DATA_W must be a power of two >= 64");
  end

  // ---------------------------------------------------------------- state
  logic [SLOT_W-1:0] fill_q, fill_d;       // slot being filled
  logic [SLOT_W-1:0] ho_q, ho_d;           // next slot to hand over
  logic [NSLOT-1:0]  busy_q, busy_d;       // allocated and not yet returned
  logic [NSLOT-1:0]  filled_q, filled_d;   // every read issued, not yet handed over
  logic [NSLOT-1:0][CH_W:0] pend_q, pend_d; // reads in flight per slot (up to all NCHUNK)
  logic [CH_W:0]     cw_q, cw_d, cr_q, cr_d;
  logic              pkt_valid_d;
  logic [POS_W-1:0]  chunk_pos_q [NCHUNK];  // no reset: cw/cr cover it

  wire [POS_W-1:0]  cur_pos = chunk_pos_q[cr_q[CH_W-1:0]];
  wire [SLOT_W-1:0] rsp_slot = cur_pos[POS_W-1:12];
  roce_hdr_t hdr_rd;
  logic handover;

  always_comb begin
    fill_d = fill_q;
    ho_d = ho_q;
    busy_d = busy_q & ~slot_free_i;
    filled_d = filled_q;
    pend_d = pend_q;
    cw_d = cw_q;
    cr_d = cr_q;
    pkt_valid_d = pkt_valid_o && !pkt_ready_i;

    if (alloc_i) busy_d[fill_q] = 1'b1;
    if (filled_i) begin
      filled_d[fill_q] = 1'b1;
      fill_d = fill_q + 1'b1;
    end
    if (chunk_push_i) begin
      cw_d = cw_q + 1'b1;
      pend_d[chunk_pos_i[POS_W-1:12]] = pend_d[chunk_pos_i[POS_W-1:12]] + 1'b1;
    end
    if (rsp_valid_i && rsp_last_i) begin
      cr_d = cr_q + 1'b1;
      pend_d[rsp_slot] = pend_d[rsp_slot] - 1'b1;
    end

    // Hand over in order once every read of the slot has returned (its last beat is written to the
    // buffer in the cycle the hand-over is decided, before the TX scheduler can read it).
    handover = filled_q[ho_q] && pend_q[ho_q] == '0 && (!pkt_valid_o || pkt_ready_i);
    if (handover) begin
      pkt_valid_d = 1'b1;
      filled_d[ho_q] = 1'b0;
      ho_d = ho_q + 1'b1;
    end
    // The header RAM is read at ho_d every cycle, so its output is slot ho_q's header: a slot is
    // marked filled at least one cycle after its header was written (a_filled_busy), so it is
    // handed over at least two cycles after, when the read has long returned the new header.
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fill_q <= '0;
      ho_q <= '0;
      busy_q <= '0;
      filled_q <= '0;
      pend_q <= '0;
      cw_q <= '0;
      cr_q <= '0;
      pkt_valid_o <= 1'b0;
      txb_wr_o <= 1'b0;
    end else begin
      fill_q <= fill_d;
      ho_q <= ho_d;
      busy_q <= busy_d;
      filled_q <= filled_d;
      pend_q <= pend_d;
      cw_q <= cw_d;
      cr_q <= cr_d;
      pkt_valid_o <= pkt_valid_d;
      txb_wr_o <= rsp_valid_i || inl_wr_i;
    end
  end

  // Payload registers, loaded only when their data is valid.
  always_ff @(posedge clk_i) begin
    if (chunk_push_i) chunk_pos_q[cw_q[CH_W-1:0]] <= chunk_pos_i;
    if (rsp_valid_i) begin
      txb_pos_o <= cur_pos + POS_W'(rsp_off_i);
      txb_data_o <= rsp_data_i;
      txb_be_o <= rsp_be_i;
    end else if (inl_wr_i) begin
      txb_pos_o <= inl_pos_i;
      txb_data_o <= inl_data_i;
      txb_be_o <= '1;
    end
    if (handover) begin
      pkt_hdr_o <= hdr_rd;
      pkt_slot_o <= ho_q;
    end
  end

  tmnic_ram_sdp #(.WIDTH($bits(roce_hdr_t)), .DEPTH(NSLOT)) u_hdr (
    .clk_i, .we_i(alloc_i), .waddr_i(fill_q), .wdata_i(hdr_i), .re_i(1'b1), .raddr_i(ho_d), .rdata_o(hdr_rd));

  assign slot_free_o = !busy_q[fill_q];
  assign slot_o = fill_q;
  assign chunk_room_o = (cw_q - cr_q) != (CH_W + 1)'(NCHUNK);
  assign chunk_empty_o = cw_q == cr_q;
  assign idle_o = busy_q == '0 && !pkt_valid_o && cw_q == cr_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_alloc_free: assert property (@(posedge clk_i) disable iff (!chk_q) alloc_i |-> !busy_q[fill_q])
    else $error("tmnic_tx_gather: slot allocated while busy");
  a_chunk_full: assert property (@(posedge clk_i) disable iff (!chk_q) chunk_push_i |-> chunk_room_o)
    else $error("tmnic_tx_gather: chunk FIFO overflow");
  a_chunk_slot: assert property (@(posedge clk_i) disable iff (!chk_q)
    chunk_push_i |-> busy_q[chunk_pos_i[POS_W-1:12]] || (alloc_i && chunk_pos_i[POS_W-1:12] == fill_q))
    else $error("tmnic_tx_gather: read for a slot that is not allocated");
  a_rsp_empty: assert property (@(posedge clk_i) disable iff (!chk_q) rsp_valid_i |-> !chunk_empty_o)
    else $error("tmnic_tx_gather: read response with no read in flight");
  a_inl_alone: assert property (@(posedge clk_i) disable iff (!chk_q) inl_wr_i |-> !rsp_valid_i && chunk_empty_o)
    else $error("tmnic_tx_gather: inline write while reads are in flight");
  a_filled_busy: assert property (@(posedge clk_i) disable iff (!chk_q) filled_i |-> busy_q[fill_q])
    else $error("tmnic_tx_gather: slot marked filled without being allocated");
  a_free_busy: assert property (@(posedge clk_i) disable iff (!chk_q) (slot_free_i & ~busy_q) == '0)
    else $error("tmnic_tx_gather: a slot that is not allocated was returned");
  tmnic_hold_chk #(.W($bits(pkt_slot_o) + $bits(pkt_hdr_o)), .NAME("tmnic_tx_gather: offered packet")) u_pkt_hold (
    .clk_i, .rst_ni, .valid_i(pkt_valid_o), .ready_i(pkt_ready_i), .data_i({pkt_slot_o, pkt_hdr_o}));
`endif
endmodule
