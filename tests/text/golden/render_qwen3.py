#!/usr/bin/python3
"""Renders an OpenAI chat request with the real Qwen3 chat template through Jinja2.

This is the reference the C++ renderer (src/text/qwen3_chat_template.cc) is tested against. It
sets Jinja2 up the way Hugging Face transformers does for chat templates:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension, a `tojson` filter that is json.dumps(ensure_ascii=False) with default separators and
no key sorting, and `raise_exception` as a global.

Before rendering, a request is normalised the way servers do for templates that expect string
content (and the way the C++ parser does, src/text/chat_prompt.h): content null or absent -> "",
a list of {"type": "text"} parts -> their texts joined with "\n". The template itself raises on
both, so this is the one place where we, not the template, decide.

Use it from other scripts:
    from render_qwen3 import load_chat_template, render_request
    template = load_chat_template("path/to/tokenizer_config.json")
    text = render_request(body, template)

or from the shell: render_qwen3.py --tokenizer-config FILE < body.json > prompt.txt
Run with Debian's /usr/bin/python3 (python3-jinja2).
"""

import argparse
import copy
import json
import sys

from jinja2.exceptions import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def load_chat_template(tokenizer_config_path):
    with open(tokenizer_config_path, encoding="utf-8") as f:
        return json.load(f)["chat_template"]


def _tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    # transformers' chat-template tojson: json.dumps, not Jinja2's HTML-safe built-in filter.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def _raise_exception(message):
    raise TemplateError(message)


_compiled = {}


def compile_template(template_text):
    if template_text not in _compiled:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                            extensions=[loopcontrols])
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise_exception
        _compiled[template_text] = env.from_string(template_text)
    return _compiled[template_text]


def _reject_constant(name):
    raise ValueError("non-standard JSON constant " + name)


def _normalise_content(content):
    if content is None:
        return ""
    if isinstance(content, list):
        return "\n".join(part["text"] for part in content)
    return content


def normalise_messages(messages, parse_tool_arguments=False):
    """The content normalisation described above; with parse_tool_arguments (vLLM's behaviour),
    string tool-call arguments that parse as a JSON object or array become that value, so the
    template prints them with tojson."""
    out = copy.deepcopy(messages)
    for m in out:
        m["content"] = _normalise_content(m.get("content"))
        if not parse_tool_arguments or not m.get("tool_calls"):
            continue
        for call in m["tool_calls"]:
            target = call["function"] if call.get("function") else call
            args = target.get("arguments")
            if isinstance(args, str):
                try:
                    parsed = json.loads(args, parse_constant=_reject_constant)
                except ValueError:
                    continue
                if isinstance(parsed, (dict, list)):
                    target["arguments"] = parsed
    return out


def render_request(body, template_text, parse_tool_arguments=False):
    """body: the request JSON as a dict (json.loads keeps key order). Reads messages, tools,
    add_generation_prompt (default true) and chat_template_kwargs (passed as template
    variables, as transformers does)."""
    kwargs = dict(body.get("chat_template_kwargs") or {})
    kwargs["messages"] = normalise_messages(body["messages"], parse_tool_arguments)
    kwargs["tools"] = body.get("tools")
    agp = body.get("add_generation_prompt")
    kwargs["add_generation_prompt"] = True if agp is None else agp
    return compile_template(template_text).render(**kwargs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer-config", required=True)
    parser.add_argument("--parse-tool-arguments", action="store_true")
    args = parser.parse_args()
    body = json.loads(sys.stdin.read())
    sys.stdout.write(render_request(body, load_chat_template(args.tokenizer_config),
                                    args.parse_tool_arguments))


if __name__ == "__main__":
    main()
