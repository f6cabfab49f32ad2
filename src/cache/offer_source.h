// OfferSource: anything that can say where a prompt could resume from it (a tier, or an adapter
// over one), so the Planner can ask every tier the same question without knowing them.
// Answering must not change the tier (the peek route asks it without running the model) nor
// count anything.
//
// Thread safety: called on the engine thread only, like the tiers themselves.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "cache/resume_offer.h"

namespace anchorage::cache {

class OfferSource {
 public:
  virtual ~OfferSource() = default;
  // Where `prompt` could resume (ResumeOffer::useful() false: nowhere). `session` is the
  // conversation's key when the client sent one (tiers that hold one conversation per
  // session use it), else empty. A useful offer leaves at least one prompt token to prefill
  // (resume_at < prompt.size()): the engine needs the last token's logits.
  virtual ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const = 0;
};

}  // namespace anchorage::cache
