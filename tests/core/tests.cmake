# The crash test's child (tests/core/fs_crash_child.cc): a process that writes cache files
# through FaultFs over PosixFs and SIGKILLs itself at a crash point. core_tests runs it and
# gets its path at compile time.
add_executable(fs_crash_child ${CMAKE_CURRENT_LIST_DIR}/fs_crash_child.cc)
target_link_libraries(fs_crash_child PRIVATE anchorage_core)
target_include_directories(fs_crash_child PRIVATE ${CMAKE_CURRENT_LIST_DIR}/..)
if(TARGET core_tests)
  target_compile_definitions(core_tests PRIVATE
                             ANCHORAGE_FS_CRASH_CHILD="$<TARGET_FILE:fs_crash_child>")
  add_dependencies(core_tests fs_crash_child)
endif()
