// Qwen35Model: construction, state layout, workspace size; the factories.
#include "model/qwen35/qwen35_model.h"

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/isa.h"
#include "kernels/kernel_version.h"
#include "kernels/quant_dot.h"
#include "model/qwen35/layer_state.h"
#include "model/qwen35/scratch.h"

namespace anchorage::model::qwen35 {

using core::Status;

Qwen35Model::Qwen35Model(Qwen35Config cfg, Qwen35Weights w, const Qwen35Options& opts)
    : cfg_(std::move(cfg)), w_(std::move(w)), opts_(opts) {
  kind_index_.resize(size_t(cfg_.num_hidden_layers));
  for (int64_t l = 0; l < cfg_.num_hidden_layers; ++l) kind_index_[size_t(l)] = cfg_.kind_index(l);
  weight_bytes_ = decode_weight_bytes(w_);
}

void Qwen35Model::pack_in_background(int threads, std::function<void(double seconds)> done) {
  ANCHORAGE_CHECK(packer_ == nullptr);
  std::vector<kernels::PackedWeight> all = linear_weights(w_), todo;
  // An untied embedding (first in the list) is only read a row at a time (get_row()), which
  // the file's rows serve as well: its panels would be memory no GEMM reads.
  if (w_.lm_head.rows() > 0 && !all.empty()) all.erase(all.begin());
  for (kernels::PackedWeight& p : all) {
    if (!p.packed()) todo.push_back(std::move(p));
  }
  if (todo.empty()) return;
  packer_ = std::make_unique<WeightPacker>(std::move(todo), threads, std::move(done));
}

void Qwen35Model::wait_packed() const {
  if (packer_ != nullptr) packer_->wait();
}

core::StateLayout Qwen35Model::state_layout(int64_t capacity) const {
  const int64_t L_lin = cfg_.n_linear_layers(), L_full = cfg_.n_full_layers();
  const int64_t n_kv = cfg_.num_key_value_heads, D = cfg_.head_dim;
  core::StateLayout s;
  // §2.11: per GDN layer the states S_h ([d_k][d_v], HF orientation) and the conv tail
  // (K-1 raw inputs, oldest first, in qkv channel order), both fp32.
  s.sections.push_back(
      {kSectionNames[kGdnS],
       core::DType::kF32,
       {L_lin, cfg_.linear_num_value_heads, cfg_.linear_key_head_dim, cfg_.linear_value_head_dim},
       -1});
  s.sections.push_back({kSectionNames[kGdnConv],
                        core::DType::kF32,
                        {L_lin, cfg_.linear_conv_kernel_dim - 1, cfg_.conv_dim()},
                        -1});
  // §3.4: k after norm and RoPE, v raw; K transposed per head (kernels/attention.h).
  s.views.push_back({kViewNames[kViewK], opts_.kv_dtype, {L_full, n_kv, D, capacity}, 3});
  s.views.push_back({kViewNames[kViewV], opts_.kv_dtype, {L_full, n_kv, capacity, D}, 2});
  return s;
}

int64_t Qwen35Model::workspace_bytes(int64_t max_tokens) const {
  Scratch s;
  return Scratch::carve(cfg_, std::max<int64_t>(max_tokens, 1), nullptr, &s) * 4;
}

namespace {

// The storage types of every linear layer (a quantized dtype may fall back per tensor, and a
// GGUF file keeps its own mix), which is what the GEMMs compute from.
std::set<std::string> linear_dtypes(const Qwen35Weights& w) {
  std::set<std::string> out;
  for (const kernels::PackedWeight& p : linear_weights(w))
    out.insert(std::string(core::dtype_name(p.dtype())));
  return out;
}

Status check_options(const Qwen35Options& opts) {
  auto ok = [](core::DType t) { return t == core::DType::kF32 || t == core::DType::kBF16; };
  if (!ok(opts.kv_dtype)) return Status::unsupported("kv dtype must be f32 or bf16");
  return Status::ok();
}

}  // namespace

nlohmann::json Qwen35Model::manifest() const {
  return nlohmann::json{
      {"architecture", "qwen35"},
      {"config", config_to_json(cfg_)},
      {"linear_dtypes", linear_dtypes(w_)},
      // Norms, vectors, the GDN state and the conv tail are f32 whatever the options say.
      {"kv_dtype", std::string(core::dtype_name(opts_.kv_dtype))},
      {"exact_granularity", exact_granularity()},
      {"kernel_isa", std::string(core::isa_name(core::active_isa()))},
      {"kernel_version", kernels::kKernelVersion},
      // The quantized types' arithmetic (integer dot or exact-f32 chain): different rows.
      {"kernel_quant_dot", std::string(kernels::quant_dot_name(kernels::quant_dot()))},
  };
}

core::Result<std::unique_ptr<Architecture>> make_random_qwen35(const Qwen35Config& cfg,
                                                               uint64_t seed,
                                                               const Qwen35Options& opts) {
  if (Status s = cfg.validate(); !s.is_ok()) return s;
  if (Status s = check_options(opts); !s.is_ok()) return s;
  const std::vector<TensorSlot> slots = tensor_slots(cfg);
  Qwen35Weights w = empty_weights(cfg);
  // Random init and packing are spread over the machine's threads: `small` has ~130M weights.
  core::ThreadPool pool(std::min(core::ThreadPool::hardware_threads(), 8));
  // Largest tensors first, so the embedding does not start last on a busy pool.
  std::vector<int64_t> order(slots.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
    return slots[size_t(x)].elements() > slots[size_t(y)].elements();
  });
  pool.parallel_for(int64_t(order.size()), [&](int64_t task) {
    const int64_t i = order[size_t(task)];
    // Rows made as the packing asks for them: the whole tensor as f32 (a zero-filled
    // std::vector until the twentieth session) was most of `anchorage serve`'s start on `small`.
    const TensorSlot& slot = slots[size_t(i)];
    place_tensor_rows(
        slot, opts.weight_dtype,
        [&](int64_t r0, int64_t r1, float* out) {
          random_tensor_rows(cfg, slot, seed, i, r0, r1, out);
        },
        &w);
  });
  return std::unique_ptr<Architecture>(new Qwen35Model(cfg, std::move(w), opts));
}

core::Result<std::unique_ptr<Qwen35Model>> make_qwen35_from_tensors(const Qwen35Tensors& t,
                                                                    const Qwen35Options& opts,
                                                                    core::ThreadPool* pool) {
  if (Status s = t.cfg.validate(); !s.is_ok()) return s;
  if (Status s = check_options(opts); !s.is_ok()) return s;
  const std::vector<TensorSlot> slots = tensor_slots(t.cfg);
  if (t.slots.size() != slots.size() || t.data.size() != slots.size()) {
    return Status::invalid_argument("tensor set does not match the config's tensor list");
  }
  for (size_t i = 0; i < slots.size(); ++i) {
    const TensorSlot& a = slots[i];
    const TensorSlot& b = t.slots[i];
    if (a.layer != b.layer || a.role != b.role || a.rows != b.rows || a.cols != b.cols ||
        int64_t(t.data[i].size()) != a.elements()) {
      return Status::invalid_argument("tensor " + std::to_string(i) + " (layer " +
                                      std::to_string(a.layer) + ") has the wrong shape");
    }
  }
  Qwen35Weights w = empty_weights(t.cfg);
  core::parallel_for(pool, int64_t(slots.size()), [&](int64_t i) {
    place_tensor(slots[size_t(i)], t.data[size_t(i)].data(), opts.weight_dtype, &w);
  });
  return std::make_unique<Qwen35Model>(t.cfg, std::move(w), opts);
}

}  // namespace anchorage::model::qwen35
