// PreTokenizer: the HF `Split` pre-tokenizer with a regex pattern and the `Isolated` behaviour
// (every match is a piece, and so is every stretch between matches), run with PCRE2 in UTF
// mode with its JIT compiler. This is the split of Qwen2/Qwen3 tokenizer.json files.
//
// `\s` and `\S` in the pattern are rewritten to the Unicode White_Space property (the class
// HF tokenizers' Oniguruma and Python's `regex` use), because PCRE2 also counts U+180E as a
// space and JavaScript counts U+FEFF but not U+0085. docs/tokenizer.md lists the differences.
//
// Threading: immutable after create(); split() may run on any number of threads at once
// (each call takes its own PCRE2 match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace anchorage::text {

class PreTokenizer {
 public:
  // Compiles pattern (PCRE2 syntax, as HF's tokenizer.json writes it). InvalidArgument when it
  // does not compile, Unsupported for a `\S` inside a character class.
  static core::Result<PreTokenizer> create(std::string_view pattern);

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // Appends the pieces of text (valid UTF-8, not checked again) to pieces, in order; they
  // concatenate to text. No piece is empty.
  void split(std::string_view text, std::vector<std::string_view>* pieces) const;

  // The pattern PCRE2 compiled (after the rewrite of `\s` and `\S`).
  const std::string& compiled_pattern() const;

 private:
  struct Regex;
  explicit PreTokenizer(std::unique_ptr<Regex> regex);
  std::unique_ptr<Regex> regex_;
};

// The rewrite create() applies: `\s` -> the White_Space class, `\S` -> its complement.
// Exposed for tests.
core::Result<std::string> rewrite_whitespace_classes(std::string_view pattern);

}  // namespace anchorage::text
