#include "server/responder.h"

#include <chrono>
#include <string>
#include <vector>

#include "server/sse.h"

namespace anchorage::server {
namespace {

constexpr std::string_view kJsonType = "application/json";

// The error a job that did not finish normally reports, or nullopt.
std::optional<ApiError> outcome_error(const JobOutcome& o, const TokenStream& stream) {
  // A generation cut by the shutdown's drain deadline (--drain-s) tells its client so.
  if (o.end == JobEnd::kCancelled && stream.was_cut()) return shutting_down_error();
  if (o.end == JobEnd::kFailed && o.status.code() == core::StatusCode::kResourceExhausted)
    return memory_full_error();
  if (o.end == JobEnd::kFailed) return internal_error("the generation failed");
  if (o.end == JobEnd::kCancelled && !o.status.is_ok()) return shutting_down_error();
  return std::nullopt;
}

// The state of one SSE answer; the transport calls pump() until it calls sink.done() or fails.
class SseAnswer {
 public:
  SseAnswer(Service& svc, std::shared_ptr<TokenStream> stream, AnswerPlan plan)
      : svc_(svc),
        stream_(std::move(stream)),
        plan_(std::move(plan)),
        builder_(svc.tokenizer, plan_.choice) {}

  bool pump(ChunkSink& sink) {
    if (!opened_) {
      opened_ = true;
      // The chat role chunk goes out at once: the client sees its headers and a first event
      // before the prefill ends.
      if (plan_.meta.endpoint == Endpoint::kChat) return emit_chunk(sink, ChoiceDelta{}, true, "");
    }
    events_.clear();
    JobOutcome outcome;
    const bool done =
        stream_->wait(std::chrono::milliseconds(svc_.options.sse_ping_ms), &events_, &outcome);
    for (const TokenEvent& e : events_) {
      if (e.progress) {  // only a return_progress job sends them
        const Json chunk = render_progress_chunk(plan_.meta, *e.progress);
        if (!write(sink, sse_event(dump_json(chunk)))) return false;
        continue;
      }
      builder_.add(e, &pending_);
      if (pending_.has_output() && !flush_pending(sink)) return false;
    }
    if (!done) {
      if (events_.empty() && !write(sink, kSsePing)) return false;
      return true;
    }
    return finish(sink, outcome);
  }

  void release(bool success) {
    if (!success) stream_->cancel();
    svc_.responses.end();
  }

 private:
  bool write(ChunkSink& sink, std::string_view data) {
    if (sink.write(data)) return true;
    stream_->cancel();  // the client is gone: stop the engine at its next token
    return false;
  }

  bool emit_chunk(ChunkSink& sink, const ChoiceDelta& delta, bool first, std::string_view finish) {
    const Json chunk =
        render_chunk(plan_.meta, svc_.tokenizer, delta, first, finish, &text_offset_);
    return write(sink, sse_event(dump_json(chunk)));
  }

  bool flush_pending(ChunkSink& sink) {
    const bool ok = emit_chunk(sink, pending_, false, "");
    pending_ = ChoiceDelta{};
    return ok;
  }

  bool finish(ChunkSink& sink, const JobOutcome& outcome) {
    if (auto error = outcome_error(outcome, *stream_)) {
      // Headers are out: OpenAI's way is an error object as a data event.
      if (!write(sink, sse_event(render_error_body(*error)))) return false;
    } else if (outcome.end != JobEnd::kCancelled) {
      builder_.finish(&pending_);
      if (pending_.has_output() && !flush_pending(sink)) return false;
      const std::string_view reason = finish_reason(outcome.end, builder_.saw_tool_calls());
      if (!emit_chunk(sink, pending_, false, reason)) return false;  // leftover logprobs
      if (plan_.meta.include_usage) {
        const Json usage = render_usage_chunk(plan_.meta, render_usage(outcome, plan_.session));
        if (!write(sink, sse_event(dump_json(usage)))) return false;
      }
    }
    if (!write(sink, kSseDone)) return false;
    sink.done();
    return true;
  }

  Service& svc_;
  std::shared_ptr<TokenStream> stream_;
  AnswerPlan plan_;
  ChoiceBuilder builder_;
  ChoiceDelta pending_;
  std::vector<TokenEvent> events_;
  int64_t text_offset_ = 0;
  bool opened_ = false;
};

}  // namespace

void answer_error(const Service& svc, HttpResponse& res, const ApiError& error) {
  res.status = error.http_status;
  if (error.http_status == 429 || error.http_status == 503) {
    res.set_header("Retry-After", std::to_string(svc.options.retry_after_seconds));
  }
  res.set_content(render_error_body(error), kJsonType);
}

void answer_streamed(Service& svc, HttpResponse& res, std::shared_ptr<TokenStream> stream,
                     AnswerPlan plan) {
  // Headers wait while the job is queued: a job the queue drops at shutdown then gets its 503
  // (as docs/http-api.md says) instead of 200 and an error event. Once the engine takes it,
  // headers and the role chunk go out at once, before the prefill ends.
  while (!stream->wait_taken(std::chrono::milliseconds(svc.options.sse_ping_ms))) {
  }
  JobOutcome refused;
  if (stream->ended_untaken(&refused)) {
    if (auto error = outcome_error(refused, *stream)) {
      svc.responses.end();
      return answer_error(svc, res, *error);
    }
  }
  auto answer = std::make_shared<SseAnswer>(svc, std::move(stream), std::move(plan));
  res.status = 200;
  res.set_header("Cache-Control", "no-cache");
  // Asks reverse proxies (nginx) not to buffer the stream.
  res.set_header("X-Accel-Buffering", "no");
  res.set_chunked(
      kSseContentType, [answer](ChunkSink& sink) { return answer->pump(sink); },
      [answer](bool success) { answer->release(success); });
}

namespace {

// A non-streamed answer that is still decoding: its status is already 200 (the first token
// came, so the prompt was accepted), and while it waits it writes one space now and then —
// JSON allows leading whitespace — so a client that hung up is found by the failed write
// and its generation stops, as a streamed one does (docs/http-api.md "Disconnects").
class WholeAnswer {
 public:
  WholeAnswer(Service& svc, std::shared_ptr<TokenStream> stream, AnswerPlan plan)
      : svc_(svc),
        stream_(std::move(stream)),
        plan_(std::move(plan)),
        builder_(svc.tokenizer, plan_.choice) {}

  // Collects events for up to one ping interval; true when the job ended.
  bool collect() {
    events_.clear();
    done_ = stream_->wait(std::chrono::milliseconds(svc_.options.sse_ping_ms), &events_, &outcome_);
    for (const TokenEvent& e : events_)
      if (!e.progress) builder_.add(e, &choice_);  // (progress goes to streams only)
    return done_;
  }
  bool got_tokens() const { return !events_.empty(); }
  bool done() const { return done_; }

  // The whole response once the job ended: status and body.
  void render(HttpResponse& res) {
    if (auto error = outcome_error(outcome_, *stream_)) return answer_error(svc_, res, *error);
    res.status = 200;
    res.set_content(body(), kJsonType);
  }

  bool pump(ChunkSink& sink) {
    if (!done_ && !collect()) {
      if (sink.write(" ")) return true;
      stream_->cancel();
      return false;
    }
    const std::string text = outcome_error(outcome_, *stream_)
                                 ? render_error_body(*outcome_error(outcome_, *stream_))
                                 : body();
    if (!sink.write(text)) return false;
    sink.done();
    return true;
  }

  void release(bool success) {
    if (!success) stream_->cancel();
    svc_.responses.end();
  }

 private:
  std::string body() {
    builder_.finish(&choice_);
    const std::string_view reason = finish_reason(outcome_.end, builder_.saw_tool_calls());
    const Json j = render_response(plan_.meta, svc_.tokenizer, choice_, plan_.choice.logprobs,
                                   reason, render_usage(outcome_, plan_.session));
    return dump_json(j);
  }

  Service& svc_;
  std::shared_ptr<TokenStream> stream_;
  AnswerPlan plan_;
  ChoiceBuilder builder_;
  ChoiceDelta choice_;
  std::vector<TokenEvent> events_;
  JobOutcome outcome_;
  bool done_ = false;
};

}  // namespace

void answer_whole(Service& svc, HttpResponse& res, std::shared_ptr<TokenStream> stream,
                  AnswerPlan plan) {
  auto answer = std::make_shared<WholeAnswer>(svc, std::move(stream), std::move(plan));
  // Until the first token the status is open (a queue or memory refusal is still a 4xx/5xx).
  while (!answer->collect() && !answer->got_tokens()) {
  }
  if (answer->done()) {
    answer->render(res);
    svc.responses.end();
    return;
  }
  res.status = 200;
  res.set_chunked(
      kJsonType, [answer](ChunkSink& sink) { return answer->pump(sink); },
      [answer](bool success) { answer->release(success); });
}

}  // namespace anchorage::server
