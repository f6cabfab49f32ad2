#include "engine/engine.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/background_priority.h"
#include "core/check.h"
#include "core/page_populate.h"

namespace anchorage::engine {

using core::Result;
using core::Status;

namespace {

Status check_options(const model::Architecture& arch, const EngineOptions& o) {
  const int64_t g = arch.exact_granularity();
  if (o.capacity < 1) return Status::invalid_argument("engine: capacity must be >= 1");
  if (o.prefill_chunk < 1) return Status::invalid_argument("engine: prefill_chunk must be >= 1");
  if (o.anchor_spacing < 1) return Status::invalid_argument("engine: anchor_spacing must be >= 1");
  if (o.n_threads < 0) return Status::invalid_argument("engine: n_threads must be >= 0");
  // Off-grid calls would make a cold prefill differ from itself chunked otherwise.
  if (o.prefill_chunk % g != 0 || o.anchor_spacing % g != 0)
    return Status::invalid_argument(
        "engine: prefill_chunk and anchor_spacing must be multiples "
        "of the architecture's exact granularity " +
        std::to_string(g));
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Engine>> Engine::create(const model::Architecture& arch,
                                               const EngineOptions& opts) {
  if (Status s = check_options(arch, opts); !s.is_ok()) return s;
  return std::unique_ptr<Engine>(new Engine(arch, nullptr, opts));
}

Result<std::unique_ptr<Engine>> Engine::create(std::unique_ptr<model::Architecture> arch,
                                               const EngineOptions& opts) {
  ANCHORAGE_CHECK(arch != nullptr);
  if (Status s = check_options(*arch, opts); !s.is_ok()) return s;
  const model::Architecture& ref = *arch;
  return std::unique_ptr<Engine>(new Engine(ref, std::move(arch), opts));
}

Engine::Engine(const model::Architecture& arch, std::unique_ptr<model::Architecture> owned,
               const EngineOptions& opts)
    : owned_(std::move(owned)), arch_(&arch), opts_(opts) {
  grid_.chunk_tokens = opts.prefill_chunk;
  grid_.anchor_spacing = opts.anchor_spacing;
  grid_.granularity = arch.exact_granularity();
  int n = opts.n_threads > 0 ? opts.n_threads : core::ThreadPool::hardware_threads();
  pool_ = std::make_unique<core::ThreadPool>(n);
  state_ = std::make_unique<SequenceState>(arch.state_layout(opts.capacity), opts.capacity);
  logits_ = core::populated_vector<float>(size_t(arch.vocab_size()));  // 1 MB at 248k ids
  if (!opts.defer_fault_in) start_fault_in();
}

void Engine::start_fault_in() {
  if (fault_in_.joinable()) return;
  fault_in_ = std::jthread([state = state_.get()](std::stop_token stop) {
    core::lower_this_thread_priority();
    state->fault_in_spread_views(stop);
  });
}

std::span<const float> Engine::logits() const {
  ANCHORAGE_CHECK(has_logits_);
  if (block_n_ > 0)
    return {block_logits_.data() + size_t(block_row_ * vocab_size()), size_t(vocab_size())};
  return {logits_.data(), logits_.size()};
}

void Engine::reset() {
  state_->reset();
  has_logits_ = false;
  block_n_ = 0;
}

Status Engine::check_tokens(std::span<const int32_t> tokens) const {
  const int64_t vocab = arch_->vocab_size();
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab)
      return Status::invalid_argument(
          "token " + std::to_string(i) + " = " + std::to_string(tokens[i]) +
          " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  }
  return Status::ok();
}

void* Engine::workspace_for(int64_t n_tokens) {
  const int64_t need = arch_->workspace_bytes(n_tokens);
  if (int64_t(workspace_.size()) < need) workspace_ = core::AlignedBuffer(size_t(need));
  return workspace_.data();
}

void Engine::forward(const int32_t* tokens, int64_t n_tokens, int64_t logits_from, float* logits) {
  model::ForwardRequest req;
  req.tokens = tokens;
  req.n_tokens = n_tokens;
  req.pos0 = state_->length();
  req.logits_from = logits_from;
  req.logits = logits;
  req.profile = profile_;
  arch_->forward(req, state_->buffers(), workspace_for(n_tokens), pool_.get());
  state_->set_length(req.pos0 + n_tokens);
}

Status Engine::prefill(std::span<const int32_t> tokens, const PrefillOptions& opts) {
  const int64_t n = int64_t(tokens.size());
  const int64_t begin = state_->length();
  if (n == 0) return Status::invalid_argument("prefill: no tokens");
  if (n > capacity() - begin)
    return Status::invalid_argument("prefill: " + std::to_string(begin) + " + " +
                                    std::to_string(n) + " tokens exceed the capacity " +
                                    std::to_string(capacity()));
  if (Status s = check_tokens(tokens); !s.is_ok()) return s;

  const int64_t vocab = arch_->vocab_size();
  size_t all_base = 0;
  if (opts.all_logits) {
    all_base = opts.all_logits->size();
    opts.all_logits->resize(all_base + size_t(n * vocab));
  }
  const int64_t end = begin + n;
  has_logits_ = false;
  auto extra_line = [&](int64_t p) {
    return p % grid_.granularity == 0 &&
           std::find(opts.extra_lines.begin(), opts.extra_lines.end(), p) != opts.extra_lines.end();
  };
  for (int64_t pos = begin; pos < end;) {
    int64_t e = grid_.next_end(pos, end);
    for (int64_t line : opts.extra_lines)
      if (line > pos && line < e && line % grid_.granularity == 0) e = line;
    const int64_t t = e - pos;
    const int32_t* call_tokens = tokens.data() + (pos - begin);
    if (opts.all_logits) {
      float* rows = opts.all_logits->data() + all_base + size_t((pos - begin) * vocab);
      forward(call_tokens, t, 0, rows);
      if (e == end) std::memcpy(logits_.data(), rows + (t - 1) * vocab, size_t(vocab) * 4);
    } else if (e == end) {
      forward(call_tokens, t, t - 1, logits_.data());  // only the last row is ever needed
    } else {
      forward(call_tokens, t, t, nullptr);
    }
    pos = e;
    if (pos == end) has_logits_ = true;
    if (opts.on_progress) opts.on_progress(pos - begin, n);
    if (opts.on_anchor && (pos == end || grid_.is_anchor_line(pos) || extra_line(pos)))
      opts.on_anchor(pos, pos == end);
  }
  return Status::ok();
}

Status Engine::decode(int32_t token) {
  if (length() >= capacity())
    return Status::invalid_argument("decode: the sequence is at its capacity " +
                                    std::to_string(capacity()));
  if (Status s = check_tokens({&token, 1}); !s.is_ok()) return s;
  has_logits_ = false;
  forward(&token, 1, 0, logits_.data());
  has_logits_ = true;
  return Status::ok();
}

Status Engine::verify_block(std::span<const int32_t> tokens) {
  ANCHORAGE_CHECK(block_n_ == 0);
  const int64_t n = int64_t(tokens.size());
  if (arch_->exact_granularity() != 1)
    return Status::unsupported("verify_block: the architecture is not exact at every token");
  if (n == 0) return Status::invalid_argument("verify_block: no tokens");
  if (n > capacity() - length())
    return Status::invalid_argument("verify_block: " + std::to_string(length()) + " + " +
                                    std::to_string(n) + " tokens exceed the capacity " +
                                    std::to_string(capacity()));
  if (Status s = check_tokens(tokens); !s.is_ok()) return s;
  const auto& sections = layout().sections;
  block_sections_.resize(sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    const size_t bytes = size_t(sections[i].bytes());
    if (block_sections_[i].size() < bytes) block_sections_[i] = core::AlignedBuffer(bytes);
    std::memcpy(block_sections_[i].data(), state_->section(i), bytes);
  }
  block_tokens_.assign(tokens.begin(), tokens.end());
  block_pos0_ = length();
  block_n_ = n;
  block_logits_.resize(size_t(n * vocab_size()));
  has_logits_ = false;
  forward(tokens.data(), n, 0, block_logits_.data());
  block_row_ = n - 1;
  has_logits_ = true;
  return Status::ok();
}

void Engine::show_block_row(int64_t i) {
  ANCHORAGE_CHECK(0 <= i && i < block_n_);
  block_row_ = i;
}

void Engine::commit_block(int64_t n) {
  ANCHORAGE_CHECK(1 <= n && n <= block_n_);
  if (n < block_n_) {
    const auto& sections = layout().sections;
    for (size_t i = 0; i < sections.size(); ++i)
      std::memcpy(state_->section(i), block_sections_[i].data(), size_t(sections[i].bytes()));
    state_->set_length(block_pos0_);
    forward(block_tokens_.data(), n, n, nullptr);  // rewrites rows [pos0, pos0+n) bit for bit
  }
  show_block_row(n - 1);
  const std::span<const float> row = logits();
  std::memcpy(logits_.data(), row.data(), row.size() * sizeof(float));
  has_logits_ = true;
  block_n_ = 0;
}

Status Engine::resume_at(int64_t n) {
  if (n < 0 || n > capacity())
    return Status::invalid_argument("resume_at: position " + std::to_string(n) +
                                    " is outside [0, " + std::to_string(capacity()) + "]");
  state_->set_length(n);
  has_logits_ = false;
  block_n_ = 0;
  return Status::ok();
}

StateCost Engine::cost() const {
  StateCost c;
  c.section_bytes = layout().section_bytes();
  c.bytes_per_token = layout().bytes_per_token();
  const int64_t logits_bytes = arch_->vocab_size() * 4;
  const int64_t one = arch_->workspace_bytes(1);
  const int64_t cap = arch_->workspace_bytes(opts_.prefill_chunk);
  c.workspace_floor = one + logits_bytes;
  c.workspace_cap = cap + logits_bytes;
  c.workspace_per_token = opts_.prefill_chunk > 1
                              ? (cap - one + opts_.prefill_chunk - 2) / (opts_.prefill_chunk - 1)
                              : 0;
  return c;
}

}  // namespace anchorage::engine
