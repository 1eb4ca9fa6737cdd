// Reference model of the tag-matching engine (tmnic_tm_engine): the posted tags of all TM SRQs as
// one std::list in post order (oldest first), the per-SRQ phase counters, and each request applied
// whole, in acceptance order. Written to be obviously correct, not fast: every lookup walks the
// list from the front and takes the first live, enabled entry of its SRQ whose masked tag matches
// (MPI order). Rules: docs/tag-matching-engine.md and ../shared/reference/rdma-core-tm.md §2.5.
#pragma once

#include <cstdint>
#include <list>
#include <unordered_set>
#include <vector>

namespace tmnic::tm {

enum OpCode : unsigned { kAdd = 0, kDel = 1, kSync = 2, kClear = 3 };

struct Req {
  bool lk = false;  // lookup, else list op
  unsigned code = kAdd, srq = 0, handle = 0;
  uint64_t tag = 0, mask = 0;
  bool cnt_vld = false;
  uint16_t cnt = 0;
  bool commit_miss = false;
};

struct Rsp {
  bool lk = false;
  // op
  bool ok = false;
  uint16_t hw_cnt = 0;
  // lookup
  bool hit = false, unexp = false, blocked = false;
  unsigned handle = 0;
  // Facts about the decision (for coverage, not compared).
  unsigned n_match = 0;         // enabled entries of the SRQ matching the lookup
  bool disabled_match = false;  // a disabled entry matched (and was skipped)
  bool wildcard_hit = false, partial_hit = false, exact_hit = false;
  bool enabled_some = false;    // the op enabled disabled entries
  unsigned cleared = 0;         // entries removed by CLEAR
  bool hw_wrapped = false;      // hw_cnt went 0xffff -> 0
};

class Model {
 public:
  struct Entry {
    unsigned srq, handle;
    uint64_t tag, mask;
    bool enabled;
    uint64_t seq;  // posting order: the number of successful ADDs before this one
  };

  Model(unsigned n_entries, unsigned num_srq) : n_(n_entries), hw_(num_srq, 0), sw_(num_srq, 0) {}

  Rsp apply(const Req& r) {
    Rsp o;
    o.lk = r.lk;
    const unsigned s = r.srq;
    if (r.lk) {
      if (static_cast<uint16_t>(hw_[s] - sw_[s]) > 0x7fff) {
        o.blocked = true;
        return o;
      }
      auto hit = list_.end();
      for (auto it = list_.begin(); it != list_.end(); ++it) {
        if (it->srq != s || ((r.tag ^ it->tag) & it->mask) != 0) continue;
        if (!it->enabled) {
          o.disabled_match = true;
          continue;
        }
        if (hit == list_.end()) hit = it;
        ++o.n_match;
      }
      if (hit != list_.end()) {
        o.hit = true;
        o.handle = hit->handle;
        o.wildcard_hit = hit->mask == 0;
        o.exact_hit = hit->mask == ~0ull;
        o.partial_hit = !o.wildcard_hit && !o.exact_hit;
        live_.erase(hit->handle);
        list_.erase(hit);
      } else if (r.commit_miss) {
        o.unexp = true;
        o.hw_wrapped = hw_[s] == 0xffff;
        ++hw_[s];
      }
      return o;
    }
    if (r.cnt_vld) {
      sw_[s] = r.cnt;
      if (sw_[s] == hw_[s])
        for (auto& e : list_)
          if (e.srq == s && !e.enabled) {
            e.enabled = true;
            o.enabled_some = true;
          }
    }
    switch (r.code) {
      case kAdd: {
        o.ok = !live_.count(r.handle);
        if (o.ok) {
          list_.push_back({s, r.handle, r.tag, r.mask, sw_[s] == hw_[s], adds_++});
          live_.insert(r.handle);
        }
        break;
      }
      case kDel: {
        o.ok = false;
        for (auto it = list_.begin(); it != list_.end(); ++it)
          if (it->handle == r.handle && it->srq == s) {
            live_.erase(it->handle);
            list_.erase(it);
            o.ok = true;
            break;
          }
        break;
      }
      case kSync:
        o.ok = true;
        break;
      default: {  // kClear
        o.ok = true;
        for (auto it = list_.begin(); it != list_.end();)
          if (it->srq == s) {
            live_.erase(it->handle);
            it = list_.erase(it);
            ++o.cleared;
          } else {
            ++it;
          }
        hw_[s] = sw_[s] = 0;
        break;
      }
    }
    o.hw_cnt = hw_[s];
    return o;
  }

  unsigned occ(unsigned s) const {
    unsigned n = 0;
    for (auto& e : list_) n += e.srq == s;
    return n;
  }
  unsigned disabled(unsigned s) const {
    unsigned n = 0;
    for (auto& e : list_) n += e.srq == s && !e.enabled;
    return n;
  }
  uint16_t hw(unsigned s) const { return hw_[s]; }
  uint16_t sw(unsigned s) const { return sw_[s]; }
  size_t size() const { return list_.size(); }
  // Successful ADDs so far, and the posting number of the oldest live entry (adds() if none): the
  // engine orders entries by this number modulo 2^SEQ_W, so live entries must span less than
  // 2^(SEQ_W-1) ADDs (tests of small SEQ_W keep to that).
  uint64_t adds() const { return adds_; }
  uint64_t oldest_seq() const {
    uint64_t o = adds_;
    for (auto& e : list_) o = e.seq < o ? e.seq : o;
    return o;
  }
  unsigned capacity() const { return n_; }
  const std::list<Entry>& entries() const { return list_; }
  bool live(unsigned h) const { return live_.count(h) != 0; }

 private:
  unsigned n_;
  uint64_t adds_ = 0;
  std::list<Entry> list_;
  std::unordered_set<unsigned> live_;
  std::vector<uint16_t> hw_, sw_;
};

}  // namespace tmnic::tm
