// Every extended verb the NIC has no hardware for. The inline wrappers in <infiniband/verbs.h>
// treat a NULL op as "unsupported", but a few call through without checking (ibv_close_xrcd,
// ibv_destroy_flow, ...), so each slot gets an explicit EOPNOTSUPP implementation: never crash.
#include <cerrno>

#include "device.hpp"

namespace tmnic {
namespace {

template <typename T>
T* null_eopnotsupp() {
  errno = EOPNOTSUPP;
  return nullptr;
}

struct ibv_mw* alloc_mw(struct ibv_pd*, enum ibv_mw_type) { return null_eopnotsupp<ibv_mw>(); }
int dealloc_mw(struct ibv_mw*) { return EOPNOTSUPP; }
int bind_mw(struct ibv_qp*, struct ibv_mw*, struct ibv_mw_bind*) { return EOPNOTSUPP; }

int advise_mr(struct ibv_pd*, enum ibv_advise_mr_advice, uint32_t, struct ibv_sge*, uint32_t) {
  return EOPNOTSUPP;
}
struct ibv_mr* alloc_null_mr(struct ibv_pd*) { return null_eopnotsupp<ibv_mr>(); }
int read_counters(struct ibv_counters*, uint64_t*, uint32_t, uint32_t) { return EOPNOTSUPP; }
int attach_counters_point_flow(struct ibv_counters*, struct ibv_counter_attach_attr*,
                               struct ibv_flow*) {
  return EOPNOTSUPP;
}
struct ibv_counters* create_counters(struct ibv_context*, struct ibv_counters_init_attr*) {
  return null_eopnotsupp<ibv_counters>();
}
int destroy_counters(struct ibv_counters*) { return EOPNOTSUPP; }
struct ibv_mr* reg_dm_mr(struct ibv_pd*, struct ibv_dm*, uint64_t, size_t, unsigned int) {
  return null_eopnotsupp<ibv_mr>();
}
struct ibv_dm* alloc_dm(struct ibv_context*, struct ibv_alloc_dm_attr*) {
  return null_eopnotsupp<ibv_dm>();
}
int free_dm(struct ibv_dm*) { return EOPNOTSUPP; }
int modify_flow_action_esp(struct ibv_flow_action*, struct ibv_flow_action_esp_attr*) {
  return EOPNOTSUPP;
}
int destroy_flow_action(struct ibv_flow_action*) { return EOPNOTSUPP; }
struct ibv_flow_action* create_flow_action_esp(struct ibv_context*,
                                               struct ibv_flow_action_esp_attr*) {
  return null_eopnotsupp<ibv_flow_action>();
}
int modify_qp_rate_limit(struct ibv_qp*, struct ibv_qp_rate_limit_attr*) { return EOPNOTSUPP; }
struct ibv_pd* alloc_parent_domain(struct ibv_context*, struct ibv_parent_domain_init_attr*) {
  return null_eopnotsupp<ibv_pd>();
}
int dealloc_td(struct ibv_td*) { return EOPNOTSUPP; }
struct ibv_td* alloc_td(struct ibv_context*, struct ibv_td_init_attr*) {
  return null_eopnotsupp<ibv_td>();
}
int modify_cq(struct ibv_cq*, struct ibv_modify_cq_attr*) { return EOPNOTSUPP; }
int destroy_rwq_ind_table(struct ibv_rwq_ind_table*) { return EOPNOTSUPP; }
struct ibv_rwq_ind_table* create_rwq_ind_table(struct ibv_context*,
                                               struct ibv_rwq_ind_table_init_attr*) {
  return null_eopnotsupp<ibv_rwq_ind_table>();
}
int destroy_wq(struct ibv_wq*) { return EOPNOTSUPP; }
int modify_wq(struct ibv_wq*, struct ibv_wq_attr*) { return EOPNOTSUPP; }
struct ibv_wq* create_wq(struct ibv_context*, struct ibv_wq_init_attr*) {
  return null_eopnotsupp<ibv_wq>();
}
int query_rt_values(struct ibv_context*, struct ibv_values_ex*) { return EOPNOTSUPP; }
int destroy_flow(struct ibv_flow*) { return EOPNOTSUPP; }
struct ibv_flow* create_flow(struct ibv_qp*, struct ibv_flow_attr*) {
  return null_eopnotsupp<ibv_flow>();
}
struct ibv_qp* open_qp(struct ibv_context*, struct ibv_qp_open_attr*) {
  return null_eopnotsupp<ibv_qp>();
}
int get_srq_num(struct ibv_srq*, uint32_t*) { return EOPNOTSUPP; }  // XRC SRQs only
struct ibv_xrcd* open_xrcd(struct ibv_context*, struct ibv_xrcd_init_attr*) {
  return null_eopnotsupp<ibv_xrcd>();
}
int close_xrcd(struct ibv_xrcd*) { return EOPNOTSUPP; }

}  // namespace

void set_unsupported_ops(struct verbs_context* v) {
  v->context.ops.alloc_mw = alloc_mw;
  v->context.ops.dealloc_mw = dealloc_mw;
  v->context.ops.bind_mw = bind_mw;
  v->advise_mr = advise_mr;
  v->alloc_null_mr = alloc_null_mr;
  v->read_counters = read_counters;
  v->attach_counters_point_flow = attach_counters_point_flow;
  v->create_counters = create_counters;
  v->destroy_counters = destroy_counters;
  v->reg_dm_mr = reg_dm_mr;
  v->alloc_dm = alloc_dm;
  v->free_dm = free_dm;
  v->modify_flow_action_esp = modify_flow_action_esp;
  v->destroy_flow_action = destroy_flow_action;
  v->create_flow_action_esp = create_flow_action_esp;
  v->modify_qp_rate_limit = modify_qp_rate_limit;
  v->alloc_parent_domain = alloc_parent_domain;
  v->dealloc_td = dealloc_td;
  v->alloc_td = alloc_td;
  v->modify_cq = modify_cq;
  v->destroy_rwq_ind_table = destroy_rwq_ind_table;
  v->create_rwq_ind_table = create_rwq_ind_table;
  v->destroy_wq = destroy_wq;
  v->modify_wq = modify_wq;
  v->create_wq = create_wq;
  v->query_rt_values = query_rt_values;
  v->ibv_destroy_flow = destroy_flow;
  v->ibv_create_flow = create_flow;
  v->open_qp = open_qp;
  v->get_srq_num = get_srq_num;
  v->open_xrcd = open_xrcd;
  v->close_xrcd = close_xrcd;
}

}  // namespace tmnic
