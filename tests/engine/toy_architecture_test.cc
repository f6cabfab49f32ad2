// The toy architecture is what it claims: a layout unlike qwen35's, state that is really used
// (corrupting any section or any view row changes later logits), and an exact_granularity of
// 16 that is honest (off-grid calls differ from a cold prefill, on-grid resumes do not).
#include "support/toy_architecture.h"

#include <gtest/gtest.h>

#include <vector>

#include "engine/engine.h"
#include "support/state_snapshot.h"

namespace anchorage::test {
namespace {

constexpr int64_t kVocab = ToyArchitecture::kVocab;

std::unique_ptr<engine::Engine> toy_engine() {
  auto e = engine::Engine::create(
      make_toy_architecture(11),
      {.capacity = 512, .prefill_chunk = 1024 / 4, .anchor_spacing = 1024, .n_threads = 1});
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

TEST(ToyArchitecture, LayoutHasTwoSectionsAndThreeOddViews) {
  ToyArchitecture toy(1);
  auto l = toy.state_layout(100);
  ASSERT_EQ(l.sections.size(), 2u);
  ASSERT_EQ(l.views.size(), 3u);
  EXPECT_EQ(l.views[0].token_axis, 0);  // token axis first
  EXPECT_EQ(l.views[1].token_axis, 2);  // in the middle of four axes
  EXPECT_EQ(l.views[1].shape.size(), 4u);
  EXPECT_EQ(l.views[2].token_axis, 1);  // last
  EXPECT_EQ(l.views[2].dtype, core::DType::kBF16);
  EXPECT_EQ(l.sections[1].dtype, core::DType::kBF16);
  for (const auto& v : l.views) EXPECT_EQ(v.capacity(), 100);
  EXPECT_EQ(toy.exact_granularity(), 16);
}

TEST(ToyArchitecture, ResumeOnTheGridIsExactOffTheGridIsNot) {
  auto tokens = random_tokens(200, kVocab, 1);
  auto cold = toy_engine();
  ASSERT_TRUE(cold->prefill(tokens).is_ok());
  auto expected = take_snapshot(*cold);
  for (int64_t split : {96, 100, 112, 120}) {
    auto e = toy_engine();
    ASSERT_TRUE(e->prefill({tokens.data(), size_t(split)}).is_ok());
    ASSERT_TRUE(e->prefill({tokens.data() + split, size_t(200 - split)}).is_ok());
    if (split % 16 == 0) {
      EXPECT_TRUE(same_state(expected, take_snapshot(*e))) << split;
    } else {
      auto got = take_snapshot(*e);
      EXPECT_FALSE(same_bits(expected.logits, got.logits)) << split;
      EXPECT_FALSE(same_state(expected, got)) << split;
    }
  }
}

// Each section and each view row feeds later positions: corrupting one changes the logits.
TEST(ToyArchitecture, EverySectionAndViewIsRead) {
  auto tokens = random_tokens(160, kVocab, 2);
  auto clean = toy_engine();
  ASSERT_TRUE(clean->prefill(tokens).is_ok());
  ASSERT_TRUE(clean->prefill({tokens.data(), 16}).is_ok());
  std::vector<float> expected(clean->logits().begin(), clean->logits().end());

  auto corrupted_logits = [&](bool section, size_t index) {
    auto e = toy_engine();
    EXPECT_TRUE(e->prefill(tokens).is_ok());
    if (section) {
      static_cast<uint8_t*>(e->section_data(index))[1] ^= 0x40;
    } else {
      const auto& spec = e->layout().views[index];
      std::vector<uint8_t> row(size_t(spec.bytes_per_token()));
      core::copy_rows_out(spec, e->view_data(index), 40, 41, row.data());
      row[1] ^= 0x40;
      core::copy_rows_in(spec, row.data(), 40, 41, e->view_data(index));
    }
    EXPECT_TRUE(e->prefill({tokens.data(), 16}).is_ok());
    return std::vector<float>(e->logits().begin(), e->logits().end());
  };
  for (size_t i = 0; i < 2; ++i) EXPECT_FALSE(same_bits(expected, corrupted_logits(true, i))) << i;
  for (size_t i = 0; i < 3; ++i) EXPECT_FALSE(same_bits(expected, corrupted_logits(false, i))) << i;
}

}  // namespace
}  // namespace anchorage::test
