# The request-parser fuzzer (docs/style.md §8). tests/fuzz/CMakeLists.txt is its own project,
# built with clang through ExternalProject; ctest runs the binary for a bounded time, seeded
# with the trace bodies (tests/corpus/chat_requests/) and tests/corpus/request_parser/ (saved
# inputs, and every crasher once fixed).
find_program(ANCHORAGE_CLANGXX NAMES clang++ clang++-14)
if(NOT ANCHORAGE_CLANGXX)
  message(WARNING "clang++ not found: the request-parser fuzzer is not built (scripts/deps.sh)")
  return()
endif()

include(ExternalProject)
set(_fuzz_build ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
ExternalProject_Add(request_parser_fuzzer
  SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}
  BINARY_DIR ${_fuzz_build}
  CMAKE_ARGS -DCMAKE_CXX_COMPILER=${ANCHORAGE_CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
             -DANCHORAGE_SOURCE_DIR=${CMAKE_SOURCE_DIR}
  BUILD_ALWAYS ON  # the sub-build decides what changed
  INSTALL_COMMAND "")

set(_fuzz_seconds 30)
set(_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/request_parser_fuzz_corpus)
# The first directory collects what the run finds (scratch, in the build tree); the others
# are the committed seeds, only read.
add_test(NAME request_parser_fuzz
         COMMAND sh -c "mkdir -p '${_fuzz_work}' && '${_fuzz_build}/request_parser_fuzzer' \
-max_total_time=${_fuzz_seconds} -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
-dict='${CMAKE_CURRENT_LIST_DIR}/json.dict' -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/' \
'${_fuzz_work}' '${CMAKE_SOURCE_DIR}/tests/corpus/chat_requests' \
'${CMAKE_SOURCE_DIR}/tests/corpus/request_parser'")
set_tests_properties(request_parser_fuzz PROPERTIES TIMEOUT 180)

# The GGUF parser fuzzer (built by the same sub-project): a bounded run seeded with the small
# files in tests/corpus/gguf/ (written by `anchorage gguf-random` and hand-cut variants).
set(_gguf_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/gguf_parser_fuzz_corpus)
add_test(NAME gguf_parser_fuzz
         COMMAND sh -c "mkdir -p '${_gguf_fuzz_work}' && '${_fuzz_build}/gguf_parser_fuzzer' \
-max_total_time=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -max_len=65536 \
-print_final_stats=1 -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/gguf_' \
'${_gguf_fuzz_work}' '${CMAKE_SOURCE_DIR}/tests/corpus/gguf'")
set_tests_properties(gguf_parser_fuzz PROPERTIES TIMEOUT 180)

# The cache file parser fuzzer: seeded with the golden file of every format version.
set(_cache_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/cache_file_fuzz_corpus)
add_test(NAME cache_file_fuzz
         COMMAND sh -c "mkdir -p '${_cache_fuzz_work}' && '${_fuzz_build}/cache_file_fuzzer' \
-max_total_time=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -max_len=65536 \
-print_final_stats=1 -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/cache_file_' \
'${_cache_fuzz_work}' '${CMAKE_SOURCE_DIR}/tests/golden'")
set_tests_properties(cache_file_fuzz PROPERTIES TIMEOUT 180)

# The spill codec fuzzer: decodes of arbitrary frames and round trips of arbitrary data (the
# target's two modes), seeded with tests/corpus/spill_codec/ (small frames of each kind).
set(_spill_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/spill_codec_fuzz_corpus)
add_test(NAME spill_codec_fuzz
         COMMAND sh -c "mkdir -p '${_spill_fuzz_work}' && '${_fuzz_build}/spill_codec_fuzzer' \
-max_total_time=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -max_len=65536 \
-print_final_stats=1 -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/spill_codec_' \
'${_spill_fuzz_work}' '${CMAKE_SOURCE_DIR}/tests/corpus/spill_codec'")
set_tests_properties(spill_codec_fuzz PROPERTIES TIMEOUT 180)

# The suffix store's log parser fuzzer: seeded with the golden file of every format version.
set(_suffix_fuzz_work ${CMAKE_CURRENT_BINARY_DIR}/suffix_log_fuzz_corpus)
add_test(NAME suffix_log_fuzz
         COMMAND sh -c "mkdir -p '${_suffix_fuzz_work}' && '${_fuzz_build}/suffix_log_fuzzer' \
-max_total_time=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -max_len=65536 \
-print_final_stats=1 -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/suffix_log_' \
'${_suffix_fuzz_work}' '${CMAKE_SOURCE_DIR}/tests/golden'")
set_tests_properties(suffix_log_fuzz PROPERTIES TIMEOUT 180)
