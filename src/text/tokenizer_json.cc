// parse_tokenizer_json: tokenizer.json -> TokenizerSpec. nlohmann::json is used in its
// non-throwing mode only (parse with allow_exceptions = false, every access checks the type
// first), so nothing here throws.
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "text/byte_level.h"
#include "text/tokenizer_spec.h"

namespace anchorage::text {

using core::Result;
using core::Status;
using nlohmann::json;

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

// The "type" of a component object, or "" when it has none.
std::string type_of(const json& j) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return "";
  return j["type"].get<std::string>();
}

bool is_true(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

// A string field that must be absent, null or empty.
bool set_string(const json& j, const char* key) {
  return j.contains(key) && j[key].is_string() && !j[key].get_ref<const std::string&>().empty();
}

Status read_normalizer(const json& n, TokenizerSpec* spec) {
  if (n.is_null()) return Status::ok();
  const std::string type = type_of(n);
  if (type == "NFC") {
    spec->nfc = true;
    return Status::ok();
  }
  if (type == "Sequence" && n.contains("normalizers") && n["normalizers"].is_array()) {
    for (const json& part : n["normalizers"]) {
      if (Status s = read_normalizer(part, spec); !s.is_ok()) return s;
    }
    return Status::ok();
  }
  return unsupported("normalizer", "type '" + type + "'");
}

Status read_split(const json& p, TokenizerSpec* spec) {
  if (!p.contains("pattern") || !p["pattern"].is_object())
    return bad("pre_tokenizer", "Split without a pattern");
  const json& pat = p["pattern"];
  if (!pat.contains("Regex") || !pat["Regex"].is_string()) {
    return unsupported("pre_tokenizer", "Split pattern other than Regex");
  }
  const json behavior = p.contains("behavior") ? p["behavior"] : json();
  if (!behavior.is_string() || behavior.get<std::string>() != "Isolated") {
    return unsupported("pre_tokenizer", "Split behavior other than Isolated");
  }
  if (is_true(p, "invert")) return unsupported("pre_tokenizer", "Split with invert");
  if (!spec->split_pattern.empty()) return unsupported("pre_tokenizer", "two Split steps");
  spec->split_pattern = pat["Regex"].get<std::string>();
  if (spec->split_pattern.empty()) return bad("pre_tokenizer", "empty Split pattern");
  return Status::ok();
}

Status read_pre_tokenizer(const json& p, TokenizerSpec* spec) {
  if (p.is_null()) return Status::ok();
  const std::string type = type_of(p);
  if (type == "Sequence") {
    if (!p.contains("pretokenizers") || !p["pretokenizers"].is_array()) {
      return bad("pre_tokenizer", "Sequence without pretokenizers");
    }
    for (const json& part : p["pretokenizers"]) {
      if (Status s = read_pre_tokenizer(part, spec); !s.is_ok()) return s;
    }
    return Status::ok();
  }
  if (type == "Split") return read_split(p, spec);
  if (type == "ByteLevel") {
    if (is_true(p, "add_prefix_space")) return unsupported("pre_tokenizer", "add_prefix_space");
    // use_regex defaults to true in HF tokenizers.
    const bool use_regex = !p.contains("use_regex") || is_true(p, "use_regex");
    if (use_regex) {
      if (!spec->split_pattern.empty()) return unsupported("pre_tokenizer", "two regex splits");
      spec->split_pattern = std::string(kGpt2Pattern);
    }
    return Status::ok();
  }
  return unsupported("pre_tokenizer", "type '" + type + "'");
}

// Byte-level piece -> id, viewing the keys of the parsed document (which outlives it). A hash
// map: the merges look up 300k pieces, and the document's own std::map made that the
// largest part of loading.
using PieceIds = std::unordered_map<std::string_view, int32_t>;

Status read_vocab(const json& vocab, TokenizerSpec* spec, PieceIds* piece_ids) {
  if (!vocab.is_object()) return bad("model.vocab", "expected an object");
  int64_t max_id = -1;
  for (const auto& item : vocab.items()) {
    if (!item.value().is_number_integer()) return bad("model.vocab", "expected integer ids");
    max_id = std::max<int64_t>(max_id, item.value().get<int64_t>());
  }
  if (max_id >= kMaxId) return bad("model.vocab", "id out of range");
  spec->token_bytes.assign(static_cast<size_t>(max_id + 1), std::string());
  piece_ids->reserve(vocab.size());
  for (const auto& item : vocab.items()) {
    const int64_t id = item.value().get<int64_t>();
    piece_ids->emplace(item.key(), static_cast<int32_t>(id));
    if (id < 0) return bad("model.vocab", "negative id");
    std::string& bytes = spec->token_bytes[static_cast<size_t>(id)];
    if (!bytes.empty()) return bad("model.vocab", "id " + std::to_string(id) + " used twice");
    if (!byte_level_to_bytes(item.key(), &bytes) || bytes.empty()) {
      return bad("model.vocab", "token " + std::to_string(id) + " is not a byte-level piece");
    }
  }
  return Status::ok();
}

Status read_merges(const json& merges, const PieceIds& vocab, TokenizerSpec* spec) {
  if (!merges.is_array()) return bad("model.merges", "expected an array");
  spec->merges.reserve(merges.size());
  auto id_of = [&](std::string_view piece, int32_t* id) {
    const auto it = vocab.find(piece);
    if (it == vocab.end()) return false;
    *id = it->second;
    return true;
  };
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    std::string_view left, right;
    if (m.is_string()) {  // the older "left right" form
      const std::string_view s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        return bad("model.merges[" + std::to_string(rank) + "]", "expected \"left right\"");
      }
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get_ref<const std::string&>();
      right = m[1].get_ref<const std::string&>();
    } else {
      return bad("model.merges[" + std::to_string(rank) + "]", "expected a pair of strings");
    }
    int32_t l = 0, r = 0;
    if (!id_of(left, &l) || !id_of(right, &r)) {
      return bad("model.merges[" + std::to_string(rank) + "]", "token not in model.vocab");
    }
    spec->merges.emplace_back(l, r);
  }
  return Status::ok();
}

Status read_model(const json& model, TokenizerSpec* spec) {
  if (!model.is_object()) return bad("model", "expected an object");
  if (type_of(model) != "BPE") return unsupported("model", "type '" + type_of(model) + "'");
  if (model.contains("dropout") && !model["dropout"].is_null()) {
    return unsupported("model", "dropout");
  }
  if (is_true(model, "byte_fallback")) return unsupported("model", "byte_fallback");
  if (set_string(model, "continuing_subword_prefix") || set_string(model, "end_of_word_suffix")) {
    return unsupported("model", "subword prefix or suffix");
  }
  spec->ignore_merges = is_true(model, "ignore_merges");
  if (!model.contains("vocab") || !model.contains("merges")) {
    return bad("model", "missing vocab or merges");
  }
  PieceIds piece_ids;
  if (Status s = read_vocab(model["vocab"], spec, &piece_ids); !s.is_ok()) return s;
  return read_merges(model["merges"], piece_ids, spec);
}

Status read_added_tokens(const json& added, TokenizerSpec* spec) {
  if (added.is_null()) return Status::ok();
  if (!added.is_array()) return bad("added_tokens", "expected an array");
  for (size_t i = 0; i < added.size(); ++i) {
    const json& t = added[i];
    const std::string field = "added_tokens[" + std::to_string(i) + "]";
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() ||
        !t.contains("content") || !t["content"].is_string()) {
      return bad(field, "expected an object with integer id and string content");
    }
    const int64_t id = t["id"].get<int64_t>();
    if (id < 0 || id >= kMaxId) return bad(field, "id out of range");
    AddedTokenSpec a;
    a.content = t["content"].get<std::string>();
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

Status read_byte_level_or_null(const json& j, const char* field) {
  if (j.is_null() || type_of(j) == "ByteLevel") return Status::ok();
  return unsupported(field, "type '" + type_of(j) + "'");
}

}  // namespace

Result<TokenizerSpec> parse_tokenizer_json(std::string_view json_text) {
  const json root = json::parse(json_text.begin(), json_text.end(), nullptr,
                                /*allow_exceptions=*/false);
  if (root.is_discarded()) return bad("(document)", "not valid JSON");
  if (!root.is_object()) return bad("(document)", "expected an object");
  auto get = [&](const char* key) { return root.contains(key) ? root[key] : json(); };
  TokenizerSpec spec;
  if (!root.contains("model")) return bad("model", "missing");
  if (Status s = read_model(root["model"], &spec); !s.is_ok()) return s;
  if (Status s = read_normalizer(get("normalizer"), &spec); !s.is_ok()) return s;
  if (Status s = read_pre_tokenizer(get("pre_tokenizer"), &spec); !s.is_ok()) return s;
  if (Status s = read_byte_level_or_null(get("decoder"), "decoder"); !s.is_ok()) return s;
  if (Status s = read_byte_level_or_null(get("post_processor"), "post_processor"); !s.is_ok()) {
    return s;
  }
  if (Status s = read_added_tokens(get("added_tokens"), &spec); !s.is_ok()) return s;
  return spec;
}

}  // namespace anchorage::text
