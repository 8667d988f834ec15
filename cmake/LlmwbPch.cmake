# Precompiled headers: most of the compile time of a translation unit here is parsing the
# standard library, nlohmann/json and Qt's module headers (a Qt test: ~7 of its ~13 s). Targets
# of one flag set share one precompiled header: the first target of a group compiles it and the
# others reuse it (REUSE_FROM). GCC uses a precompiled header only when the flags that matter
# (-fPIC, -m target flags, macros the headers test) are those it was built with and otherwise
# parses the headers as usual, so a wrong grouping costs time, never correctness (-Winvalid-pch
# shows it). The headers stay included where they are used: a build with -DLLMWB_PCH=OFF (or
# another compiler) is the same program.
option(LLMWB_PCH "Precompile the standard library, nlohmann/json and Qt headers" ON)

set(LLMWB_PCH_STD
  <algorithm> <array> <atomic> <chrono> <cmath> <condition_variable> <cstdint> <cstdio>
  <cstdlib> <cstring> <deque> <filesystem> <fstream> <functional> <iostream> <limits> <map>
  <memory> <mutex> <optional> <set> <span> <sstream> <string> <string_view> <thread>
  <unordered_map> <unordered_set> <utility> <variant> <vector> <nlohmann/json.hpp>)

# llmwb_pch(target group [header ...]): `target` compiles with the precompiled header of `group`
# (the standard headers above plus `header ...`, given by the group's first target).
function(llmwb_pch target group)
  if(NOT LLMWB_PCH OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    return()
  endif()
  target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
  string(MAKE_C_IDENTIFIER "${group}" key)
  get_property(owner GLOBAL PROPERTY LLMWB_PCH_OWNER_${key})
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    # (CMake wraps the list in #ifdef __cplusplus: C sources of the target are not affected.)
    target_precompile_headers(${target} PRIVATE ${LLMWB_PCH_STD} ${ARGN})
    set_property(GLOBAL PROPERTY LLMWB_PCH_OWNER_${key} ${target})
  endif()
endfunction()
