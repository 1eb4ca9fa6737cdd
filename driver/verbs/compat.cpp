// Symbols that exist only so that binaries linked against Debian's libibverbs.so.1 load
// (every consumer is linked with BIND_NOW, so each referenced name@version must resolve):
//  * the IBVERBS_1.0 versions of the 1.1 verbs, kept by rdma-core for 2005-era binaries with
//    different structure layouts: this library refuses them cleanly (ENOSYS);
//  * IBVERBS_PRIVATE_34, the provider-plugin interface (libmlx5.so.1, libefa.so.1 call into it
//    from their constructors): registration is accepted and ignored, kernel commands fail with
//    EOPNOTSUPP, so those providers load but never drive a device.
#include <cerrno>
#include <cstdarg>
#include <cstddef>

#include "front.hpp"

#define TMNIC_SYMVER(impl, name_at_version) __asm__(".symver " #impl ", " name_at_version)

namespace {
void* null_enosys() {
  errno = ENOSYS;
  return nullptr;
}
}  // namespace

// ---- IBVERBS_1.0 compatibility versions ----------------------------------------------------

#define COMPAT_PTR(name)                                                   \
  extern "C" __attribute__((visibility("default"))) void* tmnic_10_##name() { \
    return null_enosys();                                                   \
  }                                                                         \
  TMNIC_SYMVER(tmnic_10_##name, #name "@IBVERBS_1.0");
#define COMPAT_INT(name)                                                  \
  extern "C" __attribute__((visibility("default"))) int tmnic_10_##name() { \
    errno = ENOSYS;                                                        \
    return ENOSYS;                                                         \
  }                                                                        \
  TMNIC_SYMVER(tmnic_10_##name, #name "@IBVERBS_1.0");
#define COMPAT_MINUS1(name)                                               \
  extern "C" __attribute__((visibility("default"))) int tmnic_10_##name() { \
    errno = ENOSYS;                                                        \
    return -1;                                                             \
  }                                                                        \
  TMNIC_SYMVER(tmnic_10_##name, #name "@IBVERBS_1.0");
#define COMPAT_VOID(name)                                                   \
  extern "C" __attribute__((visibility("default"))) void tmnic_10_##name() {} \
  TMNIC_SYMVER(tmnic_10_##name, #name "@IBVERBS_1.0");

COMPAT_PTR(ibv_get_device_list)
COMPAT_PTR(ibv_get_device_name)
COMPAT_PTR(ibv_open_device)
COMPAT_PTR(ibv_alloc_pd)
COMPAT_PTR(ibv_reg_mr)
COMPAT_PTR(ibv_create_cq)
COMPAT_PTR(ibv_create_srq)
COMPAT_PTR(ibv_create_qp)
COMPAT_PTR(ibv_create_ah)
COMPAT_VOID(ibv_free_device_list)
COMPAT_VOID(ibv_ack_async_event)
COMPAT_VOID(ibv_ack_cq_events)
COMPAT_INT(ibv_close_device)
COMPAT_INT(ibv_query_device)
COMPAT_INT(ibv_query_port)
COMPAT_INT(ibv_query_gid)
COMPAT_INT(ibv_query_pkey)
COMPAT_INT(ibv_dealloc_pd)
COMPAT_INT(ibv_dereg_mr)
COMPAT_INT(ibv_resize_cq)
COMPAT_INT(ibv_destroy_cq)
COMPAT_INT(ibv_modify_srq)
COMPAT_INT(ibv_query_srq)
COMPAT_INT(ibv_destroy_srq)
COMPAT_INT(ibv_modify_qp)
COMPAT_INT(ibv_query_qp)
COMPAT_INT(ibv_destroy_qp)
COMPAT_INT(ibv_destroy_ah)
COMPAT_INT(ibv_attach_mcast)
COMPAT_INT(ibv_detach_mcast)
COMPAT_MINUS1(ibv_get_async_event)
COMPAT_MINUS1(ibv_get_cq_event)
extern "C" __attribute__((visibility("default"))) __be64 tmnic_10_ibv_get_device_guid() {
  return 0;
}
TMNIC_SYMVER(tmnic_10_ibv_get_device_guid, "ibv_get_device_guid@IBVERBS_1.0");

// Pre-rdma-core provider registration (non-default IBVERBS_1.1 version): ignored.
extern "C" __attribute__((visibility("default"))) void tmnic_11_ibv_register_driver() {}
TMNIC_SYMVER(tmnic_11_ibv_register_driver, "ibv_register_driver@IBVERBS_1.1");

// ---- IBVERBS_PRIVATE_34 --------------------------------------------------------------------

// A byte-sized data object in libibverbs (bool); libmlx5 reads it.
extern "C" {
__attribute__((visibility("default"))) bool verbs_allow_disassociate_destroy = false;
}

TMNIC_EXPORT void verbs_register_driver_34(const void* ops) {}
TMNIC_EXPORT void verbs_set_ops(void* vctx, const void* ops) {}
TMNIC_EXPORT void verbs_uninit_context(void* vctx) {}
TMNIC_EXPORT void verbs_init_cq(void* cq, void* ctx, void* channel, void* cq_context) {}
TMNIC_EXPORT void* verbs_open_device(void* device, void* private_data) { return null_enosys(); }
TMNIC_EXPORT void* _verbs_init_and_alloc_context(void* device, int cmd_fd, size_t alloc_size,
                                                 void* context_offset, uint32_t driver_id) {
  errno = EOPNOTSUPP;
  return nullptr;
}
TMNIC_EXPORT void __verbs_log(void* ctx, const char* fmt, ...) {}
// Sizing helper of the ioctl command-buffer macros: the number of attributes is all it needs.
TMNIC_EXPORT unsigned int __ioctl_final_num_attrs(unsigned int num_attrs, void* link) {
  return num_attrs;
}
TMNIC_EXPORT int execute_ioctl(void* ctx, void* cmd) { return EOPNOTSUPP; }
TMNIC_EXPORT int ibv_read_ibdev_sysfs_file(char* buf, size_t size, const char* sysfs_dev,
                                           const char* fnfmt, ...) {
  errno = ENOENT;
  return -1;
}

// The kernel-command helpers (ibv_cmd_*): all return an errno value in rdma-core.
#define CMD_STUB(name) \
  TMNIC_EXPORT int name() { return EOPNOTSUPP; }
CMD_STUB(ibv_cmd_advise_mr)
CMD_STUB(ibv_cmd_alloc_dm)
CMD_STUB(ibv_cmd_alloc_mw)
CMD_STUB(ibv_cmd_alloc_pd)
CMD_STUB(ibv_cmd_attach_mcast)
CMD_STUB(ibv_cmd_close_xrcd)
CMD_STUB(ibv_cmd_create_ah)
CMD_STUB(ibv_cmd_create_counters)
CMD_STUB(ibv_cmd_create_cq)
CMD_STUB(ibv_cmd_create_cq_ex)
CMD_STUB(ibv_cmd_create_flow)
CMD_STUB(ibv_cmd_create_flow_action_esp)
CMD_STUB(ibv_cmd_create_qp)
CMD_STUB(ibv_cmd_create_qp_ex)
CMD_STUB(ibv_cmd_create_qp_ex2)
CMD_STUB(ibv_cmd_create_rwq_ind_table)
CMD_STUB(ibv_cmd_create_srq)
CMD_STUB(ibv_cmd_create_srq_ex)
CMD_STUB(ibv_cmd_create_wq)
CMD_STUB(ibv_cmd_dealloc_mw)
CMD_STUB(ibv_cmd_dealloc_pd)
CMD_STUB(ibv_cmd_dereg_mr)
CMD_STUB(ibv_cmd_destroy_ah)
CMD_STUB(ibv_cmd_destroy_counters)
CMD_STUB(ibv_cmd_destroy_cq)
CMD_STUB(ibv_cmd_destroy_flow)
CMD_STUB(ibv_cmd_destroy_flow_action)
CMD_STUB(ibv_cmd_destroy_qp)
CMD_STUB(ibv_cmd_destroy_rwq_ind_table)
CMD_STUB(ibv_cmd_destroy_srq)
CMD_STUB(ibv_cmd_destroy_wq)
CMD_STUB(ibv_cmd_detach_mcast)
CMD_STUB(ibv_cmd_free_dm)
CMD_STUB(ibv_cmd_get_context)
CMD_STUB(ibv_cmd_modify_cq)
CMD_STUB(ibv_cmd_modify_flow_action_esp)
CMD_STUB(ibv_cmd_modify_qp)
CMD_STUB(ibv_cmd_modify_qp_ex)
CMD_STUB(ibv_cmd_modify_srq)
CMD_STUB(ibv_cmd_modify_wq)
CMD_STUB(ibv_cmd_open_qp)
CMD_STUB(ibv_cmd_open_xrcd)
CMD_STUB(ibv_cmd_poll_cq)
CMD_STUB(ibv_cmd_post_recv)
CMD_STUB(ibv_cmd_post_send)
CMD_STUB(ibv_cmd_post_srq_recv)
CMD_STUB(ibv_cmd_query_context)
CMD_STUB(ibv_cmd_query_device_any)
CMD_STUB(ibv_cmd_query_mr)
CMD_STUB(ibv_cmd_query_port)
CMD_STUB(ibv_cmd_query_qp)
CMD_STUB(ibv_cmd_query_srq)
CMD_STUB(ibv_cmd_read_counters)
CMD_STUB(ibv_cmd_reg_dm_mr)
CMD_STUB(ibv_cmd_reg_dmabuf_mr)
CMD_STUB(ibv_cmd_reg_mr)
CMD_STUB(ibv_cmd_req_notify_cq)
CMD_STUB(ibv_cmd_rereg_mr)
CMD_STUB(ibv_cmd_resize_cq)
