// Shared declarations of the libibverbs.so.1 front end.
#pragma once
#include <infiniband/verbs.h>

#include <memory>

#include "tmnic/backend.hpp"

// Symbols of the ABI are given the exact names and versions Debian's libibverbs.so.1 (rdma-core
// 44) exports; everything else in this library is hidden by the version script.
#define TMNIC_EXPORT extern "C" __attribute__((visibility("default")))

// One device as listed by ibv_get_device_list: lives until the process exits, like libibverbs'
// verbs_device objects, so that pointers applications keep stay valid.
struct tmnic_ibdev {
  struct ibv_device dev;  // first: ibv_device* <-> tmnic_ibdev* by cast
  std::shared_ptr<tmnic::Backend> be;
  int index = 0;
};

inline tmnic_ibdev* to_ibdev(struct ibv_device* d) { return reinterpret_cast<tmnic_ibdev*>(d); }
