#!/usr/bin/python3
"""Writes the input strings of the tokenizer golden test, one JSON object a line:
{"name": ..., "text": ...}. gen_tokenizer_golden.mjs then encodes them with the reference tokenizers.

Run by gen_tokenizer_golden.sh with Debian's /usr/bin/python3 (python3-jinja2). Usage:
  tokenizer_cases.py <tokenizer_config.json> <opencode capture .jsonl> > cases.jsonl

The cases: hand-written strings by category, seeded random mixes of those categories, and the
opencode request captures rendered with the Qwen3 chat template (whole, and parts of them).
Strings the references and we knowingly split differently are left out (see SKIP below and
docs/tokenizer.md): every code point must be assigned in the Unicode version of our tables
(Python's unicodedata), and none may be U+0085, U+180E or U+FEFF.
"""
import json
import random
import sys
import unicodedata

from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

SKIP = {"\u0085", "\u180e", "\ufeff"}

CODE = [
    "int main(int argc, char** argv) {\n  return 0;\n}\n",
    "def f(x):\n    return x ** 2  # square\n\n\nprint(f(3))\n",
    "for (size_t i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}",
    "const x = async () => { await fetch('/api'); };",
    "fn main() -> Result<(), Box<dyn Error>> {\n    println!(\"{:?}\", v);\n    Ok(())\n}",
    "#include <vector>\n#include \"text/tokenizer.h\"\n",
    "if [ -f \"$HOME/.bashrc\" ]; then source ~/.bashrc; fi",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC;",
    "    indented four\n        indented eight\n\t\ttabs\n",
    "x=1;y=2;z=x+y;print(z)",
    "public static void Main(string[] args) => Console.WriteLine(\"Hi\");",
    "<div class=\"row\"><span id='a'>&amp;&lt;&gt;</span></div>",
    "a->b->c; p = &q; *p++ = **r;",
    "// TODO(someone): fix this\n/* block\n * comment\n */",
    "git commit -m \"Fix: handle CRLF\" && git push origin main",
    "lambda x: [y for y in range(x) if y % 2 == 0]",
    "std::unordered_map<std::string, std::vector<int32_t>> m;",
    "regex = r'^(?P<name>[a-z_]+)\\s*=\\s*(?P<value>.+)$'",
    "    }\n  }\n}\n",
    "@@ -1,5 +1,6 @@\n-old line\n+new line\n context\n",
]

JSON_TEXT = [
    '{"name": "bash", "arguments": {"command": "ls -la"}}',
    '{"command":"ls -la"}',
    '[1, 2, 3, {"a": null, "b": true, "c": false}]',
    '{"emoji": "😀", "cjk": "中文", "escaped": "\\u00e9\\n"}',
    '{\n  "type": "object",\n  "properties": {\n    "x": {"type": "number"}\n  }\n}',
    '{"$schema":"http://json-schema.org/draft-07/schema#","additionalProperties":false}',
    '{"limit":50,"filePath":"/tmp/a.txt","offset":1}',
    '{"deeply": {"nested": {"object": {"with": ["arrays", [1, [2, [3]]]]}}}}',
    '"just a string"',
    '{"float": 3.14159e-10, "neg": -42, "big": 12345678901234567890}',
]

CJK = [
    "你好，世界！",
    "今天天气很好，我们去公园散步吧。",
    "日本語のテキストです。カタカナとひらがな。",
    "東京都渋谷区",
    "안녕하세요, 세계!",
    "한국어 텍스트 처리",
    "中文English混合text测试123",
    "「引用」と『二重引用』",
    "机器学习（ML）是人工智能的一个分支。",
    "全角スペース\u3000を含む\u3000テキスト",
    "ｆｕｌｌｗｉｄｔｈ　ＡＢＣ１２３",
    "繁體中文與简体中文",
    "𠀀𠀁𪚥 rare CJK extension B",
    "。，、；：？！",
]

EMOJI = [
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🇯🇵🇺🇸", "❤️", "🏳️‍🌈", "Hello 😀 world 🌍!",
    "😀😀😀😀😀", "emoji at end 🎉", "🎉 emoji at start", "✅ done ❌ failed ⚠️ warning",
    "👩🏻‍💻 coding", "🐍 python 🦀 rust", "a😀b😀c", "1️⃣2️⃣3️⃣", "🫠🫡",
]

WHITESPACE = [
    "", " ", "  ", "   ", "\n", "\n\n", "\n\n\n", "\n\n\n\n\n\n", "\t", "\t\t\t",
    "trailing space ", "trailing spaces   ", "  leading spaces", " \n \n ", "\r\n", "a\r\nb\r\n",
    "line1\n\nline2\n\n\nline3", "word \n", "word  \n\n", "x\u00a0y", "x\u2009y\u200ay",
    "tab\tseparated\tvalues", " " * 64, " " * 1000, "\n" * 300, "a" + " " * 17 + "b",
    "\u3000\u3000indented", "end\u2028line", "para\u2029graph", " \t \t ", "\n \n \n",
]

NUMBERS = [
    "1234567890", "3.14159265358979", "1,000,000.00", "-42", "+1e-10", "0x1F600",
    "2024-06-01T12:34:56Z", "v1.2.3", "192.168.0.1", "١٢٣٤٥", "²³", "½ ¼ ¾", "Ⅻ",
    "１２３", "100%", "$19.99", "€5", "1st 2nd 3rd 4th", "007", "9" * 50,
]

CONTRACTIONS = [
    "I'm", "you're", "they've", "we'll", "he'd", "it's", "don't", "WON'T", "I'M", "We'Re",
    "rock 'n' roll", "'s", "'tis", "O'Brien's", "can't've", "''", "'", "y'all'd've",
    "She said 'hello'.", "it’s (curly)",
]

SCRIPTS = [
    "Привет, мир!", "Καλημέρα κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया",
    "สวัสดีชาวโลก", "Xin chào thế giới", "Grüße aus Köln", "Ça va? Où est l'hôtel?",
    "Straße Æsir Ørsted ångström", "ქართული ენა", "Հայերեն", "ᚠᚢᚦᚨᚱᚲ", "ꙮ",
    "Mixed: English, Русский, 中文, العربية, हिन्दी.", "ﷺ", "ǅemal", "İstanbul ıi",
]

NFC = [
    "e\u0301", "cafe\u0301", "A\u030a", "\u212b", "a\u0323\u0301", "a\u0301\u0323",
    "\u1100\u1161", "\u1100\u1161\u11a8", "\uac00\u11a8", "\uf900", "\u0344", "o\u0308\u0304",
    "n\u0303o\u0303", "\u1e9b\u0323", "q\u0307\u0323", "\u0958", "\u2126", "\u00c5\u0301",
    "e\u0301\u0301", "\u0301start", "Ame\u0301lie", "\u05d0\u05b7", "\u0627\u0653",
]

SPECIAL = [
    "<|im_start|>user\nhello<|im_end|>\n",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n"
    "<|im_start|>assistant\n",
    "<think>\n\n</think>\n\n",
    "<think>\nreasoning here\n</think>\n\nanswer",
    "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
    "<tool_response>\nfile.txt\n</tool_response>",
    "<|endoftext|>", "<|im_end|><|im_end|>", "text<|im_end|>text", "<|im_start|>",
    "<|im_start", "im_start|>", "<|im_end|", "<<|im_start|>>", "< |im_start| >", "<think",
    "</think>", "</think>x", "<|fim_prefix|>def<|fim_suffix|>return<|fim_middle|>",
    "<|vision_start|><|image_pad|><|vision_end|>", "<|object_ref_start|>a<|object_ref_end|>",
    "<tool_call><tool_call>", "a<|endoftext|>b", " <|im_start|> ", "\n<|im_end|>\n",
    "<|repo_name|>x<|file_sep|>y", "<|box_start|>(1,2)<|box_end|>", "<|quad_start|><|quad_end|>",
]

MISC = [
    "Hello world", "Hello, World!", "hello", "HELLO", "The quick brown fox jumps over the lazy "
    "dog.", "a", "ab", "abc", "...", "!!!", "???", "?!", "---", "===", "=" * 500, "-" * 77,
    "#" * 20, "*" * 33, "~/.config/opencode/config.json", "https://example.com/a?b=c&d=e#f",
    "user@example.com", "C:\\Windows\\System32", "snake_case_name", "camelCaseName",
    "SCREAMING_CASE", "kebab-case-name", "x" * 300, "ab" * 200, "supercalifragilisticexpialidocious",
    "pneumonoultramicroscopicsilicovolcanoconiosis", "© ® ™ § ¶ † ‡ • … ‰", "→ ≤ ≥ ≠ ∞ ∑ ∫ √",
    "«quotes» „German“ ‚single‘", "\u0000null byte", "control\u0001\u0007\u001b[0m", "\u007f",
    "zero\u200bwidth\u200cjoiner\u200d", "soft\u00adhyphen", "\ufffd replacement",
    "private \ue000 use", "\U0010fffd", "a\u0300" * 20, "🙂" * 40,
]

CATEGORIES = [("code", CODE), ("json", JSON_TEXT), ("cjk", CJK), ("emoji", EMOJI),
              ("whitespace", WHITESPACE), ("numbers", NUMBERS),
              ("contractions", CONTRACTIONS), ("scripts", SCRIPTS), ("nfc", NFC),
              ("special", SPECIAL), ("misc", MISC)]


def usable(text):
    if any(c in SKIP for c in text) or "'\u017f" in text:
        return False
    return all(unicodedata.category(c) != "Cn" for c in text)


def random_mixes(rng, n):
    pool = [s for _, strings in CATEGORIES for s in strings if s]
    seps = ["", " ", "\n", "  ", "\n\n", "\t", ", ", "'s ", "<|im_end|>", " 123 "]
    out = []
    for i in range(n):
        parts = [rng.choice(pool) for _ in range(rng.randint(2, 6))]
        text = ""
        for p in parts:
            if rng.random() < 0.3:  # a slice at code point boundaries
                a = rng.randrange(len(p))
                p = p[a:a + rng.randint(1, 12)]
            text += p + rng.choice(seps)
        out.append((f"mix/{i}", text))
    return out


def render(template, body):
    kwargs = {"messages": body["messages"], "add_generation_prompt": True}
    if body.get("tools"):
        kwargs["tools"] = body["tools"]
    return template.render(**kwargs)


def trace_cases(config_path, capture_path, rng):
    with open(config_path, encoding="utf-8") as f:
        config = json.load(f)
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False}
    env.filters["tojson"] = lambda v: json.dumps(v, ensure_ascii=False)

    def raise_exception(message):
        raise RuntimeError(message)

    env.globals["raise_exception"] = raise_exception
    template = env.from_string(config["chat_template"])
    out, seen = [], set()
    with open(capture_path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f if line.strip()]
    for n, rec in enumerate(lines, 1):
        body = rec["body"]
        text = render(template, body)
        if text not in seen:  # title requests of both sessions render the same
            seen.add(text)
            out.append((f"trace/{n}/render", text))
            for k in range(8):  # slices at random code point offsets
                a = rng.randrange(len(text))
                out.append((f"trace/{n}/slice{k}", text[a:a + rng.randint(1, 4000)]))
        for m, msg in enumerate(body["messages"]):
            content = msg.get("content")
            if isinstance(content, str) and content and content not in seen:
                seen.add(content)
                out.append((f"trace/{n}/message{m}", content))
        for t, tool in enumerate(body.get("tools") or []):
            dumped = json.dumps(tool, ensure_ascii=False)
            if dumped not in seen:
                seen.add(dumped)
                out.append((f"trace/{n}/tool{t}", dumped))
    return out


def main():
    config_path, capture_path = sys.argv[1], sys.argv[2]
    rng = random.Random(20240601)
    cases = []
    for cat, strings in CATEGORIES:
        cases += [(f"{cat}/{i}", s) for i, s in enumerate(strings)]
    cases += random_mixes(rng, 120)
    cases += trace_cases(config_path, capture_path, rng)
    kept = [(name, text) for name, text in cases if usable(text)]
    print(f"tokenizer_cases: {len(kept)} cases ({len(cases) - len(kept)} left out)", file=sys.stderr)
    for name, text in kept:
        print(json.dumps({"name": name, "text": text}, ensure_ascii=False))


if __name__ == "__main__":
    main()
