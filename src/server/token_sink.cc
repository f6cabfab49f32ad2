#include "server/token_sink.h"

#include <algorithm>

#include "core/clock.h"
#include "server/token_logprobs.h"

namespace anchorage::server {

TokenSink::TokenSink(const GenerationJob& job, TokenStream& stream, const engine::Engine& engine,
                     bool keep_response)
    : job_(job), stream_(stream), engine_(engine), keep_response_(keep_response) {}

bool TokenSink::operator()(int32_t token) {
  if (first_token_ns_ == 0) first_token_ns_ = core::now_ns() - job_.submitted_ns;
  TokenEvent event;
  event.token = token;
  event.hidden = job_.constraint && job_.constraint->hidden(sampled_);
  if (event.hidden) hidden_sampled_.push_back(sampled_);
  ++sampled_;
  if (event.hidden) {  // forced and hidden: nothing for the client, no stop-string check
    stream_.push(std::move(event));
    return !stream_.cancelled();
  }
  const bool is_stop_id =
      std::find(job_.stop_ids.begin(), job_.stop_ids.end(), token) != job_.stop_ids.end();
  // A stop id is counted but never rendered, so its logprobs are not reported either.
  if (job_.top_logprobs >= 0 && !is_stop_id)
    fill_token_logprobs(engine_.logits(), job_.top_logprobs, &event);
  if (keep_response_) kept_.push_back({event.token, event.logprob, event.top});
  stream_.push(std::move(event));
  if (stream_.cancelled()) return false;
  if (!is_stop_id && job_.stop_after && job_.stop_after(token)) {
    stopped_by_string_ = true;
    return false;
  }
  return true;
}

}  // namespace anchorage::server
