// Exported verbs that dispatch to the provider (driver/core). The library does the parts
// libibverbs does itself: argument-independent bookkeeping, return conventions (int verbs return
// an errno value; the GID/P_Key queries return -1 and set errno, as in rdma-core).
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "device.hpp"
#include "front.hpp"
#include "provider.hpp"
#include "qp.hpp"

// These names are macros/inlines in <infiniband/verbs.h>; the exported functions are the real ones.
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova

namespace {
// int-returning verbs: also leave the code in errno, as providers commonly do.
int ret(int err) {
  if (err) errno = err;
  return err;
}
}  // namespace

TMNIC_EXPORT int ibv_query_device(struct ibv_context* ctx, struct ibv_device_attr* attr) {
  return ret(tmnic::query_device(ctx, attr));
}

// The exported symbol serves binaries built before port_cap_flags2 existed: like rdma-core it
// fills only the old layout (struct _compat_ibv_port_attr, i.e. up to `flags`). Newer callers
// use the inline ___ibv_query_port, which goes through verbs_context.query_port with its size.
TMNIC_EXPORT int ibv_query_port(struct ibv_context* ctx, uint8_t port,
                                struct _compat_ibv_port_attr* attr) {
  return ret(tmnic::query_port(ctx, port, reinterpret_cast<struct ibv_port_attr*>(attr),
                               offsetof(struct ibv_port_attr, port_cap_flags2)));
}

TMNIC_EXPORT int ibv_query_gid(struct ibv_context* ctx, uint8_t port, int index,
                               union ibv_gid* gid) {
  int err = tmnic::query_gid(ctx, port, index, gid);
  if (!err) return 0;
  errno = err;
  return -1;
}

TMNIC_EXPORT int _ibv_query_gid_ex(struct ibv_context* ctx, uint32_t port, uint32_t index,
                                   struct ibv_gid_entry* entry, uint32_t flags,
                                   size_t entry_size) {
  return ret(tmnic::query_gid_ex(ctx, port, index, entry, flags, entry_size));
}

TMNIC_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context* ctx, struct ibv_gid_entry* entries,
                                          size_t max_entries, uint32_t flags, size_t entry_size) {
  ssize_t n = tmnic::query_gid_table(ctx, entries, max_entries, flags, entry_size);
  if (n < 0) errno = int(-n);
  return n;
}

// Private in rdma-core (driver.h), used by ibv_devinfo and pyverbs; same enum as there.
enum ibv_gid_type_sysfs { IBV_GID_TYPE_SYSFS_IB_ROCE_V1, IBV_GID_TYPE_SYSFS_ROCE_V2 };
TMNIC_EXPORT int ibv_query_gid_type(struct ibv_context* ctx, uint8_t port, unsigned int index,
                                    enum ibv_gid_type_sysfs* type) {
  struct ibv_gid_entry e;
  int err = tmnic::query_gid_ex(ctx, port, index, &e, 0, sizeof(e));
  if (err) {
    errno = err;
    return -1;
  }
  *type = e.gid_type == IBV_GID_TYPE_ROCE_V2 ? IBV_GID_TYPE_SYSFS_ROCE_V2
                                             : IBV_GID_TYPE_SYSFS_IB_ROCE_V1;
  return 0;
}

TMNIC_EXPORT int ibv_query_pkey(struct ibv_context* ctx, uint8_t port, int index, __be16* pkey) {
  int err = tmnic::query_pkey(ctx, port, index, pkey);
  if (!err) return 0;
  errno = err;
  return -1;
}

TMNIC_EXPORT int ibv_get_pkey_index(struct ibv_context* ctx, uint8_t port, __be16 pkey) {
  __be16 p;
  if (tmnic::query_pkey(ctx, port, 0, &p) == 0 && p == pkey) return 0;
  errno = EINVAL;
  return -1;
}

TMNIC_EXPORT struct ibv_pd* ibv_alloc_pd(struct ibv_context* ctx) { return tmnic::alloc_pd(ctx); }
TMNIC_EXPORT int ibv_dealloc_pd(struct ibv_pd* pd) { return ret(tmnic::dealloc_pd(pd)); }

TMNIC_EXPORT struct ibv_mr* ibv_reg_mr(struct ibv_pd* pd, void* addr, size_t length, int access) {
  return tmnic::reg_mr(pd, addr, length, uintptr_t(addr), unsigned(access));
}
TMNIC_EXPORT struct ibv_mr* ibv_reg_mr_iova(struct ibv_pd* pd, void* addr, size_t length,
                                           uint64_t iova, int access) {
  return tmnic::reg_mr(pd, addr, length, iova, unsigned(access));
}
TMNIC_EXPORT struct ibv_mr* ibv_reg_mr_iova2(struct ibv_pd* pd, void* addr, size_t length,
                                            uint64_t iova, unsigned int access) {
  return tmnic::reg_mr(pd, addr, length, iova, access);
}
TMNIC_EXPORT int ibv_dereg_mr(struct ibv_mr* mr) { return ret(tmnic::dereg_mr(mr)); }

// libibverbs' own checks and return codes (enum ibv_rereg_mr_err_code, errno set), then the
// provider, which also updates the ibv_mr fields (libibverbs' wrapper updates pd/addr/length).
// Fork protection is a no-op here (misc.cpp), so the DONT_FORK/DO_FORK codes never occur.
TMNIC_EXPORT int ibv_rereg_mr(struct ibv_mr* mr, int flags, struct ibv_pd* pd, void* addr,
                              size_t length, int access) {
  if ((flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
      ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!length || !addr)) ||
      (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS))) {
    errno = EINVAL;
    return IBV_REREG_MR_ERR_INPUT;
  }
  int err = tmnic::rereg_mr(mr, flags, pd, addr, length, unsigned(access));
  if (err) {
    errno = err;
    return IBV_REREG_MR_ERR_CMD;
  }
  return 0;
}

TMNIC_EXPORT struct ibv_cq* ibv_create_cq(struct ibv_context* ctx, int cqe, void* cq_context,
                                          struct ibv_comp_channel* channel, int comp_vector) {
  return tmnic::create_cq(ctx, cqe, cq_context, channel, comp_vector);
}
TMNIC_EXPORT int ibv_resize_cq(struct ibv_cq* cq, int cqe) { return ret(tmnic::resize_cq(cq, cqe)); }
TMNIC_EXPORT int ibv_destroy_cq(struct ibv_cq* cq) { return ret(tmnic::destroy_cq(cq)); }

TMNIC_EXPORT struct ibv_srq* ibv_create_srq(struct ibv_pd* pd, struct ibv_srq_init_attr* attr) {
  return tmnic::create_srq(pd, attr);
}
TMNIC_EXPORT int ibv_modify_srq(struct ibv_srq* srq, struct ibv_srq_attr* attr, int mask) {
  return ret(tmnic::modify_srq(srq, attr, mask));
}
TMNIC_EXPORT int ibv_query_srq(struct ibv_srq* srq, struct ibv_srq_attr* attr) {
  return ret(tmnic::query_srq(srq, attr));
}
TMNIC_EXPORT int ibv_destroy_srq(struct ibv_srq* srq) { return ret(tmnic::destroy_srq(srq)); }

TMNIC_EXPORT struct ibv_qp* ibv_create_qp(struct ibv_pd* pd, struct ibv_qp_init_attr* attr) {
  return tmnic::create_qp(pd, attr);
}
TMNIC_EXPORT int ibv_modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int mask) {
  return ret(tmnic::modify_qp(qp, attr, mask));  // the provider keeps qp->state current
}
TMNIC_EXPORT int ibv_query_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int mask,
                              struct ibv_qp_init_attr* init_attr) {
  return ret(tmnic::query_qp(qp, attr, mask, init_attr));
}
TMNIC_EXPORT int ibv_destroy_qp(struct ibv_qp* qp) { return ret(tmnic::destroy_qp(qp)); }

// As libibverbs: the ibv_qp_ex of a QP created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS (its post-send
// function table is filled, driver/core/qp_ex.cpp), NULL for any other QP.
TMNIC_EXPORT struct ibv_qp_ex* ibv_qp_to_qp_ex(struct ibv_qp* qp) {
  if (!qp) return nullptr;  // (libibverbs would crash; a NULL answer costs nothing)
  tmnic_qp* t = to_tqp(qp);
  return t->has_qp_ex ? &t->ibv : nullptr;
}

// The NIC writes a message's payload in order, but makes no promise to the CPU before the CQE.
TMNIC_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp* qp, enum ibv_wr_opcode op,
                                            uint32_t flags) {
  return 0;
}

// Address handles (UD destinations; driver/core/ah.cpp). As libibverbs: ibv_create_ah_from_wc is
// ibv_init_ah_from_wc then ibv_create_ah, and ibv_init_ah_from_wc fails with -1 and errno.
TMNIC_EXPORT struct ibv_ah* ibv_create_ah(struct ibv_pd* pd, struct ibv_ah_attr* attr) {
  return tmnic::create_ah(pd, attr);
}
TMNIC_EXPORT int ibv_init_ah_from_wc(struct ibv_context* ctx, uint8_t port_num, struct ibv_wc* wc,
                                     struct ibv_grh* grh, struct ibv_ah_attr* ah_attr) {
  int err = tmnic::init_ah_from_wc(ctx, port_num, wc, grh, ah_attr);
  if (!err) return 0;
  errno = err;
  return -1;
}
TMNIC_EXPORT struct ibv_ah* ibv_create_ah_from_wc(struct ibv_pd* pd, struct ibv_wc* wc,
                                                  struct ibv_grh* grh, uint8_t port_num) {
  struct ibv_ah_attr attr;
  if (int err = tmnic::init_ah_from_wc(pd->context, port_num, wc, grh, &attr)) {
    errno = err;
    return nullptr;
  }
  return tmnic::create_ah(pd, &attr);
}
TMNIC_EXPORT int ibv_destroy_ah(struct ibv_ah* ah) { return ret(tmnic::destroy_ah(ah)); }
TMNIC_EXPORT int ibv_attach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid) {
  return ret(EOPNOTSUPP);
}
TMNIC_EXPORT int ibv_detach_mcast(struct ibv_qp* qp, const union ibv_gid* gid, uint16_t lid) {
  return ret(EOPNOTSUPP);
}

// RoCE L2 resolution through the backend's neighbour resolution (driver/core/device.hpp).
TMNIC_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context* ctx, struct ibv_ah_attr* attr,
                                             uint8_t eth_mac[ETHERNET_LL_SIZE], uint16_t* vid) {
  uint32_t ip;
  if (!attr->is_global || !tmnic::gid_to_ipv4(attr->grh.dgid, &ip)) return ret(EINVAL);
  uint64_t mac = tmnic::resolve_mac(*to_ibdev(ctx->device)->be, ip);
  for (int i = 0; i < ETHERNET_LL_SIZE; i++) eth_mac[i] = uint8_t(mac >> (40 - 8 * i));
  if (vid) *vid = 0xFFFF;  // no VLAN
  return 0;
}
