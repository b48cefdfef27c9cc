#!/usr/bin/env bash
# designs.sh — widen migrate for each key design of bench/designs.yaml
# against the machine's limits for the same data, in the same run.
#
# Usage: bench/designs.sh [--sizes 100000,1000000] [--engines pg,mysql]
#                         [--designs orders,by_customer,salted,hashed,by_time,payments]
#                         [--jobs 1,2] [--out FILE] [--build-dir DIR]
#                         [--repeat N] [--keep] [--loaded]
#
# For each engine and size S it starts a throwaway server
# (scripts/with-servers.sh), loads the bench shop with its typed table
# (bench/lib.sh load_pg / load_mysql S --payments), and for each design
# (a target table of bench/designs.yaml) measures:
#   (c) `widen migrate -m bench/designs.yaml --table shop:DESIGN` into a new
#       embedded store, under /usr/bin/time -v, once per --jobs value:
#       wall, widen's CPU (user + sys, every thread), the database server's
#       CPU over the same run (every server process: /proc), peak RSS, and
#       the external sort's runs (from the summary);
#   (a) the extraction limit: the SELECTs that read the design's source
#       rows in their stored order (those of shop:orders, or shop:payments:
#       `widen plan --format json`), each through
#       `psql -c "COPY (...) TO STDOUT" > /dev/null` or
#       `mariadb --quick ... > /dev/null`, timed on the second of two
#       passes, the seconds summed; and (a-w) the same for the design's own
#       SELECTs when they differ (a database sort by the key);
#   (b) the store limit: bench/store_bench.cc writes the cells of (c)'s
#       store, pre-made in memory and in key order, into a new store
#       through widen's LevelDbStore sink (4 MiB batches) and LevelDB's
#       write path (its log and memtable), with its CPU (user + sys of the
#       timed phase), set beside widen's; and (b-t) the same through the
#       sink as widen migrate uses it (table files written directly);
# Each timed step runs --repeat N times (default 3 for S <= 200,000, else 1)
# and the fastest run counts; the 1-minute load average is recorded with it.
# Then it writes --out (default: print only) with the commands and the table.
# The table's floor is ((b-t)'s CPU + the server's CPU during (c)) / nproc:
# the wall time below which no loader into this store can go on this
# machine, since the store's own work and the server's must run somewhere; c / floor
# is how far widen is from it (its own reading and assembly, and cores left
# idle).
#
# --loaded: use the servers named by WIDEN_TEST_* (a running
# scripts/with-servers.sh, e.g. `scripts/with-servers.sh --pg --mysql --
# bash`) whose shop already holds the one size given (bench/lib.sh
# load_pg / load_mysql S --payments), instead of starting and loading them.
#
# Environment: WIDEN_BENCH_WORK=DIR puts the stores there (default a temp
# dir under ${TMPDIR:-/tmp}, removed at the end unless --keep).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "designs: $*" >&2; }
MAPPING=$BENCH_DIR/designs.yaml

# --------------------------------------------------------------- the inner run
# designs.sh --inner ENGINE S RECORDS WORK BUILD REPEAT DESIGNS JOBS
if [[ ${1:-} == --inner ]]; then
  engine=$2 S=$3 records=$4 work=$5 build=$6 repeat=$7 designs=$8 jobs_list=$9
  source "$BENCH_DIR/lib.sh"
  widen=$build/widen/cmd/widen
  store_bench=$build/widen_store_bench
  cmdlog=$work/commands.$engine.$S.txt
  : >"$cmdlog"
  if [[ $engine == pg ]]; then url=$(pg_url); else url=$(mysql_url); fi
  # server_cpu: CPU seconds the database server used so far: its main
  # process (with the children it reaped: PostgreSQL's ended backends) and
  # the children alive now.
  server_cpu() {
    local tck
    tck=$(getconf CLK_TCK)
    {
      cat "/proc/$server_pid/stat"
      for f in /proc/[0-9]*/stat; do
        { read -r line <"$f"; } 2>/dev/null || continue  # a process that ended meanwhile
        if [[ $line == *") "?" $server_pid "* ]]; then echo "$line"; fi
      done
    } | awk -v tck="$tck" '{ sub(/^.*\) /, ""); t += $12 + $13 + $14 + $15 } END { printf "%.2f\n", t / tck }'
  }
  busy_ticks() {
    awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8 + $9; t = b + $5 + $6; print b, t; exit }' /proc/stat
  }

  if [[ ${WIDEN_BENCH_LOADED:-0} == 1 ]]; then
    log "$engine S=$S: the shop is loaded already (--loaded)"
    secs=0
  else
    log "$engine S=$S: loading (with the typed table)"
    if [[ $engine == pg ]]; then
      secs=$(load_pg "$S" --payments)
    else
      secs=$(load_mysql "$S" --payments)
    fi
  fi
  record "-	load	$secs	"
  note_cmd "bench/gen.sh --payments $engine $S | <client>   # after schema.$engine.sql, dict.sql; then keys.$engine.sql"
  log "$engine S=$S: loaded in ${secs}s"
  if [[ $engine == pg ]]; then
    server_pid=$(head -n 1 "$(pg_psql -Atc 'SHOW data_directory')/postmaster.pid")
  else
    server_pid=$(cat "$(my_client -N -e 'SELECT @@pid_file')")
  fi

  # queries TABLE: widen's SELECTs for one target table, one a line (MySQL:
  # without the first page's LIMIT).
  queries() {
    "$widen" plan -m "$MAPPING" --source "$url" --table "$1" --limit 0 --sample 1 --format json |
      python3 -c '
import json, re, sys
for t in json.load(sys.stdin)["tables"]:
    for q in t["queries"]:
        print(re.sub(r" LIMIT [0-9]+$", "", q["sql"]).replace("\n", " "))'
  }
  # extract NAME QUERIES_FILE: (a) for those SELECTs; records NAME.
  extract() {
    local name=$1 file=$2 total=0 rows=0 bytes=0 rss=0 q lines b best el us sy m la client
    la=$(loadavg)
    while IFS= read -r q; do
      if [[ $engine == pg ]]; then
        client=(psql -X -q -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" -U "$WIDEN_TEST_PG_USER"
          -d "$BENCH_DB" -c "COPY ($q) TO STDOUT")
        note_cmd "/usr/bin/time -v psql -X -q -h HOST -p PORT -U widen -d shop -c \"COPY ($q) TO STDOUT\" > /dev/null"
      else
        client=(mariadb --no-defaults --quick --batch --skip-column-names -h "$WIDEN_TEST_MYSQL_HOST"
          -P "$WIDEN_TEST_MYSQL_PORT" -u "$WIDEN_TEST_MYSQL_USER" --default-character-set=utf8mb4
          -e "$q" "$BENCH_DB")
        note_cmd "/usr/bin/time -v mariadb --no-defaults --quick --batch --skip-column-names -h HOST -P PORT -u widen --default-character-set=utf8mb4 -e \"$q\" shop > /dev/null"
      fi
      read -r lines b < <("${client[@]}" </dev/null | wc -lc)
      best=""
      for ((r = 1; r <= repeat; r++)); do
        /usr/bin/time -v -o "$work/a.time" "${client[@]}" </dev/null >/dev/null
        read -r el us sy m < <(time_v "$work/a.time")
        if [[ -z $best ]] || awk -v a="$el" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$el; fi
      done
      total=$(awk -v a="$total" -v b="$best" 'BEGIN { print a + b }')
      rows=$((rows + lines)) bytes=$((bytes + b))
      ((m > rss)) && rss=$m
    done <"$file"
    record "-	$name	$total	rows=$rows bytes=$bytes rss_kb=$rss loadavg=$la"
    log "$engine S=$S: ($name) ${total}s"
  }

  # store_limit STEP MODE FROM: widen_store_bench --mode MODE on the cells
  # of store FROM, best of $repeat; records STEP for design $d.
  store_limit() {
    local step=$1 mode=$2 from=$3 out_b=$work/b.$engine.$S.$d best="" r la line t cpu rec=""
    note_cmd "/usr/bin/time -v $store_bench --from $from --to $out_b --mode $mode"
    for ((r = 1; r <= repeat; r++)); do
      rm -rf "$out_b"
      la=$(loadavg)
      "$store_bench" --from "$from" --to "$out_b" --mode "$mode" >"$work/b.out" 2>"$work/b.err"
      line=$(cat "$work/b.out")
      t=$(sed -n 's/.* seconds=\([^ ]*\).*/\1/p' <<<" $line")
      cpu=$(sed -n 's/.* cpu_seconds=\([^ ]*\).*/\1/p' <<<" $line")
      if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
        best=$t
        rec="$d	$step	$t	cpu=$cpu loadavg=$la"
      fi
    done
    record "$rec"
    log "$engine S=$S: $d ($step, $mode) ${best}s"
    rm -rf "$out_b"
  }

  queries shop:orders >"$work/q.orders"
  queries shop:payments >"$work/q.payments"
  IFS=, read -r -a design_list <<<"$designs"
  IFS=, read -r -a jobs <<<"$jobs_list"
  extracted=""
  for d in "${design_list[@]}"; do
    table=shop:$d
    base=orders
    [[ $d == payments ]] && base=payments
    if [[ $extracted != *" $base "* ]]; then
      extract "a-$base" "$work/q.$base"
      extracted+=" $base "
    fi
    # ---- (c)
    out_c=$work/c.$engine.$S.$d
    for j in "${jobs[@]}"; do
      out=$out_c.jobs$j
      note_cmd "/usr/bin/time -v $widen migrate -m bench/designs.yaml --table $table --source $url --target leveldb:$out --jobs $j"
      best="" rec="$d	c$j	-	error=failed"
      for ((r = 1; r <= repeat; r++)); do
        rm -rf "$out"
        la=$(loadavg)
        s0=$(server_cpu)
        read -r b0 t0 < <(busy_ticks)
        if ! /usr/bin/time -v -o "$work/c.time" "$widen" migrate -m "$MAPPING" --table "$table" \
          --source "$url" --target "leveldb:$out" --jobs "$j" >"$work/c.out" 2>"$work/c.err"; then
          log "$engine S=$S: $d jobs $j failed: $(tail -n 3 "$work/c.err")"
          rec="$d	c$j	-	error=$(tail -n 1 "$work/c.err" | tr '\t' ' ')"
          break
        fi
        s1=$(server_cpu)
        read -r b1 t1 < <(busy_ticks)
        busy=$(awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f", (t > 0) ? 100 * b / t : 0 }')
        read -r el us sy rss < <(time_v "$work/c.time")
        srv=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b - a }')
        log "$engine S=$S: $d jobs $j run $r: ${el}s, widen CPU $(awk -v u="$us" -v s="$sy" 'BEGIN { print u + s }') s, server CPU ${srv} s, peak RSS ${rss} kB, load $la"
        if [[ -z $best ]] || awk -v a="$el" -v b="$best" 'BEGIN { exit !(a < b) }'; then
          best=$el
          read -r src_rows rows cells < <(awk -v t="$table" '$1 == t { print $2, $3, $4 }' "$work/c.out")
          runs=$(sed -n "s/.*sorted through \([0-9]*\) temporary run.*/\1/p" "$work/c.out" "$work/c.err" | head -n 1)
          rec="$d	c$j	$el	src_rows=$src_rows rows=$rows cells=$cells user=$us sys=$sy server=$srv rss_kb=$rss busy=$busy runs=${runs:-0} loadavg=$la"
        fi
      done
      record "$rec"
      # The design's own SELECTs (a-w), when they differ from the stored order's.
      if [[ $j == "${jobs[0]}" ]]; then
        queries "$table" >"$work/q.$d"
        if ! cmp -s "$work/q.$d" "$work/q.$base"; then extract "aw-$d" "$work/q.$d"; fi
      fi
    done
    # ---- (b) through LevelDB's write path; (b-t) through the sink as
    # widen migrate uses it, into table files written directly.
    from=$out_c.jobs${jobs[0]}
    if [[ -d $from ]]; then
      store_limit b sink "$from"
      store_limit bt files "$from"
    fi
    rm -rf "$out_c".jobs*
  done
  exit 0
fi

# --------------------------------------------------------------- the outer run
sizes=100000,1000000
engines=pg,mysql
designs=orders,by_customer,salted,hashed,by_time,payments
jobs=1,2
out=""
build=$REPO/build-bench
keep=0
loaded=0
repeat=""
while (($# > 0)); do
  case $1 in
    --sizes) sizes=$2; shift ;;
    --engines) engines=$2; shift ;;
    --designs) designs=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --out) out=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --keep) keep=1 ;;
    --loaded) loaded=1 ;;
    --repeat) repeat=$2; shift ;;
    -h | --help) sed -n '2,41p' "$0"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a engine_list <<<"$engines"
for e in "${engine_list[@]}"; do
  [[ $e == pg || $e == mysql ]] || { log "--engines: pg or mysql, not '$e'"; exit 2; }
done
repeats() {
  if [[ -n $repeat ]]; then echo "$repeat"; elif (($1 <= 200000)); then echo 3; else echo 1; fi
}

t_start=$(date +%s)
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')
if [[ ! -x $build/widen/cmd/widen || ! -x $build/widen_store_bench ]] || [[ $build == "$REPO/build-bench" ]]; then
  log "building widen and widen_store_bench (RelWithDebInfo) in $build"
  cmake -S "$BENCH_DIR" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"${TMPDIR:-/tmp}/widen-designs-cmake.log" ||
    { cat "${TMPDIR:-/tmp}/widen-designs-cmake.log" >&2; exit 1; }
  cmake --build "$build" >/dev/null
fi

work=${WIDEN_BENCH_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/widen-designs.XXXXXX")}
mkdir -p "$work"
chmod 755 "$work"
records=$work/records.tsv
: >"$records"
cleanup() { ((keep)) || rm -rf "$work"; }
trap cleanup EXIT
log "work dir $work"

for S in "${size_list[@]}"; do
  for e in "${engine_list[@]}"; do
    flag=--pg
    [[ $e == mysql ]] && flag=--mysql
    if ((loaded)); then
      WIDEN_BENCH_LOADED=1 "$0" --inner "$e" "$S" "$records" "$work" "$build" "$(repeats "$S")" \
        "$designs" "$jobs" || log "$e S=$S: the run failed (see above)"
      continue
    fi
    WIDEN_REQUIRE_SERVERS=1 "$REPO/scripts/with-servers.sh" "$flag" -- \
      "$0" --inner "$e" "$S" "$records" "$work" "$build" "$(repeats "$S")" "$designs" "$jobs" ||
      log "$e S=$S: the run failed (see above)"
  done
done
t_total=$(($(date +%s) - t_start))
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)

report() {
  echo "\`bench/designs.sh --sizes $sizes --engines $engines --designs $designs --jobs $jobs\`"
  echo "at commit $commit on $date_utc ($t_total s). Seconds are wall time; CPU is user + sys."
  echo
  local prog='
    {
      id = $1 SUBSEP $2 SUBSEP $3
      if ($3 != "-" && !(id in seen)) { seen[id] = 1; order[++n] = id }
      secs[$1, $2, $3, $4] = $5; rest[$1, $2, $3, $4] = $6
    }
    END {
      nj = split(jobs, J, ",")
      printf "| engine | S | design | cells | (a) s | (a-w) s | (b) s | (c) s | c / min(a, b) | widen CPU s | server CPU s | (b) CPU s | (b-t) s | (b-t) CPU s | (b-t) CPU / widen CPU | floor s | c / floor | peak RSS MB | sort runs |"
      for (j = 2; j <= nj; j++) printf " (c) --jobs %s s | jobs %s / jobs %s |", J[j], J[1], J[j]
      printf " load avg |\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      for (j = 2; j <= nj; j++) printf "---:|---:|"
      printf "---:|\n"
      for (k = 1; k <= n; k++) {
        split(order[k], p, SUBSEP); e = p[1]; S = p[2]; d = p[3]
        base = (d == "payments") ? "a-payments" : "a-orders"
        ta = secs[e, S, "-", base]
        taw = ((e, S, "-", "aw-" d) in secs) ? secs[e, S, "-", "aw-" d] : ""
        tb = secs[e, S, d, "b"]
        c = rest[e, S, d, "c" J[1]]; tc = secs[e, S, d, "c" J[1]]
        slow = (ta > tb) ? ta : tb
        r = (tc > 0 && tc != "-") ? sprintf("%.2f", slow / tc) : "–"
        bcpu = kv(rest[e, S, d, "b"], "cpu"); wcpu = kv(c, "user") + kv(c, "sys")
        tbt = secs[e, S, d, "bt"]; btcpu = kv(rest[e, S, d, "bt"], "cpu")
        # floor: the wall time no loader can beat on this machine: the
        # CPU of the cheapest path into the store (b-t: table files written
        # directly) and of the server, over the cores.
        floor = (btcpu + kv(c, "server")) / cores
        printf "| %s | %s | %s | %s | %.2f | %s | %.2f | **%s** | **%s** | %.1f | %.1f | %.1f | %.2f | %.1f | %s | %.2f | %s | %.0f | %s |", e, grp(S), d,
          grp(kv(c, "cells")), ta, taw == "" ? "" : sprintf("%.2f", taw), tb, tc, r,
          wcpu, kv(c, "server"), bcpu, tbt, btcpu, (wcpu > 0) ? sprintf("%.2f", btcpu / wcpu) : "–",
          floor, (floor > 0 && tc > 0) ? sprintf("%.2f", tc / floor) : "–",
          kv(c, "rss_kb") / 1024, kv(c, "runs")
        for (j = 2; j <= nj; j++) {
          t2 = secs[e, S, d, "c" J[j]]
          printf " %s | %s |", t2, (t2 > 0 && tc > 0) ? sprintf("%.2f", tc / t2) : "–"
        }
        printf " %s |\n", kv(c, "loadavg")
      }
    }'
  awk -F'\t' -v jobs="$jobs" -v cores="$(nproc)" -f "$BENCH_DIR/fields.awk" -f <(printf '%s\n' "$prog") "$records"
  echo
  echo '```sh'
  for e in "${engine_list[@]}"; do
    f=$work/commands.$e.${size_list[-1]}.txt
    [[ -f $f ]] && sed -e "s|$REPO/||g" -e "s|$work|WORK|g" "$f"
  done
  echo '```'
}
if [[ -n $out ]]; then
  report >"$out"
  log "wrote $out"
  cat "$out"
else
  report
fi
