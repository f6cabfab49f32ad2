# The NumPy reference check of the qwen35 model (tests/model/numpy_ref/): dump_tiny writes the
# tiny model's HF-convention weights and its logits/state, qwen35_ref.py recomputes them in
# float64 from the spec. The dumper links the model library only (plus the .npy writer), so it
# does not wait on the engine or text layers.
add_executable(qwen35_dump_tiny ${CMAKE_CURRENT_LIST_DIR}/numpy_ref/dump_tiny.cc
                                ${CMAKE_CURRENT_SOURCE_DIR}/support/npy_writer.cc)
target_include_directories(qwen35_dump_tiny PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(qwen35_dump_tiny PRIVATE anchorage_model)

# Debian's interpreter, which has python3-numpy (a pyenv python3 earlier on PATH may not).
find_program(ANCHORAGE_NUMPY_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(ANCHORAGE_NUMPY_PYTHON)
  set(_ref ${CMAKE_CURRENT_LIST_DIR}/numpy_ref/qwen35_ref.py)
  foreach(mode compare self_check)
    set(_dir ${CMAKE_CURRENT_BINARY_DIR}/numpy_ref_${mode})
    set(_flag "")
    if(mode STREQUAL "self_check")
      set(_flag "--self-check")
    endif()
    add_test(NAME qwen35_numpy_ref_${mode}
             COMMAND sh -c "rm -rf '${_dir}' && mkdir -p '${_dir}' && \
'$<TARGET_FILE:qwen35_dump_tiny>' '${_dir}' && '${ANCHORAGE_NUMPY_PYTHON}' '${_ref}' '${_dir}' ${_flag}")
    set_tests_properties(qwen35_numpy_ref_${mode} PROPERTIES TIMEOUT 120)
  endforeach()
endif()

# Independent-reader check of the GGUF files `anchorage gguf-random` writes: Hugging Face's
# @huggingface/gguf (pinned; scripts/deps.sh installs it in .cache/node/gguf) must list
# the same metadata and tensors as `anchorage inspect --json`. Fails, not skips, when missing.
find_program(ANCHORAGE_NODE node)
if(ANCHORAGE_NODE)
  add_test(NAME gguf_npm_reader
           COMMAND ${ANCHORAGE_NODE} ${CMAKE_CURRENT_LIST_DIR}/gguf_npm_reader_test.mjs
                   $<TARGET_FILE:anchorage> ${ANCHORAGE_DATA_DIR}/qwen3
                   ${CMAKE_SOURCE_DIR}/.cache/node/gguf/node_modules
                   ${CMAKE_CURRENT_BINARY_DIR}/gguf_npm_reader)
  set_tests_properties(gguf_npm_reader PROPERTIES TIMEOUT 300)
endif()

# The committed dequantization vectors (tests/golden/quant/, compared bit for bit with
# dequantize_row by tests/kernels/quant_golden_test.cc) are what the independent NumPy
# dequantizer computes today.
if(ANCHORAGE_NUMPY_PYTHON)
  add_test(NAME quant_numpy_ref_golden
           COMMAND ${ANCHORAGE_NUMPY_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/numpy_ref/quant_ref.py
                   ${CMAKE_SOURCE_DIR}/tests/golden/quant --check)
  set_tests_properties(quant_numpy_ref_golden PROPERTIES TIMEOUT 120)
endif()
