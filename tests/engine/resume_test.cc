// Invariant: the caches' restore path is exact. Copy the sections and view rows [0, p) out
// (copy_rows_out), reset, scribble over the live buffers, write them back (copy_rows_in),
// resume_at(p), prefill the rest: the result equals a cold prefill of the whole sequence, for
// p on, below and between anchor lines (spacing 64 and the default 1,024). The toy is exact
// on its 16-grid only, so its p are rounded down to multiples of 16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

class Resume : public ::testing::TestWithParam<ModelVariant> {};

void scribble(engine::Engine& e) {
  for (size_t i = 0; i < e.layout().sections.size(); ++i)
    std::memset(e.section_data(i), 0x5a, size_t(e.layout().sections[i].bytes()));
  for (size_t i = 0; i < e.layout().views.size(); ++i)
    std::memset(e.view_data(i), 0xa5, size_t(e.layout().views[i].bytes()));
}

void check_resume(const ModelVariant& v, int64_t spacing, std::vector<int64_t> positions) {
  auto arch = v.make();
  const int64_t g = arch->exact_granularity();
  const int64_t n = v.n_tokens;
  auto tokens = random_tokens(n, arch->vocab_size(), 21);
  const engine::EngineOptions o{
      .capacity = n + 8, .prefill_chunk = 1024, .anchor_spacing = spacing, .n_threads = 2};
  auto cold_engine = make_engine(v, o);
  ASSERT_TRUE(cold_engine->prefill(tokens).is_ok());
  const StateSnapshot cold = take_snapshot(*cold_engine);

  auto e = make_engine(v, o);
  for (int64_t p : positions) {
    p = std::max(g, p / g * g);
    ASSERT_TRUE(p > 0 && p < n);
    e->reset();
    ASSERT_TRUE(e->prefill({tokens.data(), size_t(p)}).is_ok());
    StateSnapshot at_p = take_snapshot(*e);
    e->reset();
    scribble(*e);
    restore_snapshot(*e, at_p);
    ASSERT_EQ(e->length(), p);
    ASSERT_TRUE(e->prefill({tokens.data() + p, size_t(n - p)}).is_ok());
    EXPECT_TRUE(same_state(cold, take_snapshot(*e))) << "resumed at " << p;
  }
}

TEST_P(Resume, AtBelowAndBetweenLinesOfSpacing64) {
  check_resume(GetParam(), 64, {128, 127, 100, 1024, 1023, 700, 1});
}

TEST_P(Resume, AtBelowAndBetweenLinesOfTheDefaultSpacing) {
  check_resume(GetParam(), 1024, {1024, 1023, 500});
}

// The way the resident tier works: snapshots taken in the anchor callbacks of one prefill,
// restored into another engine that continues with the rest.
TEST_P(Resume, FromAnAnchorTakenDuringThePrefill) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  const int64_t n = v.n_tokens;
  auto tokens = random_tokens(n, arch->vocab_size(), 22);
  const engine::EngineOptions o{
      .capacity = n + 8, .prefill_chunk = 256, .anchor_spacing = 192, .n_threads = 2};
  auto cold_engine = make_engine(v, o);
  std::vector<StateSnapshot> anchors;
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t p, bool end) {
    if (!end) anchors.push_back(take_snapshot(*cold_engine));
  };
  ASSERT_TRUE(cold_engine->prefill(tokens, po).is_ok());
  const StateSnapshot cold = take_snapshot(*cold_engine);
  ASSERT_GE(anchors.size(), 5u);
  auto e = make_engine(v, o);
  for (size_t i : {size_t(0), anchors.size() / 2, anchors.size() - 1}) {
    e->reset();
    scribble(*e);
    restore_snapshot(*e, anchors[i]);
    const int64_t p = anchors[i].length;
    ASSERT_TRUE(e->prefill({tokens.data() + p, size_t(n - p)}).is_ok());
    EXPECT_TRUE(same_state(cold, take_snapshot(*e))) << "resumed at " << p;
  }
}

// Packed rows do not depend on the capacity of the engine that wrote them: a snapshot taken
// from one engine resumes exactly in an engine with another capacity (strides differ for
// every view whose token axis is not the first).
TEST_P(Resume, IntoAnEngineOfAnotherCapacity) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  const int64_t g = arch->exact_granularity();
  const int64_t n = 400, p = 208 / g * g;
  auto tokens = random_tokens(n, arch->vocab_size(), 23);
  auto cold = make_engine(v, {.capacity = n, .prefill_chunk = 128, .anchor_spacing = 128});
  ASSERT_TRUE(cold->prefill(tokens).is_ok());
  auto small = make_engine(v, {.capacity = p + 1, .prefill_chunk = 128, .anchor_spacing = 128});
  ASSERT_TRUE(small->prefill({tokens.data(), size_t(p)}).is_ok());
  StateSnapshot at_p = take_snapshot(*small);
  auto big = make_engine(v, {.capacity = 3 * n, .prefill_chunk = 128, .anchor_spacing = 128});
  scribble(*big);
  restore_snapshot(*big, at_p);
  ASSERT_TRUE(big->prefill({tokens.data() + p, size_t(n - p)}).is_ok());
  EXPECT_TRUE(same_state(take_snapshot(*cold), take_snapshot(*big)));
}

INSTANTIATE_TEST_SUITE_P(Models, Resume, ::testing::ValuesIn(invariant_variants()), variant_name);

}  // namespace
}  // namespace anchorage::test
