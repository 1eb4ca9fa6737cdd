// RoCEv2 (IPv4) frame builder.
//
// Takes one header descriptor (roce_hdr_t) and pay_len payload bytes per frame and emits
//   Ethernet(14) IPv4(20) UDP(8) BTH(12) [RETH(16)] [ImmDt(4) | AETH(4)] payload pad ICRC(4)
// without FCS and without Ethernet min-size padding. See rtl/pkt/README.md.
//
// Micro-architecture (all wide logic sits in clocked blocks that only evaluate on a handshake):
//   H  header register: on s_hdr handshake the whole header (<= 74 bytes, incl. IPv4 checksum) is
//      laid out in little-endian byte lanes together with the frame geometry (prep_q).
//   F  beat former (no storage of its own besides the carry and beat b's kind, registered beside
//      b): output beat b is either a pure header beat or {carry, payload beat << S} where S =
//      header length mod W; the bytes shifted out of the top go to the carry for the next beat.
//      Pad and the ICRC slot are zeroed here.
//   A  register after the former (beat + CRC byte enables + ICRC placement).
//   B  beat register; the ICRC accumulator (tmnic_crc_acc, one XOR matrix per beat) takes beat A.
//   C  the ICRC register is recovered from the accumulator: crc32_unshift over the k lanes
//      after the last covered byte, in two halves (C: k bits 2-3, D: bits 4-5; k = 2 mod 4
//      because the ICRC starts at frame offset 2 mod 4, and the fixed 2 is folded into the
//      accumulator's matrices); each lane's ICRC byte (one-hot) decoded from the ICRC position.
//   D  output register: the complement OR-ed into the ICRC lanes (it may straddle into one extra
//      beat) by C's lane selects.
// Throughput: one beat per cycle, also across frames (no bubble) when both inputs keep up; a new
// header is accepted in the cycle the previous frame's last beat leaves the former.
// Latency: the first beat of a frame is valid on m_axis in the 5th cycle after the cycle of its
// header handshake (if its first payload beat is there by then).
module tmnic_pkt_tx
  import tmnic_hwif_pkg::*;
  import tmnic_pkg::*;
  import tmnic_crc_pkg::*;
#(
  parameter int unsigned DATA_W = 512  // stream width in bits: 256 or 512
) (
  input  logic                clk_i,
  input  logic                rst_ni,

  // Header descriptor, one per frame.
  input  roce_hdr_t           s_hdr_i,
  input  logic                s_hdr_valid_i,
  output logic                s_hdr_ready_o,

  // Payload of that frame: exactly s_hdr_i.pay_len bytes, packed; no beats when pay_len == 0.
  // Beats are counted from pay_len; tkeep/tlast are only checked by simulation assertions.
  input  logic [DATA_W-1:0]   s_pay_tdata_i,
  input  logic [DATA_W/8-1:0] s_pay_tkeep_i,
  input  logic                s_pay_tlast_i,
  input  logic                s_pay_tvalid_i,
  output logic                s_pay_tready_o,

  // Frame out (byte 0 of the frame in tdata[7:0]); packed, tkeep contiguous on the last beat.
  output logic [DATA_W-1:0]   m_axis_tdata_o,
  output logic [DATA_W/8-1:0] m_axis_tkeep_o,
  output logic                m_axis_tlast_o,
  output logic                m_axis_tvalid_o,
  input  logic                m_axis_tready_i
);

  if (DATA_W != 256 && DATA_W != 512) begin : g_param_check
    $fatal(1, "tmnic_pkt_tx: DATA_W must be 256 or 512");
  end

  localparam int unsigned W        = DATA_W / 8;          // bytes per beat
  localparam int unsigned LW       = $clog2(W);
  localparam int unsigned HDR_MAX  = 82;                  // 54 + AtomicETH (the longest)
  localparam int unsigned HV_BEATS = HDR_MAX / W + 1;     // header beats incl. the first carry
  localparam int unsigned HV_BYTES = HV_BEATS * W;
  localparam int unsigned OFF_W    = 14;                  // frame byte offsets (< 16 KiB)
  localparam int unsigned BC_W     = OFF_W - LW + 1;      // beat indices/counts

  // Frame offsets of the bytes forced to 0xFF for the ICRC: TOS, TTL, IP checksum, UDP checksum,
  // BTH byte 4.
  function automatic logic [HV_BYTES-1:0] icrc_ff_mask();
    logic [HV_BYTES-1:0] m;
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
  localparam logic [HV_BYTES-1:0] ICRC_FF = icrc_ff_mask();

  typedef enum logic [1:0] {
    IcrcNone  = 2'd0,  // no ICRC byte in this beat
    IcrcFirst = 2'd1,  // ICRC starts in this beat at lane icrc_sh
    IcrcCont  = 2'd2   // ICRC bytes icrc_sh..3 continue at lane 0
  } icrc_pos_e;

  // Per-frame geometry and header bytes, computed once per header (p_form).
  typedef struct packed {
    logic [8*HV_BYTES-1:0] hv;    // header bytes, frame byte i in hv[8*i +: 8], then zero
    logic [12:0]           p;     // payload bytes
    logic [BC_W-1:0]       nb;    // output beats
    logic [BC_W-1:0]       hb;    // beats made of header bytes only
    logic [BC_W-1:0]       pend;  // hb + payload beats: beats hb..pend-1 consume a payload beat
    logic [LW-1:0]         s;     // header bytes carried into beat hb
    logic [LW:0]           rs;    // W - s: the payload beat's bytes that stay for the next beat
                                  // start at lane rs (a register, so that the carry's shift does
                                  // not wait on a subtraction)
    logic [OFF_W-1:0]      plim;  // end of payload (header + pay_len)
    logic [OFF_W-1:0]      l0;    // ICRC offset (end of pad)
    logic [OFF_W-1:0]      t;     // frame length
    logic [18:0]           csum;  // IPv4 header checksum words, summed but not folded
  } prep_t;

  // Stage A: one formed beat.
  typedef struct packed {
    logic [DATA_W-1:0] data;
    logic [W-1:0]      keep;
    logic              last;
    logic              first;     // first beat of a frame: CRC starts from ICRC_SEED
    logic [W-1:0]      crc_en;    // bytes covered by the ICRC
    logic [W-1:0]      crc_ff;    // covered bytes fed as 0xFF
    icrc_pos_e         icrc_pos;
    logic [LW-1:0]     icrc_sh;
  } beat_t;

  // Next valid bit of a pipeline stage: set when a beat enters, cleared when it leaves.
  function automatic logic stage_valid(input logic valid_q, input logic fill, input logic drain);
    return fill || (valid_q && !drain);
  endfunction

  // Thermometer code: lanes [0, n) set, n in 0..W.
  function automatic logic [W-1:0] therm(input logic [LW:0] n);
    return ~({W{1'b1}} << n);
  endfunction

  // Lanes of the beat at frame offset boff whose frame offset is below lim.
  function automatic logic [W-1:0] lanes_below(input logic [OFF_W-1:0] lim,
                                               input logic [OFF_W-1:0] boff);
    logic [OFF_W-1:0] n;
    if (lim <= boff) begin
      return '0;
    end
    n = lim - boff;
    return (n >= OFF_W'(W)) ? {W{1'b1}} : therm(n[LW:0]);
  endfunction

  // ---------------------------------------------------------------------------------------------
  // H: header register and former control
  // ---------------------------------------------------------------------------------------------
  prep_t             prep_q;
  logic              run_q, run_d;        // a frame is being formed
  logic [BC_W-1:0]   b_q, b_d;            // index of the next beat to form
  // Beat b_q's kind, kept in registers beside b_q (the compares with the frame geometry run a cycle
  // ahead, off the former's enables): a header beat (b < hb), a payload beat (hb <= b < pend), the
  // frame's last (b == nb - 1).
  logic              in_hdr_q, in_hdr_d, need_pay_q, need_pay_d, last_q, last_d;
  logic [6:0]        n_hl;                // the offered header's length and header beats
  logic [BC_W-1:0]   n_hb;
  logic [BC_W-1:0]   b_inc;
  logic [DATA_W-1:0] carry_q;             // bytes waiting for the lanes below S of the next beat

  // Stage B: the beat as it leaves stage A (the accumulator holds the CRC up to it).
  typedef struct packed {
    logic [DATA_W-1:0] data;
    logic [W-1:0]      keep;
    logic              last;
    icrc_pos_e         icrc_pos;
    logic [LW-1:0]     icrc_sh;
  } out_beat_t;

  // Stage C: the beat, half-recovered ICRC register and the rest of the shift; the lanes that take
  // an ICRC byte (decoded here from the ICRC position, so that D holds no shifter behind the
  // un-shift matrix). The ICRC starts at frame offset 2 mod 4 and beats start at multiples of W,
  // so lane j can only ever take ICRC byte (j + 2) mod 4: one select per lane.
  typedef struct packed {
    logic [DATA_W-1:0]   data;
    logic [W-1:0]        keep;
    logic                last;
    logic [W-1:0]        isel;
    logic [31:0]         u;
    logic [CRC_SH_W-1:0] k;
  } crc_beat_t;

  beat_t             a_q;
  logic              a_valid_q, a_valid_d;
  out_beat_t         ob_q;
  logic              ob_valid_q, ob_valid_d;
  crc_beat_t         oc_q;
  logic              oc_valid_q, oc_valid_d;
  logic [DATA_W-1:0] m_data_q;
  logic [W-1:0]      m_keep_q;
  logic              m_last_q;
  logic              m_valid_q, m_valid_d;

  logic hdr_fire, f_in_hdr, f_need_pay, f_valid, f_last, f_fire, a_ready, a_fire, ob_ready;
  logic ob_fire, oc_ready, oc_fire, o_ready;

  always_comb begin
    f_in_hdr   = in_hdr_q;
    f_need_pay = need_pay_q;
    f_valid    = run_q && (!f_need_pay || s_pay_tvalid_i);
    f_last     = last_q;
    o_ready    = !m_valid_q || m_axis_tready_i;
    oc_ready   = !oc_valid_q || o_ready;
    ob_ready   = !ob_valid_q || oc_ready;
    a_ready    = !a_valid_q || ob_ready;
    f_fire     = f_valid && a_ready;
    a_fire     = a_valid_q && ob_ready;
    ob_fire    = ob_valid_q && oc_ready;
    oc_fire    = oc_valid_q && o_ready;

    s_pay_tready_o = run_q && f_need_pay && a_ready;
    s_hdr_ready_o  = !run_q || (f_fire && f_last);
    hdr_fire       = s_hdr_valid_i && s_hdr_ready_o;

    // Beat 0's kind from the offered header: a header beat if hb > 0; a payload beat if hb = 0
    // and there is payload (pend = hb + payload beats); the last if nb = 1, i.e. pay_len + pad +
    // hl + 4 <= W, which is pay_len + hl <= W - 6 (hl = 2 mod 4, so pay_len + pad + hl + 4 is a
    // multiple of 4 and at most W exactly when pay_len + hl + 6 <= W).
    n_hl   = 7'd54 + 7'(bth_ext_len(s_hdr_i.opcode));
    n_hb   = BC_W'(n_hl[6:LW]);
    b_inc  = b_q + 1'b1;

    run_d      = run_q;
    b_d        = b_q;
    in_hdr_d   = in_hdr_q;
    need_pay_d = need_pay_q;
    last_d     = last_q;
    if (f_fire) begin
      b_d        = b_inc;
      in_hdr_d   = (b_inc < prep_q.hb);
      need_pay_d = !(b_inc < prep_q.hb) && (b_inc < prep_q.pend);
      last_d     = (b_inc == prep_q.nb - 1'b1);
      if (f_last) begin
        run_d = 1'b0;
      end
    end
    if (hdr_fire) begin
      run_d      = 1'b1;
      b_d        = '0;
      in_hdr_d   = (n_hb != '0);
      need_pay_d = (n_hb == '0) && (s_hdr_i.pay_len != '0);
      last_d     = (OFF_W'(s_hdr_i.pay_len) + OFF_W'(n_hl) <= OFF_W'(W - 6));
    end

    // Stage valids: a stage is filled by the stage before it and emptied when its beat moves on.
    a_valid_d  = stage_valid(a_valid_q, f_fire, a_fire);
    ob_valid_d = stage_valid(ob_valid_q, a_fire, ob_fire);
    oc_valid_d = stage_valid(oc_valid_q, ob_fire, oc_fire);
    m_valid_d  = stage_valid(m_valid_q, oc_fire, m_axis_tready_i);
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      run_q     <= 1'b0;
      b_q       <= '0;
      in_hdr_q  <= 1'b0;
      need_pay_q <= 1'b0;
      last_q    <= 1'b0;
      a_valid_q <= 1'b0;
      ob_valid_q <= 1'b0;
      oc_valid_q <= 1'b0;
      m_valid_q <= 1'b0;
    end else begin
      run_q     <= run_d;
      b_q       <= b_d;
      in_hdr_q  <= in_hdr_d;
      need_pay_q <= need_pay_d;
      last_q    <= last_d;
      a_valid_q <= a_valid_d;
      ob_valid_q <= ob_valid_d;
      oc_valid_q <= oc_valid_d;
      m_valid_q <= m_valid_d;
    end
  end

  // ---------------------------------------------------------------------------------------------
  // Datapath (no reset; evaluated only on handshakes)
  // ---------------------------------------------------------------------------------------------

  // H + F datapath. The wide logic is written inline with block-local variables rather than as
  // functions with wide arguments: Verilator zero-initialises the temporaries of every inlined
  // function call on every evaluation of the block, which would cost time even when idle.
  always_ff @(posedge clk_i) begin : p_form
    // former
    logic [OFF_W-1:0]      boff;
    logic [DATA_W-1:0]     d;
    logic [W-1:0]          dmask;
    // header preparation
    prep_t                 pr;
    logic [223:0]          ext;      // extension headers, first byte in [223:216]
    logic [6:0]            hl;       // header length 54..82
    logic [1:0]            pc;       // pad count
    logic [6:0]            hlp;      // hl + pc
    logic [15:0]           ip_len, udp_len;
    logic [16:0]           csum;     // IPv4 checksum fold
    logic [8*HDR_MAX-1:0]  be;       // header, first byte in the MSBs

    if (f_fire) begin
      boff = OFF_W'(b_q) << LW;
      d    = '0;
      if (f_in_hdr) begin
        for (int unsigned i = 0; i < HV_BEATS; i++) begin
          if (b_q == BC_W'(i)) begin
            d = prep_q.hv[DATA_W*i +: DATA_W];
          end
        end
      end else begin
        d = carry_q | (f_need_pay ? (s_pay_tdata_i << (8 * 32'(prep_q.s))) : '0);
      end
      // IPv4 header checksum (bytes 24-25, always in beat 0, left zero by the header stage):
      // the one's complement fold happens here, beside the payload shift, not in the header
      // stage's adder chain.
      if (b_q == '0) begin
        csum = 17'(prep_q.csum[15:0]) + 17'(prep_q.csum[18:16]);
        csum = 17'(csum[15:0]) + 17'(csum[16]);
        d[8*24 +: 16] = {~csum[7:0], ~csum[15:8]};
      end
      // Zero the pad, the ICRC slot and whatever follows the payload in its last beat.
      dmask = lanes_below(prep_q.plim, boff);
      for (int unsigned i = 0; i < W; i++) begin
        a_q.data[8*i +: 8] <= dmask[i] ? d[8*i +: 8] : 8'h00;
      end
      a_q.keep   <= lanes_below(prep_q.t, boff);
      a_q.last   <= f_last;
      a_q.first  <= (b_q == '0);
      a_q.crc_en <= lanes_below(prep_q.l0, boff) & ~lanes_below(OFF_W'(14), boff);
      a_q.crc_ff <= '0;
      for (int unsigned i = 0; i < HV_BEATS; i++) begin
        if (b_q == BC_W'(i)) begin
          a_q.crc_ff <= ICRC_FF[W*i +: W];
        end
      end
      if (prep_q.l0 >= boff && (prep_q.l0 - boff) < OFF_W'(W)) begin
        a_q.icrc_pos <= IcrcFirst;
        a_q.icrc_sh  <= LW'(prep_q.l0 - boff);
      end else if (prep_q.l0 < boff && (boff - prep_q.l0) < OFF_W'(4)) begin
        a_q.icrc_pos <= IcrcCont;
        a_q.icrc_sh  <= LW'(boff - prep_q.l0);
      end else begin
        a_q.icrc_pos <= IcrcNone;
        a_q.icrc_sh  <= '0;
      end
      if (f_need_pay) begin
        // Payload bytes that did not fit go to the lanes below S of the next beat.
        carry_q <= s_pay_tdata_i >> (8 * 32'(prep_q.rs));
      end
    end

    if (hdr_fire) begin
      // IBA order: RETH, then ImmDt (WRITE_ONLY_IMM); DETH, then ImmDt (UD SEND_ONLY_IMM); AETH and
      // ImmDt never come together; the AtomicETH comes alone (an ATOMIC_ACK's AtomicAckETH is its
      // 8 payload bytes).
      if (bth_has_atomiceth(s_hdr_i.opcode)) begin
        ext = {s_hdr_i.reth_va, s_hdr_i.reth_rkey, s_hdr_i.atom_swap, s_hdr_i.atom_cmp};
      end else if (bth_has_deth(s_hdr_i.opcode)) begin
        ext = {s_hdr_i.deth_qkey, 8'h00, s_hdr_i.deth_sqp,
               bth_has_imm(s_hdr_i.opcode) ? s_hdr_i.imm : 32'h0, 128'h0};
      end else if (bth_has_reth(s_hdr_i.opcode)) begin
        ext = {s_hdr_i.reth_va, s_hdr_i.reth_rkey, s_hdr_i.reth_len,
               bth_has_imm(s_hdr_i.opcode) ? s_hdr_i.imm : 32'h0, 64'h0};
      end else if (bth_has_imm(s_hdr_i.opcode)) begin
        ext = {s_hdr_i.imm, 192'h0};
      end else if (bth_has_aeth(s_hdr_i.opcode)) begin
        ext = {s_hdr_i.aeth, 192'h0};
      end else begin
        ext = '0;
      end
      // Every length is pay_len plus a small opcode-dependent constant: one adder each, no chain.
      hl      = 7'd54 + 7'(bth_ext_len(s_hdr_i.opcode));
      pc      = 2'(2'd0 - s_hdr_i.pay_len[1:0]);
      hlp     = hl + 7'(pc);
      udp_len = 16'(s_hdr_i.pay_len) + 16'(7'(hlp - 7'd30));
      ip_len  = 16'(s_hdr_i.pay_len) + 16'(7'(hlp - 7'd10));

      // IPv4 header checksum words {45, TOS}, len, 0000 (ID), 4000 (DF), {TTL, 11 (UDP)}, the
      // addresses; added as a tree (the fold is in the former). ip_len = pay_len + hlp - 10.
      pr.csum = (19'(s_hdr_i.src_ip[31:16]) + 19'(s_hdr_i.src_ip[15:0])) +
                (19'(s_hdr_i.dst_ip[31:16]) + 19'(s_hdr_i.dst_ip[15:0])) +
                (19'({8'h45, s_hdr_i.ip_tos}) + 19'({s_hdr_i.ip_ttl, 8'h11})) +
                19'(18'(s_hdr_i.pay_len) + 18'(18'h4000 + 18'(hlp) - 18'd10));

      be = {s_hdr_i.dst_mac, s_hdr_i.src_mac, 16'h0800,
            8'h45, s_hdr_i.ip_tos, ip_len, 16'h0000, 16'h4000, s_hdr_i.ip_ttl, 8'd17, 16'h0000,
            s_hdr_i.src_ip, s_hdr_i.dst_ip,
            s_hdr_i.udp_sport, ROCE_UDP_PORT, udp_len, 16'h0000,
            s_hdr_i.opcode, s_hdr_i.se, 1'b0, pc, 4'h0, 16'hFFFF, 8'h00, s_hdr_i.dest_qp,
            s_hdr_i.ack_req, 7'h00, s_hdr_i.psn,
            ext};
      pr.hv = '0;
      for (int unsigned i = 0; i < HDR_MAX; i++) begin
        if (i < 32'(hl)) begin
          pr.hv[8*i +: 8] = be[8*(HDR_MAX-1-i) +: 8];
        end
      end
      pr.p    = s_hdr_i.pay_len;
      pr.plim = OFF_W'(s_hdr_i.pay_len) + OFF_W'(hl);
      pr.l0   = OFF_W'(s_hdr_i.pay_len) + OFF_W'(hlp);
      pr.t    = OFF_W'(s_hdr_i.pay_len) + OFF_W'(hlp) + OFF_W'(4);
      pr.nb   = BC_W'((OFF_W'(s_hdr_i.pay_len) + OFF_W'(hlp) + OFF_W'(4 + W - 1)) >> LW);
      pr.hb   = BC_W'(hl[6:LW]);
      pr.s    = hl[LW-1:0];
      pr.rs   = (LW + 1)'(W) - (LW + 1)'(hl[LW-1:0]);
      pr.pend = pr.hb + BC_W'((OFF_W'(s_hdr_i.pay_len) + OFF_W'(W - 1)) >> LW);
      prep_q <= pr;
      // Header bytes that precede the first payload byte in beat hb (overrides the carry update
      // of the previous frame's last beat in the same cycle).
      for (int unsigned i = 0; i < HV_BEATS; i++) begin
        if (pr.hb == BC_W'(i)) begin
          carry_q <= pr.hv[DATA_W*i +: DATA_W];
        end
      end
    end
  end

  // B: ICRC accumulator and beat register.
  logic [31:0]         crc_y;
  logic [CRC_SH_W-1:0] crc_k;
  logic                unused_crc_res;

  localparam int unsigned CRC_BACK = 2;
  tmnic_crc_acc #(.W(W), .FIRST_LO(14), .BACK(CRC_BACK), .CHECK(1'b0)) u_crc (
    .clk_i,
    .rst_ni,
    .valid_i  (a_fire),
    .first_i  (a_q.first),
    .data_i   (a_q.data),
    .en_i     (a_q.crc_en),
    .ff_i     (a_q.crc_ff),
    .y_o      (crc_y),
    .k_o      (crc_k),
    .res_ok_o (unused_crc_res)
  );

  always_ff @(posedge clk_i) begin : p_beat
    if (a_fire) begin
      ob_q.data     <= a_q.data;
      ob_q.keep     <= a_q.keep;
      ob_q.last     <= a_q.last;
      ob_q.icrc_pos <= a_q.icrc_pos;
      ob_q.icrc_sh  <= a_q.icrc_sh;
    end
  end

  // C: the accumulator holds the CRC up to the beat in B. On the ICRC beat the covered bytes
  // ended in this beat or the one before (a continuation beat covers nothing, the accumulator
  // holds). k - CRC_BACK is a multiple of 4; only its bits 2-3 are undone here.
  localparam logic [CRC_SH_W-1:0] K_LO = CRC_SH_W'(4'b1100);
  localparam logic [CRC_SH_W-1:0] K_HI = ~K_LO & ~CRC_SH_W'(2'b11);
  always_ff @(posedge clk_i) begin : p_unshift
    logic [CRC_SH_W-1:0] k;
    if (ob_fire) begin
      k          = crc_k - CRC_SH_W'(CRC_BACK);
      oc_q.data <= ob_q.data;
      oc_q.keep <= ob_q.keep;
      oc_q.last <= ob_q.last;
      oc_q.k    <= k & K_HI;
      oc_q.u    <= crc32_unshift(crc_y, k & K_LO);
      // IcrcFirst: lanes sh..sh+3 (sh = 2 mod 4) take bytes 0..3; IcrcCont: lanes 0..3-sh
      // (sh = 2) take bytes sh..3.
      for (int unsigned j = 0; j < W; j++) begin
        oc_q.isel[j] <= (ob_q.icrc_pos == IcrcFirst && j >= 32'(ob_q.icrc_sh) &&
                         j < 32'(ob_q.icrc_sh) + 4) ||
                        (ob_q.icrc_pos == IcrcCont && j + 32'(ob_q.icrc_sh) < 4);
      end
    end
  end

  // D: the rest of the shift, ICRC insertion.
  always_ff @(posedge clk_i) begin : p_out
    logic [31:0]       c;
    logic [DATA_W-1:0] d;
    if (oc_fire) begin
      c = ~crc32_unshift(oc_q.u, oc_q.k);
      d = oc_q.data;
      for (int unsigned j = 0; j < W; j++) begin
        if (oc_q.isel[j]) begin
          d[8*j +: 8] = d[8*j +: 8] | c[8*((j + 2) % 4) +: 8];
        end
      end
      m_data_q <= d;
      m_keep_q <= oc_q.keep;
      m_last_q <= oc_q.last;
    end
  end

  assign m_axis_tdata_o  = m_data_q;
  assign m_axis_tkeep_o  = m_keep_q;
  assign m_axis_tlast_o  = m_last_q;
  assign m_axis_tvalid_o = m_valid_q;

`ifndef SYNTHESIS
  // The ICRC starts at frame offset 2 mod 4, so k - CRC_BACK is a multiple of 4 on ICRC beats.
  always_ff @(posedge clk_i) begin
    if (ob_fire && ob_q.icrc_pos != IcrcNone) begin
      assert (((crc_k - CRC_SH_W'(CRC_BACK)) & CRC_SH_W'(2'b11)) == '0)
        else $error("tmnic_pkt_tx: ICRC start not at 2 mod 4");
    end
  end

  // The payload stream must match pay_len: tlast on beat pend-1, full keep before it.
  always_ff @(posedge clk_i) begin
    if (s_pay_tvalid_i && s_pay_tready_o) begin  // tready is low in reset
      assert (s_pay_tlast_i == (b_q == prep_q.pend - 1'b1))
        else $error("tmnic_pkt_tx: s_pay_tlast_i does not match pay_len");
      assert (s_pay_tkeep_i ==
              lanes_below(OFF_W'(prep_q.p), (OFF_W'(b_q) - OFF_W'(prep_q.hb)) << LW))
        else $error("tmnic_pkt_tx: s_pay_tkeep_i does not match pay_len");
    end
  end
`endif

endmodule
