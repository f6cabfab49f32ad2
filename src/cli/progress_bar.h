// ProgressBar: a one-line prefill progress bar on stderr ("\r" redrawn), for long prefills
// in `anchorage run`. Drawn only when enabled (stderr is a TTY, or --progress); redraws at
// most every 100 ms. Threading: the engine thread only (it is fed by on_progress).
#pragma once

#include <cstdint>

namespace anchorage::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled);
  ~ProgressBar();  // ends the line if anything was drawn

  // done of total tokens.
  void update(int64_t done, int64_t total);

  static bool stderr_is_tty();

 private:
  bool enabled_;
  bool drawn_ = false;
  int64_t t0_ns_;
  int64_t last_draw_ns_ = 0;
};

}  // namespace anchorage::cli
