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

# fuzz_test(<name> <seed dir>): a bounded run (20 s) of <name>_fuzzer built by the same
# sub-project; what it finds collects in a scratch directory in the build tree, the seeds are
# only read.
function(fuzz_test name seeds)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/${name}_fuzz_corpus)
  add_test(NAME ${name}_fuzz
           COMMAND sh -c "mkdir -p '${work}' && '${_fuzz_build}/${name}_fuzzer' \
-max_total_time=20 -rss_limit_mb=2048 -malloc_limit_mb=512 -timeout=10 -max_len=65536 \
-print_final_stats=1 -artifact_prefix='${CMAKE_CURRENT_BINARY_DIR}/${name}_' \
'${work}' '${seeds}'")
  set_tests_properties(${name}_fuzz PROPERTIES TIMEOUT 180)
endfunction()

# The GGUF parser: the small files in tests/corpus/gguf/ (written by `anchorage gguf-random`
# and hand-cut variants).
fuzz_test(gguf_parser ${CMAKE_SOURCE_DIR}/tests/corpus/gguf)
# The cache file parser and the suffix store's log parser: the golden file of every format
# version.
fuzz_test(cache_file ${CMAKE_SOURCE_DIR}/tests/golden)
fuzz_test(suffix_log ${CMAKE_SOURCE_DIR}/tests/golden)
# The spill codec: decodes of arbitrary frames and round trips of arbitrary data (the target's
# two modes), seeded with tests/corpus/spill_codec/ (small frames of each kind).
fuzz_test(spill_codec ${CMAKE_SOURCE_DIR}/tests/corpus/spill_codec)
