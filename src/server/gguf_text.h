// The text side of a GGUF model file: its tokenizer (tokenizer.ggml.*) and its chat template
// (tokenizer.chat_template), checked against what the server can render. docs/gguf.md
// "Tokenizer and template". Functions of an immutable file; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "model/gguf/gguf_file.h"
#include "text/bpe_vocab.h"
#include "text/tokenizer.h"

namespace anchorage::server {

// True when the file carries a vocabulary (tokenizer.ggml.tokens).
bool gguf_has_tokenizer(const model::gguf::GgufFile& f);

// The vocabulary of a file: its tokens and merges where the file holds them (f must outlive
// it), the token types and the pre-tokenizer name copied out.
struct GgufVocab {
  const std::vector<std::string_view>* tokens = nullptr;
  std::vector<int32_t> token_types;
  const std::vector<std::string_view>* merges = nullptr;
  std::string pre;

  text::BpeVocabRef ref() const {
    text::BpeVocabRef r;
    r.tokens = *tokens;
    r.token_types = token_types;
    r.merges = *merges;
    r.pre = pre;
    return r;
  }
};

// The vocabulary of the file. Unsupported for a tokenizer.ggml.model other than "gpt2";
// NotFound / Corruption naming a missing or malformed key.
core::Result<GgufVocab> gguf_vocab(const model::gguf::GgufFile& f);

// gguf_vocab + Tokenizer::from_vocab.
core::Result<text::Tokenizer> gguf_tokenizer(const model::gguf::GgufFile& f);

// Checks that prompts for this file can be rendered: `forced` (--chat-template) non-empty
// names a known family and wins; otherwise the file's template, when it has one, must be
// recognised (text/chat_template_family.h). A file without a template renders as Qwen3.
core::Status check_gguf_chat_template(const model::gguf::GgufFile& f, const std::string& forced);

}  // namespace anchorage::server
