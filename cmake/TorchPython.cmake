# Which Python's PyTorch the torch.matmul plugin is built against, and which Python the Python
# package's tests run. bootstrap.sh installs PyTorch into the project's .venv, while a GPU machine
# may only have it in the system python3; the first of these that imports torch wins:
#   1. -DCUDAL2_PYTHON=... or the CUDAL2_PYTHON environment variable
#   2. the project venv, <source>/.venv/bin/python
#   3. python3 on PATH
# Sets CUDAL2_TORCH_PYTHON (empty: none has torch) and CUDAL2_TORCH_PREFIX (torch's CMake prefix).
# CUDAL2_PYTHON_RESOLVED is the Python for the pytest suite: the one with torch, else the first
# candidate (its tests then report themselves skipped).
set(CUDAL2_PYTHON "" CACHE FILEPATH "Python whose PyTorch to use (default: .venv, then python3)")

# The plugin configured on its own (plugins/torch) names the source tree in CUDAL2_SOURCE_DIR.
if(NOT CUDAL2_SOURCE_DIR)
  set(CUDAL2_SOURCE_DIR "${PROJECT_SOURCE_DIR}")
endif()
set(_cudal2_py_candidates "")
if(CUDAL2_PYTHON)
  list(APPEND _cudal2_py_candidates "${CUDAL2_PYTHON}")
elseif(DEFINED ENV{CUDAL2_PYTHON} AND NOT "$ENV{CUDAL2_PYTHON}" STREQUAL "")
  list(APPEND _cudal2_py_candidates "$ENV{CUDAL2_PYTHON}")
endif()
if(EXISTS "${CUDAL2_SOURCE_DIR}/.venv/bin/python")
  list(APPEND _cudal2_py_candidates "${CUDAL2_SOURCE_DIR}/.venv/bin/python")
endif()
find_program(_cudal2_python3 python3)
if(_cudal2_python3)
  list(APPEND _cudal2_py_candidates "${_cudal2_python3}")
endif()

set(CUDAL2_TORCH_PYTHON "")
set(CUDAL2_TORCH_PREFIX "")
foreach(_py IN LISTS _cudal2_py_candidates)
  execute_process(COMMAND "${_py}" -c "import torch; print(torch.utils.cmake_prefix_path)"
                  OUTPUT_VARIABLE _prefix OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0 AND _prefix)
    set(CUDAL2_TORCH_PYTHON "${_py}")
    set(CUDAL2_TORCH_PREFIX "${_prefix}")
    break()
  endif()
endforeach()

if(CUDAL2_TORCH_PYTHON)
  set(CUDAL2_PYTHON_RESOLVED "${CUDAL2_TORCH_PYTHON}")
  message(STATUS "PyTorch: found with ${CUDAL2_TORCH_PYTHON}")
elseif(_cudal2_py_candidates)
  list(GET _cudal2_py_candidates 0 CUDAL2_PYTHON_RESOLVED)
  message(STATUS "PyTorch: not importable by any of ${_cudal2_py_candidates}")
else()
  set(CUDAL2_PYTHON_RESOLVED "${CUDAL2_SOURCE_DIR}/.venv/bin/python")
endif()
