// Realigner of the RoCEv2 frame parser (tmnic_pkt_rx): payload words as they sit in the frame
// buffer (the payload starting at byte sh of its first word) to the payload stream packed from
// byte 0, tlast on its last beat.
//
// Input: the words of one payload after another (tmnic_pkt_rx_rd's read FIFO head), each with
//   first  first word of the payload
//   last   last word of the payload
//   flush  (on the last word) the payload's bytes in it spill into one more output beat
//   sh     payload offset in the first word, the same in every word of the payload
//   lcnt   bytes in the payload's last output beat, 1..W
// A payload of p bytes arrives as ceil((p + sh) / W) words and leaves as ceil(p / W) beats.
//
// One funnel shift {hi, lo} >> 8*sh serves all three cases (no W - sh subtraction in front of the
// shifter): a first word alone {0, head}, a later word {head, prev}, the flush {0, prev}. A first
// word that is not also the last only fills prev_q; the flush is one more beat from prev_q. So a
// payload spanning more than one word costs one cycle without output. Output registered; the
// input is taken (word_ready_o) when the output register is free or being emptied, or for a word
// that only fills prev_q.
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
  logic              flush_q, flush_d;          // one more output beat from prev_q
  logic              m_valid_q, m_valid_d;
  // Datapath (no reset)
  logic [DATA_W-1:0] prev_q;                    // previous payload word
  logic [LW-1:0]     prev_sh_q;
  logic [LW:0]       prev_lcnt_q;
  logic [DATA_W-1:0] m_data_q, m_data_d;
  logic [W-1:0]      m_keep_q, m_keep_d;
  logic              m_last_q, m_last_d;

  logic              out_free, take, emit;

  always_comb begin : c_ctrl
    out_free = !m_valid_q || m_pay_tready_i;
    take     = 1'b0;
    emit     = 1'b0;
    flush_d  = flush_q;
    if (flush_q) begin
      emit = out_free;
      if (out_free) begin
        flush_d = 1'b0;
      end
    end else if (word_valid_i) begin
      if (word_first_i && !word_last_i) begin
        take = 1'b1;                   // only fills prev_q
      end else begin
        take = out_free;
        emit = out_free;
        if (out_free && !word_first_i && word_last_i && word_flush_i) begin
          flush_d = 1'b1;
        end
      end
    end

    m_valid_d = m_valid_q;
    if (emit) begin
      m_valid_d = 1'b1;
    end else if (m_pay_tready_i) begin
      m_valid_d = 1'b0;
    end
  end

  // The next output beat, computed from registers only (the flush, or the head word) whenever there
  // is one; loaded when it is emitted. Every word of a payload has the same sh, so the flush uses
  // prev_sh_q, the others the word's.
  logic [DATA_W-1:0] f_hi, f_lo;  // the funnel {f_hi, f_lo}
  logic [LW-1:0]     f_sh;

  always_comb begin : c_beat
    m_data_d = m_data_q;
    m_keep_d = m_keep_q;
    m_last_d = m_last_q;
    f_hi     = '0;
    f_lo     = prev_q;
    f_sh     = prev_sh_q;
    if (flush_q || word_valid_i) begin
      if (flush_q) begin
        m_last_d = 1'b1;
        m_keep_d = therm(prev_lcnt_q);
      end else begin
        if (word_first_i) begin
          f_lo = word_data_i;
        end else begin
          f_hi = word_data_i;
        end
        f_sh     = word_sh_i;
        m_last_d = word_last_i && (word_first_i || !word_flush_i);
        m_keep_d = m_last_d ? therm(word_lcnt_i) : {W{1'b1}};
      end
      m_data_d = DATA_W'({f_hi, f_lo} >> (8 * 32'(f_sh)));
      for (int unsigned i = 0; i < W; i++) begin
        if (!m_keep_d[i]) begin
          m_data_d[8*i +: 8] = 8'h00;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin : r_ctrl
    if (!rst_ni) begin
      flush_q   <= 1'b0;
      m_valid_q <= 1'b0;
    end else begin
      flush_q   <= flush_d;
      m_valid_q <= m_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin : r_beat
    if (emit) begin
      m_data_q <= m_data_d;
      m_keep_q <= m_keep_d;
      m_last_q <= m_last_d;
    end
  end

  always_ff @(posedge clk_i) begin : r_prev
    if (take) begin  // (never while flushing)
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
  // Checks (immediate assertions, as in tmnic_pkt_rx_parse).
  logic chk_q;
  logic word_wait_q, out_wait_q;  // the input word / output beat waited in the last cycle
  logic [DATA_W+2*LW+3:0] word_held_q;
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  always_ff @(posedge clk_i) begin : p_chk
    word_wait_q <= word_valid_i && !word_ready_o;
    out_wait_q  <= m_pay_tvalid_o && !m_pay_tready_i;
    if (word_valid_i && !word_ready_o) begin
      word_held_q <= {word_data_i, word_first_i, word_last_i, word_flush_i, word_sh_i, word_lcnt_i};
    end
    if (chk_q) begin
      // Input handshake: a word is held, unchanged, until taken.
      if (word_wait_q) begin
        assert (word_valid_i && word_held_q ==
                {word_data_i, word_first_i, word_last_i, word_flush_i, word_sh_i, word_lcnt_i})
          else $error("tmnic_pkt_rx_align: payload word dropped or changed before it was taken");
      end
      if (word_valid_i && word_last_i) begin
        assert (word_lcnt_i != '0 && 32'(word_lcnt_i) <= W)
          else $error("tmnic_pkt_rx_align: last word with lcnt outside 1..W");
      end
      // Output handshake: held until taken; the beat registers are loaded only on emit, which
      // waits for the output register to be free, so they do not change meanwhile.
      assert (!out_wait_q || m_pay_tvalid_o)
        else $error("tmnic_pkt_rx_align: payload beat dropped before it was taken");
      assert (!(m_pay_tvalid_o && !m_pay_tready_i) || !emit)
        else $error("tmnic_pkt_rx_align: output register loaded while its beat waits");
    end
  end
`endif

endmodule
