#include "kernels/rope.h"

#include <cmath>

#include "core/check.h"
#include "kernels/vector_kernel_table.h"

namespace anchorage::kernels {

namespace {
constexpr int64_t kMaxHalf = 256;  // R/2 bound for the stack tables (R = 64 in every release)
}

// §3.3. inv_freq[i] = 1 / theta^(float(2i) / float(R)) and φ = float(p) · inv_freq[i], all in
// fp32 as HF computes them; cos φ and sin φ from libm (cosf, sinf). This part is scalar code
// outside the ISA builds, so the rotation gets the same tables whatever the ISA.
void rope_neox(float* x, int64_t T, int64_t ldx, int64_t n_heads, int64_t D, int64_t R,
               int64_t pos0, float theta) {
  const int64_t half = R / 2;
  ANCHORAGE_CHECK(R % 2 == 0 && R <= D && half <= kMaxHalf);
  float inv_freq[kMaxHalf];
  for (int64_t i = 0; i < half; ++i) {
    inv_freq[i] = 1.0f / std::pow(theta, float(2 * i) / float(R));
  }
  const VectorKernelTable& kt = vector_kernels();
  float cos_t[kMaxHalf];
  float sin_t[kMaxHalf];
  for (int64_t t = 0; t < T; ++t) {
    const float p = float(pos0 + t);  // exact below 2^24
    for (int64_t i = 0; i < half; ++i) {
      const float phi = p * inv_freq[i];
      cos_t[i] = std::cos(phi);
      sin_t[i] = std::sin(phi);
    }
    kt.rope_rotate(x + t * ldx, n_heads, D, R, cos_t, sin_t);
  }
}

}  // namespace anchorage::kernels
