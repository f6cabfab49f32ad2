// Tool-call ids for the OpenAI `tool_calls[].id` field. Deterministic: the same (seed, index)
// always gives the same id, so a replayed request (or a test) sees the same output; the server
// seeds with something unique per request so ids do not repeat across a conversation (clients
// send them back in later turns to pair tool results with calls).
//
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace anchorage::text {

// "call_" followed by 24 lowercase hex digits derived from (seed, index) with SplitMix64.
std::string make_tool_call_id(std::uint64_t seed, std::size_t index);

}  // namespace anchorage::text
