// Qwen35Model: deterministic init, sane logits (tiny and small), the state layout, and the
// exactness the engine relies on (docs/architecture.md §4; docs/model.md §7.3, §7.4): split
// prefills, prefill + decode and thread counts give the same bits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/thread_pool.h"
#include "model/qwen35/qwen35_model.h"
#include "model/qwen35_runner.h"

namespace anchorage::model::qwen35 {
namespace {

using test::ModelRunner;
using test::same_bytes;
using test::seeded_tokens;

Qwen35Config tiny() {
  return qwen35_preset("tiny").value();
}

std::unique_ptr<Architecture> random_model(const Qwen35Config& c, uint64_t seed,
                                           Qwen35Options o = {}) {
  auto m = make_random_qwen35(c, seed, o);
  EXPECT_TRUE(m.has_value()) << m.error().to_string();
  return std::move(m.value());
}

int64_t argmax(const float* x, int64_t n) {
  return std::max_element(x, x + n) - x;
}

double stddev(const float* x, int64_t n) {
  double s = 0, s2 = 0;
  for (int64_t i = 0; i < n; ++i) {
    s += x[i];
    s2 += double(x[i]) * x[i];
  }
  const double mean = s / double(n);
  return std::sqrt(std::max(0.0, s2 / double(n) - mean * mean));
}

TEST(Qwen35Init, SameSeedSameBitsOtherSeedDiffers) {
  core::ThreadPool pool(2);
  const Qwen35Tensors a = random_tensors(tiny(), 7, nullptr);
  const Qwen35Tensors b = random_tensors(tiny(), 7, &pool);
  const Qwen35Tensors c = random_tensors(tiny(), 8, nullptr);
  ASSERT_EQ(a.data.size(), b.data.size());
  for (size_t i = 0; i < a.data.size(); ++i) {
    EXPECT_TRUE(same_bytes(a.data[i], b.data[i])) << "tensor " << i;
    EXPECT_FALSE(same_bytes(a.data[i], c.data[i])) << "tensor " << i;
  }
  // Pinned: the init must give these bits on every machine (caches key on weights, tests
  // compare across runs). FNV-1a over every tensor's bytes, in slot order.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const auto& x : a.data) {
    const auto* p = reinterpret_cast<const uint8_t*>(x.data());
    for (size_t i = 0; i < x.size() * 4; ++i) hash = (hash ^ p[i]) * 0x100000001b3ull;
  }
  EXPECT_EQ(hash, 0xca464d00f9dafed7ull) << std::hex << hash;
}

TEST(Qwen35Init, InitFollowsTheConventions) {
  const Qwen35Config c = tiny();
  const Qwen35Tensors t = random_tensors(c, 3, nullptr);
  for (float a : t.at(0, TensorRole::kGdnSsmA)) {
    EXPECT_LT(a, -0.0039f);  // -exp(A_log) in about [-0.34, -0.004] (§2.5)
    EXPECT_GT(a, -0.341f);
  }
  for (float w : t.at(0, TensorRole::kInputNorm)) {  // plain weights near 1 (+1 folded)
    EXPECT_GT(w, 0.89f);
    EXPECT_LT(w, 1.11f);
  }
  EXPECT_EQ(t.at(0, TensorRole::kGdnConv).size(), size_t(c.linear_conv_kernel_dim * c.conv_dim()));
  EXPECT_FALSE(t.has(-1, TensorRole::kLmHead));  // tied
  EXPECT_FALSE(t.has(3, TensorRole::kGdnQkv));   // layer 3 is attention
  EXPECT_TRUE(t.has(3, TensorRole::kAttnQ));
}

// Any rows of a tensor are those rows of the whole tensor, wherever they start in a block of the
// init's generators (65,536 values), for every kind of fill.
TEST(Qwen35Init, RowsAreTheWholeTensorsRows) {
  const Qwen35Config c = tiny();
  for (TensorRole role :
       {TensorRole::kEmbed, TensorRole::kGdnSsmA, TensorRole::kFfnDown, TensorRole::kInputNorm}) {
    const TensorSlot slot{-1, role, 1000, 200};  // 200,000 values: four generator blocks
    const std::vector<float> whole = random_tensor(c, slot, 5, 17);
    for (auto [r0, r1] :
         {std::pair<int64_t, int64_t>{0, 1000}, {333, 777}, {327, 328}, {999, 1000}}) {
      std::vector<float> rows(size_t((r1 - r0) * slot.cols), -1.0f);
      random_tensor_rows(c, slot, 5, 17, r0, r1, rows.data());
      EXPECT_EQ(
          0, std::memcmp(rows.data(), whole.data() + r0 * slot.cols, rows.size() * sizeof(float)))
          << int(role) << " rows " << r0 << "-" << r1;
    }
  }
}

TEST(Qwen35Model, RandomModelEqualsModelFromTheSameTensors) {
  const Qwen35Config c = tiny();
  auto a = random_model(c, 11);
  auto b = make_qwen35_from_tensors(random_tensors(c, 11, nullptr), {}, nullptr);
  ASSERT_TRUE(b.has_value());
  const auto tokens = seeded_tokens(9, c.vocab_size, 1);
  ModelRunner ra(*a, 16, 9), rb(**b, 16, 9);
  EXPECT_TRUE(
      same_bytes(ra.run(tokens.data(), 9, 0, 0, nullptr), rb.run(tokens.data(), 9, 0, 0, nullptr)));
  EXPECT_EQ(a->weight_bytes(), (*b)->weight_bytes());
}

TEST(Qwen35Model, StateLayoutMatchesTheContract) {
  const Qwen35Config c = tiny();
  for (core::DType kv : {core::DType::kF32, core::DType::kBF16}) {
    auto m = random_model(c, 1, Qwen35Options{core::DType::kF32, kv});
    const core::StateLayout l = m->state_layout(100);
    ASSERT_EQ(l.sections.size(), 2u);
    ASSERT_EQ(l.views.size(), 2u);
    EXPECT_EQ(l.sections[0].name, "gdn.S");
    EXPECT_EQ(l.sections[0].dtype, core::DType::kF32);
    EXPECT_EQ(l.sections[0].shape, (std::vector<int64_t>{6, 4, 16, 16}));
    EXPECT_EQ(l.sections[1].name, "gdn.conv");
    // conv_dim = 2 * key_dim + value_dim = 2 * 32 + 64
    EXPECT_EQ(l.sections[1].shape, (std::vector<int64_t>{6, 3, 128}));
    EXPECT_EQ(l.views[0].name, "K");
    EXPECT_EQ(l.views[0].dtype, kv);
    EXPECT_EQ(l.views[0].shape, (std::vector<int64_t>{2, 2, 32, 100}));
    EXPECT_EQ(l.views[0].token_axis, 3);
    EXPECT_EQ(l.views[1].name, "V");
    EXPECT_EQ(l.views[1].shape, (std::vector<int64_t>{2, 2, 100, 32}));
    EXPECT_EQ(l.views[1].token_axis, 2);
    EXPECT_EQ(l.bytes_per_token(), c.kv_bytes_per_token(kv));
    EXPECT_EQ(l.find_section("gdn.S")->bytes(), c.gdn_state_bytes());
    EXPECT_EQ(m->exact_granularity(), 1);
  }
}

TEST(Qwen35Model, WeightBytesFollowTheDtype) {
  const Qwen35Config c = tiny();
  auto f32 = random_model(c, 1);
  auto bf16 = random_model(c, 1, Qwen35Options{core::DType::kBF16, core::DType::kF32});
  // Every parameter but the norms/vectors is in a linear layer; the tied head is counted once.
  EXPECT_GE(f32->weight_bytes(), c.n_parameters() * 4);
  EXPECT_LT(bf16->weight_bytes(), f32->weight_bytes() * 6 / 10);
  // Weights stay quantized in memory: Q8_0 is 34 bytes per 32 weights (f32 vectors aside).
  auto q8 = random_model(c, 1, Qwen35Options{core::DType::kQ8_0, core::DType::kF32});
  EXPECT_LT(q8->weight_bytes(), f32->weight_bytes() * 3 / 10);
  // Q4_K needs K % 256 == 0; tiny's widths (64, 128) fall back to Q8_0 (weights.h).
  auto q4 = random_model(c, 1, Qwen35Options{core::DType::kQ4_K, core::DType::kF32});
  EXPECT_EQ(q4->weight_bytes(), q8->weight_bytes());
}

TEST(Qwen35Model, RefusesBadOptionsAndConfigs) {
  // Weights may be any storage type; the KV cache only f32 or bf16.
  auto m = make_random_qwen35(tiny(), 1, Qwen35Options{core::DType::kF32, core::DType::kF16});
  EXPECT_FALSE(m.has_value());
  m = make_random_qwen35(tiny(), 1, Qwen35Options{core::DType::kQ8_0, core::DType::kQ8_0});
  EXPECT_FALSE(m.has_value());
  Qwen35Config c = tiny();
  c.linear_num_value_heads = 3;
  m = make_random_qwen35(c, 1, {});
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("linear_num_value_heads"), std::string::npos);
}

// Finite, not flat, input-dependent logits through every layer.
void expect_sane_logits(const Architecture& m, int64_t n_tokens) {
  const int64_t V = m.vocab_size();
  core::ThreadPool pool(2);
  int64_t argmaxes[2];
  for (int k = 0; k < 2; ++k) {
    const auto tokens = seeded_tokens(n_tokens, V, 100 + uint64_t(k));
    ModelRunner r(m, n_tokens, n_tokens);
    const auto logits = r.run(tokens.data(), n_tokens, 0, n_tokens - 1, &pool);
    for (float x : logits) ASSERT_TRUE(std::isfinite(x));
    EXPECT_GT(stddev(logits.data(), V), 0.5);
    argmaxes[k] = argmax(logits.data(), V);
  }
  EXPECT_NE(argmaxes[0], argmaxes[1]);
}

TEST(Qwen35Model, TinyLogitsAreFiniteAndNotFlat) {
  expect_sane_logits(*random_model(tiny(), 5), 24);
  expect_sane_logits(*random_model(tiny(), 5, {core::DType::kBF16, core::DType::kBF16}), 24);
  expect_sane_logits(*random_model(tiny(), 5, {core::DType::kQ8_0, core::DType::kF32}), 24);
  expect_sane_logits(*random_model(qwen35_preset("tiny-moe").value(), 5), 24);
}

TEST(Qwen35Model, SmallLogitsAreFiniteAndNotFlat) {
  expect_sane_logits(*random_model(qwen35_preset("small").value(), 5), 4);
}

// §7.4 / docs/architecture.md §4: a prefill of [0, n) split anywhere, or continued by decode
// steps, gives the bits of one cold prefill: logits, every section and every view row.
class Qwen35Exactness : public ::testing::TestWithParam<Qwen35Options> {};

TEST_P(Qwen35Exactness, SplitPrefillAndDecodeEqualOneColdPrefill) {
  const Qwen35Config c = tiny();
  auto m = random_model(c, 21, GetParam());
  const int64_t n = 20, V = c.vocab_size;
  const auto tokens = seeded_tokens(n, V, 9);
  ModelRunner cold(*m, n, n);
  const auto want = cold.run(tokens.data(), n, 0, 0, nullptr);
  core::ThreadPool pool(2);
  // a < K-1 covers the conv tail keeping entries of the old tail (§2.3).
  for (int64_t a : {1, 2, 3, 4, 5, 13, 19}) {
    ModelRunner warm(*m, n, n);
    auto got = warm.run(tokens.data(), a, 0, 0, &pool);
    const auto rest = warm.run(tokens.data() + a, n - a, a, 0, &pool);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_TRUE(same_bytes(want, got)) << "split at " << a;
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(cold.section(i), warm.section(i)) << "section " << i << " split at " << a;
      EXPECT_EQ(cold.view_rows(i, n), warm.view_rows(i, n)) << "view " << i << " split at " << a;
    }
  }
  // Prefill 8 then decode token by token.
  ModelRunner dec(*m, n, n);
  auto got = dec.run(tokens.data(), 8, 0, 0, nullptr);
  for (int64_t t = 8; t < n; ++t) {
    const auto row = dec.run(tokens.data() + t, 1, t, 0, &pool);
    got.insert(got.end(), row.begin(), row.end());
  }
  EXPECT_TRUE(same_bytes(want, got));
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(cold.section(i), dec.section(i)) << i;
  // Only the rows asked for: the last row alone equals the last row of all.
  ModelRunner last(*m, n, n);
  const auto tail = last.run(tokens.data(), n, 0, n - 1, &pool);
  EXPECT_TRUE(same_bytes(std::vector<float>(want.end() - V, want.end()), tail));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, Qwen35Exactness,
                         ::testing::Values(Qwen35Options{core::DType::kF32, core::DType::kF32},
                                           Qwen35Options{core::DType::kBF16, core::DType::kBF16},
                                           Qwen35Options{core::DType::kF16, core::DType::kF32},
                                           Qwen35Options{core::DType::kQ8_0, core::DType::kF32}),
                         [](const auto& info) {
                           return std::string(core::dtype_name(info.param.weight_dtype));
                         });

TEST(Qwen35Model, ProfileSeesEveryOpKind) {
  const Qwen35Config c = tiny();
  auto m = random_model(c, 2);
  const auto tokens = seeded_tokens(6, c.vocab_size, 3);
  ModelRunner r(*m, 6, 6);
  OpProfile prof;
  r.run(tokens.data(), 6, 0, 5, nullptr, &prof);
  // Each of these kinds does microseconds of work here, so its time cannot round to zero.
  for (OpKind k : {OpKind::kNorm, OpKind::kConv, OpKind::kGdn, OpKind::kAttention, OpKind::kHead}) {
    EXPECT_GT(prof.ns[size_t(k)], 0) << op_kind_name(k);
  }
  EXPECT_GT(prof.ns[size_t(OpKind::kGemm)], 0);
  EXPECT_GT(prof.total_ns(), 0);
}

}  // namespace
}  // namespace anchorage::model::qwen35
