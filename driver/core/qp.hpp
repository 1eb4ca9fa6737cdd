// RC queue pair: send and receive rings plus the shadow of the NIC's QP context (SET_QP words).
#pragma once
#include <infiniband/verbs.h>

#include <cstdint>
#include <mutex>

#include "cq.hpp"
#include "device.hpp"
#include "pd.hpp"
#include "srq.hpp"
#include "wq.hpp"

namespace tmnic {
constexpr unsigned kSetQpWords = hwif::cmd::set_qp::INIT + 1;
}

struct tmnic_qp {
  struct ibv_qp_ex ibv;  // first; ibv.qp_base is the struct ibv_qp applications see
  tmnic::Device* dev = nullptr;
  tmnic_pd* pd = nullptr;
  tmnic_cq* send_cq = nullptr;
  tmnic_cq* recv_cq = nullptr;
  tmnic_srq* srq = nullptr;  // receives come from the SRQ; `rq` is unused
  tmnic::WorkQueue sq, rq;
  uint32_t max_inline = 0;
  bool sq_sig_all = false;
  std::mutex modify_mu;  // serializes modify_qp / query_qp (shadow + command)
  // Every SET_QP carries the full context, so the driver keeps all of it.
  uint32_t cfg[tmnic::kSetQpWords] = {};
  // The attributes of the last successful modify_qp, for ibv_query_qp (the NIC keeps only what
  // it needs, e.g. no access flags or pkey index).
  struct ibv_qp_attr attr = {};
};

inline tmnic_qp* to_tqp(struct ibv_qp* qp) { return reinterpret_cast<tmnic_qp*>(qp); }

namespace tmnic {
// Sends SET_QP for `qp` with the words `cfg` and the given INIT bits.
int send_set_qp(tmnic_qp* qp, const uint32_t* cfg, uint32_t init_bits);
// Drops the QP's unpolled completions from its CQs (reset, destroy).
void cq_clean_qp(tmnic_qp* qp);
}  // namespace tmnic
