// EngineOptions::defer_fault_in: the engine's background fault-in of its spread views waits for
// Engine::start_fault_in() (the server calls it once its threads and socket exist), then runs as
// an engine made without the option runs it from construction. Residency is read by mincore.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "support/toy_architecture.h"

namespace anchorage::test {
namespace {

// At this capacity the toy's "toy.val" view ([3][2][capacity][4] f32, 3 MiB) is spread: a
// position touches it in 6 runs 512 KiB apart, so SequenceState faults it in.
constexpr int64_t kCapacity = 32768;
constexpr size_t kSpreadView = 1;

std::unique_ptr<engine::Engine> toy_engine(bool defer) {
  engine::EngineOptions o;
  o.capacity = kCapacity;
  o.prefill_chunk = 256;
  o.anchor_spacing = 1024;
  o.n_threads = 1;
  o.defer_fault_in = defer;
  auto e = engine::Engine::create(make_toy_architecture(3), o);
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

double resident_share(const engine::Engine& e, size_t view) {
  const core::TensorSpec& spec = e.layout().views[view];
  const size_t bytes = size_t(spec.bytes());
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  EXPECT_EQ(0, mincore(const_cast<void*>(e.view_data(view)), bytes, in.data()));
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return double(n) / double(in.size());
}

// Waits (up to a minute: a liveness bound, not a speed test) for the view to be resident.
bool becomes_resident(const engine::Engine& e, size_t view) {
  for (int i = 0; i < 6000; ++i) {
    if (resident_share(e, view) == 1.0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

TEST(EngineFaultIn, StartsAtConstructionByDefault) {
  auto e = toy_engine(false);
  ASSERT_EQ(e->layout().views[kSpreadView].name, "toy.val");
  EXPECT_TRUE(becomes_resident(*e, kSpreadView));
}

TEST(EngineFaultIn, DeferredWaitsForStartFaultIn) {
  auto e = toy_engine(true);
  // Long enough for an engine made without the option to have faulted the 3 MiB in (it takes
  // milliseconds); a deferred one must not have touched it.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LT(resident_share(*e, kSpreadView), 0.5);
  e->start_fault_in();
  e->start_fault_in();  // a second call is a no-op
  EXPECT_TRUE(becomes_resident(*e, kSpreadView));
}

}  // namespace
}  // namespace anchorage::test
