// OpProfile: where a forward spends its time, by kind of op (the per-kernel breakdown in
// bench/ and `anchorage run --profile`). Filled only when a ForwardRequest carries one.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/clock.h"

namespace anchorage::model {

enum class OpKind : int {
  kEmbed = 0,
  kNorm,
  kGemm,      // every projection except the head
  kConv,      // causal conv1d + SiLU
  kGdnGates,  // beta, g, L2 norms of q and k
  kGdn,       // the recurrence
  kRope,
  kAttention,
  kActivation,  // SwiGLU, sigmoid gate, gated norm, residual adds
  kHead,        // final norm + LM head
  kCount
};

std::string_view op_kind_name(OpKind k);

struct OpProfile {
  std::array<int64_t, size_t(OpKind::kCount)> ns{};
  void add(OpKind k, int64_t dt_ns) { ns[size_t(k)] += dt_ns; }
  int64_t total_ns() const {
    int64_t t = 0;
    for (auto v : ns) t += v;
    return t;
  }
};

// Times one scope into profile (no-op when profile is null).
class OpTimer {
 public:
  OpTimer(OpProfile* p, OpKind k) : p_(p), k_(k), t0_(p ? core::now_ns() : 0) {}
  ~OpTimer() {
    if (p_) p_->add(k_, core::now_ns() - t0_);
  }
  OpTimer(const OpTimer&) = delete;
  OpTimer& operator=(const OpTimer&) = delete;

 private:
  OpProfile* p_;
  OpKind k_;
  int64_t t0_;
};

}  // namespace anchorage::model
