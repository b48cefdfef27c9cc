# The man pages, the shell completions, the install layout and the Debian
# package (CPack): `cmake --build build --target package` writes
# build/widen_VERSION_ARCH.deb.
#
# Man pages and completions are generated from widen's own command-line
# definitions (cmd/cli_doc.h) by running the built binary, so they always
# describe the binary they are packaged with.
include(GNUInstallDirs)

set(WIDEN_GENERATED_DOC_DIR ${PROJECT_BINARY_DIR}/doc)
set(WIDEN_DOC_STAMP ${WIDEN_GENERATED_DOC_DIR}/docs.stamp)
add_custom_command(
  OUTPUT ${WIDEN_DOC_STAMP}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${WIDEN_GENERATED_DOC_DIR}/man1
  COMMAND ${CMAKE_COMMAND} -E make_directory ${WIDEN_GENERATED_DOC_DIR}/man1
  COMMAND $<TARGET_FILE:widen> __doc man ${WIDEN_GENERATED_DOC_DIR}/man1
  COMMAND $<TARGET_FILE:widen> __doc bash ${WIDEN_GENERATED_DOC_DIR}/widen.bash
  COMMAND $<TARGET_FILE:widen> __doc zsh ${WIDEN_GENERATED_DOC_DIR}/_widen
  COMMAND ${CMAKE_COMMAND} -E touch ${WIDEN_DOC_STAMP}
  DEPENDS widen
  COMMENT "Writing the man pages and shell completions"
  VERBATIM)
add_custom_target(widen_docs ALL DEPENDS ${WIDEN_DOC_STAMP})

install(DIRECTORY ${WIDEN_GENERATED_DOC_DIR}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${WIDEN_GENERATED_DOC_DIR}/widen.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME widen)
install(FILES ${WIDEN_GENERATED_DOC_DIR}/_widen
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The scheduled sync (examples/cron/): installed, never enabled.
install(FILES examples/cron/widen-sync@.service examples/cron/widen-sync@.timer
        DESTINATION lib/systemd/system)

# The Debian package. Depends is computed by dpkg-shlibdeps from the
# libraries the binary links (so `apt-get install ./widen_*.deb` pulls them);
# the installed binary carries no RPATH (CMake drops the build tree's at
# install) and is stripped.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME widen)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "widen maintainers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "migrate PostgreSQL or MySQL databases into HBase or an embedded wide-column store")
set(CPACK_PACKAGE_DESCRIPTION
    "widen reads a PostgreSQL or MySQL/MariaDB database and writes it into HBase (through its \
Thrift2 gateway) or an embedded LevelDB store with HBase's cell model, following a YAML \
mapping: denormalized rows, duplicated tables per access path, composite row keys, child \
rows nested as cells. It plans, lints, syncs and verifies the copy.")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "widen maintainers")
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# plan --diagram FILE.svg runs Graphviz's dot.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS graphviz)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS bash-completion)
# postinst: the system user the widen-sync@ units run as (no unit enabled).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)
