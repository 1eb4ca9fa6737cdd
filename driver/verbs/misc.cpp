// Remaining public entry points: fork support, object import (needs a kernel uverbs fd),
// ECE, dma-buf MRs, and the kernel-ABI copy helpers used by librdmacm.
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include <cerrno>
#include <cstring>

#include "front.hpp"

// DMA goes through Backend::dma_map, not pinned pages shared with a child process: fork needs
// no preparation.
TMNIC_EXPORT int ibv_fork_init(void) { return 0; }
TMNIC_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }
TMNIC_EXPORT int ibv_dontfork_range(void* base, size_t size) { return 0; }
TMNIC_EXPORT int ibv_dofork_range(void* base, size_t size) { return 0; }

// Sharing objects between processes goes through a kernel command fd, which does not exist.
TMNIC_EXPORT struct ibv_context* ibv_import_device(int cmd_fd) {
  errno = EOPNOTSUPP;
  return nullptr;
}
TMNIC_EXPORT struct ibv_pd* ibv_import_pd(struct ibv_context* ctx, uint32_t pd_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}
TMNIC_EXPORT void ibv_unimport_pd(struct ibv_pd* pd) {}
TMNIC_EXPORT struct ibv_mr* ibv_import_mr(struct ibv_pd* pd, uint32_t mr_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}
TMNIC_EXPORT void ibv_unimport_mr(struct ibv_mr* mr) {}
TMNIC_EXPORT struct ibv_dm* ibv_import_dm(struct ibv_context* ctx, uint32_t dm_handle) {
  errno = EOPNOTSUPP;
  return nullptr;
}
TMNIC_EXPORT void ibv_unimport_dm(struct ibv_dm* dm) {}

TMNIC_EXPORT int ibv_set_ece(struct ibv_qp* qp, struct ibv_ece* ece) {
  errno = EOPNOTSUPP;
  return EOPNOTSUPP;
}
TMNIC_EXPORT int ibv_query_ece(struct ibv_qp* qp, struct ibv_ece* ece) {
  errno = EOPNOTSUPP;
  return EOPNOTSUPP;
}

TMNIC_EXPORT struct ibv_mr* ibv_reg_dmabuf_mr(struct ibv_pd* pd, uint64_t offset, size_t length,
                                              uint64_t iova, int fd, int access) {
  errno = EOPNOTSUPP;
  return nullptr;
}

// Field-by-field copies between the kernel ABI structs and the verbs ones (rdma-core's
// libibverbs/marshall.c).
TMNIC_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr* dst,
                                             struct ib_uverbs_ah_attr* src) {
  std::memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
  dst->grh.flow_label = src->grh.flow_label;
  dst->grh.sgid_index = src->grh.sgid_index;
  dst->grh.hop_limit = src->grh.hop_limit;
  dst->grh.traffic_class = src->grh.traffic_class;
  dst->dlid = src->dlid;
  dst->sl = src->sl;
  dst->src_path_bits = src->src_path_bits;
  dst->static_rate = src->static_rate;
  dst->is_global = src->is_global;
  dst->port_num = src->port_num;
}

TMNIC_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr* dst,
                                             struct ib_uverbs_qp_attr* src) {
  dst->cur_qp_state = static_cast<enum ibv_qp_state>(src->cur_qp_state);
  dst->path_mtu = static_cast<enum ibv_mtu>(src->path_mtu);
  dst->path_mig_state = static_cast<enum ibv_mig_state>(src->path_mig_state);
  dst->qkey = src->qkey;
  dst->rq_psn = src->rq_psn;
  dst->sq_psn = src->sq_psn;
  dst->dest_qp_num = src->dest_qp_num;
  dst->qp_access_flags = src->qp_access_flags;
  dst->cap.max_send_wr = src->max_send_wr;
  dst->cap.max_recv_wr = src->max_recv_wr;
  dst->cap.max_send_sge = src->max_send_sge;
  dst->cap.max_recv_sge = src->max_recv_sge;
  dst->cap.max_inline_data = src->max_inline_data;
  ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
  ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
  dst->pkey_index = src->pkey_index;
  dst->alt_pkey_index = src->alt_pkey_index;
  dst->en_sqd_async_notify = src->en_sqd_async_notify;
  dst->sq_draining = src->sq_draining;
  dst->max_rd_atomic = src->max_rd_atomic;
  dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
  dst->min_rnr_timer = src->min_rnr_timer;
  dst->port_num = src->port_num;
  dst->timeout = src->timeout;
  dst->retry_cnt = src->retry_cnt;
  dst->rnr_retry = src->rnr_retry;
  dst->alt_port_num = src->alt_port_num;
  dst->alt_timeout = src->alt_timeout;
}

TMNIC_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec* dst,
                                              struct ib_user_path_rec* src) {
  std::memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
  std::memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
  dst->dlid = src->dlid;
  dst->slid = src->slid;
  dst->raw_traffic = src->raw_traffic;
  dst->flow_label = src->flow_label;
  dst->hop_limit = src->hop_limit;
  dst->traffic_class = src->traffic_class;
  dst->reversible = src->reversible;
  dst->numb_path = src->numb_path;
  dst->pkey = src->pkey;
  dst->sl = src->sl;
  dst->mtu_selector = src->mtu_selector;
  dst->mtu = src->mtu;
  dst->rate_selector = src->rate_selector;
  dst->rate = src->rate;
  dst->packet_life_time_selector = src->packet_life_time_selector;
  dst->packet_life_time = src->packet_life_time;
  dst->preference = src->preference;
}

TMNIC_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec* dst,
                                            struct ibv_sa_path_rec* src) {
  std::memcpy(dst->dgid, src->dgid.raw, sizeof(src->dgid));
  std::memcpy(dst->sgid, src->sgid.raw, sizeof(src->sgid));
  dst->dlid = src->dlid;
  dst->slid = src->slid;
  dst->raw_traffic = src->raw_traffic ? 1 : 0;
  dst->flow_label = src->flow_label;
  dst->hop_limit = src->hop_limit;
  dst->traffic_class = src->traffic_class;
  dst->reversible = src->reversible;
  dst->numb_path = src->numb_path;
  dst->pkey = src->pkey;
  dst->sl = src->sl;
  dst->mtu_selector = src->mtu_selector;
  dst->mtu = src->mtu;
  dst->rate_selector = src->rate_selector;
  dst->rate = src->rate;
  dst->packet_life_time_selector = src->packet_life_time_selector;
  dst->packet_life_time = src->packet_life_time;
  dst->preference = src->preference;
}
