# widen_add_test(NAME name SOURCES a.cc ... LIBS lib ...)
# Builds one GoogleTest binary and registers each of its tests with ctest.
function(widen_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${T_NAME} PRIVATE WIDEN_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                               WIDEN_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${T_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
endfunction()
