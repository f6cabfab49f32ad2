// The two ways a submitted job is answered: as an SSE stream of chunks (stream: true) or as
// one JSON body when the job is done. Both run on the request's HTTP thread, pull the job's
// TokenStream, build the choice (choice_builder.h) and render it (openai_json.h).
//
// A streamed answer cancels its job as soon as a write fails (the client went away): the
// engine stops at its next token. While the engine is busy elsewhere or in a long prefill,
// the stream writes an SSE comment every ServerOptions::sse_ping_ms, which is also how a
// client that left during the prefill is found. A whole answer, once its 200 is out, writes a
// space as often (leading JSON whitespace) for the same reason.
//
// Thread safety: called by one HTTP worker thread per request.
#pragma once

#include <memory>

#include "server/choice_builder.h"
#include "server/http_message.h"
#include "server/openai_json.h"
#include "server/service.h"
#include "server/token_stream.h"

namespace anchorage::server {

struct AnswerPlan {
  ResponseMeta meta;
  ChoiceOptions choice;
  SessionKey session;
};

// Both take over one ResponseTracker::begin() made by the caller and end it when done.
void answer_streamed(Service& svc, HttpResponse& res, std::shared_ptr<TokenStream> stream,
                     AnswerPlan plan);
// answer_whole waits for the first token (so a refusal still gets its status), then finishes
// as a chunked 200 that writes a space while it waits: a client that hung up is found by the
// failed write and its generation cancelled.
void answer_whole(Service& svc, HttpResponse& res, std::shared_ptr<TokenStream> stream,
                  AnswerPlan plan);

// Writes an ApiError as the response (status, JSON body, Retry-After for 429 and 503).
void answer_error(const Service& svc, HttpResponse& res, const ApiError& error);

}  // namespace anchorage::server
