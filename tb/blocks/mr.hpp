// A memory region as tmnic_ctx's MR table holds it (tmnic_pkg mr_t) and a scatter/gather element, as
// the block benches model them, and mr_t's packing onto an MR read port: one definition for every
// bench that answers an MR read (the protection rules themselves stay in each bench's model).
#pragma once

#include <cstdint>

#include "lib/bits.hpp"

namespace tmnic::tb {

struct Mr {
  bool valid = false;
  uint32_t key = 0, pd = 0, access = 0;  // access: tmnic_pkg MR_ACC_* bits
  uint64_t va = 0, len = 0, iova = 0;
};
struct Sge {
  uint64_t addr = 0;
  uint32_t len = 0, key = 0;
};

// mr_t {valid 1, key 32, pd 16, access 4, va 64, len 64, iova 64}, first field in the MSBs.
constexpr unsigned kMrIova = 0, kMrLen = 64, kMrVa = 128, kMrAccess = 192, kMrPd = 196, kMrKey = 212,
                   kMrValid = 244, kMrBits = 245;

// Writes m onto an mr_t port (a Verilated VlWide's words); the port's bits above kMrBits are untouched.
inline void pack_mr(const Mr& m, uint32_t* w) {
  set_bits(w, kMrIova, 64, m.iova);
  set_bits(w, kMrLen, 64, m.len);
  set_bits(w, kMrVa, 64, m.va);
  set_bits(w, kMrAccess, 4, m.access);
  set_bits(w, kMrPd, 16, m.pd);
  set_bits(w, kMrKey, 32, m.key);
  set_bits(w, kMrValid, 1, m.valid);
}

}  // namespace tmnic::tb
