// TokenSink: the engine's per-token callback for one job (engine::GenerationOptions::on_token).
// For every sampled token it marks the tokens the output constraint hides, fills log-probs,
// keeps what the response cache stores, pushes the event to the client's stream, and says
// whether the generation goes on (the client left, or a stop string completed).
//
// Thread safety: the engine thread only, for the one job it was made for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cache/response_cache.h"
#include "engine/engine.h"
#include "server/generation_job.h"
#include "server/token_stream.h"

namespace anchorage::server {

class TokenSink {
 public:
  // keep_response: keep every token (with its log-probs) for the response cache.
  TokenSink(const GenerationJob& job, TokenStream& stream, const engine::Engine& engine,
            bool keep_response);

  // One sampled token: true to go on.
  bool operator()(int32_t token);

  // Indices (among sampled tokens) of those the client never saw.
  const std::vector<size_t>& hidden_sampled() const { return hidden_sampled_; }
  // The tokens kept for the response cache (keep_response), moved out.
  std::vector<cache::CachedToken> take_kept() { return std::move(kept_); }
  bool stopped_by_string() const { return stopped_by_string_; }
  int64_t first_token_ns() const { return first_token_ns_; }  // after submit; 0: none yet

 private:
  const GenerationJob& job_;
  TokenStream& stream_;
  const engine::Engine& engine_;
  const bool keep_response_;
  size_t sampled_ = 0;
  std::vector<size_t> hidden_sampled_;
  std::vector<cache::CachedToken> kept_;
  bool stopped_by_string_ = false;
  int64_t first_token_ns_ = 0;
};

}  // namespace anchorage::server
