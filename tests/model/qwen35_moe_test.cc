// The MoE FFN (docs/model.md §4.3): a one-layer model against a double-precision
// reference written from the spec, the routing rules (ties to the lower expert, renormalised or
// not), batch invariance of tiny-moe (a token's logits are the same bits whether it runs alone,
// in a chunk or in a batch, on 1 or 2 threads, f32 or Q8_0 weights), and place_tensor_raw().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/isa.h"
#include "kernels/quant.h"
#include "model/qwen35/qwen35_model.h"
#include "model/qwen35_runner.h"

namespace anchorage::model::qwen35 {
namespace {

using test::ModelRunner;
using test::same_bytes;
using test::seeded_tokens;

// tiny-moe cut to one GDN layer, so the layer's output is exactly embed + FFN once the mixer's
// output projection is zero.
Qwen35Config one_moe_layer() {
  Qwen35Config c = qwen35_preset("tiny-moe").value();
  c.num_hidden_layers = 1;
  c.layer_types = {LayerKind::kLinearAttention};
  return c;
}

std::unique_ptr<Qwen35Model> build(const Qwen35Tensors& t, core::DType weights) {
  auto m = make_qwen35_from_tensors(t, {weights, core::DType::kF32}, nullptr);
  EXPECT_TRUE(m.has_value()) << m.error().to_string();
  return std::move(m.value());
}

// §4.3 in double for one token's normed input u.
std::vector<double> reference_moe(const Qwen35Tensors& t, int64_t layer, const double* u) {
  const Qwen35Config& c = t.cfg;
  const int64_t H = c.hidden_size, E = c.num_experts, k = c.num_experts_per_tok;
  const int64_t Fe = c.moe_intermediate_size, Fsh = c.shared_expert_intermediate_size;
  auto dot = [&](const float* w, const double* x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += double(w[i]) * x[i];
    return s;
  };
  auto silu = [](double x) { return x / (1.0 + std::exp(-x)); };
  // SwiGLU with gate/up rows at g, u_ ([F][H]) and down rows at d ([H][F]).
  auto swiglu_ffn = [&](const float* g, const float* up, const float* d, int64_t F) {
    std::vector<double> a(static_cast<size_t>(F)), y(static_cast<size_t>(H));
    for (int64_t f = 0; f < F; ++f)
      a[size_t(f)] = silu(dot(g + f * H, u, H)) * dot(up + f * H, u, H);
    for (int64_t h = 0; h < H; ++h) y[size_t(h)] = dot(d + h * F, a.data(), F);
    return y;
  };
  const float* router = t.at(layer, TensorRole::kMoeRouter).data();
  std::vector<double> p(static_cast<size_t>(E));
  double mx = -1e300, sum = 0;
  for (int64_t e = 0; e < E; ++e) mx = std::max(mx, p[size_t(e)] = dot(router + e * H, u, H));
  for (double& v : p) sum += (v = std::exp(v - mx));
  for (double& v : p) v /= sum;
  std::vector<int64_t> order(static_cast<size_t>(E));
  for (int64_t e = 0; e < E; ++e) order[size_t(e)] = e;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return p[size_t(a)] > p[size_t(b)]; });
  double chosen = 0;
  for (int64_t r = 0; r < k; ++r) chosen += p[size_t(order[size_t(r)])];
  std::vector<double> out(static_cast<size_t>(H), 0.0);
  for (int64_t r = 0; r < k; ++r) {
    const int64_t e = order[size_t(r)];
    const double w = c.norm_topk_prob ? p[size_t(e)] / chosen : p[size_t(e)];
    const auto y = swiglu_ffn(t.at(layer, TensorRole::kMoeGateExps).data() + e * Fe * H,
                              t.at(layer, TensorRole::kMoeUpExps).data() + e * Fe * H,
                              t.at(layer, TensorRole::kMoeDownExps).data() + e * H * Fe, Fe);
    for (int64_t h = 0; h < H; ++h) out[size_t(h)] += w * y[size_t(h)];
  }
  const auto sh = swiglu_ffn(t.at(layer, TensorRole::kMoeSharedGate).data(),
                             t.at(layer, TensorRole::kMoeSharedUp).data(),
                             t.at(layer, TensorRole::kMoeSharedDown).data(), Fsh);
  const double g =
      1.0 / (1.0 + std::exp(-dot(t.at(layer, TensorRole::kMoeSharedScale).data(), u, H)));
  for (int64_t h = 0; h < H; ++h) out[size_t(h)] += g * sh[size_t(h)];
  return out;
}

// Runs the one-layer model and compares hidden - embed with reference_moe for every token.
void expect_matches_reference(const Qwen35Tensors& t, const std::vector<int32_t>& tokens) {
  auto m = build(t, core::DType::kF32);
  const int64_t n = int64_t(tokens.size()), H = t.cfg.hidden_size;
  ModelRunner r(*m, n, n);
  std::vector<float> hidden(static_cast<size_t>(n * H));
  ForwardRequest req;
  req.tokens = tokens.data();
  req.n_tokens = n;
  req.logits_from = n;
  m->test_forward_hidden(req, r.state(), r.workspace(), nullptr, hidden.data());
  const std::vector<float>& E = t.at(-1, TensorRole::kEmbed);
  const std::vector<float>& post = t.at(0, TensorRole::kPostNorm);
  for (int64_t i = 0; i < n; ++i) {
    const float* e = E.data() + tokens[size_t(i)] * H;
    std::vector<double> u(static_cast<size_t>(H));
    double ss = 0;
    for (int64_t j = 0; j < H; ++j) ss += double(e[j]) * e[j];
    const double inv = 1.0 / std::sqrt(ss / double(H) + t.cfg.rms_norm_eps);
    for (int64_t j = 0; j < H; ++j) u[size_t(j)] = e[j] * inv * post[size_t(j)];
    const auto want = reference_moe(t, 0, u.data());
    double scale = 0;
    for (double v : want) scale = std::max(scale, std::fabs(v));
    ASSERT_GT(scale, 1e-3);
    for (int64_t j = 0; j < H; ++j) {
      const double got = double(hidden[size_t(i * H + j)]) - double(e[j]);
      EXPECT_NEAR(got, want[size_t(j)], 2e-5 * scale) << "token " << i << " dim " << j;
    }
  }
}

Qwen35Tensors one_layer_tensors(const Qwen35Config& c, uint64_t seed) {
  Qwen35Tensors t = random_tensors(c, seed, nullptr);
  auto& out = t.at(0, TensorRole::kGdnOut);
  std::fill(out.begin(), out.end(), 0.0f);  // the mixer adds exactly 0
  return t;
}

TEST(Qwen35Moe, MatchesDoubleReference) {
  const Qwen35Config c = one_moe_layer();
  expect_matches_reference(one_layer_tensors(c, 11), seeded_tokens(9, c.vocab_size, 3));
}

TEST(Qwen35Moe, MatchesDoubleReferenceWithoutRenormalising) {
  Qwen35Config c = one_moe_layer();
  c.norm_topk_prob = false;
  c.num_experts_per_tok = 3;
  expect_matches_reference(one_layer_tensors(c, 12), seeded_tokens(9, c.vocab_size, 4));
}

// A zero router gives every expert p = 1/E: the top-k are experts 0 .. k-1 (ties go to the
// lower index), each weighted 1/k. Experts k .. E-1 are made to produce NaN, so choosing any
// of them would show.
TEST(Qwen35Moe, TiesGoToTheLowerExpert) {
  const Qwen35Config c = one_moe_layer();
  Qwen35Tensors t = one_layer_tensors(c, 13);
  auto& router = t.at(0, TensorRole::kMoeRouter);
  std::fill(router.begin(), router.end(), 0.0f);
  const int64_t H = c.hidden_size, Fe = c.moe_intermediate_size, k = c.num_experts_per_tok;
  auto& down = t.at(0, TensorRole::kMoeDownExps);
  std::fill(down.begin() + k * H * Fe, down.end(), NAN);
  const auto tokens = seeded_tokens(5, c.vocab_size, 5);
  auto m = build(t, core::DType::kF32);
  ModelRunner r(*m, 5, 5);
  const auto logits = r.run(tokens.data(), 5, 0, 0, nullptr);
  for (float v : logits) ASSERT_FALSE(std::isnan(v));
  std::fill(down.begin() + k * H * Fe, down.end(), 0.0f);
  expect_matches_reference(t, tokens);
}

// Runs tokens [0, n) in calls of `chunk` tokens and returns all logits.
std::vector<float> chunked_logits(const Architecture& m, const std::vector<int32_t>& tokens,
                                  int64_t chunk, core::ThreadPool* pool) {
  const int64_t n = int64_t(tokens.size());
  ModelRunner r(m, n, chunk);
  std::vector<float> all;
  for (int64_t p = 0; p < n; p += chunk) {
    const int64_t len = std::min(chunk, n - p);
    const auto l = r.run(tokens.data() + p, len, p, 0, pool);
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

// §4.3 batch invariance: the logits of every token are the same bits prefilled in one call of
// 64, in chunks of 7, or decoded one at a time, on 1 or 2 threads.
class MoeInvariance : public ::testing::TestWithParam<core::DType> {};

TEST_P(MoeInvariance, BatchChunkAndThreadsGiveTheSameBits) {
  const Qwen35Config c = qwen35_preset("tiny-moe").value();
  auto m = make_random_qwen35(c, 99, {GetParam(), core::DType::kF32});
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  const auto tokens = seeded_tokens(64, c.vocab_size, 6);
  core::ThreadPool pool(2);
  const auto whole = chunked_logits(**m, tokens, 64, &pool);
  EXPECT_TRUE(same_bytes(whole, chunked_logits(**m, tokens, 64, nullptr)));
  EXPECT_TRUE(same_bytes(whole, chunked_logits(**m, tokens, 7, &pool)));
  EXPECT_TRUE(same_bytes(whole, chunked_logits(**m, tokens, 1, nullptr)));
}

// The whole forward gives the same bits on every ISA this CPU runs (scalar, AVX2, AVX-512:
// unpacked or in-register dequantization, the project's exp), prefilled and decoded.
TEST_P(MoeInvariance, EveryIsaGivesTheSameBits) {
  const Qwen35Config c = qwen35_preset("tiny-moe").value();
  auto m = make_random_qwen35(c, 98, {GetParam(), core::DType::kF32});
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  const auto tokens = seeded_tokens(24, c.vocab_size, 9);
  const core::Isa saved = core::active_isa();
  std::vector<float> first;
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2, core::Isa::kAvx512}) {
    if (int(isa) > int(core::detected_isa())) continue;
    core::set_active_isa(isa);
    auto got = chunked_logits(**m, tokens, 24, nullptr);
    const auto dec = chunked_logits(**m, tokens, 1, nullptr);
    EXPECT_TRUE(same_bytes(got, dec)) << core::isa_name(isa);
    if (first.empty()) {
      first = std::move(got);
    } else {
      EXPECT_TRUE(same_bytes(first, got)) << core::isa_name(isa);
    }
  }
  core::set_active_isa(saved);
}

INSTANTIATE_TEST_SUITE_P(Weights, MoeInvariance,
                         ::testing::Values(core::DType::kF32, core::DType::kBF16,
                                           core::DType::kQ8_0),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param));
                         });

// Routing differs between tokens (else the invariance test above would not see a wrong
// gather): across 64 tokens of tiny-moe every expert is chosen by some token.
TEST(Qwen35Moe, RandomRouterUsesEveryExpert) {
  const Qwen35Config c = one_moe_layer();
  const Qwen35Tensors t = one_layer_tensors(c, 14);
  const auto tokens = seeded_tokens(64, c.vocab_size, 7);
  const int64_t H = c.hidden_size, E = c.num_experts;
  std::vector<bool> used(static_cast<size_t>(E), false);
  const auto& router = t.at(0, TensorRole::kMoeRouter);
  const auto& emb = t.at(-1, TensorRole::kEmbed);
  for (int32_t tok : tokens) {
    std::vector<double> logits(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e) {
      for (int64_t j = 0; j < H; ++j)
        logits[size_t(e)] += double(router[size_t(e * H + j)]) * emb[size_t(tok * H + j)];
    }
    for (int64_t r = 0; r < c.num_experts_per_tok; ++r) {
      const auto it = std::max_element(logits.begin(), logits.end());
      used[size_t(it - logits.begin())] = true;
      *it = -1e300;
    }
  }
  for (int64_t e = 0; e < E; ++e) EXPECT_TRUE(used[size_t(e)]) << "expert " << e;
}

// place_tensor_raw() (the GGUF loader's path) keeps quantized rows as they are: a model placed
// from Q8_0 rows equals one whose f32 tensors were quantized at packing, bit for bit; f32 rows
// placed raw equal place_tensor() with f32.
TEST(Qwen35Moe, PlaceTensorRawKeepsQuantizedRows) {
  const Qwen35Config c = qwen35_preset("tiny-moe").value();
  const Qwen35Tensors t = random_tensors(c, 21, nullptr);
  auto packed = make_qwen35_from_tensors(t, {core::DType::kQ8_0, core::DType::kF32}, nullptr);
  ASSERT_TRUE(packed.has_value());
  Qwen35Weights w = empty_weights(c);
  Qwen35Weights wf = empty_weights(c);
  for (size_t i = 0; i < t.slots.size(); ++i) {
    const TensorSlot& s = t.slots[i];
    place_tensor_raw(s, t.data[i].data(), core::DType::kF32, &wf);
    if (s.cols == 1 || s.role == TensorRole::kGdnConv) {  // vectors and conv taps stay f32
      place_tensor_raw(s, t.data[i].data(), core::DType::kF32, &w);
      continue;
    }
    const int64_t row_bytes = core::dtype_row_bytes(core::DType::kQ8_0, s.cols);
    std::vector<uint8_t> q(static_cast<size_t>(s.rows * row_bytes));
    for (int64_t r = 0; r < s.rows; ++r) {
      kernels::quantize_row(core::DType::kQ8_0, t.data[i].data() + r * s.cols,
                            q.data() + r * row_bytes, s.cols);
    }
    place_tensor_raw(s, q.data(), core::DType::kQ8_0, &w);
  }
  const Qwen35Model raw(c, std::move(w), {core::DType::kQ8_0, core::DType::kF32});
  const Qwen35Model raw_f32(c, std::move(wf), {});
  auto f32 = make_qwen35_from_tensors(t, {}, nullptr);
  ASSERT_TRUE(f32.has_value());
  EXPECT_EQ(raw.weight_bytes(), (*packed)->weight_bytes());
  EXPECT_LT(raw.weight_bytes(), raw_f32.weight_bytes() * 4 / 10);
  const auto tokens = seeded_tokens(20, c.vocab_size, 8);
  const auto a = chunked_logits(raw, tokens, 20, nullptr);
  EXPECT_TRUE(same_bytes(a, chunked_logits(**packed, tokens, 20, nullptr)));
  EXPECT_TRUE(same_bytes(chunked_logits(raw_f32, tokens, 20, nullptr),
                         chunked_logits(**f32, tokens, 20, nullptr)));
  EXPECT_FALSE(same_bytes(a, chunked_logits(**f32, tokens, 20, nullptr)));
}

}  // namespace
}  // namespace anchorage::model::qwen35
