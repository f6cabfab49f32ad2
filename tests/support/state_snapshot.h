// StateSnapshot: a test's copy of everything an engine's sequence is — length, the logits of
// the last position, every section and the rows [0, length) of every view — taken through
// the public state contract only (settle, layout, raw buffers, copy_rows_out), exactly as a
// cache tier would. Comparisons are memcmp: the exactness promises of docs/exactness.md are
// bit equality, never a tolerance.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/engine.h"

namespace anchorage::test {

struct StateSnapshot {
  int64_t length = 0;
  std::vector<float> logits;  // empty when the engine had none
  std::vector<std::vector<uint8_t>> sections;
  std::vector<std::vector<uint8_t>> views;  // packed rows [0, length)
};

// Copies the engine's state (settle() first, as every cache must).
StateSnapshot take_snapshot(engine::Engine& engine);
// Writes sections and view rows back and resume_at(snapshot.length): the caches' restore path.
void restore_snapshot(engine::Engine& engine, const StateSnapshot& snapshot);

// Bit equality of everything; on failure names the first differing tensor and byte.
::testing::AssertionResult same_state(const StateSnapshot& expected, const StateSnapshot& actual);
// Bit equality of two float arrays (logits); names the first differing index.
::testing::AssertionResult same_bits(const std::vector<float>& expected,
                                     const std::vector<float>& actual);

// A cold prefill of `tokens` from a reset engine, and its state.
StateSnapshot cold_snapshot(engine::Engine& engine, const std::vector<int32_t>& tokens);

// Resets the engine and overwrites every section and every view row with garbage, so a
// restore that skips a tensor (or a row) cannot pass on what an earlier prefill left there.
void scribble(engine::Engine& engine);

// Deterministic token ids in [0, vocab) from a seed.
std::vector<int32_t> random_tokens(int64_t n, int64_t vocab, uint64_t seed);

}  // namespace anchorage::test
