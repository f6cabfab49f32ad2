// ResidentPrefix: every path is checked against a cold prefill of the same prompt by memcmp
// (logits, sections, view rows) on qwen35 `tiny` f32 (exact at every token) and on the toy
// (exact on a 16-token grid only, so the taint paths run). Paths held to the greedy gate only
// (the toy's end anchor) are checked against the same conversation run with no cache, which
// restores the exact state the generation wrote.
#include "cache/resident_prefix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "cache/resident_rig.h"
#include "cache/state_store.h"

namespace anchorage::test {
namespace {

using cache::HiddenSpan;
using cache::ResidentOptions;
using cache::ResumeSource;
using cache::ResumeTier;

class ResidentPrefixTest : public ::testing::TestWithParam<ModelVariant> {
 protected:
  std::vector<int32_t> tokens(int64_t n, uint64_t seed) {
    return random_tokens(n, rig().vocab(), seed);
  }
  ResidentRig& rig(const ResidentOptions& o = rig_resident_options()) {
    if (!rig_) rig_ = std::make_unique<ResidentRig>(GetParam(), o);
    return *rig_;
  }
  bool exact_everywhere() { return rig().granularity() == 1; }

  std::unique_ptr<ResidentRig> rig_;
};

// A prompt of `keep` tokens of `base` followed by `extra` new ones.
std::vector<int32_t> parted(const std::vector<int32_t>& base, int64_t keep,
                            const std::vector<int32_t>& extra) {
  return concat(std::span<const int32_t>(base.data(), size_t(keep)), extra);
}

TEST_P(ResidentPrefixTest, ResumesAtTheLargestAnchorAtBelowAndBetweenLines) {
  // keep -> the expected anchor: on a line, just below one, between two, and the end of
  // the first prefill (304: a multiple of 16, so exact on the toy too).
  const std::vector<std::pair<int64_t, int64_t>> cases = {
      {128, 128}, {127, 64}, {100, 64}, {304, 304}};
  for (const auto& [keep, expect] : cases) {
    rig_.reset();
    ResidentRig& r = rig();
    const std::vector<int32_t> p1 = tokens(304, 1);
    const Served first = r.serve(p1, "s", 0);
    EXPECT_FALSE(first.offer.useful());
    EXPECT_EQ(r.rp.stats().anchors, 5);  // 64, 128, 192, 256 and the end of the prefill
    EXPECT_TRUE(same_state(r.cold(p1), first.after_prefill));

    const std::vector<int32_t> p2 = parted(p1, keep, tokens(60, 100 + uint64_t(keep)));
    const Served second = r.serve(p2, "s", 0);
    EXPECT_EQ(second.offer.resume_at, expect) << "keep " << keep;
    EXPECT_EQ(second.offer.source, ResumeSource::kAnchor);
    EXPECT_EQ(tier_of(second.offer.source), ResumeTier::kResident);
    EXPECT_TRUE(second.offer.exact);
    EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill)) << "keep " << keep;
    EXPECT_EQ(r.rp.stats().hits_anchor, 1);
    EXPECT_EQ(r.rp.tokens().size(), p2.size());
  }
}

// Issue 12 §5: where a prompt parted from the rows in place, an anchor is taken on the way, so
// the next prompt parting at the same place resumes exactly there; and one token before a
// prompt's end (an answer starting with whitespace re-tokenizes into the prompt's last token).
TEST_P(ResidentPrefixTest, BranchAnchorsServeTheNextPromptPartingAtTheSamePlace) {
  ResidentOptions o = rig_resident_options();
  o.branch_anchors = true;
  ResidentRig& r = rig(o);
  const std::vector<int32_t> p1 = tokens(300, 31);
  r.serve(p1, "s", 0);
  // 208: on the toy's 16-grid, off the 64 lines.
  const std::vector<int32_t> p2 = parted(p1, 208, tokens(50, 32));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.resume_at, 192);  // the line below: no anchor at 208 yet
  EXPECT_GE(r.rp.stats().branch_anchors, 1);
  const std::vector<int32_t> p3 = parted(p1, 208, tokens(40, 33));
  const Served third = r.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.resume_at, 208);
  EXPECT_EQ(third.offer.source, ResumeSource::kAnchor);
  EXPECT_TRUE(third.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
  if (exact_everywhere()) {  // 247 is off the toy's grid: no anchor there
    const std::vector<int32_t> p4 = parted(p3, 247, tokens(20, 34));
    const Served fourth = r.serve(p4, "s", 0);
    EXPECT_EQ(fourth.offer.resume_at, 247);
    EXPECT_TRUE(same_state(r.cold(p4), fourth.after_prefill));
  }
}

// Issue 12 §5: where a prompt's last user message starts is a branch point too, so the next
// prompt with the same head and another last message (a title request after another, the
// conversation after a compaction served as sent) resumes exactly there.
TEST_P(ResidentPrefixTest, TheLastUserMessageStartIsABranchPoint) {
  ResidentOptions o = rig_resident_options();
  o.branch_anchors = true;
  ResidentRig& r = rig(o);
  const std::vector<int32_t> p1 = tokens(300, 41);
  r.serve(p1, "s", 0, {}, -1, /*head_end=*/208);  // 208: on the toy's grid, off the lines
  // 208 and one token before the end (299: off the toy's grid).
  EXPECT_EQ(r.rp.stats().branch_anchors, exact_everywhere() ? 2 : 1);
  const std::vector<int32_t> p2 = parted(p1, 208, tokens(60, 42));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.resume_at, 208);
  EXPECT_EQ(second.offer.source, ResumeSource::kAnchor);
  EXPECT_TRUE(second.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
  // Below the resume point or at the prompt's end nothing is wanted.
  rig_.reset();
  ResidentRig& fresh = rig(o);
  fresh.serve(p1, "s", 0, {}, -1, /*head_end=*/int64_t(p1.size()));
  EXPECT_EQ(fresh.rp.stats().branch_anchors, exact_everywhere() ? 1 : 0);
}

// Issue 12 §5: an echo anchor (taken after an answer where the client's copy is predicted to
// part from the generated tokens) re-forwards rows that already hold those bits, leaves the end
// state as it was (memcmp), and serves a next prompt parting there exactly as a cold prefill.
TEST_P(ResidentPrefixTest, AnEchoAnchorInsideTheAnswerLeavesTheEndAsItWas) {
  ResidentOptions o = rig_resident_options();
  o.branch_anchors = true;
  ResidentRig& r = rig(o);
  const std::vector<int32_t> p1 = tokens(200, 71);
  const Served a = r.serve(p1, "s", 12);  // the end anchor at 211
  StateSnapshot before = take_snapshot(*r.engine);
  auto taken = r.rp.take_echo_anchor(*r.engine, 205, 200, 512);
  ASSERT_TRUE(taken) << taken.error().message();
  // Only where every token is exact: the toy's rows would not be re-made bit for bit.
  EXPECT_EQ(*taken, exact_everywhere());
  if (!exact_everywhere()) return;
  StateSnapshot after = take_snapshot(*r.engine);
  before.logits.clear();  // the end anchor is resumed by forwarding a token: no logits kept
  after.logits.clear();
  EXPECT_TRUE(same_state(before, after));
  EXPECT_EQ(r.rp.stats().echo_anchors, 1);
  EXPECT_EQ(r.rp.stats().echo_tokens, 5);
  // Below `not_below`, or further than max_tokens from the anchor below: nothing.
  EXPECT_FALSE(*r.rp.take_echo_anchor(*r.engine, 207, 206, 512));
  EXPECT_FALSE(*r.rp.take_echo_anchor(*r.engine, 209, 200, 3));
  EXPECT_EQ(r.rp.stats().echo_anchors, 1);

  const std::vector<int32_t> p2 = parted(a.forwarded, 205, tokens(20, 72));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.source, ResumeSource::kAnchor);
  EXPECT_EQ(second.offer.resume_at, 205);
  EXPECT_TRUE(second.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
}

// Issue 14 §3: a branch point a few tokens above the resume point (a follow-up's last user
// message starts right after the answer it resumes at) is not cut in the prefill, where a cut
// is a forward call of its own, but taken after the answer by re-forwarding from the resume
// point's anchor: the state at the end is put back bit for bit, and the next prompt parting
// there resumes at it exactly as a cold prefill. Only where every token is exact; the toy cuts
// it in the prefill as before.
TEST_P(ResidentPrefixTest, ABranchPointNearTheResumePointIsTakenAfterTheAnswer) {
  ResidentOptions o = rig_resident_options();
  o.branch_anchors = true;
  o.defer_branch_tokens = 16;  // the rig's lines are 64 apart: every point is within 64 of one
  ResidentRig& r = rig(o);
  const Served a = r.serve(tokens(200, 81), "s", 9);  // the end anchor at 208
  const std::vector<int32_t> p2 = concat(a.forwarded, tokens(100, 82));
  const int64_t head = 224;  // 16 above the resume point, on the toy's grid
  const cache::ResumeOffer offer = r.rp.offer(p2, "s");
  ASSERT_EQ(offer.resume_at, 208);
  ASSERT_EQ(offer.source, ResumeSource::kEnd);
  ASSERT_TRUE(r.rp.begin(*r.engine, p2, "s", 4, offer).is_ok());
  r.rp.want_head_line(head);
  const std::vector<int64_t>& cut = r.rp.branch_lines();
  const bool deferred = exact_everywhere();
  EXPECT_EQ(std::count(cut.begin(), cut.end(), head), deferred ? 0 : 1);
  EXPECT_EQ(r.rp.deferred_lines(), deferred ? std::vector<int64_t>{head} : std::vector<int64_t>{});
  // One token before the end (307) is 51 above the line the prefill passes (256): cut.
  EXPECT_EQ(std::count(cut.begin(), cut.end(), 307), deferred ? 1 : 0);
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool is_end) { r.rp.on_anchor(*r.engine, pos, is_end); };
  po.extra_lines = cut;
  ASSERT_TRUE(r.engine->prefill(std::span<const int32_t>(p2).subspan(208), po).is_ok());
  std::vector<int32_t> forwarded = p2;
  for (int i = 0; i < 3; ++i) {
    forwarded.push_back(greedy(r.engine->logits()));
    ASSERT_TRUE(r.engine->decode(forwarded.back()).is_ok());
  }
  r.rp.keep_end(*r.engine, forwarded, {});
  StateSnapshot before = take_snapshot(*r.engine);
  const int64_t counted = r.rp.stats().branch_deferred;  // the first prompt's 199, on qwen35
  auto taken = r.rp.take_deferred_anchors(*r.engine, {});
  ASSERT_TRUE(taken) << taken.error().message();
  EXPECT_EQ(*taken, deferred ? 1 : 0);
  EXPECT_EQ(r.rp.stats().branch_deferred - counted, deferred ? 1 : 0);
  EXPECT_TRUE(r.rp.deferred_lines().empty());
  StateSnapshot after = take_snapshot(*r.engine);
  before.logits.clear();  // the end is resumed by forwarding a token: no logits kept
  after.logits.clear();
  EXPECT_TRUE(same_state(before, after));

  const std::vector<int32_t> p3 = parted(p2, head, tokens(30, 83));
  const Served third = r.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.source, ResumeSource::kAnchor);
  EXPECT_EQ(third.offer.resume_at, head);
  if (!exact_everywhere()) return;  // the toy's rows above the decoded ones are tainted
  EXPECT_TRUE(third.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
}

TEST_P(ResidentPrefixTest, AnIdenticalPromptStillForwardsItsLastToken) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(256, 2);
  r.serve(p1, "s", 0);
  const Served again = r.serve(p1, "s", 0);
  EXPECT_EQ(again.offer.resume_at, 192);  // 256 would leave nothing to forward
  EXPECT_TRUE(same_state(r.cold(p1), again.after_prefill));
}

TEST_P(ResidentPrefixTest, AnEndOfPrefillOffTheGridIsTaintedOnACoarseGrid) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(300, 3);
  r.serve(p1, "s", 0);
  const std::vector<int32_t> p2 = concat(p1, tokens(40, 4));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.resume_at, 300);
  EXPECT_EQ(second.offer.exact, exact_everywhere());
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
    EXPECT_EQ(r.rp.stats().taint, -1);
  } else {
    EXPECT_FALSE(same_state(r.cold(p2), second.after_prefill));  // the taint is real
    EXPECT_EQ(r.rp.stats().taint, 300);
    // A grid anchor below the taint is a cold prefill's again.
    const std::vector<int32_t> p3 = parted(p2, 290, tokens(30, 5));
    const Served third = r.serve(p3, "s", 0);
    EXPECT_EQ(third.offer.resume_at, 256);
    EXPECT_TRUE(third.offer.exact);
    EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
    EXPECT_EQ(r.rp.stats().taint, -1);
  }
}

TEST_P(ResidentPrefixTest, TheEndAnchorResumesAfterAGeneration) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(304, 6);
  const Served first = r.serve(p1, "s", 20);
  ASSERT_EQ(first.forwarded.size(), 323u);
  EXPECT_EQ(r.rp.stats().end_position, 323);
  EXPECT_EQ(r.rp.stats().taint, exact_everywhere() ? -1 : 304);

  // The client sends the answer back (its last token too) and a new message.
  const std::vector<int32_t> p2 = concat(concat(first.forwarded, {&first.last, 1}), tokens(30, 7));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.source, ResumeSource::kEnd);
  EXPECT_EQ(second.offer.resume_at, 323);
  EXPECT_EQ(second.offer.exact, exact_everywhere());
  EXPECT_EQ(r.rp.stats().hits_end, 1);
  // The state the generation wrote, exactly: what no cache at all gives.
  EXPECT_TRUE(same_state(r.continued(p1, first.forwarded, p2), second.after_prefill));
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
  }
}

TEST_P(ResidentPrefixTest, GridAnchorsAtOrBelowTheTaintStayExactAfterAGeneration) {
  for (int64_t keep : {300, 304}) {
    rig_.reset();
    ResidentRig& r = rig();
    const std::vector<int32_t> p1 = tokens(304, 8);
    r.serve(p1, "s", 20);
    // Parts inside the first prompt (anchor 256) or exactly at its end (anchor 304): the
    // rows of the generation are not reused, and the end anchor goes with them.
    const std::vector<int32_t> p2 = parted(p1, keep, tokens(50, 9));
    const Served second = r.serve(p2, "s", 0);
    EXPECT_EQ(second.offer.resume_at, keep == 300 ? 256 : 304);
    EXPECT_TRUE(second.offer.exact);
    EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill)) << "keep " << keep;
    EXPECT_EQ(r.rp.stats().end_position, -1);
    EXPECT_EQ(r.rp.stats().taint, -1);
  }
}

TEST_P(ResidentPrefixTest, AnchorsAPrefillWritesAfterTheEndAnchorCarryItsTaint) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(304, 10);
  const Served first = r.serve(p1, "s", 20);
  const std::vector<int32_t> p2 =
      concat(concat(first.forwarded, {&first.last, 1}), tokens(120, 11));  // 444 tokens
  r.serve(p2, "s", 0);
  const std::vector<int32_t> p3 = parted(p2, 400, tokens(20, 12));
  const Served third = r.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.resume_at, 384);
  EXPECT_EQ(third.offer.exact, exact_everywhere());
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
  }
  // Below the taint (304): exact again.
  const std::vector<int32_t> p4 = parted(p2, 200, tokens(20, 13));
  const Served fourth = r.serve(p4, "s", 0);
  EXPECT_EQ(fourth.offer.resume_at, 192);
  EXPECT_TRUE(fourth.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p4), fourth.after_prefill));
}

TEST_P(ResidentPrefixTest, HiddenSpansArePutBackAndTheEndIsResumed) {
  ResidentRig r(GetParam(), rig_resident_options());
  const std::vector<int32_t> p1 = tokens(304, 14);
  // Positions 310..313 of the answer are hidden from the client.
  const Served first = r.serve(p1, "s", 20, {HiddenSpan{310, 313}});
  std::vector<int32_t> copy(first.forwarded.begin(), first.forwarded.begin() + 310);
  copy.insert(copy.end(), first.forwarded.begin() + 313, first.forwarded.end());
  copy.push_back(first.last);
  const std::vector<int32_t> news = tokens(25, 15);
  copy.insert(copy.end(), news.begin(), news.end());
  EXPECT_EQ(r.rp.offer(copy, "s").resume_at, 304);  // as sent, it parts at 310

  const auto replayed = r.rp.replay(copy);
  ASSERT_TRUE(replayed.has_value());
  const std::vector<int32_t> expect = concat(concat(first.forwarded, {&first.last, 1}), news);
  EXPECT_EQ(*replayed, expect);
  const Served second = r.serve(*replayed, "s", 0);
  EXPECT_EQ(second.offer.source, ResumeSource::kEnd);
  EXPECT_EQ(second.offer.resume_at, 323);
  EXPECT_TRUE(same_state(r.continued(p1, first.forwarded, *replayed), second.after_prefill));
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(*replayed), second.after_prefill));
  }
  // A copy that differs before the end is not replayed.
  copy[5] = (copy[5] + 1) % int32_t(r.vocab());
  EXPECT_FALSE(r.rp.replay(copy).has_value());
}

// The marks (hidden spans, generated regions) belong to the conversation's tokens: they outlive
// the end anchor turning into a body anchor, go to the park with the conversation and come back
// with it, so its copy with every hidden span left out is still replayed (issue 12: the rows
// policy re-read more than the exact one where they were lost).
TEST_P(ResidentPrefixTest, MarksTravelWithTheConversationThroughTheNextTurnAndThePark) {
  ResidentRig r(GetParam(), rig_resident_options());
  const std::vector<int32_t> p1 = tokens(304, 18);
  const Served first = r.serve(p1, "a", 12, {HiddenSpan{306, 308}});
  const std::vector<int32_t> p2 = concat(concat(first.forwarded, {&first.last, 1}), tokens(20, 19));
  const int64_t b2 = int64_t(p2.size());
  const Served second = r.serve(p2, "a", 12, {HiddenSpan{b2 + 2, b2 + 5}});
  EXPECT_EQ(second.offer.source, ResumeSource::kEnd);
  const int64_t f2 = int64_t(second.forwarded.size());
  using Region = std::pair<int64_t, int64_t>;
  const std::vector<Region> regions = {{304, 315}, {b2, f2}};
  ASSERT_EQ(r.rp.marks().hidden.size(), 2u);
  EXPECT_EQ(r.rp.marks().hidden[0].begin, 306);
  EXPECT_EQ(r.rp.marks().hidden[1].end, b2 + 5);
  EXPECT_EQ(r.rp.marks().generated, regions);

  // The client's copy: both hidden spans left out.
  std::vector<int32_t> copy;
  const std::vector<int32_t> whole = concat(second.forwarded, {&second.last, 1});
  for (int64_t i = 0; i < int64_t(whole.size()); ++i)
    if (!(i >= 306 && i < 308) && !(i >= b2 + 2 && i < b2 + 5)) copy.push_back(whole[size_t(i)]);
  const std::vector<int32_t> news = tokens(10, 20);
  copy.insert(copy.end(), news.begin(), news.end());
  EXPECT_EQ(r.rp.replay(copy), concat(whole, news));

  // Another session parks it: the park holds the marks, and replays the copy from there.
  r.serve(parted(p1, 100, tokens(200, 21)), "b", 4);
  ASSERT_NE(r.rp.parked(), nullptr);
  EXPECT_EQ(r.rp.parked()->marks.generated, regions);
  EXPECT_EQ(r.rp.parked()->marks.hidden.size(), 2u);
  const auto replayed = r.rp.replay(copy);
  ASSERT_TRUE(replayed.has_value());
  EXPECT_EQ(*replayed, concat(whole, news));

  // Back from the park: the marks are the conversation's again.
  const Served back = r.serve(*replayed, "a", 0);
  EXPECT_EQ(back.offer.source, ResumeSource::kPark);
  EXPECT_EQ(back.offer.resume_at, f2);
  EXPECT_EQ(r.rp.marks().generated, regions);
  EXPECT_EQ(r.rp.marks().hidden.size(), 2u);
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(*replayed), back.after_prefill));
  }

  // A prompt parting inside the first answer keeps only the marks below where it parts.
  r.serve(parted(p2, 310, tokens(10, 22)), "a", 0);
  ASSERT_EQ(r.rp.marks().hidden.size(), 1u);
  EXPECT_TRUE(r.rp.marks().generated.empty());
}

TEST_P(ResidentPrefixTest, AGuestBetweenTwoTurnsLeavesTheConversationAsItWas) {
  ResidentRig with_guest(GetParam(), rig_resident_options());
  ResidentRig without(GetParam(), rig_resident_options());
  const std::vector<int32_t> p1 = tokens(400, 16);
  const Served a = with_guest.serve(p1, "s", 12);
  without.serve(p1, "s", 12);

  const std::vector<int32_t> guest = tokens(60, 17);  // < 400 / 4, unrelated
  const Served g = with_guest.serve(guest, "t", 8);
  EXPECT_TRUE(with_guest.rp.guest_active());
  EXPECT_EQ(with_guest.rp.stats().guests, 1);
  EXPECT_GT(with_guest.rp.stats().stash_bytes, 0);
  EXPECT_TRUE(same_state(with_guest.cold(guest), g.after_prefill));
  ASSERT_TRUE(with_guest.rp.finish_request(*with_guest.engine).is_ok());
  EXPECT_EQ(with_guest.rp.stats().stash_bytes, 0);
  EXPECT_EQ(with_guest.rp.tokens().size(), a.forwarded.size());

  const std::vector<int32_t> p2 = concat(concat(a.forwarded, {&a.last, 1}), tokens(30, 18));
  const Served second = with_guest.serve(p2, "s", 0);
  const Served reference = without.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.source, ResumeSource::kEnd);
  EXPECT_EQ(second.offer.resume_at, reference.offer.resume_at);
  EXPECT_TRUE(same_state(reference.after_prefill, second.after_prefill));
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(with_guest.cold(p2), second.after_prefill));
  }
  // An anchor inside the rows the guest overwrote is exact too.
  const std::vector<int32_t> p3 = parted(p1, 100, tokens(20, 19));
  const Served third = with_guest.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.resume_at, 64);
  EXPECT_TRUE(same_state(with_guest.cold(p3), third.after_prefill));
}

TEST_P(ResidentPrefixTest, AShedStashCostsTheRowsNotTheAnswer) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(400, 20);
  r.serve(p1, "s", 0);
  r.serve(tokens(60, 21), "t", 4);
  ASSERT_TRUE(r.rp.guest_active());
  EXPECT_GT(r.rp.levels()[2]->shed(1), 0);  // the guest stash
  EXPECT_FALSE(r.rp.offer(concat(p1, tokens(10, 22)), "s").useful());
  ASSERT_TRUE(r.rp.finish_request(*r.engine).is_ok());
  EXPECT_EQ(r.rp.stats().guest_stash_lost, 1);
  const std::vector<int32_t> p2 = concat(p1, tokens(10, 22));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_FALSE(second.offer.useful());  // the guest wrote from row 0
  EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
}

TEST_P(ResidentPrefixTest, AGuestTooBigForTheStashReplacesTheConversation) {
  ResidentOptions o = rig_resident_options();
  o.stash_bytes = 1;
  ResidentRig r(GetParam(), o);
  r.serve(tokens(400, 23), "s", 0);
  const std::vector<int32_t> q = tokens(60, 24);
  const Served g = r.serve(q, "s", 4);
  EXPECT_FALSE(r.rp.guest_active());
  EXPECT_EQ(r.rp.stats().guest_declines, 1);
  EXPECT_TRUE(same_state(r.cold(q), g.after_prefill));
  EXPECT_EQ(r.rp.tokens().size(), 63u);
}

TEST_P(ResidentPrefixTest, ACompactionPinsTheHeadAndALaterTurnGetsItBack) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(400, 25);
  r.serve(p1, "s", 10);
  // Shares nothing, too long for a guest: a compaction of the same session.
  const std::vector<int32_t> compaction = tokens(300, 26);
  const Served c = r.serve(compaction, "s", 6);
  EXPECT_EQ(r.rp.stats().pins, 1);
  EXPECT_GT(r.rp.stats().pin_bytes, 0);
  EXPECT_EQ(r.rp.stats().pin_tokens, 400);  // anchors 64..384 and 400: seven, all pinned
  EXPECT_TRUE(same_state(r.cold(compaction), c.after_prefill));
  // The next turn starts like the conversation before the compaction.
  const std::vector<int32_t> p3 = parted(p1, 200, tokens(88, 27));  // 288: on the toy's grid
  const cache::ResumeOffer o = r.rp.offer(p3, "s");
  EXPECT_EQ(o.source, ResumeSource::kPin);
  EXPECT_EQ(tier_of(o.source), ResumeTier::kRamPark);
  EXPECT_EQ(o.resume_at, 192);
  EXPECT_GT(o.restore_bytes, 0);
  const Served third = r.serve(p3, "s", 0);
  EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
  EXPECT_EQ(r.rp.stats().pin_hits, 1);
  // The pin stays for a later compaction's next turn; the rows in place are p3's now.
  const std::vector<int32_t> p4 = concat(p3, tokens(10, 28));
  const Served fourth = r.serve(p4, "s", 0);
  EXPECT_EQ(fourth.offer.source, ResumeSource::kAnchor);
  EXPECT_EQ(fourth.offer.resume_at, 288);
  EXPECT_TRUE(same_state(r.cold(p4), fourth.after_prefill));
}

TEST_P(ResidentPrefixTest, ThePinBudgetBoundsTheHeadAndItsAnchors) {
  ResidentOptions o = rig_resident_options();
  o.pin_max_anchors = 2;
  ResidentRig probe(GetParam(), o);
  const engine::StateCost cost = probe.engine->cost();
  o.pin_bytes = 200 * cost.bytes_per_token + 2 * cost.section_bytes;
  ResidentRig r(GetParam(), o);
  const std::vector<int32_t> p1 = tokens(400, 29);
  r.serve(p1, "s", 0);
  r.serve(tokens(300, 30), "s", 0);
  EXPECT_EQ(r.rp.stats().pin_tokens, 192);  // the largest anchor whose head fits
  EXPECT_EQ(r.rp.stats().pin_bytes, 192 * cost.bytes_per_token + 2 * cost.section_bytes);
  const std::vector<int32_t> p3 = parted(p1, 150, tokens(40, 31));
  const Served third = r.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.source, ResumeSource::kPin);
  EXPECT_EQ(third.offer.resume_at, 64);  // two anchors spread over the head: 64 and 192
  EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
}

TEST_P(ResidentPrefixTest, SessionsABAAndBAgainSwapBackExactly) {
  ResidentRig& r = rig();
  const std::vector<int32_t> a1 = tokens(400, 32);
  const Served a = r.serve(a1, "a", 12);
  // B shares A's first 100 tokens: it resumes at 64 and parks A from there.
  const std::vector<int32_t> b1 = parted(a1, 100, tokens(260, 33));
  const Served b = r.serve(b1, "b", 8);
  EXPECT_EQ(b.offer.resume_at, 64);
  EXPECT_EQ(r.rp.stats().parks, 1);
  EXPECT_TRUE(same_state(r.cold(b1), b.after_prefill));

  // A comes back with its answer and a new message: the park's end anchor.
  const std::vector<int32_t> a2 = concat(concat(a.forwarded, {&a.last, 1}), tokens(30, 34));
  const cache::ResumeOffer oa = r.rp.offer(a2, "a");
  EXPECT_EQ(oa.source, ResumeSource::kPark);
  EXPECT_EQ(tier_of(oa.source), ResumeTier::kRamPark);
  EXPECT_EQ(oa.resume_at, int64_t(a.forwarded.size()));
  const Served a_again = r.serve(a2, "a", 0);
  EXPECT_EQ(r.rp.stats().park_hits, 1);
  EXPECT_EQ(r.rp.stats().parks, 2);  // B went to the park in the swap
  EXPECT_TRUE(same_state(r.continued(a1, a.forwarded, a2), a_again.after_prefill));
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(a2), a_again.after_prefill));
  }

  // B again, from its end.
  const std::vector<int32_t> b2 = concat(concat(b.forwarded, {&b.last, 1}), tokens(20, 35));
  const Served b_again = r.serve(b2, "b", 0);
  EXPECT_EQ(b_again.offer.source, ResumeSource::kPark);
  EXPECT_EQ(b_again.offer.resume_at, int64_t(b.forwarded.size()));
  EXPECT_TRUE(same_state(r.continued(b1, b.forwarded, b2), b_again.after_prefill));
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(b2), b_again.after_prefill));
  }

  // A once more, parting inside its first prompt: a parked grid anchor, exact on both.
  const std::vector<int32_t> a3 = parted(a2, 390, tokens(15, 36));
  const Served a_third = r.serve(a3, "a", 0);
  EXPECT_EQ(a_third.offer.source, ResumeSource::kPark);
  EXPECT_EQ(a_third.offer.resume_at, 384);
  EXPECT_TRUE(a_third.offer.exact);
  EXPECT_TRUE(same_state(r.cold(a3), a_third.after_prefill));
}

// Issue 12 §5: the park gets the resident rows' matching. A swap back from the park takes a
// branch anchor where the prompt parted from the parked conversation, so the next prompt
// parting there resumes at it.
TEST_P(ResidentPrefixTest, ASwapFromTheParkTakesBranchAnchorsToo) {
  ResidentOptions o = rig_resident_options();
  o.branch_anchors = true;
  ResidentRig& r = rig(o);
  const std::vector<int32_t> a1 = tokens(400, 61);
  r.serve(a1, "a", 4);
  r.serve(parted(a1, 100, tokens(260, 62)), "b", 4);  // parks A from 64
  EXPECT_EQ(r.rp.stats().parks, 1);
  const int64_t part = exact_everywhere() ? 390 : 368;  // on the toy's 16-grid there
  const std::vector<int32_t> a2 = parted(a1, part, tokens(15, 63));
  const Served second = r.serve(a2, "a", 0);
  EXPECT_EQ(second.offer.source, ResumeSource::kPark);
  EXPECT_EQ(second.offer.resume_at, exact_everywhere() ? 384 : 320);
  const std::vector<int32_t> a3 = parted(a1, part, tokens(15, 64));
  const Served third = r.serve(a3, "a", 0);
  EXPECT_EQ(third.offer.source, ResumeSource::kAnchor);
  EXPECT_EQ(third.offer.resume_at, part);
  EXPECT_TRUE(third.offer.exact);
  EXPECT_TRUE(same_state(r.cold(a3), third.after_prefill));
}

TEST_P(ResidentPrefixTest, AnchorSpacingIsAKnob) {
  ResidentOptions o = rig_resident_options();
  o.anchor_spacing = 128;  // every other line the engine reports
  ResidentRig r(GetParam(), o);
  const std::vector<int32_t> p1 = tokens(320, 48);
  r.serve(p1, "s", 0);
  EXPECT_EQ(r.rp.stats().anchors, 3);  // 128, 256 and the end of the prefill
  const std::vector<int32_t> p2 = parted(p1, 250, tokens(20, 49));
  const Served second = r.serve(p2, "s", 0);
  EXPECT_EQ(second.offer.resume_at, 128);
  EXPECT_TRUE(same_state(r.cold(p2), second.after_prefill));
}

TEST_P(ResidentPrefixTest, AGuestSharingAHeadStashesOnlyAboveItsAnchor) {
  ResidentRig with_guest(GetParam(), rig_resident_options());
  ResidentRig without(GetParam(), rig_resident_options());
  const std::vector<int32_t> p1 = tokens(400, 50);
  const Served a = with_guest.serve(p1, "s", 8);
  without.serve(p1, "s", 8);
  const std::vector<int32_t> guest = parted(p1, 70, tokens(20, 51));  // 90 < 100
  const Served g = with_guest.serve(guest, "s", 4);
  EXPECT_EQ(g.offer.resume_at, 64);
  EXPECT_TRUE(with_guest.rp.guest_active());
  // Rows [64, 90 + 4 + 2 * 32) were stashed.
  EXPECT_EQ(with_guest.rp.stats().stash_bytes,
            (158 - 64) * with_guest.engine->cost().bytes_per_token);
  EXPECT_TRUE(same_state(with_guest.cold(guest), g.after_prefill));
  const std::vector<int32_t> p2 = concat(concat(a.forwarded, {&a.last, 1}), tokens(16, 52));
  const Served second = with_guest.serve(p2, "s", 0);  // begin() puts the stash back first
  EXPECT_EQ(second.offer.source, ResumeSource::kEnd);
  EXPECT_TRUE(same_state(without.serve(p2, "s", 0).after_prefill, second.after_prefill));
}

TEST_P(ResidentPrefixTest, AParkThatCannotHoldTheEndKeepsItsNewestAnchorsThatFit) {
  ResidentOptions o = rig_resident_options();
  ResidentRig probe(GetParam(), o);
  const engine::StateCost cost = probe.engine->cost();
  o.park_bytes = 256 * cost.bytes_per_token + 4 * cost.section_bytes;
  ResidentRig r(GetParam(), o);
  const std::vector<int32_t> a1 = tokens(400, 53);
  const Served a = r.serve(a1, "a", 6);
  r.serve(parted(a1, 100, tokens(260, 54)), "b", 0);  // resumes at 64
  EXPECT_EQ(r.rp.stats().parks, 1);
  // Rows [64, 320) and the anchors 128, 192, 256, 320: the end did not fit.
  EXPECT_EQ(r.rp.stats().park_bytes, 256 * cost.bytes_per_token + 4 * cost.section_bytes);
  EXPECT_EQ(r.rp.stats().park_tokens, 320);
  const std::vector<int32_t> a2 = concat(concat(a.forwarded, {&a.last, 1}), tokens(10, 55));
  const Served back = r.serve(a2, "a", 0);
  EXPECT_EQ(back.offer.source, ResumeSource::kPark);
  EXPECT_EQ(back.offer.resume_at, 320);
  EXPECT_TRUE(back.offer.exact);
  EXPECT_TRUE(same_state(r.cold(a2), back.after_prefill));
}

TEST_P(ResidentPrefixTest, WhoParksAndWhoDoesNot) {
  ResidentRig& r = rig();
  const std::vector<int32_t> a1 = tokens(400, 40);
  const Served a = r.serve(a1, "a", 6);
  // The same session parting inside its prompt (an edit): no park, no pin.
  const std::vector<int32_t> a2 = parted(a1, 300, tokens(100, 41));
  r.serve(a2, "a", 0);
  EXPECT_EQ(r.rp.stats().parks, 0);
  EXPECT_EQ(r.rp.stats().pins, 0);
  // Another session: parked. A third one replaces the park.
  r.serve(parted(a2, 130, tokens(200, 42)), "b", 0);
  EXPECT_EQ(r.rp.stats().parks, 1);
  EXPECT_EQ(r.rp.levels()[3]->held_bytes(), r.rp.stats().park_bytes);
  const std::vector<int32_t> c1 = parted(a2, 70, tokens(300, 43));
  r.serve(c1, "c", 0);
  EXPECT_EQ(r.rp.stats().parks, 2);
  EXPECT_EQ(r.rp.offer(concat(parted(a2, 350, {}), tokens(5, 44)), "a").source,
            ResumeSource::kAnchor);
  // B's tokens come back from the park at its newest parked anchor.
  const cache::ResumeOffer ob = r.rp.offer(parted(a2, 130, tokens(200, 42)), "b");
  EXPECT_EQ(ob.source, ResumeSource::kPark);
  EXPECT_EQ(ob.resume_at, 320);
  // B comes back (C is parked in the swap) at its end-of-prefill anchor, 330: off the toy's
  // grid, so exact on qwen35 only.
  const std::vector<int32_t> b2 = concat(parted(a2, 130, tokens(200, 42)), tokens(10, 45));
  const Served back = r.serve(b2, "b", 0);
  EXPECT_EQ(back.offer.source, ResumeSource::kPark);
  EXPECT_EQ(back.offer.resume_at, 330);
  EXPECT_EQ(back.offer.exact, exact_everywhere());
  if (exact_everywhere()) {
    EXPECT_TRUE(same_state(r.cold(b2), back.after_prefill));
  }
  EXPECT_EQ(r.rp.stats().parks, 3);
  // B's compaction pins B's head. Its prefill rewrites the rows under C's park (C parted at
  // 64), so the park goes; C still shares 64 tokens with the pinned head.
  r.serve(tokens(300, 46), "b", 0);
  EXPECT_EQ(r.rp.stats().pins, 1);
  EXPECT_EQ(r.rp.stats().park_bytes, 0);
  const cache::ResumeOffer oc = r.rp.offer(concat(c1, tokens(5, 47)), "c");
  EXPECT_EQ(oc.source, ResumeSource::kPin);
  EXPECT_EQ(oc.resume_at, 64);
  (void)a;
}

TEST_P(ResidentPrefixTest, BeginRefusesAnOfferItNoLongerHolds) {
  ResidentRig& r = rig();
  const std::vector<int32_t> p1 = tokens(300, 46);
  r.serve(p1, "s", 0);
  const std::vector<int32_t> p2 = concat(p1, tokens(20, 47));
  const cache::ResumeOffer o = r.rp.offer(p2, "s");
  ASSERT_EQ(o.resume_at, 300);
  r.rp.levels()[0]->shed(int64_t(1) << 40);  // every body anchor
  const int64_t length = r.engine->length();
  EXPECT_FALSE(r.rp.begin(*r.engine, p2, "s", 0, o).is_ok());
  EXPECT_EQ(r.engine->length(), length);
  EXPECT_FALSE(r.rp.offer(p2, "s").useful());
}

TEST_P(ResidentPrefixTest, AStoreResumeKeepsTheAnchorsOfTheSharedHead) {
  // The planner picks the store (as it does with the end anchor off); the anchors the prompt
  // shares stay, so a later prompt parting inside the head still resumes there, exactly.
  ResidentRig& r = rig();
  cache::StateStore store(cache::StateStoreOptions{});
  const std::vector<int32_t> p1 = tokens(304, 48);
  r.serve(p1, "s", 0);
  ASSERT_EQ(store.put_session(*r.engine, p1, cache::StateStore::kUntainted, "s"),
            cache::StorePut::kStored);
  const std::vector<int32_t> p2 = concat(p1, tokens(40, 49));
  const cache::ResumeOffer o = store.offer(p2, "s");
  ASSERT_EQ(o.resume_at, 304);
  ASSERT_TRUE(o.exact);
  ASSERT_TRUE(r.rp.begin(*r.engine, p2, "s", 0, o).is_ok());
  ASSERT_TRUE(store.take(*r.engine, o).has_value());
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t pos, bool is_end) { r.rp.on_anchor(*r.engine, pos, is_end); };
  ASSERT_TRUE(r.engine->prefill(std::span<const int32_t>(p2).subspan(304), po).is_ok());
  EXPECT_TRUE(same_state(r.cold(p2), take_snapshot(*r.engine)));
  EXPECT_EQ(r.rp.stats().other_tier, 1);

  const std::vector<int32_t> p3 = parted(p1, 200, tokens(40, 50));
  const Served third = r.serve(p3, "s", 0);
  EXPECT_EQ(third.offer.resume_at, 192);
  EXPECT_EQ(third.offer.source, ResumeSource::kAnchor);
  EXPECT_TRUE(third.offer.exact);
  EXPECT_TRUE(same_state(r.cold(p3), third.after_prefill));
}

TEST_P(ResidentPrefixTest, LevelsAreInSheddingOrderAndClearDropsEverything) {
  ResidentRig& r = rig();
  r.serve(tokens(300, 37), "s", 5);
  std::vector<std::string_view> names;
  for (cache::CacheLevel* l : r.rp.levels()) names.push_back(l->level_name());
  EXPECT_EQ(names, (std::vector<std::string_view>{"body_anchors", "end_anchor", "guest_stash",
                                                  "park", "pin"}));
  EXPECT_GT(r.rp.levels()[0]->held_bytes(), 0);
  EXPECT_GT(r.rp.levels()[1]->held_bytes(), 0);
  r.rp.clear();
  for (cache::CacheLevel* l : r.rp.levels()) EXPECT_EQ(l->held_bytes(), 0);
  EXPECT_FALSE(r.rp.offer(tokens(300, 37), "s").useful());
}

INSTANTIATE_TEST_SUITE_P(Models, ResidentPrefixTest, ::testing::ValuesIn(resident_variants()),
                         variant_name);

}  // namespace
}  // namespace anchorage::test
