"""tmnic HW/SW interface: the single source of truth.

Everything the driver, the RTL and the simulation's models must agree on lives here: BAR0 register map
and register fields, command codes and their argument words, the work-queue entry (WQE), completion-queue
entry (CQE) and list-op layouts, opcodes and status codes, and the RoCEv2 wire-protocol numbers (BTH
opcodes and their extension headers, AETH syndromes, RNR timer table, header sizes, ICRC seed). No
protocol number is written anywhere else. `tools/gen_hwif.py` turns this file into
  rtl/pkg/tmnic_hwif_pkg.sv        (SystemVerilog package)
  include/tmnic/hwif.h             (C++ header: constants, host-memory structs with static_asserts)
  include/tmnic/wire.h             (C++ header: RoCEv2 wire-protocol numbers and the internal packet header)
  docs/hw-sw-interface.md          (reference documentation)
and `tools/gen_hwif.py --check` (run by `make test`) fails when a generated file has drifted.

All multi-byte fields in host memory are little-endian unless marked `raw` (bytes copied verbatim).
"""

# Bumped on any incompatible change; the driver refuses a device whose major differs.
ABI_MAJOR = 1
ABI_MINOR = 11  # 1.1: tag matching (TM-SRQ list-op rings, TM CQE fields, TM registers); 1.2: TM_GEOM;
#                1.3: RDMA WQE fields and opcodes, OPS_CAPS, SET_QP.ACCESS; 1.4: ASYNC_CQ, ASYNC_EVENT
#                records, STAT_ASYNC_DROP; 1.5: UD QPs (SET_QP.TYPE/QKEY, UD_AV in the send WQE,
#                DETH, the GRH in front of a UD receive, OPS_CAPS.UD, STAT_RX_DROP_QKEY/RX_UD_NO_WQE);
#                1.6: AEV_COMM_EST and AEV_CQ_ERR records, SET_CQ.KEEP (resize); 1.7: AEV_QP_FATAL, a CQ
#                in error takes no completion until SET_CQ; 1.8: SET_QP.TCLASS/HOP_LIMIT and UD_AV.TCLASS/
#                HOP_LIMIT (the IPv4 TOS and TTL of the QP's packets); 1.9: SET_QP.MAX_RD_ATOMIC,
#                MAX_RD_ATOM (RDMA READ resources), WC status BAD_RESP_ERR; 1.10: atomics (WQE_OPS
#                ATOMIC_*, the ATOMIC layout at WQE_ATOMIC_OFF, WC COMP_SWAP/FETCH_ADD, OPS_CAPS.ATOMIC,
#                the AtomicETH opcodes and ROCE_HDR ATOM_SWAP/ATOM_CMP); 1.11: rendezvous offload (NIC_SPACE_BIT,
#                RNDV_*, RVH_SIZE, the internal send queue of a rendezvous QP, TM_CAPS.RC set)
DEVICE_ID = 0x544D4E43  # "TMNC"

# Hardware limits that software must respect (also reported through read-only registers).
CONSTS = [
    ("WQE_STRIDE", 128, "bytes per send/receive WQE"),
    ("WQE_MAX_SGE", 6, "scatter/gather entries in one WQE"),
    ("WQE_MAX_INLINE", 96, "inline payload bytes in one send WQE"),
    ("CQE_SIZE", 64, "bytes per completion queue entry"),
    ("MAX_LOG_QUEUE", 15, "largest ring: 2^15 entries"),
    ("BAR0_SIZE", 0x10000, "bytes of BAR0"),
    ("QPN_FIRST", 2, "QP numbers 0 and 1 are reserved (as on IB: SMI/GSI)"),
    ("MR_KEY_SHIFT", 8, "an lkey/rkey selects MR table entry (key >> 8) % NUM_MR, whose KEY must equal it"),
    ("TM_OP_STRIDE", 64, "bytes per tag-list operation WQE (TM-SRQ list-op ring)"),
    ("TMH_SIZE", 16, "bytes of the tag-matching header at the start of a TM message"),
    ("TM_STATS_STRIDE", 0x20, "bytes per SRQ in the TM statistics window"),
    # Asynchronous event records (CQE opcode ASYNC_EVENT on the ASYNC_CQ): the kind, in CQE.STATUS.
    ("AEV_QP_ERR", 1, "async event: the NIC moved QP_NUM to ERR (the completions say why)"),
    ("AEV_QP_REQ_ERR", 2, "async event: QP_NUM's responder detected an invalid request and moved it to ERR"),
    ("AEV_QP_ACCESS_ERR", 3, "async event: QP_NUM's responder detected a remote access violation and moved it to ERR"),
    ("AEV_COMM_EST", 4, "async event: QP_NUM (RC, in RTR) received its first request packet: communication "
     "established (IBA 11.6.3.1); the QP is not changed. Once per entry into RTR"),
    ("AEV_CQ_ERR", 5, "async event: the CQ numbered in QP_NUM overran: a completion was lost (IBA 11.6.3.2 CQ "
     "error); reported once per SET_CQ, for the first lost completion (later ones are counted in STAT_CQ_OVERFLOW). "
     "From then on the CQ is in error: no completion is written to it until SET_CQ sets it up again (IBA C11-37)"),
    ("AEV_QP_FATAL", 6, "async event: a completion of QP_NUM was lost (its CQ in error or missing) and the NIC moved "
     "QP_NUM to ERR (IBA C9-218 class F, 11.6.3.1 Local Work Queue Catastrophic Error). Only for a QP in RTR..SQE, "
     "so once per entry into ERR (a lost record is counted in STAT_ASYNC_DROP)"),
    # UD (datagram) QPs
    ("WQE_UD_AV_OFF", 112, "UD send WQE: its UD_AV (destination) at this byte offset, in place of SGE 5"),
    ("UD_MAX_SGE", 5, "SGEs in a UD send WQE (SGE 5's bytes hold the UD_AV)"),
    ("UD_MAX_INLINE", 80, "inline payload bytes in a UD send WQE (up to the UD_AV)"),
    ("GRH_LEN", 40, "bytes in front of every UD receive: 20 zero bytes, then the packet's IPv4 header (RoCEv2)"),
    # RDMA READ resources
    ("MAX_RD_ATOM", 4, "RDMA READs and atomics in flight per QP: as requester (SET_QP.MAX_RD_ATOMIC is clamped "
     "to it) and as responder (READ and atomic requests being answered; one more is dropped unanswered, the "
     "requester's timer resends it); also the atomic results a QP's responder keeps for duplicates"),
    # Atomics
    ("WQE_ATOMIC_OFF", 112, "atomic send WQE: its ATOMIC operands at this byte offset, in place of SGE 5 (an "
     "atomic WQE has exactly one SGE, of 8 bytes, that receives the original value)"),
    ("ATOMIC_LEN", 8, "bytes an atomic operates on (8-byte aligned), big-endian in memory as on ConnectX: the "
     "remote word is read and written as a big-endian 64-bit integer and the original value lands in the local "
     "SGE in that byte order (mlx5 behaviour; software byte-swaps it on a little-endian host)"),
    # Rendezvous offload (docs/tag-matching.md "Rendezvous"): an RC QP on a TM-SRQ with no send queue of its
    # own (mlx5: offload_type RNDV only for a QP without an SQ) gets an internal one, in the NIC's memory.
    ("NIC_SPACE_BIT", 63, "a DMA address with this bit set is the NIC's own memory, never the host's: only a "
     "rendezvous QP's send queue lives there; a SET_MR (VALID) IOVA, a CQ, SRQ, list-op or receive-queue base "
     "with it is refused (CMD_STATUS error), and a SET_QP send-queue base with it must be the QP's own "
     "rendezvous queue (RNDV_SQ_LOG, RC)"),
    ("RNDV_SQ_LOG", 2, "a rendezvous QP's send queue: SET_QP.SQ_LOG_SIZE = RNDV_SQ_LOG and SQ_BASE = "
     "(1 << NIC_SPACE_BIT) + (QP number << RNDV_QP_SHIFT); the NIC writes its WQEs itself, two per offloaded "
     "rendezvous (the RDMA READ into the tagged buffer, then the FIN), unsignaled"),
    ("RNDV_QP_SHIFT", 9, "= log2(WQE_STRIDE) + RNDV_SQ_LOG: the stride of the rendezvous send queues"),
    ("RNDV_SLOTS", 2, "offloaded rendezvous transfers in flight per QP (2^RNDV_SQ_LOG / 2); a rendezvous-QP "
     "message that arrives while all are busy is RNR-NAKed"),
    ("RVH_SIZE", 16, "bytes of the rendezvous header after the TMH: VA (BE64), RKEY (BE32), LEN (BE32)"),
    ("RNDV_FIN_LEN", 32, "bytes of the FIN the NIC sends when a rendezvous READ has landed: the request's TMH "
     "with opcode FIN, and its RVH"),
    ("MAX_RNDV_HDR", 64, "tm_caps.max_rndv_hdr_size: a rendezvous request (TMH, RVH, metadata) of one packet is "
     "offloaded; the metadata after the RVH is not delivered"),
    ("RNDV_WRID_MARK", 0x52, "wr_id[63:56] of a rendezvous QP's internal WQEs ('R'); wr_id[RNDV_WRID_FIN_BIT] "
     "is set on the FIN, wr_id[15:0] is the tag handle (SRQ-relative). They complete silently; an error "
     "completion of one (on the QP's SEND_CQ, which the driver sets to the TM-SRQ's CQ) is the driver's to turn "
     "into the tag's completion"),
    ("RNDV_WRID_FIN_BIT", 16, "see RNDV_WRID_MARK"),
]

# BAR0 registers: (name, offset, access, reset/description)
REGS = [
    ("ID", 0x0000, "ro", "constant 0x544D4E43 ('TMNC')"),
    ("ABI_VERSION", 0x0004, "ro", "major in [31:16], minor in [15:0]; driver requires equal major"),
    ("DATA_BYTES", 0x0008, "ro", "datapath width in bytes"),
    ("CLK_MHZ", 0x000C, "ro", "nominal core clock in MHz"),
    ("NUM_QP", 0x0010, "ro", "QP contexts (QPN 0..NUM_QP-1, 0 and 1 reserved)"),
    ("NUM_CQ", 0x0014, "ro", "CQ contexts"),
    ("NUM_SRQ", 0x0018, "ro", "SRQ contexts"),
    ("NUM_MR", 0x001C, "ro", "memory-region table entries"),
    ("MAX_SGE", 0x0020, "ro", "= WQE_MAX_SGE"),
    ("WQE_STRIDE", 0x0024, "ro", "= WQE_STRIDE"),
    ("CQE_SIZE", 0x0028, "ro", "= CQE_SIZE"),
    ("MAX_LOG_QUEUE", 0x002C, "ro", "= MAX_LOG_QUEUE"),
    ("MAC_LO", 0x0030, "rw", "port MAC address bytes 2..5 (byte 5 in [7:0])"),
    ("MAC_HI", 0x0034, "rw", "port MAC address bytes 0..1 (byte 1 in [7:0])"),
    ("IPV4", 0x0038, "rw", "port IPv4 address, a.b.c.d as 0xaabbccdd"),
    ("CTRL", 0x003C, "rw", "bit 0: enable the port"),
    ("CMD_ARG0", 0x0040, "rw", "command argument words 0..31 at 0x40 + 4*i (read back after QUERY_*)"),
    ("CMD", 0x00C0, "wo", "write {index[31:8], opcode[7:0]} to execute a command on the CMD_ARG words"),
    ("CMD_STATUS", 0x00C4, "ro", "bit 0 busy, bit 1 error of the last command (bad index, size or a ring base not 64-byte aligned)"),
    ("OPS_CAPS", 0x00C8, "ro", "send-queue operations this NIC executes (OPS_CAPS fields); the driver accepts only "
     "those and reports only those"),
    ("TM_MAX_TAGS", 0x00D0, "ro", "tag-list entries of the matching engine, shared by all TM-SRQs (0: no tag matching)"),
    ("TM_CAPS", 0x00D4, "ro", "bit 0: rendezvous offload on RC (IBV_TM_CAP_RC); [15:8] sequence-number bits of the engine"),
    ("TM_GEOM", 0x00D8, "ro", "matching-engine geometry (docs/tag-matching-engine.md): [7:0] mask classes, [15:8] ways "
     "per class, [23:16] log2 buckets per way, [31:24] wildcard-CAM entries (for tools; software needs none of it)"),
    ("TM_PLACE", 0x00DC, "ro", "matching-engine entries now on its slower exact paths: [15:0] in the wildcard CAM, "
     "[31:16] in spill lists"),
    ("ASYNC_CQ", 0x00E0, "rw", "the CQ that receives the NIC's asynchronous event records (ASYNC_CQ fields; reset: "
     "disabled, no records)"),
    ("STATS0", 0x0100, "ro", "statistics counters, 32 bits each, at 0x100 + 4*STAT_*"),
    ("DB_SQ0", 0x1000, "wo", "send-queue doorbell of QP n at 0x1000 + 4*n: new producer index [15:0]"),
    ("DB_RQ0", 0x2000, "wo", "receive-queue doorbell of QP n at 0x2000 + 4*n: new producer index [15:0]"),
    ("DB_SRQ0", 0x3000, "wo", "SRQ doorbell of SRQ n at 0x3000 + 4*n: new producer index [15:0]"),
    ("DB_CQ0", 0x4000, "wo", "CQ doorbell of CQ n at 0x4000 + 4*n: consumer index [15:0], arm [31]"),
    ("DB_TM0", 0x5000, "wo", "list-op doorbell of TM-SRQ n at 0x5000 + 4*n: new producer index [15:0] of its op ring"),
    ("TM_STATS0", 0x6000, "ro", "TM statistics of SRQ n at 0x6000 + TM_STATS_STRIDE*n + 4*TMSTAT_*"),
]
NUM_CMD_ARGS = 32

# Statistics counter indices (BAR0 0x100 + 4*index).
STATS = [
    ("TX_PKTS", "RoCE frames sent on the MAC port or looped back"),
    ("RX_PKTS", "RoCE frames accepted by the parser"),
    ("RX_DROP_ICRC", "frames dropped for a bad ICRC"),
    ("RX_DROP_HDR", "frames dropped for a malformed or foreign header"),
    ("RX_DROP_QP", "packets dropped: unknown QP, QP not ready, or address mismatch"),
    ("TX_ACKS", "ACK/NAK packets sent"),
    ("RX_ACKS", "ACK packets received"),
    ("TX_RNR_NAKS", "RNR NAKs sent (no receive WQE)"),
    ("RX_RNR_NAKS", "RNR NAKs received"),
    ("TX_NAKS", "other NAKs sent"),
    ("RX_NAKS", "other NAKs received"),
    ("RETRANSMITS", "go-back-N rewinds: after an RNR NAK, a PSN-sequence NAK or a local ACK timeout"),
    ("CQES", "completion entries written (asynchronous event records included)"),
    ("RX_DUP", "duplicate request packets (re-ACKed, not executed)"),
    ("RX_PSN_ERR", "out-of-sequence request packets"),
    ("LOOPBACK", "frames looped back inside the NIC"),
    ("DMA_RD_REQ", "DMA read bursts issued"),
    ("DMA_WR_REQ", "DMA write bursts issued"),
    ("CQ_OVERFLOW", "completions lost because a CQ was full, missing or in error (after an overrun)"),
    ("PROT_ERR", "local protection errors (bad lkey or range); no DMA done"),
    ("ASYNC_DROP", "asynchronous event records lost: more events at once than the NIC queues"),
    ("RX_DROP_QKEY", "UD datagrams dropped: Q_Key differs from the QP's (IBA 10.2.4, C10-15)"),
    ("RX_UD_NO_WQE", "UD datagrams dropped: no receive WQE (a UD receiver never sends RNR NAKs)"),
]

# Per-SRQ tag-matching statistics (BAR0 0x6000 + TM_STATS_STRIDE*srq + 4*index).
TM_STATS = [
    ("EXPECTED", "tagged messages that matched a posted tag (rendezvous included)"),
    ("UNEXPECTED", "tagged messages that matched nothing and went to an SRQ buffer (counted in hw_cnt)"),
    ("NO_TAG", "NO_TAG, FIN and reserved-opcode messages delivered to an SRQ buffer"),
    ("SYNCS", "list operations that carried a software count (IBV_OPS_TM_SYNC)"),
    ("OCCUPANCY", "live tag-list entries now"),
    ("HIGH_WATER", "largest OCCUPANCY since the SRQ was configured"),
    ("DISABLED", "live entries added out of phase, disabled until a sync"),
    ("PHASE", "hw_cnt [31:16] and sw_cnt [15:0], the 16-bit unexpected-message counters"),
]

# Commands (CMD register opcode) and their argument words.
CMDS = [
    ("NOP", 0x00, []),
    ("SET_MR", 0x01, [
        ("VA_LO", 0), ("VA_HI", 1), ("LEN_LO", 2), ("LEN_HI", 3), ("IOVA_LO", 4), ("IOVA_HI", 5),
        ("KEY", 6), ("PD", 7), ("ACCESS", 8), ("VALID", 9)]),
    ("SET_CQ", 0x02, [("BASE_LO", 0), ("BASE_HI", 1), ("LOG_SIZE", 2), ("VALID", 3), ("KEEP", 4)]),
    ("SET_SRQ", 0x03, [("BASE_LO", 0), ("BASE_HI", 1), ("LOG_SIZE", 2), ("PD", 3), ("VALID", 4),
                       ("TM", 5), ("OPS_BASE_LO", 6), ("OPS_BASE_HI", 7), ("OPS_LOG_SIZE", 8), ("CQ", 9),
                       ("TAG_BASE", 10), ("TAG_NUM", 11)]),
    ("SET_QP", 0x04, [
        ("STATE", 0), ("PD", 1), ("SEND_CQ", 2), ("RECV_CQ", 3), ("SRQ", 4),
        ("SQ_BASE_LO", 5), ("SQ_BASE_HI", 6), ("SQ_LOG_SIZE", 7),
        ("RQ_BASE_LO", 8), ("RQ_BASE_HI", 9), ("RQ_LOG_SIZE", 10),
        ("PATH_MTU", 11), ("DEST_QPN", 12), ("DEST_IP", 13), ("SQ_PSN", 14), ("RQ_PSN", 15),
        ("DMAC_LO", 16), ("DMAC_HI", 17), ("MIN_RNR_TIMER", 18), ("RNR_RETRY", 19),
        ("RETRY_CNT", 20), ("TIMEOUT", 21), ("INIT", 22), ("ACCESS", 23), ("TYPE", 24), ("QKEY", 25),
        ("TCLASS", 26), ("HOP_LIMIT", 27), ("MAX_RD_ATOMIC", 28)]),
    ("QUERY_QP", 0x05, [("STATE", 0), ("SQ_PSN", 14), ("RQ_PSN", 15)]),
]
# SET_CQ.KEEP (documentation only).
SET_CQ_NOTES = [
    "`SET_CQ.KEEP` = 1 resizes a valid CQ: the new BASE and LOG_SIZE take effect for the next completion, the "
    "producer and consumer indices and the arm request are kept (KEEP = 0 resets them: a new CQ). A completion "
    "the NIC is writing when the command executes goes to the old ring (the CQ writer captures a CQ's "
    "configuration once per completion), and the command stays busy until it has landed, so once it is done "
    "the host may copy the old ring's unpolled entries, at their indices, into the new ring "
    "(driver/core/cq.cpp: ibv_resize_cq).",
]
# What the NIC does with SET_QP's transport-retry arguments (documentation only).
SET_QP_NOTES = [
    "`SET_QP.TIMEOUT` (0..31, ibv_qp_attr.timeout): local ACK timeout 4.096 us x 2^TIMEOUT, 0 = none; "
    "`SET_QP.RETRY_CNT` (0..7, 7 is not infinite): go-back-N retries after a timeout, reset by forward progress "
    "(an ACK that completes a message or acknowledges new packets); exhausted: the oldest send WQE completes with "
    "RETRY_EXC_ERR and the QP goes to ERR. The timer starts when a message is queued for sending (before its first "
    "packet) and is checked by a sweep of the QP table, so it fires between T and T + NUM_QP cycles (+ a few) after "
    "that (docs/architecture.md). "
    "`SET_QP.RNR_RETRY` (7 = infinite) is a separate budget for RNR NAKs.",
    "`SET_QP.TCLASS` and `SET_QP.HOP_LIMIT` (ibv_qp_attr.ah_attr.grh.traffic_class and hop_limit, 8 bits each): "
    "the IPv4 TOS byte (DSCP and ECN) and TTL of every packet the QP sends, its ACKs and NAKs included; a UD QP "
    "takes them from each WQE's UD_AV instead (RoCEv2 maps the GRH's traffic class and hop limit onto these "
    "IPv4 fields, as mlx5 does).",
    "`SET_QP.MAX_RD_ATOMIC` (ibv_qp_attr.max_rd_atomic, 0..MAX_RD_ATOM): RDMA READs the QP's send queue keeps "
    "in flight at most (a READ WQE waits until an earlier one completes; 0 is taken as 1).",
    "`SET_QP.ACCESS` (ibv_qp_attr.qp_access_flags, ACCESS bits): the remote operations the QP accepts as a "
    "responder; an RDMA WRITE to a QP without REMOTE_WRITE is NAKed invalid request and the QP goes to ERR "
    "(IBA 9.7.4.1.2, as rxe and mlx5 do).",
]
# SET_QP.TYPE values: the transport service of the QP.
QP_TYPES = [("RC", 0, "reliable connection: PATH_MTU, DEST_*, DMAC_*, PSNs, timers and ACCESS apply"),
            ("UD", 1, "unreliable datagram: each send WQE carries its destination (UD_AV) and Q_Key; receives "
             "accept any sender whose DETH Q_Key equals SET_QP.QKEY and start with GRH_LEN bytes; PATH_MTU "
             "bounds a message (longer: LOC_LEN_ERR); no ACKs, no retries")]
# SET_QP.SRQ value meaning "no SRQ: use the QP's own receive queue".
NO_SRQ = 0xFFFF
# SET_QP.INIT bits: which dynamic state the command (re)initialises.
QP_INIT_BITS = [("SQ", 0, "reset send state: PSN := SQ_PSN, indices := 0"),
                ("RQ", 1, "reset receive state: expected PSN := RQ_PSN, MSN and indices := 0")]

# QP states: the values of enum ibv_qp_state.
QP_STATES = [("RESET", 0), ("INIT", 1), ("RTR", 2), ("RTS", 3), ("SQD", 4), ("SQE", 5), ("ERR", 6)]

# Work-queue entry (send and receive queues, SRQ), WQE_STRIDE bytes.
# (name, byte offset, size in bytes, description)
WQE = [
    ("WR_ID", 0, 8, "opaque, returned in the CQE"),
    ("OPCODE", 8, 1, "WQE_OP_* (send queue only)"),
    ("FLAGS", 9, 1, "WQE_FLAG_* (send queue only)"),
    ("NUM_SGE", 10, 1, "valid SGEs (0..WQE_MAX_SGE)"),
    ("IMM", 12, 4, "raw: immediate data bytes, sent in this byte order"),
    ("INLINE_LEN", 16, 4, "inline payload bytes (flag INLINE)"),
    ("RKEY", 20, 4, "RDMA WRITE/READ: the remote MR's rkey"),
    ("UD_QKEY", 20, 4, "UD: the Q_Key to send in the DETH (the driver resolves the IBA's high-bit rule)",
     dict(overlay=True)),
    ("RADDR", 24, 8, "RDMA WRITE/READ: remote virtual address"),
    ("SGE", 32, 16, "scatter/gather entries (SGE layout); SGE i at 32 + 16*i", dict(count="WQE_MAX_SGE", of="SGE")),
    ("INLINE_DATA", 32, "WQE_MAX_INLINE", "raw: inline payload (flag INLINE), in place of the SGEs", dict(overlay=True)),
]
# A size or count may name a CONSTS entry. Options (5th element): count=N with of="LAYOUT": an array of N
# entries of that layout;
# overlay=True: the same bytes as the field before it (a union in C++; the SV struct has the first only).
SGE = [("ADDR", 0, 8, "virtual address in the MR"), ("LENGTH", 8, 4, "bytes"), ("LKEY", 12, 4, "MR key")]
# The destination of a UD send WQE, at WQE_UD_AV_OFF (an address handle resolved by the driver).
UD_AV = [("DEST_IP", 0, 4, "destination IPv4 address, a.b.c.d as 0xaabbccdd"),
         ("DQPN", 4, 4, "destination QP number [23:0]"),
         ("DMAC", 8, 6, "raw: destination MAC, byte 0 first on the wire"),
         ("TCLASS", 14, 1, "IPv4 TOS byte of the datagram (ibv_ah_attr.grh.traffic_class)"),
         ("HOP_LIMIT", 15, 1, "IPv4 TTL of the datagram (ibv_ah_attr.grh.hop_limit)")]
# The operands of an atomic send WQE, at WQE_ATOMIC_OFF (host-order integers; sent big-endian in the AtomicETH).
ATOMIC = [("SWAP_ADD", 0, 8, "CMP_AND_SWP: the value swapped in; FETCH_AND_ADD: the addend"),
          ("COMPARE", 8, 8, "CMP_AND_SWP: the value compared with (unused by FETCH_AND_ADD)")]
WQE_OPS = [("SEND", 0x00), ("SEND_WITH_IMM", 0x01), ("RDMA_WRITE", 0x02), ("RDMA_WRITE_WITH_IMM", 0x03),
           ("RDMA_READ", 0x04), ("ATOMIC_CMP_AND_SWP", 0x05), ("ATOMIC_FETCH_AND_ADD", 0x06)]
WQE_FLAGS = [("SIGNALED", 0), ("SOLICITED", 1), ("INLINE", 2), ("FENCE", 3)]

# Tag-list operation WQE of a TM-SRQ's op ring (SET_SRQ.OPS_*), TM_OP_STRIDE bytes. The NIC executes
# the ring in order; a handle is an index in 0..SET_SRQ.TAG_NUM-1 chosen by software.
TM_OP = [
    ("WR_ID", 0, 8, "opaque, returned in the list-op CQE"),
    ("OPCODE", 8, 1, "TM_OP_*"),
    ("FLAGS", 9, 1, "TM_OP_FLAG_*"),
    ("SW_CNT", 10, 2, "unexpected messages handled by software (flag SW_CNT), 16 bits"),
    ("HANDLE", 12, 4, "ADD: handle of the new entry; DEL: handle to remove"),
    ("TAG", 16, 8, "ADD: tag"),
    ("MASK", 24, 8, "ADD: mask; a message matches when (msg_tag ^ TAG) & MASK == 0"),
    ("SGE", 32, 16, "ADD: the tagged buffer (one SGE: addr, length, lkey; length 0 allowed)", dict(of="SGE")),
]
TM_OPS = [("ADD", 0), ("DEL", 1), ("SYNC", 2)]
TM_OP_FLAGS = [("SIGNALED", 0), ("SW_CNT", 1)]

# Hash of the matching engine's class tables (docs/tag-matching-engine.md), computed by the RTL on
# every lookup and list operation; tests use it to build colliding tags. For class c with mask M, way w, and an
# engine of 2^LB buckets per way, the key is K = {srq, tag & M} (SRQ bits above the 64 tag bits);
# L = K[LB-1:0], R = K >> LB; the bucket is L ^ (XOR of TM_HASH_Q[c][w][j] over the set bits j of R),
# cut to LB bits, and the bucket stores R. The constants come from splitmix64 seeded with
# TM_HASH_SEED, so they are fixed at build time, like the hash of a hardware table.
TM_HASH_SEED = 0x746D6E69635F746D  # "tmnic_tm"
TM_HASH_MAX_CLASSES = 4
TM_HASH_MAX_WAYS = 4
TM_HASH_MAX_RBITS = 72  # 64 tag bits + up to 8 SRQ bits


def tm_hash_q():
    """TM_HASH_Q[c][w][j], 16 bits each, in row-major order."""
    x = TM_HASH_SEED
    out = []
    for _ in range(TM_HASH_MAX_CLASSES * TM_HASH_MAX_WAYS * TM_HASH_MAX_RBITS):
        x = (x + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        out.append((z ^ (z >> 31)) & 0xFFFF)
    return out


# TMH opcodes (enum ibv_tmh_op), first byte of a TM message.
TMH_OPS = [("NO_TAG", 0), ("RNDV", 1), ("FIN", 2), ("EAGER", 3)]

# Completion-queue entry, CQE_SIZE bytes. Valid when OWNER bit 0 == ((ci >> log_size) & 1) ^ 1.
CQE = [
    ("WR_ID", 0, 8, "wr_id of the completed WQE"),
    ("BYTE_LEN", 8, 4, "received bytes (receive completions)"),
    ("IMM", 12, 4, "raw: immediate data as received"),
    ("QP_NUM", 16, 4, "local QP number"),
    ("SRC_QP", 20, 4, "remote QP number (receive completions)"),
    ("WC_FLAGS", 24, 4, "enum ibv_wc_flags bits"),
    ("VENDOR_ERR", 28, 4, "device-specific error detail, 0 on success"),
    ("TM_TAG", 32, 8, "tag from the TMH (tag-matching completions)"),
    ("TM_APP_CTX", 40, 4, "app_ctx from the TMH"),
    ("WQE_IDX", 44, 2, "ring index of the completed WQE (send queue, receive queue, SRQ or list-op ring)"),
    ("TM_HANDLE", 46, 2, "tag handle (matched TM receive, list operations)"),
    ("TM_HW_CNT", 48, 2, "hardware unexpected-message count after a list operation (hw_phase_cnt)"),
    ("OPCODE", 60, 1, "enum ibv_wc_opcode"),
    ("STATUS", 61, 1, "enum ibv_wc_status"),
    ("OWNER", 63, 1, "bit 0: phase bit written last by the NIC"),
]
# Values used in CQE.OPCODE / CQE.STATUS / CQE.WC_FLAGS: those of libibverbs, repeated so that the RTL has them,
# and ASYNC_EVENT: an asynchronous event record on the ASYNC_CQ (kind AEV_* in STATUS, the QP in QP_NUM), which
# the driver turns into ibv_get_async_event events and never hands out as a completion.
WC_OPCODES = [("SEND", 0), ("RDMA_WRITE", 1), ("RDMA_READ", 2), ("COMP_SWAP", 3), ("FETCH_ADD", 4), ("RECV", 128), ("RECV_RDMA_WITH_IMM", 129), ("TM_ADD", 130), ("TM_DEL", 131), ("TM_SYNC", 132),
              ("TM_RECV", 133), ("TM_NO_TAG", 134), ("ASYNC_EVENT", 255)]
WC_STATUS = [("SUCCESS", 0), ("LOC_LEN_ERR", 1), ("LOC_QP_OP_ERR", 2), ("LOC_PROT_ERR", 4),
             ("WR_FLUSH_ERR", 5), ("BAD_RESP_ERR", 7), ("REM_INV_REQ_ERR", 9), ("REM_ACCESS_ERR", 10), ("REM_OP_ERR", 11),
             ("RETRY_EXC_ERR", 12), ("RNR_RETRY_EXC_ERR", 13), ("GENERAL_ERR", 21), ("TM_ERR", 22),
             ("TM_RNDV_INCOMPLETE", 23)]
# IBV_WC_WITH_IMM, IBV_WC_TM_MATCH, IBV_WC_TM_DATA_VALID (IBV_WC_TM_SYNC_REQ is computed by the driver)
WC_FLAGS = [("GRH", 1), ("WITH_IMM", 2), ("TM_MATCH", 32), ("TM_DATA_VALID", 64)]

# MR access bits: those of enum ibv_access_flags.
ACCESS = [("LOCAL_WRITE", 0), ("REMOTE_WRITE", 1), ("REMOTE_READ", 2), ("REMOTE_ATOMIC", 3)]


# ---- Register fields ----------------------------------------------------------------------------------
# (register, [(field, msb, lsb, meaning)]): generated as SV packed structs reg_<register>_t and C++
# shift/mask constants with get/make helpers (hwif.h, namespace regf).
REG_FIELDS = [
    ("ABI_VERSION", [("MAJOR", 31, 16, "incompatible changes"), ("MINOR", 15, 0, "compatible additions")]),
    ("CMD", [("INDEX", 31, 8, "table index the command acts on"), ("OPCODE", 7, 0, "CMD_*")]),
    ("CMD_STATUS", [("ERROR", 1, 1, "the last command failed; nothing changed"), ("BUSY", 0, 0, "executing, or clearing the QP state table after reset")]),
    ("DB", [("PI", 15, 0, "new producer index (send queue, receive queue, SRQ, list-op ring)")]),
    ("DB_CQ", [("ARM", 31, 31, "request an interrupt for the next completion"), ("CI", 15, 0, "consumer index")]),
    ("ASYNC_CQ", [("EN", 31, 31, "write event records"), ("CQ", 15, 0, "the CQ they go to")]),
    ("OPS_CAPS", [("ATOMIC", 3, 3, "CMP_AND_SWP and FETCH_AND_ADD as requester and responder (IBV_ATOMIC_HCA: "
                   "atomic with respect to every access of this NIC)"),
                  ("UD", 2, 2, "UD QPs (SET_QP.TYPE = QP_TYPE_UD): SEND and SEND_WITH_IMM datagrams"),
                  ("RDMA_READ", 1, 1, "RDMA READ as requester and responder"),
                  ("RDMA_WRITE", 0, 0, "RDMA WRITE and WRITE_WITH_IMM as requester and responder")]),
    ("TM_CAPS", [("SEQ_BITS", 15, 8, "sequence-number bits of the matching engine"),
                 ("RC", 0, 0, "rendezvous offload on RC (IBV_TM_CAP_RC)")]),
    ("TM_GEOM", [("CAM", 31, 24, "wildcard-CAM entries"), ("LOG_BUCKETS", 23, 16, "log2 buckets per way"),
                 ("WAYS", 15, 8, "ways per class"), ("CLASSES", 7, 0, "mask classes")]),
    ("TM_PLACE", [("SPILL", 31, 16, "entries in spill lists"), ("CAM", 15, 0, "entries in the wildcard CAM")]),
    ("TMSTAT_PHASE", [("HW_CNT", 31, 16, "hardware unexpected-message count"),
                      ("SW_CNT", 15, 0, "software unexpected-message count")]),
]

# ---- Wire protocol: RoCEv2 over IPv4, RC (IBA vol. 1 ch. 9, annex A17; shared/reference/roce-wire.md) -----
# (name, value, meaning). Derived offsets (IP_OFF, UDP_OFF, BTH_OFF, MAX_FRAME_LEN) are computed by the
# generator from these.
WIRE_CONSTS = [
    ("ROCE_UDP_PORT", 4791, "UDP destination port of RoCEv2"),
    ("ETH_HDR_LEN", 14, "Ethernet II header, no VLAN tag"),
    ("IP_HDR_LEN", 20, "IPv4 header without options"),
    ("UDP_HDR_LEN", 8, "UDP header"),
    ("BTH_LEN", 12, "base transport header"),
    ("RETH_LEN", 16, "RDMA extended transport header"),
    ("AETH_LEN", 4, "ACK extended transport header"),
    ("IMMDT_LEN", 4, "immediate data"),
    ("ICRC_LEN", 4, "invariant CRC"),
    ("DETH_LEN", 8, "datagram extended transport header {Q_Key, reserved byte, source QP}"),
    ("ATOMICETH_LEN", 28, "atomic extended transport header {VA, R_Key, swap/add data, compare data}"),
    ("MAX_PMTU", 4096, "largest path MTU (IBV_MTU_4096)"),
    ("CRC32_POLY_REFL", 0xEDB88320, "CRC-32 polynomial 0x04C11DB7, reflected (Ethernet/zlib), of the ICRC"),
    ("ICRC_SEED", 0xDEBB20E3, "CRC-32 register after the 8 bytes of 0xFF that stand for the masked LRH"),
]
# BTH opcodes (IBA table 37): (name, value, extension headers after the BTH, in order).
BTH_OPCODES = [
    ("SEND_FIRST", 0x00, ()), ("SEND_MIDDLE", 0x01, ()), ("SEND_LAST", 0x02, ()),
    ("SEND_LAST_IMM", 0x03, ("IMMDT",)), ("SEND_ONLY", 0x04, ()), ("SEND_ONLY_IMM", 0x05, ("IMMDT",)),
    ("WRITE_FIRST", 0x06, ("RETH",)), ("WRITE_MIDDLE", 0x07, ()), ("WRITE_LAST", 0x08, ()),
    ("WRITE_LAST_IMM", 0x09, ("IMMDT",)), ("WRITE_ONLY", 0x0A, ("RETH",)),
    ("WRITE_ONLY_IMM", 0x0B, ("RETH", "IMMDT")), ("READ_REQ", 0x0C, ("RETH",)),
    ("READ_RESP_FIRST", 0x0D, ("AETH",)), ("READ_RESP_MIDDLE", 0x0E, ()), ("READ_RESP_LAST", 0x0F, ("AETH",)),
    ("READ_RESP_ONLY", 0x10, ("AETH",)), ("ACK", 0x11, ("AETH",)),
    # The ATOMIC_ACKNOWLEDGE's AtomicAckETH (the 8-byte original value) is handled as its 8 payload bytes:
    # the same bytes on the wire, placed like a one-packet READ response's.
    ("ATOMIC_ACK", 0x12, ("AETH",)), ("CMP_SWAP", 0x13, ("ATOMICETH",)), ("FETCH_ADD", 0x14, ("ATOMICETH",)),
    # UD (IBA table 37, transport 011): one packet per message
    ("UD_SEND_ONLY", 0x64, ("DETH",)), ("UD_SEND_ONLY_IMM", 0x65, ("DETH", "IMMDT")),
]
# AETH = {syndrome[31:24], MSN[23:0]}; syndrome = {0, type[6:5], value[4:0]} (IBA 9.7.5.1).
AETH_TYPES = [("ACK", 0, "value: credit count"), ("RNR_NAK", 1, "value: RNR timer code"),
              ("NAK", 3, "value: NAK code")]
NAK_CODES = [("PSN_SEQ_ERR", 0), ("INV_REQ", 1), ("REM_ACCESS_ERR", 2), ("REM_OP_ERR", 3), ("INV_RD_REQ", 4)]
AETH_CREDIT_INVALID = 0x1F  # ACK credit field "invalid": no end-to-end credits (SRQ, as mlx5 sends)
# RNR NAK timer codes (IBA table 45), microseconds, index = code.
RNR_TIMER_US = [655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
                5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680,
                491520]

# The engines' internal header of one RoCEv2 RC packet, handed to the frame builder and produced by the
# parser (not visible to software): SV packed struct roce_hdr_t (first field in the MSBs) and the C++
# model's RoceHdr with pack/unpack to Verilator words. (field, bits, meaning)
ROCE_HDR = [
    ("DST_MAC", 48, "byte 0 on the wire is bits [47:40]"),
    ("SRC_MAC", 48, ""),
    ("SRC_IP", 32, "a.b.c.d as 0xaabbccdd"),
    ("DST_IP", 32, ""),
    ("IP_TOS", 8, "IPv4 TOS byte (DSCP, ECN): the GRH traffic class"),
    ("IP_TTL", 8, "IPv4 TTL: the GRH hop limit"),
    ("UDP_SPORT", 16, ""),
    ("OPCODE", 8, "BTH opcode (RC: 0x00..0x1F)"),
    ("SE", 1, "solicited event"),
    ("ACK_REQ", 1, "BTH AckReq"),
    ("DEST_QP", 24, ""),
    ("PSN", 24, ""),
    ("RETH_VA", 64, "RETH, present for RDMA WRITE FIRST/ONLY and READ REQUEST; also the AtomicETH's VA"),
    ("RETH_RKEY", 32, "also the AtomicETH's R_Key"),
    ("RETH_LEN", 32, "an atomic request's is ATOMIC_LEN from the parser (not on the wire)"),
    ("ATOM_SWAP", 64, "AtomicETH swap (CMP_SWAP) or add (FETCH_ADD) data"),
    ("ATOM_CMP", 64, "AtomicETH compare data"),
    ("IMM", 32, "ImmDt: [31:24] is the first byte on the wire"),
    ("AETH", 32, "AETH {syndrome[31:24], msn[23:0]}"),
    ("DETH_QKEY", 32, "DETH (UD): Q_Key"),
    ("DETH_SQP", 24, "DETH (UD): source QP"),
    ("PAY_LEN", 13, "payload bytes, without pad (0..MAX_PMTU); from the parser, a UD packet's GRH_LEN bytes of "
     "GRH in front of its payload count too"),
]
