// The qwen35-family GGUF loader against the exporter: a random model written as GGUF (every
// weight type, every layout variant) and loaded back gives the same logits, bit for bit, as
// an in-memory model of the values the file stores; the value-head order is honoured; and
// every bad file is refused with an error naming the key or tensor.
#include "model/gguf/qwen35_gguf_loader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>

#include "core/thread_pool.h"
#include "kernels/quant_dot.h"
#include "model/gguf/ggml_type.h"
#include "model/gguf/gguf_writer.h"
#include "model/gguf/qwen35_gguf_export.h"
#include "model/gguf/value_head_order.h"
#include "model/qwen35_runner.h"

namespace anchorage::model::gguf {
namespace {

using core::DType;
using qwen35::Qwen35Config;
using qwen35::Qwen35Model;
using qwen35::Qwen35Tensors;

constexpr int64_t kTokens = 12;

Qwen35Config tiny() {
  return *qwen35::qwen35_preset("tiny");
}

// tiny widened so that rows of H = 256 and F = 256 take the 256-element K-quant blocks.
Qwen35Config tiny_wide() {
  Qwen35Config c = tiny();
  c.hidden_size = 256;
  c.intermediate_size = 256;
  return c;
}

struct Written {
  std::string bytes;
  Qwen35Tensors stored;
};

Written write(const Qwen35Tensors& t, const GgufExportOptions& o) {
  GgufWriter w;
  Written out;
  const core::Status s = export_qwen35_gguf(t, o, &w, &out.stored);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  out.bytes = w.serialize();
  return out;
}

core::Result<std::unique_ptr<Qwen35Model>> load(const std::string& bytes) {
  auto f = GgufFile::parse(MappedFile::from_bytes(bytes));
  if (!f) return f.error();
  return load_qwen35_gguf(*f, qwen35::Qwen35Options{}, nullptr);
}

std::vector<float> logits(const Architecture& m) {
  test::ModelRunner run(m, 64, kTokens);
  const std::vector<int32_t> tokens = test::seeded_tokens(kTokens, m.vocab_size(), 7);
  return run.run(tokens.data(), kTokens, 0, 0, nullptr);
}

std::vector<float> logits_of(const Qwen35Tensors& t) {
  auto m = qwen35::make_qwen35_from_tensors(t, qwen35::Qwen35Options{}, nullptr);
  EXPECT_TRUE(m.has_value()) << m.error().to_string();
  return logits(**m);
}

// rms(a - b) / rms(b)
double rms_rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    m += double(b[i]) * b[i];
  }
  return std::sqrt(d / m);
}

// max |a - b| / max |b|
double rel_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, double(std::fabs(a[i] - b[i])));
    m = std::max(m, double(std::fabs(b[i])));
  }
  return d / m;
}

// Selects the exact-f32 arithmetic for quantized weights (kernels/quant_dot.h) while it lives:
// under it a quantized model equals the f32 model of its dequantized values bit for bit. The
// default integer dot (activations quantized per block) is a different, also invariant,
// arithmetic: its logits are held to the quantization-error bound instead.
class F32DotScope {
 public:
  F32DotScope() : saved_(kernels::quant_dot()) { kernels::set_quant_dot(kernels::QuantDot::kF32); }
  ~F32DotScope() { kernels::set_quant_dot(saved_); }

 private:
  kernels::QuantDot saved_;
};

// Loads bytes and checks the logits equal those of `expect` bit for bit (exact-f32 arithmetic).
void expect_same_model(const std::string& bytes, const Qwen35Tensors& expect) {
  F32DotScope f32_dot;
  auto m = load(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_EQ((*m)->config().value_heads_tiled, expect.cfg.value_heads_tiled);
  EXPECT_TRUE(test::same_bytes(logits(**m), logits_of(expect)));
}

TEST(GgufLoaderTest, F32Qwen35IsBitExactAndTiled) {
  const Qwen35Tensors t = qwen35::random_tensors(tiny(), 3, nullptr);
  const Written w = write(t, {});
  // F32 stores every value exactly: the stored model is the tiled permutation of t.
  const Qwen35Tensors tiled = with_value_heads_tiled(t, true);
  for (size_t i = 0; i < tiled.data.size(); ++i) {
    ASSERT_TRUE(test::same_bytes(w.stored.data[i], tiled.data[i])) << i;
  }
  auto m = load(w.bytes);
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  const Qwen35Config& c = (*m)->config();
  EXPECT_EQ(c.model_type, "qwen35");
  EXPECT_TRUE(c.value_heads_tiled);
  EXPECT_EQ(c.hidden_size, t.cfg.hidden_size);
  EXPECT_EQ(c.layer_types, t.cfg.layer_types);
  EXPECT_EQ(c.rotary_dim(), t.cfg.rotary_dim());
  EXPECT_EQ(c.vocab_size, t.cfg.vocab_size);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_TRUE(test::same_bytes(logits(**m), logits_of(tiled)));
}

TEST(GgufLoaderTest, Qwen3NextIsGroupedAndEqualsTheInMemoryModel) {
  const Qwen35Tensors t = qwen35::random_tensors(tiny(), 4, nullptr);
  GgufExportOptions o;
  o.arch = "qwen3next";
  const Written w = write(t, o);
  auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->tensor("blk.0.ssm_ba.weight"), nullptr);  // b and a fused per key-head group
  EXPECT_EQ(f->tensor("blk.0.ssm_beta.weight"), nullptr);
  expect_same_model(w.bytes, t);  // grouped, exactly the original
  // The legacy fused ssm_in (§2.2.1 per-group blocks) gives the same model.
  o.legacy_ssm_in = true;
  const Written legacy = write(t, o);
  auto lf = GgufFile::parse(MappedFile::from_bytes(legacy.bytes));
  ASSERT_TRUE(lf.has_value());
  EXPECT_NE(lf->tensor("blk.0.ssm_in.weight"), nullptr);
  EXPECT_EQ(lf->tensor("blk.0.attn_qkv.weight"), nullptr);
  expect_same_model(legacy.bytes, t);
}

TEST(GgufLoaderTest, FusedAttentionQkvAndUntiedHead) {
  Qwen35Config c = tiny();
  c.tie_word_embeddings = false;
  const Qwen35Tensors t = qwen35::random_tensors(c, 5, nullptr);
  GgufExportOptions o;
  o.fused_attn_qkv = true;
  const Written w = write(t, o);
  auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->tensor("output.weight"), nullptr);
  EXPECT_NE(f->tensor("blk.3.attn_qkv.weight"), nullptr);
  EXPECT_EQ(f->tensor("blk.3.attn_q.weight"), nullptr);
  auto m = load(w.bytes);
  ASSERT_TRUE(m.has_value()) << m.error().to_string();
  EXPECT_FALSE((*m)->config().tie_word_embeddings);
  expect_same_model(w.bytes, w.stored);
}

// Every weight type: bit-exact against the stored (dequantized) values under the exact-f32
// arithmetic, and within a stated bound of the f32 model under both arithmetics: the logits'
// relative rms error is at most kAmplification times the weights' own relative rms
// quantization error. (The random model amplifies weight noise: the measured ratio is 10-25
// for every type, so 50 leaves room without hiding a broken decoder, which gives a ratio in the
// hundreds. The integer dot adds the activations' 8-bit quantization, well inside that.)
TEST(GgufLoaderTest, EveryWeightTypeEqualsItsDequantizedModel) {
  constexpr double kAmplification = 50.0;
  const Qwen35Tensors t =
      with_value_heads_tiled(qwen35::random_tensors(tiny_wide(), 6, nullptr), true);
  const std::vector<float> exact = logits_of(t);
  for (DType type : {DType::kF16, DType::kBF16, DType::kQ8_0, DType::kQ6_K, DType::kQ4_K,
                     DType::kQ5_K, DType::kQ4_0, DType::kIQ4_XS, DType::kQ5_0, DType::kQ5_1,
                     DType::kQ4_1, DType::kQ3_K, DType::kQ2_K, DType::kIQ4_NL}) {
    SCOPED_TRACE(std::string(core::dtype_name(type)));
    GgufExportOptions o;
    o.weight_type = type;
    const Written w = write(t, o);
    auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(*dtype_of_ggml(f->tensor("blk.0.attn_qkv.weight")->ggml_type), type);
    EXPECT_EQ(*dtype_of_ggml(f->tensor("blk.0.ssm_a")->ggml_type), DType::kF32);
    auto m = load(w.bytes);
    ASSERT_TRUE(m.has_value()) << m.error().to_string();
    EXPECT_EQ(
        std::get<qwen35::GdnWeights>((*m)->test_weights().layers[0].mixer).in_proj_qkv.dtype(),
        type);  // kept in the file's type
    std::vector<float> got_f32;
    {
      F32DotScope f32_dot;
      got_f32 = logits(**m);
      EXPECT_TRUE(test::same_bytes(got_f32, logits_of(w.stored)));
    }
    const std::vector<float> got = logits(**m);  // the default arithmetic
    std::vector<float> all_stored, all_exact;
    for (size_t i = 0; i < t.slots.size(); ++i) {
      if (t.slots[i].cols == 1) continue;
      all_stored.insert(all_stored.end(), w.stored.data[i].begin(), w.stored.data[i].end());
      all_exact.insert(all_exact.end(), t.data[i].begin(), t.data[i].end());
    }
    const double weight_err = rms_rel_diff(all_stored, all_exact);
    const double logit_err = rms_rel_diff(got, exact);
    const double logit_err_f32 = rms_rel_diff(got_f32, exact);
    EXPECT_GT(weight_err, 0.0);
    EXPECT_LT(logit_err, kAmplification * weight_err);
    EXPECT_LT(logit_err_f32, kAmplification * weight_err);
    std::printf(
        "[ %s: weight error %.3g, logit error %.3g (exact-f32 arithmetic %.3g), ratio %.1f ]\n",
        std::string(core::dtype_name(type)).c_str(), weight_err, logit_err, logit_err_f32,
        logit_err / weight_err);
  }
}

// A file whose linear tensors take different types (llama.cpp's _M / _S mixes) loads with each
// weight kept in its own tensor's type, and equals the model of the stored values bit for bit.
TEST(GgufLoaderTest, PerTensorTypeMixLoads) {
  const Qwen35Tensors t =
      with_value_heads_tiled(qwen35::random_tensors(tiny_wide(), 8, nullptr), true);
  GgufExportOptions o;
  o.mixed_types = {DType::kQ5_K, DType::kQ4_0, DType::kIQ4_XS, DType::kQ6_K, DType::kQ5_0,
                   DType::kQ8_0, DType::kQ3_K, DType::kQ4_K,   DType::kQ2_K, DType::kIQ4_NL,
                   DType::kQ4_1, DType::kQ5_1, DType::kF16};
  const Written w = write(t, o);
  auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
  ASSERT_TRUE(f.has_value());
  std::set<uint32_t> types;
  for (const auto& ti : f->tensors()) types.insert(ti.ggml_type);
  EXPECT_GE(types.size(), 10u);  // f32 plus most of the mix
  expect_same_model(w.bytes, w.stored);
}

// Twelve tokens of prefill then one decode step, one thread or two: the logits of all 13.
std::vector<float> prefill_and_step(const Architecture& m, core::ThreadPool* pool) {
  test::ModelRunner run(m, 64, kTokens);
  const std::vector<int32_t> tokens = test::seeded_tokens(kTokens + 1, m.vocab_size(), 11);
  std::vector<float> out = run.run(tokens.data(), kTokens, 0, 0, pool);
  const std::vector<float> step = run.run(tokens.data() + kTokens, 1, kTokens, 0, pool);
  out.insert(out.end(), step.begin(), step.end());
  return out;
}

// A model whose linear layers are left in the file (defer_packing: the server's load) answers
// as the model packed at load, bit for bit, in both arithmetics, whether its forward packs them
// on first use or pack_in_background() has; it keeps the file's bytes alive; a fused qkv's
// parts (runs of rows) stay in the file, not copied; an untied embedding is never packed.
TEST(GgufLoaderTest, WeightsLeftInTheFileAnswerAsPackedOnes) {
  Qwen35Config c = tiny_wide();
  c.tie_word_embeddings = false;
  const Qwen35Tensors t = with_value_heads_tiled(qwen35::random_tensors(c, 9, nullptr), true);
  GgufExportOptions o;
  o.fused_attn_qkv = true;
  o.mixed_types = {DType::kQ4_K, DType::kQ6_K, DType::kQ8_0, DType::kIQ4_XS,
                   DType::kF16,  DType::kQ5_K, DType::kBF16};
  const Written w = write(t, o);
  std::unique_ptr<Qwen35Model> eager, lazy[2];
  {
    auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
    ASSERT_TRUE(f.has_value());
    ASSERT_NE(f->tensor("blk.3.attn_qkv.weight"), nullptr);
    auto e = load_qwen35_gguf(*f, qwen35::Qwen35Options{}, nullptr);
    ASSERT_TRUE(e.has_value()) << e.error().to_string();
    eager = std::move(*e);
    qwen35::Qwen35Options d;
    d.defer_packing = true;
    for (auto& m : lazy) {
      auto l = load_qwen35_gguf(*f, d, nullptr);
      ASSERT_TRUE(l.has_value()) << l.error().to_string();
      m = std::move(*l);
    }
  }  // the file object is gone: the weights keep its bytes
  for (const auto& m : lazy) {
    const std::vector<kernels::PackedWeight> left = qwen35::linear_weights(m->test_weights());
    ASSERT_GT(left.size(), 10u);
    for (const kernels::PackedWeight& p : left) EXPECT_FALSE(p.packed());
  }
  for (const kernels::PackedWeight& p : qwen35::linear_weights(eager->test_weights()))
    EXPECT_TRUE(p.packed());
  // lazy[1] packed in the background first; lazy[0] by its first forward (two threads).
  std::atomic<int> done{0};
  lazy[1]->pack_in_background(2, [&](double seconds) {
    EXPECT_GE(seconds, 0.0);
    done.fetch_add(1);
  });
  lazy[1]->wait_packed();
  EXPECT_EQ(done.load(), 1);
  core::ThreadPool two(2);
  for (kernels::QuantDot dot : {kernels::QuantDot::kInt8, kernels::QuantDot::kF32}) {
    const kernels::QuantDot saved = kernels::quant_dot();
    kernels::set_quant_dot(dot);
    for (core::ThreadPool* pool : {&two, static_cast<core::ThreadPool*>(nullptr)}) {
      const std::vector<float> want = prefill_and_step(*eager, pool);
      for (int i : {0, 1}) {
        EXPECT_TRUE(test::same_bytes(prefill_and_step(*lazy[i], pool), want))
            << "model " << i << " " << kernels::quant_dot_name(dot) << " threads "
            << (pool ? 2 : 1);
      }
    }
    kernels::set_quant_dot(saved);
  }
  // Every weight a GEMM reads is packed now; the untied embedding is read a row at a time,
  // from the file, and neither the forward nor the packer packs it.
  for (const auto& m : lazy) {
    const std::vector<kernels::PackedWeight> all = qwen35::linear_weights(m->test_weights());
    EXPECT_FALSE(all.front().packed());
    EXPECT_EQ(all.front().rows(), m->test_weights().embed.rows());
    for (size_t i = 1; i < all.size(); ++i) EXPECT_TRUE(all[i].packed()) << i;
  }
}

TEST(GgufLoaderTest, ValueHeadOrder) {
  // §6.5's example: n_k 16, r 3: tiled positions 0,1,2 hold HF heads 0,3,6; position 16 head 1.
  const std::vector<int64_t> src = tiled_to_grouped_heads(16, 48);
  EXPECT_EQ(src[0], 0);
  EXPECT_EQ(src[1], 3);
  EXPECT_EQ(src[2], 6);
  EXPECT_EQ(src[16], 1);
  const Qwen35Tensors t = qwen35::random_tensors(tiny(), 8, nullptr);
  EXPECT_TRUE(test::same_bytes(
      with_value_heads_tiled(with_value_heads_tiled(t, true), false).data[5], t.data[5]));
  // The same weights as a tiled qwen35 file and a grouped qwen3next file: the same model (not
  // bitwise: ssm_out's columns, and so its sum order, are permuted).
  const Written tiled = write(t, {});
  GgufExportOptions next;
  next.arch = "qwen3next";
  const Written grouped = write(t, next);
  auto mt = load(tiled.bytes);
  auto mg = load(grouped.bytes);
  ASSERT_TRUE(mt.has_value() && mg.has_value());
  const std::vector<float> lt = logits(**mt), lg = logits(**mg);
  EXPECT_LT(rel_diff(lt, lg), 1e-5);
  // A tiled file read with the grouped mapping (its arch renamed to qwen3next) is caught: the
  // logits move far more than rounding.
  auto f = GgufFile::parse(MappedFile::from_bytes(tiled.bytes));
  ASSERT_TRUE(f.has_value());
  GgufWriter re;
  for (const auto& [k, v] : f->metadata()) {
    std::string key = k;
    if (key.rfind("qwen35.", 0) == 0) key = "qwen3next." + key.substr(7);
    re.add(key, key == "general.architecture" ? GgufValue::string("qwen3next") : v);
  }
  for (const GgufTensorInfo& ti : f->tensors()) {
    re.add_tensor(ti.name, ti.ne, ti.ggml_type,
                  std::vector<uint8_t>(ti.data, ti.data + ti.n_bytes));
  }
  // The loader takes unfused ssm_beta/ssm_alpha for qwen3next too, so this file loads, as
  // grouped.
  auto wrong = load(re.serialize());
  ASSERT_TRUE(wrong.has_value()) << wrong.error().to_string();
  EXPECT_FALSE((*wrong)->config().value_heads_tiled);
  EXPECT_GT(rel_diff(logits(**wrong), lt), 1e-2);
}

TEST(GgufLoaderTest, MoeRoundTrip) {
  auto c = qwen35::qwen35_preset("tiny-moe");
  ASSERT_TRUE(c.has_value());
  const Qwen35Tensors t = qwen35::random_tensors(*c, 9, nullptr);
  GgufExportOptions o;
  o.arch = "qwen35moe";
  const Written w = write(t, o);
  auto f = GgufFile::parse(MappedFile::from_bytes(w.bytes));
  ASSERT_TRUE(f.has_value());
  const GgufTensorInfo* exps = f->tensor("blk.0.ffn_gate_exps.weight");
  ASSERT_NE(exps, nullptr);
  EXPECT_EQ(exps->ne,
            (std::vector<int64_t>{c->hidden_size, c->moe_intermediate_size, c->num_experts}));
  expect_same_model(w.bytes, w.stored);
  // qwen3next is MoE too, grouped.
  o.arch = "qwen3next";
  const Written n = write(t, o);
  expect_same_model(n.bytes, t);
}

// Rewrites a valid file through `edit`, which may change any tensor or key.
struct FileEdit {
  std::vector<std::pair<std::string, GgufValue>> kv;
  struct T {
    std::string name;
    std::vector<int64_t> ne;
    uint32_t type;
    std::vector<uint8_t> bytes;
  };
  std::vector<T> tensors;
};

std::string rewrite(const std::string& bytes, const std::function<void(FileEdit*)>& edit) {
  auto f = GgufFile::parse(MappedFile::from_bytes(bytes));
  EXPECT_TRUE(f.has_value());
  FileEdit e;
  e.kv = f->metadata();
  for (const GgufTensorInfo& t : f->tensors()) {
    e.tensors.push_back(
        {t.name, t.ne, t.ggml_type, std::vector<uint8_t>(t.data, t.data + t.n_bytes)});
  }
  edit(&e);
  GgufWriter w;
  for (const auto& [k, v] : e.kv) w.add(k, v);
  for (auto& t : e.tensors) w.add_tensor(t.name, t.ne, t.type, t.bytes);
  return w.serialize();
}

FileEdit::T* find(FileEdit* e, const std::string& name) {
  for (auto& t : e->tensors)
    if (t.name == name) return &t;
  ADD_FAILURE() << "no tensor " << name;
  return &e->tensors[0];
}

void expect_load_error(const std::string& bytes, core::StatusCode code,
                       const std::vector<std::string>& needles) {
  auto m = load(bytes);
  ASSERT_FALSE(m.has_value()) << "a bad file loaded";
  EXPECT_EQ(m.error().code(), code) << m.error().to_string();
  for (const std::string& n : needles) {
    EXPECT_NE(m.error().message().find(n), std::string::npos)
        << "'" << m.error().message() << "' does not name '" << n << "'";
  }
}

// The packed form of the experts' gate and up projections (ffn_gate_up_exps {H, 2F_e, E}: per
// expert F_e gate rows then F_e up rows) loads as the separate pair does.
TEST(GgufLoaderTest, PackedGateUpExperts) {
  const Qwen35Config c = *qwen35::qwen35_preset("tiny-moe");
  GgufExportOptions o;
  o.arch = "qwen35moe";
  const Written w = write(qwen35::random_tensors(c, 11, nullptr), o);
  const int64_t H = c.hidden_size, Fe = c.moe_intermediate_size, E = c.num_experts;
  const std::string packed = rewrite(w.bytes, [&](FileEdit* e) {
    for (int64_t l = 0; l < c.num_hidden_layers; ++l) {
      const std::string gate_name = "blk." + std::to_string(l) + ".ffn_gate_exps.weight";
      const std::string up_name = "blk." + std::to_string(l) + ".ffn_up_exps.weight";
      const FileEdit::T gate = *find(e, gate_name), up = *find(e, up_name);
      const size_t rb = gate.bytes.size() / size_t(E * Fe);  // one row of H
      std::vector<uint8_t> bytes;
      for (int64_t x = 0; x < E; ++x) {
        const auto g0 = gate.bytes.begin() + std::ptrdiff_t(size_t(x * Fe) * rb);
        const auto u0 = up.bytes.begin() + std::ptrdiff_t(size_t(x * Fe) * rb);
        bytes.insert(bytes.end(), g0, g0 + std::ptrdiff_t(size_t(Fe) * rb));
        bytes.insert(bytes.end(), u0, u0 + std::ptrdiff_t(size_t(Fe) * rb));
      }
      std::erase_if(e->tensors,
                    [&](const FileEdit::T& t) { return t.name == gate_name || t.name == up_name; });
      e->tensors.push_back({"blk." + std::to_string(l) + ".ffn_gate_up_exps.weight",
                            {H, 2 * Fe, E},
                            gate.type,
                            std::move(bytes)});
    }
  });
  expect_same_model(packed, w.stored);
}

TEST(GgufLoaderTest, BadFilesAreRefusedByName) {
  const Written good = write(qwen35::random_tensors(tiny(), 10, nullptr), {});
  ASSERT_TRUE(load(good.bytes).has_value());
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              std::erase_if(e->tensors, [](const FileEdit::T& t) {
                                return t.name == "blk.2.ssm_out.weight";
                              });
                            }),
                    core::StatusCode::kNotFound, {"missing tensor", "blk.2.ssm_out.weight"});
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              FileEdit::T* t = find(e, "blk.1.ssm_norm.weight");
                              t->ne = {8};
                              t->bytes.resize(32);
                            }),
                    core::StatusCode::kCorruption, {"blk.1.ssm_norm.weight", "{8}", "{16}"});
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              FileEdit::T* t = find(e, "blk.3.attn_q.weight");
                              std::swap(t->ne[0], t->ne[1]);
                            }),
                    core::StatusCode::kCorruption, {"blk.3.attn_q.weight", "{256, 64}"});
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              FileEdit::T* t = find(e, "blk.0.attn_norm.weight");
                              t->type = 9;  // Q8_1: 64 elements = 2 blocks of 36 bytes
                              t->bytes.resize(72);
                            }),
                    core::StatusCode::kUnsupported, {"blk.0.attn_norm.weight", "Q8_1 (9)"});
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              FileEdit::T* t = find(e, "blk.0.ssm_a");
                              const float one = 1.0f;
                              std::memcpy(t->bytes.data(), &one, 4);
                            }),
                    core::StatusCode::kCorruption, {"blk.0.ssm_a", ">= 0"});
  expect_load_error(
      rewrite(good.bytes,
              [](FileEdit* e) {
                e->tensors.push_back({"blk.0.surprise.weight", {4}, 0, std::vector<uint8_t>(16)});
              }),
      core::StatusCode::kUnsupported, {"unexpected tensor", "blk.0.surprise.weight"});
  expect_load_error(rewrite(good.bytes,
                            [](FileEdit* e) {
                              std::erase_if(e->kv, [](const auto& kv) {
                                return kv.first == "qwen35.ssm.state_size";
                              });
                            }),
                    core::StatusCode::kNotFound, {"qwen35.ssm.state_size"});
  expect_load_error(
      rewrite(good.bytes, [](FileEdit* e) { e->kv[0].second = GgufValue::string("llama"); }),
      core::StatusCode::kUnsupported, {"architecture 'llama'"});
  // MTP tensors (blk.N, N >= n_layer) are allowed and ignored.
  auto mtp = load(rewrite(good.bytes, [](FileEdit* e) {
    for (auto& kv : e->kv)
      if (kv.first == "qwen35.block_count") kv.second = GgufValue::u32(9);
    e->kv.emplace_back("qwen35.nextn_predict_layers", GgufValue::u32(1));
    e->tensors.push_back({"blk.8.nextn.eh_proj.weight", {4}, 0, std::vector<uint8_t>(16)});
  }));
  ASSERT_TRUE(mtp.has_value()) << mtp.error().to_string();
  EXPECT_EQ((*mtp)->config().num_hidden_layers, 8);
  EXPECT_EQ((*mtp)->config().mtp_num_hidden_layers, 1);
}

}  // namespace
}  // namespace anchorage::model::gguf
