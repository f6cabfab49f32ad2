// BpeVocab <-> TokenizerSpec, and Tokenizer::from_vocab.
#include <algorithm>
#include <future>
#include <span>
#include <string_view>
#include <vector>

#include "text/bpe_vocab.h"
#include "text/byte_level.h"
#include "text/tokenizer.h"
#include "text/vocab_resolve.h"

namespace anchorage::text {

using core::Result;
using core::Status;

namespace {

constexpr int64_t kMaxTokens = int64_t{1} << 24;

// Qwen2 / Qwen3 (and Qwen3-Next): the Split regex of their tokenizer.json.
constexpr const char* kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen3.5: the same with combining marks (\p{M}) kept inside letter runs.
constexpr const char* kQwen35Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}"
    "\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// The raw bytes of every merge's left then right half, in rank order (push_merge_half).
Result<TokenBytes> merge_halves(std::span<const std::string_view> merges) {
  TokenBytes halves;
  size_t merge_bytes = 0;
  for (std::string_view m : merges) merge_bytes += m.size();
  // Bounds the halves and BpeModel's joined merges alike (a merged token's raw bytes are
  // never more than its "left right" string's).
  if (merge_bytes > TokenBytes::kMaxBytes)
    return Status::invalid_argument("tokenizer.ggml.merges: more than 4 GiB of merge strings");
  halves.reserve(2 * merges.size(), merge_bytes);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    std::string_view left, right;
    if (!split_merge(merges[rank], &left, &right)) {
      return Status::invalid_argument("tokenizer.ggml.merges[" + std::to_string(rank) +
                                      "]: expected \"left right\"");
    }
    push_merge_half(left, &halves);
    push_merge_half(right, &halves);
  }
  return halves;
}

}  // namespace

std::string pre_tokenizer_pattern(std::string_view pre) {
  if (pre == "qwen2") return kQwen2Pattern;
  if (pre == "qwen35") return kQwen35Pattern;
  return "";
}

BpeVocabRef::BpeVocabRef(const BpeVocab& v) : token_types(v.token_types), pre(v.pre) {
  auto views = std::make_shared<std::vector<std::string_view>>();
  views->reserve(v.tokens.size() + v.merges.size());
  views->insert(views->end(), v.tokens.begin(), v.tokens.end());
  views->insert(views->end(), v.merges.begin(), v.merges.end());
  tokens = std::span<const std::string_view>(*views).first(v.tokens.size());
  merges = std::span<const std::string_view>(*views).subspan(v.tokens.size());
  views_ = std::move(views);
}

Result<TokenizerSpec> spec_from_vocab(const BpeVocabRef& v) {
  TokenizerSpec spec;
  spec.split_pattern = pre_tokenizer_pattern(v.pre);
  if (spec.split_pattern.empty()) {
    return Status::unsupported("tokenizer.ggml.pre '" + std::string(v.pre) +
                               "' (qwen2 and qwen35 are known)");
  }
  spec.nfc = true;
  if (int64_t(v.tokens.size()) > kMaxTokens) {
    return Status::invalid_argument("tokenizer.ggml.tokens: too many tokens");
  }
  if (!v.token_types.empty() && v.token_types.size() != v.tokens.size()) {
    return Status::invalid_argument(
        "tokenizer.ggml.token_type: " + std::to_string(v.token_types.size()) + " entries for " +
        std::to_string(v.tokens.size()) + " tokens");
  }
  // The merges' halves are decoded on a thread of their own while the tokens are (both only
  // read v; 13 of the 56 ms a 150k vocabulary took at a server's start: docs/tokenizer.md "Two
  // threads"). An early return below waits for it (the future's destructor).
  auto halves_job = std::async(std::launch::async, [&v] { return merge_halves(v.merges); });
  size_t n_bytes = 0;
  for (std::string_view tok : v.tokens) n_bytes += tok.size();
  if (n_bytes > TokenBytes::kMaxBytes)  // raw bytes are never more than their pieces'
    return Status::invalid_argument("tokenizer.ggml.tokens: more than 4 GiB of token strings");
  spec.token_bytes.reserve(v.tokens.size(), n_bytes);
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    const int32_t type = v.token_types.empty() ? kBpeTokenNormal : v.token_types[id];
    const std::string_view tok = v.tokens[id];
    switch (type) {
      case kBpeTokenNormal:
        if (!spec.token_bytes.push_back_byte_level(tok) || spec.token_bytes[id].empty()) {
          return Status::invalid_argument("tokenizer.ggml.tokens[" + std::to_string(id) +
                                          "] is not a byte-level piece");
        }
        continue;
      case kBpeTokenControl:
      case kBpeTokenUserDefined:
        if (tok.empty()) {
          return Status::invalid_argument("tokenizer.ggml.tokens[" + std::to_string(id) +
                                          "]: empty added token");
        }
        spec.added_tokens.push_back({std::string(tok), int32_t(id), type == kBpeTokenControl});
        break;
      case kBpeTokenUnused:
        break;
      default:
        return Status::unsupported("tokenizer.ggml.token_type[" + std::to_string(id) + "] = " +
                                   std::to_string(type) + " in a byte-level BPE vocabulary");
    }
    spec.token_bytes.push_back({});  // not a vocabulary piece
  }
  // Ids past the last vocabulary piece are padding or added tokens, which the tokenizer keeps
  // apart (as from a tokenizer.json).
  size_t n_pieces = spec.token_bytes.size();
  while (n_pieces > 0 && spec.token_bytes[n_pieces - 1].empty()) --n_pieces;
  spec.token_bytes.resize(n_pieces);
  if (Status s = index_token_bytes(spec.token_bytes, "tokenizer.ggml.tokens", &spec.bytes_index);
      !s.is_ok()) {
    return s;
  }
  auto halves = halves_job.get();
  if (!halves) return halves.error();
  if (Status s = resolve_merges(*halves, spec.bytes_index, "tokenizer.ggml.merges", &spec.merges);
      !s.is_ok()) {
    return s;
  }
  return spec;
}

BpeVocab vocab_from_spec(const TokenizerSpec& spec, const std::string& pre, int64_t n_tokens) {
  BpeVocab v;
  v.pre = pre;
  int64_t n = int64_t(spec.token_bytes.size());
  for (const AddedTokenSpec& a : spec.added_tokens) n = std::max<int64_t>(n, a.id + 1);
  n = std::max(n, n_tokens);
  v.tokens.resize(size_t(n));
  v.token_types.assign(size_t(n), kBpeTokenUnused);
  for (size_t id = 0; id < spec.token_bytes.size(); ++id) {
    if (spec.token_bytes[id].empty()) continue;
    v.tokens[id] = byte_level_from_bytes(spec.token_bytes[id]);
    v.token_types[id] = kBpeTokenNormal;
  }
  for (const AddedTokenSpec& a : spec.added_tokens) {
    v.tokens[size_t(a.id)] = a.content;
    v.token_types[size_t(a.id)] = a.special ? kBpeTokenControl : kBpeTokenUserDefined;
  }
  for (int64_t id = 0; id < n; ++id) {
    if (v.token_types[size_t(id)] == kBpeTokenUnused)
      v.tokens[size_t(id)] = "[PAD" + std::to_string(id) + "]";
  }
  v.merges.reserve(spec.merges.size());
  for (const auto& [l, r] : spec.merges) {
    v.merges.push_back(byte_level_from_bytes(spec.token_bytes[size_t(l)]) + " " +
                       byte_level_from_bytes(spec.token_bytes[size_t(r)]));
  }
  return v;
}

Result<Tokenizer> Tokenizer::from_vocab(const BpeVocabRef& v) {
  auto spec = spec_from_vocab(v);
  if (!spec) return spec.error();
  return create(std::move(*spec));
}

}  // namespace anchorage::text
