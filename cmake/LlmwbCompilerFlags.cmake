# Warnings and sanitizers shared by every target of the project.
add_library(llmwb_warnings INTERFACE)
target_compile_options(llmwb_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)

if(LLMWB_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# libFuzzer builds (fuzz/, scripts/fuzz.sh): every library is instrumented for coverage and
# checked by ASan + UBSan; only the fuzz targets link libFuzzer's main (-fsanitize=fuzzer).
if(LLMWB_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()

find_program(CCACHE_PROGRAM ccache)
if(CCACHE_PROGRAM)
  # ccache refuses objects built with a precompiled header (LlmwbPch.cmake) unless told that
  # the header's macros and __TIME__ cannot change the object: pch_defines,time_macros.
  set(_llmwb_ccache ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros
      ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_llmwb_ccache})
  set(CMAKE_C_COMPILER_LAUNCHER ${_llmwb_ccache})
endif()

# SIMD variants of a kernel live in files named *_avx2.cpp and *_avx512.cpp; they are compiled
# with the matching target flags and only called after a run-time CPU check.
function(llmwb_simd_sources)
  foreach(src IN LISTS ARGN)
    if(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
        "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx512bf16;-mavx2;-mfma;-mf16c")
    elseif(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
    endif()
    if(src MATCHES "_avx(2|512)\\.cpp$")
      # Other target flags than a precompiled header's (LlmwbPch.cmake): GCC could not use it.
      set_source_files_properties(${src} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()
