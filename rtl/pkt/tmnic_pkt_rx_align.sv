// Realigner of the RoCEv2 frame parser (tmnic_pkt_rx): payload words as they sit in the frame
// buffer (the payload starting at byte sh of its first word) to the payload stream packed from
// byte 0, tlast on its last beat, bytes past tkeep zero.
//
// Input: the words of one payload after another (the parser's read-data FIFO head), each with
//   first  first word of the payload
//   last   last word of the payload
//   flush  (on the last word) the payload's bytes in it spill into one more output beat
//   sh     payload offset in the first word, the same in every word of the payload
//   lcnt   bytes in the payload's last output beat, 1..W
// A payload of p bytes arrives as ceil((p + sh) / W) words and leaves as ceil(p / W) beats. A
// first word that is not also the last only fills prev_q; the flush is one more beat from prev_q,
// so a payload spanning more than one word costs one cycle without output.
//
// The output register is loaded, and the wide shift evaluated, only when a beat is emitted (the
// clocked block below, not next-state logic): the simulator's cost follows traffic.
module tmnic_pkt_rx_align #(
  parameter int unsigned DATA_W = 512,  // 256 or 512
  localparam int unsigned W  = DATA_W / 8,
  localparam int unsigned LW = $clog2(W)
) (
  input  logic              clk_i,
  input  logic              rst_ni,

  input  logic [DATA_W-1:0] word_data_i,
  input  logic              word_first_i,
  input  logic              word_last_i,
  input  logic              word_flush_i,
  input  logic [LW-1:0]     word_sh_i,
  input  logic [LW:0]       word_lcnt_i,
  input  logic              word_valid_i,
  output logic              word_ready_o,

  output logic [DATA_W-1:0] m_pay_tdata_o,
  output logic [W-1:0]      m_pay_tkeep_o,
  output logic              m_pay_tlast_o,
  output logic              m_pay_tvalid_o,
  input  logic              m_pay_tready_i
);
  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_pkt_rx_align: DATA_W must be 256 or 512");
  end

  // Thermometer code: lanes [0, n) set, n in 0..W.
  function automatic logic [W-1:0] therm(input logic [LW:0] n);
    return ~({W{1'b1}} << n);
  endfunction

  // Control (reset)
  logic              flush_q, flush_d;    // one more output beat from prev_q
  logic              m_valid_q, m_valid_d;
  // Datapath (no reset)
  logic [DATA_W-1:0] prev_q;              // previous payload word
  logic [LW-1:0]     prev_sh_q;
  logic [LW:0]       prev_lcnt_q;
  logic [DATA_W-1:0] m_data_q;
  logic [W-1:0]      m_keep_q;
  logic              m_last_q;
  logic              out_free, take, emit;

  always_comb begin
    out_free = !m_valid_q || m_pay_tready_i;
    take     = 1'b0;
    emit     = 1'b0;
    flush_d  = flush_q;
    if (flush_q) begin
      emit = out_free;
      if (out_free) flush_d = 1'b0;
    end else if (word_valid_i) begin
      if (word_first_i && !word_last_i) begin
        take = 1'b1;                      // only fills prev_q
      end else begin
        take = out_free;
        emit = out_free;
        if (out_free && !word_first_i && word_last_i && word_flush_i) flush_d = 1'b1;
      end
    end
    m_valid_d = m_valid_q;
    if (emit) m_valid_d = 1'b1;
    else if (m_pay_tready_i) m_valid_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      flush_q   <= 1'b0;
      m_valid_q <= 1'b0;
    end else begin
      flush_q   <= flush_d;
      m_valid_q <= m_valid_d;
    end
  end

  // One funnel shift {hi, lo} >> 8*sh serves all three cases (no W - sh subtraction in front of
  // the shifter): a first word alone {0, word}, a later word {word, prev}, the flush {0, prev}.
  // Every word of a payload has the same sh, so the flush uses prev_sh_q, the others the word's.
  always_ff @(posedge clk_i) begin : p_align
    logic [2*DATA_W-1:0] f;
    logic [LW-1:0]       sh;
    logic [DATA_W-1:0]   d;
    logic [W-1:0]        k;
    logic                l;
    if (emit) begin
      if (flush_q) begin
        f  = {{DATA_W{1'b0}}, prev_q};
        sh = prev_sh_q;
        l  = 1'b1;
        k  = therm(prev_lcnt_q);
      end else begin
        f  = word_first_i ? {{DATA_W{1'b0}}, word_data_i} : {word_data_i, prev_q};
        sh = word_sh_i;
        l  = word_last_i && (word_first_i || !word_flush_i);
        k  = l ? therm(word_lcnt_i) : {W{1'b1}};
      end
      d = DATA_W'(f >> (8 * 32'(sh)));
      for (int unsigned i = 0; i < W; i++) begin
        m_data_q[8*i +: 8] <= k[i] ? d[8*i +: 8] : 8'h00;
      end
      m_keep_q <= k;
      m_last_q <= l;
    end
    if (take) begin                       // (never while flushing)
      prev_q      <= word_data_i;
      prev_sh_q   <= word_sh_i;
      prev_lcnt_q <= word_lcnt_i;
    end
  end

  assign word_ready_o   = take;
  assign m_pay_tdata_o  = m_data_q;
  assign m_pay_tkeep_o  = m_keep_q;
  assign m_pay_tlast_o  = m_last_q;
  assign m_pay_tvalid_o = m_valid_q;

`ifndef SYNTHESIS
  // A word is held, unchanged, until taken (tmnic_hold_chk copies it only while it waits: concurrent
  // $stable checks on these words cost a packet test 40 %). A beat is held because its registers load
  // only on emit, which waits for a free output: checked as that, without copying the beat.
  tmnic_hold_chk #(.W(DATA_W + 2 * LW + 4), .NAME("tmnic_pkt_rx_align: payload word")) u_word_hold (
    .clk_i, .rst_ni, .valid_i(word_valid_i), .ready_i(word_ready_o),
    .data_i({word_data_i, word_first_i, word_last_i, word_flush_i, word_sh_i, word_lcnt_i}));
  logic chk_q, out_wait_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  always_ff @(posedge clk_i) begin : p_chk
    if (chk_q && word_valid_i && word_last_i) begin
      assert (word_lcnt_i != '0 && 32'(word_lcnt_i) <= W)
        else $error("tmnic_pkt_rx_align: last word with lcnt outside 1..W");
    end
    out_wait_q <= m_valid_q && !m_pay_tready_i;
    if (chk_q) begin
      assert (!out_wait_q || m_valid_q) else $error("tmnic_pkt_rx_align: payload beat dropped before it was taken");
      assert (!(m_valid_q && !m_pay_tready_i && emit))
        else $error("tmnic_pkt_rx_align: output register loaded while its beat waits");
    end
  end
`endif
endmodule
