#include "cli/serve_command.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <thread>

#include "cache/budget.h"
#include "cache/session_spill.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/log.h"
#include "core/machine_memory.h"
#include "server/api_keys.h"
#include "server/disk_tier_setup.h"
#include "server/http_server.h"
#include "server/routes.h"
#include "server/served_model.h"
#include "server/server_options.h"

#ifndef ANCHORAGE_DEFAULT_TOKENIZER_DIR
#define ANCHORAGE_DEFAULT_TOKENIZER_DIR "data/qwen3"
#endif

namespace anchorage::cli {
namespace {

const cache::ResidentOptions kResident{};
const cache::StateStoreOptions kStore{};
const cache::DiskTierOptions kDisk{};
double gib(int64_t bytes) {
  return double(bytes) / double(int64_t(1) << 30);
}

struct ServeArgs {
  std::string host = "127.0.0.1";
  int64_t port = 8080;
  ModelArgs model;
  int64_t ctx = 32768;
  int64_t threads = 0;
  int64_t queue = 8;
  int64_t max_body_bytes = int64_t(16) << 20;
  int64_t max_tokens = 4096;
  int64_t http_threads = 0;
  int64_t drain_s = 30;
  int64_t header_timeout_s = 10;
  int64_t idle_timeout_s = 60;
  std::string tokenizer_dir = ANCHORAGE_DEFAULT_TOKENIZER_DIR;
  std::string model_name;
  int64_t reasoning_budget = -1;
  std::string admin_token;
  std::vector<std::string> api_keys;
  std::string api_key_file;
  std::string cache_scope;  // "": tenant with keys, global without
  int64_t n_predict = -1;
  int64_t parallel = 1;
  // The caches (docs/cache.md): defaults are the option structs' own, sizes shown in GiB; the
  // memory limits 0 = derived from the machine (BudgetOptions::for_memory).
  bool no_cache = false;
  std::string journal;
  double journal_mb = double(server::JournalOptions{}.max_bytes) / double(1 << 20);
  std::string log_level = "info";
  std::string resume_policy{server::resume_policy_name(server::CacheOptions{}.resume_policy)};
  std::string compaction{server::compaction_mode_name(server::ServerOptions{}.compaction)};
  server::CompactionPrepareOptions compaction_prepare;
  std::string draft = server::ServerOptions{}.draft_lookup ? "lookup" : "off";
  int64_t draft_max = engine::LookupDrafterOptions{}.draft_max;
  int64_t draft_min_match = engine::LookupDrafterOptions{}.min_match;
  // The persistent suffix store (docs/suffix-store.md), in the cache directory's suffix/.
  double suffix_store_mb = double(cache::SuffixStoreOptions{}.cap_bytes) / double(1 << 20);
  std::string suffix_store_scope = "all";
  bool suffix_store_readonly = cache::SuffixStoreOptions{}.read_only;
  bool no_suffix_store = !server::ServerOptions{}.suffix_store;
  bool end_anchor = kResident.end_anchor;
  bool branch_anchors = kResident.branch_anchors;
  bool end_align = server::CacheOptions{}.end_align;
  int64_t anchor_spacing = kResident.anchor_spacing;
  double resident_gb = gib(kResident.anchor_bytes);
  int64_t resident_guest_max = kResident.guest_max_tokens;
  double resident_stash_gb = gib(kResident.stash_bytes);
  double resident_pin_gb = gib(kResident.pin_bytes);
  double resident_park_gb = gib(kResident.park_bytes);
  bool no_store = !server::CacheOptions{}.store;
  double cache_gb = gib(kStore.cache_bytes);
  double store_entry_gb = gib(kStore.entry_bytes);
  int64_t prefix_chunk = kStore.prefix_chunk;
  bool response_cache = server::CacheOptions{}.response_cache;
  double response_cache_mb = double(cache::ResponseCacheOptions{}.max_bytes) / double(1 << 20);
  // The disk tier (docs/disk-tier.md): "" = the default root, "off" = none.
  std::string disk_cache;
  double disk_budget_gb = gib(kDisk.budget_bytes);
  double disk_min_free_gb = gib(kDisk.min_free_bytes);
  double disk_ttl_days = double(kDisk.ttl_s) / 86400.0;
  int64_t disk_admit_after = kDisk.admission.admit_after;
  int64_t disk_head_anchors = kDisk.admission.head_anchors;
  int64_t disk_min_tokens = kDisk.admission.min_tokens;
  double disk_write_budget_gb = double(cache::WriteGuardOptions{}.budget_bytes) / 1e9;
  // The session spill (docs/session-spill.md), in the disk cache's sessions/ directory.
  double spill_gb = gib(cache::SessionSpillOptions{}.budget_bytes);
  int64_t spill_min_tokens = cache::SessionSpillOptions{}.min_tokens;
  int64_t spill_give_up_min_tokens = cache::SessionSpillOptions{}.give_up_min_tokens;
  std::string spill_codec = cache::spill_codec_name(cache::SessionSpillOptions{}.codec);
  double mem_ceiling_gib = 0.0;
  double mem_peak_gib = 0.0;
  double reserve_slack_gib = 0.0;
};

FlagSet make_flags(ServeArgs* a) {
  FlagSet f;
  f.add_string("host", &a->host, "address to listen on");
  f.add_int("port", &a->port, "TCP port (0 = any free port)");
  add_model_flags(&f, &a->model, /*chat_template=*/true);
  f.add_int("ctx", &a->ctx, "context capacity in tokens (prompt + generation)");
  f.add_int("threads", &a->threads, "engine threads, counting the engine thread (0 = all)");
  f.add_int("n-predict", &a->n_predict,
            "most tokens one request may generate; a larger max_tokens is clamped (-1: no cap)");
  f.add_int("parallel", &a->parallel, "requests decoded at once (only 1 for now)");
  f.add_string_list("api-key", &a->api_keys,
                    "a bearer key every route but /health accepts (repeatable; 401 without)");
  f.add_string("api-key-file", &a->api_key_file,
               "file of keys, one `key [tenant]` a line ('#' comments; empty: none)");
  f.add_string("cache-scope", &a->cache_scope,
               "tenant: no cache state is offered across tenants; global: shared (empty: tenant "
               "with keys, global without)");
  // llama-server's spellings, so its command lines work here unchanged.
  f.add_alias("model", "-m");
  f.add_alias("ctx", "-c");
  f.add_alias("ctx", "--ctx-size");
  f.add_alias("threads", "-t");
  f.add_alias("n-predict", "-n");
  f.add_alias("parallel", "-np");
  f.add_int("queue", &a->queue, "requests that may wait for the engine before a 429");
  f.add_int("max-body-bytes", &a->max_body_bytes, "largest request body (413 above)");
  f.add_int("max-tokens", &a->max_tokens, "max_tokens of a request that names none");
  f.add_int("http-threads", &a->http_threads,
            "HTTP worker threads, which run the handlers (0 = queue + 8)");
  f.add_int("header-timeout-s", &a->header_timeout_s,
            "seconds a request's headers may take from its first byte (then 408, closed)");
  f.add_int("idle-timeout-s", &a->idle_timeout_s,
            "seconds a keep-alive connection may wait for its next request");
  f.add_int(
      "drain-s", &a->drain_s,
      "on SIGTERM, seconds the running generation may finish before it is cut (0 = no bound)");
  f.add_string("tokenizer-dir", &a->tokenizer_dir, "directory holding the tokenizer.json");
  f.add_string("model-name", &a->model_name, "model id served (none: anchorage-<preset>)");
  f.add_int("reasoning-budget", &a->reasoning_budget,
            "reasoning tokens before the server closes <think> (-1: no limit)");
  f.add_string("admin-token", &a->admin_token,
               "bearer token POST /v1/cache/clear needs (empty: none)");
  f.add_bool("no-cache", &a->no_cache, "turn every cache tier off");
  f.add_string("journal", &a->journal,
               "append one JSON line per request to this file (counts, no text; empty: none)");
  f.add_double("journal-mb", &a->journal_mb, "MiB of the journal before it rotates to FILE.1");
  f.add_string("log-level", &a->log_level,
               "debug|info|warn|error (debug adds the caches' per-request steps)");
  f.add_string("resume-policy", &a->resume_policy,
               "exact: read the client's own tokens (answers equal --no-cache's); rows: serve "
               "the rows' tokens where the client's text matches them (fewer re-reads)");
  f.add_string("compaction", &a->compaction,
               "client: serve a compaction request as sent; continuation: serve opencode's "
               "compaction as the session's conversation plus one turn (not the client's "
               "prompt; reported as served: continuation)");
  f.add_bool("compaction-prepare", &a->compaction_prepare.enabled,
             "with --compaction continuation: write the summary of the conversation in place "
             "while the engine is idle, and answer its compaction from it (on|off)");
  f.add_double("compaction-idle-s", &a->compaction_prepare.idle_s,
               "seconds without a request before a summary is written ahead");
  f.add_int("compaction-min-tokens", &a->compaction_prepare.min_tokens,
            "the shortest conversation whose summary is written ahead");
  f.add_string("draft", &a->draft,
               "lookup: speculative decoding, drafting from the request's own context, then "
               "from the suffix store (the same tokens and logprobs, fewer forwards on "
               "repetitive output); off: plain decode");
  f.add_int("draft-max", &a->draft_max, "drafted tokens per verify block at most (adaptive)");
  f.add_int("draft-min-match", &a->draft_min_match,
            "shortest match of the last tokens that drafts anything");
  f.add_double("suffix-store-mb", &a->suffix_store_mb,
               "MiB of token ids the suffix store keeps (4 bytes a token); over it the oldest "
               "half is forgotten");
  f.add_string("suffix-store-scope", &a->suffix_store_scope,
               "all: the store keeps prompts and outputs; outputs: what the model wrote only");
  f.add_bool("suffix-store-readonly", &a->suffix_store_readonly,
             "draft from the suffix store but add nothing to it (benchmarks)");
  f.add_bool("no-suffix-store", &a->no_suffix_store,
             "no suffix store (in the cache directory's suffix/; needs the disk cache's "
             "directory)");
  f.add_bool("end-anchor", &a->end_anchor, "keep the end anchor after a generation (on|off)");
  f.add_bool("end-align", &a->end_align,
             "rows policy: align a client's copy with the rows by text at the end anchor "
             "(on|off)");
  f.add_bool("branch-anchors", &a->branch_anchors,
             "anchors where a prompt parted from the rows, where its last user message starts "
             "and one token before its end (on|off)");
  f.add_int("anchor-spacing", &a->anchor_spacing, "tokens between body anchors of a prefill");
  f.add_double("resident-gb", &a->resident_gb, "GiB of body anchors of the resident prefix");
  f.add_int("resident-guest-max", &a->resident_guest_max,
            "largest guest prompt (tokens) served beside the resident prefix");
  f.add_double("resident-stash-gb", &a->resident_stash_gb, "GiB of the guest stash");
  f.add_double("resident-pin-gb", &a->resident_pin_gb, "GiB of the pinned head");
  f.add_double("resident-park-gb", &a->resident_park_gb, "GiB of the parked session");
  f.add_bool("no-store", &a->no_store, "turn the state store off (session and prefix snapshots)");
  f.add_double("cache-gb", &a->cache_gb, "GiB of the state store");
  f.add_double("store-entry-gb", &a->store_entry_gb, "GiB of one state store entry");
  f.add_int("prefix-chunk", &a->prefix_chunk, "tokens between the store's prefix snapshot lines");
  f.add_bool("response-cache", &a->response_cache,
             "answer an identical greedy request from the response cache");
  f.add_double("response-cache-mb", &a->response_cache_mb, "MiB of the response cache");
  f.add_string("disk-cache", &a->disk_cache,
               "directory of the disk tier (its files in DIR/disk; empty: $XDG_CACHE_HOME/"
               "anchorage or ~/.cache/anchorage; off: no disk tier)");
  f.add_double("disk-budget-gb", &a->disk_budget_gb, "GiB the disk tier may hold");
  f.add_double("disk-min-free-gb", &a->disk_min_free_gb,
               "GiB the disk tier leaves free on its file system (never below 5 % of it)");
  f.add_double("disk-ttl-days", &a->disk_ttl_days, "days an unused disk anchor is kept");
  f.add_int("disk-admit-after", &a->disk_admit_after,
            "cold reads of a grid line before the disk tier writes an anchor there");
  f.add_int("disk-head-anchors", &a->disk_head_anchors,
            "anchors a session's first long request writes below its last user message");
  f.add_int("disk-min-tokens", &a->disk_min_tokens,
            "prompts shorter than this write nothing to the disk tier");
  f.add_double(
      "disk-write-budget-gb", &a->disk_write_budget_gb,
      "GB the disk tiers may write per local day before they write less (the drive's life)");
  f.add_double("spill-gb", &a->spill_gb,
               "GiB of whole conversations the session spill keeps on the disk (0: no spill)");
  f.add_int("spill-min-tokens", &a->spill_min_tokens,
            "a conversation another session displaces is spilled from this many tokens");
  f.add_int("spill-give-up-min-tokens", &a->spill_give_up_min_tokens,
            "a conversation the park gives up, or a store restore clears, is spilled from this "
            "many tokens");
  f.add_string("spill-codec", &a->spill_codec,
               "how the session spill writes new blocks: zstd, blosc or none");
  f.add_double("mem-ceiling-gib", &a->mem_ceiling_gib,
               "GiB engine and caches may hold between requests (0: 70/128 of the RAM)");
  f.add_double("mem-peak-gib", &a->mem_peak_gib,
               "GiB engine and caches may hold during a prefill (0: 77/128 of the RAM)");
  f.add_double("reserve-slack-gib", &a->reserve_slack_gib,
               "GiB kept free under the ceiling (0: 1/64 of the RAM)");
  return f;
}

// ANCHORAGE_<FLAG> values as `--flag=value` arguments, placed before the command line's.
std::vector<std::string> env_args(const FlagSet& flags) {
  std::vector<std::string> out;
  for (const std::string& name : flags.names()) {
    std::string var = "ANCHORAGE_";
    for (char c : name) var += c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
    if (const char* value = std::getenv(var.c_str())) out.push_back("--" + name + "=" + value);
  }
  return out;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "anchorage serve: %s (see anchorage serve --help)\n", msg.c_str());
  return 2;
}

void print_help(const FlagSet& flags) {
  std::printf(
      "usage: anchorage serve [flags]\n"
      "Serves the OpenAI API on a qwen35 model: a GGUF file (--model) or random weights from\n"
      "a preset. docs/http-api.md describes it.\n\n"
      "routes:\n");
  for (const server::Route& r : server::route_table()) {
    std::printf("  %-4.*s %-22.*s %.*s\n", int(r.method.size()), r.method.data(),
                int(r.pattern.size()), r.pattern.data(), int(r.help.size()), r.help.data());
  }
  std::printf(
      "With --api-key or --api-key-file every route but /health needs Authorization: Bearer\n"
      "<key>, and the caches are kept per tenant (--cache-scope tenant) unless told otherwise.\n\n"
      "Every flag can also be set by the environment: ANCHORAGE_ + its name in upper case\n"
      "with '_' for '-' (ANCHORAGE_PORT=9000); the command line wins.\n\nflags:\n");
  flags.print_help(stdout);
}

// The default model id: the preset, or the file's name without directory and .gguf.
std::string model_label(const ModelArgs& m) {
  if (m.model.empty()) return m.preset;
  std::string name = m.model.substr(m.model.find_last_of('/') + 1);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".gguf") == 0)
    name.resize(name.size() - 5);
  return name;
}

// GiB (or MiB with unit = 1 << 20) as bytes; false for a negative or absurd value.
bool to_bytes(double size, int64_t unit, int64_t* out) {
  if (!(size >= 0.0) || size > double(int64_t(1) << 50) / double(unit)) return false;
  *out = int64_t(size * double(unit));
  return true;
}

// The cache tiers' sizes in bytes; returns the usage error.
std::string check_cache_sizes(const ServeArgs& a, server::CacheOptions* c) {
  constexpr int64_t kGiB = int64_t(1) << 30;
  cache::ResidentOptions& r = c->resident;
  const struct {
    const char* flag;
    double value;
    int64_t unit;
    int64_t* out;
  } sizes[] = {
      {"--resident-gb", a.resident_gb, kGiB, &r.anchor_bytes},
      {"--resident-stash-gb", a.resident_stash_gb, kGiB, &r.stash_bytes},
      {"--resident-pin-gb", a.resident_pin_gb, kGiB, &r.pin_bytes},
      {"--resident-park-gb", a.resident_park_gb, kGiB, &r.park_bytes},
      {"--cache-gb", a.cache_gb, kGiB, &c->store_options.cache_bytes},
      {"--store-entry-gb", a.store_entry_gb, kGiB, &c->store_options.entry_bytes},
      {"--response-cache-mb", a.response_cache_mb, int64_t(1) << 20,
       &c->response_options.max_bytes},
      {"--disk-budget-gb", a.disk_budget_gb, kGiB, &c->disk.budget_bytes},
      {"--disk-min-free-gb", a.disk_min_free_gb, kGiB, &c->disk.min_free_bytes},
      {"--disk-ttl-days", a.disk_ttl_days, 86400, &c->disk.ttl_s},
      {"--disk-write-budget-gb", a.disk_write_budget_gb, 1000000000, &c->write_guard.budget_bytes},
      {"--spill-gb", a.spill_gb, kGiB, &c->spill_options.budget_bytes},
  };
  for (const auto& s : sizes)
    if (!to_bytes(s.value, s.unit, s.out)) return std::string(s.flag) + " must be >= 0";
  return {};
}

// The disk tier's admission, the session spill and the cache directory; returns the usage error.
std::string check_disk_args(const ServeArgs& a, server::CacheOptions* c) {
  if (a.disk_admit_after < 1) return "--disk-admit-after must be >= 1";
  if (a.disk_head_anchors < 0) return "--disk-head-anchors must be >= 0";
  if (a.disk_min_tokens < 1) return "--disk-min-tokens must be >= 1";
  c->disk.admission.admit_after = int(a.disk_admit_after);
  c->disk.admission.head_anchors = int(a.disk_head_anchors);
  c->disk.admission.min_tokens = a.disk_min_tokens;
  if (a.spill_min_tokens < 1) return "--spill-min-tokens must be >= 1";
  c->spill_options.min_tokens = a.spill_min_tokens;
  if (a.spill_give_up_min_tokens < 1) return "--spill-give-up-min-tokens must be >= 1";
  c->spill_options.give_up_min_tokens = a.spill_give_up_min_tokens;
  auto codec = cache::parse_spill_codec(a.spill_codec);
  if (!codec) return "--spill-codec must be zstd, blosc or none";
  c->spill_options.codec = *codec;
  c->spill = c->spill_options.budget_bytes > 0;
  if (a.disk_cache == "off" || a.no_cache) {
    c->disk_root.clear();
  } else {
    c->disk_root = a.disk_cache.empty() ? server::default_disk_root() : a.disk_cache;
    if (c->disk_root.empty())
      return "--disk-cache: neither XDG_CACHE_HOME nor HOME is set; name a directory or off";
  }
  return {};
}

// The memory budget: what the machine has unless a flag names a limit (0 = derived).
std::string check_memory_args(const ServeArgs& a, cache::BudgetOptions* b) {
  constexpr int64_t kGiB = int64_t(1) << 30;
  *b = cache::BudgetOptions::for_memory(core::machine_memory_bytes());
  const struct {
    const char* flag;
    double value;
    int64_t* out;
  } limits[] = {{"--mem-ceiling-gib", a.mem_ceiling_gib, &b->ceiling_bytes},
                {"--mem-peak-gib", a.mem_peak_gib, &b->peak_bytes},
                {"--reserve-slack-gib", a.reserve_slack_gib, &b->slack_bytes}};
  for (const auto& l : limits) {
    int64_t bytes = 0;
    if (!to_bytes(l.value, kGiB, &bytes)) return std::string(l.flag) + " must be >= 0";
    if (bytes > 0) *l.out = bytes;
  }
  if (b->peak_bytes < b->ceiling_bytes) return "--mem-peak-gib must be >= --mem-ceiling-gib";
  return {};
}

// The cache flags into CacheOptions; returns the usage error.
std::string check_cache_args(const ServeArgs& a, server::CacheOptions* c) {
  c->enabled = !a.no_cache;
  const auto policy = server::parse_resume_policy(a.resume_policy);
  if (!policy) return "--resume-policy must be exact or rows";
  c->resume_policy = *policy;
  c->end_align = a.end_align;
  c->store = !a.no_store;
  c->response_cache = a.response_cache;
  cache::ResidentOptions& r = c->resident;
  r.end_anchor = a.end_anchor;
  r.branch_anchors = a.branch_anchors;
  if (a.anchor_spacing < 1) return "--anchor-spacing must be >= 1";
  r.anchor_spacing = a.anchor_spacing;
  if (a.resident_guest_max < 0) return "--resident-guest-max must be >= 0";
  r.guest_max_tokens = a.resident_guest_max;
  if (a.prefix_chunk < 1) return "--prefix-chunk must be >= 1";
  c->store_options.prefix_chunk = a.prefix_chunk;
  if (std::string e = check_cache_sizes(a, c); !e.empty()) return e;
  if (std::string e = check_disk_args(a, c); !e.empty()) return e;
  return check_memory_args(a, &c->budget);
}

// The HTTP surface: address, limits, timeouts, keys; returns the usage error.
std::string check_http_args(const ServeArgs& a, server::ServerOptions* o) {
  if (a.port < 0 || a.port > 65535) return "--port must be in [0, 65535]";
  if (a.queue < 1 || a.queue > 4096) return "--queue must be in [1, 4096]";
  if (a.max_body_bytes < 1) return "--max-body-bytes must be >= 1";
  if (a.max_tokens < 0) return "--max-tokens must be >= 0";
  if (a.http_threads < 0 || a.http_threads > 4096) return "--http-threads must be in [0, 4096]";
  if (a.drain_s < 0 || a.drain_s > 86400) return "--drain-s must be in [0, 86400]";
  if (a.header_timeout_s < 1 || a.header_timeout_s > 3600)
    return "--header-timeout-s must be in [1, 3600]";
  if (a.idle_timeout_s < 1 || a.idle_timeout_s > 86400)
    return "--idle-timeout-s must be in [1, 86400]";
  if (a.n_predict < -1) return "--n-predict must be >= -1";
  if (!a.cache_scope.empty() && a.cache_scope != "tenant" && a.cache_scope != "global")
    return "--cache-scope must be tenant or global";
  o->host = a.host;
  o->port = int(a.port);
  o->queue_capacity = size_t(a.queue);
  o->max_body_bytes = size_t(a.max_body_bytes);
  o->default_max_tokens = a.max_tokens;
  o->max_tokens_cap = a.n_predict;
  for (const std::string& k : a.api_keys) {
    if (k.empty()) return "--api-key must not be empty";
    o->api_keys.push_back(server::ApiKey{k, {}});
  }
  o->http_threads = int(a.http_threads);
  o->drain_s = int(a.drain_s);
  o->header_timeout_s = int(a.header_timeout_s);
  o->idle_timeout_s = int(a.idle_timeout_s);
  o->admin_token = a.admin_token;
  return {};
}

// How requests are generated: reasoning budget, compaction, drafting, the suffix store.
std::string check_generation_args(const ServeArgs& a, server::ServerOptions* o) {
  if (a.reasoning_budget < -1) return "--reasoning-budget must be >= -1";
  o->reasoning_budget = a.reasoning_budget;
  const auto compaction = server::parse_compaction_mode(a.compaction);
  if (!compaction) return "--compaction must be client or continuation";
  o->compaction = *compaction;
  if (a.compaction_prepare.enabled && o->compaction != server::CompactionMode::kContinuation)
    return "--compaction-prepare on needs --compaction continuation";
  if (!(a.compaction_prepare.idle_s >= 0.0) || a.compaction_prepare.idle_s > 86400.0)
    return "--compaction-idle-s must be in [0, 86400]";
  if (a.compaction_prepare.min_tokens < 1) return "--compaction-min-tokens must be >= 1";
  o->cache.prepare = a.compaction_prepare;
  if (a.draft != "lookup" && a.draft != "off") return "--draft must be lookup or off";
  o->draft_lookup = a.draft == "lookup";
  if (a.draft_max < 1 || a.draft_max > 64) return "--draft-max must be in [1, 64]";
  if (a.draft_min_match < 1 || a.draft_min_match > 32)
    return "--draft-min-match must be in [1, 32]";
  o->draft.draft_max = a.draft_max;
  o->draft.min_match = a.draft_min_match;
  if (!(a.suffix_store_mb >= 1.0) || a.suffix_store_mb > 16384.0)
    return "--suffix-store-mb must be in [1, 16384]";
  o->suffix.cap_bytes = uint64_t(a.suffix_store_mb * double(1 << 20));
  if (a.suffix_store_scope == "all") {
    o->suffix.scope = cache::SuffixScope::kAll;
  } else if (a.suffix_store_scope == "outputs") {
    o->suffix.scope = cache::SuffixScope::kOutputs;
  } else {
    return "--suffix-store-scope must be all or outputs";
  }
  o->suffix.read_only = a.suffix_store_readonly;
  o->suffix_store = !a.no_suffix_store;
  return {};
}

// Checks the flags and fills the model spec and server options; returns the usage error.
std::string check_args(const ServeArgs& a, server::ModelSpec* spec, server::ServerOptions* o) {
  if (std::string e = check_model_args(a.model, &spec->weight_dtype, &spec->kv_dtype); !e.empty())
    return e;
  if (a.ctx < 1) return "--ctx must be >= 1";
  if (a.threads < 0 || a.threads > 1024) return "--threads must be in [0, 1024]";
  // One engine decodes one request at a time; more slots are not built yet.
  if (a.parallel != 1)
    return "--parallel: only 1 is supported (parallel decoding is not built yet)";
  fill_model_spec(a.model, spec);
  spec->capacity = a.ctx;
  spec->threads = int(a.threads);
  spec->tokenizer_json = a.tokenizer_dir + "/tokenizer.json";
  spec->anchor_spacing =
      std::gcd(std::max<int64_t>(a.anchor_spacing, 1), std::max<int64_t>(a.prefix_chunk, 1));
  if (std::string e = check_http_args(a, o); !e.empty()) return e;
  if (std::string e = check_generation_args(a, o); !e.empty()) return e;
  o->model_name = a.model_name.empty() ? "anchorage-" + model_label(a.model) : a.model_name;
  o->model_path = a.model.model;
  if (!a.model.chat_template.empty()) o->chat_template = a.model.chat_template;
  o->journal.path = a.journal;
  if (!(a.journal_mb > 0.0) || a.journal_mb > 1e6) return "--journal-mb must be in (0, 1e6]";
  o->journal.max_bytes = int64_t(a.journal_mb * double(1 << 20));
  if (auto level = core::parse_log_level(a.log_level)) {
    core::set_log_level(*level);
  } else {
    return "--log-level must be debug, info, warn or error";
  }
  return check_cache_args(a, &o->cache);
}

// The keys of --api-key-file join --api-key's, and the cache scope follows from them; false
// (after a message) when the file cannot be read.
bool add_key_file(const ServeArgs& a, server::ServerOptions* options) {
  if (!a.api_key_file.empty()) {
    auto keys = server::read_api_key_file(a.api_key_file);
    if (!keys) {
      std::fprintf(stderr, "anchorage serve: --api-key-file: %s\n", keys.error().message().c_str());
      return false;
    }
    options->api_keys.insert(options->api_keys.end(), keys->begin(), keys->end());
  }
  options->cache.tenant_scope =
      a.cache_scope.empty() ? !options->api_keys.empty() : a.cache_scope == "tenant";
  if (!options->api_keys.empty() || !options->admin_token.empty())
    core::log(core::LogLevel::kInfo, "start: %zu API key(s)%s; cache scope %s",
              options->api_keys.size(), options->admin_token.empty() ? "" : " and an admin token",
              options->cache.tenant_scope ? "tenant" : "global");
  if (options->api_keys.size() > 1 && options->cache.enabled && !options->cache.tenant_scope)
    core::log(core::LogLevel::kWarn,
              "--cache-scope global with several keys: every key holder can learn how much of a "
              "guessed prompt another one sent (docs/http-api.md \"Keys and tenants\")");
  return true;
}

void log_caches(const server::CacheOptions& cache) {
  if (!cache.enabled) {
    core::log(core::LogLevel::kInfo, "caches off (--no-cache)");
    return;
  }
  const cache::BudgetOptions& b = cache.budget;
  core::log(core::LogLevel::kInfo,
            "caches on: memory ceiling %.2f GiB, peak %.2f GiB, slack %.2f GiB; anchors every "
            "%lld tokens, end anchor %s",
            double(b.ceiling_bytes) / double(1 << 30), double(b.peak_bytes) / double(1 << 30),
            double(b.slack_bytes) / double(1 << 30), (long long)cache.resident.anchor_spacing,
            cache.resident.end_anchor ? "on" : "off");
}

// Waits for SIGTERM/SIGINT and shuts the server down; SIGUSR1 (from main) ends the wait
// when the server stopped on its own. A second SIGTERM/SIGINT exits at once.
void wait_for_signals(const sigset_t& set, server::HttpServer* server) {
  int sig = 0;
  if (sigwait(&set, &sig) != 0 || sig == SIGUSR1) return;
  core::log(core::LogLevel::kInfo, "signal %d: shutting down (finishing the running request)", sig);
  std::thread stopper([server] { server->shutdown(); });
  while (sigwait(&set, &sig) == 0 && sig != SIGUSR1) {
    core::log(core::LogLevel::kWarn, "second signal %d: exiting now", sig);
    std::_Exit(1);
  }
  stopper.join();
}

}  // namespace

int serve_command(const std::vector<std::string_view>& args) {
  const int64_t start_ns = core::now_ns();
  // Signals go to one waiting thread: blocked here, before any thread exists, so every
  // thread (engine pool, HTTP workers) inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&set, s);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  ServeArgs a;
  FlagSet flags = make_flags(&a);
  const std::vector<std::string> env = env_args(flags);
  std::vector<std::string_view> all(env.begin(), env.end());
  all.insert(all.end(), args.begin(), args.end());
  bool help = false;
  if (core::Status s = flags.parse(all, &help); !s.is_ok()) return usage_error(s.message());
  if (help) {
    print_help(flags);
    return 0;
  }
  server::ModelSpec spec;
  server::ServerOptions options;
  if (std::string e = check_args(a, &spec, &options); !e.empty()) return usage_error(e);
  if (!add_key_file(a, &options)) return 1;

  core::log(core::LogLevel::kInfo, "start: anchorage serve %s",
            spec.gguf_path.empty() ? ("preset " + spec.preset + ", random weights").c_str()
                                   : spec.gguf_path.c_str());
  auto model = server::load_served_model(spec);
  if (!model) {
    std::fprintf(stderr, "anchorage serve: %s\n", model.error().to_string().c_str());
    return 1;
  }
  server::HttpServer server(options, model.value());
  if (core::Status s = server.bind(); !s.is_ok()) {
    std::fprintf(stderr, "anchorage serve: %s\n", s.to_string().c_str());
    return 1;
  }
  log_caches(options.cache);
  // The start-up's last lines: how long it took, then where to connect (tests and scripts wait
  // for this line's URL).
  core::log(core::LogLevel::kInfo,
            "start: ready in %.3f s: %s (%s, vocab %lld, ctx %lld, %d threads, model loaded in "
            "%.3f s)",
            double(core::now_ns() - start_ns) * 1e-9, options.model_name.c_str(),
            (spec.gguf_path.empty() ? "preset " + spec.preset : spec.gguf_path).c_str(),
            (long long)model->vocab_size, (long long)spec.capacity, model->engine->n_threads(),
            double(model->load_ns) * 1e-9);
  core::log(core::LogLevel::kInfo, "listening on http://%s:%d", options.host.c_str(),
            server.port());
  std::thread signals([&] { wait_for_signals(set, &server); });
  const core::Status served = server.serve();
  pthread_kill(signals.native_handle(), SIGUSR1);
  signals.join();
  server.shutdown();
  if (!served.is_ok()) {
    std::fprintf(stderr, "anchorage serve: %s\n", served.to_string().c_str());
    return 1;
  }
  core::log(core::LogLevel::kInfo, "stopped");
  return 0;
}

}  // namespace anchorage::cli
