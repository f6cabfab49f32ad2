// libFuzzer target: the session spill's codec (src/cache/spill_codec.h,
// docs/formats/spill-codec.md). Two modes, by the first byte:
//   even  the rest is a frame: decoded with the kind, element size and length its own header
//         names (lengths up to 1 MiB), so the fuzzer reaches the part table and the
//         decompressors. Whatever the bytes, spill_decode returns a Status and never writes
//         outside out (guard bytes around it, ASan inside it).
//   odd   the rest is raw data: encoded with a kind, element size and segment size taken from
//         the next bytes, decoded back (must be memcmp-equal), then decoded again with one
//         byte of the frame flipped (any result but a crash).
// Built with clang by tests/fuzz/tests.cmake and run for a bounded time by ctest.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cache/spill_codec.h"
#include "core/check.h"

namespace {

using anchorage::cache::SpillCodecKind;
constexpr size_t kGuard = 32;
constexpr uint8_t kGuardByte = 0xA7;

void decode_guarded(SpillCodecKind kind, const uint8_t* in, size_t n_in, size_t n_out, size_t e,
                    std::vector<uint8_t>& out) {
  out.assign(n_out + 2 * kGuard, kGuardByte);
  const auto s = anchorage::cache::spill_decode(kind, in, n_in, out.data() + kGuard, n_out, e);
  (void)s;
  for (size_t g = 0; g < kGuard; ++g) {
    ANCHORAGE_CHECK(out[g] == kGuardByte);
    ANCHORAGE_CHECK(out[kGuard + n_out + g] == kGuardByte);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> out;
  if (data[0] % 2 == 0) {
    const uint8_t* f = data + 1;
    const size_t n = size - 1;
    if (n < anchorage::cache::kSpillFrameHeaderBytes) {
      decode_guarded(SpillCodecKind::kZstd, f, n, 16, 4, out);
      return 0;
    }
    auto raw = anchorage::cache::spill_frame_raw_bytes(f, n);
    const size_t n_out = raw && *raw <= (1u << 20) ? size_t(*raw) : 64;
    const size_t e = f[6] >= 1 && f[6] <= 16 ? f[6] : 4;
    decode_guarded(SpillCodecKind(f[5] % 3), f, n, n_out, e, out);
    return 0;
  }
  if (size < 4) return 0;
  const SpillCodecKind kind = SpillCodecKind(data[1] % 3);
  const size_t e = size_t(data[2] % 16) + 1;
  anchorage::cache::SpillCodecOptions o;
  o.segment_bytes = 4096 << (data[3] % 4);
  o.frame_per_plane = (data[3] & 0x10) == 0;
  o.blosc_compressor = (data[3] & 0x20) == 0 ? "zstd" : "lz4";
  const uint8_t* raw = data + 4;
  const size_t n = size - 4;
  std::vector<uint8_t> frame;
  ANCHORAGE_CHECK(anchorage::cache::spill_encode(kind, raw, n, e, frame, o).is_ok());
  out.assign(n + 1, 0);
  ANCHORAGE_CHECK(
      anchorage::cache::spill_decode(kind, frame.data(), frame.size(), out.data(), n, e).is_ok());
  ANCHORAGE_CHECK(n == 0 || std::memcmp(out.data(), raw, n) == 0);
  // One flipped byte, chosen by the data: a Status or other bytes, never a crash.
  if (!frame.empty()) {
    const size_t at = (n > 0 ? raw[0] * 131 + raw[n - 1] : 0) % frame.size();
    frame[at] ^= uint8_t(1u << (size % 8));
    decode_guarded(kind, frame.data(), frame.size(), n, e, out);
  }
  return 0;
}
