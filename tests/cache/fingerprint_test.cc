// The fingerprint: every part that computes rows changes it, the same inputs give the same hex
// in another process, and weights files count by content (docs/disk-tier.md "The fingerprint").
#include "cache/fingerprint.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "core/isa.h"
#include "core/mem_fs.h"
#include "core/sha256.h"
#include "engine/engine.h"
#include "kernels/kernel_version.h"
#include "support/test_models.h"
#include "support/toy_architecture.h"

namespace anchorage::cache {
namespace {

using core::DType;
using nlohmann::json;

FingerprintInputs tiny_inputs() {
  FingerprintInputs in;
  in.manifest = test::make_tiny_qwen35(DType::kF32, DType::kF32)->manifest();
  in.grid_tokens = 1024;
  in.weights.preset = "tiny";
  in.weights.seed = 1;
  return in;
}

std::string hex_of(core::Fs& fs, const FingerprintInputs& in) {
  auto fp = compute_fingerprint(fs, in);
  EXPECT_TRUE(fp.has_value()) << fp.status().to_string();
  return fp ? fp->hex : "";
}

void put_file(core::MemFs& fs, const std::string& path, const std::vector<std::byte>& data) {
  ASSERT_TRUE(fs.create_dir(core::path_dir(path)).is_ok());
  ASSERT_TRUE(core::write_file_atomically(fs, path, data).is_ok());
}

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte((i * 2654435761u) >> 13);
  return b;
}

TEST(Fingerprint, Qwen35ManifestNamesWhatComputesRows) {
  const json f32 = test::make_tiny_qwen35(DType::kF32, DType::kF32)->manifest();
  const json bf16 = test::make_tiny_qwen35(DType::kBF16, DType::kBF16)->manifest();
  EXPECT_EQ(f32["architecture"], "qwen35");
  EXPECT_EQ(f32["kv_dtype"], "f32");
  EXPECT_EQ(bf16["kv_dtype"], "bf16");
  EXPECT_EQ(f32["linear_dtypes"], json::array({"f32"}));
  EXPECT_EQ(bf16["linear_dtypes"], json::array({"bf16"}));
  EXPECT_EQ(f32["exact_granularity"], 1);
  EXPECT_EQ(f32["kernel_version"], kernels::kKernelVersion);
  EXPECT_EQ(f32["kernel_isa"], std::string(core::isa_name(core::active_isa())));
  EXPECT_GT(f32["config"]["hidden_size"].get<int64_t>(), 0);
  EXPECT_FALSE(f32["config"].contains("eos_token_ids"));  // they end answers, not rows
  const json toy = test::ToyArchitecture(7).manifest();
  EXPECT_EQ(toy["architecture"], "toy");
  EXPECT_EQ(toy["seed"], 7);
}

TEST(Fingerprint, EveryPartChangesTheHex) {
  core::MemFs fs;
  put_file(fs, "/models/a.gguf", pattern(10000));
  const FingerprintInputs base = tiny_inputs();
  std::vector<std::pair<std::string, FingerprintInputs>> variants = {{"base", base}};
  auto add = [&](const std::string& what, auto edit) {
    FingerprintInputs in = base;
    edit(in);
    variants.emplace_back(what, in);
  };
  add("seed", [](auto& in) { in.weights.seed = 2; });
  add("preset", [](auto& in) { in.weights.preset = "tiny-moe"; });
  add("grid", [](auto& in) { in.grid_tokens = 512; });
  add("kv dtype and weights dtype", [](auto& in) {
    in.manifest = test::make_tiny_qwen35(DType::kBF16, DType::kBF16)->manifest();
  });
  add("kv dtype only", [](auto& in) {
    in.manifest = test::make_tiny_qwen35(DType::kF32, DType::kBF16)->manifest();
  });
  add("config", [](auto& in) { in.manifest["config"]["rope_theta"] = 10000.0; });
  add("kernel version",
      [](auto& in) { in.manifest["kernel_version"] = kernels::kKernelVersion + 1; });
  add("kernel isa", [](auto& in) {
    in.manifest["kernel_isa"] = in.manifest["kernel_isa"] == "scalar" ? "avx2" : "scalar";
  });
  add("architecture", [](auto& in) { in.manifest = test::ToyArchitecture(1).manifest(); });
  add("weights file", [](auto& in) { in.weights = WeightsOrigin{"/models/a.gguf", "", 0}; });
  std::set<std::string> hexes;
  for (const auto& [what, in] : variants) {
    const std::string hex = hex_of(fs, in);
    EXPECT_EQ(hex.size(), 32u) << what;
    EXPECT_TRUE(hexes.insert(hex).second) << what << " did not change the fingerprint";
  }
  // A weights file counts by content: another byte is another fingerprint, another path not.
  FingerprintInputs file = base;
  file.weights = WeightsOrigin{"/models/a.gguf", "", 0};
  const std::string before = hex_of(fs, file);
  put_file(fs, "/elsewhere/b.gguf", pattern(10000));
  file.weights.file = "/elsewhere/b.gguf";
  EXPECT_EQ(hex_of(fs, file), before);
  (*fs.mutable_contents("/elsewhere/b.gguf"))[5000] ^= std::byte{1};
  EXPECT_NE(hex_of(fs, file), before);
}

TEST(Fingerprint, TheRunTimeIsaEntersTheManifest) {
  if (core::detected_isa() == core::Isa::kScalar) GTEST_SKIP() << "one ISA only";
  auto model = test::make_tiny_qwen35(DType::kF32, DType::kF32);
  const json best = model->manifest();
  const core::Isa active = core::active_isa();
  core::set_active_isa(core::Isa::kScalar);
  const json scalar = model->manifest();
  core::set_active_isa(active);
  EXPECT_EQ(scalar["kernel_isa"], "scalar");
  EXPECT_NE(best["kernel_isa"], scalar["kernel_isa"]);
}

TEST(Fingerprint, TheSameInputsGiveTheSameHexInAnotherProcess) {
  core::MemFs fs;
  const std::string here = hex_of(fs, tiny_inputs());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // A fresh model, a fresh manifest, another heap: only the values may decide the hex.
    std::vector<std::string> noise(1000, std::string(100, 'x'));
    core::MemFs child_fs;
    auto fp = compute_fingerprint(child_fs, tiny_inputs());
    const std::string hex = fp ? fp->hex : "error";
    (void)!::write(fds[1], hex.data(), hex.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(std::string(buf, size_t(std::max<ssize_t>(n, 0))), here);
  // And the canonical JSON does not depend on the order keys were set in.
  FingerprintInputs reordered = tiny_inputs();
  json m;
  std::vector<std::string> keys;
  for (const auto& [k, v] : reordered.manifest.items()) keys.push_back(k);
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) m[*it] = reordered.manifest[*it];
  reordered.manifest = m;
  EXPECT_EQ(hex_of(fs, reordered), here);
}

TEST(Fingerprint, AWeightsFileCountsByContentSampledPast64MiB) {
  core::MemFs fs;
  const auto small = pattern(3 * 1024 * 1024 + 17);
  put_file(fs, "/m/small.gguf", small);
  auto id = file_identity(fs, "/m/small.gguf");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ((*id)["sha256"], core::to_hex(core::sha256(small)));  // whole, as sha256sum
  EXPECT_EQ((*id)["bytes"], small.size());
  EXPECT_EQ((*id)["sampled"], false);

  const uint64_t MiB = uint64_t{1} << 20;
  put_file(fs, "/m/big.gguf", pattern(69 * MiB));
  auto hash = [&] {
    auto r = file_identity(fs, "/m/big.gguf");
    EXPECT_TRUE(r.has_value());
    return r ? (*r)["sha256"].get<std::string>() : "";
  };
  const std::string before = hash();
  auto* bytes = fs.mutable_contents("/m/big.gguf");
  // Samples: [0, 1 MiB), 16 MiB reads at k * (68 MiB / 17) = k * 4 MiB, the last MiB.
  for (uint64_t at : {uint64_t{100}, 4 * MiB + 10, 36 * MiB + MiB - 1, 69 * MiB - 1}) {
    (*bytes)[at] ^= std::byte{0x80};
    EXPECT_NE(hash(), before) << "a byte at " << at << " is sampled";
    (*bytes)[at] ^= std::byte{0x80};
  }
  // Between the samples a byte goes unseen: the price of not reading 50 GB at every start.
  (*bytes)[2 * MiB] ^= std::byte{0x80};
  EXPECT_EQ(hash(), before);
  (*bytes)[2 * MiB] ^= std::byte{0x80};
  bytes->push_back(std::byte{0});  // the size counts
  EXPECT_NE(hash(), before);
}

TEST(Fingerprint, FromTheEngineAndRefusals) {
  core::MemFs fs;
  engine::EngineOptions o;
  o.capacity = 256;
  o.prefill_chunk = 64;
  o.anchor_spacing = 128;
  o.n_threads = 1;
  auto e = engine::Engine::create(test::make_toy_architecture(3), o);
  ASSERT_TRUE(e.has_value());
  const WeightsOrigin w{"", "toy", 3};
  auto fp = compute_fingerprint(fs, **e, w);
  ASSERT_TRUE(fp.has_value());
  EXPECT_EQ(fp->parts["grid_tokens"], 128);
  EXPECT_EQ(fp->parts["model"], test::ToyArchitecture(3).manifest());
  EXPECT_TRUE(fp->parts["libraries"].contains("libc"));

  FingerprintInputs in = tiny_inputs();
  in.weights = WeightsOrigin{"/none.gguf", "", 0};
  EXPECT_EQ(compute_fingerprint(fs, in).error().code(), core::StatusCode::kNotFound);
  in.weights = WeightsOrigin{};
  EXPECT_EQ(compute_fingerprint(fs, in).error().code(), core::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace anchorage::cache
