#!/usr/bin/env bash
# hbase.sh — widen into a real HBase against HBase's own Java writer, on the
# same server in the same run, and the extraction limit.
#
# Usage: bench/hbase.sh [--sizes 100000,1000000] [--rounds N] [--jit full|quick]
#                       [--writers 4,1] [--build-dir DIR]
#
# For each size S it starts a throwaway PostgreSQL and a standalone HBase
# with its Thrift2 gateway (scripts/with-servers.sh --pg --hbase; the HBase
# JVMs with WIDEN_HBASE_JIT=--jit, default full: the JVM's own compiler and
# collector, for throughput), loads the bench shop (bench/gen.sh: S orders,
# about 5·S order lines; bench/shop.yaml gives about 18·S cells), and runs:
#
#   warm-up   one widen migrate into HBase (not counted): its table is the
#             cells the Java writer writes, and it warms both JVMs;
#   dump      HBaseBench dump: every cell of that table into a local file;
#   then N rounds (default 3 for S <= 200,000, else 1), each in this order,
#   every write into a table dropped first:
#   (cW) widen migrate -m bench/shop.yaml --target hbase://... --writers W,
#       for each W of --writers (default 4, the default, and 1), end to end
#       under /usr/bin/time -v: read PostgreSQL, encode, sort, write through
#       the gateway (the first W right before (j), the others after it);
#   (j) HBaseBench write: the dump's cells through HBase's BufferedMutator
#       (write buffer 2 MiB, HBase's default; one Put per row) straight to
#       the region server; timed from the first mutate to the end of close();
#   (s) widen_store_bench --to hbase://... --writers 4: widen's HBase sink
#       alone, from cells pre-made in memory (read from an embedded store
#       that widen migrate wrote), so like the Java writer it only writes;
#   (r) HBaseBench read: what (j) spends reading its dump;
#   (a) the extraction limit: the SELECTs widen issues, into /dev/null
#       (psql -c "COPY (...) TO STDOUT"), one after the other.
# Each figure is the median of the rounds (min and max beside it); cells/s
# is the table's cells over that time. It prints a Markdown table and the
# ratios of widen's cells/s to the Java writer's.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "hbase-bench: $*" >&2; }

if [[ ${1:-} == --inner ]]; then
  S=$2 build=$3 rounds=$4 records=$5 writers=$6
  IFS=, read -r -a writer_list <<<"$writers"
  source "$BENCH_DIR/lib.sh"
  widen=$build/widen/cmd/widen
  store_bench=$build/widen_store_bench
  work=$(mktemp -d "${TMPDIR:-/tmp}/widen-hbase-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  record() { printf '%s\t%s\n' "$S" "$*" >>"$records"; }
  # time_v FILE: "seconds user+sys maxrss_kb" of a /usr/bin/time -v report
  # (its own form, replacing lib.sh's).
  time_v() {
    awk -F': ' '
      /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
                                 for (i = 1; i <= n; i++) s = s * 60 + p[i]; el = s }
      /User time/ { u = $2 } /System time/ { sy = $2 }
      /Maximum resident set size/ { rss = $2 }
      END { printf "%s %.2f %s\n", el, u + sy, rss }' "$1"
  }
  # kv LINE KEY: the value of KEY=... in a line of key=value words.
  kv() { sed -n "s/.* $2=\\([^ ]*\\).*/\\1/p" <<<" $1"; }

  log "S=$S: loading PostgreSQL: $(load_pg "$S") s"
  url=$(pg_url)
  hb=$WIDEN_TEST_HBASE_URL
  m=$BENCH_DIR/shop.yaml
  hbase_java_build
  "$widen" migrate -q -m "$m" --source "$url" --target "leveldb:$work/store"

  # ---- warm-up, and the cells the Java writer writes
  hbase_java drop shop:orders
  "$widen" migrate -q -m "$m" --source "$url" --target "$hb"
  dump=$(hbase_java dump shop:orders "$work/cells.bin")
  cells=$(kv "$dump" cells)
  log "S=$S: $cells cells dumped in $(kv "$dump" seconds) s"
  record "cells	$cells"

  migrate_timed() {  # migrate_timed STEP WRITERS
    hbase_java drop shop:orders
    local la
    la=$(loadavg)
    /usr/bin/time -v -o "$work/t.txt" "$widen" migrate -q -m "$m" --source "$url" \
      --target "$hb" --writers "$2" >"$work/out.txt" 2>&1 || { cat "$work/out.txt" >&2; exit 1; }
    read -r el cpu rss < <(time_v "$work/t.txt")
    record "$1	$el	cpu=$cpu rss_kb=$rss loadavg=$la"
    log "S=$S: ($1) ${el} s, cpu ${cpu} s, load $la"
  }
  for ((r = 1; r <= rounds; r++)); do
    migrate_timed "c${writer_list[0]}" "${writer_list[0]}"
    la=$(loadavg)
    hbase_java_cmd
    /usr/bin/time -v -o "$work/t.txt" "${HBASE_JAVA_CMD[@]}" write shop:orders shop:orders_java \
      "$work/cells.bin" >"$work/j.txt"
    line=$(tail -n 1 "$work/j.txt")
    read -r el cpu rss < <(time_v "$work/t.txt")
    [[ $(kv "$line" cells) == "$cells" ]] || { log "the Java writer wrote $(kv "$line" cells) cells, not $cells"; exit 1; }
    record "j	$(kv "$line" seconds)	process_seconds=$el cpu=$cpu rss_kb=$rss loadavg=$la"
    log "S=$S: (j) $(kv "$line" seconds) s (process $el s), load $la"
    for w in "${writer_list[@]:1}"; do migrate_timed "c$w" "$w"; done
    hbase_java drop shop:orders
    la=$(loadavg)
    /usr/bin/time -v -o "$work/t.txt" "$store_bench" --from "$work/store" --to "$hb" --writers 4 >"$work/s.txt" 2>/dev/null
    line=$(tail -n 1 "$work/s.txt")
    read -r el cpu rss < <(time_v "$work/t.txt")
    record "s	$(kv "$line" seconds)	cpu=$(kv "$line" cpu_seconds) loadavg=$la"
    log "S=$S: (s) $(kv "$line" seconds) s, load $la"
    line=$(hbase_java read "$work/cells.bin")
    record "r	$(kv "$line" seconds)	"
    secs=0
    for q in "$SHOP_Q_ORDERS" "$SHOP_Q_LINES"; do
      psql -X -q -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" -U "$WIDEN_TEST_PG_USER" \
        -d "$BENCH_DB" -c "COPY ($q) TO STDOUT" >/dev/null  # warm the cache
      /usr/bin/time -v -o "$work/t.txt" psql -X -q -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" \
        -U "$WIDEN_TEST_PG_USER" -d "$BENCH_DB" -c "COPY ($q) TO STDOUT" >/dev/null
      read -r el cpu rss < <(time_v "$work/t.txt")
      secs=$(awk -v a="$secs" -v b="$el" 'BEGIN { print a + b }')
    done
    record "a	$secs	loadavg=$(loadavg)"
  done
  exit 0
fi

sizes=100000,1000000
rounds=""
jit=full
writers=4,1
build=$REPO/build-bench
while (($# > 0)); do
  case $1 in
    --sizes) sizes=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --jit) jit=$2; shift ;;
    --writers) writers=$2; shift ;;
    --build-dir) build=$2; shift ;;
    -h | --help) sed -n '2,36p' "$0"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done
[[ $jit == full || $jit == quick ]] || { log "--jit: full or quick, not '$jit'"; exit 2; }
IFS=, read -r -a size_list <<<"$sizes"

log "building widen and widen_store_bench (RelWithDebInfo) in $build"
cmake -S "$BENCH_DIR" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null
records=$(mktemp "${TMPDIR:-/tmp}/widen-hbase-bench.XXXXXX")
trap 'rm -f "$records"' EXIT
t_start=$SECONDS
for S in "${size_list[@]}"; do
  n=$rounds
  [[ -n $n ]] || { ((S <= 200000)) && n=3 || n=1; }
  WIDEN_HBASE_JIT=$jit WIDEN_REQUIRE_SERVERS=1 "$REPO/scripts/with-servers.sh" --pg --hbase -- \
    "$0" --inner "$S" "$build" "$n" "$records" "$writers" || { log "S=$S: the run failed"; exit 1; }
done

echo "bench/hbase.sh --sizes $sizes --jit $jit --writers $writers: $(date -u '+%Y-%m-%d %H:%M UTC'), $((SECONDS - t_start)) s," \
  "commit $(git -C "$REPO" rev-parse --short HEAD), $(nproc) cores, highest 1-minute load average" \
  "$(awk -F'\t' '{ n = split($4, kv, " "); for (i = 1; i <= n; i++) if (kv[i] ~ /^loadavg=/) { v = substr(kv[i], 9) + 0; if (v > m) m = v } } END { print m + 0 }' "$records")"
echo
awk -F'\t' '
  function median(list, n,   a, i, j, t) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    lo = a[1]; hi = a[n]
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $2 == "cells" { cells[$1] = $3; next }
  { key = $1 SUBSEP $2; t[key] = t[key] " " $3; if (!(($1, $2) in first)) { first[$1, $2] = 1; order[++n] = key } }
  END {
    name["s"] = "(s) widen HBase sink alone, --writers 4 (pre-made cells)"
    name["j"] = "(j) HBase Java BufferedMutator (dump read included)"
    name["r"] = "(r) Java: reading the dump only"
    name["a"] = "(a) extraction: the SELECTs into /dev/null"
    print "| S | step | seconds, median (min–max) | cells/s | × Java writer |"
    print "|---|---|---|---|---|"
    for (i = 1; i <= n; i++) {
      split(order[i], k, SUBSEP)
      s = k[1]; step = k[2]
      jm = median(t[s SUBSEP "j"])
      med = median(t[order[i]])  # last: sets lo and hi
      rate = med > 0 ? cells[s] / med : 0
      if (step ~ /^c[0-9]+$/) name[step] = "(" step ") widen migrate, --writers " substr(step, 2) " (end to end)"
      ratio = (step ~ /^(c[0-9]+|s)$/ && jm > 0 && med > 0) ? sprintf("%.2f", jm / med) : ""
      printf "| %d | %s | %.2f (%.2f–%.2f) | %.0f | %s |\n", s, name[step], med, lo, hi, rate, ratio
    }
  }' "$records"
