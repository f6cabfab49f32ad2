// WeightPacker: background threads over a list of weights.
#include "model/weight_packer.h"

#include "core/background_priority.h"
#include "core/check.h"
#include "core/clock.h"

namespace anchorage::model {

WeightPacker::WeightPacker(std::vector<kernels::PackedWeight> weights, int threads,
                           std::function<void(double seconds)> done)
    : weights_(std::move(weights)), done_(std::move(done)), start_ns_(core::now_ns()) {
  ANCHORAGE_CHECK(threads >= 1);
  for (int t = 0; t < threads; ++t)
    threads_.emplace_back([this](std::stop_token stop) { run(stop); });
}

WeightPacker::~WeightPacker() {
  for (std::jthread& t : threads_) t.request_stop();
  threads_.clear();  // joins
}

void WeightPacker::run(std::stop_token stop) {
  core::lower_this_thread_priority();
  const int64_t n = int64_t(weights_.size());
  while (!stop.stop_requested()) {
    const int64_t i = next_.fetch_add(1);
    if (i >= n) return;
    weights_[size_t(i)].pack();
    if (finished_.fetch_add(1) + 1 == n && done_) done_(double(core::now_ns() - start_ns_) * 1e-9);
    finished_.notify_all();
  }
}

void WeightPacker::wait() {
  const int64_t n = int64_t(weights_.size());
  for (int64_t f = finished_.load(); f < n; f = finished_.load()) finished_.wait(f);
}

}  // namespace anchorage::model
