#!/usr/bin/env bash
# run.sh — the widen benchmark (issue 6): end to end against the machine's
# limits, in the same run.
#
# Usage: bench/run.sh [--sizes 100000,1000000] [--engines pg,mysql]
#                     [--out bench/RESULTS.md] [--build-dir DIR] [--keep]
#                     [--repeat N]
#
# For each engine and size S it starts throwaway servers
# (scripts/with-servers.sh), loads the synthetic shop (bench/gen.sh: S/10
# customers, S orders, ~5·S order lines, 10,000 products), and measures:
#   (c) widen migrate -m bench/shop.yaml into a new embedded store, under
#       /usr/bin/time -v (widen built RelWithDebInfo by bench/CMakeLists.txt),
#       with --jobs 1 and again with --jobs 2 (and the share of the
#       machine's cores busy meanwhile, from /proc/stat);
#   (a) the extraction limit: the SELECTs widen issued (PostgreSQL: taken
#       from the server log, where widen's session logs them with
#       log_statement=all; MariaDB: the same SELECTs, unpaged), each through
#       `psql -c "COPY (...) TO STDOUT" > /dev/null`, or
#       `mysql --quick ... > /dev/null`; a first pass (counting bytes and
#       rows) warms the caches, the second is timed;
#   (t) widen migrate -m bench/text_key.yaml: S vouchers keyed by a text
#       code (VARCHAR primary key; MariaDB utf8mb4_general_ci) with S uses
#       nested on the code, read in pages by the key's index;
#   (b) the store limit: bench/store_bench.cc writes the cells of (c)'s
#       store, pre-made in memory, into a new store through widen's
#       LevelDbStore sink (b), and the encoded keys through a bare LevelDB
#       with the same options (b-raw);
# Each timed step runs --repeat N times (default 3 for S <= 200,000, else 1)
# and the fastest run counts; the load average is recorded with it.
# Then it writes --out (default bench/RESULTS.md) with the machine, the
# commands, the date and the table, and prints the table.
#
# Environment: WIDEN_BENCH_WORK=DIR puts the stores there (default a temp
# dir under ${TMPDIR:-/tmp}, removed at the end unless --keep).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "bench: $*" >&2; }

# --------------------------------------------------------------- the inner run
# run.sh --inner ENGINE S RECORDS_FILE WORK_DIR BUILD_DIR, under with-servers.sh.
if [[ ${1:-} == --inner ]]; then
  engine=$2 S=$3 records=$4 work=$5 build=$6 repeat=$7
  source "$BENCH_DIR/lib.sh"
  widen=$build/widen/cmd/widen
  store_bench=$build/widen_store_bench
  cmdlog=$work/commands.$engine.$S.txt
  : >"$cmdlog"
  case $engine in
    pg)
      [[ -n ${WIDEN_TEST_PG_URL:-} ]] || { log "no PostgreSQL server"; exit 1; }
      url=$(pg_url)
      ;;
    mysql)
      [[ -n ${WIDEN_TEST_MYSQL_URL:-} ]] || { log "no MariaDB server"; exit 1; }
      url=$(mysql_url)
      ;;
  esac

  # ---- load
  log "$engine S=$S: loading"
  if [[ $engine == pg ]]; then
    secs=$(load_pg "$S")
    version=$(pg_psql -Atc "SHOW server_version")
    db_bytes=$(pg_psql -Atc "SELECT pg_database_size('$BENCH_DB')")
  else
    secs=$(load_mysql "$S")
    version=$(my_client -N -e "SELECT VERSION()")
    db_bytes=$(my_client -N -e "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM
      information_schema.TABLES WHERE TABLE_SCHEMA = '$BENCH_DB'")
  fi
  record "load	$secs	version=$version db_bytes=$db_bytes"
  note_cmd "bench/gen.sh $engine $S | <client>   # after schema.$engine.sql, dict.sql; then keys.$engine.sql"
  log "$engine S=$S: loaded in ${secs}s"

  # busy_ticks: busy and total jiffies of all cores (/proc/stat), "busy total".
  busy_ticks() {
    awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8 + $9; t = b + $5 + $6; print b, t; exit }' /proc/stat
  }

  # ---- (c) widen migrate, with --jobs 1 (step c) and --jobs 2 (step c2)
  out_c=$work/c.$engine.$S
  c_ok=1
  for jobs in 1 2; do
    step=c
    ((jobs > 1)) && step=c$jobs
    out=$out_c
    ((jobs > 1)) && out=$out_c.jobs$jobs
    log "$engine S=$S: ($step) widen migrate --jobs $jobs, best of $repeat"
    note_cmd "/usr/bin/time -v $widen migrate -m bench/shop.yaml --source $url --target leveldb:$out --jobs $jobs"
    # PostgreSQL: only widen's one-job session logs its statements (the exact
    # SELECTs for (a)); a few hundred log lines, no measurable cost.
    pgopt=""
    ((jobs == 1)) && pgopt='-c log_statement=all'
    ok=1 best=""
    for ((r = 1; r <= repeat; r++)); do
      rm -rf "$out"
      la=$(loadavg)
      read -r b0 t0 < <(busy_ticks)
      if ! PGOPTIONS=$pgopt /usr/bin/time -v -o "$work/c.time" \
        "$widen" migrate -m "$BENCH_DIR/shop.yaml" --source "$url" --target "leveldb:$out" \
        --jobs "$jobs" >"$work/c.out" 2>"$work/c.err"; then
        ok=0
        break
      fi
      read -r b1 t1 < <(busy_ticks)
      # The whole machine's CPU use while it ran (widen, the database server,
      # anything else), as a share of all cores.
      busy=$(awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f", (t > 0) ? 100 * b / t : 0 }')
      read -r el us sy rss < <(time_v "$work/c.time")
      log "$engine S=$S: ($step) run $r: ${el}s, peak RSS ${rss} kB, machine CPU busy ${busy} %, load average $la"
      if [[ -z $best ]] || awk -v a="$el" -v b="$best" 'BEGIN { exit !(a < b) }'; then
        best=$el
        # The summary's line of the one target table: source rows, rows, cells.
        read -r src_rows rows cells < <(awk '$1 == "shop:orders" { print $2, $3, $4 }' "$work/c.out")
        c_rec="$step	$el	src_rows=$src_rows rows=$rows cells=$cells user=$us sys=$sy rss_kb=$rss busy=$busy loadavg=$la runs=$repeat jobs=$jobs"
        cp "$work/c.out" "$work/c.best.out"
      fi
      ((r < repeat)) && rm -rf "$out"
    done
    if ((ok)); then
      record "$c_rec"
      cat "$work/c.best.out" >&2
    else
      log "$engine S=$S: widen migrate --jobs $jobs failed: $(tail -n 3 "$work/c.err")"
      record "$step	-	error=$(tail -n 1 "$work/c.err" | tr '\t' ' ')"
      ((jobs == 1)) && c_ok=0
    fi
    ((jobs > 1)) && rm -rf "$out"
  done

  # ---- (t) the text-keyed table: bench/text_key.yaml (S vouchers keyed by a
  # text code, S uses nested on it), best of $repeat.
  out_t=$work/t.$engine.$S
  log "$engine S=$S: (t) widen migrate bench/text_key.yaml, best of $repeat"
  note_cmd "/usr/bin/time -v $widen migrate -m bench/text_key.yaml --source $url --target leveldb:$out_t"
  best="" t_rec="t	-	error=failed"
  for ((r = 1; r <= repeat; r++)); do
    rm -rf "$out_t"
    la=$(loadavg)
    if ! /usr/bin/time -v -o "$work/t.time" "$widen" migrate -m "$BENCH_DIR/text_key.yaml" \
      --source "$url" --target "leveldb:$out_t" >"$work/t.out" 2>"$work/t.err"; then
      log "$engine S=$S: (t) failed: $(tail -n 3 "$work/t.err")"
      t_rec="t	-	error=$(tail -n 1 "$work/t.err" | tr '\t' ' ')"
      break
    fi
    read -r el us sy rss < <(time_v "$work/t.time")
    log "$engine S=$S: (t) run $r: ${el}s, peak RSS ${rss} kB, load average $la"
    if [[ -z $best ]] || awk -v a="$el" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$el
      read -r src_rows rows cells < <(awk '$1 == "shop:vouchers" { print $2, $3, $4 }' "$work/t.out")
      t_rec="t	$el	src_rows=$src_rows rows=$rows cells=$cells user=$us sys=$sy rss_kb=$rss loadavg=$la runs=$repeat"
    fi
  done
  record "$t_rec"
  rm -rf "$out_t"

  # ---- (a) the extraction limit
  # The SELECTs: PostgreSQL's from the server log (the DECLARE ... CURSOR FOR
  # of widen's session); otherwise these, which are what widen's planner
  # issues for bench/shop.yaml.
  q_orders=$SHOP_Q_ORDERS
  q_lines=$SHOP_Q_LINES
  queries=("$q_orders" "$q_lines")
  qsrc="reproduced"
  if [[ $engine == pg && $c_ok == 1 ]]; then
    pglog="$(dirname "$(pg_psql -Atc 'SHOW data_directory')")/server.log"
    if [[ -r $pglog ]]; then
      mapfile -t logged < <(sed -n 's/.*statement: DECLARE widen_c[0-9]* NO SCROLL CURSOR FOR //p' "$pglog" |
        awk '!seen[$0]++')
      if ((${#logged[@]} > 0)); then
        queries=("${logged[@]}")
        qsrc="from the server log"
      fi
    fi
  fi
  if [[ $engine == mysql ]]; then
    for i in "${!queries[@]}"; do
      queries[i]=$(sed -e 's/ COLLATE "C"//g' -e 's/"/`/g' <<<"${queries[i]}")
    done
  fi
  log "$engine S=$S: (a) ${#queries[@]} SELECTs ($qsrc)"
  a_secs=0 a_rows=0 a_bytes=0 a_rss=0 i=0
  for q in "${queries[@]}"; do
    i=$((i + 1))
    if [[ $engine == pg ]]; then
      client=(psql -X -q -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" -U "$WIDEN_TEST_PG_USER"
        -d "$BENCH_DB" -c "COPY ($q) TO STDOUT")
    else
      client=(mysql --no-defaults --quick --batch --skip-column-names -h "$WIDEN_TEST_MYSQL_HOST"
        -P "$WIDEN_TEST_MYSQL_PORT" -u "$WIDEN_TEST_MYSQL_USER" --default-character-set=utf8mb4
        -e "$q" "$BENCH_DB")
    fi
    if [[ $engine == pg ]]; then
      note_cmd "Q$i='$q'"
      note_cmd "/usr/bin/time -v psql -X -q -h $WIDEN_TEST_PG_HOST -p $WIDEN_TEST_PG_PORT -U $WIDEN_TEST_PG_USER -d $BENCH_DB -c \"COPY (\$Q$i) TO STDOUT\" > /dev/null"
    else
      note_cmd "Q$i='$q'"
      note_cmd "/usr/bin/time -v mysql --no-defaults --quick --batch --skip-column-names -h $WIDEN_TEST_MYSQL_HOST -P $WIDEN_TEST_MYSQL_PORT -u $WIDEN_TEST_MYSQL_USER --default-character-set=utf8mb4 -e \"\$Q$i\" $BENCH_DB > /dev/null"
    fi
    # Warm-up pass: rows and bytes of the output. Then the timed passes.
    read -r lines bytes < <("${client[@]}" </dev/null | wc -lc)
    best=""
    for ((r = 1; r <= repeat; r++)); do
      /usr/bin/time -v -o "$work/a.time" "${client[@]}" </dev/null >/dev/null
      read -r t us sy m < <(time_v "$work/a.time")
      if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
        best=$t el=$t rss=$m
      fi
    done
    record "a$i	$el	rows=$lines bytes=$bytes rss_kb=$rss loadavg=$(loadavg) sql=$q"
    a_secs=$(awk -v a="$a_secs" -v b="$el" 'BEGIN { print a + b }')
    a_rows=$((a_rows + lines))
    a_bytes=$((a_bytes + bytes))
    ((rss > a_rss)) && a_rss=$rss
  done
  record "a	$a_secs	rows=$a_rows bytes=$a_bytes rss_kb=$a_rss source=$qsrc"

  # ---- (b) the store limit
  if ((c_ok)); then
    for mode in sink raw; do
      out_b=$work/b-$mode.$engine.$S
      step=b
      [[ $mode == raw ]] && step=braw
      log "$engine S=$S: (b) store limit, $mode, best of $repeat"
      note_cmd "/usr/bin/time -v $store_bench --from $out_c --to $out_b --mode $mode"
      best=""
      for ((r = 1; r <= repeat; r++)); do
        rm -rf "$out_b"
        la=$(loadavg)
        /usr/bin/time -v -o "$work/b.time" "$store_bench" --from "$out_c" --to "$out_b" \
          --mode "$mode" >"$work/b.out" 2>"$work/b.err"
        read -r el us sy rss < <(time_v "$work/b.time")
        line=$(cat "$work/b.out")
        kv() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p" <<<" $line"; }
        t=$(kv seconds)
        log "$engine S=$S: (b) $mode run $r: ${t}s, load average $la"
        if [[ -z $best ]] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
          best=$t
          b_rec="$step	$t	rows=$(kv rows) cells=$(kv cells) bytes=$(kv bytes) preload_bytes=$(kv preload_bytes) rss_before_kb=$(kv rss_before_kb) hwm_after_kb=$(kv hwm_after_kb) cpu_seconds=$(kv cpu_seconds) process_seconds=$el rss_kb=$rss loadavg=$la runs=$repeat"
        fi
      done
      record "$b_rec"
      [[ $mode == sink ]] && record "options	0	$(head -n 1 "$work/b.err")"
      rm -rf "$out_b"
    done
  fi
  rm -rf "$out_c"
  exit 0
fi

# --------------------------------------------------------------- the outer run
sizes=100000,1000000
engines=pg,mysql
out=$BENCH_DIR/RESULTS.md
build=$REPO/build-bench
keep=0
repeat=""
while (($# > 0)); do
  case $1 in
    --sizes) sizes=$2; shift ;;
    --engines) engines=$2; shift ;;
    --out) out=$2; shift ;;
    --build-dir) build=$2; shift ;;
    --keep) keep=1 ;;
    --repeat) repeat=$2; shift ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) log "unknown argument: $1"; exit 2 ;;
  esac
  shift
done
IFS=, read -r -a size_list <<<"$sizes"
IFS=, read -r -a engine_list <<<"$engines"
for e in "${engine_list[@]}"; do
  [[ $e == pg || $e == mysql ]] || { log "--engines: pg or mysql, not '$e'"; exit 2; }
done
for s in "${size_list[@]}"; do
  [[ $s =~ ^[0-9]+$ && $s -ge 1000 ]] || { log "--sizes: integers >= 1000, not '$s'"; exit 2; }
done

# Runs of each timed step (the fastest counts): --repeat, else 3 up to
# S = 200,000 and 1 above (the machine may be shared; best-of-N filters noise).
repeats() {
  if [[ -n $repeat ]]; then echo "$repeat"; elif (($1 <= 200000)); then echo 3; else echo 1; fi
}

t_start=$(date +%s)
date_utc=$(date -u '+%Y-%m-%d %H:%M UTC')

log "building widen and widen_store_bench (RelWithDebInfo) in $build"
cmake -S "$BENCH_DIR" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"${TMPDIR:-/tmp}/widen-bench-cmake.log" ||
  { cat "${TMPDIR:-/tmp}/widen-bench-cmake.log" >&2; exit 1; }
cmake --build "$build" >/dev/null
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")

work=${WIDEN_BENCH_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/widen-bench.XXXXXX")}
mkdir -p "$work"
chmod 755 "$work"
records=$work/records.tsv
: >"$records"
cleanup() { ((keep)) || rm -rf "$work"; }
trap cleanup EXIT
log "work dir $work"

for S in "${size_list[@]}"; do
  for e in "${engine_list[@]}"; do
    t0=$(date +%s)
    flag=--pg
    [[ $e == mysql ]] && flag=--mysql
    WIDEN_REQUIRE_SERVERS=1 "$REPO/scripts/with-servers.sh" "$flag" -- \
      "$0" --inner "$e" "$S" "$records" "$work" "$build" "$(repeats "$S")" ||
      log "$e S=$S: the run failed (see above)"
    printf '%s\t%s\twall\t%s\t\n' "$e" "$S" "$(($(date +%s) - t0))" >>"$records"
  done
done
t_total=$(($(date +%s) - t_start))

# --------------------------------------------------------------- the report
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
mem_gib=$(awk '/^MemTotal/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)
os=$( (. /etc/os-release && echo "$PRETTY_NAME") 2>/dev/null || echo unknown)
commit=$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$REPO" status --porcelain -- . ':!bench' 2>/dev/null | grep -q . && echo " (work tree has changes outside bench/)" || true)
cxx=$(c++ --version | head -n 1)
options=$(awk -F'\t' '$3 == "options" { print $5; exit }' "$records")
max_load=$(awk -F'\t' '{ n = split($5, kv, " "); for (i = 1; i <= n; i++)
  if (kv[i] ~ /^loadavg=/) { v = substr(kv[i], 9) + 0; if (v > m) m = v } } END { print m + 0 }' "$records")

report() {
  cat <<EOF
# widen benchmark results

Produced by \`bench/run.sh --sizes $sizes --engines $engines\` on $date_utc;
the whole run took ${t_total} s (build included).

## Machine

| | |
|---|---|
| CPU | $cpu, $(nproc) cores (nproc) |
| RAM | $mem_gib GiB |
| OS | $os, kernel $(uname -r) |
| compiler | $cxx, CMAKE_BUILD_TYPE=$build_type |
| widen | commit $commit$dirty |
| servers | scripts/with-servers.sh: fsync off, synchronous_commit off (PostgreSQL); innodb_flush_log_at_trx_commit=0, buffer pool raised to 1 GiB by bench/lib.sh (MariaDB) |

## What is measured

- **load**: bench/gen.sh generates the shop server-side (not timed against anything).
- **(c) widen**: \`widen migrate -m bench/shop.yaml\` end to end, one process, wall clock;
  with \`--jobs 1\`, then again with \`--jobs 2\` (two connections on one snapshot, two writers).
- **(t) text key**: \`widen migrate -m bench/text_key.yaml\`: S vouchers keyed by a text code
  (a VARCHAR primary key; MariaDB's utf8mb4_general_ci) with S voucher uses nested on the code;
  rows/s counts vouchers + uses.
- **(a) extract**: the SELECTs widen issues, into /dev/null (\`psql -c "COPY (...) TO STDOUT"\`,
  \`mysql --quick\`), one after the other, timed on the second of two passes; seconds are the sum.
- **(b) store**: the cells of (c)'s store, pre-made in memory, written to a new store through
  widen's own \`LevelDbStore\` sink (4 MiB batches, sorted, one synced write at Close);
  **(b-raw)**: the same encoded keys and values through a bare \`leveldb::DB\` in 4 MiB
  \`WriteBatch\`es. LevelDB options (both; widen's \`store/leveldb_store.cc\`):
  $options.
- rows/s counts source rows (orders + order lines); cells/s the cells (c) writes (for (a),
  the same cells over (a)'s time); MB/s is the query output for (a) and the cell bytes
  (row + family + qualifier + value) for (b) and (c); 1 MB = 10^6 bytes.
- peak RSS: \`/usr/bin/time -v\` of the process (for (a) the client, psql or mysql; for (b)
  the growth of RSS while writing, on top of the pre-made cells held in memory).
- CPU: user + sys seconds of all the process's threads (LevelDB's compaction thread included;
  for (b) the timed phase only), and as a share of one core over the wall time. The database
  server's CPU is not included.
- Each timed step ran N times and the fastest run counts (N = 3 for S ≤ 200,000, else 1;
  \`--repeat\`); load avg is the 1-minute load average when it ran (2 cores: above ~2 means
  other work competed for the CPU).

## Results

EOF
  if awk -v m="$max_load" -v n="$(nproc)" 'BEGIN { exit !(m > n) }'; then
    cat <<EOF
**The machine was shared during this run**: the 1-minute load average reached $max_load on
$(nproc) cores (other processes competed for the CPU), so wall-clock times and the ratios are
inflated and noisy; the CPU seconds are the steadier measure.

EOF
  fi
  awk -F'\t' -f "$BENCH_DIR/fields.awk" -f "$BENCH_DIR/report.awk" "$records"
  cat <<EOF

## Commands

Each run is \`scripts/with-servers.sh --pg|--mysql -- bench/run.sh --inner ENGINE S ...\`,
which loads the shop (bench/lib.sh: schema.ENGINE.sql, dict.sql, \`bench/gen.sh ENGINE S\`,
keys.ENGINE.sql) and runs, in this order (ports and paths of the last run shown):

\`\`\`sh
EOF
  for e in "${engine_list[@]}"; do
    f=$work/commands.$e.${size_list[-1]}.txt
    [[ -f $f ]] && sed -e "s|$REPO/||g" "$f"
  done
  cat <<EOF
\`\`\`
EOF
}

report >"$out"
log "wrote $out"
sed -n '/^## Results/,/^## Commands/p' "$out" | sed '$d'
