// Clock-only driver of a Verilated tmnic_top for scripts/sim_profile.sh: reset, then N idle cycles
// (no host, no wire), timed. What an idle NIC costs per cycle is the floor under every simulation.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <verilated.h>

#include "Vtmnic_top.h"

int main(int argc, char** argv) {
  VerilatedContext ctx;
  ctx.commandArgs(argc, argv);
  Vtmnic_top t(&ctx);
  const long n = argc > 1 ? std::atol(argv[1]) : 400000;
  t.rst_ni = 0;
  t.clk_i = 0;
  t.eval();
  for (int i = 0; i < 8; i++) {
    t.clk_i = 1;
    t.eval();
    t.clk_i = 0;
    t.eval();
  }
  t.rst_ni = 1;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; i++) {
    t.clk_i = 0;
    t.eval();
    t.clk_i = 1;
    t.eval();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"idle_cycles\": %ld, \"wall_s\": %.3f, \"cycles_per_s\": %.0f}\n", n, s, double(n) / s);
  t.final();
  return 0;
}
