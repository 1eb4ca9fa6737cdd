// Pure library helpers: enum-to-string and rate conversions, identical to rdma-core 44's
// (libibverbs/enum_strs.c, verbs.c) so tools print the same text.
#include "front.hpp"

TMNIC_EXPORT const char* ibv_node_type_str(enum ibv_node_type node_type) {
  static const char* const str[] = {
      "InfiniBand channel adapter", "InfiniBand switch", "InfiniBand router", "iWARP NIC",
      "usNIC", "usNIC UDP", "unspecified",
  };
  if (node_type < IBV_NODE_CA || node_type > IBV_NODE_UNSPECIFIED) return "unknown";
  return str[node_type - IBV_NODE_CA];
}

TMNIC_EXPORT const char* ibv_port_state_str(enum ibv_port_state port_state) {
  static const char* const str[] = {
      "no state change (NOP)", "down", "init", "armed", "active", "active defer",
  };
  if (port_state < IBV_PORT_NOP || port_state > IBV_PORT_ACTIVE_DEFER) return "unknown";
  return str[port_state];
}

TMNIC_EXPORT const char* ibv_event_type_str(enum ibv_event_type event) {
  static const char* const str[] = {
      "CQ error",
      "local work queue catastrophic error",
      "invalid request local work queue error",
      "local access violation work queue error",
      "communication established",
      "send queue drained",
      "path migrated",
      "path migration request error",
      "local catastrophic error",
      "port active",
      "port error",
      "LID change",
      "P_Key change",
      "SM change",
      "SRQ catastrophic error",
      "SRQ limit reached",
      "last WQE reached",
      "client reregistration",
      "GID table change",
      "WQ fatal",
  };
  if (event < IBV_EVENT_CQ_ERR || event > IBV_EVENT_WQ_FATAL) return "unknown";
  return str[event];
}

TMNIC_EXPORT const char* ibv_wc_status_str(enum ibv_wc_status status) {
  static const char* const str[] = {
      "success",
      "local length error",
      "local QP operation error",
      "local EE context operation error",
      "local protection error",
      "Work Request Flushed Error",
      "memory management operation error",
      "bad response error",
      "local access error",
      "remote invalid request error",
      "remote access error",
      "remote operation error",
      "transport retry counter exceeded",
      "RNR retry counter exceeded",
      "local RDD violation error",
      "remote invalid RD request",
      "aborted error",
      "invalid EE context number",
      "invalid EE context state",
      "fatal error",
      "response timeout error",
      "general error",
      "TM error",
      "TM software rendezvous",
  };
  if (status < IBV_WC_SUCCESS || status > IBV_WC_TM_RNDV_INCOMPLETE) return "unknown";
  return str[status];
}

TMNIC_EXPORT int ibv_rate_to_mult(enum ibv_rate rate) {
  switch (rate) {
    case IBV_RATE_2_5_GBPS: return 1;
    case IBV_RATE_5_GBPS: return 2;
    case IBV_RATE_10_GBPS: return 4;
    case IBV_RATE_20_GBPS: return 8;
    case IBV_RATE_30_GBPS: return 12;
    case IBV_RATE_40_GBPS: return 16;
    case IBV_RATE_60_GBPS: return 24;
    case IBV_RATE_80_GBPS: return 32;
    case IBV_RATE_120_GBPS: return 48;
    case IBV_RATE_28_GBPS: return 11;
    case IBV_RATE_50_GBPS: return 20;
    case IBV_RATE_400_GBPS: return 160;
    case IBV_RATE_600_GBPS: return 240;
    case IBV_RATE_800_GBPS: return 320;
    case IBV_RATE_1200_GBPS: return 480;
    default: return -1;
  }
}

TMNIC_EXPORT enum ibv_rate mult_to_ibv_rate(int mult) {
  switch (mult) {
    case 1: return IBV_RATE_2_5_GBPS;
    case 2: return IBV_RATE_5_GBPS;
    case 4: return IBV_RATE_10_GBPS;
    case 8: return IBV_RATE_20_GBPS;
    case 12: return IBV_RATE_30_GBPS;
    case 16: return IBV_RATE_40_GBPS;
    case 24: return IBV_RATE_60_GBPS;
    case 32: return IBV_RATE_80_GBPS;
    case 48: return IBV_RATE_120_GBPS;
    case 11: return IBV_RATE_28_GBPS;
    case 20: return IBV_RATE_50_GBPS;
    case 160: return IBV_RATE_400_GBPS;
    case 240: return IBV_RATE_600_GBPS;
    case 320: return IBV_RATE_800_GBPS;
    case 480: return IBV_RATE_1200_GBPS;
    default: return IBV_RATE_MAX;
  }
}

TMNIC_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate) {
  switch (rate) {
    case IBV_RATE_2_5_GBPS: return 2500;
    case IBV_RATE_5_GBPS: return 5000;
    case IBV_RATE_10_GBPS: return 10000;
    case IBV_RATE_20_GBPS: return 20000;
    case IBV_RATE_30_GBPS: return 30000;
    case IBV_RATE_40_GBPS: return 40000;
    case IBV_RATE_60_GBPS: return 60000;
    case IBV_RATE_80_GBPS: return 80000;
    case IBV_RATE_120_GBPS: return 120000;
    case IBV_RATE_14_GBPS: return 14062;
    case IBV_RATE_56_GBPS: return 56250;
    case IBV_RATE_112_GBPS: return 112500;
    case IBV_RATE_168_GBPS: return 168750;
    case IBV_RATE_25_GBPS: return 25781;
    case IBV_RATE_100_GBPS: return 103125;
    case IBV_RATE_200_GBPS: return 206250;
    case IBV_RATE_300_GBPS: return 309375;
    case IBV_RATE_28_GBPS: return 28125;
    case IBV_RATE_50_GBPS: return 53125;
    case IBV_RATE_400_GBPS: return 425000;
    case IBV_RATE_600_GBPS: return 637500;
    case IBV_RATE_800_GBPS: return 850000;
    case IBV_RATE_1200_GBPS: return 1275000;
    default: return -1;
  }
}

TMNIC_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps) {
  switch (mbps) {
    case 2500: return IBV_RATE_2_5_GBPS;
    case 5000: return IBV_RATE_5_GBPS;
    case 10000: return IBV_RATE_10_GBPS;
    case 20000: return IBV_RATE_20_GBPS;
    case 30000: return IBV_RATE_30_GBPS;
    case 40000: return IBV_RATE_40_GBPS;
    case 60000: return IBV_RATE_60_GBPS;
    case 80000: return IBV_RATE_80_GBPS;
    case 120000: return IBV_RATE_120_GBPS;
    case 14062: return IBV_RATE_14_GBPS;
    case 56250: return IBV_RATE_56_GBPS;
    case 112500: return IBV_RATE_112_GBPS;
    case 168750: return IBV_RATE_168_GBPS;
    case 25781: return IBV_RATE_25_GBPS;
    case 103125: return IBV_RATE_100_GBPS;
    case 206250: return IBV_RATE_200_GBPS;
    case 309375: return IBV_RATE_300_GBPS;
    case 28125: return IBV_RATE_28_GBPS;
    case 53125: return IBV_RATE_50_GBPS;
    case 425000: return IBV_RATE_400_GBPS;
    case 637500: return IBV_RATE_600_GBPS;
    case 850000: return IBV_RATE_800_GBPS;
    case 1275000: return IBV_RATE_1200_GBPS;
    default: return IBV_RATE_MAX;
  }
}
