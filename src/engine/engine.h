// Engine: runs one model over one sequence — prefill in chunks, decode, the logits of the last
// position — and exposes the sequence's state through the contract the caches rely on
// (docs/architecture.md §3): layout(), settle(), resume_at(), cost(), exact_granularity() and raw
// access to every section and view buffer. docs/engine.md describes chunking and callbacks.
//
// Threading: an Engine belongs to one thread (the engine thread, docs/architecture.md §7); none of
// its methods may run concurrently. Its thread pool is used inside forward calls only.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "core/aligned_buffer.h"
#include "core/state_layout.h"
#include "core/status.h"
#include "core/thread_pool.h"
#include "engine/chunk_grid.h"
#include "engine/engine_options.h"
#include "engine/sequence_state.h"
#include "engine/state_cost.h"
#include "model/architecture.h"

namespace anchorage::engine {

class Engine {
 public:
  // Checks the options against the architecture (capacity, chunk and anchor spacing >= 1; the
  // chunk and the spacing multiples of arch.exact_granularity()). The first form borrows arch,
  // which must outlive the engine; the second owns it.
  static core::Result<std::unique_ptr<Engine>> create(const model::Architecture& arch,
                                                      const EngineOptions& opts);
  static core::Result<std::unique_ptr<Engine>> create(std::unique_ptr<model::Architecture> arch,
                                                      const EngineOptions& opts);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const model::Architecture& architecture() const { return *arch_; }
  const EngineOptions& options() const { return opts_; }
  const ChunkGrid& grid() const { return grid_; }
  int n_threads() const { return pool_->n_threads(); }
  // Starts the background fault-in of EngineOptions::defer_fault_in (no-op once started).
  void start_fault_in();

  // Appends tokens at the current length: a new sequence after reset(), or a resumed one after
  // resume_at(). Errors (InvalidArgument): no tokens, a token outside [0, vocab), or
  // length() + tokens.size() > capacity(); the state is untouched then.
  core::Status prefill(std::span<const int32_t> tokens, const PrefillOptions& opts = {});
  // One token at length(); the same forward as a one-token prefill call.
  core::Status decode(int32_t token);

  // --- Verify blocks (docs/speculation.md) ---
  // Forwards tokens (the token decode would take, then drafts) as one call at length() and
  // keeps the logits of every position. Sections are copied first, so that commit_block() can
  // leave the state after any prefix of the block. Because the kernels are batch-invariant, the
  // block writes the bits one-token decodes would: Unsupported for an architecture not exact at
  // every token (exact_granularity() > 1); otherwise decode's errors. Every verify_block() must
  // be followed by a commit_block() before any other forward. logits() are the last row's.
  core::Status verify_block(std::span<const int32_t> tokens);
  // Until the commit, logits() are those after the block's token i (0 <= i < its size), so a
  // caller reading logits() while a token is chosen sees the row it was chosen from.
  void show_block_row(int64_t i);
  // Keeps the block's first n tokens (1 <= n <= its size): the sections, length() and
  // logits() become those after them, as if they had been decoded one by one. A shorter
  // prefix restores the copied sections and forwards the kept tokens again (cheaper than a
  // copy of the sections per position, docs/speculation.md); the rejected positions' view
  // rows lie past length() and are never read.
  void commit_block(int64_t n);

  // The logits of the last position, after a prefill or a decode (vocab_size() floats).
  // Invalid after reset() and resume_at(): the state does not hold them.
  bool has_logits() const { return has_logits_; }
  std::span<const float> logits() const;
  int64_t vocab_size() const { return arch_->vocab_size(); }

  int64_t length() const { return state_->length(); }
  int64_t capacity() const { return state_->capacity(); }
  // A new sequence: sections zeroed, length 0, no logits.
  void reset();

  // --- The state contract (docs/architecture.md §3) ---
  const core::StateLayout& layout() const { return state_->layout(); }
  // Lands a pending commit before a copy is taken. A verify block is committed before its
  // generation step returns, so nothing is ever pending between calls and this is a no-op that
  // callers must still make before every copy.
  void settle() {}
  // After sections and view rows [0, n) were written back, puts the engine at length n.
  // InvalidArgument if n is outside [0, capacity()]. Drops the logits.
  core::Status resume_at(int64_t n);
  StateCost cost() const;
  int64_t exact_granularity() const { return arch_->exact_granularity(); }
  // Raw live buffers, in layout order (sections whole; views with capacity() positions).
  void* section_data(size_t i) { return state_->section(i); }
  const void* section_data(size_t i) const { return state_->section(i); }
  void* view_data(size_t i) { return state_->view(i); }
  const void* view_data(size_t i) const { return state_->view(i); }

  // Every later forward adds its per-op times to profile (null: no profiling).
  void set_profile(model::OpProfile* profile) { profile_ = profile; }

 private:
  Engine(const model::Architecture& arch, std::unique_ptr<model::Architecture> owned,
         const EngineOptions& opts);
  core::Status check_tokens(std::span<const int32_t> tokens) const;
  void* workspace_for(int64_t n_tokens);
  void forward(const int32_t* tokens, int64_t n_tokens, int64_t logits_from, float* logits);

  std::unique_ptr<model::Architecture> owned_;
  const model::Architecture* arch_;
  EngineOptions opts_;
  ChunkGrid grid_;
  std::unique_ptr<core::ThreadPool> pool_;
  std::unique_ptr<SequenceState> state_;
  core::AlignedBuffer workspace_;
  std::vector<float> logits_;
  bool has_logits_ = false;
  // The open verify block: its tokens, start, every position's logits and the sections
  // before it (block_n_ == 0: none open).
  std::vector<int32_t> block_tokens_;
  int64_t block_pos0_ = 0;
  int64_t block_n_ = 0;
  int64_t block_row_ = 0;  // the row logits() shows while a block is open
  std::vector<float> block_logits_;
  std::vector<core::AlignedBuffer> block_sections_;
  model::OpProfile* profile_ = nullptr;
  // Faults in the state's spread views in the background (SequenceState::fault_in_spread_views):
  // the first request would pay for them inside its prefill. Last: stopped and joined first.
  std::jthread fault_in_;
};

}  // namespace anchorage::engine
