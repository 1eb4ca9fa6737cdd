// tmnic internal types shared between engines (not visible to software; see tmnic_hwif_pkg for that).
package tmnic_pkg;
  import tmnic_hwif_pkg::*;

  // roce_hdr_t (the engines' packet header), the BTH opcodes and the AETH/RNR numbers come from
  // tmnic_hwif_pkg (hwif/spec.py).

  // Static QP configuration, written only by commands (SET_QP); engines read it.
  typedef struct packed {
    logic [2:0]  state;       // tmnic_hwif_pkg::qp_state_e; engines may force ERR
    logic [15:0] pd;
    logic [15:0] send_cq;
    logic [15:0] recv_cq;
    logic [15:0] srq;         // NO_SRQ: the QP's own receive queue
    logic [63:0] sq_base;
    logic [3:0]  sq_log;
    logic [63:0] rq_base;
    logic [3:0]  rq_log;
    logic [3:0]  pmtu_log;    // log2(path MTU bytes): 8..12
    logic [23:0] dest_qpn;
    logic [31:0] dest_ip;
    logic [47:0] dmac;
    logic [4:0]  min_rnr_timer;
    logic [2:0]  rnr_retry;   // 7 = retry forever
    logic [2:0]  retry_cnt;
    logic [4:0]  timeout;
    logic [3:0]  rem_access;  // remote operations the QP accepts (ACCESS_REMOTE_*; LOCAL_WRITE unused)
    logic        ud;          // SET_QP.TYPE = QP_TYPE_UD: a datagram QP (the path fields are unused)
    logic [31:0] qkey;        // UD: the Q_Key a datagram must carry
    logic [7:0]  tclass;      // IPv4 TOS of the QP's packets (GRH traffic class)
    logic [7:0]  hop_limit;   // IPv4 TTL of the QP's packets (GRH hop limit)
    logic [2:0]  max_rd;      // RDMA READs and atomics the send queue keeps in flight (1..MAX_RD_ATOM)
  } qp_cfg_t;

  // What each engine reads of a QP's configuration. tmnic_ctx keeps one table per read port, holding
  // only that port's fields, so the copies that multiple read ports need stay narrow (block RAMs and
  // write-bus fan-out scale with what is read, not with qp_cfg_t). The state, where a view has it, is
  // its most significant field: it comes from the QP state table, not from the copy.
  typedef struct packed {
    logic [47:0] dmac;
    logic [31:0] dest_ip;
    logic [23:0] dest_qpn;
    logic [7:0]  tclass;      // IPv4 TOS
    logic [7:0]  hop_limit;   // IPv4 TTL
  } qp_path_t;      // the peer, as a packet header to it needs it (requester, ACK generator)

  typedef struct packed {
    logic [2:0]  state;
    logic [15:0] pd;
    logic [63:0] sq_base;
    logic [3:0]  sq_log;
    logic [3:0]  pmtu_log;
    logic        ud;          // a datagram QP: each WQE names its destination
    logic [2:0]  max_rd;      // RDMA READs and atomics in flight at most (1..MAX_RD_ATOM)
    qp_path_t    path;
  } qp_req_cfg_t;   // requester

  typedef struct packed {
    logic [2:0]  state;
    logic [15:0] send_cq;
    logic [2:0]  rnr_retry;
    logic [2:0]  retry_cnt;   // transport retries (IBA 9.7.6.1.4; 7 is not infinite)
    logic [4:0]  timeout;     // local ACK timeout 4.096 us << timeout (0: none)
  } qp_cmp_cfg_t;   // completer

  typedef struct packed {
    logic [2:0]  state;
    logic [15:0] pd;
    logic [15:0] recv_cq;
    logic [15:0] srq;
    logic [63:0] rq_base;
    logic [3:0]  rq_log;
    logic [31:0] dest_ip;       // a packet must come from the peer (RC)
    logic [4:0]  min_rnr_timer;
    logic [3:0]  rem_access;
    logic        ud;            // a datagram QP: any sender with the right Q_Key
    logic [31:0] qkey;
    logic [3:0]  pmtu_log;      // READ requests: the response packets' length
    logic [63:0] sq_base;       // READ responses land in the send queue's READ WQE
    logic [3:0]  sq_log;
  } qp_rsp_cfg_t;   // responder

  // Memory region: key, protection domain, access rights and the VA -> IOVA translation.
  typedef struct packed {
    logic        valid;
    logic [31:0] key;
    logic [15:0] pd;
    logic [3:0]  access;      // tmnic_hwif_pkg::ACCESS_*_BIT
    logic [63:0] va;
    logic [63:0] len;
    logic [63:0] iova;
  } mr_t;

  typedef struct packed {
    logic        valid;
    logic [63:0] base;
    logic [3:0]  log_size;
  } cq_cfg_t;

  // SRQ; a TM-SRQ also has a list-operation ring, a CQ for all its completions and a range of
  // tag-matching engine entries [tag_base, tag_base + tag_num).
  typedef struct packed {
    logic        valid;
    logic [63:0] base;
    logic [3:0]  log_size;
    logic [15:0] pd;
    logic        tm;
    logic [63:0] ops_base;
    logic [3:0]  ops_log;
    logic [15:0] cq;
    logic [15:0] tag_base;
    logic [15:0] tag_num;
  } srq_cfg_t;

  // Completion request to the CQ writer.
  typedef struct packed {
    logic [15:0] cq;
    logic [63:0] wr_id;
    logic [31:0] byte_len;
    logic [31:0] imm;
    logic [23:0] qp_num;
    logic [23:0] src_qp;
    logic [31:0] wc_flags;
    logic [15:0] wqe_idx;
    logic [7:0]  opcode;
    logic [7:0]  status;
    logic [63:0] tm_tag;      // tag-matching fields (zero otherwise)
    logic [31:0] tm_app_ctx;
    logic [15:0] tm_handle;
    logic [15:0] tm_hw_cnt;
  } cqe_req_t;

  // The protection check of an SGE against its MR (key, PD, bounds, access) lives in tmnic_sge_chk.

  // IO virtual address of a byte inside an MR.
  function automatic logic [63:0] mr_iova(input mr_t m, input logic [63:0] addr);
    mr_iova = addr - m.va + m.iova;
  endfunction

  // 24-bit PSN comparison: a is at or after b within half the PSN space.
  function automatic logic psn_ge(input logic [23:0] a, input logic [23:0] b);
    logic [23:0] d;
    d = a - b;
    psn_ge = !d[23];
  endfunction
  // Requester -> completer: one entry of a QP's outstanding-message ring (the completer's RAM).
  // The operation, for its completion's opcode.
  typedef enum logic [2:0] {SQO_SEND, SQO_WRITE, SQO_READ, SQO_CSWAP, SQO_FADD} sq_op_e;
  // An entry completed by its responses (READ response packets, an ATOMIC_ACK), never by an ACK packet.
  function automatic logic sqo_rd(input sq_op_e op);
    sqo_rd = (op == SQO_READ) || (op == SQO_CSWAP) || (op == SQO_FADD);
  endfunction
  typedef struct packed {
    sq_op_e      op;          // (first: the fields below keep their bit positions)
    logic [63:0] wrid;
    logic [23:0] first;       // PSNs of the message's first and last packets
    logic [23:0] last;
    logic        sig;         // signaled
    logic [7:0]  err;         // nonzero: the WQE completes with this status, never by an ACK
  } sq_out_t;

  // What an event on the completer's ACK port is: an ACK/NAK packet (or a UD datagram's own
  // acknowledgement), a READ response packet or an ATOMIC_ACK to check against the oldest READ or
  // atomic (a query: the verdict comes back), the payload of a READ or the original value of an
  // atomic placed (complete it), a READ or atomic failed at the receive engine.
  typedef enum logic [1:0] {ACK_PKT, ACK_RR, ACK_RDDONE, ACK_RDERR} ack_kind_e;

  // Completer -> requester: what an ACK/NAK does to the sending side of a QP.
  typedef enum logic {
    SQ_MSG_REWIND,            // go back: next WQE idx, next PSN psn (after an RNR wait if rnr)
    SQ_MSG_FAIL               // the QP failed: stop sending it
  } sq_msg_kind_e;
  typedef struct packed {
    sq_msg_kind_e kind;
    logic [15:0]  qp;         // (QP_W bits used)
    logic [15:0]  idx;
    logic [23:0]  psn;
    logic         rnr;
    logic [63:0]  rnr_due;    // cycle at which the RNR wait ends
  } sq_msg_t;

  // Responder: how a receive is placed. A plain receive WQE (RQ or non-TM SRQ); on a TM-SRQ, a
  // matched tag's buffer, an unexpected tagged message or an untagged one (in the next SRQ WQE).
  typedef enum logic [1:0] {RXK_PLAIN, RXK_MATCHED, RXK_UNEXP, RXK_NOTAG} rx_kind_e;

  // What the responder does with a packet, from its header, its QP's configuration and PSN state
  // (tmnic_rx_check): drop it; pass an ACK to the requester; re-ACK a duplicate; a PSN gap (NAK once);
  // an invalid opcode sequence (NAK, QP to ERR); the first packet of a message (take a receive WQE);
  // a further packet of the held message.
  // On a UD QP: a datagram to deliver (RV_UD), or one dropped for its Q_Key (RV_QKEY).
  // RDMA READ: a request at the expected PSN (RV_READ) or a duplicate one (RV_DUP_READ, executed
  // again); a response for the requester (RV_RRESP, also an ATOMIC_ACKNOWLEDGE).
  // Atomics: a request at the expected PSN (RV_ATOMIC, executed) or a duplicate one (RV_DUP_ATOMIC,
  // answered from the QP's saved results, never executed again).
  typedef enum logic [3:0] {RV_DROP, RV_ACK, RV_DUP, RV_GAP, RV_INV_REQ, RV_FIRST, RV_NEXT, RV_UD, RV_QKEY,
                            RV_READ, RV_DUP_READ, RV_RRESP, RV_ATOMIC, RV_DUP_ATOMIC} rx_verdict_e;
  // A received message as its completion needs it (tmnic_rx_cqe; part of the responder's QP word).
  typedef struct packed {
    logic [63:0] wrid;        // receive WQE's wr_id (0 for a matched tag's buffer)
    logic [15:0] idx;         // WQE index, or the tag handle (RXK_MATCHED)
    rx_kind_e    kind;
    logic        rndv;        // RXK_MATCHED: a rendezvous header (not offloaded)
    logic        msent;       // RXK_MATCHED: the MATCH completion was written already
    logic [63:0] tag;         // RXK_MATCHED: the message's tag and application context
    logic [31:0] ctx;
  } rx_msg_t;
  // An offloaded rendezvous (docs/tag-matching.md "Rendezvous"): what its two internal send WQEs
  // (the RDMA READ into the tagged buffer, then the FIN) are made of. Written by the receive engine
  // at the match into slot (QP, n mod RNDV_SLOTS) of tmnic_rndv_sq's table, which serves the WQEs.
  typedef struct packed {
    logic [31:0] lkey;        // the tagged buffer: its lkey and address (the READ's one SGE)
    logic [63:0] addr;
    logic [63:0] va;          // the RVH: the sender's buffer, its rkey, the length (the SGE's too)
    logic [31:0] rkey;
    logic [31:0] len;
    logic [63:0] tag;         // the TMH's tag and application context (the FIN repeats them)
    logic [31:0] ctx;
    logic [15:0] handle;      // the tag handle, SRQ-relative (in the WQEs' wr_id)
  } rndv_desc_t;
  // Which flags a receive completion carries: the end of the message (DATA_VALID, and MATCH unless
  // sent already, on a matched message), the same with WITH_IMM, or MATCH alone (the first packet
  // of a multi-packet matched message: the data follows), or the receive WQE of an RDMA
  // WRITE_WITH_IMM.
  typedef enum logic [1:0] {RXF_END, RXF_END_IMM, RXF_MATCH, RXF_WRITE_IMM} rx_cqe_flags_e;

  // The responder's word per QP (tmnic_rx_engine's table in block RAM).
  typedef struct packed {
    logic [23:0] epsn;        // expected PSN
    logic [23:0] msn;
    logic        est;         // COMM_EST reported since the receive state was initialised (RTR)
    logic [15:0] ci;          // receive queue consumer index
    logic        nak_sent;    // a PSN-sequence NAK was sent for the current gap
    logic        held;        // a WQE is held for a multi-packet message (or an RDMA WRITE's range)
    logic        wr;          // the held message is an RDMA WRITE: its range was checked (bad: not),
                              //   its bytes go to the RETH's range (scatter slot 0), no WQE is held;
    logic [63:0] wva;         //   the range's address and rkey, checked again for every packet
    logic [31:0] wkey;        //   (an rkey invalidated mid-message stops it: ibv_dereg_mr)
    rx_msg_t     m;           // the held message: what its completion needs (tmnic_pkg),
    logic        bad;         //   an SGE failed the protection check (or too many SGEs),
    logic [31:0] off;         //   message bytes received so far,
    logic [34:0] cap;         //   total SGE bytes,
    logic [2:0]  sgi;         //   scatter cursor: SGE and offset in it of message byte off
    logic [31:0] sgo;
    logic [15:0] rv_pi;       // a rendezvous QP: internal send WQEs written (two per rendezvous)
    logic [2:0]  rdi;         // READ jobs given to tmnic_rd_resp (mod 8; its done count says how many are out)
    // The atomic results saved for duplicates (IBA 9.7.5.1.1): MAX_RD_ATOM slots per QP in the
    // engine's replay RAM, these valid, the next one to write
    logic [MAX_RD_ATOM-1:0]         av;
    logic [$clog2(MAX_RD_ATOM)-1:0] ap;
    // The requester's RDMA READ whose responses are arriving: its scatter list is checked into
    // scatter context NUM_QP + QP on the FIRST/ONLY response; the cursor as for a receive above.
    logic        r_bad;       //   an SGE failed the protection check
    logic [31:0] r_off;
    logic [34:0] r_cap;
    logic [2:0]  r_sgi;
    logic [31:0] r_sgo;
    logic [31:0] r_gen;       //   the MR table's generation when its list was checked (tmnic_ctx)
  } rsp_qp_t;

endpackage
