// WeightPacker: makes the panels of weights that were loaded over a file's rows
// (kernels::PackedWeight::over_rows()) on background threads, so that a server is ready as soon
// as the file is parsed and reaches full decode speed a moment later (docs/performance.md
// "Start-up"). Until a weight is packed, gemm() makes its panels from the rows block by block:
// the same bytes, so no answer changes when a weight switches.
//
// The threads run at a lower priority (nice 10: a request's threads come first) and take the
// weights in the order given (a forward pass's), one at a time. They hold copies of the weights,
// which share the panels and keep the rows mapped, so the packer may outlive or die before the
// model that made it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "kernels/packed_weight.h"

namespace anchorage::model {

class WeightPacker {
 public:
  // Starts `threads` (>= 1) threads packing `weights`; `done(seconds)` runs on the thread that
  // packs the last one, once, after every weight is packed (not when stopped early).
  WeightPacker(std::vector<kernels::PackedWeight> weights, int threads,
               std::function<void(double seconds)> done);
  WeightPacker(const WeightPacker&) = delete;
  WeightPacker& operator=(const WeightPacker&) = delete;
  // Stops after the weights being packed (the others stay readable from their rows) and joins.
  ~WeightPacker();

  // Blocks until every weight is packed (benchmarks, tests).
  void wait();

 private:
  void run(std::stop_token stop);

  std::vector<kernels::PackedWeight> weights_;
  std::function<void(double)> done_;
  int64_t start_ns_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> finished_{0};
  std::vector<std::jthread> threads_;
};

}  // namespace anchorage::model
