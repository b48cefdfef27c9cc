#!/usr/bin/env bash
# build.sh — configure and build widen with CMake + Ninja.
#
# Usage: scripts/build.sh [BUILD_DIR] [EXTRA_CMAKE_ARGS...]
#
#   BUILD_DIR          build directory (default: <repo>/build); a relative
#                      path is taken relative to the current directory
#   EXTRA_CMAKE_ARGS   passed to the configure step, e.g. -DWIDEN_SANITIZE=ON
#
# Environment:
#   WIDEN_CMAKE_ARGS   more configure arguments, split on whitespace
#   WIDEN_BUILD_TYPE   CMAKE_BUILD_TYPE (default RelWithDebInfo)
#   WIDEN_BUILD_JOBS   parallel build jobs (default: the generator's choice)
#   WIDEN_DEPS_DONE=1  skip scripts/deps.sh (set by scripts/test.sh)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { echo "build: $*" >&2; }

BUILD_DIR=${1:-$REPO/build}
(($# > 0)) && shift
extra_args=("$@")

# 1. Make sure compilers, CMake, Ninja and the libraries are installed.
if [[ ${WIDEN_DEPS_DONE:-0} != 1 ]]; then
  "$REPO/scripts/deps.sh"
fi

# 2. Configure. Extra arguments from the environment are split on whitespace.
env_args=()
if [[ -n ${WIDEN_CMAKE_ARGS:-} ]]; then
  read -r -a env_args <<<"$WIDEN_CMAKE_ARGS"
fi

# Use Ninja, unless the build dir was already configured with another
# generator (CMake refuses to switch generators in an existing build dir).
gen_args=(-G Ninja)
cache=$BUILD_DIR/CMakeCache.txt
if [[ -f $cache ]]; then
  configured=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  if [[ -n $configured && $configured != Ninja ]]; then
    log "note: $BUILD_DIR was configured with '$configured', keeping it"
    gen_args=()
  fi
fi

log "configuring $REPO in $BUILD_DIR"
cmake -S "$REPO" -B "$BUILD_DIR" "${gen_args[@]}" \
  -DCMAKE_BUILD_TYPE="${WIDEN_BUILD_TYPE:-RelWithDebInfo}" \
  "${env_args[@]}" "${extra_args[@]}"

# 3. Build.
build_args=()
if [[ -n ${WIDEN_BUILD_JOBS:-} ]]; then
  build_args=(--parallel "$WIDEN_BUILD_JOBS")
fi
log "building"
cmake --build "$BUILD_DIR" "${build_args[@]}"
log "done: $BUILD_DIR"
