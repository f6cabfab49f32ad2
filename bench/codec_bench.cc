// codec_bench: the session spill codec's figures (docs/spill-codec.md, issue 11 §2 and §6) on
// real engine state. Prints ONE JSON document on stdout.
//
// A qwen35 engine of --preset (random weights, --kv f32 and/or bf16 views) prefills --tokens
// random token ids; its rows are then cut into the spill's blocks of 1,024 rows (every view's
// packed rows [b, b + 1024) back to back, elem_bytes = the KV type's size) and its recurrent
// state (every section, f32) is one more buffer. Each codec configuration encodes and decodes
// every block with a SpillCodecPool of each --codec-threads count, --repeats times:
//   ratio                raw bytes / frame bytes (higher is smaller on the disk)
//   compress_gb_per_s    raw bytes / wall time of the encodes (median of the repeats)
//   decompress_gb_per_s  raw bytes / wall time of the decodes (median)
// Every decode is compared with the raw bytes (memcmp): a wrong one shows as
// `round_trip_equal: false`.
//
// The machine is shared (2 cores, other jobs): compare figures within one run, as ratios.
//
// Flags: --preset small  --tokens 4096  --kv f32,bf16  --codec-threads 1,2  --repeats 3
//        --threads 0 (engine threads; 0 = all)  --segment-kib N (every codec's segment size;
//        default the codec's, 1 MiB)  --seed 1
//        --quick (tiny preset, 1,024 tokens, one repeat)
//        --check (exit 1 unless every configuration has its figures and every round trip is
//        equal; no wall-clock thresholds).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "cache/spill_codec.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/log.h"
#include "core/rng.h"
#include "core/state_layout.h"
#include "engine/engine.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"

namespace {

using anchorage::bench::loadavg;
using anchorage::bench::median;
using anchorage::bench::parse_i64;

using namespace anchorage;
using Json = nlohmann::ordered_json;
using cache::SpillCodecKind;
using cache::SpillCodecOptions;

constexpr int64_t kBlockRows = 1024;  // the spill's block (issue 11 §1)

struct Args {
  std::string preset = "small";
  int64_t tokens = 4096;
  std::vector<core::DType> kv = {core::DType::kF32, core::DType::kBF16};
  std::vector<int64_t> codec_threads = {1, 2};
  int64_t repeats = 3;
  int64_t threads = 0;
  int64_t segment_kib = 0;  // 0: the codec's default (SpillCodecOptions::segment_bytes)
  uint64_t seed = 1;
  bool quick = false;
  bool check = false;
};

std::vector<std::string_view> split(std::string_view v) {
  std::vector<std::string_view> out;
  while (!v.empty()) {
    const size_t c = v.find(',');
    out.push_back(v.substr(0, c));
    v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
  }
  return out;
}

bool parse_args(int argc, char** argv, Args* a) {
  bool preset_set = false, tokens_set = false, repeats_set = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;  // scripts/bench.sh passes these
    if (f == "--quick") {
      a->quick = true;
      continue;
    }
    if (f == "--check") {
      a->check = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (f == "--preset") {
      a->preset = std::string(v);
      preset_set = true;
    } else if (f == "--kv") {
      a->kv.clear();
      for (std::string_view k : split(v)) {
        if (k == "f32") {
          a->kv.push_back(core::DType::kF32);
        } else if (k == "bf16") {
          a->kv.push_back(core::DType::kBF16);
        } else {
          return false;
        }
      }
      if (a->kv.empty()) return false;
    } else if (f == "--codec-threads") {
      a->codec_threads.clear();
      for (std::string_view t : split(v)) {
        if (!parse_i64(t, &n) || n < 1 || n > 64) return false;
        a->codec_threads.push_back(n);
      }
      if (a->codec_threads.empty()) return false;
    } else if (parse_i64(v, &n) && n >= 0) {
      if (f == "--tokens") {
        a->tokens = std::max<int64_t>(n, 1);
        tokens_set = true;
      } else if (f == "--repeats") {
        a->repeats = std::max<int64_t>(n, 1);
        repeats_set = true;
      } else if (f == "--threads") {
        a->threads = n;
      } else if (f == "--segment-kib") {
        a->segment_kib = n;
      } else if (f == "--seed") {
        a->seed = uint64_t(n);
      } else {
        return false;
      }
    } else {
      return false;
    }
  }
  if (a->quick) {
    if (!preset_set) a->preset = "tiny";
    if (!tokens_set) a->tokens = 1024;
    if (!repeats_set) a->repeats = 1;
  }
  return true;
}

// One codec configuration of the table.
struct Config {
  std::string name;
  SpillCodecKind kind;
  SpillCodecOptions options;
  bool planes = true;  // false: elem_bytes 1, zstd on the bytes as they lie (the reference)
};

std::vector<Config> configs(const Args& a) {
  std::vector<Config> c;
  c.push_back({"none", SpillCodecKind::kNone, {}, true});
  for (int level : {-1, 1, 3}) {
    SpillCodecOptions o;
    o.level = level;
    c.push_back({"zstd_planes_l" + std::to_string(level), SpillCodecKind::kZstd, o, true});
  }
  SpillCodecOptions seg;
  seg.frame_per_plane = false;
  c.push_back({"zstd_segment_l1", SpillCodecKind::kZstd, seg, true});
  c.push_back({"zstd_no_planes_l1", SpillCodecKind::kZstd, {}, false});
  for (int level : {1, 5}) {
    SpillCodecOptions o;
    o.level = level;
    c.push_back({"blosc_zstd_c" + std::to_string(level), SpillCodecKind::kBlosc, o, true});
  }
  SpillCodecOptions lz4;
  lz4.level = 5;
  lz4.blosc_compressor = "lz4";
  c.push_back({"blosc_lz4_c5", SpillCodecKind::kBlosc, lz4, true});
  if (a.segment_kib > 0) {
    for (Config& x : c) x.options.segment_bytes = size_t(a.segment_kib) << 10;
  }
  return c;
}

// Encodes and decodes every buffer with `cfg` on pools of each thread count.
Json measure(const Args& a, const Config& cfg, const std::vector<std::vector<uint8_t>>& buffers,
             size_t elem_bytes) {
  const size_t e = cfg.planes ? elem_bytes : 1;
  size_t raw = 0, encoded = 0;
  for (const auto& b : buffers) raw += b.size();
  std::vector<std::vector<uint8_t>> frames(buffers.size());
  std::vector<uint8_t> back;
  bool equal = true;
  Json by_threads = Json::array();
  for (int64_t t : a.codec_threads) {
    cache::SpillCodecPool pool{int(t)};
    std::vector<double> enc_s, dec_s;
    for (int64_t r = 0; r < a.repeats; ++r) {
      int64_t t0 = core::now_ns();
      for (size_t i = 0; i < buffers.size(); ++i) {
        const core::Status s = cache::spill_encode(cfg.kind, buffers[i].data(), buffers[i].size(),
                                                   e, frames[i], cfg.options, &pool);
        if (!s.is_ok()) return {{"error", s.to_string()}};
      }
      enc_s.push_back(double(core::now_ns() - t0) * 1e-9);
      t0 = core::now_ns();
      int64_t dec_ns = 0;
      for (size_t i = 0; i < buffers.size(); ++i) {
        back.resize(buffers[i].size());
        t0 = core::now_ns();
        const core::Status s = cache::spill_decode(cfg.kind, frames[i].data(), frames[i].size(),
                                                   back.data(), back.size(), e, &pool);
        dec_ns += core::now_ns() - t0;
        if (!s.is_ok()) return {{"error", s.to_string()}};
        equal = equal && std::memcmp(back.data(), buffers[i].data(), back.size()) == 0;
      }
      dec_s.push_back(double(dec_ns) * 1e-9);
    }
    const double es = median(enc_s), ds = median(dec_s);
    by_threads.push_back({{"threads", t},
                          {"compress_gb_per_s", double(raw) / es * 1e-9},
                          {"decompress_gb_per_s", double(raw) / ds * 1e-9}});
  }
  for (const auto& f : frames) encoded += f.size();
  Json opts = {{"level", cfg.options.level},
               {"segment_bytes", cfg.options.segment_bytes},
               {"elem_bytes", e}};
  if (cfg.kind == SpillCodecKind::kZstd) opts["frame_per_plane"] = cfg.options.frame_per_plane;
  if (cfg.kind == SpillCodecKind::kBlosc) opts["compressor"] = cfg.options.blosc_compressor;
  return {
      {"codec", cfg.name},         {"kind", cache::spill_codec_name(cfg.kind)},
      {"options", opts},           {"raw_bytes", raw},
      {"encoded_bytes", encoded},  {"ratio", double(raw) / double(std::max<size_t>(encoded, 1))},
      {"round_trip_equal", equal}, {"by_threads", by_threads}};
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      return c == std::string::npos ? line : line.substr(c + 2);
    }
  }
  return "";
}

// The engine's state after a real prefill, as the spill would cut it.
Json run_kv(const Args& a, core::DType kv) {
  auto cfg = model::qwen35::qwen35_preset(a.preset);
  if (!cfg) return {{"error", cfg.error().to_string()}};
  auto arch = model::qwen35::make_random_qwen35(*cfg, a.seed, {core::DType::kF32, kv});
  if (!arch) return {{"error", arch.error().to_string()}};
  engine::EngineOptions eo;
  eo.capacity = (a.tokens + kBlockRows - 1) / kBlockRows * kBlockRows;
  eo.n_threads = int(a.threads);
  auto created = engine::Engine::create(std::move(arch.value()), eo);
  if (!created) return {{"error", created.error().to_string()}};
  engine::Engine& engine = *created.value();
  core::Rng rng(a.seed * 31 + 7);
  std::vector<int32_t> prompt(size_t(a.tokens));
  for (int32_t& t : prompt) t = int32_t(rng.next_u64() % uint64_t(engine.vocab_size()));
  const int64_t t0 = core::now_ns();
  if (core::Status s = engine.prefill(prompt); !s.is_ok()) return {{"error", s.to_string()}};
  const double prefill_s = double(core::now_ns() - t0) * 1e-9;

  const core::StateLayout& layout = engine.layout();
  std::vector<std::vector<uint8_t>> blocks;
  for (int64_t b = 0; b < a.tokens; b += kBlockRows) {
    const int64_t end = std::min(a.tokens, b + kBlockRows);
    std::vector<uint8_t> block(size_t((end - b) * layout.bytes_per_token()));
    size_t at = 0;
    for (size_t i = 0; i < layout.views.size(); ++i) {
      const core::TensorSpec& spec = layout.views[i];
      core::copy_rows_out(spec, engine.view_data(i), b, end, block.data() + at);
      at += size_t((end - b) * spec.bytes_per_token());
    }
    blocks.push_back(std::move(block));
  }
  std::vector<std::vector<uint8_t>> state(1);
  for (size_t i = 0; i < layout.sections.size(); ++i) {
    const auto* p = static_cast<const uint8_t*>(engine.section_data(i));
    state[0].insert(state[0].end(), p, p + layout.sections[i].bytes());
  }
  Json rows = Json::array(), sections = Json::array();
  for (const Config& c : configs(a)) {
    rows.push_back(measure(a, c, blocks, size_t(core::dtype_size(kv))));
    std::fprintf(stderr, "codec_bench: %s rows %s\n", std::string(core::dtype_name(kv)).c_str(),
                 rows.back().dump().c_str());
    // The recurrent state is f32 whatever the KV type: measured once, with the f32 run.
    if (kv == core::DType::kF32) sections.push_back(measure(a, c, state, 4));
  }
  Json out = {{"kv_dtype", std::string(core::dtype_name(kv))},
              {"prefill_tokens", a.tokens},
              {"prefill_s", prefill_s},
              {"bytes_per_token", layout.bytes_per_token()},
              {"blocks", blocks.size()},
              {"block_rows", kBlockRows},
              {"rows", rows}};
  if (!sections.empty()) {
    out["state_bytes"] = state[0].size();
    out["state"] = sections;
  }
  return out;
}

bool check(const Args& a, const Json& d) {
  bool ok = true;
  auto need = [&](bool c, const std::string& what) {
    if (!c) std::fprintf(stderr, "codec_bench --check: %s\n", what.c_str());
    ok = ok && c;
  };
  need(d["runs"].is_array() && !d["runs"].empty(), "runs");
  for (const Json& run : d["runs"]) {
    need(!run.contains("error"), "run without error");
    need(run.contains("rows") && run["rows"].size() == configs(a).size(), "every codec's rows");
    for (const char* part : {"rows", "state"}) {
      if (!run.contains(part)) continue;
      for (const Json& c : run[part]) {
        need(!c.contains("error"), std::string(part) + ": " + c.dump());
        need(c.value("round_trip_equal", false), std::string(part) + ": round trip equal");
        need(c.value("ratio", 0.0) > 0, std::string(part) + ": ratio");
        need(c.contains("by_threads") && !c["by_threads"].empty(), "by_threads");
      }
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: codec_bench [--preset small] [--tokens 4096] [--kv f32,bf16] "
                 "[--codec-threads 1,2] [--repeats 3] [--threads 0] [--segment-kib N] [--seed 1] "
                 "[--quick] "
                 "[--check]\n");
    return 2;
  }
  core::set_log_level(core::LogLevel::kWarn);
  const std::string load_start = loadavg();
  const int64_t t0 = core::now_ns();
  Json runs = Json::array();
  for (core::DType kv : a.kv) runs.push_back(run_kv(a, kv));
  Json doc = {{"benchmark", "codec"},
              {"preset", a.preset},
              {"quick", a.quick},
              {"cpu", cpu_model()},
              {"repeats", a.repeats},
              {"loadavg_start", load_start},
              {"loadavg_end", loadavg()},
              {"run_s", double(core::now_ns() - t0) * 1e-9},
              {"runs", runs}};
  std::printf("%s\n", doc.dump(2).c_str());
  return a.check && !check(a, doc) ? 1 : 0;
}
