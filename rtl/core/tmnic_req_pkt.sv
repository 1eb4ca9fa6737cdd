// Packet builder of the requester: cuts the message being sent into PMTU packets and fills one
// TX-buffer slot per packet (rxe_req.c's init_req_packet/finish_packet role).
//
// Atomics: a request (atomic_i) is one packet like a READ request, with the AtomicETH {raddr_i,
// rkey_i, swap_i, cmp_i} (CMP_SWAP when atom_cs_i, else FETCH_ADD) and no payload; an ATOMIC_ACK
// (atom_ack_i with rresp_i) is a one-packet response whose AtomicAckETH is the message's 8 payload
// bytes, given inline (the frame builder sends the AETH, then the payload).
//
// The requester names the message (length, inline or not, opcode class, flags, immediate, the
// checked SGEs written through sg_*_i as the SGE check passes them) and starts a new one with
// msg_new_i: the message offset and the gather cursor go back to 0. Then, for each packet, go_i
// (while ready_o: a slot is free, and for inline data no payload read is in flight) allocates the
// next slot with the packet's header (opcode by first/middle/last, payload length, AckReq and SE on
// the last packet, PSN psn_i) and either writes the inline bytes into the slot (one buffer word per
// cycle) or has the gather walk (tmnic_scatter, one context) issue the packet's payload reads, each
// recorded in the slot's chunk FIFO (tmnic_tx_gather) as the DMA takes it. done_o (one cycle) says
// that every write or read of the packet is issued and the slot is marked filled; last_o is then
// whether it was the message's last packet (valid from go_i to done_o). The message offset moves on
// with done_o.
// The path fields, PMTU and the message fields must stay stable from go_i to done_o.
module tmnic_req_pkt import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  // TX buffer slots of 4 KiB (power of two).
  parameter int unsigned NSLOT = 8,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned TXB_POS_W = 12 + SLOT_W
) (
  input  logic clk_i,
  input  logic rst_ni,

  // The message
  input  logic                        msg_new_i,
  input  logic [31:0]                 msg_len_i,
  input  logic                        inline_i,
  input  logic [WQE_MAX_INLINE*8-1:0] inl_bytes_i,   // the WQE's inline bytes, byte 0 first
  input  logic                        imm_i,         // SEND_WITH_IMM, RDMA_WRITE_WITH_IMM
  input  logic                        write_i,       // RDMA WRITE: RETH {raddr_i, rkey_i, msg_len_i} first
  input  logic                        read_i,        // RDMA READ request: one packet, RETH {raddr_i, rkey_i,
                                                     //   msg_len_i}, no payload
  input  logic                        rresp_i,       // RDMA READ response: AETH aeth_i on FIRST/LAST/ONLY
  input  logic                        atomic_i,      // atomic request: one packet, AtomicETH {raddr_i, rkey_i,
  input  logic                        atom_cs_i,     //   swap_i, cmp_i}, no payload; CMP_SWAP (else FETCH_ADD)
  input  logic [63:0]                 swap_i,        //   swap (CMP_SWAP) or add (FETCH_ADD) data
  input  logic [63:0]                 cmp_i,         //   compare data (CMP_SWAP)
  input  logic                        atom_ack_i,    // with rresp_i: an ATOMIC_ACK (AETH aeth_i), its original
                                                     //   value the 8 inline bytes (msg_len_i = 8)
  input  logic [31:0]                 aeth_i,
  input  logic [63:0]                 raddr_i,
  input  logic [31:0]                 rkey_i,
  input  logic [31:0]                 imm_data_i,
  input  logic                        solicited_i,
  input  logic                        ud_i,          // a UD datagram (one packet): DETH {qkey_i, sqp_i}
  input  logic [31:0]                 qkey_i,
  input  logic [23:0]                 sqp_i,
  // Checked SGEs of the message, by index (tmnic_sge_chk's output)
  input  logic                        sg_we_i,
  input  logic [2:0]                  sg_idx_i,
  input  logic [63:0]                 sg_iova_i,
  input  logic [31:0]                 sg_len_i,
  // The packet's header fields: the QP's path and PMTU, the local addresses, the PSN
  input  qp_path_t                    path_i,
  input  logic [3:0]                  pmtu_log_i,
  input  logic [47:0]                 local_mac_i,
  input  logic [31:0]                 local_ip_i,
  input  logic [15:0]                 udp_sport_i,
  input  logic [23:0]                 psn_i,

  output logic                        ready_o,
  input  logic                        go_i,
  output logic                        done_o,
  output logic                        last_o,

  // Payload DMA reads
  output logic [63:0]                 rd_addr_o,
  output logic [12:0]                 rd_len_o,
  output logic                        rd_valid_o,
  input  logic                        rd_ready_i,
  input  logic                        rsp_valid_i,
  input  logic [DATA_W-1:0]           rsp_data_i,
  input  logic signed [13:0]          rsp_off_i,
  input  logic [BYTES-1:0]            rsp_be_i,
  input  logic                        rsp_last_i,

  // TX buffer write port (tmnic_shift_buf)
  output logic                        txb_wr_o,
  output logic [TXB_POS_W-1:0]        txb_pos_o,
  output logic [DATA_W-1:0]           txb_data_o,
  output logic [BYTES-1:0]            txb_be_o,

  // Packets to the TX scheduler: header, payload in slot pkt_slot_o; slot_free_i[s] pulses when sent
  output roce_hdr_t                   pkt_hdr_o,
  output logic [SLOT_W-1:0]           pkt_slot_o,
  output logic                        pkt_valid_o,
  input  logic                        pkt_ready_i,
  input  logic [NSLOT-1:0]            slot_free_i,

  output logic                        empty_o,       // no payload read in flight
  output logic                        idle_o         // nothing allocated, in flight or offered
);
  // Inline bytes are written one buffer word per cycle.
  localparam int unsigned NIB = (WQE_MAX_INLINE + BYTES - 1) / BYTES;
  localparam int unsigned IB_W = NIB > 1 ? $clog2(NIB) : 1;
  if (DATA_W < 64 || (DATA_W & (DATA_W - 1)) != 0) begin : g_chk_w
    $fatal(1, "tmnic_req_pkt: DATA_W must be a power of two >= 64 (tmnic_tx_gather)");
  end
  if (NSLOT < 2 || (NSLOT & (NSLOT - 1)) != 0) begin : g_chk_slot
    $fatal(1, "tmnic_req_pkt: NSLOT must be a power of two >= 2");
  end

  typedef enum logic [1:0] {P_IDLE, P_INLINE, P_GATHER, P_FILLED} state_e;
  state_e          state_q, state_d;
  // Payload (no reset): the message offset, the gather cursor, the packet's length and inline word
  logic [31:0]     off_q, off_d;
  logic [2:0]      sgi_q, sgi_d;
  logic [31:0]     sgo_q, sgo_d;
  logic [12:0]     len_q, len_d;
  logic [IB_W-1:0] ib_q, ib_d;

  // ---------------------------------------------------------------- TX buffer slots
  logic              g_free, g_room, g_idle, g_alloc, g_filled, g_push, g_inl;
  logic [SLOT_W-1:0] g_slot;
  logic [TXB_POS_W-1:0] g_push_pos, g_inl_pos;
  logic [DATA_W-1:0] g_inl_data;
  roce_hdr_t         hdr;
  tmnic_tx_gather #(.DATA_W(DATA_W), .NSLOT(NSLOT)) u_gather (
    .clk_i, .rst_ni,
    .slot_free_o(g_free), .slot_o(g_slot), .alloc_i(g_alloc), .hdr_i(hdr), .filled_i(g_filled),
    .chunk_room_o(g_room), .chunk_empty_o(empty_o), .chunk_push_i(g_push), .chunk_pos_i(g_push_pos),
    .inl_wr_i(g_inl), .inl_pos_i(g_inl_pos), .inl_data_i(g_inl_data),
    .rsp_valid_i, .rsp_data_i, .rsp_off_i, .rsp_be_i, .rsp_last_i,
    .txb_wr_o, .txb_pos_o, .txb_data_o, .txb_be_o,
    .pkt_hdr_o, .pkt_slot_o, .pkt_valid_o, .pkt_ready_i, .slot_free_i, .idle_o(g_idle));

  // Gather of each packet's payload: the responder's SGE walk (tmnic_scatter) on one context, the
  // message's checked SGEs; its requests are the payload DMA reads, one per contiguous piece, each
  // recorded in the chunk FIFO (its packet offset) as the DMA takes it. A piece is decided only when
  // the FIFO has room (avail_i), and room only grows until that piece is pushed.
  logic        ga_start, ga_idle, ga_last;
  logic [11:0] ga_off;
  logic [2:0]  ga_sgi;
  logic [31:0] ga_sgo;
  // (START_REG: the walk's table read waits a cycle for a registered start, so the packet decision
  // does not drive the read register's enable: the placed requester's critical path)
  tmnic_scatter #(.NUM_CTX(2), .SLOTS(8), .LEN_W(13), .START_REG(1)) u_walk (
    .clk_i, .rst_ni,
    .sg_we_i, .sg_waddr_i({1'b0, sg_idx_i}), .sg_iova_i, .sg_len_i,
    .start_i(ga_start), .idle_o(ga_idle), .ctx_i(1'b0), .sgi_i(sgi_q), .sgo_i(sgo_q),
    .skip_i('0), .len_i(hdr.pay_len), .avail_i(g_room),
    .wr_valid_o(rd_valid_o), .wr_ready_i(rd_ready_i), .wr_addr_o(rd_addr_o), .wr_len_o(rd_len_o),
    .wr_off_o(ga_off), .wr_last_o(ga_last), .sgi_o(ga_sgi), .sgo_o(ga_sgo));
  assign g_push = rd_valid_o && rd_ready_i;
  assign g_push_pos = {g_slot, 12'd0} + TXB_POS_W'(ga_off);

  // ---------------------------------------------------------------- the packet's header
  // (from registers and stable inputs; the allocation takes it with go_i)
  wire [12:0] pmtu = 13'd1 << pmtu_log_i;
  // (a READ or atomic request is one packet without payload, whatever the length it asks for)
  wire        req_only = read_i || atomic_i;
  wire        last_pkt = req_only || (msg_len_i - off_q) <= {19'd0, pmtu};
  wire        first_pkt = (off_q == 32'd0);
  always_comb begin
    hdr = '0;
    hdr.dst_mac = path_i.dmac;
    hdr.src_mac = local_mac_i;
    hdr.src_ip = local_ip_i;
    hdr.dst_ip = path_i.dest_ip;
    hdr.ip_tos = path_i.tclass;
    hdr.ip_ttl = path_i.hop_limit;
    hdr.udp_sport = udp_sport_i;
    hdr.dest_qp = path_i.dest_qpn;
    hdr.psn = psn_i;
    hdr.pay_len = req_only ? 13'd0 : last_pkt ? 13'(msg_len_i - off_q) : pmtu;
    hdr.ack_req = last_pkt;
    // (SE only where the IBA allows it: a SEND's last packet, a WRITE's with an immediate; never a
    // READ or atomic request's, whatever the WQE's flags)
    hdr.se = last_pkt && solicited_i && !req_only && (!write_i || imm_i);
    hdr.imm = imm_data_i;
    hdr.reth_va = raddr_i;          // (sent only with the opcodes that carry a RETH or AtomicETH)
    hdr.reth_rkey = rkey_i;
    hdr.reth_len = atomic_i ? 32'(ATOMIC_LEN) : msg_len_i;   // (an atomic's is not on the wire)
    hdr.atom_swap = swap_i;         // (sent only with the atomic request opcodes)
    hdr.atom_cmp = cmp_i;
    hdr.deth_qkey = qkey_i;         // (sent only with the UD opcodes)
    hdr.deth_sqp = sqp_i;
    hdr.aeth = aeth_i;              // (sent only with the READ response opcodes that carry one)
    if (read_i) begin
      hdr.opcode = OP_READ_REQ;
    end else if (atomic_i) begin
      hdr.opcode = atom_cs_i ? OP_CMP_SWAP : OP_FETCH_ADD;
    end else if (rresp_i) begin     // (responses ask for nothing: the requester does not ACK them)
      hdr.ack_req = 1'b0;
      hdr.se = 1'b0;
      if (atom_ack_i) hdr.opcode = OP_ATOMIC_ACK;   // (8 bytes: always one packet)
      else if (first_pkt && last_pkt) hdr.opcode = OP_READ_RESP_ONLY;
      else if (first_pkt) hdr.opcode = OP_READ_RESP_FIRST;
      else if (last_pkt) hdr.opcode = OP_READ_RESP_LAST;
      else hdr.opcode = OP_READ_RESP_MIDDLE;
    end else if (ud_i) begin                 // (the requester sends no datagram over PMTU)
      hdr.opcode = imm_i ? OP_UD_SEND_ONLY_IMM : OP_UD_SEND_ONLY;
      hdr.ack_req = 1'b0;
    end else if (write_i) begin
      if (first_pkt && last_pkt) hdr.opcode = imm_i ? OP_WRITE_ONLY_IMM : OP_WRITE_ONLY;
      else if (first_pkt) hdr.opcode = OP_WRITE_FIRST;
      else if (last_pkt) hdr.opcode = imm_i ? OP_WRITE_LAST_IMM : OP_WRITE_LAST;
      else hdr.opcode = OP_WRITE_MIDDLE;
    end else begin
      if (first_pkt && last_pkt) hdr.opcode = imm_i ? OP_SEND_ONLY_IMM : OP_SEND_ONLY;
      else if (first_pkt) hdr.opcode = OP_SEND_FIRST;
      else if (last_pkt) hdr.opcode = imm_i ? OP_SEND_LAST_IMM : OP_SEND_LAST;
      else hdr.opcode = OP_SEND_MIDDLE;
    end
  end
  assign last_o = last_pkt;
  // (inline data is written through the buffer port that read responses use)
  assign ready_o = (state_q == P_IDLE) && g_free && (!inline_i || empty_o);

  // Inline word ib_q of the packet (an inline message is one packet: PMTU >= 256 > 96)
  logic [NIB*DATA_W-1:0] inl_words;
  assign inl_words = (NIB * DATA_W)'(inl_bytes_i);
  assign g_inl_data = inl_words[ib_q * DATA_W +: DATA_W];
  assign g_inl_pos = {g_slot, 12'd0} + TXB_POS_W'(ib_q) * TXB_POS_W'(BYTES);

  // ---------------------------------------------------------------- next state
  always_comb begin
    state_d = state_q;
    off_d = off_q; sgi_d = sgi_q; sgo_d = sgo_q; len_d = len_q; ib_d = ib_q;
    g_alloc = 1'b0; g_filled = 1'b0; g_inl = 1'b0; ga_start = 1'b0; done_o = 1'b0;

    unique case (state_q)
      P_IDLE: if (go_i) begin
        g_alloc = 1'b1;
        len_d = hdr.pay_len;
        ib_d = '0;
        ga_start = !inline_i && hdr.pay_len != 13'd0;
        state_d = inline_i ? P_INLINE : P_GATHER;
      end
      P_INLINE: begin
        g_inl = 1'b1;
        if (32'(ib_q) * 32'(BYTES) + 32'(BYTES) < msg_len_i) ib_d = ib_q + 1'b1;
        else state_d = P_FILLED;
      end
      // The walk issues the packet's payload reads; done when its last one has been taken (an empty
      // packet has none). The cursor moves on to the next packet.
      P_GATHER: if (ga_idle) begin
        if (len_q != 13'd0) begin
          sgi_d = ga_sgi;
          sgo_d = ga_sgo;
        end
        state_d = P_FILLED;
      end
      P_FILLED: begin
        g_filled = 1'b1;
        done_o = 1'b1;
        off_d = off_q + {19'd0, len_q};
        state_d = P_IDLE;
      end
      default: state_d = P_IDLE;
    endcase
    if (msg_new_i) begin
      off_d = '0;
      sgi_d = '0;
      sgo_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) state_q <= P_IDLE;
    else         state_q <= state_d;
  end
  always_ff @(posedge clk_i) begin
    off_q <= off_d; sgi_q <= sgi_d; sgo_q <= sgo_d; len_q <= len_d; ib_q <= ib_d;
  end

  assign idle_o = (state_q == P_IDLE) && g_idle;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_go_ready: assert property (@(posedge clk_i) disable iff (!chk_q) go_i |-> ready_o)
    else $error("tmnic_req_pkt: packet started while not ready");
  a_new_idle: assert property (@(posedge clk_i) disable iff (!chk_q) msg_new_i |-> state_q == P_IDLE && !go_i)
    else $error("tmnic_req_pkt: a new message while a packet is built");
  a_gather_start: assert property (@(posedge clk_i) disable iff (!chk_q) ga_start |-> ga_idle)
    else $error("tmnic_req_pkt: gather started while one runs");
  a_gather_last: assert property (@(posedge clk_i) disable iff (!chk_q) g_push && ga_last |=> ga_idle)
    else $error("tmnic_req_pkt: the gather went on after the packet's last read");
  a_modes: assert property (@(posedge clk_i) disable iff (!chk_q)
    go_i |-> $onehot0({write_i, read_i, rresp_i, ud_i, atomic_i}) &&
             !(inline_i && (read_i || atomic_i || (rresp_i && !atom_ack_i))))
    else $error("tmnic_req_pkt: more than one message kind, or inline READ request or response data");
  a_atom_ack: assert property (@(posedge clk_i) disable iff (!chk_q)
    go_i && atom_ack_i |-> rresp_i && inline_i && msg_len_i == 32'(ATOMIC_LEN) && first_pkt)
    else $error("tmnic_req_pkt: an ATOMIC_ACK that is not an 8-byte inline response");
  a_inline_len: assert property (@(posedge clk_i) disable iff (!chk_q) go_i && inline_i |-> last_pkt && first_pkt)
    else $error("tmnic_req_pkt: an inline message of more than one packet");
  a_rd_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    rd_valid_o && !rd_ready_i |=> rd_valid_o && $stable(rd_addr_o) && $stable(rd_len_o))
    else $error("tmnic_req_pkt: payload read changed before it was taken");
`endif
endmodule
