// Receive payload buffer of the responder: SLOTS packet slots of SLOT_BYTES (8 KiB: the largest MTU,
// 4 KiB, plus a UD datagram's 40-byte GRH does not fit 4 KiB) in a tmnic_shift_buf.
//
// The store side takes each payload train from the parser into the next free slot by itself, so
// that packet n+1 is stored while the receive engine scatters packet n. The engine sees the oldest
// stored packet, the head: the first 16 bytes of its payload (a TMH) once its first beat is in
// (head_beg_o), and head_full_o once its last beat is. Scatter requests to tmnic_dma_wr pull from
// the head slot: acc_i marks a request accepted, with the packet offset of its first byte, and the
// pulls that follow (rd_off_i relative to that byte) read it until the next acceptance
// (tmnic_dma_wr serves one request at a time; the last pull of a request may come in the same cycle
// as the next acceptance). release_i hands the head slot back. The slot becomes free only when
// every request accepted up to the release is done (done_i: its last beat left the DMA engine),
// because the DMA engine may still pull from it until then.
module tmnic_rx_buf #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned SLOTS = 2,      // power of two, 2..8
  parameter int unsigned SLOT_BYTES = 8192,   // at least the largest payload, power of two, 2 words..8192
  parameter int unsigned RD_LAT = 3,     // pull data latency (tmnic_dma_wr DATA_LAT), 1..3
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned SLOT_W = $clog2(SLOTS),
  localparam int unsigned OFF_W = $clog2(SLOT_BYTES),
  localparam int unsigned POS_W = OFF_W + SLOT_W
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Payload trains from the parser: one per packet that has a payload, at most SLOT_BYTES each,
  // packed from lane 0.
  input  logic [DATA_W-1:0]  s_tdata_i,
  input  logic [BYTES-1:0]   s_tkeep_i,
  input  logic               s_tlast_i,
  input  logic               s_tvalid_i,
  output logic               s_tready_o,

  // The head packet
  output logic               head_beg_o,     // its first beat is stored (head_first_o valid)
  output logic               head_full_o,    // its last beat is stored
  output logic [127:0]       head_first_o,   // its first 16 payload bytes
  output logic [127:0]       head_rvh_o,     // and the 16 after them (a rendezvous request's RVH)
  input  logic               release_i,      // done with it (only while head_full_o)

  // DMA write requests of the head packet and their data pulls
  input  logic               acc_i,          // a request was accepted (only while head_full_o)
  input  logic [12:0]        acc_off_i,      // packet offset of its first byte
  input  logic               rd_en_i,
  input  logic signed [13:0] rd_off_i,
  output logic [DATA_W-1:0]  rd_data_o,      // RD_LAT cycles after rd_en_i
  input  logic               done_i,         // a request's last beat left (in acceptance order)
  output logic               wr_none_o,      // every accepted request is done (no write of a
                                             // packet still on its way to memory)

  output logic               idle_o          // no packet stored or being stored
);
  localparam int unsigned LANE_W = $clog2(BYTES);
  localparam int unsigned WORD_W = OFF_W - LANE_W;   // word in a slot
  // Accepted and done requests are counted modulo 2^SEQ_W; a release remembers the accept count.
  // tmnic_dma_wr has at most a dozen requests of one client accepted and not done (its FIFO and
  // pipeline hold that many beats), well below the wrap.
  localparam int unsigned SEQ_W = 5;
  localparam int unsigned MAX_OUT = 16;

  if (DATA_W < 128 || DATA_W % 64 != 0 || (BYTES & (BYTES - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_rx_buf: DATA_W must be a power-of-two multiple of 64, at least 128");
  end
  if (SLOTS < 2 || SLOTS > 8 || (SLOTS & (SLOTS - 1)) != 0) begin : g_chk_s
    $fatal(1, "tmnic_rx_buf: SLOTS must be 2, 4 or 8");
  end
  if (SLOT_BYTES < 2 * BYTES || SLOT_BYTES > 8192 || (SLOT_BYTES & (SLOT_BYTES - 1)) != 0) begin : g_chk_sb
    $fatal(1, "tmnic_rx_buf: SLOT_BYTES must be a power of two from two words to 8192");
  end
  if (RD_LAT < 1 || RD_LAT > 3) begin : g_chk_lat
    $fatal(1, "tmnic_rx_buf: RD_LAT must be 1, 2 or 3");
  end

  // ---------------------------------------------------------------- registers
  // Control (reset)
  logic [SLOT_W-1:0]  tail_q, tail_d, head_q, head_d;
  logic [WORD_W-1:0]  wword_q, wword_d;        // next word of the slot being stored
  logic [SLOTS-1:0]   beg_q, beg_d;            // first beat stored
  logic [SLOTS-1:0]   used_q, used_d;          // whole packet stored, slot not free yet
  logic [SLOTS-1:0]   rel_q, rel_d;            // released, waiting for its requests to be done
  logic [SEQ_W-1:0]   acc_q, acc_d, dn_q, dn_d;
  // Payload (no reset)
  logic [SLOTS-1:0][SEQ_W-1:0] rseq_q, rseq_d; // accept count at the release
  logic [SLOTS-1:0][127:0]     first_q, rvh_q;
  localparam int unsigned RVH_WORD = (BYTES >= 32) ? 0 : 1;
  localparam int unsigned RVH_LANE = (BYTES >= 32) ? 1 : 0;
  logic [POS_W-1:0]   pull_q;                  // buffer position of the accepted request's first byte

  wire beat = s_tvalid_i && s_tready_o;
  assign s_tready_o = !used_q[tail_q];         // (a released slot is still used)

  always_comb begin
    tail_d = tail_q; head_d = head_q; wword_d = wword_q;
    beg_d = beg_q; used_d = used_q; rel_d = rel_q; rseq_d = rseq_q;
    acc_d = acc_q + SEQ_W'(acc_i);
    dn_d = dn_q + SEQ_W'(done_i);
    // A released slot is free once the requests accepted before its release are all done. (It is
    // neither the tail being stored nor the head, so nothing else touches it this cycle.)
    for (int s = 0; s < int'(SLOTS); s++)
      if (rel_q[s] && dn_q == rseq_q[s]) begin
        beg_d[s] = 1'b0;
        used_d[s] = 1'b0;
        rel_d[s] = 1'b0;
      end
    if (beat) begin
      beg_d[tail_q] = 1'b1;
      wword_d = wword_q + 1'b1;
      if (s_tlast_i) begin
        used_d[tail_q] = 1'b1;
        tail_d = tail_q + 1'b1;
        wword_d = '0;
      end
    end
    if (release_i) begin
      rel_d[head_q] = 1'b1;
      rseq_d[head_q] = acc_d;        // including a request accepted in this cycle
      head_d = head_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tail_q <= '0;
      head_q <= '0;
      wword_q <= '0;
      beg_q <= '0;
      used_q <= '0;
      rel_q <= '0;
      acc_q <= '0;
      dn_q <= '0;
    end else begin
      tail_q <= tail_d;
      head_q <= head_d;
      wword_q <= wword_d;
      beg_q <= beg_d;
      used_q <= used_d;
      rel_q <= rel_d;
      acc_q <= acc_d;
      dn_q <= dn_d;
    end
  end
  always_ff @(posedge clk_i) begin
    rseq_q <= rseq_d;
    if (beat && wword_q == '0) first_q[tail_q] <= s_tdata_i[127:0];
    if (beat && wword_q == WORD_W'(RVH_WORD)) rvh_q[tail_q] <= s_tdata_i[RVH_LANE * 128 +: 128];
    if (acc_i) pull_q <= {head_q, acc_off_i[OFF_W-1:0]};
  end

  assign head_beg_o = beg_q[head_q] && !rel_q[head_q];
  assign head_full_o = used_q[head_q] && !rel_q[head_q];
  assign head_first_o = first_q[head_q];
  // (bytes 16..31: in the first word from 256 bits up, in the second at 128: valid once that word
  // is stored, which head_beg_o says from 256 bits up)
  assign head_rvh_o = rvh_q[head_q];
  assign idle_o = (beg_q == '0) && (used_q == '0);
  assign wr_none_o = (acc_q == dn_q);

  // ---------------------------------------------------------------- storage
  // Pulls before the request's first byte (the first beat's negative offset) or past the packet
  // read neighbouring bytes, which the DMA engine's strobes leave out.
  tmnic_shift_buf #(.DATA_W(DATA_W), .DEPTH(SLOTS * SLOT_BYTES / BYTES), .RD_LAT(RD_LAT)) u_buf (
    .clk_i,
    .wr_en_i(beat), .wr_pos_i({tail_q, wword_q, LANE_W'(0)}), .wr_data_i(s_tdata_i), .wr_be_i(s_tkeep_i),
    .rd_en_i, .rd_pos_i(pull_q + POS_W'(rd_off_i)), .rd_data_o);
  // Offsets only matter modulo the buffer (the sign bit falls off too); smaller slots leave the top
  // offset bits of a request unused.
  if (POS_W < 14) begin : g_unused_rd
    wire unused_rd = ^rd_off_i[13:POS_W];
  end
  if (OFF_W < 13) begin : g_unused_acc
    wire unused_acc = ^acc_off_i[12:OFF_W];
  end

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_release: assert property (@(posedge clk_i) disable iff (!chk_q) release_i |-> head_full_o)
    else $error("tmnic_rx_buf: release without a stored head packet");
  a_acc: assert property (@(posedge clk_i) disable iff (!chk_q) acc_i |-> head_full_o)
    else $error("tmnic_rx_buf: DMA request for a head packet not stored");
  a_done: assert property (@(posedge clk_i) disable iff (!chk_q) done_i |-> acc_q != dn_q)
    else $error("tmnic_rx_buf: done without an accepted request");
  a_out: assert property (@(posedge clk_i) disable iff (!chk_q) SEQ_W'(acc_q - dn_q) <= SEQ_W'(MAX_OUT))
    else $error("tmnic_rx_buf: too many requests in flight for the release counters");
  a_overrun: assert property (@(posedge clk_i) disable iff (!chk_q) beat && wword_q == '1 |-> s_tlast_i)
    else $error("tmnic_rx_buf: payload train longer than a slot");
  tmnic_hold_chk #(.W(DATA_W + DATA_W / 8 + 1), .NAME("tmnic_rx_buf: payload beat")) u_in_hold (
    .clk_i, .rst_ni, .valid_i(s_tvalid_i), .ready_i(s_tready_o), .data_i({s_tdata_i, s_tkeep_i, s_tlast_i}));
`endif
endmodule
