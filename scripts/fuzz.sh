#!/usr/bin/env bash
# fuzz.sh — build widen's libFuzzer targets and run them for a while.
#
# Usage: scripts/fuzz.sh [--target mapping|rowkey|all] [--seconds N]
#
#   --target   which target to run (default all, one after the other)
#   --seconds  how long each target runs (default 300); scripts/test.sh
#              runs 20 s of each
#
# Targets (tests/fuzz/, each checks invariants, not only "no crash"):
#   mapping  the mapping loader (ParseMapping with its input limits, what
#            every command reads a mapping file with) and lint without a source
#   rowkey   the row key decoder: a stored key layout (KeyCodec::FromJson,
#            as scan/get read it), Decode and DecodeRow (scan --decode, verify)
#
# Steps:
#   1. scripts/deps.sh (unless WIDEN_DEPS_DONE=1), then clang-14 and
#      libclang-rt-14-dev (libFuzzer) with apt-get when missing.
#   2. Builds the targets with clang, ASan + UBSan and libFuzzer
#      (-DWIDEN_FUZZ=ON) into build-fuzz/ (WIDEN_FUZZ_BUILD_DIR); the normal
#      build/ is not touched.
#   3. Seeds, written afresh under build-fuzz/fuzz/seeds/: the examples'
#      mappings (examples/*/*.yaml) and tests/fuzz/seeds/; keys of every key
#      type and modifier (widen_fuzz_seeds synthetic); and the key layouts
#      and row keys the example mappings produce: each example with a
#      PostgreSQL schema is loaded into a throwaway PostgreSQL
#      (scripts/with-servers.sh, or the server of WIDEN_TEST_PG_URL when
#      set) and migrated with build/cmd/widen (WIDEN_FUZZ_WIDEN; built
#      when missing) into a store under build-fuzz/fuzz/stores/.
#   4. Runs each target for N seconds on its corpus (build-fuzz/fuzz/corpus/
#      TARGET, kept between runs, so a long run goes on from the last one)
#      and the seeds: an input that runs over 10 s or allocates over 1 GiB
#      at once is a finding, and so is the process passing 2 GiB. ASan
#      keeps every distinct allocation stack it sees, which over an hour
#      grows past that while widen's live memory stays a few MB: so
#      allocation stacks are cut to 2 frames (ASAN_OPTIONS, unless set);
#      run a finding's input again for the full ones.
#
# Crashes, invariant failures, leaks, slow and memory-hungry inputs are
# kept in build-fuzz/fuzz/crashes/TARGET/ (the last run's) with the log beside them
# (build-fuzz/fuzz/TARGET.log); reproduce one with
#   build-fuzz/tests/fuzz/widen_fuzz_TARGET FILE
# The exit code is 0 when no target found anything, 1 when one did, 2 on a
# usage error, or the failing step's.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

log() { echo "fuzz: $*" >&2; }

usage() {
  sed -n '3,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

target=all
seconds=300
while (($# > 0)); do
  case $1 in
  --target)
    target=${2:-}
    shift 2 || usage
    ;;
  --seconds)
    seconds=${2:-}
    shift 2 || usage
    ;;
  -h | --help) usage ;;
  *)
    echo "fuzz: unknown argument '$1'" >&2
    usage
    ;;
  esac
done
case $target in
mapping | rowkey) targets=("$target") ;;
all) targets=(mapping rowkey) ;;
*)
  echo "fuzz: --target is mapping, rowkey or all, not '$target'" >&2
  usage
  ;;
esac
[[ $seconds =~ ^[1-9][0-9]*$ ]] || {
  echo "fuzz: --seconds takes a whole number of seconds > 0, not '$seconds'" >&2
  usage
}

# 1. Dependencies: the project's, then the compiler with libFuzzer.
if [[ ${WIDEN_DEPS_DONE:-0} != 1 ]]; then
  scripts/deps.sh >&2
fi
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev)
missing=()
for pkg in "${FUZZ_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "fuzz: ERROR: must be root to install ${missing[*]}; re-run as root or install them" >&2
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Build the targets only (not widen, not the tests) in their own dir.
build=${WIDEN_FUZZ_BUILD_DIR:-$REPO/build-fuzz}
env_args=()
if [[ -n ${WIDEN_CMAKE_ARGS:-} ]]; then
  read -r -a env_args <<<"$WIDEN_CMAKE_ARGS"
fi
log "configuring in $build"
cmake -S "$REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" -DCMAKE_CXX_COMPILER=clang++-14 \
  -DWIDEN_FUZZ=ON -DWIDEN_BUILD_TESTS=OFF -DWIDEN_WITH_HBASE=OFF -DWIDEN_WITH_MYSQL=OFF \
  "${env_args[@]}" >/dev/null
build_args=()
if [[ -n ${WIDEN_BUILD_JOBS:-} ]]; then
  build_args=(--parallel "$WIDEN_BUILD_JOBS")
fi
log "building the fuzz targets"
cmake --build "$build" "${build_args[@]}" --target widen_fuzz_mapping widen_fuzz_rowkey \
  widen_fuzz_seeds

# 3. Seeds.
work=$build/fuzz
seeds=$work/seeds
rm -rf "$seeds"
mkdir -p "$seeds/mapping" "$seeds/rowkey"
for f in examples/*/*.yaml; do
  ex=${f#examples/}
  cp "$f" "$seeds/mapping/example-${ex//\//-}"
done
cp tests/fuzz/seeds/mapping/* "$seeds/mapping/"
n=$("$build/tests/fuzz/widen_fuzz_seeds" synthetic "$seeds/rowkey")
log "seeds: $(find "$seeds/mapping" -type f | wc -l) mappings, $n synthetic keys"

if [[ " ${targets[*]} " == *" rowkey "* ]]; then
  widen=${WIDEN_FUZZ_WIDEN:-$REPO/build/cmd/widen}
  if [[ ! -x $widen ]]; then
    log "building widen for the example keys"
    WIDEN_DEPS_DONE=1 scripts/build.sh "$(dirname "$(dirname "$widen")")" >&2
  fi
  # Loads each example into its own database of the server at
  # WIDEN_TEST_PG_URL, migrates it into a store and writes its keys.
  example_keys() {
    set -euo pipefail
    local stores=$work/stores total=0
    if [[ -z ${WIDEN_TEST_PG_URL:-} ]]; then
      echo "fuzz: warning: no PostgreSQL, so no row keys of the examples" >&2
      return 0
    fi
    rm -rf "$stores"
    mkdir -p "$stores"
    for schema in "$REPO"/examples/*/schema.pg.sql; do
      local dir ex db
      dir=$(dirname "$schema")
      ex=$(basename "$dir")
      db="${WIDEN_TEST_PG_URL%/*}/widen_fuzz_$ex"
      psql -q -X "$WIDEN_TEST_PG_URL" -c "DROP DATABASE IF EXISTS widen_fuzz_$ex" \
        -c "CREATE DATABASE widen_fuzz_$ex" >/dev/null
      psql -q -X -v ON_ERROR_STOP=1 "$db" -f "$schema" -f "$dir/data.pg.sql" >/dev/null
      WIDEN_SOURCE_URL=$db "$widen" migrate -q -m "$dir/mapping.yaml" \
        --target "leveldb:$stores/$ex" --timestamp-ms 1718200000000
      psql -q -X "$WIDEN_TEST_PG_URL" -c "DROP DATABASE widen_fuzz_$ex" >/dev/null
      total=$((total + $("$build/tests/fuzz/widen_fuzz_seeds" store "$stores/$ex" "$seeds/rowkey")))
    done
    echo "fuzz: seeds: $total row keys of the examples' stores" >&2
  }
  export -f example_keys
  export REPO work seeds build widen PGOPTIONS="-c client_min_messages=warning"
  if [[ -n ${WIDEN_TEST_PG_URL:-} ]]; then
    example_keys
  else
    scripts/with-servers.sh --pg -- bash -c example_keys
  fi
fi

# 4. Run. libFuzzer exits non-zero on a finding and writes the input to
# the artifact prefix; -max_total_time bounds the run.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS="suppressions=$REPO/scripts/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
found=0
for t in "${targets[@]}"; do
  corpus=$work/corpus/$t
  crashes=$work/crashes/$t
  rm -rf "$crashes"
  mkdir -p "$corpus" "$crashes"
  args=(-max_total_time="$seconds" -timeout=10 -malloc_limit_mb=1024 -rss_limit_mb=2048
    -print_final_stats=1
    -artifact_prefix="$crashes/")
  [[ $t == mapping ]] && args+=(-dict="$REPO/tests/fuzz/mapping.dict" -max_len=16384)
  [[ $t == rowkey ]] && args+=(-max_len=4096)
  log "running $t for ${seconds}s: $build/tests/fuzz/widen_fuzz_$t ${args[*]} $corpus $seeds/$t"
  status=0
  "$build/tests/fuzz/widen_fuzz_$t" "${args[@]}" "$corpus" "$seeds/$t" >"$work/$t.log" 2>&1 ||
    status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/$t.log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/$t.log" | tail -1)
  files=$(find "$corpus" -type f | wc -l)
  if ((status == 0)); then
    log "$t: ${execs:-?} inputs in ${seconds}s (${secs:-?}/s), peak ${rss:-?} MB," \
      "corpus $files files: nothing found"
  else
    found=1
    log "$t: FOUND something (libFuzzer exit $status); log: $work/$t.log"
    grep -a -m 5 -E 'fuzz invariant failed|ERROR: |runtime error|SUMMARY' "$work/$t.log" >&2 || true
    for f in "$crashes"/*; do
      [[ -f $f ]] && log "  input: $f (reproduce, full stacks: $build/tests/fuzz/widen_fuzz_$t $f)"
    done
  fi
done
exit "$found"
