// Architecture: the one interface every model presents to the engine (docs/architecture.md §2-§3).
// A model declares the state of one sequence (StateLayout: sections copied whole, views with a
// token axis) and runs a forward over T tokens on buffers the engine owns. qwen35 (the hybrid)
// implements it; tests carry a made-up `toy` architecture behind the same interface.
//
// Threading: forward() is called by one thread at a time (the engine thread) and uses the
// pool for its own parallel work; const methods may be called from any thread.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/state_layout.h"
#include "core/thread_pool.h"
#include "model/op_profile.h"

namespace anchorage::model {

// The live buffers of one sequence, in layout order, and the capacity of the views' token axis.
struct StateBuffers {
  std::vector<void*> sections;  // sections[i] holds layout.sections[i]
  std::vector<void*> views;     // views[i] holds layout.views[i]
  int64_t capacity = 0;
};

struct ForwardRequest {
  const int32_t* tokens = nullptr;
  int64_t n_tokens = 0;  // T >= 1
  int64_t pos0 = 0;      // absolute position of tokens[0]
  // Logits are produced for the call's rows [logits_from, n_tokens) into
  // logits[(row - logits_from) * vocab_size()]; logits_from == n_tokens asks for none.
  int64_t logits_from = 0;
  float* logits = nullptr;
  OpProfile* profile = nullptr;  // optional: time spent per op kind
};

class Architecture {
 public:
  virtual ~Architecture() = default;

  virtual std::string_view name() const = 0;
  virtual int64_t vocab_size() const = 0;
  // The state of one sequence whose views hold `capacity` positions.
  virtual core::StateLayout state_layout(int64_t capacity) const = 0;
  // Scratch bytes a forward of up to max_tokens tokens needs (passed to forward()).
  virtual int64_t workspace_bytes(int64_t max_tokens) const = 0;
  // The finest token line at which a resumed prefill reproduces a cold one bit for bit (1 for a
  // batch-invariant model). Calls to forward() that write state the caches keep must start on
  // this grid for the result to be exact (the engine chunks accordingly).
  virtual int64_t exact_granularity() const = 0;
  // Bytes of weights one decode step reads (for the memory-bandwidth bound).
  virtual int64_t weight_bytes() const = 0;
  // What computes this model's rows, for the cache fingerprint (cache/fingerprint.h,
  // docs/disk-tier.md): a JSON object with the architecture, its config, the dtypes it computes
  // and stores rows in, its exact granularity, the kernel ISA in use and
  // kernels::kKernelVersion. Not the weights' bytes (the fingerprint identifies them by
  // content) and nothing that cannot change a row (threads, chunk size, eos ids). Callers
  // include <nlohmann/json.hpp>.
  virtual nlohmann::json manifest() const = 0;

  // Runs the model on tokens [pos0, pos0+T): reads view rows [0, pos0), writes view rows
  // [pos0, pos0+T), updates sections in place (they must hold the state after pos0 tokens; all
  // zero for a new sequence). workspace holds workspace_bytes(T) bytes, 64-byte aligned.
  virtual void forward(const ForwardRequest& req, const StateBuffers& state, void* workspace,
                       core::ThreadPool* pool) const = 0;
};

}  // namespace anchorage::model
