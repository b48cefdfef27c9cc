#!/usr/bin/env bash
# sync.sh — widen sync against a full migrate, on the bench shop (bench/gen.sh).
#
# Usage: bench/sync.sh [--sizes 100000] [--engines pg] [--build-dir DIR]
#                      [--changes N] [--deletes N] [--no-watermark]
#                      [--target leveldb|hbase] [--repeat N]
#
# For each engine and size S it starts throwaway servers
# (scripts/with-servers.sh; with --target hbase also an HBase, each store
# below then a namespace of its own in it), loads the shop (S orders), and
# times with /usr/bin/time -v (wall, CPU, peak RSS) every widen run below.
#
# Digest mode (bench/shop.yaml, no `sync:` section):
#   migrate     widen migrate -q -m bench/shop.yaml into a new store: the
#               baseline of every fraction
#   first sync  widen sync into that store (no digests yet: every row
#               rewritten once)
#   idle sync   widen sync with nothing changed
#   sync        after N changed source rows (default 1,000; bench/lib.sh
#               apply_changes): a third orders (status), a third order lines
#               (quantity), a third customers (city: fan-out to every order
#               of the customer), each also raising its updated_at
#   verify      widen verify after the migrate (equal), after the changes
#               (differs: exit 9, expected), with --sample 10 there, and
#               after the sync (equal)
# Watermark mode (bench/shop_sync.yaml; skipped with --no-watermark): right
# after the load, orders, order_line and customer get a column updated_at
# (timestamp(6) / MariaDB DATETIME(6), NOT NULL, default 2000-01-01, an
# index), and one row of each table a later value (2001-01-01: the table's
# last change before the bench, so the rows at the default lie outside the
# lookback window of the watermark the first pass records; bench/lib.sh
# add_watermarks). Then:
#   shop:orders (keys in read order): a first sync into an empty store (full
#     pass), an idle sync, the sync after the same N changes as above;
#   shop:orders_by_customer (key customer_id|order_id, not in read order):
#     a migrate (its own baseline), a first sync after it (full pass), an
#     idle sync, the sync after the N changes;
#   after the changes, D hard deletes (default 10: half of them whole orders
#     with their lines, half single order lines): widen sync --reconcile of
#     both watermark stores, and a digest-mode sync of the digest store.
# The results are checked: widen verify (not timed) must find each
# watermark-mode store equal to the source after each of its syncs, the
# digest store is verified after its change sync (timed, above), and at the
# end every store must scan (every version) as a fresh migrate of the final
# source state; each sync must have run the mode expected (--format json:
# "full" on a first pass, then "watermark").
# The runs the goals compare (the two migrates and the three syncs after the
# changes) run --repeat times (default 3), each from the same store: a copy
# of the store as it was before the first of them (a new store for a
# migrate); the table gives the run of median wall time and lists them all.
# Into HBase (no copy of a namespace) each runs once.
# It prints a Markdown table of the figures, then one of each sync's wall and
# CPU time as a share of its migrate's, against the goals of issue 12.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
log() { echo "sync-bench: $*" >&2; }

if [[ ${1:-} == --inner ]]; then
  engine=$2 S=$3 widen=$4 changes=$5 deletes=$6 watermark=$7 ratios=$8 target=$9 repeat=${10}
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
  if ((watermark)); then  # not timed
    log "watermark columns and indexes added: $(add_watermarks "$engine") s"
  fi

  declare -A WALL CPU
  # timed ID NAME ARGS...: one widen run under /usr/bin/time -v; its row of
  # the table (the last column: what a JSON summary says), and WALL[ID],
  # CPU[ID] for the fractions.
  timed() {
    local id=$1 name=$2
    shift 2
    local rc=0
    /usr/bin/time -v "$widen" "$@" 2>"$work/time.txt" >"$work/out.txt" || rc=$?
    if ((rc != ${EXPECT_RC:-0})); then
      cat "$work/time.txt" "$work/out.txt" >&2
      exit 1
    fi
    local note=""
    if [[ -s $work/out.txt ]] && jq -e .widen_sync "$work/out.txt" >/dev/null 2>&1; then
      note=$(jq -r '.tables[0] as $t | "\($t.mode): \($t.source_rows) source rows read"
        + (if $t.mode == "watermark" then ", \($t.changed_source_rows) changed, \($t.split_values) split values" + (if $t.reconciled > 0 then ", \($t.reconciled) reconciled" else "" end) else "" end)
        + "; \(.rows_written) rows written, \(.rows_deleted) deleted"' "$work/out.txt")
    fi
    local fig
    fig=$(awk -F': ' '
      /Elapsed \(wall clock\)/ { k = split($2, p, ":"); s = 0
                                 for (i = 1; i <= k; i++) s = s * 60 + p[i]; el = s }
      /User time/ { u = $2 } /System time/ { sy = $2 }
      /Maximum resident set size/ { rss = $2 }
      END { printf "%.2f %.2f %d\n", el, u + sy, rss / 1024 }' "$work/time.txt")
    read -r WALL[$id] CPU[$id] rss <<<"$fig"
    printf '| %s | %s | %s | %s | %s | %s |\n' "$ROW" "$name" "${WALL[$id]}" "${CPU[$id]}" "$rss" "$note"
  }
  # repeated ID NAME STORE ARGS...: `timed` run $repeat times, each from
  # STORE (a directory under $work) as it was before the first (a copy of
  # it; none when it did not exist); WALL[ID] and CPU[ID] and the row
  # printed are the run of median wall time's, the last run's store stays.
  repeated() {
    local id=$1 name=$2 store=$work/$3 i had=0
    shift 3
    if [[ $target == hbase ]] || ((repeat <= 1)); then
      timed "$id" "$name" "$@"
      return
    fi
    [[ -e $store ]] && had=1 && cp -a "$store" "$store.before"
    local -a walls=()
    for ((i = 1; i <= repeat; i++)); do
      if ((i > 1)); then
        rm -rf "$store"
        ((had)) && cp -a "$store.before" "$store"
      fi
      timed "$id" "$name" "$@" >"$work/row.$i"
      cp "$work/out.txt" "$work/out.$i"
      walls+=("${WALL[$id]} ${CPU[$id]} $i")
    done
    rm -rf "$store.before"
    local median all
    median=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(((repeat + 1) / 2))p")
    all=$(printf '%s\n' "${walls[@]}" | awk '{print $1}' | paste -sd, - | sed 's/,/, /g')
    read -r WALL[$id] CPU[$id] i <<<"$median"
    cp "$work/out.$i" "$work/out.txt"  # expect_mode reads the median run's summary
    sed "s/| $name |/| $name (median of $repeat: $all s) |/" "$work/row.$i"
  }
  # expect_mode MODE: the last timed sync ran its table in MODE.
  expect_mode() {
    local got
    got=$(jq -r '.tables[0].mode' "$work/out.txt")
    [[ $got == "$1" ]] || { log "expected mode $1, the sync ran $got"; exit 1; }
  }
  # check_equal MAPPING TABLE STORE WHAT: widen verify finds STORE's TABLE
  # equal to the source (not timed).
  check_equal() {
    local rc=0
    "$widen" verify -q -m "$1" --table "$2" --source "$url" --target "$(st "$3")" || rc=$?
    ((rc == 0)) || { log "$engine S=$S: $2 after $4 is NOT equal to the source (verify exit $rc)"; exit 1; }
  }
  export ROW="$engine, S = $S"
  [[ $target == hbase ]] && ROW="$engine → HBase, S = $S"
  m=$BENCH_DIR/shop.yaml
  ms=$BENCH_DIR/shop_sync.yaml
  # The stores: D (digest mode), W and K (watermark mode), F and FK (fresh
  # migrates, the references). st STORE: its URL; mp MAPPING STORE: the
  # mapping for it; tb STORE TABLE: the table's name in it. Into HBase each
  # store is a namespace of its own (bD:orders, ...) in the one HBase.
  if [[ $target == hbase ]]; then
    st() { echo "$WIDEN_TEST_HBASE_URL"; }
    mp() { local f=$work/$2.${1##*/}; sed "s/name: shop:/name: b$2:/" "$1" >"$f"; echo "$f"; }
    tb() { echo "b$1:${2#shop:}"; }
  else
    st() { echo "leveldb:$work/$1"; }
    mp() { echo "$1"; }
    tb() { echo "$2"; }
  fi
  mD=$(mp "$m" D) mF=$(mp "$m" F) msW=$(mp "$ms" W) msK=$(mp "$ms" K) msFK=$(mp "$ms" FK)
  repeated migrate "migrate" D migrate -q -m "$mD" --source "$url" --target "$(st D)"
  timed verify "verify (equal)" verify -q -m "$mD" --source "$url" --target "$(st D)"
  timed d_first "first sync (rewrites every row once)" sync --format json -m "$mD" --source "$url" --target "$(st D)"
  timed d_idle "idle sync (nothing changed)" sync --format json -m "$mD" --source "$url" --target "$(st D)"
  if ((watermark)); then
    timed w_first "watermark: first sync, empty store (full pass)" sync --format json -m "$msW" --table "$(tb W shop:orders)" --source "$url" --target "$(st W)"
    expect_mode full
    check_equal "$msW" "$(tb W shop:orders)" W "the first sync"
    timed w_idle "watermark: idle sync" sync --format json -m "$msW" --table "$(tb W shop:orders)" --source "$url" --target "$(st W)"
    expect_mode watermark
    check_equal "$msW" "$(tb W shop:orders)" W "the idle sync"
    repeated k_migrate "key not in read order: migrate" K migrate -q -m "$msK" --table "$(tb K shop:orders_by_customer)" --source "$url" --target "$(st K)"
    timed k_first "key not in read order: first sync after the migrate (full pass)" sync --format json -m "$msK" --table "$(tb K shop:orders_by_customer)" --source "$url" --target "$(st K)"
    expect_mode full
    check_equal "$msK" "$(tb K shop:orders_by_customer)" K "the first sync"
    timed k_idle "key not in read order: idle sync" sync --format json -m "$msK" --table "$(tb K shop:orders_by_customer)" --source "$url" --target "$(st K)"
    expect_mode watermark
    check_equal "$msK" "$(tb K shop:orders_by_customer)" K "the idle sync"
  fi
  apply_changes "$engine" "$changes" "$watermark"
  EXPECT_RC=9 timed verify_diff "verify after the changes (differs: exit 9)" verify -q -m "$mD" --source "$url" --target "$(st D)"
  EXPECT_RC=9 timed verify_sample "verify --sample 10 after the changes" verify -q -m "$mD" --source "$url" --target "$(st D)" --sample 10
  if ((watermark)); then
    repeated w_sync "watermark: sync after $changes changed source rows" W sync --format json -m "$msW" --table "$(tb W shop:orders)" --source "$url" --target "$(st W)"
    expect_mode watermark
    check_equal "$msW" "$(tb W shop:orders)" W "the sync of the changes"
  fi
  repeated d_sync "sync after $changes changed source rows" D sync --format json -m "$mD" --source "$url" --target "$(st D)"
  timed verify_after "verify after the sync (equal)" verify -q -m "$mD" --source "$url" --target "$(st D)"
  if ((watermark)); then
    repeated k_sync "key not in read order: watermark sync after $changes changed source rows" K sync --format json -m "$msK" --table "$(tb K shop:orders_by_customer)" --source "$url" --target "$(st K)"
    expect_mode watermark
    check_equal "$msK" "$(tb K shop:orders_by_customer)" K "the sync of the changes"
    # Hard deletes: whole orders (their lines first), then single lines of
    # other orders, from the middle of the key range.
    half=$((deletes / 2)) mid=$((S / 2))
    ids=$(seq -s, "$mid" $((mid + half - 1)))
    lines=$(seq -s, $((mid + 100)) $((mid + 100 + deletes - half - 1)))
    sql "DELETE FROM order_line WHERE order_id IN ($ids)"
    sql "DELETE FROM orders WHERE order_id IN ($ids)"
    sql "DELETE FROM order_line WHERE line_no = 1 AND order_id IN ($lines)"
    timed w_reconcile "watermark: sync --reconcile after $deletes hard deletes" sync --format json --reconcile -m "$msW" --table "$(tb W shop:orders)" --source "$url" --target "$(st W)"
    expect_mode watermark
    check_equal "$msW" "$(tb W shop:orders)" W "the reconcile"
    timed k_reconcile "key not in read order: sync --reconcile after $deletes hard deletes" sync --format json --reconcile -m "$msK" --table "$(tb K shop:orders_by_customer)" --source "$url" --target "$(st K)"
    expect_mode watermark
    check_equal "$msK" "$(tb K shop:orders_by_customer)" K "the reconcile"
    timed d_deletes "digest: sync after $deletes hard deletes" sync --format json -m "$mD" --source "$url" --target "$(st D)"
  fi
  # Each store against a fresh migrate of the final source state, cell by
  # cell (every version kept).
  same_scan() {  # same_scan TABLE STORE FRESH WHAT
    if cmp -s <("$widen" scan "$(tb "$2" "$1")" --target "$(st "$2")" --versions 1000) \
      <("$widen" scan "$(tb "$3" "$1")" --target "$(st "$3")" --versions 1000); then
      log "$engine S=$S: $4 scans as a fresh migrate"
    else
      log "$engine S=$S: $4 DIFFERS from a fresh migrate"
      exit 1
    fi
  }
  "$widen" migrate -q -m "$mF" --source "$url" --target "$(st F)"
  same_scan shop:orders D F "the digest-synced store"
  if ((watermark)); then
    "$widen" migrate -q -m "$msFK" --table "$(tb FK shop:orders_by_customer)" --source "$url" --target "$(st FK)"
    same_scan shop:orders W F "the watermark-synced store (shop:orders)"
    same_scan shop:orders_by_customer K FK "the watermark-synced store (shop:orders_by_customer)"
  fi
  # The fractions of issue 12's goals.
  ratio() {  # ratio ID BASE NAME GOAL_PERCENT
    awk -v r="$ROW" -v n="$3" -v w="${WALL[$1]}" -v c="${CPU[$1]}" -v bw="${WALL[$2]}" \
      -v bc="${CPU[$2]}" -v g="$4" 'BEGIN {
        pw = 100 * w / bw; pc = 100 * c / bc
        goal = g == "" ? "" : sprintf("< %s %%", g)
        met = g == "" ? "" : (pw < g ? "met" : sprintf("**not met** (%.1f×)", pw / g))
        printf "| %s | %s | %.2f / %.2f | %.1f %% | %.1f %% | %s | %s |\n", r, n, w, bw, pw, pc, goal, met }' >>"$ratios"
  }
  if ((watermark)); then
    ratio w_first migrate "watermark, first sync (full pass)" ""
    ratio w_idle migrate "watermark, idle sync" ""
    ratio w_sync migrate "watermark, $changes changed rows" 2
  fi
  ratio d_sync migrate "digest, $changes changed rows" 50
  if ((watermark)); then
    ratio w_reconcile migrate "watermark, --reconcile after $deletes hard deletes" ""
    ratio k_first k_migrate "key not in read order: watermark, first sync (full pass)" ""
    ratio k_sync k_migrate "key not in read order: watermark, $changes changed rows" 2
    ratio k_reconcile k_migrate "key not in read order: --reconcile after $deletes hard deletes" ""
  fi
  exit 0
fi

sizes=100000
engines=pg
build=$REPO/build
changes=1000
deletes=10
watermark=1
target=leveldb
repeat=3
while (($#)); do
  case $1 in
    --sizes) sizes=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --changes) changes=$2; shift 2 ;;
    --deletes) deletes=$2; shift 2 ;;
    --no-watermark) watermark=0; shift ;;
    --target) target=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "sync.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
((changes >= 3 && deletes >= 2)) || { echo "sync.sh: --changes must be >= 3, --deletes >= 2" >&2; exit 2; }
[[ $target == leveldb || $target == hbase ]] || { echo "sync.sh: --target is leveldb or hbase" >&2; exit 2; }
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { echo "sync.sh: --repeat takes a whole number >= 1" >&2; exit 2; }
widen=$build/cmd/widen
[[ -x $widen ]] || { echo "sync.sh: no widen at $widen (scripts/build.sh first)" >&2; exit 2; }
ratios=$(mktemp "${TMPDIR:-/tmp}/widen-sync-ratios.XXXXXX")
trap 'rm -f "$ratios"' EXIT
echo "| engine, size | run | wall s | CPU s | peak RSS MB | sync summary (--format json) |"
echo "|---|---|---:|---:|---:|---|"
for engine in ${engines//,/ }; do
  for S in ${sizes//,/ }; do
    flags=(--pg)
    [[ $engine == mysql ]] && flags=(--mysql)
    [[ $target == hbase ]] && flags+=(--hbase)
    "$REPO/scripts/with-servers.sh" "${flags[@]}" -- "$0" --inner "$engine" "$S" "$widen" "$changes" \
      "$deletes" "$watermark" "$ratios" "$target" "$repeat" 2> >(grep -v '^with-servers' >&2)
  done
done
echo
echo "| engine, size | sync | wall s: sync / migrate | wall, % of migrate | CPU, % of migrate | goal (wall) | |"
echo "|---|---|---:|---:|---:|---|---|"
cat "$ratios"
