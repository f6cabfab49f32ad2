// Unicode Normalization Form C (UAX #15), the `NFC` normalizer of HF tokenizer.json files
// (Qwen2/Qwen3 declare it). The data comes from unicode_nfc_tables.cc (Unicode 14.0.0, see
// nfc_unicode_version()). Text that is already NFC, as nearly all prompts are, is checked and
// copied without decoding work beyond a quick check; only the short stretches around
// characters that may change are decomposed, reordered and recomposed.
// Pure functions over constant tables (built once, thread-safely): any thread may call them.
#pragma once

#include <string>
#include <string_view>

namespace anchorage::text {

// Appends NFC(text) to out. text must be valid UTF-8 (utf8.h); the result is too.
void nfc_append(std::string_view text, std::string* out);

// True when text is certainly unchanged by NFC (may say false for some NFC text).
bool nfc_quick_check(std::string_view text);

// The Unicode version of the tables, e.g. "14.0.0".
const char* nfc_unicode_version();

}  // namespace anchorage::text
