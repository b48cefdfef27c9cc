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
#   WIDEN_FUZZ_SECONDS     seconds of each libFuzzer target (scripts/fuzz.sh,
#                          built in build-fuzz/) before ctest: default 20
#                          for a full run (no ctest arguments), 0 (none)
#                          when ctest arguments such as -R are given;
#                          0 skips fuzzing
# plus those of scripts/build.sh and scripts/with-servers.sh.
# The exit code is ctest's, or 1 when ctest passed but a fuzz target found
# something (or the first failing step's).
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

# 3. A short fuzzing run (scripts/fuzz.sh): its own build, seeds from the
# examples migrated with the widen just built. A finding fails the run, but
# the tests still run.
fuzz_seconds=${WIDEN_FUZZ_SECONDS:-$(($# == 0 ? 20 : 0))}
fuzz_status=0
if ((fuzz_seconds > 0)); then
  log "fuzzing, ${fuzz_seconds}s per target"
  started=$SECONDS
  WIDEN_FUZZ_WIDEN="$REPO/$build_dir/cmd/widen" scripts/fuzz.sh --seconds "$fuzz_seconds" ||
    fuzz_status=$?
  log "fuzzing took $((SECONDS - started))s (exit $fuzz_status)"
fi

# 4. Test, with servers. --no-tests=error: finding no tests at all is a
# failure, not a pass. When ctest passes, the fuzzing's status decides.
# Tests keep what a person should look at (the screenshot of plan --html's
# page) in BUILD_DIR/test-artifacts.
log "running tests"
export WIDEN_HBASE_IDLE_TIMEOUT_MS=${WIDEN_HBASE_IDLE_TIMEOUT_MS:-8000}
# shellcheck disable=SC2016  # expanded by the inner bash
exec scripts/with-servers.sh --pg --mysql --hbase -- bash -c '
  fuzz_status=$1
  artifacts=$2
  shift 2
  ctest "$@" || exit
  if [[ -d $artifacts ]]; then
    echo "test: test artifacts (a screenshot of the plan --html page) are in $artifacts" >&2
  fi
  if ((fuzz_status != 0)); then
    echo "test: the tests passed, but fuzzing found something (build-fuzz/fuzz/crashes/)" >&2
    exit 1
  fi' test "$fuzz_status" "$build_dir/test-artifacts" --test-dir "$build_dir" --output-on-failure \
  -j "${WIDEN_TEST_JOBS:-2}" --timeout "${WIDEN_TEST_TIMEOUT:-900}" \
  --no-tests=error "$@"
