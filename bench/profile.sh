#!/usr/bin/env bash
# profile.sh — where `widen migrate` spends its time, with perf.
#
# Usage: bench/profile.sh [--table shop:DESIGN] [S] [OUT_DIR]
#                          (default S=1000000, OUT_DIR=${TMPDIR:-/tmp}/widen-profile)
#
# Builds like bench/run.sh (RelWithDebInfo, build-bench/), starts a throwaway
# PostgreSQL, loads the shop at scale S, then records two runs of
# `widen migrate -m bench/shop.yaml` (with --table: of that key design of
# bench/designs.yaml, `widen migrate -m bench/designs.yaml --table
# shop:DESIGN`, the shop loaded with its typed table, bench/gen.sh --payments):
#   1. perf record -F 499 --call-graph dwarf on widen alone (every thread):
#      OUT_DIR/self.txt   hottest functions by self time (--no-children)
#      OUT_DIR/children.txt  by inclusive time (--children)
#      OUT_DIR/threads.txt   samples per thread (pid column = thread id)
#   2. perf record -a -F 499 (the whole machine, no call graphs) while widen
#      runs: OUT_DIR/system.txt, samples per command and shared object, to see
#      widen against the PostgreSQL backend that feeds it.
# Needs perf (Debian: linux-perf) and permission to use it (root, or
# kernel.perf_event_paranoid <= 1 for -a).
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "profile: $*" >&2; }

if [[ ${1:-} != --inner ]]; then
  table=""
  if [[ ${1:-} == --table ]]; then
    table=${2:?--table needs a target table of bench/designs.yaml (shop:payments)}
    shift 2
  fi
  S=${1:-1000000}
  out=${2:-${TMPDIR:-/tmp}/widen-profile}
  command -v perf >/dev/null || { log "perf not found (apt-get install linux-perf)"; exit 1; }
  build=$REPO/build-bench
  cmake -S "$BENCH_DIR" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" >/dev/null
  mkdir -p "$out"
  exec env WIDEN_REQUIRE_SERVERS=1 "$REPO/scripts/with-servers.sh" --pg -- \
    "$0" --inner "$S" "$out" "$build" "$table"
fi

S=$2 out=$3 build=$4 table=${5:-}
source "$BENCH_DIR/lib.sh"
widen=$build/widen/cmd/widen
log "loading S=$S"
target=$out/store
if [[ -z $table ]]; then
  log "loaded in $(load_pg "$S") s"
  migrate=("$widen" migrate -m "$BENCH_DIR/shop.yaml" --source "$(pg_url)" --target "leveldb:$target" -q)
else
  log "loaded in $(load_pg "$S" --payments) s"
  migrate=("$widen" migrate -m "$BENCH_DIR/designs.yaml" --table "$table" --source "$(pg_url)"
    --target "leveldb:$target" -q)
fi

rm -rf "$target"
log "run 1: perf record --call-graph dwarf on widen"
echo "perf record -F 499 --call-graph dwarf,16384 -o $out/widen.data -- ${migrate[*]}" >"$out/commands.txt"
perf record -q -F 499 --call-graph dwarf,16384 -o "$out/widen.data" -- "${migrate[@]}"
report=(perf report -i "$out/widen.data" --stdio --percent-limit 0.5)
"${report[@]}" --no-children --sort symbol -g none >"$out/self.txt" 2>/dev/null
"${report[@]}" --children --sort symbol -g none >"$out/children.txt" 2>/dev/null
"${report[@]}" --no-children --sort pid,dso -g none >"$out/threads.txt" 2>/dev/null
"${report[@]}" --no-children --sort dso -g none >"$out/dso.txt" 2>/dev/null
"${report[@]}" --no-children --sort symbol -g caller,0.5,callee --max-stack 12 \
  >"$out/callers.txt" 2>/dev/null

rm -rf "$target"
log "run 2: perf record -a (whole machine) while widen runs"
echo "perf record -a -F 499 -o $out/system.data -- ${migrate[*]}" >>"$out/commands.txt"
/usr/bin/time -v -o "$out/time.txt" perf record -q -a -F 499 -o "$out/system.data" -- "${migrate[@]}"
perf report -i "$out/system.data" --stdio --sort comm,dso --percent-limit 0.5 \
  >"$out/system.txt" 2>/dev/null
perf report -i "$out/system.data" --stdio --comm postgres --percentage relative --sort symbol \
  --percent-limit 1 \
  >"$out/postgres.txt" 2>/dev/null
rm -rf "$target"
log "reports in $out"
