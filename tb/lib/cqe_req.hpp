// The NIC's internal completion request (tmnic_pkg::cqe_req_t): what the engines hand the CQ
// writer. A plain struct, and its packing into / out of a Verilated wide signal.
#pragma once

#include <cstdint>

#include "lib/bits.hpp"

namespace tmnic::tb {

struct CqeReq {
  uint16_t cq = 0;
  uint64_t wr_id = 0;
  uint32_t byte_len = 0, imm = 0, qp_num = 0, src_qp = 0, wc_flags = 0;
  uint16_t wqe_idx = 0;
  uint8_t opcode = 0, status = 0;
  uint64_t tm_tag = 0;
  uint32_t tm_app_ctx = 0;
  uint16_t tm_handle = 0, tm_hw_cnt = 0;
  bool operator==(const CqeReq& o) const {
    return cq == o.cq && wr_id == o.wr_id && byte_len == o.byte_len && imm == o.imm && qp_num == o.qp_num &&
           src_qp == o.src_qp && wc_flags == o.wc_flags && wqe_idx == o.wqe_idx && opcode == o.opcode &&
           status == o.status && tm_tag == o.tm_tag && tm_app_ctx == o.tm_app_ctx && tm_handle == o.tm_handle &&
           tm_hw_cnt == o.tm_hw_cnt;
  }
};

constexpr unsigned kCqeReqBits = 384;  // $bits(cqe_req_t)

// cqe_req_t is packed with its first field in the most significant bits; base is the struct's
// lowest bit in the signal.
inline void pack_cqe_req(uint32_t* w, unsigned base, const CqeReq& r) {
  set_bits(w, base + 368, 16, r.cq);
  set_bits(w, base + 304, 64, r.wr_id);
  set_bits(w, base + 272, 32, r.byte_len);
  set_bits(w, base + 240, 32, r.imm);
  set_bits(w, base + 216, 24, r.qp_num);
  set_bits(w, base + 192, 24, r.src_qp);
  set_bits(w, base + 160, 32, r.wc_flags);
  set_bits(w, base + 144, 16, r.wqe_idx);
  set_bits(w, base + 136, 8, r.opcode);
  set_bits(w, base + 128, 8, r.status);
  set_bits(w, base + 64, 64, r.tm_tag);
  set_bits(w, base + 32, 32, r.tm_app_ctx);
  set_bits(w, base + 16, 16, r.tm_handle);
  set_bits(w, base + 0, 16, r.tm_hw_cnt);
}

inline CqeReq unpack_cqe_req(const uint32_t* w, unsigned base) {
  CqeReq r;
  r.cq = static_cast<uint16_t>(get_bits(w, base + 368, 16));
  r.wr_id = get_bits(w, base + 304, 64);
  r.byte_len = static_cast<uint32_t>(get_bits(w, base + 272, 32));
  r.imm = static_cast<uint32_t>(get_bits(w, base + 240, 32));
  r.qp_num = static_cast<uint32_t>(get_bits(w, base + 216, 24));
  r.src_qp = static_cast<uint32_t>(get_bits(w, base + 192, 24));
  r.wc_flags = static_cast<uint32_t>(get_bits(w, base + 160, 32));
  r.wqe_idx = static_cast<uint16_t>(get_bits(w, base + 144, 16));
  r.opcode = static_cast<uint8_t>(get_bits(w, base + 136, 8));
  r.status = static_cast<uint8_t>(get_bits(w, base + 128, 8));
  r.tm_tag = get_bits(w, base + 64, 64);
  r.tm_app_ctx = static_cast<uint32_t>(get_bits(w, base + 32, 32));
  r.tm_handle = static_cast<uint16_t>(get_bits(w, base + 16, 16));
  r.tm_hw_cnt = static_cast<uint16_t>(get_bits(w, base + 0, 16));
  return r;
}

}  // namespace tmnic::tb
