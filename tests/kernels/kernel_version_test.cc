// kKernelVersion keeps up with the sources that compute cached rows: the test recomputes the
// sha256 of every source tests/golden/kernel_sources.txt lists by rule (src/kernels/,
// src/model/, core/dtype, core/rng) and fails when one changed, appeared or went while
// kKernelVersion stayed the same — rows written by the old code would otherwise pass the disk
// tier's fingerprint check (docs/disk-tier.md "The fingerprint").
#include "kernels/kernel_version.h"

#include <gtest/gtest.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "core/sha256.h"

namespace anchorage::kernels {
namespace {

struct SourceHashes {
  int version = -1;
  std::map<std::string, std::string> sha256;  // path from the repository root -> hex
};

const char* const kRegenerate =
    "bump kKernelVersion in src/kernels/kernel_version.h and regenerate "
    "tests/golden/kernel_sources.txt with scripts/kernel_sources.sh";

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SourceHashes parse_golden(const std::string& text) {
  SourceHashes g;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("kKernelVersion ", 0) == 0) {
      std::from_chars(line.data() + 15, line.data() + line.size(), g.version);
    } else if (line.size() > 66 && line.compare(64, 2, "  ") == 0) {
      g.sha256[line.substr(66)] = line.substr(0, 64);
    }
  }
  return g;
}

// The same rule as scripts/kernel_sources.sh.
SourceHashes current_sources(const std::filesystem::path& root) {
  SourceHashes s;
  s.version = kKernelVersion;
  auto add = [&](const std::filesystem::path& p) {
    const std::string rel = std::filesystem::relative(p, root).generic_string();
    s.sha256[rel] = core::to_hex(core::sha256(read_text(p)));
  };
  for (const char* dir : {"src/kernels", "src/model"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && e.path().filename() != "kernel_version.h") add(e.path());
  for (const char* f : {"src/core/dtype.h", "src/core/dtype.cc", "src/core/rng.h"}) add(root / f);
  return s;
}

// "" when `now` agrees with `golden`; otherwise what is wrong and what to do.
std::string kernel_sources_problem(const SourceHashes& golden, const SourceHashes& now) {
  if (golden.version != now.version)
    return "kKernelVersion is " + std::to_string(now.version) + " but the golden list is of " +
           std::to_string(golden.version) +
           ": regenerate tests/golden/kernel_sources.txt with "
           "scripts/kernel_sources.sh";
  std::string changed;
  for (const auto& [path, hash] : now.sha256) {
    auto it = golden.sha256.find(path);
    if (it == golden.sha256.end()) {
      changed += " " + path + " (new)";
    } else if (it->second != hash) {
      changed += " " + path;
    }
  }
  for (const auto& [path, hash] : golden.sha256)
    if (!now.sha256.count(path)) changed += " " + path + " (gone)";
  if (changed.empty()) return "";
  return "sources that compute cached rows changed while kKernelVersion stayed " +
         std::to_string(now.version) + ":" + changed +
         ". A change there changes rows on disk: " + kRegenerate;
}

TEST(KernelVersion, SourcesMatchTheGoldenListOfThisVersion) {
  const std::filesystem::path root = ANCHORAGE_SOURCE_DIR;
  const SourceHashes golden = parse_golden(read_text(root / "tests/golden/kernel_sources.txt"));
  ASSERT_GT(golden.sha256.size(), 10u) << "tests/golden/kernel_sources.txt is missing or empty";
  const SourceHashes now = current_sources(root);
  EXPECT_EQ(kernel_sources_problem(golden, now), "");
}

TEST(KernelVersion, AChangedAddedOrRemovedSourceWithoutABumpFails) {
  SourceHashes golden;
  golden.version = 3;
  golden.sha256 = {{"src/kernels/gemm.cc", "aa"}, {"src/model/x.cc", "bb"}};
  SourceHashes now = golden;
  EXPECT_EQ(kernel_sources_problem(golden, now), "");
  now.sha256["src/kernels/gemm.cc"] = "ab";
  std::string p = kernel_sources_problem(golden, now);
  EXPECT_NE(p.find("src/kernels/gemm.cc"), std::string::npos) << p;
  EXPECT_NE(p.find(kRegenerate), std::string::npos) << p;
  now = golden;
  now.sha256["src/kernels/new.cc"] = "cc";
  EXPECT_NE(kernel_sources_problem(golden, now).find("new.cc (new)"), std::string::npos);
  now = golden;
  now.sha256.erase("src/model/x.cc");
  EXPECT_NE(kernel_sources_problem(golden, now).find("x.cc (gone)"), std::string::npos);
  // A bump alone is not enough: the list must be regenerated for the new version.
  now = golden;
  now.version = 4;
  EXPECT_NE(kernel_sources_problem(golden, now).find("regenerate"), std::string::npos);
}

}  // namespace
}  // namespace anchorage::kernels
