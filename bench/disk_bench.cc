// disk_bench: the disk tier's figures (docs/performance.md "Disk tier", issue 10 §5), in one
// run, on one directory. Prints ONE JSON document on stdout.
//
//   raw   the machine's own sequential write and read rates on the directory through
//         core::PosixFs (O_DIRECT where the file system allows it; `direct_io` says whether
//         it did): one file of --raw-mib MiB in --block-mib MiB appends (then fsync), then
//         read back in blocks of the same size into a 4 KiB-aligned buffer.
//   tier  DiskTier on its own, driven as the server drives it: a session's first long request
//         (random token ids, a head of the first context's length and a short user message)
//         is prefilled with the admission's lines; the writer's files are waited for
//         (flush()); then a new tier over the same directory (a restart) restores the deepest
//         head anchor into the engine, --repeats times. Restore GB/s = read_bytes (the tier's
//         own count, checksums and token-id checks included) over the restore's wall time;
//         write GB/s = bytes_written over the writer's time from the end of the prefill to
//         flush(). The restore's logits after the rest of the prompt are compared with the
//         cold prefill's (memcmp): a wrong answer shows as `logits_equal_cold: false`.
//   http  time to first token of a new session whose head is on disk against cold, through
//         the real HTTP path: a server over the directory serves a session's first long
//         request (x-session-id) for each context (cold; its disk tier writes the head), is
//         stopped (its writer is waited for), and a new server over the same directory (a
//         restart) serves a new session with the same head and a new user message. The
//         usage's cache.source of that request must be `disk`.
//   spill the session spill (issue 11 §6), per context: a conversation's save (pipelined and
//         in turn) and its restore after a restart, in GB/s of its rows in RAM and of its files
//         against the raw rates above; the next turn's time to first token in process, cold
//         against from the spill (measure_spill).
//
// The machine is shared (2 cores, other jobs): compare figures within one run, as ratios.
//
// Flags: --dir DIR (default: $XDG_CACHE_HOME/anchorage-disk-bench, else
//        ~/.cache/anchorage-disk-bench, emptied of the bench's files before and after; not /tmp,
//        which may be tmpfs: no disk)  --preset small  --contexts 8192,32768  --raw-mib 1024
//        --block-mib 16  --repeats 5  --threads 0 (all)  --seed 1  --keep (leave the files)
//        --parts tier,http,spill (which parts run besides raw; all by default)
//        --spill-codec zstd|blosc|none (the spill part's codec; zstd, the server's default)
//        --quick (tiny preset, a 2k head: ~3.4k rendered over HTTP, the tools' floor; 128 MiB
//        raw; admission from 1,024 tokens)
//        --check (exit 1 unless the document has its parts and every disk request's source is
//        `disk`; no wall-clock thresholds).

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_support.h"
#include "cache/disk_tier.h"
#include "cache/session_spill.h"
#include "cache/state_copy.h"
#include "core/aligned_buffer.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/posix_fs.h"
#include "core/rng.h"
#include "engine/engine.h"
#include "server/disk_tier_setup.h"
#include "server/engine_caches.h"
#include "server/served_model.h"
#include "server/server_options.h"

namespace {

using namespace anchorage;
using bench::Json;
using bench::loadavg;
using bench::parse_i64;

struct Args {
  std::string dir;
  std::string preset = "small";
  std::vector<int64_t> contexts = {8192, 32768};
  int64_t raw_mib = 1024;
  int64_t block_mib = 16;
  int64_t repeats = 5;
  int64_t threads = 0;
  uint64_t seed = 1;
  bool quick = false;
  bool check = false;
  bool keep = false;
  std::string parts = "tier,http,spill";  // raw always runs: the others' ratios need it
  cache::SpillCodecKind spill_codec = cache::SpillCodecKind::kZstd;
  bool part(std::string_view p) const { return parts.find(p) != std::string::npos; }
};

bool parse_args(int argc, char** argv, Args* a) {
  bool contexts_set = false, preset_set = false, raw_set = false;
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
    if (f == "--keep") {
      a->keep = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    int64_t n = 0;
    if (f == "--dir") {
      a->dir = std::string(v);
    } else if (f == "--parts") {
      a->parts = std::string(v);
    } else if (f == "--spill-codec") {
      auto kind = cache::parse_spill_codec(v);
      if (!kind) return false;
      a->spill_codec = *kind;
    } else if (f == "--preset") {
      a->preset = std::string(v);
      preset_set = true;
    } else if (f == "--contexts") {
      a->contexts.clear();
      while (!v.empty()) {
        const size_t c = v.find(',');
        if (!parse_i64(v.substr(0, c), &n) || n < 256) return false;
        a->contexts.push_back(n);
        v = c == std::string_view::npos ? std::string_view() : v.substr(c + 1);
      }
      if (a->contexts.empty()) return false;
      contexts_set = true;
    } else if (parse_i64(v, &n) && n >= 0) {
      if (f == "--raw-mib") {
        a->raw_mib = std::max<int64_t>(n, 1);
        raw_set = true;
      } else if (f == "--block-mib") {
        a->block_mib = std::max<int64_t>(n, 1);
      } else if (f == "--repeats") {
        a->repeats = std::max<int64_t>(n, 1);
      } else if (f == "--threads") {
        a->threads = n;
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
    if (!contexts_set) a->contexts = {2048};
    if (!raw_set) a->raw_mib = 128;
  }
  return true;
}

double seconds_since(int64_t t0_ns) {
  return double(core::now_ns() - t0_ns) * 1e-9;
}

// The file system that holds `path`: the longest mount point of /proc/self/mounts above it.
Json file_system_of(const std::string& path) {
  std::ifstream in("/proc/self/mounts");
  std::string dev, mnt, type, rest, best_mnt, best_type, best_dev;
  while (in >> dev >> mnt >> type && std::getline(in, rest)) {
    const bool above = path.rfind(mnt, 0) == 0 &&
                       (mnt == "/" || path.size() == mnt.size() || path[mnt.size()] == '/');
    if (above && mnt.size() >= best_mnt.size()) {
      best_mnt = mnt;
      best_type = type;
      best_dev = dev;
    }
  }
  return {{"type", best_type}, {"mount", best_mnt}, {"device", best_dev}};
}

// Deletes the regular files of the bench's directories (never anything else).
void remove_files(core::Fs& fs, const std::string& dir) {
  auto names = fs.list(dir);
  if (!names) return;
  for (const std::string& n : *names) (void)fs.remove(core::path_join(dir, n));
}

// --- raw: the directory's own sequential rates -------------------------------------------

Json measure_raw(const Args& a, const std::string& dir) {
  core::PosixFs fs;
  const std::string path = core::path_join(dir, "raw.bin");
  const size_t block = size_t(a.block_mib) << 20;
  const int64_t blocks = std::max<int64_t>(a.raw_mib / a.block_mib, 1);
  core::AlignedBuffer buf(block);
  core::Rng rng(a.seed);
  // Random bytes: a file system or device that compresses must not flatter the figure.
  for (size_t i = 0; i < block / 8; ++i) buf.as<uint64_t>()[i] = rng.next_u64();
  const std::span<const std::byte> bytes(buf.as<std::byte>(), block);

  Json out;
  auto file = fs.create(path);
  if (!file) return {{"error", file.error().to_string()}};
  int64_t t0 = core::now_ns();
  for (int64_t i = 0; i < blocks; ++i) {
    if (core::Status s = (*file)->append(bytes); !s.is_ok()) return {{"error", s.to_string()}};
  }
  if (core::Status s = (*file)->sync(); !s.is_ok()) return {{"error", s.to_string()}};
  const double write_s = seconds_since(t0);
  (void)(*file)->close();
  const double total = double(block) * double(blocks);

  auto rd = fs.open_read(path);
  if (!rd) return {{"error", rd.error().to_string()}};
  const std::span<std::byte> dst(buf.as<std::byte>(), block);
  t0 = core::now_ns();
  uint64_t off = 0;
  while (off < (*rd)->size()) {
    auto got = (*rd)->read_at(off, dst);
    if (!got || *got == 0) return {{"error", "raw read failed"}};
    off += *got;
  }
  const double read_s = seconds_since(t0);
  rd->reset();
  (void)fs.remove(path);
  out = {{"bytes", int64_t(total)},
         {"block_bytes", int64_t(block)},
         {"direct_io", fs.direct_opens() > 0 && fs.buffered_opens() == 0},
         {"direct_opens", fs.direct_opens()},
         {"buffered_opens", fs.buffered_opens()},
         {"write_s", write_s},
         {"read_s", read_s},
         {"write_gb_per_s", total / write_s * 1e-9},
         {"read_gb_per_s", total / read_s * 1e-9}};
  return out;
}

// Every file of a directory read plainly (PosixFs, one aligned read per file, in the order
// the directory lists them): what a restore's reads of the same files cost without its checks,
// decoding and copies, opens and small files included. The drive's rate at the files' own
// sizes, which the raw rate's 16 MiB reads flatter.
struct PlainRead {
  int64_t bytes = 0;
  double s = 0;
  double gb_per_s() const { return s > 0 ? double(bytes) / s * 1e-9 : 0.0; }
};
PlainRead plain_read_dir(core::PosixFs& fs, const std::string& dir) {
  PlainRead out;
  auto names = fs.list(dir);
  if (!names) return out;
  for (const std::string& name : *names) {
    auto size = fs.file_size(core::path_join(dir, name));
    if (!size || *size == 0) continue;
    core::AlignedBuffer buf((size_t(*size) + 4095) / 4096 * 4096);
    const int64_t t0 = core::now_ns();
    auto rd = fs.open_read(core::path_join(dir, name));
    if (!rd) continue;
    auto got = (*rd)->read_at(0, std::span<std::byte>(buf.as<std::byte>(), buf.size()));
    out.s += seconds_since(t0);
    if (got) out.bytes += int64_t(*got);
  }
  return out;
}

// --- spill: the session spill's save and restore, and a next turn after a restart ---------

// One conversation of `ctx` random tokens prefilled and saved to a SessionSpill over `root`
// (the tier admits nothing) --repeats times each way, alternating: with each block compressed
// and written in turn, and pipelined (block i + 1 compressed while block i is written); then a
// restart (a new spill over the directory) restores it --repeats times. The rows' GB/s count
// the conversation's bytes in RAM (every view's rows and the sections), the files' GB/s what
// went to the disk (compressed). The next turn's time to its first token, in process (engine
// and spill, no HTTP): cold = prefill of the whole next prompt; spill = restore + prefill of
// the new tokens; their logits compared with memcmp.
Json measure_spill(const Args& a, server::ServedModel& model, const std::string& root,
                   int64_t ctx) {
  engine::Engine& engine = *model.engine;
  server::CacheOptions co;
  co.disk_root = root;
  co.disk.admission.min_tokens = int64_t(1) << 40;  // the spill alone
  co.disk.min_free_bytes = 0;
  co.write_guard.budget_bytes = int64_t(1) << 50;  // a bench's writes are no day's budget
  co.spill_options.codec = a.spill_codec;
  core::PosixFs fs;
  core::Rng rng(a.seed * 131 + uint64_t(ctx));
  std::vector<int32_t> conv(size_t(ctx), 0);
  for (int32_t& t : conv) t = int32_t(rng.next_u64() % uint64_t(engine.vocab_size()));
  std::vector<int32_t> next = conv;  // the next turn: 64 new tokens
  for (int i = 0; i < 64; ++i)
    next.push_back(int32_t(rng.next_u64() % uint64_t(engine.vocab_size())));
  int64_t row_bytes = 0, section_bytes = 0;
  for (const core::TensorSpec& v : engine.layout().views) row_bytes += v.bytes_per_token();
  for (const core::TensorSpec& sec : engine.layout().sections) section_bytes += sec.bytes();
  const double rows_total = double(ctx * row_bytes + section_bytes);

  engine.reset();
  int64_t t0 = core::now_ns();
  if (core::Status s = engine.prefill(conv); !s.is_ok()) return {{"error", s.to_string()}};
  const double prefill_s = seconds_since(t0);
  const cache::SectionCopy end = cache::SectionCopy::capture(engine);
  cache::SpillConversation c;
  c.tokens = conv;
  c.session = "spill-bench";
  c.end = &end;
  // The two ways alternate, --repeats times each (the machine is shared: medians).
  std::map<bool, std::vector<double>> save_s;
  int64_t file_bytes = 0;
  for (int64_t r = 0; r < a.repeats; ++r) {
    for (const bool pipelined : {false, true}) {
      co.spill_options.pipelined_writes = pipelined;
      auto tiers = server::open_disk_tier(fs, co, model);
      if (!tiers || !tiers->spill) return {{"error", "no spill"}};
      tiers->spill->clear();  // the last save's files: every block is written again
      t0 = core::now_ns();
      if (core::Status s = tiers->spill->save(engine, c, cache::SpillWrite::kDrain); !s.is_ok())
        return {{"error", "save: " + s.to_string()}};
      save_s[pipelined].push_back(seconds_since(t0));
      file_bytes = tiers->spill->stats().bytes_written;
    }
  }
  Json saves = Json::object();
  for (const bool pipelined : {false, true}) {
    std::vector<double>& v = save_s[pipelined];
    std::sort(v.begin(), v.end());
    const double med = v[v.size() / 2];
    saves[pipelined ? "pipelined" : "in_turn"] = {
        {"s_median", med},
        {"s_runs", v},
        {"rows_gb_per_s", rows_total / med * 1e-9},
        {"file_gb_per_s", double(file_bytes) / med * 1e-9}};
  }
  saves["pipelined_over_in_turn"] =
      saves["in_turn"]["s_median"].get<double>() / saves["pipelined"]["s_median"].get<double>();

  // The next turn cold.
  engine.reset();
  t0 = core::now_ns();
  if (core::Status s = engine.prefill(next); !s.is_ok()) return {{"error", s.to_string()}};
  const double cold_s = seconds_since(t0);
  const std::vector<float> cold_logits(engine.logits().begin(), engine.logits().end());

  // A restart: a new spill over the directory.
  auto tiers = server::open_disk_tier(fs, co, model);
  if (!tiers || !tiers->spill) return {{"error", "no spill after the restart"}};
  const cache::ResumeOffer offer = tiers->spill->offer(next, "spill-bench");
  if (offer.source != cache::ResumeSource::kSpill || offer.resume_at != ctx)
    return {{"error", "no spill offer at the conversation's end after the restart"}};
  std::vector<double> restore_s, ttft_s;
  bool equal = true;
  int64_t read_bytes = 0;
  for (int64_t r = 0; r < a.repeats; ++r) {
    const int64_t before = tiers->spill->stats().read_bytes;
    engine.reset();
    t0 = core::now_ns();
    if (core::Status s = tiers->spill->restore(engine, next, offer, 0); !s.is_ok())
      return {{"error", "restore: " + s.to_string()}};
    restore_s.push_back(seconds_since(t0));
    if (core::Status s = engine.prefill(std::span<const int32_t>(next).subspan(size_t(ctx)));
        !s.is_ok())
      return {{"error", s.to_string()}};
    ttft_s.push_back(seconds_since(t0));
    read_bytes = tiers->spill->stats().read_bytes - before;
    const std::span<const float> l = engine.logits();
    equal = equal && l.size() == cold_logits.size() &&
            std::memcmp(l.data(), cold_logits.data(), l.size() * sizeof(float)) == 0;
  }
  std::sort(restore_s.begin(), restore_s.end());
  std::sort(ttft_s.begin(), ttft_s.end());
  const PlainRead plain = plain_read_dir(fs, core::path_join(root, "sessions"));
  const double rs = restore_s[restore_s.size() / 2];
  const double ts = ttft_s[ttft_s.size() / 2];
  return {{"tokens", ctx},
          {"rows_bytes", int64_t(rows_total)},
          {"file_bytes", file_bytes},
          {"codec", std::string(cache::spill_codec_name(a.spill_codec))},
          {"codec_ratio", rows_total / double(std::max<int64_t>(file_bytes, 1))},
          {"prefill_s", prefill_s},
          {"save", saves},
          {"restore_s_median", rs},
          {"restore_rows_gb_per_s", rows_total / rs * 1e-9},
          {"restore_file_gb_per_s", double(read_bytes) / rs * 1e-9},
          {"same_files_plain_read_bytes", plain.bytes},
          {"same_files_plain_read_gb_per_s", plain.gb_per_s()},
          {"restore_file_over_same_files_read",
           plain.gb_per_s() > 0 ? double(read_bytes) / rs * 1e-9 / plain.gb_per_s() : 0.0},
          {"next_turn_cold_s", cold_s},
          {"next_turn_from_spill_s", ts},
          {"cold_over_spill", cold_s / ts},
          {"logits_equal_cold", equal}};
}

// --- tier: DiskTier's own write and restore -------------------------------------------------

Json measure_tier(const Args& a, server::ServedModel& model, const std::string& root,
                  int64_t head_tokens) {
  engine::Engine& engine = *model.engine;
  server::CacheOptions co;
  co.disk_root = root;
  if (a.quick) co.disk.admission.min_tokens = 1024;
  co.spill = false;  // the tier alone: the spill has its own figures
  core::PosixFs fs;

  // Random ids: the tier and the engine care about positions and bits, not meaning.
  core::Rng rng(a.seed * 31 + 7);
  const int64_t n = head_tokens + 64;  // the head, then a short "user message"
  std::vector<int32_t> prompt(size_t(n), 0);
  for (int32_t& t : prompt) t = int32_t(rng.next_u64() % uint64_t(engine.vocab_size()));

  auto writer = server::open_disk_tier(fs, co, model);
  if (!writer) return {{"error", writer.error().to_string()}};
  cache::DiskWriteRequest req;
  req.prompt = prompt;
  req.session = "disk-bench-writer";
  req.head_end = head_tokens;
  engine::PrefillOptions po;
  po.extra_lines = writer->tier->plan_writes(req);
  if (po.extra_lines.empty()) return {{"error", "admission planned no lines"}};
  int64_t prefill_end_ns = 0;
  po.on_anchor = [&](int64_t position, bool is_end) {
    if (!is_end) writer->tier->on_line(engine, position);
    if (is_end) {
      writer->tier->after_prefill(engine);
      prefill_end_ns = core::now_ns();
    }
  };
  engine.reset();
  const int64_t t_prefill = core::now_ns();
  if (core::Status s = engine.prefill(prompt, po); !s.is_ok()) return {{"error", s.to_string()}};
  const double prefill_s = seconds_since(t_prefill);
  if (prefill_end_ns == 0) prefill_end_ns = core::now_ns();
  writer->tier->flush();
  const double write_s = seconds_since(prefill_end_ns);
  const std::vector<float> cold_logits(engine.logits().begin(), engine.logits().end());
  const cache::DiskTierStats ws = writer->tier->stats();
  writer->tier.reset();  // the old process ends

  // A restart: a new tier over the same directory, a new session with the same head.
  auto reader = server::open_disk_tier(fs, co, model);
  if (!reader) return {{"error", reader.error().to_string()}};
  const cache::ResumeOffer offer = reader->tier->offer(prompt, "disk-bench-reader");
  if (offer.source != cache::ResumeSource::kDisk || offer.resume_at <= 0)
    return {{"error", "no disk offer after the restart"}};
  Json restores = Json::array();
  std::vector<double> rates;
  int64_t read_bytes = 0;
  for (int64_t r = 0; r < a.repeats; ++r) {
    const int64_t before = reader->tier->stats().read_bytes;
    reader->tier->fence(0);
    engine.reset();
    const int64_t t0 = core::now_ns();
    if (core::Status s = reader->tier->restore(engine, prompt, offer, 0); !s.is_ok())
      return {{"error", "restore: " + s.to_string()}};
    const double s_taken = seconds_since(t0);
    read_bytes = reader->tier->stats().read_bytes - before;
    rates.push_back(double(read_bytes) / s_taken * 1e-9);
    restores.push_back({{"s", s_taken}, {"gb_per_s", rates.back()}});
  }
  const PlainRead plain = plain_read_dir(fs, core::path_join(root, "disk"));
  // The restored state must answer as the cold prefill did (bit for bit).
  bool equal = false;
  if (core::Status s =
          engine.prefill(std::span<const int32_t>(prompt).subspan(size_t(offer.resume_at)));
      s.is_ok()) {
    const std::span<const float> l = engine.logits();
    equal = l.size() == cold_logits.size() &&
            std::memcmp(l.data(), cold_logits.data(), l.size() * sizeof(float)) == 0;
  }
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const cache::DiskTierStats rs = reader->tier->stats();
  return {
      {"prompt_tokens", n},
      {"head_tokens", head_tokens},
      {"lines_planned", po.extra_lines},
      {"prefill_s", prefill_s},
      {"files_written", ws.files_written},
      {"bytes_written", ws.bytes_written},
      {"write_s", write_s},
      {"write_gb_per_s", write_s > 0 ? double(ws.bytes_written) / write_s * 1e-9 : 0.0},
      {"tier_write_mb_per_s", ws.write_mb_per_s},
      {"restored_tokens", offer.resume_at},
      {"read_bytes", read_bytes},
      {"restores", restores},
      {"restore_gb_per_s_median", sorted[sorted.size() / 2]},
      {"tier_read_mb_per_s", rs.read_mb_per_s},
      {"same_files_plain_read_bytes", plain.bytes},
      {"same_files_plain_read_gb_per_s", plain.gb_per_s()},
      {"logits_equal_cold", equal}};
}

// --- http: time to first token, disk against cold -------------------------------------------

struct Head {
  Json system;
  Json tools;
};

// An agent's head (system prompt and tools, bench_support's shape) of about `tokens` tokens:
// the default head is ~8k; the system prompt grows or shrinks to the target by the tokenizer's
// own count.
Head make_head(const Args& a, const text::Tokenizer& tok, int64_t tokens, uint64_t seed) {
  auto build = [&](int64_t system_words, int64_t big, int64_t small) {
    bench::Filler f(seed);
    bench::AgentHead h = bench::make_agent_head(f, system_words, big, small);
    return Head{{{"role", "system"}, {"content", std::move(h.system_text)}}, std::move(h.tools)};
  };
  const int64_t big = a.quick ? 60 : 700, small = a.quick ? 20 : 160;
  const int64_t base_words = a.quick ? 200 : 1500;
  const Head h = build(base_words, big, small);
  const std::string& sys = h.system["content"].get_ref<const std::string&>();
  const int64_t sys_tokens = int64_t(tok.encode(sys).size());
  const int64_t have = sys_tokens + int64_t(tok.encode(h.tools.dump()).size());
  const double words_per_token = double(base_words) / double(std::max<int64_t>(sys_tokens, 1));
  const int64_t words =
      std::max<int64_t>(50, int64_t(double(base_words) + double(tokens - have) * words_per_token));
  return build(words, big, small);
}

struct Reply {
  bool ok = false;
  Json row;
};

Reply post_chat(server::HttpClient& c, const std::string& model_name, const Head& head,
                const Json& user, const std::string& session) {
  const Json body = {{"model", model_name},
                     {"messages", Json::array({head.system, user})},
                     {"tools", head.tools},
                     {"max_tokens", 4},
                     {"temperature", 0}};
  const server::HttpHeaders headers = {{"x-session-id", session}};
  const int64_t t0 = core::now_ns();
  auto r = c.Post("/v1/chat/completions", headers, body.dump(), "application/json");
  const double wall_ms = double(core::now_ns() - t0) * 1e-6;
  Reply out;
  if (!r || r->status != 200) {
    std::fprintf(stderr, "disk_bench: POST failed: %s\n",
                 r ? r->body.substr(0, 300).c_str() : r.error().c_str());
    return out;
  }
  const Json j = Json::parse(r->body, nullptr, false);
  if (!j.is_object()) return out;
  const Json& u = j["usage"];
  const Json& cache = u["anchorage"]["cache"];
  out.row = {{"prompt_tokens", u["prompt_tokens"]},
             {"cached_tokens", u["prompt_tokens_details"]["cached_tokens"]},
             {"tier", cache["tier"]},
             {"source", cache["source"]},
             {"exact", cache["exact"]},
             {"first_token_ms", u["anchorage"]["timings"]["first_token_ms"]},
             {"prefill_ms", u["anchorage"]["timings"]["prefill_ms"]},
             {"wall_ms", wall_ms}};
  out.ok = true;
  return out;
}

Json disk_stats(server::HttpClient& c) {
  auto r = c.Get("/v1/cache/stats");
  const Json s = r ? Json::parse(r->body, nullptr, false) : Json();
  return s.is_object() && s.contains("disk") ? s["disk"] : Json();
}

Json measure_http(const Args& a, server::ServedModel& model, const std::string& root) {
  server::ServerOptions so;
  so.host = "127.0.0.1";
  so.port = 0;
  so.model_name = "anchorage-" + a.preset;
  so.cache.disk_root = root;
  so.cache.spill = false;  // the tier alone: a drained conversation would be in place
  if (a.quick) so.cache.disk.admission.min_tokens = 1024;

  std::vector<Head> heads;
  for (size_t i = 0; i < a.contexts.size(); ++i)
    heads.push_back(make_head(a, *model.tokenizer, a.contexts[i], a.seed * 1000 + i));
  bench::Filler f(a.seed * 7 + 3);
  std::vector<Json> first_users, second_users;
  for (size_t i = 0; i < heads.size(); ++i) {
    first_users.push_back({{"role", "user"}, {"content", f.words(24)}});
    second_users.push_back({{"role", "user"}, {"content", f.words(28)}});
  }

  Json rows = Json::array();
  Json writer_stats, reader_stats;
  {
    bench::InProcessServer srv(so, model);
    if (core::Status s = srv.start(); !s.is_ok()) return {{"error", s.to_string()}};
    for (size_t i = 0; i < heads.size(); ++i) {
      Reply r = post_chat(srv.client(), so.model_name, heads[i], first_users[i],
                          "disk-bench-first-" + std::to_string(i));
      rows.push_back({{"context", a.contexts[i]}, {"cold", r.ok ? r.row : Json()}});
      std::fprintf(stderr, "disk_bench: cold %lld: %s\n", (long long)a.contexts[i],
                   r.row.dump().c_str());
    }
    // stop() ends the engine's caches, whose destructor waits for the disk writer.
    (void)srv.stop();
  }
  {
    bench::InProcessServer srv(so, model);  // a restart over the same directory
    if (core::Status s = srv.start(); !s.is_ok()) return {{"error", s.to_string()}};
    writer_stats = disk_stats(srv.client());  // what the first server left
    for (size_t i = 0; i < heads.size(); ++i) {
      Reply r = post_chat(srv.client(), so.model_name, heads[i], second_users[i],
                          "disk-bench-second-" + std::to_string(i));
      Json& row = rows[i];
      row["disk"] = r.ok ? r.row : Json();
      std::fprintf(stderr, "disk_bench: disk %lld: %s\n", (long long)a.contexts[i],
                   r.row.dump().c_str());
      if (r.ok && row["cold"].is_object()) {
        const double cold = row["cold"]["first_token_ms"].get<double>();
        const double disk = r.row["first_token_ms"].get<double>();
        row["disk_over_cold_ttft"] = cold > 0 ? disk / cold : 0.0;
        row["speedup"] = disk > 0 ? cold / disk : 0.0;
      }
    }
    reader_stats = disk_stats(srv.client());
    (void)srv.stop();
  }
  return {{"rows", rows}, {"disk_after_restart", writer_stats}, {"disk_at_end", reader_stats}};
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

// --check: the parts are there, nothing failed, every restart request came from the disk and
// the restore equals the cold prefill. No wall-clock thresholds (the machine is shared).
bool check(const Json& d) {
  bool ok = true;
  auto need = [&](bool c, const char* what) {
    if (!c) std::fprintf(stderr, "disk_bench --check: %s\n", what);
    ok = ok && c;
  };
  need(d["raw"].contains("read_gb_per_s") && d["raw"].contains("write_gb_per_s"), "raw rates");
  need(d["tier"].contains("restore_gb_per_s_median"), "tier restore rate");
  need(d["tier"].value("logits_equal_cold", false), "restored logits equal the cold prefill's");
  need(d["tier"].value("bytes_written", 0) > 0, "tier wrote bytes");
  need(d["http"].contains("rows") && !d["http"]["rows"].empty(), "http rows");
  for (const Json& r : d["spill"]) {
    need(r.contains("restore_rows_gb_per_s"), "spill restore rate");
    need(r.value("logits_equal_cold", false), "a next turn from the spill equals the cold one");
  }
  for (const Json& r : d["http"].value("rows", Json::array())) {
    need(r.contains("cold") && r["cold"].is_object(), "cold request answered");
    need(r.contains("disk") && r["disk"].is_object() && r["disk"].value("source", "") == "disk",
         "the restart's request came from the disk");
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: disk_bench [--dir DIR] [--preset small] [--contexts 8192,32768] "
                 "[--raw-mib 1024] [--block-mib 16] [--repeats 5] [--threads 0] [--seed 1] "
                 "[--spill-codec zstd] [--quick] [--check] [--keep]\n");
    return 2;
  }
  core::set_log_level(core::LogLevel::kWarn);
  core::PosixFs fs;
  if (a.dir.empty()) {
    std::string base;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] == '/')
      base = x;
    else if (const char* h = std::getenv("HOME"); h != nullptr && h[0] != '\0')
      base = core::path_join(h, ".cache");
    else
      base = ".";
    // One fixed directory (its files are removed before and after the run): the seam has no
    // rmdir, so a directory per run would leave empty ones behind.
    a.dir = core::path_join(base, "anchorage-disk-bench");
  }
  const std::string tier_root = core::path_join(a.dir, "tier");
  const std::string http_root = core::path_join(a.dir, "http");
  const std::string spill_root = core::path_join(a.dir, "spill");
  for (const std::string& d : {a.dir, tier_root, http_root, spill_root}) {
    if (core::Status s = fs.create_dir(d); !s.is_ok()) {
      std::fprintf(stderr, "disk_bench: %s\n", s.to_string().c_str());
      return 1;
    }
  }

  // A fresh start: no file of an earlier run (a --keep, a crash) may serve this one.
  for (const std::string& r : {tier_root, http_root, spill_root}) {
    for (const char* sub : {"disk", "sessions"}) remove_files(fs, core::path_join(r, sub));
    remove_files(fs, r);
  }
  remove_files(fs, a.dir);

  std::unique_ptr<server::ServedModel> loaded = bench::load_preset_model(
      "disk_bench", a.preset, a.seed,
      *std::max_element(a.contexts.begin(), a.contexts.end()) + 4096, a.threads,
      std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json");
  if (loaded == nullptr) return 1;
  server::ServedModel& model = *loaded;
  const std::string load_start = loadavg();
  const int64_t t0 = core::now_ns();

  Json raw = measure_raw(a, a.dir);
  std::fprintf(stderr, "disk_bench: raw %s\n", raw.dump().c_str());
  Json tier =
      a.part("tier") ? measure_tier(a, model, tier_root, a.contexts.front()) : Json::object();
  std::fprintf(stderr, "disk_bench: tier %s\n", tier.dump().c_str());
  if (tier.contains("restore_gb_per_s_median") && raw.contains("read_gb_per_s"))
    tier["restore_over_raw_read"] =
        tier["restore_gb_per_s_median"].get<double>() / raw["read_gb_per_s"].get<double>();
  if (tier.value("same_files_plain_read_gb_per_s", 0.0) > 0)
    tier["restore_over_same_files_read"] = tier["restore_gb_per_s_median"].get<double>() /
                                           tier["same_files_plain_read_gb_per_s"].get<double>();
  if (tier.contains("write_gb_per_s") && raw.contains("write_gb_per_s"))
    tier["write_over_raw_write"] =
        tier["write_gb_per_s"].get<double>() / raw["write_gb_per_s"].get<double>();
  Json http = a.part("http") ? measure_http(a, model, http_root) : Json::object();
  Json spill = Json::array();
  for (int64_t ctx : a.contexts) {
    if (!a.part("spill")) break;
    Json row = measure_spill(a, model, spill_root, ctx);
    if (row.contains("restore_rows_gb_per_s") && raw.contains("read_gb_per_s")) {
      const double raw_read = raw["read_gb_per_s"].get<double>();
      row["restore_rows_over_raw_read"] = row["restore_rows_gb_per_s"].get<double>() / raw_read;
      row["restore_file_over_raw_read"] = row["restore_file_gb_per_s"].get<double>() / raw_read;
      const double raw_write = raw["write_gb_per_s"].get<double>();
      for (const char* k : {"pipelined", "in_turn"})
        row["save"][k]["rows_over_raw_write"] =
            row["save"][k]["rows_gb_per_s"].get<double>() / raw_write;
    }
    std::fprintf(stderr, "disk_bench: spill %s\n", row.dump().c_str());
    spill.push_back(std::move(row));
  }

  Json doc = {{"benchmark", "disk"},
              {"preset", a.preset},
              {"quick", a.quick},
              {"dir", a.dir},
              {"file_system", file_system_of(a.dir)},
              {"cpu", cpu_model()},
              {"threads", model.engine->n_threads()},
              {"kv_bytes_per_token", model.engine->cost().bytes_per_token},
              {"state_section_bytes", model.engine->cost().section_bytes},
              {"loadavg_start", load_start},
              {"loadavg_end", loadavg()},
              {"run_s", seconds_since(t0)},
              {"raw", raw},
              {"tier", tier},
              {"http", http},
              {"spill", spill}};
  std::printf("%s\n", doc.dump(2).c_str());

  if (!a.keep) {
    for (const std::string& r : {tier_root, http_root, spill_root}) {
      for (const char* sub : {"disk", "sessions"}) remove_files(fs, core::path_join(r, sub));
      remove_files(fs, r);
    }
    remove_files(fs, a.dir);
  }
  return a.check && !check(doc) ? 1 : 0;
}
