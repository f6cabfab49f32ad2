// The suffix store (src/cache/suffix_store.h, docs/suffix-store.md): the suffix sort and the
// lookup against brute force on small alphabets, the append rule (dedupe against the last four
// requests with the 8-token overlap), the cap, reopen, torn tails at every byte of the last
// record, the tokenizer check, corrupt logs and the files' modes.
#include "cache/suffix_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cache/range_max.h"
#include "cache/suffix_index.h"
#include "cache/suffix_log.h"
#include "cache/suffix_log_format.h"
#include "cache/suffix_sort.h"
#include "core/fault_fs.h"
#include "core/mem_fs.h"
#include "core/posix_fs.h"
#include "core/rng.h"
#include "support/fs_text.h"

namespace anchorage::cache {
namespace {

using Doc = std::vector<int32_t>;

core::Sha256Digest sha_of(const char* name) {
  return core::sha256(std::string_view(name));
}

const std::string kLogPath = "/c/suffix/tokens.log";

std::vector<int32_t> random_doc(core::Rng& rng, int alphabet, size_t len, int32_t base = 0) {
  std::vector<int32_t> d(len);
  for (auto& t : d) t = base + int32_t(rng.next_u64() % uint64_t(alphabet));
  return d;
}

// The lookup rule by brute force over the documents (oldest first): the longest suffix of the
// context (>= min_match) found in a document with a token after it; among those the latest.
struct OracleDraft {
  int32_t match = 0;
  std::vector<int32_t> tokens;
};
OracleDraft oracle(const std::vector<Doc>& docs, const std::vector<int32_t>& context, int k,
                   int min_match) {
  for (size_t m = context.size(); m >= size_t(min_match) && m > 0; --m) {
    const int32_t* pat = context.data() + context.size() - m;
    for (size_t d = docs.size(); d-- > 0;) {
      const Doc& doc = docs[d];
      if (doc.size() <= m) continue;
      for (size_t p = doc.size() - m; p-- > 0;) {  // p + m < doc.size(): a token follows
        if (std::equal(pat, pat + m, doc.begin() + p)) {
          OracleDraft o{int32_t(m), {}};
          for (size_t i = p + m; i < doc.size() && o.tokens.size() < size_t(k); ++i) {
            o.tokens.push_back(doc[i]);
          }
          return o;
        }
      }
    }
  }
  return {};
}

std::vector<uint32_t> text_of(const std::vector<Doc>& docs) {
  std::vector<uint32_t> text;
  for (const Doc& d : docs) {
    text.insert(text.end(), d.begin(), d.end());
    text.push_back(kDocumentEnd);
  }
  return text;
}

TEST(SuffixSort, EqualsBruteForceIn32And64Bit) {
  core::Rng rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<uint32_t> text(1 + rng.next_u64() % 300);
    int alphabet = 1 + int(rng.next_u64() % 4);
    // Values near the top of the 3-byte range too: every byte of the encoding is exercised.
    for (auto& t : text) t = uint32_t(rng.next_u64() % alphabet) * 0x10101u + (trial % 3) * 255;
    std::vector<uint32_t> want(text.size());
    for (uint32_t i = 0; i < want.size(); ++i) want[i] = i;
    std::sort(want.begin(), want.end(), [&](uint32_t a, uint32_t b) {
      return std::lexicographical_compare(text.begin() + a, text.end(), text.begin() + b,
                                          text.end());
    });
    auto got32 = sort_token_suffixes(text, false);
    auto got64 = sort_token_suffixes(text, true);
    ASSERT_TRUE(got32 && got64);
    EXPECT_EQ(*got32, want) << trial;
    EXPECT_EQ(*got64, want) << trial;
  }
  std::vector<uint32_t> too_big = {1, kMaxSortableToken + 1};
  EXPECT_FALSE(sort_token_suffixes(too_big));
}

TEST(RangeMax, EqualsBruteForce) {
  core::Rng rng(3);
  std::vector<uint32_t> v(3000);
  for (auto& x : v) x = uint32_t(rng.next_u64());
  RangeMax rm(v);
  for (int q = 0; q < 3000; ++q) {
    size_t a = rng.next_u64() % v.size();
    size_t b = a + 1 + rng.next_u64() % (v.size() - a);
    ASSERT_EQ(rm.max(a, b), *std::max_element(v.begin() + a, v.begin() + b)) << a << " " << b;
  }
}

TEST(SuffixIndex, LookupEqualsOracleOnSmallAlphabets) {
  core::Rng rng(11);
  for (int trial = 0; trial < 60; ++trial) {
    int alphabet = 2 + trial % 4;
    std::vector<Doc> docs;
    for (int d = 0, n = 1 + int(rng.next_u64() % 6); d < n; ++d) {
      docs.push_back(random_doc(rng, alphabet, 1 + rng.next_u64() % 60));
    }
    auto index = SuffixIndex::build(text_of(docs));
    ASSERT_TRUE(index);
    for (int q = 0; q < 40; ++q) {
      std::vector<int32_t> context = random_doc(rng, alphabet + 1, rng.next_u64() % 12);
      int k = 1 + int(rng.next_u64() % 8);
      int min_match = 1 + int(rng.next_u64() % 3);
      OracleDraft want = oracle(docs, context, k, min_match);
      std::vector<int32_t> got;
      SuffixMatch m = (*index)->lookup(context, k, min_match, &got);
      ASSERT_EQ(m.match_tokens, want.match) << trial << " " << q;
      ASSERT_EQ(got, want.tokens) << trial << " " << q;
    }
  }
}

TEST(SuffixIndex, ContextTokensOutOfRangeEndTheMatch) {
  std::vector<Doc> docs = {{1, 2, 3, 4}};
  auto index = SuffixIndex::build(text_of(docs));
  ASSERT_TRUE(index);
  std::vector<int32_t> out;
  std::vector<int32_t> context = {1, -5, 2};
  EXPECT_EQ((*index)->lookup(context, 4, 1, &out).match_tokens, 1);
  EXPECT_EQ(out, (std::vector<int32_t>{3, 4}));
  out.clear();
  context = {2, int32_t(kDocumentEnd)};
  EXPECT_EQ((*index)->lookup(context, 4, 1, &out).match_tokens, 0);
  EXPECT_TRUE(out.empty());
}

std::unique_ptr<SuffixStore> open_store(core::Fs& fs, SuffixStoreOptions options = {},
                                        const char* tokenizer = "tok-a") {
  auto store = SuffixStore::open(fs, "/c", sha_of(tokenizer), options);
  EXPECT_TRUE(store) << store.status().to_string();
  return store ? std::move(*store) : nullptr;
}

// The log's documents, read back through the format's parser.
std::vector<Doc> logged_docs(core::Fs& fs, const char* tokenizer = "tok-a") {
  std::string bytes = test::read_all(fs, kLogPath);
  auto scan = scan_suffix_log(std::as_bytes(std::span(bytes)), sha_of(tokenizer));
  EXPECT_TRUE(scan) << scan.status().to_string();
  std::vector<Doc> docs(1);
  if (!scan) return {};
  for (uint32_t t : scan->text) {
    if (t == kDocumentEnd) {
      docs.emplace_back();
    } else {
      docs.back().push_back(int32_t(t));
    }
  }
  docs.pop_back();
  return docs;
}

TEST(SuffixStore, AppendAndLookupEqualOracle) {
  core::MemFs fs;
  auto store = open_store(fs);
  core::Rng rng(5);
  std::vector<Doc> docs;
  for (int i = 0; i < 30; ++i) {
    // A first token of its own: no request shares a prefix with another, so each goes in whole.
    Doc prompt = random_doc(rng, 3, 5 + rng.next_u64() % 40);
    prompt.insert(prompt.begin(), 1000 + i);
    Doc output = random_doc(rng, 3, rng.next_u64() % 20);
    store->add_request(prompt, output);
    Doc whole = prompt;
    whole.insert(whole.end(), output.begin(), output.end());
    docs.push_back(whole);
  }
  store->wait_idle();
  EXPECT_EQ(logged_docs(fs), docs);
  for (int q = 0; q < 300; ++q) {
    std::vector<int32_t> context = random_doc(rng, 3, rng.next_u64() % 10);
    OracleDraft want = oracle(docs, context, 6, 2);
    std::vector<int32_t> got;
    ASSERT_EQ(store->lookup(context, 6, 2, &got).match_tokens, want.match) << q;
    ASSERT_EQ(got, want.tokens) << q;
  }
  EXPECT_EQ(store->stats().indexed_tokens, store->stats().tokens);
}

Doc iota_doc(int32_t first, size_t n) {
  Doc d(n);
  for (size_t i = 0; i < n; ++i) d[i] = first + int32_t(i);
  return d;
}
Doc concat(std::initializer_list<Doc> parts) {
  Doc d;
  for (const Doc& p : parts) d.insert(d.end(), p.begin(), p.end());
  return d;
}

TEST(SuffixStore, AppendsOnlyWhatTheLastFourRequestsDidNotAddWithEightTokensOverlap) {
  core::MemFs fs;
  auto store = open_store(fs);
  Doc head = iota_doc(100, 30), out1 = iota_doc(200, 10), user2 = iota_doc(300, 12),
      out2 = iota_doc(400, 5);
  store->add_request(head, out1);                            // whole
  store->add_request(concat({head, out1, user2}), out2);     // parts after head+out1
  store->add_request(head, {});                              // a prefix: nothing
  store->add_request(concat({head, iota_doc(500, 3)}), {});  // parts after head
  store->wait_idle();
  Doc turn1 = concat({head, out1});
  Doc turn2 = concat({head, out1, user2, out2});
  std::vector<Doc> want = {
      turn1,
      Doc(turn2.begin() + (turn1.size() - 8), turn2.end()),
      concat({Doc(head.end() - 8, head.end()), iota_doc(500, 3)}),
  };
  EXPECT_EQ(logged_docs(fs), want);
  SuffixStoreStats st = store->stats();
  EXPECT_EQ(st.requests, 4);
  EXPECT_EQ(st.deduplicated_tokens,
            int64_t(turn1.size() - 8) + int64_t(head.size()) + int64_t(head.size() - 8));

  // An n-gram across the join (the last tokens of out1, the first of user2) is in the store.
  std::vector<int32_t> got;
  Doc across = {out1[7], out1[8], out1[9], user2[0]};
  EXPECT_EQ(store->lookup(across, 3, 4, &got).match_tokens, 4);
  EXPECT_EQ(got, (Doc{user2[1], user2[2], user2[3]}));

  // Four other requests later, turn1 is no longer recent: it goes in whole again.
  for (int i = 0; i < 4; ++i) store->add_request(iota_doc(10000 + 100 * i, 5), {});
  store->add_request(head, out1);
  store->wait_idle();
  EXPECT_EQ(logged_docs(fs).back(), turn1);
}

TEST(SuffixStore, ScopeOutputsKeepsOnlyOutputs) {
  core::MemFs fs;
  SuffixStoreOptions options;
  options.scope = SuffixScope::kOutputs;
  auto store = open_store(fs, options);
  store->add_request(iota_doc(1, 50), iota_doc(900, 7));
  store->wait_idle();
  EXPECT_EQ(logged_docs(fs), std::vector<Doc>{iota_doc(900, 7)});
}

TEST(SuffixStore, OverTheCapForgetsTheOldestHalfAtADocumentBoundary) {
  core::MemFs fs;
  SuffixStoreOptions options;
  // Ten documents of 100 tokens fit (64 + 10 * (8 + 400) bytes); the eleventh does not.
  options.cap_bytes = kSuffixLogHeaderBytes + 10 * (kSuffixRecordHeaderBytes + 400);
  auto store = open_store(fs, options);
  std::vector<Doc> docs;
  for (int i = 0; i < 10; ++i) docs.push_back(iota_doc(1000 * (i + 1), 100 + (i == 2 ? 0 : 0)));
  for (const Doc& d : docs) store->add_request(d, {});
  store->wait_idle();
  EXPECT_EQ(store->stats().evictions, 0);
  EXPECT_EQ(logged_docs(fs), docs);
  Doc eleventh = iota_doc(50000, 100);
  store->add_request(eleventh, {});
  store->wait_idle();
  // 11 documents of 101 text slots: half is 555, inside document 5 (0-based, slots 505..605);
  // the cut is at its end, so documents 6..10 stay.
  std::vector<Doc> want(docs.begin() + 6, docs.end());
  want.push_back(eleventh);
  EXPECT_EQ(logged_docs(fs), want);
  EXPECT_EQ(store->stats().evictions, 1);
  EXPECT_EQ(store->stats().documents, 5);
  std::vector<int32_t> got;
  Doc forgotten = {docs[5][10], docs[5][11]};
  EXPECT_EQ(store->lookup(forgotten, 2, 2, &got).match_tokens, 0);
  Doc kept = {docs[6][10], docs[6][11]};
  EXPECT_EQ(store->lookup(kept, 2, 2, &got).match_tokens, 2);
  EXPECT_EQ(got, (Doc{docs[6][12], docs[6][13]}));
}

// Lookups of `n` random contexts, as (match, tokens) pairs.
std::vector<std::pair<int32_t, Doc>> sample_lookups(SuffixStore& store, uint64_t seed, int n) {
  core::Rng rng(seed);
  std::vector<std::pair<int32_t, Doc>> out;
  for (int q = 0; q < n; ++q) {
    Doc context = random_doc(rng, 4, rng.next_u64() % 8);
    Doc got;
    int32_t m = store.lookup(context, 5, 1, &got).match_tokens;
    out.emplace_back(m, got);
  }
  return out;
}

void fill(SuffixStore& store, int docs, uint64_t seed) {
  core::Rng rng(seed);
  for (int i = 0; i < docs; ++i) {
    Doc d = random_doc(rng, 4, 10 + rng.next_u64() % 30);
    d.insert(d.begin(), 5000 + i);
    store.add_request(d, {});
  }
  store.wait_idle();
}

TEST(SuffixStore, ReopenGivesEqualLookups) {
  core::MemFs fs;
  std::vector<std::pair<int32_t, Doc>> before;
  {
    auto store = open_store(fs);
    fill(*store, 20, 9);
    before = sample_lookups(*store, 4, 400);
  }
  auto store = open_store(fs);
  store->wait_idle();
  EXPECT_EQ(store->stats().documents, 20);
  EXPECT_EQ(sample_lookups(*store, 4, 400), before);
  EXPECT_EQ(store->stats().torn_tails, 0);
}

TEST(SuffixStore, TornTailAtEveryByteOfTheLastRecordIsTruncatedAndCounted) {
  core::MemFs fs;
  size_t two_docs_bytes = 0;
  std::vector<std::pair<int32_t, Doc>> want;
  {
    auto store = open_store(fs);
    store->add_request(iota_doc(10, 20), {});
    store->add_request(iota_doc(40, 20), {});
    store->wait_idle();
    two_docs_bytes = test::read_all(fs, kLogPath).size();
    want = sample_lookups(*store, 1, 50);
    store->add_request(iota_doc(20, 15), {});  // overlaps the first document's ids
    store->wait_idle();
  }
  const std::string whole = test::read_all(fs, kLogPath);
  ASSERT_EQ(whole.size(), two_docs_bytes + kSuffixRecordHeaderBytes + 4 * 15);
  for (size_t cut = two_docs_bytes; cut < whole.size(); ++cut) {
    core::MemFs cut_fs;
    {
      auto seed = open_store(cut_fs);  // creates the directory and an empty log
    }
    std::vector<std::byte>* bytes = cut_fs.mutable_contents(kLogPath);
    ASSERT_NE(bytes, nullptr);
    bytes->assign(reinterpret_cast<const std::byte*>(whole.data()),
                  reinterpret_cast<const std::byte*>(whole.data()) + cut);
    auto store = open_store(cut_fs);
    store->wait_idle();
    EXPECT_EQ(store->stats().torn_tails, cut > two_docs_bytes ? 1 : 0) << cut;
    EXPECT_EQ(store->stats().documents, 2) << cut;
    EXPECT_EQ(test::read_all(cut_fs, kLogPath).size(), two_docs_bytes) << cut;
    EXPECT_EQ(sample_lookups(*store, 1, 50), want) << cut;
  }
}

TEST(SuffixStore, ShortWriteOfTheLastRecordLeavesATornTail) {
  const Doc last = iota_doc(20, 15);
  const size_t record_bytes = kSuffixRecordHeaderBytes + 4 * last.size();
  for (size_t prefix = 1; prefix < record_bytes; ++prefix) {
    core::MemFs base;
    {
      auto store = open_store(base);
      store->add_request(iota_doc(10, 20), {});
      store->wait_idle();
    }
    core::FaultFs faulty(base);
    {
      auto store = open_store(faulty);
      store->wait_idle();
      faulty.short_write_nth(1, prefix);
      store->add_request(last, {});
      store->add_request(iota_doc(70, 5), {});  // refused by the sticky log
      store->wait_idle();
      EXPECT_FALSE(store->stats().error.empty());
    }
    // The process died after the short write; the OS keeps the bytes it was given (no power
    // cut, which would drop them unsynced), so the next open meets the cut-off record.
    auto store = open_store(base);
    store->wait_idle();
    EXPECT_EQ(store->stats().torn_tails, 1) << prefix;
    EXPECT_EQ(store->stats().documents, 1) << prefix;
    EXPECT_EQ(logged_docs(base), std::vector<Doc>{iota_doc(10, 20)}) << prefix;
  }
}

// Four documents of 100 ids under a cap of three: the fourth append evicts D1 and D2 and
// rewrites the log. Every state a crash or a failure can leave must read back whole.
struct CrashRig {
  std::vector<Doc> docs = {iota_doc(1000, 100), iota_doc(2000, 100), iota_doc(3000, 100),
                           iota_doc(4000, 100)};
  SuffixStoreOptions options;
  CrashRig() { options.cap_bytes = kSuffixLogHeaderBytes + 3 * (kSuffixRecordHeaderBytes + 400); }
  void seed(core::Fs& fs) {
    auto store = open_store(fs, options);
    store->add_request(docs[0], {});
    store->add_request(docs[1], {});
    store->wait_idle();
  }
  void run(core::Fs& fs) {
    auto store = SuffixStore::open(fs, "/c", sha_of("tok-a"), options);
    if (!store) return;  // a failed open loses nothing on the disk
    (*store)->add_request(docs[2], {});
    (*store)->wait_idle();
    (*store)->add_request(docs[3], {});
    (*store)->wait_idle();
  }
  // Reopens without faults: the log is one of the states the writes pass through.
  void check(core::MemFs& base, const std::string& what) {
    auto store = open_store(base, options);
    ASSERT_NE(store, nullptr) << what;
    store->wait_idle();
    std::vector<Doc> got = logged_docs(base);
    std::vector<std::vector<Doc>> allowed = {{docs[0], docs[1]},
                                             {docs[0], docs[1], docs[2]},
                                             {docs[0], docs[1], docs[2], docs[3]},
                                             {docs[2], docs[3]}};
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), got), allowed.end())
        << what << ": " << got.size() << " documents";
    EXPECT_EQ(store->stats().corrupt_deleted, 0) << what;
    auto names = base.list("/c/suffix");
    ASSERT_TRUE(names) << what;
    for (const std::string& name : *names) EXPECT_EQ(name, kSuffixLogName) << what;
  }
};

TEST(SuffixStore, EveryFailedFileCallLeavesAWholeLog) {
  const core::FsOp ops[] = {core::FsOp::kCreate, core::FsOp::kOpenAppend, core::FsOp::kOpenRead,
                            core::FsOp::kAppend, core::FsOp::kSync,       core::FsOp::kRename,
                            core::FsOp::kRemove, core::FsOp::kCreateDir,  core::FsOp::kSyncDir,
                            core::FsOp::kList,   core::FsOp::kRead};
  CrashRig rig;
  for (core::FsOp op : ops) {
    for (bool persistent : {false, true}) {
      for (int64_t n = 1;; ++n) {
        core::MemFs base;
        rig.seed(base);
        core::FaultFs faulty(base);
        faulty.fail_nth(op, n, persistent);
        rig.run(faulty);
        std::string what = std::string(core::fs_op_name(op)) + " #" + std::to_string(n) +
                           (persistent ? " for good" : " once");
        rig.check(base, what);
        if (faulty.injected_failures() == 0) break;
      }
    }
  }
}

TEST(SuffixStore, PowerCutAtEveryCrashPointLeavesAWholeLog) {
  const core::CrashPoint points[] = {core::CrashPoint::kCreated, core::CrashPoint::kAppended,
                                     core::CrashPoint::kSynced, core::CrashPoint::kRenamed,
                                     core::CrashPoint::kDirSynced};
  CrashRig rig;
  for (core::CrashPoint p : points) {
    for (int64_t k = 1;; ++k) {
      core::MemFs base;
      rig.seed(base);
      core::FaultFs faulty(base);
      faulty.crash_at(p, k, [&base] { base.power_cut(); });
      rig.run(faulty);
      rig.check(base, std::string(core::crash_point_name(p)) + " #" + std::to_string(k));
      if (!faulty.crashed()) break;
    }
  }
}

// Lookups from another thread while requests are added and indexes rebuilt (run under TSan in
// CI): every draft is a true continuation, in one document, of what the context matched.
TEST(SuffixStore, LookupsWhileAppendingReturnTrueContinuations) {
  core::MemFs fs;
  auto store = open_store(fs);
  std::vector<Doc> docs;
  core::Rng rng(21);
  for (int i = 0; i < 60; ++i) {
    Doc d = random_doc(rng, 3, 20 + rng.next_u64() % 40);
    d.insert(d.begin(), 7000 + i);
    docs.push_back(d);
  }
  std::thread reader([&] {
    core::Rng qrng(22);
    for (int q = 0; q < 3000; ++q) {
      Doc context = random_doc(qrng, 3, 1 + qrng.next_u64() % 8);
      Doc got;
      SuffixMatch m = store->lookup(context, 6, 1, &got);
      if (m.match_tokens == 0) {
        EXPECT_TRUE(got.empty());
        continue;
      }
      Doc want(context.end() - m.match_tokens, context.end());
      want.insert(want.end(), got.begin(), got.end());
      bool found = std::any_of(docs.begin(), docs.end(), [&](const Doc& d) {
        return std::search(d.begin(), d.end(), want.begin(), want.end()) != d.end();
      });
      EXPECT_TRUE(found) << q;
    }
  });
  for (const Doc& d : docs) store->add_request(d, {});
  reader.join();
  store->wait_idle();
  EXPECT_EQ(logged_docs(fs), docs);
}

TEST(SuffixStore, AnotherTokenizerIsRefusedAndTheLogKept) {
  core::MemFs fs;
  {
    auto store = open_store(fs);
    fill(*store, 3, 2);
  }
  const std::string before = test::read_all(fs, kLogPath);
  auto other = SuffixStore::open(fs, "/c", sha_of("tok-b"), {});
  ASSERT_FALSE(other);
  EXPECT_EQ(other.status().reason(), core::Reason::kFingerprint);
  EXPECT_EQ(test::read_all(fs, kLogPath), before);
  auto again = open_store(fs);
  again->wait_idle();
  EXPECT_EQ(again->stats().documents, 3);
}

TEST(SuffixStore, CorruptLogIsDeletedAndTheStoreStartsEmpty) {
  core::MemFs fs;
  {
    auto store = open_store(fs);
    fill(*store, 4, 8);
  }
  const std::string good = test::read_all(fs, kLogPath);
  // Every header byte, and sampled bytes of the first records (a mid-file mismatch).
  std::vector<size_t> offsets;
  for (size_t i = 0; i < kSuffixLogHeaderBytes; ++i) offsets.push_back(i);
  for (size_t i = kSuffixLogHeaderBytes; i < good.size() / 2; i += 7) offsets.push_back(i);
  for (size_t at : offsets) {
    core::MemFs broken;
    { auto seed = open_store(broken); }
    std::vector<std::byte>* bytes = broken.mutable_contents(kLogPath);
    bytes->assign(reinterpret_cast<const std::byte*>(good.data()),
                  reinterpret_cast<const std::byte*>(good.data()) + good.size());
    (*bytes)[at] ^= std::byte{0x40};
    auto store = SuffixStore::open(broken, "/c", sha_of("tok-a"), {});
    ASSERT_TRUE(store) << at << " " << store.status().to_string();
    (*store)->wait_idle();
    SuffixStoreStats st = (*store)->stats();
    EXPECT_EQ(st.corrupt_deleted, 1) << at;
    EXPECT_EQ(st.documents, 0) << at;
    EXPECT_EQ(test::read_all(broken, kLogPath).size(), kSuffixLogHeaderBytes) << at;
    Doc got;
    EXPECT_EQ((*store)->lookup(Doc{5000}, 3, 1, &got).match_tokens, 0) << at;
  }
}

TEST(SuffixStore, ReadOnlyWritesNothing) {
  core::MemFs fs;
  {
    auto store = open_store(fs);
    fill(*store, 3, 6);
  }
  const std::string before = test::read_all(fs, kLogPath);
  SuffixStoreOptions options;
  options.read_only = true;
  auto store = open_store(fs, options);
  store->add_request(iota_doc(1, 30), {});
  store->wait_idle();
  EXPECT_EQ(store->stats().refused_requests, 1);
  EXPECT_EQ(store->stats().documents, 3);
  EXPECT_EQ(test::read_all(fs, kLogPath), before);
  Doc got;
  EXPECT_EQ(store->lookup(Doc{5000}, 3, 1, &got).match_tokens, 1);
}

// tests/golden/suffix-log-v1.bin was written by a script from docs/suffix-store.md's byte
// table (not by this encoder): the header for sha256("golden-tokenizer") and two records.
TEST(SuffixLog, GoldenFileOfThisVersionIsByteEqual) {
  core::PosixFs posix;
  std::string golden =
      test::read_all(posix, std::string(ANCHORAGE_SOURCE_DIR) + "/tests/golden/suffix-log-v" +
                                std::to_string(kSuffixLogVersion) + ".bin");
  const core::Sha256Digest sha = sha_of("golden-tokenizer");
  std::vector<std::byte> bytes = encode_suffix_log_header(sha);
  std::vector<uint32_t> first = {151643, 9707, 11}, second = {0, 16777214};
  encode_suffix_record(first, &bytes);
  encode_suffix_record(second, &bytes);
  ASSERT_EQ(golden.size(), bytes.size());
  EXPECT_EQ(std::memcmp(golden.data(), bytes.data(), bytes.size()), 0);
  auto scan = scan_suffix_log(bytes, sha);
  ASSERT_TRUE(scan);
  EXPECT_EQ(scan->text,
            (std::vector<uint32_t>{151643, 9707, 11, kDocumentEnd, 0, 16777214, kDocumentEnd}));
  EXPECT_FALSE(scan->torn_tail);
}

TEST(SuffixStore, DirectoryIs0700AndLogIs0600) {
  char tmpl[] = "/tmp/suffix_store_test_XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  {
    core::PosixFs fs;
    auto store = SuffixStore::open(fs, dir, sha_of("tok-a"), {});
    ASSERT_TRUE(store);
    (*store)->add_request(iota_doc(1, 10), {});
    (*store)->wait_idle();
  }
  struct stat st {};
  ASSERT_EQ(stat((dir + "/suffix").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(stat((dir + "/suffix/tokens.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anchorage::cache
