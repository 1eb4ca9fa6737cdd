// Protection domain: just a number the NIC compares between an MR and the QP/SRQ using it.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>

struct tmnic_pd {
  struct ibv_pd ibv;  // first: ibv_pd* <-> tmnic_pd* by cast
  uint32_t pdn = 0;
  std::atomic<int> usecnt{0};  // MRs, QPs and SRQs on this PD: deallocation fails with EBUSY
};

inline tmnic_pd* to_tpd(struct ibv_pd* pd) { return reinterpret_cast<tmnic_pd*>(pd); }
