#include "text/added_token_matcher.h"

#include <algorithm>
#include <cstring>

namespace anchorage::text {

AddedTokenMatcher::AddedTokenMatcher(std::vector<Token> tokens) : tokens_(std::move(tokens)) {
  std::erase_if(tokens_, [](const Token& t) { return t.content.empty(); });
  std::stable_sort(tokens_.begin(), tokens_.end(), [](const Token& a, const Token& b) {
    const auto fa = static_cast<uint8_t>(a.content[0]), fb = static_cast<uint8_t>(b.content[0]);
    return fa != fb ? fa < fb : a.content.size() > b.content.size();
  });
  size_t t = 0;
  for (int b = 0; b < 256; ++b) {
    begin_[b] = static_cast<uint32_t>(t);
    while (t < tokens_.size() && static_cast<uint8_t>(tokens_[t].content[0]) == b) ++t;
  }
  begin_[256] = static_cast<uint32_t>(tokens_.size());
}

AddedTokenMatcher::Match AddedTokenMatcher::find(std::string_view text, size_t from) const {
  if (tokens_.empty()) return {text.size(), 0, -1};
  // Most vocabularies' added tokens share one first byte ('<' here): memchr for it.
  const bool one_first_byte = tokens_.front().content[0] == tokens_.back().content[0];
  for (size_t pos = from; pos < text.size();) {
    if (one_first_byte) {
      const void* hit =
          std::memchr(text.data() + pos, tokens_.front().content[0], text.size() - pos);
      if (hit == nullptr) break;
      pos = static_cast<const char*>(hit) - text.data();
    }
    const auto b = static_cast<uint8_t>(text[pos]);
    for (uint32_t i = begin_[b]; i < begin_[b + 1]; ++i) {
      const std::string& c = tokens_[i].content;
      if (text.compare(pos, c.size(), c) == 0) return {pos, c.size(), tokens_[i].id};
    }
    ++pos;
  }
  return {text.size(), 0, -1};
}

}  // namespace anchorage::text
