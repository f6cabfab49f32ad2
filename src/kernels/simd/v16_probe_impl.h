// The test hook of VectorKernelTable: one V16 operation applied to 16 lanes, so a test can
// compare the scalar, AVX2 and AVX-512 builds op by op (tests/kernels/v16_test.cc). Included
// once per ISA inside its namespace by kernels/vector_kernels_*.cc, after exp_impl.h.
// Includes nothing.

inline void v16_probe(V16Op op, const float* a, const float* b, const float* c, int n, float* out) {
  const V16 x = V16::load(a);
  const V16 y = V16::load(b);
  const V16 z = V16::load(c);
  const V16 zero = V16::zero();
  V16 r = zero;
  switch (op) {
    case V16Op::kAdd:
      r = x + y;
      break;
    case V16Op::kSub:
      r = x - y;
      break;
    case V16Op::kMul:
      r = x * y;
      break;
    case V16Op::kDiv:
      r = x / y;
      break;
    case V16Op::kFma:
      r = V16::fma(x, y, z);
      break;
    case V16Op::kMax:
      r = V16::max(x, y);
      break;
    case V16Op::kMin:
      r = V16::min(x, y);
      break;
    case V16Op::kSqrt:
      r = V16::sqrt(x);
      break;
    case V16Op::kRound:
      r = V16::round(x);
      break;
    case V16Op::kPow2i:
      r = V16::pow2i(x);
      break;
    case V16Op::kSelectLt:
      r = V16::select_lt(x, y, z, x);
      break;
    case V16Op::kNeg:
      r = -x;
      break;
    case V16Op::kReduceAdd:
      r = V16::bcast(x.reduce_add());
      break;
    case V16Op::kReduceMax:
      r = V16::bcast(x.reduce_max());
      break;
    case V16Op::kLoadPartial:
      r = V16::load_partial(a, n);
      break;
    case V16Op::kStorePartial:
      z.store(out);
      x.store_partial(out, n);
      return;
    case V16Op::kLoadBf16:
      r = V16::load_bf16(reinterpret_cast<const uint16_t*>(a));
      break;
    case V16Op::kLoadBf16Partial:
      r = V16::load_bf16_partial(reinterpret_cast<const uint16_t*>(a), n);
      break;
    case V16Op::kLane:
      for (int i = 0; i < 16; ++i) out[i] = x.lane(i);
      return;
    case V16Op::kExp:
      r = exp_v(x);
      break;
    case V16Op::kSigmoid:
      r = sigmoid_v(x);
      break;
    case V16Op::kSilu:
      r = silu_v(x);
      break;
    case V16Op::kCount:
      break;
  }
  r.store(out);
}
