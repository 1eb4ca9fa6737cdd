#include "pd.hpp"

#include <cerrno>
#include <new>

#include "device.hpp"
#include "provider.hpp"

namespace tmnic {

struct ibv_pd* alloc_pd(struct ibv_context* ctx) {
  Device& d = to_dev(ctx);
  int64_t pdn = d.pdns.alloc();
  if (pdn < 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* pd = new (std::nothrow) tmnic_pd();
  if (!pd) {
    d.pdns.release(uint32_t(pdn));
    errno = ENOMEM;
    return nullptr;
  }
  pd->pdn = uint32_t(pdn);
  pd->ibv.context = ctx;
  pd->ibv.handle = uint32_t(pdn);
  return &pd->ibv;
}

int dealloc_pd(struct ibv_pd* ibpd) {
  tmnic_pd* pd = to_tpd(ibpd);
  if (pd->usecnt.load() != 0) return EBUSY;  // as the kernel: objects still use it
  to_dev(ibpd->context).pdns.release(pd->pdn);
  delete pd;
  return 0;
}

}  // namespace tmnic
