// Statistics: one 32-bit wrapping counter per event input, readable through BAR0.
module tmnic_stats #(
  parameter int unsigned N = 16
) (
  input  logic clk_i,
  input  logic rst_ni,
  input  logic [N-1:0]       inc_i,
  output logic [N-1:0][31:0] cnt_o
);
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) cnt_o <= '0;
    else if (inc_i != '0) begin
      for (int i = 0; i < N; i++) if (inc_i[i]) cnt_o[i] <= cnt_o[i] + 32'd1;
    end
  end
endmodule
