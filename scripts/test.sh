#!/usr/bin/env bash
# test.sh — the project's test command: install deps, build, and run all
# tests (ctest) against throwaway PostgreSQL and MariaDB servers and one
# standalone HBase with its Thrift2 gateway, shared by every test.
#
# Usage: scripts/test.sh [EXTRA_CTEST_ARGS...]     e.g. scripts/test.sh -R pg
#
# Environment:
#   WIDEN_SANITIZE=1       build in build-asan with -DWIDEN_SANITIZE=ON
#                          (AddressSanitizer + UBSan) and test that build
#   WIDEN_TEST_JOBS        parallel ctest jobs (default 2)
#   WIDEN_TEST_TIMEOUT     per-test timeout in seconds for tests without
#                          their own TIMEOUT property (default 900)
#   CI=true / WIDEN_REQUIRE_SERVERS=1
#                          fail if a server cannot be started (otherwise
#                          the tests that need it are skipped)
#   WIDEN_HBASE_IDLE_TIMEOUT_MS
#                          the test gateway's idle timeout (default here
#                          8000, so the reconnect test sleeps past it)
# plus those of scripts/build.sh and scripts/with-servers.sh.
# The exit code is ctest's (or the first failing step's).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

log() { echo "test: $*" >&2; }

# 1. Dependencies (once; build.sh is told not to check again).
scripts/deps.sh
export WIDEN_DEPS_DONE=1

# 2. Build: normal, or with sanitizers in a separate build dir.
build_dir=build
cmake_args=()
if [[ ${WIDEN_SANITIZE:-0} == 1 ]]; then
  build_dir=build-asan
  cmake_args=(-DWIDEN_SANITIZE=ON)
  export LSAN_OPTIONS="suppressions=$REPO/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
  log "sanitizer build in $build_dir"
fi
scripts/build.sh "$REPO/$build_dir" "${cmake_args[@]}"

# 3. Test, with servers. --no-tests=error: finding no tests at all is a
# failure, not a pass.
log "running tests"
export WIDEN_HBASE_IDLE_TIMEOUT_MS=${WIDEN_HBASE_IDLE_TIMEOUT_MS:-8000}
exec scripts/with-servers.sh --pg --mysql --hbase -- \
  ctest --test-dir "$build_dir" --output-on-failure \
  -j "${WIDEN_TEST_JOBS:-2}" --timeout "${WIDEN_TEST_TIMEOUT:-900}" \
  --no-tests=error "$@"
