// align_end on the real Qwen3 tokenizer and conversations rendered by the native template: the
// rows are built as the engine holds them (the prompt's tokens, then generated tokens, with the
// server's hidden spans), the client's copy is what a client sends back (parse_output's fields,
// optionally with compact arguments or without reasoning) rendered again. Exact copies are
// checked byte for byte with memcmp; each allowed difference also has a case where it is not
// allowed and the alignment must fail.
#include "text/end_alignment.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/output_parser.h"
#include "text/python_json.h"
#include "text/qwen3_chat_template.h"
#include "text/qwen3_tokenizer_data.h"

namespace anchorage::text {
namespace {

using Json = nlohmann::ordered_json;

const std::string kSpacedLs = R"({"name": "bash", "arguments": {"command": "ls -la"}})";
const std::string kPhrase =
    "\n\nConsidering the limited time by the user, I have to give the solution based on the "
    "thinking directly now.\n";

// A piece of a generation: its text, and whether the server hid it from the client.
struct Piece {
  std::string text;
  bool hidden = false;
};

// The rows as the engine holds them, built in order.
struct Rows {
  std::vector<int32_t> ids;
  std::vector<HiddenSpan> hidden;
  std::vector<GeneratedRegion> generated;

  void read(const Tokenizer& tok, std::string_view text) { tok.encode(text, &ids); }
  // One generated region; each piece is encoded on its own (the sampler's tokens need not be
  // the canonical encoding of the text).
  void generate(const Tokenizer& tok, const std::vector<Piece>& pieces) {
    const int64_t begin = static_cast<int64_t>(ids.size());
    for (const Piece& p : pieces) {
      const int64_t b = static_cast<int64_t>(ids.size());
      tok.encode(p.text, &ids);
      if (p.hidden) hidden.push_back({b, static_cast<int64_t>(ids.size())});
    }
    generated.push_back({begin, static_cast<int64_t>(ids.size())});
  }
  EndRecord record() const { return EndRecord{ids, hidden, generated}; }
};

// What the client saw of a generation.
std::string visible(const std::vector<Piece>& pieces) {
  std::string out;
  for (const Piece& p : pieces) {
    if (!p.hidden) out += p.text;
  }
  return out;
}

struct ClientStyle {
  bool send_reasoning = true;
  bool compact_arguments = false;  // JS JSON.stringify, as opencode re-sends them
};

// The assistant message a client sends back for the generated text.
Json assistant_message(std::string_view generated, const ClientStyle& style = {}) {
  const ParsedOutput p = parse_output(generated);
  Json m = {{"role", "assistant"}, {"content", p.content}};
  if (style.send_reasoning) m["reasoning_content"] = p.reasoning_content;
  if (!p.tool_calls.empty()) {
    m["tool_calls"] = Json::array();
    for (const ToolCall& c : p.tool_calls) {
      const std::string args =
          style.compact_arguments ? Json::parse(c.arguments).dump() : c.arguments;
      m["tool_calls"].push_back({{"id", "call_1"},
                                 {"type", "function"},
                                 {"function", {{"name", c.name}, {"arguments", args}}}});
    }
  }
  return m;
}

Json tool_message(std::string_view content) {
  return {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", content}};
}

Json user_message(std::string_view content) {
  return {{"role", "user"}, {"content", content}};
}

Json bash_tool() {
  return Json::parse(R"({"type": "function", "function": {"name": "bash", "description":
      "Runs a command.", "parameters": {"type": "object", "properties": {"command":
      {"type": "string"}}, "required": ["command"]}}})");
}

std::string render(const Json& body) {
  const core::Result<std::string> r = render_qwen3_chat(body);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().to_string());
  return r ? *r : std::string();
}

// Rows whose bytes end at or before `bytes` of the rows' text.
int64_t rows_within(const Tokenizer& tok, const std::vector<int32_t>& ids, size_t bytes) {
  size_t at = 0;
  int64_t rows = 0;
  for (int32_t id : ids) {
    at += tok.token_bytes(id).size();
    if (at > bytes) break;
    ++rows;
  }
  return rows;
}

class AlignEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    tok_ = testing::qwen3_tokenizer(&error);
    ASSERT_NE(tok_, nullptr) << error;
  }
  // A first request with the bash tool and one user message.
  Json first_body() const {
    Json body = {{"messages", Json::array()}, {"tools", Json::array({bash_tool()})}};
    body["messages"].push_back({{"role", "system"}, {"content", "You are a coding agent."}});
    body["messages"].push_back(user_message("list the files here"));
    return body;
  }
  const Tokenizer* tok_ = nullptr;
};

// The client sends back exactly what it got: the rows' text is a prefix of the prompt, byte for
// byte, and ends where the assistant's <|im_end|> starts (the end token was not forwarded).
TEST_F(AlignEnd, ExactCopyOfAToolCallTurn) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const std::vector<Piece> gen = {
      {"<think>\nThe user wants the files.\n</think>\n\nLet me list them.\n<tool_call>\n" +
       kSpacedLs + "\n</tool_call>"}};
  rows.generate(*tok_, gen);

  body["messages"].push_back(assistant_message(visible(gen)));
  body["messages"].push_back(tool_message("a.txt\nb.txt"));
  const std::string p = render(body);

  const EndAlignment a = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  const std::string rows_text = tok_->decode_bytes(rows.ids);
  ASSERT_EQ(a.prompt_bytes, rows_text.size());
  EXPECT_EQ(std::memcmp(p.data(), rows_text.data(), rows_text.size()), 0);
  EXPECT_EQ(p.compare(a.prompt_bytes, 10, "<|im_end|>"), 0);
  EXPECT_EQ(a.rows_matched, static_cast<int64_t>(rows.ids.size()));
  EXPECT_EQ(a.regions_reasoning_dropped, 0);

  // The rows ending after the end token align as well, one token further.
  rows.ids.push_back(*tok_->token_id("<|im_end|>"));
  const EndAlignment b = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(b.aligned) << b.why;
  EXPECT_EQ(b.prompt_bytes, a.prompt_bytes + 10);
}

// A copy that stops inside the rows does not align, and says how many rows it covers.
TEST_F(AlignEnd, CopyEndingMidwayDoesNotAlign) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const std::vector<Piece> gen = {{"<think>\nThinking.\n</think>\n\nThe files are a and b."}};
  rows.generate(*tok_, gen);
  const std::string rows_text = tok_->decode_bytes(rows.ids);

  // The rows' own text cut 5 bytes before its end.
  const std::string cut = rows_text.substr(0, rows_text.size() - 5);
  const EndAlignment a = align_end(*tok_, rows.record(), cut);
  EXPECT_FALSE(a.aligned);
  EXPECT_FALSE(a.why.empty());
  EXPECT_EQ(a.rows_matched, rows_within(*tok_, rows.ids, cut.size()));
  EXPECT_LT(a.rows_matched, static_cast<int64_t>(rows.ids.size()));

  // A client that sends back a shorter answer parts inside the generation.
  Json shorter = assistant_message("<think>\nThinking.\n</think>\n\nThe files are a");
  body["messages"].push_back(shorter);
  body["messages"].push_back(user_message("thanks"));
  const std::string p = render(body);
  const EndAlignment b = align_end(*tok_, rows.record(), p);
  EXPECT_FALSE(b.aligned);
  EXPECT_GE(b.rows_matched, rows.generated[0].begin);
  EXPECT_LT(b.rows_matched, rows.generated[0].end);
  // The empty prompt aligns nothing.
  EXPECT_FALSE(align_end(*tok_, rows.record(), "").aligned);
}

// A reasoning budget's close phrase is in the rows and not in the copy; the template writes its
// own newline before </think> where the phrase's newline sat.
TEST_F(AlignEnd, HiddenClosePhraseWithExtraNewline) {
  for (const std::string& reasoning : {std::string("Let me look."), std::string("Let me look. ")}) {
    SCOPED_TRACE(reasoning);
    Json body = first_body();
    Rows rows;
    rows.read(*tok_, render(body));
    const std::vector<Piece> gen = {{"<think>\n" + reasoning},
                                    {kPhrase, /*hidden=*/true},
                                    {"</think>\n\n<tool_call>\n" + kSpacedLs + "\n</tool_call>"}};
    rows.generate(*tok_, gen);
    body["messages"].push_back(assistant_message(visible(gen)));
    body["messages"].push_back(tool_message("a.txt"));
    const std::string p = render(body);
    ASSERT_NE(p.find(reasoning + "\n</think>"), std::string::npos);  // the template's newline

    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    const size_t assistant = p.rfind("<|im_start|>assistant\n<think>");
    EXPECT_EQ(a.prompt_bytes, p.find("<|im_end|>", assistant));

    // Not declared hidden, the phrase is text the copy lacks.
    Rows undeclared = rows;
    undeclared.hidden.clear();
    EXPECT_FALSE(align_end(*tok_, undeclared.record(), p).aligned);
  }
}

// Whitespace differs where a hidden span sits (here in an answer, away from every template tag,
// with the copy written directly as text), but the glue covers whitespace only.
TEST_F(AlignEnd, HiddenSpanGlueIsWhitespaceOnly) {
  const std::string head = render(first_body());
  Rows rows;
  rows.read(*tok_, head);
  rows.generate(*tok_,
                {{"Part one."}, {" [a note the client never saw] ", true}, {"\n\nPart two."}});
  const std::string tail = "<|im_end|>\n<|im_start|>user\nok<|im_end|>\n";
  for (const std::string& glue : {std::string(""), std::string(" "), std::string("\n\n\n")}) {
    const std::string p = head + "Part one." + glue + "Part two." + tail;
    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    EXPECT_EQ(a.prompt_bytes, p.size() - tail.size());
  }
  EXPECT_FALSE(align_end(*tok_, rows.record(), head + "Part one.\n\nPart 2." + tail).aligned);
  Rows undeclared = rows;
  undeclared.hidden.clear();
  EXPECT_FALSE(align_end(*tok_, undeclared.record(), head + "Part one. Part two." + tail).aligned);

  // A reasoning the client changed next to a hidden phrase is a real difference.
  Json body = first_body();
  Rows think;
  think.read(*tok_, render(body));
  think.generate(*tok_, {{"<think>\nPlan."}, {kPhrase, true}, {"</think>\n\nDone."}});
  body["messages"].push_back(assistant_message("<think>\nPlan!\n</think>\n\nDone."));
  body["messages"].push_back(tool_message("x"));  // keeps the reasoning rendered
  EXPECT_FALSE(align_end(*tok_, think.record(), render(body)).aligned);
}

// Where the rows end, the copy's whitespace belongs to the rows only when they end in a hidden
// span or flexible whitespace; otherwise it is new text the server tokenizes after the rows.
TEST_F(AlignEnd, WhitespaceAtTheEndOfTheRows) {
  Json body = first_body();
  const std::string head = render(body);
  Json next = body;
  next["messages"].push_back(
      assistant_message("<think>\nR.\n</think>\n\n<tool_call>\n" + kSpacedLs + "\n</tool_call>"));
  next["messages"].push_back(tool_message("ok"));
  const std::string p = render(next);
  const size_t close = p.find("</think>", head.size());
  ASSERT_NE(close, std::string::npos);
  {
    // The engine stopped right after the hidden phrase (its own newline ends the rows).
    Rows rows;
    rows.read(*tok_, head);
    rows.generate(*tok_, {{"<think>\nR."}, {kPhrase, true}});
    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    EXPECT_EQ(a.prompt_bytes, close);  // the template's "\n" stands for the phrase's
  }
  {
    // The rows end with </think>: the "\n\n" after it is the copy's, not the rows'.
    Rows rows;
    rows.read(*tok_, head);
    rows.generate(*tok_, {{"<think>\nR.\n</think>"}});
    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    EXPECT_EQ(a.prompt_bytes, close + 8);
  }
}

// opencode re-serialises arguments compactly; the template prints them verbatim. And the other
// way round: a model that wrote compact JSON, re-printed with json.dumps by the parser.
TEST_F(AlignEnd, CompactAndSpacedToolCallJson) {
  struct Case {
    std::string call;
    bool compact_client;
  };
  const std::vector<Case> cases = {
      {kSpacedLs, true},
      {R"({"name":"bash","arguments":{"command":"ls -la"}})", false},
      {R"({"name": "read", "arguments": {"filePath": "/a b/c.py", "limit": 50, "x": [1, 2]}})",
       true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.call);
    Json body = first_body();
    Rows rows;
    rows.read(*tok_, render(body));
    const std::vector<Piece> gen = {
        {"<think>\nA call.\n</think>\n\n<tool_call>\n" + c.call + "\n</tool_call>"}};
    rows.generate(*tok_, gen);
    ClientStyle style;
    style.compact_arguments = c.compact_client;
    body["messages"].push_back(assistant_message(visible(gen), style));
    body["messages"].push_back(tool_message("ok"));
    const std::string p = render(body);
    const std::string rows_text = tok_->decode_bytes(rows.ids);
    ASSERT_NE(p.compare(0, rows_text.size(), rows_text), 0);  // not a plain byte prefix

    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    const size_t assistant = p.rfind("<|im_start|>assistant\n<think>");
    EXPECT_EQ(a.prompt_bytes, p.find("<|im_end|>", assistant));

    // Without the generated region, the JSON whitespace is not allowed to differ.
    Rows as_prompt = rows;
    as_prompt.generated.clear();
    EXPECT_FALSE(align_end(*tok_, as_prompt.record(), p).aligned);
  }
}

// Whitespace inside a JSON string is the string's own.
TEST_F(AlignEnd, WhitespaceInsideAJsonStringMustMatch) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  rows.generate(*tok_, {{"<tool_call>\n" + kSpacedLs + "\n</tool_call>"}});
  Json m = assistant_message("<tool_call>\n" + kSpacedLs + "\n</tool_call>");
  m["tool_calls"][0]["function"]["arguments"] = R"({"command":"ls  -la"})";
  body["messages"].push_back(m);
  body["messages"].push_back(tool_message("ok"));
  const EndAlignment a = align_end(*tok_, rows.record(), render(body));
  EXPECT_FALSE(a.aligned);
  EXPECT_GT(a.rows_matched, rows.generated[0].begin);
}

// Open WebUI sends the answer back without its reasoning. The Qwen3 template renders such a
// message with no think block before the last user query, and with an empty one when it is the
// final message; a tool loop's message with reasoning "" gets none either.
TEST_F(AlignEnd, ReasoningDroppedByTheClient) {
  const std::vector<Piece> gen = {
      {"<think>\nTwo and two.\nMake four.\n</think>\n\nThe answer is 4."}};
  enum class Next { kUser, kNothing, kToolLoop };
  for (Next next : {Next::kUser, Next::kNothing, Next::kToolLoop}) {
    SCOPED_TRACE(static_cast<int>(next));
    Json body = first_body();
    Rows rows;
    rows.read(*tok_, render(body));
    std::vector<Piece> g = gen;
    if (next == Next::kToolLoop) g[0].text += "\n<tool_call>\n" + kSpacedLs + "\n</tool_call>";
    rows.generate(*tok_, g);
    ClientStyle style;
    style.send_reasoning = false;
    Json m = assistant_message(visible(g), style);
    if (next == Next::kToolLoop) m["reasoning_content"] = "";
    body["messages"].push_back(m);
    if (next == Next::kUser) body["messages"].push_back(user_message("and 3+3?"));
    if (next == Next::kToolLoop) body["messages"].push_back(tool_message("ok"));
    if (next == Next::kNothing) body["add_generation_prompt"] = false;
    const std::string p = render(body);
    if (next == Next::kNothing) {
      ASSERT_NE(p.find("<think>\n\n</think>\n\nThe answer is 4."), std::string::npos);
    }

    const EndAlignment a = align_end(*tok_, rows.record(), p);
    ASSERT_TRUE(a.aligned) << a.why;
    EXPECT_EQ(a.regions_reasoning_dropped, 1);
    EXPECT_EQ(a.prompt_bytes, p.find("<|im_end|>", p.rfind("The answer is 4.")));

    // The first pass alone does not align it.
    EndAlignOptions first_pass_only;
    first_pass_only.allow_dropped_reasoning = false;
    EXPECT_FALSE(align_end(*tok_, rows.record(), p, first_pass_only).aligned);
  }
}

// A client that sends reasoning back, but the template drops it at a new user turn (opencode's
// `run -c`): the same dropped-reasoning rule aligns it.
TEST_F(AlignEnd, ReasoningDroppedByTheTemplateAtANewUserTurn) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const std::vector<Piece> gen = {{"<think>\nEasy.\n</think>\n\nHere they are."}};
  rows.generate(*tok_, gen);
  body["messages"].push_back(assistant_message(visible(gen)));
  body["messages"].push_back(user_message("now show me hello.py"));
  const std::string p = render(body);
  ASSERT_EQ(p.find("Easy."), std::string::npos);
  const EndAlignment a = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  EXPECT_EQ(a.regions_reasoning_dropped, 1);
}

// A reasoning the client edited is a real difference: neither as the rows hold it nor dropped.
TEST_F(AlignEnd, EditedReasoningDoesNotAlign) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  rows.generate(*tok_,
                {{"<think>\nPlan A.\n</think>\n\n<tool_call>\n" + kSpacedLs + "\n</tool_call>"}});
  body["messages"].push_back(assistant_message("<think>\nPlan B.\n</think>\n\n<tool_call>\n" +
                                               kSpacedLs + "\n</tool_call>"));
  body["messages"].push_back(tool_message("ok"));
  EXPECT_FALSE(align_end(*tok_, rows.record(), render(body)).aligned);
}

// Two generated regions of one session: the first turn's reasoning left out by the template (it
// is before the last user query), the second turn's kept (a tool loop). This is the record the
// server keeps after it served the first alignment with the rows' own tokens.
TEST_F(AlignEnd, DroppedAndKeptRegionsInOneCopy) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const std::vector<Piece> gen1 = {{"<think>\nFirst.\n</think>\n\nHello."}};
  rows.generate(*tok_, gen1);
  body["messages"].push_back(assistant_message(visible(gen1)));
  body["messages"].push_back(user_message("list again"));
  std::string p = render(body);
  EndAlignment a = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  rows.read(*tok_, std::string_view(p).substr(a.prompt_bytes));

  const std::vector<Piece> gen2 = {
      {"<think>\nSecond.\n</think>\n\n<tool_call>\n" + kSpacedLs + "\n</tool_call>"}};
  rows.generate(*tok_, gen2);
  ClientStyle style;
  style.compact_arguments = true;
  body["messages"].push_back(assistant_message(visible(gen2), style));
  body["messages"].push_back(tool_message("a\nb"));
  p = render(body);
  ASSERT_EQ(p.find("First."), std::string::npos);
  ASSERT_NE(p.find("Second."), std::string::npos);
  a = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  EXPECT_EQ(a.regions_reasoning_dropped, 1);
  EXPECT_EQ(a.prompt_bytes, p.find("<|im_end|>", p.rfind("</tool_call>")));
}

// One non-whitespace byte of the answer differs; and whitespace outside every allowed place.
TEST_F(AlignEnd, RealDifferenceDoesNotAlign) {
  const std::vector<std::string> copies = {"The files are a and c.", "The files  are a and b.",
                                           "The files are a and b"};
  for (const std::string& copy : copies) {
    SCOPED_TRACE(copy);
    Json body = first_body();
    Rows rows;
    rows.read(*tok_, render(body));
    rows.generate(*tok_, {{"<think>\nOk.\n</think>\n\nThe files are a and b."}});
    rows.ids.push_back(*tok_->token_id("<|im_end|>"));
    body["messages"].push_back(assistant_message("<think>\nOk.\n</think>\n\n" + copy));
    body["messages"].push_back(tool_message("x"));
    const EndAlignment a = align_end(*tok_, rows.record(), render(body));
    EXPECT_FALSE(a.aligned);
    EXPECT_FALSE(a.why.empty());
    EXPECT_GT(a.rows_matched, rows.generated[0].begin);
    EXPECT_LT(a.rows_matched, static_cast<int64_t>(rows.ids.size()));
  }
}

// A copy that parts from the rows: the partial alignment is the last row boundary before the
// difference, and the prompt's bytes from there are the client's own rest.
TEST_F(AlignEnd, PartialAlignmentEndsOnTheLastRowBoundaryBeforeTheDifference) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  rows.generate(*tok_, {{"<think>\nOk.\n</think>\n\nThe files are alpha and beta."}});
  rows.ids.push_back(*tok_->token_id("<|im_end|>"));
  body["messages"].push_back(
      assistant_message("<think>\nOk.\n</think>\n\nThe files are alpha and gamma."));
  body["messages"].push_back(tool_message("x"));
  const std::string p = render(body);
  const EndAlignment a = align_end(*tok_, rows.record(), p);
  ASSERT_FALSE(a.aligned);
  // Past the reasoning, inside the answer, at or before where the copy parts.
  EXPECT_GT(a.partial_rows, rows.generated[0].begin);
  EXPECT_LE(a.partial_rows, a.rows_matched);
  const std::vector<int32_t> rest_ids(rows.ids.begin() + a.partial_rows, rows.ids.end());
  const std::string rest_rows = tok_->decode_bytes(rest_ids);
  const std::string rest_p = p.substr(a.partial_prompt_bytes);
  // Both rests start at the same text and part only at beta / gamma.
  const size_t b = rest_rows.find("beta"), g = rest_p.find("gamma");
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(g, std::string::npos);
  EXPECT_EQ(rest_rows.substr(0, b), rest_p.substr(0, g));
  EXPECT_LE(b, 5u);
  // The rows before the boundary and the prompt before its bytes are the same text.
  const std::vector<int32_t> head_ids(rows.ids.begin(), rows.ids.begin() + a.partial_rows);
  EXPECT_EQ(tok_->decode_bytes(head_ids), p.substr(0, a.partial_prompt_bytes));
}

// The sampler's tokens for the answer are single characters where the tokenizer would merge
// them: the token ids differ, the bytes do not.
TEST_F(AlignEnd, NonCanonicalEncodingAlignsByBytes) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const std::string answer = "<think>\nab\n</think>\n\nabc déjà vu, well played.";
  std::vector<Piece> pieces;
  for (size_t i = 0; i < answer.size();) {
    size_t len = 1;
    while (i + len < answer.size() && (static_cast<unsigned char>(answer[i + len]) & 0xC0) == 0x80)
      ++len;
    pieces.push_back({answer.substr(i, len)});
    i += len;
  }
  // Keep the special tags whole (the model samples them as one token).
  std::vector<Piece> gen = {{"<think>"}};
  for (size_t i = 7; i < pieces.size(); ++i) gen.push_back(pieces[i]);
  rows.generate(*tok_, gen);
  const std::vector<int32_t> generated(rows.ids.begin() + rows.generated[0].begin, rows.ids.end());
  ASSERT_NE(generated, tok_->encode(answer));  // not the canonical encoding

  body["messages"].push_back(assistant_message(answer));
  body["messages"].push_back(tool_message("x"));
  const std::string p = render(body);
  const EndAlignment a = align_end(*tok_, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  const std::string rows_text = tok_->decode_bytes(rows.ids);
  ASSERT_EQ(a.prompt_bytes, rows_text.size());
  EXPECT_EQ(std::memcmp(p.data(), rows_text.data(), rows_text.size()), 0);
}

// `rows` end in a generated region the response showed as `shown`: the client's copy (the
// answer, then a new user message) aligns to the rows' end; the same rows read as prompt (no
// generated region) do not, since the copy differs from their bytes.
void expect_answer_aligns_only_as_generated(const Tokenizer& tok, Json body, const Rows& rows,
                                            const std::string& shown) {
  body["messages"].push_back(assistant_message(shown));
  body["messages"].push_back(user_message("go on"));
  const std::string p = render(body);
  const EndAlignment a = align_end(tok, rows.record(), p);
  ASSERT_TRUE(a.aligned) << a.why;
  EXPECT_EQ(a.rows_matched, static_cast<int64_t>(rows.ids.size()));
  EXPECT_EQ(p.compare(a.prompt_bytes, 10, "<|im_end|>"), 0);
  Rows read = rows;
  read.generated.clear();
  EXPECT_FALSE(align_end(tok, read.record(), p).aligned);
}

// A special token the model sampled mid-answer is not in the response, so not in the client's
// copy: the rows align past it by the bytes around it (rule 5). Outside a generated region the
// same bytes missing are a real difference.
TEST_F(AlignEnd, SpecialTokensSampledInTheAnswerAreNotInTheCopy) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const int32_t pad = *tok_->token_id("<|image_pad|>");
  ASSERT_TRUE(tok_->is_special(pad));
  const int64_t begin = static_cast<int64_t>(rows.ids.size());
  tok_->encode("Let me", &rows.ids);
  rows.ids.push_back(pad);
  rows.ids.push_back(pad);
  tok_->encode(" look.", &rows.ids);
  rows.generated.push_back({begin, static_cast<int64_t>(rows.ids.size())});

  expect_answer_aligns_only_as_generated(*tok_, std::move(body), rows, "Let me look.");
}

// The response shows an answer as Tokenizer::decode does: bytes that form no character become
// U+FFFD, and an id with no token (a padding row of the model's vocabulary) gives nothing.
TEST_F(AlignEnd, BytesThatFormNoCharacterAndIdsWithNoTokenAreShownAsTheResponseShowsThem) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  const int64_t begin = static_cast<int64_t>(rows.ids.size());
  tok_->encode("Let me ", &rows.ids);
  tok_->encode("\xE3\x81", &rows.ids);  // a character cut off: one U+FFFD
  tok_->encode("\xE6\xB0\x97 then", &rows.ids);
  rows.ids.push_back(tok_->vocab_size());  // no token
  tok_->encode(" \x80look.", &rows.ids);   // a lone continuation byte
  rows.generated.push_back({begin, static_cast<int64_t>(rows.ids.size())});
  const std::string shown =
      tok_->decode(std::span<const int32_t>(rows.ids).subspan(size_t(begin)), true);
  ASSERT_EQ(shown, "Let me \xEF\xBF\xBD\xE6\xB0\x97 then \xEF\xBF\xBDlook.");

  expect_answer_aligns_only_as_generated(*tok_, std::move(body), rows, shown);
}

TEST_F(AlignEnd, BadRecordsAreRefused) {
  const std::vector<int32_t> ids = tok_->encode("hello world");
  EndRecord rec{ids, {{0, 9}}, {}};
  EndAlignment a = align_end(*tok_, rec, "hello world");
  EXPECT_FALSE(a.aligned);
  EXPECT_NE(a.why.find("hidden span 0"), std::string::npos);

  rec = EndRecord{ids, {}, {{1, 0}}};
  EXPECT_FALSE(align_end(*tok_, rec, "hello world").aligned);

  const std::vector<int32_t> bad = {ids[0], tok_->vocab_size()};
  rec = EndRecord{bad, {}, {}};
  a = align_end(*tok_, rec, "hello world");
  EXPECT_FALSE(a.aligned);
  EXPECT_NE(a.why.find("row 1"), std::string::npos);

  // Empty rows align with nothing consumed.
  rec = EndRecord{};
  a = align_end(*tok_, rec, "abc");
  EXPECT_TRUE(a.aligned);
  EXPECT_EQ(a.prompt_bytes, 0u);
}

// The opencode capture's requests, as sent (the template golden file holds them by name).
std::map<int, Json> opencode_requests() {
  std::map<int, Json> out;
  std::ifstream in(testing::source_path("tests/text/golden/qwen3_template_golden.jsonl"),
                   std::ios::binary);
  EXPECT_TRUE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    const Json row = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    const std::string name = row.is_object() ? row.value("name", "") : "";
    if (name.rfind("trace_seq", 0) != 0) continue;
    out[std::stoi(name.substr(9))] = Json::parse(row.value("request", ""));
  }
  return out;
}

// What the model generated for an assistant message opencode sent back: its reasoning, content
// and calls, with the arguments as a model writes them (json.dumps spacing, not opencode's).
std::string generated_text(const Json& m) {
  const std::string content = m.value("content", "");
  std::string s = "<think>\n" + m.value("reasoning_content", "") + "\n</think>\n\n" + content;
  if (m.contains("tool_calls")) {
    for (size_t i = 0; i < m["tool_calls"].size(); ++i) {
      const Json& f = m["tool_calls"][i]["function"];
      if (i > 0 || !content.empty()) s += "\n";
      s += "<tool_call>\n{\"name\": \"" + f.value("name", "") +
           "\", \"arguments\": " + dump_python_json(Json::parse(f.value("arguments", "{}"))) +
           "}\n</tool_call>";
    }
  }
  return s;
}

// The captured opencode sessions replayed as the server would run them: each main request's
// render aligns with the rows of the previous one plus the answer it got (opencode re-sends the
// arguments compactly; at a new user turn the template leaves the previous turn's reasoning
// out), and the request after a compaction does not.
TEST_F(AlignEnd, OpencodeTraceSessionsResumeAtTheEnd) {
  const std::map<int, Json> requests = opencode_requests();
  ASSERT_EQ(requests.size(), 16u);
  struct Chain {
    std::vector<int> seqs;
    std::vector<int> dropped;  // regions whose reasoning the next render leaves out
  };
  const std::vector<Chain> chains = {
      {{2, 3, 4, 5, 6}, {0, 0, 3, 3}}, {{8, 9, 10}, {0, 0}}, {{14, 15, 16}, {0, 0}}};
  for (const Chain& chain : chains) {
    Rows rows;
    rows.read(*tok_, render(requests.at(chain.seqs[0])));
    for (size_t k = 1; k < chain.seqs.size(); ++k) {
      SCOPED_TRACE("seq " + std::to_string(chain.seqs[k]));
      const Json& before = requests.at(chain.seqs[k - 1]);
      const Json& next = requests.at(chain.seqs[k]);
      const Json& answer = next["messages"][before["messages"].size()];
      ASSERT_EQ(answer.value("role", ""), "assistant");
      rows.generate(*tok_, {{generated_text(answer)}});
      const std::string p = render(next);
      const EndAlignment a = align_end(*tok_, rows.record(), p);
      ASSERT_TRUE(a.aligned) << a.why;
      EXPECT_EQ(a.regions_reasoning_dropped, chain.dropped[k - 1]);
      EXPECT_EQ(p.compare(a.prompt_bytes, 10, "<|im_end|>"), 0);
      rows.read(*tok_, std::string_view(p).substr(a.prompt_bytes));
    }
    if (chain.seqs.back() == 6) {
      // The turn after the manual compaction keeps only the system and tools block.
      const std::string head = render(requests.at(2));
      const EndAlignment a = align_end(*tok_, rows.record(), render(requests.at(8)));
      EXPECT_FALSE(a.aligned);
      EXPECT_GT(a.rows_matched, 0);
      EXPECT_LT(a.rows_matched, static_cast<int64_t>(tok_->encode(head).size()));
    }
  }
}

// An agent session as the server runs it: every turn aligns the next request with the rows,
// serves rows + tokenize(rest), and generates a tool step (reasoning, compact arguments sent back,
// a new user turn every 8 steps that drops the turn's reasoning). The rows grow past 30k tokens;
// the last alignment's time is printed (no threshold: the machine is shared).
TEST_F(AlignEnd, LongAgentSessionStaysAligned) {
  Json body = first_body();
  Rows rows;
  rows.read(*tok_, render(body));
  std::string listing;
  for (int i = 0; i < 40; ++i)
    listing += "-rw-r--r-- 1 user user " + std::to_string(i * 37) + " Dec  2 18:00 file_" +
               std::to_string(i) + ".txt\n";
  int step = 0;
  EndAlignment last;
  double last_us = 0;
  size_t last_prompt = 0;
  size_t last_rows = 0;
  while (rows.ids.size() < 30000) {
    const std::vector<Piece> gen = {
        {"<think>\nStep " + std::to_string(step) + ": I should list the files again.\n"},
        {kPhrase, step % 3 == 0},
        {"</think>\n\nListing.\n<tool_call>\n" + kSpacedLs + "\n</tool_call>"}};
    rows.generate(*tok_, gen);
    ClientStyle style;
    style.compact_arguments = true;
    body["messages"].push_back(assistant_message(visible(gen), style));
    body["messages"].push_back(tool_message(listing));
    if (++step % 8 == 0) body["messages"].push_back(user_message("again"));
    const std::string p = render(body);

    last_rows = rows.ids.size();
    const auto t0 = std::chrono::steady_clock::now();
    last = align_end(*tok_, rows.record(), p);
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(last.aligned) << "step " << step << ": " << last.why;
    last_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    last_prompt = p.size();
    rows.read(*tok_, std::string_view(p).substr(last.prompt_bytes));
  }
  EXPECT_GT(last.regions_reasoning_dropped, 0);
  std::printf(
      "[ timing ] align_end: %zu rows, %zu prompt bytes, %d regions (%d dropped): %.0f us\n",
      last_rows, last_prompt, step, last.regions_reasoning_dropped, last_us);
}

}  // namespace
}  // namespace anchorage::text
