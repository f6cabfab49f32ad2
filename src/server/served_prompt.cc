#include "server/served_prompt.h"

#include <algorithm>

namespace anchorage::server {

std::string_view resume_policy_name(ResumePolicy p) {
  switch (p) {
    case ResumePolicy::kExact:
      return "exact";
    case ResumePolicy::kRows:
      return "rows";
  }
  return "exact";
}

std::optional<ResumePolicy> parse_resume_policy(std::string_view name) {
  if (name == "exact") return ResumePolicy::kExact;
  if (name == "rows") return ResumePolicy::kRows;
  return std::nullopt;
}

std::string_view alignment_name(Alignment a) {
  switch (a) {
    case Alignment::kNone:
      return "none";
    case Alignment::kText:
      return "text";
    case Alignment::kReplay:
      return "replay";
    case Alignment::kContinuation:
      return "continuation";
  }
  return "none";
}

ServedPrompt ServedPrompt::client(const std::vector<int32_t>& prompt) {
  ServedPrompt s;
  s.tokens = prompt;
  s.client_tokens = int64_t(prompt.size());
  s.same_as_client = int64_t(prompt.size());
  return s;
}

ServedPrompt ServedPrompt::made(std::vector<int32_t> served, const std::vector<int32_t>& prompt,
                                Alignment how) {
  ServedPrompt s;
  s.tokens = std::move(served);
  s.aligned = how;
  s.client_tokens = int64_t(prompt.size());
  const auto mismatch =
      std::mismatch(s.tokens.begin(), s.tokens.end(), prompt.begin(), prompt.end());
  s.same_as_client = int64_t(mismatch.first - s.tokens.begin());
  return s;
}

int64_t ServedPrompt::differing() const {
  // Equal sequences differ nowhere; a served prompt that is the client's plus more, or less,
  // differs from where they part.
  if (same_as_client == int64_t(tokens.size()) && client_tokens == int64_t(tokens.size())) return 0;
  return std::max<int64_t>(1, int64_t(tokens.size()) - same_as_client);
}

}  // namespace anchorage::server
