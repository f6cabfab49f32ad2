// Row norms (docs/model.md §0, §2.4, §2.9). One fixed reduction order per row: the
// canonical 16-lane order (lane l sums x[i]·x[i] for i ≡ l mod 16 with an FMA chain in
// increasing i from +0, the last partial block padded with +0, then lanes fold 8, 4, 2, 1 as
// V16::reduce_add does). Then, pinned (kernels/norm_impl.h):
//   rms:  inv = 1 / sqrt(ss / float(d) + eps);  y[i] = (x[i] · inv) · w[i]
//   l2:   inv = 1 / sqrt(ss + eps);             x[i] = (x[i] · inv) · scale
// Same bits for any batch, thread count and ISA. Single-threaded; rows are independent, so
// callers may split rows over threads. Output may alias the input (same leading dim).
#pragma once

#include <cstdint>

namespace anchorage::kernels {

// y[t] = x[t] / sqrt(mean(x[t]^2) + eps) * w  (plain; GGUF-style weights with +1 folded).
// x: [T][ldx], y: [T][ldy] (may alias x when ldx == ldy), w: [d].
void rmsnorm(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps, float* y,
             int64_t ldy);

// The same with the zero-centred weight (1 + w), HF's RMSNorm1p: y[i] = (x[i] · inv) · (1 + w[i]),
// the sum 1 + w[i] rounded to fp32 (bit-identical to rmsnorm with weights float(1 + w)).
void rmsnorm_1p(const float* x, int64_t T, int64_t d, int64_t ldx, const float* w, float eps,
                float* y, int64_t ldy);

// In place, for each of T rows and n_heads heads of width d at x[t*ldx + h*d]:
// x = x / sqrt(sum(x^2) + eps) * scale. A zero vector stays zero. (§2.4: eps 1e-6 inside the
// root; the query additionally takes scale = 1/sqrt(d_k).)
void l2norm_heads(float* x, int64_t T, int64_t n_heads, int64_t d, int64_t ldx, float eps,
                  float scale);

// §2.9 gated RMSNorm: for each row t and head h (width d):
// y = (o / sqrt(mean(o^2) + eps) * w) * silu(z). o, z, y: [T][n_heads*d] with leading dims.
// Pinned: y[i] = ((o[i] · inv) · w[i]) · silu(z[i]), silu as in activation.h.
void gated_rmsnorm(const float* o, int64_t ldo, const float* z, int64_t ldz, int64_t T,
                   int64_t n_heads, int64_t d, const float* w, float eps, float* y, int64_t ldy);

}  // namespace anchorage::kernels
