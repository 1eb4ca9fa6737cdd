// Tag matching: TM-SRQ setup, ibv_post_srq_ops and the TM completions, following mlx5
// (providers/mlx5/qp.c mlx5_post_srq_ops, cq.c handle_tag_matching) wherever the hardware
// contract allows.
#include "tm.hpp"

#include <cerrno>
#include <new>

#include "cq.hpp"
#include "provider.hpp"
#include "srq.hpp"

namespace tmnic {


int TmSrq::init(Backend* be, uint32_t num_tags, uint32_t ring_log_size) {
  max_num_tags = num_tags;
  tags.assign(num_tags, TagEntry());
  for (uint32_t i = 0; i + 1 < num_tags; i++) tags[i].next = i + 1;
  free_head = 0;
  free_tail = num_tags - 1;
  log_size = ring_log_size;
  ops.assign(size(), TmOp());
  return ring.alloc(be, size_t(hwif::TM_OP_STRIDE) << log_size);
}

void TmSrq::release(uint32_t h) {
  TagEntry& t = tags[h];
  if (t.expect_cqe <= 0) return;  // never below zero, whatever the CQEs say
  if (--t.expect_cqe) return;
  t.next = kNoTag;
  t.del_posted = false;
  if (free_tail == kNoTag)
    free_head = h;
  else
    tags[free_tail].next = h;
  free_tail = h;
}

int tm_srq_create(Device& d, tmnic_srq* srq, struct ibv_srq_init_attr_ex* attr) {
  // libibverbs (ibv_icmd_create_srq): a TM-SRQ needs its CQ, the TM attributes and tags.
  const uint32_t need = IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
  if ((attr->comp_mask & need) != need || attr->tm_cap.max_num_tags == 0) return EINVAL;
  // mlx5: "An extended CQ is required to read TM information from".
  if (!attr->cq || attr->cq->context != attr->pd->context) return EINVAL;
  tmnic_cq* cq = to_tcq(attr->cq);
  if (!cq->extended) return EINVAL;
  // Kernel mlx5: "TM SRQ max_num_tags exceeding limit" -- also what a device without tag
  // matching (TM_MAX_TAGS = 0) answers.
  const uint32_t n = attr->tm_cap.max_num_tags;
  if (n > d.tm_max_tags) return EINVAL;
  // The op ring holds max_ops ops (at least one), rounded up to a power of two.
  const uint32_t max_ops = attr->tm_cap.max_ops ? attr->tm_cap.max_ops : 1;
  if (max_ops > (1u << d.max_log_queue)) return EINVAL;
  uint32_t log = 0;
  while ((1u << log) < max_ops) log++;
  // List-op CQEs do not name their SRQ, so a CQ can serve one TM-SRQ only.
  if (cq->tm_srq) return EINVAL;

  auto* tm = new (std::nothrow) TmSrq();
  if (!tm) return ENOMEM;
  int64_t base = d.tm_slots.alloc(n);
  if (base < 0) {
    delete tm;
    return ENOMEM;  // the engine's entries are taken by other TM-SRQs
  }
  tm->tag_base = uint32_t(base);
  if (int err = tm->init(d.be(), n, log)) {
    d.tm_slots.release(tm->tag_base);
    delete tm;
    return err;
  }
  tm->cq = cq;
  if (!cq->single_threaded) cq->lock.lock();
  bool taken = cq->tm_srq != nullptr;  // a concurrent create won the CQ
  if (!taken) cq->tm_srq = srq;
  if (!cq->single_threaded) cq->lock.unlock();
  if (taken) {
    d.tm_slots.release(tm->tag_base);
    delete tm;
    return EINVAL;
  }
  cq->usecnt++;
  srq->tm.reset(tm);
  attr->tm_cap.max_ops = tm->size();
  return 0;
}

void tm_srq_destroy(Device& d, tmnic_srq* srq) {
  TmSrq* tm = srq->tm.get();
  if (!tm) return;
  tmnic_cq* cq = tm->cq;
  // Unpolled TM completions refer to tags and ops that are about to disappear.
  cq_clean_tm(cq);
  const bool locked = !cq->single_threaded && cq->lock.lock_unless_held();
  cq->tm_srq = nullptr;
  if (locked) cq->lock.unlock();
  cq->usecnt--;
  d.tm_slots.release(tm->tag_base);
  srq->tm.reset();
}

int post_srq_ops(struct ibv_srq* ibsrq, struct ibv_ops_wr* op, struct ibv_ops_wr** bad_op) {
  tmnic_srq* srq = to_tsrq(ibsrq);
  TmSrq* tm = srq->tm.get();
  if (!tm) {  // not a TM-SRQ (mlx5: no command QP)
    *bad_op = op;
    return EINVAL;
  }
  int err = 0;
  tm->lock.lock();
  const uint32_t start = tm->pi;
  for (; op; op = op->next) {
    // Ring slots come back only with the CQEs of signaled ops (mlx5_wq_overflow on the cmd QP).
    if (tm->pi - tm->ci >= tm->size()) {
      err = ENOMEM;
      break;
    }
    const bool signaled = op->flags & IBV_OPS_SIGNALED;
    const bool sync = op->flags & IBV_OPS_TM_SYNC;
    hwif::TmOp w{};  // reserved bytes are zero
    uint32_t h = kNoTag;
    uint8_t opcode;
    const uint32_t wr_opcode = raw_enum(op->opcode);
    // Validate first: a refused op changes nothing.
    switch (wr_opcode) {
      case IBV_WR_TAG_ADD:
        if (op->tm.add.num_sge < 0 || op->tm.add.num_sge > 1)
          err = EINVAL;
        else if (tm->free_head == kNoTag)
          err = ENOMEM;  // "tag matching list is full"
        opcode = hwif::tm_opcode::ADD;
        break;
      case IBV_WR_TAG_DEL:
        // Only a tag the driver handed out and did not delete yet (mlx5 checks this in debug
        // builds only; here it keeps the shadow list consistent whatever the application does).
        h = op->tm.handle;
        if (h >= tm->max_num_tags || tm->tags[h].expect_cqe <= 0 || tm->tags[h].del_posted)
          err = EINVAL;
        opcode = hwif::tm_opcode::DEL;
        break;
      case IBV_WR_TAG_SYNC:
        opcode = hwif::tm_opcode::SYNC;
        break;
      default:
        err = EINVAL;
        opcode = 0;
        break;
    }
    if (err) break;

    // The count of unexpected messages software has handled: mlx5 takes it from ADDs only; any op
    // carrying it to the hardware updates it here (rdma-core-tm.md 2.5), so SYNC_REQ is not asked
    // for again after an explicit SYNC.
    if (sync) tm->unexp_out = op->tm.unexpected_cnt;
    if (wr_opcode == IBV_WR_TAG_ADD) {
      h = tm->free_head;
      TagEntry& t = tm->tags[h];
      tm->free_head = t.next;
      if (tm->free_head == kNoTag) tm->free_tail = kNoTag;
      t.next = kNoTag;
      t.wr_id = op->tm.add.recv_wr_id;
      t.tag = op->tm.add.tag;
      t.phase_cnt = tm->unexp_out;
      t.del_posted = false;
      t.expect_cqe = 1;  // its consumption (or a successful DEL)
      op->tm.handle = h;
      w.handle = h;
      w.tag = op->tm.add.tag;
      w.mask = op->tm.add.mask;
      // No SGE or a zero-length one: an empty tagged buffer ("message is allowed to be empty").
      if (op->tm.add.num_sge == 1) w.sge = to_hw_sge(op->tm.add.sg_list[0]);
    } else if (wr_opcode == IBV_WR_TAG_DEL) {
      tm->tags[h].del_posted = true;
      w.handle = h;
    }
    if (signaled) {
      TmOp& p = tm->ops[tm->op_tail++ & (tm->size() - 1)];
      p.tag = wr_opcode == IBV_WR_TAG_SYNC ? kNoTag : h;
      p.wr_id = op->wr_id;
      p.ring_idx = tm->pi;
      p.opcode = opcode;
      if (p.tag != kNoTag) tm->tags[h].expect_cqe++;  // released when this op's CQE is polled
    } else if (wr_opcode == IBV_WR_TAG_DEL) {
      tm->release(h);  // an unsignaled DEL is assumed to succeed: no consumption will come
    }

    w.wr_id = op->wr_id;
    w.opcode = opcode;
    w.flags = uint8_t((signaled ? hwif::tm_op_flag::SIGNALED : 0) | (sync ? hwif::tm_op_flag::SW_CNT : 0));
    if (sync) w.sw_cnt = uint16_t(op->tm.unexpected_cnt);
    std::memcpy(tm->slot(tm->pi), &w, sizeof(w));
    tm->pi++;
  }
  if (err) *bad_op = op;
  if (tm->pi != start) {
    // Op WQEs must be visible in memory before the NIC learns about them; one doorbell per call.
    barrier_to_device();
    srq->dev->write32(hwif::reg::DB_TM0 + 4 * srq->srqn, tm->pi & 0xFFFF);
  }
  tm->lock.unlock();
  return err;
}

void tm_parse_cqe(tmnic_srq* srq, const uint8_t* c, Completion* out) {
  TmSrq* tm = srq->tm.get();
  if (!tm) return;
  namespace f = hwif::cqe;
  const uint8_t opcode = c[f::OPCODE_OFF];
  if (opcode == hwif::wc_op::TM_ADD || opcode == hwif::wc_op::TM_DEL ||
      opcode == hwif::wc_op::TM_SYNC) {
    out->wc_flags = 0;
    tm->lock.lock();
    if (tm->op_head == tm->op_tail) {  // no signaled op outstanding: passed on as written
      tm->lock.unlock();
      return;
    }
    const TmOp op = tm->ops[tm->op_head++ & (tm->size() - 1)];
    out->wr_id = op.wr_id;
    tm->ci = op.ring_idx + 1;  // the NIC consumed every op up to this one
    if (op.tag != kNoTag) {
      const uint32_t phase = tm->tags[op.tag].phase_cnt;
      tm->release(op.tag);  // this CQE
      // A successful DEL means no consumption will come ("If tag entry was successfully removed
      // we don't expect consumption completion for it anymore"); a failed ADD never got into
      // the list, so none will come either. A failed DEL (tag consumed meanwhile) waits for it.
      const bool ok = out->status == IBV_WC_SUCCESS;
      if (ok ? op.opcode == hwif::tm_opcode::DEL : op.opcode == hwif::tm_opcode::ADD)
        tm->release(op.tag);
      // The tag was added out of phase with the hardware: ask for a SYNC. Both counts are the
      // 16 bits the hardware keeps.
      if (ld16(c + f::TM_HW_CNT_OFF) != uint16_t(phase)) out->wc_flags |= IBV_WC_TM_SYNC_REQ;
    }
    tm->lock.unlock();
    return;
  }
  if (opcode == hwif::wc_op::TM_RECV) {
    const uint32_t raw = ld32(c + f::WC_FLAGS_OFF);
    const unsigned tmf = raw & (hwif::wc_flag::TM_MATCH | hwif::wc_flag::TM_DATA_VALID);
    out->wc_flags |= tmf;
    if (tmf) {  // matched: the tagged buffer of handle TM_HANDLE
      out->tm_info = true;
      // mlx5 reads tm_info from the CQE's TMH, which the hardware "scatters to the CQE upon
      // match": a completion with MATCH (alone or with DATA_VALID) names the tag and app_ctx; the
      // second, DATA_VALID-only completion of a multi-packet eager message or an offloaded
      // rendezvous reads 0 (pyverbs' test_tm_rndv expects tag 0 there).
      if (tmf & hwif::wc_flag::TM_MATCH) {
        out->tm_tag = ld64(c + f::TM_TAG_OFF);
        out->tm_priv = ld32(c + f::TM_APP_CTX_OFF);
      }
      const uint32_t h = ld16(c + f::TM_HANDLE_OFF);
      tm->lock.lock();
      if (h >= tm->max_num_tags || tm->tags[h].expect_cqe <= 0) {
        out->status = IBV_WC_GENERAL_ERR;  // mlx5: "got idx %d which wasn't added"
      } else {
        out->wr_id = tm->tags[h].wr_id;
        // The CQE with the data ends the tag's consumption; a MATCH-only one announces it (an
        // offloaded rendezvous: MATCH when the request matched, DATA_VALID when the READ landed;
        // a multi-packet eager message the same), so each consumption releases the tag once.
        if (tmf & hwif::wc_flag::TM_DATA_VALID) tm->release(h);
      }
      tm->lock.unlock();
      return;
    }
    // Unexpected: the whole message went to an SRQ buffer; software must count it and sync.
    tm->lock.lock();
    tm->unexp_in++;
    if (int32_t(tm->unexp_in - tm->unexp_out) > kTmMaxSyncDiff) out->wc_flags |= IBV_WC_TM_SYNC_REQ;
    tm->lock.unlock();
    srq_complete(srq);
    return;
  }
  if (opcode == hwif::wc_op::TM_NO_TAG) srq_complete(srq);  // an SRQ buffer; no phase effect
}

void tm_parse_rndv_cqe(tmnic_srq* srq, const uint8_t* c, Completion* out) {
  TmSrq* tm = srq->tm.get();
  const uint64_t wr_id = ld64(c + hwif::cqe::WR_ID_OFF);
  if (!tm || !is_rndv_wr_id(wr_id)) return;  // not the NIC's: passed on as written
  if (is_rndv_fin(wr_id)) {
    // The FIN's error or flush: the data had landed and DATA_VALID released the tag already; the
    // QP is in ERR and its async event says so. Nothing for the application here.
    out->skip = true;
    return;
  }
  // The READ failed (remote access error, retries exhausted, local protection of the tagged
  // buffer) or was flushed: this is the consumption completion of the tag (mlx5 has no such
  // CQE; UCX-style software sees a tag completion with an error status, as for an eager error).
  const uint32_t h = uint32_t(wr_id & 0xFFFF);
  out->opcode = IBV_WC_TM_RECV;
  out->wc_flags = IBV_WC_TM_DATA_VALID;
  out->tm_info = true;
  out->tm_priv = 0;  // the request's app_ctx is not in this CQE
  tm->lock.lock();
  if (h >= tm->max_num_tags || tm->tags[h].expect_cqe <= 0) {
    out->status = IBV_WC_GENERAL_ERR;  // as a matched CQE of a tag that wasn't added
    out->wr_id = 0;
    out->tm_tag = 0;
  } else {
    out->wr_id = tm->tags[h].wr_id;
    out->tm_tag = tm->tags[h].tag;  // the posted tag (the TMH's matched it under the tag's mask)
    tm->release(h);
  }
  tm->lock.unlock();
}

void tm_drop_rndv_cqe(tmnic_srq* srq, const uint8_t* c) {
  TmSrq* tm = srq->tm.get();
  const uint64_t wr_id = ld64(c + hwif::cqe::WR_ID_OFF);
  if (!tm || !is_rndv_wr_id(wr_id) || is_rndv_fin(wr_id)) return;
  const uint32_t h = uint32_t(wr_id & 0xFFFF);
  tm->lock.lock();
  if (h < tm->max_num_tags && tm->tags[h].expect_cqe > 0) tm->release(h);
  tm->lock.unlock();
}

}  // namespace tmnic
