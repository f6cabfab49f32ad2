// dequantize_row() against the NumPy reference's dequantization (tests/model/numpy_ref/
// quant_ref.py, written independently from the block layouts): random blocks of every
// quantized type, every code bit random and the f16 scales random finite halves, must decode
// to the reference's f32 bits exactly. The ctest quant_numpy_ref_golden checks that the
// committed files are what the script computes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "kernels/packed_weight.h"
#include "kernels/quant.h"

namespace anchorage::kernels {
namespace {

using core::DType;

std::vector<uint8_t> read_golden(DType t) {
  const std::string path = std::string(ANCHORAGE_SOURCE_DIR) + "/tests/golden/quant/" +
                           std::string(core::dtype_name(t)) + ".bin";
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

class QuantGolden : public ::testing::TestWithParam<DType> {};

TEST_P(QuantGolden, DequantizeRowMatchesNumpyBits) {
  const DType t = GetParam();
  const std::vector<uint8_t> g = read_golden(t);
  const int64_t be = core::dtype_block_elements(t), bb = core::dtype_block_bytes(t);
  const int64_t per_block = bb + 4 * be;
  ASSERT_GT(g.size(), 0u) << core::dtype_name(t);
  ASSERT_EQ(int64_t(g.size()) % per_block, 0) << core::dtype_name(t);
  const int64_t nb = int64_t(g.size()) / per_block, n = nb * be;
  std::vector<float> y(size_t(n), -1.0f);
  dequantize_row(t, g.data(), y.data(), n);
  const uint8_t* want = g.data() + nb * bb;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t got_bits, want_bits;
    std::memcpy(&got_bits, &y[size_t(i)], 4);
    std::memcpy(&want_bits, want + 4 * i, 4);
    ASSERT_EQ(got_bits, want_bits) << core::dtype_name(t) << " element " << i << " (block "
                                   << i / be << ", position " << i % be << ")";
  }
  // The same blocks packed as a weight (rows of one block each, as many rows as blocks) read
  // back the same values through at() and every panel unpacker.
  const PackedWeight w = PackedWeight::from_rows(g.data(), t, nb, be, t);
  for (int64_t r = 0; r < nb; ++r) {
    for (int64_t c = 0; c < be; ++c) {
      float v = w.at(r, c);
      ASSERT_EQ(std::memcmp(&v, want + 4 * (r * be + c), 4), 0)
          << core::dtype_name(t) << " row " << r << " col " << c;
    }
  }
  // And every ISA's panel unpacker, the GEMM's reader, gives the same bits.
  const core::Isa saved = core::active_isa();
  for (core::Isa isa : {core::Isa::kScalar, core::Isa::kAvx2, core::Isa::kAvx512}) {
    if (int(isa) > int(core::detected_isa())) continue;
    core::set_active_isa(isa);
    std::vector<float> out(static_cast<size_t>(be * PackedWeight::kPanel));
    for (int64_t p = 0; p < w.n_panels(); ++p) {
      w.unpack_panel(p, 0, be, out.data());
      for (int64_t lane = 0; lane < PackedWeight::kPanel && p * 32 + lane < nb; ++lane) {
        for (int64_t c = 0; c < be; ++c) {
          ASSERT_EQ(
              std::memcmp(&out[size_t(c * 32 + lane)], want + 4 * ((p * 32 + lane) * be + c), 4), 0)
              << core::dtype_name(t) << " " << core::isa_name(isa) << " row " << p * 32 + lane
              << " col " << c;
        }
      }
    }
  }
  core::set_active_isa(saved);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, QuantGolden,
                         ::testing::Values(DType::kQ8_0, DType::kQ4_0, DType::kQ4_1, DType::kQ5_0,
                                           DType::kQ5_1, DType::kIQ4_NL, DType::kQ2_K, DType::kQ3_K,
                                           DType::kQ4_K, DType::kQ5_K, DType::kQ6_K,
                                           DType::kIQ4_XS),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(core::dtype_name(info.param));
                         });

// quantize_row() of the new types writes valid blocks that decode near the input: relative
// rms error under a per-type limit (measured values in the comment), an all-zero block decodes
// to +0.0 exactly, and each block's error stays within the block's own range.
TEST(QuantGolden, NewTypesRoundTrip) {
  struct Case {
    DType t;
    double limit;
  };
  // Measured on this data (uniform [-1, 1) with every 97th value x20, which sets the step of
  // its block): q4_0 0.179, q4_1 0.104, q5_0 0.109, q5_1 0.051, q5_k 0.053, q3_k 0.151,
  // q2_k 0.309, iq4_nl 0.169, iq4_xs 0.169. Limits ~1.3x that: a wrong scale or code order
  // gives errors near 1.
  const Case cases[] = {{DType::kQ4_0, 0.23}, {DType::kQ4_1, 0.14},   {DType::kQ5_0, 0.14},
                        {DType::kQ5_1, 0.07}, {DType::kQ5_K, 0.07},   {DType::kQ3_K, 0.2},
                        {DType::kQ2_K, 0.4},  {DType::kIQ4_NL, 0.22}, {DType::kIQ4_XS, 0.22}};
  const int64_t n = 2048;
  std::vector<float> x(static_cast<size_t>(n));
  uint64_t state = 12345;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[size_t(i)] = float(int64_t(state >> 40) - (int64_t(1) << 23)) / float(1 << 23);
    if (i % 97 == 0) x[size_t(i)] *= 20.0f;
  }
  for (int64_t i = 512; i < 768; ++i) x[size_t(i)] = 0.0f;
  for (const Case& c : cases) {
    std::vector<uint8_t> q(size_t(core::dtype_row_bytes(c.t, n)));
    quantize_row(c.t, x.data(), q.data(), n);
    std::vector<float> y(static_cast<size_t>(n));
    dequantize_row(c.t, q.data(), y.data(), n);
    double e2 = 0.0, x2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const double e = double(y[size_t(i)]) - x[size_t(i)];
      e2 += e * e;
      x2 += double(x[size_t(i)]) * x[size_t(i)];
    }
    const double rel = std::sqrt(e2 / x2);
    std::printf("[ %s: relative rms error %.3f ]\n", std::string(core::dtype_name(c.t)).c_str(),
                rel);
    EXPECT_LT(rel, c.limit) << core::dtype_name(c.t);
    for (int64_t i = 512; i < 768; ++i) {
      uint32_t bits;
      std::memcpy(&bits, &y[size_t(i)], 4);
      ASSERT_EQ(bits, 0u) << core::dtype_name(c.t) << " element " << i;
    }
  }
}

// parse_dtype is dtype_name's inverse for every type, and the block sizes are ggml's.
TEST(QuantGolden, NamesAndBlockSizes) {
  struct Want {
    const char* name;
    int64_t be, bb;
  };
  const Want want[] = {{"q4_0", 32, 18},   {"q4_1", 32, 20},   {"q5_0", 32, 22},
                       {"q5_1", 32, 24},   {"q2_k", 256, 84},  {"q3_k", 256, 110},
                       {"q5_k", 256, 176}, {"iq4_nl", 32, 18}, {"iq4_xs", 256, 136}};
  for (const Want& w : want) {
    DType t;
    ASSERT_TRUE(core::parse_dtype(w.name, &t)) << w.name;
    EXPECT_EQ(core::dtype_name(t), w.name);
    EXPECT_TRUE(core::dtype_is_quantized(t)) << w.name;
    EXPECT_EQ(core::dtype_block_elements(t), w.be) << w.name;
    EXPECT_EQ(core::dtype_block_bytes(t), w.bb) << w.name;
  }
}

}  // namespace
}  // namespace anchorage::kernels
