#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include "core/clock.h"

namespace anchorage::cli {

ProgressBar::ProgressBar(bool enabled) : enabled_(enabled), t0_ns_(core::now_ns()) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fputc('\n', stderr);
}

bool ProgressBar::stderr_is_tty() {
  return isatty(STDERR_FILENO) == 1;
}

void ProgressBar::update(int64_t done, int64_t total) {
  if (!enabled_ || total <= 0) return;
  const int64_t now = core::now_ns();
  if (done < total && drawn_ && now - last_draw_ns_ < 100'000'000) return;
  last_draw_ns_ = now;
  constexpr int kWidth = 30;
  const int filled = int(done * kWidth / total);
  char bar[kWidth + 1];
  for (int i = 0; i < kWidth; ++i) bar[i] = i < filled ? '#' : '-';
  bar[kWidth] = '\0';
  const double s = double(now - t0_ns_) * 1e-9;
  std::fprintf(stderr, "\rprefill [%s] %lld/%lld tokens, %.1f tok/s", bar, (long long)done,
               (long long)total, s > 0 ? double(done) / s : 0.0);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace anchorage::cli
