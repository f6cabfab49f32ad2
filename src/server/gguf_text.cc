// Tokenizer and chat template from GGUF metadata.
#include "server/gguf_text.h"

#include "core/page_populate.h"
#include "text/chat_template_family.h"

namespace anchorage::server {

using core::Result;
using core::Status;
using model::gguf::GgufFile;
using model::gguf::GgufType;
using model::gguf::GgufValue;

bool gguf_has_tokenizer(const GgufFile& f) {
  return f.find("tokenizer.ggml.tokens") != nullptr;
}

namespace {

Result<const std::vector<std::string_view>*> string_array(const GgufFile& f, const char* key) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return Status::not_found(std::string("gguf: missing key '") + key + "'");
  if (v->type != GgufType::kArray || v->elem != GgufType::kString) {
    return Status::corruption(std::string("gguf: key '") + key + "' is not a string array");
  }
  return &v->strings;
}

}  // namespace

Result<GgufVocab> gguf_vocab(const GgufFile& f) {
  auto model = f.get_string("tokenizer.ggml.model");
  if (!model) return model.error();
  if (*model != "gpt2") {
    return Status::unsupported("gguf: tokenizer.ggml.model '" + *model +
                               "' (only gpt2, byte-level BPE, is supported)");
  }
  GgufVocab v;
  auto pre = f.get_string("tokenizer.ggml.pre");
  if (!pre) return pre.error();
  v.pre = *pre;
  auto tokens = string_array(f, "tokenizer.ggml.tokens");
  if (!tokens) return tokens.error();
  v.tokens = *tokens;
  if (const GgufValue* types = f.find("tokenizer.ggml.token_type")) {
    auto t = types->as_int_array();
    if (!t)
      return Status::corruption("gguf: key 'tokenizer.ggml.token_type' is not an integer array");
    core::reserve_populated(v.token_types, t->size());
    v.token_types.assign(t->begin(), t->end());
  }
  auto merges = string_array(f, "tokenizer.ggml.merges");
  if (!merges) return merges.error();
  v.merges = *merges;
  return v;
}

Result<text::Tokenizer> gguf_tokenizer(const GgufFile& f) {
  auto v = gguf_vocab(f);
  if (!v) return v.error();
  auto t = text::Tokenizer::from_vocab(v->ref());
  if (!t)
    return Status(t.error().code() == core::StatusCode::kUnsupported
                      ? Status::unsupported("gguf: " + t.error().message())
                      : Status::corruption("gguf: " + t.error().message()));
  return t;
}

Status check_gguf_chat_template(const GgufFile& f, const std::string& forced) {
  if (!forced.empty()) return text::chat_template_family_by_name(forced).status();
  const GgufValue* t = f.find("tokenizer.chat_template");
  if (t == nullptr) return Status::ok();
  if (t->type != GgufType::kString) {
    return Status::corruption("gguf: key 'tokenizer.chat_template' is not a string");
  }
  return text::recognize_chat_template(t->str).status();
}

}  // namespace anchorage::server
