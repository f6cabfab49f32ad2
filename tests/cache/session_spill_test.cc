// SessionSpill on the tiny qwen35 (f32): a conversation saved and read back — in the same spill
// and after reopening the directory — leaves the engine exactly as a cold prefill does (memcmp
// of logits, sections and rows); a second save writes only the blocks that changed; blocks in
// place are not read; a flipped byte in any file costs the entry, never a wrong state; entries
// without a manifest or of another fingerprint are swept; the budget and the 48 h rule; the
// write guard's levels.
#include "cache/session_spill.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cache/blob_store.h"
#include "cache/cache_file.h"
#include "core/mem_fs.h"
#include "support/fs_text.h"
#include "support/resume_check.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"

namespace anchorage::cache {
namespace {

using test::random_tokens;
using test::same_bits;
using test::same_state;
using test::scribble;
using test::StateSnapshot;
using test::take_snapshot;

constexpr int64_t kGrid = 64;
constexpr const char* kDir = "/cache/sessions";

std::unique_ptr<engine::Engine> tiny_engine() {
  engine::EngineOptions o;
  o.capacity = 1024;
  o.prefill_chunk = kGrid;
  o.anchor_spacing = kGrid;
  o.n_threads = 1;
  auto e = engine::Engine::create(test::make_tiny_qwen35(core::DType::kF32, core::DType::kF32), o);
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

SessionSpillOptions spill_options(int64_t* clock = nullptr) {
  SessionSpillOptions o;
  o.block_rows = kGrid;
  if (clock != nullptr) o.now_s = [clock] { return *clock; };
  return o;
}

std::unique_ptr<SessionSpill> open_spill(core::MemFs& fs, const core::StateLayout& layout,
                                         SessionSpillOptions o = spill_options(),
                                         const std::string& fingerprint = "fp-test") {
  auto store = LocalDirStore::open(fs, kDir);
  EXPECT_TRUE(store.has_value());
  auto s = SessionSpill::open(std::move(*store), fingerprint, layout, 1, std::move(o));
  EXPECT_TRUE(s.has_value()) << s.error().to_string();
  return std::move(s.value());
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Prefills `tokens` cold (capturing sections at every grid line as the resident prefix's body
// anchors) and saves the conversation under `session`.
void prefill_and_save(SessionSpill& spill, engine::Engine& e, const std::vector<int32_t>& tokens,
                      const std::string& session, bool resident = false,
                      SpillWrite kind = SpillWrite::kEviction) {
  std::vector<SectionCopy> anchors;
  engine::PrefillOptions po;
  po.on_anchor = [&](int64_t, bool is_end) {
    if (!is_end) anchors.push_back(SectionCopy::capture(e));
  };
  e.reset();
  ASSERT_TRUE(e.prefill(tokens, po).is_ok());
  const SectionCopy end = SectionCopy::capture(e);
  SpillConversation c;
  c.tokens = tokens;
  c.session = session;
  c.end = &end;
  for (const SectionCopy& a : anchors) c.anchors.push_back(&a);
  c.hidden = {{10, 12}};
  c.regions = {{20, 30}};
  c.resident = resident;
  ASSERT_TRUE(spill.save(e, c, kind).is_ok());
}

void expect_exact_resume(SessionSpill& tier, engine::Engine& e, engine::Engine& ref,
                         const std::vector<int32_t>& prompt, int64_t expect_at,
                         int64_t rows_in_place = 0) {
  test::expect_exact_resume(tier, e, ref, prompt, expect_at, ResumeSource::kSpill, rows_in_place);
}

TEST(SessionSpill, AConversationComesBackBitForBitInTheSameSpillAndAfterReopening) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(300, e->vocab_size(), 1);
  const std::vector<int32_t> next = concat(conv, random_tokens(40, e->vocab_size(), 2));
  core::MemFs fs;
  {
    auto spill = open_spill(fs, e->layout());
    prefill_and_save(*spill, *e, conv, "a");
    EXPECT_EQ(spill->stats().entries, 1);
    EXPECT_EQ(spill->stats().saves, 1);
    expect_exact_resume(*spill, *e, *ref, next, 300);
  }
  auto spill = open_spill(fs, e->layout());  // a restart
  ASSERT_EQ(spill->stats().entries, 1);
  EXPECT_EQ(spill->stats().swept_files, 0);
  expect_exact_resume(*spill, *e, *ref, next, 300);
  // A prompt that parts from the conversation inside it resumes at the newest kept anchor
  // below (the end and 3 anchors at block lines: 128, 192, 256).
  std::vector<int32_t> edited = conv;
  edited.resize(270);
  edited.push_back(7);
  edited.push_back(8);
  expect_exact_resume(*spill, *e, *ref, edited, 256);
  std::vector<int32_t> early = conv;
  early.resize(100);
  early.push_back(9);
  EXPECT_FALSE(spill->offer(early, {}).useful()) << "only the newest anchors are kept";
  EXPECT_EQ(spill->stats().hits, 2);
}

TEST(SessionSpill, ASecondSaveWritesOnlyTheNewBlocksAndBlocksInPlaceAreNotRead) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> turn1 = random_tokens(300, e->vocab_size(), 3);
  const std::vector<int32_t> turn2 = concat(turn1, random_tokens(100, e->vocab_size(), 4));
  core::MemFs fs;
  auto spill = open_spill(fs, e->layout());
  prefill_and_save(*spill, *e, turn1, "a");
  const SessionSpillStats s1 = spill->stats();
  EXPECT_EQ(s1.blocks_kept, 0);
  prefill_and_save(*spill, *e, turn2, "a");
  const SessionSpillStats s2 = spill->stats();
  // Blocks [0, 256) are the same rows of the same prefix: kept, and the anchor at 256 too.
  // [256, 300) grew into [256, 320): written, with [320, 384), [384, 400) and the anchors at
  // 320, 384 and the end.
  EXPECT_EQ(s2.blocks_kept - s1.blocks_kept, 5);
  EXPECT_EQ(s2.blocks_written - s1.blocks_written, 6);
  EXPECT_EQ(s2.entries, 1);
  EXPECT_LT(s2.bytes_written - s1.bytes_written, s1.bytes_written);
  // The first save's partial last block and its end anchor went with its manifest.
  auto names = fs.list(kDir);
  ASSERT_TRUE(names.has_value());
  int blocks = 0;
  for (const std::string& n : *names) blocks += n.ends_with(".block");
  EXPECT_EQ(blocks, 7);  // [0,64) ... [384,400)

  // The engine still holds rows [0, 400) of turn2: a restore with 200 rows in place reads
  // only the blocks above them.
  const std::vector<int32_t> turn3 = concat(turn2, random_tokens(20, e->vocab_size(), 5));
  ASSERT_TRUE(e->resume_at(200).is_ok());
  expect_exact_resume(*spill, *e, *ref, turn3, 400, 200);
  const SessionSpillStats s3 = spill->stats();
  EXPECT_EQ(s3.blocks_in_place, 3);
  EXPECT_EQ(s3.blocks_read, 4);
}

// The anchor at the end of a prefill is rarely on a block line: it is kept (a block ends
// there), and a prompt that parts from the conversation after it (another answer than the one
// generated) resumes there, exactly, in the same spill and after reopening.
TEST(SessionSpill, AnAnchorOffTheBlockLinesIsKeptAndOffered) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> prompt = random_tokens(300, e->vocab_size(), 31);
  const std::vector<int32_t> conv = concat(prompt, random_tokens(20, e->vocab_size(), 32));
  core::MemFs fs;
  {
    auto spill = open_spill(fs, e->layout());
    e->reset();
    ASSERT_TRUE(e->prefill(prompt, {}).is_ok());
    const SectionCopy prefill_end = SectionCopy::capture(*e);  // 300: off the 64-row blocks
    ASSERT_TRUE(e->prefill(std::span<const int32_t>(conv).subspan(300), {}).is_ok());
    const SectionCopy end = SectionCopy::capture(*e);
    SpillConversation c;
    c.tokens = conv;
    c.end = &end;
    c.anchors = {&prefill_end};
    ASSERT_TRUE(spill->save(*e, c, SpillWrite::kEviction).is_ok());
  }
  std::vector<int32_t> other_answer = prompt;
  other_answer.push_back(conv[300] + 1);
  other_answer.push_back(5);
  auto spill = open_spill(fs, e->layout());
  ASSERT_EQ(spill->stats().entries, 1);
  expect_exact_resume(*spill, *e, *ref, other_answer, 300);
  expect_exact_resume(*spill, *e, *ref, concat(conv, {9, 10}), 320);
}

// Without session keys an entry is the conversation, not its head: two conversations that
// share their first blocks are two entries; a conversation's next turn (every token of its
// previous save, then more) replaces its own entry.
TEST(SessionSpill, KeylessConversationsWithOneHeadAreTwoEntriesAndANextTurnReplacesItsOwn) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> head = random_tokens(200, e->vocab_size(), 41);
  const std::vector<int32_t> a = concat(head, random_tokens(60, e->vocab_size(), 42));
  const std::vector<int32_t> b = concat(head, random_tokens(90, e->vocab_size(), 43));
  core::MemFs fs;
  auto spill = open_spill(fs, e->layout());
  prefill_and_save(*spill, *e, a, "");
  prefill_and_save(*spill, *e, b, "");
  EXPECT_EQ(spill->stats().entries, 2);
  const std::vector<int32_t> a2 = concat(a, random_tokens(30, e->vocab_size(), 44));
  prefill_and_save(*spill, *e, a2, "");
  EXPECT_EQ(spill->stats().entries, 2) << "a's next turn replaced a's entry";
  spill = open_spill(fs, e->layout());
  ASSERT_EQ(spill->stats().entries, 2);
  expect_exact_resume(*spill, *e, *ref, concat(b, {3, 4}), 290);
  expect_exact_resume(*spill, *e, *ref, concat(a2, {3, 4}), 290);
  expect_exact_resume(*spill, *e, *ref, concat(a, {3, 4}), 256);  // a's own end went with it
}

// The prewarm reads an entry back whole, ahead of its request: asked to yield before a block,
// it stops and the engine is as it was (bit for bit); otherwise the engine holds the
// conversation at its end, exactly as a cold prefill of it, with the blocks in place not read.
TEST(SessionSpill, APrewarmYieldsWithTheEngineUntouchedElseReadsTheConversationWhole) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(300, e->vocab_size(), 51);
  const std::vector<int32_t> next = concat(conv, random_tokens(20, e->vocab_size(), 52));
  const std::vector<int32_t> other = concat(std::vector<int32_t>(conv.begin(), conv.begin() + 130),
                                            random_tokens(70, e->vocab_size(), 53));
  core::MemFs fs;
  auto spill = open_spill(fs, e->layout());
  prefill_and_save(*spill, *e, conv, "a");
  e->reset();
  ASSERT_TRUE(e->prefill(other).is_ok());  // another conversation in place, sharing 130 rows
  const ResumeOffer o = spill->offer(next, {});
  ASSERT_EQ(o.resume_at, 300);
  const StateSnapshot before = take_snapshot(*e);
  int asked = 0;
  auto r = spill->prewarm(*e, next, o, 128, [&] { return ++asked == 2; });
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), core::StatusCode::kCancelled);
  EXPECT_TRUE(same_state(before, take_snapshot(*e))) << "a yield leaves the rows in place";
  EXPECT_EQ(spill->stats().prewarm_yields, 1);
  EXPECT_EQ(spill->stats().entries, 1);

  // The rows read wait in RAM until the last block is checked: the caller's Budget is told
  // their bytes first (blocks [128, 300) and the end anchor) and may refuse, nothing read.
  int64_t row_bytes = 0, section_bytes = 0;
  for (const core::TensorSpec& v : e->layout().views) row_bytes += v.bytes_per_token();
  for (const core::TensorSpec& sec : e->layout().sections) section_bytes += sec.bytes();
  int64_t reserved = 0;
  auto refuse = [&](int64_t bytes) {
    reserved = bytes;
    return core::Status::resource_exhausted("no room");
  };
  r = spill->prewarm(
      *e, next, o, 128, [] { return false; }, refuse);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(reserved, 172 * row_bytes + section_bytes);
  EXPECT_TRUE(same_state(before, take_snapshot(*e))) << "a refused read leaves the rows in place";
  EXPECT_EQ(spill->stats().blocks_read, 0);

  r = spill->prewarm(*e, next, o, 128, [] { return false; });
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->tokens, conv);
  EXPECT_EQ(r->session, "a");
  ASSERT_EQ(e->length(), 300);
  ASSERT_TRUE(e->prefill(std::span(next).subspan(300)).is_ok());
  const StateSnapshot got = take_snapshot(*e);
  const StateSnapshot want = test::cold_snapshot(*ref, next);
  EXPECT_TRUE(same_state(want, got));
  EXPECT_TRUE(same_bits(want.logits, got.logits));
  const SessionSpillStats st = spill->stats();
  EXPECT_EQ(st.prewarms, 1);
  EXPECT_EQ(st.blocks_in_place, 2) << "[0, 64) and [64, 128) were in place";
  EXPECT_EQ(st.blocks_read, 3);

  // The rows in place are the prompt's, which parts from the entry at 200: those above are
  // read from the entry, whatever the caller counts in place.
  const std::vector<int32_t> parted = concat(std::vector<int32_t>(conv.begin(), conv.begin() + 200),
                                             random_tokens(60, e->vocab_size(), 54));
  e->reset();
  ASSERT_TRUE(e->prefill(parted).is_ok());
  const ResumeOffer op = spill->offer(parted, {});
  ASSERT_EQ(op.resume_at, 192);
  r = spill->prewarm(*e, parted, op, 259, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  ASSERT_TRUE(e->prefill(std::span(next).subspan(300)).is_ok());
  EXPECT_TRUE(same_state(want, take_snapshot(*e)));
}

// A start that an entry could have gone further than is counted by why: the spill's offer
// not taken (slow), the entry's rows a block or more past the start with no anchor between
// (anchors_below), less than a block (short); nothing when the spill's offer was taken or no
// entry goes further.
TEST(SessionSpill, AnEntryThatCouldServeButDoesNotIsCountedByWhy) {
  auto e = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(300, e->vocab_size(), 61);
  core::MemFs fs;
  auto spill = open_spill(fs, e->layout());
  prefill_and_save(*spill, *e, conv, "a");  // anchors 128, 192, 256 and the end, 300
  auto parted_at = [&](int64_t n) {
    std::vector<int32_t> p(conv.begin(), conv.begin() + n);
    p.push_back(conv[size_t(n)] + 1);
    p.push_back(3);
    return p;
  };
  auto at = [](int64_t p) {
    ResumeOffer o;
    o.resume_at = p;
    o.source = p > 0 ? ResumeSource::kAnchor : ResumeSource::kCold;
    return o;
  };
  const std::vector<int32_t> next = concat(conv, {5, 6});
  const ResumeOffer mine = spill->offer(next, {});
  ASSERT_EQ(mine.resume_at, 300);
  spill->note_unused(next, mine, mine);     // taken
  spill->note_unused(next, mine, at(300));  // RAM starts as far
  EXPECT_EQ(spill->stats().unused_slow + spill->stats().unused_short +
                spill->stats().unused_anchors_below,
            0);
  spill->note_unused(next, mine, at(0));  // not taken: the read cost more
  EXPECT_EQ(spill->stats().unused_slow, 1);
  const std::vector<int32_t> early = parted_at(120);  // below every kept anchor
  ASSERT_FALSE(spill->offer(early, {}).useful());
  spill->note_unused(early, spill->offer(early, {}), at(0));
  EXPECT_EQ(spill->stats().unused_anchors_below, 1);
  spill->note_unused(early, spill->offer(early, {}), at(64));
  EXPECT_EQ(spill->stats().unused_short, 1);
  spill->note_unused(parted_at(40), {}, at(0));  // under a block shared: not counted
  EXPECT_EQ(spill->stats().unused_slow, 1);
  EXPECT_EQ(spill->stats().unused_anchors_below, 1);
  EXPECT_EQ(spill->stats().unused_short, 1);
  // The session's entry would serve the prompt to 300 through the end alignment (the caller's
  // figure; its tokens part at 40): end_no_align, from a cold start and from the spill's own
  // start below it alike; not when the alignment goes less than a block past the start or no
  // further than the tokens do.
  EXPECT_EQ(spill->stats().unused_end_no_align, 0);
  spill->note_unused(parted_at(40), {}, at(0), 300);
  EXPECT_EQ(spill->stats().unused_end_no_align, 1);
  ResumeOffer from_spill = at(128);
  from_spill.source = ResumeSource::kSpill;
  spill->note_unused(parted_at(130), from_spill, from_spill, 300);
  EXPECT_EQ(spill->stats().unused_end_no_align, 2);
  spill->note_unused(parted_at(40), {}, at(250), 300);  // under a block past the start
  spill->note_unused(next, mine, mine, 300);            // the tokens go as far
  EXPECT_EQ(spill->stats().unused_end_no_align, 2);
  EXPECT_EQ(spill->stats().unused_slow, 1);
  EXPECT_EQ(spill->stats().unused_anchors_below, 1);
  EXPECT_EQ(spill->stats().unused_short, 1);
}

// Blocks written raw by one server and compressed by the next (another --spill-codec) make one
// entry, read back bit for bit; every codec and thread count gives the same rows.
TEST(SessionSpill, RawAndCompressedBlocksMixInOneEntry) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> turn1 = random_tokens(300, e->vocab_size(), 23);
  const std::vector<int32_t> turn2 = concat(turn1, random_tokens(150, e->vocab_size(), 24));
  const std::vector<int32_t> turn3 = concat(turn2, random_tokens(9, e->vocab_size(), 25));
  for (SpillCodecKind second : {SpillCodecKind::kZstd, SpillCodecKind::kBlosc}) {
    for (int threads : {1, 2}) {
      core::MemFs fs;
      {
        SessionSpillOptions o = spill_options();
        o.codec = SpillCodecKind::kNone;
        auto spill = open_spill(fs, e->layout(), o);
        prefill_and_save(*spill, *e, turn1, "a");
      }
      SessionSpillOptions o = spill_options();
      o.codec = second;
      o.codec_threads = threads;
      auto spill = open_spill(fs, e->layout(), o);
      prefill_and_save(*spill, *e, turn2, "a");
      std::set<std::string> codecs;
      const auto names = fs.list(kDir);
      ASSERT_TRUE(names.has_value());
      for (const std::string& n : *names) {
        if (!n.ends_with(".block")) continue;
        auto f = CacheFile::open(fs, std::string(kDir) + "/" + n, CacheFileKind::kSpillBlock);
        ASSERT_TRUE(f.has_value());
        codecs.insert(f->meta()["codec"].get<std::string>());
      }
      EXPECT_EQ(codecs, (std::set<std::string>{"none", spill_codec_name(second)}));
      expect_exact_resume(*spill, *e, *ref, turn3, 450);
    }
  }
}

// A save compresses block i + 1 while block i is written (pipelined_writes); in turn or
// pipelined, on 1 or 2 codec threads, it writes the same files byte for byte, and the entry
// comes back bit for bit.
TEST(SessionSpill, APipelinedSaveWritesTheSameFilesAsOneInTurn) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(450, e->vocab_size(), 71);
  int64_t clock = 1000;
  std::map<std::string, std::string> want;
  for (const bool pipelined : {false, true}) {
    for (int threads : {1, 2}) {
      core::MemFs fs;
      SessionSpillOptions o = spill_options(&clock);
      o.pipelined_writes = pipelined;
      o.codec_threads = threads;
      auto spill = open_spill(fs, e->layout(), o);
      prefill_and_save(*spill, *e, conv, "a");
      EXPECT_GE(spill->stats().blocks_written, 8);
      std::map<std::string, std::string> got;
      const auto names = fs.list(kDir);
      ASSERT_TRUE(names.has_value());
      for (const std::string& n : *names) got[n] = test::read_all(fs, std::string(kDir) + "/" + n);
      if (want.empty()) {
        want = got;
      } else {
        EXPECT_TRUE(got == want) << "pipelined " << pipelined << ", " << threads << " threads";
      }
      expect_exact_resume(*spill, *e, *ref, concat(conv, {5, 6}), 450);
    }
  }
}

TEST(SessionSpill, TheResidentEntryComesBackWithItsTokensSpansAndRegions) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(200, e->vocab_size(), 6);
  core::MemFs fs;
  {
    auto spill = open_spill(fs, e->layout());
    prefill_and_save(*spill, *e, random_tokens(150, e->vocab_size(), 7), "other");
    prefill_and_save(*spill, *e, conv, "a", /*resident=*/true, SpillWrite::kDrain);
  }
  auto spill = open_spill(fs, e->layout());
  EXPECT_EQ(spill->resident_tokens(), conv);
  scribble(*e);
  auto r = spill->restore_resident(*e);
  ASSERT_TRUE(r.has_value()) << r.error().to_string();
  EXPECT_EQ(r->tokens, conv);
  EXPECT_EQ(r->session, "a");
  ASSERT_EQ(r->hidden.size(), 1u);
  EXPECT_EQ(r->hidden[0].begin, 10);
  ASSERT_EQ(r->regions.size(), 1u);
  EXPECT_EQ(r->regions[0].second, 30);
  ASSERT_EQ(e->length(), 200);
  const std::vector<int32_t> tail = random_tokens(10, e->vocab_size(), 8);
  ASSERT_TRUE(e->prefill(tail).is_ok());
  const StateSnapshot want = test::cold_snapshot(*ref, concat(conv, tail));
  const StateSnapshot got = take_snapshot(*e);
  EXPECT_TRUE(same_state(want, got));
  EXPECT_TRUE(same_bits(want.logits, got.logits));
}

// A flipped byte in any file of an entry — a block, an anchor, the manifest — at its start,
// in its middle or at its end: a restore that needs the file refuses the entry (at open or at
// the restore), and what the engine then computes equals a cold prefill. With codec none every
// block is read in place (summed as its crc reads it, copied from the read buffer); with zstd
// the blocks that shrink are decoded first.
TEST(SessionSpill, AFlippedByteInAnyFileCostsTheEntryNeverAWrongState) {
  for (SpillCodecKind codec : {SpillCodecKind::kNone, SpillCodecKind::kZstd}) {
    SessionSpillOptions opts = spill_options();
    opts.codec = codec;
    auto e = tiny_engine();
    auto ref = tiny_engine();
    const std::vector<int32_t> conv = random_tokens(200, e->vocab_size(), 9);
    const std::vector<int32_t> next = concat(conv, random_tokens(8, e->vocab_size(), 10));
    std::vector<std::string> files;
    {
      core::MemFs fs;
      auto spill = open_spill(fs, e->layout(), opts);
      prefill_and_save(*spill, *e, conv, "a");
      files = *fs.list(kDir);
    }
    ASSERT_GE(files.size(), 6u);
    int cases = 0;
    for (const std::string& name : files) {
      // A body anchor is read by a prompt that parts from the conversation just above it.
      std::vector<int32_t> prompt = next;
      if (name.ends_with(".anchor")) {
        core::MemFs fs;
        auto spill = open_spill(fs, e->layout(), opts);
        prefill_and_save(*spill, *e, conv, "a");
        auto f = CacheFile::open(fs, std::string(kDir) + "/" + name, CacheFileKind::kAnchor);
        ASSERT_TRUE(f.has_value());
        const int64_t p = f->meta()["position"].get<int64_t>();
        if (p < int64_t(conv.size())) {
          prompt.assign(conv.begin(), conv.begin() + p + 2);
          prompt.push_back(int32_t((conv[size_t(p) + 2] + 1) % e->vocab_size()));
        }
      }
      const StateSnapshot want = test::cold_snapshot(*ref, prompt);
      for (double where : {0.001, 0.5, 0.9999}) {
        core::MemFs fs;
        {
          auto spill = open_spill(fs, e->layout(), opts);
          prefill_and_save(*spill, *e, conv, "a");
        }
        std::vector<std::byte>& bytes = *fs.mutable_contents(std::string(kDir) + "/" + name);
        bytes[size_t(double(bytes.size() - 1) * where)] ^= std::byte{0x10};
        auto spill = open_spill(fs, e->layout(), opts);
        const ResumeOffer o = spill->offer(prompt, {});
        scribble(*e);
        bool restored = false;
        if (o.useful()) restored = spill->restore(*e, prompt, o, 0).is_ok();
        EXPECT_FALSE(restored) << name << " at " << where;
        if (!restored) e->reset();
        ASSERT_TRUE(e->prefill(std::span(prompt).subspan(size_t(e->length()))).is_ok());
        const StateSnapshot got = take_snapshot(*e);
        EXPECT_TRUE(same_state(want, got)) << name << " at " << where;
        EXPECT_TRUE(same_bits(want.logits, got.logits)) << name << " at " << where;
        EXPECT_EQ(spill->stats().entries, 0) << name << " at " << where;
        EXPECT_FALSE(spill->offer(prompt, {}).useful());
        ++cases;
      }
    }
    EXPECT_EQ(cases, int(files.size()) * 3);
  }
}

TEST(SessionSpill, AnEntryWithoutItsManifestOrOfAnotherFingerprintIsSweptAtOpen) {
  auto e = tiny_engine();
  const std::vector<int32_t> conv = random_tokens(200, e->vocab_size(), 11);
  {
    core::MemFs fs;
    {
      auto spill = open_spill(fs, e->layout());
      prefill_and_save(*spill, *e, conv, "a");
    }
    ASSERT_TRUE(fs.remove(std::string(kDir) + "/sa.manifest").is_ok());
    auto spill = open_spill(fs, e->layout());
    EXPECT_EQ(spill->stats().entries, 0);
    EXPECT_GT(spill->stats().swept_files, 0);
    EXPECT_TRUE(fs.list(kDir)->empty()) << "a crash's leftovers are swept";
  }
  {
    core::MemFs fs;
    {
      auto spill = open_spill(fs, e->layout());
      prefill_and_save(*spill, *e, conv, "a");
    }
    auto spill = open_spill(fs, e->layout(), spill_options(), "fp-deploy");
    EXPECT_EQ(spill->stats().entries, 0);
    EXPECT_TRUE(fs.list(kDir)->empty());
    EXPECT_FALSE(spill->offer(conv, {}).useful());
  }
}

TEST(SessionSpill, TheBudgetEvictsTheLeastRecentlyUsedAndTwoDaysUnusedGo) {
  auto e = tiny_engine();
  int64_t clock = 1'000'000;
  const std::vector<int32_t> a = random_tokens(200, e->vocab_size(), 12);
  const std::vector<int32_t> b = random_tokens(200, e->vocab_size(), 13);
  const std::vector<int32_t> c = random_tokens(200, e->vocab_size(), 14);
  core::MemFs fs;
  int64_t one_entry = 0;
  {
    auto spill = open_spill(fs, e->layout(), spill_options(&clock));
    prefill_and_save(*spill, *e, a, "a");
    one_entry = spill->stats().bytes;
  }
  SessionSpillOptions o = spill_options(&clock);
  o.budget_bytes = one_entry * 2 + one_entry / 2;  // two entries fit, not three
  auto spill = open_spill(fs, e->layout(), o);
  clock += 10;
  prefill_and_save(*spill, *e, b, "b");
  clock += 10;
  // "a" is used now: "b" becomes the least recently used.
  ASSERT_TRUE(spill->offer(concat(a, {1, 2}), {}).useful());
  scribble(*e);
  ASSERT_TRUE(
      spill->restore(*e, concat(a, {1, 2}), spill->offer(concat(a, {1, 2}), {}), 0).is_ok());
  clock += 10;
  prefill_and_save(*spill, *e, c, "c");
  EXPECT_EQ(spill->stats().entries, 2);
  EXPECT_EQ(spill->stats().evictions, 1);
  EXPECT_TRUE(spill->offer(concat(a, {1, 2}), {}).useful());
  EXPECT_FALSE(spill->offer(concat(b, {1, 2}), {}).useful());
  EXPECT_TRUE(spill->offer(concat(c, {1, 2}), {}).useful());
  spill.reset();
  clock += 48 * 3600 + 1;
  auto later = open_spill(fs, e->layout(), o);
  EXPECT_EQ(later->stats().entries, 0);
  EXPECT_TRUE(fs.list(kDir)->empty());
}

TEST(SessionSpill, TheWriteGuardLetsOnlyTheDrainAndLongEvictionsWritePastTheBudget) {
  auto e = tiny_engine();
  int64_t first_save = 0;
  {
    core::MemFs dry;
    auto spill = open_spill(dry, e->layout());
    prefill_and_save(*spill, *e, random_tokens(200, e->vocab_size(), 15), "a");
    first_save = spill->stats().bytes_written;
  }
  core::MemFs fs;
  auto root = LocalDirStore::open(fs, "/cache");
  ASSERT_TRUE(root.has_value());
  WriteGuardOptions go;
  go.budget_bytes = first_save - 1;  // the first save puts the day over, not past 1.5x
  go.long_conversation_tokens = 250;
  std::shared_ptr<WriteGuard> guard(WriteGuard::open(root->get(), go));
  SessionSpillOptions o = spill_options();
  o.guard = guard;
  auto spill = open_spill(fs, e->layout(), o);
  prefill_and_save(*spill, *e, random_tokens(200, e->vocab_size(), 15), "a");
  EXPECT_EQ(spill->stats().saves, 1);
  EXPECT_EQ(guard->level(), WriteLevel::kOver);
  prefill_and_save(*spill, *e, random_tokens(200, e->vocab_size(), 16), "b");  // short: no
  EXPECT_EQ(spill->stats().saves, 1);
  EXPECT_EQ(spill->stats().save_skips, 1);
  prefill_and_save(*spill, *e, random_tokens(300, e->vocab_size(), 17), "c");  // long: yes
  EXPECT_EQ(spill->stats().saves, 2);
  EXPECT_EQ(guard->level(), WriteLevel::kHard);
  prefill_and_save(*spill, *e, random_tokens(300, e->vocab_size(), 18), "d");  // hard: no
  EXPECT_EQ(spill->stats().saves, 2);
  prefill_and_save(*spill, *e, random_tokens(300, e->vocab_size(), 19), "e", true,
                   SpillWrite::kDrain);  // the drain always
  EXPECT_EQ(spill->stats().saves, 3);
  ASSERT_FALSE(guard->stats().last_days.empty());
  EXPECT_EQ(guard->stats().last_days.front().spill_bytes, spill->stats().bytes_written);
}

}  // namespace
}  // namespace anchorage::cache
