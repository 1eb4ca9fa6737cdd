// tmnic internal types shared between engines (not visible to software; see tmnic_hwif_pkg for that).
package tmnic_pkg;
  import tmnic_hwif_pkg::*;

  // Header of one RoCEv2 RC packet, as handed to the frame builder and produced by the frame parser.
  // Which extension headers are present follows from the BTH opcode (see bth_ext_len).
  typedef struct packed {
    logic [47:0] dst_mac;
    logic [47:0] src_mac;
    logic [31:0] src_ip;
    logic [31:0] dst_ip;
    logic [15:0] udp_sport;
    logic [7:0]  opcode;     // BTH opcode (RC: 0x00..0x1F)
    logic        se;         // solicited event
    logic        ack_req;    // BTH AckReq
    logic [23:0] dest_qp;
    logic [23:0] psn;
    logic [63:0] reth_va;    // RETH, present for RDMA WRITE FIRST/ONLY and READ REQUEST
    logic [31:0] reth_rkey;
    logic [31:0] reth_len;
    logic [31:0] imm;        // ImmDt: [31:24] is the first byte on the wire
    logic [31:0] aeth;       // AETH {syndrome[31:24], msn[23:0]}
    logic [12:0] pay_len;    // payload bytes, without pad (0..4096)
  } roce_hdr_t;

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
  } qp_cfg_t;

  // Memory region: key, protection domain, access rights and the VA -> IOVA translation.
  typedef struct packed {
    logic        valid;
    logic [31:0] key;
    logic [15:0] pd;
    logic [2:0]  access;      // tmnic_hwif_pkg::ACCESS_*_BIT
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

  // BTH opcodes used by the NIC (RC).
  localparam logic [7:0] OP_SEND_FIRST = 8'h00;
  localparam logic [7:0] OP_SEND_MIDDLE = 8'h01;
  localparam logic [7:0] OP_SEND_LAST = 8'h02;
  localparam logic [7:0] OP_SEND_LAST_IMM = 8'h03;
  localparam logic [7:0] OP_SEND_ONLY = 8'h04;
  localparam logic [7:0] OP_SEND_ONLY_IMM = 8'h05;
  localparam logic [7:0] OP_WRITE_FIRST = 8'h06;
  localparam logic [7:0] OP_WRITE_MIDDLE = 8'h07;
  localparam logic [7:0] OP_WRITE_LAST = 8'h08;
  localparam logic [7:0] OP_WRITE_LAST_IMM = 8'h09;
  localparam logic [7:0] OP_WRITE_ONLY = 8'h0A;
  localparam logic [7:0] OP_WRITE_ONLY_IMM = 8'h0B;
  localparam logic [7:0] OP_READ_REQ = 8'h0C;
  localparam logic [7:0] OP_READ_RESP_FIRST = 8'h0D;
  localparam logic [7:0] OP_READ_RESP_MIDDLE = 8'h0E;
  localparam logic [7:0] OP_READ_RESP_LAST = 8'h0F;
  localparam logic [7:0] OP_READ_RESP_ONLY = 8'h10;
  localparam logic [7:0] OP_ACK = 8'h11;

  localparam int unsigned ETH_HDR_LEN = 14;
  localparam int unsigned IP_HDR_LEN = 20;
  localparam int unsigned UDP_HDR_LEN = 8;
  localparam int unsigned BTH_OFF = 42;        // BTH offset in the frame (no VLAN)
  localparam int unsigned BTH_LEN = 12;
  localparam int unsigned ICRC_LEN = 4;
  localparam logic [15:0] ROCE_UDP_PORT = 16'd4791;
  localparam int unsigned MAX_PMTU = 4096;
  localparam int unsigned MAX_FRAME_LEN = 14 + 20 + 8 + 12 + 20 + MAX_PMTU + 4;  // no FCS

  // Extension-header bytes after the BTH for a supported RC opcode; unsupported opcodes give 0
  // (bth_op_supported tells them apart).
  function automatic logic [4:0] bth_ext_len(input logic [7:0] op);
    unique case (op)
      OP_SEND_LAST_IMM, OP_SEND_ONLY_IMM, OP_WRITE_LAST_IMM: bth_ext_len = 5'd4;   // ImmDt
      OP_WRITE_FIRST, OP_WRITE_ONLY, OP_READ_REQ:            bth_ext_len = 5'd16;  // RETH
      OP_WRITE_ONLY_IMM:                                     bth_ext_len = 5'd20;  // RETH + ImmDt
      OP_READ_RESP_FIRST, OP_READ_RESP_LAST,
      OP_READ_RESP_ONLY, OP_ACK:                             bth_ext_len = 5'd4;   // AETH
      default:                                               bth_ext_len = 5'd0;
    endcase
  endfunction

  function automatic logic bth_op_supported(input logic [7:0] op);
    bth_op_supported = (op <= OP_ACK);
  endfunction

  function automatic logic bth_has_imm(input logic [7:0] op);
    bth_has_imm = (op == OP_SEND_LAST_IMM) || (op == OP_SEND_ONLY_IMM) ||
                  (op == OP_WRITE_LAST_IMM) || (op == OP_WRITE_ONLY_IMM);
  endfunction

  function automatic logic bth_has_reth(input logic [7:0] op);
    bth_has_reth = (op == OP_WRITE_FIRST) || (op == OP_WRITE_ONLY) || (op == OP_WRITE_ONLY_IMM) ||
                   (op == OP_READ_REQ);
  endfunction

  function automatic logic bth_has_aeth(input logic [7:0] op);
    bth_has_aeth = (op == OP_READ_RESP_FIRST) || (op == OP_READ_RESP_LAST) ||
                   (op == OP_READ_RESP_ONLY) || (op == OP_ACK);
  endfunction

  // One scatter/gather entry of a WQE held as 1024 bits (WQE byte k at bits [8k+7:8k]).
  typedef struct packed {
    logic [31:0] lkey;
    logic [31:0] length;
    logic [63:0] addr;
  } sge_t;

  function automatic sge_t wqe_sge(input logic [1023:0] w, input logic [2:0] i);
    logic [127:0] raw;
    raw = w[(WQE_SGE0_OFF + 16 * int'(i)) * 8 +: 128];
    wqe_sge = '{lkey: raw[SGE_LKEY_OFF*8 +: 32], length: raw[SGE_LENGTH_OFF*8 +: 32],
                addr: raw[SGE_ADDR_OFF*8 +: 64]};
  endfunction

  // Protection check of one SGE against its MR: key, PD, bounds (no wrap-around) and, for writes by
  // the NIC into host memory, LOCAL_WRITE access. A zero-length SGE still needs a valid key.
  function automatic logic mr_ok(input mr_t m, input logic [31:0] key, input logic [15:0] pd,
                                 input logic [63:0] addr, input logic [31:0] len, input logic need_write);
    logic [64:0] end_a, end_m;
    end_a = {1'b0, addr} + {33'd0, len};
    end_m = {1'b0, m.va} + {1'b0, m.len};
    mr_ok = m.valid && (m.key == key) && (m.pd == pd) && (addr >= m.va) && (end_a <= end_m) &&
            (!need_write || m.access[0]);
  endfunction

  // IO virtual address of a byte inside an MR.
  function automatic logic [63:0] mr_iova(input mr_t m, input logic [63:0] addr);
    mr_iova = addr - m.va + m.iova;
  endfunction

  // RNR NAK timer code (IBA table) -> microseconds.
  function automatic logic [19:0] rnr_timer_us(input logic [4:0] code);
    unique case (code)
      5'h00: rnr_timer_us = 20'd655360; 5'h01: rnr_timer_us = 20'd10;     5'h02: rnr_timer_us = 20'd20;
      5'h03: rnr_timer_us = 20'd30;     5'h04: rnr_timer_us = 20'd40;     5'h05: rnr_timer_us = 20'd60;
      5'h06: rnr_timer_us = 20'd80;     5'h07: rnr_timer_us = 20'd120;    5'h08: rnr_timer_us = 20'd160;
      5'h09: rnr_timer_us = 20'd240;    5'h0A: rnr_timer_us = 20'd320;    5'h0B: rnr_timer_us = 20'd480;
      5'h0C: rnr_timer_us = 20'd640;    5'h0D: rnr_timer_us = 20'd960;    5'h0E: rnr_timer_us = 20'd1280;
      5'h0F: rnr_timer_us = 20'd1920;   5'h10: rnr_timer_us = 20'd2560;   5'h11: rnr_timer_us = 20'd3840;
      5'h12: rnr_timer_us = 20'd5120;   5'h13: rnr_timer_us = 20'd7680;   5'h14: rnr_timer_us = 20'd10240;
      5'h15: rnr_timer_us = 20'd15360;  5'h16: rnr_timer_us = 20'd20480;  5'h17: rnr_timer_us = 20'd30720;
      5'h18: rnr_timer_us = 20'd40960;  5'h19: rnr_timer_us = 20'd61440;  5'h1A: rnr_timer_us = 20'd81920;
      5'h1B: rnr_timer_us = 20'd122880; 5'h1C: rnr_timer_us = 20'd163840; 5'h1D: rnr_timer_us = 20'd245760;
      5'h1E: rnr_timer_us = 20'd327680; default: rnr_timer_us = 20'd491520;
    endcase
  endfunction

  // 24-bit PSN comparison: a is at or after b within half the PSN space.
  function automatic logic psn_ge(input logic [23:0] a, input logic [23:0] b);
    logic [23:0] d;
    d = a - b;
    psn_ge = !d[23];
  endfunction

endpackage
