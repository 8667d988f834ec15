# llmwb_add_test(NAME name SOURCES a.cpp ... [LIBS lib ...] [LABELS label ...] [TIMEOUT s])
# Builds a Qt Test executable and registers it with ctest (offscreen platform). Tests that need
# fetched assets (tokenizer files, reference outputs) find them through LLMWB_TEST_ASSETS, set
# by scripts/fetch-test-assets.sh; LLMWB_BUILD_DIR points at the build tree (for the CLI binary).
if(LLMWB_WITH_QT)
  find_package(Qt6 REQUIRED COMPONENTS Core Test)
endif()

set(LLMWB_TEST_ASSETS "$ENV{HOME}/.cache/llmwb/test-assets" CACHE PATH "Directory of fetched test assets")

# Whether the test being added (T_LABELS) is built and registered: with LLMWB_ENGINE_TESTS=OFF
# the tests labelled engine stay targets (so their folders' settings apply) that are neither
# built by default nor registered with ctest.
macro(llmwb_test_registered out)
  if(NOT LLMWB_ENGINE_TESTS AND "engine" IN_LIST T_LABELS)
    set(${out} OFF)
  else()
    set(${out} ON)
  endif()
endmacro()

function(llmwb_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT LLMWB_WITH_QT)
    return()
  endif()
  llmwb_test_registered(registered)
  if(registered)
    add_executable(${T_NAME} ${T_SOURCES})
  else()
    add_executable(${T_NAME} EXCLUDE_FROM_ALL ${T_SOURCES})
  endif()
  target_link_libraries(${T_NAME} PRIVATE Qt6::Core Qt6::Test llmwb_warnings ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests)
  # Some Qt tests share fixtures written with mini_test (tests/server/server_fixture.cpp).
  llmwb_link_mini_test(${T_NAME})
  set_target_properties(${T_NAME} PROPERTIES AUTOMOC ON)
  # One precompiled header per test folder (QtTest's macros name the folder) and Qt module set.
  if(T_LIBS MATCHES "Widgets|llmwb_ui")
    llmwb_pch(${T_NAME} "qt_test_widgets_${CMAKE_CURRENT_SOURCE_DIR}" PIC
              LIBS Qt6::Core Qt6::Test Qt6::Widgets HEADERS <QtTest/QtTest> <QtWidgets/QtWidgets>)
  else()
    llmwb_pch(${T_NAME} "qt_test_${CMAKE_CURRENT_SOURCE_DIR}" PIC LIBS Qt6::Core Qt6::Test
              HEADERS <QtTest/QtTest>)
  endif()
  if(NOT registered)
    return()
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "QT_QPA_PLATFORM=offscreen;LLMWB_TEST_ASSETS=${LLMWB_TEST_ASSETS};LLMWB_BUILD_DIR=${PROJECT_BINARY_DIR};LLMWB_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    SKIP_RETURN_CODE 77)
endfunction()

# llmwb_link_mini_test(target): the target's sources use tests/support/mini_test.h; links its
# runner and helpers (mini_test.cpp), compiled once for all tests.
function(llmwb_link_mini_test target)
  if(NOT TARGET llmwb_mini_test)
    add_library(llmwb_mini_test STATIC EXCLUDE_FROM_ALL ${PROJECT_SOURCE_DIR}/tests/support/mini_test.cpp)
    target_include_directories(llmwb_mini_test PUBLIC ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(llmwb_mini_test PRIVATE llmwb_warnings)
  endif()
  target_link_libraries(${target} PRIVATE llmwb_mini_test)
endfunction()

# llmwb_add_plain_test(NAME name SOURCES a.cpp ... [LIBS lib ...] [LABELS label ...] [TIMEOUT s]
#                      [CUDA_PLUGIN target])
# A test executable WITHOUT Qt (tests/support/mini_test.h), built in every configuration,
# including LLMWB_WITH_QT=OFF (the GPU machine has no Qt). Exit 77 = SKIPPED. The environment is
# llmwb_add_test's, plus LLMWB_CUDA_PLUGIN (the built plugin) when the CUDA backend is built, or
# the CUDA_PLUGIN target's library (and LLMWB_CUDA_DRIVER, see engine/backend/cuda_plugin.h).
function(llmwb_add_plain_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;CUDA_PLUGIN" "SOURCES;LIBS;LABELS" ${ARGN})
  llmwb_test_registered(registered)
  if(registered)
    add_executable(${T_NAME} ${T_SOURCES})
  else()
    add_executable(${T_NAME} EXCLUDE_FROM_ALL ${T_SOURCES})
  endif()
  target_link_libraries(${T_NAME} PRIVATE llmwb_warnings ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests)
  llmwb_pch(${T_NAME} exe)
  llmwb_link_mini_test(${T_NAME})
  if(NOT registered)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY LLMWB_PLAIN_TEST_TARGETS ${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set(env "LLMWB_TEST_ASSETS=${LLMWB_TEST_ASSETS};LLMWB_BUILD_DIR=${PROJECT_BINARY_DIR};LLMWB_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  if(T_CUDA_PLUGIN)
    # A plugin other than the real one (the cudasim emulator): it needs no CUDA driver, so it
    # also stands in for the driver library the loader probes first.
    list(APPEND env "LLMWB_CUDA_PLUGIN=$<TARGET_FILE:${T_CUDA_PLUGIN}>"
                    "LLMWB_CUDA_DRIVER=$<TARGET_FILE:${T_CUDA_PLUGIN}>")
    add_dependencies(${T_NAME} ${T_CUDA_PLUGIN})
  elseif(TARGET llmwb_cuda)
    list(APPEND env "LLMWB_CUDA_PLUGIN=$<TARGET_FILE:llmwb_cuda>")
    add_dependencies(${T_NAME} llmwb_cuda)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
    ENVIRONMENT "${env}" SKIP_RETURN_CODE 77)
endfunction()
