# A relocatable cudal2. Programs find what they read at run time relative to themselves
# (src/core/paths.hpp), in share/cudal2/ beside bin/ (installed) or in the build directory:
#   kernels/   our kernel headers (the JIT's -I)        prompts/   the LLM proposer's template
#   cutlass/   CUTLASS's include/ and tools/util/include/ (the JIT's -I for sm90_cutlass)
#   report.py  `cudal2 report`'s generator, with analysis.py and store_csv.py (which reads stores)
#              beside it, and replay_judge.py (`--replay`) (installed only; the build tree uses python/
#              of the checkout)
# No path of the build machine is compiled into a program.
include(GNUInstallDirs)
set(_share "${CMAKE_BINARY_DIR}/share/cudal2")

# The build tree gets the installed layout: copies of the kernel headers and the prompt templates
# (refreshed by every build), and a RELATIVE link to CUTLASS (it stays valid when the checkout with
# its build directory and .venv moves or is carried to another machine).
file(GLOB _kernel_headers CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/kernels/*")
file(GLOB _prompts CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/prompts/*")
set(_share_outputs "")
foreach(_f IN LISTS _kernel_headers _prompts)
  get_filename_component(_name "${_f}" NAME)
  get_filename_component(_dir "${_f}" DIRECTORY)
  get_filename_component(_sub "${_dir}" NAME)  # kernels or prompts
  set(_out "${_share}/${_sub}/${_name}")
  add_custom_command(OUTPUT "${_out}" COMMAND ${CMAKE_COMMAND} -E copy_if_different "${_f}" "${_out}"
                     DEPENDS "${_f}" VERBATIM)
  list(APPEND _share_outputs "${_out}")
endforeach()
add_custom_target(cudal2_share ALL DEPENDS ${_share_outputs})
add_dependencies(cudal2 cudal2_share)

set(CUTLASS_ROOT "")
if(CUTLASS_FOUND)
  list(GET CUTLASS_INCLUDE_DIRS 0 _cutlass_include)
  get_filename_component(CUTLASS_ROOT "${_cutlass_include}" DIRECTORY)
  file(MAKE_DIRECTORY "${_share}")
  file(RELATIVE_PATH _rel "${_share}" "${CUTLASS_ROOT}")
  file(REMOVE "${_share}/cutlass")
  file(CREATE_LINK "${_rel}" "${_share}/cutlass" SYMBOLIC)
endif()

# cmake --install build --prefix X: bin/cudal2, lib/ (libcudal2_runtime, headers and CMake package:
# src/runtime/CMakeLists.txt; the bundled cpp-httplib/brotli), share/cudal2/ as above.
option(CUDAL2_INSTALL_CUTLASS "Install CUTLASS's headers (about 28 MB) into share/cudal2/cutlass for the JIT" ON)
set_target_properties(cudal2_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR};${CUDAToolkit_LIBRARY_DIR}")
install(TARGETS cudal2_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The libraries src/llm/CMakeLists.txt bundles into <build>/lib (cpp-httplib, brotli).
install(DIRECTORY "${CMAKE_BINARY_DIR}/lib/" DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/src/kernels/" DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2/kernels)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/prompts/" DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2/prompts)
install(FILES "${PROJECT_SOURCE_DIR}/python/cudal2/report.py" "${PROJECT_SOURCE_DIR}/python/cudal2/analysis.py"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2)
# `--replay`'s stand-in judge (executable: the tuner starts it as a program) and the store <-> CSV tool.
install(PROGRAMS "${PROJECT_SOURCE_DIR}/python/cudal2/replay_judge.py" DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2)
install(FILES "${PROJECT_SOURCE_DIR}/python/cudal2/store_csv.py" DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2)
if(CUDAL2_INSTALL_CUTLASS AND CUTLASS_FOUND)
  install(DIRECTORY "${CUTLASS_ROOT}/include/" DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2/cutlass/include)
  install(DIRECTORY "${CUTLASS_ROOT}/tools/util/include/"
          DESTINATION ${CMAKE_INSTALL_DATADIR}/cudal2/cutlass/tools/util/include)
endif()
