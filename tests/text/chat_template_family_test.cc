// Chat-template recognition: the Qwen3 template and family variants are recognised, others
// refused with a message that says so; --chat-template names.
#include "text/chat_template_family.h"

#include <gtest/gtest.h>

#include <string>

#include "text/qwen3_chat_template.h"

namespace anchorage::text {
namespace {

TEST(ChatTemplateFamilyTest, Qwen3AndVariantsAreRecognised) {
  EXPECT_TRUE(recognize_chat_template(qwen3_chat_template_source()).has_value());
  // A variant (another release's wording) with every family marker.
  const std::string variant =
      "{%- for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
      "{%- if m.tool_calls %}<tool_call>{{ m.tool_calls | tojson }}</tool_call>{%- endif %}"
      "{%- if m.role == 'tool' %}<tool_response>{{ m.content }}</tool_response>{%- endif %}"
      "{%- if '</think>' in m.content %}{%- endif %}{%- endfor %}";
  EXPECT_EQ(*recognize_chat_template(variant), ChatTemplateFamily::kQwen3);
}

TEST(ChatTemplateFamilyTest, OthersAreRefused) {
  const std::string chatml_only =
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}";
  const std::string llama3 =
      "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>{% endfor %}";
  for (const std::string& t : {chatml_only, llama3, std::string()}) {
    auto r = recognize_chat_template(t);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code(), core::StatusCode::kUnsupported);
    EXPECT_NE(r.error().message().find("not recognised"), std::string::npos);
    EXPECT_NE(r.error().message().find("--chat-template"), std::string::npos);
  }
}

TEST(ChatTemplateFamilyTest, Names) {
  EXPECT_TRUE(chat_template_family_by_name("qwen3").has_value());
  EXPECT_TRUE(chat_template_family_by_name("qwen3.5").has_value());
  auto bad = chat_template_family_by_name("llama3");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("llama3"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::text
