// RowStash: the guest stash — rows of the resident conversation that a short unrelated
// request (a guest) can reach, copied aside before it runs and written back before the next
// request (docs/cache.md "Resident prefix"). If the Budget sheds it meanwhile, the owner learns
// it from held() and treats those rows as lost.
//
// Thread safety: none; the engine thread only.
#pragma once

#include <cstdint>
#include <string_view>

#include "cache/cache_level.h"
#include "cache/state_copy.h"
#include "core/status.h"
#include "engine/engine.h"

namespace anchorage::cache {

class RowStash final : public CacheLevel {
 public:
  RowStash() = default;

  // Copies rows [begin, end) of every view aside (replacing what was held).
  void stash(engine::Engine& engine, int64_t begin, int64_t end);
  bool held() const { return !rows_.empty(); }
  int64_t begin() const { return rows_.begin(); }
  int64_t end() const { return rows_.end(); }
  // Writes the rows back and frees them.
  core::Status put_back(engine::Engine& engine);
  void clear() { rows_ = RowCopy(); }

  std::string_view level_name() const override { return "guest_stash"; }
  int64_t held_bytes() const override { return rows_.bytes(); }
  int64_t shed(int64_t want) override;

 private:
  RowCopy rows_;
};

}  // namespace anchorage::cache
