# Precompiled headers: most of the compile time of a translation unit here is parsing the
# standard library, nlohmann/json and Qt's module headers (a Qt test: ~7 of its ~13 s). Targets
# of one flag set share one precompiled header (REUSE_FROM), compiled by a small owner target
# that has only the group's base flags. GCC uses a precompiled header only when the flags that
# matter are the ones it was built with: -fPIC, -m target flags, and every macro defined then
# must be defined the same now (macros the user defines in addition are fine). So the owner
# carries the fewest macros of the group; a target that does not match parses the headers as
# usual (-Winvalid-pch says why), which costs time, never correctness. The headers stay
# included where they are used: -DLLMWB_PCH=OFF (or another compiler) builds the same program.
option(LLMWB_PCH "Precompile the standard library, nlohmann/json and Qt headers" ON)

set(LLMWB_PCH_STD
  <algorithm> <array> <atomic> <chrono> <cmath> <condition_variable> <cstdint> <cstdio>
  <cstdlib> <cstring> <deque> <filesystem> <fstream> <functional> <iostream> <limits> <map>
  <memory> <mutex> <optional> <set> <span> <sstream> <string> <string_view> <thread>
  <unordered_map> <unordered_set> <utility> <variant> <vector> <nlohmann/json.hpp>
  ${PROJECT_SOURCE_DIR}/engine/util/json_templates.h)

# llmwb_pch(target group [PIC] [LIBS lib ...] [HEADERS header ...]): `target` compiles with the
# precompiled header of `group`: the standard headers above plus HEADERS, built by an owner
# target with position-independent code if PIC and linking LIBS (for their flags: Qt's macros).
# The first call of a group (in the folder of the group's targets) defines it. Every such target
# links llmwb_json_templates: the header json_templates.h declares nlohmann/json's parser and
# serializer instantiated there, once, instead of in each translation unit.
function(llmwb_pch target group)
  if(NOT LLMWB_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  cmake_parse_arguments(P "PIC" "" "LIBS;HEADERS" ${ARGN})
  if(NOT TARGET llmwb_json_templates)
    add_library(llmwb_json_templates STATIC ${PROJECT_SOURCE_DIR}/engine/util/json_templates.cpp)
    target_include_directories(llmwb_json_templates PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(llmwb_json_templates PUBLIC nlohmann_json::nlohmann_json)
    set_target_properties(llmwb_json_templates PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  string(MAKE_C_IDENTIFIER "${group}" key)
  set(owner llmwb_pch_${key})
  if(NOT TARGET ${owner})
    set(empty ${PROJECT_BINARY_DIR}/llmwb_pch_empty.cpp)
    if(NOT EXISTS ${empty})
      file(WRITE ${empty} "// The translation unit of the precompiled-header owners (LlmwbPch.cmake).\n")
    endif()
    add_library(${owner} OBJECT ${empty})
    target_link_libraries(${owner} PRIVATE nlohmann_json::nlohmann_json ${P_LIBS})
    set_target_properties(${owner} PROPERTIES POSITION_INDEPENDENT_CODE ${P_PIC})
    # (CMake wraps the list in #ifdef __cplusplus: C sources of the users are not affected.)
    target_precompile_headers(${owner} PRIVATE ${LLMWB_PCH_STD} ${P_HEADERS})
  endif()
  target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json llmwb_json_templates)
  target_precompile_headers(${target} REUSE_FROM ${owner})
endfunction()
