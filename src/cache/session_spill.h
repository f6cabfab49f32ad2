// SessionSpill: whole conversations on the disk (docs/session-spill.md), so a restart, a deploy
// or a third session costs a read, not the prefill of the conversation again. The disk tier
// keeps shared heads at grid lines; an entry here keeps one conversation up to its end anchor:
// rows [0, end) of every view in blocks of 1,024 rows, the end anchor's sections, its newest
// body anchors at block lines, the token ids, the taint line, the hidden spans and generated
// regions the end alignment needs, and the session's tag.
//
// Files (one LocalDirStore, `<disk-cache>/sessions/`, docs/formats/disk-tier.md "Spill"):
//   - blocks are spill block files (rows of every view as spill codec frames, spill_codec.h)
//     and anchors anchor files of the disk tier's format, named by a content key: XXH3-128 of
//     the prefix key and the rows' sums. Equal rows of an equal prefix
//     are one file, so saving a conversation again writes only the blocks that changed (its
//     new turn), and two entries with the same head share its blocks.
//   - the manifest (`<entry>.manifest`, cache file kind 5) lists them with two 64-bit sums per
//     buffer (a plain sum of its 32-bit words and a position-weighted one). It is written last:
//     a file no manifest lists is a save a crash interrupted, deleted at open; a manifest whose
//     files are missing or of another fingerprint goes too.
// Reading compares every block's token ids, checks each section's crc32c and sums every buffer
// again before a byte reaches the engine; a mismatch costs the entry, and the request starts
// from what is in place.
//
// Saving runs on the engine thread, before the rows it saves are overwritten (the caller
// decides when: the shutdown drain, a displacement by another session, see EngineCaches).
//
// Thread safety: none; the engine thread (or a thread holding the engine queue's idle lock).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cache/blob_store.h"
#include "cache/buffer_sums.h"
#include "cache/cache_file.h"
#include "cache/cache_key.h"
#include "cache/hidden_span.h"
#include "cache/offer_source.h"
#include "cache/spill_codec.h"
#include "cache/stat_field.h"
#include "cache/state_copy.h"
#include "cache/write_guard.h"
#include "core/state_layout.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

struct SessionSpillOptions {
  int64_t budget_bytes = int64_t(64) << 30;  // --spill-gb
  int64_t min_tokens = 16384;                // --spill-min-tokens: a displaced conversation
  // A conversation the park gives up, or a store restore clears from the rows in place.
  int64_t give_up_min_tokens = 4096;
  int64_t drain_min_tokens = 1024;  // a conversation the shutdown drain saves
  int64_t ttl_s = 48 * 3600;        // an entry unused this long goes
  int64_t block_rows = 1024;        // rows per block (a multiple of the grid)
  int anchors = 4;                  // newest anchors kept, the end anchor among them
  // How new blocks are written (--spill-codec; blocks already on disk keep theirs) and the
  // threads that compress and decompress a block's planes.
  SpillCodecKind codec = SpillCodecKind::kZstd;
  int codec_threads = 2;
  // A save compresses block i + 1 on the codec threads while block i is written (false: each
  // block compressed, then written, in turn; disk_bench compares the two).
  bool pipelined_writes = true;
  // Until the spill has measured its own reads: the read rate the Planner's cost assumes.
  double prior_read_bytes_per_s = 1.0e9;
  // Wall-clock seconds since the epoch (tests fake it; the TTL and least recently used).
  std::function<int64_t()> now_s;
  // The day's write budget shared with the disk tier (null: none).
  std::shared_ptr<WriteGuard> guard;
};

// One conversation whose rows [0, tokens.size()) are in the engine now, with the sections at
// its end (`end`, position tokens.size()) and body anchors below.
struct SpillConversation {
  std::span<const int32_t> tokens;
  std::string session;  // its tag ("" without one)
  int64_t taint = INT64_MAX;
  const SectionCopy* end = nullptr;
  std::vector<const SectionCopy*> anchors;  // any; those at block lines below the end are kept
  std::vector<HiddenSpan> hidden;
  std::vector<std::pair<int64_t, int64_t>> regions;  // generated regions [begin, end)
  bool resident = false;  // saved by the drain: the next start reads it back first
  // Rows [b, e) of the conversation; null: the engine's own rows (a parked conversation's
  // are partly in the park, ParkedSession::Contents::rows).
  std::function<core::Result<RowCopy>(int64_t, int64_t)> rows;
};

// Counters and bytes for /v1/cache/stats, /metrics (anchorage_spill_*) and /health.
struct SessionSpillStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  int64_t saves = 0;
  int64_t save_skips = 0;      // refused by the write guard
  int64_t blocks_written = 0;  // block and anchor files written
  int64_t blocks_kept = 0;     // equal to a file already there: not written again
  int64_t bytes_written = 0;
  int64_t hits = 0;
  int64_t hit_tokens = 0;
  int64_t blocks_read = 0;
  int64_t blocks_in_place = 0;  // not read: the engine held those rows already
  int64_t read_bytes = 0;
  int64_t restore_failures = 0;  // a check failed: the entry went
  int64_t evictions = 0;         // by the budget or the TTL
  int64_t swept_files = 0;       // at open: unlisted, another fingerprint's, unreadable
  int64_t write_errors = 0;
  int64_t prewarms = 0;        // conversations read back ahead of their request
  int64_t prewarm_yields = 0;  // stopped between blocks: a request arrived
  // A request an entry could have started further than where it did, by why (note_unused):
  int64_t unused_slow = 0;           // offered, but the read cost more than the prefill saved
  int64_t unused_anchors_below = 0;  // the entry's rows go a block or more further, no anchor
  int64_t unused_short = 0;          // they go less than a block further, no anchor
  // The session's entry serves the prompt a block or more further only through the end
  // alignment (its text, not its tokens, continues there), which the spill does not apply.
  int64_t unused_end_no_align = 0;
  int64_t read_mb_per_s = 0;

  template <class F>
  void visit(F&& f) const {
    f("entries", entries, StatKind::kGauge);
    f("bytes", bytes, StatKind::kGauge);
    f("saves", saves, StatKind::kCounter);
    f("save_skips", save_skips, StatKind::kCounter);
    f("blocks_written", blocks_written, StatKind::kCounter);
    f("blocks_kept", blocks_kept, StatKind::kCounter);
    f("bytes_written", bytes_written, StatKind::kCounter);
    f("hits", hits, StatKind::kCounter);
    f("hit_tokens", hit_tokens, StatKind::kCounter);
    f("blocks_read", blocks_read, StatKind::kCounter);
    f("blocks_in_place", blocks_in_place, StatKind::kCounter);
    f("read_bytes", read_bytes, StatKind::kCounter);
    f("restore_failures", restore_failures, StatKind::kCounter);
    f("evictions", evictions, StatKind::kCounter);
    f("swept_files", swept_files, StatKind::kCounter);
    f("write_errors", write_errors, StatKind::kCounter);
    f("prewarms", prewarms, StatKind::kCounter);
    f("prewarm_yields", prewarm_yields, StatKind::kCounter);
    f("unused_slow", unused_slow, StatKind::kCounter);
    f("unused_anchors_below", unused_anchors_below, StatKind::kCounter);
    f("unused_short", unused_short, StatKind::kCounter);
    f("unused_end_no_align", unused_end_no_align, StatKind::kCounter);
    f("read_mb_per_s", read_mb_per_s, StatKind::kGauge);
  }
};

class SessionSpill : public OfferSource {
 public:
  // Indexes the entries in `store` (manifests only), deleting another fingerprint's, those
  // unused past the TTL, those whose files are missing, and every file no manifest lists.
  // `granularity` is the engine's exact granularity (exact_at's rule).
  static core::Result<std::unique_ptr<SessionSpill>> open(std::unique_ptr<BlobStore> store,
                                                          std::string fingerprint,
                                                          const core::StateLayout& layout,
                                                          int64_t granularity,
                                                          SessionSpillOptions options);
  SessionSpill(const SessionSpill&) = delete;
  SessionSpill& operator=(const SessionSpill&) = delete;

  const SessionSpillOptions& options() const { return options_; }

  // OfferSource: the largest end or anchor position of an entry that the prompt continues,
  // strictly below its end; restore_ms is the read of everything below it.
  ResumeOffer offer(std::span<const int32_t> prompt, std::string_view session) const override;

  // Saves the conversation (replacing the entry of its session; without one, the keyless entry
  // it continues, else a new one).
  // OK and nothing written when the write guard refuses (counted); an I/O error leaves the
  // previous entry as it was.
  core::Status save(engine::Engine& engine, const SpillConversation& conv, SpillWrite kind);

  // Reads the offer's anchor and the blocks above `rows_in_place` (rows the engine already
  // holds for this prompt, exact), checks them, writes them into the engine and resumes it at
  // the offer. On failure the entry is gone and the engine's rows from rows_in_place are not
  // to be trusted (the caller resets it and starts cold).
  core::Status restore(engine::Engine& engine, std::span<const int32_t> prompt,
                       const ResumeOffer& offer, int64_t rows_in_place);

  // The newest entry the drain saved as the resident conversation, to be read back at start:
  // its tokens (empty: none). restore_resident() reads it into the engine at its end.
  std::vector<int32_t> resident_tokens() const;
  // The tokens of the session's entry up to its end anchor (empty: no entry). Valid until the
  // next save, restore or clear.
  std::span<const int32_t> session_tokens(std::string_view session) const;
  // The same entry with what its end alignment needs: its hidden spans and generated regions
  // (tokens empty: no entry). Valid as session_tokens.
  struct SessionRecord {
    std::span<const int32_t> tokens;
    std::span<const HiddenSpan> hidden;
    std::span<const std::pair<int64_t, int64_t>> regions;
  };
  SessionRecord session_record(std::string_view session) const;
  struct Restored {
    std::vector<int32_t> tokens;
    std::string session;
    int64_t taint = INT64_MAX;
    std::vector<HiddenSpan> hidden;
    std::vector<std::pair<int64_t, int64_t>> regions;
  };
  core::Result<Restored> restore_resident(engine::Engine& engine);

  // The prewarm (POST /v1/cache/prewarm): the entry that holds the offer's anchor, read back
  // whole — its rows [rows_in_place, n) and its end anchor — so its next request resumes at
  // its end in place. Every block is read and checked before a byte is written into the engine:
  // `yield` is asked before each block, and when it says true the engine is left untouched
  // (Cancelled; the entry stays). A failed check costs the entry and leaves the engine
  // untouched too. The blocks read wait in RAM until the last is checked: `reserve` is told
  // their bytes and the end anchor's before the first read, and a status it refuses with is
  // returned, nothing read (the caller's memory Budget).
  // The bytes prewarm() would hold in RAM for this offer (the blocks above the rows in place
  // and the end anchor): what it tells `reserve`. NotFound when the offered entry is gone.
  core::Result<int64_t> prewarm_bytes(std::span<const int32_t> prompt, const ResumeOffer& offer,
                                      int64_t rows_in_place);
  core::Result<Restored> prewarm(engine::Engine& engine, std::span<const int32_t> prompt,
                                 const ResumeOffer& offer, int64_t rows_in_place,
                                 const std::function<bool()>& yield,
                                 const std::function<core::Status(int64_t bytes)>& reserve = {});

  // A request's start is planned: when an entry shares more of the prompt than where it
  // starts (`chosen`) and the spill's own offer (`mine`) was not taken, one log line names why
  // (token counts only) and a counter moves. `aligned_end`: how far the session's entry would
  // serve the prompt through the end alignment on its own tokens and regions (the caller's, it
  // has the text; 0: it does not align) — past its tokens' common prefix and a block or more
  // past the start, that is the why (end_no_align), whichever tier the start came from.
  void note_unused(std::span<const int32_t> prompt, const ResumeOffer& mine,
                   const ResumeOffer& chosen, int64_t aligned_end = 0);

  double read_ms(int64_t bytes) const;
  void clear();
  SessionSpillStats stats() const;

 private:
  struct Block {
    CacheKey key;
    int64_t begin = 0;
    int64_t end = 0;
    std::vector<std::array<uint64_t, 2>> sums;  // one pair per view
  };
  struct Anchor {
    CacheKey key;  // its last block's
    int64_t position = 0;
    std::vector<std::array<uint64_t, 2>> sums;  // one pair per section
  };
  struct Entry {
    std::string id;
    std::string session;
    std::vector<int32_t> tokens;
    int64_t taint = INT64_MAX;
    std::vector<Block> blocks;
    std::vector<Anchor> anchors;  // ascending; the last one is the end
    std::vector<HiddenSpan> hidden;
    std::vector<std::pair<int64_t, int64_t>> regions;
    bool resident = false;
    int64_t saved_s = 0;
    int64_t used_s = 0;
    int64_t bytes = 0;  // its files' (shared ones counted in each entry that lists them)
  };

  SessionSpill(std::unique_ptr<BlobStore> store, std::string fingerprint,
               const core::StateLayout& layout, int64_t granularity, SessionSpillOptions options);
  core::Status scan();
  int64_t now_s() const;
  std::string entry_id(std::string_view session, std::span<const int32_t> tokens) const;
  core::Status put_manifest(const Entry& e);
  core::Result<Entry> read_manifest(const std::string& name);
  core::Status parse_manifest_blocks(const nlohmann::json& blocks, int64_t n, Entry* e) const;
  core::Status parse_manifest_anchors(const nlohmann::json& anchors, int64_t n, Entry* e) const;
  void drop_entry(const std::string& id);
  std::optional<std::vector<std::array<uint64_t, 2>>> known_anchor_sums(const CacheKey& key) const;
  void remove_unlisted(const std::vector<std::string>& names);
  void evict(const std::string& keep);
  bool exact_at(int64_t pos, int64_t taint) const;
  core::Status restore_entry(engine::Engine& engine, Entry& e, int64_t position,
                             int64_t rows_in_place);
  Entry* offered_entry(std::span<const int32_t> prompt, int64_t position);
  // The bytes a prewarm of `e` holds in RAM until its last block is checked.
  int64_t held_for_prewarm(const Entry& e, int64_t rows_in_place) const;
  core::Status refuse_entry(const std::string& id, const core::Status& why);
  // The anchor file at `a`, checked against the manifest's sums; its file's bytes in *read.
  core::Result<SectionCopy> read_checked_anchor(const Anchor& a, int64_t* read) const;
  struct LoadedBlock {
    core::Status status;
    RowCopy rows;
  };
  // A block's rows read, decoded and summed again against the manifest. `frame` holds a
  // section's compressed frame on its way (grown as needed, kept by the caller across blocks).
  LoadedBlock load_block(const Entry& e, const Block& b, core::AlignedBuffer* frame) const;
  void note_read(const Entry& e, int64_t bytes, int64_t t0_ns);
  // A block on its way to the disk: its rows, its frames being compressed on the codec pool
  // (encode_block), then its file written (write_block). Waits for its frames when it goes.
  struct PendingBlock {
    Block block;
    CacheKey prev;
    std::span<const int32_t> ids;
    RowCopy rows;
    std::vector<std::vector<uint8_t>> frames;
    std::vector<std::future<core::Status>> encoding;
    core::Status encoded;  // an inline encode's outcome
    ~PendingBlock();
  };
  void encode_block(PendingBlock& p);
  core::Status write_block(PendingBlock& p);
  // One save's writes in flight: the block being compressed, the bytes written, and every file
  // the entry lists (save()'s steps below share it).
  struct SaveWrites {
    int64_t written = 0;
    std::vector<std::string> names;
    std::unique_ptr<PendingBlock> pending;
  };
  Entry new_entry(const SpillConversation& conv) const;
  std::map<int64_t, const SectionCopy*> kept_anchors(const SpillConversation& conv) const;
  core::Status write_files(engine::Engine& engine, const SpillConversation& conv, Entry* e,
                           SaveWrites* w);
  core::Status save_block(const Block& blk, const CacheKey& prev, std::span<const int32_t> ids,
                          RowCopy rows, SaveWrites* w);
  core::Status save_anchor(const Anchor& anc, const std::vector<CacheKey>& below,
                           const SectionCopy& sections, int64_t saved_s, SaveWrites* w);
  core::Status write_pending(SaveWrites* w);
  void note_write(const std::string& name, SaveWrites* w);
  core::Status fail_save(SaveWrites* w, const core::Status& s);
  void commit_entry(Entry e, const std::vector<std::string>& names);
  // A block file's compressed frames as read (unchecked until decode_frames checks them): the file,
  // the codec and, per view, where its frame lies in the buffer the sections were read into.
  struct BlockFrames {
    std::optional<CacheFile> file;  // checks the frames' crcs
    SpillCodecKind kind = SpillCodecKind::kNone;
    std::vector<std::pair<size_t, size_t>> sections;  // offset, length
  };
  core::Result<BlockFrames> read_frames(const Block& b, std::span<const int32_t> ids,
                                        core::AlignedBuffer* frame) const;
  struct WriteBack {  // where decode_frames copies a block's rows: the engine's [a, b)
    engine::Engine* engine = nullptr;
    int64_t a = 0, b = 0;
  };
  core::Status decode_frames(const Block& b, const BlockFrames& frames,
                             const core::AlignedBuffer& frame, RowCopy* rows,
                             const WriteBack* into = nullptr) const;
  std::span<const int32_t> block_ids(const Entry& e, const Block& b) const {
    return {e.tokens.data() + b.begin, size_t(b.end - b.begin)};
  }

  std::unique_ptr<BlobStore> store_;
  std::unique_ptr<SpillCodecPool> pool_;  // null: one thread
  // The restore's read buffers, one per block in flight, kept from one restore to the next:
  // a read into fresh pages waits for the kernel to clear them.
  std::array<core::AlignedBuffer, 2> read_frames_;
  // The restore's reader thread, started once. Threads started for each read (the anchor's and
  // the first block's) ran on one core, one after the other.
  std::unique_ptr<SpillCodecPool> reader_ = std::make_unique<SpillCodecPool>(1);
  const std::string fingerprint_;
  const core::StateLayout layout_;
  const int64_t granularity_;
  const SessionSpillOptions options_;
  int64_t row_bytes_ = 0;      // one token's rows, every view (the offer's read estimate)
  int64_t section_bytes_ = 0;  // every section
  std::map<std::string, Entry> entries_;                  // by id
  std::unordered_map<std::string, int> file_refs_;        // blob name -> entries
  std::unordered_map<std::string, uint64_t> file_bytes_;  // blob name -> size
  double read_bytes_per_s_ = 0.0;                         // 0: not measured
  SessionSpillStats counts_;
};

}  // namespace anchorage::cache
