// Read side of the RoCEv2 frame parser (tmnic_pkt_rx): committed frames to headers and payload
// words.
//
// Pops a descriptor from the write side (tmnic_pkt_rx_parse) when the header register is free and
// the previous payload has been read completely, presents the header on m_hdr and reads the
// payload's buffer words, one per cycle, against credits for the 4-entry read FIFO (the RAM's
// registered read takes one cycle). The FIFO keeps its head in flip-flops; its entries are the
// payload words with what the realigner (tmnic_pkt_rx_align) needs to pack them from byte 0:
//   first  first buffer word of the payload
//   last   last buffer word of the payload
//   flush  the last word yields two output beats (its bytes spill into one more beat)
//   sh     payload offset inside the first word (the header length mod W; the same in every word)
//   lcnt   bytes in the payload's last output beat (1..W)
// rel_ptr_o frees the frame's words once its last payload word has been read (or at the descriptor
// pop for pay_len == 0).
module tmnic_pkt_rx_rd
  import tmnic_hwif_pkg::*;
#(
  parameter int unsigned DATA_W    = 512,    // 256 or 512
  parameter int unsigned BUF_BYTES = 16384,  // frame buffer size (power of two)
  localparam int unsigned W  = DATA_W / 8,
  localparam int unsigned LW = $clog2(W),
  localparam int unsigned AW = $clog2(BUF_BYTES / W)
) (
  input  logic              clk_i,
  input  logic              rst_ni,

  // Committed frames (head of the descriptor FIFO).
  input  roce_hdr_t         desc_hdr_i,
  input  logic [AW-1:0]     desc_start_i,  // first buffer word of the frame
  input  logic [AW:0]       desc_fend_i,   // buffer word after the frame (with wrap bit)
  input  logic [6:0]        desc_hl_i,     // header length (payload offset in the frame)
  input  logic              desc_valid_i,
  output logic              desc_ready_o,

  // Headers (registered).
  output roce_hdr_t         m_hdr_o,
  output logic              m_hdr_valid_o,
  input  logic              m_hdr_ready_i,

  // Frame buffer read port (tmnic_ram_sdp: data one cycle after buf_re_o) and release pointer.
  output logic              buf_re_o,
  output logic [AW-1:0]     buf_raddr_o,
  input  logic [DATA_W-1:0] buf_rdata_i,
  output logic [AW:0]       rel_ptr_o,

  // Payload words (head of the read FIFO, from flip-flops).
  output logic [DATA_W-1:0] word_data_o,
  output logic              word_first_o,
  output logic              word_last_o,
  output logic              word_flush_o,
  output logic [LW-1:0]     word_sh_o,
  output logic [LW:0]       word_lcnt_o,
  output logic              word_valid_o,
  input  logic              word_ready_i
);

  localparam int unsigned BI_W     = 8;  // payload word counts (<= MAX_FRAME_LEN / W + 1)
  localparam int unsigned BF_DEPTH = 4;  // read-data FIFO entries

  if (DATA_W != 256 && DATA_W != 512) begin : g_chk_w
    $fatal(1, "tmnic_pkt_rx_rd: DATA_W must be 256 or 512");
  end
  if ((BUF_BYTES & (BUF_BYTES - 1)) != 0 || BUF_BYTES < MAX_FRAME_LEN) begin : g_chk_buf
    $fatal(1, "tmnic_pkt_rx_rd: BUF_BYTES must be a power of two >= MAX_FRAME_LEN");
  end

  typedef struct packed {
    logic          first;
    logic          last;
    logic          flush;
    logic [LW-1:0] sh;
    logic [LW:0]   lcnt;
  } rmeta_t;

  // Control (reset)
  logic            m_hdr_valid_q, m_hdr_valid_d;
  logic            job_q, job_d;          // payload words left to read
  logic [AW:0]     rel_ptr_q, rel_ptr_d;  // words before this are free
  logic            rd_valid_q;            // a read is in the RAM this cycle
  // Datapath (no reset)
  roce_hdr_t       m_hdr_q;
  logic [AW-1:0]   job_addr_q, job_addr_d;
  logic [BI_W-1:0] job_left_q, job_left_d;
  logic            job_first_q, job_first_d;
  logic            job_flush_q, job_flush_d;
  logic [LW-1:0]   job_sh_q, job_sh_d;
  logic [LW:0]     job_lcnt_q, job_lcnt_d;
  logic [AW:0]     job_end_q, job_end_d;
  rmeta_t          rd_meta_q, rd_meta_d;

  logic [$clog2(BF_DEPTH):0] bf_level;
  logic            issue, issue_last, hdr_free, desc_pop, pop_pay;

  always_comb begin : c_ctrl
    hdr_free   = !m_hdr_valid_q || m_hdr_ready_i;
    issue      = job_q && (32'(bf_level) + 32'(rd_valid_q) < BF_DEPTH);
    issue_last = issue && (job_left_q == BI_W'(1));
    desc_pop   = desc_valid_i && hdr_free && (!job_q || issue_last);
    pop_pay    = desc_pop && (desc_hdr_i.pay_len != '0);

    job_d = job_q;
    if (issue_last) begin
      job_d = 1'b0;
    end
    if (pop_pay) begin
      job_d = 1'b1;
    end

    rel_ptr_d = rel_ptr_q;
    if (issue_last) begin
      rel_ptr_d = job_end_q;
    end
    if (desc_pop && !pop_pay) begin
      rel_ptr_d = desc_fend_i;
    end

    m_hdr_valid_d = m_hdr_valid_q;
    if (desc_pop) begin
      m_hdr_valid_d = 1'b1;
    end else if (m_hdr_ready_i) begin
      m_hdr_valid_d = 1'b0;
    end
  end

  // Job: the payload's first word is start + hl / W, its offset in it sh = hl mod W; it spans
  // nr = ceil((p + sh) / W) buffer words and np = ceil(p / W) output beats (nr == np: the last
  // word spills into one more beat).
  always_comb begin : c_job
    logic [12:0]     p;
    logic [BI_W-1:0] nr, np;
    job_addr_d  = job_addr_q;
    job_left_d  = job_left_q;
    job_first_d = job_first_q;
    job_flush_d = job_flush_q;
    job_sh_d    = job_sh_q;
    job_lcnt_d  = job_lcnt_q;
    job_end_d   = job_end_q;
    rd_meta_d   = rd_meta_q;
    p           = '0;
    nr          = '0;
    np          = '0;
    if (issue) begin
      rd_meta_d.first = job_first_q;
      rd_meta_d.last  = (job_left_q == BI_W'(1));
      rd_meta_d.flush = job_flush_q;
      rd_meta_d.sh    = job_sh_q;
      rd_meta_d.lcnt  = job_lcnt_q;
      job_addr_d      = job_addr_q + 1'b1;
      job_left_d      = job_left_q - 1'b1;
      job_first_d     = 1'b0;
    end
    if (pop_pay) begin  // (in the cycle of a job's last issue: the next job)
      p           = desc_hdr_i.pay_len;
      job_sh_d    = desc_hl_i[LW-1:0];
      np          = BI_W'((32'(p) + W - 1) >> LW);
      nr          = BI_W'((32'(p) + 32'(job_sh_d) + W - 1) >> LW);
      job_addr_d  = desc_start_i + AW'(desc_hl_i[6:LW]);
      job_left_d  = nr;
      job_first_d = 1'b1;
      job_flush_d = (nr == np);
      job_lcnt_d  = (LW + 1)'((32'(p) - 1) % W) + 1'b1;
      job_end_d   = desc_fend_i;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin : r_ctrl
    if (!rst_ni) begin
      job_q         <= 1'b0;
      rel_ptr_q     <= '0;
      m_hdr_valid_q <= 1'b0;
      rd_valid_q    <= 1'b0;
    end else begin
      job_q         <= job_d;
      rel_ptr_q     <= rel_ptr_d;
      m_hdr_valid_q <= m_hdr_valid_d;
      rd_valid_q    <= issue;
    end
  end

  always_ff @(posedge clk_i) begin : r_hdr
    if (desc_pop) begin
      m_hdr_q <= desc_hdr_i;
    end
  end

  always_ff @(posedge clk_i) begin : r_job
    job_addr_q  <= job_addr_d;
    job_left_q  <= job_left_d;
    job_first_q <= job_first_d;
    job_flush_q <= job_flush_d;
    job_sh_q    <= job_sh_d;
    job_lcnt_q  <= job_lcnt_d;
    job_end_q   <= job_end_d;
    rd_meta_q   <= rd_meta_d;
  end

  assign desc_ready_o  = desc_pop;
  assign m_hdr_o       = m_hdr_q;
  assign m_hdr_valid_o = m_hdr_valid_q;
  assign buf_re_o      = issue;
  assign buf_raddr_o   = job_addr_q;
  assign rel_ptr_o     = rel_ptr_q;

  // ---------------------------------------------------------------------------------------------
  // Read-data FIFO: the word and its metadata (registered with the read) enter together.
  // ---------------------------------------------------------------------------------------------
  rmeta_t h_meta;
  logic   bf_ready;

  tmnic_fifo #(
    .WIDTH   ($bits(rmeta_t) + DATA_W),
    .DEPTH   (BF_DEPTH),
    .OUT_REG (1)     // the realigner shifts the head: start from flip-flops, not the LUTRAM mux
  ) u_rd_fifo (
    .clk_i     (clk_i),
    .rst_ni    (rst_ni),
    .s_data_i  ({rd_meta_q, buf_rdata_i}),
    .s_valid_i (rd_valid_q),
    .s_ready_o (bf_ready),    // never low on a push: reads are issued against credits
    .m_data_o  ({h_meta, word_data_o}),
    .m_valid_o (word_valid_o),
    .m_ready_i (word_ready_i),
    .level_o   (bf_level)
  );

  assign word_first_o = h_meta.first;
  assign word_last_o  = h_meta.last;
  assign word_flush_o = h_meta.flush;
  assign word_sh_o    = h_meta.sh;
  assign word_lcnt_o  = h_meta.lcnt;

`ifndef SYNTHESIS
  // Checks (immediate assertions, as in tmnic_pkt_rx_parse). The descriptor handshake is checked
  // by tmnic_pkt_rx_parse, the payload word handshake by tmnic_pkt_rx_align.
  logic chk_q;
  logic hdr_wait_q;  // a header waited in the last cycle
  tmnic_chk_en u_chk (.clk_i, .rst_ni, .en_o(chk_q));
  always_ff @(posedge clk_i) begin : p_chk
    hdr_wait_q <= m_hdr_valid_o && !m_hdr_ready_i;
    if (chk_q) begin
      assert (!rd_valid_q || bf_ready)
        else $error("tmnic_pkt_rx_rd: read-data FIFO overflow");
      // Header handshake: held until taken; m_hdr_q is loaded only on desc_pop, which waits for
      // the header register to be free, so it does not change meanwhile.
      assert (!hdr_wait_q || m_hdr_valid_o)
        else $error("tmnic_pkt_rx_rd: header dropped before it was taken");
      assert (!(m_hdr_valid_o && !m_hdr_ready_i) || !desc_pop)
        else $error("tmnic_pkt_rx_rd: header register loaded while its header waits");
      assert (!job_q || job_left_q != '0)
        else $error("tmnic_pkt_rx_rd: read job without words");
    end
  end
`endif

endmodule
