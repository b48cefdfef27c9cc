# widen_add_test(NAME name SOURCES a.cc ... LIBS lib ... [SERIAL filter])
# Builds one GoogleTest binary and registers each of its tests with ctest.
# Tests matching SERIAL (a gtest filter, Suite.Name[:Suite.Name...]) run
# alone (ctest RUN_SERIAL): they hold a server-wide lock on purpose, which
# would stall the tests running beside them.
function(widen_add_test)
  cmake_parse_arguments(T "" "NAME;SERIAL" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${T_NAME} PRIVATE WIDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                               WIDEN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # WIDEN_CORES: the tests' --jobs runs make the jobs they ask for whatever
  # the cores of the machine running them (README, "Parallel jobs").
  if(T_SERIAL)
    gtest_discover_tests(${T_NAME} TEST_FILTER "-${T_SERIAL}" DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 600 ENVIRONMENT WIDEN_CORES=128)
    gtest_discover_tests(${T_NAME} TEST_FILTER "${T_SERIAL}" DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE ENVIRONMENT WIDEN_CORES=128)
  else()
    gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 600 ENVIRONMENT WIDEN_CORES=128)
  endif()
endfunction()
