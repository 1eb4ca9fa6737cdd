// Generations and scrubbing of the tag-matching engine's tables.
//
// CLEAR of an SRQ (its reconfiguration) is O(1): the SRQ's generation advances, and every class
// slot and handle record written under an older generation stops counting (the engine compares the
// generation on each use). The stale words are removed in the background: a pass reads every table
// address in cycles where the engine's pipeline leaves the RAM ports free (free_i) and writes back
// the stale words as empty. A generation value may be reused only once no word of it can be left:
// gbase_q[s] is the generation of SRQ s at the start of the last complete pass, and a CLEAR of s is
// allowed while its next generation differs from gbase_q[s] (clear_ok_o), i.e. up to 2^GEN_W - 1
// CLEARs of one SRQ per pass. After reset a first pass empties every word unconditionally (block
// RAM keeps its contents over a reset) while the engine accepts nothing (init_o).
//
// Timing: the read of address a is issued in a free cycle; the next cycle the engine sees the data
// and writes back (wr_o, wr_addr_o) what is stale. A free cycle means no request in stages s0..s4:
// neither the read nor the write meets one of the pipeline's accesses (a request accepted in the
// read's cycle reads two edges after the write-back), and words the write-back has not reached yet
// are stale, which every use treats as empty anyway.
module tmnic_tm_scrub #(
  parameter int unsigned NUM_SRQ = 16,
  parameter int unsigned WORDS   = 1024,  // addresses per pass: max(buckets, handles)
  parameter int unsigned GEN_W   = 2,
  localparam int unsigned SRQ_W = $clog2(NUM_SRQ),
  localparam int unsigned AW    = $clog2(WORDS)
) (
  input  logic clk_i,
  input  logic rst_ni,

  output logic [NUM_SRQ-1:0][GEN_W-1:0] gen_o,
  output logic [NUM_SRQ-1:0]            clear_ok_o,
  input  logic                          clear_i,     // a CLEAR of clear_srq_i commits
  input  logic [SRQ_W-1:0]              clear_srq_i,

  input  logic                          free_i,      // the pipeline leaves the RAM ports free
  output logic                          init_o,      // first pass after reset: everything is stale
  output logic                          rd_o,        // read address rd_addr_o this cycle
  output logic [AW-1:0]                 rd_addr_o,
  output logic                          wr_o,        // write back the word read last cycle
  output logic [AW-1:0]                 wr_addr_o
);
  if (WORDS < 2 || (WORDS & (WORDS - 1)) != 0) begin : g_chk_words
    $fatal(1, "tmnic_tm_scrub: WORDS must be a power of two >= 2");
  end
  if (GEN_W < 1 || GEN_W > 4) begin : g_chk_gen
    $fatal(1, "tmnic_tm_scrub: GEN_W must be in 1..4");
  end

  logic [NUM_SRQ-1:0][GEN_W-1:0] gen_q, gbase_q, gstart_q;
  logic          run_q, init_q, wr_q;
  logic [AW-1:0] addr_q, wr_addr_q;

  logic need;  // some SRQ may have stale words
  always_comb begin
    need = 1'b0;
    for (int s = 0; s < int'(NUM_SRQ); s++) begin
      need |= gen_q[s] != gbase_q[s];
      clear_ok_o[s] = GEN_W'(gen_q[s] + 1'b1) != gbase_q[s];
    end
  end

  assign rd_o      = run_q && free_i;
  assign rd_addr_o = addr_q;
  assign wr_o      = wr_q;
  assign wr_addr_o = wr_addr_q;
  assign init_o    = init_q;
  assign gen_o     = gen_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      gen_q    <= '0;
      gbase_q  <= '0;
      gstart_q <= '0;
      run_q    <= 1'b1;
      init_q   <= 1'b1;
      wr_q     <= 1'b0;
      addr_q   <= '0;
    end else begin
      wr_q <= rd_o;
      if (rd_o) begin
        addr_q <= addr_q + 1'b1;
        if (addr_q == AW'(WORDS - 1)) begin
          // Last address of the pass (its write-back is next cycle, before any later use).
          run_q   <= 1'b0;
          gbase_q <= gstart_q;
        end
      end
      // The first pass ends with the write-back of its last address: until then init_o holds, so
      // that word is emptied whatever it holds (it dropped with the read before, and a live record
      // of the last handle from before a reset survived it).
      if (wr_q && wr_addr_q == AW'(WORDS - 1)) init_q <= 1'b0;
      if (!run_q && need) begin
        run_q    <= 1'b1;
        gstart_q <= gen_q;
      end
      if (clear_i) gen_q[clear_srq_i] <= gen_q[clear_srq_i] + 1'b1;
    end
  end
  always_ff @(posedge clk_i) if (rd_o) wr_addr_q <= addr_q;

`ifndef SYNTHESIS
  logic chk_q;  // checks start one cycle after reset
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  a_clear_allowed: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(clear_i && !clear_ok_o[clear_srq_i])) else $error("tmnic_tm_scrub: CLEAR reuses a generation still in the tables");
  a_no_clear_in_init: assert property (@(posedge clk_i) disable iff (!chk_q)
    !(clear_i && init_q)) else $error("tmnic_tm_scrub: CLEAR during the reset pass");
`endif
endmodule
