#include "cache/suffix_log.h"

#include <cstring>

#include "cache/suffix_index.h"
#include "cache/suffix_log_format.h"
#include "core/byte_order.h"
#include "core/crc32c.h"

namespace anchorage::cache {
namespace {

using core::Reason;
using core::Status;

Status check_header(std::span<const std::byte> file, const core::Sha256Digest& sha) {
  if (file.size() < kSuffixLogHeaderBytes) {
    return Status::corruption(Reason::kShortRead, "suffix log: shorter than its header");
  }
  const std::byte* h = file.data();
  if (std::memcmp(h + kSufOffMagic, kSuffixLogMagic, 8) != 0) {
    return Status::corruption(Reason::kBadMagic, "suffix log: bad magic");
  }
  uint32_t stored_crc = core::get_u32le(h + kSufOffHeaderCrc);
  if (core::crc32c_unmask(stored_crc) != core::crc32c(h, kSufOffHeaderCrc)) {
    return Status::corruption(Reason::kHeaderCrc, "suffix log: header crc");
  }
  if (core::get_u32le(h + kSufOffVersion) != kSuffixLogVersion) {
    return Status::corruption(Reason::kBadVersion, "suffix log: version");
  }
  if (core::get_u32le(h + kSufOffHeaderLength) != kSuffixLogHeaderBytes) {
    return Status::corruption(Reason::kLengthRange, "suffix log: header length");
  }
  if (std::memcmp(h + kSufOffTokenizerSha, sha.data(), sha.size()) != 0) {
    return Status::corruption(Reason::kFingerprint,
                              "suffix log: written for another tokenizer (sha256 differs)");
  }
  return Status::ok();
}

}  // namespace

std::vector<std::byte> encode_suffix_log_header(const core::Sha256Digest& sha) {
  std::vector<std::byte> h(kSuffixLogHeaderBytes, std::byte{0});
  std::memcpy(h.data() + kSufOffMagic, kSuffixLogMagic, 8);
  core::put_u32le(h.data() + kSufOffVersion, kSuffixLogVersion);
  core::put_u32le(h.data() + kSufOffHeaderLength, uint32_t(kSuffixLogHeaderBytes));
  std::memcpy(h.data() + kSufOffTokenizerSha, sha.data(), sha.size());
  core::put_u32le(h.data() + kSufOffHeaderCrc,
                  core::crc32c_mask(core::crc32c(h.data(), kSufOffHeaderCrc)));
  return h;
}

void encode_suffix_record(std::span<const uint32_t> tokens, std::vector<std::byte>* out) {
  size_t at = out->size();
  out->resize(at + kSuffixRecordHeaderBytes + 4 * tokens.size());
  std::byte* r = out->data() + at;
  core::put_u32le(r, uint32_t(tokens.size()));
  for (size_t i = 0; i < tokens.size(); ++i) core::put_u32le(r + 8 + 4 * i, tokens[i]);
  // The crc covers the count and the ids, which are not contiguous: count, then ids.
  uint32_t crc = core::crc32c(r, 4);
  crc = core::crc32c_extend(crc, r + 8, 4 * tokens.size());
  core::put_u32le(r + 4, core::crc32c_mask(crc));
}

core::Result<SuffixLogScan> scan_suffix_log(std::span<const std::byte> file,
                                            const core::Sha256Digest& tokenizer_sha) {
  if (Status s = check_header(file, tokenizer_sha); !s.is_ok()) return s;
  SuffixLogScan scan;
  uint64_t at = kSuffixLogHeaderBytes;
  const uint64_t size = file.size();
  while (at < size) {
    const std::byte* r = file.data() + at;
    // A record that cannot be whole, or fails its check, is a torn tail when it reaches the
    // end of the file (the writer died in it) and corruption when more bytes follow it.
    if (size - at < kSuffixRecordHeaderBytes) {
      scan.torn_tail = true;
      break;
    }
    uint32_t n = core::get_u32le(r);
    uint64_t end = at + kSuffixRecordHeaderBytes + 4 * uint64_t(n);
    bool reaches_end = end >= size;
    if (n == 0 || n > kMaxSuffixRecordTokens) {
      if (reaches_end || at + kSuffixRecordHeaderBytes == size) {
        scan.torn_tail = true;
        break;
      }
      return Status::corruption(Reason::kLengthRange, "suffix log: record length");
    }
    if (end > size) {
      scan.torn_tail = true;
      break;
    }
    uint32_t crc = core::crc32c(r, 4);
    crc = core::crc32c_extend(crc, r + 8, 4 * uint64_t(n));
    if (core::crc32c_unmask(core::get_u32le(r + 4)) != crc) {
      if (reaches_end) {
        scan.torn_tail = true;
        break;
      }
      return Status::corruption(Reason::kSectionCrc, "suffix log: record crc");
    }
    size_t first = scan.text.size();
    scan.text.resize(first + n + 1);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t t = core::get_u32le(r + 8 + 4 * uint64_t(i));
      if (t >= kDocumentEnd) {
        return Status::corruption(Reason::kLengthRange, "suffix log: token id out of range");
      }
      scan.text[first + i] = t;
    }
    scan.text[first + n] = kDocumentEnd;
    ++scan.documents;
    at = end;
  }
  scan.good_bytes = at;
  return scan;
}

namespace {

core::Result<std::vector<std::byte>> read_whole(core::Fs& fs, const std::string& path) {
  auto file = fs.open_read(path);
  if (!file) return file.status();
  std::vector<std::byte> bytes((*file)->size());
  auto got = (*file)->read_at(0, bytes);
  if (!got) return got.status();
  bytes.resize(*got);
  return bytes;
}

// The log's bytes for the documents of `text` (each ends with kDocumentEnd).
std::vector<std::byte> encode_log(const core::Sha256Digest& sha, std::span<const uint32_t> text) {
  std::vector<std::byte> bytes = encode_suffix_log_header(sha);
  bytes.reserve(bytes.size() + 4 * text.size() + 8 * 1024);
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != kDocumentEnd) continue;
    encode_suffix_record(text.subspan(begin, i - begin), &bytes);
    begin = i + 1;
  }
  return bytes;
}

}  // namespace

core::Result<SuffixLog::Opened> SuffixLog::open(core::Fs& fs, const std::string& dir,
                                                const core::Sha256Digest& tokenizer_sha,
                                                bool read_only) {
  Opened opened;
  const std::string path = core::path_join(dir, kSuffixLogName);
  if (!read_only) {
    if (Status s = fs.create_dir(dir); !s.is_ok()) return s;
    auto removed = core::remove_tmp_files(fs, dir);
    if (!removed) return removed.status();
  }
  bool rewrite = false;
  if (fs.exists(path)) {
    auto bytes = read_whole(fs, path);
    if (!bytes) return bytes.status();
    auto scan = scan_suffix_log(*bytes, tokenizer_sha);
    if (!scan && scan.status().reason() == Reason::kFingerprint) return scan.status();
    if (!scan) {
      // Corruption: the hints are lost, nothing else (the model verifies every draft).
      opened.deleted_corrupt = true;
      opened.corrupt_reason = scan.status().reason();
      if (!read_only) {
        if (Status s = fs.remove(path); !s.is_ok()) return s;
        rewrite = true;
      }
    } else {
      opened.scan = std::move(*scan);
      rewrite = opened.scan.torn_tail;
    }
  } else {
    rewrite = true;
  }
  if (read_only) return opened;

  auto log = std::unique_ptr<SuffixLog>(new SuffixLog(fs, path, tokenizer_sha));
  if (rewrite) {
    if (Status s = log->rewrite(opened.scan.text); !s.is_ok()) return s;
  } else {
    auto file = fs.open_append(path);
    if (!file) return file.status();
    log->file_ = std::move(*file);
    log->file_bytes_ = log->file_->size();
  }
  opened.log = std::move(log);
  return opened;
}

Status SuffixLog::append(std::span<const uint32_t> tokens) {
  if (!error_.is_ok()) return error_;
  std::vector<std::byte> bytes;
  encode_suffix_record(tokens, &bytes);
  Status s = file_->append(bytes);
  if (s.is_ok()) s = file_->sync();
  if (!s.is_ok()) {
    error_ = s;
    return s;
  }
  file_bytes_ += bytes.size();
  return Status::ok();
}

Status SuffixLog::rewrite(std::span<const uint32_t> text) {
  if (!error_.is_ok()) return error_;
  return write_whole(encode_log(sha_, text));
}

Status SuffixLog::write_whole(std::span<const std::byte> bytes) {
  if (file_) {
    core::ignore_status(file_->close(), "suffix log: close before rewrite");
    file_.reset();
  }
  Status s = core::write_file_atomically(fs_, path_, bytes);
  if (s.is_ok()) {
    auto file = fs_.open_append(path_);
    if (file) {
      file_ = std::move(*file);
      file_bytes_ = file_->size();
    } else {
      s = file.status();
    }
  }
  if (!s.is_ok()) error_ = s;
  return s;
}

}  // namespace anchorage::cache
