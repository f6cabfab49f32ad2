// Tokenizer speed on the opencode captures rendered with the Qwen3 chat template (the
// `trace/*/render` rows of tests/text/golden/tokenizer_golden.jsonl, ~32 KB prompts): encode
// MB/s with a warm and a cold piece cache, decode and stream-decode MB/s, and load time: from
// tokenizer.json, and from a GGUF file's tokenizer.ggml.* arrays (the file's parse, then the
// tokenizer built from it, as `anchorage serve --model FILE.gguf` does at start).
// Prints Google Benchmark's JSON with --benchmark_format=json; bytes_per_second is in bytes
// of UTF-8 text. Run:  build/bench/tokenizer_bench --benchmark_format=json
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/gguf/gguf_file.h"
#include "model/gguf/gguf_writer.h"
#include "model/gguf/mapped_file.h"
#include "server/gguf_text.h"
#include "text/bpe_vocab.h"
#include "text/stream_decoder.h"
#include "text/tokenizer.h"
#include "text/tokenizer_spec.h"

namespace {

using anchorage::text::StreamDecoder;
using anchorage::text::Tokenizer;

const std::string kTokenizerPath = std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json";

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "tokenizer_bench: %s\n", why.c_str());
  std::exit(1);
}

const Tokenizer& tokenizer() {
  static const Tokenizer tok = [] {
    auto r = Tokenizer::load_file(kTokenizerPath);
    if (!r) die(r.error().to_string() + " (run scripts/deps.sh)");
    return std::move(r).value();
  }();
  return tok;
}

// The rendered prompts, each once.
const std::vector<std::string>& renders() {
  static const std::vector<std::string> texts = [] {
    const std::string path =
        std::string(ANCHORAGE_SOURCE_DIR) + "/tests/text/golden/tokenizer_golden.jsonl";
    std::ifstream in(path);
    if (!in) die("cannot open " + path);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded()) die("bad line in " + path);
      const std::string name = j["name"].get<std::string>();
      if (name.rfind("trace/", 0) == 0 && name.ends_with("/render")) {
        out.push_back(j["text"].get<std::string>());
      }
    }
    if (out.empty()) die("no trace renders in " + path);
    return out;
  }();
  return texts;
}

int64_t total_bytes() {
  int64_t n = 0;
  for (const std::string& t : renders()) n += static_cast<int64_t>(t.size());
  return n;
}

void BM_EncodeWarmCache(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  for (const std::string& t : renders()) benchmark::DoNotOptimize(tok.encode(t));
  size_t n_ids = 0;
  for (auto _ : state) {
    for (const std::string& t : renders()) {
      const std::vector<int32_t> ids = tok.encode(t);
      n_ids += ids.size();
      benchmark::DoNotOptimize(ids.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(n_ids), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EncodeWarmCache)->Unit(benchmark::kMillisecond);

// Every prompt starts with an empty cache: the cost of a prompt the server has never seen
// pieces of (the cache is shared, so in practice it is warm after the first request).
void BM_EncodeColdCache(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  for (auto _ : state) {
    for (const std::string& t : renders()) {
      state.PauseTiming();
      tok.test_clear_cache();
      state.ResumeTiming();
      benchmark::DoNotOptimize(tok.encode(t).data());
    }
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_EncodeColdCache)->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& t : renders()) ids.push_back(tok.encode(t));
  for (auto _ : state) {
    for (const auto& v : ids) benchmark::DoNotOptimize(tok.decode(v).data());
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

void BM_StreamDecode(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& t : renders()) ids.push_back(tok.encode(t));
  std::string out;
  for (auto _ : state) {
    for (const auto& v : ids) {
      StreamDecoder stream(tok);
      out.clear();
      for (int32_t id : v) stream.push(id, &out);
      stream.flush(&out);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * total_bytes());
}
BENCHMARK(BM_StreamDecode)->Unit(benchmark::kMillisecond);

void BM_Load(benchmark::State& state) {
  for (auto _ : state) {
    auto r = Tokenizer::load_file(kTokenizerPath);
    if (!r) die(r.error().to_string());
    benchmark::DoNotOptimize(r->vocab_size());
  }
}
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(3);

// The Qwen3 vocabulary written as a GGUF file's tokenizer.ggml.* keys (bytes in memory).
const std::string& vocabulary_gguf() {
  using anchorage::model::gguf::GgufType;
  using anchorage::model::gguf::GgufValue;
  static const std::string bytes = [] {
    std::ifstream in(kTokenizerPath);
    const std::string json((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto spec = anchorage::text::parse_tokenizer_json(json);
    if (!spec) die(spec.error().to_string());
    const anchorage::text::BpeVocab v = anchorage::text::vocab_from_spec(*spec, "qwen2", 151936);
    anchorage::model::gguf::GgufWriter w;
    w.add("tokenizer.ggml.model", GgufValue::string("gpt2"));
    w.add("tokenizer.ggml.pre", GgufValue::string(v.pre));
    w.add("tokenizer.ggml.tokens", GgufValue::string_array(v.tokens));
    w.add("tokenizer.ggml.token_type",
          GgufValue::int_array(GgufType::kI32,
                               std::vector<int64_t>(v.token_types.begin(), v.token_types.end())));
    w.add("tokenizer.ggml.merges", GgufValue::string_array(v.merges));
    return w.serialize();
  }();
  return bytes;
}

anchorage::model::gguf::GgufFile parse_vocabulary_gguf() {
  const std::string& b = vocabulary_gguf();
  auto f = anchorage::model::gguf::GgufFile::parse(
      anchorage::model::gguf::MappedFile::view(b.data(), b.size()));
  if (!f) die(f.error().to_string());
  return std::move(f).value();
}

// GgufFile::parse of the vocabulary's file: 300k strings (views since the nineteenth session).
void BM_ParseGgufVocabulary(benchmark::State& state) {
  vocabulary_gguf();
  for (auto _ : state) {
    auto f = parse_vocabulary_gguf();
    benchmark::DoNotOptimize(f.metadata().size());
  }
}
BENCHMARK(BM_ParseGgufVocabulary)->Unit(benchmark::kMillisecond)->Iterations(5);

// The tokenizer from a parsed file's arrays (server::gguf_tokenizer): the start's tokenizer thread.
void BM_LoadFromGguf(benchmark::State& state) {
  const auto f = parse_vocabulary_gguf();
  for (auto _ : state) {
    auto t = anchorage::server::gguf_tokenizer(f);
    if (!t) die(t.error().to_string());
    benchmark::DoNotOptimize(t->vocab_size());
  }
}
BENCHMARK(BM_LoadFromGguf)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
