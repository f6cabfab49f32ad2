// llama-server's own routes, in its shapes, for the clients and scripts written against it
// (routes.h; docs/http-api.md "llama.cpp routes"): POST /tokenize, POST /detokenize, GET /props.
// None of them touches the engine: the tokenizer's const methods are thread-safe.

#include <string>
#include <vector>

#include "server/json_fields.h"
#include "server/openai_json.h"
#include "server/responder.h"
#include "server/routes.h"
#include "server/service.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace anchorage::server {
namespace {

// A piece as llama-server writes it: its text when its bytes are valid UTF-8 on their own,
// else the bytes as an int array (a lone byte of a multi-byte character has no text).
Json piece_json(std::string_view bytes) {
  if (text::utf8_is_valid(bytes)) return Json(std::string(bytes));
  Json a = Json::array();
  for (const unsigned char c : bytes) a.push_back(int(c));
  return a;
}

}  // namespace

void handle_tokenize(Service& svc, const HttpRequest& req, HttpResponse& res) {
  Json body;
  if (auto e = parse_json_body(req.body, &body)) return answer_error(svc, res, *e);
  FieldReader r(body);
  std::optional<std::string> content;
  r.read_string("content", &content);
  // add_special would add the model's BOS; Qwen's tokenizers add none, so it changes nothing
  // and is only checked. Special tokens in the text are always parsed as such.
  bool add_special = false, with_pieces = false;
  r.read_bool("add_special", &add_special);
  r.read_bool("with_pieces", &with_pieces);
  if (r.ok() && !content) r.fail(field_error("content", "missing", "missing_field"));
  if (!r.ok()) return answer_error(svc, res, *r.error());
  const std::vector<int32_t> ids = svc.tokenizer.encode(*content);
  Json tokens = Json::array();
  for (const int32_t id : ids) {
    if (with_pieces) {
      tokens.push_back(Json{{"id", id}, {"piece", piece_json(svc.tokenizer.token_bytes(id))}});
    } else {
      tokens.push_back(id);
    }
  }
  res.set_content(dump_json(Json{{"tokens", std::move(tokens)}}), "application/json");
}

void handle_detokenize(Service& svc, const HttpRequest& req, HttpResponse& res) {
  Json body;
  if (auto e = parse_json_body(req.body, &body)) return answer_error(svc, res, *e);
  FieldReader r(body);
  const Json* tokens = r.find("tokens");
  if (tokens == nullptr)
    return answer_error(svc, res, field_error("tokens", "missing", "missing_field"));
  if (!tokens->is_array()) {
    return answer_error(svc, res,
                        field_error("tokens", "must be an array of token ids", "invalid_type"));
  }
  std::vector<int32_t> ids;
  ids.reserve(tokens->size());
  const int64_t vocab = svc.tokenizer.vocab_size();
  for (size_t i = 0; i < tokens->size(); ++i) {
    const auto id = as_int_in((*tokens)[i], 0, vocab - 1);
    if (!id) {
      return answer_error(svc, res,
                          field_error("tokens[" + std::to_string(i) + "]",
                                      "must be a token id in [0, " + std::to_string(vocab) + ")"));
    }
    ids.push_back(int32_t(*id));
  }
  // Bytes that are not UTF-8 (a cut-off character) come out as U+FFFD, as llama-server's do.
  res.set_content(dump_json(Json{{"content", svc.tokenizer.decode(ids)}}), "application/json");
}

void handle_props(Service& svc, const HttpRequest&, HttpResponse& res) {
  const ServerOptions& o = svc.options;
  Json params = Json::object();
  // What a request that names none of them gets (request_parser.cc's defaults).
  params["n_predict"] = o.max_tokens_cap;
  params["max_tokens"] = o.default_max_tokens;
  params["temperature"] = 1.0;
  params["top_k"] = 0;
  params["top_p"] = 1.0;
  params["min_p"] = 0.0;
  params["reasoning_budget"] = o.reasoning_budget;
  Json settings = Json{{"id", 0}, {"n_ctx", svc.capacity}, {"params", std::move(params)}};
  Json body = Json::object();
  body["default_generation_settings"] = std::move(settings);
  body["total_slots"] = 1;
  body["model_alias"] = o.model_name;
  body["model_path"] = o.model_path;
  body["n_vocab"] = svc.vocab_size;
  // The family the server renders (text/chat_template_family.h), not a Jinja source: prompts
  // are built by our own renderer of that family.
  body["chat_template"] = o.chat_template;
  if (!svc.stop_ids.empty())
    body["eos_token"] = std::string(svc.tokenizer.token_bytes(svc.stop_ids.front()));
  body["modalities"] = Json{{"vision", false}, {"audio", false}};
  body["build_info"] = "anchorage";
  res.set_content(dump_json(body), "application/json");
}

}  // namespace anchorage::server
