// Qwen35Model: the Qwen3-Next / Qwen3.5 hybrid (Gated DeltaNet + gated full attention,
// docs/model.md §1-§4) behind the Architecture interface (model/architecture.h), and the
// functions that build one. Loading real weights (GGUF) comes later and returns the same class.
//
// Threading: as Architecture — forward() from one thread at a time (it uses the pool for its
// own parallel work); const accessors from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/dtype.h"
#include "core/status.h"
#include "model/architecture.h"
#include "model/qwen35/config.h"
#include "model/qwen35/tensors.h"
#include "model/qwen35/weights.h"
#include "model/weight_packer.h"

namespace anchorage::model::qwen35 {

struct Qwen35Options {
  // Linear layers of random / f32-tensor models: any storage type (core/dtype.h); a
  // quantized type falls back per tensor when its block does not divide K (weights.h).
  core::DType weight_dtype = core::DType::kF32;
  core::DType kv_dtype = core::DType::kF32;  // K/V views: kF32 or kBF16
  // GGUF loads: linear layers stored as the file has them read its rows in place until
  // pack_in_background() packs them (the server: ready sooner, the same answers); false packs
  // every layer during the load.
  bool defer_packing = false;
};

class Qwen35Model final : public Architecture {
 public:
  // cfg must be valid and w filled for it (the factories below check both).
  Qwen35Model(Qwen35Config cfg, Qwen35Weights w, const Qwen35Options& opts);

  std::string_view name() const override { return "qwen35"; }
  int64_t vocab_size() const override { return cfg_.vocab_size; }
  // Sections gdn.S f32 [L_lin, n_v, d_k, d_v] and gdn.conv f32 [L_lin, K-1, conv_dim]; views
  // K [L_full, n_kv, D, capacity] (token axis 3) and V [L_full, n_kv, capacity, D] (token
  // axis 2) in the kv dtype: the cache layout kernels/attention.h reads.
  core::StateLayout state_layout(int64_t capacity) const override;
  int64_t workspace_bytes(int64_t max_tokens) const override;
  // Every kernel is batch-invariant and GDN runs the per-token recurrence (docs/architecture.md
  // §4).
  int64_t exact_granularity() const override { return 1; }
  int64_t weight_bytes() const override { return weight_bytes_; }
  // {architecture, config, linear_dtypes (those the packed weights hold), kv_dtype,
  // exact_granularity, kernel_isa, kernel_version}.
  nlohmann::json manifest() const override;
  void forward(const ForwardRequest& req, const StateBuffers& state, void* workspace,
               core::ThreadPool* pool) const override;

  const Qwen35Config& config() const { return cfg_; }
  const Qwen35Options& options() const { return opts_; }
  const Qwen35Weights& test_weights() const { return w_; }
  // Packs every linear layer a GEMM reads that is still in a file's rows, on `threads`
  // background threads (model/weight_packer.h; a forward packs what it needs first itself);
  // done(seconds) runs once they all are. An untied embedding stays in the file (read a row at
  // a time). Call once, before serving.
  void pack_in_background(int threads, std::function<void(double seconds)> done);
  // Blocks until pack_in_background()'s threads are done (returns at once without them).
  void wait_packed() const;
  // forward() that also copies the residual stream after the last layer (before the final
  // norm) into hidden: [n_tokens][H]. Lets tests look at a layer's output.
  void test_forward_hidden(const ForwardRequest& req, const StateBuffers& state, void* workspace,
                           core::ThreadPool* pool, float* hidden) const;

 private:
  struct Scratch;
  void run(const ForwardRequest& req, const StateBuffers& state, void* workspace,
           core::ThreadPool* pool, float* hidden) const;
  void run_gdn(int64_t layer, const Scratch& s, const ForwardRequest& req,
               const StateBuffers& state, core::ThreadPool* pool) const;
  void run_attention(int64_t layer, const Scratch& s, const ForwardRequest& req,
                     const StateBuffers& state, core::ThreadPool* pool) const;
  void run_ffn(int64_t layer, const Scratch& s, const ForwardRequest& req,
               core::ThreadPool* pool) const;
  void run_moe(int64_t layer, const Scratch& s, const ForwardRequest& req,
               core::ThreadPool* pool) const;

  Qwen35Config cfg_;
  Qwen35Weights w_;
  Qwen35Options opts_;
  std::vector<int64_t> kind_index_;  // per layer: its slot in gdn.* or in K/V
  int64_t weight_bytes_ = 0;
  std::unique_ptr<WeightPacker> packer_;  // last: stopped before the rest goes
};

// A model with deterministic random weights (the same seed gives the same bits on every
// machine; docs/model.md describes the init). Refuses an invalid config or unsupported dtypes.
core::Result<std::unique_ptr<Architecture>> make_random_qwen35(const Qwen35Config& cfg,
                                                               uint64_t seed,
                                                               const Qwen35Options& opts);

// A model from explicit tensors (our conventions, tensors.h); checks the config and every
// tensor's size. pool (may be null) packs in parallel. make_random_qwen35(cfg, seed, opts)
// equals make_qwen35_from_tensors(random_tensors(cfg, seed, pool), opts) bit for bit.
core::Result<std::unique_ptr<Qwen35Model>> make_qwen35_from_tensors(const Qwen35Tensors& t,
                                                                    const Qwen35Options& opts,
                                                                    core::ThreadPool* pool);

}  // namespace anchorage::model::qwen35
