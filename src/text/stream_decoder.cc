#include "text/stream_decoder.h"

#include "text/tokenizer.h"
#include "text/utf8.h"

namespace anchorage::text {

void StreamDecoder::push(int32_t id, std::string* out) {
  if (skip_special_tokens_ && tokenizer_->is_special(id)) return;
  pending_.append(tokenizer_->token_bytes(id));
  const size_t used = utf8_append_lossy(pending_, /*final=*/false, out);
  pending_.erase(0, used);
}

void StreamDecoder::flush(std::string* out) {
  utf8_append_lossy(pending_, /*final=*/true, out);
  pending_.clear();
}

}  // namespace anchorage::text
