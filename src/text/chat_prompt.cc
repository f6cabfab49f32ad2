#include "text/chat_prompt.h"

#include <string_view>
#include <utility>

#include "text/python_json.h"

namespace anchorage::text {
namespace {

using Json = nlohmann::ordered_json;

core::Status field_error(const std::string& field, std::string_view why) {
  return core::Status::invalid_argument(field + ": " + std::string(why));
}

// A value of the wrong JSON type: the reason tells the server to answer invalid_type (the
// message's wording is for people, not for classifying).
core::Status type_error(const std::string& field, std::string_view why) {
  return core::Status::invalid_argument(core::Reason::kWrongType, field + ": " + std::string(why));
}

std::string indexed(const std::string& base, size_t i) {
  return base + "[" + std::to_string(i) + "]";
}

// Returns the member or nullptr when it is absent.
const Json* member(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

core::Result<ChatRole> parse_role(const Json& message, const std::string& field) {
  const Json* role = member(message, "role");
  if (role == nullptr) return field_error(field, "missing");
  if (!role->is_string()) return type_error(field, "must be a string");
  const auto& r = role->get_ref<const std::string&>();
  if (r == "system") return ChatRole::kSystem;
  if (r == "user") return ChatRole::kUser;
  if (r == "assistant") return ChatRole::kAssistant;
  if (r == "tool") return ChatRole::kTool;
  return field_error(field, "unknown role (expected system, user, assistant or tool)");
}

// content: string, null/absent -> "", or a list of text parts joined with "\n".
core::Status parse_content(const Json& message, const std::string& field, std::string* out) {
  const Json* content = member(message, "content");
  if (content == nullptr || content->is_null()) return core::Status::ok();
  if (content->is_string()) {
    *out = content->get_ref<const std::string&>();
    return core::Status::ok();
  }
  if (!content->is_array()) return type_error(field, "must be a string, an array or null");
  for (size_t j = 0; j < content->size(); ++j) {
    const Json& part = (*content)[j];
    const std::string part_field = indexed(field, j);
    if (!part.is_object()) return type_error(part_field, "must be an object");
    const Json* type = member(part, "type");
    if (type == nullptr || !type->is_string() || type->get_ref<const std::string&>() != "text") {
      return field_error(part_field + ".type", "only \"text\" parts are supported");
    }
    const Json* text = member(part, "text");
    if (text == nullptr || !text->is_string()) {
      return type_error(part_field + ".text", "must be a string");
    }
    if (j > 0) out->push_back('\n');
    *out += text->get_ref<const std::string&>();
  }
  return core::Status::ok();
}

// The text the template prints for `arguments`: a string verbatim, anything else via tojson.
core::Status print_arguments(const Json& arguments, const std::string& field,
                             const ChatRequestOptions& options, std::string* out) {
  if (arguments.is_string()) {
    const auto& text = arguments.get_ref<const std::string&>();
    if (options.parse_tool_arguments) {
      Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
      if ((parsed.is_object() || parsed.is_array()) && !json_deeper_than(parsed, kMaxJsonDepth)) {
        append_python_json(parsed, out);
        return core::Status::ok();
      }
    }
    *out = text;
    return core::Status::ok();
  }
  if (json_deeper_than(arguments, kMaxJsonDepth)) return field_error(field, "nested too deeply");
  append_python_json(arguments, out);
  return core::Status::ok();
}

core::Status parse_tool_call(const Json& call, const std::string& field,
                             const ChatRequestOptions& options, ChatToolCall* out) {
  if (!call.is_object()) return type_error(field, "must be an object");
  // The template replaces the call by its `function` when that is truthy (a non-empty object).
  const Json* target = &call;
  std::string target_field = field;
  if (const Json* function = member(call, "function"); function != nullptr) {
    if (function->is_object()) {
      if (!function->empty()) {
        target = function;
        target_field = field + ".function";
      }
    } else if (!function->is_null()) {
      return type_error(field + ".function", "must be an object");
    }
  }
  const Json* name = member(*target, "name");
  if (name == nullptr || !name->is_string()) {
    return type_error(target_field + ".name", "must be a string");
  }
  out->name = name->get_ref<const std::string&>();
  const Json* arguments = member(*target, "arguments");
  if (arguments == nullptr) return field_error(target_field + ".arguments", "missing");
  return print_arguments(*arguments, target_field + ".arguments", options, &out->arguments);
}

core::Status parse_message(const Json& message, const std::string& field,
                           const ChatRequestOptions& options, ChatMessage* out) {
  if (!message.is_object()) return type_error(field, "must be an object");
  auto role = parse_role(message, field + ".role");
  if (!role) return role.error();
  out->role = *role;
  if (auto s = parse_content(message, field + ".content", &out->content); !s.is_ok()) return s;
  if (out->role != ChatRole::kAssistant) return core::Status::ok();

  if (const Json* reasoning = member(message, "reasoning_content"); reasoning != nullptr) {
    if (reasoning->is_string()) {
      out->reasoning_content = reasoning->get_ref<const std::string&>();
    } else if (!reasoning->is_null()) {
      return type_error(field + ".reasoning_content", "must be a string or null");
    }
  }
  const Json* calls = member(message, "tool_calls");
  if (calls == nullptr || calls->is_null()) return core::Status::ok();
  if (!calls->is_array()) return type_error(field + ".tool_calls", "must be an array or null");
  out->tool_calls.resize(calls->size());
  for (size_t j = 0; j < calls->size(); ++j) {
    const std::string call_field = indexed(field + ".tool_calls", j);
    auto s = parse_tool_call((*calls)[j], call_field, options, &out->tool_calls[j]);
    if (!s.is_ok()) return s;
  }
  return core::Status::ok();
}

core::Status parse_tools(const Json& body, std::vector<std::string>* out) {
  const Json* tools = member(body, "tools");
  if (tools == nullptr || tools->is_null()) return core::Status::ok();
  if (!tools->is_array()) return type_error("tools", "must be an array or null");
  out->reserve(tools->size());
  for (size_t i = 0; i < tools->size(); ++i) {
    const Json& tool = (*tools)[i];
    if (!tool.is_object()) return type_error(indexed("tools", i), "must be an object");
    if (json_deeper_than(tool, kMaxJsonDepth)) {
      return field_error(indexed("tools", i), "nested too deeply");
    }
    out->push_back(dump_python_json(tool));
  }
  return core::Status::ok();
}

core::Status parse_flags(const Json& body, ChatPrompt* out) {
  if (const Json* agp = member(body, "add_generation_prompt"); agp != nullptr && !agp->is_null()) {
    if (!agp->is_boolean()) return type_error("add_generation_prompt", "must be a boolean");
    out->add_generation_prompt = agp->get<bool>();
  }
  const Json* kwargs = member(body, "chat_template_kwargs");
  if (kwargs == nullptr || kwargs->is_null()) return core::Status::ok();
  if (!kwargs->is_object()) return type_error("chat_template_kwargs", "must be an object");
  if (const Json* et = member(*kwargs, "enable_thinking"); et != nullptr && !et->is_null()) {
    if (!et->is_boolean()) {
      return type_error("chat_template_kwargs.enable_thinking", "must be a boolean");
    }
    out->enable_thinking = et->get<bool>();
  }
  return core::Status::ok();
}

core::Result<ChatPrompt> parse_checked(const Json& body, const ChatRequestOptions& options) {
  if (!body.is_object()) return type_error("request", "must be a JSON object");
  ChatPrompt prompt;
  const Json* messages = member(body, "messages");
  if (messages == nullptr) return field_error("messages", "missing");
  if (!messages->is_array()) return type_error("messages", "must be an array");
  if (messages->empty()) return field_error("messages", "must not be empty");
  prompt.messages.resize(messages->size());
  for (size_t i = 0; i < messages->size(); ++i) {
    auto s = parse_message((*messages)[i], indexed("messages", i), options, &prompt.messages[i]);
    if (!s.is_ok()) return s;
  }
  if (auto s = parse_tools(body, &prompt.tools); !s.is_ok()) return s;
  if (auto s = parse_flags(body, &prompt); !s.is_ok()) return s;
  return prompt;
}

}  // namespace

bool json_deeper_than(const Json& value, int max_depth) {
  if (!value.is_structured()) return false;
  if (max_depth <= 0) return true;
  for (const auto& element : value) {
    if (json_deeper_than(element, max_depth - 1)) return true;
  }
  return false;
}

core::Result<ChatPrompt> parse_chat_request(const Json& body, const ChatRequestOptions& options) {
  // Every access above is type-checked first; the catch is the style rule's last line of
  // defence (docs/style.md §4): a library exception must not cross into the server.
  try {
    return parse_checked(body, options);
  } catch (const nlohmann::json::exception&) {
    return core::Status::invalid_argument("request: malformed chat request");
  }
}

}  // namespace anchorage::text
