// `anchorage journal FILE`: a request journal (serve --journal) summed up per session: requests,
// follow-ups that re-read no more than their new tokens, token totals, re-reads beyond the new
// tokens, responses that were not exact. Exit codes: 0 ok, 1 the file cannot be read, 2 usage.
#pragma once

#include <string_view>
#include <vector>

namespace anchorage::cli {

int journal_command(const std::vector<std::string_view>& args);

}  // namespace anchorage::cli
