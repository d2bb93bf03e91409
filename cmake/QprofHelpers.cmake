# Small target helpers so every component is one target with explicit dependencies.
#
#   qprof_cc_library(NAME SRCS a.cc b.cc HDRS a.h DEPS other_lib ...)
#   qprof_cc_test(NAME SRCS a_test.cc DEPS lib ... [LABELS gpu])
#   qprof_cc_binary(NAME SRCS main.cc DEPS ...)
#
# Libraries are static; warnings are on for our code only.
#
# Test binaries use tests/gtest_main.cc: a binary in which nothing failed but some test
# called GTEST_SKIP exits with 77, the SKIP_RETURN_CODE of its ctest entry, so ctest
# reports it as skipped (with the reasons in its output), never as passed.

set(QPROF_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

function(qprof_cc_library name)
  cmake_parse_arguments(A "" "" "SRCS;HDRS;DEPS;CUDA_SRCS" ${ARGN})
  if(A_SRCS OR A_CUDA_SRCS)
    add_library(${name} STATIC ${A_SRCS} ${A_CUDA_SRCS} ${A_HDRS})
    target_link_libraries(${name} PUBLIC ${A_DEPS})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${QPROF_WARNINGS}>)
  else()
    add_library(${name} INTERFACE ${A_HDRS})
    target_link_libraries(${name} INTERFACE ${A_DEPS})
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
  endif()
endfunction()

function(qprof_cc_test name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS;LABELS" ${ARGN})
  if(NOT TARGET qprof_gtest_main)
    add_library(qprof_gtest_main STATIC ${PROJECT_SOURCE_DIR}/tests/gtest_main.cc)
    target_link_libraries(qprof_gtest_main PUBLIC GTest::gtest)
  endif()
  add_executable(${name} ${A_SRCS})
  target_link_libraries(${name} PRIVATE ${A_DEPS} GTest::gtest GTest::gmock qprof_gtest_main)
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${QPROF_WARNINGS}>)
  target_compile_definitions(${name} PRIVATE
    QPROF_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    QPROF_BINARY_DIR="${PROJECT_BINARY_DIR}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "QPROF_SOURCE_DIR=${PROJECT_SOURCE_DIR};QPROF_BINARY_DIR=${PROJECT_BINARY_DIR}"
    SKIP_RETURN_CODE 77)
  if(A_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}")
  endif()
endfunction()

function(qprof_cc_binary name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_executable(${name} ${A_SRCS})
  target_link_libraries(${name} PRIVATE ${A_DEPS})
  target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${QPROF_WARNINGS}>)
endfunction()

# qprof_embed_texts(OUTPUT gen.cc NAMESPACE ns FUNCTION Name FILES a.json b.json ...): a C++
# source, generated at build time from FILES (relative to the calling folder), that defines
#   const std::vector<qprof::EmbeddedText>& ns::Name();   (base/embedded_text.h)
# Add OUTPUT to a target's SRCS. Editing a file regenerates it.
function(qprof_embed_texts)
  cmake_parse_arguments(A "" "OUTPUT;NAMESPACE;FUNCTION" "FILES" ${ARGN})
  set(abs)
  foreach(f ${A_FILES})
    list(APPEND abs ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  # '|' rather than ';' between the files: a ';' would reach the build tool's shell.
  string(REPLACE ";" "|" files_arg "${abs}")
  add_custom_command(OUTPUT ${A_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${A_OUTPUT} -DNAMESPACE=${A_NAMESPACE}
            -DFUNCTION=${A_FUNCTION} "-DFILES=${files_arg}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_texts.cmake
    DEPENDS ${abs} ${PROJECT_SOURCE_DIR}/cmake/embed_texts.cmake
    COMMENT "Embedding ${A_FUNCTION} (${A_FILES})"
    VERBATIM)
endfunction()
