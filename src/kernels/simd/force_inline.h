// ANCHORAGE_FORCE_INLINE: for the V16 kernel bodies, whose helpers (exp_v, the block walkers
// and their lambdas) must inline: GCC otherwise keeps exp_v out of line in the AVX2 build,
// where V16 (two __m256) then travels through memory at every call, 5x slower. A macro only,
// so it may be included anywhere, even inside the ISA namespaces.
#pragma once

#define ANCHORAGE_FORCE_INLINE __attribute__((always_inline)) inline
// After a lambda's parameter list: [&](int64_t i) ANCHORAGE_LAMBDA_INLINE { ... }
#define ANCHORAGE_LAMBDA_INLINE __attribute__((always_inline))
