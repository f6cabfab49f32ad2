// speculation_bench: what a verify block costs and what the lookup drafter gains (issue 15 §5,
// docs/speculation.md). Prints ONE JSON document on stdout.
//
// - verify_block: the time of a verify block of k+1 tokens (k = 1..16, all kept) relative to one
//   decode step at the same context, and of a rejected one (commit_block(1): the sections
//   written back and the kept token forwarded again), plus one copy of the sections (what
//   per-position state copies would cost per drafted token).
// - workloads, decode tok/s with drafting off and with the lookup drafter (alternating in each
//   repeat, best of --reps each; the proposals' own time as a share of decode), as ratios within
//   the run: `greedy_loops` (the random model's own greedy output, which falls into loops) and
//   `nothing_to_draft` (seeded sampling at temperature 1 over the random model's flat
//   distribution: almost no n-gram repeats, so this measures the drafter's overhead).
// - `agent_edit` (with --trace): the repetition-heavy workload of an agent turn, built from the
//   opencode capture (/work/shared/traces): the prompt is the capture's request --trace-seq
//   (default 6: the turn after the agent read README.md and hello.py) rendered as the server
//   renders it, and the output is the turn that quotes both files it read and edits them
//   (write calls with their numbered lines, one line changed, then an edit call). The random
//   model cannot write that, so every token is forced through allowed_next (a single allowed id,
//   taken as is), as the output constraint forces tokens: every step still forwards the model,
//   and a draft is kept exactly when a model that wrote this turn would keep it. Token ids only;
//   no text is printed.
//
// Flags: --preset small  --weights bf16  --threads 0 (all)  --context 1024  --gen 128
//        --seed 1  --reps 3  --trace FILE (none: no agent_edit)  --trace-seq 6
//        --tokenizer FILE (the build's data/qwen3/tokenizer.json). Google Benchmark's
//        --benchmark_* flags are accepted and ignored.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "core/aligned_buffer.h"
#include "core/clock.h"
#include "core/dtype.h"
#include "core/isa.h"
#include "core/rng.h"
#include "engine/engine.h"
#include "engine/generation.h"
#include "engine/lookup_drafter.h"
#include "model/qwen35/config.h"
#include "model/qwen35/qwen35_model.h"
#include "server/completion_request.h"
#include "server/prompt_builder.h"
#include "server/request_parser.h"
#include "text/tokenizer.h"

using namespace anchorage;
using json = nlohmann::ordered_json;

namespace {

struct Args {
  std::string preset = "small";
  std::string weights = "bf16";
  int64_t threads = 0;
  int64_t context = 1024;
  int64_t gen = 128;
  int64_t seed = 1;
  int64_t reps = 3;
  std::string trace;
  int64_t trace_seq = 6;
  std::string tokenizer = std::string(ANCHORAGE_DATA_DIR) + "/qwen3/tokenizer.json";
};

bool parse_args(int argc, char** argv, Args* a) {
  for (int i = 1; i < argc; ++i) {
    std::string_view f = argv[i];
    if (f.rfind("--benchmark_", 0) == 0) continue;
    if (i + 1 >= argc) return false;
    std::string_view v = argv[++i];
    auto num = [&](int64_t* out) {
      auto r = std::from_chars(v.data(), v.data() + v.size(), *out);
      return r.ec == std::errc() && r.ptr == v.data() + v.size();
    };
    bool ok = true;
    if (f == "--preset")
      a->preset = std::string(v);
    else if (f == "--weights")
      a->weights = std::string(v);
    else if (f == "--threads")
      ok = num(&a->threads) && a->threads >= 0;
    else if (f == "--context")
      ok = num(&a->context) && a->context >= 16;
    else if (f == "--gen")
      ok = num(&a->gen) && a->gen >= 2;
    else if (f == "--seed")
      ok = num(&a->seed);
    else if (f == "--reps")
      ok = num(&a->reps) && a->reps >= 1;
    else if (f == "--trace")
      a->trace = std::string(v);
    else if (f == "--trace-seq")
      ok = num(&a->trace_seq);
    else if (f == "--tokenizer")
      a->tokenizer = std::string(v);
    else
      ok = false;
    if (!ok) return false;
  }
  return true;
}

// The sections of the engine, to put it back at the context between measurements.
std::vector<core::AlignedBuffer> save_sections(engine::Engine& e) {
  std::vector<core::AlignedBuffer> out;
  for (size_t i = 0; i < e.layout().sections.size(); ++i) {
    const size_t bytes = size_t(e.layout().sections[i].bytes());
    out.emplace_back(bytes);
    std::memcpy(out.back().data(), e.section_data(i), bytes);
  }
  return out;
}
void restore_sections(engine::Engine& e, const std::vector<core::AlignedBuffer>& s,
                      int64_t length) {
  for (size_t i = 0; i < s.size(); ++i)
    std::memcpy(e.section_data(i), s[i].data(), size_t(e.layout().sections[i].bytes()));
  (void)e.resume_at(length).is_ok();
}

json verify_costs(engine::Engine& e, const Args& a, const std::vector<int32_t>& drafts) {
  const auto saved = save_sections(e);
  const int64_t ctx = e.length();
  auto best_of = [&](auto&& run) {
    int64_t best = INT64_MAX;
    for (int64_t r = 0; r < a.reps; ++r) {
      restore_sections(e, saved, ctx);
      const int64_t t0 = core::now_ns();
      run();
      best = std::min(best, core::now_ns() - t0);
    }
    return double(best);
  };
  const double decode_ns = best_of([&] { (void)e.decode(drafts[0]).is_ok(); });
  const double copy_ns = best_of([&] { save_sections(e); });
  json ks = json::array();
  for (int64_t k = 1; k <= 16; ++k) {
    const std::span<const int32_t> block(drafts.data(), size_t(k + 1));
    const double kept = best_of([&] {
      (void)e.verify_block(block).is_ok();
      e.commit_block(k + 1);
    });
    const double rejected = best_of([&] {
      (void)e.verify_block(block).is_ok();
      e.commit_block(1);
    });
    ks.push_back({{"k", k},
                  {"block_vs_decode", kept / decode_ns},
                  {"rejected_block_vs_decode", rejected / decode_ns}});
  }
  restore_sections(e, saved, ctx);
  return {{"context", ctx},
          {"decode_step_ms", decode_ns * 1e-6},
          {"section_bytes", e.cost().section_bytes},
          {"section_copy_vs_decode", copy_ns / decode_ns},
          {"blocks", ks}};
}

// The lookup drafter, with the time its proposals take (the overhead where nothing drafts).
class TimedDrafter : public engine::Drafter {
 public:
  void propose(std::span<const int32_t> context, int64_t max_tokens,
               std::vector<int32_t>* out) override {
    const int64_t t0 = core::now_ns();
    inner_.propose(context, max_tokens, out);
    propose_ns += core::now_ns() - t0;
  }
  void observe(int64_t proposed, int64_t accepted) override { inner_.observe(proposed, accepted); }
  int64_t propose_ns = 0;

 private:
  engine::LookupDrafter inner_{{}};
};

// Decode with drafting off and with the lookup drafter, the two alternating in every repeat,
// which one first alternating too (a shared machine's load drifts; best of --reps each). The prompt
// is prefilled once, but for its last token, and every run resumes there as a request resumed from
// a cache does. forced: the output every step must choose (empty: the model's own choices, up to
// --gen).
json workload(engine::Engine& e, const Args& a, const std::vector<int32_t>& prompt,
              const engine::SamplingParams& sampling, const std::vector<int32_t>& forced = {}) {
  e.reset();
  const std::span<const int32_t> all(prompt);
  const size_t cached = prompt.size() - 1;
  if (core::Status s = e.prefill(all.first(cached)); !s.is_ok()) return {{"error", s.to_string()}};
  const auto saved = save_sections(e);
  struct Best {
    double tok_s = 0.0;
    double propose_share = 0.0;  // the drafter's proposals, as a share of the decode time
    engine::GenerationResult result;
  } best[2];
  for (int64_t r = 0; r < a.reps; ++r) {
    for (int i = 0; i < 2; ++i) {
      const int draft = (i + int(r)) % 2;  // which runs first alternates too
      restore_sections(e, saved, int64_t(cached));
      TimedDrafter drafter;
      engine::GenerationOptions o{.max_tokens = a.gen, .sampling = sampling};
      if (!forced.empty()) {
        o.max_tokens = int64_t(forced.size());
        o.allowed_next = [&forced](std::span<const int32_t> sampled) {
          return std::span<const int32_t>(forced).subspan(sampled.size(), 1);
        };
      }
      if (draft == 1) {
        o.drafter = &drafter;
        o.draft_context = all.first(cached);
      }
      auto g = engine::generate(e, all.last(1), o);
      if (!g.has_value()) return json{{"error", g.error().to_string()}};
      const double tok_s = double(g->decode_steps) / (double(g->decode_ns) * 1e-9);
      if (tok_s > best[draft].tok_s) {
        best[draft].tok_s = tok_s;
        best[draft].propose_share = double(drafter.propose_ns) / double(g->decode_ns);
        best[draft].result = std::move(*g);
      }
    }
  }
  auto report = [](const Best& b) {
    const engine::GenerationResult& g = b.result;
    return json{{"decode_tok_s", b.tok_s},
                {"decode_steps", g.decode_steps},
                {"verify_blocks", g.verify_blocks},
                {"drafted_tokens", g.drafted_tokens},
                {"accepted_tokens", g.accepted_tokens},
                {"mean_accepted_per_block",
                 g.verify_blocks > 0 ? double(g.accepted_tokens) / double(g.verify_blocks) : 0.0},
                {"propose_share_of_decode", b.propose_share}};
  };
  if (best[0].result.tokens != best[1].result.tokens)
    return {{"error", "drafting changed the tokens"}};
  return {{"prompt_tokens", prompt.size()},
          {"off", report(best[0])},
          {"lookup", report(best[1])},
          {"speedup", best[1].tok_s / best[0].tok_s}};
}

// The agent turn of --trace (see the header): its prompt and forced output, token ids only.
struct AgentTurn {
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;
  int64_t files = 0;
};

std::optional<AgentTurn> agent_turn(const Args& a, const text::Tokenizer& tok, int64_t vocab) {
  std::ifstream in(a.trace);
  std::string line;
  json request;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("seq", int64_t(-1)) == a.trace_seq) request = j;
  }
  if (!request.is_object()) return std::nullopt;
  server::CompletionRequest req;
  // Error messages name fields, never the request's text.
  if (auto e = server::parse_chat_body(request["body"].dump(), std::nullopt, &req)) {
    std::fprintf(stderr, "speculation_bench: trace request: %s\n", e->message.c_str());
    return std::nullopt;
  }
  AgentTurn turn;
  if (auto e = server::build_prompt(req, tok, vocab, int64_t(1) << 20, &turn.prompt)) {
    std::fprintf(stderr, "speculation_bench: trace request: %s\n", e->message.c_str());
    return std::nullopt;
  }
  // The files the agent read: the tool results' numbered lines ("1: text"), without the
  // numbers. The turn writes each back with its middle line changed, then edits that line.
  const std::regex numbered(R"(^\s*\d+: ?(.*)$)");
  std::string out;
  for (const json& m : request["body"]["messages"]) {
    if (m.value("role", "") != "tool" || !m["content"].is_string()) continue;
    std::vector<std::string> lines;
    std::istringstream content(m["content"].get<std::string>());
    for (std::string l; std::getline(content, l);) {
      std::smatch match;
      if (std::regex_match(l, match, numbered)) lines.push_back(match[1]);
    }
    if (lines.empty()) continue;
    ++turn.files;
    const size_t mid = lines.size() / 2;
    const std::string old_line = lines[mid];
    lines[mid] += " (updated)";
    std::string edited;
    for (const auto& l : lines) edited += l + "\n";
    const std::string path = "file" + std::to_string(turn.files);
    out +=
        "<tool_call>\n" +
        json{{"name", "write"}, {"arguments", {{"filePath", path}, {"content", edited}}}}.dump() +
        "\n</tool_call>\n";
    out += "<tool_call>\n" +
           json{{"name", "edit"},
                {"arguments",
                 {{"filePath", path}, {"oldString", old_line}, {"newString", lines[mid]}}}}
               .dump() +
           "\n</tool_call>\n";
  }
  turn.output = tok.encode(out);
  for (int32_t t : turn.output)
    if (t >= vocab) return std::nullopt;
  if (turn.output.empty()) return std::nullopt;
  return turn;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse_args(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: speculation_bench [--preset small] [--weights bf16] [--threads 0] "
                 "[--context 1024] [--gen 128] [--seed 1] [--reps 3]\n");
    return 2;
  }
  auto cfg = model::qwen35::qwen35_preset(a.preset);
  if (!cfg.has_value()) return 2;
  // With a trace, the vocabulary is padded to cover the tokenizer, as the server pads it.
  std::optional<text::Tokenizer> tokenizer;
  if (!a.trace.empty()) {
    auto t = text::Tokenizer::load_file(a.tokenizer);
    if (!t.has_value()) {
      std::fprintf(stderr, "speculation_bench: %s\n", t.error().to_string().c_str());
      return 2;
    }
    tokenizer.emplace(std::move(t.value()));
    cfg->vocab_size = std::max<int64_t>(cfg->vocab_size, tokenizer->vocab_size());
  }
  model::qwen35::Qwen35Options mo;
  if (!core::parse_dtype(a.weights, &mo.weight_dtype)) return 2;
  auto arch = model::qwen35::make_random_qwen35(*cfg, uint64_t(a.seed), mo);
  if (!arch.has_value()) return 2;
  const int64_t vocab = (*arch)->vocab_size();
  std::optional<AgentTurn> turn;
  int64_t capacity = a.context + a.gen + 32;
  if (tokenizer) {
    turn = agent_turn(a, *tokenizer, vocab);
    if (turn)
      capacity = std::max(capacity, int64_t(turn->prompt.size() + turn->output.size()) + 32);
  }
  auto eng = engine::Engine::create(std::move(arch.value()),
                                    {.capacity = capacity, .n_threads = int(a.threads)});
  if (!eng.has_value()) return 2;
  engine::Engine& e = **eng;
  core::Rng rng(uint64_t(a.seed) + 17);
  std::vector<int32_t> prompt(size_t(a.context));
  for (auto& t : prompt) t = int32_t(rng.next_u64() % uint64_t(vocab));
  std::vector<int32_t> drafts(17);
  for (auto& t : drafts) t = int32_t(rng.next_u64() % uint64_t(vocab));

  json out{{"bench", "speculation"},
           {"preset", a.preset},
           {"weights", a.weights},
           {"isa", std::string(core::isa_name(core::active_isa()))},
           {"threads", e.n_threads()},
           {"gen", a.gen},
           {"vocab", vocab}};
  (void)e.prefill(prompt).is_ok();
  out["verify_block"] = verify_costs(e, a, drafts);
  out["greedy_loops"] = workload(e, a, prompt, {});
  out["nothing_to_draft"] = workload(e, a, prompt, {.temperature = 1.0, .seed = 5});
  if (tokenizer) {
    if (!turn) {
      out["agent_edit"] = {{"error", "the trace's request could not be rendered"}};
    } else {
      out["agent_edit"] = workload(e, a, turn->prompt, {}, turn->output);
      out["agent_edit"]["trace_seq"] = a.trace_seq;
      out["agent_edit"]["files_quoted"] = turn->files;
      out["agent_edit"]["output_tokens"] = turn->output.size();
    }
  }
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
