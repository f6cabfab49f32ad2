// Invariant: the same model, tokens and options give the same bits across two engines, two
// runs of one engine (after reset), 1 vs 2 threads and every kernel ISA the CPU runs.
#include <gtest/gtest.h>

#include <vector>

#include "core/isa.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

class Determinism : public ::testing::TestWithParam<ModelVariant> {};

StateSnapshot run(engine::Engine& e, const std::vector<int32_t>& tokens,
                  std::vector<float>* all_logits) {
  e.reset();
  engine::PrefillOptions po;
  po.all_logits = all_logits;
  EXPECT_TRUE(e.prefill(tokens, po).is_ok());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(e.decode(tokens[size_t(i)]).is_ok());
  return take_snapshot(e);
}

TEST_P(Determinism, TwoEnginesTwoRunsAndThreadCounts) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  auto tokens = random_tokens(v.n_tokens / 2, arch->vocab_size(), 31);
  engine::EngineOptions o{.capacity = v.n_tokens, .prefill_chunk = 256, .anchor_spacing = 256};
  o.n_threads = 1;
  auto one = make_engine(v, o);
  o.n_threads = 2;
  auto two = make_engine(v, o);
  auto two_again = make_engine(v, o);

  std::vector<float> rows_one, rows_two, rows_again, rows_rerun;
  StateSnapshot s_one = run(*one, tokens, &rows_one);
  StateSnapshot s_two = run(*two, tokens, &rows_two);
  StateSnapshot s_again = run(*two_again, tokens, &rows_again);
  StateSnapshot s_rerun = run(*two, tokens, &rows_rerun);
  EXPECT_TRUE(same_state(s_one, s_two)) << "1 vs 2 threads";
  EXPECT_TRUE(same_bits(rows_one, rows_two)) << "1 vs 2 threads";
  EXPECT_TRUE(same_state(s_two, s_again)) << "two engines";
  EXPECT_TRUE(same_bits(rows_two, rows_again)) << "two engines";
  EXPECT_TRUE(same_state(s_two, s_rerun)) << "second run after reset";
  EXPECT_TRUE(same_bits(rows_two, rows_rerun)) << "second run after reset";
}

// Every kernel ISA this CPU runs (scalar, AVX2, AVX-512) gives the same bits: the kernels
// share one reduction order (docs/architecture.md §4). A state written under one ISA can be
// resumed under another.
TEST_P(Determinism, KernelIsaDoesNotChangeABit) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  auto tokens = random_tokens(300, arch->vocab_size(), 32);
  const core::Isa saved = core::active_isa();
  std::vector<StateSnapshot> states;
  std::vector<std::vector<float>> rows;
  std::vector<core::Isa> isas;
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2, core::Isa::kAvx512}) {
    if (int(isa) > int(core::detected_isa())) continue;
    core::set_active_isa(isa);
    auto e = make_engine(v, {.capacity = 512, .prefill_chunk = 128, .anchor_spacing = 128});
    rows.emplace_back();
    states.push_back(run(*e, tokens, &rows.back()));
    isas.push_back(isa);
  }
  core::set_active_isa(saved);
  for (size_t i = 1; i < states.size(); ++i) {
    EXPECT_TRUE(same_state(states[0], states[i])) << core::isa_name(isas[i]);
    EXPECT_TRUE(same_bits(rows[0], rows[i])) << core::isa_name(isas[i]);
  }
}

// Different tokens must change the bits (else the comparisons above prove nothing).
TEST_P(Determinism, ADifferentSequenceGivesDifferentBits) {
  const ModelVariant& v = GetParam();
  auto arch = v.make();
  auto e = make_engine(v, {.capacity = 512, .prefill_chunk = 256, .anchor_spacing = 256});
  StateSnapshot a = run(*e, random_tokens(200, arch->vocab_size(), 1), nullptr);
  StateSnapshot b = run(*e, random_tokens(200, arch->vocab_size(), 2), nullptr);
  EXPECT_FALSE(same_state(a, b));
}

INSTANTIATE_TEST_SUITE_P(Models, Determinism, ::testing::ValuesIn(invariant_variants()),
                         variant_name);

}  // namespace
}  // namespace anchorage::test
