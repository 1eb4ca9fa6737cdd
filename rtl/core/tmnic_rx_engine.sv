// Receive engine: the responder of every QP, and the first stop of ACKs for the requester.
// For each parsed packet it checks the QP, peer, state, PSN and opcode sequence (tmnic_rx_check), then
//   - ACK/NAK: passes {qp, AETH, PSN} to the send engine;
//   - SEND or RDMA WRITE request: duplicates are re-ACKed and not executed, a gap is NAKed once; a first packet
//     takes a receive WQE whose SGEs pass the MR check before any DMA (tmnic_rx_wqe: the QP's receive
//     queue, its SRQ, or on a TM-SRQ a matched tag's buffer; none: RNR NAK, packet dropped); the
//     payload is scattered from the RX buffer (tmnic_rx_buf, which stores the next packet meanwhile)
//     by DMA writes (tmnic_scatter); the last packet completes the WQE (tmnic_rx_cqe), ACKs go out
//     when asked (events to tmnic_ack_gen, beside this block in tmnic_top). Errors: LOC_LEN_ERR
//     (buffer too small) with NAK invalid request, LOC_PROT_ERR (bad SGE) with NAK remote
//     operational error; both move the QP to ERR.
//   - an RDMA WRITE's first packet has its RETH range checked against the MR table (the rkey,
//     REMOTE_WRITE, the QP's PD; a zero-length WRITE is not checked) instead of taking a WQE, and
//     every later packet checks it again (an MR invalidated by SET_MR mid-message fails the next
//     packet; SET_MR is busy until this engine is quiet, so no DMA follows an invalidation); its
//     bytes go to that range through the same scatter; a WRITE_WITH_IMM's last packet also takes a
//     receive WQE (unchecked: RNR if none) that completes as RECV_RDMA_WITH_IMM. Errors: a bad range
//     is NAKed remote access error, more or fewer bytes than the RETH length invalid request; no
//     DMA, and the QP goes to ERR.
//   - an RDMA READ request (also a duplicate one, which is executed again: IBA 9.7.5.1.1) has its RETH
//     range checked as a WRITE's (REMOTE_READ) and becomes a job for the read-response engine
//     (tmnic_rd_resp, which reads the bytes and sends the responses); the expected PSN moves past
//     the responses. At most MAX_RD_ATOM jobs per QP are out (the engine's per-QP done count): one
//     more READ is dropped unanswered (the requester's timer sends it again). A bad range: NAK
//     remote access error and ERR, as a WRITE.
//   - an atomic request (CMP_SWAP, FETCH_ADD; IBA 9.4.5) has its 8 bytes checked as a READ's range
//     (REMOTE_ATOMIC) and is executed here, atomically with respect to every other access of the
//     NIC to host memory: once every earlier scatter write has left (tmnic_rx_buf wr_none_o), the 8
//     bytes are read, the new value computed (big-endian in memory, as ConnectX) and written back,
//     and nothing else is received meanwhile (every write of packet data comes from this engine,
//     one at a time). The original value goes to the QP's replay RAM (MAX_RD_ATOM results per QP)
//     and, as a job, to tmnic_rd_resp, which sends it in an ATOMIC_ACKNOWLEDGE behind the READ
//     responses before it. A duplicate atomic is answered from the replay RAM, never executed
//     again (one no longer there is dropped). A misaligned VA or a QP without REMOTE_ATOMIC: NAK
//     invalid request; a bad range: NAK remote access error; both move the QP to ERR, no DMA.
//   - an RDMA READ response (this QP is the requester; an ATOMIC_ACKNOWLEDGE is placed as an 8-byte
//     READ_RESP_ONLY into the atomic WQE's one SGE): the completer says whether it is the next
//     one of the READ at the head of the send queue (ACK_RR event, verdict vr_*); the FIRST/ONLY
//     response fetches that READ WQE and checks its scatter list (LOCAL_WRITE) into a second
//     scatter context of the QP; the payload is placed as a receive's; the LAST/ONLY response's
//     placement is reported (ACK_RDDONE: the completer completes the READ); a bad scatter list or
//     a response of the wrong length fails the READ (ACK_RDERR: LOC_PROT_ERR, BAD_RESP_ERR), no DMA.
//   - rendezvous offload (docs/tag-matching.md): on a rendezvous QP (RC on a TM-SRQ, in RTS, its send
//     queue the NIC's own: sq_base has NIC_SPACE_BIT, as mlx5 offloads only QPs without a send
//     queue), a one-packet rendezvous request that matches a tag whose buffer holds the RVH's length
//     completes MATCH at once, nothing placed; its READ (into the tagged buffer) and FIN become the
//     QP's next two internal send WQEs (a descriptor to tmnic_rndv_sq, which serves them, and a
//     doorbell to the requester); when that READ's last response is placed, DATA_VALID completes
//     the tag (the request's tag, the length read). At most RNDV_SLOTS rendezvous per QP are under
//     way (the completer's ci says which internal WQEs are done): a first packet that finds them
//     all busy is RNR-NAKed.
// It also flushes the receive queue (and a WQE held mid-message) of QPs in ERR, one WQE per visit;
// QPs to flush are found by tmnic_qp_sched (marked by doorbells, SET_QP, either engine's error and
// the flush itself).
// State in block RAM (tmnic_ram_sdp, registered reads, this FSM the only writer, written through):
// a per-QP word (PSN, MSN, RQ consumer index, the held message with its scatter cursor), the RQ
// producer indices (doorbells) and a PSN copy for QUERY_QP; the checked SGEs of the held messages
// (NUM_QP x 8) are tmnic_scatter's; the SRQ indices are tmnic_rq_src's (inside tmnic_rx_wqe).
// The file is over ~600 lines (100 of them ports): docs/architecture.md says why it is not cut further.
module tmnic_rx_engine import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned DATA_W = 512,
  parameter int unsigned NUM_QP = 64,
  parameter int unsigned NUM_MR = 64,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned TM_ENTRIES = 1024,
  localparam int unsigned BYTES = DATA_W / 8,
  localparam int unsigned H_W = $clog2(TM_ENTRIES),
  localparam int unsigned QP_W = $clog2(NUM_QP),
  localparam int unsigned MR_W = $clog2(NUM_MR),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned RV_SL_W = $clog2(RNDV_SLOTS)
) (
  input  logic clk_i,
  input  logic rst_ni,

  // Context read ports (registered reads: a word arrives one cycle after its index): the current QP,
  // the QP of the completion being reported; MR of the SGE being checked; SRQ of the QP
  output logic [QP_W-1:0]         qp_idx_o,      // the responder's view of the current QP
  input  qp_rsp_cfg_t             qp_rd_i,
  output logic [QP_W-1:0]         cqe_qp_o,      // the completion's: the peer's QP number
  input  logic [23:0]             cqe_src_qp_i,
  output logic [MR_W-1:0]         mr_idx_o,
  input  mr_t                     mr_rd_i,
  input  logic [31:0]             mr_gen_i,      // the MR table's generation (tmnic_ctx mr_gen_o)
  output logic [SRQ_W-1:0]        srq_idx_o,
  input  srq_cfg_t                srq_rd_i,
  input  logic [1:0]  kick_i,            // look at QP kick_qp_i[k] (its state may have changed)
  input  logic [1:0][QP_W-1:0] kick_qp_i,
  input  logic        init_rq_i,
  input  logic [QP_W-1:0] init_qp_i,
  input  logic [23:0] init_psn_i,
  input  logic        srq_reset_i,
  input  logic [15:0] srq_reset_idx_i,
  input  logic        db_valid_i,        // doorbells: db_srq_i selects SRQ, else receive queue
  input  logic        db_srq_i,
  input  logic [11:0] db_idx_i,
  input  logic [15:0] db_pi_i,
  output logic        db_ready_o,   // room for a doorbell next cycle (tmnic_qp_sched set_ready_o)

  // Parsed packets
  input  roce_hdr_t          s_hdr_i,
  input  logic               s_hdr_valid_i,
  output logic               s_hdr_ready_o,
  input  logic [DATA_W-1:0]  s_pay_tdata_i,
  input  logic [BYTES-1:0]   s_pay_tkeep_i,
  input  logic               s_pay_tlast_i,
  input  logic               s_pay_tvalid_i,
  output logic               s_pay_tready_o,

  // ACK/NAK events to the send engine
  output logic            ack_valid_o,
  input  logic            ack_ready_i,
  output logic [QP_W-1:0] ack_qp_o,
  output logic [31:0]     ack_aeth_o,
  output logic [23:0]     ack_psn_o,
  output ack_kind_e       ack_kind_o,     // an ACK/NAK packet, or a READ response's query/end/error
  output logic            ack_first_o,    // ACK_RR: FIRST/ONLY
  output logic            ack_last_o,     // ACK_RR: LAST/ONLY
  output logic            ack_atom_o,     // ACK_RR: the response is an ATOMIC_ACKNOWLEDGE
  // The completer's answer to an ACK_RR: the response is the next of the READ with WQE index vr_idx_i
  input  logic            vr_valid_i,
  input  logic            vr_ok_i,
  input  logic [15:0]     vr_idx_i,

  // READ jobs to the read-response engine (held until taken), and its per-QP count of finished
  // jobs (registered read: rdone_rdata_i one cycle after rdone_raddr_o)
  output logic            job_valid_o,
  input  logic            job_ready_i,
  output logic [QP_W-1:0] job_qp_o,
  output logic [63:0]     job_iova_o,
  output logic [31:0]     job_len_o,
  output logic [23:0]     job_psn_o,
  output logic [23:0]     job_msn_o,
  output logic [3:0]      job_pmtu_log_o,
  output logic            job_atom_o,     // an ATOMIC_ACKNOWLEDGE of original value job_iova_o
  output logic [QP_W-1:0] rdone_raddr_o,
  input  logic [2:0]      rdone_rdata_i,

  // Rendezvous offload on a rendezvous QP (RC on a TM-SRQ, its send queue the NIC's own: sq_base
  // has NIC_SPACE_BIT): the completer's ci of the QP (registered read with the QP word: its
  // internal WQEs still in use), a matched rendezvous's descriptor for tmnic_rndv_sq (one-cycle
  // write), and the doorbell of its two internal WQEs for the requester (held until taken)
  output logic            rci_re_o,
  output logic [QP_W-1:0] rci_raddr_o,
  input  logic [15:0]     rci_rdata_i,
  output logic            rv_we_o,
  output logic [QP_W-1:0] rv_qp_o,
  output logic [RV_SL_W-1:0] rv_slot_o,
  output rndv_desc_t      rv_desc_o,
  output logic            rv_db_valid_o,
  input  logic            rv_db_ready_i,
  output logic [QP_W-1:0] rv_db_qp_o,
  output logic [15:0]     rv_db_pi_o,

  // ACK/NAK packets to send, as events to the ACK generator (tmnic_ack_gen): held until taken
  output logic            ev_valid_o,
  input  logic            ev_ready_i,
  output logic [QP_W-1:0] ev_qp_o,
  output logic [7:0]      ev_syn_o,
  output logic [23:0]     ev_msn_o,
  output logic [23:0]     ev_psn_o,

  // DMA read client (receive WQEs; an atomic's 8 bytes)
  output logic [63:0]        rd_addr_o,
  output logic [12:0]        rd_len_o,
  output logic               rd_valid_o,
  input  logic               rd_ready_i,
  input  logic               rsp_valid_i,
  input  logic [DATA_W-1:0]  rsp_data_i,
  input  logic signed [13:0] rsp_off_i,
  input  logic               rsp_last_i,

  // DMA write client (payload scatter; an atomic's result), data pulled from the RX buffer: wr_data_o answers
  // wr_data_req_i three cycles later (tmnic_dma_wr DATA_LAT = 3); wr_done_i frees buffer slots
  output logic [63:0]        wr_addr_o,
  output logic [12:0]        wr_len_o,
  output logic               wr_valid_o,
  input  logic               wr_ready_i,
  input  logic               wr_data_req_i,
  input  logic signed [13:0] wr_data_off_i,
  output logic [DATA_W-1:0]  wr_data_o,
  input  logic               wr_done_i,

  // Tag matching: engine lookups, the tag-buffer RAM {lkey, length, addr}, and the ADD whose
  // buffer is not in the RAM yet (a hit on that handle waits for it)
  output logic             lk_valid_o,
  input  logic             lk_ready_i,
  output logic [SRQ_W-1:0] lk_srq_o,
  output logic [63:0]      lk_tag_o,
  output logic             lk_commit_miss_o,
  input  logic             lk_rsp_valid_i,
  input  logic             lk_rsp_hit_i,
  input  logic [H_W-1:0]   lk_rsp_handle_i,
  input  logic             lk_rsp_unexp_i,
  input  logic             lk_rsp_blocked_i,
  output logic             tb_re_o,
  output logic [H_W-1:0]   tb_raddr_o,
  input  logic [127:0]     tb_rdata_i,
  input  logic             add_pend_i,
  input  logic [H_W-1:0]   add_pend_handle_i,
  output logic             tm_exp_o,      // statistics pulses for SRQ tm_srq_o
  output logic             tm_unexp_o,
  output logic             tm_notag_o,
  output logic [SRQ_W-1:0] tm_srq_o,

  // Completions
  output cqe_req_t cqe_o,
  output logic     cqe_valid_o,
  input  logic     cqe_ready_i,

  output logic            err_o,
  output logic [QP_W-1:0] err_qp_o,
  output logic [2:0]      err_kind_o,   // why (AEV_*): invalid request, access violation, or a completion says
  output logic            note_o,       // an event that fails nothing, for err_qp_o, kind err_kind_o: AEV_COMM_EST
  input  logic [QP_W-1:0] query_qp_i,
  output logic [23:0]     query_psn_o,

  output logic drop_qp_o, output logic tx_ack_o, output logic tx_rnr_o, output logic tx_nak_o,
  output logic dup_o, output logic psn_err_o, output logic prot_err_o,
  output logic drop_qkey_o, output logic ud_nowqe_o,
  output logic quiet_o,                  // no DMA in flight or about to be issued
  output logic idle_o
);
  // A TM message's TMH is classified from the head packet's first 16 payload bytes
  // (tmnic_rx_buf head_first_o), so it must lie in the first payload beat. (Everything else that
  // depends on the width is in the blocks below, which check it themselves.)
  if (TMH_SIZE > 16 || BYTES < 16) begin : g_chk_w
    $fatal(1, "tmnic_rx_engine: the TMH must lie in the first 16 payload bytes, and those in the first beat");
  end
  if ((NUM_QP & (NUM_QP - 1)) != 0 || NUM_QP < 4) begin : g_chk_qp
    $fatal(1, "tmnic_rx_engine: NUM_QP must be a power of two >= 4");
  end
  if (MAX_RD_ATOM < 1 || MAX_RD_ATOM > 7) begin : g_chk_rd
    $fatal(1, "tmnic_rx_engine: MAX_RD_ATOM must be in 1..7 (the READ job counts are 3 bits)");
  end
  if (RNDV_SLOTS < 2 || (RNDV_SLOTS & (RNDV_SLOTS - 1)) != 0 || (2 * RNDV_SLOTS) != (1 << RNDV_SQ_LOG) ||
      BYTES < 32) begin : g_chk_rv
    $fatal(1, "tmnic_rx_engine: RNDV_SLOTS must be a power of two >= 2 filling the 2^RNDV_SQ_LOG internal WQEs, and the RVH in the first beat");
  end
  if ((NUM_SRQ & (NUM_SRQ - 1)) != 0 || NUM_SRQ < 2) begin : g_chk_s
    $fatal(1, "tmnic_rx_engine: NUM_SRQ must be a power of two >= 2");
  end

  // ---------------------------------------------------------------- states
  typedef enum logic [5:0] {
    S_IDLE, S_LOAD, S_LOOKUP, S_VERDICT, S_WQE, S_WIMM, S_EXEC, S_STORE, S_SCATTER, S_DONE, S_OUT, S_DRAIN,
    S_FLUSH_WAIT, S_FLUSH_CQE, S_RNR, S_INIT, S_RJOB, S_RRQ, S_RFETCH, S_REXEC, S_RSCAT, S_RDONE,
    S_AWAIT, S_ARD, S_ACALC, S_AWR, S_ADUP, S_ADUPC, S_ADUPH, S_RVM, S_RVDV, S_RVDC, S_FLUSH_GO
  } state_e;
  // What S_WQE waits for: a receive WQE (SEND), an RDMA WRITE's range check, a WRITE_WITH_IMM's WQE.
  // (WM_RECHK: a later WRITE packet's check of the held range; WM_RKEY: a READ request's range;
  // WM_RDWQE: the scatter list of the READ WQE whose FIRST/ONLY response arrived)
  typedef enum logic [2:0] {WM_RECV, WM_KEY, WM_IMM, WM_RECHK, WM_RKEY, WM_RDWQE} wmode_e;

  // ---------------------------------------------------------------- registers
  // Control (reset)
  state_e          state_q, state_d, after_q, after_d;
  logic            init_pend_q, init_pend_d;
  logic            ack_valid_d, ev_valid_d;
  logic [2:0]      err_kind_d;
  logic            note_d;
  logic            err_d, drop_qp_d, tx_ack_d, tx_rnr_d, tx_nak_d, dup_d, psn_err_d, prot_err_d;
  logic            drop_qkey_d, ud_nowqe_d;
  logic            ud_q, ud_d;               // the packet is a UD datagram for this UD QP (RV_UD)
  logic            rm_q, rm_d;               // the packet is a READ response (RV_RRESP): scatter context 2
  logic            job_valid_d;
  // Payload (no reset)
  logic [QP_W-1:0] q_q, q_d, init_qp_q, init_qp_d, err_qp_d, ack_qp_d;
  logic [23:0]     init_psn_q, init_psn_d;
  rsp_qp_t          cur_q, cur_d;
  /* verilator lint_off UNUSEDSIGNAL */
  roce_hdr_t       h_q;                      // header of the packet being handled (checked by the parser)
  /* verilator lint_on UNUSEDSIGNAL */
  logic            h_ld;
  logic [4:0]      skip_q, skip_d;           // leading payload bytes not delivered (a matched EAGER's TMH)
  wmode_e          wmode_q, wmode_d;
  logic            imm_taken_q, imm_taken_d; // this packet took a WRITE_WITH_IMM's receive WQE
  // S_EXEC's capacity check from registers: payload bytes delivered from this packet (pay_len less
  // the skipped TMH) and the held WQE's room (cap - off), each set in the state that loads its
  // inputs (one expression after the case, from cur_d, cost the placed block 15 MHz: 84.0 vs 99.2).
  logic [12:0]     pay_del_q, pay_del_d;
  logic [34:0]     room_q, room_d;
  logic [31:0]     ack_aeth_d;
  logic [23:0]     ack_psn_d;
  ack_kind_e       ack_kind_d;
  logic            ack_first_d, ack_last_d, ack_atom_d;
  // READ: resources full (S_LOOKUP, from the QP's count and the engine's), the checked range's IOVA,
  // the READ WQE whose responses arrive
  logic            rd_full_q;
  logic [31:0]     r_gen_q;                  // the MR generation a READ list check started at
  logic [63:0]     rd_iova_q;
  logic [15:0]     rd_idx_q, rd_idx_d;
  logic            rchk_q, rchk_d;           // WM_RDWQE checks the held READ's list again (MRs changed)
  // Rendezvous offload: the QP's internal WQEs are all in use (S_LOOKUP), the packet is an offloaded
  // rendezvous request (no END completion), the tagged buffer's entry as classified (the cycle
  // after the classification read it), the outputs to tmnic_rndv_sq and the requester
  logic            rv_full_q, rv_q, rv_d, tb_vld_q;
  logic [95:0]     tbuf_q;                   // {lkey, addr} (the length was checked by the walk)
  logic            rv_we_d, rv_db_valid_d;
  logic [QP_W-1:0] rv_qp_d, rv_db_qp_d;
  logic [RV_SL_W-1:0] rv_slot_d;
  logic [15:0]     rv_db_pi_d;
  logic            rvi_re, rvi_we;
  // Atomics: the 8 bytes read (memory order, byte 0 in [7:0]), the value written, the DMA requests
  // (the engine's read and write ports serve the atomic alone in S_ARD / S_AWR: at_rd, at_wr), the
  // replay slot being searched
  logic [63:0]     at_old_q, at_old_d, at_new_q;
  logic            at_rv_q, at_rv_d, at_wv_q, at_wv_d;
  wire             at_rd = state_q == S_ARD;   // from its read request to its data
  wire             at_wr = state_q == S_AWR;   // from its write request to its done
  logic [$clog2(MAX_RD_ATOM)-1:0] ak_q, ak_d;
  logic            ac_hit_q;                  // the replay slot read in S_ADUPC holds this PSN
  logic            job_atom_d;
  logic [QP_W-1:0] job_qp_d;
  logic [63:0]     job_iova_d;
  logic [31:0]     job_len_d;
  logic [23:0]     job_psn_d, job_msn_d;
  logic [3:0]      job_pmtu_log_d;
  logic [QP_W-1:0] ev_qp_d;                  // event to the ACK generator
  logic [7:0]      ev_syn_d;
  logic [23:0]     ev_msn_d, ev_psn_d;
  // The completion to raise (tmnic_rx_cqe, below)
  logic            c_go, c_busy;
  rx_msg_t         c_msg;
  logic [7:0]      c_status;
  logic [31:0]     c_len, c_imm;
  rx_cqe_flags_e   c_flags;
  logic            c_ud;

  // ---------------------------------------------------------------- tables
  // The QP word is written back from cur_q one cycle after the state that decides it (tab_we), so
  // the decision logic does not reach the block RAM's data inputs (the placed responder's critical
  // path: the execute checks -> next word -> table write data). No state that writes is followed by
  // S_IDLE, the only reader, so the late write never meets a read (asserted). A QP init writes at
  // once, in S_IDLE.
  logic tab_re, tab_we, tab_we_q, init_we;
  logic [QP_W-1:0] tab_raddr, tab_waddr, tab_waddr_q;
  rsp_qp_t tab_rdata, init_word;
  logic ram_we;
  logic [QP_W-1:0] ram_waddr;
  rsp_qp_t ram_wdata;
  always_comb begin
    init_word = '0;
    init_word.epsn = init_psn_q;
    init_word.rdi = rdone_rdata_i;   // (S_INIT: no READ job of the QP is out once the count is reached)
  end
  assign ram_we = tab_we_q || init_we;
  assign ram_waddr = init_we ? init_qp_q : tab_waddr_q;
  assign ram_wdata = init_we ? init_word : cur_q;
  tmnic_ram_sdp #(.WIDTH($bits(rsp_qp_t)), .DEPTH(NUM_QP), .NO_COLLISION(1'b1)) u_qtab (
    .clk_i, .we_i(ram_we), .waddr_i(ram_waddr), .wdata_i(ram_wdata),
    .re_i(tab_re), .raddr_i(tab_raddr), .rdata_o(tab_rdata));
  // QUERY_QP's copy of the expected PSNs (same writes, its own read port)
  tmnic_ram_sdp #(.WIDTH(24), .DEPTH(NUM_QP)) u_psntab (
    .clk_i, .we_i(ram_we), .waddr_i(ram_waddr), .wdata_i(ram_wdata.epsn),
    .re_i(1'b1), .raddr_i(query_qp_i), .rdata_o(query_psn_o));

  // Replay RAM: the last MAX_RD_ATOM atomic results of each QP {PSN, original value}, slot
  // {QP, ap} (which are valid: the QP word's av). Written in S_RJOB, read in S_ADUP: never both.
  typedef struct packed {
    logic [23:0] psn;
    logic [63:0] old;
  } ares_t;
  logic  ac_re, ac_we;
  ares_t ac_rdata;
  tmnic_ram_sdp #(.WIDTH($bits(ares_t)), .DEPTH(NUM_QP * MAX_RD_ATOM), .NO_COLLISION(1'b1)) u_areplay (
    .clk_i, .we_i(ac_we), .waddr_i({q_q, cur_q.ap}), .wdata_i({h_q.psn, at_old_q}),
    .re_i(ac_re), .raddr_i({q_q, ak_q}), .rdata_o(ac_rdata));

  // Rendezvous info: what each offloaded rendezvous's DATA_VALID completion needs, slot {QP, n mod
  // RNDV_SLOTS} as in tmnic_rndv_sq (written in S_RVM, read in S_RVDV: never both).
  typedef struct packed {
    logic [63:0] tag;
    logic [31:0] ctx;
    logic [15:0] handle;
    logic [31:0] len;
  } rvinfo_t;
  rvinfo_t rvi_rdata, rvi_wdata;
  tmnic_ram_sdp #(.WIDTH($bits(rvinfo_t)), .DEPTH(NUM_QP * RNDV_SLOTS), .NO_COLLISION(1'b1)) u_rvinfo (
    .clk_i, .we_i(rvi_we), .waddr_i({q_q, cur_q.rv_pi[1 +: RV_SL_W]}),
    .wdata_i(rvi_wdata),
    .re_i(rvi_re), .raddr_i({q_q, rd_idx_q[1 +: RV_SL_W]}), .rdata_o(rvi_rdata));

  wire db_rq_ok = db_valid_i && !db_srq_i && db_idx_i < 12'(NUM_QP);
  logic [15:0] pi_rdata;
  logic        db_hold;                       // a doorbell waiting one cycle behind an init's pi write
  tmnic_pi_tab #(.N(NUM_QP)) u_pitab (
    .clk_i, .rst_ni,
    .db_i(db_rq_ok), .db_idx_i(db_idx_i[QP_W-1:0]), .db_pi_i,
    .init_i(state_q == S_IDLE && init_pend_q), .init_idx_i(init_qp_q),
    .re_i(tab_re), .raddr_i(tab_raddr), .rdata_o(pi_rdata), .hold_o(db_hold));

  // ---------------------------------------------------------------- flush scheduler
  // Set ports: 0 this FSM (own error, flush step), 1 RQ doorbells, 2-3 kicks (SET_QP, the send
  // engine's error). A mark means "look at this QP": S_LOAD decides whether there is a flush.
  logic            set_own;
  // This FSM's own marks (errors, flush steps: rare) reach the scheduler one cycle later, so its
  // packet decision does not run into the scheduler's set buffer in the same cycle.
  logic            own_q;
  logic [QP_W-1:0] own_qp_q;
  logic            sched_valid, sched_take, sched_pending;
  logic [QP_W-1:0] sched_idx;
  tmnic_qp_sched #(.N(NUM_QP), .NSET(4)) u_sched (
    .clk_i, .rst_ni,
    .set_i({kick_i, db_rq_ok, own_q}), .set_idx_i({kick_qp_i, db_idx_i[QP_W-1:0], own_qp_q}),
    .set_ready_o(db_ready_o),
    .valid_o(sched_valid), .idx_o(sched_idx), .take_i(sched_take), .pending_o(sched_pending));

  // ---------------------------------------------------------------- current packet and QP
  // Configuration of the current QP (the responder's view).
  wire qp_rsp_cfg_t cfg = qp_rd_i;
  /* verilator lint_off UNUSEDSIGNAL */
  wire srq_cfg_t scfg = srq_rd_i;       // the op-ring and tag-range fields belong to tmnic_tm_ops
  /* verilator lint_on UNUSEDSIGNAL */
  wire has_srq = (cfg.srq != 16'(NO_SRQ));
  // A rendezvous QP (its send queue is the NIC's); its matched rendezvous requests are offloaded
  // while it can send (RTS)
  wire rv_sq = cfg.sq_base[NIC_SPACE_BIT];
  wire rv_qp = rv_sq && cfg.state == QPS_RTS && !cfg.ud;
  wire [SRQ_W-1:0] sn = cfg.srq[SRQ_W-1:0];
  assign srq_idx_o = sn;
  assign lk_srq_o = sn;
  // The packet checks (QP, peer, state, PSN, opcode sequence) as one verdict (tmnic_rx_check),
  // computed in S_LOOKUP from the QP's word as it arrives and registered (verdict_q) for S_VERDICT,
  // which acts on it: the checks' compares end in a register, not in the actions they choose.
  rx_verdict_e verdict, verdict_q;
  logic        is_last, has_imm, is_write, is_read, is_atomic, rr_first, rr_last, rr_atom;
  /* verilator lint_off PINCONNECTEMPTY */   // (the first-packet decode is in the verdict)
  tmnic_rx_check #(.NUM_QP(NUM_QP)) u_check (
    .opcode_i(h_q.opcode), .psn_i(h_q.psn), .dest_qp_i(h_q.dest_qp), .src_ip_i(h_q.src_ip),
    .state_i(cfg.state), .peer_ip_i(cfg.dest_ip), .epsn_i(tab_rdata.epsn), .held_i(tab_rdata.held),
    .held_wr_i(tab_rdata.wr), .wr_en_i(cfg.rem_access[ACCESS_REMOTE_WRITE_BIT]),
    .rd_en_i(cfg.rem_access[ACCESS_REMOTE_READ_BIT]), .at_en_i(cfg.rem_access[ACCESS_REMOTE_ATOMIC_BIT]),
    .at_al_i(h_q.reth_va[2:0] == 3'd0),
    .ud_i(cfg.ud), .qkey_ok_i(h_q.deth_qkey == cfg.qkey),
    .verdict_o(verdict), .first_o(), .last_o(is_last), .imm_o(has_imm),
    .write_o(is_write), .read_o(is_read), .atomic_o(is_atomic), .rresp_first_o(rr_first),
    .rresp_last_o(rr_last), .atom_ack_o(rr_atom));
  /* verilator lint_on PINCONNECTEMPTY */

  // RX buffer (tmnic_rx_buf, below): the current packet's payload is its head once the packets
  // before it are released.
  logic         rb_beg, rb_full, rb_release, rb_idle;
  logic [127:0] rb_first, rb_rvh;
  // The RVH (payload bytes 16..31, big-endian fields): the sender's buffer, rkey and length
  logic [63:0] rvh_va;
  logic [31:0] rvh_rkey, rvh_len;
  always_comb begin
    for (int unsigned b = 0; b < 8; b++) rvh_va[8 * (7 - b) +: 8] = rb_rvh[8 * b +: 8];
    for (int unsigned b = 0; b < 4; b++) begin
      rvh_rkey[8 * (3 - b) +: 8] = rb_rvh[64 + 8 * b +: 8];
      rvh_len[8 * (3 - b) +: 8] = rb_rvh[96 + 8 * b +: 8];
    end
  end
  assign rvi_wdata = '{tag: cur_q.m.tag, ctx: cur_q.m.ctx, handle: cur_q.m.idx, len: rvh_len};
  // The SRQ table's read port is registered (write-first): scfg is the entry that srq_idx_o (sn)
  // named one cycle earlier, so it is the QP's SRQ only when sn did not change (srq_fresh). sn comes
  // from the QP's own registered read, so right after a new QP is loaded on another SRQ, scfg is a
  // cycle late: tmnic_rx_wqe then decides a cycle later (srq_fresh_i), the flush takes a second
  // S_LOAD cycle.
  logic [SRQ_W-1:0] sn_q;
  always_ff @(posedge clk_i) sn_q <= sn;
  wire srq_fresh = sn_q == sn;
  // The receive WQE of a first packet (tmnic_rx_wqe): RNR, or a WQE taken and its SGEs checked,
  // from the QP's receive queue, its SRQ, or a matched tag's buffer (TM-SRQ); also the flush's
  // fetches from a receive queue. Its checked SGEs go to the scatter's table.
  logic           wq_key, wq_nochk;
  // The range to check, taken with the start in S_VERDICT: the first packet's RETH (a READ's
  // always: a duplicate READ may come while a message is held), or the held WRITE's from the QP
  // word (its length is the capacity)
  sge_t           key_sge;
  assign key_sge = (cur_q.held && !is_read && !is_atomic) ? '{lkey: cur_q.wkey, length: cur_q.cap[31:0], addr: cur_q.wva}
                                            : '{lkey: h_q.reth_rkey, length: h_q.reth_len, addr: h_q.reth_va};
  // A READ WQE's scatter list (WM_RDWQE) is fetched from the send queue like a receive WQE from
  // the receive queue (same SGE layout), never through the SRQ and never empty.
  // (from S_RFETCH's start to the end of the walk in S_WQE; wmode_q is not current in the cycle
  // S_VERDICT starts a walk)
  wire            wq_rd = state_q == S_RFETCH || (state_q == S_WQE && wmode_q == WM_RDWQE);
  logic           wq_start, wq_idle, wq_rnr_now, wq_rnr, wq_done, wq_ok, wq_rq_inc, wq_rndv, wq_flush, wq_flush_last;
  logic [34:0]    wq_cap;
  rx_kind_e       wq_kind;
  logic [63:0]    wq_tag, wq_wrid;
  logic [31:0]    wq_ctx;
  logic [15:0]    wq_idx;
  logic [4:0]     wq_skip;
  logic           sg_we;
  logic [63:0]    wq_rd_addr;
  logic [12:0]    wq_rd_len;
  logic           wq_rd_valid;
  logic [2:0]     sg_idx;
  logic [63:0]    sg_iova;
  logic [31:0]    sg_len;
  tmnic_rx_wqe #(.DATA_W(DATA_W), .NUM_MR(NUM_MR), .NUM_SRQ(NUM_SRQ), .TM_ENTRIES(TM_ENTRIES)) u_wqe (
    .clk_i, .rst_ni,
    .db_i(db_valid_i && db_srq_i), .db_idx_i, .db_pi_i, .srq_reset_i, .srq_reset_idx_i,
    .has_srq_i(has_srq && !wq_rd), .srq_i(sn), .srq_fresh_i(srq_fresh || wq_rd), .scfg_i(scfg), .pd_i(cfg.pd),
    .rq_base_i(wq_rd ? cfg.sq_base : cfg.rq_base), .rq_log_i(wq_rd ? cfg.sq_log : cfg.rq_log),
    .rq_idx_i(wq_rd ? rd_idx_q : cur_q.ci), .rq_avail_i(wq_rd || cur_q.ci != pi_rdata),
    .pay_len_i(h_q.pay_len), .head_beg_i(rb_beg), .head_first_i(rb_first),
    .start_i(wq_start), .key_i(wq_key), .key_ld_i(state_q == S_VERDICT),
    .key_sge_i(key_sge),
    .key_acc_i(is_read ? 4'(1 << ACCESS_REMOTE_READ_BIT) : is_atomic ? 4'(1 << ACCESS_REMOTE_ATOMIC_BIT) :
               4'(1 << ACCESS_REMOTE_WRITE_BIT)), .nochk_i(wq_nochk), .idle_o(wq_idle), .rnr_now_o(wq_rnr_now), .rnr_o(wq_rnr), .done_o(wq_done), .ok_o(wq_ok), .cap_o(wq_cap),
    .kind_o(wq_kind), .rndv_o(wq_rndv), .tag_o(wq_tag), .ctx_o(wq_ctx), .idx_o(wq_idx), .rq_inc_o(wq_rq_inc),
    .skip_o(wq_skip), .wrid_o(wq_wrid),
    .flush_i(wq_flush), .flush_idx_i(cur_q.ci), .flush_last_o(wq_flush_last),
    .sg_we_o(sg_we), .sg_idx_o(sg_idx), .sg_iova_o(sg_iova), .sg_len_o(sg_len), .mr_idx_o, .mr_rd_i,
    .lk_valid_o, .lk_ready_i, .lk_tag_o, .lk_commit_miss_o, .lk_rsp_valid_i, .lk_rsp_hit_i, .lk_rsp_handle_i,
    .lk_rsp_unexp_i, .tb_re_o, .tb_raddr_o, .tb_rdata_i, .add_pend_i, .add_pend_handle_i,
    .tm_exp_o, .tm_unexp_o, .tm_notag_o, .tm_srq_o,
    .rd_addr_o(wq_rd_addr), .rd_len_o(wq_rd_len), .rd_valid_o(wq_rd_valid), .rd_ready_i,
    .rsp_valid_i(rsp_valid_i && !at_rd), .rsp_data_i, .rsp_off_i, .rsp_last_i);
  // Scatter of the packet's delivered bytes into the held WQE's checked SGEs (kept per QP, eight
  // slots: the checker writes each passing SGE there), from the QP's cursor; the DMA write requests
  // are the scatter block's registers. Contexts NUM_QP + q hold QP q's READ WQE's scatter list (a
  // QP receives a message and READ responses at the same time). A READ request's range check
  // writes nothing here (it would overwrite a held WQE's first SGE): its IOVA is kept for the job.
  logic        sc_start, sc_idle, sc_last, sc_valid;
  logic [63:0] sc_addr;
  logic [12:0] sc_off;
  logic [13:0] sc_len;                   // (a piece is at most a packet: 4096 + a UD GRH bytes)
  logic [2:0]  sc_sgi;
  logic [31:0] sc_sgo;
  tmnic_scatter #(.NUM_CTX(2 * NUM_QP), .SLOTS(8), .LEN_W(14)) u_scatter (
    .clk_i, .rst_ni,
    .sg_we_i(sg_we && wmode_q != WM_RKEY), .sg_waddr_i({wq_rd, q_q, sg_idx}), .sg_iova_i(sg_iova), .sg_len_i(sg_len),
    .start_i(sc_start), .idle_o(sc_idle), .ctx_i({rm_q, q_q}), .sgi_i(rm_q ? cur_q.r_sgi : cur_q.sgi),
    .sgo_i(rm_q ? cur_q.r_sgo : cur_q.sgo),
    .skip_i({9'd0, skip_q}), .len_i({1'b0, h_q.pay_len}), .avail_i(rb_full),
    .wr_valid_o(sc_valid), .wr_ready_i, .wr_addr_o(sc_addr), .wr_len_o(sc_len), .wr_off_o(sc_off), .wr_last_o(sc_last),
    .sgi_o(sc_sgi), .sgo_o(sc_sgo));

  // Completions: formatted by kind and registered (tmnic_rx_cqe).
  tmnic_rx_cqe #(.NUM_QP(NUM_QP)) u_cqe (
    .clk_i, .rst_ni, .go_i(c_go), .msg_i(c_msg), .qp_i(q_q), .rcq_i(cfg.recv_cq), .scq_i(scfg.cq),
    .status_i(c_status), .byte_len_i(c_len), .imm_i(c_imm), .flags_i(c_flags), .ud_i(c_ud),
    .ud_sqp_i(h_q.deth_sqp), .busy_o(c_busy),
    .qp_idx_o(cqe_qp_o), .src_qp_i(cqe_src_qp_i), .cqe_o, .cqe_valid_o, .cqe_ready_i);
  // Registered QP reads (tmnic_ctx): the next value of each index register; the ACK generator
  // gives its own next index. The READ engine's done count is read with the QP word.
  assign qp_idx_o = q_d;
  assign rdone_raddr_o = tab_raddr;

  wire unused_sc_len = sc_len[13];
  // The DMA ports: the WQE block's reads and the scatter's writes, or an atomic's 8 bytes (the
  // others are idle then: asserted below). An atomic's result is written from every 8-byte lane
  // group of the data (the strobes pick the right one: its address is 8-byte aligned).
  localparam int unsigned LG_W = $clog2(BYTES / 8);
  wire [LG_W-1:0] at_lg = rd_iova_q[3 +: LG_W];
  assign rd_valid_o = wq_rd_valid || at_rv_q;
  assign rd_addr_o = at_rd ? rd_iova_q : wq_rd_addr;
  assign rd_len_o = at_rd ? 13'(ATOMIC_LEN) : wq_rd_len;
  assign wr_valid_o = sc_valid || at_wv_q;
  assign wr_addr_o = at_wr ? rd_iova_q : sc_addr;
  assign wr_len_o = at_wr ? 13'(ATOMIC_LEN) : sc_len[12:0];
  logic [DATA_W-1:0] rb_data;
  logic              rb_wr_none;
  assign wr_data_o = at_wr ? {(BYTES / 8){at_new_q}} : rb_data;
  // RX buffer: two 8 KiB packet slots (a 4 KiB payload, or a UD datagram's with its GRH), so that the next packet's payload is stored while this one
  // is scattered; the scatter's DMA write requests pull from it (three-cycle reads, the byte shift
  // in two steps: tmnic_dma_wr DATA_LAT = 3). A packet with a payload releases its slot when
  // executed or dropped.
  assign rb_release = (h_q.pay_len != 13'd0) &&
                      ((state_q == S_DONE) || (state_q == S_RDONE) || (state_q == S_DRAIN && rb_full));
  tmnic_rx_buf #(.DATA_W(DATA_W), .SLOTS(2), .RD_LAT(3)) u_rxb (
    .clk_i, .rst_ni,
    .s_tdata_i(s_pay_tdata_i), .s_tkeep_i(s_pay_tkeep_i), .s_tlast_i(s_pay_tlast_i),
    .s_tvalid_i(s_pay_tvalid_i), .s_tready_o(s_pay_tready_o),
    .head_beg_o(rb_beg), .head_full_o(rb_full), .head_first_o(rb_first), .head_rvh_o(rb_rvh), .release_i(rb_release),
    .acc_i(sc_valid && wr_ready_i), .acc_off_i(sc_off),
    .rd_en_i(wr_data_req_i), .rd_off_i(wr_data_off_i), .rd_data_o(rb_data), .done_i(wr_done_i && !at_wr),
    .wr_none_o(rb_wr_none), .idle_o(rb_idle));
  // Headers wait for a pending init and for QPs to flush.
  assign s_hdr_ready_o = (state_q == S_IDLE) && !init_pend_q && !sched_valid && !own_q;

  // An atomic's new value (IBA 9.4.5), the memory bytes taken as a big-endian integer as ConnectX
  // does (ATOMIC_LEN): CMP_SWAP stores swap if the old value equals compare, FETCH_ADD old + add.
  // Bytes in and out in memory order (byte 0 in [7:0]).
  function automatic logic [63:0] atomic_result(input logic cswap, input logic [63:0] old_mem,
                                                input logic [63:0] swap_add, input logic [63:0] compare);
    logic [63:0] old_be, new_be;
    for (int unsigned b = 0; b < 8; b++) old_be[8 * (7 - b) +: 8] = old_mem[8 * b +: 8];
    new_be = cswap ? ((old_be == compare) ? swap_add : old_be) : old_be + swap_add;
    for (int unsigned b = 0; b < 8; b++) atomic_result[8 * b +: 8] = new_be[8 * (7 - b) +: 8];
  endfunction

  // ---------------------------------------------------------------- next state
  logic       a_go;                    // an ACK/NAK for q_q (to the ACK generator)
  logic [7:0] a_syn;
  logic [23:0] a_msn, a_psn;
  always_comb begin
    a_go = 1'b0; a_syn = '0; a_msn = '0; a_psn = '0; c_go = 1'b0;
    c_msg = cur_q.m; c_status = WC_SUCCESS; c_len = '0; c_imm = '0; c_flags = RXF_END; c_ud = 1'b0;
    ud_d = ud_q; rm_d = rm_q; rd_idx_d = rd_idx_q; rchk_d = rchk_q;
    job_valid_d = job_valid_o && !job_ready_i;
    job_qp_d = job_qp_o; job_iova_d = job_iova_o; job_len_d = job_len_o; job_psn_d = job_psn_o;
    job_msn_d = job_msn_o; job_pmtu_log_d = job_pmtu_log_o; job_atom_d = job_atom_o;
    at_old_d = at_old_q; ak_d = ak_q; ac_re = 1'b0; ac_we = 1'b0;
    rv_d = rv_q; rv_we_d = 1'b0; rvi_re = 1'b0; rvi_we = 1'b0;
    rv_qp_d = rv_qp_o; rv_slot_d = rv_slot_o;
    rv_db_valid_d = rv_db_valid_o && !rv_db_ready_i;
    rv_db_qp_d = rv_db_qp_o; rv_db_pi_d = rv_db_pi_o;
    at_rv_d = at_rv_q && !rd_ready_i;
    at_wv_d = at_wv_q && !wr_ready_i;
    // defaults: hold
    state_d = state_q; after_d = after_q; init_pend_d = init_pend_q;
    q_d = q_q; init_qp_d = init_qp_q; init_psn_d = init_psn_q;
    cur_d = cur_q;
    skip_d = skip_q;
    wmode_d = wmode_q; imm_taken_d = imm_taken_q;
    pay_del_d = pay_del_q; room_d = room_q;
    ack_valid_d = ack_valid_o && !ack_ready_i;
    ack_qp_d = ack_qp_o; ack_aeth_d = ack_aeth_o; ack_psn_d = ack_psn_o;
    ack_kind_d = ack_kind_o; ack_first_d = ack_first_o; ack_last_d = ack_last_o; ack_atom_d = ack_atom_o;
    wq_start = 1'b0; wq_flush = 1'b0; wq_key = 1'b0; wq_nochk = 1'b0;
    ev_valid_d = ev_valid_o && !ev_ready_i;
    ev_qp_d = ev_qp_o; ev_syn_d = ev_syn_o; ev_msn_d = ev_msn_o; ev_psn_d = ev_psn_o;
    err_d = 1'b0; err_qp_d = err_qp_o; err_kind_d = err_kind_o; note_d = 1'b0;
    {drop_qp_d, tx_ack_d, tx_rnr_d, tx_nak_d, dup_d, psn_err_d, prot_err_d, drop_qkey_d, ud_nowqe_d} = '0;
    h_ld = 1'b0;
    tab_re = 1'b0; tab_raddr = q_q; tab_we = 1'b0; tab_waddr = q_q; init_we = 1'b0;
    sc_start = 1'b0;
    set_own = 1'b0; sched_take = 1'b0;

    unique case (state_q)
      // Priorities: a pending init, QPs to flush, then packets.
      S_IDLE: begin
        if (init_pend_q) begin
          tab_raddr = init_qp_q;              // (the READ engine's done count: S_INIT)
          state_d = S_INIT;
        end else if (sched_valid) begin
          sched_take = 1'b1;
          q_d = sched_idx;
          tab_re = 1'b1;
          tab_raddr = sched_idx;
          state_d = S_LOAD;
        end else if (s_hdr_valid_i) begin
          h_ld = 1'b1;
          q_d = s_hdr_i.dest_qp[QP_W-1:0];
          tab_re = 1'b1;
          tab_raddr = s_hdr_i.dest_qp[QP_W-1:0];
          state_d = S_LOOKUP;
        end
      end

      // A marked QP: if it is in ERR, flush its held WQE, then its receive queue, one per visit.
      S_LOAD: begin
        cur_d = tab_rdata;
        state_d = S_IDLE;
        if (has_srq && !srq_fresh) begin
          state_d = S_LOAD;                   // (the words read hold: no read or write meanwhile)
        end else if (cfg.state == QPS_ERR && tab_rdata.held) begin
          cur_d.held = 1'b0;
          tab_we = 1'b1;
          c_go = !tab_rdata.wr;               // (an RDMA WRITE holds no WQE)
          c_msg = tab_rdata.m;                // (the flushed word was read this cycle)
          c_status = WC_WR_FLUSH_ERR;
          set_own = 1'b1;
          after_d = S_IDLE;
          state_d = S_OUT;
        end else if (cfg.state == QPS_ERR && !has_srq && tab_rdata.ci != pi_rdata) begin
          state_d = S_FLUSH_GO;
        end
      end
      // The flush starts from the registered word (cur_q.ci), not from the RAM output: the QP
      // table's read no longer runs into the WQE fetcher's ring address (base + index x stride), the
      // placed block's critical path. One cycle per flushed WQE.
      S_FLUSH_GO: begin
        wq_flush = 1'b1;                      // (the WQE block is idle outside S_WQE/S_FLUSH_WAIT)
        state_d = S_FLUSH_WAIT;
      end
      // A QP's receive state starts with as many READ jobs given as the READ engine has finished.
      S_INIT: begin
        init_we = 1'b1;
        init_pend_d = 1'b0;
        state_d = S_IDLE;
      end

      S_FLUSH_WAIT: if (wq_flush_last) state_d = S_FLUSH_CQE;
      S_FLUSH_CQE: begin
        c_go = 1'b1;
        c_msg = '0;                           // a plain receive WQE, never taken
        c_msg.kind = RXK_PLAIN;
        c_msg.wrid = wq_wrid;
        c_msg.idx = cur_q.ci;
        c_status = WC_WR_FLUSH_ERR;
        cur_d.ci = cur_q.ci + 16'd1;
        tab_we = 1'b1;
        set_own = 1'b1;
        after_d = S_IDLE;
        state_d = S_OUT;
      end

      // The packet's QP word arrives: the checks decide (verdict_q), and the word (with the room
      // left in the held WQE) is registered; S_VERDICT acts from registers only (the placed
      // responder's critical paths ran RAM output or header -> checks -> RQ test -> WQE block state).
      S_LOOKUP: begin
        cur_d = tab_rdata;
        room_d = tab_rdata.cap - 35'(tab_rdata.off);
        // (READ jobs out: given less finished, modulo 8; registered in rd_full_q below)
        state_d = S_VERDICT;
      end

      // Which QP, and is the packet for it?
      S_VERDICT: begin
        // The word is written back whatever the decision (unchanged unless a NAK is marked sent),
        // so the write enable does not wait for the packet checks (they were the placed block's
        // critical path: header -> checks -> enable).
        tab_we = 1'b1;
        skip_d = '0;                          // only a matched first packet skips its TMH
        imm_taken_d = 1'b0;
        rv_d = 1'b0;
        ud_d = 1'b0;
        rm_d = 1'b0;
        wq_key = is_write || is_read || is_atomic;  // (from the opcode alone: tmnic_rx_wqe loads it while idle)
        pay_del_d = h_q.pay_len;
        state_d = S_DRAIN;
        after_d = S_DRAIN;
        // IBA 11.6.3.1 Communication Established: the first request packet an RC QP gets in RTR
        // (one that fails the QP says so instead). Once until the receive state is initialised again.
        if (cfg.state == QPS_RTR && !cfg.ud && !cur_q.est &&
            (verdict_q == RV_DUP || verdict_q == RV_GAP || verdict_q == RV_FIRST || verdict_q == RV_NEXT ||
             verdict_q == RV_READ || verdict_q == RV_DUP_READ || verdict_q == RV_ATOMIC ||
             verdict_q == RV_DUP_ATOMIC)) begin
          cur_d.est = 1'b1;
          note_d = 1'b1;
          err_qp_d = q_q;
          err_kind_d = 3'(AEV_COMM_EST);
        end
        unique case (verdict_q)
          RV_ACK: begin
            ack_valid_d = 1'b1;
            ack_qp_d = q_q;
            ack_aeth_d = h_q.aeth;
            ack_psn_d = h_q.psn;
            ack_kind_d = ACK_PKT;
            state_d = S_OUT;
          end
          // A READ response: is it the next of the READ at the head of the send queue? (the
          // completer knows; ACK/NAK packets and these reach it in arrival order)
          RV_RRESP: begin
            ack_valid_d = 1'b1;
            ack_qp_d = q_q;
            ack_aeth_d = h_q.aeth;
            ack_psn_d = h_q.psn;
            ack_kind_d = ACK_RR;
            ack_first_d = rr_first;
            ack_last_d = rr_last;
            ack_atom_d = rr_atom;
            rm_d = 1'b1;
            state_d = S_RRQ;
          end
          // A READ request (or a duplicate, executed again): its range's check (none for zero
          // bytes), then a job; with MAX_RD_ATOM jobs of the QP out, dropped unanswered.
          RV_READ, RV_DUP_READ, RV_ATOMIC: begin
            if (!rd_full_q) begin
              wq_start = h_q.reth_len != 32'd0;   // (an atomic's is ATOMIC_LEN)
              wmode_d = WM_RKEY;
              state_d = (h_q.reth_len == 32'd0) ? S_RJOB : S_WQE;
            end
          end
          // A duplicate atomic: its saved result, if still there (the requester keeps at most
          // max_rd_atomic <= MAX_RD_ATOM atomics and READs outstanding, so it is).
          RV_DUP_ATOMIC: begin
            dup_d = 1'b1;
            if (!rd_full_q) begin
              ak_d = '0;
              state_d = S_ADUP;
            end
          end
          RV_DUP: begin                     // re-ACK the last executed PSN, do not execute
            dup_d = 1'b1;
            a_go = 1'b1; a_syn = AETH_SYN_ACK; a_msn = cur_q.msn; a_psn = cur_q.epsn - 24'd1;
            tx_ack_d = 1'b1;
            state_d = S_OUT;
          end
          RV_GAP: begin                     // NAK once per gap
            psn_err_d = 1'b1;
            if (!cur_q.nak_sent) begin
              cur_d.nak_sent = 1'b1;
              a_go = 1'b1; a_syn = AETH_SYN_NAK_PSN_SEQ_ERR; a_msn = cur_q.msn; a_psn = cur_q.epsn;
              tx_nak_d = 1'b1;
              state_d = S_OUT;
            end
          end
          RV_INV_REQ: begin
            a_go = 1'b1; a_syn = AETH_SYN_NAK_INV_REQ; a_msn = cur_q.msn; a_psn = h_q.psn;
            tx_nak_d = 1'b1;
            err_d = 1'b1; err_qp_d = q_q; err_kind_d = 3'(AEV_QP_REQ_ERR);
            set_own = 1'b1;
            state_d = S_OUT;
          end
          RV_FIRST: begin                   // a receive WQE, or RNR (tmnic_rx_wqe)
            if (is_write) begin             // the RETH range's check (none for zero bytes)
              wq_start = h_q.reth_len != 32'd0;
              wmode_d = WM_KEY;
              state_d = S_WQE;
            end else if (rv_qp && rv_full_q) begin
              // A rendezvous QP with all its internal WQEs in use: RNR (the message may be a
              // rendezvous request this QP could not start now), nothing consumed
              state_d = S_RNR;
            end else begin
              wq_start = 1'b1;
              wmode_d = WM_RECV;
              state_d = wq_rnr_now ? S_RNR : S_WQE;
            end
          end
          RV_NEXT: begin
            if (is_write) begin               // the held range again (its rkey may be gone)
              wq_start = 1'b1;
              wmode_d = WM_RECHK;
              state_d = S_WQE;
            end else begin
              state_d = S_EXEC;
            end
          end
          RV_UD: begin                      // a datagram: a receive WQE, or dropped (no RNR on UD)
            ud_d = 1'b1;
            wq_start = 1'b1;
            wmode_d = WM_RECV;
            state_d = wq_rnr_now ? S_RNR : S_WQE;
          end
          RV_QKEY: drop_qkey_d = 1'b1;      // IBA C10-15: silently dropped, counted
          default: drop_qp_d = 1'b1;         // RV_DROP: unknown QP, wrong peer, not ready, not a SEND
        endcase
      end

      // No receive WQE (or the TM-SRQ's counters are too far apart): RNR NAK, packet dropped.
      // A datagram with no receive WQE is dropped and counted (UD has no RNR NAK).
      S_RNR: begin
        if (ud_q) begin
          ud_nowqe_d = 1'b1;
          state_d = S_DRAIN;
        end else begin
          a_go = 1'b1; a_syn = aeth_syn_rnr(cfg.min_rnr_timer); a_msn = cur_q.msn; a_psn = h_q.psn;
          tx_rnr_d = 1'b1;
          after_d = S_DRAIN;
          state_d = S_OUT;
        end
      end

      // The first packet's receive WQE (tmnic_rx_wqe): taken, its SGEs checked (LOCAL_WRITE) and
      // written to the scatter's table; it is held for the whole message. Or an RDMA WRITE's range,
      // checked and written there as one SGE (held, not written to the table yet when a
      // WRITE_ONLY_IMM's WQE follows: an RNR for that must leave the QP as it was); or a
      // WRITE_WITH_IMM's receive WQE, not checked.
      S_WQE: begin
        if (wmode_q == WM_RKEY) begin
          if (wq_done && wq_ok) begin
            state_d = is_atomic ? S_AWAIT : S_RJOB;
          end else if (wq_done) begin
            // IBA 9.7.5.2.3: a bad range is a remote access error; the responder QP fails (class C)
            a_go = 1'b1; a_syn = AETH_SYN_NAK_REM_ACCESS_ERR; a_msn = cur_q.msn; a_psn = h_q.psn;
            tx_nak_d = 1'b1;
            err_d = 1'b1; err_qp_d = q_q; err_kind_d = 3'(AEV_QP_ACCESS_ERR);
            set_own = 1'b1;
            after_d = S_DRAIN;
            state_d = S_OUT;
          end
        end else if (wmode_q == WM_RDWQE) begin
          // The READ WQE's scatter list is checked: place from its start (a FIRST/ONLY), or from
          // where the READ is (checked again because an MR changed: an invalidated key stops it).
          if (wq_done) begin
            cur_d.r_bad = !wq_ok;
            cur_d.r_gen = r_gen_q;
            if (!rchk_q) begin
              cur_d.r_off = '0;
              cur_d.r_cap = wq_cap;
              cur_d.r_sgi = '0;
              cur_d.r_sgo = '0;
            end
            state_d = S_REXEC;
          end
        end else if (wmode_q == WM_KEY) begin
          if (h_q.reth_len == 32'd0 || wq_done) begin
            cur_d.held = 1'b1;
            cur_d.wr = 1'b1;
            cur_d.bad = h_q.reth_len != 32'd0 && !wq_ok;
            cur_d.m = '0;                     // (kind RXK_PLAIN)
            cur_d.off = '0;
            cur_d.cap = 35'(h_q.reth_len);
            cur_d.wva = h_q.reth_va;
            cur_d.wkey = h_q.reth_rkey;
            room_d = 35'(h_q.reth_len);
            cur_d.sgi = '0;
            cur_d.sgo = '0;
            pay_del_d = h_q.pay_len;
            if (has_imm && !cur_d.bad) begin
              state_d = S_WIMM;
            end else begin
              tab_we = 1'b1;
              state_d = S_EXEC;
            end
          end
        end else if (wmode_q == WM_RECHK) begin
          // (a zero-length WRITE has no later packets, so the walk always runs)
          if (wq_done) begin
            cur_d.bad = !wq_ok;
            state_d = (has_imm && wq_ok) ? S_WIMM : S_EXEC;
          end
        end else if (wmode_q == WM_IMM) begin
          if (wq_rnr) begin
            state_d = S_RNR;
          end else if (wq_done) begin
            cur_d.m.kind = RXK_PLAIN;
            cur_d.m.wrid = wq_wrid;
            cur_d.m.idx = wq_idx;
            if (wq_rq_inc) cur_d.ci = cur_q.ci + 16'd1;
            imm_taken_d = 1'b1;
            tab_we = 1'b1;
            state_d = S_EXEC;
          end
        end else if (wq_rnr) begin
          state_d = S_RNR;
        end else if (wq_done) begin
          cur_d.bad = !wq_ok;
          cur_d.held = 1'b1;
          cur_d.wr = 1'b0;
          cur_d.m.kind = wq_kind; cur_d.m.rndv = wq_rndv; cur_d.m.msent = 1'b0;
          cur_d.m.tag = wq_tag; cur_d.m.ctx = wq_ctx;   // (used for RXK_MATCHED only)
          cur_d.m.wrid = wq_wrid;
          cur_d.m.idx = wq_idx;
          if (wq_rq_inc) cur_d.ci = cur_q.ci + 16'd1;  // (the receive queue's WQE is consumed)
          cur_d.off = '0;
          cur_d.cap = wq_cap;
          room_d = wq_cap;
          cur_d.sgi = '0;
          cur_d.sgo = '0;
          skip_d = wq_skip;
          pay_del_d = h_q.pay_len - 13'(wq_skip);
          tab_we = 1'b1;
          state_d = S_EXEC;
          // A one-packet rendezvous request on a rendezvous QP that matched a buffer large enough:
          // offloaded (S_RVM). Otherwise (a QP with its own send queue, a longer request, a
          // smaller buffer) its headers land in the buffer and it completes TM_RNDV_INCOMPLETE.
          if (wq_ok && wq_kind == RXK_MATCHED && wq_rndv && rv_qp && is_last &&
              h_q.pay_len >= 13'(TMH_SIZE + RVH_SIZE) && 35'(rvh_len) <= wq_cap) begin
            state_d = S_RVM;
          end
        end
      end

      // An offloaded rendezvous: the MATCH completion now; the descriptor of its READ and FIN
      // (tmnic_rndv_sq, slot rv_pi / 2 mod RNDV_SLOTS) and its info for DATA_VALID; the doorbell of
      // the two internal WQEs. The packet then completes as any last packet (S_DONE: PSN, MSN,
      // ACK), with no END completion and nothing placed.
      S_RVM: begin
        c_go = 1'b1;
        c_msg = cur_q.m;
        c_msg.rndv = 1'b0;                    // (its status is SUCCESS: the NIC finishes it)
        c_flags = RXF_MATCH;
        rv_we_d = 1'b1;
        rv_qp_d = q_q;
        rv_slot_d = cur_q.rv_pi[1 +: RV_SL_W];
        // (rv_desc_o is loaded in this state: below)
        rvi_we = 1'b1;
        rv_db_valid_d = 1'b1;
        rv_db_qp_d = q_q;
        rv_db_pi_d = cur_q.rv_pi + 16'd2;
        cur_d.rv_pi = cur_q.rv_pi + 16'd2;
        rv_d = 1'b1;
        pay_del_d = '0;
        state_d = (h_q.pay_len == 13'd0) ? S_DONE : S_STORE;
      end
      // The data of an offloaded rendezvous has landed (its READ's last response): DATA_VALID, on
      // the TM-SRQ's CQ, with the request's tag and the length read.
      S_RVDV: begin
        rvi_re = 1'b1;
        state_d = S_RVDC;
      end
      S_RVDC: begin
        c_go = 1'b1;
        c_msg = '0;
        c_msg.kind = RXK_MATCHED;
        c_msg.msent = 1'b1;
        c_msg.idx = rvi_rdata.handle;
        c_msg.tag = rvi_rdata.tag;
        c_msg.ctx = rvi_rdata.ctx;
        c_len = rvi_rdata.len;
        c_flags = RXF_END;
        after_d = S_IDLE;
        state_d = S_OUT;
      end

      // A WRITE_WITH_IMM's receive WQE (its last packet): taken unchecked, or RNR.
      S_WIMM: begin
        wq_start = 1'b1;
        wq_nochk = 1'b1;
        wmode_d = WM_IMM;
        state_d = wq_rnr_now ? S_RNR : S_WQE;
      end

      // Execute the packet into the held WQE (or the WRITE's range: its last packet must fill it
      // exactly).
      S_EXEC: begin
        if (ud_q && !cur_q.bad && room_q < 35'(pay_del_q)) begin
          // A datagram longer than its receive buffer: the WQE completes with LOC_LEN_ERR and the
          // QP goes on (IBA class D, as rxe does; no DMA): docs/architecture.md.
          cur_d.held = 1'b0;
          tab_we = 1'b1;
          c_go = 1'b1;
          c_ud = 1'b1;
          c_status = WC_LOC_LEN_ERR;
          c_len = 32'(h_q.pay_len);
          after_d = S_DRAIN;
          state_d = S_OUT;
        end else if (cur_q.bad || room_q < 35'(pay_del_q) || (cur_q.wr && is_last && room_q != 35'(pay_del_q))) begin
          cur_d.held = 1'b0;
          tab_we = 1'b1;
          err_d = 1'b1; err_qp_d = q_q;
          // A WRITE's failure has no completion here (IBA 11.6.3: an affiliated event says it); a
          // receive's does, with the status below.
          err_kind_d = !cur_q.wr ? 3'(AEV_QP_ERR) : cur_q.bad ? 3'(AEV_QP_ACCESS_ERR) : 3'(AEV_QP_REQ_ERR);
          set_own = 1'b1;
          prot_err_d = cur_q.bad && !cur_q.wr;
          // A WRITE holds no WQE (a WRITE_WITH_IMM's last packet took one: it completes with the
          // error, as rxe reports it).
          c_go = !cur_q.wr || imm_taken_q;
          c_status = cur_q.wr ? (cur_q.bad ? WC_REM_ACCESS_ERR : WC_REM_INV_REQ_ERR) :
                     cur_q.bad ? WC_LOC_PROT_ERR : WC_LOC_LEN_ERR;
          a_go = 1'b1;
          a_syn = cur_q.wr ? (cur_q.bad ? AETH_SYN_NAK_REM_ACCESS_ERR : AETH_SYN_NAK_INV_REQ) :
                  cur_q.bad ? AETH_SYN_NAK_REM_OP_ERR : AETH_SYN_NAK_INV_REQ;
          a_msn = cur_q.msn; a_psn = h_q.psn;
          tx_nak_d = 1'b1;
          if (ud_q) begin                     // (a datagram is never NAKed)
            a_go = 1'b0;
            tx_nak_d = 1'b0;
          end
          after_d = S_DRAIN;
          state_d = S_OUT;
        end else if (pay_del_q != 13'd0) begin
          sc_start = 1'b1;                    // (it waits for the payload to be stored)
          state_d = S_SCATTER;
        end else begin
          // Nothing to place (no payload, or a matched EAGER's TMH only): a payload is released
          // once stored.
          state_d = (h_q.pay_len == 13'd0) ? S_DONE : S_STORE;
        end
      end

      S_STORE: if (rb_full) state_d = S_DONE;

      // A READ job: the expected PSN moves past its responses (at least one: a zero-length READ has
      // a READ_RESP_ONLY) and the MSN counts it; a duplicate changes neither.
      S_RJOB: begin
        job_valid_d = 1'b1;
        job_qp_d = q_q;
        job_atom_d = is_atomic;
        job_iova_d = is_atomic ? at_old_q : (h_q.reth_len == 32'd0) ? 64'd0 : rd_iova_q;
        // An executed atomic's result is saved for its duplicates (the oldest slot is reused).
        if (verdict_q == RV_ATOMIC) begin
          ac_we = 1'b1;
          cur_d.av[cur_q.ap] = 1'b1;
          cur_d.ap = cur_q.ap + 1'b1;
        end
        job_len_d = h_q.reth_len;
        job_psn_d = h_q.psn;
        job_msn_d = cur_q.msn;
        job_pmtu_log_d = cfg.pmtu_log;
        cur_d.rdi = cur_q.rdi + 3'd1;
        if (verdict_q == RV_READ || verdict_q == RV_ATOMIC) begin
          cur_d.epsn = cur_q.epsn + ((h_q.reth_len == 32'd0) ? 24'd1 : 24'(((h_q.reth_len - 32'd1) >> cfg.pmtu_log) + 32'd1));
          cur_d.msn = cur_q.msn + 24'd1;
          cur_d.nak_sent = 1'b0;
          job_msn_d = cur_q.msn + 24'd1;
        end
        tab_we = 1'b1;
        after_d = S_DRAIN;
        state_d = S_OUT;
      end

      // An atomic, executed while nothing else touches host memory: the earlier packets' writes
      // have left (the next packet waits in the RX buffer), then read, compute, write, and the
      // result goes out once the write has left too (S_RJOB).
      S_AWAIT: if (rb_wr_none) begin
        at_rv_d = 1'b1;
        state_d = S_ARD;
      end
      S_ARD: if (rsp_valid_i) begin
        at_old_d = rsp_data_i[64 * 32'(at_lg) +: 64];
        state_d = S_ACALC;
      end
      S_ACALC: begin                          // (at_new_q is registered from at_old_q now)
        at_wv_d = 1'b1;
        state_d = S_AWR;
      end
      S_AWR: if (wr_done_i) state_d = S_RJOB;
      // A duplicate atomic: search the QP's saved results, one slot per three cycles (read, compare
      // into ac_hit_q, decide: the RAM output does not reach the state register in one cycle).
      S_ADUP: begin
        ac_re = 1'b1;
        state_d = S_ADUPC;
      end
      S_ADUPC: begin
        at_old_d = ac_rdata.old;              // (used only on a hit)
        state_d = S_ADUPH;
      end
      S_ADUPH: begin
        if (ac_hit_q) begin
          state_d = S_RJOB;
        end else if (ak_q == $bits(ak_q)'(MAX_RD_ATOM - 1)) begin
          state_d = S_DRAIN;                  // (not there: dropped; cannot happen, see above)
        end else begin
          ak_d = ak_q + 1'b1;
          state_d = S_ADUP;
        end
      end

      // The completer's verdict on a READ response: drop it, or place it (the first response
      // fetches and checks the READ WQE's scatter list, from the next cycle: the WQE block takes
      // the send queue's ring from wmode_q).
      S_RRQ: if (vr_valid_i) begin
        rd_idx_d = vr_idx_i;
        rchk_d = !ack_first_o;
        if (!vr_ok_i) begin
          state_d = S_DRAIN;
        end else if (ack_first_o || cur_q.r_gen != mr_gen_i) begin
          wmode_d = WM_RDWQE;
          state_d = S_RFETCH;
        end else begin
          state_d = S_REXEC;
        end
      end
      S_RFETCH: begin
        wq_start = 1'b1;              // (the generation it checks against: r_gen_q)
        state_d = S_WQE;
      end

      // A READ response's payload: FIRST/MIDDLE exactly PMTU, LAST/ONLY exactly what is left of the
      // READ (IBA 9.7.5.1.3 C9-?): else, or with a bad scatter list, the READ fails with no DMA.
      S_REXEC: begin
        if (cur_q.r_bad || 35'(h_q.pay_len) > (cur_q.r_cap - 35'(cur_q.r_off)) ||
            (!ack_last_o && h_q.pay_len != (13'd1 << cfg.pmtu_log)) ||
            (ack_last_o && 35'(h_q.pay_len) != (cur_q.r_cap - 35'(cur_q.r_off)))) begin
          prot_err_d = cur_q.r_bad;
          ack_valid_d = 1'b1;
          ack_kind_d = ACK_RDERR;
          ack_aeth_d = {24'd0, cur_q.r_bad ? WC_LOC_PROT_ERR : WC_BAD_RESP_ERR};
          after_d = S_DRAIN;
          state_d = S_OUT;
        end else if (h_q.pay_len != 13'd0) begin
          sc_start = 1'b1;
          state_d = S_RSCAT;
        end else begin
          state_d = S_RDONE;
        end
      end
      S_RSCAT: if (wr_valid_o && wr_ready_i && sc_last) state_d = S_RDONE;
      // Placed: the cursor moves on; the last response's placement completes the READ.
      S_RDONE: begin
        cur_d.r_off = cur_q.r_off + {19'd0, h_q.pay_len};
        if (h_q.pay_len != 13'd0) begin
          cur_d.r_sgi = sc_sgi;
          cur_d.r_sgo = sc_sgo;
        end
        if (ack_last_o) begin
          ack_valid_d = 1'b1;
          ack_kind_d = ACK_RDDONE;
        end
        tab_we = 1'b1;
        after_d = (ack_last_o && rv_sq) ? S_RVDV : S_IDLE;   // (a rendezvous QP's READs are its own)
        state_d = S_OUT;
      end

      // Until the packet's last DMA write request is taken: the RX buffer keeps the slot until its
      // writes are done.
      S_SCATTER: if (wr_valid_o && wr_ready_i && sc_last) state_d = S_DONE;

      // Packet executed: advance PSN, complete on the last packet, ACK if asked.
      S_DONE: begin
        cur_d.epsn = cur_q.epsn + 24'd1;
        cur_d.nak_sent = 1'b0;
        cur_d.off = cur_q.off + {19'd0, pay_del_q};
        if (pay_del_q != 13'd0) begin   // the scatter moved the cursor
          cur_d.sgi = sc_sgi;
          cur_d.sgo = sc_sgo;
        end
        if (is_last) begin
          c_go = (!cur_q.wr || has_imm) && !rv_q;   // (a WRITE only with an immediate; an offloaded
                                                    // rendezvous completes when its data is in)
          c_len = cur_q.off + {19'd0, pay_del_q};
          c_imm = has_imm ? h_q.imm : 32'd0;
          c_flags = cur_q.wr ? RXF_WRITE_IMM : has_imm ? RXF_END_IMM : RXF_END;
          c_ud = ud_q;
          cur_d.held = 1'b0;
          cur_d.msn = cur_q.msn + 24'd1;
        end else if (cur_q.m.kind == RXK_MATCHED && !cur_q.m.msent) begin
          // First packet of a multi-packet matched message: the MATCH completion, data follows.
          c_go = 1'b1;
          c_flags = RXF_MATCH;
          cur_d.m.msent = 1'b1;
        end
        if (h_q.ack_req && !ud_q) begin
          a_go = 1'b1; a_syn = AETH_SYN_ACK; a_msn = cur_d.msn; a_psn = h_q.psn;
          tx_ack_d = 1'b1;
        end
        tab_we = 1'b1;
        after_d = S_IDLE;
        state_d = S_OUT;
      end

      // Wait until every output raised above has been taken.
      S_OUT: if (!ack_valid_d && !c_busy && !ev_valid_d && !job_valid_d && !rv_db_valid_d) state_d = after_q;

      // Discard the payload of a packet that is not executed.
      S_DRAIN: if (h_q.pay_len == 13'd0 || rb_full) state_d = S_IDLE;

      default: state_d = S_IDLE;
    endcase

    if (a_go) begin
      ev_valid_d = 1'b1;
      ev_qp_d = q_q; ev_syn_d = a_syn; ev_msn_d = a_msn; ev_psn_d = a_psn;
    end

    if (init_rq_i) begin
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
      init_pend_q <= 1'b0;
      tab_we_q <= 1'b0;
      own_q <= 1'b0;
      ack_valid_o <= 1'b0;
      ev_valid_o <= 1'b0;
      job_valid_o <= 1'b0;
      {at_rv_q, at_wv_q} <= '0;
      {rv_we_o, rv_db_valid_o, tb_vld_q} <= '0;
      err_o <= 1'b0;
      note_o <= 1'b0;
      {drop_qp_o, tx_ack_o, tx_rnr_o, tx_nak_o, dup_o, psn_err_o, prot_err_o, drop_qkey_o, ud_nowqe_o} <= '0;
    end else begin
      state_q <= state_d;
      after_q <= after_d;
      init_pend_q <= init_pend_d;
      tab_we_q <= tab_we;
      own_q <= set_own;
      ack_valid_o <= ack_valid_d;
      ev_valid_o <= ev_valid_d;
      job_valid_o <= job_valid_d;
      {at_rv_q, at_wv_q} <= {at_rv_d, at_wv_d};
      {rv_we_o, rv_db_valid_o, tb_vld_q} <= {rv_we_d, rv_db_valid_d, tb_re_o};
      err_o <= err_d;
      note_o <= note_d;
      {drop_qp_o, tx_ack_o, tx_rnr_o, tx_nak_o, dup_o, psn_err_o, prot_err_o, drop_qkey_o, ud_nowqe_o} <=
        {drop_qp_d, tx_ack_d, tx_rnr_d, tx_nak_d, dup_d, psn_err_d, prot_err_d, drop_qkey_d, ud_nowqe_d};
    end
  end

  always_ff @(posedge clk_i) begin
    q_q <= q_d; init_qp_q <= init_qp_d; init_psn_q <= init_psn_d; own_qp_q <= q_q;
    tab_waddr_q <= tab_waddr;
    cur_q <= cur_d;
    skip_q <= skip_d;
    wmode_q <= wmode_d; imm_taken_q <= imm_taken_d; ud_q <= ud_d; rm_q <= rm_d; rd_idx_q <= rd_idx_d;
    rchk_q <= rchk_d;
    if (state_q == S_RFETCH) r_gen_q <= mr_gen_i;
    if (state_q == S_LOOKUP) rd_full_q <= (tab_rdata.rdi - rdone_rdata_i) >= 3'(MAX_RD_ATOM);
    if (state_q == S_LOOKUP) rv_full_q <= (tab_rdata.rv_pi - rci_rdata_i) > 16'(2 * RNDV_SLOTS - 2);
    if (tb_vld_q) tbuf_q <= {tb_rdata_i[127:96], tb_rdata_i[63:0]};      // (the classification's read of the matched entry)
    rv_q <= rv_d;
    rv_qp_o <= rv_qp_d; rv_slot_o <= rv_slot_d;
    if (state_q == S_RVM)
      rv_desc_o <= '{lkey: tbuf_q[95:64], addr: tbuf_q[63:0], va: rvh_va, rkey: rvh_rkey, len: rvh_len,
                     tag: cur_q.m.tag, ctx: cur_q.m.ctx, handle: cur_q.m.idx};
    rv_db_qp_o <= rv_db_qp_d; rv_db_pi_o <= rv_db_pi_d;
    if (sg_we && wmode_q == WM_RKEY) rd_iova_q <= sg_iova;
    job_qp_o <= job_qp_d; job_iova_o <= job_iova_d; job_len_o <= job_len_d; job_psn_o <= job_psn_d;
    job_msn_o <= job_msn_d; job_pmtu_log_o <= job_pmtu_log_d; job_atom_o <= job_atom_d;
    ack_kind_o <= ack_kind_d; ack_first_o <= ack_first_d; ack_last_o <= ack_last_d; ack_atom_o <= ack_atom_d;
    at_old_q <= at_old_d; ak_q <= ak_d;
    if (state_q == S_ADUPC) ac_hit_q <= cur_q.av[ak_q] && ac_rdata.psn == h_q.psn;
    if (state_q == S_ACALC) at_new_q <= atomic_result(h_q.opcode == OP_CMP_SWAP, at_old_q, h_q.atom_swap, h_q.atom_cmp);
    if (state_q == S_LOOKUP) verdict_q <= verdict;
    pay_del_q <= pay_del_d; room_q <= room_d;
    ack_qp_o <= ack_qp_d; ack_aeth_o <= ack_aeth_d; ack_psn_o <= ack_psn_d;
    ev_qp_o <= ev_qp_d; ev_syn_o <= ev_syn_d; ev_msn_o <= ev_msn_d; ev_psn_o <= ev_psn_d;
    err_qp_o <= err_qp_d;
    err_kind_o <= err_kind_d;
  end

  // The header register, loaded only when a header is taken.
  always_ff @(posedge clk_i) if (h_ld) h_q <= s_hdr_i;

  assign quiet_o = (state_q == S_IDLE) && !rd_valid_o && !wr_valid_o && !init_pend_q;
  assign rci_re_o = tab_re;
  assign rci_raddr_o = tab_raddr;
  assign idle_o = (state_q == S_IDLE) && !sched_pending && !own_q && !init_pend_q && !db_hold && !ev_valid_o &&
                  !rv_db_valid_o &&
                  !ack_valid_o && !job_valid_o && !cqe_valid_o && rb_idle;
  // Blocked lookups and misses with an empty SRQ are handled alike (RNR NAK), so "blocked" itself
  // is not needed. The WQE source is idle whenever this FSM requests (it waits for last_o;
  // asserted there).
  wire unused_ok = lk_rsp_blocked_i;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  // (u_qtab and the scatter's SGE table assert themselves that a word is never read while written)
  // One event register for errors and notes: never both in a cycle (a note only for a packet that
  // does not fail the QP in S_VERDICT; a later failure of the same packet comes cycles later).
  a_note_err: assert property (@(posedge clk_i) disable iff (!chk_q) !(note_d && err_d))
    else $error("tmnic_rx_engine: an error and a note in the same cycle");
  a_init_twice: assert property (@(posedge clk_i) disable iff (!chk_q) !(init_rq_i && init_pend_q))
    else $error("tmnic_rx_engine: QP init while another is pending");
  a_sched_take: assert property (@(posedge clk_i) disable iff (!chk_q) sched_take |-> sched_valid)
    else $error("tmnic_rx_engine: scheduler offer taken while not valid");
  a_scatter_start: assert property (@(posedge clk_i) disable iff (!chk_q) sc_start |-> sc_idle)
    else $error("tmnic_rx_engine: scatter started while one runs");
  a_ack_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    ack_valid_o && !ack_ready_i |=> ack_valid_o && $stable(ack_qp_o) && $stable(ack_aeth_o) && $stable(ack_psn_o) &&
      $stable(ack_kind_o) && $stable(ack_first_o) && $stable(ack_last_o) && $stable(ack_atom_o))
    else $error("tmnic_rx_engine: ACK event changed before it was taken");
  a_job_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    job_valid_o && !job_ready_i |=> job_valid_o && $stable(job_qp_o) && $stable(job_iova_o) && $stable(job_len_o) &&
      $stable(job_psn_o) && $stable(job_msn_o) && $stable(job_pmtu_log_o) && $stable(job_atom_o))
    else $error("tmnic_rx_engine: READ job changed before it was taken");
  a_job_over: assert property (@(posedge clk_i) disable iff (!chk_q) state_q == S_RJOB |-> !job_valid_o)
    else $error("tmnic_rx_engine: READ job raised over one not yet taken");
  a_verdict: assert property (@(posedge clk_i) disable iff (!chk_q) vr_valid_i |-> state_q == S_RRQ && !ack_valid_o)
    else $error("tmnic_rx_engine: a READ response verdict when none was asked");
  a_ev_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    ev_valid_o && !ev_ready_i |=> ev_valid_o && $stable(ev_qp_o) && $stable(ev_syn_o) && $stable(ev_msn_o) &&
      $stable(ev_psn_o))
    else $error("tmnic_rx_engine: ACK/NAK request changed before it was taken");
  // The rendezvous doorbell to the requester is held until taken (the requester's doorbell port
  // has priority for the host's own doorbells)
  tmnic_hold_chk #(.W($bits(rv_db_qp_o) + $bits(rv_db_pi_o)), .NAME("tmnic_rx_engine: rendezvous doorbell"))
    u_rvdb_hold (.clk_i, .rst_ni, .valid_i(rv_db_valid_o), .ready_i(rv_db_ready_i), .data_i({rv_db_qp_o, rv_db_pi_o}));
  a_ev_over: assert property (@(posedge clk_i) disable iff (!chk_q) a_go |-> !ev_valid_o)
    else $error("tmnic_rx_engine: ACK/NAK request raised over one not yet taken");
  a_lookup: assert property (@(posedge clk_i) disable iff (!chk_q) state_q == S_LOOKUP |-> $past(tab_re))
    else $error("tmnic_rx_engine: QP word used without a read");
  // Everything that reads the SRQ's entry does so when it is current.
  a_srq_fresh: assert property (@(posedge clk_i) disable iff (!chk_q)
    (c_go && c_msg.kind != RXK_PLAIN) |-> srq_fresh)
    else $error("tmnic_rx_engine: the SRQ's entry used before its read returned");
  a_late_write: assert property (@(posedge clk_i) disable iff (!chk_q) tab_we_q |-> state_q != S_IDLE)
    else $error("tmnic_rx_engine: the QP word's late write-back in a cycle that may read or init the table");
  a_write_imm_wqe: assert property (@(posedge clk_i) disable iff (!chk_q)
    (c_go && c_flags == RXF_WRITE_IMM) |-> imm_taken_q)
    else $error("tmnic_rx_engine: a WRITE_WITH_IMM completion without its receive WQE");
  // An atomic owns the DMA ports: the WQE block issues no read and the scatter no write meanwhile,
  // and no earlier write is still on its way (it would be counted as the atomic's).
  a_atom_rd: assert property (@(posedge clk_i) disable iff (!chk_q) at_rd |-> !wq_rd_valid && wq_idle)
    else $error("tmnic_rx_engine: a WQE read while an atomic reads");
  a_atom_wr: assert property (@(posedge clk_i) disable iff (!chk_q) at_wr |-> !sc_valid && rb_wr_none)
    else $error("tmnic_rx_engine: a scatter write while an atomic writes");
  a_atom_aligned: assert property (@(posedge clk_i) disable iff (!chk_q) at_rv_q |-> rd_iova_q[2:0] == 3'd0)
    else $error("tmnic_rx_engine: an atomic's address is not 8-byte aligned");
  a_wqe_start: assert property (@(posedge clk_i) disable iff (!chk_q) (wq_start || wq_flush) |-> wq_idle)
    else $error("tmnic_rx_engine: receive WQE requested while one is taken");
`endif
endmodule
