// StopMatcher: finds the request's stop strings in generated text that arrives in pieces.
// Text that could still be the start of a stop string is held back, so a streamed response
// never shows part of a stop string; once one completes, the text before it is released and
// the rest is dropped (OpenAI: the stop sequence is not part of the output).
//
// The engine thread runs one (through GenerationJob::stop_after) to end the generation at
// the token that completes a stop string; the HTTP thread runs another over the same tokens
// to cut the text. Both see the same pieces, so both stop at the same place.
//
// Thread safety: one StopMatcher per stream, used by one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace anchorage::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Adds text; appends to *out what can be released now. After a match, feed does nothing.
  void feed(std::string_view text, std::string* out);
  // Releases what is held (no stop string can complete any more).
  void flush(std::string* out);
  bool matched() const { return matched_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
};

}  // namespace anchorage::server
