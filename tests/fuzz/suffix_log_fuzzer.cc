// libFuzzer target: arbitrary bytes as the suffix store's log (docs/suffix-store.md "On-disk
// format"). Whatever the bytes, scan_suffix_log returns a scan or a corruption with a reason,
// never crashes, hangs or reads out of bounds; a scan's text holds only ids below the document
// end and ends with one, and re-encoding it gives exactly the file's good bytes (the parser
// and the encoder agree byte for byte). Seeded with tests/golden/suffix-log-v*.bin.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cache/suffix_index.h"
#include "cache/suffix_log.h"
#include "core/check.h"
#include "core/sha256.h"

using anchorage::cache::kDocumentEnd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The golden file's tokenizer, so the seed parses and mutations reach the records.
  static const anchorage::core::Sha256Digest sha =
      anchorage::core::sha256(std::string_view("golden-tokenizer"));
  std::vector<std::byte> bytes(size);
  if (size > 0) std::memcpy(bytes.data(), data, size);
  auto scan = anchorage::cache::scan_suffix_log(bytes, sha);
  if (!scan) {
    ANCHORAGE_CHECK(scan.error().code() == anchorage::core::StatusCode::kCorruption);
    ANCHORAGE_CHECK(scan.error().reason() != anchorage::core::Reason::kNone);
    return 0;
  }
  ANCHORAGE_CHECK(scan->good_bytes <= size);
  ANCHORAGE_CHECK(scan->torn_tail == (scan->good_bytes < size));
  ANCHORAGE_CHECK(scan->text.empty() || scan->text.back() == kDocumentEnd);
  std::vector<std::byte> again = anchorage::cache::encode_suffix_log_header(sha);
  size_t begin = 0;
  for (size_t i = 0; i < scan->text.size(); ++i) {
    if (scan->text[i] != kDocumentEnd) continue;
    anchorage::cache::encode_suffix_record(
        std::span<const uint32_t>(scan->text).subspan(begin, i - begin), &again);
    begin = i + 1;
  }
  ANCHORAGE_CHECK(again.size() == scan->good_bytes);
  ANCHORAGE_CHECK(std::memcmp(again.data(), bytes.data(), again.size()) == 0);
  return 0;
}
