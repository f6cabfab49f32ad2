// End-to-end: `anchorage gguf-random` writes a file that `inspect` describes with the
// engine's cost figures and that `run --model` runs to the same tokens as the in-memory
// preset; bad usage and bad files exit with 2 and 1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "model/gguf/gguf_writer.h"
#include "model/gguf/qwen35_gguf_export.h"
#include "model/qwen35/config.h"
#include "model/qwen35/tensors.h"

namespace {

struct Output {
  int exit_code = -1;
  std::string text;
};

Output run(const std::string& args) {
  const std::string cmd = std::string(ANCHORAGE_BINARY) + " " + args + " 2>&1";
  Output out;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.text.append(buf, n);
  const int status = pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string tokens_line(const std::string& text) {
  const size_t at = text.find("\ntokens:");
  if (at == std::string::npos) return {};
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

class GgufCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "gguf_cmd_" + std::to_string(getpid()) + ".gguf";
  }
  void TearDown() override { std::remove(path_.c_str()); }
  std::string path_;
};

TEST_F(GgufCommandsTest, InspectReportsTheEngineCost) {
  const Output w = run("gguf-random --preset tiny --type q8_0 --seed 2 --out " + path_);
  ASSERT_EQ(w.exit_code, 0) << w.text;
  const Output o = run("inspect " + path_);
  ASSERT_EQ(o.exit_code, 0) << o.text;
  EXPECT_NE(o.text.find("format: GGUF v3"), std::string::npos);
  EXPECT_NE(o.text.find("architecture: qwen35"), std::string::npos);
  EXPECT_NE(o.text.find("(tiled order)"), std::string::npos);
  EXPECT_NE(o.text.find("blk.0.attn_qkv.weight"), std::string::npos);
  EXPECT_NE(o.text.find("Q8_0"), std::string::npos);
  const auto cfg = *anchorage::model::qwen35::qwen35_preset("tiny");
  const int64_t state = cfg.gdn_state_bytes() + cfg.conv_tail_bytes();
  // bf16 K/V unless told (serve's default).
  for (auto [flag, dtype] : {std::pair{"", anchorage::core::DType::kBF16},
                             std::pair{" --kv-dtype f32", anchorage::core::DType::kF32}}) {
    const Output c = run("inspect " + path_ + flag);
    ASSERT_EQ(c.exit_code, 0) << c.text;
    const int64_t kv = cfg.kv_bytes_per_token(dtype);
    EXPECT_NE(c.text.find("cost: state bytes per sequence " + std::to_string(state) +
                          ", KV bytes per token " + std::to_string(kv)),
              std::string::npos)
        << c.text;
  }
}

TEST_F(GgufCommandsTest, RunModelFileEqualsThePreset) {
  // A grouped (qwen3next) f32 file holds the preset's weights exactly.
  const Output w =
      run("gguf-random --preset tiny --type f32 --seed 3 --arch qwen3next --out " + path_);
  ASSERT_EQ(w.exit_code, 0) << w.text;
  const std::string common = " --prompt-ids 1,2,3,4,5,6,7,8,9 --max-tokens 8 --threads 1";
  const Output from_file = run("run --model " + path_ + common);
  const Output preset = run("run --preset tiny --seed 3" + common);
  ASSERT_EQ(from_file.exit_code, 0) << from_file.text;
  ASSERT_EQ(preset.exit_code, 0) << preset.text;
  EXPECT_NE(from_file.text.find("arch=qwen3next"), std::string::npos);
  EXPECT_FALSE(tokens_line(preset.text).empty());
  EXPECT_EQ(tokens_line(from_file.text), tokens_line(preset.text));
}

TEST_F(GgufCommandsTest, BadUsageAndBadFiles) {
  EXPECT_EQ(run("inspect").exit_code, 2);
  EXPECT_EQ(run("gguf-random --preset tiny").exit_code, 2);  // no --out
  EXPECT_EQ(run("gguf-random --preset tiny --type q8_1 --out " + path_).exit_code, 2);
  EXPECT_EQ(run("gguf-random --preset tiny --mix q5_k,q8_1 --out " + path_).exit_code, 2);
  const Output missing = run("inspect /nonexistent/x.gguf");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.text.find("/nonexistent/x.gguf"), std::string::npos);
  std::FILE* f = std::fopen(path_.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("not a gguf file at all", f);
  std::fclose(f);
  const Output bad = run("run --model " + path_ + " --max-tokens 1");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.text.find("bad magic"), std::string::npos);
  EXPECT_EQ(run("serve --chat-template llama3 --model " + path_).exit_code, 2);
}

TEST_F(GgufCommandsTest, ServeRefusesAnUnrecognisedTemplateUnlessForced) {
  namespace gguf = anchorage::model::gguf;
  const auto cfg = *anchorage::model::qwen35::qwen35_preset("tiny");
  gguf::GgufWriter w;
  ASSERT_TRUE(gguf::export_qwen35_gguf(anchorage::model::qwen35::random_tensors(cfg, 1, nullptr),
                                       {}, &w, nullptr)
                  .is_ok());
  w.add("tokenizer.chat_template",
        gguf::GgufValue::string("{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}"));
  ASSERT_TRUE(w.write_file(path_).is_ok());
  const Output refused = run("serve --port 0 --threads 1 --model " + path_);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.text.find("not recognised"), std::string::npos) << refused.text;
  // Forced, the template passes; the file then fails later (it has no tokenizer and tiny's 512
  // ids cannot hold the default Qwen3 tokenizer's), which shows the check was passed.
  const Output forced = run("serve --port 0 --threads 1 --chat-template qwen3 --model " + path_);
  EXPECT_EQ(forced.exit_code, 1);
  EXPECT_EQ(forced.text.find("not recognised"), std::string::npos) << forced.text;
  EXPECT_NE(forced.text.find("vocabulary"), std::string::npos) << forced.text;
}

}  // namespace
