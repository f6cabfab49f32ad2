// ModelRunner: a test's minimal driver of an Architecture — it owns one sequence's state
// buffers (zeroed, from state_layout) and a workspace, and runs forward calls on them. The
// engine does the same for real; model tests use this to stay below the engine layer.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/check.h"
#include "core/rng.h"
#include "model/architecture.h"

namespace anchorage::test {

class ModelRunner {
 public:
  ModelRunner(const model::Architecture& m, int64_t capacity, int64_t max_tokens)
      : m_(m), layout_(m.state_layout(capacity)), ws_(size_t(m.workspace_bytes(max_tokens))) {
    max_tokens_ = max_tokens;
    state_.capacity = capacity;
    for (const auto& s : layout_.sections) {
      bufs_.emplace_back(size_t(s.bytes()));
      state_.sections.push_back(bufs_.back().data());
    }
    for (const auto& v : layout_.views) {
      bufs_.emplace_back(size_t(v.bytes()));
      state_.views.push_back(bufs_.back().data());
    }
  }

  // Runs tokens [pos0, pos0 + n) and returns the logits of rows [logits_from, n).
  std::vector<float> run(const int32_t* tokens, int64_t n, int64_t pos0, int64_t logits_from,
                         core::ThreadPool* pool, model::OpProfile* profile = nullptr) {
    ANCHORAGE_CHECK(n <= max_tokens_);
    std::vector<float> logits(size_t((n - logits_from) * m_.vocab_size()));
    model::ForwardRequest req;
    req.tokens = tokens;
    req.n_tokens = n;
    req.pos0 = pos0;
    req.logits_from = logits_from;
    req.logits = logits.data();
    req.profile = profile;
    m_.forward(req, state_, ws_.data(), pool);
    return logits;
  }

  const core::StateLayout& layout() const { return layout_; }
  const model::StateBuffers& state() const { return state_; }
  void* workspace() { return ws_.data(); }
  // A section's bytes, or a view's packed rows [0, rows).
  std::vector<uint8_t> section(size_t i) const {
    const auto* p = static_cast<const uint8_t*>(state_.sections[i]);
    return std::vector<uint8_t>(p, p + layout_.sections[i].bytes());
  }
  std::vector<uint8_t> view_rows(size_t i, int64_t rows) const {
    std::vector<uint8_t> out(size_t(rows * layout_.views[i].bytes_per_token()));
    core::copy_rows_out(layout_.views[i], state_.views[i], 0, rows, out.data());
    return out;
  }

 private:
  const model::Architecture& m_;
  core::StateLayout layout_;
  std::vector<core::AlignedBuffer> bufs_;
  model::StateBuffers state_;
  core::AlignedBuffer ws_;
  int64_t max_tokens_ = 0;
};

inline std::vector<int32_t> seeded_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (auto& x : t) x = int32_t(rng.next_u64() % uint64_t(vocab));
  return t;
}

inline bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace anchorage::test
