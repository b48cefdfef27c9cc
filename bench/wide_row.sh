#!/usr/bin/env bash
# wide_row.sh — memory and time of ONE parent row with many nested children
# (a row whose cells do not fit the assembler's in-memory limit is sorted
# through spilled runs; its memory must not grow with the child count).
#
# Usage: bench/wide_row.sh [--counts 10000,100000,1000000] [--engines pg,mysql]
#                          [--build-dir DIR] [--baseline BIN] [--out FILE]
#
# For each engine it starts throwaway servers (scripts/with-servers.sh) and,
# for each count N, loads `parent` (one row) and `child` (N rows of ~100
# bytes: id, parent_id, a 90-character label), then runs
#   /usr/bin/time -v widen migrate -q -m <mapping> --target leveldb:<new dir>
# (the parent keyed by id, the children nested as JSON cells, prefix c, id
# = child id) and records the wall time, widen's CPU time and its peak RSS.
# With --baseline BIN the same run is made with another widen binary (an
# older build) right after, for the figures before a change.
# It prints a Markdown table and appends it, with the commands, to --out
# (default: print only).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "wide_row: $*" >&2; }

if [[ ${1:-} == --inner ]]; then
  engine=$2 counts=$3 widen=$4 baseline=$5 records=$6
  work=$(mktemp -d "${TMPDIR:-/tmp}/widen-wide-row.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  case $engine in
    pg)
      base="postgresql://$WIDEN_TEST_PG_USER@$WIDEN_TEST_PG_HOST:$WIDEN_TEST_PG_PORT"
      sql() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 "$base/$1"; }
      echo "DROP DATABASE IF EXISTS wide; CREATE DATABASE wide;" | sql postgres
      url="$base/wide"
      ;;
    mysql)
      base="mysql://$WIDEN_TEST_MYSQL_USER@$WIDEN_TEST_MYSQL_HOST:$WIDEN_TEST_MYSQL_PORT"
      sql() {
        mariadb --no-defaults -h "$WIDEN_TEST_MYSQL_HOST" -P "$WIDEN_TEST_MYSQL_PORT" \
          -u "$WIDEN_TEST_MYSQL_USER" "$1"
      }
      echo "SET GLOBAL innodb_buffer_pool_size = 1073741824;
            DROP DATABASE IF EXISTS wide; CREATE DATABASE wide;" | sql mysql
      url="$base/wide"
      ;;
  esac
  cat >"$work/m.yaml" <<EOF
source: $url
tables:
  - name: w:parent
    from: parent
    families: [d]
    key: {parts: [{column: id, width: 4}]}
    columns: [{column: name, to: "d:name"}]
    nest:
      - {table: child, on: {id: parent_id}, family: d, prefix: c, id: [{column: id, width: 8}],
         columns: [label]}
EOF
  for n in ${counts//,/ }; do
    log "$engine: loading 1 parent with $n children"
    if [[ $engine == pg ]]; then
      sql wide <<EOF
DROP TABLE IF EXISTS child; DROP TABLE IF EXISTS parent;
CREATE TABLE parent (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL REFERENCES parent, label text NOT NULL);
INSERT INTO parent VALUES (1, 'the parent');
INSERT INTO child SELECT g, 1, repeat('x', 82) || lpad(g::text, 8, '0') FROM generate_series(1, $n) g;
CREATE INDEX ON child (parent_id);
ANALYZE;
EOF
    else
      sql wide <<EOF
DROP TABLE IF EXISTS child; DROP TABLE IF EXISTS parent;
CREATE TABLE parent (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE child (id int PRIMARY KEY, parent_id int NOT NULL, label text NOT NULL,
                    KEY (parent_id), FOREIGN KEY (parent_id) REFERENCES parent (id));
INSERT INTO parent VALUES (1, 'the parent');
INSERT INTO child SELECT seq, 1, CONCAT(REPEAT('x', 82), LPAD(seq, 8, '0')) FROM seq_1_to_$n;
ANALYZE TABLE parent, child;
EOF
    fi
    for which in widen baseline; do
      bin=$widen
      if [[ $which == baseline ]]; then
        [[ -n $baseline ]] || continue
        bin=$baseline
      fi
      rm -rf "$work/store"
      /usr/bin/time -v "$bin" migrate -q -m "$work/m.yaml" --target "leveldb:$work/store" \
        2>"$work/time.txt" || { cat "$work/time.txt" >&2; exit 1; }
      read -r secs cpu rss < <(awk -F': ' '
        /Elapsed \(wall clock\)/ { k = split($2, p, ":"); s = 0
                                   for (i = 1; i <= k; i++) s = s * 60 + p[i]; el = s }
        /User time/ { u = $2 } /System time/ { sy = $2 }
        /Maximum resident set size/ { rss = $2 }
        END { printf "%.2f %.2f %d\n", el, u + sy, rss / 1024 }' "$work/time.txt")
      printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$engine" "$n" "$which" "$secs" "$cpu" "$rss" >>"$records"
      log "$engine N=$n $which: ${secs} s, ${cpu} s CPU, peak RSS ${rss} MB"
    done
  done
  exit 0
fi

counts=10000,100000,1000000
engines=pg,mysql
build=$REPO/build
baseline=
out=
while (($#)); do
  case $1 in
    --counts) counts=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--counts N,...] [--engines pg,mysql] [--build-dir DIR] [--baseline BIN] [--out FILE]" >&2; exit 2 ;;
  esac
done
widen=$build/cmd/widen
[[ -x $widen ]] || { log "no widen binary at $widen (scripts/build.sh first)"; exit 2; }
records=$(mktemp)
trap 'rm -f "$records"' EXIT
for engine in ${engines//,/ }; do
  flag=--pg
  [[ $engine == mysql ]] && flag=--mysql
  "$REPO/scripts/with-servers.sh" "$flag" -- "$0" --inner "$engine" "$counts" "$widen" \
    "$baseline" "$records"
done

table=$(
  echo "| engine | children of one parent | widen s | widen CPU s | peak RSS MB |$([[ -n $baseline ]] && echo " before: s | before: peak RSS MB |")"
  echo "|---|---:|---:|---:|---:|$([[ -n $baseline ]] && echo "---:|---:|")"
  awk -F'\t' -v base="$baseline" '
    $3 == "widen" { key = $1 SUBSEP $2; order[++n] = key; e[key] = $1; c[key] = $2
                    s[key] = $4; cpu[key] = $5; rss[key] = $6 }
    $3 == "baseline" { key = $1 SUBSEP $2; bs[key] = $4; brss[key] = $6 }
    END { for (i = 1; i <= n; i++) { k = order[i]
            line = sprintf("| %s | %\047d | %s | %s | %s |", e[k], c[k], s[k], cpu[k], rss[k])
            if (base != "") line = line sprintf(" %s | %s |", bs[k], brss[k])
            print line } }' "$records"
)
echo "$table"
if [[ -n $out ]]; then
  {
    echo
    echo "## One parent with many children (bench/wide_row.sh, $(date -u +%Y-%m-%d))"
    echo
    echo "Command: \`bench/wide_row.sh --counts $counts --engines $engines${baseline:+ --baseline BIN}\`"
    echo "(each run: \`/usr/bin/time -v widen migrate -q -m m.yaml --target leveldb:DIR\`;"
    echo "one parent, N children of ~100 B nested as JSON cells)."
    echo
    echo "$table"
  } >>"$out"
fi
