#include "server/summary_ahead.h"

#include <algorithm>

#include "server/token_logprobs.h"

namespace anchorage::server {
namespace {

// The most alternatives a request may ask for (OpenAI's top_logprobs limit): kept per token.
constexpr int kTopKept = 20;

bool same_sampling(const engine::SamplingParams& a, const engine::SamplingParams& b) {
  return a.temperature == b.temperature && a.top_k == b.top_k && a.top_p == b.top_p &&
         a.min_p == b.min_p;
}

bool is_stop(const std::vector<int32_t>& stop_ids, int32_t token) {
  return std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end();
}

}  // namespace

void SummaryAhead::learn(const GenerationJob& job) {
  if (!job.stop_ids.empty()) stop_ids_ = job.stop_ids;
  if (job.compaction) learnt_ = Recipe{job.compaction->turn_text, job.sampling, job.max_tokens};
}

SummaryAhead::Recipe SummaryAhead::recipe() const {
  if (learnt_) return *learnt_;
  // opencode 1.18.33 sends no sampling parameters: the server's defaults (request_parser.cc).
  Recipe r{opencode_default_turn(), engine::SamplingParams{}, options_.max_tokens};
  r.sampling.temperature = 1.0;
  return r;
}

bool SummaryAhead::wanted(const Conversation& c) const {
  if (!options_.enabled || c.session.empty() || c.end == nullptr || stop_ids_.empty() ||
      int64_t(c.record.size()) < std::max<int64_t>(options_.min_tokens, 1))
    return false;
  return !(c.session == tried_session_ && std::equal(c.record.begin(), c.record.end(),
                                                     tried_record_.begin(), tried_record_.end()));
}

core::Status SummaryAhead::prepare(engine::Engine& engine, const text::Tokenizer& tokenizer,
                                   const Conversation& c,
                                   const std::function<bool()>& should_stop) {
  if (!wanted(c)) return core::Status::ok();
  const Recipe r = recipe();
  const int64_t e = int64_t(c.record.size());
  std::vector<int32_t> served(c.record.begin(), c.record.end());
  tokenizer.encode(r.turn_text, &served);
  const int64_t n = int64_t(served.size());
  // Too long to continue (the request would be served as sent): nothing to write.
  if (n >= engine.capacity()) {
    tried_session_ = c.session;
    tried_record_.assign(c.record.begin(), c.record.end());
    return core::Status::ok();
  }
  ++stats_.started;
  auto back_to_end = [&]() -> core::Status {
    if (core::Status s = c.end->write_back(engine); !s.is_ok()) return s;
    return engine.resume_at(e);
  };
  if (core::Status s = back_to_end(); !s.is_ok()) {
    ++stats_.failed;
    return s;
  }

  // The turn, a prefill call at a time up to the last chunk line before its end (the engine
  // cuts its own calls there too: the same bits), so a waiting request stops it there.
  const int64_t chunk = std::max<int64_t>(engine.options().prefill_chunk, 1);
  int64_t pos = e;
  bool stopped = false;
  core::Status failed = core::Status::ok();
  while (true) {
    const int64_t next = (pos / chunk + 1) * chunk;
    if (next >= n) break;
    if (should_stop()) {
      stopped = true;
      break;
    }
    failed =
        engine.prefill(std::span<const int32_t>(served).subspan(size_t(pos), size_t(next - pos)));
    if (!failed.is_ok()) break;
    pos = next;
  }

  Prepared p;
  p.session = c.session;
  p.sampling = r.sampling;
  p.stop_ids = stop_ids_;
  if (!stopped && failed.is_ok()) {
    engine::GenerationOptions opts;
    opts.max_tokens = r.max_tokens;
    opts.stop_ids = stop_ids_;
    opts.sampling = r.sampling;
    opts.on_token = [&](int32_t token) {
      cache::CachedToken t;
      t.token = token;
      if (!is_stop(stop_ids_, token)) {
        TokenEvent ev;
        ev.token = token;
        fill_token_logprobs(engine.logits(), kTopKept, &ev);
        t.logprob = ev.logprob;
        t.top = std::move(ev.top);
      }
      p.tokens.push_back(std::move(t));
      if (should_stop()) {
        stopped = true;
        return false;
      }
      return true;
    };
    auto result =
        engine::generate(engine, std::span<const int32_t>(served).subspan(size_t(pos)), opts);
    if (!result) {
      failed = result.error();
    } else {
      p.finish = result->finish;
      // A stop asked after the summary's last token does not cut it.
      stopped = result->finish == engine::FinishReason::kStopped;
    }
  }
  // The conversation as it was: its end anchor's sections, the engine at its end (the rows
  // above it are scratch, as after any generation that stopped there).
  core::Status back = back_to_end();
  if (!failed.is_ok() || !back.is_ok()) {
    ++stats_.failed;
    tried_session_ = c.session;
    tried_record_.assign(c.record.begin(), c.record.end());
    return failed.is_ok() ? back : failed;
  }
  if (stopped) {
    ++stats_.stopped;
    return core::Status::ok();
  }
  p.served = std::move(served);
  prepared_ = std::move(p);
  stats_.prepared_end = e;
  tried_session_ = c.session;
  tried_record_.assign(c.record.begin(), c.record.end());
  ++stats_.prepared;
  return core::Status::ok();
}

std::optional<cache::CachedResponse> SummaryAhead::answer(const GenerationJob& job,
                                                          std::span<const int32_t> served,
                                                          const std::string& session) {
  if (!prepared_ || session != prepared_->session || job.constraint ||
      !std::equal(served.begin(), served.end(), prepared_->served.begin(), prepared_->served.end()))
    return std::nullopt;
  const Prepared& p = *prepared_;
  if (!same_sampling(job.sampling, p.sampling) || job.stop_ids != p.stop_ids ||
      job.top_logprobs > kTopKept || job.max_tokens <= 0)
    return std::nullopt;
  // A seeded draw is reproducible only from its own seed; a greedy one from any.
  if (job.sampling.temperature > 0.0 && job.seed_given) return std::nullopt;
  // The summary must reach the request's end: a stop id, or the request's max_tokens.
  const bool ended =
      p.finish == engine::FinishReason::kStopToken || p.finish == engine::FinishReason::kCapacity;
  if (!ended && int64_t(p.tokens.size()) < job.max_tokens) return std::nullopt;

  cache::CachedResponse out;
  out.finish_reason = job_end_name(JobEnd::kLength);
  for (const cache::CachedToken& t : p.tokens) {
    if (int64_t(out.tokens.size()) == job.max_tokens) break;
    cache::CachedToken o;
    o.token = t.token;
    const bool stop = is_stop(p.stop_ids, t.token);
    if (job.top_logprobs >= 0 && !stop) {
      o.logprob = t.logprob;
      o.top.assign(t.top.begin(),
                   t.top.begin() + std::min<size_t>(t.top.size(), size_t(job.top_logprobs)));
    }
    out.tokens.push_back(std::move(o));
    if (stop) {
      out.finish_reason = job_end_name(JobEnd::kStopToken);
      break;
    }
    if (job.stop_after && job.stop_after(t.token)) {
      out.finish_reason = job_end_name(JobEnd::kStopString);
      break;
    }
  }
  ++stats_.served;
  return out;
}

void SummaryAhead::clear() {
  prepared_.reset();
  stats_.prepared_end = 0;
  tried_session_.clear();
  tried_record_.clear();
}

}  // namespace anchorage::server
