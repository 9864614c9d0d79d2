# The installed runtime as a consumer sees it. runtime_consumer_build (cpu): installs
# this build into a temporary prefix and configures and builds examples/consumer against it with
# find_package(cudal2), no GPU needed. runtime_consumer_run (gpu): runs it (exit 77: no GPU).
set(_consumer_root "${CMAKE_CURRENT_BINARY_DIR}/consumer-test")
add_test(NAME runtime_consumer_build
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DROOT=${_consumer_root}
          -DSOURCE=${PROJECT_SOURCE_DIR}/examples/consumer -DGENERATOR=${CMAKE_GENERATOR}
          -DCXX=${CMAKE_CXX_COMPILER} -P ${CMAKE_CURRENT_SOURCE_DIR}/consumer_build.cmake)
set_tests_properties(runtime_consumer_build PROPERTIES LABELS "cpu" TIMEOUT 600 FIXTURES_SETUP cudal2_consumer
                     RESOURCE_LOCK cudal2_install)
add_test(NAME runtime_consumer_run COMMAND ${_consumer_root}/build/consumer)
set_tests_properties(runtime_consumer_run PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300
                     FIXTURES_REQUIRED cudal2_consumer PASS_REGULAR_EXPRESSION "PASS|skipped")
