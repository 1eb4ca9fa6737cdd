// tmnic_tm_engine against the reference model tm_model.hpp (MPI-ordered std::list, per-SRQ phase
// counters): directed tests, one per rule, with the expected values written out; then
// constrained-random interleavings of ADD/DEL/SYNC/CLEAR and lookups with random valid gaps, every
// response and the observability outputs compared (tm_harness.hpp), with functional coverage.
// Built per engine geometry (tm_test_util.hpp). The fallback paths (CAM, spill list, colliding
// tags, full-occupancy rate) have their own file, test_tm_fallback.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <random>

#include "lib/coverage.hpp"
#include "lib/seed.hpp"
#include "lib/speed.hpp"
#include "tm_test_util.hpp"

using namespace tmnic::tm;
using namespace tmnic::tm::test;
using tmnic::tb::chance;
using tmnic::tb::Coverage;
using tmnic::tb::urand;

namespace {

// Runs one request and returns the engine's response (checked against the model by the harness).
Rsp run(H& h, const Req& r) { return h.run(r); }

// The random runs fill at most this many entries: the reference model walks its whole list per
// request, too slow for 16 K entries (FullListDuplicateTagsBackToBack and test_tm_fallback.cpp fill
// the full list).
constexpr unsigned kFill = kN > 2048 ? 2048 : kN;


// ------------------------------------------------------------------ directed, one per rule

TEST(TmEngine, MpiOrderAfterMiddleDeletion) {
  H h(kN, kSrq);
  for (unsigned i = 0; i < 4; ++i) EXPECT_TRUE(run(h, add(1, i, i == 0 ? 1 : 5)).ok);
  EXPECT_TRUE(run(h, del(1, 2)).ok);  // middle one of the three tag-5 entries
  Rsp r = run(h, lk(1, 5));
  EXPECT_TRUE(r.hit && r.handle == 1);
  r = run(h, lk(1, 5));
  EXPECT_TRUE(r.hit && r.handle == 3);
  r = run(h, lk(1, 5));
  EXPECT_FALSE(r.hit);
  EXPECT_TRUE(r.unexp);
  // Consumption in the middle: a(7) b(5) c(7); 5 takes b, then 7 takes a, then c.
  EXPECT_TRUE(run(h, sync(1, 1)).ok);
  run(h, add(1, 10, 7)), run(h, add(1, 11, 5)), run(h, add(1, 12, 7));
  EXPECT_EQ(run(h, lk(1, 5)).handle, 11u);
  EXPECT_EQ(run(h, lk(1, 7)).handle, 10u);
  EXPECT_EQ(run(h, lk(1, 7)).handle, 12u);
  CHECK_H(h);
}

// A reset while entries are live (a device reset): afterwards no entry of before may be live or
// match, at any handle (the first and the last handle, the last address of the tables' reset pass,
// included), and every handle can be added again.
TEST(TmEngine, ResetMidRunLeavesNoLiveEntry) {
  H h(kN, kSrq);
  const unsigned hs[] = {0u, 1u, kN / 2, kN - 2, kN - 1};
  for (unsigned i : hs) EXPECT_TRUE(run(h, add(3, i, 0x100 + i)).ok);
  EXPECT_TRUE(run(h, add(3, 5, 0x77, 0)).ok);  // a wildcard (CAM) entry too
  h.reset();
  for (unsigned i : hs) EXPECT_FALSE(run(h, lk(3, 0x100 + i, false)).hit) << "tag of handle " << i;
  for (unsigned i : hs) EXPECT_TRUE(run(h, add(3, i, 0x200 + i)).ok) << "handle " << i;
  for (unsigned i : hs) EXPECT_EQ(run(h, lk(3, 0x200 + i)).handle, i);
  CHECK_H(h);
}

TEST(TmEngine, WildcardVersusExactOrder) {
  H h(kN, kSrq);
  run(h, add(0, 0, 9)), run(h, add(0, 1, 0x1234, 0)), run(h, add(0, 2, 9)), run(h, add(0, 3, 0x19, 0x0f));
  EXPECT_EQ(run(h, lk(0, 9)).handle, 0u);
  EXPECT_EQ(run(h, lk(0, 9)).handle, 1u);  // the older wildcard before the younger exact entry
  EXPECT_EQ(run(h, lk(0, 9)).handle, 2u);
  EXPECT_EQ(run(h, lk(0, 0x29)).handle, 3u);  // partial mask: low nibble 9
  EXPECT_FALSE(run(h, lk(0, 9, false)).hit);
  EXPECT_EQ(h.model().hw(0), 0u);  // commit_miss = 0: not counted
  run(h, add(0, 4, 0, 0));
  EXPECT_EQ(run(h, lk(0, ~0ull)).handle, 4u);
  CHECK_H(h);
}

TEST(TmEngine, DisabledEntryNotMatchedUntilSync) {
  H h(kN, kSrq);
  EXPECT_TRUE(run(h, add(2, 7, 1)).ok);  // enabled: 0 == 0
  Rsp r = run(h, lk(2, 99));             // unexpected: hw 1
  EXPECT_TRUE(r.unexp);
  r = run(h, add(2, 8, 1));  // added out of phase: disabled
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.hw_cnt, 1u);
  EXPECT_EQ(h.model().disabled(2), 1u);
  EXPECT_EQ(run(h, lk(2, 1)).handle, 7u);  // enabled before the unexpected message: still matches
  r = run(h, lk(2, 1, false));            // 8 is disabled: no match, not counted
  EXPECT_FALSE(r.hit);
  EXPECT_FALSE(r.unexp);
  EXPECT_TRUE(run(h, sync(2, 0)).ok);  // wrong count: stays disabled
  EXPECT_FALSE(run(h, lk(2, 1, false)).hit);
  EXPECT_TRUE(run(h, sync(2, 1)).ok);  // in phase: enabled
  EXPECT_EQ(h.model().disabled(2), 0u);
  EXPECT_EQ(run(h, lk(2, 1)).handle, 8u);
  // ADD carrying the right count enables itself and the older disabled ones.
  run(h, lk(2, 50));  // hw 2
  run(h, add(2, 20, 3));
  EXPECT_EQ(h.model().disabled(2), 1u);
  Req a = add(2, 21, 3);
  a.cnt_vld = true, a.cnt = 2;
  run(h, a);
  EXPECT_EQ(h.model().disabled(2), 0u);
  EXPECT_EQ(run(h, lk(2, 3)).handle, 20u);
  EXPECT_EQ(run(h, lk(2, 3)).handle, 21u);
  CHECK_H(h);
}

TEST(TmEngine, DelFailsAfterConsumeAndWrongSrq) {
  H h(kN, kSrq);
  run(h, add(3, 5, 0x33));
  // Lookup then DEL back to back: the lookup consumes 5, the DEL must fail.
  h.lk_slot = lk(3, 0x33);
  h.step();
  h.op_slot = del(3, 5);
  h.drain();
  CHECK_H(h);
  EXPECT_FALSE(h.last_rsp().ok);
  // DEL then lookup: the DEL wins, the lookup misses.
  run(h, add(3, 5, 0x33));
  h.op_slot = del(3, 5);
  h.step();
  h.lk_slot = lk(3, 0x33, false);
  h.drain();
  CHECK_H(h);
  EXPECT_FALSE(h.last_rsp().hit);
  run(h, add(3, 6, 1));
  EXPECT_FALSE(run(h, del(4, 6)).ok);  // other SRQ
  EXPECT_FALSE(run(h, add(4, 6, 1)).ok);  // handle live (in another SRQ)
  EXPECT_TRUE(run(h, del(3, 6)).ok);
  EXPECT_FALSE(run(h, del(3, 6)).ok);
  // Both presented in one cycle: one accepted per cycle, the engine alternates.
  run(h, add(3, 9, 0x99));
  h.lk_slot = lk(3, 0x99);
  h.op_slot = del(3, 9);
  h.drain();
  CHECK_H(h);
  EXPECT_EQ(h.model().occ(3), 0u);
  CHECK_H(h);
}

TEST(TmEngine, ClearDropsOneSrqOnly) {
  H h(kN, kSrq);
  for (unsigned i = 0; i < kN / 2; ++i) run(h, add(i % 2, i, i % 3));
  run(h, lk(0, 77)), run(h, lk(0, 78)), run(h, lk(1, 79));
  Rsp r = run(h, clear(0));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.hw_cnt, 0u);
  EXPECT_EQ(h.model().occ(0), 0u);
  EXPECT_EQ(h.model().occ(1), kN / 4);
  EXPECT_EQ(h.model().hw(1), 1u);
  EXPECT_FALSE(run(h, lk(0, 0)).hit);
  EXPECT_EQ(run(h, lk(1, 1)).handle, 1u);
  EXPECT_TRUE(run(h, add(0, 0, 0)).ok);  // handles of the cleared SRQ are free again
  CHECK_H(h);
}

TEST(TmEngine, FullListDuplicateTagsBackToBack) {
  H h(kN, kSrq);
  for (unsigned i = 0; i < kN; ++i) {
    const unsigned hd = (i * 37 + 5) % kN;  // handles in scrambled order
    EXPECT_TRUE(run(h, add(0, hd, 42, i % 3 == 0 ? 0 : ~0ull)).ok);
  }
  EXPECT_EQ(h.model().size(), kN);
  // One lookup per cycle, all hitting the same tag: consumed in post order.
  uint64_t acc = 0, start = h.cycles();
  unsigned sent = 0;
  while (sent < kN || h.in_flight()) {
    if (!h.lk_slot && sent < kN) h.lk_slot = lk(0, 42), ++sent;
    acc += h.step();
    ASSERT_EQ(h.errors(), 0u) << h.what();
  }
  const uint64_t cyc = h.cycles() - start;
  std::printf("[tm] %u back-to-back hitting lookups on a full list: %llu cycles\n", kN, (unsigned long long)cyc);
  if (kClass >= 2) {  // both masks have a class: every lookup decided by the class tables
    EXPECT_LE(cyc, uint64_t(kN) + 8) << "not one lookup per cycle";
    for (auto l : h.lk_latencies()) EXPECT_LE(l, 8u);
  }
  EXPECT_EQ(h.model().size(), 0u);
  CHECK_H(h);
}

TEST(TmEngine, BlockedAfter32KUnexpected) {
  H h(kN, kSrq);
  run(h, add(5, 1, 1));
  for (unsigned i = 0; i < 0x8000; ++i) {
    h.lk_slot = lk(5, 2);
    while (h.lk_slot) h.step();
    ASSERT_EQ(h.errors(), 0u) << h.what();
  }
  h.drain();
  EXPECT_EQ(h.model().hw(5), 0x8000u);
  Rsp r = run(h, lk(5, 1));
  EXPECT_TRUE(r.blocked);
  EXPECT_FALSE(r.hit);
  run(h, sync(5, 1));
  EXPECT_EQ(run(h, lk(5, 1)).handle, 1u);
  CHECK_H(h);
}

TEST(TmEngine, CounterWrapAround) {
  H h(kN, kSrq);
  unsigned wraps = 0;
  h.on_accept = [&](const Req&, const Rsp& r) { wraps += r.hw_wrapped; };
  for (unsigned i = 0; i < 70000; ++i) {
    if (i % 4096 == 4095) {
      h.op_slot = sync(6, h.model().hw(6));  // keep the gap small, as UCX does
      while (h.op_slot) h.step();
    }
    h.lk_slot = lk(6, i);
    while (h.lk_slot) h.step();
    ASSERT_EQ(h.errors(), 0u) << h.what();
  }
  h.drain();
  EXPECT_EQ(wraps, 1u);
  EXPECT_EQ(h.model().hw(6), uint16_t(70000));
  // Out of phase across the wrap: sw 0xfffe, hw 70000 mod 2^16: ADD disabled until SYNC.
  Req a = add(6, 3, 8);
  a.cnt_vld = true, a.cnt = 0xfffe;
  run(h, a);
  EXPECT_EQ(h.model().disabled(6), 1u);
  run(h, sync(6, uint16_t(70000)));
  EXPECT_EQ(run(h, lk(6, 8)).handle, 3u);
  CHECK_H(h);
}

// ------------------------------------------------------------------ constrained random

struct Mix {
  const char* name;
  double p_op, p_lk;                    // per cycle: a free slot gets a request
  double w_add, w_del, w_sync, w_clear;  // op kinds
  double p_commit, p_cnt_vld, p_cnt_right, p_cnt_ahead;
  unsigned srqs, tag_space;
  double p_wild, p_partial, p_dup_handle, p_del_race;
  double fill;  // target fraction of the list
};

class RandomRun {
 public:
  RandomRun(uint64_t seed, const Mix& m, Coverage& cov) : h_(kN, kSrq), rng_(seed), m_(m), cov_(cov) {
    h_.on_accept = [this](const Req& r, const Rsp& o) { note(r, o); };
  }

  void run(uint64_t cycles) {
    // "fill-up" starts from an almost full list (random SRQs, tags and masks), ops back to back.
    if (std::string(m_.name) == "fill-up") {
      for (unsigned i = 0; i < 4 * kN && h_.model().size() + 4 < kFill && !h_.errors(); ++i) {
        Req a = gen_op();
        a.code = kAdd, a.cnt_vld = false;
        if (h_.model().live(a.handle)) continue;
        h_.op_slot = a;
        while (h_.op_slot) h_.step();
      }
    }
    for (uint64_t c = 0; c < cycles && !h_.errors(); ++c) {
      if (!h_.op_slot && chance(rng_, m_.p_op)) h_.op_slot = gen_op();
      if (!h_.lk_slot && chance(rng_, m_.p_lk)) h_.lk_slot = gen_lk();
      const bool both = h_.op_slot && h_.lk_slot;
      const unsigned a = h_.step();
      if (both) cov_.hit("op_and_lookup_same_cycle");
      if (h_.last_stall()) cov_.hit("valid_while_not_ready");
      if (h_.last_acc_lk() && prev_acc_lk_) cov_.hit("lookups_back_to_back");
      prev_acc_lk_ = h_.last_acc_lk();
      accepts_ += a;
      if (h_.model().size() == kN) cov_.hit("list_full (info)");
      if (h_.model().size() >= kFill - 4) cov_.hit("list_nearly_full");
      cov_.max("max_occupancy (info)", h_.model().size());
      const unsigned cam = h_.top().cam_used_o, spill = h_.top().spilled_o;
      if (cam) cov_.hit("entries_in_cam");
      if (cam == kCam) cov_.hit("cam_full");
      if (spill) cov_.hit("entries_spilled");
      cov_.max("max_cam_used (info)", cam);
      cov_.max("max_spilled (info)", spill);
    }
    h_.drain();
    ASSERT_EQ(h_.errors(), 0u) << h_.what();
    for (auto l : h_.lk_latencies()) {
      // The pipeline holds up to 5 requests, each of which may scan a spill list of at most N entries.
      ASSERT_LE(l, 5 * (kN + 3) + 8);
      if (l > 8) cov_.hit("lookup_scanned_spill_list");
      cov_.max("max_lookup_latency (info)", l);
    }
  }
  uint64_t cycles() const { return h_.cycles(); }
  uint64_t accepts() const { return accepts_; }

 private:
  unsigned pick_srq() { return unsigned(urand(rng_, 0, m_.srqs - 1)); }
  uint64_t pick_tag() {
    if (chance(rng_, 0.05)) return rng_();
    return (urand(rng_, 0, 3) << 40) | urand(rng_, 0, m_.tag_space - 1);
  }
  const Model::Entry* random_entry(unsigned srq) {
    std::vector<const Model::Entry*> v;
    for (auto& e : h_.model().entries())
      if (e.srq == srq) v.push_back(&e);
    if (v.empty()) return nullptr;
    return v[urand(rng_, 0, v.size() - 1)];
  }
  uint16_t pick_cnt(unsigned srq) {
    const uint16_t hw = h_.model().hw(srq);
    if (chance(rng_, m_.p_cnt_right)) return hw;
    if (chance(rng_, m_.p_cnt_ahead)) return uint16_t(hw + urand(rng_, 1, 3));  // sw ahead: blocked
    return uint16_t(hw - urand(rng_, 1, 3));
  }

  Req gen_op() {
    Req r;
    // Small sequence numbers: the oldest entry is deleted before the live ones span the window.
    if (h_.model().adds() - h_.model().oldest_seq() >= kSeqWindow) {
      const Model::Entry* o = &h_.model().entries().front();
      for (auto& e : h_.model().entries()) o = e.seq < o->seq ? &e : o;
      cov_.hit(kSeq < 20 ? "seq_window_kept" : "seq_window_kept (info)");
      return del(o->srq, o->handle);
    }
    r.srq = pick_srq();
    const double tot = m_.w_add + m_.w_del + m_.w_sync + m_.w_clear;
    double x = std::uniform_real_distribution<double>(0, tot)(rng_);
    if (h_.model().size() >= m_.fill * kFill && x < m_.w_add) x = m_.w_add + x * m_.w_del / m_.w_add;  // drain
    if (x < m_.w_add) {
      r.code = kAdd;
      r.handle = unsigned(urand(rng_, 0, kN - 1));
      if (!chance(rng_, m_.p_dup_handle))
        for (unsigned k = 0; k < kN && h_.model().live(r.handle); ++k) r.handle = (r.handle + 1) % kN;
      r.tag = pick_tag();
      r.mask = chance(rng_, m_.p_wild) ? 0 : chance(rng_, m_.p_partial) ? (rng_() | 0xffull << 40) & ~0xfull : ~0ull;
    } else if (x < m_.w_add + m_.w_del) {
      r.code = kDel;
      const Model::Entry* e = random_entry(r.srq);
      r.handle = e && !chance(rng_, 0.15) ? e->handle : unsigned(urand(rng_, 0, kN - 1));
    } else if (x < m_.w_add + m_.w_del + m_.w_sync) {
      r.code = kSync;
    } else if (kN <= 1024 || chance(rng_, 1024.0 / kN)) {
      r.code = kClear;
    } else {
      // Large engines: a CLEAR may wait a whole scrub pass (N cycles) for its generation, so fewer
      // of them keep the run within its cycle budget.
      r.code = kSync;
    }
    if (chance(rng_, m_.p_cnt_vld) || r.code == kSync) {
      r.cnt_vld = chance(rng_, 0.9) || r.code != kSync;
      r.cnt = pick_cnt(r.srq);
    }
    return r;
  }

  Req gen_lk() {
    Req r;
    r.lk = true;
    r.srq = pick_srq();
    r.commit_miss = chance(rng_, m_.p_commit);
    const Model::Entry* e = chance(rng_, 0.75) ? random_entry(r.srq) : nullptr;
    if (e) {
      r.tag = (e->tag & e->mask) | (rng_() & ~e->mask);
      // Delete-versus-consume race: the same entry's DEL presented right behind the lookup.
      if (!h_.op_slot && chance(rng_, m_.p_del_race)) {
        Req d;
        d.code = kDel, d.srq = r.srq, d.handle = e->handle;
        h_.op_slot = d;
        race_handle_ = e->handle;
      }
    } else {
      r.tag = pick_tag();
    }
    return r;
  }

  void note(const Req& r, const Rsp& o) {
    ++seq_;
    if (r.lk) {
      if (o.blocked) cov_.hit("lookup_blocked");
      else if (o.hit) {
        cov_.hit("lookup_hit");
        if (o.n_match > 1) cov_.hit("hit_oldest_of_several");
        if (o.wildcard_hit) cov_.hit("hit_wildcard_mask");
        if (o.partial_hit) cov_.hit("hit_partial_mask");
        if (o.exact_hit) cov_.hit("hit_exact_mask");
        if (o.disabled_match) cov_.hit("hit_skipping_disabled");
        if (r.tag == last_hit_tag_ && r.srq == last_hit_srq_ && seq_ == last_hit_seq_ + 1)
          cov_.hit("consecutive_hits_same_tag");
        last_hit_tag_ = r.tag, last_hit_srq_ = r.srq, last_hit_seq_ = seq_;
        consumed_[o.handle] = seq_;
      } else {
        cov_.hit(o.unexp ? "lookup_miss_unexpected" : "lookup_miss_not_counted");
        if (o.disabled_match) cov_.hit("miss_only_disabled_matched");
      }
      if (o.hw_wrapped) cov_.hit("hw_cnt_wrap (info)");
      return;
    }
    switch (r.code) {
      case kAdd:
        cov_.hit(o.ok ? "add_ok" : "add_handle_live");
        if (o.ok && h_.model().disabled(r.srq) && !h_.model().entries().back().enabled) cov_.hit("add_disabled");
        break;
      case kDel: {
        cov_.hit(o.ok ? "del_ok" : "del_absent");
        auto it = consumed_.find(r.handle);
        if (!o.ok && it != consumed_.end() && seq_ - it->second <= 2) cov_.hit("del_after_consume_race");
        break;
      }
      case kSync:
        cov_.hit(r.cnt_vld ? "sync" : "sync_without_count");
        break;
      default:
        cov_.hit(o.cleared ? "clear_nonempty" : "clear_empty (info)");
    }
    if (o.enabled_some) cov_.hit("sync_enables_disabled");
    if (r.cnt_vld && r.cnt != h_.model().hw(r.srq) && r.code != kClear) cov_.hit("op_out_of_phase");
  }

  H h_;
  std::mt19937_64 rng_;
  Mix m_;
  Coverage& cov_;
  uint64_t accepts_ = 0, seq_ = 0, last_hit_seq_ = 0;
  uint64_t last_hit_tag_ = ~0ull;
  unsigned last_hit_srq_ = 0, race_handle_ = 0;
  bool prev_acc_lk_ = false;
  std::map<unsigned, uint64_t> consumed_;
};

const Mix kMixes[] = {
    // name        p_op p_lk  add  del sync clr  commit vld right ahead srq tags wild part dup race fill
    {"balanced", 0.5, 0.5, 5, 3, 1, 0.05, 0.5, 0.2, 0.7, 0.1, 3, 8, 0.15, 0.15, 0.05, 0.1, 1.0},
    {"lookup-heavy", 0.3, 1.0, 6, 1, 1, 0.02, 0.3, 0.3, 0.8, 0.05, 2, 4, 0.2, 0.2, 0.02, 0.2, 1.0},
    {"fill-up", 0.9, 0.2, 10, 1, 1, 0.01, 0.1, 0.1, 0.9, 0.02, 4, 16, 0.1, 0.2, 0.1, 0.1, 1.0},
    {"phase-churn", 0.6, 0.8, 4, 2, 3, 0.05, 0.9, 0.5, 0.5, 0.1, kSrq, 6, 0.3, 0.1, 0.05, 0.1, 0.5},
};

TEST(TmEngine, ConstrainedRandom) {
  std::vector<std::string> points = {
                "op_and_lookup_same_cycle", "valid_while_not_ready", "lookups_back_to_back", "list_nearly_full",
                "entries_in_cam", "cam_full", "entries_spilled", "lookup_scanned_spill_list",
                "lookup_blocked", "lookup_hit", "hit_oldest_of_several", "hit_wildcard_mask", "hit_partial_mask",
                "hit_exact_mask", "hit_skipping_disabled", "consecutive_hits_same_tag", "lookup_miss_unexpected",
                "lookup_miss_not_counted", "miss_only_disabled_matched", "add_ok", "add_handle_live", "add_disabled",
                "del_ok", "del_absent", "del_after_consume_race", "sync", "sync_without_count", "clear_nonempty",
                "sync_enables_disabled", "op_out_of_phase"};
  if (kSeq < 20) points.push_back("seq_window_kept");  // sequence numbers wrap many times
  Coverage cov(points);
  // Cycle budget per seed and mix: ~60 s of ctest for all variants on this machine.
  const uint64_t budget = kN >= 4096 ? 12000 : kN >= 1024 ? 25000 : 60000;
  uint64_t cyc = 0, acc = 0;
  tmnic::tb::Stopwatch sw;
  for (uint64_t seed : tmnic::tb::seeds({1, 2, 3})) {
    for (const Mix& m : kMixes) {
      SCOPED_TRACE(std::string("seed ") + std::to_string(seed) + " mix " + m.name);
      RandomRun r(seed * 1000 + (&m - kMixes), m, cov);
      r.run(budget);
      if (HasFatalFailure()) return;
      cyc += r.cycles();
      acc += r.accepts();
    }
  }
  tmnic::tb::report_speed("tm_engine", "rand", cyc, sw.seconds());
  std::printf("[tm] N=%u classes=%u ways=%u buckets=%u cam=%u seq=%u: %llu requests in %llu cycles (model included)\n",
              kN, kClass, kWays, kBuckets, kCam, kSeq, (unsigned long long)acc, (unsigned long long)cyc);
  cov.report("tm_engine");
}

TEST(TmEngine, IdleSpeed) {
  H h(kN, kSrq);
  for (unsigned i = 0; i < kN; ++i) run(h, add(0, i, i));
  tmnic::tb::Stopwatch sw;
  h.idle(200000);
  tmnic::tb::report_speed("tm_engine", "idle", 200000, sw.seconds());
  CHECK_H(h);
}

}  // namespace
