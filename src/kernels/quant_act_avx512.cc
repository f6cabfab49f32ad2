// The activation quantizer's loops built for AVX-512 at -O3 (quant_act_impl.h).
#include "kernels/quant_act_impl.h"

namespace anchorage::kernels::quant_detail {

void quantize_row_avx512(const float* x, int64_t K, int64_t block, int64_t sum_block, int8_t* q,
                         float* d, int32_t* s) {
  quantize_row_any(x, K, block, sum_block, q, d, s);
}

}  // namespace anchorage::kernels::quant_detail
