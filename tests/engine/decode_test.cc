// Invariant: prefill then greedy decode == prefill of the whole sequence. The logits after
// each decoded token equal the matching rows of a whole-sequence prefill (all-logits option),
// and the final state equals its state. For the toy, whose decode calls start off its grid,
// the reference is the same tokens fed as one-token prefill calls (decode and prefill share
// one forward path).
#include <gtest/gtest.h>

#include <vector>

#include "engine/sampler.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

class Decode : public ::testing::TestWithParam<ModelVariant> {};

constexpr int kDecoded = 32;

TEST_P(Decode, GreedyDecodeEqualsPrefillOfTheWholeSequence) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  const int64_t vocab = arch->vocab_size();
  const int64_t g = arch->exact_granularity();
  std::vector<int32_t> seq = random_tokens(v.n_tokens - kDecoded, vocab, 41);
  const size_t prompt = seq.size();
  const engine::EngineOptions o{.capacity = v.n_tokens + 8, .n_threads = 2};

  auto e = make_engine(v, o);
  ASSERT_TRUE(e->prefill(seq).is_ok());
  std::vector<std::vector<float>> step_logits = {{e->logits().begin(), e->logits().end()}};
  for (int i = 0; i < kDecoded; ++i) {
    int32_t t = engine::Sampler::argmax(e->logits());
    seq.push_back(t);
    ASSERT_TRUE(e->decode(t).is_ok());
    step_logits.emplace_back(e->logits().begin(), e->logits().end());
  }
  StateSnapshot decoded = take_snapshot(*e);

  auto ref = make_engine(v, o);
  std::vector<float> rows;
  engine::PrefillOptions po;
  po.all_logits = &rows;
  if (g == 1) {
    ASSERT_TRUE(ref->prefill(seq, po).is_ok());
  } else {
    ASSERT_TRUE(ref->prefill({seq.data(), prompt}, po).is_ok());
    for (size_t i = prompt; i < seq.size(); ++i)
      ASSERT_TRUE(ref->prefill({&seq[i], 1}, po).is_ok());
  }
  ASSERT_EQ(rows.size(), seq.size() * size_t(vocab));
  for (int i = 0; i <= kDecoded; ++i) {
    const float* row = rows.data() + (prompt - 1 + size_t(i)) * size_t(vocab);
    EXPECT_TRUE(same_bits(step_logits[size_t(i)], {row, row + vocab})) << "step " << i;
  }
  EXPECT_TRUE(same_state(take_snapshot(*ref), decoded));
}

INSTANTIATE_TEST_SUITE_P(Models, Decode, ::testing::ValuesIn(invariant_variants()), variant_name);

}  // namespace
}  // namespace anchorage::test
