// Tag matching (TM-SRQ): the list-operation ring and the driver's shadow of the SRQ's tag list,
// with mlx5's rules (providers/mlx5: mlx5_post_srq_ops, handle_tag_matching) for handles,
// expected completions and phase synchronization.
#pragma once
#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "tmnic/hwif.h"
#include "util.hpp"

struct tmnic_cq;
struct tmnic_srq;

namespace tmnic {

class Device;
struct Completion;

constexpr uint32_t kNoTag = 0xFFFFFFFFu;
// mlx5's MLX5_TM_MAX_SYNC_DIFF: an unexpected completion asks for a sync (IBV_WC_TM_SYNC_REQ)
// once software lags the hardware's unexpected count by more than this.
constexpr int32_t kTmMaxSyncDiff = 0x3fff;

// One entry of the shadow tag list (mlx5_tag_entry); its index is the application's handle.
struct TagEntry {
  uint32_t next = kNoTag;  // free FIFO link
  uint64_t wr_id = 0;      // recv_wr_id of the ADD, reported in matched completions
  uint64_t tag = 0;        // the ADD's tag: reported by a rendezvous READ's error completion
  uint32_t phase_cnt = 0;  // unexp_out when the tag was added
  // CQEs still to be polled before the handle may be handed out again: the consumption (ADD),
  // and the CQE of each signaled ADD/DEL. 0 = free.
  int expect_cqe = 0;
  bool del_posted = false;  // a DEL was posted: a second DEL of the same tag is refused
};

// A signaled list operation waiting for its CQE (mlx5_srq_op). The NIC completes ops in ring
// order, so the oldest pending op is the one the next list-op CQE belongs to.
struct TmOp {
  uint32_t tag = kNoTag;  // ADD/DEL: the entry; SYNC: none
  uint64_t wr_id = 0;
  uint32_t ring_idx = 0;  // free-running ring index of the op
  uint8_t opcode = 0;     // hwif::tm_opcode
};

struct TmSrq {
  tmnic_cq* cq = nullptr;  // every TM completion of the SRQ arrives here
  uint32_t max_num_tags = 0;
  uint32_t tag_base = 0;  // first engine entry of the SRQ's range

  // List-op ring: 2^log_size TM_OP_STRIDE-byte WQEs. pi = ops posted; ci = ops the NIC is known
  // to have consumed (learned from signaled ops' CQEs only, as mlx5's command QP).
  DmaBuffer ring;
  uint32_t log_size = 0;
  uint32_t pi = 0, ci = 0;

  std::vector<TagEntry> tags;
  uint32_t free_head = kNoTag, free_tail = kNoTag;  // FIFO of free handles
  std::vector<TmOp> ops;  // pending signaled ops, 2^log_size entries
  uint32_t op_head = 0, op_tail = 0;
  // Unexpected messages: reported to the application (unexp_in) and accounted for by it in the
  // last IBV_OPS_TM_SYNC op (unexp_out). Free-running, compared modulo 2^32 like mlx5's ints.
  uint32_t unexp_in = 0, unexp_out = 0;

  Spinlock lock;  // post_srq_ops vs. CQ polling

  uint32_t size() const { return 1u << log_size; }
  uint8_t* slot(uint32_t idx) const {
    return ring.data() + size_t(idx & (size() - 1)) * hwif::TM_OP_STRIDE;
  }
  // Sets up the tag list, the free FIFO (0, 1, ..., n-1) and the op ring. errno-style result.
  int init(Backend* be, uint32_t num_tags, uint32_t ring_log_size);
  // mlx5_tm_release_tag: one expected CQE less; the last one returns the handle to the FIFO.
  void release(uint32_t h);
};

inline bool is_tm_opcode(uint8_t op) {
  return op >= hwif::wc_op::TM_ADD && op <= hwif::wc_op::TM_NO_TAG;
}

// Validates the TM part of ibv_create_srq_ex and sets up srq->tm (engine slots, ring, shadow
// list). The caller has checked the common attributes. errno-style result; on failure nothing is
// left allocated.
int tm_srq_create(Device& d, tmnic_srq* srq, struct ibv_srq_init_attr_ex* attr);
// Gives the engine slots and the CQ back (after the SRQ was invalidated).
void tm_srq_destroy(Device& d, tmnic_srq* srq);
// Tag-matching bookkeeping of a TM CQE (list op, matched, unexpected, NO_TAG) polled from the
// SRQ's CQ: fills in the wr_id, status and wc_flags the application sees.
void tm_parse_cqe(tmnic_srq* srq, const uint8_t* cqe, Completion* out);

// Rendezvous offload (docs/tag-matching.md, "Rendezvous"): the NIC's internal WQEs of a
// rendezvous QP carry wr_id = (RNDV_WRID_MARK << 56) | [FIN bit] | handle, and complete only on
// error or flush, on the TM-SRQ's CQ.
inline bool is_rndv_wr_id(uint64_t wr_id) { return (wr_id >> 56) == hwif::RNDV_WRID_MARK; }
inline bool is_rndv_fin(uint64_t wr_id) { return (wr_id >> hwif::RNDV_WRID_FIN_BIT) & 1; }
// A send-side CQE of one of `srq`'s rendezvous QPs: a FIN's is consumed silently (out->skip), a
// READ's becomes the tag's completion (TM_RECV, DATA_VALID, the CQE's status, the tag's recv_wr_id
// and the tag recorded at ADD) and releases the tag. A CQE without the mark is passed on as written.
void tm_parse_rndv_cqe(tmnic_srq* srq, const uint8_t* cqe, Completion* out);
// The same CQE is being dropped unpolled (its QP is reset or destroyed): a READ's tag is released,
// since its completion will never be seen.
void tm_drop_rndv_cqe(tmnic_srq* srq, const uint8_t* cqe);

}  // namespace tmnic
