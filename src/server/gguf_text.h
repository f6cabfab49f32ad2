// The text side of a GGUF model file: its tokenizer (tokenizer.ggml.*) and its chat template
// (tokenizer.chat_template), checked against what the server can render. docs/gguf.md
// "Tokenizer and template". Functions of an immutable file; thread-safe.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "model/gguf/gguf_file.h"
#include "text/bpe_vocab.h"
#include "text/tokenizer.h"

namespace anchorage::server {

// True when the file carries a vocabulary (tokenizer.ggml.tokens).
bool gguf_has_tokenizer(const model::gguf::GgufFile& f);

// The vocabulary of the file. Unsupported for a tokenizer.ggml.model other than "gpt2";
// NotFound / Corruption naming a missing or malformed key.
core::Result<text::BpeVocab> gguf_vocab(const model::gguf::GgufFile& f);

// gguf_vocab + Tokenizer::from_vocab.
core::Result<text::Tokenizer> gguf_tokenizer(const model::gguf::GgufFile& f);

// Checks that prompts for this file can be rendered: `forced` (--chat-template) non-empty
// names a known family and wins; otherwise the file's template, when it has one, must be
// recognised (text/chat_template_family.h). A file without a template renders as Qwen3.
core::Status check_gguf_chat_template(const model::gguf::GgufFile& f, const std::string& forced);

}  // namespace anchorage::server
