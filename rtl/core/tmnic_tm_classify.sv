// Tag-matching classification of a message's first packet on a TM-SRQ (docs/tag-matching.md):
// reads the TMH from the first payload bytes, looks EAGER/RNDV tags up in the matching engine and,
// on a hit, reads the tagged buffer's entry. The responder's rendezvous READ will start here.
//
// start_i (while idle_o) classifies the packet whose payload length is pay_len_i (stable until
// done_o) for SRQ srq_i:
//   - no payload, or a first 16-byte block that is not a TMH with EAGER/RNDV, or a payload shorter
//     than a TMH: untagged (RXK_NOTAG), into the next SRQ WQE if has_wqe_i, else rnr_o;
//   - otherwise a lookup of the tag (lk_commit_miss_o = has_wqe_i: a miss then consumes an SRQ WQE
//     as an unexpected message): a hit is RXK_MATCHED with its handle, after the tagged buffer's
//     entry is read (tb_re_o; an entry whose ADD has not reached the buffer RAM yet is waited for);
//     an unexpected miss RXK_UNEXP; a blocked lookup or a miss with an empty SRQ rnr_o.
// done_o is one cycle with the result, which holds until the next start; on a hit it comes in the
// cycle the buffer RAM shows the entry (tb_rdata, read by the caller). The statistics pulses count
// each message once, when it is classified (not for rnr_o: it comes again).
// head_beg_i says that the payload's first 16 bytes (head_first_i) are stored; has_wqe_i is read
// live (a doorbell may add a WQE while the classification waits).
module tmnic_tm_classify import tmnic_pkg::*; import tmnic_hwif_pkg::*; #(
  parameter int unsigned TM_ENTRIES = 1024,
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned LEN_W = 13,
  localparam int unsigned H_W = $clog2(TM_ENTRIES),
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic             clk_i,
  input  logic             rst_ni,

  input  logic             start_i,
  output logic             idle_o,
  input  logic [SRQ_W-1:0] srq_i,
  input  logic [LEN_W-1:0] pay_len_i,
  input  logic             has_wqe_i,
  input  logic             head_beg_i,
  input  logic [127:0]     head_first_i,

  output logic             lk_valid_o,
  input  logic             lk_ready_i,
  output logic [63:0]      lk_tag_o,
  output logic             lk_commit_miss_o,
  input  logic             lk_rsp_valid_i,
  input  logic             lk_rsp_hit_i,
  input  logic [H_W-1:0]   lk_rsp_handle_i,
  input  logic             lk_rsp_unexp_i,
  input  logic             add_pend_i,
  input  logic [H_W-1:0]   add_pend_handle_i,
  output logic             tb_re_o,
  output logic [H_W-1:0]   tb_raddr_o,

  output logic             done_o,
  output logic             rnr_o,
  output rx_kind_e         kind_o,
  output logic             rndv_o,
  output logic [63:0]      tag_o,
  output logic [31:0]      ctx_o,
  output logic [H_W-1:0]   handle_o,

  output logic             tm_exp_o,
  output logic             tm_unexp_o,
  output logic             tm_notag_o,
  output logic [SRQ_W-1:0] tm_srq_o
);
  if (TM_ENTRIES < 2 || (TM_ENTRIES & (TM_ENTRIES - 1)) != 0) begin : g_chk_n
    $fatal(1, "tmnic_tm_classify: TM_ENTRIES must be a power of two >= 2");
  end
  if (NUM_SRQ < 2 || (NUM_SRQ & (NUM_SRQ - 1)) != 0) begin : g_chk_s
    $fatal(1, "tmnic_tm_classify: NUM_SRQ must be a power of two >= 2");
  end
  if (LEN_W < 5 || LEN_W > 31) begin : g_chk_len
    $fatal(1, "tmnic_tm_classify: LEN_W must be 5..31");
  end

  typedef enum logic [2:0] {S_IDLE, S_TMH, S_LOOKUP, S_BUF, S_BUF_RD} state_e;

  // Control (reset)
  state_e           state_q, state_d;
  logic             lk_valid_d, tb_re_d, done_d, tm_exp_d, tm_unexp_d, tm_notag_d;
  // Payload (no reset)
  logic [SRQ_W-1:0] srq_q, srq_d;
  logic             rnr_d, rndv_d;
  rx_kind_e         kind_d;
  logic [63:0]      tag_d;
  logic [31:0]      ctx_d;
  logic [H_W-1:0]   handle_d;

  // TMH: opcode, app_ctx (BE32), tag (BE64)
  wire [7:0] tmh_op = head_first_i[7:0];
  logic [31:0] tmh_ctx;
  logic [63:0] tmh_tag;
  always_comb begin
    for (int i = 0; i < 4; i++) tmh_ctx[8*i +: 8] = head_first_i[(7 - i)*8 +: 8];
    for (int i = 0; i < 8; i++) tmh_tag[8*i +: 8] = head_first_i[(15 - i)*8 +: 8];
  end
  wire is_tagged = (tmh_op == TMH_EAGER || tmh_op == TMH_RNDV) && pay_len_i >= LEN_W'(TMH_SIZE);

  always_comb begin
    state_d = state_q;
    srq_d = srq_q;
    lk_valid_d = lk_valid_o && !lk_ready_i;
    tb_re_d = 1'b0;
    done_d = 1'b0;
    {tm_exp_d, tm_unexp_d, tm_notag_d} = '0;
    rnr_d = rnr_o; kind_d = kind_o; rndv_d = rndv_o; tag_d = tag_o; ctx_d = ctx_o; handle_d = handle_o;
    unique case (state_q)
      S_IDLE: if (start_i) begin
        srq_d = srq_i;
        state_d = S_TMH;
      end
      // As soon as the first 16 bytes are stored (or there is no payload)
      S_TMH: begin
        if (pay_len_i == '0 || (head_beg_i && !is_tagged)) begin
          kind_d = RXK_NOTAG;
          rndv_d = 1'b0;
          rnr_d = !has_wqe_i;
          tm_notag_d = has_wqe_i;
          done_d = 1'b1;
          state_d = S_IDLE;
        end else if (head_beg_i) begin
          tag_d = tmh_tag;
          ctx_d = tmh_ctx;
          rndv_d = (tmh_op == TMH_RNDV);
          lk_valid_d = 1'b1;
          state_d = S_LOOKUP;
        end
      end
      S_LOOKUP: if (lk_rsp_valid_i) begin
        rnr_d = 1'b0;
        if (lk_rsp_hit_i) begin
          kind_d = RXK_MATCHED;
          handle_d = lk_rsp_handle_i;
          tm_exp_d = 1'b1;
          state_d = S_BUF;
        end else if (lk_rsp_unexp_i) begin
          kind_d = RXK_UNEXP;
          tm_unexp_d = 1'b1;
          done_d = 1'b1;
          state_d = S_IDLE;
        end else begin
          // Blocked (counters too far apart) or a miss while the SRQ is empty: nothing was
          // consumed or counted; the message comes again.
          rnr_d = 1'b1;
          done_d = 1'b1;
          state_d = S_IDLE;
        end
      end
      // The buffer entry, once its ADD has written it; done_o with the RAM's data.
      S_BUF: if (!(add_pend_i && add_pend_handle_i == handle_o)) begin
        tb_re_d = 1'b1;
        state_d = S_BUF_RD;
      end
      S_BUF_RD: begin
        done_d = 1'b1;
        state_d = S_IDLE;
      end
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q <= S_IDLE;
      lk_valid_o <= 1'b0;
      tb_re_o <= 1'b0;
      done_o <= 1'b0;
      {tm_exp_o, tm_unexp_o, tm_notag_o} <= '0;
    end else begin
      state_q <= state_d;
      lk_valid_o <= lk_valid_d;
      tb_re_o <= tb_re_d;
      done_o <= done_d;
      {tm_exp_o, tm_unexp_o, tm_notag_o} <= {tm_exp_d, tm_unexp_d, tm_notag_d};
    end
  end
  always_ff @(posedge clk_i) begin
    srq_q <= srq_d;
    rnr_o <= rnr_d; kind_o <= kind_d; rndv_o <= rndv_d; tag_o <= tag_d; ctx_o <= ctx_d; handle_o <= handle_d;
    if (state_q == S_TMH) lk_commit_miss_o <= has_wqe_i;
  end

  assign idle_o = (state_q == S_IDLE);
  assign lk_tag_o = tag_o;
  assign tb_raddr_o = handle_o;
  assign tm_srq_o = srq_q;

`ifndef SYNTHESIS
  logic chk_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_start: assert property (@(posedge clk_i) disable iff (!chk_q) start_i |-> idle_o)
    else $error("tmnic_tm_classify: start while a classification runs");
  a_lk_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    lk_valid_o && !lk_ready_i |=> lk_valid_o && $stable(lk_tag_o) && $stable(lk_commit_miss_o))
    else $error("tmnic_tm_classify: lookup changed before it was taken");
  a_rsp: assert property (@(posedge clk_i) disable iff (!chk_q) lk_rsp_valid_i |-> state_q == S_LOOKUP)
    else $error("tmnic_tm_classify: lookup response with no lookup");
  a_rsp_onehot: assert property (@(posedge clk_i) disable iff (!chk_q)
    lk_rsp_valid_i |-> !(lk_rsp_hit_i && lk_rsp_unexp_i))
    else $error("tmnic_tm_classify: lookup response both hit and unexpected");
  a_len_stable: assert property (@(posedge clk_i) disable iff (!chk_q)
    !idle_o && !$past(idle_o) |-> $stable(pay_len_i))
    else $error("tmnic_tm_classify: payload length changed during the classification");
`endif
endmodule
