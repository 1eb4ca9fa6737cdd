// One failure report of a cycle-based bench: "cycle N: " and the message's pieces, as a GoogleTest
// non-fatal failure (the bench decides whether to go on).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>

namespace tmnic::tb {

template <class... A>
void fail_at(uint64_t cycle, const A&... a) {
  std::ostringstream o;
  o << "cycle " << cycle << ": ";
  (o << ... << a);
  ADD_FAILURE() << o.str();
}

}  // namespace tmnic::tb
