// RoCEv2 (IPv4) frame parser with a store-and-forward frame buffer.
//
// Every frame is written into a circular buffer (tmnic_ram_sdp, one DATA_W word per beat, each
// frame starting on a word) while its ICRC is computed and its header captured. At tlast the frame
// is either committed (descriptor {header, start word, end word, header length} into a FIFO) or
// dropped (the write pointer rewinds to the frame start). A reader pops descriptors, presents the
// header on m_hdr and streams the payload out of the buffer realigned to byte 0. See
// rtl/pkt/README.md for the acceptance rules and the pipeline.
//
// Pipeline, input side (all wide logic runs only on valid beats):
//   I  input register (data masked with tkeep)
//   C  parse: header window capture, ICRC byte enables from the UDP length (the received ICRC is
//      covered too), ICRC accumulator (tmnic_crc_acc); on the last beat all header rules
//   W  RAM write; on the last beat residue check, commit/drop, descriptor push, statistics pulse
// A new frame is admitted (s_axis_tready_o for its first beat) only when the buffer has room for a
// MAX_FRAME_LEN frame plus the two beats still in I/C, and the descriptor FIFO has room for it and
// the frames still in flight. Within a frame tready stays high: the input never stalls mid-frame.
// Output side: descriptor FIFO -> read issue (credit-based) -> RAM (1 cycle) -> 4-entry beat FIFO
// -> realigner/output register. One payload beat per cycle within a frame; a payload spanning
// more than one buffer word costs one extra cycle per frame (its first word only primes the
// realigner, or its last word yields two output beats).
module tmnic_pkt_rx
  import tmnic_hwif_pkg::*;
  import tmnic_pkg::*;
  import tmnic_crc_pkg::*;
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
  localparam int unsigned SLACK     = 2;                                // beats in stages I and C
  localparam int unsigned HDR_MAX   = 82;                               // 54 + AtomicETH (the longest)
  localparam int unsigned HB        = (HDR_MAX + W - 1) / W;            // header window beats
  localparam int unsigned WIN_BYTES = HB * W;
  localparam int unsigned BI_W      = 8;                                // beat index, saturating
  localparam int unsigned OFF_W     = 17;                               // frame offsets
  localparam int unsigned BF_DEPTH  = 4;                                // read-data FIFO entries
  localparam int unsigned GB        = (54 + 12 + W - 1) / W;            // beats a UD GRH rewrite touches
  localparam int unsigned GWIN_IDX  = $clog2(WIN_BYTES);
  localparam int unsigned NSEL      = (HB > GB) ? HB : GB;              // beats with a select flag

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_pkt_rx: DATA_W must be 256 or 512");
  end
  if ((BUF_BYTES & (BUF_BYTES - 1)) != 0 || DEPTH < MAX_BEATS + SLACK) begin : g_chk_buf
    $fatal(1, "tmnic_pkt_rx: BUF_BYTES must be a power of two >= MAX_FRAME_LEN + 2 beats");
  end
  if (DESC_DEPTH < 4 || (DESC_DEPTH & (DESC_DEPTH - 1)) != 0) begin : g_chk_desc
    $fatal(1, "tmnic_pkt_rx: DESC_DEPTH must be a power of two >= 4");
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
    logic [AW-1:0] start;  // first buffer word of the frame
    logic [AW:0]   fend;   // write pointer after the frame (with wrap bit): release point
    logic [6:0]    hl;     // header length 54..82 (payload offset in the frame)
  } desc_t;

  typedef struct packed {
    logic          first;  // first buffer word of the payload
    logic          last;   // last buffer word of the payload
    logic          flush;  // the last word yields two output beats
    logic [LW-1:0] sh;     // payload offset inside the first word
    logic [LW:0]   lcnt;   // bytes in the last output beat (1..W)
  } rmeta_t;

  // Thermometer code: lanes [0, n) set, n in 0..W.
  function automatic logic [W-1:0] therm(input logic [LW:0] n);
    return ~({W{1'b1}} << n);
  endfunction

  // Note on style: the wide logic below is written inline with block-local variables rather than
  // as functions with wide arguments, because Verilator zero-initialises the temporaries of every
  // inlined function call on every evaluation of the block, which costs time even when idle.

  // ---------------------------------------------------------------------------------------------
  // Stage I: input register and admission
  // ---------------------------------------------------------------------------------------------
  logic              in_frame_q, in_frame_d;
  logic              i_valid_q;
  logic [DATA_W-1:0] i_data_q;
  logic              i_last_q;

  logic [AW:0]       wr_ptr_q, wr_ptr_d;    // next word to write
  logic [AW:0]       cmt_ptr_q, cmt_ptr_d;  // start of the frame being written
  logic [AW:0]       rel_ptr_q, rel_ptr_d;  // words before this are free
  logic [$clog2(DESC_DEPTH):0] desc_level, lvl_pop;
  logic              admit_q, admit_d, in_fire;
  logic [AW:0]       used_keep, used_drop;
  logic              adm_keep, adm_push, adm_drop;
  logic [BI_W-1:0]   ib_q;         // index of the next input beat within its frame (saturating)
  logic [BI_W-1:0]   cb_q;         // index of the beat in stage I (ib_q taken with it)
  logic [NSEL-1:0]   cs_q;         // cs_q[k]: cb_q == k (decoded with it, for the header window)
  logic [OFF_W-1:0]  cov_end_q;    // end of the ICRC-covered bytes (34 + UDP length)
  logic [W-1:0]      i_crc_en_q;   // ICRC lanes of the beat in stage I
  logic [W-1:0]      i_crc_ff_q;   // ... fed as 0xFF
  logic [OFF_W-1:0]  i_flen_q;     // frame bytes up to the end of the beat in stage I (its tkeep
                                   // is contiguous from lane 0)
  // The length fields of the frame so far (zero until their beat: as the header window reads
  // them) and their sums, one adder each in stage I, so that stage C's header check compares
  // registers rather than adders behind the window (a frame's last beat may be the one that holds
  // them). With the beat in stage I.
  logic [15:0]       f_ipl_q;      // IPv4 total length (bytes 16-17)
  logic [15:0]       f_udl_q;      // UDP length (bytes 38-39)
  logic [7:0]        f_op_q;       // BTH opcode (byte 42)
  logic [1:0]        f_pc_q;       // BTH pad count (byte 43 [5:4])
  logic [OFF_W-1:0]  i_ip14_q;     // 14 + IPv4 total length: the frame must hold that many bytes
  logic [OFF_W-1:0]  i_udl20_q;    // UDP length + 20: the IPv4 total length must be that
  logic [5:0]        i_kmin_q;     // BTH + extension headers + pad: the UDP length's least
  logic [12:0]       i_padj_q;     // payload length - UDP length (GRH_LEN added for UD), mod 2^13
  logic [6:0]        i_hl_q;       // header length as stored

  always_comb begin
    // admit_q: room for a frame, decided a cycle ahead from the pointers' and the descriptor
    // FIFO's next values (below), so that the input's enables see one register
    s_axis_tready_o = in_frame_q || admit_q;
    in_fire         = s_axis_tvalid_i && s_axis_tready_o;
    in_frame_d      = in_frame_q;
    if (in_fire) begin
      in_frame_d = !s_axis_tlast_i;
    end
  end

  localparam int unsigned ULEN_BEAT = 38 / W;  // beat holding the UDP length (bytes 38-39)
  localparam int unsigned IPL_BEAT  = 16 / W;  // ... the IPv4 total length (bytes 16-17)
  localparam int unsigned OP_BEAT   = 42 / W;  // ... the BTH opcode and flags (bytes 42-43)

  always_ff @(posedge clk_i) begin : p_in
    logic [OFF_W-1:0] cov_end;
    logic [W-1:0]     en;
    logic [LW:0]      kcnt;
    logic [DATA_W-1:0] din;
    logic [15:0]      ipl, udl;
    logic [7:0]       opb;
    logic [1:0]       pcb;
    logic [4:0]       ext;
    if (in_fire) begin
      for (int unsigned i = 0; i < W; i++) begin
        din[8*i +: 8] = s_axis_tkeep_i[i] ? s_axis_tdata_i[8*i +: 8] : 8'h00;
      end
      i_data_q <= din;
      // Length fields: from this beat if it holds them, zero from a frame's first beat on
      ipl = (ib_q == BI_W'(IPL_BEAT)) ? {din[8*(16 % W) +: 8], din[8*(17 % W) +: 8]}
          : (ib_q == '0) ? 16'h0 : f_ipl_q;
      udl = (ib_q == BI_W'(ULEN_BEAT)) ? {din[8*(38 % W) +: 8], din[8*(39 % W) +: 8]}
          : (ib_q == '0) ? 16'h0 : f_udl_q;
      opb = (ib_q == BI_W'(OP_BEAT)) ? din[8*(42 % W) +: 8] : (ib_q == '0) ? 8'h0 : f_op_q;
      pcb = (ib_q == BI_W'(OP_BEAT)) ? din[8*(43 % W) + 4 +: 2] : (ib_q == '0) ? 2'h0 : f_pc_q;
      {f_ipl_q, f_udl_q, f_op_q, f_pc_q} <= {ipl, udl, opb, pcb};
      ext = bth_ext_len(opb);
      i_ip14_q  <= OFF_W'(14) + OFF_W'(ipl);
      i_udl20_q <= OFF_W'(udl) + OFF_W'(20);
      i_kmin_q  <= 6'd24 + 6'(ext) + 6'(pcb);
      // A UD datagram's payload is delivered with its GRH in front (GRH_LEN bytes: 20 zero bytes,
      // then the IPv4 header), which the stored frame holds right before the payload (stage C).
      i_padj_q  <= (bth_has_deth(opb) ? 13'(GRH_LEN) : 13'd0) - 13'd24 - 13'(ext) - 13'(pcb);
      i_hl_q    <= 7'd54 + 7'(ext) - (bth_has_deth(opb) ? 7'(GRH_LEN) : 7'd0);
      kcnt = '0;
      for (int unsigned i = 0; i < W; i++) begin
        if (s_axis_tkeep_i[i]) begin
          kcnt = (LW + 1)'(i + 1);
        end
      end
      i_flen_q <= (OFF_W'(ib_q) << LW) + OFF_W'(kcnt);
      // ICRC lanes: frame bytes [14, 34 + UDP length), i.e. IPv4 header through the received
      // ICRC, so a correct frame leaves the CRC residue. The UDP length (bytes 38-39) is known
      // from the beat that holds it on; earlier beats are covered entirely (a valid frame's ICRC
      // ends at byte 58 or later). Bytes beyond tkeep are never covered. Computed here, from the
      // input, so that stage C holds only the CRC matrix.
      // Lanes below cov_end in beat ib_q: all if the end lies in a later beat, a thermometer of
      // its lane if in this one (beat compare, no subtraction).
      cov_end = (ib_q == BI_W'(ULEN_BEAT))
                ? OFF_W'(34) + OFF_W'({s_axis_tdata_i[8*(38 % W) +: 8],
                                       s_axis_tdata_i[8*(39 % W) +: 8]})
                : cov_end_q;
      cov_end_q <= cov_end;
      if (32'(ib_q) + 1 <= ULEN_BEAT || 32'(ib_q) < (32'(cov_end) >> LW)) begin
        en = '1;
      end else if (32'(ib_q) == (32'(cov_end) >> LW)) begin
        en = therm({1'b0, cov_end[LW-1:0]});
      end else begin
        en = '0;
      end
      if (ib_q == '0) begin
        en = en & ~therm((LW + 1)'(14));
      end
      i_crc_en_q <= en & s_axis_tkeep_i;
      i_crc_ff_q <= '0;
      for (int unsigned k = 0; k < HB; k++) begin
        if (ib_q == BI_W'(k)) begin
          i_crc_ff_q <= ICRC_FF[W*k +: W];
        end
      end
      i_last_q <= s_axis_tlast_i;
      cb_q     <= ib_q;
      for (int unsigned k = 0; k < NSEL; k++) begin
        cs_q[k] <= (ib_q == BI_W'(k));
      end
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage C: parse, ICRC
  // ---------------------------------------------------------------------------------------------
  logic [WIN_BYTES-1:0][7:0] win_q;  // header bytes seen so far (zero beyond)
  logic                   crc_ok;    // residue check over the frame so far (registers only)
  logic [31:0]            unused_crc_y;
  logic [CRC_SH_W-1:0]    unused_crc_k;

  tmnic_crc_acc #(.W(W), .FIRST_LO(14), .CHECK(1'b1)) u_crc (
    .clk_i,
    .rst_ni,
    .valid_i  (i_valid_q),
    .first_i  (cs_q[0]),
    .data_i   (i_data_q),
    .en_i     (i_crc_en_q),
    .ff_i     (i_crc_ff_q),
    .y_o      (unused_crc_y),
    .k_o      (unused_crc_k),
    .res_ok_o (crc_ok)
  );

  logic                   c_valid_q;
  logic [DATA_W-1:0]      c_data_q;
  logic                   c_last_q;
  logic                   c_write_q;  // beat fits in MAX_BEATS (longer frames are dropped anyway)
  roce_hdr_t              c_hdr_q;
  logic [6:0]             c_hl_q;
  logic                   c_hdr_ok_q;

  always_ff @(posedge clk_i) begin : p_parse
    logic [WIN_BYTES-1:0][7:0] win;  // frame byte i in win[i]; fields are big-endian
    logic [OFF_W-1:0]       flen;
    logic [7:0]             op;
    logic [3:0]             tver;
    logic [15:0]            frag;   // flags + fragment offset
    logic [15:0]            pkey;
    roce_hdr_t              h;
    logic [DATA_W-1:0]      dat;

    if (i_valid_q) begin
      win = cs_q[0] ? '0 : win_q;
      for (int unsigned k = 0; k < HB; k++) begin
        if (cs_q[k]) begin
          win[W*k +: W] = i_data_q;
        end
      end
      win_q <= win;

      flen = i_flen_q;

      // Header fields and rules (used on the last beat only).
      op     = win[42];
      pkey   = {win[44], win[45]};
      tver   = win[43][3:0];
      frag   = {win[20], win[21]};

      h           = '0;
      h.dst_mac   = {win[0], win[1], win[2], win[3], win[4], win[5]};
      h.src_mac   = {win[6], win[7], win[8], win[9], win[10], win[11]};
      h.src_ip    = {win[26], win[27], win[28], win[29]};
      h.dst_ip    = {win[30], win[31], win[32], win[33]};
      h.ip_tos    = win[15];
      h.ip_ttl    = win[22];
      h.udp_sport = {win[34], win[35]};
      h.opcode    = op;
      h.se        = win[43][7];
      h.ack_req   = win[50][7];
      h.dest_qp   = {win[47], win[48], win[49]};
      h.psn       = {win[51], win[52], win[53]};
      if (bth_has_reth(op)) begin
        h.reth_va   = {win[54], win[55], win[56], win[57],
                       win[58], win[59], win[60], win[61]};
        h.reth_rkey = {win[62], win[63], win[64], win[65]};
        h.reth_len  = {win[66], win[67], win[68], win[69]};
      end
      // AtomicETH {VA, R_Key, swap/add, compare}: the VA and key in the RETH fields, the length the
      // bytes it accesses
      if (bth_has_atomiceth(op)) begin
        h.reth_va   = {win[54], win[55], win[56], win[57],
                       win[58], win[59], win[60], win[61]};
        h.reth_rkey = {win[62], win[63], win[64], win[65]};
        h.reth_len  = 32'(ATOMIC_LEN);
        h.atom_swap = {win[66], win[67], win[68], win[69], win[70], win[71], win[72], win[73]};
        h.atom_cmp  = {win[74], win[75], win[76], win[77], win[78], win[79], win[80], win[81]};
      end
      if (bth_has_imm(op)) begin
        h.imm = bth_has_reth(op) ? {win[70], win[71], win[72], win[73]} :
                bth_has_deth(op) ? {win[62], win[63], win[64], win[65]}
                                 : {win[54], win[55], win[56], win[57]};
      end
      if (bth_has_aeth(op)) begin
        h.aeth = {win[54], win[55], win[56], win[57]};
      end
      if (bth_has_deth(op)) begin
        h.deth_qkey = {win[54], win[55], win[56], win[57]};
        h.deth_sqp  = {win[59], win[60], win[61]};
      end
      h.pay_len = 13'(f_udl_q) + i_padj_q;  // UDP length - BTH - ext - pad (+ GRH_LEN for UD)

      c_hdr_q <= h;
      c_hl_q  <= i_hl_q;
      c_hdr_ok_q <= (flen <= OFF_W'(MAX_FRAME_LEN)) &&
                    ({win[12], win[13]} == 16'h0800) &&
                    (win[14] == 8'h45) &&
                    ((frag & 16'h3FFF) == 16'h0) &&  // MF, fragment offset
                    (win[23] == 8'd17) &&
                    ({win[36], win[37]} == ROCE_UDP_PORT) &&
                    (OFF_W'(f_ipl_q) == i_udl20_q) &&
                    (i_ip14_q <= flen) &&
                    (h.dst_mac == local_mac_i) &&
                    (h.dst_ip == local_ip_i) &&
                    (tver == 4'h0) &&
                    ((pkey & 16'h7FFF) == 16'h7FFF) &&
                    bth_op_supported(op) &&
                    (f_udl_q >= 16'(i_kmin_q));
      // The stored frame, rewritten so that the GRH of a UD datagram lies right before its payload:
      // frame bytes [hl-40, hl-20) zero and [hl-20, hl) the IPv4 header (bytes 14..33). Every
      // rewritten byte comes from this beat or an earlier one, and the opcode (byte 42) is known for
      // every byte from 42 on; bytes 22..41 are zeroed in every frame (only a UD payload read starts
      // below byte 54), so no beat waits for the opcode. The ICRC saw the frame as received.
      dat = i_data_q;
      for (int unsigned k = 0; k < GB; k++) begin
        if (cs_q[k]) begin
          for (int unsigned i = 0; i < W; i++) begin
            if (k * W + i >= 22 && k * W + i < 42) begin
              dat[8*i +: 8] = 8'h00;
            end else if (k * W + i >= 42 && k * W + i < 66 && bth_has_deth(op)) begin
              if (!bth_has_imm(op)) begin
                if (k * W + i < 62) dat[8*i +: 8] = win[GWIN_IDX'(k * W + i - 28)];
              end else if (k * W + i < 46) begin
                dat[8*i +: 8] = 8'h00;
              end else begin
                dat[8*i +: 8] = win[GWIN_IDX'(k * W + i - 32)];
              end
            end
          end
        end
      end
      c_data_q    <= dat;
      c_last_q    <= i_last_q;
      c_write_q   <= (32'(cb_q) < MAX_BEATS);
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Stage W: buffer write, commit / drop
  // ---------------------------------------------------------------------------------------------
  logic  c_icrc_ok, c_accept, wr_en, desc_push;
  desc_t desc_in;

  always_comb begin
    wr_en     = c_valid_q && c_write_q;
    // The accumulator still holds the frame's value (the next frame's first beat updates it at
    // the end of this cycle), so the check sits here, behind registers only.
    c_icrc_ok = crc_ok;
    c_accept  = c_hdr_ok_q && c_icrc_ok;
    desc_push = c_valid_q && c_last_q && c_accept;

    wr_ptr_d  = wr_ptr_q + (AW + 1)'(wr_en);
    cmt_ptr_d = cmt_ptr_q;
    if (c_valid_q && c_last_q) begin
      if (c_accept) begin
        cmt_ptr_d = wr_ptr_d;
      end else begin
        wr_ptr_d = cmt_ptr_q;
      end
    end

    desc_in.hdr   = c_hdr_q;
    desc_in.start = cmt_ptr_q[AW-1:0];
    desc_in.fend  = wr_ptr_q + (AW + 1)'(wr_en);
    desc_in.hl    = c_hl_q;

    accept_o    = desc_push;
    drop_hdr_o  = c_valid_q && c_last_q && !c_hdr_ok_q;
    drop_icrc_o = c_valid_q && c_last_q && c_hdr_ok_q && !c_icrc_ok;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      in_frame_q <= 1'b0;
      i_valid_q  <= 1'b0;
      c_valid_q  <= 1'b0;
      ib_q       <= '0;
      wr_ptr_q   <= '0;
      cmt_ptr_q  <= '0;
    end else begin
      in_frame_q <= in_frame_d;
      i_valid_q  <= in_fire;
      if (in_fire) begin
        ib_q <= s_axis_tlast_i ? '0 : ((ib_q == '1) ? ib_q : ib_q + 1'b1);
      end
      c_valid_q  <= i_valid_q;
      wr_ptr_q   <= wr_ptr_d;
      cmt_ptr_q  <= cmt_ptr_d;
    end
  end

  logic              rd_en;
  logic [AW-1:0]     rd_addr;
  logic [DATA_W-1:0] rd_data;

  tmnic_ram_sdp #(
    .WIDTH (DATA_W),
    .DEPTH (DEPTH),
    .NO_COLLISION (1'b1)
  ) u_buf (
    .clk_i   (clk_i),
    .we_i    (wr_en),
    .waddr_i (wr_ptr_q[AW-1:0]),
    .wdata_i (c_data_q),
    .re_i    (rd_en),
    .raddr_i (rd_addr),
    .rdata_o (rd_data)
  );

  // ---------------------------------------------------------------------------------------------
  // Descriptor FIFO and read issue
  // ---------------------------------------------------------------------------------------------
  desc_t desc_out;
  logic  desc_valid, desc_pop, desc_ready;

  tmnic_fifo #(
    .WIDTH ($bits(desc_t)),
    .DEPTH (DESC_DEPTH)
  ) u_desc_fifo (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .s_data_i  (desc_in),
    .s_valid_i (desc_push),
    .s_ready_o (desc_ready),  // never low on a push: admission reserves a slot per frame
    .m_data_o  (desc_out),
    .m_valid_o (desc_valid),
    .m_ready_i (desc_pop),
    .level_o   (desc_level)
  );

  logic            m_hdr_valid_q, m_hdr_valid_d;
  roce_hdr_t       m_hdr_q;
  logic            job_q, job_d;          // payload words left to read
  logic [AW-1:0]   job_addr_q;
  logic [BI_W-1:0] job_left_q;
  logic            job_first_q;
  logic            job_flush_q;
  logic [LW-1:0]   job_sh_q;
  logic [LW:0]     job_lcnt_q;
  logic [AW:0]     job_end_q;
  logic            rd_valid_q;            // a read is in the RAM this cycle
  rmeta_t          rd_meta_q;
  logic [$clog2(BF_DEPTH):0] bf_level;
  logic            issue, issue_last, hdr_free, pop_pay;

  always_comb begin
    hdr_free   = !m_hdr_valid_q || m_hdr_ready_i;
    issue      = job_q && (32'(bf_level) + 32'(rd_valid_q) < BF_DEPTH);
    issue_last = issue && (job_left_q == BI_W'(1));
    desc_pop   = desc_valid && hdr_free && (!job_q || issue_last);
    pop_pay    = desc_pop && (desc_out.hdr.pay_len != '0);
    rd_en      = issue;
    rd_addr    = job_addr_q;

    job_d = job_q;
    if (issue_last) begin
      job_d = 1'b0;
    end
    if (pop_pay) begin
      job_d = 1'b1;
    end

    rel_ptr_d = rel_ptr_q;
    if (issue_last) begin
      rel_ptr_d = job_end_q;
    end
    if (desc_pop && !pop_pay) begin
      rel_ptr_d = desc_out.fend;
    end

    m_hdr_valid_d = m_hdr_valid_q;
    if (desc_pop) begin
      m_hdr_valid_d = 1'b1;
    end else if (m_hdr_ready_i) begin
      m_hdr_valid_d = 1'b0;
    end
  end

  // Admission, a cycle ahead: the test on the next cycle's buffer words in use and descriptors
  // queued, registered (admit_q is exactly the test on the registers, as before). The frame
  // decision (c_accept, behind the ICRC compare) only picks among the tests of its outcomes:
  // a beat that is no frame's last (wr_ptr + wr_en, no push), an accepted last beat (the same,
  // one push), a dropped one (the write pointer back at cmt_ptr, no push).
  always_comb begin
    used_keep = (wr_ptr_q + (AW + 1)'(wr_en)) - rel_ptr_d;
    used_drop = cmt_ptr_q - rel_ptr_d;
    lvl_pop   = desc_level - ($clog2(DESC_DEPTH) + 1)'(desc_pop);
    adm_keep  = (32'(used_keep) + MAX_BEATS + SLACK <= DEPTH) && (32'(lvl_pop) + SLACK + 1 <= DESC_DEPTH);
    adm_push  = (32'(used_keep) + MAX_BEATS + SLACK <= DEPTH) && (32'(lvl_pop) + SLACK + 2 <= DESC_DEPTH);
    adm_drop  = (32'(used_drop) + MAX_BEATS + SLACK <= DEPTH) && (32'(lvl_pop) + SLACK + 1 <= DESC_DEPTH);
    admit_d   = !(c_valid_q && c_last_q) ? adm_keep : c_accept ? adm_push : adm_drop;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      admit_q <= 1'b1;  // an empty buffer admits
    end else begin
      admit_q <= admit_d;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      job_q         <= 1'b0;
      rel_ptr_q     <= '0;
      m_hdr_valid_q <= 1'b0;
      rd_valid_q    <= 1'b0;
    end else begin
      job_q         <= job_d;
      rel_ptr_q     <= rel_ptr_d;
      m_hdr_valid_q <= m_hdr_valid_d;
      rd_valid_q    <= issue;
    end
  end

  always_ff @(posedge clk_i) begin : p_issue
    logic [12:0]     p;
    logic [LW-1:0]   sh;
    logic [BI_W-1:0] nr, np;
    if (desc_pop) begin
      m_hdr_q <= desc_out.hdr;
    end
    if (issue) begin
      rd_meta_q.first <= job_first_q;
      rd_meta_q.last  <= (job_left_q == BI_W'(1));
      rd_meta_q.flush <= job_flush_q;
      rd_meta_q.sh    <= job_sh_q;
      rd_meta_q.lcnt  <= job_lcnt_q;
      job_addr_q      <= job_addr_q + 1'b1;
      job_left_q      <= job_left_q - 1'b1;
      job_first_q     <= 1'b0;
    end
    if (pop_pay) begin
      p  = desc_out.hdr.pay_len;
      sh = desc_out.hl[LW-1:0];
      np = BI_W'((32'(p) + W - 1) >> LW);
      nr = BI_W'((32'(p) + 32'(sh) + W - 1) >> LW);
      job_addr_q  <= desc_out.start + AW'(desc_out.hl[6:LW]);
      job_left_q  <= nr;
      job_first_q <= 1'b1;
      job_flush_q <= (nr == np);
      job_sh_q    <= sh;
      job_lcnt_q  <= (LW + 1)'((32'(p) - 1) % W) + 1'b1;
      job_end_q   <= desc_out.fend;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Read-data FIFO and realigner
  // ---------------------------------------------------------------------------------------------
  logic [$bits(rmeta_t)+DATA_W-1:0] bf_out;
  rmeta_t            h_meta;
  logic [DATA_W-1:0] h_data;
  logic              bf_valid, bf_pop, bf_ready;

  tmnic_fifo #(
    .WIDTH   ($bits(rmeta_t) + DATA_W),
    .DEPTH   (BF_DEPTH),
    .OUT_REG (1)     // the realigner shifts the head: start from flip-flops, not the LUTRAM mux
  ) u_rd_fifo (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .s_data_i  ({rd_meta_q, rd_data}),
    .s_valid_i (rd_valid_q),
    .s_ready_o (bf_ready),    // never low on a push: reads are issued against credits
    .m_data_o  (bf_out),
    .m_valid_o (bf_valid),
    .m_ready_i (bf_pop),
    .level_o   (bf_level)
  );
  assign {h_meta, h_data} = bf_out;

  // The realigner: the head word's payload bytes packed from byte 0 (tmnic_pkt_rx_align).
  tmnic_pkt_rx_align #(.DATA_W(DATA_W)) u_align (
    .clk_i, .rst_ni,
    .word_data_i(h_data), .word_first_i(h_meta.first), .word_last_i(h_meta.last),
    .word_flush_i(h_meta.flush), .word_sh_i(h_meta.sh), .word_lcnt_i(h_meta.lcnt),
    .word_valid_i(bf_valid), .word_ready_o(bf_pop),
    .m_pay_tdata_o, .m_pay_tkeep_o, .m_pay_tlast_o, .m_pay_tvalid_o, .m_pay_tready_i);

`ifndef SYNTHESIS
  // Flow-control invariants: the FIFOs are sized so that they never overflow.
  always_ff @(posedge clk_i) begin
    assert (!desc_push || desc_ready) else $error("tmnic_pkt_rx: descriptor FIFO overflow");
    assert (!rd_valid_q || bf_ready) else $error("tmnic_pkt_rx: read-data FIFO overflow");
  end
`endif

  assign m_hdr_o        = m_hdr_q;
  assign m_hdr_valid_o  = m_hdr_valid_q;

endmodule
