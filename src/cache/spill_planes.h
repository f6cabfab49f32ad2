// Byte planes, the spill codec's transform (src/cache/spill_codec.h): m elements of e bytes in,
// every element's byte 0, then every byte 1, ... out; and back. Plain loops with the element
// size fixed at compile time for 2, 4 and 8, which the compiler vectorizes: the files are
// built at -O3 (the scalar one for any x86-64, the _avx2 one reached through core::active_isa,
// as the kernels are). At -O2 the same loops ran at 1.8 GB/s, a third of zstd's own time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anchorage::cache {

// dst[b * m + i] = src[i * e + b] for every element i < m and byte b < e.
void split_byte_planes(const uint8_t* src, size_t m, size_t e, uint8_t* dst);
// The inverse: dst[i * e + b] = src[b * m + i].
void join_byte_planes(const uint8_t* src, size_t m, size_t e, uint8_t* dst);

namespace planes_detail {
void split_avx2(const uint8_t* src, size_t m, size_t e, uint8_t* dst);
void join_avx2(const uint8_t* src, size_t m, size_t e, uint8_t* dst);
}  // namespace planes_detail

}  // namespace anchorage::cache
