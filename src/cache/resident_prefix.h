// ResidentPrefix: the tier that serves a conversation from the rows still in the engine's own
// buffers (docs/cache.md "Resident prefix"). It holds:
//   - the resident tokens: the ids whose view rows are in place, rows [0, n);
//   - body anchors (AnchorSet): sections copied at anchor lines of every prefill and at the end
//     of every prefill;
//   - the end anchor (EndAnchor): sections after a generation, with its hidden spans;
//   - a guest stash (RowStash), a pinned head (PinnedHead) and one parked session
//     (ParkedSession), which keep the conversation's rows across a short unrelated request, a
//     compaction and another session.
// It knows a model only through engine::Engine's state contract; sizes come from cost().
//
// Taint: with exact_granularity() g > 1, rows written by decode, and every row a prefill wrote
// after resuming off the g-grid or from tainted rows, are not a cold prefill's bits. taint() is
// the lowest such row. Resuming at position a is bit-exact (ResumeOffer::exact) iff a % g == 0
// and a <= taint; otherwise it is held to the greedy gate only. With g == 1 nothing is tainted.
//
// The calls of one request, all on the engine thread:
//   replay(client prompt) -> prompt (hidden spans put back), offer(prompt, session) [and the
//   other tiers'], begin(engine, prompt, session, max_tokens, chosen), prefill with
//   PrefillOptions::on_anchor = on_anchor(...), generation, keep_end(engine, forwarded,
//   hidden), finish_request(engine) (before the next request; begin also calls it).
//
// Thread safety: none; every method runs on the engine thread (no locking inside).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/anchor_set.h"
#include "cache/cache_level.h"
#include "cache/conversation_marks.h"
#include "cache/end_anchor.h"
#include "cache/hidden_span.h"
#include "cache/offer_source.h"
#include "cache/parked_session.h"
#include "cache/pinned_head.h"
#include "cache/resume_offer.h"
#include "cache/row_stash.h"
#include "cache/stat_field.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

struct ResidentOptions {
  // Body anchors at positions that are multiples of this (it should be a multiple of the
  // engine's anchor spacing: the engine reports only its own lines); 0: every line reported.
  int64_t anchor_spacing = 1024;
  int64_t anchor_bytes = int64_t(5) << 29;  // 2.5 GiB of body anchors
  int keep_newest = 4;                      // anchors the anchor budget never evicts
  bool end_anchor = true;                   // keep the end anchor after a generation
  int64_t guest_max_tokens = 8192;          // a guest's prompt: at most this, and < 1/4 resident
  int64_t stash_bytes = int64_t(1) << 30;   // the guest stash
  int64_t pin_bytes = int64_t(4) << 30;     // the pinned head, rows and anchors
  int pin_max_anchors = 8;
  // The anchor budget evicts anchors at multiples of this up to pin_max_anchors of them last,
  // so a pinned head has anchors spread over it (0: no preference).
  int64_t pin_anchor_stride = 4096;
  int64_t park_bytes = int64_t(4) << 30;  // the parked session, rows and anchors
  int park_anchors = 4;                   // newest anchors parked (the end takes one place)
  int64_t stash_margin_rows = 512;        // two of these past a guest's prompt + max_tokens
  int64_t park_block_rows = 1024;         // rows per block of a park swap
  // Anchors at branch points: where a prompt parted from the rows in place, and one token
  // before a prompt's end (docs/cache.md "Branch points").
  bool branch_anchors = true;
  // A branch point at most this many tokens above an anchor the prefill keeps anyway (the
  // resume point's, an anchor line it passes) is not cut in the prefill: every cut costs a
  // forward call of its own (the weights read once more). It is taken after the answer
  // instead (take_deferred_anchors), by re-forwarding from that anchor. 0: every branch point
  // is cut in the prefill.
  int64_t defer_branch_tokens = 64;
};

// Counters and bytes for /v1/cache/stats and /metrics (a plain value).
struct ResidentStats {
  int64_t resident_tokens = 0;
  int64_t anchors = 0;
  int64_t anchor_bytes = 0;
  int64_t anchors_taken = 0;
  int64_t branch_anchors = 0;   // of those, taken at a branch point (not a line, not an end)
  int64_t branch_deferred = 0;  // of those, taken after the answer (take_deferred_anchors)
  int64_t echo_anchors = 0;     // take_echo_anchor: taken inside an answer after it
  int64_t echo_tokens = 0;      // tokens it re-forwarded for them
  int64_t anchors_evicted = 0;  // by the anchor budget
  int64_t end_position = -1;    // -1: no end anchor
  int64_t end_bytes = 0;
  int64_t ends_kept = 0;
  int64_t ends_declined = 0;  // keep_end found the engine or the tokens not as expected
  int64_t taint = -1;         // lowest tainted row in place; -1: none
  int64_t hits_anchor = 0;    // begin() restored from a body anchor
  int64_t hits_end = 0;
  int64_t pin_hits = 0;
  int64_t park_hits = 0;
  int64_t other_tier = 0;  // begin() with another tier's offer
  int64_t cold = 0;        // begin() with no offer
  int64_t guests = 0;
  int64_t guest_declines = 0;    // too big for the stash: served as a replacement
  int64_t guest_stash_lost = 0;  // the stash was shed while a guest ran
  int64_t stash_bytes = 0;
  int64_t pins = 0;
  int64_t pin_declines = 0;
  int64_t pin_bytes = 0;
  int64_t pin_tokens = 0;
  int64_t parks = 0;
  int64_t park_declines = 0;
  int64_t park_bytes = 0;
  int64_t park_tokens = 0;

  // Every field once, for JSON, /metrics and /health (stat_field.h).
  template <class F>
  void visit(F&& f) const {
    f("tokens", resident_tokens, StatKind::kGauge);
    f("anchors", anchors, StatKind::kGauge);
    f("anchor_bytes", anchor_bytes, StatKind::kGauge);
    f("anchors_taken", anchors_taken, StatKind::kCounter);
    f("branch_anchors", branch_anchors, StatKind::kCounter);
    f("branch_deferred", branch_deferred, StatKind::kCounter);
    f("echo_anchors", echo_anchors, StatKind::kCounter);
    f("echo_tokens", echo_tokens, StatKind::kCounter);
    f("anchors_evicted", anchors_evicted, StatKind::kCounter);
    f("end_position", end_position, StatKind::kGauge);
    f("end_bytes", end_bytes, StatKind::kGauge);
    f("ends_kept", ends_kept, StatKind::kCounter);
    f("ends_declined", ends_declined, StatKind::kCounter);
    f("taint", taint, StatKind::kGauge);
    f("hits_anchor", hits_anchor, StatKind::kCounter);
    f("hits_end", hits_end, StatKind::kCounter);
    f("pin_hits", pin_hits, StatKind::kCounter);
    f("park_hits", park_hits, StatKind::kCounter);
    f("other_tier", other_tier, StatKind::kCounter);
    f("cold", cold, StatKind::kCounter);
    f("guests", guests, StatKind::kCounter);
    f("guest_declines", guest_declines, StatKind::kCounter);
    f("guest_stash_lost", guest_stash_lost, StatKind::kCounter);
    f("stash_bytes", stash_bytes, StatKind::kGauge);
    f("pins", pins, StatKind::kCounter);
    f("pin_declines", pin_declines, StatKind::kCounter);
    f("pin_bytes", pin_bytes, StatKind::kGauge);
    f("pin_tokens", pin_tokens, StatKind::kGauge);
    f("parks", parks, StatKind::kCounter);
    f("park_declines", park_declines, StatKind::kCounter);
    f("park_bytes", park_bytes, StatKind::kGauge);
    f("park_tokens", park_tokens, StatKind::kGauge);
  }
};

class ResidentPrefix final : public OfferSource {
 public:
  static constexpr int64_t kNoTaint = INT64_MAX;

  explicit ResidentPrefix(const ResidentOptions& opts);
  ResidentPrefix(const ResidentPrefix&) = delete;
  ResidentPrefix& operator=(const ResidentPrefix&) = delete;

  const ResidentOptions& options() const { return opts_; }
  // The tokenizer's whitespace-only token ids (newlines, spaces, a tab): replay's glue.
  void set_glue_ids(std::vector<int32_t> ids);

  // No side effects: where `prompt` (already through replay()) of `session` could resume from
  // what this tier holds — the rows in place with a body anchor or the end anchor (sources
  // kAnchor, kEnd), the pinned head or the parked session (kPin, kPark). The largest
  // position wins; on a tie the rows in place. resume_at < prompt.size() always.
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const override;

  // The client's copy with the end anchor's hidden spans put back and the whitespace glue next
  // to them aligned (end_replay.h), when it starts with every token up to the end anchor — of
  // the rows in place, else of the parked session — that way; nullopt otherwise. The result
  // starts with the rows' own tokens up to that end anchor.
  std::optional<std::vector<int32_t>> replay(std::span<const int32_t> prompt) const;

  // Before the prefill of `prompt`. `chosen` is the planner's pick: an offer of this tier
  // (restored here: sections, rows for pin/park, resume_at), of another tier (this tier only
  // prepares; that tier restores afterwards), or none (engine.reset()). Preparing means: a
  // guest (prompt <= guest_max_tokens and < 1/4 of the resident tokens) gets the rows it can
  // reach stashed; otherwise a prompt that parts from the rows in place and shares no anchor
  // with them, of the same session (or with no session keys), pins the head; one of another
  // session parks the rows it will overwrite. InvalidArgument for an offer this tier no longer
  // holds (the engine is then untouched).
  core::Status begin(engine::Engine& engine, std::span<const int32_t> prompt,
                     std::string_view session, int64_t max_tokens, const ResumeOffer& chosen);
  // PrefillOptions::extra_lines of the prefill begin() prepared: the branch points where
  // on_anchor takes an anchor too.
  const std::vector<int64_t>& branch_lines() const { return branch_lines_; }
  // After begin(): where the prompt's last user message starts (the server knows the chat
  // template; this tier does not) becomes a branch point too, when the prefill passes it. The
  // next prompt with the same head and another last message (a title request after another,
  // the conversation after a compaction served as sent) parts there.
  void want_head_line(int64_t head_end);
  // PrefillOptions::on_anchor of the prefill begin() prepared.
  void on_anchor(engine::Engine& engine, int64_t position, bool is_end);
  // After the generation: `forwarded` is every token the engine forwarded (the prompt and the
  // generated tokens but the last sampled one), `added` this generation's marks (the spans the
  // client does not see, the region generated; those outside [prompt, forwarded) are
  // dropped). The rows become valid up to forwarded.size(); the end anchor is kept there.
  void keep_end(engine::Engine& engine, std::span<const int32_t> forwarded,
                ConversationMarks added);
  // After keep_end, with the engine at the end anchor: an anchor at `at` inside the rows below
  // the end (where the client's copy of the answer is predicted to part from the generated
  // tokens, docs/cache.md "Echo anchors"). Made by re-forwarding the tokens from the largest
  // anchor at or below `at` — only when that anchor is at or above `not_below` and at most
  // `max_tokens` below `at` — and putting the end's state back: the rows re-forwarded get the
  // bits they already hold (batch invariance), so only on an architecture exact at every
  // token. False when it did nothing (no error: the next turn then re-reads from below).
  core::Result<bool> take_echo_anchor(engine::Engine& engine, int64_t at, int64_t not_below,
                                      int64_t max_tokens);
  // After the generation (keep_end), with the engine at the end of the rows in place: the
  // branch points of the last prefill that were deferred (ResidentOptions::
  // defer_branch_tokens), each made as an echo anchor is (re-forwarding from the anchor below
  // it, the state at the end put back after: the end anchor's, or a copy taken first). The plan is
  // dropped by the next begin(): a request that comes first does without them. `fence` is
  // called with the first row each re-forward writes, before it does (a disk writer may be
  // copying those rows). The number taken; an error leaves the engine's state untrusted (as
  // take_echo_anchor's).
  core::Result<int64_t> take_deferred_anchors(engine::Engine& engine,
                                              const std::function<void(int64_t)>& fence);
  // The branch points the last begin() deferred (ascending; none once taken).
  const std::vector<int64_t>& deferred_lines() const { return deferred_lines_; }
  // Puts a guest's stash back (the rows in place are the conversation's again). Idempotent.
  core::Status finish_request(engine::Engine& engine);
  // Drops everything (a guest's stash too: call finish_request first to keep the rows).
  void clear();

  // For the session spill (docs/session-spill.md). Whether begin() with this prompt and offer
  // keeps the conversation in place up to its end anchor somewhere in RAM: a guest, a
  // continuation, or a park that holds it to its end. False: its rows from `from` are lost.
  bool keeps_conversation(std::span<const int32_t> prompt, std::string_view session,
                          const ResumeOffer& chosen) const;
  // The body anchors in place (ascending), for a save of the conversation.
  std::vector<const SectionCopy*> anchor_copies() const;
  // The body anchor at `position` (null: none).
  const SectionCopy* anchor_at(int64_t position) const { return anchors_.at(position); }
  // The parked conversation when the rows in place are still its head (null: none).
  const ParkedSession::Contents* parked() const;
  // Called with the parked conversation before the park gives it up (parked over, its head
  // rewritten, shed), only while the rows in place are still its head.
  void set_park_give_up_hook(ParkedSession::GiveUpHook hook);
  // Another tier wrote a whole conversation into the idle engine (rows [0, tokens.size()) and
  // the sections there): it becomes the conversation in place, its end anchor at its end.
  void adopt_conversation(engine::Engine& engine, std::span<const int32_t> tokens,
                          std::string_view session, int64_t taint, ConversationMarks marks);

  // In the shedding order: body anchors, end anchor, guest stash, park, pin.
  std::vector<CacheLevel*> levels();
  ResidentStats stats() const;

  std::span<const int32_t> tokens() const { return tokens_; }
  // The end anchor of the rows in place (held() false when there is none).
  const EndAnchor& end_anchor() const { return end_; }
  // What the tokens in place carry (hidden spans, generated regions); cut where they are.
  const ConversationMarks& marks() const { return marks_; }
  int64_t taint() const { return taint_; }
  bool guest_active() const { return guest_; }
  std::string_view session() const { return session_; }

 private:
  struct ParkPlan {
    bool ok = false;
    int64_t top = 0;               // parked rows [from, top)
    std::vector<int64_t> anchors;  // body anchors to park
    bool with_end = false;
  };

  void learn(const engine::Engine& engine);
  bool exact_at(int64_t pos, int64_t taint) const;
  int64_t resumed_taint(int64_t r, int64_t base) const;
  core::Status restore(engine::Engine& engine, const ResumeOffer& chosen) const;
  core::Status check_offer(std::span<const int32_t> prompt, const ResumeOffer& chosen) const;
  std::optional<core::Status> begin_guest(engine::Engine& engine, std::span<const int32_t> prompt,
                                          int64_t max_tokens, int64_t from,
                                          const ResumeOffer& chosen);
  void adopt(std::span<const int32_t> prompt, std::string_view session, const ResumeOffer& chosen,
             int64_t c);
  core::Status fail(core::Status s, int64_t valid);
  void want_branch_lines(int64_t c, int64_t r, int64_t m);
  void want_line(int64_t line, int64_t r, int64_t m);
  // take_echo_anchor's work, with the engine at back.position(): an anchor at `at`
  // re-forwarded from the largest anchor at or below it (within `max_tokens`, at or above
  // `not_below`), then `back` written back. False when nothing was done; *tokens: how many
  // were re-forwarded; fence(first row re-forwarded) first.
  core::Result<bool> reforward_anchor(engine::Engine& engine, const SectionCopy& back, int64_t at,
                                      int64_t not_below, int64_t max_tokens, int64_t* tokens,
                                      const std::function<void(int64_t)>& fence);
  void count_start(const ResumeOffer& chosen);
  void prepare_replacement(engine::Engine& engine, std::string_view session, int64_t c,
                           int64_t from, bool may_pin);
  void pin_head(engine::Engine& engine);
  ParkPlan plan_park(int64_t from) const;
  ParkedSession::Contents park_contents(engine::Engine& engine, int64_t from, const ParkPlan& plan,
                                        bool capture_rows);
  core::Status swap_park(engine::Engine& engine, std::span<const int32_t> prompt,
                         std::string_view session, int64_t a);
  void keep_or_drop_park(std::span<const int32_t> prompt, int64_t from, bool exact_resume);
  bool park_head_in_place(const ParkedSession::Contents& p) const;
  int64_t start_taint(const ResumeOffer& chosen) const;
  void truncate(int64_t n);
  void add_marks(ConversationMarks added, int64_t p, int64_t f);

  ResidentOptions opts_;
  std::vector<int32_t> glue_;  // sorted

  // Learnt from the engine at the first begin().
  int64_t granularity_ = 1;
  int64_t bytes_per_token_ = 0;
  int64_t section_bytes_ = 0;
  int64_t line_step_ = 1;  // body anchor lines: multiples of this

  std::vector<int32_t> tokens_;  // rows [0, tokens_.size()) in place are these tokens'
  ConversationMarks marks_;      // of tokens_
  std::string session_;
  int64_t taint_ = kNoTaint;
  AnchorSet anchors_;
  EndAnchor end_;
  RowStash stash_;
  PinnedHead pin_;
  ParkedSession park_;

  std::vector<int32_t> prompt_;          // the prefill begin() prepared (on_anchor extends tokens_)
  std::vector<int64_t> branch_lines_;    // its branch points (want_branch_lines)
  std::vector<int64_t> deferred_lines_;  // branch points taken after the answer instead
  bool guest_ = false;
  int64_t guest_from_ = 0;  // the first row the guest may overwrite
  bool guest_stashed_ = false;

  ResidentStats counters_;
};

}  // namespace anchorage::cache
