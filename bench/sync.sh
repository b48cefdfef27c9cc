#!/usr/bin/env bash
# sync.sh — widen sync against a full migrate, on the bench shop (bench/gen.sh).
#
# Usage: bench/sync.sh [--sizes 100000] [--engines pg] [--build-dir DIR] [--changes N]
#
# For each engine and size S it starts throwaway servers
# (scripts/with-servers.sh), loads the shop (S orders), and times with
# /usr/bin/time -v (wall, CPU, peak RSS):
#   migrate     widen migrate -q -m bench/shop.yaml into a new store
#   first sync  widen sync -q into that store (no digests yet: every row
#               rewritten once)
#   idle sync   widen sync with nothing changed
#   sync        after N changed source rows (default 1,000): a third orders
#               (status), a third order lines (quantity), a third customers
#               (city: fan-out to every order of the customer)
#   verify      widen verify after the migrate (equal), after the changes
#               (differs: exit 9, expected), with --sample 10 there, and
#               after the sync (equal)
# and checks that the synced store scans the same as a fresh migrate.
# It prints a Markdown table of the figures.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "sync-bench: $*" >&2; }

if [[ ${1:-} == --inner ]]; then
  engine=$2 S=$3 widen=$4 changes=$5
  source "$BENCH_DIR/lib.sh"
  work=$(mktemp -d "${TMPDIR:-/tmp}/widen-sync-bench.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  if [[ $engine == pg ]]; then
    log "loading S=$S into PostgreSQL: $(load_pg "$S") s"
    url=$(pg_url)
    sql() { pg_psql -c "$1"; }
  else
    log "loading S=$S into MariaDB: $(load_mysql "$S") s"
    url=$(mysql_url)
    sql() { my_client -e "$1"; }
  fi
  timed() {  # timed NAME ARGS...: one widen run under /usr/bin/time -v
    local name=$1
    shift
    local rc=0
    /usr/bin/time -v "$widen" "$@" 2>"$work/time.txt" >"$work/out.txt" || rc=$?
    if ((rc != ${EXPECT_RC:-0})); then
      cat "$work/time.txt" "$work/out.txt" >&2
      exit 1
    fi
    awk -F': ' -v n="$name" '
      /Elapsed \(wall clock\)/ { k = split($2, p, ":"); s = 0
                                 for (i = 1; i <= k; i++) s = s * 60 + p[i]; el = s }
      /User time/ { u = $2 } /System time/ { sy = $2 }
      /Maximum resident set size/ { rss = $2 }
      END { printf "| %s | %s | %.2f | %.2f | %d |\n", ENVIRON["ROW"], n, el, u + sy, rss / 1024 }
    ' "$work/time.txt"
  }
  export ROW="$engine, S = $S"
  m=$BENCH_DIR/shop.yaml
  timed "migrate" migrate -q -m "$m" --source "$url" --target "leveldb:$work/store"
  timed "verify (equal)" verify -q -m "$m" --source "$url" --target "leveldb:$work/store"
  timed "first sync (rewrites every row once)" sync -q -m "$m" --source "$url" --target "leveldb:$work/store"
  timed "idle sync (nothing changed)" sync -q -m "$m" --source "$url" --target "leveldb:$work/store"
  third=$((changes / 3))
  sql "UPDATE orders SET status = 'changed' WHERE order_id IN (SELECT order_id FROM (SELECT order_id FROM orders ORDER BY order_id LIMIT $third) AS o)"
  sql "UPDATE order_line SET quantity = quantity + 1 WHERE order_id IN (SELECT order_id FROM (SELECT order_id FROM orders ORDER BY order_id DESC LIMIT $third) AS o) AND line_no = 1"
  sql "UPDATE customer SET city = 'Moved' WHERE customer_id IN (SELECT customer_id FROM (SELECT customer_id FROM customer ORDER BY customer_id LIMIT $((changes - 2 * third))) AS c)"
  EXPECT_RC=9 timed "verify after the changes (differs: exit 9)" verify -q -m "$m" --source "$url" --target "leveldb:$work/store"
  EXPECT_RC=9 timed "verify --sample 10 after the changes" verify -q -m "$m" --source "$url" --target "leveldb:$work/store" --sample 10
  timed "sync after $changes changed source rows" sync -m "$m" --source "$url" --target "leveldb:$work/store" --format json
  grep -o '"rows_written": [0-9]*' "$work/out.txt" | tail -1 >&2
  timed "verify after the sync (equal)" verify -q -m "$m" --source "$url" --target "leveldb:$work/store"
  "$widen" migrate -q -m "$m" --source "$url" --target "leveldb:$work/fresh"
  if cmp -s <("$widen" scan shop:orders --target "leveldb:$work/store" --versions 1000) \
    <("$widen" scan shop:orders --target "leveldb:$work/fresh" --versions 1000); then
    log "$engine S=$S: the synced store scans as a fresh migrate"
  else
    log "$engine S=$S: the synced store DIFFERS from a fresh migrate"
    exit 1
  fi
  exit 0
fi

sizes=100000
engines=pg
build=$REPO/build
changes=1000
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --changes) changes=$2; shift 2 ;;
    *) echo "sync.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
widen=$build/cmd/widen
[[ -x $widen ]] || { echo "sync.sh: no widen at $widen (scripts/build.sh first)" >&2; exit 2; }
echo "| engine, size | run | wall s | CPU s | peak RSS MB |"
echo "|---|---|---:|---:|---:|"
for engine in ${engines//,/ }; do
  for S in ${sizes//,/ }; do
    flag=--pg
    [[ $engine == mysql ]] && flag=--mysql
    "$REPO/scripts/with-servers.sh" "$flag" -- "$0" --inner "$engine" "$S" "$widen" "$changes" 2> >(grep -v '^with-servers' >&2)
  done
done
