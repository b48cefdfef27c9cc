# The ctest fixture package_build (tests/integration/CMakeLists.txt): builds
# the Debian package of this build tree with CPack into
# BINARY_DIR/tests/package/ and unpacks it there (root/) with dpkg-deb -x,
# for package_test.cc:
#   cmake -DBINARY_DIR=... -DCPACK=... -P package_build.cmake
set(dir ${BINARY_DIR}/tests/package)
file(REMOVE_RECURSE ${dir})
file(MAKE_DIRECTORY ${dir})
execute_process(COMMAND ${CPACK} -G DEB --config ${BINARY_DIR}/CPackConfig.cmake -B ${dir}
                OUTPUT_FILE ${dir}/cpack.log ERROR_FILE ${dir}/cpack.log RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(READ ${dir}/cpack.log log)
  message(FATAL_ERROR "cpack failed (${rc}):\n${log}")
endif()
file(GLOB debs ${dir}/*.deb)
list(LENGTH debs n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "cpack wrote ${n} .deb files in ${dir}, expected one: ${debs}")
endif()
execute_process(COMMAND dpkg-deb -x ${debs} ${dir}/root RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "dpkg-deb -x ${debs} failed (${rc})")
endif()
message(STATUS "built and unpacked ${debs}")
