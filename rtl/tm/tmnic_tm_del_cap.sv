// A DEL's first pass in the tag-matching engine's commit (tmnic_tm_commit): the handle's state,
// captured when the DEL is in s2 (it runs alone, so nothing commits between the reads and s4), and
// what the commit needs from it: whether the handle is live in the DEL's SRQ and generation,
// whether its entry was disabled (the SRQ's threshold, read in s3), and the FIND request that sends
// the entry's key through the pipeline again for an entry in a class FIFO. Whether it is live is
// decided in s3 and registered (a DEL's FIND becomes s0's next request: that path starts here).
module tmnic_tm_del_cap import tmnic_tm_pkg::*; #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned CAM_W   = 32,
  parameter int unsigned SEQ_W   = 62,
  parameter int unsigned GEN_W   = 2,
  parameter type req_t  = req_dflt_t,
  parameter type live_t = live_dflt_t,
  parameter type ent_t  = ent_dflt_t,
  localparam int unsigned CIW = (CAM_W > 1) ? $clog2(CAM_W) : 1,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ)
) (
  input  logic                          clk_i,
  input  logic                          adv_i,      // the pipeline moves
  input  logic                          del2_i,     // a DEL is in s2
  input  live_t                         lv_rdata_i, // its handle's records (s2)
  input  ent_t                          en_rdata_i,
  input  logic                          q_dis_act_i, // its SRQ's disable threshold (s3)
  input  logic [SEQ_W-1:0]              q_dis_seq_i,
  input  logic [SRQ_W-1:0]              r3_srq_i,   // the DEL in s3: its SRQ
  input  logic                          v4_i,
  input  req_t                          r4_i,       // the DEL in s4
  input  logic [NUM_SRQ-1:0][GEN_W-1:0] gen_i,
  output loc_e                          loc_o,      // where the entry is
  output logic [CIW-1:0]                cam_o,      // ...its CAM entry
  output logic                          ok_o,       // live, in the current generation of its SRQ
  output logic                          dis_o,      // the entry was disabled
  output req_t                          find_req_o
);
  live_t live_q;
  ent_t  ent_q;
  logic  dis_q;
  logic  ok_q;

  always_ff @(posedge clk_i) begin
    if (adv_i && del2_i) begin
      live_q <= lv_rdata_i;
      ent_q  <= en_rdata_i;
    end
    if (adv_i) begin
      logic [SEQ_W-1:0] d;
      d = ent_q.seq - q_dis_seq_i;  // the entry is at or after the threshold (modulo 2^SEQ_W)
      dis_q <= q_dis_act_i && !d[SEQ_W-1];
      ok_q  <= live_q.live && live_q.srq == r3_srq_i && live_q.gen == gen_i[r3_srq_i];
    end
  end

  assign loc_o  = live_q.loc;
  assign cam_o  = live_q.cam;
  assign ok_o   = ok_q;
  assign dis_o  = dis_q;
  always_comb begin
    find_req_o         = r4_i;
    find_req_o.kind    = RK_FIND;
    find_req_o.tag     = ent_q.mtag;
    find_req_o.has_cls = 1'b1;
    find_req_o.cls     = live_q.cls;
  end

  wire unused_ok = ^ent_q.mask;  // a DEL needs the entry's masked tag and sequence number

`ifndef SYNTHESIS
  // Nothing commits while a DEL goes from s3 to s4 (it runs alone): the state read then holds.
  a_ok_held: assert property (@(posedge clk_i)
    !(v4_i && r4_i.kind == RK_DEL) ||
    ok_q == (live_q.live && live_q.srq == r4_i.srq && live_q.gen == gen_i[r4_i.srq]))
    else $error("tmnic_tm_del_cap: the handle's state changed between s3 and s4");
`endif
endmodule
