// Extended CQ polling (ibv_start_poll / ibv_next_poll / ibv_end_poll and the ibv_wc_read_*
// callbacks). Locking follows mlx5: start_poll takes the CQ lock and keeps it until end_poll; when
// start_poll finds nothing it releases the lock itself, and the caller must not call end_poll.
#include <cerrno>

#include "cq.hpp"

namespace tmnic {
namespace {

namespace f = hwif::cqe;

const uint8_t* cur(struct ibv_cq_ex* c) { return to_tcq(c)->cur; }

// Makes the next CQE the application may see the current completion (wr_id and status are plain
// fields of ibv_cq_ex); internal ones (Completion::skip) are consumed on the way. Null when the
// ring holds no such CQE.
const uint8_t* load_next(tmnic_cq* cq) {
  for (;;) {
    const uint8_t* cqe = cq_peek(cq);
    if (!cqe) return nullptr;
    Completion cp;
    cq_parse(cq, cqe, &cp);
    if (cp.skip) {
      cq_consume(cq, cqe);
      cq->consumed = true;
      continue;
    }
    cq->cur = cqe;
    cq->ibv.wr_id = cp.wr_id;
    cq->ibv.status = cp.status;
    cq->cur_opcode = cp.opcode;
    cq->cur_wc_flags = cp.wc_flags;
    cq->cur_tm_info = cp.tm_info;
    cq->cur_tm_tag = cp.tm_tag;
    cq->cur_tm_priv = cp.tm_priv;
    return cqe;
  }
}

int start_poll(struct ibv_cq_ex* c, struct ibv_poll_cq_attr* attr) {
  tmnic_cq* cq = to_tcq(c);
  if (attr->comp_mask) return EINVAL;
  if (!cq->single_threaded) cq->lock.lock();
  cq->consumed = false;
  if (!load_next(cq)) {
    if (cq->consumed) cq_doorbell(cq, false);  // internal CQEs were consumed
    if (!cq->single_threaded) cq->lock.unlock();
    cq->dev->progress();
    return ENOENT;
  }
  return 0;
}

int next_poll(struct ibv_cq_ex* c) {
  tmnic_cq* cq = to_tcq(c);
  cq_consume(cq, cq->cur);
  cq->consumed = true;
  if (!load_next(cq)) {
    cq->cur = nullptr;
    return ENOENT;
  }
  return 0;
}

void end_poll(struct ibv_cq_ex* c) {
  tmnic_cq* cq = to_tcq(c);
  if (cq->cur) {  // the last completion handed out is consumed by end_poll
    cq_consume(cq, cq->cur);
    cq->consumed = true;
    cq->cur = nullptr;
  }
  if (cq->consumed) cq_doorbell(cq, false);
  if (!cq->single_threaded) cq->lock.unlock();
}

enum ibv_wc_opcode read_opcode(struct ibv_cq_ex* c) { return to_tcq(c)->cur_opcode; }
uint32_t read_vendor_err(struct ibv_cq_ex* c) { return ld32(cur(c) + f::VENDOR_ERR_OFF); }
uint32_t read_byte_len(struct ibv_cq_ex* c) { return ld32(cur(c) + f::BYTE_LEN_OFF); }
__be32 read_imm_data(struct ibv_cq_ex* c) {
  __be32 v;
  std::memcpy(&v, cur(c) + f::IMM_OFF, 4);
  return v;
}
uint32_t read_qp_num(struct ibv_cq_ex* c) { return ld32(cur(c) + f::QP_NUM_OFF); }
uint32_t read_src_qp(struct ibv_cq_ex* c) { return ld32(cur(c) + f::SRC_QP_OFF); }
unsigned int read_wc_flags(struct ibv_cq_ex* c) { return to_tcq(c)->cur_wc_flags; }
uint32_t read_slid(struct ibv_cq_ex*) { return 0; }  // RoCE: no LIDs
uint8_t read_sl(struct ibv_cq_ex*) { return 0; }
uint8_t read_dlid_path_bits(struct ibv_cq_ex*) { return 0; }
// Not creatable (EOPNOTSUPP at create time); harmless values if called anyway.
uint64_t read_completion_ts(struct ibv_cq_ex*) { return 0; }
uint64_t read_completion_wallclock_ns(struct ibv_cq_ex*) { return 0; }
uint16_t read_cvlan(struct ibv_cq_ex*) { return 0; }
uint32_t read_flow_tag(struct ibv_cq_ex*) { return 0; }
// The TMH's tag and app_ctx of a matched tag completion (a rendezvous READ's error: the tag
// recorded at ADD, app_ctx 0); zero for everything else (list ops, unexpected and NO_TAG
// receives), as mlx5 reports them.
void read_tm_info(struct ibv_cq_ex* c, struct ibv_wc_tm_info* tm) {
  tmnic_cq* cq = to_tcq(c);
  tm->tag = cq->cur_tm_info ? cq->cur_tm_tag : 0;
  tm->priv = cq->cur_tm_info ? cq->cur_tm_priv : 0;
}

}  // namespace

void cq_ex_init_ops(tmnic_cq* cq) {
  struct ibv_cq_ex* c = &cq->ibv;
  c->start_poll = start_poll;
  c->next_poll = next_poll;
  c->end_poll = end_poll;
  c->read_opcode = read_opcode;
  c->read_vendor_err = read_vendor_err;
  c->read_byte_len = read_byte_len;
  c->read_imm_data = read_imm_data;
  c->read_qp_num = read_qp_num;
  c->read_src_qp = read_src_qp;
  c->read_wc_flags = read_wc_flags;
  c->read_slid = read_slid;
  c->read_sl = read_sl;
  c->read_dlid_path_bits = read_dlid_path_bits;
  c->read_completion_ts = read_completion_ts;
  c->read_completion_wallclock_ns = read_completion_wallclock_ns;
  c->read_cvlan = read_cvlan;
  c->read_flow_tag = read_flow_tag;
  c->read_tm_info = read_tm_info;
}

}  // namespace tmnic
