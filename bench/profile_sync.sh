#!/usr/bin/env bash
# profile_sync.sh — where a `widen sync` of a few changes spends its time
# (PostgreSQL), with perf and the server's statement log.
#
# Usage: bench/profile_sync.sh [--mode watermark|digest] [--size S] [--changes N]
#                              [--out DIR] [--build-dir DIR]
#        (defaults: watermark, S = 1,000,000, N = 1,000,
#        DIR = ${TMPDIR:-/tmp}/widen-profile-sync, widen from build/, as bench/sync.sh)
#
# Starts a throwaway PostgreSQL, loads the shop at scale S, adds the
# watermark columns (bench/lib.sh add_watermarks), and brings a new store
# to the source: watermark mode, shop:orders of bench/shop_sync.yaml synced
# twice (full pass, idle); digest mode, bench/shop.yaml migrated and synced
# once (the digests). Then it applies N changes as bench/sync.sh does, keeps
# a copy of the store, and runs the same change sync three times, each from
# that copy:
#   1. under /usr/bin/time -v: DIR/time.txt, its JSON summary DIR/sync.json;
#   2. with every statement logged with its duration
#      (log_min_duration_statement = 0): DIR/queries.txt, the server's time
#      per kind of query (a cursor's FETCHes counted with its DECLARE);
#   3. under perf record -F 999 --call-graph dwarf: DIR/threads.txt (samples
#      per thread; the main thread's id is the process id), DIR/self.txt,
#      DIR/children.txt.
# And DIR/watermark_queries.txt: EXPLAIN ANALYZE of the aggregate that reads a
# table's watermark, beside a bare max() (which an index answers).
# Needs perf (Debian: linux-perf) and permission to use it.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "profile-sync: $*" >&2; }

if [[ ${1:-} != --inner ]]; then
  S=1000000 N=1000 out=${TMPDIR:-/tmp}/widen-profile-sync build=$REPO/build mode=watermark
  while (($#)); do
    case $1 in
      --mode) mode=$2; shift 2 ;;
      --size) S=$2; shift 2 ;;
      --changes) N=$2; shift 2 ;;
      --out) out=$2; shift 2 ;;
      --build-dir) build=$2; shift 2 ;;
      *) echo "profile_sync.sh: unknown option $1" >&2; exit 2 ;;
    esac
  done
  [[ $mode == watermark || $mode == digest ]] || { log "--mode: watermark or digest"; exit 2; }
  command -v perf >/dev/null || { log "perf not found (apt-get install linux-perf)"; exit 1; }
  [[ -x $build/cmd/widen ]] || { log "no widen at $build/cmd/widen (scripts/build.sh first)"; exit 2; }
  mkdir -p "$out"
  exec env WIDEN_REQUIRE_SERVERS=1 "$REPO/scripts/with-servers.sh" --pg -- \
    "$0" --inner "$S" "$N" "$out" "$build/cmd/widen" "$mode"
fi

S=$2 N=$3 out=$4 widen=$5 mode=$6
source "$BENCH_DIR/lib.sh"
log "loading S=$S: $(load_pg "$S") s; watermark columns: $(add_watermarks pg) s"
url=$(pg_url)
W=$out/store
rm -rf "$W" "$W.before"
sync_w() { "$widen" sync -m "$ms" --table shop:orders --source "$url" --target "leveldb:$W" "$@"; }
if [[ $mode == watermark ]]; then
  ms=$BENCH_DIR/shop_sync.yaml
  sync_w -q
else
  ms=$BENCH_DIR/shop.yaml
  "$widen" migrate -q -m "$ms" --source "$url" --target "leveldb:$W"
fi
sync_w -q
apply_changes pg "$N" 1
cp -r "$W" "$W.before"
restore() { rm -rf "$W" && cp -r "$W.before" "$W"; }

# 1. Timed.
/usr/bin/time -v "$widen" sync --format json -m "$ms" --table shop:orders --source "$url" \
  --target "leveldb:$W" >"$out/sync.json" 2>"$out/time.txt"

# 2. The server's side: every statement's duration, summed per query kind.
restore
pg_log=$(dirname "$(pg_psql -tAc 'SHOW data_directory')")/server.log
lines=$(wc -l <"$pg_log")
pg_psql -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "SELECT pg_reload_conf()" >/dev/null
sync_w -q
pg_psql -c "ALTER SYSTEM RESET log_min_duration_statement" -c "SELECT pg_reload_conf()" >/dev/null
tail -n +"$((lines + 1))" "$pg_log" | awk '
  # The kind of a query: the aggregate that reads a watermark, or its FROM
  # and WHERE, shortened.
  function kind(q,   k) {
    if (q ~ /min\(widen_c\)/) return "watermark read: min, max, count(*), count(col) over " \
      (match(q, /FROM "[a-z_]+" AS/) ? substr(q, RSTART + 5, RLENGTH - 8) : "?")
    k = q; sub(/^.*FROM /, "FROM ", k)
    gsub(/\$[0-9]+(, )?/, "", k); gsub(/"/, "", k)
    return substr(k, 1, 160)
  }
  /duration: / {
    d = $0; sub(/.*duration: /, "", d); ms = d + 0
    s = $0; sub(/.*(statement|execute [^:]*): /, "", s)
    if (s ~ /^DECLARE widen_c[0-9]+ /) {
      c = s; sub(/^DECLARE /, "", c); sub(/ .*/, "", c); ck[c] = kind(s); k = ck[c]
    } else if (s ~ /^FETCH /) {
      c = s; sub(/.* FROM /, "", c); k = ck[c]
    } else if (s ~ /^(parse|bind)/ || $0 ~ / (parse|bind) /) {
      next
    } else {
      k = substr(s, 1, 60)
    }
    t[k] += ms; n[k]++; total += ms
  }
  END {
    printf "server time of the change sync: %.1f ms in all\n", total
    for (k in t) printf "%10.1f ms %5d statements  %s\n", t[k], n[k], k | "sort -rn"
  }' >"$out/queries.txt"

# 3. perf.
restore
perf record -F 999 --call-graph dwarf -o "$out/perf.data" "$widen" sync -q -m "$ms" \
  --table shop:orders --source "$url" --target "leveldb:$W" 2>"$out/perf.err"
# (perf script prints "pid/tid"; `head` may close the pipes early.)
set +o pipefail
perf script -i "$out/perf.data" -F pid,tid 2>/dev/null | awk '
  { split($1, a, "/"); n[a[2]]++; p = a[1]; all++ }
  END { for (t in n) printf "%6d samples (%4.1f %%) thread %s%s\n", n[t], 100 * n[t] / all, t,
                            t == p ? " (main)" : "" }' | sort -rn >"$out/threads.txt"
perf report -i "$out/perf.data" --no-children --sort dso,sym -g none -q 2>/dev/null | head -40 >"$out/self.txt"
perf report -i "$out/perf.data" --children --sort sym -g none -q 2>/dev/null |
  grep -v ' 0x0000' | head -60 >"$out/children.txt"
set -o pipefail

# The watermark read against a bare max().
for t in customer orders order_line; do
  echo "== $t"
  pg_psql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT min(updated_at), max(updated_at), count(*), count(updated_at) FROM $t" |
    grep -E 'Execution|Scan'
  pg_psql -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT max(updated_at) FROM $t" |
    grep -E 'Execution|Scan'
done >"$out/watermark_queries.txt"
rm -rf "$W.before"
log "done: $out"
