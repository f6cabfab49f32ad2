// SequenceState::fault_in_spread_views: the views a first position touches all over are
// faulted in (resident, by mincore), the others are not, nothing written is changed, and a stop
// asked for before it starts does nothing.
#include "engine/sequence_state.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace anchorage::engine {
namespace {

constexpr int64_t kCapacity = 32768;

// "k" [64][capacity] f32: position 0 has a row every 128 KiB of its 8 MiB (spread); "v"
// [2][capacity][64] f32: two runs 8 MiB apart (not spread); one small section.
core::StateLayout layout() {
  core::StateLayout l;
  l.sections.push_back({"s", core::DType::kF32, {16, 16}, -1});
  l.views.push_back({"k", core::DType::kF32, {64, kCapacity}, 1});
  l.views.push_back({"v", core::DType::kF32, {2, kCapacity, 64}, 1});
  return l;
}

// The share of a buffer's 4 KiB pages resident now.
double resident_share(const void* p, size_t bytes) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  EXPECT_EQ(0, mincore(const_cast<void*>(p), bytes, in.data()));
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return double(n) / double(in.size());
}

TEST(SequenceState, FaultInSpreadViewsFaultsInOnlyThoseAndWritesNothing) {
  SequenceState s(layout(), kCapacity);
  const size_t k_bytes = 64 * kCapacity * 4, v_bytes = 2 * kCapacity * 64 * 4;
  ASSERT_LT(resident_share(s.view(0), k_bytes), 0.5);
  // Position 5 of row 3 written before: it must survive.
  float* k = static_cast<float*>(s.view(0));
  k[3 * kCapacity + 5] = 1.5f;
  EXPECT_EQ(s.fault_in_spread_views(std::stop_token()), int64_t(k_bytes));
  EXPECT_EQ(resident_share(s.view(0), k_bytes), 1.0);
  EXPECT_LT(resident_share(s.view(1), v_bytes), 0.5);
  for (int64_t i = 0; i < 64 * kCapacity; ++i) {
    ASSERT_EQ(k[i], i == 3 * kCapacity + 5 ? 1.5f : 0.0f) << i;
  }
}

TEST(SequenceState, FaultInSpreadViewsStopsWhenAsked) {
  SequenceState s(layout(), kCapacity);
  std::stop_source stop;
  stop.request_stop();
  EXPECT_EQ(s.fault_in_spread_views(stop.get_token()), 0);
}

}  // namespace
}  // namespace anchorage::engine
