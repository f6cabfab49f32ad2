#include "text/tokenizer.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "text/added_token_matcher.h"
#include "text/bpe_cache.h"
#include "text/bpe_model.h"
#include "text/pretokenizer.h"
#include "text/unicode_nfc.h"
#include "text/utf8.h"

namespace anchorage::text {

using core::Result;
using core::Status;

struct Tokenizer::Impl {
  Impl(BpeModel b, std::optional<PreTokenizer> p) : bpe(std::move(b)), pre(std::move(p)) {}

  BpeModel bpe;
  std::optional<PreTokenizer> pre;  // none: each stretch of text is one piece
  AddedTokenMatcher added;
  bool nfc = false;
  int32_t vocab_size = 0;
  std::unordered_map<int32_t, AddedTokenSpec> added_by_id;
  std::unordered_map<std::string, int32_t> added_by_content;
  BpeCache cache;
  // whitespace_ids(), made by its first call: a server's start-up asks twice (its prefix
  // store's glue and the output constraint's vocabulary), and each scan of the vocabulary's
  // bytes took 1.4-5 ms of it.
  std::once_flag whitespace_once;
  std::vector<int32_t> whitespace;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Result<Tokenizer> Tokenizer::load_file(const std::string& path) {
  // TODO(core::Fs): read through the file seam once core/ has it (docs/style.md §1).
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found("tokenizer file not found: " + path);
    return Status::io_error("cannot open tokenizer file " + path + ": " + std::strerror(err));
  }
  // One read into a string of the file's size (a stream copy was 6 % of a load).
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) return Status::io_error("cannot read tokenizer file " + path);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) return Status::io_error("cannot read tokenizer file " + path);
  return from_json(text);
}

Result<Tokenizer> Tokenizer::from_json(std::string_view json_text) {
  Result<TokenizerSpec> spec = parse_tokenizer_json(json_text);
  if (!spec) return spec.error();
  return create(std::move(*spec));
}

Result<Tokenizer> Tokenizer::create(TokenizerSpec spec) {
  std::optional<PreTokenizer> pre;
  if (!spec.split_pattern.empty()) {
    Result<PreTokenizer> p = PreTokenizer::create(spec.split_pattern);
    if (!p) return p.error();
    pre.emplace(std::move(*p));
  }
  Result<BpeModel> bpe = BpeModel::create(std::move(spec.token_bytes), spec.merges,
                                          spec.ignore_merges, std::move(spec.bytes_index));
  if (!bpe) return bpe.error();
  auto impl = std::make_unique<Impl>(std::move(*bpe), std::move(pre));
  impl->nfc = spec.nfc;
  impl->vocab_size = impl->bpe.size();
  std::vector<AddedTokenMatcher::Token> match_tokens;
  for (AddedTokenSpec& a : spec.added_tokens) {
    impl->vocab_size = std::max(impl->vocab_size, a.id + 1);
    match_tokens.push_back({a.content, a.id});
    impl->added_by_content[a.content] = a.id;
    impl->added_by_id[a.id] = std::move(a);
  }
  impl->added = AddedTokenMatcher(std::move(match_tokens));
  return Tokenizer(std::move(impl));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 8);
  encode(text, &ids);
  return ids;
}

void Tokenizer::encode(std::string_view text, std::vector<int32_t>* ids) const {
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedTokenMatcher::Match m = impl_->added.find(text, pos);
    const std::string_view plain = text.substr(pos, m.pos - pos);
    // Well-formed stretches go through normalizer, regex and BPE; each byte of an ill-formed
    // sequence becomes its own single-byte token.
    for (size_t i = 0; i < plain.size();) {
      const size_t run = utf8_valid_run(plain, i);
      if (run > 0) encode_valid(plain.substr(i, run), ids);
      i += run;
      if (i == plain.size()) break;
      const Utf8Scan bad = utf8_scan(plain, i);
      for (size_t k = 0; k < bad.n_bytes; ++k) impl_->bpe.encode_piece(plain.substr(i + k, 1), ids);
      i += bad.n_bytes;
    }
    if (m.n_bytes == 0) break;
    ids->push_back(m.id);
    pos = m.pos + m.n_bytes;
  }
}

void Tokenizer::encode_valid(std::string_view text, std::vector<int32_t>* ids) const {
  std::string normalized;
  if (impl_->nfc && !nfc_quick_check(text)) {
    nfc_append(text, &normalized);
    text = normalized;
  }
  std::vector<std::string_view> pieces;
  if (impl_->pre) {
    impl_->pre->split(text, &pieces);
  } else {
    pieces.push_back(text);
  }
  for (std::string_view piece : pieces) {
    if (piece.size() > 1 && impl_->cache.find(piece, ids)) continue;
    const size_t first = ids->size();
    impl_->bpe.encode_piece(piece, ids);
    if (piece.size() > 1) impl_->cache.insert(piece, ids->data() + first, ids->size() - first);
  }
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  const auto it = impl_->added_by_id.find(id);
  if (it != impl_->added_by_id.end()) return it->second.content;
  return impl_->bpe.token_bytes(id);
}

std::string Tokenizer::decode_bytes(std::span<const int32_t> ids) const {
  std::string out;
  for (int32_t id : ids) out.append(token_bytes(id));
  return out;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::string raw;
  for (int32_t id : ids) {
    if (skip_special_tokens && is_special(id)) continue;
    raw.append(token_bytes(id));
  }
  std::string out;
  out.reserve(raw.size());
  utf8_append_lossy(raw, /*final=*/true, &out);
  return out;
}

std::optional<int32_t> Tokenizer::token_id(std::string_view piece) const {
  const auto it = impl_->added_by_content.find(std::string(piece));
  if (it != impl_->added_by_content.end()) return it->second;
  return impl_->bpe.find(piece);
}

bool Tokenizer::is_special(int32_t id) const {
  const auto it = impl_->added_by_id.find(id);
  return it != impl_->added_by_id.end() && it->second.special;
}

bool Tokenizer::is_added(int32_t id) const {
  return impl_->added_by_id.count(id) != 0;
}

const std::vector<int32_t>& Tokenizer::whitespace_ids() const {
  std::call_once(impl_->whitespace_once, [this] {
    // Bytes first: an added-token lookup per id was 300k hash lookups in a server's start-up.
    for (int32_t id = 0; id < impl_->bpe.size(); ++id) {
      const std::string_view b = impl_->bpe.token_bytes(id);
      if (b.empty() || b.find_first_not_of(" \t\n\r") != std::string_view::npos) continue;
      if (!is_added(id)) impl_->whitespace.push_back(id);
    }
  });
  return impl_->whitespace;
}

int32_t Tokenizer::vocab_size() const {
  return impl_->vocab_size;
}

size_t Tokenizer::test_cache_size() const {
  return impl_->cache.size();
}
void Tokenizer::test_clear_cache() const {
  impl_->cache.clear();
}

}  // namespace anchorage::text
