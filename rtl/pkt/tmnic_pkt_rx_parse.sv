// Write side of the RoCEv2 frame parser (tmnic_pkt_rx): frames in, committed frames out.
//
// Every beat of an admitted frame is written into the frame buffer (one DATA_W word per beat,
// each frame starting on a word) while the frame's ICRC is computed and its header captured. At
// tlast the frame is either committed (descriptor {header, start word, end word, header length}
// into the descriptor FIFO, whose head is this block's output) or dropped (the write pointer
// rewinds to the frame start). See rtl/pkt/README.md for the rules.
//
// Pipeline (two-process form: next values in always_comb, computed only for a beat in the stage;
// the always_ff blocks hold registers only):
//   I  input register (data masked with tkeep), ICRC lanes of the beat from the UDP length
//   C  parse: header window capture, ICRC accumulator (tmnic_crc_acc, the received ICRC covered
//      too); on the last beat all header rules
//   W  buffer write; on the last beat residue check, commit/drop, descriptor push, statistics pulse
// A new frame is admitted (s_axis_tready_o for its first beat) only when the buffer has room for a
// MAX_FRAME_LEN frame plus the two beats still in I/C (counted against rel_ptr_i, the read side's
// release pointer), and the descriptor FIFO has room for it and the frames still in flight. Within
// a frame tready stays high: the input never stalls mid-frame.
module tmnic_pkt_rx_parse
  import tmnic_hwif_pkg::*;
  import tmnic_crc_pkg::*;
#(
  parameter int unsigned DATA_W     = 512,    // stream width in bits: 256 or 512
  parameter int unsigned BUF_BYTES  = 16384,  // frame buffer size (power of two)
  parameter int unsigned DESC_DEPTH = 16,     // committed frames the buffer can hold (power of two)
  localparam int unsigned W  = DATA_W / 8,
  localparam int unsigned AW = $clog2(BUF_BYTES / W)
) (
  input  logic              clk_i,
  input  logic              rst_ni,

  // Local addresses: frames to other destinations are dropped (drop_hdr).
  input  logic [47:0]       local_mac_i,
  input  logic [31:0]       local_ip_i,

  // Frames in; tready depends on registers only.
  input  logic [DATA_W-1:0] s_axis_tdata_i,
  input  logic [W-1:0]      s_axis_tkeep_i,
  input  logic              s_axis_tlast_i,
  input  logic              s_axis_tvalid_i,
  output logic              s_axis_tready_o,

  // Frame buffer write port (registered): one word per beat.
  output logic              buf_we_o,
  output logic [AW-1:0]     buf_waddr_o,
  output logic [DATA_W-1:0] buf_wdata_o,

  // Read side's release pointer (with wrap bit): the buffer words before it are free.
  input  logic [AW:0]       rel_ptr_i,

  // Committed frames: head of the descriptor FIFO.
  output roce_hdr_t         desc_hdr_o,
  output logic [AW-1:0]     desc_start_o,  // first buffer word of the frame
  output logic [AW:0]       desc_fend_o,   // write pointer after the frame: its release point
  output logic [6:0]        desc_hl_o,     // header length 54..74 (payload offset in the frame)
  output logic              desc_valid_o,
  input  logic              desc_ready_i,

  // One-cycle pulses, exactly one per received frame.
  output logic              drop_icrc_o,
  output logic              drop_hdr_o,
  output logic              accept_o
);

  localparam int unsigned LW        = $clog2(W);
  localparam int unsigned DEPTH     = BUF_BYTES / W;                    // buffer words
  localparam int unsigned MAX_BEATS = (MAX_FRAME_LEN + W - 1) / W;      // words of a longest frame
  localparam int unsigned SLACK     = 2;                                // beats in stages I and C
  localparam int unsigned HDR_MAX   = 74;                               // 54 + RETH + ImmDt
  localparam int unsigned HB        = (HDR_MAX + W - 1) / W;            // header window beats
  localparam int unsigned WIN_BYTES = HB * W;
  localparam int unsigned BI_W      = 8;                                // beat index, saturating
  localparam int unsigned OFF_W     = 17;                               // frame offsets
  localparam int unsigned ULEN_BEAT = 38 / W;  // beat holding the UDP length (bytes 38-39)
  localparam int unsigned DL_W      = $clog2(DESC_DEPTH) + 1;

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_pkt_rx_parse: DATA_W must be 256 or 512");
  end
  if ((BUF_BYTES & (BUF_BYTES - 1)) != 0 || DEPTH < MAX_BEATS + SLACK) begin : g_chk_buf
    $fatal(1, "tmnic_pkt_rx_parse: BUF_BYTES must be a power of two >= MAX_FRAME_LEN + 2 beats");
  end
  if (DESC_DEPTH < 4 || (DESC_DEPTH & (DESC_DEPTH - 1)) != 0) begin : g_chk_desc
    $fatal(1, "tmnic_pkt_rx_parse: DESC_DEPTH must be a power of two >= 4");
  end

  // Frame offsets of the bytes forced to 0xFF for the ICRC.
  function automatic logic [WIN_BYTES-1:0] icrc_ff_mask();
    logic [WIN_BYTES-1:0] m;
    m = '0;
    m[15] = 1'b1;
    m[22] = 1'b1;
    m[24] = 1'b1;
    m[25] = 1'b1;
    m[40] = 1'b1;
    m[41] = 1'b1;
    m[46] = 1'b1;
    return m;
  endfunction
  localparam logic [WIN_BYTES-1:0] ICRC_FF = icrc_ff_mask();

  typedef struct packed {
    roce_hdr_t     hdr;
    logic [AW-1:0] start;
    logic [AW:0]   fend;
    logic [6:0]    hl;
  } desc_t;

  // Thermometer code: lanes [0, n) set, n in 0..W.
  function automatic logic [W-1:0] therm(input logic [LW:0] n);
    return ~({W{1'b1}} << n);
  endfunction

  // Simulation cost (rtl/pkt/README.md): the wide logic is written inline rather than as
  // functions with wide arguments (Verilator zero-initialises the temporaries of every inlined
  // call on every evaluation); each always_comb holds its registers' values by default and
  // computes new ones only for a beat in its stage, and the registers load with that beat (plain
  // copies between stages need no always_comb at all). Stage C's logic reads registers only, so
  // the simulator evaluates it once per cycle, not again for every change of an input.

  // ---------------------------------------------------------------------------------------------
  // Stage I: admission and input register
  // ---------------------------------------------------------------------------------------------
  // Control (reset)
  logic              in_frame_q, in_frame_d;  // inside an admitted frame
  logic              i_valid_q;
  logic [BI_W-1:0]   ib_q, ib_d;   // index of the next input beat within its frame (saturating)
  // Datapath (no reset)
  logic [DATA_W-1:0] i_data_q, i_data_d;
  logic              i_last_q, i_last_d;
  logic [BI_W-1:0]   cb_q, cb_d;               // index of the beat in stage I (ib_q taken with it)
  logic [OFF_W-1:0]  cov_end_q, cov_end_d;     // end of the ICRC-covered bytes (34 + UDP length)
  logic [W-1:0]      i_crc_en_q, i_crc_en_d;   // ICRC lanes of the beat in stage I
  logic [W-1:0]      i_crc_ff_q, i_crc_ff_d;   // ... fed as 0xFF
  logic [LW:0]       i_kcnt_q, i_kcnt_d;       // bytes in the beat (tkeep contiguous from lane 0)

  logic [AW:0]       wr_ptr_q, wr_ptr_d;    // next word to write
  logic [AW:0]       cmt_ptr_q, cmt_ptr_d;  // start of the frame being written
  logic [AW:0]       used;
  logic [DL_W-1:0]   desc_level;
  logic              admit, in_fire;

  always_comb begin : c_admit
    used  = wr_ptr_q - rel_ptr_i;
    admit = (32'(used) + MAX_BEATS + SLACK <= DEPTH) &&
            (32'(desc_level) + SLACK + 1 <= DESC_DEPTH);
    s_axis_tready_o = in_frame_q || admit;
    in_fire         = s_axis_tvalid_i && s_axis_tready_o;
    in_frame_d      = in_frame_q;
    ib_d            = ib_q;
    if (in_fire) begin
      in_frame_d = !s_axis_tlast_i;
      ib_d       = s_axis_tlast_i ? '0 : ((ib_q == '1) ? ib_q : ib_q + 1'b1);
    end
  end

  always_comb begin : c_in
    i_data_d   = i_data_q;
    i_last_d   = i_last_q;
    cb_d       = cb_q;
    cov_end_d  = cov_end_q;
    i_crc_en_d = i_crc_en_q;
    i_crc_ff_d = i_crc_ff_q;
    i_kcnt_d   = i_kcnt_q;
    if (in_fire) begin
      for (int unsigned i = 0; i < W; i++) begin
        i_data_d[8*i +: 8] = s_axis_tkeep_i[i] ? s_axis_tdata_i[8*i +: 8] : 8'h00;
      end
      i_kcnt_d = '0;
      for (int unsigned i = 0; i < W; i++) begin
        if (s_axis_tkeep_i[i]) begin
          i_kcnt_d = (LW + 1)'(i + 1);
        end
      end
      // ICRC lanes: frame bytes [14, 34 + UDP length), i.e. IPv4 header through the received
      // ICRC, so a correct frame leaves the CRC residue. The UDP length (bytes 38-39) is known
      // from the beat that holds it on; earlier beats are covered entirely (a valid frame's ICRC
      // ends at byte 58 or later). Bytes beyond tkeep are never covered. Computed here, from the
      // input, so that stage C holds only the CRC matrix.
      // Lanes below cov_end in beat ib_q: all if the end lies in a later beat, a thermometer of
      // its lane if in this one (beat compare, no subtraction).
      if (ib_q == BI_W'(ULEN_BEAT)) begin
        cov_end_d = OFF_W'(34) + OFF_W'({s_axis_tdata_i[8*(38 % W) +: 8],
                                         s_axis_tdata_i[8*(39 % W) +: 8]});
      end
      if (32'(ib_q) + 1 <= ULEN_BEAT || 32'(ib_q) < (32'(cov_end_d) >> LW)) begin
        i_crc_en_d = '1;
      end else if (32'(ib_q) == (32'(cov_end_d) >> LW)) begin
        i_crc_en_d = therm({1'b0, cov_end_d[LW-1:0]});
      end else begin
        i_crc_en_d = '0;
      end
      if (ib_q == '0) begin
        i_crc_en_d = i_crc_en_d & ~therm((LW + 1)'(14));
      end
      i_crc_en_d = i_crc_en_d & s_axis_tkeep_i;
      i_crc_ff_d = '0;
      for (int unsigned k = 0; k < HB; k++) begin
        if (ib_q == BI_W'(k)) begin
          i_crc_ff_d = ICRC_FF[W*k +: W];
        end
      end
      i_last_d = s_axis_tlast_i;
      cb_d     = ib_q;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage C: parse, ICRC
  // ---------------------------------------------------------------------------------------------
  logic                      crc_ok;  // residue check over the frame so far (registers only)
  logic [31:0]               unused_crc_y;
  logic [CRC_SH_W-1:0]       unused_crc_k;

  tmnic_crc_acc #(.W(W), .FIRST_LO(14), .CHECK(1'b1)) u_crc (
    .clk_i,
    .rst_ni,
    .valid_i  (i_valid_q),
    .first_i  (cb_q == '0),
    .data_i   (i_data_q),
    .en_i     (i_crc_en_q),
    .ff_i     (i_crc_ff_q),
    .y_o      (unused_crc_y),
    .k_o      (unused_crc_k),
    .res_ok_o (crc_ok)
  );

  // Control (reset)
  logic                      c_valid_q;
  logic                      c_we_q, c_we_d;  // the beat is written (fits in MAX_BEATS words)
  // Datapath (no reset)
  logic [WIN_BYTES-1:0][7:0] win_q, win_d;    // header bytes seen so far (zero beyond)
  logic [DATA_W-1:0]         c_data_q;
  logic                      c_last_q;
  roce_hdr_t                 c_hdr_q, c_hdr_d;
  logic [6:0]                c_hl_q, c_hl_d;
  logic                      c_hdr_ok_q, c_hdr_ok_d;
  logic                      c_rules_ok;      // every header rule but the destination addresses
  logic [47:0]               c_dst_mac;       // the destination addresses, for c_dst
  logic [31:0]               c_dst_ip;

  // Frame byte i is win_d[i]; fields are big-endian. The header and the rules are only used on the
  // last beat but are computed on every beat (the window is complete from beat HB-1 on). Reads
  // registers only (the local addresses are compared in c_dst).
  always_comb begin : c_parse
    logic [OFF_W-1:0] boff, flen, ip_len, udp_len;
    logic [7:0]       op;
    logic [1:0]       pc;
    logic [3:0]       tver;
    logic [4:0]       ext;
    logic [15:0]      frag;   // flags + fragment offset
    logic [15:0]      pkey;
    win_d      = win_q;
    c_hdr_d    = c_hdr_q;
    c_hl_d     = c_hl_q;
    c_rules_ok = 1'b0;
    c_dst_mac  = '0;
    c_dst_ip   = '0;
    boff       = '0;
    flen       = '0;
    ip_len     = '0;
    udp_len    = '0;
    op         = '0;
    pc         = '0;
    tver       = '0;
    ext        = '0;
    frag       = '0;
    pkey       = '0;
    if (i_valid_q) begin
      boff = OFF_W'(cb_q) << LW;

      if (cb_q == '0) begin
        win_d = '0;
      end
      for (int unsigned k = 0; k < HB; k++) begin
        if (cb_q == BI_W'(k)) begin
          win_d[W*k +: W] = i_data_q;
        end
      end

      udp_len = OFF_W'({win_d[38], win_d[39]});
      flen    = boff + OFF_W'(i_kcnt_q);
      op      = win_d[42];
      pkey    = {win_d[44], win_d[45]};
      pc      = win_d[43][5:4];
      tver    = win_d[43][3:0];
      ext     = bth_ext_len(op);
      ip_len  = OFF_W'({win_d[16], win_d[17]});
      frag    = {win_d[20], win_d[21]};

      c_hdr_d           = '0;
      c_hdr_d.dst_mac   = {win_d[0], win_d[1], win_d[2], win_d[3], win_d[4], win_d[5]};
      c_hdr_d.src_mac   = {win_d[6], win_d[7], win_d[8], win_d[9], win_d[10], win_d[11]};
      c_hdr_d.src_ip    = {win_d[26], win_d[27], win_d[28], win_d[29]};
      c_hdr_d.dst_ip    = {win_d[30], win_d[31], win_d[32], win_d[33]};
      c_hdr_d.udp_sport = {win_d[34], win_d[35]};
      c_hdr_d.opcode    = op;
      c_hdr_d.se        = win_d[43][7];
      c_hdr_d.ack_req   = win_d[50][7];
      c_hdr_d.dest_qp   = {win_d[47], win_d[48], win_d[49]};
      c_hdr_d.psn       = {win_d[51], win_d[52], win_d[53]};
      if (bth_has_reth(op)) begin
        c_hdr_d.reth_va   = {win_d[54], win_d[55], win_d[56], win_d[57],
                             win_d[58], win_d[59], win_d[60], win_d[61]};
        c_hdr_d.reth_rkey = {win_d[62], win_d[63], win_d[64], win_d[65]};
        c_hdr_d.reth_len  = {win_d[66], win_d[67], win_d[68], win_d[69]};
      end
      if (bth_has_imm(op)) begin
        c_hdr_d.imm = bth_has_reth(op) ? {win_d[70], win_d[71], win_d[72], win_d[73]}
                                       : {win_d[54], win_d[55], win_d[56], win_d[57]};
      end
      if (bth_has_aeth(op)) begin
        c_hdr_d.aeth = {win_d[54], win_d[55], win_d[56], win_d[57]};
      end
      c_hdr_d.pay_len = 13'(udp_len - OFF_W'(24) - OFF_W'(ext) - OFF_W'(pc));

      c_hl_d     = 7'd54 + 7'(ext);
      c_dst_mac  = c_hdr_d.dst_mac;
      c_dst_ip   = c_hdr_d.dst_ip;
      c_rules_ok = (flen <= OFF_W'(MAX_FRAME_LEN)) &&
                   ({win_d[12], win_d[13]} == 16'h0800) &&
                   (win_d[14] == 8'h45) &&
                   ((frag & 16'h3FFF) == 16'h0) &&  // MF, fragment offset
                   (win_d[23] == 8'd17) &&
                   ({win_d[36], win_d[37]} == ROCE_UDP_PORT) &&
                   (ip_len == udp_len + OFF_W'(20)) &&
                   (OFF_W'(14) + ip_len <= flen) &&
                   (tver == 4'h0) &&
                   ((pkey & 16'h7FFF) == 16'h7FFF) &&
                   bth_op_supported(op) &&
                   (udp_len >= OFF_W'(24) + OFF_W'(ext) + OFF_W'(pc));
    end
  end

  // (From c_dst_mac/c_dst_ip, not from c_hdr_d: a second reader of c_hdr_d's hold multiplexer
  // keeps synthesis from turning it into the register's enable.)
  always_comb begin : c_dst
    c_hdr_ok_d = c_rules_ok && (c_dst_mac == local_mac_i) && (c_dst_ip == local_ip_i);
  end

  // ---------------------------------------------------------------------------------------------
  // Stage W: buffer write, commit / drop
  // ---------------------------------------------------------------------------------------------
  logic  c_end, c_accept, desc_push, desc_room;
  desc_t desc_in, desc_out;

  always_comb begin : c_commit
    c_we_d    = i_valid_q && (32'(cb_q) < MAX_BEATS);
    c_end     = c_valid_q && c_last_q;
    // The accumulator still holds the frame's value (the next frame's first beat updates it at
    // the end of this cycle), so the check sits here, behind registers only.
    c_accept  = c_hdr_ok_q && crc_ok;
    desc_push = c_end && c_accept;

    wr_ptr_d  = wr_ptr_q + (AW + 1)'(c_we_q);
    cmt_ptr_d = cmt_ptr_q;
    if (c_end) begin
      if (c_accept) begin
        cmt_ptr_d = wr_ptr_d;
      end else begin
        wr_ptr_d = cmt_ptr_q;
      end
    end

    desc_in.hdr   = c_hdr_q;
    desc_in.start = cmt_ptr_q[AW-1:0];
    desc_in.fend  = wr_ptr_q + (AW + 1)'(c_we_q);
    desc_in.hl    = c_hl_q;

    accept_o    = desc_push;
    drop_hdr_o  = c_end && !c_hdr_ok_q;
    drop_icrc_o = c_end && c_hdr_ok_q && !crc_ok;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin : r_ctrl
    if (!rst_ni) begin
      in_frame_q <= 1'b0;
      i_valid_q  <= 1'b0;
      ib_q       <= '0;
      c_valid_q  <= 1'b0;
      c_we_q     <= 1'b0;
      wr_ptr_q   <= '0;
      cmt_ptr_q  <= '0;
    end else begin
      in_frame_q <= in_frame_d;
      i_valid_q  <= in_fire;
      ib_q       <= ib_d;
      c_valid_q  <= i_valid_q;
      c_we_q     <= c_we_d;
      wr_ptr_q   <= wr_ptr_d;
      cmt_ptr_q  <= cmt_ptr_d;
    end
  end

  // Datapath registers, loaded with their stage's beat.
  always_ff @(posedge clk_i) begin : r_in
    if (in_fire) begin
      i_data_q   <= i_data_d;
      i_last_q   <= i_last_d;
      cb_q       <= cb_d;
      cov_end_q  <= cov_end_d;
      i_crc_en_q <= i_crc_en_d;
      i_crc_ff_q <= i_crc_ff_d;
      i_kcnt_q   <= i_kcnt_d;
    end
  end

  always_ff @(posedge clk_i) begin : r_parse
    if (i_valid_q) begin
      win_q      <= win_d;
      c_data_q   <= i_data_q;
      c_last_q   <= i_last_q;
      c_hdr_q    <= c_hdr_d;
      c_hl_q     <= c_hl_d;
      c_hdr_ok_q <= c_hdr_ok_d;
    end
  end

  assign buf_we_o    = c_we_q;
  assign buf_waddr_o = wr_ptr_q[AW-1:0];
  assign buf_wdata_o = c_data_q;

  // ---------------------------------------------------------------------------------------------
  // Descriptor FIFO (its head is the block's output)
  // ---------------------------------------------------------------------------------------------
  tmnic_fifo #(
    .WIDTH ($bits(desc_t)),
    .DEPTH (DESC_DEPTH)
  ) u_desc_fifo (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .s_data_i  (desc_in),
    .s_valid_i (desc_push),
    .s_ready_o (desc_room),  // never low on a push: admission reserves a slot per frame
    .m_data_o  (desc_out),
    .m_valid_o (desc_valid_o),
    .m_ready_i (desc_ready_i),
    .level_o   (desc_level)
  );

  assign desc_hdr_o   = desc_out.hdr;
  assign desc_start_o = desc_out.start;
  assign desc_fend_o  = desc_out.fend;
  assign desc_hl_o    = desc_out.hl;

`ifndef SYNTHESIS
  // Checks, from the cycle after reset on (tmnic_chk_en). Immediate assertions in one clocked
  // process rather than concurrent ones: Verilator 5.006 copies every signal a concurrent assertion
  // names on every eval(), which made this parser's idle simulation a third slower (rtl/pkt/
  // README.md, "Simulation speed"); here a past value is kept only where one is compared.
  logic  chk_q;
  logic  desc_wait_q;  // a descriptor waited in the last cycle ...
  desc_t desc_held_q;  // ... and was this one
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  always_ff @(posedge clk_i) begin : p_chk
    desc_wait_q <= desc_valid_o && !desc_ready_i;
    if (desc_valid_o && !desc_ready_i) begin
      desc_held_q <= desc_out;
    end
    if (chk_q) begin
      // Input stream format (README): tkeep contiguous from lane 0, full except on the last beat.
      if (in_fire) begin
        assert (((s_axis_tkeep_i & (s_axis_tkeep_i + 1'b1)) == '0) &&
                (s_axis_tlast_i || s_axis_tkeep_i == '1))
          else $error("tmnic_pkt_rx_parse: input beat not packed (tkeep)");
      end
      // Admission: a frame's beats are never stalled once its first beat was taken.
      assert (!in_frame_q || s_axis_tready_o)
        else $error("tmnic_pkt_rx_parse: input stalled inside a frame");
      // The write pointer never passes the words the read side has not released.
      assert (!buf_we_o || used < (AW + 1)'(DEPTH))
        else $error("tmnic_pkt_rx_parse: frame buffer overflow");
      assert (!desc_push || desc_room)
        else $error("tmnic_pkt_rx_parse: descriptor FIFO overflow");
      // Descriptor handshake: held, unchanged, until taken.
      if (desc_wait_q) begin
        assert (desc_valid_o && desc_out == desc_held_q)
          else $error("tmnic_pkt_rx_parse: descriptor dropped or changed before it was taken");
      end
      assert ($onehot0({accept_o, drop_hdr_o, drop_icrc_o}))
        else $error("tmnic_pkt_rx_parse: more than one verdict for a frame");
    end
  end
`endif

endmodule
