# CUDA is optional: AUTO enables it when nvcc is found, ON requires it, OFF disables it.
set(LLMWB_HAVE_CUDA OFF)
if(NOT LLMWB_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;86;89;90")
    endif()
    enable_language(CUDA)
    set(LLMWB_HAVE_CUDA ON)
  elseif(LLMWB_CUDA STREQUAL "ON")
    message(FATAL_ERROR "LLMWB_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "LLM Workbench: CUDA backend ${LLMWB_HAVE_CUDA}")

# cudasim (kernels/cuda/sim): the CUDA backend compiled as C++ for a CPU emulator, so that its
# kernels run in CI without a GPU. AUTO enables it when the CUDA toolkit's headers are found.
set(LLMWB_CUDASIM "AUTO" CACHE STRING "CUDA backend on the CPU emulator for tests: AUTO, ON or OFF")
set_property(CACHE LLMWB_CUDASIM PROPERTY STRINGS AUTO ON OFF)
set(LLMWB_HAVE_CUDASIM OFF)
if(NOT LLMWB_CUDASIM STREQUAL "OFF" AND LLMWB_BUILD_TESTS)
  find_path(LLMWB_CUDASIM_INCLUDE_DIR cuda_runtime_api.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDA_HOME ENV CUDA_PATH
            PATHS /usr/local/cuda/include /usr/local/cuda/targets/x86_64-linux/include)
  if(LLMWB_CUDASIM_INCLUDE_DIR AND EXISTS ${LLMWB_CUDASIM_INCLUDE_DIR}/cublas_v2.h
     AND EXISTS ${LLMWB_CUDASIM_INCLUDE_DIR}/cuda_fp16.h)
    set(LLMWB_HAVE_CUDASIM ON)
  elseif(LLMWB_CUDASIM STREQUAL "ON")
    message(FATAL_ERROR "LLMWB_CUDASIM=ON but the CUDA toolkit headers were not found")
  endif()
endif()
message(STATUS "LLM Workbench: CUDA emulator (cudasim) ${LLMWB_HAVE_CUDASIM}")
