// tmnic internal types shared between engines (not visible to software; see tmnic_hwif_pkg for that).
package tmnic_pkg;

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

endpackage
