#include "engine/generation.h"

#include <algorithm>

#include "core/check.h"
#include "core/clock.h"

namespace anchorage::engine {

core::Result<GenerationResult> generate(Engine& engine, std::span<const int32_t> prompt,
                                        const GenerationOptions& opts) {
  if (core::Status s = opts.sampling.validate(); !s.is_ok()) return s;
  if (opts.max_tokens < 0) return core::Status::invalid_argument("max_tokens must be >= 0");
  if (opts.drafter != nullptr && opts.draft_max < 1)
    return core::Status::invalid_argument("draft_max must be >= 1");
  GenerationResult out;
  out.prompt_tokens = int64_t(prompt.size());
  int64_t t0 = core::now_ns();
  engine.set_profile(opts.prefill_profile);
  core::Status prefilled = engine.prefill(prompt, opts.prefill);
  engine.set_profile(opts.decode_profile);
  if (!prefilled.is_ok()) {
    engine.set_profile(nullptr);
    return prefilled;
  }
  out.prefill_ns = core::now_ns() - t0;

  // Verify blocks write decode's bits only where every token is an exact line.
  const bool drafting = opts.drafter != nullptr && engine.exact_granularity() == 1;
  std::vector<int32_t> context;  // the whole sequence, for the drafter
  std::vector<int32_t> drafts;
  std::vector<int32_t> block;
  if (drafting) {
    context.assign(opts.draft_context.begin(), opts.draft_context.end());
    context.insert(context.end(), prompt.begin(), prompt.end());
  }

  Sampler sampler(opts.sampling);
  std::vector<float> allowed_logits;
  // The next token from one position's logits; the only place the sampler is drawn from, so
  // a verify block consumes its state in decode's order.
  auto choose = [&](std::span<const float> logits) -> int32_t {
    const std::span<const int32_t> allowed =
        opts.allowed_next ? opts.allowed_next(out.tokens) : std::span<const int32_t>{};
    if (allowed.empty()) return sampler.sample(logits);
    if (allowed.size() == 1) return allowed[0];
    allowed_logits.resize(allowed.size());
    for (size_t i = 0; i < allowed.size(); ++i) {
      ANCHORAGE_CHECK(allowed[i] >= 0 && size_t(allowed[i]) < logits.size());
      allowed_logits[i] = logits[size_t(allowed[i])];
    }
    return allowed[size_t(sampler.sample(allowed_logits))];
  };
  // Records a chosen token; false when the generation ends with it (it is then not decoded).
  auto take = [&](int32_t token) -> bool {
    out.tokens.push_back(token);
    if (drafting) context.push_back(token);
    const bool keep_going = !opts.on_token || opts.on_token(token);
    if (std::find(opts.stop_ids.begin(), opts.stop_ids.end(), token) != opts.stop_ids.end()) {
      out.finish = FinishReason::kStopToken;
      return false;
    }
    if (!keep_going) {
      out.finish = FinishReason::kStopped;
      return false;
    }
    return int64_t(out.tokens.size()) < opts.max_tokens;  // the last one is not decoded
  };

  t0 = core::now_ns();
  bool going = opts.max_tokens > 0 && take(choose(engine.logits()));
  while (going) {
    if (engine.length() >= engine.capacity()) {
      out.finish = FinishReason::kCapacity;
      break;
    }
    const int32_t token = out.tokens.back();
    // Drafts past the capacity or past the token max_tokens would end at are never chosen.
    const int64_t room = std::min({opts.draft_max, engine.capacity() - engine.length() - 1,
                                   opts.max_tokens - int64_t(out.tokens.size()) - 1});
    drafts.clear();
    if (drafting && room > 0) {
      opts.drafter->propose(context, room, &drafts);
      if (int64_t(drafts.size()) > room) drafts.resize(size_t(room));
    }
    if (drafts.empty()) {
      core::Status decoded = engine.decode(token);
      ANCHORAGE_CHECK_MSG(decoded.is_ok(), decoded.message().c_str());  // checked above
      ++out.decode_steps;
      going = take(choose(engine.logits()));
      continue;
    }
    const int64_t k = int64_t(drafts.size());
    block.assign(1, token);
    block.insert(block.end(), drafts.begin(), drafts.end());
    core::Status verified = engine.verify_block(block);
    ANCHORAGE_CHECK_MSG(verified.is_ok(), verified.message().c_str());  // sized above
    // Position i-1's logits choose the token after block[i-1], as decode would; the block
    // holds the state up to the first choice that is not its draft or that ends the run.
    int64_t kept = k + 1;
    int64_t accepted = 0;
    for (int64_t i = 1; i <= k; ++i) {
      engine.show_block_row(i - 1);  // on_token may read the logits of its token
      const int32_t chosen = choose(engine.logits());
      going = take(chosen);
      if (chosen == drafts[size_t(i - 1)]) ++accepted;
      if (!going || chosen != drafts[size_t(i - 1)]) {
        kept = i;
        break;
      }
    }
    engine.commit_block(kept);
    out.decode_steps += kept;
    ++out.verify_blocks;
    out.drafted_tokens += k;
    out.accepted_tokens += accepted;
    opts.drafter->observe(k, accepted);
    if (going && kept == k + 1) going = take(choose(engine.logits()));
  }
  out.decode_ns = core::now_ns() - t0;
  engine.set_profile(nullptr);
  return out;
}

}  // namespace anchorage::engine
