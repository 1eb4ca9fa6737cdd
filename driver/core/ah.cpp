// Address handles (ibv_create_ah / ibv_destroy_ah) and libibverbs' ibv_init_ah_from_wc for this
// RoCEv2/IPv4 port. Creation resolves the destination once (IPv4 from the IPv4-mapped DGID, MAC by
// neighbour resolution, exactly as ibv_modify_qp's IBV_QP_AV does for RC), so a post only copies it.
#include "ah.hpp"

#include <cerrno>
#include <cstring>
#include <new>

#include "device.hpp"
#include "provider.hpp"

namespace tmnic {

namespace {
bool ipv4_multicast(uint32_t ip) { return (ip >> 28) == 0xE; }  // 224.0.0.0/4 (class D)

// RFC 791 header checksum check of the 20-byte header at `h` (the sum over it, checksum
// included, is 0xFFFF).
bool ipv4_checksum_ok(const uint8_t* h) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += uint32_t(h[i]) << 8 | h[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum == 0xFFFF;
}

uint32_t be32_at(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
}  // namespace

struct ibv_ah* create_ah(struct ibv_pd* ibpd, struct ibv_ah_attr* attr) {
  if (!ibpd) {
    errno = EINVAL;
    return nullptr;
  }
  Device& d = to_dev(ibpd->context);
  // An AH only serves UD sends: a NIC without UD has none to give (max_ah = 0).
  if (!d.ud_supported()) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  if (!attr) {
    errno = EINVAL;
    return nullptr;
  }
  // RoCE needs a GRH (the kernel refuses a RoCE AH without one); the GID table has one entry, the
  // port's IPv4-mapped address, and the destination must be an IPv4-mapped unicast GID. The GRH's
  // traffic class and hop limit become the datagrams' IPv4 TOS and TTL (UD_AV), as on mlx5; LID,
  // SL, static rate and the flow label have no field and are accepted as given, as for RC's
  // IBV_QP_AV.
  uint32_t ip;
  if (attr->port_num != 1 || !attr->is_global || attr->grh.sgid_index != 0 ||
      !gid_to_ipv4(attr->grh.dgid, &ip) || ipv4_multicast(ip)) {
    errno = EINVAL;
    return nullptr;
  }
  if (d.num_ah.fetch_add(1) >= Device::kMaxAh) {
    d.num_ah.fetch_sub(1);
    errno = ENOMEM;
    return nullptr;
  }
  auto* ah = new (std::nothrow) tmnic_ah();
  if (!ah) {
    d.num_ah.fetch_sub(1);
    errno = ENOMEM;
    return nullptr;
  }
  ah->dest_ip = ip;
  ah->dmac = resolve_mac(*d.be(), ip);
  ah->tclass = attr->grh.traffic_class;
  ah->hop_limit = attr->grh.hop_limit;
  ah->pd = to_tpd(ibpd);
  ah->ibv.context = ibpd->context;
  ah->ibv.pd = ibpd;
  ah->ibv.handle = d.next_ah_handle.fetch_add(1);
  ah->magic = tmnic_ah::kMagic;
  ah->pd->usecnt++;  // as the kernel: a PD with AHs cannot be deallocated (EBUSY)
  return &ah->ibv;
}

int destroy_ah(struct ibv_ah* ibah) {
  tmnic_ah* ah = to_tah(ibah);
  if (!ah) return EINVAL;
  // WQEs already posted carry their own copy of the destination: nothing waits for them.
  ah->magic = 0;
  ah->pd->usecnt--;
  to_dev(ibah->context).num_ah.fetch_sub(1);
  delete ah;
  return 0;
}

int init_ah_from_wc(struct ibv_context* ctx, uint8_t port_num, const struct ibv_wc* wc,
                    const struct ibv_grh* grh, struct ibv_ah_attr* ah_attr) {
  // libibverbs' ibv_init_ah_from_wc (verbs.c) for a RoCEv2 port: the generic fields from the
  // completion, then, if the completion has a GRH, the reply address from the 40 bytes in front
  // of the receive buffer.
  std::memset(ah_attr, 0, sizeof(*ah_attr));
  const uint8_t* g = reinterpret_cast<const uint8_t*>(grh);
  ah_attr->grh.flow_label = be32_at(g) & 0xFFFFF;
  ah_attr->dlid = uint16_t(wc->slid);
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (!(wc->wc_flags & IBV_WC_GRH)) return 0;  // (then ibv_create_ah refuses it: EINVAL)
  ah_attr->is_global = 1;
  // The header's IP version as libibverbs decides it: bytes 0..39 are an IPv6 header, or 20
  // bytes of padding and an IPv4 header (RoCEv2 over IPv4; what this NIC writes). A buffer that
  // looks like both is IPv4 if its IPv4 header checksum holds.
  const uint8_t* ip4 = g + 20;
  bool v4;
  if ((g[0] >> 4) != 6) {
    if ((ip4[0] >> 4) != 4) return EPROTONOSUPPORT;
    v4 = true;
  } else {
    v4 = (ip4[0] & 0xF) == 5 && ipv4_checksum_ok(ip4);
  }
  // IPv6 never comes from this NIC, and the port's one GID is IPv4-mapped, so libibverbs' GID
  // lookup of an IPv6 destination could not succeed here either.
  if (!v4) return EINVAL;
  const uint32_t saddr = be32_at(ip4 + 12), daddr = be32_at(ip4 + 16);
  // The packet's destination must be a GID of ours (libibverbs looks it up in the GID table:
  // port 1, index 0, the port's address); no reply address for a multicast destination.
  union ibv_gid own;
  if (ipv4_multicast(daddr) || query_gid(ctx, port_num, 0, &own) != 0 ||
      std::memcmp(&own, ipv4_to_gid(daddr).raw, sizeof(own)) != 0)
    return EINVAL;
  ah_attr->grh.dgid = ipv4_to_gid(saddr);
  ah_attr->grh.sgid_index = 0;
  ah_attr->grh.hop_limit = ip4[8];       // the received TTL, as libibverbs does
  ah_attr->grh.traffic_class = ip4[1];   // TOS
  return 0;
}

}  // namespace tmnic
