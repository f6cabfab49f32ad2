// EngineOptions and PrefillOptions: how an Engine sizes its sequence and cuts its prefills
// (docs/engine.md). Value types.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace anchorage::engine {

struct EngineOptions {
  // Positions the views hold (the maximum context); a prompt past it is refused.
  int64_t capacity = 8192;
  // Tokens per forward call of a prefill; bounds the workspace (StateCost::workspace_cap).
  int64_t prefill_chunk = 1024;
  // The anchor grid: the prefill cuts a call and reports the state at every multiple.
  int64_t anchor_spacing = 1024;
  // Threads of the engine's pool, counting the engine thread; 0 = every hardware thread.
  int n_threads = 0;
  // The state's views are faulted in by a background thread from construction on; when set,
  // from Engine::start_fault_in() instead. The server starts it once its threads and socket
  // exist (HttpServer::bind): the fault-in's 32 MiB madvise calls hold the mmap lock that the
  // tokenizer's allocations and the threads' stacks wait for (docs/performance.md "Start-up").
  bool defer_fault_in = false;
};

// Callbacks run on the engine thread, between two forward calls, while the state is exactly
// the state after `position` tokens; they may read (copy out) sections and view rows but must
// not call prefill/decode/resume_at on the same engine.
struct PrefillOptions {
  // At every anchor line the prefill passes (is_end = false) and once at its end
  // (is_end = true; an end that falls on an anchor line is reported once, as the end).
  std::function<void(int64_t position, bool is_end)> on_anchor{};
  // Extra lines (absolute positions, any order) where the prefill also ends a call and reports
  // on_anchor(position, false): a cache wants the state there (a branch point, the token
  // before the prompt's end). Lines off the architecture's exact grid are ignored, so every
  // call still starts on it; batch invariance makes the extra cut change no bit.
  std::vector<int64_t> extra_lines{};
  // After every call: tokens of this prefill done so far, and its total.
  std::function<void(int64_t done, int64_t total)> on_progress{};
  // Test-only: when set, the logits of every row of this prefill are appended here
  // (n_tokens * vocab floats). Costs a head GEMM per row; never used in serving.
  std::vector<float>* all_logits = nullptr;
};

}  // namespace anchorage::engine
