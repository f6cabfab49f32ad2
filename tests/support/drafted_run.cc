#include "support/drafted_run.h"

namespace anchorage::test {

DraftedRun run_drafted(const ModelVariant& v, const engine::EngineOptions& eo,
                       const std::vector<int32_t>& prompt, engine::GenerationOptions o,
                       engine::Drafter* drafter, int64_t draft_max, int64_t stop_after) {
  auto e = make_engine(v, eo);
  DraftedRun r;
  o.drafter = drafter;
  o.draft_max = draft_max;
  o.on_token = [&](int32_t) {
    const std::span<const float> l = e->logits();
    r.logits.emplace_back(l.begin(), l.end());
    return int64_t(r.logits.size()) != stop_after;
  };
  auto g = engine::generate(*e, prompt, o);
  EXPECT_TRUE(g.has_value());
  if (g.has_value()) r.result = std::move(g.value());
  r.state = take_snapshot(*e);
  return r;
}

void expect_same_run(const DraftedRun& plain, const DraftedRun& drafted) {
  EXPECT_EQ(plain.result.tokens, drafted.result.tokens);
  EXPECT_EQ(plain.result.finish, drafted.result.finish);
  EXPECT_EQ(plain.result.decode_steps, drafted.result.decode_steps);
  ASSERT_EQ(plain.logits.size(), drafted.logits.size());
  for (size_t i = 0; i < plain.logits.size(); ++i)
    EXPECT_TRUE(same_bits(plain.logits[i], drafted.logits[i])) << "token " << i;
  EXPECT_TRUE(same_state(plain.state, drafted.state));
}

}  // namespace anchorage::test
