#include "text/vocab_resolve.h"

#include <string>

#include "core/page_populate.h"

namespace anchorage::text {

using core::Status;

Status index_token_bytes(const TokenBytes& bytes, std::string_view field, PieceIndex* index) {
  for (size_t id = 0; id < bytes.size(); ++id) {
    if (bytes[id].size() > PieceIndex::kMaxKeyBytes) {
      return Status::invalid_argument(std::string(field) + "[" + std::to_string(id) +
                                      "]: longer than 65535 bytes");
    }
  }
  *index = PieceIndex(bytes.size());
  int32_t first = -1;
  if (const size_t dup = index->insert_entries(bytes, &first); dup < bytes.size()) {
    return Status::invalid_argument(std::string(field) + ": ids " + std::to_string(first) +
                                    " and " + std::to_string(dup) + " have the same bytes");
  }
  return Status::ok();
}

void push_merge_half(std::string_view piece, TokenBytes* halves) {
  if (!halves->push_back_byte_level(piece)) halves->push_back({});
}

Status resolve_merges(const TokenBytes& halves, const PieceIndex& index, std::string_view field,
                      std::vector<std::pair<int32_t, int32_t>>* merges) {
  std::vector<int32_t> ids = core::populated_vector<int32_t>(halves.size());
  index.find_many_two_threads(halves, ids);
  merges->clear();
  core::reserve_populated(*merges, halves.size() / 2);
  for (size_t i = 0; i + 1 < halves.size(); i += 2) {
    if (ids[i] < 0 || ids[i + 1] < 0) {
      return Status::invalid_argument(std::string(field) + "[" + std::to_string(i / 2) +
                                      "]: token not in the vocabulary");
    }
    merges->emplace_back(ids[i], ids[i + 1]);
  }
  return Status::ok();
}

}  // namespace anchorage::text
