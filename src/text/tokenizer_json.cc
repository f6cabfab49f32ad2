// parse_tokenizer_json: tokenizer.json -> TokenizerSpec. simdjson's DOM in its error-code form
// (nothing here throws): the 11 MB of a Qwen tokenizer.json parse in milliseconds, where
// nlohmann's DOM, its std::map objects and their strings took a quarter of a second
// (docs/performance.md "Start-up").
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "text/byte_level.h"
#include "text/tokenizer_spec.h"
#include "text/vocab_resolve.h"

namespace anchorage::text {

using core::Result;
using core::Status;
using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

namespace {

// Ids are bounded so that a corrupt file cannot make us allocate gigabytes.
constexpr int64_t kMaxId = int64_t{1} << 24;

// The split HF's ByteLevel pre-tokenizer applies itself when use_regex is true (GPT-2's).
constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

Status bad(const std::string& field, const std::string& what) {
  return Status::invalid_argument("tokenizer.json: " + field + ": " + what);
}
Status unsupported(const std::string& field, const std::string& what) {
  return Status::unsupported("tokenizer.json: " + field + ": " + what);
}

// A component: absent (or null) is nullopt.
using Part = std::optional<element>;

// The member key of j; nullopt when j is not an object, has no such member or it is null.
Part member(const element& j, std::string_view key) {
  object o;
  element v;
  if (j.get(o) != simdjson::SUCCESS || o.at_key(key).get(v) != simdjson::SUCCESS) return {};
  if (v.is_null()) return {};
  return v;
}

std::optional<std::string_view> string_member(const element& j, std::string_view key) {
  const Part v = member(j, key);
  std::string_view s;
  if (!v || v->get(s) != simdjson::SUCCESS) return {};
  return s;
}

std::optional<array> array_member(const element& j, std::string_view key) {
  const Part v = member(j, key);
  array a;
  if (!v || v->get(a) != simdjson::SUCCESS) return {};
  return a;
}

// The "type" of a component object, or "" when it has none.
std::string type_of(const element& j) {
  return std::string(string_member(j, "type").value_or(""));
}

bool is_true(const element& j, std::string_view key) {
  const Part v = member(j, key);
  bool b = false;
  return v && v->get(b) == simdjson::SUCCESS && b;
}

// A string field that must be absent, null or empty.
bool set_string(const element& j, std::string_view key) {
  const auto s = string_member(j, key);
  return s && !s->empty();
}

Status read_normalizer(const Part& n, TokenizerSpec* spec) {
  if (!n) return Status::ok();
  const std::string type = type_of(*n);
  if (type == "NFC") {
    spec->nfc = true;
    return Status::ok();
  }
  if (const auto parts = array_member(*n, "normalizers"); type == "Sequence" && parts) {
    for (const element part : *parts) {
      if (Status s = read_normalizer(part, spec); !s.is_ok()) return s;
    }
    return Status::ok();
  }
  return unsupported("normalizer", "type '" + type + "'");
}

Status read_split(const element& p, TokenizerSpec* spec) {
  const Part pat = member(p, "pattern");
  if (!pat || !pat->is_object()) return bad("pre_tokenizer", "Split without a pattern");
  const auto regex = string_member(*pat, "Regex");
  if (!regex) return unsupported("pre_tokenizer", "Split pattern other than Regex");
  if (string_member(p, "behavior") != std::optional<std::string_view>("Isolated")) {
    return unsupported("pre_tokenizer", "Split behavior other than Isolated");
  }
  if (is_true(p, "invert")) return unsupported("pre_tokenizer", "Split with invert");
  if (!spec->split_pattern.empty()) return unsupported("pre_tokenizer", "two Split steps");
  spec->split_pattern = std::string(*regex);
  if (spec->split_pattern.empty()) return bad("pre_tokenizer", "empty Split pattern");
  return Status::ok();
}

Status read_pre_tokenizer(const Part& p, TokenizerSpec* spec) {
  if (!p) return Status::ok();
  const std::string type = type_of(*p);
  if (type == "Sequence") {
    const auto parts = array_member(*p, "pretokenizers");
    if (!parts) return bad("pre_tokenizer", "Sequence without pretokenizers");
    for (const element part : *parts) {
      if (Status s = read_pre_tokenizer(part, spec); !s.is_ok()) return s;
    }
    return Status::ok();
  }
  if (type == "Split") return read_split(*p, spec);
  if (type == "ByteLevel") {
    if (is_true(*p, "add_prefix_space")) return unsupported("pre_tokenizer", "add_prefix_space");
    // use_regex defaults to true in HF tokenizers.
    const bool use_regex = !member(*p, "use_regex") || is_true(*p, "use_regex");
    if (use_regex) {
      if (!spec->split_pattern.empty()) return unsupported("pre_tokenizer", "two regex splits");
      spec->split_pattern = std::string(kGpt2Pattern);
    }
    return Status::ok();
  }
  return unsupported("pre_tokenizer", "type '" + type + "'");
}

// The raw bytes of every id, and their index.
Status read_vocab(const Part& vocab_part, TokenizerSpec* spec) {
  object vocab;
  if (!vocab_part || vocab_part->get(vocab) != simdjson::SUCCESS) {
    return bad("model.vocab", "expected an object");
  }
  std::vector<std::string_view> by_id;  // byte-level pieces, viewing the parsed document
  for (const auto field : vocab) {
    int64_t id = 0;
    if (field.value.get(id) != simdjson::SUCCESS) return bad("model.vocab", "expected integer ids");
    if (id < 0) return bad("model.vocab", "negative id");
    if (id >= kMaxId) return bad("model.vocab", "id out of range");
    if (size_t(id) >= by_id.size()) by_id.resize(size_t(id) + 1);
    if (by_id[size_t(id)].data() != nullptr) {
      return bad("model.vocab", "id " + std::to_string(id) + " used twice");
    }
    by_id[size_t(id)] = field.key;
  }
  size_t n_bytes = 0;
  for (std::string_view p : by_id) n_bytes += p.size();
  spec->token_bytes.reserve(by_id.size(), n_bytes);
  for (size_t id = 0; id < by_id.size(); ++id) {
    if (by_id[id].data() == nullptr) {
      spec->token_bytes.push_back({});  // no such id
    } else if (!spec->token_bytes.push_back_byte_level(by_id[id]) ||
               spec->token_bytes[id].empty()) {
      return bad("model.vocab", "token " + std::to_string(id) + " is not a byte-level piece");
    }
  }
  return index_token_bytes(spec->token_bytes, "model.vocab", &spec->bytes_index);
}

Status read_merges(const Part& merges_part, TokenizerSpec* spec) {
  array merges;
  if (!merges_part || merges_part->get(merges) != simdjson::SUCCESS) {
    return bad("model.merges", "expected an array");
  }
  const auto field = [](size_t rank) { return "model.merges[" + std::to_string(rank) + "]"; };
  TokenBytes halves;  // left, right of every merge, raw
  halves.reserve(2 * merges.size(), 0);
  for (const element m : merges) {
    const size_t rank = halves.size() / 2;
    std::string_view left, right;
    array pair;
    if (std::string_view s; m.get(s) == simdjson::SUCCESS) {  // the older "left right" form
      if (!split_merge(s, &left, &right)) return bad(field(rank), "expected \"left right\"");
    } else if (m.get(pair) != simdjson::SUCCESS || pair.size() != 2 ||
               pair.at(0).get(left) != simdjson::SUCCESS ||
               pair.at(1).get(right) != simdjson::SUCCESS) {
      return bad(field(rank), "expected a pair of strings");
    }
    push_merge_half(left, &halves);
    push_merge_half(right, &halves);
  }
  return resolve_merges(halves, spec->bytes_index, "model.merges", &spec->merges);
}

Status read_model(const element& model, TokenizerSpec* spec) {
  if (!model.is_object()) return bad("model", "expected an object");
  if (type_of(model) != "BPE") return unsupported("model", "type '" + type_of(model) + "'");
  if (member(model, "dropout")) return unsupported("model", "dropout");
  if (is_true(model, "byte_fallback")) return unsupported("model", "byte_fallback");
  if (set_string(model, "continuing_subword_prefix") || set_string(model, "end_of_word_suffix")) {
    return unsupported("model", "subword prefix or suffix");
  }
  spec->ignore_merges = is_true(model, "ignore_merges");
  const Part vocab = member(model, "vocab"), merges = member(model, "merges");
  if (!vocab || !merges) return bad("model", "missing vocab or merges");
  if (Status s = read_vocab(vocab, spec); !s.is_ok()) return s;
  return read_merges(merges, spec);
}

Status read_added_tokens(const Part& added_part, TokenizerSpec* spec) {
  if (!added_part) return Status::ok();
  array added;
  if (added_part->get(added) != simdjson::SUCCESS) return bad("added_tokens", "expected an array");
  size_t i = 0;
  for (const element t : added) {
    const std::string field = "added_tokens[" + std::to_string(i++) + "]";
    const Part id_part = member(t, "id");
    const auto content = string_member(t, "content");
    int64_t id = 0;
    if (!id_part || id_part->get(id) != simdjson::SUCCESS || !content) {
      return bad(field, "expected an object with integer id and string content");
    }
    if (id < 0 || id >= kMaxId) return bad(field, "id out of range");
    AddedTokenSpec a;
    a.content = std::string(*content);
    a.id = static_cast<int32_t>(id);
    a.special = is_true(t, "special");
    if (a.content.empty()) return bad(field, "empty content");
    if (is_true(t, "lstrip") || is_true(t, "rstrip") || is_true(t, "single_word")) {
      return unsupported(field, "lstrip, rstrip or single_word");
    }
    spec->added_tokens.push_back(std::move(a));
  }
  return Status::ok();
}

Status read_byte_level_or_null(const Part& j, const char* field) {
  if (!j || type_of(*j) == "ByteLevel") return Status::ok();
  return unsupported(field, "type '" + type_of(*j) + "'");
}

}  // namespace

Result<TokenizerSpec> parse_tokenizer_json(std::string_view json_text) {
  // Every string the spec keeps, and BpeModel's joined merges, are smaller than the document.
  if (json_text.size() > TokenBytes::kMaxBytes) return bad("(document)", "larger than 4 GiB");
  simdjson::dom::parser parser;
  element root;
  if (parser.parse(json_text.data(), json_text.size()).get(root) != simdjson::SUCCESS) {
    return bad("(document)", "not valid JSON");
  }
  if (!root.is_object()) return bad("(document)", "expected an object");
  TokenizerSpec spec;
  const Part model = member(root, "model");
  if (!model) return bad("model", "missing");
  if (Status s = read_model(*model, &spec); !s.is_ok()) return s;
  if (Status s = read_normalizer(member(root, "normalizer"), &spec); !s.is_ok()) return s;
  if (Status s = read_pre_tokenizer(member(root, "pre_tokenizer"), &spec); !s.is_ok()) return s;
  if (Status s = read_byte_level_or_null(member(root, "decoder"), "decoder"); !s.is_ok()) return s;
  if (Status s = read_byte_level_or_null(member(root, "post_processor"), "post_processor");
      !s.is_ok()) {
    return s;
  }
  if (Status s = read_added_tokens(member(root, "added_tokens"), &spec); !s.is_ok()) return s;
  return spec;
}

}  // namespace anchorage::text
