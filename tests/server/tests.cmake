# The server tests link the server library (the layer loop links only the test support), and
# the integration test drives a real `anchorage serve` with the official openai npm SDK.
if(TARGET server_tests)
  target_link_libraries(server_tests PRIVATE anchorage_server)
endif()

# scripts/deps.sh installs the pinned SDK into .cache/node; the test fails (not skips) when it
# is missing, with a message saying so.
find_program(ANCHORAGE_NODE node)
if(ANCHORAGE_NODE)
  add_test(NAME openai_sdk_integration
           COMMAND ${ANCHORAGE_NODE} ${CMAKE_CURRENT_LIST_DIR}/openai_sdk_test.mjs
                   $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3
                   ${CMAKE_SOURCE_DIR}/.cache/node/node_modules)
  # No disk tier: the test's answers must not depend on what an earlier run left on the disk.
  set_tests_properties(openai_sdk_integration PROPERTIES TIMEOUT 300
                       ENVIRONMENT "ANCHORAGE_DISK_CACHE=off")
endif()

add_test(NAME serve_flags COMMAND ${CMAKE_CURRENT_LIST_DIR}/serve_flags_test.sh
                                  $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3)
set_tests_properties(serve_flags PROPERTIES TIMEOUT 60 ENVIRONMENT "ANCHORAGE_DISK_CACHE=off")

# opencode, the real client, through a whole session against `anchorage serve` (its request
# journal shows every follow-up resumed and every answer was exact).
add_test(NAME opencode_e2e COMMAND ${CMAKE_CURRENT_LIST_DIR}/opencode_e2e_test.sh
                                   $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3
                                   ${CMAKE_SOURCE_DIR}/.cache/node/opencode/node_modules)
set_tests_properties(opencode_e2e PROPERTIES TIMEOUT 420)

# The disk tier's crash safety with real processes: a server SIGKILLed at every crash point of
# the file seam while it writes a head, then restarted on the same directory.
add_test(NAME disk_crash COMMAND ${CMAKE_CURRENT_LIST_DIR}/disk_crash_test.sh
                                 $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3)
set_tests_properties(disk_crash PROPERTIES TIMEOUT 180)

# The session spill's crash safety with real processes: a server SIGKILLed at every crash point
# of the file seam while its shutdown drain saves the conversation, then restarted.
add_test(NAME spill_crash COMMAND ${CMAKE_CURRENT_LIST_DIR}/spill_crash_test.sh
                                  $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3)
set_tests_properties(spill_crash PROPERTIES TIMEOUT 180)

# The same for the saves that are not the drain's (a displacement, the park's give-up, a store
# restore), each SIGKILLed at every crash point of the spill's own files.
add_test(NAME spill_save_crash COMMAND ${CMAKE_CURRENT_LIST_DIR}/spill_crash_test.sh
                                       $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3 saves)
set_tests_properties(spill_save_crash PROPERTIES TIMEOUT 600)
