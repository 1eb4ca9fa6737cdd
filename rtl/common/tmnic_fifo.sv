// Synchronous first-word-fall-through FIFO with valid/ready on both sides.
//
// The storage is a plain register array written only on a push (maps to distributed RAM / LUTRAM);
// the head entry is read combinationally from it. No pass-through: an entry pushed in cycle t is
// visible at the output from cycle t+1. Pushing into a full FIFO or popping an empty one is ignored
// (s_ready_o / m_valid_o tell when a handshake happens).
//
// OUT_REG = 1 keeps the head entry in a register (loaded from the storage, or straight from the
// write side when the storage is empty), so m_data_o comes from flip-flops next to the consumer
// rather than through the storage's read multiplexer: same cycle behaviour, same capacity, one
// WIDTH-bit register more. For wide entries whose consumer does heavy logic on the head.
module tmnic_fifo #(
  parameter int unsigned WIDTH   = 32,    // entry width in bits
  parameter int unsigned DEPTH   = 4,     // number of entries, power of two, >= 2
  parameter int unsigned OUT_REG = 0,     // 1: head entry in a register
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
  if (OUT_REG > 1) begin : g_out_reg_check
    $fatal(1, "tmnic_fifo: OUT_REG must be 0 or 1");
  end
  if (WIDTH < 1) begin : g_width_check
    $fatal(1, "tmnic_fifo: WIDTH must be >= 1");
  end

  logic [WIDTH-1:0] mem_q [DEPTH];
  logic [AW:0]      wr_ptr_q, wr_ptr_d;
  logic [AW:0]      rd_ptr_q, rd_ptr_d;
  logic [AW:0]      mem_level;
  logic             push, pop;
  logic             mem_push, mem_pop;  // storage handshakes (differ from push/pop if OUT_REG)

  assign mem_level = wr_ptr_q - rd_ptr_q;
  assign s_ready_o = (level_o != (AW + 1)'(DEPTH));
  assign push      = s_valid_i && s_ready_o;
  assign pop       = m_valid_o && m_ready_i;

  always_comb begin
    wr_ptr_d = wr_ptr_q;
    rd_ptr_d = rd_ptr_q;
    if (mem_push) begin
      wr_ptr_d = wr_ptr_q + 1'b1;
    end
    if (mem_pop) begin
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

  if (OUT_REG != 0) begin : g_out_reg
    logic             head_valid_q, head_valid_d;
    logic             head_load, head_bypass;
    logic [WIDTH-1:0] head_q;

    // The head register takes the oldest entry whenever it is empty or being popped: from the
    // storage if it holds any, else the entry being pushed.
    always_comb begin
      head_valid_d = head_valid_q && !pop;
      head_load    = 1'b0;
      head_bypass  = 1'b0;
      if (!head_valid_d) begin
        if (mem_level != '0) begin
          head_load    = 1'b1;
          head_valid_d = 1'b1;
        end else if (push) begin
          head_bypass  = 1'b1;
          head_valid_d = 1'b1;
        end
      end
    end

    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) begin
        head_valid_q <= 1'b0;
      end else begin
        head_valid_q <= head_valid_d;
      end
    end

    always_ff @(posedge clk_i) begin
      if (head_load) begin
        head_q <= mem_q[rd_ptr_q[AW-1:0]];
      end else if (head_bypass) begin
        head_q <= s_data_i;
      end
    end

    assign mem_push  = push && !head_bypass;
    assign mem_pop   = head_load;
    assign level_o   = mem_level + (AW + 1)'(head_valid_q);
    assign m_valid_o = head_valid_q;
    assign m_data_o  = head_q;
  end else begin : g_out_mem
    assign mem_push  = push;
    assign mem_pop   = pop;
    assign level_o   = mem_level;
    assign m_valid_o = (mem_level != '0);
    assign m_data_o  = mem_q[rd_ptr_q[AW-1:0]];
  end

  // Storage: no reset, written only on a push.
  always_ff @(posedge clk_i) begin
    if (mem_push) begin
      mem_q[wr_ptr_q[AW-1:0]] <= s_data_i;
    end
  end

`ifndef SYNTHESIS
  // The storage never overflows or underflows (the pointers are reset asynchronously, so this
  // holds in reset too).
  always_ff @(posedge clk_i) begin
    assert (!(mem_push && mem_level == (AW + 1)'(DEPTH) && !mem_pop))
      else $error("tmnic_fifo: storage overflow");
    assert (!(mem_pop && mem_level == '0))
      else $error("tmnic_fifo: storage underflow");
  end
`endif

endmodule
