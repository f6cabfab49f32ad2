// PosixFs on real file systems: a temp directory under /tmp (ext4 here: O_DIRECT) and under
// /dev/shm (tmpfs), each also with the buffered fallback forced (test_refuse_direct_io), so
// both I/O paths run whatever the kernel accepts. Also the seam rule: no other file in src/
// calls the OS for files (docs/style.md §1).
#include "core/posix_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace anchorage::core {
namespace {

struct FsCase {
  const char* name;
  const char* base;
  bool refuse_direct;
};

// A fresh directory under `base`, deleted with everything in it at the end of the test.
class TempDir {
 public:
  explicit TempDir(const std::string& base) {
    std::string tmpl = base + "/anchorage_fs_XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr) << base;
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Whether this file system takes O_DIRECT: what PosixFs must have found out by itself.
bool accepts_o_direct(const std::string& dir) {
  const std::string p = dir + "/probe";
  int fd = ::open(p.c_str(), O_CREAT | O_WRONLY | O_DIRECT, 0600);
  if (fd >= 0) ::close(fd);
  ::unlink(p.c_str());
  return fd >= 0;
}

std::vector<std::byte> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> b(n);
  for (auto& x : b) x = std::byte(rng() & 0xff);
  return b;
}

// A 4 KiB-aligned buffer for the direct read path.
struct Aligned {
  explicit Aligned(size_t n) : size(n), p(static_cast<std::byte*>(std::aligned_alloc(4096, n))) {}
  ~Aligned() { std::free(p); }
  size_t size;
  std::byte* p;
};

mode_t mode_of(const std::string& path) {
  struct stat st;
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

class PosixFsTest : public ::testing::TestWithParam<FsCase> {
 protected:
  PosixFsTest() : dir_(GetParam().base), fs_(PosixFsOptions{true, GetParam().refuse_direct}) {}

  // Every open so far used the path this file system and the options call for.
  void expect_io_path() {
    const bool direct = !GetParam().refuse_direct && accepts_o_direct(dir_.path());
    EXPECT_GT(fs_.direct_opens() + fs_.buffered_opens(), 0);
    if (direct) {
      EXPECT_EQ(fs_.buffered_opens(), 0);
    } else {
      EXPECT_EQ(fs_.direct_opens(), 0);
    }
  }
  std::vector<std::byte> read_all(const std::string& path) {
    auto f = fs_.open_read(path);
    EXPECT_TRUE(f.has_value()) << f.status().to_string();
    if (!f) return {};
    std::vector<std::byte> out((*f)->size());
    auto n = (*f)->read_at(0, out);
    EXPECT_TRUE(n.has_value());
    EXPECT_EQ(n.has_value() ? *n : 0, out.size());
    return out;
  }

  TempDir dir_;
  PosixFs fs_;
};

// flock: a second holder (another descriptor, as another process would have) is refused until
// the first lock goes; the lock dies with its holder.
TEST_P(PosixFsTest, ALockIsExclusiveUntilReleased) {
  const std::string path = dir_.path() + "/lock";
  auto a = fs_.lock(path);
  ASSERT_TRUE(a.has_value()) << a.error().to_string();
  auto b = fs_.lock(path);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().code(), StatusCode::kUnavailable);
  a->reset();
  EXPECT_TRUE(fs_.lock(path).has_value());
}

TEST_P(PosixFsTest, OddAppendsAcrossBlocksReadBackAtAnyOffsetAndAlignment) {
  const std::string path = dir_.path() + "/odd.chunk";
  const size_t sizes[] = {1, 4095, 4096, 4097, 7, (size_t{1} << 20) + 3, 12345, 0, 8191};
  std::vector<std::byte> want;
  auto f = fs_.create(path);
  ASSERT_TRUE(f.has_value()) << f.status().to_string();
  uint32_t seed = 1;
  for (size_t n : sizes) {
    auto part = random_bytes(n, seed++);
    ASSERT_TRUE((*f)->append(part).is_ok());
    want.insert(want.end(), part.begin(), part.end());
    EXPECT_EQ((*f)->size(), want.size());
  }
  ASSERT_TRUE((*f)->sync().is_ok());
  ASSERT_TRUE((*f)->close().is_ok());
  ASSERT_TRUE((*f)->close().is_ok());  // idempotent
  auto size = fs_.file_size(path);
  ASSERT_TRUE(size.has_value());
  EXPECT_EQ(*size, want.size());  // the padding of the last block is cut off
  EXPECT_EQ(read_all(path), want);

  auto r = fs_.open_read(path);
  ASSERT_TRUE(r.has_value());
  // Aligned offset, buffer and length: the direct path, up to and past the end of the file.
  Aligned big(want.size() + 8192);
  auto n = (*r)->read_at(0, std::span(big.p, big.size));
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(*n, want.size());
  EXPECT_EQ(std::memcmp(big.p, want.data(), want.size()), 0);
  auto n2 = (*r)->read_at(8192, std::span(big.p, 4096));
  ASSERT_TRUE(n2.has_value());
  ASSERT_EQ(*n2, 4096u);
  EXPECT_EQ(std::memcmp(big.p, want.data() + 8192, 4096), 0);
  // Odd offsets and lengths into a buffer one byte off alignment: the bounce path.
  const std::pair<uint64_t, size_t> reads[] = {{0, 1},
                                               {1, 4095},
                                               {4095, 2},
                                               {4097, 10000},
                                               {12345, (size_t{1} << 20) + 77},
                                               {3, 4096},
                                               {4096, 1},
                                               {want.size() - 5, 5},
                                               {want.size() - 5, 100}};
  for (auto [off, len] : reads) {
    std::vector<std::byte> buf(len + 1);
    auto got = (*r)->read_at(off, std::span(buf.data() + 1, len));
    ASSERT_TRUE(got.has_value()) << off;
    const size_t expect = std::min<size_t>(len, want.size() - off);
    ASSERT_EQ(*got, expect) << off;
    EXPECT_EQ(std::memcmp(buf.data() + 1, want.data() + off, expect), 0) << off << "+" << len;
  }
  auto past = (*r)->read_at(want.size(), std::span(big.p, 4096));
  ASSERT_TRUE(past.has_value());
  EXPECT_EQ(*past, 0u);
  expect_io_path();
}

TEST_P(PosixFsTest, AlignedAppendsGoStraightThroughAndMixWithStagedOnes) {
  const std::string path = dir_.path() + "/aligned";
  const auto src = random_bytes(5 * 4096 + 100, 21);
  Aligned a(src.size());
  std::memcpy(a.p, src.data(), src.size());
  const auto odd = random_bytes(10, 22);
  auto f = fs_.create(path);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->append(std::span(a.p, a.size)).is_ok());  // 5 blocks direct, 100 staged
  ASSERT_TRUE((*f)->append(odd).is_ok());
  ASSERT_TRUE((*f)->append(std::span(a.p, 3 * 4096)).is_ok());  // staged: after a partial block
  ASSERT_TRUE((*f)->sync().is_ok());
  ASSERT_TRUE((*f)->close().is_ok());
  std::vector<std::byte> want = src;
  want.insert(want.end(), odd.begin(), odd.end());
  want.insert(want.end(), src.begin(), src.begin() + 3 * 4096);
  EXPECT_EQ(read_all(path), want);
}

TEST_P(PosixFsTest, SyncMidwayKeepsTheTrueLengthAndLaterAppendsContinueIt) {
  const std::string path = dir_.path() + "/mid";
  auto a = random_bytes(5000, 7), b = random_bytes(3000, 8), c = random_bytes(4096, 9);
  auto f = fs_.create(path);
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->append(a).is_ok());
  ASSERT_TRUE((*f)->sync().is_ok());
  EXPECT_EQ(*fs_.file_size(path), 5000u);
  ASSERT_TRUE((*f)->append(b).is_ok());
  ASSERT_TRUE((*f)->sync().is_ok());
  EXPECT_EQ(*fs_.file_size(path), 8000u);
  ASSERT_TRUE((*f)->append(c).is_ok());
  ASSERT_TRUE((*f)->close().is_ok());  // close writes what is staged, without a sync
  std::vector<std::byte> want = a;
  want.insert(want.end(), b.begin(), b.end());
  want.insert(want.end(), c.begin(), c.end());
  EXPECT_EQ(read_all(path), want);
  EXPECT_FALSE((*f)->append(a).is_ok());  // after close
}

TEST_P(PosixFsTest, OpenAppendContinuesAnUnalignedAndAnAlignedFile) {
  for (size_t first : {size_t{6000}, size_t{8192}, size_t{1}}) {
    const std::string path = dir_.path() + "/spill" + std::to_string(first);
    auto a = random_bytes(first, 11), b = random_bytes(3000, 12), c = random_bytes(5000, 13);
    ASSERT_TRUE(write_file_atomically(fs_, path, a).is_ok());
    auto f = fs_.open_append(path);
    ASSERT_TRUE(f.has_value()) << f.status().to_string();
    EXPECT_EQ((*f)->size(), first);
    ASSERT_TRUE((*f)->append(b).is_ok());
    ASSERT_TRUE((*f)->sync().is_ok());
    ASSERT_TRUE((*f)->append(c).is_ok());
    ASSERT_TRUE((*f)->sync().is_ok());
    ASSERT_TRUE((*f)->close().is_ok());
    std::vector<std::byte> want = a;
    want.insert(want.end(), b.begin(), b.end());
    want.insert(want.end(), c.begin(), c.end());
    EXPECT_EQ(read_all(path), want) << first;
  }
  auto missing = fs_.open_append(dir_.path() + "/none");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  expect_io_path();
}

TEST_P(PosixFsTest, ListSizeExistsSpaceRenameRemove) {
  const std::string d = dir_.path();
  ASSERT_TRUE(write_file_atomically(fs_, d + "/a", random_bytes(10, 1)).is_ok());
  ASSERT_TRUE(write_file_atomically(fs_, d + "/b", random_bytes(4097, 2)).is_ok());
  ASSERT_TRUE(fs_.create_dir(d + "/sub").is_ok());
  auto names = fs_.list(d);
  ASSERT_TRUE(names.has_value());
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));  // no directory, no .tmp left
  EXPECT_EQ(*fs_.file_size(d + "/b"), 4097u);
  EXPECT_TRUE(fs_.exists(d + "/a"));
  EXPECT_FALSE(fs_.exists(d + "/c"));
  auto space = fs_.space(d);
  ASSERT_TRUE(space.has_value());
  EXPECT_GT(space->total_bytes, 0u);
  EXPECT_LE(space->available_bytes, space->total_bytes);

  ASSERT_TRUE(fs_.rename(d + "/a", d + "/b").is_ok());  // replaces b
  EXPECT_FALSE(fs_.exists(d + "/a"));
  EXPECT_EQ(*fs_.file_size(d + "/b"), 10u);
  ASSERT_TRUE(fs_.remove(d + "/b").is_ok());
  ASSERT_TRUE(fs_.sync_dir(d).is_ok());

  EXPECT_EQ(fs_.remove(d + "/b").code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.open_read(d + "/b").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.file_size(d + "/b").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.list(d + "/none").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_.rename(d + "/none", d + "/x").code(), StatusCode::kNotFound);
  // Other errnos are io_errors naming the operation, the path and the reason.
  ASSERT_TRUE(write_file_atomically(fs_, d + "/file", random_bytes(1, 3)).is_ok());
  auto bad = fs_.open_read(d + "/file/child");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kIOError);
  EXPECT_EQ(bad.error().message(), "open " + d + "/file/child: Not a directory");
  EXPECT_EQ(fs_.create_dir(d + "/file/sub").code(), StatusCode::kIOError);
}

TEST_P(PosixFsTest, FilesAre0600AndDirectories0700) {
  const std::string d = dir_.path();
  ASSERT_TRUE(fs_.create_dir(d + "/x/y/z").is_ok());
  EXPECT_EQ(mode_of(d + "/x"), 0700u);
  EXPECT_EQ(mode_of(d + "/x/y/z"), 0700u);
  ASSERT_EQ(::chmod((d + "/x/y").c_str(), 0755), 0);
  ASSERT_TRUE(fs_.create_dir(d + "/x/y/").is_ok());  // exists, wider: narrowed
  EXPECT_EQ(mode_of(d + "/x/y"), 0700u);
  ASSERT_TRUE(write_file_atomically(fs_, d + "/x/f", random_bytes(100, 4)).is_ok());
  EXPECT_EQ(mode_of(d + "/x/f"), 0600u);
  ASSERT_EQ(::chmod((d + "/x/f").c_str(), 0644), 0);
  auto f = fs_.create(d + "/x/f");  // truncating a wider file narrows it too
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->close().is_ok());
  EXPECT_EQ(mode_of(d + "/x/f"), 0600u);
  EXPECT_EQ(*fs_.file_size(d + "/x/f"), 0u);
}

TEST_P(PosixFsTest, AtomicWriteAndTmpCleanup) {
  const std::string d = dir_.path();
  auto data = random_bytes(70000, 5);
  ASSERT_TRUE(write_file_atomically(fs_, d + "/whole", data).is_ok());
  EXPECT_EQ(read_all(d + "/whole"), data);
  // A crash's leftover.
  auto f = fs_.create(d + "/half.tmp");
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE((*f)->append(data).is_ok());
  ASSERT_TRUE((*f)->close().is_ok());
  auto removed = remove_tmp_files(fs_, d);
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(*removed, 1);
  EXPECT_EQ(*fs_.list(d), std::vector<std::string>{"whole"});
}

// Pages of `path` in the page cache (mincore over a mapping that touches nothing).
size_t resident_pages(const std::string& path, size_t bytes) {
  int fd = ::open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  void* m = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  EXPECT_NE(m, MAP_FAILED);
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  EXPECT_EQ(::mincore(m, bytes, in_core.data()), 0);
  ::munmap(m, bytes);
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

INSTANTIATE_TEST_SUITE_P(Dirs, PosixFsTest,
                         ::testing::Values(FsCase{"tmp", "/tmp", false},
                                           FsCase{"tmp_buffered", "/tmp", true},
                                           FsCase{"shm", "/dev/shm", false},
                                           FsCase{"shm_buffered", "/dev/shm", true}),
                         [](const auto& info) { return std::string(info.param.name); });

// Cache files stay out of the page cache, by O_DIRECT or by fadvise after the sync and after
// each read. tmpfs is the page cache, so only a disk-backed file system (/tmp here) shows it.
TEST(PosixFsPageCache, CacheFilesLeaveNoPagesInThePageCache) {
  for (bool refuse_direct : {false, true}) {
    TempDir dir("/tmp");
    PosixFs fs(PosixFsOptions{true, refuse_direct});
    const std::string path = dir.path() + "/cold";
    const auto data = random_bytes(3 * 1024 * 1024 + 5, 31);
    ASSERT_TRUE(write_file_atomically(fs, path, data).is_ok());
    EXPECT_EQ(resident_pages(path, data.size()), 0u) << refuse_direct;
    auto f = fs.open_read(path);
    ASSERT_TRUE(f.has_value());
    std::vector<std::byte> got(data.size());
    ASSERT_EQ(*(*f)->read_at(1, std::span(got).subspan(1)), data.size() - 1);
    EXPECT_EQ(resident_pages(path, data.size()), 0u) << refuse_direct;
    EXPECT_EQ(std::memcmp(got.data() + 1, data.data() + 1, data.size() - 1), 0);
    // The check can fail: a plain buffered read leaves the pages behind.
    std::ifstream(path, std::ios::binary).ignore(1 << 20);
    EXPECT_GT(resident_pages(path, data.size()), 0u);
  }
}

// --- The seam rule: only src/core/posix_fs.cc calls the OS for files. ---

// Drops comments and string literals, so a comment that says "fsync the directory" is no call.
std::string code_only(const std::string& src) {
  std::string out;
  for (size_t i = 0; i < src.size(); ++i) {
    if (src.compare(i, 2, "//") == 0) {
      while (i < src.size() && src[i] != '\n') ++i;
      out += '\n';
    } else if (src.compare(i, 2, "/*") == 0) {
      size_t end = src.find("*/", i + 2);
      i = end == std::string::npos ? src.size() : end + 1;
    } else if (src[i] == '"' && !(i > 0 && src[i - 1] == '\'')) {
      for (++i; i < src.size() && src[i] != '"'; ++i)
        if (src[i] == '\\') ++i;
    } else {
      out += src[i];
    }
  }
  return out;
}

// The calls that touch files: a global-scope syscall (::open), the std:: file APIs, and the bare
// names no method of ours shares (`fs.rename()` and `Status remove()` are the seam itself).
std::vector<std::string> file_calls(const std::string& src) {
  static const std::regex kCall(
      R"((?:^|[^\w>.:])::(open|openat|creat|pread|pwrite|preadv|pwritev|fsync|fdatasync|)"
      R"(ftruncate|rename|renameat|unlink|unlinkat|mkdir|rmdir|statvfs|opendir|chmod|fchmod)\s*\()"
      R"(|(?:^|[^\w>.:])(pread|pwrite|fsync|fdatasync|ftruncate|unlink|statvfs|opendir|fopen|)"
      R"(posix_fadvise|mkdtemp)\s*\()"
      R"(|std::(fopen|rename|remove|ifstream|ofstream|fstream|filesystem)\b)");
  std::vector<std::string> hits;
  const std::string code = code_only(src);
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kCall);
       it != std::sregex_iterator(); ++it)
    hits.push_back(it->str());
  return hits;
}

TEST(FsSeam, TheScannerSeesCallsAndIgnoresTheSeamAndComments) {
  EXPECT_EQ(file_calls("int fd = ::open(p, O_RDONLY);").size(), 1u);
  EXPECT_EQ(file_calls("if (fsync(fd) != 0)").size(), 1u);
  EXPECT_EQ(file_calls("std::ofstream out(path);").size(), 1u);
  EXPECT_EQ(file_calls("std::rename(a, b);").size(), 1u);
  EXPECT_EQ(file_calls("Status s = fs.rename(a, b); fs_->remove(p);").size(), 0u);
  EXPECT_EQ(file_calls("virtual Status rename(const std::string& from) = 0;").size(), 0u);
  EXPECT_EQ(file_calls("auto f = GgufFile::open(path);").size(), 0u);
  EXPECT_EQ(file_calls("// fsync(fd) the directory\nx = \"::open(\";").size(), 0u);
}

TEST(FsSeam, OnlyPosixFsCallsTheOsForFiles) {
  // Files that call the OS for files that are not caches, each with why.
  const std::map<std::string, std::string> allowed = {
      {"src/core/posix_fs.cc", "the seam itself"},
      {"src/model/gguf/mapped_file.cc", "mmaps the model's weights (read-only, not a cache)"},
      {"src/model/gguf/gguf_writer.cc", "writes a GGUF model file for `gguf-random`/tests"},
      {"src/server/request_journal.cc", "the request journal, an append-only log, not a cache"},
      {"src/text/tokenizer.cc", "reads tokenizer.json"},
      {"src/cli/journal_command.cc", "reads a journal file the user names"},
      {"src/server/api_keys.cc", "reads the API key file the user names (--api-key-file)"},
      {"src/cli/gguf_random_command.cc", "reads a config.json the user names"},
      {"src/core/machine_memory.cc", "reads /proc/meminfo and cgroup limits"},
  };
  const std::filesystem::path root = ANCHORAGE_SOURCE_DIR;
  std::vector<std::string> offenders;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root / "src")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
    const std::string rel = std::filesystem::relative(e.path(), root).generic_string();
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    auto hits = file_calls(ss.str());
    if (hits.empty() || allowed.count(rel)) continue;
    offenders.push_back(rel + ": " + hits.front());
  }
  EXPECT_TRUE(offenders.empty())
      << "these files call the OS for files; cache files go through core::Fs (style.md §1), "
         "anything else needs a line in `allowed` saying why:\n"
      << ::testing::PrintToString(offenders);
}

}  // namespace
}  // namespace anchorage::core
