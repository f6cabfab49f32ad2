// replay_hidden: the client's copy of a conversation with the end anchor's hidden spans put
// back (docs/cache.md "Resident prefix", hidden spans and glue).
//
// `rows` are the tokens whose rows are in place up to the end anchor (the engine's own),
// `hidden` the spans among them the client never saw (sorted, disjoint, inside rows). The copy
// matches when, reading both in order, every token of the copy is the rows' own, except that
// next to a hidden span a run of whitespace-only tokens (`glue`, sorted ids) may differ on
// either side: the template renders the copy again and its whitespace there is not the rows'.
// Then the result is the rows' tokens up to the end anchor followed by the rest of the copy;
// otherwise nullopt. With no hidden spans it is "the copy starts with every row token".
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cache/hidden_span.h"

namespace anchorage::cache {

std::optional<std::vector<int32_t>> replay_hidden(std::span<const int32_t> rows,
                                                  std::span<const HiddenSpan> hidden,
                                                  std::span<const int32_t> prompt,
                                                  std::span<const int32_t> glue);

}  // namespace anchorage::cache
