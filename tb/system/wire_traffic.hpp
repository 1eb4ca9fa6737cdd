// The traffic of tmnic_system_wire (the capture and determinism program), shared with the tests
// that check its pcap: one RC connection tmnic0 <-> tmnic1 at PMTU 1024, messages in both
// directions, one per round trip.
#pragma once
#include <cstdint>

namespace wire {

struct Msg {
  uint32_t len;
  bool imm;
  bool inl;
  int dir;  // 0: tmnic0 -> tmnic1, 1: tmnic1 -> tmnic0
  bool se = false;  // IBV_SEND_SOLICITED: SE bit on the last packet
};

constexpr uint32_t kPmtu = 1024;
constexpr uint32_t kPsn[2] = {0xFFFFF8u, 0x000100u};  // send PSN of each side; side 0 wraps
constexpr uint32_t kImmBase = 0x11223300u;             // imm of message i: kImmBase + i
// Each side's GRH traffic class and hop limit (ibv_qp_attr.ah_attr.grh): the IPv4 TOS and TTL of
// everything that side's QP sends, ACKs included (side 0: DSCP AF31 with ECT(0); side 1: DSCP EF).
constexpr uint8_t kTclass[2] = {0x6A, 0xB8};
constexpr uint8_t kHopLimit[2] = {64, 17};
// Message 0 is sent before its receive is posted: RNR NAK, then retried and delivered.
constexpr Msg kMsgs[] = {
    {100, false, false, 0}, {0, false, false, 0},    {1, false, false, 0},   {3, false, false, 0, true},
    {4, false, false, 0},   {5, true, false, 0},     {63, false, true, 0},   {96, true, true, 0},
    {1023, false, false, 0}, {1024, false, false, 0}, {1025, true, false, 0, true}, {4096, false, false, 0},
    {10000, true, false, 0}, {2, false, false, 1},   {2000, true, false, 1}, {0, true, false, 1},
};
constexpr int kNumMsgs = sizeof(kMsgs) / sizeof(kMsgs[0]);

inline uint32_t packets(uint32_t len) { return len == 0 ? 1 : (len + kPmtu - 1) / kPmtu; }

}  // namespace wire
