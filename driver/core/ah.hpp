// Address handle: the resolved destination of UD sends (ibv_create_ah). A pure software object:
// ibv_post_send copies it into each UD send WQE (hwif UD_AV), the NIC keeps no AH table.
#pragma once
#include <infiniband/verbs.h>

#include <cstdint>

#include "pd.hpp"

struct tmnic_ah {
  struct ibv_ah ibv;  // first: ibv_ah* <-> tmnic_ah* by cast
  uint32_t magic = 0;  // kMagic while the AH exists: wr.ud.ah is checked before it is used
  uint32_t dest_ip = 0;  // a.b.c.d as 0xaabbccdd (hwif UD_AV.DEST_IP)
  uint64_t dmac = 0;     // 48-bit, byte 0 (first on the wire) in bits 47:40 (as Device::mac)
  uint8_t tclass = 0;    // GRH traffic class and hop limit: the datagrams' IPv4 TOS and TTL
  uint8_t hop_limit = 0;
  tmnic_pd* pd = nullptr;
  static constexpr uint32_t kMagic = 0x54414148;  // "TAAH"
};

// The driver's AH behind `ah`, or nullptr when it is not one (null, destroyed, foreign).
inline tmnic_ah* to_tah(struct ibv_ah* ah) {
  auto* t = reinterpret_cast<tmnic_ah*>(ah);
  return t && t->magic == tmnic_ah::kMagic ? t : nullptr;
}
