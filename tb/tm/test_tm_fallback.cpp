// The tag-matching engine's placement and its slower exact paths, against the reference model:
// tags that collide in every way of a class (built from the hash, tm_hash.hpp) overflow into the
// wildcard CAM and then the spill list; more unusual masks than the CAM holds; a wildcard entry
// posted between two exact ones; class masks reprogrammed once a class is empty; DEL of entries
// at every kind of place; sequence numbers wrapping; and the decision rate at full occupancy
// (one lookup per cycle, latency <= 8, exact tags and with 25 % wildcards). Every response and the
// per-SRQ state are checked by the harness; placement is checked through cam_used_o / spilled_o.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "tm_test_util.hpp"

using namespace tmnic::tm;
using namespace tmnic::tm::test;

namespace {

Rsp run(H& h, const Req& r) { return h.run(r); }
bool run_ok(H& h, const Req& r) { return h.run(r).ok; }
unsigned cam_used(H& h) { return h.top().cam_used_o; }
unsigned spilled(H& h) { return h.top().spilled_o; }

// Keys {srq, tag} that fall into the same bucket in every way of class 0: base ^ combinations of
// the null-space basis.
std::vector<std::pair<unsigned, uint64_t>> colliding_keys(unsigned count, uint64_t base_tag) {
  const auto basis = colliding_basis(kGeom, 0, kWays);
  std::vector<std::pair<unsigned, uint64_t>> keys;
  for (unsigned i = 0; keys.size() < count && i < (1u << std::min<size_t>(basis.size(), 16)); ++i) {
    uint64_t tag = base_tag;
    unsigned srq = 0;
    for (unsigned b = 0; b < basis.size() && b < 16; ++b)
      if ((i >> b) & 1) tag ^= basis[b].tag, srq ^= basis[b].srq;
    if (srq >= kSrq) continue;
    keys.push_back({srq, tag});
  }
  return keys;
}

TEST(TmFallback, HashAgreesWithTheModel) {
  // The colliding keys really share their buckets in C++ (and, through the placement counts of the
  // next test, in the RTL).
  const auto keys = colliding_keys(kWays + 3, 0x0123456789abcdefull);
  ASSERT_GE(keys.size(), kWays + 3u) << "no colliding keys: the hash leaves no null space";
  for (unsigned w = 0; w < kWays; ++w)
    for (auto& k : keys)
      EXPECT_EQ(bucket(kGeom, 0, w, k.first, k.second), bucket(kGeom, 0, w, keys[0].first, keys[0].second));
}

TEST(TmFallback, CollidingTagsGoToCamThenSpill) {
  H h(kN, kSrq);
  const unsigned extra = 6;
  // As many keys of one bucket set as the hash allows (2^nullity), up to ways + CAM + 6.
  const auto keys = colliding_keys(std::min(kWays + kCam + extra, kN / 2), 0x5a5a00000000f00dull);
  const unsigned m = unsigned(keys.size());
  ASSERT_GT(m, kWays) << "fewer colliding keys than ways: nothing would overflow";
  std::printf("[tm] %u keys share their bucket in all %u ways of class 0\n", m, kWays);
  // Class 0 takes the exact mask (the first ADD reprograms it).
  for (unsigned i = 0; i < m; ++i) EXPECT_TRUE(run_ok(h, add(keys[i].first, i, keys[i].second)));
  CHECK_H(h);
  // kWays keys fill the bucket set; the CAM takes the next kCam; the rest spill.
  EXPECT_EQ(cam_used(h), std::min(kCam, m - kWays));
  EXPECT_EQ(spilled(h), m - kWays - std::min(kCam, m - kWays));
  // A second entry per key: it joins the key's FIFO (class table) or goes where the key's first did
  // not fit; lookups must still take each key's entries in posting order.
  for (unsigned i = 0; i < m; ++i) run_ok(h, add(keys[i].first, m + i, keys[i].second));
  std::vector<unsigned> order(2 * m);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  for (unsigned i : order) {
    const auto& k = keys[i % m];
    h.lk_slot = lk(k.first, k.second);
    h.drain();
    CHECK_H(h);
    EXPECT_TRUE(h.last_rsp().hit);
  }
  EXPECT_EQ(h.model().size(), 0u);
  EXPECT_EQ(cam_used(h), 0u);
  EXPECT_EQ(spilled(h), 0u);
}

TEST(TmFallback, MoreUnusualMasksThanTheCamHolds) {
  H h(kN, kSrq);
  // Every class gets a mask first (masks of the ANY_TAG / ANY_SOURCE kind).
  for (unsigned c = 0; c < kClass; ++c) run_ok(h, add(1, c, 0x100 * c, ~0ull << (8 * c)));
  const unsigned flood = std::min(kCam + 10, kN - kClass - 1);
  // Then masks no class has: the CAM, then the spill list. Two SRQs, overlapping tags.
  for (unsigned i = 0; i < flood; ++i) {
    const uint64_t mask = ~0ull ^ (0x3ull << (2 * (i % 24) + 16));
    run_ok(h, add(1 + (i & 1), kClass + i, 0x77ull | (uint64_t(i & 3) << 40), mask));
  }
  CHECK_H(h);
  EXPECT_EQ(cam_used(h), std::min(kCam, flood));
  EXPECT_EQ(spilled(h), flood - std::min(kCam, flood));
  // Lookups that match several of them: the oldest first, across CAM and spill list.
  for (unsigned i = 0; i < flood + kClass; ++i) {
    h.lk_slot = lk(1 + (i & 1), 0x77ull | (uint64_t((i >> 1) & 3) << 40) | (uint64_t(i % 7) << 20));
    h.drain();
    CHECK_H(h);
  }
  for (unsigned i = 0; i < flood; ++i) run(h, del(1 + (i & 1), kClass + i));
  CHECK_H(h);
  EXPECT_EQ(spilled(h), 0u);
}

TEST(TmFallback, WildcardBetweenTwoExactEntries) {
  H h(kN, kSrq);
  // A(exact 5), W(any tag), B(exact 5): 5 takes A, 9 takes W (only W matches), 5 takes B.
  run(h, add(3, 10, 5));
  run(h, add(3, 11, 0xdead, 0));
  run(h, add(3, 12, 5));
  EXPECT_EQ(run(h, lk(3, 9)).handle, 11u);
  EXPECT_EQ(run(h, lk(3, 5)).handle, 10u);
  EXPECT_EQ(run(h, lk(3, 5)).handle, 12u);
  EXPECT_FALSE(run(h, lk(3, 5, false)).hit);
  // Again, but the second message also matches the wildcard: it must take W, not B.
  run(h, add(3, 20, 5));
  run(h, add(3, 21, 0, 0));
  run(h, add(3, 22, 5));
  EXPECT_EQ(run(h, lk(3, 5)).handle, 20u);
  EXPECT_EQ(run(h, lk(3, 5)).handle, 21u);
  EXPECT_EQ(run(h, lk(3, 5)).handle, 22u);
  // Back to back (forwarding): the same three lookups in consecutive cycles.
  run(h, add(3, 30, 5));
  run(h, add(3, 31, 0, 0));
  run(h, add(3, 32, 5));
  for (int i = 0; i < 3; ++i) {
    h.lk_slot = lk(3, 5);
    h.step();
  }
  h.drain();
  CHECK_H(h);
  EXPECT_EQ(h.model().occ(3), 0u);
}

TEST(TmFallback, ClassReprogrammedOnceEmpty) {
  H h(kN, kSrq);
  // Fill every class with a different mask, one more mask goes to the CAM.
  for (unsigned c = 0; c <= kClass; ++c) run(h, add(0, c, 0x40 + c, ~0ull << c));
  EXPECT_EQ(cam_used(h), 1u);
  // Empty class 0 (its only entry matched), then a new mask takes it instead of the CAM.
  EXPECT_EQ(run(h, lk(0, 0x40)).handle, 0u);
  run(h, add(0, 50, 0x1234, 0xffff));
  EXPECT_EQ(cam_used(h), 1u);
  EXPECT_EQ(run(h, lk(0, 0x99991234)).handle, 50u);
  for (unsigned c = 1; c <= kClass; ++c) EXPECT_EQ(run(h, lk(0, 0x40 + c)).handle, c);
  CHECK_H(h);
}

TEST(TmFallback, DeleteFromEveryPlace) {
  H h(kN, kSrq);
  // One FIFO of five entries (class table), then unusual masks (CAM, spill).
  for (unsigned i = 0; i < 5; ++i) run(h, add(2, i, 0x99));
  const unsigned odd = std::min(kCam + 3, kN - 8);
  for (unsigned i = 0; i < odd; ++i) run(h, add(2, 5 + i, 0x99, ~0ull ^ (1ull << (i + 20)) ^ (1ull << 63)));
  EXPECT_GT(spilled(h) + cam_used(h), 0u);
  // Middle, head, tail of the FIFO; a CAM entry; the spill list's head, middle and tail.
  EXPECT_TRUE(run(h, del(2, 2)).ok);
  EXPECT_TRUE(run(h, del(2, 0)).ok);
  EXPECT_TRUE(run(h, del(2, 4)).ok);
  EXPECT_TRUE(run(h, del(2, 5)).ok);
  EXPECT_TRUE(run(h, del(2, 5 + odd - 1)).ok);
  if (odd > 3) {
    EXPECT_TRUE(run(h, del(2, 5 + odd / 2)).ok);
  }
  EXPECT_FALSE(run(h, del(2, 0)).ok);
  // What is left comes out in posting order.
  while (h.model().occ(2)) {
    h.lk_slot = lk(2, 0x99);
    h.drain();
    CHECK_H(h);
  }
  CHECK_H(h);
}

TEST(TmFallback, SequenceNumbersWrap) {
  H h(kN, kSrq);
  // Pairs of entries of one tag, consumed in order, for four times 2^SEQ_W ADDs (small SEQ_W) or a
  // few thousand (64-bit numbers do not wrap in a test).
  const uint64_t rounds = kSeq < 20 ? (4ull << kSeq) / 2 : 3000;
  for (uint64_t i = 0; i < rounds; ++i) {
    h.op_slot = add(1, unsigned(2 * i) % kN, 7);
    while (h.op_slot) h.step();
    h.op_slot = add(1, unsigned(2 * i + 1) % kN, i & 1 ? 7 : 0, i & 1 ? ~0ull : 0);
    while (h.op_slot) h.step();
    h.lk_slot = lk(1, 7);
    while (h.lk_slot) h.step();
    h.lk_slot = lk(1, 7);
    while (h.lk_slot) h.step();
    ASSERT_EQ(h.errors(), 0u) << h.what();
  }
  h.drain();
  CHECK_H(h);
  EXPECT_EQ(h.model().size(), 0u);
}

// N lookups back to back on a full list of distinct tags over all SRQs, every one a hit.
void full_occupancy_rate(double wildcard_share) {
  if (!kRoomy) GTEST_SKIP() << "this geometry's class tables hold fewer than 2 N keys (fallback test build)";
  H h(kN, kSrq);
  std::mt19937_64 rng(11);
  struct E {
    unsigned srq;
    uint64_t tag;
  };
  std::vector<E> ents;
  const uint64_t any_tag = ~0ull << 32;  // ANY_TAG of a {source, tag} layout: the source bits kept
  for (unsigned i = 0; i < kN; ++i) {
    const bool wild = std::uniform_real_distribution<double>(0, 1)(rng) < wildcard_share;
    const unsigned srq = unsigned(rng() % kSrq);
    const uint64_t tag = (rng() << 14) | i;  // distinct
    h.op_slot = add(srq, i, tag, wild ? any_tag : ~0ull);
    while (h.op_slot) h.step();
    ents.push_back({srq, tag});
  }
  h.drain();
  CHECK_H(h);
  EXPECT_EQ(h.model().size(), kN);
  EXPECT_EQ(spilled(h), 0u) << "a full list of distinct tags must fit the class tables and the CAM";
  std::shuffle(ents.begin(), ents.end(), rng);
  const uint64_t start = h.cycles();
  size_t sent = 0;
  while (sent < ents.size() || h.in_flight()) {
    if (!h.lk_slot && sent < ents.size()) h.lk_slot = lk(ents[sent].srq, ents[sent].tag), ++sent;
    h.step();
    ASSERT_EQ(h.errors(), 0u) << h.what();
  }
  const uint64_t cyc = h.cycles() - start;
  std::printf("[tm] %u lookups on a full list (%.0f %% wildcards): %llu cycles\n", kN, 100 * wildcard_share,
              (unsigned long long)cyc);
  EXPECT_LE(cyc, uint64_t(kN) + 8) << "not one decision per cycle";
  for (auto l : h.lk_latencies()) ASSERT_LE(l, 8u);
  EXPECT_EQ(h.model().size(), 0u);
}

TEST(TmFallback, FullOccupancyOneLookupPerCycle) { full_occupancy_rate(0.0); }
TEST(TmFallback, FullOccupancyOneLookupPerCycleWildcards) { full_occupancy_rate(0.25); }

}  // namespace
