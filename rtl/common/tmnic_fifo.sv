// Synchronous first-word-fall-through FIFO with valid/ready on both sides.
//
// The storage is a plain register array written only on a push (maps to distributed RAM / LUTRAM);
// the head entry is read combinationally from it. No pass-through: an entry pushed in cycle t is
// visible at the output from cycle t+1. Pushing into a full FIFO or popping an empty one is ignored
// (s_ready_o / m_valid_o tell when a handshake happens).
module tmnic_fifo #(
  parameter int unsigned WIDTH = 32,  // entry width in bits
  parameter int unsigned DEPTH = 4,   // number of entries, power of two, >= 2
  localparam int unsigned AW = $clog2(DEPTH)
) (
  input  logic             clk_i,
  input  logic             rst_ni,

  // Write side.
  input  logic [WIDTH-1:0] s_data_i,
  input  logic             s_valid_i,
  output logic             s_ready_o,

  // Read side (head of the FIFO).
  output logic [WIDTH-1:0] m_data_o,
  output logic             m_valid_o,
  input  logic             m_ready_i,

  // Number of entries held (0..DEPTH).
  output logic [AW:0]      level_o
);

  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_param_check
    $fatal(1, "tmnic_fifo: DEPTH must be a power of two >= 2");
  end
  if (WIDTH < 1) begin : g_width_check
    $fatal(1, "tmnic_fifo: WIDTH must be >= 1");
  end

  logic [WIDTH-1:0] mem_q [DEPTH];
  logic [AW:0]      wr_ptr_q, wr_ptr_d;
  logic [AW:0]      rd_ptr_q, rd_ptr_d;
  logic             push, pop;

  assign level_o   = wr_ptr_q - rd_ptr_q;
  assign s_ready_o = (level_o != (AW + 1)'(DEPTH));
  assign m_valid_o = (wr_ptr_q != rd_ptr_q);
  assign m_data_o  = mem_q[rd_ptr_q[AW-1:0]];

  assign push = s_valid_i && s_ready_o;
  assign pop  = m_valid_o && m_ready_i;

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    if (push) begin
      wr_ptr_d = wr_ptr_q + 1'b1;
    end
    if (pop) begin
      rd_ptr_d = rd_ptr_q + 1'b1;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
    end else begin
      wr_ptr_q <= wr_ptr_d;
      rd_ptr_q <= rd_ptr_d;
    end
  end

  // Storage: no reset, written only on a push.
  always_ff @(posedge clk_i) begin
    if (push) begin
      mem_q[wr_ptr_q[AW-1:0]] <= s_data_i;
    end
  end

endmodule
