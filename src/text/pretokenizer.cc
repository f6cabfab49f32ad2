#include "text/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/check.h"

namespace anchorage::text {

using core::Result;
using core::Status;

namespace {

// Unicode White_Space (PropList.txt), the members of `\s` in Oniguruma's and Python regex's
// Unicode mode, as the inside of a PCRE2 character class.
constexpr std::string_view kWhiteSpace =
    "\\t\\n\\x0B\\f\\r\\x20\\x85\\xA0\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}"
    "\\x{202F}\\x{205F}\\x{3000}";

std::string pcre2_message(int code) {
  PCRE2_UCHAR buf[256];
  const int n = pcre2_get_error_message(code, buf, sizeof(buf));
  return n < 0 ? "unknown PCRE2 error" : std::string(reinterpret_cast<char*>(buf), n);
}

}  // namespace

Result<std::string> rewrite_whitespace_classes(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 256);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') {
        if (in_class) {
          out.append(kWhiteSpace);
        } else {
          out.append("[").append(kWhiteSpace).append("]");
        }
      } else if (e == 'S') {
        if (in_class) {
          return Status::unsupported("pre_tokenizer pattern: \\S inside a character class");
        }
        out.append("[^").append(kWhiteSpace).append("]");
      } else {
        out.push_back('\\');
        out.push_back(e);
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      // A ']' right after '[' or '[^' is a literal member, not the end of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out.push_back(pattern[++i]);
      continue;
    }
    if (in_class && c == '[' && i + 1 < pattern.size() && pattern[i + 1] == ':') {
      const size_t end = pattern.find(":]", i + 2);  // a POSIX class such as [:alpha:]
      if (end != std::string_view::npos) {
        out.append(pattern.substr(i, end + 2 - i));
        i = end + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

struct PreTokenizer::Regex {
  std::string pattern;
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(std::unique_ptr<Regex> regex) : regex_(std::move(regex)) {}
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

const std::string& PreTokenizer::compiled_pattern() const {
  return regex_->pattern;
}

Result<PreTokenizer> PreTokenizer::create(std::string_view pattern) {
  Result<std::string> rewritten = rewrite_whitespace_classes(pattern);
  if (!rewritten) return rewritten.error();
  auto regex = std::make_unique<Regex>();
  regex->pattern = std::move(*rewritten);
  int error = 0;
  PCRE2_SIZE offset = 0;
  // UCP makes any other class (\w, \d, \b) Unicode-aware too, as in HF's Oniguruma.
  regex->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(regex->pattern.data()), regex->pattern.size(),
                    PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (regex->code == nullptr) {
    return Status::invalid_argument("pre_tokenizer pattern does not compile at offset " +
                                    std::to_string(offset) + ": " + pcre2_message(error));
  }
  // Without the JIT (a PCRE2 built without it) matching still works, only slower.
  regex->jit = pcre2_jit_compile(regex->code, PCRE2_JIT_COMPLETE) == 0;
  return PreTokenizer(std::move(regex));
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>* pieces) const {
  if (text.empty()) return;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(regex_->code, nullptr);
  ANCHORAGE_CHECK(md != nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;   // where the next search starts
  size_t done = 0;  // text[0, done) is in pieces
  while (pos < text.size()) {
    // The caller checked the UTF-8 once for the whole text, so PCRE2 need not per match;
    // pcre2_jit_match also skips the argument checks pcre2_match makes on every call.
    const int rc =
        regex_->jit
            ? pcre2_jit_match(regex_->code, subject, text.size(), pos, 0, md, nullptr)
            : pcre2_match(regex_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    ANCHORAGE_CHECK_MSG(rc >= 0, "pcre2_match failed");
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t start = ov[0], end = ov[1];
    if (end == start) {
      // An empty match adds nothing; step over one character (HF skips empty matches too).
      ++pos;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (start > done) pieces->push_back(text.substr(done, start - done));
    pieces->push_back(text.substr(start, end - start));
    done = pos = end;
  }
  if (done < text.size()) pieces->push_back(text.substr(done));
  pcre2_match_data_free(md);
}

}  // namespace anchorage::text
