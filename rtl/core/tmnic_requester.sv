// Requester: the send queue's sending side (rxe_req.c's role). Owns every QP's producer index from
// the doorbell, next WQE to send, next PSN and RNR wait. It
//   - takes the next QP with possible work from a ready-queue scheduler (tmnic_qp_sched): doorbells,
//     QP commands, the completer's marks, RNR timer expiries and the end of a message mark a QP,
//   - fetches the WQE (tmnic_wqe_fetch), checks every SGE against the MR table before any payload
//     DMA (tmnic_sge_chk; a bad lkey fails the WQE with LOC_PROT_ERR and the QP, no DMA at all),
//   - puts each message into the completer's outstanding-message ring before its first packet,
//   - has the message cut into PMTU packets (tmnic_req_pkt: one TX buffer slot per packet, its
//     payload gathered by DMA reads from the checked SGEs, or the WQE's inline bytes),
//   - applies the completer's messages at packet boundaries (go back to a WQE and PSN, after an RNR
//     wait; stop a failed QP),
//   - while the QP is in ERR, puts the WQEs it never sent into the ring as flushed entries: the
//     completer (tmnic_completer) writes every send completion, in order.
//   - UD QPs: each WQE names its destination (UD_AV at WQE_UD_AV_OFF) and Q_Key; a datagram is one
//     packet (a message over PMTU fails with LOC_LEN_ERR, before any DMA); no ACK comes back, so when
//     its payload is in the TX buffer the requester acknowledges it itself (uack_*: an ACK event
//     for the completer, which completes it as any acknowledged message). A UD packet starts only
//     with the uack register free, so the requester never waits for the completer in S_SEND (the
//     completer may be waiting for the requester to take a message).
//   - RDMA READ (RC, not inline): its SGEs are a scatter list (checked for LOCAL_WRITE); it enters
//     the ring as SQO_READ with the PSNs of its responses (first .. first + packets - 1) and goes
//     out as one READ request (RETH, no payload) at the first; the next PSN is the one after the
//     responses. At most cfg.max_rd READs are in flight (IBA max_rd_atomic): from the ring write
//     until the completer's ci passes them. The QP word records the WQE indices of the READs that
//     may be in flight (MAX_RD_ATOM slots; one is in flight while its index is in [ci, next)), so a
//     READ over the limit, or a fenced WQE (WQE_FLAG_FENCE: IBA 10.8.3.3) while any READ is in
//     flight, is left unsent: the completer marks the QP when ci moves, and it is looked at again.
//   - Atomics (CMP_AND_SWP, FETCH_AND_ADD; RC, not inline) are 8-byte READs: exactly one SGE of
//     ATOMIC_LEN bytes (else LOC_LEN_ERR, a local error as any bad WQE: the QP fails), checked for
//     LOCAL_WRITE (the original value lands there); they count against max_rd (IBA max_rd_atomic),
//     wait for FENCE, take one PSN, enter the ring as SQO_CSWAP / SQO_FADD and go out as one atomic
//     request (AtomicETH: the operands of the WQE's ATOMIC layout at WQE_ATOMIC_OFF).
// The window: at most OUTS messages between the completer's ci (read from its copy when a QP is
// picked up; a stale value only shrinks the window, and only adds READs in flight) and next.
//
// State in block RAM (tmnic_ram_sdp, registered reads): the per-QP word (qtab), the producer
// indices written by doorbells (pitab), copies of the PSN (QUERY_QP) and of next (the completer).
// This FSM is the only writer and writes through: the registered copy of the QP being sent (cur_q)
// always equals its table word, so a QP's word is read fresh whenever it is picked up.
// RNR timers: a QP waiting for one is not sent; when the earliest due time (wake_q) passes, a sweep
// reads every QP's word (one per cycle), ends the expired waits and computes the next wake_q.
module tmnic_requester import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_MR = 64,
  // Messages sent but not yet acknowledged, per QP (power of two).
  parameter int unsigned OUTS = 16,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned OUT_W = $clog2(OUTS),
  // TX buffer slots of 4 KiB: packets being gathered or waiting to be sent (power of two).
  parameter int unsigned NSLOT = 8,
  localparam int unsigned SLOT_W = $clog2(NSLOT),
  localparam int unsigned TXB_POS_W = 12 + SLOT_W
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [63:0] now_i,            // cycle counter (timers)

  // Context tables: configuration of the current QP (registered read: qp_rd_i one cycle after
  // qp_idx_o); MR of the SGE being checked
  output logic [QP_W-1:0]         qp_idx_o,
  input  qp_req_cfg_t             qp_rd_i,
  output logic [MR_W-1:0]         mr_idx_o,
  input  mr_t                     mr_rd_i,
  input  logic [47:0] local_mac_i,
  input  logic [31:0] local_ip_i,
  input  logic [1:0]            kick_i,     // QP kick_qp_i[k] changed state (command, error): look at it
  input  logic [1:0][QP_W-1:0]  kick_qp_i,
  input  logic        init_sq_i,
  input  logic [QP_W-1:0] init_qp_i,
  input  logic [23:0] init_psn_i,
  input  logic        db_valid_i,        // send-queue doorbell
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,
  output logic        db_ready_o,   // room for a doorbell next cycle (tmnic_qp_sched set_ready_o)

  // The completer (tmnic_completer): its messages, its marks, its copy of ci, the ring it owns, the
  // copy of next it reads, local errors and flushed entries
  input  sq_msg_t         msg_i,
  input  logic            msg_valid_i,
  output logic            msg_ready_o,       // the message is in the table (this cycle's write)
  input  logic            mark_i,            // look at mark_qp_i (its window or state changed)
  input  logic [QP_W-1:0] mark_qp_i,
  output logic            ci_re_o,
  output logic [QP_W-1:0] ci_raddr_o,
  input  logic [15:0]     ci_rdata_i,
  output logic                  o_we_o,
  output logic [QP_W+OUT_W-1:0] o_waddr_o,
  output sq_out_t               o_wdata_o,
  input  logic            nx_re_i,
  input  logic [QP_W-1:0] nx_raddr_i,
  output logic [15:0]     nx_rdata_o,
  output logic            lerr_valid_o,      // the current WQE failed locally: fail the QP
  input  logic            lerr_ready_i,
  output logic [QP_W-1:0] lerr_qp_o,
  output logic            ckick_o,           // flushed entries were added to ckick_qp_o's ring
  output logic [QP_W-1:0] ckick_qp_o,
  output logic            uack_valid_o,      // a UD datagram of uack_qp_o with PSN uack_psn_o is sent
  input  logic            uack_ready_i,
  output logic [QP_W-1:0] uack_qp_o,
  output logic [23:0]     uack_psn_o,

  // DMA read: client port for WQEs and payload; shared response bus
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  output logic               rd_is_pay_o,        // the request is payload (else a WQE)
  input  logic               rsp_wqe_valid_i,
  input  logic               rsp_pay_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic [BYTES-1:0]   rsp_be_i,
  input  logic               rsp_last_i,

  // TX buffer write port (tmnic_shift_buf)
  output logic                 txb_wr_o,
  output logic [TXB_POS_W-1:0] txb_pos_o,
  output logic [DATA_W-1:0]    txb_data_o,
  output logic [BYTES-1:0]     txb_be_o,

  // Packets to the TX scheduler: header, payload in slot pkt_slot_o; slot_free_i[s] pulses when sent
  output roce_hdr_t pkt_hdr_o,
  output logic [SLOT_W-1:0] pkt_slot_o,
  output logic      pkt_valid_o,
  input  logic      pkt_ready_i,
  input  logic [NSLOT-1:0] slot_free_i,

  input  logic [QP_W-1:0] query_qp_i,    // QUERY_QP: PSN of query_qp_i, one cycle later
  output logic [23:0]     query_psn_o,

  output logic prot_err_o,
  output logic quiet_o,                  // no DMA in flight or about to be issued, no init pending
  output logic idle_o,                   // nothing to do until a doorbell, an ACK or wake_at_o
  output logic [63:0] wake_at_o          // earliest RNR timer expiry (all ones: none)
);
  if ((OUTS & (OUTS - 1)) != 0 || OUTS < 2 || OUTS > 32768) begin : g_chk
    $fatal(1, "tmnic_requester: OUTS must be a power of two in 2..32768");
  end
  if ((NUM_QP & (NUM_QP - 1)) != 0 || NUM_QP < 4 || NUM_QP > 65536) begin : g_chk_qp
    $fatal(1, "tmnic_requester: NUM_QP must be a power of two in 4..65536");
  end
  // (the READ limit max_rd is a 3-bit field; one record slot per READ in flight)
  if (MAX_RD_ATOM < 1 || MAX_RD_ATOM > 7) begin : g_chk_rd
    $fatal(1, "tmnic_requester: MAX_RD_ATOM must be in 1..7");
  end
  // Inline payload: a slice of the fetched WQE (tmnic_req_pkt writes it in whole buffer words).
  if (WQE_INLINE_DATA_OFF + WQE_MAX_INLINE > WQE_STRIDE) begin : g_chk_inl
    $fatal(1, "tmnic_requester: the inline payload (WQE_INLINE_DATA_OFF + WQE_MAX_INLINE) must lie inside the WQE");
  end

  localparam int unsigned RD_W = MAX_RD_ATOM > 1 ? $clog2(MAX_RD_ATOM) : 1;

  // ---------------------------------------------------------------- table word
  typedef struct packed {
    logic [MAX_RD_ATOM-1:0]       rd_v;     // READs that may be in flight: their WQE indices (the
    logic [MAX_RD_ATOM-1:0][15:0] rd_idx;   //   slots refreshed at every message start)
    logic [63:0] rnr_due;     // cycle at which the RNR wait ends
    logic        rnr_wait;
    logic        dead;        // failed (locally or by the completer): nothing more is sent
    logic [23:0] psn;         // PSN of the next new packet
    logic [15:0] next;        // next WQE to send
  } rq_qp_t;

  typedef enum logic [3:0] {
    S_IDLE, S_SWEEP, S_LOAD, S_MSG, S_FETCH, S_FETCH_WAIT, S_CHECK, S_SGE, S_START,
    S_PKT, S_SEND, S_LERR
  } state_e;

  // ---------------------------------------------------------------- registers
  // Control (reset)
  state_e          state_q, state_d, after_q, after_d;
  logic            in_msg_q, in_msg_d;       // a message of q_q is being sent (messages between packets)
  logic            flushing_q, flushing_d;
  logic [63:0]     wake_q, wake_d;
  logic            init_pend_q, init_pend_d;
  logic [QP_W:0]   sw_q, sw_d;               // sweep: next word to read
  logic [63:0]     sw_min_q, sw_min_d;
  logic            lerr_valid_d, ckick_d, prot_err_d, uack_valid_d;
  // Payload (no reset)
  logic [QP_W-1:0] q_q, q_d, init_qp_q, init_qp_d, lerr_qp_d, uack_qp_d;
  logic [23:0]     uack_psn_d;
  logic [15:0]     pi_q, pi_d, ci_q, ci_d;
  logic [23:0]     init_psn_q, init_psn_d;
  rq_qp_t          cur_q, cur_d;
  logic [31:0]     msg_len_q, msg_len_d;
  logic            tab_cur;                   // the QP table write stores cur_d

  // ---------------------------------------------------------------- tables
  logic tab_re, tab_we;
  logic [QP_W-1:0] tab_raddr, tab_waddr;
  rq_qp_t tab_wdata, tab_rdata;
  tmnic_ram_sdp #(.WIDTH($bits(rq_qp_t)), .DEPTH(NUM_QP), .NO_COLLISION(1'b1)) u_qtab (
    .clk_i, .we_i(tab_we), .waddr_i(tab_waddr), .wdata_i(tab_wdata),
    .re_i(tab_re), .raddr_i(tab_raddr), .rdata_o(tab_rdata));
  // Copies with their own read ports: the PSN for QUERY_QP, next for the completer (which must see
  // the old word when it reads the one being written).
  tmnic_ram_sdp #(.WIDTH(24), .DEPTH(NUM_QP)) u_psntab (
    .clk_i, .we_i(tab_we), .waddr_i(tab_waddr), .wdata_i(tab_wdata.psn),
    .re_i(1'b1), .raddr_i(query_qp_i), .rdata_o(query_psn_o));
  tmnic_ram_sdp #(.WIDTH(16), .DEPTH(NUM_QP), .READ_FIRST(1'b1)) u_nxtab (
    .clk_i, .we_i(tab_we), .waddr_i(tab_waddr), .wdata_i(tab_wdata.next),
    .re_i(nx_re_i), .raddr_i(nx_raddr_i), .rdata_o(nx_rdata_o));
  assign ci_re_o = tab_re;
  assign ci_raddr_o = tab_raddr;

  wire db_ok = db_valid_i && db_idx_i < 12'(NUM_QP);
  logic [15:0] pi_rdata;
  logic        db_hold;                       // a doorbell waiting one cycle behind an init's pi write
  tmnic_pi_tab #(.N(NUM_QP)) u_pitab (
    .clk_i, .rst_ni,
    .db_i(db_ok), .db_idx_i(db_idx_i[QP_W-1:0]), .db_pi_i,
    .init_i(state_q == S_IDLE && init_pend_q), .init_idx_i(init_qp_q),
    .re_i(tab_re), .raddr_i(tab_raddr), .rdata_o(pi_rdata), .hold_o(db_hold));

  // Configuration of the current QP (the requester's view)
  wire qp_req_cfg_t cfg = qp_rd_i;
  // The ring of the current QP, registered for the fetcher: the request is made at least a cycle
  // after S_LOAD, and the fetch address starts at a register, not at the context RAM's output.
  // (Verilator 5.006 also emits uncompilable code when the fetcher's assertions sample the
  // context's whole read-port array.)
  logic [63:0] sq_base_q;
  logic [3:0]  sq_log_q;
  always_ff @(posedge clk_i) begin
    sq_base_q <= cfg.sq_base;
    sq_log_q <= cfg.sq_log;
  end

  // ---------------------------------------------------------------- WQE fetcher
  // Send WQEs come through tmnic_wqe_fetch (one at a time); it holds the WQE until the next fetch.
  // Its DMA read requests and the payload reads share the client port (never both pending).
  logic           f_req, f_ready, f_rd_valid, f_last;
  logic [63:0]    f_rd_addr;
  logic [12:0]    f_rd_len;
  logic [WQE_STRIDE*8-1:0] wqe_q;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [1:0]     f_n;                        // (always one WQE)
  /* verilator lint_on UNUSEDSIGNAL */
  tmnic_wqe_fetch #(.DATA_W(DATA_W), .STRIDE(WQE_STRIDE), .BATCH(1)) u_fetch (
    .clk_i, .rst_ni,
    .req_valid_i(f_req), .req_ready_o(f_ready), .req_base_i(sq_base_q), .req_log_i(5'(sq_log_q)),
    .req_idx_i(cur_q.next), .req_count_i(16'd1), .n_o(f_n),
    .rd_addr_o(f_rd_addr), .rd_len_o(f_rd_len), .rd_valid_o(f_rd_valid), .rd_ready_i,
    .rsp_valid_i(rsp_wqe_valid_i), .rsp_data_i, .rsp_off_i, .rsp_last_i,
    .last_o(f_last), .sel_i(1'b0), .wqe_o(wqe_q));
  logic        ga_valid, ga_ready;              // the payload read requests (u_pkt, below)
  logic [63:0] ga_addr;
  logic [12:0] ga_len;
  assign rd_valid_o = f_rd_valid || ga_valid;
  assign rd_addr_o = f_rd_valid ? f_rd_addr : ga_addr;
  assign rd_len_o = f_rd_valid ? f_rd_len : ga_len;
  assign rd_is_pay_o = !f_rd_valid;
  assign ga_ready = rd_ready_i && !f_rd_valid;

  // ---------------------------------------------------------------- scheduler
  // Set ports: 0 this FSM, 1 doorbells, 2-3 kicks, 4 the completer. A mark means "look at this QP":
  // S_LOAD decides. This FSM's own marks are registered (own_q): the sweep's decision (a 64-bit
  // compare on a table word) does not reach into the scheduler's set buffer in the same cycle.
  logic            set_own, own_q;
  logic [QP_W-1:0] set_own_qp, own_qp_q;
  logic            sched_valid, sched_take, sched_pending;
  logic [QP_W-1:0] sched_idx;
  tmnic_qp_sched #(.N(NUM_QP), .NSET(5)) u_sched (
    .clk_i, .rst_ni,
    .set_i({mark_i, kick_i, db_ok, own_q}), .set_idx_i({mark_qp_i, kick_qp_i, db_idx_i[QP_W-1:0], own_qp_q}),
    .set_ready_o(db_ready_o),
    .valid_o(sched_valid), .idx_o(sched_idx), .take_i(sched_take), .pending_o(sched_pending));

  // ---------------------------------------------------------------- current WQE and QP
  wire [7:0]  w_op = wqe_q[WQE_OPCODE_OFF*8 +: 8];
  wire [7:0]  w_flags = wqe_q[WQE_FLAGS_OFF*8 +: 8];
  wire [7:0]  w_nsge = wqe_q[WQE_NUM_SGE_OFF*8 +: 8];
  wire [31:0] w_inl = wqe_q[WQE_INLINE_LEN_OFF*8 +: 32];
  wire [63:0] w_wrid = wqe_q[WQE_WR_ID_OFF*8 +: 64];
  wire        w_inline = w_flags[WQE_FLAG_INLINE_BIT];
  wire        w_write = (w_op == WQE_OP_RDMA_WRITE) || (w_op == WQE_OP_RDMA_WRITE_WITH_IMM);
  wire        w_read = w_op == WQE_OP_RDMA_READ;
  wire        w_cs = w_op == WQE_OP_ATOMIC_CMP_AND_SWP;
  wire        w_atom = w_cs || (w_op == WQE_OP_ATOMIC_FETCH_AND_ADD);
  // (a READ or an atomic: completed by its responses, counted against max_rd, placed in its SGEs)
  wire        w_rd = w_read || w_atom;
  wire        w_fence = w_flags[WQE_FLAG_FENCE_BIT];
  wire sq_op_e w_sqo = w_read ? SQO_READ : w_cs ? SQO_CSWAP : w_atom ? SQO_FADD :
                       w_write ? SQO_WRITE : SQO_SEND;   // (the completion's opcode)
  // Atomic operands (ATOMIC layout, little-endian u64s in the WQE, in place of SGE 5)
  wire atomic_t w_atomic = atomic_t'(wqe_q[WQE_ATOMIC_OFF*8 +: 128]);
  wire [31:0] w_rkey = wqe_q[WQE_RKEY_OFF*8 +: 32];
  wire [63:0] w_raddr = wqe_q[WQE_RADDR_OFF*8 +: 64];
  wire [31:0] w_imm = {wqe_q[WQE_IMM_OFF*8 +: 8], wqe_q[WQE_IMM_OFF*8+8 +: 8],
                       wqe_q[WQE_IMM_OFF*8+16 +: 8], wqe_q[WQE_IMM_OFF*8+24 +: 8]};
  // UD: the destination and Q_Key of the datagram (UD_AV; DMAC byte 0 is the first on the wire)
  wire ud_av_t w_av = ud_av_t'(wqe_q[WQE_UD_AV_OFF*8 +: 128]);
  wire [31:0] w_qkey = wqe_q[WQE_UD_QKEY_OFF*8 +: 32];
  qp_path_t   ud_path;
  always_comb begin
    ud_path.dest_ip = w_av.dest_ip;
    ud_path.dest_qpn = w_av.dqpn[23:0];
    ud_path.tclass = w_av.tclass;
    ud_path.hop_limit = w_av.hop_limit;
    for (int k = 0; k < 6; k++) ud_path.dmac[47-8*k -: 8] = w_av.dmac[8*k +: 8];
  end
  /* verilator lint_off UNUSEDSIGNAL */
  wire unused_av = ^{w_av.dqpn[31:24]};
  /* verilator lint_on UNUSEDSIGNAL */

  // SGE/MR protection check of the gather list (shared block): every SGE passes before any payload
  // DMA; each passing SGE's IOVA and length land in the packet builder's SGE table (u_pkt). A READ's
  // (an atomic's) list is where its responses land: a scatter list (LOCAL_WRITE).
  logic                sge_start, chk_idle, chk_out_valid, chk_done, chk_ok;
  logic [2:0]          chk_out_idx;
  logic [63:0]         chk_out_iova;
  logic [31:0]         chk_out_len;
  logic [34:0]         chk_total;
  sge_t [WQE_MAX_SGE-1:0] w_sges;
  // (slices, not a function taking the whole WQE: the Verilated model would copy it per call)
  always_comb for (int k = 0; k < int'(WQE_MAX_SGE); k++) w_sges[k] = sge_t'(wqe_q[WQE_SGE_OFF*8 + 128*k +: 128]);
  tmnic_sge_chk #(.NUM_MR(NUM_MR), .NSGE(WQE_MAX_SGE)) u_sgechk (
    .clk_i, .rst_ni, .start_i(sge_start), .idle_o(chk_idle), .nsge_i(w_nsge), .pd_i(cfg.pd),
    .access_i(w_rd ? 4'(1 << ACCESS_LOCAL_WRITE_BIT) : 4'd0),
    .sge_i(w_sges), .mr_idx_o, .mr_rd_i,
    .out_valid_o(chk_out_valid), .out_idx_o(chk_out_idx), .out_iova_o(chk_out_iova), .out_len_o(chk_out_len),
    .done_o(chk_done), .ok_o(chk_ok), .total_o(chk_total));

  // The message's packets (tmnic_req_pkt): header, slot, payload reads or inline bytes, one
  // packet per pk_go; the checked SGEs go to its gather walk as they pass.
  logic pk_ready, pk_go, pk_done, pk_last, pk_empty, pk_idle;
  tmnic_req_pkt #(.DATA_W(DATA_W), .NSLOT(NSLOT)) u_pkt (
    .clk_i, .rst_ni,
    .msg_new_i(state_q == S_CHECK), .msg_len_i(msg_len_q), .inline_i(w_inline),
    .inl_bytes_i(wqe_q[WQE_INLINE_DATA_OFF*8 +: WQE_MAX_INLINE*8]),
    .imm_i(w_op == WQE_OP_SEND_WITH_IMM || w_op == WQE_OP_RDMA_WRITE_WITH_IMM),
    .write_i(w_write), .read_i(w_read), .rresp_i(1'b0), .aeth_i(32'd0), .raddr_i(w_raddr), .rkey_i(w_rkey),
    .atomic_i(w_atom), .atom_cs_i(w_cs), .swap_i(w_atomic.swap_add), .cmp_i(w_atomic.compare), .atom_ack_i(1'b0),
    // (SE only on a SEND or WRITE_WITH_IMM: a READ or atomic request never carries it)
    .imm_data_i(w_imm), .solicited_i(w_flags[WQE_FLAG_SOLICITED_BIT] && !w_rd),
    .ud_i(cfg.ud), .qkey_i(w_qkey), .sqp_i(24'(q_q)),
    .sg_we_i(chk_out_valid), .sg_idx_i(chk_out_idx), .sg_iova_i(chk_out_iova), .sg_len_i(chk_out_len),
    .path_i(cfg.ud ? ud_path : cfg.path), .pmtu_log_i(cfg.pmtu_log), .local_mac_i, .local_ip_i,
    .udp_sport_i(16'hC000 | 16'(q_q)), .psn_i(cur_q.psn),
    .ready_o(pk_ready), .go_i(pk_go), .done_o(pk_done), .last_o(pk_last),
    .rd_addr_o(ga_addr), .rd_len_o(ga_len), .rd_valid_o(ga_valid), .rd_ready_i(ga_ready),
    .rsp_valid_i(rsp_pay_valid_i), .rsp_data_i, .rsp_off_i, .rsp_be_i, .rsp_last_i,
    .txb_wr_o, .txb_pos_o, .txb_data_o, .txb_be_o,
    .pkt_hdr_o, .pkt_slot_o, .pkt_valid_o, .pkt_ready_i, .slot_free_i, .empty_o(pk_empty), .idle_o(pk_idle));

  wire wake_due = now_i >= wake_q;

  // The context's QP port is a registered block-RAM read: it gets the next value of the index
  // register, so qp_rd_i belongs to the register's current value.
  assign qp_idx_o = q_d;

  // Values of the registered state used by the next-state logic.
  wire [QP_W-1:0] sw_k = QP_W'(sw_q - 1'b1);               // sweep: word examined this cycle
  // The sweep's examined word, registered with its verdict: expired (its wait ends), or still
  // waiting with a due time below the minimum of the words before it (sw_min_d in the cycle it is
  // examined already holds the previous word's merge): the next wake-up so far.
  logic            sw_exp_q, sw_min_upd_q;
  logic [63:0]     sw_due_q;
  rq_qp_t          sw_word_q;
  logic [QP_W-1:0] sw_k2_q;
  // Packets of the message less one, floor((len - 1) / PMTU) (0 for an empty message): registered
  // from the next message length, so S_START only adds it to the PSN.
  logic [23:0] npk1_q, npk1_d;
  wire         window = (tab_rdata.next - ci_rdata_i) < 16'(OUTS);   // (S_LOAD: words just read)
  wire [QP_W-1:0] msg_qp = msg_i.qp[QP_W-1:0];
  // The message is for the QP whose message is being sent (in_msg_q and q_q do not change while a
  // message is applied): it goes to cur_q as well.
  wire         msg_on_cur = in_msg_q && msg_qp == q_q;
  // READs of the current QP in flight: recorded and in [ci, next) (registered: cur_q and ci_q are
  // set in S_LOAD and hold until the message starts), how many, and a free slot for the next one.
  // The record as a message start writes it: slots no longer in flight freed (so a stale index never
  // comes back into [ci, next) after the 16-bit wrap), a READ in a free one.
  logic [MAX_RD_ATOM-1:0] rd_inf_q, rd_inf_d, rd_v_new;
  logic [MAX_RD_ATOM-1:0][15:0] rd_idx_new;
  logic [2:0]             rd_cnt;
  logic [RD_W-1:0]        rd_free;
  always_comb begin
    rd_cnt = '0;
    rd_free = '0;
    for (int k = MAX_RD_ATOM - 1; k >= 0; k--) begin
      rd_inf_d[k] = cur_q.rd_v[k] && (cur_q.rd_idx[k] - ci_q) < (cur_q.next - ci_q);
      rd_cnt = rd_cnt + 3'(rd_inf_q[k]);
      if (!rd_inf_q[k]) rd_free = RD_W'(k);
    end
    rd_v_new = rd_inf_q;
    rd_idx_new = cur_q.rd_idx;
    for (int k = 0; k < MAX_RD_ATOM; k++) begin
      if (w_rd && rd_free == RD_W'(k)) begin
        rd_v_new[k] = 1'b1;
        rd_idx_new[k] = cur_q.next;
      end
    end
  end
  // A READ or atomic over the QP's limit, or a fenced WQE after one still in flight, waits.
  wire         rd_wait = (w_rd && rd_cnt >= cfg.max_rd) || (w_fence && rd_inf_q != '0);

  // ---------------------------------------------------------------- next state
  logic       abort;
  logic [7:0] loc_err;                 // nonzero: the current WQE fails locally with this status
  rq_qp_t     mw;                      // S_MSG: the message applied to the QP word
  always_comb begin
    abort = 1'b0; loc_err = '0; mw = tab_rdata;
    // defaults: hold
    state_d = state_q; after_d = after_q; in_msg_d = in_msg_q; flushing_d = flushing_q;
    wake_d = wake_q; init_pend_d = init_pend_q; sw_d = sw_q; sw_min_d = sw_min_q;
    q_d = q_q; init_qp_d = init_qp_q; init_psn_d = init_psn_q; pi_d = pi_q; ci_d = ci_q;
    cur_d = cur_q;
    f_req = 1'b0;
    lerr_valid_d = lerr_valid_o && !lerr_ready_i; lerr_qp_d = lerr_qp_o;
    uack_valid_d = uack_valid_o && !uack_ready_i; uack_qp_d = uack_qp_o; uack_psn_d = uack_psn_o;
    ckick_d = 1'b0;
    msg_ready_o = 1'b0;
    msg_len_d = msg_len_q; pk_go = 1'b0;
    sge_start = 1'b0;
    prot_err_d = 1'b0;
    tab_re = 1'b0; tab_raddr = q_q; tab_we = 1'b0; tab_waddr = q_q; tab_wdata = '0;
    tab_cur = 1'b1;   // a table write stores cur_d (as it is after this block), unless a path says otherwise
    o_we_o = 1'b0; o_waddr_o = {q_q, cur_q.next[OUT_W-1:0]}; o_wdata_o = '0;
    set_own = 1'b0; set_own_qp = q_q;
    sched_take = 1'b0;

    unique case (state_q)
      // Priorities: a pending init, expired RNR timers, a completer message, then the next marked QP.
      S_IDLE: begin
        if (init_pend_q) begin
          tab_we = 1'b1;
          tab_cur = 1'b0;
          tab_waddr = init_qp_q;
          tab_wdata = '{rd_v: '0, rd_idx: '0, rnr_due: '0, rnr_wait: 1'b0, dead: 1'b0, psn: init_psn_q, next: '0};
          init_pend_d = 1'b0;
        end else if (wake_due) begin
          sw_d = '0;
          sw_min_d = '1;
          state_d = S_SWEEP;
        end else if (msg_valid_i) begin
          tab_re = 1'b1;
          tab_raddr = msg_qp;
          after_d = S_IDLE;
          state_d = S_MSG;
        end else if (sched_valid) begin
          // The offered QP's words are read whether or not it is taken (nothing writes in this
          // branch), so the table's read address does not wait for the walk below.
          tab_re = 1'b1;
          tab_raddr = sched_idx;
          // (a walk over a WQE that did not need it, flushed, inline or bad, still runs: its inputs,
          // this QP's WQE and PD, must stay until it ends, so the next QP waits)
          if (chk_idle) begin
            sched_take = 1'b1;
            q_d = sched_idx;
            state_d = S_LOAD;
          end
        end
      end

      // One QP word per cycle: word sw_q is read, word sw_q-1 examined (its due-time compares
      // registered, p_sweep), word sw_q-2 acted on: the 64-bit compares of the table's output
      // reach registers only, not the table's write enable and the running minimum.
      S_SWEEP: begin
        if (sw_q < (QP_W + 1)'(NUM_QP)) begin
          tab_re = 1'b1;
          tab_raddr = sw_q[QP_W-1:0];
        end
        sw_d = sw_q + 1'b1;
        tab_cur = 1'b0;
        tab_waddr = sw_k2_q;
        tab_wdata = sw_word_q;
        tab_wdata.rnr_wait = 1'b0;
        set_own_qp = sw_k2_q;
        if (sw_exp_q) begin
          tab_we = 1'b1;
          set_own = 1'b1;
        end
        if (sw_min_upd_q) begin
          sw_min_d = sw_due_q;
        end
        if (sw_q == (QP_W + 1)'(NUM_QP + 1)) begin
          wake_d = sw_min_d;
          state_d = S_IDLE;
        end
      end

      // The message's QP word is here: apply it (a failed QP ignores rewinds), written this cycle.
      S_MSG: begin
        if (!tab_rdata.dead) begin
          if (msg_i.kind == SQ_MSG_FAIL) begin
            mw.dead = 1'b1;
          end else begin
            mw.next = msg_i.idx;
            mw.psn = msg_i.psn;
            if (msg_i.rnr) begin
              mw.rnr_wait = 1'b1;
              mw.rnr_due = msg_i.rnr_due;
              if (msg_i.rnr_due < wake_q) wake_d = msg_i.rnr_due;
            end
          end
        end
        msg_ready_o = 1'b1;
        tab_we = 1'b1;
        tab_cur = 1'b0;
        tab_waddr = msg_qp;
        tab_wdata = mw;
        set_own = 1'b1;
        set_own_qp = msg_qp;
        if (msg_on_cur) begin
          cur_d = mw;
          abort = 1'b1;               // a go-back or failure aborts the message being sent
          in_msg_d = 1'b0;
        end
        state_d = (after_q == S_PKT && !abort) ? S_PKT : S_IDLE;
      end

      // The taken QP's words are here: send its next WQE, flush its unsent ones, or drop the mark.
      S_LOAD: begin
        cur_d = tab_rdata;
        pi_d = pi_rdata;
        ci_d = ci_rdata_i;
        flushing_d = 1'b0;
        if (cfg.state == QPS_ERR && tab_rdata.next != pi_rdata && window) begin
          flushing_d = 1'b1;
          state_d = S_FETCH;          // fetch for the wr_id; S_CHECK rings it as flushed
        end else if (cfg.state == QPS_RTS && !tab_rdata.dead && !tab_rdata.rnr_wait &&
                     tab_rdata.next != pi_rdata && window) begin
          state_d = S_FETCH;
        end else begin
          state_d = S_IDLE;
        end
      end

      S_FETCH: begin
        if (!rd_valid_o && f_ready) begin
          f_req = 1'b1;                       // WQE cur_q.next of the ring at sq_base
          state_d = S_FETCH_WAIT;
        end
      end
      // The SGE check starts with the WQE's last beat, beside S_CHECK's decisions (a WQE that does
      // not go to S_SGE ignores its result; the walk ends long before the next WQE arrives).
      S_FETCH_WAIT: if (f_last) begin
        sge_start = 1'b1;
        state_d = S_CHECK;
      end

      S_CHECK: begin
        msg_len_d = w_inline ? w_inl : 32'd0;   // (the packet builder starts a new message: u_pkt)
        if (flushing_q) begin
          o_we_o = 1'b1;
          o_wdata_o.op = w_sqo;
          o_wdata_o.wrid = w_wrid;
          o_wdata_o.err = WC_WR_FLUSH_ERR;
          cur_d.next = cur_q.next + 16'd1;
          tab_we = 1'b1;
          ckick_d = 1'b1;
          set_own = 1'b1;
          state_d = S_IDLE;
        end else if ((w_op != WQE_OP_SEND && w_op != WQE_OP_SEND_WITH_IMM && (!(w_write || w_rd) || cfg.ud)) ||
                     (w_rd && w_inline) || w_nsge > 8'(cfg.ud ? UD_MAX_SGE : WQE_MAX_SGE) ||
                     (w_inline && w_inl > 32'(cfg.ud ? UD_MAX_INLINE : WQE_MAX_INLINE))) begin
          // The driver validates these; a WQE that still breaks them fails the QP (reported by the
          // flush, in order, like a protection error).
          loc_err = WC_LOC_QP_OP_ERR;
        end else if (w_atom && (w_nsge != 8'd1 || w_sges[0].length != 32'(ATOMIC_LEN))) begin
          loc_err = WC_LOC_LEN_ERR;   // (the original value needs exactly one 8-byte SGE; the same way)
        end else if (rd_wait) begin
          state_d = S_IDLE;           // (looked at again when the completer's ci moves: its mark)
        end else begin
          state_d = w_inline ? S_START : S_SGE;
          in_msg_d = 1'b1;
        end
      end

      // The gather list's protection check (tmnic_sge_chk); a message over 4 GiB fails as well.
      S_SGE: if (chk_done) begin
        if (chk_ok && chk_total[34:32] == '0) begin
          msg_len_d = chk_total[31:0];
          state_d = S_START;
          if (cfg.ud && chk_total > (35'd1 << cfg.pmtu_log)) begin
            loc_err = WC_LOC_LEN_ERR;       // a datagram is one packet: at most PMTU bytes
          end
        end else begin
          prot_err_d = 1'b1;
          loc_err = WC_LOC_PROT_ERR;
        end
      end

      // The message enters the completer's ring before its first packet, so that a NAK for any of
      // its packets can rewind it.
      S_START: begin
        o_we_o = 1'b1;
        o_wdata_o = '{op: w_sqo, wrid: w_wrid, first: cur_q.psn, last: cur_q.psn + npk1_q,
                      sig: w_flags[WQE_FLAG_SIGNALED_BIT], err: '0};
        cur_d.next = cur_q.next + 16'd1;
        cur_d.rd_v = rd_v_new;
        cur_d.rd_idx = rd_idx_new;
        tab_we = 1'b1;
        state_d = S_PKT;
      end

      // Packet boundary: take completer messages first, then start the next packet when a slot is free.
      S_PKT: begin
        if (msg_valid_i) begin
          tab_re = 1'b1;
          tab_raddr = msg_qp;
          after_d = S_PKT;
          state_d = S_MSG;
        end else if (cfg.state != QPS_RTS) begin
          in_msg_d = 1'b0;           // QP left RTS (ERR): the flush takes over
          set_own = 1'b1;
          state_d = S_IDLE;
        end else if (pk_ready && !(cfg.ud && uack_valid_o)) begin
          pk_go = 1'b1;
          state_d = S_SEND;
        end
      end

      // The packet builder allocates a slot, writes the inline bytes or issues the payload reads;
      // when it is done the slot is filled and the PSN moves on.
      // (a READ request's PSN is its first response's: the PSN moves past all of them; an atomic's
      // 8 bytes are one response: npk1_q is 0)
      S_SEND: if (pk_done) begin
        cur_d.psn = cur_q.psn + 24'd1 + (w_read ? npk1_q : 24'd0);
        tab_we = 1'b1;
        if (cfg.ud) begin                     // (a datagram is its only packet; the register is free)
          uack_valid_d = 1'b1;
          uack_qp_d = q_q;
          uack_psn_d = cur_q.psn;
        end
        if (pk_last) begin
          in_msg_d = 1'b0;
          set_own = 1'b1;
          state_d = S_IDLE;
        end else begin
          state_d = S_PKT;
        end
      end

      // The completer has to take the local error before anything else of this QP happens.
      S_LERR: if (!lerr_valid_o || lerr_ready_i) state_d = S_IDLE;

      default: state_d = S_IDLE;
    endcase
    // A WQE that fails locally (bad WQE, protection) fails the QP; it goes into the ring with its
    // error, so the completer's flush reports it in order, after any earlier outstanding WQE.
    if (loc_err != 8'd0) begin
      in_msg_d = 1'b0;
      o_we_o = 1'b1;
      o_wdata_o.op = w_sqo;
      o_wdata_o.wrid = w_wrid;
      o_wdata_o.err = loc_err;
      cur_d.next = cur_q.next + 16'd1;
      cur_d.dead = 1'b1;
      tab_we = 1'b1;
      lerr_valid_d = 1'b1;
      lerr_qp_d = q_q;
      state_d = S_LERR;
    end
    if (tab_cur) tab_wdata = cur_d;
    npk1_d = (msg_len_d == 32'd0) ? 24'd0 : 24'((msg_len_d - 32'd1) >> cfg.pmtu_log);
    if (init_sq_i) begin
      init_pend_d = 1'b1;
      init_qp_d = init_qp_i;
      init_psn_d = init_psn_i;
    end
  end


  // ---------------------------------------------------------------- registers
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      after_q <= S_IDLE;
      in_msg_q <= 1'b0;
      flushing_q <= 1'b0;
      wake_q <= '1;
      init_pend_q <= 1'b0;
      sw_q <= '0;
      {sw_exp_q, sw_min_upd_q} <= '0;
      lerr_valid_o <= 1'b0;
      uack_valid_o <= 1'b0;
      ckick_o <= 1'b0;
      prot_err_o <= 1'b0;
      own_q <= 1'b0;
    end else begin
      state_q <= state_d;
      after_q <= after_d;
      in_msg_q <= in_msg_d;
      flushing_q <= flushing_d;
      wake_q <= wake_d;
      init_pend_q <= init_pend_d;
      sw_q <= sw_d;
      if (state_q == S_SWEEP) begin : p_sweep
        logic ex;
        ex = sw_q != '0 && sw_q <= (QP_W + 1)'(NUM_QP) && tab_rdata.rnr_wait;
        sw_exp_q  <= ex && now_i >= tab_rdata.rnr_due;
        sw_min_upd_q <= ex && now_i < tab_rdata.rnr_due && tab_rdata.rnr_due < sw_min_d;
      end
      lerr_valid_o <= lerr_valid_d;
      uack_valid_o <= uack_valid_d;
      ckick_o <= ckick_d;
      prot_err_o <= prot_err_d;
      own_q <= set_own;
    end
  end

  always_ff @(posedge clk_i) begin
    q_q <= q_d; init_qp_q <= init_qp_d; init_psn_q <= init_psn_d;
    pi_q <= pi_d; ci_q <= ci_d;
    cur_q <= cur_d;
    npk1_q <= npk1_d;
    rd_inf_q <= rd_inf_d;
    lerr_qp_o <= lerr_qp_d; ckick_qp_o <= q_q; own_qp_q <= set_own_qp;
    uack_qp_o <= uack_qp_d; uack_psn_o <= uack_psn_d;
    sw_min_q <= sw_min_d;
    if (state_q == S_SWEEP) begin
      sw_due_q    <= tab_rdata.rnr_due;
      sw_word_q   <= tab_rdata;
      sw_k2_q     <= sw_k;
    end
    msg_len_q <= msg_len_d;
  end

  assign quiet_o = (state_q == S_IDLE || state_q == S_SWEEP) && !rd_valid_o && pk_empty && !init_pend_q;
  assign idle_o = (state_q == S_IDLE) && !sched_pending && !own_q && !init_pend_q && !db_hold && !wake_due &&
                  !rd_valid_o && !lerr_valid_o && !uack_valid_o && !ckick_o && pk_idle;
  assign wake_at_o = wake_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // (u_qtab asserts itself that a word is never read while written: NO_COLLISION)
  a_init_twice: assert property (@(posedge clk_i) disable iff (!chk_q) !(init_sq_i && init_pend_q))
    else $error("tmnic_requester: QP init while another is pending");
  a_alias: assert property (@(posedge clk_i) disable iff (!chk_q) state_q == S_MSG && msg_on_cur |-> tab_rdata == cur_q)
    else $error("tmnic_requester: the current QP's registers differ from its table word");
  a_rd_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    rd_valid_o && !rd_ready_i |=> rd_valid_o && $stable(rd_addr_o) && $stable(rd_len_o) && $stable(rd_is_pay_o))
    else $error("tmnic_requester: DMA read request changed before it was taken");
  a_uack_over: assert property (@(posedge clk_i) disable iff (!chk_q)
    uack_valid_o && !uack_ready_i |=> uack_valid_o && $stable(uack_qp_o) && $stable(uack_psn_o))
    else $error("tmnic_requester: UD acknowledgement changed before it was taken");
  a_uack_free: assert property (@(posedge clk_i) disable iff (!chk_q)
    (state_q == S_SEND && pk_done && cfg.ud) |-> (!uack_valid_o || uack_ready_i))
    else $error("tmnic_requester: UD acknowledgement raised over one not yet taken");
  a_lerr_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    lerr_valid_o && !lerr_ready_i |=> lerr_valid_o && $stable(lerr_qp_o))
    else $error("tmnic_requester: local error changed before it was taken");
  tmnic_hold_chk #(.W($bits(msg_i)), .NAME("tmnic_requester: completer message")) u_msg_hold (
    .clk_i, .rst_ni, .valid_i(msg_valid_i), .ready_i(msg_ready_o), .data_i(msg_i));
  a_msg_take: assert property (@(posedge clk_i) disable iff (!chk_q) msg_ready_o |-> msg_valid_i)
    else $error("tmnic_requester: message taken while none is offered");
  a_window: assert property (@(posedge clk_i) disable iff (!chk_q)
    o_we_o |-> (cur_q.next - ci_q) < 16'(OUTS)) else $error("tmnic_requester: outstanding ring overrun");
  a_sgechk_start: assert property (@(posedge clk_i) disable iff (!chk_q)
    !sge_start || chk_idle) else $error("tmnic_requester: SGE check started while one runs");
  a_sched_take: assert property (@(posedge clk_i) disable iff (!chk_q) sched_take |-> sched_valid)
    else $error("tmnic_requester: scheduler offer taken while not valid");
  a_pkt_fetch: assert property (@(posedge clk_i) disable iff (!chk_q) pk_go |-> !f_rd_valid)
    else $error("tmnic_requester: a packet started while a WQE is fetched");
  a_max_rd: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_CHECK && w_rd && !flushing_q |-> cfg.max_rd >= 3'd1 && cfg.max_rd <= 3'(MAX_RD_ATOM))
    else $error("tmnic_requester: max_rd outside 1..MAX_RD_ATOM (the context clamps it)");
  a_rd_limit: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_START && w_rd |-> rd_cnt < cfg.max_rd && !rd_inf_q[rd_free])
    else $error("tmnic_requester: a READ or atomic over the limit, or no free record slot");
  a_atom_len: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_START && w_atom |-> msg_len_q == 32'(ATOMIC_LEN) && npk1_q == 24'd0)
    else $error("tmnic_requester: an atomic that is not one 8-byte response");
  a_rd_inf_fresh: assert property (@(posedge clk_i) disable iff (!chk_q)
    state_q == S_CHECK || state_q == S_START |-> rd_inf_q == rd_inf_d)
    else $error("tmnic_requester: the READ record changed between S_LOAD and the message start");
`endif
endmodule
