#include "server/openai_json.h"

#include <charconv>
#include <cstdlib>

#include "server/json_writer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace anchorage::server {
namespace {

Json token_bytes_array(std::string_view bytes) {
  Json a = Json::array();
  for (const unsigned char c : bytes) a.push_back(int(c));
  return a;
}

// One token as a logprobs entry: its text (JSON turns bytes that are not UTF-8 into U+FFFD),
// its log-probability, its raw bytes (what names it exactly, as OpenAI's chat logprobs do)
// and its id (an extension: the bytes of two ids may render alike).
Json token_entry(const text::Tokenizer& tok, int32_t id, float logprob) {
  const std::string_view b = tok.token_bytes(id);
  return Json{{"token", std::string(b)},
              {"logprob", logprob_number(logprob)},
              {"bytes", token_bytes_array(b)},
              {"id", id}};
}

// Chat format: {"token", "logprob", "bytes", "id", "top_logprobs": [{"token", "logprob",
// "bytes", "id"}]}.
Json content_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& events) {
  Json content = Json::array();
  for (const TokenEvent& e : events) {
    Json entry = token_entry(tok, e.token, e.logprob);
    Json top = Json::array();
    for (const auto& [id, lp] : e.top) top.push_back(token_entry(tok, id, lp));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return content;
}

Json chat_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& events) {
  return Json{{"content", content_logprobs(tok, events)}, {"refusal", nullptr}};
}

// Legacy completions format: parallel arrays, top_logprobs as {token: logprob} objects, plus
// "content", the chat format's entries (bytes and ids). Strings in the legacy arrays and keys
// are token_spelling()s, so two byte tokens no longer share the key U+FFFD.
Json completion_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& events,
                         int64_t* text_offset) {
  Json tokens = Json::array(), lps = Json::array(), tops = Json::array(), offsets = Json::array();
  for (const TokenEvent& e : events) {
    const std::string_view bytes = tok.token_bytes(e.token);
    tokens.push_back(token_spelling(bytes));
    lps.push_back(logprob_number(e.logprob));
    Json top = Json::object();
    for (const auto& [id, lp] : e.top)
      top[token_spelling(tok.token_bytes(id))] = logprob_number(lp);
    tops.push_back(std::move(top));
    offsets.push_back(*text_offset);
    *text_offset += int64_t(bytes.size());
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(lps)},
              {"top_logprobs", std::move(tops)},
              {"text_offset", std::move(offsets)},
              {"content", content_logprobs(tok, events)}};
}

Json tool_calls_json(const ChoiceDelta& delta, bool streamed) {
  Json calls = Json::array();
  for (size_t i = 0; i < delta.tool_calls.size(); ++i) {
    const text::ToolCall& c = delta.tool_calls[i];
    Json call = Json::object();
    if (streamed) call["index"] = delta.first_tool_index + i;
    call["id"] = c.id;
    call["type"] = "function";
    call["function"] = Json{{"name", c.name}, {"arguments", c.arguments}};
    calls.push_back(std::move(call));
  }
  return calls;
}

Json envelope(const ResponseMeta& meta, bool chunk) {
  const bool chat = meta.endpoint == Endpoint::kChat;
  Json j = Json::object();
  j["id"] = meta.id;
  j["object"] = chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  j["created"] = meta.created;
  j["model"] = meta.model;
  j["system_fingerprint"] = nullptr;
  return j;
}

Json finish_json(std::string_view finish) {
  return finish.empty() ? Json(nullptr) : Json(std::string(finish));
}

}  // namespace

std::string token_spelling(std::string_view bytes) {
  if (text::utf8_is_valid(bytes)) return std::string(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "bytes:";
  for (const unsigned char c : bytes) {
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string_view finish_reason(JobEnd end, bool saw_tool_calls) {
  switch (end) {
    case JobEnd::kStopToken:
    case JobEnd::kStopString:
      return saw_tool_calls ? "tool_calls" : "stop";
    case JobEnd::kLength:
      return "length";
    case JobEnd::kCancelled:
    case JobEnd::kFailed:
      break;
  }
  return "stop";  // not rendered: a cancelled or failed job has no finish chunk
}

Json logprob_number(float f) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), f);  // shortest round-trip for float
  *r.ptr = '\0';
  // That decimal read as a double is the double JSON carries; write_json prints the shortest
  // decimal that reads back to this double, which is that same text (or a shorter one), and
  // any reader that rounds it to float gets f again.
  return Json(std::strtod(buf, nullptr));
}

Json render_usage(const JobOutcome& o, const SessionKey& session) {
  Json usage = Json::object();
  usage["prompt_tokens"] = o.prompt_tokens;
  usage["completion_tokens"] = o.completion_tokens;
  usage["total_tokens"] = o.prompt_tokens + o.completion_tokens;
  const CacheSplit& c = o.cache;
  usage["prompt_tokens_details"] = Json{{"cached_tokens", c.usage_cached_tokens()}};
  Json cache = Json{{"tier", std::string(c.tier())},
                    {"source", std::string(cache::name(c.source))},
                    {"cached", o.cached_tokens},
                    {"reread", o.reread_tokens},
                    {"exact", c.exact},
                    {"served", std::string(c.served_name())},
                    {"aligned", std::string(alignment_name(c.aligned))},
                    {"hidden", o.hidden_tokens}};
  // Under the rows policy: what the client sent, and how many served tokens are not its own.
  if (c.differing > 0) {
    cache["client_prompt_tokens"] = c.client_tokens;
    cache["differing"] = c.differing;
  }
  // A continuation: usage.prompt_tokens is the client's prompt; this is what the engine read.
  if (c.reports_served_count()) cache["served_prompt_tokens"] = c.prompt_tokens;
  auto ms = [](int64_t ns) { return double(ns / 1000) / 1000.0; };
  Json timings = Json{{"queue_ms", ms(o.queue_ns)},
                      {"prefill_ms", ms(o.prefill_ns)},
                      {"decode_ms", ms(o.decode_ns)},
                      {"first_token_ms", ms(o.first_token_ns)},
                      {"cache_begin_ms", ms(o.cache_begin_ns)},
                      {"cache_anchor_ms", ms(o.cache_anchor_ns)},
                      {"cache_end_ms", ms(o.cache_end_ns)}};
  usage["anchorage"] = Json{{"cache", std::move(cache)},
                            {"session", std::string(session_source_name(session.source))},
                            {"timings", std::move(timings)}};
  return usage;
}

Json render_chunk(const ResponseMeta& meta, const text::Tokenizer& tok, const ChoiceDelta& delta,
                  bool first, std::string_view finish, int64_t* text_offset) {
  Json j = envelope(meta, /*chunk=*/true);
  Json choice = Json::object();
  choice["index"] = 0;
  const bool with_logprobs = !delta.logprobs.empty();
  if (meta.endpoint == Endpoint::kChat) {
    Json d = Json::object();
    if (first) d["role"] = "assistant";
    if (first || !delta.content.empty()) d["content"] = delta.content;
    if (!delta.reasoning.empty()) d["reasoning_content"] = delta.reasoning;
    if (!delta.tool_calls.empty()) d["tool_calls"] = tool_calls_json(delta, /*streamed=*/true);
    choice["delta"] = std::move(d);
    choice["logprobs"] = with_logprobs ? chat_logprobs(tok, delta.logprobs) : Json(nullptr);
  } else {
    choice["text"] = delta.content;
    choice["logprobs"] =
        with_logprobs ? completion_logprobs(tok, delta.logprobs, text_offset) : Json(nullptr);
  }
  choice["finish_reason"] = finish_json(finish);
  j["choices"] = Json::array({std::move(choice)});
  if (meta.include_usage) j["usage"] = nullptr;
  return j;
}

Json render_progress_chunk(const ResponseMeta& meta, const PromptProgress& p) {
  Json j = envelope(meta, /*chunk=*/true);
  j["choices"] = Json::array();
  j["prompt_progress"] = Json{
      {"total", p.total}, {"cache", p.cache}, {"processed", p.processed}, {"time_ms", p.time_ms}};
  if (meta.include_usage) j["usage"] = nullptr;
  return j;
}

Json render_usage_chunk(const ResponseMeta& meta, Json usage) {
  Json j = envelope(meta, /*chunk=*/true);
  j["choices"] = Json::array();
  j["usage"] = std::move(usage);
  return j;
}

Json render_response(const ResponseMeta& meta, const text::Tokenizer& tok,
                     const ChoiceDelta& choice, bool logprobs, std::string_view finish,
                     Json usage) {
  Json j = envelope(meta, /*chunk=*/false);
  Json c = Json::object();
  c["index"] = 0;
  if (meta.endpoint == Endpoint::kChat) {
    Json m = Json::object();
    m["role"] = "assistant";
    // OpenAI sends null content beside tool calls when there is no text.
    const bool null_content = choice.content.empty() && !choice.tool_calls.empty();
    m["content"] = null_content ? Json(nullptr) : Json(choice.content);
    if (!choice.reasoning.empty()) m["reasoning_content"] = choice.reasoning;
    if (!choice.tool_calls.empty()) m["tool_calls"] = tool_calls_json(choice, false);
    m["refusal"] = nullptr;
    c["message"] = std::move(m);
    c["logprobs"] = logprobs ? chat_logprobs(tok, choice.logprobs) : Json(nullptr);
  } else {
    int64_t offset = 0;
    c["text"] = choice.content;
    c["logprobs"] = logprobs ? completion_logprobs(tok, choice.logprobs, &offset) : Json(nullptr);
  }
  c["finish_reason"] = finish_json(finish);
  j["choices"] = Json::array({std::move(c)});
  j["usage"] = std::move(usage);
  return j;
}

Json render_model(std::string_view name, int64_t created, const ModelMeta& meta) {
  return Json{{"id", std::string(name)},
              {"object", "model"},
              {"created", created},
              {"owned_by", "anchorage"},
              {"meta", Json{{"n_ctx", meta.n_ctx}, {"n_vocab", meta.n_vocab}}}};
}

Json render_models(std::string_view name, int64_t created, const ModelMeta& meta) {
  return Json{{"object", "list"}, {"data", Json::array({render_model(name, created, meta)})}};
}

std::string dump_json(const Json& json) {
  return write_json(json);
}

}  // namespace anchorage::server
