// SuffixLog: the suffix store's append-only file of token-id records (docs/suffix-store.md
// "On-disk format"): a 64-byte header that names the tokenizer by its sha256, then one record
// per document, each with its own crc32c. Written through core::Fs only.
//
// Durability: a new or rewritten log goes through core::write_file_atomically (tmp, write,
// fsync, rename, fsync dir), so it is whole or absent; an append is followed by a sync, so a
// crash loses at most the record being written, whose remains at the end of the file are a
// torn tail: the next open drops them (rewriting the good prefix atomically, as Fs has no
// truncate) and counts them (docs/style.md §3). Any other damage is corruption: the file is
// deleted and the store starts empty. After a failed append or sync the log refuses every later
// write (the error is sticky); the store goes on read-only.
//
// Threading: not thread-safe; the suffix store's builder thread owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/sha256.h"
#include "core/status.h"

namespace anchorage::cache {

// A log's contents: its documents back to back, each followed by kDocumentEnd (the suffix
// index's text), and how a parse ended.
struct SuffixLogScan {
  std::vector<uint32_t> text;
  int64_t documents = 0;
  uint64_t good_bytes = 0;  // the header and every whole record
  bool torn_tail = false;   // bytes after good_bytes were a cut-off last record
};

// Parses a whole log file held in memory. Corruption with a reason (bad_magic, bad_version,
// header_crc, length_range, section_crc for a record's crc, short_read) for damage before the
// last record; kFingerprint when the tokenizer's sha256 is another. A damaged last record (one
// that reaches the end of the file) is a torn tail, not an error.
core::Result<SuffixLogScan> scan_suffix_log(std::span<const std::byte> file,
                                            const core::Sha256Digest& tokenizer_sha);

// The bytes of a header, and of one record (appended to *out).
std::vector<std::byte> encode_suffix_log_header(const core::Sha256Digest& tokenizer_sha);
void encode_suffix_record(std::span<const uint32_t> tokens, std::vector<std::byte>* out);

class SuffixLog {
 public:
  struct Opened {
    std::unique_ptr<SuffixLog> log;  // null when read-only
    SuffixLogScan scan;
    bool deleted_corrupt = false;  // a corrupt log was deleted (or, read-only, ignored)
    core::Reason corrupt_reason = core::Reason::kNone;
  };

  // Opens `dir`/tokens.log (creating `dir` 0700 and an empty log when there is none), reads it
  // and repairs a torn tail. Read-only: nothing is created, repaired or deleted, and a damaged
  // log reads as empty. Fails with kFingerprint (the file untouched) when the log was written
  // for another tokenizer, and with IOError when the file system fails.
  static core::Result<Opened> open(core::Fs& fs, const std::string& dir,
                                   const core::Sha256Digest& tokenizer_sha, bool read_only);

  // Appends one record and syncs it.
  core::Status append(std::span<const uint32_t> tokens);
  // Replaces the log with the documents of `text` (the index's text form), atomically.
  core::Status rewrite(std::span<const uint32_t> text);
  uint64_t file_bytes() const { return file_bytes_; }

 private:
  SuffixLog(core::Fs& fs, std::string path, core::Sha256Digest sha)
      : fs_(fs), path_(std::move(path)), sha_(sha) {}
  core::Status write_whole(std::span<const std::byte> bytes);

  core::Fs& fs_;
  std::string path_;
  core::Sha256Digest sha_;
  std::unique_ptr<core::WritableFile> file_;
  uint64_t file_bytes_ = 0;
  core::Status error_;  // sticky
};

}  // namespace anchorage::cache
