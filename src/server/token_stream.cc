#include "server/token_stream.h"

namespace anchorage::server {

void TokenStream::start() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
  }
  cv_.notify_all();
}

bool TokenStream::wait_taken(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return started_ || finished_ || !events_.empty(); });
}

bool TokenStream::ended_untaken(JobOutcome* outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_ || started_ || !events_.empty()) return false;
  *outcome = outcome_;
  return true;
}

void TokenStream::push(TokenEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  cv_.notify_one();
}

void TokenStream::finish(JobOutcome outcome) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    outcome_ = std::move(outcome);
    finished_ = true;
  }
  cv_.notify_all();
}

bool TokenStream::wait(std::chrono::milliseconds timeout, std::vector<TokenEvent>* events,
                       JobOutcome* outcome) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return finished_ || !events_.empty(); });
  for (TokenEvent& e : events_) events->push_back(std::move(e));
  events_.clear();
  if (!finished_) return false;
  *outcome = outcome_;
  return true;
}

}  // namespace anchorage::server
