// serve_generation (routes.h): the part of the two completion routes after parsing.

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "core/clock.h"
#include "server/choice_builder.h"
#include "server/prompt_builder.h"
#include "server/responder.h"
#include "server/routes.h"

namespace anchorage::server {
namespace {

// The parameters a greedy answer depends on besides its prompt (the response cache's key);
// empty when the request samples.
std::string response_key(const CompletionRequest& request, const GenerationJob& job) {
  if (request.sampling.temperature > 0.0) return {};
  nlohmann::ordered_json k;
  k["endpoint"] = request.endpoint == Endpoint::kChat ? "chat" : "completion";
  k["max_tokens"] = job.max_tokens;
  k["stop"] = request.stop;
  k["stop_ids"] = job.stop_ids;
  k["top_logprobs"] = job.top_logprobs;
  k["tool_choice"] = int(request.constraint.tool_choice);
  k["function"] = request.constraint.function_name;
  k["reasoning_budget"] = request.constraint.reasoning_budget;
  return k.dump();
}

GenerationJob make_job(Service& svc, const CompletionRequest& request, std::vector<int32_t> prompt,
                       std::string prompt_text, uint64_t nonce) {
  GenerationJob job;
  job.request_id = nonce;
  job.prompt = std::move(prompt);
  job.max_tokens = request.max_tokens.value_or(svc.options.default_max_tokens);
  if (svc.options.max_tokens_cap >= 0)
    job.max_tokens = std::min(job.max_tokens, svc.options.max_tokens_cap);
  job.sampling = request.sampling;
  // No seed: a fresh one per request (OpenAI's sampling is not reproducible without one).
  if (!request.has_seed) job.sampling.seed = nonce;
  job.seed_given = request.has_seed;
  if (!request.ignore_eos) job.stop_ids = svc.stop_ids;
  job.top_logprobs = request.logprobs ? request.top_logprobs : -1;
  job.session = request.session;
  job.return_progress = request.return_progress && request.stream;
  job.prompt_text = std::move(prompt_text);
  if (request.endpoint == Endpoint::kChat)
    job.head_end = last_user_message_start(job.prompt, svc.tokenizer);
  job.stop_after = make_stop_check(svc.tokenizer, request.stop);
  if (request.endpoint == Endpoint::kChat) {
    ConstraintSpec spec = request.constraint;
    if (spec.reasoning_budget < 0) spec.reasoning_budget = svc.options.reasoning_budget;
    job.constraint =
        OutputConstraint::create(svc.constraint_vocab, svc.tokenizer, spec, job.prompt);
  }
  if (request.endpoint == Endpoint::kChat &&
      svc.options.compaction == CompactionMode::kContinuation)
    job.compaction = recognise_compaction(request.chat);
  job.response_key = response_key(request, job);
  job.submitted_ns = core::now_ns();
  return job;
}

AnswerPlan make_plan(Service& svc, const CompletionRequest& request, uint64_t nonce) {
  const bool chat = request.endpoint == Endpoint::kChat;
  char id[48];
  std::snprintf(id, sizeof(id), "%s%016" PRIx64, chat ? "chatcmpl-" : "cmpl-", nonce);
  AnswerPlan plan;
  plan.meta.endpoint = request.endpoint;
  plan.meta.id = id;
  plan.meta.created = int64_t(std::time(nullptr));
  plan.meta.model = svc.options.model_name;
  plan.meta.include_usage = request.stream && request.include_usage;
  plan.choice.chat = chat;
  plan.choice.parse_tool_calls = request.parse_tool_calls;
  plan.choice.logprobs = request.logprobs;
  plan.choice.stop = request.stop;
  if (!request.ignore_eos) plan.choice.stop_ids = svc.stop_ids;
  plan.choice.tool_call_seed = nonce;
  plan.session = request.session;
  return plan;
}

}  // namespace

void serve_generation(Service& svc, CompletionRequest request, HttpResponse& res) {
  std::vector<int32_t> prompt;
  std::string prompt_text;
  if (auto e = build_prompt(request, svc.tokenizer, svc.vocab_size, svc.capacity, &prompt,
                            &prompt_text)) {
    return answer_error(svc, res, *e);
  }
  const uint64_t nonce = next_request_nonce(svc);
  AnswerPlan plan = make_plan(svc, request, nonce);
  svc.responses.begin();
  auto stream =
      svc.queue.submit(make_job(svc, request, std::move(prompt), std::move(prompt_text), nonce));
  if (!stream) {
    svc.responses.end();
    if (stream.error().code() == core::StatusCode::kResourceExhausted) {
      svc.metrics.count_queue_full();
      return answer_error(svc, res, queue_full_error());
    }
    return answer_error(svc, res, shutting_down_error());
  }
  if (request.stream) return answer_streamed(svc, res, std::move(stream.value()), std::move(plan));
  answer_whole(svc, res, std::move(stream.value()), std::move(plan));
}

}  // namespace anchorage::server
