/* Control and inspection of the simulated world from a verbs program that runs on the drop-in
 * libibverbs.so.1 (exported in version node TMNIC_SIM_1.0; absent on a real card). Used by the
 * system tests, the main job (tools/tmnic_run) and anyone who wants simulated time. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Simulated time in NIC clock cycles, and the clock. */
uint64_t tmnic_sim_now(void);
double tmnic_sim_clk_mhz(void);
/* Cycles actually evaluated (the rest were skipped because nothing could happen). */
uint64_t tmnic_sim_cycles_evaluated(void);
int tmnic_sim_num_nics(void);
/* 1 when a progress thread advances the world (TMNIC_PROGRESS=thread, or the UDP fabric), 0 when
 * the driver's waiting calls do; and how often that thread woke from sleep. */
int tmnic_sim_threaded(void);
uint64_t tmnic_sim_thread_wakeups(void);
/* BAR0 register of a NIC (statistics: 0x100 + 4 * index, see docs/hw-sw-interface.md). */
uint32_t tmnic_sim_read_reg(int nic, uint32_t off);
/* Count DMA accesses (reads and writes) of NIC `nic` that touch host memory [addr, addr+len);
 * watching a new range resets the count. */
void tmnic_sim_watch(int nic, const void* addr, size_t len);
uint64_t tmnic_sim_watch_hits(int nic);
/* Flip one bit inside the ICRC-covered part of the next `count` frames NIC `nic` sends on the wire. */
void tmnic_sim_corrupt_tx(int nic, int count);
/* The same after letting the next `skip` frames of NIC `nic` through intact. */
void tmnic_sim_corrupt_tx_after(int nic, int skip, int count);
/* Run the world until nothing is left to do, or for at most `cycles`. */
void tmnic_sim_run(uint64_t cycles);

#ifdef __cplusplus
}
#endif
