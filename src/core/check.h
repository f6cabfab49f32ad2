// ANCHORAGE_CHECK: a broken invariant is a bug, not an error a caller can handle. It aborts
// with file:line. Outside failures use Status (core/status.h) instead.
#pragma once

#include <cstdio>
#include <cstdlib>

#define ANCHORAGE_CHECK(cond)                                                       \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

#define ANCHORAGE_CHECK_MSG(cond, msg)                                                        \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, msg); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)
