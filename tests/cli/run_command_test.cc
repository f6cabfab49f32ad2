// End-to-end: runs the real `anchorage` binary (ANCHORAGE_BINARY, set by tests.cmake) on the
// tiny preset and checks the output format, that two runs print the same tokens, and that bad
// usage exits with code 2.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <regex>
#include <string>

namespace {

struct Output {
  int exit_code = -1;
  std::string text;
};

// Runs the binary with args (stderr to /dev/null unless merged).
Output run(const std::string& args, bool merge_stderr = false) {
  std::string cmd =
      std::string(ANCHORAGE_BINARY) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Output out;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.text.append(buf, n);
  int status = pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string line_starting(const std::string& text, const std::string& prefix) {
  size_t at = text.find("\n" + prefix);
  if (text.rfind(prefix, 0) == 0)
    at = 0;
  else if (at == std::string::npos)
    return {};
  else
    ++at;
  return text.substr(at, text.find('\n', at) - at);
}

const char* kTiny = "run --preset tiny --seed 3 --prompt-tokens 200 --max-tokens 12 --threads 1";

TEST(RunCommand, PrintsTokensAndATimingSummary) {
  Output o = run(kTiny);
  ASSERT_EQ(o.exit_code, 0) << o.text;
  EXPECT_TRUE(
      std::regex_search(o.text, std::regex("^model: qwen35 preset=tiny weights=f32 kv=bf16 ")));
  EXPECT_EQ(line_starting(o.text, "prompt:"), "prompt: 200 tokens");
  EXPECT_TRUE(
      std::regex_match(line_starting(o.text, "tokens:"), std::regex("tokens:( [0-9]+){1,12}")));
  EXPECT_TRUE(std::regex_match(line_starting(o.text, "finish:"),
                               std::regex("finish: (max_tokens|stop_token)")));
  EXPECT_TRUE(std::regex_match(line_starting(o.text, "prefill:"),
                               std::regex("prefill: 200 tokens in [0-9.]+ s = [0-9.]+ tok/s")));
  EXPECT_TRUE(std::regex_match(line_starting(o.text, "decode:"),
                               std::regex("decode: [0-9]+ steps in [0-9.]+ s = [0-9.]+ tok/s")));
  EXPECT_EQ(o.text.find("profile:"), std::string::npos);
}

TEST(RunCommand, TwoRunsPrintTheSameTokens) {
  Output a = run(kTiny);
  Output b = run(std::string(kTiny) + " --threads 2 --chunk 64");
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_FALSE(line_starting(a.text, "tokens:").empty());
  EXPECT_EQ(line_starting(a.text, "tokens:"), line_starting(b.text, "tokens:"));
  // Another weight seed gives other tokens (else the comparison above proves little).
  Output c = run("run --preset tiny --seed 4 --prompt-tokens 200 --max-tokens 12 --threads 1");
  EXPECT_NE(line_starting(a.text, "tokens:"), line_starting(c.text, "tokens:"));
}

TEST(RunCommand, ExplicitIdsSamplingBf16AndProfile) {
  Output o =
      run("run --preset tiny --prompt-ids 1,2,3,4,5 --max-tokens 4 --ignore-eos "
          "--temperature 0.8 --top-k 20 --top-p 0.9 --min-p 0.05 --sampling-seed 9 "
          "--weight-dtype bf16 --kv-dtype bf16 --profile");
  ASSERT_EQ(o.exit_code, 0) << o.text;
  EXPECT_EQ(line_starting(o.text, "prompt:"), "prompt: 5 tokens");
  EXPECT_TRUE(
      std::regex_match(line_starting(o.text, "tokens:"), std::regex("tokens:( [0-9]+){4}")));
  EXPECT_NE(o.text.find("weights=bf16 kv=bf16"), std::string::npos);
  EXPECT_NE(o.text.find("profile: prefill gemm"), std::string::npos);
  EXPECT_NE(o.text.find("profile: decode "), std::string::npos);
}

TEST(RunCommand, ProgressBarGoesToStderrOnlyWhenAsked) {
  const std::string args = "run --preset tiny --prompt-tokens 200 --max-tokens 2 --chunk 64";
  Output quiet = run(args, true);  // stderr is a pipe here: no bar unless asked
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.text.find("prefill ["), std::string::npos);
  Output bar = run(args + " --progress", true);
  ASSERT_EQ(bar.exit_code, 0);
  EXPECT_NE(bar.text.find("prefill [##############################] 200/200 tokens"),
            std::string::npos);
  Output out_only = run(args + " --progress");
  EXPECT_EQ(out_only.text.find("prefill ["), std::string::npos);  // never on stdout
}

TEST(RunCommand, BadUsageExitsWithTwo) {
  for (const char* args :
       {"run --max-tokens x", "run --top-p 1.5", "run --weight-dtype f64", "run --preset huge",
        "run --prompt-ids 1,,2", "run --bogus", "run --chunk 0 --preset tiny",
        "run --preset tiny --prompt-ids 999999", "frobnicate", ""}) {
    Output o = run(args, true);
    EXPECT_EQ(o.exit_code, 2) << args;
    EXPECT_FALSE(o.text.empty()) << args;
  }
}

TEST(RunCommand, HelpListsEveryFlagWithItsDefault) {
  Output top = run("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.text.find("run"), std::string::npos);
  Output o = run("run --help");
  ASSERT_EQ(o.exit_code, 0);
  for (const char* flag : {"--preset", "--seed", "--prompt-tokens", "--prompt-ids", "--max-tokens",
                           "--threads", "--chunk", "--anchor-spacing", "--capacity",
                           "--weight-dtype", "--kv-dtype", "--temperature", "--top-k", "--top-p",
                           "--min-p", "--sampling-seed", "--profile", "--progress"}) {
    size_t at = o.text.find(std::string("  ") + flag + " ");
    ASSERT_NE(at, std::string::npos) << flag;
    std::string line = o.text.substr(at, o.text.find('\n', at) - at);
    EXPECT_NE(line.find("(default: "), std::string::npos) << line;
  }
}

}  // namespace
