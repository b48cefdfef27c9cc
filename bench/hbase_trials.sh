#!/usr/bin/env bash
# hbase_trials.sh — try to break widen's HBase target while it loads the
# bench shop (bench/shop.yaml, S orders, about 18·S cells), each trial
# checked by `widen verify` against the source afterwards.
#
# Usage: bench/hbase_trials.sh [--size S] [--widen PATH]
#
# It starts a throwaway PostgreSQL and HBase (scripts/with-servers.sh --pg
# --hbase), loads the shop, times one clean `widen migrate` into HBase (the
# reference; its table is verified too), and then, each into a dropped
# table, strikes once widen writes (the table holds a row: the HBase sink
# sorts a table's cells first and writes them at its end) and at least 30 %
# of the clean run's time went by:
#
#   gateway   the Thrift2 gateway killed (SIGKILL) and started again
#             (scripts/hbase/server.sh restart-gateway): widen must retry
#             and finish (exit 0);
#   split     a region split at the middle row asked of the master through
#             HBase's Java client (bench/hbase-java: Admin.split) while
#             widen writes:
#             widen must finish (exit 0), the table have more regions;
#   kill      widen itself killed with SIGKILL: the table's state must say
#             loading (`widen scan` warns), and a second run (exit 0)
#             converge;
#   shard     a load in 3 shards (--shard I/3) whose shard 2 is killed with
#             SIGKILL while shards 1 and 3 finish: the table must stay
#             loading until shard 2 is run again, then be complete.
#
# After each trial `widen verify` must find the table equal to the source
# (exit 0). It prints a Markdown table: trial, widen's exit code(s), seconds,
# what the trial found, verify's exit code. Exit status 0 when every trial
# ended as expected.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "hbase-trials: $*" >&2; }

if [[ ${1:-} == --inner ]]; then
  S=$2 widen=$3
  source "$BENCH_DIR/lib.sh"
  work=$(mktemp -d "${TMPDIR:-/tmp}/widen-hbase-trials.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  log "loading S=$S into PostgreSQL: $(load_pg "$S") s"
  url=$(pg_url)
  hb=$WIDEN_TEST_HBASE_URL
  port=${hb##*:}
  hbase_java_build
  m=$BENCH_DIR/shop.yaml
  failed=0

  # migrate_bg OUT ARGS...: widen migrate into HBase in the background; sets PID.
  migrate_bg() {
    local out=$1
    shift
    "$widen" migrate -q -m "$m" --source "$url" --target "$hb" "$@" >"$out" 2>&1 &
    PID=$!
  }
  verify() {
    local rc=0
    "$widen" verify -q -m "$m" --source "$url" --target "$hb" >"$work/verify.out" 2>&1 || rc=$?
    echo "$rc"
  }
  row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }
  expect() {  # expect WHAT GOT WANT
    [[ $2 == "$3" ]] || { log "$1: got $2, expected $3"; failed=1; }
  }
  written() {  # whether the table holds a row yet (widen was writing at the strike)
    if "$widen" scan shop:orders --target "$hb" --limit 1 2>/dev/null | grep -q '^1 row(s)'; then
      echo "widen was writing"
    else
      echo "nothing written yet"
    fi
  }
  # until_writing PID: waits until the table holds a row (widen, PID, writes
  # its cells at the end of the table) and at least half of `at` seconds
  # went by; false when PID ended first.
  until_writing() {
    local t0=$SECONDS
    while kill -0 "$1" 2>/dev/null; do
      if [[ $(written) == "widen was writing" ]] &&
        awk -v d="$((SECONDS - t0))" -v a="$at" 'BEGIN { exit !(d >= a * 0.5) }'; then
        return 0
      fi
      sleep 0.2
    done
    return 1
  }
  state_of() {  # the state `widen scan` warns about, or "complete"
    if "$widen" scan shop:orders --target "$hb" --limit 1 2>&1 >/dev/null | grep -q 'is incomplete'; then
      echo loading
    else
      echo complete
    fi
  }

  echo "| trial | widen exit | seconds | what happened | verify exit |"
  echo "|---|---|---|---|---|"

  # ---- the clean run: the reference
  hbase_java drop shop:orders
  t0=$(date +%s.%N)
  rc=0
  "$widen" migrate -q -m "$m" --source "$url" --target "$hb" >"$work/clean.out" 2>&1 || rc=$?
  clean=$(elapsed_since "$t0")
  at=$(awk -v c="$clean" 'BEGIN { printf "%.1f", c * 0.6 }')
  v=$(verify)
  row "clean run" "$rc" "$clean" "the reference" "$v"
  expect "clean run" "$rc/$v" "0/0"

  # ---- gateway restarted mid-run
  hbase_java drop shop:orders
  t0=$(date +%s.%N)
  migrate_bg "$work/gw.out"
  until_writing "$PID" && w="widen was writing" || w="widen had ended"
  t_gw=$(date +%s.%N)
  "$REPO/scripts/hbase/server.sh" restart-gateway "$WIDEN_TEST_HBASE_DIR" "$port" 2>"$work/gw.log"
  down=$(elapsed_since "$t_gw")
  rc=0
  wait "$PID" || rc=$?
  secs=$(elapsed_since "$t0")
  v=$(verify)
  row "gateway restarted" "$rc" "$secs" "at the strike $w; the gateway was down and back in ${down} s" "$v"
  expect "gateway" "$rc/$v" "0/0"

  # ---- a region split while widen writes
  hbase_java drop shop:orders
  t0=$(date +%s.%N)
  migrate_bg "$work/split.out"
  until_writing "$PID" && w="widen was writing" || w="widen had ended"
  # At the middle order (row keys are order ids of 10 digits): without a
  # split point HBase refuses a region that holds no file yet ("bestSplit =
  # null"), and widen's first cells are still in the memstore.
  split_row=$(printf '%010d' $((S / 2)))
  split=$(hbase_java split shop:orders "$split_row" 2>"$work/split.err") ||
    split="the split request failed: $(grep -m 1 -o '[A-Za-z.]*Exception.*' "$work/split.err" | cut -c1-160)"
  rc=0
  wait "$PID" || rc=$?
  secs=$(elapsed_since "$t0")
  sleep 2
  regions=$(hbase_java regions shop:orders 2>/dev/null) || regions="regions unknown"
  v=$(verify)
  row "region split" "$rc" "$secs" "at the strike $w; split asked at row $split_row ($split), after the run: $regions" "$v"
  expect "split" "$rc/$v" "0/0"
  [[ $regions == regions=1 ]] && { log "split: the table still has one region"; failed=1; }

  # ---- widen killed with SIGKILL, then run again
  hbase_java drop shop:orders
  migrate_bg "$work/kill.out"
  until_writing "$PID" && w="widen was writing" || w="widen had ended"
  kill -KILL "$PID" 2>/dev/null || true
  wait "$PID" 2>/dev/null || true
  after_kill=$(state_of)
  t0=$(date +%s.%N)
  rc=0
  "$widen" migrate -q -m "$m" --source "$url" --target "$hb" >"$work/rerun.out" 2>&1 || rc=$?
  secs=$(elapsed_since "$t0")
  v=$(verify)
  row "kill -9, run again" "killed (SIGKILL), then $rc" "$secs" "at the strike $w; after the kill the table is $after_kill, after the second run $(state_of)" "$v"
  expect "kill" "$after_kill/$rc/$v" "loading/0/0"

  # ---- a sharded load whose shard 2 is killed, then run again
  hbase_java drop shop:orders
  migrate_bg "$work/s2.out" --shard 2/3
  p2=$PID
  migrate_bg "$work/s1.out" --shard 1/3
  p1=$PID
  migrate_bg "$work/s3.out" --shard 3/3
  p3=$PID
  until_writing "$p2" || true
  kill -KILL "$p2" 2>/dev/null || true
  rc1=0 rc3=0
  wait "$p1" 2>/dev/null || rc1=$?
  wait "$p3" 2>/dev/null || rc3=$?
  wait "$p2" 2>/dev/null || true
  mid=$(state_of)
  t0=$(date +%s.%N)
  rc=0
  "$widen" migrate -m "$m" --source "$url" --target "$hb" --shard 2/3 >"$work/s2b.out" 2>&1 || rc=$?
  secs=$(elapsed_since "$t0")
  note=$(grep -o 'shard 2/3 of load.*' "$work/s2b.out" | cut -c1-160)
  v=$(verify)
  row "shard 2/3 killed, run again" "1/3: $rc1, 3/3: $rc3, 2/3: killed, then $rc" "$secs" "with shard 2 killed the table is $mid; $note" "$v"
  expect "shard" "$rc1/$rc3/$mid/$rc/$(state_of)/$v" "0/0/loading/0/complete/0"
  exit "$failed"
fi

S=100000
widen=""
while (($# > 0)); do
  case $1 in
    --size) S=$2; shift ;;
    --widen) widen=$2; shift ;;
    -h | --help) sed -n '2,32p' "$0"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done
if [[ -z $widen ]]; then
  widen=$REPO/build/cmd/widen
  [[ -x $widen ]] || { log "no $widen: run scripts/build.sh first, or give --widen"; exit 2; }
fi
WIDEN_REQUIRE_SERVERS=1 exec "$REPO/scripts/with-servers.sh" --pg --hbase -- "$0" --inner "$S" "$widen"
