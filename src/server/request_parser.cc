#include "server/request_parser.h"

#include <climits>
#include <string>
#include <vector>

#include "server/json_fields.h"

namespace anchorage::server {
namespace {

// Fields both endpoints share: model, stream, token budget, sampling, stop, n.
void read_common(FieldReader& r, CompletionRequest* out) {
  std::optional<std::string> model;
  r.read_string("model", &model);
  if (model) out->model = *model;

  r.read_bool("stream", &out->stream);
  r.read_bool("return_progress", &out->return_progress);
  if (const Json* so = r.find("stream_options"); so != nullptr && r.ok()) {
    if (!so->is_object()) {
      r.fail(field_error("stream_options", "must be an object", "invalid_type"));
    } else {
      FieldReader options(*so);
      options.read_bool("include_usage", &out->include_usage);
      if (!options.ok())
        r.fail(field_error("stream_options.include_usage", "must be a boolean", "invalid_type"));
    }
  }

  // max_completion_tokens replaced max_tokens in OpenAI's chat API; the newer name wins.
  r.read_int("max_tokens", 0, INT32_MAX, &out->max_tokens);
  r.read_int("max_completion_tokens", 0, INT32_MAX, &out->max_tokens);

  // OpenAI's default temperature is 1; 0 is greedy.
  out->sampling.temperature = 1.0;
  r.read_number("temperature", 0.0, 2.0, &out->sampling.temperature);
  r.read_number("top_p", 0.0, 1.0, &out->sampling.top_p);
  if (r.ok() && !(out->sampling.top_p > 0.0)) {
    r.fail(field_error("top_p", "must be a number in (0, 1]"));
  }
  std::optional<int64_t> top_k;
  r.read_int("top_k", -1, INT32_MAX, &top_k);  // vLLM's -1 means off, as our 0
  if (top_k) out->sampling.top_k = *top_k < 0 ? 0 : *top_k;
  r.read_number("min_p", 0.0, 1.0, &out->sampling.min_p);
  std::optional<int64_t> seed;
  r.read_int("seed", INT64_MIN, INT64_MAX, &seed);
  if (seed) {
    out->sampling.seed = uint64_t(*seed);
    out->has_seed = true;
  }

  r.read_bool("ignore_eos", &out->ignore_eos);

  std::optional<int64_t> n;
  r.read_int("n", INT64_MIN, INT64_MAX, &n);
  if (n && *n != 1) r.fail(field_error("n", "only n = 1 is supported", "unsupported_value"));

  if (const Json* rf = r.find("response_format"); rf != nullptr && r.ok()) {
    const auto type = rf->is_object() ? rf->find("type") : rf->end();
    if (!rf->is_object() || type == rf->end() || *type != "text") {
      r.fail(field_error("response_format", "only {\"type\": \"text\"} is supported",
                         "unsupported_value"));
    }
  }
}

void read_stop(FieldReader& r, CompletionRequest* out) {
  const Json* stop = r.find("stop");
  if (stop == nullptr || !r.ok()) return;
  auto add = [&](const Json& s, const std::string& field) {
    if (!s.is_string()) return r.fail(field_error(field, "must be a string", "invalid_type"));
    const auto& text = s.get_ref<const std::string&>();
    if (text.empty()) return r.fail(field_error(field, "must not be empty"));
    if (text.size() > kMaxStopBytes) {
      return r.fail(
          field_error(field, "must be at most " + std::to_string(kMaxStopBytes) + " bytes"));
    }
    out->stop.push_back(text);
  };
  if (stop->is_string()) return add(*stop, "stop");
  if (!stop->is_array()) {
    return r.fail(field_error("stop", "must be a string or an array of strings", "invalid_type"));
  }
  if (stop->size() > kMaxStopStrings) {
    return r.fail(field_error(
        "stop", "at most " + std::to_string(kMaxStopStrings) + " stop strings are supported"));
  }
  for (size_t i = 0; i < stop->size() && r.ok(); ++i) {
    add((*stop)[i], "stop[" + std::to_string(i) + "]");
  }
}

// The function names of the request's tools (entries that have one).
std::vector<std::string> tool_names(const Json& body) {
  std::vector<std::string> names;
  const auto tools = body.find("tools");
  if (tools == body.end() || !tools->is_array()) return names;
  for (const Json& tool : *tools) {
    if (!tool.is_object()) continue;
    const auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object()) continue;
    const auto name = fn->find("name");
    if (name != fn->end() && name->is_string()) names.push_back(name->get<std::string>());
  }
  return names;
}

// tools: each {"type": "function", "function": {"name": non-empty string, "parameters": object}}.
// The chat template renders whatever it is given, so a tool without a name or with a schema
// that is not an object would reach the model as a broken tool list: refuse it here, naming
// the field.
std::optional<ApiError> check_tools(const Json& body) {
  const auto tools = body.find("tools");
  if (tools == body.end() || !tools->is_array()) return std::nullopt;  // the chat parser says
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    const std::string at = "tools[" + std::to_string(i) + "]";
    if (!tool.is_object()) return field_error(at, "must be an object", "invalid_type");
    const auto type = tool.find("type");
    if (type == tool.end() || !type->is_string() || *type != "function") {
      return field_error(at + ".type", "must be \"function\"");
    }
    const auto fn = tool.find("function");
    if (fn == tool.end() || !fn->is_object()) {
      return field_error(at + ".function", "must be an object", "invalid_type");
    }
    const auto name = fn->find("name");
    if (name == fn->end() || !name->is_string()) {
      return field_error(at + ".function.name", "must be a string", "invalid_type");
    }
    if (name->get_ref<const std::string&>().empty()) {
      return field_error(at + ".function.name", "must not be empty");
    }
    const auto params = fn->find("parameters");
    if (params != fn->end() && !params->is_null() && !params->is_object()) {
      return field_error(at + ".function.parameters", "must be an object (a JSON Schema)",
                         "invalid_type");
    }
  }
  return std::nullopt;
}

// tool_choice: "none" | "auto" | "required" | {"type": "function", "function": {"name": n}}.
void read_tool_choice(FieldReader& r, const Json& body, CompletionRequest* out) {
  const bool has_tools = !out->chat.tools.empty();
  out->parse_tool_calls = has_tools;
  const Json* choice = r.find("tool_choice");
  if (choice == nullptr || !r.ok()) return;
  if (choice->is_string()) {
    const auto& c = choice->get_ref<const std::string&>();
    if (c == "none") {
      out->parse_tool_calls = false;
      out->constraint.tool_choice = ToolChoiceMode::kNone;
    } else if (c == "required" && has_tools) {
      out->constraint.tool_choice = ToolChoiceMode::kRequired;
    } else if (c == "required") {
      r.fail(field_error("tool_choice", "\"required\" needs tools"));
    } else if (c != "auto" && c != "required") {
      r.fail(field_error("tool_choice", "must be \"none\", \"auto\", \"required\" or an object"));
    }
    return;
  }
  if (!choice->is_object()) {
    return r.fail(field_error("tool_choice", "must be a string or an object", "invalid_type"));
  }
  const Json* name = nullptr;
  {
    const auto fn = choice->find("function");
    if (fn != choice->end() && fn->is_object()) {
      const auto n = fn->find("name");
      if (n != fn->end() && n->is_string()) name = &*n;
    }
  }
  if (name == nullptr) {
    return r.fail(field_error("tool_choice.function.name", "must be a string"));
  }
  for (const std::string& n : tool_names(body)) {
    if (n == name->get_ref<const std::string&>()) {
      out->constraint.tool_choice = ToolChoiceMode::kNamed;
      out->constraint.function_name = n;
      return;
    }
  }
  r.fail(field_error("tool_choice.function.name", "names no tool in tools"));
}

// reasoning_effort: OpenAI's knob; "none" turns thinking off unless chat_template_kwargs
// already says what enable_thinking is (the explicit template argument wins).
void read_reasoning_effort(FieldReader& r, const Json& body, CompletionRequest* out) {
  std::optional<std::string> effort;
  r.read_string("reasoning_effort", &effort);
  if (!effort || !r.ok()) return;
  static constexpr const char* kEfforts[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
  bool known = false;
  for (const char* e : kEfforts) known = known || *effort == e;
  if (!known) {
    return r.fail(
        field_error("reasoning_effort", "must be one of none, minimal, low, medium, high, xhigh"));
  }
  const auto kwargs = body.find("chat_template_kwargs");
  const bool explicit_thinking = kwargs != body.end() && kwargs->is_object() &&
                                 kwargs->contains("enable_thinking") &&
                                 !(*kwargs)["enable_thinking"].is_null();
  if (*effort == "none" && !explicit_thinking) out->chat.enable_thinking = false;
}

}  // namespace

std::optional<ApiError> parse_chat_body(std::string_view body,
                                        std::optional<std::string_view> session_header,
                                        CompletionRequest* out) {
  *out = CompletionRequest{};
  out->endpoint = Endpoint::kChat;
  Json json;
  if (auto e = parse_json_body(body, &json)) return e;
  auto chat = text::parse_chat_request(json);
  if (!chat) return error_from_status(chat.error(), "messages");
  if (auto e = check_tools(json)) return e;
  out->chat = std::move(chat.value());

  FieldReader r(json);
  read_common(r, out);
  read_stop(r, out);
  r.read_bool("logprobs", &out->logprobs);
  std::optional<int64_t> top;
  r.read_int("top_logprobs", 0, kMaxTopLogprobs, &top);
  if (top) out->top_logprobs = int(*top);
  if (r.ok() && out->top_logprobs > 0 && !out->logprobs) {
    r.fail(field_error("top_logprobs", "needs logprobs: true"));
  }
  read_tool_choice(r, json, out);
  read_reasoning_effort(r, json, out);
  std::optional<int64_t> budget;
  r.read_int("reasoning_budget", 0, INT32_MAX, &budget);
  if (budget) out->constraint.reasoning_budget = *budget;
  if (!r.ok()) return r.error();
  return resolve_session(json, session_header, &out->session);
}

std::optional<ApiError> parse_completion_body(std::string_view body,
                                              std::optional<std::string_view> session_header,
                                              CompletionRequest* out) {
  *out = CompletionRequest{};
  out->endpoint = Endpoint::kCompletion;
  Json json;
  if (auto e = parse_json_body(body, &json)) return e;
  FieldReader r(json);

  // prompt: a string, an array of token ids, or a one-element array of either (OpenAI's batch
  // form with a batch of one; larger batches are n > 1 in disguise).
  const Json* prompt = r.find("prompt");
  if (prompt == nullptr) return field_error("prompt", "missing", "missing_field");
  if (prompt->is_array() && prompt->size() == 1 &&
      ((*prompt)[0].is_string() || (*prompt)[0].is_array())) {
    prompt = &(*prompt)[0];
  }
  if (prompt->is_string()) {
    out->prompt_text = prompt->get<std::string>();
  } else if (prompt->is_array()) {
    out->prompt_is_ids = true;
    out->prompt_ids.reserve(prompt->size());
    for (size_t i = 0; i < prompt->size(); ++i) {
      const auto id = as_int_in((*prompt)[i], 0, INT32_MAX);
      if (!id) {
        return field_error("prompt[" + std::to_string(i) + "]",
                           "must be a token id (an integer >= 0)", "invalid_type");
      }
      out->prompt_ids.push_back(int32_t(*id));
    }
  } else {
    return field_error("prompt", "must be a string or an array of token ids", "invalid_type");
  }

  read_common(r, out);
  read_stop(r, out);
  std::optional<int64_t> logprobs;
  r.read_int("logprobs", 0, kMaxTopLogprobs, &logprobs);
  if (logprobs) {
    out->logprobs = true;
    out->top_logprobs = int(*logprobs);
  }
  bool echo = false;
  r.read_bool("echo", &echo);
  if (r.ok() && echo) r.fail(field_error("echo", "echo is not supported", "unsupported_value"));
  std::optional<int64_t> best_of;
  r.read_int("best_of", INT64_MIN, INT64_MAX, &best_of);
  if (r.ok() && best_of && *best_of != 1) {
    r.fail(field_error("best_of", "only best_of = 1 is supported", "unsupported_value"));
  }
  std::optional<std::string> suffix;
  r.read_string("suffix", &suffix);
  if (r.ok() && suffix && !suffix->empty()) {
    r.fail(field_error("suffix", "suffix is not supported", "unsupported_value"));
  }
  if (!r.ok()) return r.error();
  return resolve_session(json, session_header, &out->session);
}

}  // namespace anchorage::server
