#include "engine/generation.h"

#include <algorithm>

#include "core/check.h"
#include "core/clock.h"

namespace anchorage::engine {

core::Result<GenerationResult> generate(Engine& engine, std::span<const int32_t> prompt,
                                        const GenerationOptions& opts) {
  if (core::Status s = opts.sampling.validate(); !s.is_ok()) return s;
  if (opts.max_tokens < 0) return core::Status::invalid_argument("max_tokens must be >= 0");
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

  Sampler sampler(opts.sampling);
  std::vector<float> allowed_logits;
  auto next_token = [&]() -> int32_t {
    const std::span<const int32_t> allowed =
        opts.allowed_next ? opts.allowed_next(out.tokens) : std::span<const int32_t>{};
    if (allowed.empty()) return sampler.sample(engine.logits());
    if (allowed.size() == 1) return allowed[0];
    const std::span<const float> logits = engine.logits();
    allowed_logits.resize(allowed.size());
    for (size_t i = 0; i < allowed.size(); ++i) {
      ANCHORAGE_CHECK(allowed[i] >= 0 && size_t(allowed[i]) < logits.size());
      allowed_logits[i] = logits[size_t(allowed[i])];
    }
    return allowed[size_t(sampler.sample(allowed_logits))];
  };
  t0 = core::now_ns();
  while (int64_t(out.tokens.size()) < opts.max_tokens) {
    const int32_t token = next_token();
    out.tokens.push_back(token);
    const bool keep_going = !opts.on_token || opts.on_token(token);
    if (std::find(opts.stop_ids.begin(), opts.stop_ids.end(), token) != opts.stop_ids.end()) {
      out.finish = FinishReason::kStopToken;
      break;
    }
    if (!keep_going) {
      out.finish = FinishReason::kStopped;
      break;
    }
    if (int64_t(out.tokens.size()) == opts.max_tokens) break;  // the last one is not decoded
    if (engine.length() >= engine.capacity()) {
      out.finish = FinishReason::kCapacity;
      break;
    }
    core::Status decoded = engine.decode(token);
    ANCHORAGE_CHECK_MSG(decoded.is_ok(), decoded.message().c_str());  // checked above
    ++out.decode_steps;
  }
  out.decode_ns = core::now_ns() - t0;
  engine.set_profile(nullptr);
  return out;
}

}  // namespace anchorage::engine
