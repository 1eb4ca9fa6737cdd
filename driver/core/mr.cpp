#include "mr.hpp"

#include <cerrno>
#include <new>

#include "device.hpp"
#include "pd.hpp"
#include "provider.hpp"

namespace tmnic {

namespace {
// Access bits the MR table understands (identical to enum ibv_access_flags, see hwif ACCESS).
constexpr unsigned kHwAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
static_assert(IBV_ACCESS_LOCAL_WRITE == hwif::access::LOCAL_WRITE &&
                  IBV_ACCESS_REMOTE_WRITE == hwif::access::REMOTE_WRITE &&
                  IBV_ACCESS_REMOTE_READ == hwif::access::REMOTE_READ,
              "hwif access bits must be the verbs ones");
// A hint that needs no hardware support. (The IBV_ACCESS_OPTIONAL_RANGE bits, e.g. relaxed
// ordering, may by definition be ignored by a provider and are dropped first.)
constexpr unsigned kIgnored = IBV_ACCESS_HUGETLB;
// Real features the NIC does not have.
constexpr unsigned kUnsupported =
    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND;

int set_mr(Device& d, uint32_t index, uint64_t va, uint64_t len, uint64_t dma, uint32_t key,
           uint32_t pdn, uint32_t access, uint32_t valid) {
  namespace a = hwif::cmd::set_mr;
  uint32_t args[a::VALID + 1] = {};
  args[a::VA_LO] = uint32_t(va);
  args[a::VA_HI] = uint32_t(va >> 32);
  args[a::LEN_LO] = uint32_t(len);
  args[a::LEN_HI] = uint32_t(len >> 32);
  args[a::IOVA_LO] = uint32_t(dma);
  args[a::IOVA_HI] = uint32_t(dma >> 32);
  args[a::KEY] = key;
  args[a::PD] = pdn;
  args[a::ACCESS] = access;
  args[a::VALID] = valid;
  return d.cmd(hwif::cmd::SET_MR, index, args, a::VALID + 1);
}
}  // namespace

struct ibv_mr* reg_mr(struct ibv_pd* ibpd, void* addr, size_t length, uint64_t iova,
                      unsigned access) {
  access &= ~unsigned(IBV_ACCESS_OPTIONAL_RANGE);
  if (access & kUnsupported) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  // The IB spec requires local write for remote write; unknown bits are a caller error.
  if ((access & ~(kHwAccess | kIgnored)) ||
      ((access & IBV_ACCESS_REMOTE_WRITE) && !(access & IBV_ACCESS_LOCAL_WRITE)) || !addr ||
      length == 0 || uint64_t(length) > (uint64_t(1) << 32)) {
    errno = EINVAL;
    return nullptr;
  }
  Device& d = to_dev(ibpd->context);
  tmnic_pd* pd = to_tpd(ibpd);
  int64_t index = d.mrns.alloc();
  if (index < 0) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* mr = new (std::nothrow) tmnic_mr();
  if (!mr) {
    d.mrns.release(uint32_t(index));
    errno = ENOMEM;
    return nullptr;
  }
  mr->index = uint32_t(index);
  uint32_t key = uint32_t(index) << hwif::MR_KEY_SHIFT | d.next_mr_gen(uint32_t(index));
  mr->dma = d.be()->dma_map(addr, length);
  int err = set_mr(d, mr->index, iova, length, mr->dma, key, pd->pdn, access & kHwAccess, 1);
  if (err) {
    d.be()->dma_unmap(mr->dma, length);
    d.mrns.release(mr->index);
    delete mr;
    errno = err;
    return nullptr;
  }
  mr->ibv.context = ibpd->context;
  mr->ibv.pd = ibpd;
  mr->ibv.addr = addr;
  mr->ibv.length = length;
  mr->ibv.handle = mr->index;
  mr->ibv.lkey = key;
  mr->ibv.rkey = key;
  pd->usecnt++;
  return &mr->ibv;
}

int dereg_mr(struct ibv_mr* ibmr) {
  tmnic_mr* mr = to_tmr(ibmr);
  Device& d = to_dev(ibmr->context);
  // Invalidate the table entry before unmapping, so the NIC can no longer DMA into the range.
  int err = set_mr(d, mr->index, 0, 0, 0, 0, 0, 0, 0);
  if (err) return err;
  d.be()->dma_unmap(mr->dma, ibmr->length);
  d.mrns.release(mr->index);
  to_tpd(ibmr->pd)->usecnt--;
  delete mr;
  return 0;
}

}  // namespace tmnic
