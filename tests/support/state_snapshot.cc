#include "support/state_snapshot.h"

#include <cstring>
#include <string>

#include "core/rng.h"

namespace anchorage::test {

StateSnapshot take_snapshot(engine::Engine& engine) {
  engine.settle();
  StateSnapshot s;
  s.length = engine.length();
  if (engine.has_logits()) s.logits.assign(engine.logits().begin(), engine.logits().end());
  const auto& layout = engine.layout();
  for (size_t i = 0; i < layout.sections.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(engine.section_data(i));
    s.sections.emplace_back(p, p + layout.sections[i].bytes());
  }
  for (size_t i = 0; i < layout.views.size(); ++i) {
    const auto& spec = layout.views[i];
    std::vector<uint8_t> rows(size_t(s.length * spec.bytes_per_token()));
    if (s.length > 0) core::copy_rows_out(spec, engine.view_data(i), 0, s.length, rows.data());
    s.views.push_back(std::move(rows));
  }
  return s;
}

void restore_snapshot(engine::Engine& engine, const StateSnapshot& s) {
  engine.settle();
  const auto& layout = engine.layout();
  for (size_t i = 0; i < layout.sections.size(); ++i)
    std::memcpy(engine.section_data(i), s.sections[i].data(), s.sections[i].size());
  for (size_t i = 0; i < layout.views.size() && s.length > 0; ++i)
    core::copy_rows_in(layout.views[i], s.views[i].data(), 0, s.length, engine.view_data(i));
  ASSERT_TRUE(engine.resume_at(s.length).is_ok());
}

namespace {

::testing::AssertionResult same_bytes(const char* what, size_t index, const std::vector<uint8_t>& a,
                                      const std::vector<uint8_t>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure()
           << what << " " << index << ": " << a.size() << " vs " << b.size() << " bytes";
  if (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0)
    return ::testing::AssertionSuccess();
  size_t at = 0;
  while (a[at] == b[at]) ++at;
  return ::testing::AssertionFailure()
         << what << " " << index << " differs first at byte " << at << " of " << a.size();
}

}  // namespace

::testing::AssertionResult same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << a.size() << " vs " << b.size() << " floats";
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], 4) != 0)
      return ::testing::AssertionFailure()
             << "float " << i << " of " << a.size() << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_state(const StateSnapshot& a, const StateSnapshot& b) {
  if (a.length != b.length)
    return ::testing::AssertionFailure() << "length " << a.length << " vs " << b.length;
  if (auto r = same_bits(a.logits, b.logits); !r) return r << " (logits)";
  if (a.sections.size() != b.sections.size() || a.views.size() != b.views.size())
    return ::testing::AssertionFailure() << "different layouts";
  for (size_t i = 0; i < a.sections.size(); ++i)
    if (auto r = same_bytes("section", i, a.sections[i], b.sections[i]); !r) return r;
  for (size_t i = 0; i < a.views.size(); ++i)
    if (auto r = same_bytes("view", i, a.views[i], b.views[i]); !r) return r;
  return ::testing::AssertionSuccess();
}

std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& v : t) v = int32_t(rng.next_u64() % uint64_t(vocab));
  return t;
}

StateSnapshot cold_snapshot(engine::Engine& engine, const std::vector<int32_t>& tokens) {
  engine.reset();
  EXPECT_TRUE(engine.prefill(tokens).is_ok());
  return take_snapshot(engine);
}

void scribble(engine::Engine& engine) {
  engine.reset();
  const core::StateLayout& layout = engine.layout();
  for (size_t i = 0; i < layout.sections.size(); ++i)
    std::memset(engine.section_data(i), 0xA5, size_t(layout.sections[i].bytes()));
  for (size_t i = 0; i < layout.views.size(); ++i)
    std::memset(engine.view_data(i), 0x5A, size_t(layout.views[i].bytes()));
}

}  // namespace anchorage::test
