// libFuzzer target: arbitrary bytes as a /v1/chat/completions and as a /v1/completions body.
// Whatever the bytes, the parser returns a request or an ApiError naming a field, never
// crashes, hangs or reads out of bounds; an accepted chat request renders through the Qwen3
// template, and every error renders as JSON. Built with clang (-fsanitize=fuzzer,address,
// undefined) by tests/fuzz/tests.cmake and run for a bounded time by ctest, seeded with the
// opencode trace bodies (tests/corpus/chat_requests/) and tests/corpus/request_parser/.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/check.h"
#include "server/api_error.h"
#include "server/json_writer.h"
#include "server/request_parser.h"
#include "text/qwen3_chat_template.h"

using anchorage::server::ApiError;
using anchorage::server::CompletionRequest;

namespace {

void check_error(const ApiError& e) {
  ANCHORAGE_CHECK(e.http_status >= 400 && e.http_status < 500);
  ANCHORAGE_CHECK(!e.message.empty());
  const std::string body = anchorage::server::render_error_body(e);
  ANCHORAGE_CHECK(body.rfind("{\"error\":{\"message\":", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Bytes before a first newline, if any, are the x-session-id header; the rest is the body
  // (compact JSON, as clients send it, has no raw newline).
  std::string_view body(reinterpret_cast<const char*>(data), size);
  std::optional<std::string_view> header;
  if (const size_t nl = body.find('\n'); nl != std::string_view::npos) {
    header = body.substr(0, nl);
    body.remove_prefix(nl + 1);
  }

  CompletionRequest chat;
  if (auto e = anchorage::server::parse_chat_body(body, header, &chat)) {
    check_error(*e);
  } else {
    ANCHORAGE_CHECK(!chat.chat.messages.empty());
    const std::string prompt = anchorage::text::render_qwen3_prompt(chat.chat);
    ANCHORAGE_CHECK(!prompt.empty());
  }
  CompletionRequest completion;
  if (auto e = anchorage::server::parse_completion_body(body, header, &completion)) {
    check_error(*e);
  } else {
    ANCHORAGE_CHECK(completion.prompt_is_ids || completion.prompt_ids.empty());
  }
  return 0;
}
