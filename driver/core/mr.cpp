#include "mr.hpp"

#include <cerrno>
#include <new>

#include "device.hpp"
#include "pd.hpp"
#include "provider.hpp"

namespace tmnic {

namespace {
// Access bits the MR table understands (identical to enum ibv_access_flags, see hwif ACCESS);
// REMOTE_ATOMIC only on a device that executes atomics (OPS_CAPS.ATOMIC).
constexpr unsigned kHwAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
static_assert(IBV_ACCESS_LOCAL_WRITE == hwif::access::LOCAL_WRITE &&
                  IBV_ACCESS_REMOTE_WRITE == hwif::access::REMOTE_WRITE &&
                  IBV_ACCESS_REMOTE_READ == hwif::access::REMOTE_READ &&
                  IBV_ACCESS_REMOTE_ATOMIC == hwif::access::REMOTE_ATOMIC,
              "hwif access bits must be the verbs ones");
// A hint that needs no hardware support. (The IBV_ACCESS_OPTIONAL_RANGE bits, e.g. relaxed
// ordering, may by definition be ignored by a provider and are dropped first.)
constexpr unsigned kIgnored = IBV_ACCESS_HUGETLB;
// Real features the NIC does not have.
constexpr unsigned kUnsupported = IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND;

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

// Validates verbs access flags and reduces them to what the table entry holds; 0 or an errno.
int check_access(const Device& d, unsigned access, uint32_t* hw) {
  access &= ~unsigned(IBV_ACCESS_OPTIONAL_RANGE);
  // ibv_reg_mr(3) and the IB spec require local write for remote write and remote atomic (the
  // kernel's ib_check_mr_access checks it first, whatever the device supports).
  if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
      !(access & IBV_ACCESS_LOCAL_WRITE))
    return EINVAL;
  if ((access & kUnsupported) || ((access & IBV_ACCESS_REMOTE_ATOMIC) && !d.atomic_supported()))
    return EOPNOTSUPP;
  // Unknown bits are a caller error.
  if (access & ~(kHwAccess | kIgnored)) return EINVAL;
  *hw = access & kHwAccess;
  return 0;
}

bool bad_range(const void* addr, size_t length) {
  return !addr || length == 0 || uint64_t(length) > (uint64_t(1) << 32);
}
}  // namespace

struct ibv_mr* reg_mr(struct ibv_pd* ibpd, void* addr, size_t length, uint64_t iova,
                      unsigned access) {
  uint32_t hw_access = 0;
  int bad = check_access(to_dev(ibpd->context), access, &hw_access);
  if (!bad && bad_range(addr, length)) bad = EINVAL;
  if (bad) {
    errno = bad;
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
  int err = set_mr(d, mr->index, iova, length, mr->dma, key, pd->pdn, hw_access, 1);
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
  mr->iova = iova;
  mr->access = hw_access;
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

// As mlx5 (and the kernel's ib_uverbs_rereg_mr) behind libibverbs' ibv_rereg_mr: the entry keeps
// its index and key, so lkey/rkey stay valid; a new translation gets iova = addr. The new range is
// mapped before the command; SET_MR completes only once the engines are quiet, so after it no DMA
// uses the old translation and only then is the old range unmapped.
int rereg_mr(struct ibv_mr* ibmr, int flags, struct ibv_pd* ibpd, void* addr, size_t length,
             unsigned access) {
  constexpr int kAll = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
                       IBV_REREG_MR_CHANGE_ACCESS;
  if (!ibmr || flags == 0 || (flags & ~kAll)) return EINVAL;
  tmnic_mr* mr = to_tmr(ibmr);
  Device& d = to_dev(ibmr->context);
  const bool trans = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
  const bool change_pd = flags & IBV_REREG_MR_CHANGE_PD;

  uint32_t hw_access = mr->access;
  if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
    int err = check_access(d, access, &hw_access);
    if (err) return err;
  }
  if (trans && bad_range(addr, length)) return EINVAL;
  // A PD of another context is as unknown to this device as no PD.
  if (change_pd && (!ibpd || ibpd->context != ibmr->context)) return EINVAL;
  struct ibv_pd* new_pd = change_pd ? ibpd : ibmr->pd;

  uint64_t iova = trans ? uint64_t(uintptr_t(addr)) : mr->iova;
  size_t len = trans ? length : ibmr->length;
  uint64_t dma = trans ? d.be()->dma_map(addr, length) : mr->dma;
  int err = set_mr(d, mr->index, iova, len, dma, ibmr->lkey, to_tpd(new_pd)->pdn, hw_access, 1);
  if (err) {
    // The command changed nothing: the old entry and its mapping stay as they were.
    if (trans) d.be()->dma_unmap(dma, length);
    return err;
  }
  if (trans) {
    d.be()->dma_unmap(mr->dma, ibmr->length);
    mr->dma = dma;
    mr->iova = iova;
    ibmr->addr = addr;
    ibmr->length = length;
  }
  if (change_pd && new_pd != ibmr->pd) {
    to_tpd(new_pd)->usecnt++;
    to_tpd(ibmr->pd)->usecnt--;
    ibmr->pd = new_pd;
  }
  mr->access = hw_access;
  return 0;
}

}  // namespace tmnic
