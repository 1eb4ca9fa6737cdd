// tmnic_tmstat: prints the per-SRQ tag-matching statistics of every tmnic device (BAR0 TM_STATS
// window: expected, unexpected, no-tag, syncs, occupancy, high-water mark, disabled entries, and the
// hw/sw phase counters), for SRQs that show any tag-matching activity.
//
// The simulated NICs live inside the process that uses them, so on the simulation this tool first
// runs its own tagged workload (--demo N: N tagged messages over a loopback RC connection on tmnic0
// into a TM-SRQ, a tenth of them arriving before their receive is posted) and then prints; a verbs
// program that wants its own counters calls print_tm_stats() below the same way (it only needs
// tmnic_sim_read_reg, exported by the drop-in libibverbs.so.1).
//
//   tmnic_tmstat [--demo N] [--all]
#include <arpa/inet.h>
#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "sim_control.h"
#include "tmnic/hwif.h"

namespace hw = tmnic::hwif;

namespace {

[[noreturn]] void die(const char* what, int err) {
  std::fprintf(stderr, "tmnic_tmstat: %s: %s\n", what, std::strerror(err));
  std::exit(1);
}

void print_tm_stats(bool all) {
  std::printf("%-7s %4s %10s %10s %8s %8s %6s %6s %8s %6s %6s\n", "device", "srq", "expected", "unexpected", "no_tag",
              "syncs", "occ", "hwm", "disabled", "hw_cnt", "sw_cnt");
  for (int nic = 0; nic < tmnic_sim_num_nics(); nic++) {
    const uint32_t nsrq = tmnic_sim_read_reg(nic, hw::reg::NUM_SRQ);
    for (uint32_t s = 0; s < nsrq; s++) {
      uint32_t v[hw::tmstat::COUNT];
      bool any = false;
      for (uint32_t k = 0; k < hw::tmstat::COUNT; k++) {
        v[k] = tmnic_sim_read_reg(nic, hw::reg::TM_STATS0 + hw::TM_STATS_STRIDE * s + 4 * k);
        any |= v[k] != 0;
      }
      if (!any && !all) continue;
      std::printf("tmnic%-2d %4u %10u %10u %8u %8u %6u %6u %8u %6u %6u\n", nic, s, v[hw::tmstat::EXPECTED],
                  v[hw::tmstat::UNEXPECTED], v[hw::tmstat::NO_TAG], v[hw::tmstat::SYNCS], v[hw::tmstat::OCCUPANCY],
                  v[hw::tmstat::HIGH_WATER], v[hw::tmstat::DISABLED], v[hw::tmstat::PHASE] >> 16,
                  v[hw::tmstat::PHASE] & 0xFFFF);
    }
  }
  // The engine as a whole: its geometry and how many entries are on the slower exact paths.
  for (int nic = 0; nic < tmnic_sim_num_nics(); nic++) {
    const uint32_t g = tmnic_sim_read_reg(nic, hw::reg::TM_GEOM), p = tmnic_sim_read_reg(nic, hw::reg::TM_PLACE);
    std::printf("tmnic%-2d engine: %u entries, %u mask classes x %u ways x %u buckets, CAM %u; now %u in the CAM, "
                "%u spilled\n",
                nic, tmnic_sim_read_reg(nic, hw::reg::TM_MAX_TAGS), g & 0xFF, (g >> 8) & 0xFF, 1u << ((g >> 16) & 0xFF),
                g >> 24, p & 0xFFFF, p >> 16);
  }
}

void to_rts(ibv_qp* qp, uint32_t dest, const ibv_gid& gid) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) die("INIT", e);
  a = {};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_1024;
  a.dest_qp_num = dest;
  a.min_rnr_timer = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = gid;
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                        IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) die("RTR", e);
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                        IBV_QP_MAX_QP_RD_ATOMIC)) die("RTS", e);
}

// N tagged 64-byte messages over loopback on tmnic0: receive i (tag i) is added, then message i is
// sent, except every tenth message, which is sent first (unexpected: it lands in an SRQ buffer and
// the receive is then satisfied by software, followed by a TAG_SYNC).
void demo(int n) {
  int num = 0;
  ibv_device** list = ibv_get_device_list(&num);
  if (!list || num == 0) die("no tmnic device", ENODEV);
  ibv_context* ctx = ibv_open_device(list[0]);
  if (!ctx) die("ibv_open_device", errno);
  ibv_pd* pd = ibv_alloc_pd(ctx);
  ibv_cq_init_attr_ex ca{};
  ca.cqe = 1024;
  ca.wc_flags = IBV_WC_EX_WITH_TM_INFO | IBV_WC_STANDARD_FLAGS;
  ibv_cq_ex* cq = ibv_create_cq_ex(ctx, &ca);
  ibv_cq* scq = ibv_create_cq(ctx, 256, nullptr, nullptr, 0);
  if (!pd || !cq || !scq) die("pd/cq", errno);
  ibv_srq_init_attr_ex sa{};
  sa.attr.max_wr = 64;
  sa.attr.max_sge = 1;
  sa.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
  sa.srq_type = IBV_SRQT_TM;
  sa.pd = pd;
  sa.cq = ibv_cq_ex_to_cq(cq);
  sa.tm_cap.max_num_tags = 64;
  sa.tm_cap.max_ops = 256;
  ibv_srq* srq = ibv_create_srq_ex(ctx, &sa);
  if (!srq) die("ibv_create_srq_ex(IBV_SRQT_TM)", errno);
  std::vector<uint8_t> mem(1 << 20);
  ibv_mr* mr = ibv_reg_mr(pd, mem.data(), mem.size(), IBV_ACCESS_LOCAL_WRITE);
  if (!mr) die("ibv_reg_mr", errno);
  ibv_qp_init_attr qa{};
  qa.send_cq = scq;
  qa.recv_cq = scq;
  qa.qp_type = IBV_QPT_RC;
  qa.cap.max_send_wr = 64;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_wr = 1;
  qa.cap.max_recv_sge = 1;
  ibv_qp* tx = ibv_create_qp(pd, &qa);
  qa.srq = srq;
  qa.recv_cq = ibv_cq_ex_to_cq(cq);
  qa.cap.max_recv_wr = 0;
  ibv_qp* rx = ibv_create_qp(pd, &qa);
  if (!tx || !rx) die("ibv_create_qp", errno);
  ibv_gid gid;
  if (int e = ibv_query_gid(ctx, 1, 0, &gid)) die("ibv_query_gid", e);
  to_rts(tx, rx->qp_num, gid);
  to_rts(rx, tx->qp_num, gid);
  auto srq_post = [&](uint64_t id) {
    ibv_sge sg{reinterpret_cast<uint64_t>(mem.data()) + 0x80000 + 256 * (id % 64), 256, mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    ibv_recv_wr* bad;
    if (int e = ibv_post_srq_recv(srq, &wr, &bad)) die("ibv_post_srq_recv", e);
  };
  for (int i = 0; i < 32; i++) srq_post(uint64_t(i));
  uint32_t unexp = 0;
  auto ops = [&](ibv_ops_wr* op) {
    ibv_ops_wr* bad;
    if (int e = ibv_post_srq_ops(srq, op, &bad)) die("ibv_post_srq_ops", e);
  };
  auto send = [&](int i) {
    uint8_t* p = mem.data() + 256 * (i % 64);
    ibv_tmh* h = reinterpret_cast<ibv_tmh*>(p);
    h->opcode = IBV_TMH_EAGER;
    std::memset(h->reserved, 0, 3);
    h->app_ctx = htonl(uint32_t(i));
    h->tag = htobe64(uint64_t(i));
    ibv_sge sg{reinterpret_cast<uint64_t>(p), 80, mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = uint64_t(i);
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad;
    if (int e = ibv_post_send(tx, &wr, &bad)) die("ibv_post_send", e);
  };
  // Completions until `want` receive-side events (TM_RECV data or unexpected) were seen.
  auto wait = [&](int want) {
    int got = 0;
    while (got < want) {
      ibv_wc w;
      while (ibv_poll_cq(scq, 1, &w) > 0) {}
      ibv_poll_cq_attr pa{};
      if (ibv_start_poll(cq, &pa) != 0) continue;
      do {
        const ibv_wc_opcode opc = ibv_wc_read_opcode(cq);
        const unsigned flags = ibv_wc_read_wc_flags(cq);
        if (cq->status != IBV_WC_SUCCESS) die("completion error", EIO);
        if (opc == IBV_WC_TM_RECV && !(flags & (IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID))) {
          unexp++;
          srq_post(cq->wr_id);
          got++;
        } else if (opc == IBV_WC_TM_RECV && (flags & IBV_WC_TM_DATA_VALID)) {
          got++;
        }
      } while (ibv_next_poll(cq) == 0);
      ibv_end_poll(cq);
    }
  };
  for (int i = 0; i < n; i++) {
    if (i % 10 == 9) {
      send(i);   // before its receive: unexpected; software takes it and re-syncs the phase
      wait(1);
      ibv_ops_wr op{};
      op.opcode = IBV_WR_TAG_SYNC;
      op.flags = IBV_OPS_TM_SYNC;
      op.tm.unexpected_cnt = unexp;
      ops(&op);
      continue;
    }
    ibv_sge sg{reinterpret_cast<uint64_t>(mem.data()) + 0x40000 + 256 * (i % 64), 256, mr->lkey};
    ibv_ops_wr op{};
    op.opcode = IBV_WR_TAG_ADD;
    op.flags = IBV_OPS_TM_SYNC;
    op.tm.unexpected_cnt = unexp;
    op.tm.add.recv_wr_id = uint64_t(i);
    op.tm.add.sg_list = &sg;
    op.tm.add.num_sge = 1;
    op.tm.add.tag = uint64_t(i);
    op.tm.add.mask = ~0ull;
    ops(&op);
    tmnic_sim_run(2000);   // let the ADD reach the list before the message
    send(i);
    wait(1);
  }
  std::printf("demo: %d tagged messages on tmnic0 loopback, %u unexpected\n", n, unexp);
  // Objects stay alive: the statistics are read from the running NIC.
  (void)list;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  bool all = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--demo" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (a == "--all") all = true;
    else {
      std::fprintf(stderr, "usage: tmnic_tmstat [--demo N] [--all]\n");
      return 2;
    }
  }
  if (n > 0) demo(n);
  print_tm_stats(all);
  return 0;
}
