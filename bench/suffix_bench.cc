// suffix_bench: the persistent suffix store's figures (docs/suffix-store.md "Figures", issue 15
// §1 and §5): how long a lookup takes at 1 M and 48 M tokens (the cap's default), how long the
// suffix array takes to build, and what the store's rebuild reports. Prints ONE JSON document
// on stdout.
//
// The text is synthetic token ids, never user data: documents of 200 to 4,000 tokens drawn
// log-uniformly from a 152k vocabulary (a rough Zipf law), where every second document is
// mostly spans of 20 to 400 tokens copied from earlier ones (the repetition agent traffic has).
// Lookups ask with a context of --context tokens, --max-draft tokens at most, at least
// --min-match tokens matched:
//   hit    the context is a span of the text (the long matches a repetition gives);
//   fresh  the context is newly drawn ids (short matches or none: the common case).
// Each lookup is timed on its own (steady clock); the figures are the mean, p50, p99 and max
// in microseconds. The index is built with SuffixIndex::build, as the store's builder thread
// does; --store-tokens N also runs a SuffixStore on a MemFs with N tokens of requests and
// reports its rebuild stats.
//
// The machine is shared (2 cores, other jobs): compare figures within one run.
//
// Flags: --tokens 1000000,48000000  --lookups 20000  --context 32  --max-draft 16
//        --min-match 2  --store-tokens 1000000  --seed 1
//        --quick (100,000 tokens, 2,000 lookups, store of 100,000 tokens)
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/suffix_index.h"
#include "cache/suffix_store.h"
#include "core/clock.h"
#include "core/isa.h"
#include "core/mem_fs.h"
#include "core/rng.h"
#include "core/sha256.h"

namespace {

using anchorage::cache::kDocumentEnd;
using anchorage::cache::SuffixIndex;
using anchorage::core::Rng;
using Json = nlohmann::ordered_json;

constexpr double kVocab = 151936;

struct Flags {
  std::vector<int64_t> tokens = {1000000, 48000000};
  int64_t lookups = 20000;
  int context = 32;
  int max_draft = 16;
  int min_match = 2;
  int64_t store_tokens = 1000000;
  uint64_t seed = 1;
};

bool parse_int(std::string_view s, int64_t* out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_flags(int argc, char** argv, Flags* f) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--quick") {
      f->tokens = {100000};
      f->lookups = 2000;
      f->store_tokens = 100000;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (a == "--tokens") {
      f->tokens.clear();
      for (size_t at = 0; at <= v.size();) {
        size_t comma = std::min(v.find(',', at), v.size());
        if (!parse_int(v.substr(at, comma - at), &n) || n < 1) return false;
        f->tokens.push_back(n);
        at = comma + 1;
      }
    } else if (!parse_int(v, &n) || n < 0) {
      return false;
    } else if (a == "--lookups") {
      f->lookups = n;
    } else if (a == "--context") {
      f->context = int(n);
    } else if (a == "--max-draft") {
      f->max_draft = int(n);
    } else if (a == "--min-match") {
      f->min_match = int(n);
    } else if (a == "--store-tokens") {
      f->store_tokens = n;
    } else if (a == "--seed") {
      f->seed = uint64_t(n);
    } else {
      return false;
    }
  }
  return f->context >= 1 && f->min_match >= 1 && f->max_draft >= 1;
}

int32_t draw_token(Rng& rng) {
  return int32_t(std::min(kVocab - 1, std::floor(std::pow(kVocab, rng.uniform()))));
}

// Synthetic documents totalling about `tokens` ids (see the header comment).
std::vector<std::vector<int32_t>> make_documents(int64_t tokens, Rng& rng) {
  std::vector<std::vector<int32_t>> docs;
  std::vector<int32_t> all;  // every document back to back, to copy spans from
  int64_t total = 0;
  while (total < tokens) {
    size_t len = 200 + rng.next_u64() % 3801;
    len = size_t(std::min<int64_t>(int64_t(len), tokens - total));
    std::vector<int32_t> d;
    bool quoting = docs.size() % 2 == 1 && all.size() > 1000;
    while (d.size() < len) {
      if (quoting && rng.uniform() < 0.8) {
        size_t span = 20 + rng.next_u64() % 381;
        size_t from = rng.next_u64() % (all.size() - span);
        d.insert(d.end(), all.begin() + from, all.begin() + from + span);
      } else {
        for (int i = 0; i < 20; ++i) d.push_back(draw_token(rng));
      }
    }
    d.resize(len);
    all.insert(all.end(), d.begin(), d.end());
    total += int64_t(len);
    docs.push_back(std::move(d));
  }
  return docs;
}

Json summarize(std::vector<double> us, int64_t drafted, int64_t matched) {
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double x : us) sum += x;
  auto at = [&](double q) { return us[size_t(q * double(us.size() - 1))]; };
  Json j;
  j["lookups"] = us.size();
  j["mean_us"] = sum / double(us.size());
  j["p50_us"] = at(0.5);
  j["p99_us"] = at(0.99);
  j["max_us"] = us.back();
  j["with_draft"] = matched;
  j["draft_tokens"] = drafted;
  return j;
}

Json bench_index(int64_t tokens, const Flags& f, Rng& rng) {
  std::vector<std::vector<int32_t>> docs = make_documents(tokens, rng);
  std::vector<uint32_t> text;
  text.reserve(size_t(tokens) + docs.size());
  for (const auto& d : docs) {
    text.insert(text.end(), d.begin(), d.end());
    text.push_back(kDocumentEnd);
  }
  std::vector<uint32_t> spans = text;  // to draw hit contexts from
  int64_t t0 = anchorage::core::now_ns();
  auto index = SuffixIndex::build(std::move(text));
  double build_ms = double(anchorage::core::now_ns() - t0) * 1e-6;
  Json j;
  j["tokens"] = tokens;
  j["documents"] = docs.size();
  if (!index) {
    j["error"] = index.status().to_string();
    return j;
  }
  j["build_ms"] = build_ms;
  for (const char* kind : {"hit", "fresh"}) {
    std::vector<double> us;
    int64_t drafted = 0, matched = 0;
    std::vector<int32_t> context(size_t(f.context)), out;
    for (int64_t q = 0; q < f.lookups; ++q) {
      if (kind[0] == 'h') {
        size_t from = rng.next_u64() % (spans.size() - context.size());
        for (size_t i = 0; i < context.size(); ++i) {
          uint32_t t = spans[from + i];
          context[i] = t == kDocumentEnd ? 0 : int32_t(t);
        }
      } else {
        for (auto& t : context) t = draw_token(rng);
      }
      out.clear();
      int64_t s = anchorage::core::now_ns();
      auto m = (*index)->lookup(context, f.max_draft, f.min_match, &out);
      us.push_back(double(anchorage::core::now_ns() - s) * 1e-3);
      drafted += int64_t(out.size());
      matched += m.match_tokens > 0 ? 1 : 0;
    }
    j[kind] = summarize(std::move(us), drafted, matched);
  }
  return j;
}

Json bench_store(int64_t tokens, Rng& rng) {
  anchorage::core::MemFs fs;
  auto store =
      anchorage::cache::SuffixStore::open(fs, "/cache", anchorage::core::sha256("bench"), {});
  Json j;
  if (!store) {
    j["error"] = store.status().to_string();
    return j;
  }
  for (const auto& d : make_documents(tokens, rng)) (*store)->add_request(d, {});
  (*store)->wait_idle();
  auto st = (*store)->stats();
  j["tokens"] = st.tokens;
  j["documents"] = st.documents;
  j["log_bytes"] = st.log_bytes;
  j["index_bytes"] = st.index_bytes;
  j["rebuilds"] = st.rebuilds;
  j["last_rebuild_ms"] = st.last_rebuild_ms;
  j["total_rebuild_ms"] = st.total_rebuild_ms;
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (!parse_flags(argc, argv, &f)) {
    std::fprintf(stderr, "usage: suffix_bench [--quick] [--tokens N,M] [--lookups N] ...\n");
    return 2;
  }
  Rng rng(f.seed);
  Json doc;
  doc["bench"] = "suffix_store";
  doc["cpu_isa"] = std::string(anchorage::core::isa_name(anchorage::core::detected_isa()));
  doc["context"] = f.context;
  doc["max_draft"] = f.max_draft;
  doc["min_match"] = f.min_match;
  Json sizes = Json::array();
  for (int64_t n : f.tokens) sizes.push_back(bench_index(n, f, rng));
  doc["index"] = sizes;
  if (f.store_tokens > 0) doc["store"] = bench_store(f.store_tokens, rng);
  std::printf("%s\n", doc.dump(2).c_str());
  return 0;
}
