// The integer-dot setting and the activation quantizer (kernels/quant_dot.h). Baseline code on
// purpose: every ISA's kernels read the activations this one function writes, so their
// quantization cannot differ between ISAs.
#include "kernels/quant_dot.h"

#include <atomic>
#include <bit>
#include <cstdlib>

#include "core/check.h"

namespace anchorage::kernels {

namespace {

std::atomic<int>& setting() {
  static std::atomic<int> q = [] {
    QuantDot want = QuantDot::kInt8;
    const char* env = std::getenv("ANCHORAGE_QUANT_DOT");
    if (env) ANCHORAGE_CHECK_MSG(parse_quant_dot(env, &want), "ANCHORAGE_QUANT_DOT: f32 or int8");
    return int(want);
  }();
  return q;
}

int64_t round_up(int64_t v, int64_t a) {
  return (v + a - 1) / a * a;
}

// One block of n inputs (see quant_dot.h). The max runs on the bits of |x| (for non-negative
// floats the integer order is the float order), so it is exact in any order and vectorises;
// the rounding is the add-and-subtract of 1.5 * 2^23, which rounds |v| <= 127 to the nearest
// integer, ties to even, in the default rounding mode.
float quantize_block(const float* x, int64_t n, int8_t* q) {
  uint32_t mb = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t b = std::bit_cast<uint32_t>(x[i]) & 0x7fffffffu;
    mb = b > mb ? b : mb;
  }
  const float d = std::bit_cast<float>(mb) / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] * id;
    v = v == v ? v : 0.0f;
    v = v > -127.0f ? v : -127.0f;
    v = v < 127.0f ? v : 127.0f;
    v = (v + 0x1.8p23f) - 0x1.8p23f;
    q[i] = int8_t(int(v));
  }
  return d;
}

}  // namespace

QuantDot quant_dot() {
  return QuantDot(setting().load(std::memory_order_relaxed));
}

void set_quant_dot(QuantDot q) {
  setting().store(int(q), std::memory_order_relaxed);
}

std::string_view quant_dot_name(QuantDot q) {
  return q == QuantDot::kInt8 ? "int8" : "f32";
}

bool parse_quant_dot(std::string_view s, QuantDot* out) {
  if (s == "int8") {
    *out = QuantDot::kInt8;
  } else if (s == "f32") {
    *out = QuantDot::kF32;
  } else {
    return false;
  }
  return true;
}

bool int8_dot_type(core::DType t) {
  if (quant_dot() != QuantDot::kInt8) return false;
  return t == core::DType::kQ8_0 || t == core::DType::kQ4_K || t == core::DType::kQ6_K ||
         t == core::DType::kQ4_0 || t == core::DType::kIQ4_NL || t == core::DType::kQ5_K ||
         t == core::DType::kIQ4_XS || t == core::DType::kQ5_0 || t == core::DType::kQ4_1 ||
         t == core::DType::kQ5_1 || t == core::DType::kQ3_K || t == core::DType::kQ2_K;
}

ActFormat act_format(core::DType weight_type, int64_t K) {
  ActFormat f;
  // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and IQ4_NL have 32-input weight blocks; the K-quants and
  // IQ4_XS 256-input ones.
  const bool k_quant = weight_type != core::DType::kQ8_0 && weight_type != core::DType::kQ4_0 &&
                       weight_type != core::DType::kIQ4_NL && weight_type != core::DType::kQ5_0 &&
                       weight_type != core::DType::kQ4_1 && weight_type != core::DType::kQ5_1;
  f.block = k_quant ? 256 : 32;
  f.sum_block = k_quant ? 16 : 32;
  ANCHORAGE_CHECK(K % f.block == 0);
  f.d_offset = round_up(K, 64);
  f.s_offset = f.d_offset + 4 * (K / f.block);
  f.row_bytes = round_up(f.s_offset + 4 * (K / f.sum_block), 64);
  return f;
}

void quantize_act_row(core::DType weight_type, const float* x, int64_t K, uint8_t* row) {
  const ActFormat f = act_format(weight_type, K);
  int8_t* q = reinterpret_cast<int8_t*>(row);
  float* d = reinterpret_cast<float*>(row + f.d_offset);
  int32_t* s = reinterpret_cast<int32_t*>(row + f.s_offset);
  for (int64_t b = 0; b < K / f.block; ++b)
    d[b] = quantize_block(x + b * f.block, f.block, q + b * f.block);
  for (int64_t b = 0; b < K / f.sum_block; ++b) {
    int32_t sum = 0;
    for (int64_t i = 0; i < f.sum_block; ++i) sum += q[b * f.sum_block + i];
    s[b] = sum;
  }
}

}  // namespace anchorage::kernels
