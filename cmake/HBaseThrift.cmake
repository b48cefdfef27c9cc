# The C++ client of HBase's Thrift2 gateway, generated at build time.
#
# The IDL is the one HBase ships inside its hbase-thrift jar
# (org/apache/hadoop/hbase/thrift2/hbase.thrift), taken from the same jar,
# of the version scripts/hbase/pom.xml names, as the gateway the tests run:
# the client cannot drift from the server it is tested against, and no
# copy of HBase's file is kept in this repository. The jar is resolved by
# Maven into ~/.m2 (scripts/deps.sh does it; configure does it when it is
# missing). WIDEN_HBASE_THRIFT_IDL names another hbase.thrift instead.
#
# Defines the static library widen_hbase_thrift (generated code, its headers
# on the include path as "THBaseService.h" and "hbase_types.h").

set(WIDEN_HBASE_THRIFT_IDL "" CACHE FILEPATH
    "hbase.thrift to generate the HBase client from (default: extracted from the hbase-thrift jar in the local Maven repository)")
set(WIDEN_MAVEN_REPOSITORY "$ENV{HOME}/.m2/repository" CACHE PATH
    "Local Maven repository holding the hbase-thrift jar")

find_program(WIDEN_THRIFT_COMPILER thrift)
if(NOT WIDEN_THRIFT_COMPILER)
  message(FATAL_ERROR "thrift (the Thrift compiler) not found: install thrift-compiler "
                      "(scripts/deps.sh), or configure with -DWIDEN_WITH_HBASE=OFF")
endif()
pkg_check_modules(THRIFT REQUIRED IMPORTED_TARGET thrift)

set(_hbase_gen ${CMAKE_BINARY_DIR}/hbase_thrift)
set(_hbase_pom ${PROJECT_SOURCE_DIR}/scripts/hbase/pom.xml)
set(_hbase_idl_in_jar org/apache/hadoop/hbase/thrift2/hbase.thrift)

if(WIDEN_HBASE_THRIFT_IDL)
  set(_hbase_idl ${WIDEN_HBASE_THRIFT_IDL})
  set(_hbase_idl_depends ${WIDEN_HBASE_THRIFT_IDL})
else()
  file(STRINGS ${_hbase_pom} _line REGEX "<hbase.version>.*</hbase.version>")
  string(REGEX REPLACE ".*<hbase.version>(.*)</hbase.version>.*" "\\1" _hbase_version "${_line}")
  set(_jar "${WIDEN_MAVEN_REPOSITORY}/org/apache/hbase/hbase-thrift/${_hbase_version}/hbase-thrift-${_hbase_version}.jar")
  if(NOT EXISTS ${_jar})
    message(STATUS "hbase-thrift-${_hbase_version}.jar is not in ${WIDEN_MAVEN_REPOSITORY}: resolving it with Maven")
    execute_process(COMMAND ${PROJECT_SOURCE_DIR}/scripts/hbase/server.sh classpath
                    RESULT_VARIABLE _rc OUTPUT_QUIET)
  endif()
  if(NOT EXISTS ${_jar})
    message(FATAL_ERROR "${_jar} not found: run scripts/deps.sh (it resolves the HBase jars with "
                        "Maven), pass -DWIDEN_HBASE_THRIFT_IDL=path/to/hbase.thrift, or configure "
                        "with -DWIDEN_WITH_HBASE=OFF")
  endif()
  set(_hbase_idl ${_hbase_gen}/jar/${_hbase_idl_in_jar})
  add_custom_command(
    OUTPUT ${_hbase_idl}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_hbase_gen}/jar
    COMMAND ${CMAKE_COMMAND} -E chdir ${_hbase_gen}/jar ${CMAKE_COMMAND} -E tar xf ${_jar} ${_hbase_idl_in_jar}
    DEPENDS ${_jar}
    COMMENT "Extracting hbase.thrift from hbase-thrift-${_hbase_version}.jar"
    VERBATIM)
  set(_hbase_idl_depends ${_hbase_idl})
endif()

set(_hbase_sources ${_hbase_gen}/THBaseService.cpp ${_hbase_gen}/hbase_types.cpp)
add_custom_command(
  OUTPUT ${_hbase_sources} ${_hbase_gen}/THBaseService.h ${_hbase_gen}/hbase_types.h
  COMMAND ${WIDEN_THRIFT_COMPILER} -nowarn --gen cpp:no_skeleton,moveable_types -out ${_hbase_gen} ${_hbase_idl}
  DEPENDS ${_hbase_idl_depends}
  COMMENT "Generating the C++ HBase Thrift2 client"
  VERBATIM)

add_library(widen_hbase_thrift STATIC ${_hbase_sources} ${PROJECT_SOURCE_DIR}/store/hbase_thrift_extra.cc)
target_include_directories(widen_hbase_thrift SYSTEM PUBLIC ${_hbase_gen})
target_link_libraries(widen_hbase_thrift PUBLIC PkgConfig::THRIFT)
# Generated code: not ours to warn about.
target_compile_options(widen_hbase_thrift PRIVATE -w)
set_target_properties(widen_hbase_thrift PROPERTIES POSITION_INDEPENDENT_CODE ON)
