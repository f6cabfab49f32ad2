// SpillCodec: the session spill's lossless block codec (`--spill-codec zstd|blosc|none`;
// docs/spill-codec.md, every frame byte in docs/formats/spill-codec.md).
//
// A spill block is 1,024 rows of f32 or bf16 numbers. Their high bytes (sign and exponent) take
// few values and their low mantissa bytes are close to noise, so the bytes are split into byte
// planes (every element's first byte, then every second byte, ...) before zstd sees them: each
// plane is then one statistics, which a general compressor cannot find in interleaved bytes.
// kBlosc does the same with Debian's libblosc (its own byte shuffle and compressor), kept to
// measure ours against and as an alternative.
//
// The raw bytes are cut into segments (SpillCodecOptions::segment_bytes) that are encoded and
// decoded independently, so a block spreads over a SpillCodecPool's threads; the frame's bytes
// do not depend on the thread count. A part that does not shrink by more than 1/32 is stored
// raw, and a frame whose parts together do not shrink is stored raw whole, so incompressible
// data costs a 32-byte header and a copy.
//
// Decoding trusts nothing: every length in a frame is checked against the input and the
// output before a byte is read or written, and any malformed, short, long or mismatched frame
// is Status::corruption (or invalid_argument for the caller's own arguments), never a crash
// or a write outside `out`. The frame has no checksum of its own: a flipped payload byte may
// decode to other bytes, which the spill's block sums catch after the decode.
//
// Thread safety: the free functions are thread-safe (per-thread compression contexts).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "core/status.h"

namespace anchorage::cache {

enum class SpillCodecKind : uint8_t { kNone = 0, kZstd = 1, kBlosc = 2 };

// "none", "zstd", "blosc".
const char* spill_codec_name(SpillCodecKind kind);
// The flag's value: "none", "zstd" or "blosc"; InvalidArgument otherwise.
core::Result<SpillCodecKind> parse_spill_codec(std::string_view name);

struct SpillCodecOptions {
  // kZstd: the zstd level (negative levels are zstd's fast modes). kBlosc: blosc's clevel 1-9.
  int level = 1;
  // Raw bytes per independently coded segment (rounded down to a multiple of elem_bytes):
  // the unit of parallelism. Between 4 KiB and 64 MiB.
  size_t segment_bytes = size_t(1) << 20;
  // kZstd: one zstd frame per byte plane of a segment (true) or one per segment (false).
  bool frame_per_plane = true;
  // kBlosc: blosc's compressor, "zstd" or "lz4".
  const char* blosc_compressor = "zstd";
};

// Bytes of a frame's fixed header; elem_bytes is 1 to kSpillCodecMaxElemBytes.
inline constexpr size_t kSpillFrameHeaderBytes = 32;
inline constexpr size_t kSpillCodecMaxElemBytes = 16;

// The raw length a frame says it holds (from its header only): what `out` of spill_decode
// must hold. Corruption when the bytes are not a frame header.
core::Result<uint64_t> spill_frame_raw_bytes(const uint8_t* in, size_t n_in);

class SpillCodecPool;

// Encodes data[0, n) of elements of elem_bytes bytes into one frame in `out` (replaced).
// n need not be a multiple of elem_bytes: the last n % elem_bytes bytes are stored raw.
// With a pool, the segments are encoded on its threads (the call blocks until the frame is
// done; it must not be called from one of the pool's own threads). InvalidArgument for a bad
// elem_bytes or option, Unsupported when libblosc lacks the compressor.
core::Status spill_encode(SpillCodecKind kind, const uint8_t* data, size_t n, size_t elem_bytes,
                          std::vector<uint8_t>& out, const SpillCodecOptions& options = {},
                          SpillCodecPool* pool = nullptr);

// Decodes one frame in[0, n_in) of `kind` and elem_bytes into out[0, n_out): n_in must be the
// frame's exact length and n_out its raw length. Writes nothing outside out[0, n_out); on an
// error out's contents are unspecified.
core::Status spill_decode(SpillCodecKind kind, const uint8_t* in, size_t n_in, uint8_t* out,
                          size_t n_out, size_t elem_bytes, SpillCodecPool* pool = nullptr);

// A raw frame's N bytes where they lie in `in` (a frame of kind none always, of zstd or blosc
// when coding did not shrink it), after the checks spill_decode makes: a reader may use them in
// place instead of decoding them into a copy. nullptr for a coded frame (decode it);
// corruption as spill_decode's.
core::Result<const uint8_t*> spill_raw_bytes(SpillCodecKind kind, const uint8_t* in, size_t n_in,
                                             size_t n_out, size_t elem_bytes);

// A few worker threads for the codec's segments, and the asynchronous calls that let the spill
// overlap: compress block i + 1 while block i is written, decompress block i + 1 while the
// engine copies block i in. Jobs run in the order submitted, each spread over every thread.
class SpillCodecPool {
 public:
  // n_threads >= 1 worker threads (the caller's thread does not code in async calls).
  explicit SpillCodecPool(int n_threads);
  // Finishes every job submitted, then joins the threads.
  ~SpillCodecPool();
  SpillCodecPool(const SpillCodecPool&) = delete;
  SpillCodecPool& operator=(const SpillCodecPool&) = delete;

  int n_threads() const { return int(workers_.size()); }

  // As spill_encode / spill_decode, returning at once; the future is ready when the frame
  // (or the decoded bytes) are complete. `data`, `in`, `out` must stay valid, and `out`
  // untouched, until then.
  std::future<core::Status> encode_async(SpillCodecKind kind, const uint8_t* data, size_t n,
                                         size_t elem_bytes, std::vector<uint8_t>* out,
                                         const SpillCodecOptions& options = {});
  std::future<core::Status> decode_async(SpillCodecKind kind, const uint8_t* in, size_t n_in,
                                         uint8_t* out, size_t n_out, size_t elem_bytes);

  // Queues one task (the codec's segments; exposed for the codec's own jobs).
  void submit(std::function<void()> task);

 private:
  void worker_loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace anchorage::cache
