// Memory region: one entry of the NIC's MR table, keyed by (index << MR_KEY_SHIFT) | generation.
#pragma once
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

struct tmnic_mr {
  struct ibv_mr ibv;  // first: ibv_mr* <-> tmnic_mr* by cast
  uint32_t index = 0;
  uint64_t dma = 0;  // device address of `ibv.addr`, from Backend::dma_map
  uint64_t iova = 0;    // the address remote peers and WQEs use (SET_MR VA)
  uint32_t access = 0;  // hwif access bits in the table entry
};

inline tmnic_mr* to_tmr(struct ibv_mr* mr) { return reinterpret_cast<tmnic_mr*>(mr); }
