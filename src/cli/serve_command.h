// `anchorage serve`: the OpenAI-compatible HTTP server (docs/http-api.md) on a qwen35 model
// (a GGUF file, --model, or random weights from a preset). Every flag has an environment variable,
// ANCHORAGE_ and the flag's name in upper case with '_' for '-' (ANCHORAGE_PORT,
// ANCHORAGE_MAX_BODY_BYTES); the command line wins. SIGTERM or SIGINT: stop taking requests, finish
// the running one, exit 0 (a second signal exits at once with 1). Exit codes: 0 ok, 1 a runtime
// failure (model, tokenizer, port), 2 bad usage.
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

// args: everything after `serve`.
int serve_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli
