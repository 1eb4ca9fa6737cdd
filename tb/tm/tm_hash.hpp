// The matching engine's class-table hash in C++ (hwif/spec.py "TM_HASH", rtl/tm/tmnic_tm_hash.sv),
// and a builder of keys that collide in every way of a class: the hash is linear over GF(2), so any
// tag difference in the null space of all ways' hash matrices (restricted to tag bits above the
// index) keeps every bucket index. Tests use it to fill one bucket set on purpose.
#pragma once

#include <cstdint>
#include <vector>

#include "tmnic/hwif.h"

namespace tmnic::tm {

struct Geometry {
  unsigned lb;     // log2 buckets per way
  unsigned srq_w;  // SRQ bits of the key
};

// Bucket of key {srq, mtag} in way `way` of class `cls`.
inline unsigned bucket(const Geometry& g, unsigned cls, unsigned way, unsigned srq, uint64_t mtag) {
  namespace h = hwif::tm_hash;
  const unsigned rw = g.srq_w + 64 - g.lb;
  unsigned idx = unsigned(mtag & ((1ull << g.lb) - 1));
  for (unsigned j = 0; j < rw; ++j) {
    const unsigned key_bit = g.lb + j;
    const bool set = key_bit < 64 ? (mtag >> key_bit) & 1 : (srq >> (key_bit - 64)) & 1;
    if (set) idx ^= h::Q[cls][way][j] & ((1u << g.lb) - 1);
  }
  return idx;
}

// A key difference that changes no bucket index: tag bits (lb..63) and SRQ bits.
struct KeyDelta {
  uint64_t tag;
  unsigned srq;
};

// Key differences that change no bucket index of class `cls` in ways 0..ways-1: a basis of the
// null space of the ways' hash matrices over R = {srq, tag[63:lb]}. Empty when the equations leave
// no freedom.
inline std::vector<KeyDelta> colliding_basis(const Geometry& g, unsigned cls, unsigned ways) {
  namespace h = hwif::tm_hash;
  const unsigned nvar = 64 - g.lb + g.srq_w;  // the bits of R
  std::vector<std::vector<bool>> rows;         // one equation per (way, index bit)
  for (unsigned w = 0; w < ways; ++w)
    for (unsigned b = 0; b < g.lb; ++b) {
      std::vector<bool> r(nvar);
      for (unsigned j = 0; j < nvar; ++j) r[j] = (h::Q[cls][w][j] >> b) & 1;
      rows.push_back(r);
    }
  // Gaussian elimination to reduced row echelon form.
  std::vector<unsigned> pivot_col;
  unsigned rank = 0;
  for (unsigned col = 0; col < nvar && rank < rows.size(); ++col) {
    unsigned sel = rank;
    while (sel < rows.size() && !rows[sel][col]) ++sel;
    if (sel == rows.size()) continue;
    std::swap(rows[sel], rows[rank]);
    for (unsigned r = 0; r < rows.size(); ++r)
      if (r != rank && rows[r][col])
        for (unsigned j = 0; j < nvar; ++j) rows[r][j] = rows[r][j] ^ rows[rank][j];
    pivot_col.push_back(col);
    ++rank;
  }
  std::vector<bool> is_pivot(nvar, false);
  for (unsigned c : pivot_col) is_pivot[c] = true;
  std::vector<KeyDelta> basis;
  for (unsigned f = 0; f < nvar; ++f) {
    if (is_pivot[f]) continue;
    std::vector<bool> v(nvar, false);
    v[f] = true;
    for (unsigned r = 0; r < rank; ++r)
      if (rows[r][f]) v[pivot_col[r]] = true;
    KeyDelta d{0, 0};
    for (unsigned j = 0; j < nvar; ++j) {
      if (!v[j]) continue;
      const unsigned key_bit = g.lb + j;
      if (key_bit < 64) d.tag |= 1ull << key_bit;
      else d.srq |= 1u << (key_bit - 64);
    }
    basis.push_back(d);
  }
  return basis;
}

}  // namespace tmnic::tm
