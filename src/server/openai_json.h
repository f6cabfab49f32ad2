// OpenAI JSON rendering: the bodies of /v1/chat/completions and /v1/completions (whole and
// as stream chunks), usage, logprobs, /v1/models. Field by field as OpenAI sends them, so the
// official SDKs parse every one; docs/http-api.md shows each shape.
//
// Log-probabilities are f32 values written with the fewest digits that read back to the same
// f32 (shortest round-trip, at most 9 significant digits), so a client that parses the JSON
// number and rounds it to float gets the engine's bits.
//
// Thread safety: pure functions; the tokenizer's const methods are thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/choice_builder.h"
#include "server/completion_request.h"
#include "server/generation_job.h"

namespace anchorage::text {
class Tokenizer;
}

namespace anchorage::server {

using Json = nlohmann::ordered_json;

struct ResponseMeta {
  Endpoint endpoint = Endpoint::kChat;
  std::string id;       // "chatcmpl-…" / "cmpl-…"
  int64_t created = 0;  // unix seconds
  std::string model;
  bool include_usage = false;  // stream: every chunk carries "usage": null, then a usage chunk
};

// A token's bytes as one string that names them exactly: the text itself when the bytes are
// valid UTF-8, else "bytes:" and each byte as \xNN (OpenAI's spelling of partial characters in
// legacy completions logprobs). Keys of the completions' top_logprobs objects.
std::string token_spelling(std::string_view bytes);

// "stop", "length" or "tool_calls" (a chat that produced tool calls and stopped).
std::string_view finish_reason(JobEnd end, bool saw_tool_calls);

// The shortest decimal that reads back to f as float, as a JSON number.
Json logprob_number(float f);

// usage: prompt/completion/total tokens, prompt_tokens_details.cached_tokens and the
// anchorage extension (cache split, session source, timings).
Json render_usage(const JobOutcome& outcome, const SessionKey& session);

// One stream chunk for delta (chat: first = the chunk that opens with role "assistant").
// finish: "" while the choice goes on. text_offset: completions' running logprobs
// text_offset (bytes of token text before this chunk), advanced past the delta's tokens.
Json render_chunk(const ResponseMeta& meta, const text::Tokenizer& tokenizer,
                  const ChoiceDelta& delta, bool first, std::string_view finish,
                  int64_t* text_offset);
// A return_progress chunk while the prompt is read: no choices, llama-server's
// "prompt_progress": {total, cache, processed, time_ms}.
Json render_progress_chunk(const ResponseMeta& meta, const PromptProgress& progress);
// The last stream chunk when include_usage: no choices, the usage.
Json render_usage_chunk(const ResponseMeta& meta, Json usage);

// The whole (non-streamed) response.
Json render_response(const ResponseMeta& meta, const text::Tokenizer& tokenizer,
                     const ChoiceDelta& choice, bool logprobs, std::string_view finish, Json usage);

// What /v1/models says of the model beside its id, in llama-server's "meta" object: the
// context the server runs (clients size their prompts by it) and the vocabulary.
struct ModelMeta {
  int64_t n_ctx = 0;
  int64_t n_vocab = 0;
};
Json render_model(std::string_view name, int64_t created, const ModelMeta& meta);
Json render_models(std::string_view name, int64_t created, const ModelMeta& meta);

// Serialises with write_json (json_writer.h): shortest numbers, and invalid UTF-8 (a byte
// token's text) as U+FFFD; the exact bytes are in the logprobs' "bytes" arrays.
std::string dump_json(const Json& json);

}  // namespace anchorage::server
