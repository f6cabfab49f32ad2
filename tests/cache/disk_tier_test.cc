// DiskTier on the tiny qwen35 (f32) and the toy: a restore, in the tier that wrote the files
// and in a tier reopened over the same directory, leaves the engine exactly as a cold prefill
// does (memcmp of logits, sections and rows); admission's rules; a corrupt file of every kind
// is deleted and the request falls back; a fence drops what it covers (window); eviction by
// value, the TTL and the free-space floor; another fingerprint's files are swept and the
// admission counts survive it.
#include "cache/disk_tier.h"

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cache/blob_store.h"
#include "cache/cache_file.h"
#include "core/mem_fs.h"
#include "core/posix_fs.h"
#include "support/resume_check.h"
#include "support/state_snapshot.h"
#include "support/test_models.h"
#include "support/toy_architecture.h"

namespace anchorage::cache {
namespace {

using test::random_tokens;
using test::same_bits;
using test::same_state;
using test::scribble;
using test::StateSnapshot;
using test::take_snapshot;

constexpr int64_t kGrid = 64;
constexpr const char* kDir = "/cache/disk";

engine::EngineOptions engine_options() {
  engine::EngineOptions o;
  o.capacity = 1024;
  o.prefill_chunk = kGrid;
  o.anchor_spacing = kGrid;
  o.n_threads = 1;
  return o;
}

std::unique_ptr<engine::Engine> tiny_engine() {
  auto e = engine::Engine::create(test::make_tiny_qwen35(core::DType::kF32, core::DType::kF32),
                                  engine_options());
  EXPECT_TRUE(e.has_value());
  return std::move(e.value());
}

DiskTierOptions tier_options() {
  DiskTierOptions o;
  o.admission.min_tokens = 128;
  o.min_free_bytes = 0;
  return o;
}

std::unique_ptr<DiskTier> open_tier(core::MemFs& fs, const core::StateLayout& layout,
                                    DiskTierOptions o = tier_options(),
                                    const std::string& fingerprint = "fp-test") {
  auto store = LocalDirStore::open(fs, kDir);
  EXPECT_TRUE(store.has_value());
  auto tier = DiskTier::open(std::move(*store), fingerprint, layout, kGrid, std::move(o));
  EXPECT_TRUE(tier.has_value()) << tier.error().to_string();
  return std::move(tier.value());
}

// One request's prefill through the tier's hooks, from where the engine is (its length).
void prefill_through(DiskTier& tier, engine::Engine& e, const std::vector<int32_t>& prompt,
                     const std::string& session = "s1", int64_t head_end = -1, bool flush = true) {
  DiskWriteRequest req;
  req.prompt = prompt;
  req.resume_at = e.length();
  req.session = session;
  req.head_end = head_end;
  engine::PrefillOptions po;
  po.extra_lines = tier.plan_writes(req);
  po.on_anchor = [&](int64_t pos, bool is_end) {
    if (!is_end) tier.on_line(e, pos);
    if (is_end) tier.after_prefill(e);
  };
  ASSERT_TRUE(e.prefill(std::span(prompt).subspan(size_t(e.length())), po).is_ok());
  if (flush) tier.flush();
}

std::vector<int32_t> concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void expect_exact_resume(DiskTier& tier, engine::Engine& e, engine::Engine& ref,
                         const std::vector<int32_t>& prompt, int64_t expect_at,
                         int64_t rows_in_place = 0) {
  test::expect_exact_resume(tier, e, ref, prompt, expect_at, ResumeSource::kDisk, rows_in_place);
}

TEST(DiskTier, AHeadRestoresBitForBitInTheSameTierAndAfterReopening) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  core::MemFs fs;
  const int64_t vocab = e->vocab_size();
  const std::vector<int32_t> head = random_tokens(300, vocab, 1);
  {
    auto tier = open_tier(fs, e->layout());
    e->reset();
    prefill_through(*tier, *e, head);  // a session's first long request: head anchors + end
    const DiskTierStats st = tier->stats();
    EXPECT_GT(st.anchors, 0);
    EXPECT_EQ(st.chunks, 5);  // 4 grid chunks and the tail chunk of the end anchor (299)
    EXPECT_EQ(st.write_errors, 0);
    // The same prompt resumes at its last token; a longer one at that last-token anchor
    // too (it is the deepest); one that parts at 200 at the grid line below, 192.
    expect_exact_resume(*tier, *e, *ref, head, 299);
    const std::vector<int32_t> longer = concat(head, random_tokens(40, vocab, 2));
    expect_exact_resume(*tier, *e, *ref, longer, 299);
    std::vector<int32_t> parted(head.begin(), head.begin() + 200);
    parted = concat(parted, random_tokens(60, vocab, 3));
    expect_exact_resume(*tier, *e, *ref, parted, 192);
  }
  // A new tier over the same directory (a restart): the index comes back from the headers.
  auto tier = open_tier(fs, e->layout());
  EXPECT_GT(tier->stats().anchors, 0);
  EXPECT_EQ(tier->stats().swept_files, 0);
  expect_exact_resume(*tier, *e, *ref, head, 299);
  // Only the chunks above the rows in place are read: the engine holds the head's rows
  // already (from the restore above), and a restore over them reads just the anchor.
  const int64_t read_before = tier->stats().read_bytes;
  ASSERT_TRUE(e->resume_at(0).is_ok());
  expect_exact_resume(*tier, *e, *ref, head, 299, /*rows_in_place=*/299);
  const int64_t anchor_only = tier->stats().read_bytes - read_before;
  const int64_t read_again = tier->stats().read_bytes;
  expect_exact_resume(*tier, *e, *ref, head, 299);
  EXPECT_LT(anchor_only, tier->stats().read_bytes - read_again);
}

// A new process on the same directory, through the real file system (PosixFs, O_DIRECT where
// the file system takes it): a child process writes the head and exits; this process opens
// the tier and restores it, and logits, sections and rows equal a cold prefill's.
TEST(DiskTier, ANewProcessOnTheSameDirectoryRestoresBitForBit) {
  char tmpl[] = "/tmp/anchorage-disk-tier-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto open_posix = [&](core::Fs& fs) {
    auto store = LocalDirStore::open(fs, dir + "/disk");
    EXPECT_TRUE(store.has_value());
    auto tier = DiskTier::open(std::move(*store), "fp-test", tiny_engine()->layout(), kGrid,
                               tier_options());
    EXPECT_TRUE(tier.has_value());
    return std::move(tier.value());
  };
  const std::vector<int32_t> head = random_tokens(300, tiny_engine()->vocab_size(), 40);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    core::PosixFs fs;
    auto e = tiny_engine();
    auto tier = open_posix(fs);
    e->reset();
    prefill_through(*tier, *e, head);
    tier.reset();
    std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the writing process failed";
  core::PosixFs fs;
  auto tier = open_posix(fs);
  EXPECT_GT(tier->stats().anchors, 0);
  auto e = tiny_engine();
  auto ref = tiny_engine();
  expect_exact_resume(*tier, *e, *ref, head, 299);
  tier.reset();
  std::filesystem::remove_all(dir);
}

TEST(DiskTier, TheToyArchitectureRoundTripsToo) {
  auto make = [] {
    auto e = engine::Engine::create(test::make_toy_architecture(7), engine_options());
    EXPECT_TRUE(e.has_value());
    return std::move(e.value());
  };
  auto e = make();
  auto ref = make();
  core::MemFs fs;
  const std::vector<int32_t> head = random_tokens(260, e->vocab_size(), 4);
  auto tier = open_tier(fs, e->layout());
  e->reset();
  prefill_through(*tier, *e, head);
  // The toy's exact grid is 16 tokens: its end anchor sits on it (256), not at 259.
  auto reopened = open_tier(fs, e->layout());
  expect_exact_resume(*reopened, *e, *ref, head, 256);
}

TEST(DiskTier, ShortPromptsWriteNothingAndRepeatedLinesAreAdmittedAtTheSecondColdRead) {
  auto e = tiny_engine();
  core::MemFs fs;
  auto tier = open_tier(fs, e->layout());
  const int64_t vocab = e->vocab_size();
  e->reset();
  prefill_through(*tier, *e, random_tokens(100, vocab, 5));  // under min_tokens
  EXPECT_EQ(tier->stats().anchors, 0);
  // No session: no head anchors. The first read counts, the second admits the longest line.
  const std::vector<int32_t> shared = random_tokens(200, vocab, 6);
  e->reset();
  prefill_through(*tier, *e, concat(shared, random_tokens(50, vocab, 7)), "");
  EXPECT_EQ(tier->stats().anchors, 0);
  e->reset();
  prefill_through(*tier, *e, concat(shared, random_tokens(50, vocab, 8)), "");
  const DiskTierStats st = tier->stats();
  EXPECT_EQ(st.anchors, 1);  // line 192: the longest read twice (256 differs)
  EXPECT_EQ(tier->offer(concat(shared, random_tokens(9, vocab, 9)), {}).resume_at, 192);
}

TEST(DiskTier, ACorruptFileOfEitherKindIsDeletedWithWhatNeedsItAndTheRestoreRefused) {
  auto e = tiny_engine();
  const int64_t vocab = e->vocab_size();
  const std::vector<int32_t> head = random_tokens(300, vocab, 10);
  for (const char* kind : {".anchor", ".chunk"}) {
    core::MemFs fs;
    auto tier = open_tier(fs, e->layout());
    e->reset();
    prefill_through(*tier, *e, head);
    const ResumeOffer o = tier->offer(head, {});
    ASSERT_EQ(o.resume_at, 299);
    // Flip one payload byte of the deepest anchor, or of its lowest chunk.
    const CacheKey top = prefix_key("fp-test", std::span(head).first(299));
    const CacheKey low = prefix_key("fp-test", std::span(head).first(64));
    const std::string name = std::string(kind) == ".anchor" ? anchor_name(top) : chunk_name(low);
    std::vector<std::byte>* bytes = fs.mutable_contents(std::string(kDir) + "/" + name);
    ASSERT_NE(bytes, nullptr) << name;
    (*bytes)[bytes->size() - 5] ^= std::byte{1};
    scribble(*e);
    const core::Status s = tier->restore(*e, head, o, 0);
    ASSERT_FALSE(s.is_ok()) << kind;
    EXPECT_EQ(s.reason(), core::Reason::kSectionCrc) << kind;
    EXPECT_FALSE(fs.exists(std::string(kDir) + "/" + name)) << kind;
    EXPECT_EQ(tier->stats().corrupt_files, 1) << kind;
    // A bad anchor leaves the lower anchors usable; a bad lowest chunk leaves nothing.
    const int64_t now = tier->offer(head, {}).resume_at;
    if (std::string(kind) == ".anchor") {
      EXPECT_EQ(now, 256);
    } else {
      EXPECT_EQ(now, 0);
    }
  }
}

// Every region of both kinds of file: a flipped byte in the fixed header, the metadata (for a
// chunk: its token ids), the header's padding, each section and the file's last byte is caught
// — at open (the header) or at the restore (a section) — the file is deleted, and the request
// ends as a cold prefill would: never a wrong state.
TEST(DiskTier, AFlippedByteInEveryRegionOfEveryFileKindIsCaughtAndTheRequestAnsweredAsCold) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const int64_t vocab = e->vocab_size();
  const std::vector<int32_t> head = random_tokens(300, vocab, 21);
  const StateSnapshot want = test::cold_snapshot(*ref, head);
  const CacheKey top = prefix_key("fp-test", std::span(head).first(299));
  for (const std::string& name : {anchor_name(top), chunk_name(top)}) {
    // The regions, from a clean copy of the file.
    std::vector<std::pair<std::string, size_t>> regions;
    {
      core::MemFs fs;
      auto tier = open_tier(fs, e->layout());
      e->reset();
      prefill_through(*tier, *e, head);
      const std::vector<std::byte>& bytes = *fs.mutable_contents(std::string(kDir) + "/" + name);
      auto f = CacheFile::open(
          fs, std::string(kDir) + "/" + name,
          name.ends_with(".anchor") ? CacheFileKind::kAnchor : CacheFileKind::kChunk);
      ASSERT_TRUE(f.has_value());
      const std::string text(reinterpret_cast<const char*>(bytes.data()), 4096);
      const size_t h = f->sections()[0].offset;
      regions = {{"magic", 2}, {"version", 8}, {"header crc", 26}, {"header padding", h - 1}};
      const size_t ids = text.find("\"tokens\":[");
      if (ids != std::string::npos) regions.push_back({"token ids", ids + 11});
      regions.push_back({"metadata", text.find("\"key\"") + 9});
      for (size_t i = 0; i < f->sections().size(); ++i)
        regions.push_back({"section " + std::to_string(i), f->sections()[i].offset + 7});
      regions.push_back({"last byte", bytes.size() - 1});
    }
    for (const auto& [region, offset] : regions) {
      core::MemFs fs;
      {
        auto tier = open_tier(fs, e->layout());
        e->reset();
        prefill_through(*tier, *e, head);
      }
      const std::string path = std::string(kDir) + "/" + name;
      (*fs.mutable_contents(path))[offset] ^= std::byte{0x04};
      auto tier = open_tier(fs, e->layout());  // a restart: headers are checked here
      const ResumeOffer o = tier->offer(head, {});
      scribble(*e);
      bool restored = false;
      if (o.useful()) restored = tier->restore(*e, head, o, 0).is_ok();
      if (!restored) e->reset();
      ASSERT_TRUE(e->prefill(std::span(head).subspan(size_t(e->length()))).is_ok());
      const StateSnapshot got = take_snapshot(*e);
      EXPECT_TRUE(same_state(want, got)) << name << " " << region;
      EXPECT_TRUE(same_bits(want.logits, got.logits)) << name << " " << region;
      EXPECT_FALSE(fs.exists(path)) << name << " " << region << ": the bad file stayed";
      const DiskTierStats st = tier->stats();
      EXPECT_EQ(st.swept_files + st.corrupt_files > 0, true) << name << " " << region;
    }
  }
}

TEST(DiskTier, TokenIdsAreComparedNotJustTheKey) {
  auto e = tiny_engine();
  const int64_t vocab = e->vocab_size();
  core::MemFs fs;
  auto tier = open_tier(fs, e->layout());
  const std::vector<int32_t> head = random_tokens(300, vocab, 11);
  e->reset();
  prefill_through(*tier, *e, head);
  // A restore asked for another prompt under this offer (as if its key collided) is refused
  // by the stored token ids before a byte reaches the engine.
  std::vector<int32_t> other = head;
  other[10] = (other[10] + 1) % int32_t(vocab);
  ResumeOffer o = tier->offer(head, {});
  scribble(*e);
  const core::Status s = tier->restore(*e, other, o, 0);
  EXPECT_FALSE(s.is_ok());
}

TEST(DiskTier, AFenceBeforeTheWriterCopiesDropsTheWindow) {
  auto e = tiny_engine();
  core::MemFs fs;
  DiskTierOptions o = tier_options();
  o.writer_paused = true;
  auto tier = open_tier(fs, e->layout(), o);
  const std::vector<int32_t> head = random_tokens(300, e->vocab_size(), 12);
  e->reset();
  prefill_through(*tier, *e, head, "s1", -1, /*flush=*/false);
  tier->fence(128);  // the next request writes rows from 128 on
  tier->resume_writer();
  tier->flush();
  const DiskTierStats st = tier->stats();
  EXPECT_EQ(st.chunks, 2);                          // [0,64) and [64,128) were still the job's
  EXPECT_GT(st.window_drops, 0);                    // the rest was not copied
  EXPECT_EQ(tier->offer(head, {}).resume_at, 128);  // the anchor at 128 has its chunks
}

TEST(DiskTier, EvictionByValueTheTtlAndTheFreeSpaceFloor) {
  auto e = tiny_engine();
  const int64_t vocab = e->vocab_size();
  int64_t now = 1'000'000'000;
  DiskTierOptions o = tier_options();
  o.now_s = [&] { return now; };
  core::MemFs fs;
  const std::vector<int32_t> a = random_tokens(300, vocab, 13);
  const std::vector<int32_t> b = random_tokens(300, vocab, 14);
  int64_t one_head = 0;
  {
    auto tier = open_tier(fs, e->layout(), o);
    e->reset();
    prefill_through(*tier, *e, a, "sa");
    one_head = tier->stats().bytes;
  }
  // A budget of about one head: writing a second evicts the less valuable (the unused one).
  o.budget_bytes = one_head + one_head / 2;
  {
    auto tier = open_tier(fs, e->layout(), o);
    scribble(*e);
    ASSERT_TRUE(tier->restore(*e, a, tier->offer(a, {}), 0).is_ok());  // a hit for a
    now += 3600;
    e->reset();
    prefill_through(*tier, *e, b, "sb");
    const DiskTierStats st = tier->stats();
    EXPECT_GT(st.evictions, 0);
    EXPECT_LE(st.bytes, o.budget_bytes);
    EXPECT_EQ(tier->offer(a, {}).resume_at, 299);  // the used head stayed whole
  }
  // Eight days later every anchor is past the TTL: reopening sweeps them and their chunks.
  now += 8 * 86400;
  {
    auto tier = open_tier(fs, e->layout(), o);
    EXPECT_EQ(tier->stats().anchors, 0);
    EXPECT_EQ(tier->stats().chunks, 0);
    EXPECT_EQ(tier->stats().bytes, 0);
  }
  // The free-space floor: a file system nearly full evicts down to the floor.
  o.budget_bytes = int64_t(1) << 40;
  o.min_free_bytes = 0;
  {
    auto tier = open_tier(fs, e->layout(), o);
    e->reset();
    prefill_through(*tier, *e, a, "sc");
    ASSERT_GT(tier->stats().anchors, 0);
  }
  // 5 % of a file system barely larger than what the tier holds is more than is free.
  auto used = [&] { return open_tier(fs, e->layout(), o)->stats().bytes; };
  fs.set_total_bytes(uint64_t(used()) + uint64_t(used()) / 40);
  auto tier = open_tier(fs, e->layout(), o);
  EXPECT_GT(tier->stats().evictions, 0);
}

TEST(DiskTier, AnotherFingerprintsFilesAreSweptAndTheCountsSurvive) {
  auto e = tiny_engine();
  const int64_t vocab = e->vocab_size();
  core::MemFs fs;
  const std::vector<int32_t> shared = random_tokens(200, vocab, 15);
  {
    auto tier = open_tier(fs, e->layout());
    e->reset();
    prefill_through(*tier, *e, concat(shared, random_tokens(50, vocab, 16)), "");
    e->reset();
    prefill_through(*tier, *e, concat(shared, random_tokens(50, vocab, 17)), "");
    ASSERT_EQ(tier->stats().anchors, 1);
  }
  // A deploy: the same directory under another fingerprint.
  auto tier = open_tier(fs, e->layout(), tier_options(), "fp-deploy");
  EXPECT_EQ(tier->stats().anchors, 0);
  EXPECT_EQ(tier->stats().chunks, 0);
  EXPECT_GT(tier->stats().swept_files, 0);
  EXPECT_GT(tier->stats().counted_lines, 0);
  // The counts came through: the next cold read of the shared head is its third, and admits.
  e->reset();
  prefill_through(*tier, *e, concat(shared, random_tokens(50, vocab, 18)), "");
  EXPECT_EQ(tier->offer(concat(shared, random_tokens(5, vocab, 19)), {}).resume_at, 192);
}

// The seed's scenario on opencode-shaped prompts: a shared tool block, then the folder's
// environment and instructions, then the user's message. Two sessions in two folders, a deploy
// (another fingerprint: every file swept, the counts kept), a third session in the first
// folder (it writes the branch line, where the folders part), and a fourth session in a new
// folder, which resumes from the disk at that line and equals a cold prefill bit for bit.
TEST(DiskTier, TheSeedsScenarioTwoFoldersADeployAThirdAndAFourthInANewFolder) {
  auto e = tiny_engine();
  auto ref = tiny_engine();
  const int64_t vocab = e->vocab_size();
  core::MemFs fs;
  const std::vector<int32_t> tools = random_tokens(600, vocab, 20);
  auto prompt = [&](uint64_t folder, uint64_t user, int64_t* head_end) {
    std::vector<int32_t> p = concat(tools, random_tokens(80, vocab, 100 + folder));
    *head_end = int64_t(p.size());
    return concat(p, random_tokens(20, vocab, 200 + user));
  };
  int64_t head_end = 0;
  {
    auto tier = open_tier(fs, e->layout());
    const std::vector<int32_t> s1 = prompt(1, 1, &head_end);
    e->reset();
    prefill_through(*tier, *e, s1, "session-1", head_end);
    const std::vector<int32_t> s2 = prompt(2, 2, &head_end);
    e->reset();
    prefill_through(*tier, *e, s2, "session-2", head_end);
    EXPECT_EQ(tier->offer(prompt(3, 3, &head_end), {}).resume_at, 576);  // s2 admitted it
  }
  // The deploy.
  auto tier = open_tier(fs, e->layout(), tier_options(), "fp-after-deploy");
  EXPECT_EQ(tier->stats().anchors, 0);
  EXPECT_EQ(tier->offer(prompt(3, 3, &head_end), {}).resume_at, 0);
  // A third session in the first folder: the shared lines' third cold read, folder 1's
  // second. The branch line (576: its count falls at the next line) is written.
  const std::vector<int32_t> s3 = prompt(1, 4, &head_end);
  e->reset();
  prefill_through(*tier, *e, s3, "session-3", head_end);
  // A fourth session in a new folder resumes at the branch line, bit for bit.
  const std::vector<int32_t> s4 = prompt(3, 5, &head_end);
  expect_exact_resume(*tier, *e, *ref, s4, 576);
}

TEST(DiskTier, PastTheDaysWriteBudgetItPlansNothingAndCountsWhatItWrote) {
  auto e = tiny_engine();
  const int64_t vocab = e->vocab_size();
  core::MemFs fs;
  DiskTierOptions o = tier_options();
  WriteGuardOptions go;
  go.utc_offset_s = 0;
  go.budget_bytes = 1;  // the first head's files put the day past it
  o.guard = std::shared_ptr<WriteGuard>(WriteGuard::open(nullptr, go));
  auto tier = open_tier(fs, e->layout(), o);
  e->reset();
  prefill_through(*tier, *e, random_tokens(300, vocab, 30), "s1");
  const int64_t written = tier->stats().bytes_written;
  EXPECT_GT(written, 0);
  EXPECT_EQ(o.guard->stats().today.tier_bytes, written);
  e->reset();
  prefill_through(*tier, *e, random_tokens(300, vocab, 31), "s2");
  EXPECT_EQ(tier->stats().bytes_written, written);  // nothing more
  EXPECT_EQ(o.guard->stats().tier_skips, 1);
}

TEST(DiskAdmission, RulesOnAPlainGrid) {
  DiskAdmissionOptions o;
  o.min_tokens = 100;
  AdmissionCounts counts;
  std::vector<int32_t> p(1000);
  for (size_t i = 0; i < p.size(); ++i) p[i] = int32_t(i);
  AdmissionRequest r;
  r.prompt = p;
  // First read: nothing repeated; not a session's first request.
  EXPECT_TRUE(admit(r, 64, o, &counts).empty());
  // A session's first request: the last 4 lines at or below the head's end, and its last token.
  r.first_of_session = true;
  r.head_end = 700;
  AdmissionPlan plan = admit(r, 64, o, &counts);
  // Second read of every line: the longest repeated (960) too, and no branch (all equal).
  EXPECT_EQ(plan.anchors, (std::vector<int64_t>{448, 512, 576, 640, 960, 999}));
  // Resumed lines are not counted, and nothing at or below the resume point is written.
  r.first_of_session = false;
  r.resume_at = 640;
  plan = admit(r, 64, o, &counts);
  EXPECT_EQ(plan.anchors, (std::vector<int64_t>{960}));
  // A prompt that parts at 300 after three reads of [0,1000): the branch at 256 (its next
  // line, 320, is read less) is admitted even though 256 < the longest repeated line.
  std::vector<int32_t> q(p.begin(), p.begin() + 300);
  for (int i = 0; i < 500; ++i) q.push_back(5000 + i);
  AdmissionRequest rq;
  rq.prompt = q;
  rq.head_end = 800;
  plan = admit(rq, 64, o, &counts);
  EXPECT_EQ(plan.anchors, (std::vector<int64_t>{256}));
  // Inexact starts, short prompts and tainted rows write nothing.
  rq.exact = false;
  EXPECT_TRUE(admit(rq, 64, o, &counts).empty());
  rq.exact = true;
  rq.taint = 200;  // the repeated lines below it still are
  EXPECT_EQ(admit(rq, 64, o, &counts).anchors, (std::vector<int64_t>{192}));
  rq.taint = 60;
  EXPECT_TRUE(admit(rq, 64, o, &counts).empty());
  AdmissionRequest shortreq;
  std::vector<int32_t> s(p.begin(), p.begin() + 99);
  shortreq.prompt = s;
  shortreq.first_of_session = true;
  EXPECT_TRUE(admit(shortreq, 64, o, &counts).empty());
}

TEST(DiskAdmission, CountsEncodeDecodeAndCap) {
  AdmissionCounts c;
  for (uint32_t i = 0; i < 10; ++i) c.add(CacheKey{i, 0}, /*day=*/i, /*cap=*/100);
  c.add(CacheKey{3, 0}, 20, 100);
  AdmissionCounts d;
  ASSERT_TRUE(d.decode(c.encode()).is_ok());
  EXPECT_EQ(d.count(CacheKey{3, 0}), 2);
  EXPECT_EQ(d.count(CacheKey{4, 0}), 1);
  EXPECT_EQ(d.encode(), c.encode());
  std::vector<std::byte> bad = c.encode();
  bad.pop_back();
  EXPECT_FALSE(d.decode(bad).is_ok());
  // Past the cap the lines seen longest ago go.
  c.add(CacheKey{99, 0}, 30, 5);
  EXPECT_LE(c.size(), 6u);
  EXPECT_EQ(c.count(CacheKey{99, 0}), 1);
  EXPECT_EQ(c.count(CacheKey{0, 0}), 0);
}

}  // namespace
}  // namespace anchorage::cache
