#include "support/toy_architecture.h"

#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/dtype.h"
#include "core/rng.h"

namespace anchorage::test {

namespace {

constexpr int64_t D = ToyArchitecture::kDim;
constexpr int64_t kTail = 3;
// Per-row scratch: h (the row's input to the views) and rec[1] after the row.
constexpr int64_t kRowFloats = 2 * D;

float round_bf16(float x) {
  return core::bf16_to_f32(core::f32_to_bf16(x));
}
float squash(float x) {
  return x / (1.0f + std::fabs(x));
}

void fill(std::vector<float>& w, size_t n, core::Rng& rng, double scale) {
  w.resize(n);
  for (auto& v : w) v = float(rng.normal() * scale);
}

// Element offsets of one position in each view (layout in toy_architecture.h).
int64_t key_at(int64_t pos, int64_t half, int64_t i) {
  return (pos * 2 + half) * D + i;
}
int64_t val_at(int64_t cap, int64_t f, int64_t pos) {  // f = (a * 2 + b) * 4 + c
  return ((f / 4) * cap + pos) * 4 + f % 4;
}
int64_t tag_at(int64_t cap, int64_t c, int64_t pos) {
  return c * cap + pos;
}

}  // namespace

ToyArchitecture::ToyArchitecture(uint64_t seed) : seed_(seed) {
  core::Rng rng(seed);
  fill(embed_, size_t(kVocab * D), rng, 1.0);
  fill(conv_, size_t(4 * D), rng, 0.5);
  fill(proj_, size_t(D * kValWidth), rng, 0.3);
  fill(head_, size_t(kVocab * D), rng, 0.5);
}

core::StateLayout ToyArchitecture::state_layout(int64_t capacity) const {
  core::StateLayout l;
  l.sections.push_back({"toy.rec", core::DType::kF32, {2, D}, -1});
  l.sections.push_back({"toy.tail", core::DType::kBF16, {D, kTail}, -1});
  l.views.push_back({"toy.key", core::DType::kF32, {capacity, 2, D}, 0});
  l.views.push_back({"toy.val", core::DType::kF32, {3, 2, capacity, 4}, 2});
  l.views.push_back({"toy.tag", core::DType::kBF16, {4, capacity}, 1});
  return l;
}

int64_t ToyArchitecture::workspace_bytes(int64_t max_tokens) const {
  return max_tokens * kRowFloats * 4;
}

int64_t ToyArchitecture::weight_bytes() const {
  return int64_t(embed_.size() + conv_.size() + proj_.size() + head_.size()) * 4;
}

// The sequential part of one token: conv over the tail, the call-relative block mean, the
// recurrence, and the token's rows of every view.
void ToyArchitecture::run_token(int32_t token, int64_t t, int64_t pos,
                                const model::StateBuffers& state, float* group_sum,
                                float* row_out) const {
  auto* rec = static_cast<float*>(state.sections[0]);
  auto* tail = static_cast<uint16_t*>(state.sections[1]);
  auto* key = static_cast<float*>(state.views[0]);
  auto* val = static_cast<float*>(state.views[1]);
  auto* tag = static_cast<uint16_t*>(state.views[2]);
  const int64_t cap = state.capacity;
  const float* x = embed_.data() + int64_t(token) * D;

  // The block mean over this call's tokens, in groups of kGroup counted from the call start:
  // the one place the result depends on where a call starts (exact_granularity()).
  if (t % kGroup == 0) std::memset(group_sum, 0, size_t(D) * 4);
  const float inv_n = 1.0f / float(t % kGroup + 1);

  float h[D];
  for (int64_t i = 0; i < D; ++i) {
    float c = conv_[size_t(3 * D + i)] * round_bf16(x[i]);
    for (int64_t j = kTail - 1; j >= 0; --j)
      c += conv_[size_t(j * D + i)] * core::bf16_to_f32(tail[i * kTail + j]);
    for (int64_t j = 0; j + 1 < kTail; ++j) tail[i * kTail + j] = tail[i * kTail + j + 1];
    tail[i * kTail + kTail - 1] = core::f32_to_bf16(x[i]);
    group_sum[i] += x[i];
    h[i] = c + 0.5f * (group_sum[i] * inv_n);
  }
  for (int64_t i = 0; i < D; ++i) rec[i] = 0.9f * rec[i] + 0.1f * h[i];
  for (int64_t i = 0; i < D; ++i) rec[D + i] = 0.95f * rec[D + i] + 0.05f * squash(rec[i]);

  for (int64_t i = 0; i < D; ++i) {
    key[key_at(pos, 0, i)] = h[i];
    key[key_at(pos, 1, i)] = rec[i];
  }
  for (int64_t f = 0; f < kValWidth; ++f)
    val[val_at(cap, f, pos)] = h[f % D] - rec[D + (f * 5) % D];
  for (int64_t c = 0; c < 4; ++c) {
    float s = 0.0f;
    for (int64_t e = 0; e < 4; ++e) s += h[c * 4 + e];
    tag[tag_at(cap, c, pos)] = core::f32_to_bf16(s);
  }
  std::memcpy(row_out, h, size_t(D) * 4);
  std::memcpy(row_out + D, rec + D, size_t(D) * 4);
}

// The position-indexed part of one row: attention over rows [0, pos] of the three views, in
// position order, then the head. Depends only on pos and the views, not on the call.
void ToyArchitecture::read_row(int64_t pos, const float* row, const model::StateBuffers& state,
                               float* logits) const {
  const auto* key = static_cast<const float*>(state.views[0]);
  const auto* val = static_cast<const float*>(state.views[1]);
  const auto* tag = static_cast<const uint16_t*>(state.views[2]);
  const int64_t cap = state.capacity;
  const float* h = row;
  if (!logits) return;  // the read feeds only the logits

  auto score = [&](int64_t q) {
    float s = 0.0f;
    for (int64_t i = 0; i < D; ++i) s += key[key_at(q, 0, i)] * h[i];
    return 0.25f * s + 0.1f * core::bf16_to_f32(tag[tag_at(cap, q % 4, q)]);
  };
  float m = score(0);
  for (int64_t q = 1; q <= pos; ++q) m = std::fmax(m, score(q));
  float o[kValWidth] = {};
  float denom = 0.0f;
  for (int64_t q = 0; q <= pos; ++q) {
    const float w = std::exp(score(q) - m);
    denom += w;
    for (int64_t f = 0; f < kValWidth; ++f) o[f] += w * val[val_at(cap, f, q)];
  }
  float y[D];
  for (int64_t i = 0; i < D; ++i) {
    float s = 0.0f;
    for (int64_t f = 0; f < kValWidth; ++f) s += proj_[size_t(i * kValWidth + f)] * o[f];
    y[i] = h[i] + row[D + i] + s / denom + 0.1f * key[key_at(pos, 1, i)];
  }
  for (int64_t v = 0; v < kVocab; ++v) {
    float s = 0.0f;
    for (int64_t i = 0; i < D; ++i) s += head_[size_t(v * D + i)] * y[i];
    logits[v] = s;
  }
}

void ToyArchitecture::forward(const model::ForwardRequest& req, const model::StateBuffers& state,
                              void* workspace, core::ThreadPool* pool) const {
  ANCHORAGE_CHECK(req.n_tokens >= 1 && req.pos0 >= 0 && req.pos0 + req.n_tokens <= state.capacity);
  ANCHORAGE_CHECK(req.logits_from >= 0 && req.logits_from <= req.n_tokens);
  ANCHORAGE_CHECK(state.sections.size() == 2 && state.views.size() == 3);
  auto* rows = static_cast<float*>(workspace);
  float group_sum[D] = {};
  {
    model::OpTimer timer(req.profile, model::OpKind::kGdn);
    for (int64_t t = 0; t < req.n_tokens; ++t) {
      const int32_t tok = req.tokens[t];
      ANCHORAGE_CHECK(tok >= 0 && tok < kVocab);
      run_token(tok, t, req.pos0 + t, state, group_sum, rows + t * kRowFloats);
    }
  }
  model::OpTimer timer(req.profile, model::OpKind::kAttention);
  core::parallel_for(pool, req.n_tokens, [&](int64_t t) {
    float* out = t >= req.logits_from ? req.logits + (t - req.logits_from) * kVocab : nullptr;
    read_row(req.pos0 + t, rows + t * kRowFloats, state, out);
  });
}

nlohmann::json ToyArchitecture::manifest() const {
  return nlohmann::json{{"architecture", "toy"},
                        {"toy_version", kToyVersion},
                        {"seed", seed_},
                        {"exact_granularity", kGroup}};
}

std::unique_ptr<model::Architecture> make_toy_architecture(uint64_t seed) {
  return std::make_unique<ToyArchitecture>(seed);
}

}  // namespace anchorage::test
