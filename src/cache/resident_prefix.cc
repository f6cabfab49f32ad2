#include "cache/resident_prefix.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "cache/end_replay.h"
#include "core/token_prefix.h"

namespace anchorage::cache {

using core::common_prefix;

namespace {

// Up to k of the ascending positions pos[0..t], spread evenly, always with pos[t].
std::vector<int64_t> spread(const std::vector<int64_t>& pos, size_t t, int k) {
  std::vector<int64_t> out;
  const size_t count = t + 1;
  if (k <= 0) return out;
  if (count <= size_t(k)) return std::vector<int64_t>(pos.begin(), pos.begin() + count);
  for (int i = 0; i < k; ++i) {
    const size_t idx = k == 1 ? t : size_t(i) * t / size_t(k - 1);
    if (out.empty() || out.back() != pos[idx]) out.push_back(pos[idx]);
  }
  return out;
}

}  // namespace

ResidentPrefix::ResidentPrefix(const ResidentOptions& opts)
    : opts_(opts),
      anchors_(opts.anchor_bytes, opts.keep_newest, opts.pin_anchor_stride, opts.pin_max_anchors) {}

void ResidentPrefix::set_glue_ids(std::vector<int32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  glue_ = std::move(ids);
}

void ResidentPrefix::learn(const engine::Engine& engine) {
  granularity_ = std::max<int64_t>(1, engine.exact_granularity());
  const engine::StateCost cost = engine.cost();
  bytes_per_token_ = cost.bytes_per_token;
  section_bytes_ = cost.section_bytes;
  // Body anchors are taken at the engine's lines that are also this tier's (on_anchor).
  const int64_t engine_step = std::max<int64_t>(1, engine.grid().anchor_spacing);
  line_step_ = opts_.anchor_spacing > 0 ? std::lcm(engine_step, opts_.anchor_spacing) : engine_step;
}

bool ResidentPrefix::exact_at(int64_t pos, int64_t taint) const {
  return pos % granularity_ == 0 && pos <= taint;
}

// The taint after resuming at r over rows whose taint was `base`: a resume on the grid at or
// below it writes a cold prefill's rows from r (nothing tainted); otherwise rows from r on are
// not a cold prefill's.
int64_t ResidentPrefix::resumed_taint(int64_t r, int64_t base) const {
  return exact_at(r, base) ? kNoTaint : std::min(base, r);
}

ResumeOffer ResidentPrefix::offer(std::span<const int32_t> prompt, std::string_view) const {
  ResumeOffer best;
  const int64_t m = int64_t(prompt.size());
  if (m < 2) return best;
  const int64_t limit = m - 1;  // the engine must forward at least one token
  auto consider = [&](int64_t at, ResumeSource source, int64_t bytes, int64_t taint) {
    if (at <= best.resume_at) return;
    best = ResumeOffer{at, source, bytes, at, exact_at(at, taint)};
  };

  // A guest that overwrote rows from guest_from_ and lost its stash leaves only those below.
  const int64_t valid =
      guest_ && guest_stashed_ && !stash_.held() ? guest_from_ : int64_t(tokens_.size());
  const int64_t c = std::min(common_prefix(tokens_, prompt), valid);
  if (const SectionCopy* a = anchors_.largest_at_or_below(std::min(c, limit)))
    consider(a->position(), ResumeSource::kAnchor, a->bytes(), taint_);
  if (end_.held() && c >= end_.position() && end_.position() <= limit)
    consider(end_.position(), ResumeSource::kEnd, end_.held_bytes(), taint_);

  if (pin_.held()) {
    const int64_t cp = common_prefix(pin_.tokens(), prompt);
    const int64_t a = pin_.anchor_at_or_below(std::min(cp, limit));
    if (a > 0) consider(a, ResumeSource::kPin, pin_.restore_bytes(a), pin_.taint());
  }
  if (park_.held()) {
    const ParkedSession::Contents& p = park_.contents();
    if (std::min(common_prefix(tokens_, p.tokens), valid) >= p.begin) {
      const int64_t cq = common_prefix(p.tokens, prompt);
      int64_t a = park_.anchor_at_or_below(std::min(cq, limit));
      int64_t bytes = a > 0 ? p.anchors.at(a).bytes() : 0;
      if (!p.end.empty() && cq >= p.end.position() && p.end.position() <= limit &&
          p.end.position() > a) {
        a = p.end.position();
        bytes = p.end.bytes();
      }
      if (a > 0)
        consider(a, ResumeSource::kPark, bytes + (a - p.begin) * bytes_per_token_, p.taint);
    }
  }
  return best;
}

std::optional<std::vector<int32_t>> ResidentPrefix::replay(std::span<const int32_t> prompt) const {
  if (end_.held()) {
    const std::span<const int32_t> rows(tokens_.data(), size_t(end_.position()));
    if (auto r = replay_hidden(rows, marks_.below(end_.position()).hidden, prompt, glue_)) return r;
  }
  if (park_.held() && !park_.contents().end.empty()) {
    const ParkedSession::Contents& p = park_.contents();
    const std::span<const int32_t> rows(p.tokens.data(), size_t(p.end.position()));
    if (auto r = replay_hidden(rows, p.marks.below(p.end.position()).hidden, prompt, glue_))
      return r;
  }
  return std::nullopt;
}

core::Status ResidentPrefix::restore(engine::Engine& engine, const ResumeOffer& chosen) const {
  const int64_t r = chosen.resume_at;
  switch (chosen.source) {
    case ResumeSource::kAnchor: {
      const SectionCopy* a = anchors_.at(r);
      if (a == nullptr) return core::Status::invalid_argument("resident: the anchor is gone");
      if (core::Status s = a->write_back(engine); !s.is_ok()) return s;
      return engine.resume_at(r);
    }
    case ResumeSource::kEnd:
      if (end_.position() != r) return core::Status::invalid_argument("resident: the end is gone");
      if (core::Status s = end_.state().write_back(engine); !s.is_ok()) return s;
      return engine.resume_at(r);
    case ResumeSource::kPin:
      return pin_.restore(engine, r);
    case ResumeSource::kPark:  // swap_park restores it
    case ResumeSource::kCold:
    case ResumeSource::kStore:  // another tier restores after begin()
    case ResumeSource::kDisk:
    case ResumeSource::kSpill:
    case ResumeSource::kResponse:
    case ResumeSource::kContinuation:  // never planned
    case ResumeSource::kPrepared:
      break;
  }
  if (!chosen.useful()) engine.reset();
  return core::Status::ok();
}

// docs/cache.md "A request": refuse a stale offer, then guest, or park swap, or replacement
// (pin / park) and restore, then adopt the prompt's head as the rows in place.
core::Status ResidentPrefix::begin(engine::Engine& engine, std::span<const int32_t> prompt,
                                   std::string_view session, int64_t max_tokens,
                                   const ResumeOffer& chosen) {
  if (core::Status s = finish_request(engine); !s.is_ok()) return s;
  learn(engine);
  if (core::Status s = check_offer(prompt, chosen); !s.is_ok()) return s;
  const int64_t r = chosen.useful() ? chosen.resume_at : 0;
  const bool in_place =
      chosen.source == ResumeSource::kAnchor || chosen.source == ResumeSource::kEnd;
  // Rows below this stay as they are; the request may write every row from it.
  const int64_t from = in_place ? r : 0;
  prompt_.assign(prompt.begin(), prompt.end());
  branch_lines_.clear();
  deferred_lines_.clear();
  if (chosen.source == ResumeSource::kPark) return swap_park(engine, prompt, session, r);
  if (std::optional<core::Status> s = begin_guest(engine, prompt, max_tokens, from, chosen))
    return *s;
  const int64_t c = common_prefix(tokens_, prompt);
  if (c < int64_t(tokens_.size()))
    prepare_replacement(engine, session, c, from, chosen.source != ResumeSource::kPin);
  // Before the restore writes a row: a park given up here still has its head in place.
  keep_or_drop_park(prompt, from, exact_at(r, start_taint(chosen)));
  if (core::Status s = restore(engine, chosen); !s.is_ok()) return fail(s, 0);
  count_start(chosen);
  adopt(prompt, session, chosen, c);
  want_branch_lines(c, r, int64_t(prompt.size()));
  return core::Status::ok();
}

// Anchors at token granularity where a later prompt is likely to part from this one
// (docs/cache.md "Branch points"): where this prompt parted from the rows in place (the
// conversation it displaced, or the next session sharing the same head, parts there too), and
// one token before its end (a generated answer that starts with whitespace merges with the
// generation prompt's last token when the client's copy is re-tokenized).
void ResidentPrefix::want_branch_lines(int64_t c, int64_t r, int64_t m) {
  for (int64_t line : {c, m - 1}) want_line(line, r, m);
}

void ResidentPrefix::want_line(int64_t line, int64_t r, int64_t m) {
  if (!opts_.branch_anchors || guest_) return;
  auto has = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  if (line <= r || line >= m || line % granularity_ != 0 || anchors_.at(line) != nullptr ||
      has(branch_lines_, line) || has(deferred_lines_, line))
    return;
  // Deferred only where take_deferred_anchors can make it: re-forwarding re-makes the bits
  // only on an architecture exact at every token, from an anchor below that the prefill keeps
  // anyway (the resume point's, or an anchor line it passes).
  int64_t base = anchors_.at(r) != nullptr ? r : -1;
  if (line / line_step_ * line_step_ > r) base = line / line_step_ * line_step_;
  const bool defer = granularity_ == 1 && base >= 0 && line - base <= opts_.defer_branch_tokens;
  if (!defer) {
    branch_lines_.push_back(line);
    return;
  }
  deferred_lines_.insert(std::upper_bound(deferred_lines_.begin(), deferred_lines_.end(), line),
                         line);
}

void ResidentPrefix::want_head_line(int64_t head_end) {
  want_line(head_end, int64_t(tokens_.size()), int64_t(prompt_.size()));
}

// InvalidArgument for an offer this tier no longer holds (the engine untouched).
core::Status ResidentPrefix::check_offer(std::span<const int32_t> prompt,
                                         const ResumeOffer& chosen) const {
  const int64_t r = chosen.resume_at;
  if (!chosen.useful()) return core::Status::ok();
  if (r >= int64_t(prompt.size()))
    return core::Status::invalid_argument("resident: an offer must leave a token to prefill");
  switch (chosen.source) {
    case ResumeSource::kAnchor:
      if (anchors_.at(r) == nullptr)
        return core::Status::invalid_argument("resident: the anchor is gone");
      break;
    case ResumeSource::kEnd:
      if (end_.position() != r)
        return core::Status::invalid_argument("resident: the end anchor is gone");
      break;
    case ResumeSource::kPin:
      if (pin_.anchor_at_or_below(r) != r)
        return core::Status::invalid_argument("resident: the pinned anchor is gone");
      break;
    case ResumeSource::kPark:  // swap_park checks its own
    case ResumeSource::kCold:
    case ResumeSource::kStore:
    case ResumeSource::kDisk:
    case ResumeSource::kSpill:
    case ResumeSource::kResponse:
    case ResumeSource::kContinuation:  // never planned
    case ResumeSource::kPrepared:
      break;
  }
  return core::Status::ok();
}

// A guest (docs/cache.md "A request" 1): the conversation in place stays; the rows the guest can
// reach go aside. nullopt: not a guest (or too big for the stash), begin goes on.
std::optional<core::Status> ResidentPrefix::begin_guest(engine::Engine& engine,
                                                        std::span<const int32_t> prompt,
                                                        int64_t max_tokens, int64_t from,
                                                        const ResumeOffer& chosen) {
  const int64_t n = int64_t(tokens_.size());
  const int64_t m = int64_t(prompt.size());
  if (n == 0 || m > opts_.guest_max_tokens || 4 * m >= n) return std::nullopt;
  const int64_t reach = m + std::max<int64_t>(0, max_tokens) + 2 * opts_.stash_margin_rows;
  const int64_t stash_end = std::min({n, reach, engine.capacity()});
  const int64_t rows = std::max<int64_t>(0, stash_end - from);
  if (rows * bytes_per_token_ > opts_.stash_bytes) {
    ++counters_.guest_declines;
    return std::nullopt;
  }
  if (rows > 0) stash_.stash(engine, from, stash_end);
  guest_ = true;
  guest_from_ = from;
  guest_stashed_ = rows > 0;
  ++counters_.guests;
  core::Status s = restore(engine, chosen);
  if (!s.is_ok()) {
    stash_.clear();
    guest_ = false;
    return s;
  }
  count_start(chosen);
  return s;
}

// After a restore at r (or a cold start): the rows in place are the prompt's head up to r, with
// the anchors still valid under them and the taint the resume leaves.
// The taint line of the rows a start from `chosen` resumes over.
int64_t ResidentPrefix::start_taint(const ResumeOffer& chosen) const {
  switch (chosen.source) {
    case ResumeSource::kAnchor:
    case ResumeSource::kEnd:
      return taint_;
    case ResumeSource::kPin:
      return pin_.taint();
    case ResumeSource::kStore:
    case ResumeSource::kDisk:
    case ResumeSource::kSpill:
    case ResumeSource::kPark:
    case ResumeSource::kResponse:
    case ResumeSource::kContinuation:  // never planned
    case ResumeSource::kPrepared:
    case ResumeSource::kCold:
      break;
  }
  if (chosen.useful()) return chosen.exact ? kNoTaint : 0;  // another tier: only its word
  return kNoTaint;                                          // a cold prefill's rows
}

void ResidentPrefix::adopt(std::span<const int32_t> prompt, std::string_view session,
                           const ResumeOffer& chosen, int64_t c) {
  const int64_t r = chosen.useful() ? chosen.resume_at : 0;
  const int64_t base = start_taint(chosen);
  if (chosen.source == ResumeSource::kEnd) {
    anchors_.drop_above(r);
    anchors_.put(end_.release());  // rows up to it stay; it is now a body anchor
  } else if (chosen.source == ResumeSource::kAnchor) {
    anchors_.drop_above(r);
    end_.clear();
  } else if (chosen.source != ResumeSource::kPin && chosen.useful() && chosen.exact) {
    // Another tier (the store) writes rows [0, r) of these tokens as a cold prefill's bits:
    // the rows in place below min(c, r) and below their taint were those bits already, so
    // the anchors there still hold. Dropping them left a conversation the store resumes with
    // no anchor for its shared head (a new session with the same system prompt read it all).
    anchors_.drop_above(std::min({c, r, taint_}));
    end_.clear();
  } else {
    anchors_.clear();
    end_.clear();
  }
  taint_ = resumed_taint(r, base);
  // The prefill writes the prompt's tokens from r: marks below where they part stay true.
  marks_.keep_below(common_prefix(tokens_, prompt));
  if (chosen.source == ResumeSource::kPin) {
    tokens_.assign(pin_.tokens().begin(), pin_.tokens().begin() + r);
  } else {
    tokens_.assign(prompt.begin(), prompt.begin() + r);
  }
  session_.assign(session);
}

// A restore that failed part way: the rows in place are valid only up to `valid`.
core::Status ResidentPrefix::fail(core::Status s, int64_t valid) {
  truncate(valid);
  return s;
}

void ResidentPrefix::count_start(const ResumeOffer& chosen) {
  switch (chosen.source) {
    case ResumeSource::kAnchor:
      ++counters_.hits_anchor;
      return;
    case ResumeSource::kEnd:
      ++counters_.hits_end;
      return;
    case ResumeSource::kPin:
      ++counters_.pin_hits;
      return;
    case ResumeSource::kPark:
      ++counters_.park_hits;
      return;
    case ResumeSource::kCold:
    case ResumeSource::kStore:
    case ResumeSource::kDisk:
    case ResumeSource::kSpill:
    case ResumeSource::kResponse:
    case ResumeSource::kContinuation:  // never planned
    case ResumeSource::kPrepared:
      break;
  }
  if (chosen.useful()) {
    ++counters_.other_tier;
  } else {
    ++counters_.cold;
  }
}

void ResidentPrefix::prepare_replacement(engine::Engine& engine, std::string_view session,
                                         int64_t c, int64_t from, bool may_pin) {
  const bool keys = !session.empty() && !session_.empty();
  const bool same_session = keys && session == session_;
  const bool shares_nothing = anchors_.largest_at_or_below(c) == nullptr;
  if (shares_nothing && (same_session || !keys)) {
    // Compaction-shaped: the head is what the conversation's next turn shares. (Not while the
    // pinned head itself is coming back: it stays as it is.)
    if (!may_pin) return;
    if (park_.held() && !session.empty() && park_.contents().session == session) park_.clear();
    pin_head(engine);
  } else if (!same_session) {
    const ParkPlan plan = plan_park(from);
    if (!plan.ok) {
      // Counted only when there was something worth parking above the shared rows.
      const SectionCopy* top = anchors_.largest_at_or_below(kNoTaint);
      if ((top != nullptr && top->position() > from) || end_.position() > from)
        ++counters_.park_declines;
      return;
    }
    park_.park(park_contents(engine, from, plan, true));
    ++counters_.parks;
  }
}

void ResidentPrefix::pin_head(engine::Engine& engine) {
  const std::vector<int64_t> pos = anchors_.positions();
  for (size_t t = pos.size(); t-- > 0;) {
    const int64_t top = pos[t];
    const std::vector<int64_t> sel = spread(pos, t, opts_.pin_max_anchors);
    if (sel.empty()) break;
    const int64_t bytes = top * bytes_per_token_ + int64_t(sel.size()) * section_bytes_;
    if (bytes > opts_.pin_bytes) continue;
    std::map<int64_t, SectionCopy> anchors;
    for (int64_t p : sel) anchors[p] = anchors_.take(p);
    pin_.pin(std::vector<int32_t>(tokens_.begin(), tokens_.begin() + top),
             RowCopy::capture(engine, 0, top), std::move(anchors), taint_);
    ++counters_.pins;
    return;
  }
  ++counters_.pin_declines;
}

ResidentPrefix::ParkPlan ResidentPrefix::plan_park(int64_t from) const {
  ParkPlan plan;
  std::vector<int64_t> above;
  for (int64_t p : anchors_.positions())
    if (p > from) above.push_back(p);
  auto newest = [&](size_t count, int k) {  // the k largest of above[0..count)
    const size_t take = std::min(count, size_t(std::max(0, k)));
    return std::vector<int64_t>(above.begin() + (count - take), above.begin() + count);
  };
  if (opts_.park_anchors > 0 && end_.held() && end_.position() > from) {
    const int64_t e = end_.position();
    std::vector<int64_t> sel = newest(above.size(), opts_.park_anchors - 1);
    const int64_t bytes = (e - from) * bytes_per_token_ + int64_t(sel.size() + 1) * section_bytes_;
    if (bytes <= opts_.park_bytes) return ParkPlan{true, e, std::move(sel), true};
  }
  for (size_t t = above.size(); t-- > 0;) {
    std::vector<int64_t> sel = newest(t + 1, opts_.park_anchors);
    if (sel.empty()) break;
    const int64_t bytes =
        (above[t] - from) * bytes_per_token_ + int64_t(sel.size()) * section_bytes_;
    if (bytes <= opts_.park_bytes) return ParkPlan{true, above[t], std::move(sel), false};
  }
  return plan;
}

// Moves the plan's anchors (and end) out of the tier into a park; copies its rows when
// capture_rows (a swap copies them block by block itself).
ParkedSession::Contents ResidentPrefix::park_contents(engine::Engine& engine, int64_t from,
                                                      const ParkPlan& plan, bool capture_rows) {
  ParkedSession::Contents k;
  k.tokens.assign(tokens_.begin(), tokens_.begin() + plan.top);
  k.session = session_;
  k.begin = from;
  k.block_rows = std::max<int64_t>(1, opts_.park_block_rows);
  k.taint = taint_;
  k.marks = marks_.below(plan.top);
  for (int64_t p : plan.anchors) k.anchors[p] = anchors_.take(p);
  if (plan.with_end) k.end = end_.release();
  if (capture_rows) {
    for (int64_t x = from; x < plan.top; x += k.block_rows)
      k.blocks.push_back(RowCopy::capture(engine, x, std::min(x + k.block_rows, plan.top)));
  }
  return k;
}

core::Status ResidentPrefix::swap_park(engine::Engine& engine, std::span<const int32_t> prompt,
                                       std::string_view session, int64_t a) {
  if (!park_.held()) return core::Status::invalid_argument("resident: no parked session");
  {
    const ParkedSession::Contents& p = park_.contents();
    const bool at_end = !p.end.empty() && p.end.position() == a;
    if (common_prefix(tokens_, p.tokens) < p.begin || (!at_end && p.anchors.count(a) == 0) ||
        a > p.rows_end() || a < p.begin || common_prefix(p.tokens, prompt) < a)
      return core::Status::invalid_argument("resident: the parked offer is gone");
  }
  ParkedSession::Contents back = park_.release();
  // Where this prompt parts from the parked conversation is a branch point as it is for the
  // conversation in place (begin()).
  const int64_t c = common_prefix(back.tokens, prompt);
  const int64_t from = back.begin;
  const ParkPlan plan = plan_park(from);
  ParkedSession::Contents out;
  if (plan.ok) out = park_contents(engine, from, plan, false);
  // Exchange block by block: copy the rows in place out, then write the parked ones there.
  const int64_t blk = back.block_rows;
  out.block_rows = blk;
  const int64_t hi = std::max(plan.ok ? plan.top : from, a);
  size_t k = 0;
  for (int64_t x = from; x < hi; x += blk, ++k) {
    if (plan.ok && x < plan.top)
      out.blocks.push_back(RowCopy::capture(engine, x, std::min(x + blk, plan.top)));
    if (x < a) {
      core::Status s = back.blocks[k].write_back(engine, x, std::min(x + blk, a));
      if (!s.is_ok()) return fail(s, 0);
    }
    if (k < back.blocks.size()) back.blocks[k] = RowCopy();
  }
  const bool at_end = !back.end.empty() && back.end.position() == a;
  const SectionCopy& state = at_end ? back.end : back.anchors.at(a);
  if (core::Status s = state.write_back(engine); !s.is_ok()) return fail(s, 0);
  if (core::Status s = engine.resume_at(a); !s.is_ok()) return fail(s, 0);
  // The parked conversation is the resident one now.
  anchors_.drop_above(from);
  end_.clear();
  for (auto& [pos, anchor] : back.anchors)
    if (pos <= a) anchors_.put(std::move(anchor));
  if (at_end) anchors_.put(std::move(back.end));
  taint_ = resumed_taint(a, back.taint);
  tokens_.assign(back.tokens.begin(), back.tokens.begin() + a);
  marks_ = std::move(back.marks);
  marks_.keep_below(c);  // the prefill writes the prompt's tokens from a
  session_.assign(session);
  if (plan.ok) {
    park_.park(std::move(out));
    ++counters_.parks;
  }
  count_start(ResumeOffer{a, ResumeSource::kPark});
  want_branch_lines(c, a, int64_t(prompt.size()));
  return core::Status::ok();
}

// A park needs the rows [0, begin) in place to be its head. A request that rewrites rows
// below begin keeps them so only when it writes the same tokens bit for bit (an exact resume
// over a head that was exact).
void ResidentPrefix::keep_or_drop_park(std::span<const int32_t> prompt, int64_t from,
                                       bool exact_resume) {
  if (!park_.held()) return;
  const ParkedSession::Contents& p = park_.contents();
  if (from >= p.begin) return;
  if (common_prefix(prompt, p.tokens) >= p.begin && exact_resume && p.begin <= p.taint) return;
  park_.give_up();
}

// The park's head is rows [0, begin) in place: the tokens agree (the bits do while the park is
// held, keep_or_drop_park) and no guest has overwritten them.
bool ResidentPrefix::park_head_in_place(const ParkedSession::Contents& p) const {
  return common_prefix(tokens_, p.tokens) >= p.begin && (!guest_ || guest_from_ >= p.begin);
}

const ParkedSession::Contents* ResidentPrefix::parked() const {
  if (!park_.held() || !park_head_in_place(park_.contents())) return nullptr;
  return &park_.contents();
}

void ResidentPrefix::set_park_give_up_hook(ParkedSession::GiveUpHook hook) {
  park_.set_give_up_hook([this, hook = std::move(hook)](const ParkedSession::Contents& p) {
    if (hook && park_head_in_place(p)) hook(p);
  });
}

bool ResidentPrefix::keeps_conversation(std::span<const int32_t> prompt, std::string_view session,
                                        const ResumeOffer& chosen) const {
  const int64_t n = int64_t(tokens_.size());
  const int64_t m = int64_t(prompt.size());
  const bool in_place =
      chosen.source == ResumeSource::kAnchor || chosen.source == ResumeSource::kEnd;
  const int64_t from = in_place ? chosen.resume_at : 0;
  if (!end_.held() || from >= end_.position()) return true;
  if (chosen.source == ResumeSource::kPark)  // swap_park parks what it replaces
    return park_.held() && plan_park(park_.contents().begin).with_end;
  if (n > 0 && m <= opts_.guest_max_tokens && 4 * m < n) return true;  // begin_guest
  const int64_t c = common_prefix(tokens_, prompt);
  if (c >= n) return true;
  // prepare_replacement's choice: a pin keeps only the head, a park may hold it all.
  const bool keys = !session.empty() && !session_.empty();
  const bool same_session = keys && session == session_;
  const bool shares_nothing = anchors_.largest_at_or_below(c) == nullptr;
  if ((shares_nothing && (same_session || !keys)) || same_session) return false;
  return plan_park(from).with_end;
}

std::vector<const SectionCopy*> ResidentPrefix::anchor_copies() const {
  std::vector<const SectionCopy*> out;
  for (int64_t p : anchors_.positions()) out.push_back(anchors_.at(p));
  return out;
}

void ResidentPrefix::adopt_conversation(engine::Engine& engine, std::span<const int32_t> tokens,
                                        std::string_view session, int64_t taint,
                                        ConversationMarks marks) {
  clear();
  learn(engine);
  tokens_.assign(tokens.begin(), tokens.end());
  session_.assign(session);
  taint_ = taint;
  marks_ = std::move(marks);
  marks_.keep_below(int64_t(tokens_.size()));
  end_.keep(SectionCopy::capture(engine));
}

void ResidentPrefix::on_anchor(engine::Engine& engine, int64_t position, bool is_end) {
  if (guest_) return;  // a guest's state is not the conversation's
  if (position < int64_t(tokens_.size()) || position > int64_t(prompt_.size())) return;
  tokens_.assign(prompt_.begin(), prompt_.begin() + position);
  const bool on_line = opts_.anchor_spacing <= 0 || position % opts_.anchor_spacing == 0;
  const bool branch =
      std::find(branch_lines_.begin(), branch_lines_.end(), position) != branch_lines_.end();
  if (!is_end && !on_line && !branch) return;
  if (branch) ++counters_.branch_anchors;
  anchors_.put(SectionCopy::capture(engine));
  ++counters_.anchors_taken;
}

void ResidentPrefix::keep_end(engine::Engine& engine, std::span<const int32_t> forwarded,
                              ConversationMarks added) {
  if (guest_) return;
  prompt_.clear();
  const int64_t p = int64_t(tokens_.size());
  const int64_t f = int64_t(forwarded.size());
  if (f < p || common_prefix(tokens_, forwarded) < p || engine.length() != f) {
    ++counters_.ends_declined;
    return;
  }
  // Decode writes one-token calls: off the grid of a coarser architecture.
  if (granularity_ > 1 && f > p) taint_ = std::min(taint_, p);
  tokens_.assign(forwarded.begin(), forwarded.end());
  add_marks(std::move(added), p, f);
  end_.clear();
  if (!opts_.end_anchor) return;
  end_.keep(SectionCopy::capture(engine));
  ++counters_.ends_kept;
}

core::Result<bool> ResidentPrefix::take_echo_anchor(engine::Engine& engine, int64_t at,
                                                    int64_t not_below, int64_t max_tokens) {
  if (!end_.held() || engine.length() != end_.position()) return false;
  int64_t tokens = 0;
  core::Result<bool> taken =
      reforward_anchor(engine, end_.state(), at, not_below, max_tokens, &tokens, {});
  if (taken && *taken) {
    ++counters_.echo_anchors;
    counters_.echo_tokens += tokens;
  }
  return taken;
}

core::Result<int64_t> ResidentPrefix::take_deferred_anchors(
    engine::Engine& engine, const std::function<void(int64_t)>& fence) {
  const std::vector<int64_t> lines = std::move(deferred_lines_);
  deferred_lines_.clear();
  if (lines.empty() || guest_ || engine.length() != int64_t(tokens_.size())) return 0;
  // The state to put back: the end anchor's, or (no end anchor kept) a copy taken now.
  SectionCopy now;
  if (!end_.held() || end_.position() != engine.length()) now = SectionCopy::capture(engine);
  const SectionCopy& back = now.empty() ? end_.state() : now;
  int64_t taken = 0;
  for (int64_t line : lines) {  // ascending: each may start from the one before
    int64_t tokens = 0;
    core::Result<bool> t =
        reforward_anchor(engine, back, line, 0, opts_.defer_branch_tokens, &tokens, fence);
    if (!t) return t.error();
    if (!*t) continue;
    ++taken;
    ++counters_.branch_anchors;
    ++counters_.branch_deferred;
  }
  return taken;
}

core::Result<bool> ResidentPrefix::reforward_anchor(engine::Engine& engine, const SectionCopy& back,
                                                    int64_t at, int64_t not_below,
                                                    int64_t max_tokens, int64_t* tokens,
                                                    const std::function<void(int64_t)>& fence) {
  const int64_t e = back.position();
  if (guest_ || !opts_.branch_anchors || granularity_ != 1 || at <= 0 || at >= e ||
      engine.length() != e || e > int64_t(tokens_.size()) || anchors_.at(at) != nullptr ||
      !exact_at(at, taint_))
    return false;
  const SectionCopy* below = anchors_.largest_at_or_below(at);
  if (below == nullptr || below->position() < not_below || at - below->position() > max_tokens)
    return false;
  const int64_t from = below->position();
  const std::span<const int32_t> ids =
      std::span<const int32_t>(tokens_).subspan(size_t(from), size_t(at - from));
  if (fence) fence(from);
  if (core::Status s = below->write_back(engine); !s.is_ok()) return fail(s, from);
  if (core::Status s = engine.resume_at(from); !s.is_ok()) return fail(s, from);
  if (core::Status s = engine.prefill(ids); !s.is_ok()) return fail(s, from);
  anchors_.put(SectionCopy::capture(engine));
  ++counters_.anchors_taken;
  *tokens = at - from;
  // The state at e back: the rows above `at` were never touched.
  if (core::Status s = back.write_back(engine); !s.is_ok()) return fail(s, at);
  if (core::Status s = engine.resume_at(e); !s.is_ok()) return fail(s, at);
  return true;
}

core::Status ResidentPrefix::finish_request(engine::Engine& engine) {
  if (!guest_) return core::Status::ok();
  guest_ = false;
  prompt_.clear();
  if (stash_.held()) {
    core::Status s = stash_.put_back(engine);
    return s.is_ok() ? s : fail(s, guest_from_);
  }
  if (guest_stashed_) {  // the Budget shed the stash: the guest overwrote those rows
    ++counters_.guest_stash_lost;
    truncate(guest_from_);
  }
  return core::Status::ok();
}

// This generation's marks, positions in [p, f) (the tokens before p keep theirs).
void ResidentPrefix::add_marks(ConversationMarks added, int64_t p, int64_t f) {
  marks_.keep_below(p);
  std::sort(added.hidden.begin(), added.hidden.end(),
            [](const HiddenSpan& x, const HiddenSpan& y) { return x.begin < y.begin; });
  for (const HiddenSpan& h : added.hidden)
    if (!h.empty() && h.begin >= p && h.end <= f) marks_.hidden.push_back(h);
  std::sort(added.generated.begin(), added.generated.end());
  for (auto [b, e] : added.generated)
    if (b < e && b >= p && e <= f) marks_.generated.emplace_back(b, e);
}

// The rows in place are valid only up to n now.
void ResidentPrefix::truncate(int64_t n) {
  if (n < int64_t(tokens_.size())) tokens_.resize(size_t(n));
  marks_.keep_below(n);
  anchors_.drop_above(n);
  if (end_.position() > n) end_.clear();
  if (park_.held() && park_.contents().begin > n) park_.clear();
}

void ResidentPrefix::clear() {
  tokens_.clear();
  marks_.clear();
  session_.clear();
  taint_ = kNoTaint;
  anchors_.clear();
  end_.clear();
  stash_.clear();
  pin_.clear();
  park_.clear();
  prompt_.clear();
  branch_lines_.clear();
  deferred_lines_.clear();
  guest_ = false;
  guest_stashed_ = false;
}

std::vector<CacheLevel*> ResidentPrefix::levels() {
  return {&anchors_, &end_, &stash_, &park_, &pin_};
}

ResidentStats ResidentPrefix::stats() const {
  ResidentStats s = counters_;
  s.resident_tokens = int64_t(tokens_.size());
  s.anchors = int64_t(anchors_.size());
  s.anchor_bytes = anchors_.held_bytes();
  s.anchors_evicted = anchors_.evicted();
  s.end_position = end_.position();
  s.end_bytes = end_.held_bytes();
  s.taint = taint_ == kNoTaint ? -1 : taint_;
  s.stash_bytes = stash_.held_bytes();
  s.pin_bytes = pin_.held_bytes();
  s.pin_tokens = int64_t(pin_.tokens().size());
  s.park_bytes = park_.held_bytes();
  s.park_tokens = int64_t(park_.contents().tokens.size());
  return s;
}

}  // namespace anchorage::cache
