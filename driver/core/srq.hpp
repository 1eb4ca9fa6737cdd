// Shared receive queue: a ring of receive WQEs consumed in order by any QP attached to it; a
// tag-matching SRQ (IBV_SRQT_TM) adds its list-op ring and tag list (tm.hpp).
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "device.hpp"
#include "pd.hpp"
#include "tm.hpp"
#include "wq.hpp"

struct tmnic_srq {
  struct ibv_srq ibv;  // first: ibv_srq* <-> tmnic_srq* by cast
  tmnic::Device* dev = nullptr;
  tmnic_pd* pd = nullptr;
  uint32_t srqn = 0;
  // pi = WQEs posted, ci = WQEs whose receive completion has been polled. The NIC takes WQEs
  // in ring order, so the oldest outstanding slot is the next one to come back.
  tmnic::WorkQueue wq;
  // Low watermark armed by ibv_modify_srq(IBV_SRQ_LIMIT); 0 = disarmed. One-shot: it fires
  // (IBV_EVENT_SRQ_LIMIT_REACHED) and disarms when fewer than `limit` WQEs remain outstanding.
  std::atomic<uint32_t> limit{0};
  uint32_t events_reported = 0;  // async events the application has read; under ibv.mutex
  std::atomic<int> usecnt{0};    // attached QPs: destroy fails with EBUSY
  std::unique_ptr<tmnic::TmSrq> tm;  // tag matching; null for a basic SRQ
};

inline tmnic_srq* to_tsrq(struct ibv_srq* srq) { return reinterpret_cast<tmnic_srq*>(srq); }

namespace tmnic {
// A receive completion of an SRQ WQE was polled.
void srq_complete(tmnic_srq* srq);
}  // namespace tmnic
