// The clock of a Verilated block.
#pragma once

#include <verilated.h>

namespace tmnic::tb {

// One clock period of a Verilated block whose clock is clk_i (inputs set before, outputs read
// after): rising edge, falling edge, simulation time + 1.
template <class Top>
inline void clock_tick(Top& top, VerilatedContext& ctx) {
  top.clk_i = 1;
  top.eval();
  top.clk_i = 0;
  top.eval();
  ctx.timeInc(1);
}

}  // namespace tmnic::tb
