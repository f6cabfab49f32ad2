// ResidentRig: a test's engine with a ResidentPrefix in front of it, run the way the server's
// engine queue runs one request (replay by the caller, offer, begin, prefill with the anchor
// callback, greedy generation, keep_end), plus the references the tier is checked against:
// a cold prefill of the same prompt, and the same conversation run with no cache at all.
// Header-only; tests/cache only.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "cache/resident_prefix.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::test {

inline std::vector<ModelVariant> resident_variants() {
  std::vector<ModelVariant> out;
  for (ModelVariant& v : invariant_variants())
    if (v.name == "toy" || v.name == "qwen35_tiny_f32") out.push_back(std::move(v));
  return out;
}

inline engine::EngineOptions rig_engine_options() {
  return {.capacity = 1024, .prefill_chunk = 64, .anchor_spacing = 64, .n_threads = 1};
}

inline cache::ResidentOptions rig_resident_options() {
  cache::ResidentOptions o;
  o.anchor_spacing = 64;
  o.stash_margin_rows = 32;
  o.park_block_rows = 32;
  o.pin_anchor_stride = 128;
  o.branch_anchors = false;  // the anchor counts below are the lines' and ends'; on in its test
  return o;
}

inline int32_t greedy(std::span<const float> logits) {
  return int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

inline std::vector<int32_t> concat(std::span<const int32_t> a, std::span<const int32_t> b) {
  std::vector<int32_t> out(a.begin(), a.end());
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

struct Served {
  cache::ResumeOffer offer;
  StateSnapshot after_prefill;     // the state the prefill left (before any decode)
  std::vector<int32_t> forwarded;  // prompt + generated but the last (gen > 0)
  int32_t last = -1;               // the last sampled token, not forwarded
};

struct ResidentRig {
  ResidentRig(const ModelVariant& v, const cache::ResidentOptions& o)
      : variant(v), engine(make_engine(v, rig_engine_options())), rp(o) {}

  // One request. gen: tokens sampled greedily (gen - 1 of them decoded); max_tokens defaults
  // to gen. `hidden`: spans of the forwarded tokens the client does not see.
  // head_end: where the prompt's last user message starts (-1: not said).
  Served serve(std::span<const int32_t> prompt, std::string_view session, int gen,
               std::vector<cache::HiddenSpan> hidden = {}, int64_t max_tokens = -1,
               int64_t head_end = -1) {
    Served s;
    s.offer = rp.offer(prompt, session);
    const core::Status b =
        rp.begin(*engine, prompt, session, max_tokens < 0 ? gen : max_tokens, s.offer);
    EXPECT_TRUE(b.is_ok()) << b.message();
    if (head_end >= 0) rp.want_head_line(head_end);
    EXPECT_EQ(engine->length(), s.offer.useful() ? s.offer.resume_at : 0);
    engine::PrefillOptions po;
    po.on_anchor = [&](int64_t pos, bool is_end) { rp.on_anchor(*engine, pos, is_end); };
    po.extra_lines = rp.branch_lines();
    const size_t r = size_t(s.offer.resume_at);
    EXPECT_TRUE(engine->prefill(prompt.subspan(r), po).is_ok());
    s.after_prefill = take_snapshot(*engine);
    if (gen > 0) {
      s.forwarded.assign(prompt.begin(), prompt.end());
      for (int i = 0; i < gen; ++i) {
        const int32_t t = greedy(engine->logits());
        if (i + 1 == gen) {
          s.last = t;
          break;
        }
        EXPECT_TRUE(engine->decode(t).is_ok());
        s.forwarded.push_back(t);
      }
      // As the server does: the answer's region and the spans hidden in it.
      cache::ConversationMarks added{std::move(hidden), {}};
      added.generated.emplace_back(int64_t(prompt.size()), int64_t(s.forwarded.size()));
      rp.keep_end(*engine, s.forwarded, std::move(added));
    }
    // The server's idle step after the answer: the branch points the prefill did not cut.
    auto deferred = rp.take_deferred_anchors(*engine, {});
    EXPECT_TRUE(deferred.has_value());
    return s;
  }

  // A cold prefill of prompt on a fresh engine.
  StateSnapshot cold(std::span<const int32_t> prompt) {
    if (!reference_) reference_ = make_engine(variant, rig_engine_options());
    reference_->reset();
    EXPECT_TRUE(reference_->prefill(prompt).is_ok());
    return take_snapshot(*reference_);
  }
  // No cache: prefill `first`, decode the generated tokens forwarded[first.size()..], then
  // prefill the rest of `next` (which continues forwarded).
  StateSnapshot continued(std::span<const int32_t> first, std::span<const int32_t> forwarded,
                          std::span<const int32_t> next) {
    if (!reference_) reference_ = make_engine(variant, rig_engine_options());
    reference_->reset();
    EXPECT_TRUE(reference_->prefill(first).is_ok());
    for (size_t i = first.size(); i < forwarded.size(); ++i)
      EXPECT_TRUE(reference_->decode(forwarded[i]).is_ok());
    EXPECT_TRUE(reference_->prefill(next.subspan(forwarded.size())).is_ok());
    return take_snapshot(*reference_);
  }

  int64_t granularity() const { return engine->exact_granularity(); }
  int64_t vocab() const { return engine->vocab_size(); }

  ModelVariant variant;
  std::unique_ptr<engine::Engine> engine;
  cache::ResidentPrefix rp;
  std::unique_ptr<engine::Engine> reference_;  // the references' engine, made on first use
};

}  // namespace anchorage::test
