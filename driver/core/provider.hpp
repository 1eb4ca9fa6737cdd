// The provider entry points: what driver/verbs (the libibverbs.so.1 front end) and the unit tests
// call. All take and return the public <infiniband/verbs.h> objects; errors follow the verbs
// conventions (int functions return an errno value, object constructors return nullptr and set
// errno), matching rdma-core + mlx5.
#pragma once
#include <infiniband/verbs.h>

#include <memory>

#include "tmnic/backend.hpp"

namespace tmnic {

// Context (device.cpp). Fills ibv_context.ops and the verbs_context ops.
struct ibv_context* alloc_context(struct ibv_device* ibdev, const std::shared_ptr<Backend>& be);
int free_context(struct ibv_context* ctx);
// Async events (async_events.cpp), kept as the kernel keeps them: post_async_event queues one and
// makes the async fd readable (false: the queue is full, the event is lost). take_async_event
// removes the oldest (false: none) and counts it on its QP or SRQ, whose destroy then waits for
// the ack; drop_async_events removes the unread events of an object being destroyed.
bool post_async_event(struct ibv_context* ctx, uint64_t element, enum ibv_event_type type);
bool take_async_event(struct ibv_context* ctx, struct ibv_async_event* ev);
// The event types whose element is a QP / an SRQ (counted on it, acked on it).
bool is_qp_event(uint32_t type);
bool is_srq_event(uint32_t type);
void drop_async_events(struct ibv_context* ctx, uint64_t element);

// Queries (query.cpp).
int query_device(struct ibv_context* ctx, struct ibv_device_attr* attr);
int query_device_ex(struct ibv_context* ctx, const struct ibv_query_device_ex_input* input,
                    struct ibv_device_attr_ex* attr, size_t attr_size);
int query_port(struct ibv_context* ctx, uint8_t port, struct ibv_port_attr* attr, size_t attr_size);
int query_gid(struct ibv_context* ctx, uint32_t port, int index, union ibv_gid* gid);
int query_gid_ex(struct ibv_context* ctx, uint32_t port, uint32_t index, struct ibv_gid_entry* entry,
                 uint32_t flags, size_t entry_size);
ssize_t query_gid_table(struct ibv_context* ctx, struct ibv_gid_entry* entries, size_t max_entries,
                        uint32_t flags, size_t entry_size);
int query_pkey(struct ibv_context* ctx, uint32_t port, int index, __be16* pkey);
// EUI-64 from the port MAC, in network byte order (node and system image GUID).
__be64 mac_to_guid(uint64_t mac);

// Protection domains (pd.cpp) and memory regions (mr.cpp).
struct ibv_pd* alloc_pd(struct ibv_context* ctx);
int dealloc_pd(struct ibv_pd* pd);
struct ibv_mr* reg_mr(struct ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access);
int dereg_mr(struct ibv_mr* mr);
// Rewrites the MR's table entry in place (one SET_MR), keeping lkey/rkey as mlx5 does. `flags`
// are IBV_REREG_MR_CHANGE_*; pd/addr/length/access are only looked at when their flag is set.
// Returns 0 or an errno value; on an error the MR is unchanged. Updates ibv_mr addr/length/pd.
int rereg_mr(struct ibv_mr* mr, int flags, struct ibv_pd* pd, void* addr, size_t length,
             unsigned access);

// Completion queues (cq.cpp, cq_ex.cpp).
struct ibv_cq_ex* create_cq_ex(struct ibv_context* ctx, struct ibv_cq_init_attr_ex* attr);
struct ibv_cq* create_cq(struct ibv_context* ctx, int cqe, void* cq_context,
                         struct ibv_comp_channel* channel, int comp_vector);
int destroy_cq(struct ibv_cq* cq);
int resize_cq(struct ibv_cq* cq, int cqe);
int poll_cq(struct ibv_cq* cq, int num_entries, struct ibv_wc* wc);
int req_notify_cq(struct ibv_cq* cq, int solicited_only);
// For ibv_get_cq_event: a CQ of `channel` with an event (counted as reported), or nullptr. On an
// autonomous device an event is an interrupt not yet reported (cq_interrupt), whether or not its
// CQE was polled since; otherwise it is an armed CQ holding a new CQE (then disarmed), and when
// there is none this calls progress() on the context's device.
struct ibv_cq* take_cq_event(struct ibv_context* ctx, struct ibv_comp_channel* channel);
void ack_cq_events(struct ibv_cq* cq, unsigned int nevents);

// Shared receive queues (srq.cpp; tag-matching SRQs also tm.cpp).
struct ibv_srq* create_srq_ex(struct ibv_context* ctx, struct ibv_srq_init_attr_ex* attr);
struct ibv_srq* create_srq(struct ibv_pd* pd, struct ibv_srq_init_attr* attr);
int modify_srq(struct ibv_srq* srq, struct ibv_srq_attr* attr, int attr_mask);
int query_srq(struct ibv_srq* srq, struct ibv_srq_attr* attr);
int destroy_srq(struct ibv_srq* srq);
int post_srq_recv(struct ibv_srq* srq, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr);
// Tag-list operations of a TM-SRQ (tm.cpp).
int post_srq_ops(struct ibv_srq* srq, struct ibv_ops_wr* op, struct ibv_ops_wr** bad_op);

// Queue pairs (qp.cpp, qp_modify.cpp, qp_post.cpp).
struct ibv_qp* create_qp_ex(struct ibv_context* ctx, struct ibv_qp_init_attr_ex* attr);
struct ibv_qp* create_qp(struct ibv_pd* pd, struct ibv_qp_init_attr* attr);
int modify_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask);
int query_qp(struct ibv_qp* qp, struct ibv_qp_attr* attr, int attr_mask,
             struct ibv_qp_init_attr* init_attr);
int destroy_qp(struct ibv_qp* qp);
int post_send(struct ibv_qp* qp, struct ibv_send_wr* wr, struct ibv_send_wr** bad_wr);
int post_recv(struct ibv_qp* qp, struct ibv_recv_wr* wr, struct ibv_recv_wr** bad_wr);

// Address handles (ah.cpp), for UD QPs. create_ah: nullptr + errno (EOPNOTSUPP without UD,
// EINVAL for an address this RoCEv2/IPv4 port cannot reach, ENOMEM past Device::kMaxAh);
// ibv_ah.context/pd/handle are filled. init_ah_from_wc follows libibverbs' ibv_init_ah_from_wc
// and returns 0 or an errno value.
struct ibv_ah* create_ah(struct ibv_pd* pd, struct ibv_ah_attr* attr);
int destroy_ah(struct ibv_ah* ah);
int init_ah_from_wc(struct ibv_context* ctx, uint8_t port_num, const struct ibv_wc* wc,
                    const struct ibv_grh* grh, struct ibv_ah_attr* ah_attr);

}  // namespace tmnic
