// GGUF -> Qwen35Config + Qwen35Weights (§6.2-6.6).
#include "model/gguf/qwen35_gguf_loader.h"

#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "kernels/quant.h"
#include "model/gguf/ggml_type.h"
#include "model/gguf/qwen35_gguf_names.h"
#include "model/qwen35/tensors.h"
#include "model/qwen35/weights.h"

namespace anchorage::model::gguf {

using core::DType;
using core::Result;
using core::Status;
using qwen35::LayerKind;
using qwen35::Qwen35Config;
using qwen35::TensorRole;
using qwen35::TensorSlot;

namespace {

// A tensor's rows as stored: `rows` rows of `cols` elements of `type`, either in the mapped
// file or owned (after a split).
struct RawRows {
  const uint8_t* data = nullptr;
  std::vector<uint8_t> owned;
  DType type = DType::kF32;
  int64_t rows = 0;
  int64_t cols = 0;
  std::string name;  // for errors

  int64_t row_bytes() const { return core::dtype_row_bytes(type, cols); }
  const uint8_t* row(int64_t i) const { return data + i * row_bytes(); }
};

// The rows `idx` of src, in that order: where src has them (a run of consecutive rows, as a
// fused projection's parts are), else copied.
RawRows take_rows(const RawRows& src, const std::vector<int64_t>& idx) {
  RawRows out;
  out.type = src.type;
  out.cols = src.cols;
  out.rows = int64_t(idx.size());
  out.name = src.name;
  const int64_t rb = src.row_bytes();
  bool run = !idx.empty() && src.owned.empty();
  for (size_t i = 1; run && i < idx.size(); ++i) run = idx[i] == idx[i - 1] + 1;
  if (run) {
    out.data = src.row(idx[0]);
    return out;
  }
  out.owned.resize(size_t(out.rows * rb));
  for (size_t i = 0; i < idx.size(); ++i) {
    std::memcpy(out.owned.data() + int64_t(i) * rb, src.row(idx[i]), size_t(rb));
  }
  out.data = out.owned.data();
  return out;
}

std::vector<int64_t> range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

std::string shape_of(const std::vector<int64_t>& ne) {
  std::string s = "{";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

class Loader {
 public:
  explicit Loader(const GgufFile& f) : f_(f) {}

  // The tensor `name`, checked against the expected GGUF shape `ne`.
  Result<RawRows> get(const std::string& name, const std::vector<int64_t>& ne,
                      const std::string& what) {
    const GgufTensorInfo* t = f_.tensor(name);
    if (t == nullptr)
      return Status::not_found("gguf: missing tensor '" + name + "' (" + what + ")");
    used_.insert(name);
    // A trailing 1 dimension is the same shape ({H, 1} for a [1, H] weight).
    std::vector<int64_t> got = t->ne;
    while (got.size() > ne.size() && got.back() == 1) got.pop_back();
    if (got != ne) {
      return Status::corruption("gguf: tensor '" + name + "' has shape " + t->shape_string() +
                                ", expected " + shape_of(ne) + " (" + what + ")");
    }
    const auto dt = dtype_of_ggml(t->ggml_type);
    if (!dt) {
      return Status::unsupported("gguf: tensor '" + name + "' has type " +
                                 ggml_type_label(t->ggml_type) +
                                 ", which anchorage does not read (F32, F16, BF16, Q8_0, Q4_K, "
                                 "Q6_K are supported)");
    }
    RawRows r;
    r.data = t->data;
    r.type = *dt;
    r.cols = ne[0];
    r.rows = t->elements() / ne[0];
    r.name = name;
    return r;
  }
  bool has(const std::string& name) const { return f_.tensor(name) != nullptr; }
  const std::set<std::string>& used() const { return used_; }

 private:
  const GgufFile& f_;
  std::set<std::string> used_;
};

// What to place for one slot: the rows, and whether to transpose [rows][cols] first (conv).
struct Job {
  TensorSlot slot;
  RawRows src;
  bool transpose = false;
};

std::vector<float> to_f32(const RawRows& r) {
  std::vector<float> x(size_t(r.rows * r.cols));
  for (int64_t i = 0; i < r.rows; ++i) {
    kernels::dequantize_row(r.type, r.row(i), x.data() + i * r.cols, r.cols);
  }
  return x;
}

// Builds the jobs of the GDN projections of layer l (qwen3next's fused forms included).
Status gdn_projection_jobs(Loader* ld, const Qwen35Config& c, const std::string& arch, int64_t l,
                           std::vector<Job>* jobs) {
  const int64_t H = c.hidden_size, n_k = c.linear_num_key_heads, n_v = c.linear_num_value_heads;
  const int64_t d_k = c.linear_key_head_dim, d_v = c.linear_value_head_dim, r = c.r();
  const int64_t kd = c.key_dim(), vd = c.value_dim();
  const std::string what = "GDN layer " + std::to_string(l);
  auto slot = [&](TensorRole role, int64_t rows, int64_t cols) {
    return TensorSlot{l, role, rows, cols};
  };
  const std::string ssm_in = layer_tensor_name(l, "ssm_in.weight");
  if (arch == "qwen3next" && ld->has(ssm_in) && !ld->has(tensor_name(TensorRole::kGdnQkv, l))) {
    // Legacy fused in_proj_qkvz: per key head g a block [q_g | k_g | v (r heads) | z (r heads)].
    auto fused = ld->get(ssm_in, {H, 2 * kd + 2 * vd}, what + ", legacy fused qkvz");
    if (!fused) return fused.error();
    const int64_t G = 2 * d_k + 2 * r * d_v;
    std::vector<int64_t> qkv, z;
    for (int64_t g = 0; g < n_k; ++g)
      for (int64_t u = 0; u < d_k; ++u) qkv.push_back(g * G + u);
    for (int64_t g = 0; g < n_k; ++g)
      for (int64_t u = 0; u < d_k; ++u) qkv.push_back(g * G + d_k + u);
    for (int64_t g = 0; g < n_k; ++g)
      for (int64_t u = 0; u < r * d_v; ++u) qkv.push_back(g * G + 2 * d_k + u);
    for (int64_t g = 0; g < n_k; ++g)
      for (int64_t u = 0; u < r * d_v; ++u) z.push_back(g * G + 2 * d_k + r * d_v + u);
    jobs->push_back({slot(TensorRole::kGdnQkv, c.conv_dim(), H), take_rows(*fused, qkv)});
    jobs->push_back({slot(TensorRole::kGdnZ, vd, H), take_rows(*fused, z)});
  } else {
    auto qkv = ld->get(tensor_name(TensorRole::kGdnQkv, l), {H, c.conv_dim()}, what);
    if (!qkv) return qkv.error();
    auto z = ld->get(tensor_name(TensorRole::kGdnZ, l), {H, vd}, what);
    if (!z) return z.error();
    jobs->push_back({slot(TensorRole::kGdnQkv, c.conv_dim(), H), std::move(*qkv)});
    jobs->push_back({slot(TensorRole::kGdnZ, vd, H), std::move(*z)});
  }
  const std::string ssm_ba = layer_tensor_name(l, "ssm_ba.weight");
  if (arch == "qwen3next" && ld->has(ssm_ba) && !ld->has(tensor_name(TensorRole::kGdnB, l))) {
    // Fused in_proj_ba: per key head g a block [b (r heads) | a (r heads)].
    auto ba = ld->get(ssm_ba, {H, 2 * n_v}, what + ", fused ba");
    if (!ba) return ba.error();
    std::vector<int64_t> b, a;
    for (int64_t g = 0; g < n_k; ++g)
      for (int64_t u = 0; u < r; ++u) {
        b.push_back(g * 2 * r + u);
        a.push_back(g * 2 * r + r + u);
      }
    jobs->push_back({slot(TensorRole::kGdnB, n_v, H), take_rows(*ba, b)});
    jobs->push_back({slot(TensorRole::kGdnA, n_v, H), take_rows(*ba, a)});
  } else {
    auto b = ld->get(tensor_name(TensorRole::kGdnB, l), {H, n_v}, what);
    if (!b) return b.error();
    auto a = ld->get(tensor_name(TensorRole::kGdnA, l), {H, n_v}, what);
    if (!a) return a.error();
    jobs->push_back({slot(TensorRole::kGdnB, n_v, H), std::move(*b)});
    jobs->push_back({slot(TensorRole::kGdnA, n_v, H), std::move(*a)});
  }
  return Status::ok();
}

// The attention projections of layer l: separate q/k/v, or one fused attn_qkv.
Status attention_projection_jobs(Loader* ld, const Qwen35Config& c, int64_t l,
                                 std::vector<Job>* jobs) {
  const int64_t H = c.hidden_size;
  const int64_t qd = 2 * c.num_attention_heads * c.head_dim;
  const int64_t kvd = c.num_key_value_heads * c.head_dim;
  const std::string what = "attention layer " + std::to_string(l);
  const std::string fused_name = layer_tensor_name(l, "attn_qkv.weight");
  if (ld->has(fused_name) && !ld->has(tensor_name(TensorRole::kAttnQ, l))) {
    auto fused = ld->get(fused_name, {H, qd + 2 * kvd}, what + ", fused qkv");
    if (!fused) return fused.error();
    jobs->push_back({{l, TensorRole::kAttnQ, qd, H}, take_rows(*fused, range(0, qd))});
    jobs->push_back({{l, TensorRole::kAttnK, kvd, H}, take_rows(*fused, range(qd, qd + kvd))});
    jobs->push_back(
        {{l, TensorRole::kAttnV, kvd, H}, take_rows(*fused, range(qd + kvd, qd + 2 * kvd))});
    return Status::ok();
  }
  for (auto [role, rows] : {std::pair{TensorRole::kAttnQ, qd}, std::pair{TensorRole::kAttnK, kvd},
                            std::pair{TensorRole::kAttnV, kvd}}) {
    auto t = ld->get(tensor_name(role, l), {H, rows}, what);
    if (!t) return t.error();
    jobs->push_back({{l, role, rows, H}, std::move(*t)});
  }
  return Status::ok();
}

// Every slot of tensor_slots(c), from the file.
Result<std::vector<Job>> plan_jobs(const GgufFile& f, const Qwen35Config& c,
                                   const std::string& arch, Loader* ld) {
  std::vector<Job> jobs;
  std::set<std::pair<int64_t, TensorRole>> done;
  for (const TensorSlot& s : qwen35::tensor_slots(c)) {
    if (done.count({s.layer, s.role})) continue;
    const size_t before = jobs.size();
    if (s.role == TensorRole::kGdnQkv) {
      if (Status st = gdn_projection_jobs(ld, c, arch, s.layer, &jobs); !st.is_ok()) return st;
    } else if (s.role == TensorRole::kAttnQ) {
      if (Status st = attention_projection_jobs(ld, c, s.layer, &jobs); !st.is_ok()) return st;
    } else if (s.role == TensorRole::kGdnZ || s.role == TensorRole::kGdnB ||
               s.role == TensorRole::kGdnA || s.role == TensorRole::kAttnK ||
               s.role == TensorRole::kAttnV) {
      continue;  // placed with the qkv / q projection
    } else if (s.role == TensorRole::kMoeGateExps &&
               !ld->has(tensor_name(TensorRole::kMoeGateExps, s.layer)) &&
               ld->has(layer_tensor_name(s.layer, "ffn_gate_up_exps.weight"))) {
      // Packed experts: per expert e, F_e gate rows then F_e up rows.
      const int64_t H = c.hidden_size, Fe = c.moe_intermediate_size, E = c.num_experts;
      auto gu = ld->get(layer_tensor_name(s.layer, "ffn_gate_up_exps.weight"), {H, 2 * Fe, E},
                        "layer " + std::to_string(s.layer) + ", packed gate|up experts");
      if (!gu) return gu.error();
      std::vector<int64_t> gate, up;
      for (int64_t e = 0; e < E; ++e) {
        for (int64_t i = 0; i < Fe; ++i) {
          gate.push_back(e * 2 * Fe + i);
          up.push_back(e * 2 * Fe + Fe + i);
        }
      }
      jobs.push_back({{s.layer, TensorRole::kMoeGateExps, E * Fe, H}, take_rows(*gu, gate)});
      jobs.push_back({{s.layer, TensorRole::kMoeUpExps, E * Fe, H}, take_rows(*gu, up)});
    } else {
      const std::string what = s.layer < 0 ? "global" : "layer " + std::to_string(s.layer);
      auto t = ld->get(tensor_name(s.role, s.layer), gguf_shape(c, s), what);
      if (!t) return t.error();
      jobs.push_back({s, std::move(*t), s.role == TensorRole::kGdnConv});
    }
    for (size_t i = before; i < jobs.size(); ++i)
      done.insert({jobs[i].slot.layer, jobs[i].slot.role});
  }
  (void)f;
  return jobs;
}

// keep: the file, when linear layers read it in place (RawRows without a copy of their own).
Status place(const Job& j, qwen35::Qwen35Weights* w, const std::shared_ptr<const void>& keep) {
  if (j.slot.role == TensorRole::kGdnSsmA) {
    for (float v : to_f32(j.src)) {
      if (!(v < 0.0f)) {
        return Status::corruption("gguf: tensor '" + j.src.name +
                                  "' holds a value >= 0; ssm_a must hold -exp(A_log) < 0");
      }
    }
  }
  if (!j.transpose) {
    qwen35::place_tensor_raw(j.slot, j.src.data, j.src.type, w,
                             j.src.owned.empty() ? keep : nullptr);
    return Status::ok();
  }
  // The conv weight: [conv_dim][K] in the file, [K][conv_dim] in ours.
  const std::vector<float> x = to_f32(j.src);
  const int64_t rows = j.src.rows, cols = j.src.cols;
  std::vector<float> t(x.size());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < cols; ++k) t[size_t(k * rows + i)] = x[size_t(i * cols + k)];
  qwen35::place_tensor(j.slot, t.data(), DType::kF32, w);
  return Status::ok();
}

// blk.N.* with N >= n_layer: an MTP block, which anchorage does not run.
bool is_mtp_tensor(const std::string& name, int64_t n_layer) {
  if (name.rfind("blk.", 0) != 0) return false;
  int64_t n = 0;
  size_t i = 4;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return false;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && n < (int64_t(1) << 40))
    n = n * 10 + (name[i++] - '0');
  return n >= n_layer;
}

}  // namespace

Result<std::unique_ptr<qwen35::Qwen35Model>> load_qwen35_gguf(const GgufFile& f,
                                                              const qwen35::Qwen35Options& opts,
                                                              core::ThreadPool* pool) {
  auto cfg = qwen35_config_from_gguf(f);
  if (!cfg) return cfg.error();
  if (opts.kv_dtype != DType::kF32 && opts.kv_dtype != DType::kBF16) {
    return Status::unsupported("kv dtype must be f32 or bf16");
  }
  const std::string arch = cfg->model_type;
  Loader ld(f);
  auto jobs = plan_jobs(f, *cfg, arch, &ld);
  if (!jobs) return jobs.error();
  for (const GgufTensorInfo& t : f.tensors()) {
    if (ld.used().count(t.name) || is_mtp_tensor(t.name, cfg->num_hidden_layers)) continue;
    return Status::unsupported("gguf: unexpected tensor '" + t.name + "' (" + t.shape_string() +
                               ") for a " + arch + " model");
  }
  qwen35::Qwen35Weights w = qwen35::empty_weights(*cfg);
  std::shared_ptr<const void> keep;
  if (opts.defer_packing) {
    keep = f.shared_file();
    // What the placing reads now is small tensors spread over the file (norms, conv taps,
    // ssm_a, dt_bias: ~150 on the 0.8B shape), and on a cold file each read is a page fault
    // waited for. Queued at once, the reads overlap (docs/performance.md "Start-up").
    constexpr int64_t kSmall = int64_t(1) << 20;
    for (const Job& j : *jobs) {
      const int64_t bytes = j.src.rows * j.src.row_bytes();
      if (j.src.owned.empty() && bytes <= kSmall) f.file().prefetch(j.src.data, size_t(bytes));
    }
  }
  std::vector<Status> status(jobs->size());
  core::parallel_for(pool, int64_t(jobs->size()),
                     [&](int64_t i) { status[size_t(i)] = place((*jobs)[size_t(i)], &w, keep); });
  for (const Status& s : status) {
    if (!s.is_ok()) return s;
  }
  qwen35::Qwen35Options o = opts;
  return std::make_unique<qwen35::Qwen35Model>(*cfg, std::move(w), o);
}

}  // namespace anchorage::model::gguf
