# Locate CUTLASS's C++ headers.
#   1. -DCUTLASS_DIR=... or the CUTLASS_DIR environment variable: a CUTLASS checkout
#      (include/ and tools/util/include/ below it).
#   2. The nvidia-cutlass wheel in the project venv (.venv, made by scripts/bootstrap.sh),
#      which carries the headers under cutlass_library/source/.
# Sets CUTLASS_FOUND, CUTLASS_INCLUDE_DIRS and the interface target cudal2::cutlass.
if(NOT CUTLASS_DIR AND DEFINED ENV{CUTLASS_DIR})
  set(CUTLASS_DIR "$ENV{CUTLASS_DIR}")
endif()

set(_cutlass_root "")
if(CUTLASS_DIR)
  if(NOT EXISTS "${CUTLASS_DIR}/include/cutlass/cutlass.h")
    message(FATAL_ERROR "CUTLASS_DIR=${CUTLASS_DIR} has no include/cutlass/cutlass.h")
  endif()
  set(_cutlass_root "${CUTLASS_DIR}")
else()
  set(_venv_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  if(EXISTS "${_venv_python}")
    execute_process(
      COMMAND "${_venv_python}" -c "import cutlass_library, os; print(os.path.dirname(cutlass_library.__file__))"
      OUTPUT_VARIABLE _cl_dir OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND EXISTS "${_cl_dir}/source/include/cutlass/cutlass.h")
      set(_cutlass_root "${_cl_dir}/source")
    endif()
  endif()
endif()

if(_cutlass_root)
  set(CUTLASS_FOUND TRUE)
  set(CUTLASS_INCLUDE_DIRS "${_cutlass_root}/include" "${_cutlass_root}/tools/util/include")
  add_library(cudal2_cutlass INTERFACE)
  add_library(cudal2::cutlass ALIAS cudal2_cutlass)
  target_include_directories(cudal2_cutlass SYSTEM INTERFACE ${CUTLASS_INCLUDE_DIRS})
  # Without NDEBUG nvcc 13.0 serializes WGMMA (warning C7510).
  target_compile_definitions(cudal2_cutlass INTERFACE NDEBUG)
  message(STATUS "CUTLASS headers: ${_cutlass_root}")
else()
  set(CUTLASS_FOUND FALSE)
  message(STATUS "CUTLASS headers not found (run scripts/bootstrap.sh or set CUTLASS_DIR)")
endif()
