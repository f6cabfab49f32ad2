# The CLI's tests (tests/cli/*_test.cc, built into cli_tests by tests/CMakeLists.txt): the flag
# parser is compiled in directly (src/cli/ is an executable, not a library), and the
# end-to-end tests run the real `anchorage` binary, whose path they get at compile time.
if(TARGET cli_tests)
  target_sources(cli_tests PRIVATE ${PROJECT_SOURCE_DIR}/src/cli/flags.cc)
  target_compile_definitions(cli_tests PRIVATE ANCHORAGE_BINARY="$<TARGET_FILE:anchorage>")
  add_dependencies(cli_tests anchorage)
endif()
