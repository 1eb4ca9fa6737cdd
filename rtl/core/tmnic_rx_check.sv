// The responder's packet checks (IBA 9.7: the QP and the peer, the QP state, the PSN against the
// expected PSN, the opcode sequence) as one decision, rx_verdict_e (tmnic_pkg), in the cycle the
// QP's word arrives. In order:
//   - the QP must exist (QPN_FIRST <= dest_qp < NUM_QP) and the packet come from its peer's IP,
//     else RV_DROP (silently, as mlx5 drops packets for unknown QPs);
//   - an ACK/NAK is for the requester: RV_ACK if the QP can send (RTS, SQD, SQE), else RV_DROP; so is
//     an RDMA READ response: RV_RRESP (its PSN is the requester's business: tmnic_completer);
//   - a request other than SEND, RDMA WRITE, RDMA READ or an atomic (not implemented here), or a QP
//     that cannot receive (not RTR, RTS, SQD, SQE): RV_DROP; an ATOMIC_ACKNOWLEDGE is a response
//     like a READ's (RV_RRESP, FIRST and LAST: its AtomicAckETH is its 8 payload bytes);
//   - PSN: behind the expected PSN (modulo 2^24, the half-window rule) a duplicate, RV_DUP (re-ACKed,
//     not executed: IBA 9.7.5.1.1), except a duplicate READ request, RV_DUP_READ (executed again:
//     IBA 9.7.5.1.1, its responses may have been lost) and a duplicate atomic, RV_DUP_ATOMIC (answered
//     from the saved result, never executed twice); ahead of it, RV_GAP (a PSN sequence NAK, sent
//     once per gap);
//   - opcode sequence: FIRST/ONLY while a message is held, MIDDLE/LAST while none is or of the other
//     kind (a WRITE_MIDDLE in a SEND): RV_INV_REQ (NAK invalid request, the QP goes to ERR: IBA
//     9.7.5.1.2); an RDMA WRITE to a QP that does not accept remote writes (wr_en_i low), or a READ to
//     one without REMOTE_READ (rd_en_i low), or an atomic to one without REMOTE_ATOMIC (at_en_i low):
//     the same (IBA 9.7.4.1.2, rxe's check_op_valid); a READ or atomic request while a message is
//     held: the same; an atomic whose VA is not 8-byte aligned (at_al_i low): the same (IBA
//     9.4.5: a misaligned atomic is an invalid request, as rxe answers it);
//   - else RV_READ (a READ request), RV_ATOMIC, RV_FIRST (FIRST/ONLY: a receive WQE is needed) or
//     RV_NEXT.
// A UD QP (ud_i) takes only UD SEND_ONLY(_IMM) datagrams, from anyone (no peer, no PSN, no sequence:
// IBA 9.7.1 does not apply to UD), while it can receive: RV_QKEY when the DETH's Q_Key differs from
// the QP's (IBA C10-15: dropped and counted), else RV_UD. An RC QP drops UD opcodes and a UD QP
// everything else (RV_DROP).
// Combinational: the engine acts on the verdict in the same cycle (its inputs are registers and
// RAM outputs). Also decodes the opcode's kind, position and immediate for the engine.
module tmnic_rx_check import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64
) (
  input  logic [7:0]   opcode_i,
  input  logic [23:0]  psn_i,
  input  logic [23:0]  dest_qp_i,
  input  logic [31:0]  src_ip_i,
  input  logic [2:0]   state_i,      // the QP's state (qp_state_e)
  input  logic [31:0]  peer_ip_i,    // its peer's IP
  input  logic [23:0]  epsn_i,       // its expected PSN
  input  logic         held_i,       // a message is in progress on it
  input  logic         held_wr_i,    //   and it is an RDMA WRITE
  input  logic         wr_en_i,      // the QP accepts RDMA WRITEs (qp_access_flags REMOTE_WRITE)
  input  logic         rd_en_i,      // the QP accepts RDMA READs (qp_access_flags REMOTE_READ)
  input  logic         at_en_i,      // the QP accepts atomics (qp_access_flags REMOTE_ATOMIC)
  input  logic         at_al_i,      // the AtomicETH's VA is 8-byte aligned
  input  logic         ud_i,         // the QP is a UD QP
  input  logic         qkey_ok_i,    // the DETH's Q_Key equals the QP's (registered by the engine)
  output rx_verdict_e  verdict_o,
  output logic         first_o,      // FIRST/ONLY (SEND or WRITE)
  output logic         last_o,       // LAST/ONLY
  output logic         imm_o,        // with an immediate
  output logic         write_o,      // an RDMA WRITE
  output logic         read_o,       // an RDMA READ request
  output logic         atomic_o,     // an atomic request (CMP_SWAP, FETCH_ADD)
  output logic         rresp_first_o, // an RDMA READ response: FIRST/ONLY (an ATOMIC_ACKNOWLEDGE too)
  output logic         rresp_last_o,  //   LAST/ONLY (an ATOMIC_ACKNOWLEDGE too)
  output logic         atom_ack_o     // an ATOMIC_ACKNOWLEDGE
);
  if (NUM_QP < 4 || NUM_QP > (1 << 24) || (NUM_QP & (NUM_QP - 1)) != 0) begin : g_chk
    $fatal(1, "tmnic_rx_check: NUM_QP must be a power of two in [4, 2^24]");
  end

  wire op_ack = opcode_i == OP_ACK;
  wire is_send = opcode_i <= OP_SEND_ONLY_IMM;
  assign write_o = opcode_i >= OP_WRITE_FIRST && opcode_i <= OP_WRITE_ONLY_IMM;
  wire is_ud = bth_has_deth(opcode_i);
  assign read_o = opcode_i == OP_READ_REQ;
  assign atomic_o = bth_has_atomiceth(opcode_i);
  assign atom_ack_o = opcode_i == OP_ATOMIC_ACK;
  wire is_rresp = (opcode_i >= OP_READ_RESP_FIRST && opcode_i <= OP_READ_RESP_ONLY) || atom_ack_o;
  assign rresp_first_o = (opcode_i == OP_READ_RESP_FIRST) || (opcode_i == OP_READ_RESP_ONLY) || atom_ack_o;
  assign rresp_last_o = (opcode_i == OP_READ_RESP_LAST) || (opcode_i == OP_READ_RESP_ONLY) || atom_ack_o;
  assign first_o = (opcode_i == OP_SEND_FIRST) || (opcode_i == OP_SEND_ONLY) || (opcode_i == OP_SEND_ONLY_IMM) ||
                   (opcode_i == OP_WRITE_FIRST) || (opcode_i == OP_WRITE_ONLY) || (opcode_i == OP_WRITE_ONLY_IMM) ||
                   is_ud;
  assign last_o = (opcode_i == OP_SEND_LAST) || (opcode_i == OP_SEND_LAST_IMM) || (opcode_i == OP_SEND_ONLY) ||
                  (opcode_i == OP_SEND_ONLY_IMM) || (opcode_i == OP_WRITE_LAST) || (opcode_i == OP_WRITE_LAST_IMM) ||
                  (opcode_i == OP_WRITE_ONLY) || (opcode_i == OP_WRITE_ONLY_IMM) || is_ud;
  assign imm_o = (opcode_i == OP_SEND_LAST_IMM) || (opcode_i == OP_SEND_ONLY_IMM) ||
                 (opcode_i == OP_WRITE_LAST_IMM) || (opcode_i == OP_WRITE_ONLY_IMM) || (opcode_i == OP_UD_SEND_ONLY_IMM);
  wire rq_ready = state_i inside {QPS_RTR, QPS_RTS, QPS_SQD, QPS_SQE};
  wire sq_ready = state_i inside {QPS_RTS, QPS_SQD, QPS_SQE};
  wire qpn_ok = dest_qp_i < 24'(NUM_QP) && dest_qp_i >= 24'(QPN_FIRST);
  wire qp_ok = qpn_ok && src_ip_i == peer_ip_i;

  always_comb begin
    if (ud_i || is_ud) begin
      if (!qpn_ok || !ud_i || !is_ud || !rq_ready) verdict_o = RV_DROP;
      else verdict_o = qkey_ok_i ? RV_UD : RV_QKEY;
    end else if (!qp_ok) verdict_o = RV_DROP;
    else if (op_ack) verdict_o = sq_ready ? RV_ACK : RV_DROP;
    else if (is_rresp) verdict_o = sq_ready ? RV_RRESP : RV_DROP;
    else if (!(is_send || write_o || read_o || atomic_o) || !rq_ready) verdict_o = RV_DROP;
    else if (psn_i != epsn_i) verdict_o = psn_ge(psn_i, epsn_i) ? RV_GAP : read_o ? RV_DUP_READ :
                                          atomic_o ? RV_DUP_ATOMIC : RV_DUP;
    else if (read_o) verdict_o = (held_i || !rd_en_i) ? RV_INV_REQ : RV_READ;
    else if (atomic_o) verdict_o = (held_i || !at_en_i || !at_al_i) ? RV_INV_REQ : RV_ATOMIC;
    else if (first_o == held_i || (held_i && held_wr_i != write_o) || (write_o && !wr_en_i)) verdict_o = RV_INV_REQ;
    else verdict_o = first_o ? RV_FIRST : RV_NEXT;
  end
endmodule
