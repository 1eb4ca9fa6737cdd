// Device, port, GID and P_Key queries: the true hardware limits read from BAR0 at open.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "device.hpp"
#include "provider.hpp"

namespace tmnic {

namespace {
// No IEEE OUI is assigned to tmnic; 0x1D6F is the project's fixed placeholder vendor ID (non-zero,
// as pyverbs and ibv_devinfo expect, and not Mellanox's 0x02c9 that triggers ConnectX quirks).
constexpr uint32_t kVendorId = 0x1D6F;
constexpr uint64_t kMaxMrSize = uint64_t(1) << 32;
constexpr uint32_t kPageSizeCap = 4096;
constexpr uint32_t kMaxMsgSize = 1u << 31;  // RoCE's 2 GiB message limit
// IBTA PortInfo encodings (verbs.h v44 has no enums for them; ibv_devinfo decodes these).
constexpr uint8_t kWidth4X = 2;
constexpr uint8_t kSpeedEDR = 32;  // 25.78125 Gb/s per lane: 4 lanes = the 100G-class port
constexpr uint8_t kPhysStateLinkUp = 5;

// Tag-matching capabilities, as the kernel's mlx5 driver fills them: IBV_TM_CAP_RC and
// max_rndv_hdr_size only when the NIC offloads rendezvous (TM_CAPS.RC; mlx5: rndv_offload_rc).
void tm_caps(const Device& d, struct ibv_tm_caps* c) {
  if (!d.tm_max_tags) return;  // no tag matching: all zero
  c->max_num_tags = d.tm_max_tags;
  c->max_ops = 1u << d.max_log_queue;
  c->max_sge = 1;
  if (hwif::regf::tm_caps::RC.get(d.tm_caps)) {
    c->flags = IBV_TM_CAP_RC;
    c->max_rndv_hdr_size = hwif::MAX_RNDV_HDR;
  }
}
}  // namespace

__be64 mac_to_guid(uint64_t mac) {
  // Modified EUI-64 (RFC 4291): flip the universal/local bit, insert FF:FE in the middle.
  uint8_t m[6];
  for (int i = 0; i < 6; i++) m[i] = uint8_t(mac >> (40 - 8 * i));
  uint8_t g[8] = {uint8_t(m[0] ^ 0x02), m[1], m[2], 0xFF, 0xFE, m[3], m[4], m[5]};
  __be64 out;
  std::memcpy(&out, g, 8);  // the bytes in wire order are the network-order value
  return out;
}

int query_device(struct ibv_context* ctx, struct ibv_device_attr* a) {
  Device& d = to_dev(ctx);
  std::memset(a, 0, sizeof(*a));
  std::snprintf(a->fw_ver, sizeof(a->fw_ver), "tmnic %u.%u", d.abi >> 16, d.abi & 0xFFFF);
  a->node_guid = mac_to_guid(d.mac);
  a->sys_image_guid = a->node_guid;
  a->max_mr_size = kMaxMrSize;
  a->page_size_cap = kPageSizeCap;
  a->vendor_id = kVendorId;
  a->vendor_part_id = hwif::DEVICE_ID & 0xFFFF;
  a->hw_ver = d.abi;
  a->max_qp = int(d.num_qp - hwif::QPN_FIRST);
  a->max_qp_wr = int((1u << d.max_log_queue) - 1);
  // The responder generates RNR NAKs; nothing else of the optional IB capabilities exists.
  a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN;
  a->max_sge = int(d.max_sge);
  // RDMA READ: a READ WQE scatters into as many SGEs as any WQE; MAX_RD_ATOM READs and atomics in
  // flight per QP as requester and as responder (every QP has its own responder resources).
  const bool rd = d.read_supported();
  const bool rd_atom = rd || d.atomic_supported();
  a->max_sge_rd = rd ? int(d.max_sge) : 0;
  a->max_cq = int(d.num_cq) - (d.async_cqn() != Device::kNoAsyncCq ? 1 : 0);  // one is the event queue
  a->max_cqe = int((1u << d.max_log_queue) - 1);
  a->max_mr = int(d.num_mr);
  a->max_pd = int(Device::kMaxPd - 1);
  a->max_qp_rd_atom = rd_atom ? int(hwif::MAX_RD_ATOM) : 0;
  a->max_res_rd_atom = rd_atom ? int(hwif::MAX_RD_ATOM * (d.num_qp - hwif::QPN_FIRST)) : 0;
  a->max_qp_init_rd_atom = rd_atom ? int(hwif::MAX_RD_ATOM) : 0;
  // OPS_CAPS.ATOMIC: CMP_AND_SWP and FETCH_AND_ADD, atomic with respect to every access of this
  // NIC (not to the host CPU's: IBV_ATOMIC_HCA, as ConnectX).
  a->atomic_cap = d.atomic_supported() ? IBV_ATOMIC_HCA : IBV_ATOMIC_NONE;
  a->max_srq = int(d.num_srq);
  a->max_srq_wr = int((1u << d.max_log_queue) - 1);
  a->max_srq_sge = int(d.max_sge);
  a->max_pkeys = 1;
  // Address handles are driver objects (no NIC table), bounded by the driver (ah.cpp); only for
  // UD, so none without it.
  a->max_ah = d.ud_supported() ? int(Device::kMaxAh) : 0;
  a->local_ca_ack_delay = 0;
  a->phys_port_cnt = 1;
  return 0;
}

int query_device_ex(struct ibv_context* ctx, const struct ibv_query_device_ex_input* input,
                    struct ibv_device_attr_ex* attr, size_t attr_size) {
  if (input && input->comp_mask) return EINVAL;
  if (attr_size < sizeof(attr->orig_attr)) return EINVAL;
  struct ibv_device_attr_ex a;
  std::memset(&a, 0, sizeof(a));
  query_device(ctx, &a.orig_attr);
  a.device_cap_flags_ex = a.orig_attr.device_cap_flags;
  a.hca_core_clock = uint64_t(to_dev(ctx).clk_mhz) * 1000;  // kHz
  a.phys_port_cnt_ex = 1;
  tm_caps(to_dev(ctx), &a.tm_caps);
  std::memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
  if (attr_size > sizeof(a))
    std::memset(reinterpret_cast<char*>(attr) + sizeof(a), 0, attr_size - sizeof(a));
  return 0;
}

int query_port(struct ibv_context* ctx, uint8_t port, struct ibv_port_attr* attr,
               size_t attr_size) {
  if (port != 1) return EINVAL;
  struct ibv_port_attr a;
  std::memset(&a, 0, sizeof(a));
  a.state = IBV_PORT_ACTIVE;
  a.max_mtu = Device::kActiveMtu;
  a.active_mtu = Device::kActiveMtu;  // also every UD QP's PATH_MTU (qp.cpp)
  a.gid_tbl_len = 1;
  a.port_cap_flags = IBV_PORT_IP_BASED_GIDS;
  a.max_msg_sz = kMaxMsgSize;
  a.pkey_tbl_len = 1;
  a.lid = 0;  // RoCE: no LIDs
  a.max_vl_num = 1;
  a.active_width = kWidth4X;
  a.active_speed = kSpeedEDR;
  a.phys_state = kPhysStateLinkUp;
  a.link_layer = IBV_LINK_LAYER_ETHERNET;
  std::memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
  return 0;
}

int query_gid(struct ibv_context* ctx, uint32_t port, int index, union ibv_gid* gid) {
  if (port != 1 || index != 0) return EINVAL;
  *gid = ipv4_to_gid(to_dev(ctx).ipv4);
  return 0;
}

int query_gid_ex(struct ibv_context* ctx, uint32_t port, uint32_t index,
                 struct ibv_gid_entry* entry, uint32_t flags, size_t entry_size) {
  if (flags || entry_size < sizeof(*entry)) return EINVAL;
  if (port != 1 || index != 0) return EINVAL;
  std::memset(entry, 0, sizeof(*entry));
  entry->gid = ipv4_to_gid(to_dev(ctx).ipv4);
  entry->gid_index = 0;
  entry->port_num = 1;
  entry->gid_type = IBV_GID_TYPE_ROCE_V2;
  entry->ndev_ifindex = 0;  // no kernel netdev behind the port
  return 0;
}

ssize_t query_gid_table(struct ibv_context* ctx, struct ibv_gid_entry* entries,
                        size_t max_entries, uint32_t flags, size_t entry_size) {
  if (flags || entry_size < sizeof(*entries)) return -EINVAL;
  if (max_entries < 1) return -EINVAL;  // the table has one valid entry
  int ret = query_gid_ex(ctx, 1, 0, entries, 0, sizeof(*entries));
  return ret ? -ret : 1;
}

int query_pkey(struct ibv_context* ctx, uint32_t port, int index, __be16* pkey) {
  if (port != 1 || index != 0) return EINVAL;
  *pkey = 0xFFFF;  // default full-member P_Key (same bytes in either order)
  return 0;
}

}  // namespace tmnic
