// SpillCodec: every frame decodes to the bytes it was made from (memcmp), on every kind, element
// size, odd length and thread count, on made-up and on real engine rows; the frame's bytes do
// not depend on the thread count; and a frame that is cut, lengthened or has any byte flipped
// is refused or decodes to other bytes (the spill's sums catch those), never a crash.
#include "cache/spill_codec.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/state_layout.h"
#include "engine/engine.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {
namespace {

using cache::SpillCodecKind;
using cache::SpillCodecOptions;
using cache::SpillCodecPool;

constexpr SpillCodecKind kKinds[] = {SpillCodecKind::kNone, SpillCodecKind::kZstd,
                                     SpillCodecKind::kBlosc};

std::vector<uint8_t> random_bytes(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = uint8_t(rng.next_u64() >> 56);
  return v;
}

// Numbers like a KV row's: f32 values near 1 with noisy low mantissa bytes.
std::vector<uint8_t> float_like(size_t n, uint64_t seed) {
  core::Rng rng(seed);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const float f = 0.5f + float(rng.next_u64() % 1000) / 1000.0f;
    std::memcpy(&v[i], &f, 4);
  }
  return v;
}

// Encodes and decodes `data`; expects a memcmp-equal round trip and returns the frame.
std::vector<uint8_t> round_trip(SpillCodecKind kind, const std::vector<uint8_t>& data, size_t e,
                                SpillCodecPool* pool, const SpillCodecOptions& o = {}) {
  std::vector<uint8_t> frame;
  const core::Status s = cache::spill_encode(kind, data.data(), data.size(), e, frame, o, pool);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  auto raw = cache::spill_frame_raw_bytes(frame.data(), frame.size());
  EXPECT_TRUE(raw.has_value());
  if (raw) {
    EXPECT_EQ(*raw, data.size());
  }
  std::vector<uint8_t> back(data.size() + 1, 0xA5);  // one guard byte past the end
  const core::Status d =
      cache::spill_decode(kind, frame.data(), frame.size(), back.data(), data.size(), e, pool);
  EXPECT_TRUE(d.is_ok()) << d.to_string();
  EXPECT_EQ(back[data.size()], 0xA5) << "wrote past out";
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0)
      << cache::spill_codec_name(kind) << " e=" << e << " n=" << data.size();
  return frame;
}

TEST(SpillCodec, NamesParseBack) {
  for (SpillCodecKind k : kKinds) {
    auto p = cache::parse_spill_codec(cache::spill_codec_name(k));
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(*p, k);
  }
  EXPECT_FALSE(cache::parse_spill_codec("lz4").has_value());
  EXPECT_FALSE(cache::parse_spill_codec("").has_value());
}

TEST(SpillCodec, RoundTripsEveryKindElementSizeLengthAndThreadCount) {
  SpillCodecOptions o;
  o.segment_bytes = 16 << 10;  // many segments, so the threads share the work
  std::unique_ptr<SpillCodecPool> pools[] = {nullptr, std::make_unique<SpillCodecPool>(1),
                                             std::make_unique<SpillCodecPool>(2),
                                             std::make_unique<SpillCodecPool>(4)};
  const size_t base = 200 << 10;
  for (size_t e : {size_t(4), size_t(2)}) {
    // Odd lengths too: a tail of n % e bytes, a length below one element, below one segment.
    for (size_t n : {base, base + 1, base + e - 1, base + e + 1, size_t(1), e - 1, size_t(0),
                     size_t(4097), size_t(16 << 10)}) {
      const std::vector<std::vector<uint8_t>> inputs = {
          random_bytes(n, n + e), std::vector<uint8_t>(n, 0), std::vector<uint8_t>(n, 0x3f),
          float_like(n, n * 7 + e)};
      for (SpillCodecKind kind : kKinds) {
        for (const std::vector<uint8_t>& data : inputs) {
          std::vector<uint8_t> first;
          for (auto& pool : pools) {
            const std::vector<uint8_t> frame = round_trip(kind, data, e, pool.get(), o);
            if (first.empty()) {
              first = frame;
            } else {
              EXPECT_EQ(frame, first) << "the frame depends on the thread count";
            }
          }
        }
      }
    }
  }
}

TEST(SpillCodec, FramePerSegmentAndBloscLz4RoundTrip) {
  SpillCodecOptions per_segment;
  per_segment.frame_per_plane = false;
  per_segment.segment_bytes = 8192;
  SpillCodecOptions lz4;
  lz4.blosc_compressor = "lz4";
  lz4.level = 5;
  SpillCodecPool pool(2);
  for (size_t e : {size_t(4), size_t(2), size_t(3)}) {
    const auto data = float_like(100003, e);
    round_trip(SpillCodecKind::kZstd, data, e, &pool, per_segment);
    round_trip(SpillCodecKind::kBlosc, data, e, &pool, lz4);
  }
}

TEST(SpillCodec, CompressibleDataShrinksAndIncompressibleCostsOnlyTheHeader) {
  const size_t n = 1 << 20;
  const std::vector<uint8_t> zeros(n, 0);
  const std::vector<uint8_t> noise = random_bytes(n, 3);
  for (SpillCodecKind kind : {SpillCodecKind::kZstd, SpillCodecKind::kBlosc}) {
    EXPECT_LT(round_trip(kind, zeros, 4, nullptr).size(), n / 100) << cache::spill_codec_name(kind);
    // Random bytes do not shrink: stored raw, the header its only cost.
    EXPECT_EQ(round_trip(kind, noise, 4, nullptr).size(), n + cache::kSpillFrameHeaderBytes);
    // The byte planes find the structure of numbers that interleaved bytes hide.
    EXPECT_LT(round_trip(kind, float_like(n, 5), 4, nullptr).size(), n * 3 / 4);
  }
  EXPECT_EQ(round_trip(SpillCodecKind::kNone, zeros, 4, nullptr).size(),
            n + cache::kSpillFrameHeaderBytes);
}

TEST(SpillCodec, PlanesBeatTheSameZstdOnInterleavedBytes) {
  // elem_bytes 1 is zstd on the bytes as they are; 4 splits the f32 planes first.
  const auto data = float_like(1 << 20, 9);
  const size_t interleaved = round_trip(SpillCodecKind::kZstd, data, 1, nullptr).size();
  const size_t planes = round_trip(SpillCodecKind::kZstd, data, 4, nullptr).size();
  EXPECT_LT(planes, interleaved);
}

// The byte planes run vectorized (AVX2) or as plain x86-64 code by the active ISA: the same
// frame either way, decodable by the other.
TEST(SpillCodec, ScalarAndVectorPlanesMakeTheSameFrame) {
  SpillCodecOptions o;
  o.segment_bytes = 64 << 10;
  const core::Isa was = core::active_isa();
  for (size_t e : {size_t(2), size_t(3), size_t(4), size_t(8)}) {
    const auto data = float_like(300007, e + 20);
    const auto vector_frame = round_trip(SpillCodecKind::kZstd, data, e, nullptr, o);
    core::set_active_isa(core::Isa::kScalar);
    const auto scalar_frame = round_trip(SpillCodecKind::kZstd, data, e, nullptr, o);
    core::set_active_isa(was);
    EXPECT_EQ(scalar_frame, vector_frame) << "e=" << e;
  }
}

// Rows and sections of a tiny qwen35 engine after a real prefill, for f32 and bf16 KV.
TEST(SpillCodec, RoundTripsRealEngineRowsAndState) {
  SpillCodecPool pool(2);
  for (core::DType kv : {core::DType::kF32, core::DType::kBF16}) {
    auto e = engine::Engine::create(make_tiny_qwen35(core::DType::kF32, kv),
                                    {.capacity = 1024, .n_threads = 1});
    ASSERT_TRUE(e.has_value());
    engine::Engine& engine = *e.value();
    const int64_t rows = 700;
    ASSERT_TRUE(engine.prefill(random_tokens(rows, engine.vocab_size(), 11)).is_ok());
    const core::StateLayout& layout = engine.layout();
    size_t kv_raw = 0, kv_zstd = 0;
    for (size_t i = 0; i < layout.views.size(); ++i) {
      const core::TensorSpec& spec = layout.views[i];
      ASSERT_EQ(spec.dtype, kv);
      std::vector<uint8_t> packed(size_t(rows * spec.bytes_per_token()));
      core::copy_rows_out(spec, engine.view_data(i), 0, rows, packed.data());
      const size_t elem = size_t(core::dtype_size(spec.dtype));
      for (SpillCodecKind kind : kKinds) {
        const auto frame = round_trip(kind, packed, elem, &pool);
        round_trip(kind, packed, elem, nullptr);
        if (kind == SpillCodecKind::kZstd) kv_zstd += frame.size();
      }
      kv_raw += packed.size();
    }
    // The exponent planes of real rows compress: the codec is worth its time on them.
    EXPECT_LT(kv_zstd, kv_raw) << core::dtype_name(kv);
    for (size_t i = 0; i < layout.sections.size(); ++i) {
      const core::TensorSpec& spec = layout.sections[i];
      const auto* p = static_cast<const uint8_t*>(engine.section_data(i));
      const std::vector<uint8_t> bytes(p, p + spec.bytes());
      for (SpillCodecKind kind : kKinds) {
        round_trip(kind, bytes, size_t(core::dtype_size(spec.dtype)), &pool);
      }
    }
  }
}

TEST(SpillCodec, RefusesBadArgumentsAndMismatchedFrames) {
  const auto data = float_like(50000, 2);
  std::vector<uint8_t> frame;
  EXPECT_EQ(cache::spill_encode(SpillCodecKind::kZstd, data.data(), data.size(), 0, frame).code(),
            core::StatusCode::kInvalidArgument);
  EXPECT_EQ(cache::spill_encode(SpillCodecKind::kZstd, data.data(), data.size(), 17, frame).code(),
            core::StatusCode::kInvalidArgument);
  SpillCodecOptions bad;
  bad.segment_bytes = 100;
  EXPECT_EQ(
      cache::spill_encode(SpillCodecKind::kZstd, data.data(), data.size(), 4, frame, bad).code(),
      core::StatusCode::kInvalidArgument);
  SpillCodecOptions no_such;
  no_such.blosc_compressor = "nope";
  EXPECT_EQ(cache::spill_encode(SpillCodecKind::kBlosc, data.data(), data.size(), 4, frame, no_such)
                .code(),
            core::StatusCode::kUnsupported);

  ASSERT_TRUE(
      cache::spill_encode(SpillCodecKind::kZstd, data.data(), data.size(), 4, frame).is_ok());
  std::vector<uint8_t> out(data.size() + 8);
  auto dec = [&](SpillCodecKind k, size_t n_out, size_t e) {
    return cache::spill_decode(k, frame.data(), frame.size(), out.data(), n_out, e);
  };
  EXPECT_TRUE(dec(SpillCodecKind::kZstd, data.size(), 4).is_ok());
  // Another kind, element size or output length than the frame's: refused, not guessed.
  EXPECT_EQ(dec(SpillCodecKind::kBlosc, data.size(), 4).code(), core::StatusCode::kCorruption);
  EXPECT_EQ(dec(SpillCodecKind::kNone, data.size(), 4).code(), core::StatusCode::kCorruption);
  EXPECT_EQ(dec(SpillCodecKind::kZstd, data.size(), 2).code(), core::StatusCode::kCorruption);
  EXPECT_EQ(dec(SpillCodecKind::kZstd, data.size() - 1, 4).code(), core::StatusCode::kCorruption);
  EXPECT_EQ(dec(SpillCodecKind::kZstd, data.size() + 8, 4).code(), core::StatusCode::kCorruption);
  EXPECT_FALSE(
      cache::spill_decode(SpillCodecKind::kZstd, frame.data(), 0, out.data(), data.size(), 4)
          .is_ok());
}

// Every flipped byte and every cut of a small frame of each kind, with several segments and a
// tail: a cut or a header byte is always refused; a flip elsewhere is refused, or decodes to
// other bytes (the spill's block sums catch those), or, for a bit the compressed stream does
// not use, to the same bytes; never a crash or a write outside out (guard bytes).
TEST(SpillCodec, EveryFlippedByteAndEveryCutIsRefusedOrDecodedInsideOut) {
  SpillCodecOptions o;
  o.segment_bytes = 4096;
  SpillCodecPool pool(2);
  const size_t n = 10003;  // three segments and a tail of 3 bytes
  auto data = float_like(n, 4);
  for (size_t i = 0; i < 2000; ++i) data[i] = 0;  // a segment that compresses well
  for (SpillCodecKind kind : kKinds) {
    std::vector<uint8_t> frame;
    ASSERT_TRUE(cache::spill_encode(kind, data.data(), n, 4, frame, o).is_ok());
    const size_t guard = 64;
    std::vector<uint8_t> out(n + 2 * guard);
    auto decode = [&](const std::vector<uint8_t>& f, SpillCodecPool* p) {
      std::fill(out.begin(), out.end(), 0x5A);
      const core::Status s =
          cache::spill_decode(kind, f.data(), f.size(), out.data() + guard, n, 4, p);
      for (size_t g = 0; g < guard; ++g) {
        EXPECT_EQ(out[g], 0x5A);
        EXPECT_EQ(out[guard + n + g], 0x5A);
      }
      return s;
    };
    int refused = 0, differed = 0, same = 0;
    for (size_t i = 0; i < frame.size(); ++i) {
      for (uint8_t flip : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xff)}) {
        std::vector<uint8_t> bad = frame;
        bad[i] ^= flip;
        const core::Status s = decode(bad, i % 2 == 0 ? &pool : nullptr);
        if (!s.is_ok()) {
          EXPECT_EQ(s.code(), core::StatusCode::kCorruption);
          ++refused;
        } else if (std::memcmp(out.data() + guard, data.data(), n) != 0) {
          ++differed;  // the spill's block sums catch these
        } else {
          ++same;  // a bit the compressed stream does not use: the bytes are right
        }
      }
      // Every header byte is checked.
      if (i < cache::kSpillFrameHeaderBytes) {
        std::vector<uint8_t> bad = frame;
        bad[i] ^= 0x01;
        EXPECT_FALSE(decode(bad, nullptr).is_ok()) << "header byte " << i;
      }
    }
    EXPECT_GT(refused, 0);
    // A raw frame has no unused bit; zstd and blosc streams have a few (padding bits).
    if (kind == SpillCodecKind::kNone) {
      EXPECT_EQ(same, 0);
    }
    EXPECT_LE(same, int(frame.size() / 100)) << cache::spill_codec_name(kind);
    for (size_t len = 0; len < frame.size(); ++len) {
      const std::vector<uint8_t> cut(frame.begin(), frame.begin() + long(len));
      EXPECT_FALSE(decode(cut, len % 2 == 0 ? &pool : nullptr).is_ok()) << "cut at " << len;
    }
    std::vector<uint8_t> longer = frame;
    longer.push_back(0);
    EXPECT_FALSE(decode(longer, nullptr).is_ok());
    EXPECT_TRUE(decode(frame, &pool).is_ok());
    EXPECT_EQ(std::memcmp(out.data() + guard, data.data(), n), 0);
    std::printf("%s: %zu bytes, flips: %d refused, %d decoded other bytes, %d the same\n",
                cache::spill_codec_name(kind), frame.size(), refused, differed, same);
  }
}

// The spill's overlap: blocks are encoded and decoded asynchronously, several in flight at
// once on one pool, and every one comes back whole.
TEST(SpillCodec, AsyncJobsOverlapOnOnePool) {
  SpillCodecPool pool(2);
  SpillCodecOptions o;
  o.segment_bytes = 32 << 10;
  const int blocks = 6;
  std::vector<std::vector<uint8_t>> data, frames(blocks), back(blocks);
  for (int b = 0; b < blocks; ++b) data.push_back(float_like(300000 + size_t(b) * 4, 100 + b));
  for (SpillCodecKind kind : kKinds) {
    std::vector<std::future<core::Status>> enc, dec;
    for (int b = 0; b < blocks; ++b)
      enc.push_back(
          pool.encode_async(kind, data[b].data(), data[b].size(), 4, &frames[size_t(b)], o));
    for (auto& f : enc) ASSERT_TRUE(f.get().is_ok());
    for (int b = 0; b < blocks; ++b) {
      back[size_t(b)].assign(data[size_t(b)].size(), 0);
      dec.push_back(pool.decode_async(kind, frames[size_t(b)].data(), frames[size_t(b)].size(),
                                      back[size_t(b)].data(), back[size_t(b)].size(), 4));
    }
    for (auto& f : dec) ASSERT_TRUE(f.get().is_ok());
    for (int b = 0; b < blocks; ++b) EXPECT_EQ(back[size_t(b)], data[size_t(b)]);
  }
  // A bad frame's future carries the refusal.
  std::vector<uint8_t> junk(100, 7), out(10);
  EXPECT_FALSE(pool.decode_async(SpillCodecKind::kZstd, junk.data(), junk.size(), out.data(), 10, 4)
                   .get()
                   .is_ok());
}

}  // namespace
}  // namespace anchorage::test
