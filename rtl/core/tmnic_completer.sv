// Completer: the send queue's completion side (rxe_comp.c's role). Owns every QP's oldest
// uncompleted WQE (ci), its RNR retry budget and the outstanding-message ring the requester fills.
//   - ACK/NAK events from the responder: WQEs whose last PSN the ACK covers complete (a CQE when
//     signaled), one per cycle; an RNR NAK or a PSN-sequence NAK sends the requester back to the
//     oldest outstanding WQE (a REWIND message, with the RNR wait's end for an RNR NAK); other NAKs
//     and an exhausted RNR budget complete the WQE with its error, fail the QP and stop the
//     requester (a FAIL message).
//   - A local error of the requester (bad WQE, protection) fails the QP; the WQE itself sits in the
//     ring with its error status and completes in order, when the flush reaches it.
//   - Flush: while the QP is in ERR, every ring entry from ci to the requester's next completes
//     with its own error status or WR_FLUSH_ERR. The requester puts WQEs it never sent into the ring
//     (as flushed entries), so this block alone writes the send queue's completions, in order.
//   - Transport timer (IBA 9.7.6.1.3 local ACK timeout, 9.7.6.1.4 retry counter): see "transport
//     timer" below.
//   - RDMA READ (an SQO_READ entry, first..last the PSNs of its responses). The receive engine asks
//     whether each READ response packet is in order (ACK_RR: a verdict on vr_*, once per event,
//     after the completions the response implies, IBA 9.7.5.1.3: it acknowledges every earlier
//     request), tells when the READ's payload is placed (ACK_RDDONE: only this completes a READ),
//     or that it failed there (ACK_RDERR). A READ is never completed by an ACK packet; an ACK that
//     covers the oldest READ's last PSN says its responses were lost (an implicit NAK, rxe's
//     COMPST_ERROR_RETRY): go back to it, spending a transport retry as a timeout does.
//   - Atomics (SQO_CSWAP, SQO_FADD: one PSN, first = last) are handled as 8-byte READs (sqo_rd):
//     their response, an ATOMIC_ACK, comes as ACK_RR with ack_atom_i (FIRST and LAST); the verdict
//     also requires the response's kind to match the oldest entry (an ATOMIC_ACK for an atomic, a
//     READ response for a READ), ACK_RDDONE completes them, ACK_RDERR fails them, an ACK past them
//     is an implicit NAK.
//   - It is the send side's only source of QP errors (err_o, at least 3 cycles apart), and marks
//     QPs for the requester whenever a QP's window or state may have changed.
//
// Tables (tmnic_ram_sdp, registered reads): the completer's QP words (ctab), a copy of ci that the
// requester reads for its window check (stale reads only shrink the window), a second one the
// receive engine reads (a rendezvous QP's free internal WQEs: stale only means fewer) and the ring
// (NUM_QP x OUTS entries, written by the requester at its next, read here at ci). The requester's
// next comes through its own copy (nx_*), read with the QP word. A message to the requester is held
// until the requester has written it into its table (msg_ready_i); no ACK or flush is processed
// meanwhile, so ci <= next always holds.
//
// Transport timer. Each QP word holds a deadline (due, armed) and the transport retries left
// (retry_left, separate from the RNR budget), reset to retry_cnt by forward progress: an ACK/NAK that
// completes a message or acknowledges new packets of the oldest one (past acked, the last PSN
// acknowledged; a repeated ACK is no progress). It is armed, due = now + TMO_CYC[timeout], when a
// live message enters an unarmed QP's ring (the ring write marks the QP here, S_LOAD/S_ARM), and
// re-armed from now by forward progress with more outstanding and by every rewind (after an RNR
// NAK: from the end of the RNR wait); it is disarmed when nothing is outstanding, on failure and
// by the flush. timeout 0
// never arms. TMO_CYC[t] = floor(4.096 us * 2^t * CLK_MHZ) cycles (exact at 250 MHz: 1024 << t).
// Expiry is found without a comparator per QP: wake_q holds a time at or before the earliest
// deadline (every deadline written lowers it); when now_i passes it, a sweep reads every QP word,
// one per cycle (it yields to ACKs, local errors and inits after each word and resumes), handles each
// expired QP and sets wake_q to the earliest deadline left. An expired QP with retries left gets a
// REWIND to its oldest outstanding message (go-back-N, as a PSN-sequence NAK) and one retry less;
// with none left its oldest WQE completes with RETRY_EXC_ERR and the QP fails (FAIL, ERR, flush).
// Accuracy: the timer fires between due and due + NUM_QP + ~10 cycles (more only while ACKs keep the
// block busy). Approximation: the timer starts when the message enters the ring, just before its
// first packet, not when its last packet leaves (later messages do not restart a running timer), so
// with a peer that acknowledges only whole messages, one whose transmission takes longer than the
// timeout is retried early (earlier than the IBA's T after its last packet; software chooses a
// timeout well above a message's transmission time, as the usual 14, 67 ms, is).
module tmnic_completer import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned CLK_MHZ = 250,
  parameter int unsigned OUTS = 16,           // ring entries per QP (power of two)
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned OUT_W = $clog2(OUTS),
  // The outstanding rings one bit per RAM (see u_otab); from 16K entries unless set otherwise.
  parameter bit RING_SLICED = (NUM_QP * OUTS >= 16384)
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [63:0] now_i,

  // Context read ports (registered: qp_rd_i[k] one cycle after qp_idx_o[k]): 0 the QP being
  // processed, 1 the QP being initialised.
  output logic [1:0][QP_W-1:0]    qp_idx_o,
  input  qp_cmp_cfg_t [1:0]       qp_rd_i,
  input  logic                    init_i,       // a QP's send queue starts (RTS)
  input  logic [QP_W-1:0]         init_qp_i,
  input  logic [2:0]              kick_i,       // look at QP kick_qp_i[k]: state changes, flushed entries
  input  logic [2:0][QP_W-1:0]    kick_qp_i,

  // ACK/NAK events from the responder
  input  logic            ack_valid_i,
  output logic            ack_ready_o,
  input  logic [QP_W-1:0] ack_qp_i,
  input  logic [31:0]     ack_aeth_i,
  input  logic [23:0]     ack_psn_i,
  input  logic            ack_local_i,  // from the requester: a UD datagram sent (no ACK packet; not counted)
  input  ack_kind_e       ack_kind_i,   // ACK_PKT, or a READ response event (tmnic_pkg)
  input  logic            ack_first_i,  // ACK_RR: the response is FIRST/ONLY,
  input  logic            ack_last_i,   //   LAST/ONLY
  input  logic            ack_atom_i,   // ACK_RR: the response is an ATOMIC_ACK (FIRST and LAST)
  // ACK_RR's verdict (one pulse per event): the response is the oldest READ's (atomic's) next one (vr_ok_o)
  output logic            vr_valid_o,
  output logic            vr_ok_o,
  output logic [15:0]     vr_idx_o,     // the oldest outstanding WQE (the READ when vr_ok_o)

  // The requester: local errors, ring writes, its next WQE (copy, registered read, old word on a
  // same-cycle write), messages, marks
  input  logic            lerr_valid_i,
  output logic            lerr_ready_o,
  input  logic [QP_W-1:0] lerr_qp_i,
  input  logic                   o_we_i,
  input  logic [QP_W+OUT_W-1:0]  o_waddr_i,
  input  sq_out_t                o_wdata_i,
  output logic            nx_re_o,
  output logic [QP_W-1:0] nx_raddr_o,
  input  logic [15:0]     nx_rdata_i,
  input  logic            ci_re_i,            // the requester's read of ci (registered, old word on
  input  logic [QP_W-1:0] ci_raddr_i,         // a same-cycle write)
  output logic [15:0]     ci_rdata_o,
  input  logic            rci_re_i,           // the receive engine's read of ci (a rendezvous QP's
  input  logic [QP_W-1:0] rci_raddr_i,        // internal send queue: its free WQEs), the same copy
  output logic [15:0]     rci_rdata_o,
  output sq_msg_t         msg_o,
  output logic            msg_valid_o,
  input  logic            msg_ready_i,        // the requester's table holds the message
  output logic            mark_o,             // the requester should look at mark_qp_o
  output logic [QP_W-1:0] mark_qp_o,

  output cqe_req_t cqe_o,
  output logic     cqe_valid_o,
  input  logic     cqe_ready_i,
  output logic            err_o,              // move err_qp_o to ERR
  output logic [QP_W-1:0] err_qp_o,

  output logic retransmit_o, output logic rx_rnr_o, output logic rx_nak_o, output logic rx_ack_o,
  output logic quiet_o,               // no QP init pending (a command stays busy until then)
  output logic idle_o,
  output logic [63:0] wake_at_o       // earliest transport timer expiry (at or before; all ones: none)
);
  if ((OUTS & (OUTS - 1)) != 0 || OUTS < 2 || OUTS > 32768) begin : g_chk
    $fatal(1, "tmnic_completer: OUTS must be a power of two in 2..32768");
  end
  if ((NUM_QP & (NUM_QP - 1)) != 0 || NUM_QP < 4 || NUM_QP > 65536) begin : g_chk_qp
    $fatal(1, "tmnic_completer: NUM_QP must be a power of two in 4..65536");
  end
  // (4096 * CLK_MHZ << 31 must fit the 64-bit deadline arithmetic)
  if (CLK_MHZ < 1 || CLK_MHZ > 1000) begin : g_chk_clk
    $fatal(1, "tmnic_completer: CLK_MHZ must be in 1..1000");
  end

  // Local ACK timeout in cycles per timeout value: floor(4.096 us * 2^t * CLK_MHZ) (entry 0 unused).
  function automatic logic [31:0][63:0] tmo_table();
    for (int t = 0; t < 32; t++) tmo_table[t] = (64'(4096 * CLK_MHZ) << t) / 64'd1000;
  endfunction
  localparam logic [31:0][63:0] TMO_CYC = tmo_table();

  typedef struct packed {
    logic        armed;       // the transport timer runs: it expires at due
    logic [63:0] due;
    logic [2:0]  retry_left;  // transport retries left
    logic        acked_v;     // acked holds the last PSN an ACK/NAK acknowledged (since the init)
    logic [23:0] acked;
    logic [2:0]  rnr_left;    // RNR retries left (7: infinite)
    logic [15:0] ci;          // oldest WQE not yet completed
  } cp_qp_t;

  typedef enum logic [3:0] {
    S_IDLE, S_ACK_RD, S_ACK_W, S_ACK_E, S_ACK, S_LOAD, S_FLUSH, S_FLUSH_W, S_FLUSH_CQE, S_CQE, S_ERRWAIT,
    S_SWEEP, S_TMO_RD, S_ARM
  } state_e;

  // Control (reset)
  state_e   state_q, state_d, after_q, after_d;
  logic     init_pend_q, init_pend_d, errwait_q, errwait_d;
  logic     msg_valid_d, cqe_valid_d, err_d, mark_d, own_q, own_d;
  logic     retransmit_d, rx_rnr_d, rx_nak_d, rx_ack_d;
  // Transport timer: wake_q (at or before the earliest deadline; all ones: none), the sweep (sw_on_q,
  // the next word to read sw_q, whether tab_rdata holds word sw_q - 1, the earliest deadline seen),
  // a deadline just written (nd_*: lowers wake_q and sw_min_q a cycle later), an expiry in the ACK
  // path (tmo_q).
  logic     sw_on_q, sw_on_d, sw_vld_q, sw_vld_d, nd_v_q, nd_v_d, tmo_q, tmo_d;
  logic [63:0] wake_q, wake_d, sw_min_q, sw_min_d;
  // Where sw_min_d comes from before a new deadline is applied (0 sw_min_q, 1 all ones, 2 the swept
  // word's due) and whether wake_d takes it: the new deadline's compares are made in parallel
  // against each source (two 64-bit compares in a row were the placed block's slowest path).
  logic [1:0]  smin_src;
  logic        wake_smin;
  logic [QP_W:0] sw_q, sw_d;
  // Payload (no reset)
  logic [QP_W-1:0] q_q, q_d, init_qp_q, init_qp_d, err_qp_d, mark_qp_d;
  cp_qp_t          ac_q, ac_d;
  logic [15:0]     nx_q, nx_d;                // the requester's next, read with the QP word
  logic [15:0]     ci0_q, ci0_d;              // ci when the ACK event began
  logic [31:0]     aeth_q, aeth_d;
  logic            local_q, local_d;       // the event is the requester's (a UD datagram), not a packet
  ack_kind_e       kind_q, kind_d;
  logic            rf_q, rf_d, rl_q, rl_d;   // ACK_RR: FIRST/ONLY, LAST/ONLY
  logic            at_q, at_d;               // ACK_RR: an ATOMIC_ACK
  logic [23:0]     psn_q, psn_d;             // the event's PSN
  logic            vr_valid_d, vr_ok_d;
  logic [15:0]     vr_idx_d;
  logic [23:0]     lim_q, lim_d;             // messages ending at or before this PSN are done
  // An RNR NAK's wait: its length in cycles registered when the ACK is taken; its end is summed
  // only in the cycle that sends the REWIND (not a 64-bit add on every simulated cycle).
  logic [63:0]     rnr_cyc_q, rnr_cyc_d;
  logic [63:0]     tdur_q, tdur_d;           // the timer's length for the deadline written next
  logic [63:0]     nd_q, nd_d;
  logic [63:0]     c_wrid_q, c_wrid_d;
  sq_op_e          c_op_q, c_op_d;
  logic [15:0]     c_idx_q, c_idx_d;
  logic [7:0]      c_status_q, c_status_d;
  sq_msg_t         msg_d;
  // The ACK loop's entry: S_ACK examines a registered copy of the oldest entry (e_q) and the
  // compares its decision needs (ef_q), made a cycle earlier from the ring's read data (o_f; the
  // ring's block RAM output through 24-bit PSN compares into the table's write data was the placed
  // block's slowest path). ne_q: ci != next (the entry is outstanding, if without error). pa_q, rs_q:
  // compares of the event against the QP word's acked (unchanged during the event's loop).
  typedef struct packed {
    logic ok;         // no error status
    logic rd;         // a READ or an atomic (sqo_rd)
    logic rr_kind;    // ACK_RR: the response's kind is the entry's
    logic lim_last;   // psn_ge(lim, last): the event covers the entry's last PSN
    logic lim_first;  // psn_ge(lim, first)
    logic rr_psn;     // ACK_RR: first <= psn <= last, LAST/ONLY exactly at last
    logic psn_first;  // ACK_RR: psn == first
  } ent_f_t;
  sq_out_t         e_q, e_d;
  ent_f_t          ef_q, ef_d;
  logic            ne_q, ne_d, pa_q, pa_d, rs_q, rs_d;

  // ---------------------------------------------------------------- tables
  // Table writes are registered (wr_*_q) and land one cycle after the FSM decides them: the ACK
  // loop's decision starts at the ring's read data, and at 1024 QPs both the ring and this table
  // are block RAMs far apart (the path into the table's write port: 82 MHz median placed before). The FSM's
  // own copy (ac_q) is current meanwhile; S_IDLE does not read the table in the cycle a write
  // lands. A mark is never raised in the cycle that changes ci (asserted), so the requester's
  // read of ci after a mark sees the new value.
  logic tab_re, tab_we;
  logic [QP_W-1:0] tab_raddr;
  cp_qp_t tab_wdata, tab_rdata;
  logic [QP_W-1:0] tab_waddr;
  logic            wr_v_q;
  logic [QP_W-1:0] wr_a_q;
  cp_qp_t          wr_d_q;
  tmnic_ram_sdp #(.WIDTH($bits(cp_qp_t)), .DEPTH(NUM_QP), .NO_COLLISION(1'b1)) u_ctab (
    .clk_i, .we_i(wr_v_q), .waddr_i(wr_a_q), .wdata_i(wr_d_q),
    .re_i(tab_re), .raddr_i(tab_raddr), .rdata_o(tab_rdata));
  tmnic_ram_sdp #(.WIDTH(16), .DEPTH(NUM_QP), .READ_FIRST(1'b1)) u_citab (
    .clk_i, .we_i(wr_v_q), .waddr_i(wr_a_q), .wdata_i(wr_d_q.ci),
    .re_i(ci_re_i), .raddr_i(ci_raddr_i), .rdata_o(ci_rdata_o));
  tmnic_ram_sdp #(.WIDTH(16), .DEPTH(NUM_QP), .READ_FIRST(1'b1)) u_rcitab (
    .clk_i, .we_i(wr_v_q), .waddr_i(wr_a_q), .wdata_i(wr_d_q.ci),
    .re_i(rci_re_i), .raddr_i(rci_raddr_i), .rdata_o(rci_rdata_o));
  assign nx_re_o = tab_re;
  assign nx_raddr_o = tab_raddr;

  // The ring: a word read at ci is used only while ci != next, and the requester writes only at
  // its next (never a full window ahead), so a read that collides with a write is never used.
  // Ring reads are requested one cycle ahead and reach the RAM from registers (o_re_q, o_raddr_q):
  // at 1024 QPs the ring is 121 block RAMs spread over the die, and its address must not come
  // through the FSM's decision logic. The ACK loop examines a registered copy of the ring's word
  // (e_q, with its compares: see "decisions"), so it requests the entry three after the one it
  // examines: the next is on the RAM's output, the one after it in flight.
  logic o_re, o_re_q;
  logic [QP_W+OUT_W-1:0] o_raddr, o_raddr_q;
  sq_out_t o_rdata;
  // From 16K entries (1024 QPs x 16) the ring is stored one bit per RAM: a 16K x 1 block RAM
  // (DP16KD, RAMB18 in x1 mode) then holds a whole bit column, where a word-wide RAM would be
  // cascaded by depth over dozens of block RAMs with a read multiplexer per bit in front of them.
  if (RING_SLICED) begin : g_otab_sliced
    for (genvar b = 0; b < $bits(sq_out_t); b++) begin : g_bit
      tmnic_ram_sdp #(.WIDTH(1), .DEPTH(NUM_QP * OUTS), .READ_FIRST(1'b0)) u_otab (
        .clk_i, .we_i(o_we_i), .waddr_i(o_waddr_i), .wdata_i(o_wdata_i[b]),
        .re_i(o_re_q), .raddr_i(o_raddr_q), .rdata_o(o_rdata[b]));
    end
  end else begin : g_otab
    tmnic_ram_sdp #(.WIDTH($bits(sq_out_t)), .DEPTH(NUM_QP * OUTS), .READ_FIRST(1'b0)) u_otab (
      .clk_i, .we_i(o_we_i), .waddr_i(o_waddr_i), .wdata_i(o_wdata_i),
      .re_i(o_re_q), .raddr_i(o_raddr_q), .rdata_o(o_rdata));
  end

  // ---------------------------------------------------------------- scheduler
  // Set ports: 0 own (after a failure), 1-3 kicks. A mark means "flush this QP if it is in ERR, start
  // its timer if it has messages outstanding and none runs".
  // Port 4: a live message entered a QP's ring (arm its timer), registered from the requester's write.
  logic            o_arm_q;
  logic [QP_W-1:0] o_arm_qp_q;
  logic            sched_valid, sched_take, sched_pending;
  logic [QP_W-1:0] sched_idx;
  /* verilator lint_off UNUSEDSIGNAL */
  logic            sched_set_ready;           // (sources are rate-limited by construction)
  /* verilator lint_on UNUSEDSIGNAL */
  tmnic_qp_sched #(.N(NUM_QP), .NSET(5)) u_sched (
    .clk_i, .rst_ni,
    .set_i({o_arm_q, kick_i, own_q}), .set_idx_i({o_arm_qp_q, kick_qp_i, q_q}), .set_ready_o(sched_set_ready),
    .valid_o(sched_valid), .idx_o(sched_idx), .take_i(sched_take), .pending_o(sched_pending));

  // ---------------------------------------------------------------- decisions
  wire qp_cmp_cfg_t cfg = qp_rd_i[0];
  /* verilator lint_off UNUSEDSIGNAL */
  wire qp_cmp_cfg_t icfg = qp_rd_i[1];        // (only the retry budgets are used)
  /* verilator lint_on UNUSEDSIGNAL */
  assign qp_idx_o = {init_qp_d, q_d};
  wire [1:0]  typ = aeth_type(aeth_q);       // AETH syndrome (tmnic_hwif_pkg)
  wire [4:0]  val = aeth_value(aeth_q);
  // The loop's entry (e_q) and its compares (ef_q, ne_q, pa_q, rs_q: registered from o_f and the QP
  // word in S_ACK_E and, for the entry after it, in S_ACK), so S_ACK's decision only combines bits.
  // The compares use the event (lim_q, psn_q, at_q, rl_q), fixed from S_ACK_RD on; after a timer
  // expiry (tmo_q) they are stale and unused.
  // An entry with an error status is never completed by an ACK (its WQE was never sent).
  wire        live = ne_q && ef_q.ok;
  wire        rd_head = live && ef_q.rd;
  // ACK_RR: the response's kind is the entry's (an ATOMIC_ACK for an atomic, a READ response for a
  // READ; implies sqo_rd).
  wire ent_f_t o_f = '{
    ok:        o_rdata.err == 8'd0,
    rd:        sqo_rd(o_rdata.op),
    rr_kind:   at_q ? (o_rdata.op == SQO_CSWAP || o_rdata.op == SQO_FADD) : (o_rdata.op == SQO_READ),
    lim_last:  psn_ge(lim_q, o_rdata.last),
    lim_first: psn_ge(lim_q, o_rdata.first),
    rr_psn:    psn_ge(psn_q, o_rdata.first) && psn_ge(o_rdata.last, psn_q) && (rl_q == (psn_q == o_rdata.last)),
    psn_first: psn_q == o_rdata.first};
  wire        sending = cfg.state == QPS_RTS || cfg.state == QPS_SQD;
  wire        pkt = kind_q == ACK_PKT;
  // S_ACK: ci completes (a READ or atomic only by ACK_RDDONE; ACK_RDERR completes nothing here).
  wire        ack_more = !tmo_q && live && ef_q.lim_last && kind_q != ACK_RDERR &&
                         (!ef_q.rd || kind_q == ACK_RDDONE);
  // S_ACK, the event's end: it acknowledges new PSNs of the oldest outstanding message without
  // completing it (forward progress as well as a completion; not a repeated ACK): psn_ge(lim, first)
  // and lim past acked (pa_q). Not a READ's: only its verified responses are (acked then holds the
  // last one, for the next one's verdict).
  wire [23:0] lim_new = lim_q - ac_q.acked;
  wire        ack_part = live && !rd_head && kind_q != ACK_RDERR && ef_q.lim_first && pa_q;
  // ACK_RR's verdict against the oldest entry: a live READ, the PSN in its range, FIRST/ONLY at its
  // first PSN (always: a READ executed again restarts from there), any other right after the last
  // verified one (acked = psn - 1 = lim, rs_q; acked only counts if this READ was already the
  // oldest), LAST/ONLY exactly at its last PSN (ef_q.rr_psn), the response's kind the entry's
  // (rr_kind). A QP that does not send takes no data.
  wire        rr_ok = kind_q == ACK_RR && !tmo_q && live && ef_q.rr_kind && sending && ef_q.rr_psn &&
                      (rf_q ? ef_q.psn_first : (rs_q && ac_q.ci == ci0_q && !ef_q.psn_first));
  // An ACK packet past the oldest READ's last PSN: its responses were lost (implicit NAK).
  wire        rd_lost = pkt && !tmo_q && typ == AETH_TYPE_ACK && rd_head && ef_q.lim_last;
  // Forward progress of this event (not a timer expiry): transport retries back to retry_cnt.
  wire        prog = !tmo_q && (ac_q.ci != ci0_q || ack_part || rr_ok);
  wire [2:0]  retry_left = prog ? cfg.retry_cnt : ac_q.retry_left;
  wire        wake_due = now_i >= wake_q;
  // A new deadline against each value sw_min_d / wake_d can take (see smin_src).
  wire        nd_lt_min = nd_q < sw_min_q;
  wire        nd_lt_due = nd_q < tab_rdata.due;
  wire        nd_lt_wake = nd_q < wake_q;
  logic       nd_lt_smin;
  wire [QP_W-1:0] sw_k = QP_W'(sw_q - 1'b1);    // sweep: the word examined this cycle
  wire        sw_end = sw_q == (QP_W + 1)'(NUM_QP);

  always_comb begin
    cqe_o = '0;
    cqe_o.cq = cfg.send_cq;
    cqe_o.wr_id = c_wrid_q;
    cqe_o.qp_num = 24'(q_q);
    cqe_o.wqe_idx = c_idx_q;
    unique case (c_op_q)
      SQO_WRITE: cqe_o.opcode = WC_OP_RDMA_WRITE;
      SQO_READ:  cqe_o.opcode = WC_OP_RDMA_READ;
      SQO_CSWAP: cqe_o.opcode = WC_OP_COMP_SWAP;
      SQO_FADD:  cqe_o.opcode = WC_OP_FETCH_ADD;
      default:   cqe_o.opcode = WC_OP_SEND;
    endcase
    cqe_o.status = c_status_q;
  end

  logic       fail, rewind, tab_init;
  logic [7:0] st;
  always_comb begin
    fail = 1'b0; rewind = 1'b0; st = WC_GENERAL_ERR;
    state_d = state_q; after_d = after_q;
    init_pend_d = init_pend_q || init_i;
    init_qp_d = init_i ? init_qp_i : init_qp_q;
    errwait_d = errwait_q;
    q_d = q_q; ac_d = ac_q; nx_d = nx_q; ci0_d = ci0_q; aeth_d = aeth_q; lim_d = lim_q; local_d = local_q;
    kind_d = kind_q; rf_d = rf_q; rl_d = rl_q; at_d = at_q; psn_d = psn_q; vr_valid_d = 1'b0; vr_ok_d = vr_ok_o; vr_idx_d = vr_idx_o;
    rnr_cyc_d = rnr_cyc_q; tdur_d = tdur_q;
    e_d = e_q; ef_d = ef_q; ne_d = ne_q; pa_d = pa_q; rs_d = rs_q;
    sw_on_d = sw_on_q; sw_vld_d = 1'b0; sw_d = sw_q; sw_min_d = sw_min_q; wake_d = wake_q; smin_src = 2'd0; wake_smin = 1'b0; nd_lt_smin = 1'b0;
    nd_v_d = 1'b0; nd_d = nd_q; tmo_d = tmo_q;
    c_wrid_d = c_wrid_q; c_idx_d = c_idx_q; c_status_d = c_status_q; c_op_d = c_op_q;
    msg_valid_d = msg_valid_o && !msg_ready_i; msg_d = msg_o;
    cqe_valid_d = cqe_valid_o && !cqe_ready_i;
    err_d = 1'b0; err_qp_d = err_qp_o;
    mark_d = 1'b0; mark_qp_d = q_q; own_d = 1'b0;
    {retransmit_d, rx_rnr_d, rx_nak_d, rx_ack_d} = '0;
    ack_ready_o = 1'b0; lerr_ready_o = 1'b0; sched_take = 1'b0;
    tab_re = 1'b0; tab_raddr = q_q; tab_we = 1'b0; tab_waddr = q_q; tab_init = 1'b0;
    o_re = 1'b0; o_raddr = {q_q, ac_q.ci[OUT_W-1:0]};

    unique case (state_q)
      // Priorities: a pending init, a local error, then (with no message waiting) an ACK, then the
      // next marked QP. A local error does not wait for the message: the requester may be waiting
      // for this block to take it before it takes the message.
      S_IDLE: begin
        if (init_pend_q) begin
          tab_we = 1'b1;
          tab_waddr = init_qp_q;
          tab_init = 1'b1;
          init_pend_d = init_i;
        end else if (lerr_valid_i) begin
          lerr_ready_o = 1'b1;
          q_d = lerr_qp_i;
          err_d = 1'b1;
          err_qp_d = lerr_qp_i;
          state_d = S_ERRWAIT;
        end else if (wr_v_q) begin
          // a table write lands now: no read in this cycle (it would miss it)
        end else if (!msg_valid_o && ack_valid_i) begin
          ack_ready_o = 1'b1;
          q_d = ack_qp_i;
          aeth_d = ack_aeth_i;
          local_d = ack_local_i;
          kind_d = ack_kind_i;
          rf_d = ack_first_i;
          rl_d = ack_last_i;
          at_d = ack_atom_i;
          psn_d = ack_psn_i;
          // An ACK covers its PSN, a NAK the PSNs before it, a READ response the PSNs before it
          // (earlier requests), a placed READ its last PSN (computed here, not in the ACK loop,
          // whose decision starts at the ring's read data).
          lim_d = ((ack_kind_i == ACK_PKT && aeth_type(ack_aeth_i) == AETH_TYPE_ACK) || ack_kind_i == ACK_RDDONE) ?
                  ack_psn_i : ack_psn_i - 24'd1;
          rnr_cyc_d = 64'(rnr_timer_us(aeth_value(ack_aeth_i))) * 64'(CLK_MHZ);
          tab_re = 1'b1;
          tab_raddr = ack_qp_i;
          state_d = S_ACK_RD;
        end else if (!msg_valid_o && (sw_on_q || wake_due)) begin
          // (a new sweep, or the rest of one that yielded)
          if (!sw_on_q) begin
            sw_on_d = 1'b1;
            sw_d = '0;
            sw_min_d = '1;
            smin_src = 2'd1;
          end
          state_d = S_SWEEP;
        end else if (!msg_valid_o && sched_valid) begin
          sched_take = 1'b1;
          q_d = sched_idx;
          tab_re = 1'b1;
          tab_raddr = sched_idx;
          state_d = S_LOAD;
        end
      end

      // The ACK's QP word and the requester's next are here; read the oldest outstanding entry.
      S_ACK_RD: begin
        ac_d = tab_rdata;
        ci0_d = tab_rdata.ci;
        nx_d = nx_rdata_i;
        o_re = 1'b1;
        o_raddr = {q_q, tab_rdata.ci[OUT_W-1:0]};
        state_d = S_ACK_W;
      end
      S_ACK_W: begin
        // The timer's length from here (the configuration is read), the RNR wait ahead of it.
        tdur_d = TMO_CYC[cfg.timeout] + ((!tmo_q && pkt && typ == AETH_TYPE_RNR_NAK) ? rnr_cyc_q : 64'd0);
        o_re = 1'b1;
        o_raddr = {q_q, ac_q.ci[OUT_W-1:0] + 1'b1};
        state_d = S_ACK_E;
      end
      // The oldest entry is on the ring's output: register it with its compares (and the event's
      // against acked) for S_ACK; the entry after it is in flight, request the one after that.
      S_ACK_E: begin
        e_d = o_rdata;
        ef_d = o_f;
        ne_d = ac_q.ci != nx_q;
        pa_d = !ac_q.acked_v || (!lim_new[23] && lim_new != 24'd0);
        rs_d = ac_q.acked_v && lim_q == ac_q.acked;
        o_re = 1'b1;
        o_raddr = {q_q, ac_q.ci[OUT_W-1:0] + OUT_W'(2)};
        state_d = S_ACK;
      end

      // One ACK/NAK event: complete covered messages one per cycle, then act on the syndrome. The
      // entry at ci is in e_q (its compares in ef_q), the one after it on the ring's output: taken
      // with its compares if this one completes. The entry after that is in flight (requested last
      // cycle); the next one is requested below, except when a CQE goes out first (the RAM then
      // holds the one in flight). One cycle more per event than with the compares made here
      // (S_ACK_E), none per completion.
      S_ACK: begin
        if (ack_more) begin
          ac_d.ci = ac_q.ci + 16'd1;
          ac_d.rnr_left = cfg.rnr_retry;
          ac_d.retry_left = cfg.retry_cnt;
          tab_we = 1'b1;
          e_d = o_rdata;
          ef_d = o_f;
          ne_d = ac_q.ci + 16'd1 != nx_q;
          if (e_q.sig) begin
            c_wrid_d = e_q.wrid; c_idx_d = ac_q.ci; c_op_d = e_q.op; c_status_d = WC_SUCCESS;
            cqe_valid_d = 1'b1;
            after_d = S_ACK;
            state_d = S_CQE;
          end
        end else begin
          ac_d.retry_left = retry_left;
          if (tmo_q || rd_lost) begin
            // The transport timer expired (found by the sweep), or a READ's responses were lost: go
            // back N, or fail with no transport retry left. With nothing to send (nothing live, the
            // QP not sending) an expiry only disarms the timer.
            if (live && (sending || rd_lost)) begin
              if (retry_left == 3'd0) begin
                fail = 1'b1;
                st = WC_RETRY_EXC_ERR;
              end else begin
                rewind = 1'b1;
                ac_d.retry_left = retry_left - 3'd1;
              end
            end
            rx_ack_d = rd_lost && !local_q;
          end else if (kind_q == ACK_RDERR) begin
            // The oldest READ failed at the receive engine (its status in the AETH field's low byte).
            if (rd_head && sending) begin
              fail = 1'b1;
              st = aeth_q[7:0];
            end
          end else if (pkt) begin
            unique case (typ)
             AETH_TYPE_ACK: rx_ack_d = !local_q;
             AETH_TYPE_RNR_NAK: begin
               rx_rnr_d = 1'b1;
               if (live && ac_q.rnr_left == 3'd0) begin
                 fail = 1'b1;
                 st = WC_RNR_RETRY_EXC_ERR;
               end else if (live) begin
                 rewind = 1'b1;
                 if (ac_q.rnr_left != 3'd7) ac_d.rnr_left = ac_q.rnr_left - 3'd1;
               end
             end
             AETH_TYPE_NAK: begin
               rx_nak_d = 1'b1;
               if (live && val == NAK_PSN_SEQ_ERR) begin
                 rewind = 1'b1;    // PSN sequence error: go back N
               end else if (live) begin
                 fail = 1'b1;
                 st = (val == NAK_INV_REQ) ? WC_REM_INV_REQ_ERR : (val == NAK_REM_ACCESS_ERR) ? WC_REM_ACCESS_ERR :
                      WC_REM_OP_ERR;
               end
             end
             default: ;            // reserved syndrome: ignored
            endcase
          end
          tmo_d = 1'b0;
          // Forward progress (messages completed, new packets of the oldest acknowledged, a READ's
          // next response) resets the transport retries (retry_left, above); the timer is stopped
          // with nothing outstanding, on failure, after an expiry that did nothing, and restarted by
          // progress and by a rewind. A READ that became the oldest waits for its FIRST response.
          if (rr_ok) begin
            ac_d.acked_v = 1'b1;
            ac_d.acked = psn_q;
          end else if (prog) begin
            ac_d.acked_v = !rd_head;
            ac_d.acked = lim_q;
          end
          vr_valid_d = kind_q == ACK_RR && !tmo_q;
          vr_ok_d = rr_ok;
          vr_idx_d = ac_q.ci;
          if (fail || (tmo_q && !rewind) || ac_q.ci == nx_q || cfg.timeout == 5'd0) begin
            ac_d.armed = 1'b0;
          end else if (rewind || prog) begin
            ac_d.armed = 1'b1;
            ac_d.due = now_i + tdur_q;
            nd_v_d = 1'b1;
            nd_d = ac_d.due;
          end
          msg_d = '{kind: fail ? SQ_MSG_FAIL : SQ_MSG_REWIND, qp: 16'(q_q), idx: ac_q.ci, psn: e_q.first,
                    rnr: !tmo_q && pkt && typ == AETH_TYPE_RNR_NAK, rnr_due: now_i + rnr_cyc_q};
          msg_valid_d = rewind || fail;
          retransmit_d = rewind;
          if (fail) begin
            ac_d.ci = ac_q.ci + 16'd1;
            err_d = 1'b1;
            err_qp_d = q_q;
            c_wrid_d = e_q.wrid; c_idx_d = ac_q.ci; c_op_d = e_q.op; c_status_d = st;
            cqe_valid_d = 1'b1;
            after_d = S_ERRWAIT;
            state_d = S_CQE;
          end else begin
            // The requester looks again only if its window opened (after a rewind it looks at
            // the QP itself; an ACK that completed nothing changes nothing for it).
            mark_d = !rewind && ac_q.ci != ci0_q;
            state_d = S_IDLE;
          end
          tab_we = 1'b1;
        end
        o_re = ack_more && !e_q.sig;
        o_raddr = {q_q, ac_q.ci[OUT_W-1:0] + OUT_W'(3)};
      end

      // A marked QP: flush it if it is in ERR and has entries.
      S_LOAD: begin
        ac_d = tab_rdata;
        nx_d = nx_rdata_i;
        if (cfg.state == QPS_ERR && tab_rdata.ci != nx_rdata_i) begin
          o_re = 1'b1;
          o_raddr = {q_q, tab_rdata.ci[OUT_W-1:0]};
          state_d = S_FLUSH_W;
        end else if (sending && tab_rdata.ci != nx_rdata_i && !tab_rdata.armed && cfg.timeout != 5'd0) begin
          tdur_d = TMO_CYC[cfg.timeout];    // messages outstanding, no timer: start it
          state_d = S_ARM;
        end else begin
          state_d = S_IDLE;
        end
      end
      S_ARM: begin
        ac_d.armed = 1'b1;
        ac_d.due = now_i + tdur_q;
        nd_v_d = 1'b1;
        nd_d = ac_d.due;
        tab_we = 1'b1;
        state_d = S_IDLE;
      end

      // The sweep: word sw_q is read, word sw_q - 1 examined. An expired QP leaves it for the ACK
      // path (its word read again); after each word it yields to ACKs, local errors and inits (no
      // table write is pending in here: S_IDLE does not start it in the cycle one lands).
      S_SWEEP: begin
        if (!sw_end) begin
          tab_re = 1'b1;
          tab_raddr = sw_q[QP_W-1:0];
        end
        sw_d = sw_q + 1'b1;
        sw_vld_d = 1'b1;
        if (sw_vld_q && tab_rdata.armed && now_i >= tab_rdata.due) begin
          q_d = sw_k;
          sw_d = sw_q;
          tmo_d = 1'b1;
          kind_d = ACK_PKT;
          state_d = S_TMO_RD;
        end else begin
          if (sw_vld_q && tab_rdata.armed && tab_rdata.due < sw_min_q) begin
            sw_min_d = tab_rdata.due;
            smin_src = 2'd2;
          end
          if (sw_end) begin
            wake_d = sw_min_d;
            wake_smin = 1'b1;
            sw_on_d = 1'b0;
            state_d = S_IDLE;
          end else if (sw_vld_q && ((ack_valid_i && !msg_valid_o) || lerr_valid_i || init_pend_q)) begin
            sw_d = sw_q;
            state_d = S_IDLE;
          end
        end
      end
      S_TMO_RD: begin
        tab_re = 1'b1;
        tab_raddr = q_q;
        state_d = S_ACK_RD;
      end
      S_FLUSH: begin
        if (ac_q.ci == nx_q || cfg.state != QPS_ERR) begin
          mark_d = 1'b1;          // the window is open again
          state_d = S_IDLE;
        end else begin
          o_re = 1'b1;
          state_d = S_FLUSH_W;
        end
      end
      S_FLUSH_W: state_d = S_FLUSH_CQE;
      S_FLUSH_CQE: begin
        c_wrid_d = o_rdata.wrid; c_idx_d = ac_q.ci; c_op_d = o_rdata.op;
        c_status_d = (o_rdata.err != 8'd0) ? o_rdata.err : WC_WR_FLUSH_ERR;
        cqe_valid_d = 1'b1;
        ac_d.ci = ac_q.ci + 16'd1;
        ac_d.armed = 1'b0;
        tab_we = 1'b1;
        after_d = S_FLUSH;
        state_d = S_CQE;
      end

      // Back to the ACK loop: its entry is in e_q, the one after it held on the RAM's output;
      // request the one after that.
      S_CQE: if (!cqe_valid_o || cqe_ready_i) begin
        state_d = after_q;
        o_re = after_q == S_ACK;
        o_raddr = {q_q, ac_q.ci[OUT_W-1:0] + OUT_W'(2)};
      end

      // The context takes two cycles to show ERR: then flush the QP and have the requester look.
      S_ERRWAIT: begin
        errwait_d = !errwait_q;
        if (errwait_q) begin
          own_d = 1'b1;
          mark_d = 1'b1;
          state_d = S_IDLE;
        end
      end

      default: state_d = S_IDLE;
    endcase
    // A deadline just written: wake_q (and a running sweep's minimum) must not be after it.
    if (nd_v_q) begin
      unique case (smin_src)
        2'd0:    nd_lt_smin = nd_lt_min;
        2'd1:    nd_lt_smin = nd_q != '1;
        default: nd_lt_smin = nd_lt_due;
      endcase
      if (wake_smin ? nd_lt_smin : nd_lt_wake) wake_d = nd_q;
      if (nd_lt_smin) sw_min_d = nd_q;
    end
    // The table write stores ac_d as it is after the case (the current QP's word), or an init.
    tab_wdata = tab_init ? '{armed: 1'b0, due: '0, retry_left: icfg.retry_cnt, acked_v: 1'b0, acked: '0,
                             rnr_left: icfg.rnr_retry, ci: '0}
                         : ac_d;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      after_q <= S_IDLE;
      init_pend_q <= 1'b0;
      errwait_q <= 1'b0;
      msg_valid_o <= 1'b0;
      cqe_valid_o <= 1'b0;
      o_re_q <= 1'b0;
      err_o <= 1'b0;
      mark_o <= 1'b0;
      wr_v_q <= 1'b0;
      own_q <= 1'b0;
      o_arm_q <= 1'b0;
      sw_on_q <= 1'b0;
      sw_vld_q <= 1'b0;
      nd_v_q <= 1'b0;
      tmo_q <= 1'b0;
      vr_valid_o <= 1'b0;
      wake_q <= '1;
      {retransmit_o, rx_rnr_o, rx_nak_o, rx_ack_o} <= '0;
    end else begin
      state_q <= state_d;
      after_q <= after_d;
      init_pend_q <= init_pend_d;
      errwait_q <= errwait_d;
      msg_valid_o <= msg_valid_d;
      cqe_valid_o <= cqe_valid_d;
      o_re_q <= o_re;
      err_o <= err_d;
      mark_o <= mark_d;
      wr_v_q <= tab_we;
      own_q <= own_d;
      o_arm_q <= o_we_i && o_wdata_i.err == 8'd0;
      sw_on_q <= sw_on_d;
      sw_vld_q <= sw_vld_d;
      nd_v_q <= nd_v_d;
      tmo_q <= tmo_d;
      vr_valid_o <= vr_valid_d;
      wake_q <= wake_d;
      {retransmit_o, rx_rnr_o, rx_nak_o, rx_ack_o} <= {retransmit_d, rx_rnr_d, rx_nak_d, rx_ack_d};
    end
  end
  always_ff @(posedge clk_i) begin
    q_q <= q_d; init_qp_q <= init_qp_d; ac_q <= ac_d; nx_q <= nx_d; ci0_q <= ci0_d;
    aeth_q <= aeth_d; lim_q <= lim_d; local_q <= local_d; kind_q <= kind_d; rf_q <= rf_d; rl_q <= rl_d; at_q <= at_d; psn_q <= psn_d;
    vr_ok_o <= vr_ok_d; vr_idx_o <= vr_idx_d; rnr_cyc_q <= rnr_cyc_d; tdur_q <= tdur_d; nd_q <= nd_d;
    sw_q <= sw_d; sw_min_q <= sw_min_d; o_arm_qp_q <= o_waddr_i[QP_W+OUT_W-1:OUT_W];
    c_wrid_q <= c_wrid_d; c_idx_q <= c_idx_d; c_status_q <= c_status_d; c_op_q <= c_op_d;
    msg_o <= msg_d; err_qp_o <= err_qp_d; mark_qp_o <= mark_qp_d;
    e_q <= e_d; ef_q <= ef_d; ne_q <= ne_d; pa_q <= pa_d; rs_q <= rs_d;
    o_raddr_q <= o_raddr; wr_a_q <= tab_waddr; wr_d_q <= tab_wdata;
  end

  assign quiet_o = !init_pend_q;
  assign idle_o = (state_q == S_IDLE) && !sched_pending && !own_q && !init_pend_q && !msg_valid_o &&
                  !cqe_valid_o && !mark_o && !wr_v_q && !o_arm_q && !sw_on_q && !nd_v_q && !wake_due;
  assign wake_at_o = wake_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_init_twice: assert property (@(posedge clk_i) disable iff (!chk_q) !(init_i && init_pend_q))
    else $error("tmnic_completer: QP init while another is pending");
  a_ci_le_next: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_ACK && live |-> (nx_q - ac_q.ci) <= 16'(OUTS))
    else $error("tmnic_completer: more outstanding messages than ring entries");
  tmnic_hold_chk #(.W($bits(msg_o)), .NAME("tmnic_completer: message")) u_msg_hold (
    .clk_i, .rst_ni, .valid_i(msg_valid_o), .ready_i(msg_ready_i), .data_i(msg_o));
  a_msg_once: assert property (@(posedge clk_i) disable iff (!chk_q) !(msg_valid_d && msg_valid_o && msg_ready_i))
    else $error("tmnic_completer: a second message in the cycle the first is taken");
  tmnic_hold_chk #(.W($bits(c_wrid_q) + $bits(c_status_q) + $bits(c_idx_q) + $bits(q_q) + $bits(c_op_q)),
                   .NAME("tmnic_completer: completion")) u_cqe_hold (
    .clk_i, .rst_ni, .valid_i(cqe_valid_o), .ready_i(cqe_ready_i), .data_i({c_wrid_q, c_status_q, c_idx_q, q_q, c_op_q}));
  a_ack_take: assert property (@(posedge clk_i) disable iff (!chk_q)
    ack_valid_i && ack_ready_o |=> state_q == S_ACK_RD) else $error("tmnic_completer: ACK taken but not processed");
  a_err_spacing: assert property (@(posedge clk_i) disable iff (!chk_q) err_o |-> !$past(err_o, 1) && !$past(err_o, 2))
    else $error("tmnic_completer: QP errors less than 3 cycles apart");
  a_mark_after_write: assert property (@(posedge clk_i) disable iff (!chk_q) mark_d |-> !(tab_we && ac_d.ci != ac_q.ci))
    else $error("tmnic_completer: mark raised in the cycle that changes ci (the requester would read the old one)");
  a_sweep_no_write: assert property (@(posedge clk_i) disable iff (!chk_q) state_q == S_SWEEP |-> !wr_v_q)
    else $error("tmnic_completer: sweep read while a table write lands");
  a_tmo_in_sweep: assert property (@(posedge clk_i) disable iff (!chk_q) tmo_q |-> sw_on_q)
    else $error("tmnic_completer: timer expiry handled outside a sweep");
  a_arm_tmo: assert property (@(posedge clk_i) disable iff (!chk_q)
    tab_we && !tab_init && ac_d.armed && !ac_q.armed |-> cfg.timeout != 5'd0)
    else $error("tmnic_completer: timer armed with timeout 0 (infinite)");
  a_wake_le_due: assert property (@(posedge clk_i) disable iff (!chk_q) nd_v_q |=> wake_q <= $past(nd_q))
    else $error("tmnic_completer: a deadline written after the wake time");
  a_sched_take: assert property (@(posedge clk_i) disable iff (!chk_q) sched_take |-> sched_valid)
    else $error("tmnic_completer: scheduler offer taken while not valid");
  // One verdict per ACK_RR event, before the next event's; READ events never rewind.
  logic rr_open_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) rr_open_q <= 1'b0;
    else if (ack_valid_i && ack_ready_o && ack_kind_i == ACK_RR) rr_open_q <= 1'b1;
    else if (vr_valid_o) rr_open_q <= 1'b0;
  end
  a_vr_once: assert property (@(posedge clk_i) disable iff (!chk_q) vr_valid_o |-> rr_open_q)
    else $error("tmnic_completer: a verdict without a READ response event");
  a_vr_before_next: assert property (@(posedge clk_i) disable iff (!chk_q)
    ack_valid_i && ack_ready_o |-> !rr_open_q || vr_valid_o)
    else $error("tmnic_completer: an event taken before the last READ response's verdict");
  a_rr_no_msg: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_ACK && kind_q != ACK_PKT && !tmo_q |-> !rewind) else $error("tmnic_completer: a READ event rewinds");
  a_atom_one: assert property (@(posedge clk_i) disable iff (!chk_q)
    ack_valid_i && ack_ready_o && ack_kind_i == ACK_RR && ack_atom_i |-> ack_first_i && ack_last_i)
    else $error("tmnic_completer: an ATOMIC_ACK event that is not FIRST and LAST");
  a_rderr_status: assert property (@(posedge clk_i) disable iff (!chk_q)
    ack_valid_i && ack_ready_o && ack_kind_i == ACK_RDERR |-> ack_aeth_i[7:0] != 8'd0)
    else $error("tmnic_completer: ACK_RDERR with status SUCCESS");
`endif
endmodule
