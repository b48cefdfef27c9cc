# lib.sh — helpers shared by bench/run.sh and bench/check-gen.sh (sourced).
# REQUIRES: WIDEN_TEST_PG_* / WIDEN_TEST_MYSQL_* from scripts/with-servers.sh
# for the engine used. The bench database is `shop` on both engines.
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_DB=shop

pg_psql() {
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" \
    -U "$WIDEN_TEST_PG_USER" -d "$BENCH_DB" "$@"
}

my_client() {
  mariadb --no-defaults -h "$WIDEN_TEST_MYSQL_HOST" -P "$WIDEN_TEST_MYSQL_PORT" \
    -u "$WIDEN_TEST_MYSQL_USER" --default-character-set=utf8mb4 "$@" "$BENCH_DB"
}

# The inner runs' records and commands (bench/run.sh, bench/designs.sh):
# REQUIRES engine, S, records (the records file) and cmdlog (the commands
# file) set by the caller. record FIELDS...: one tab-separated record line;
# note_cmd TEXT: one command line for RESULTS.md; loadavg: the 1-minute
# load average.
record() { printf '%s\t%s\t%s\n' "$engine" "$S" "$*" >>"$records"; }
note_cmd() { printf '%s\n' "$*" >>"$cmdlog"; }
loadavg() { cut -d ' ' -f 1 /proc/loadavg; }

# time_v FILE: the fields of a `/usr/bin/time -v` report, as
# "seconds user sys maxrss_kb".
time_v() {
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0
                               for (i = 1; i <= n; i++) s = s * 60 + p[i]; el = s }
    /User time/ { u = $2 } /System time/ { sy = $2 }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%s %s %s %s\n", el, u, sy, rss }' "$1"
}

# elapsed_since T0: seconds since T0 (a `date +%s.%N` value), 2 decimals.
elapsed_since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f\n", a - b }'; }

# The two SELECTs widen's planner issues for bench/shop.yaml on PostgreSQL
# (MariaDB: the same with backquotes): the extraction limit runs them into
# /dev/null.
SHOP_Q_ORDERS='SELECT "orders"."order_id", "orders"."customer_id", "orders"."ordered_at", "orders"."status", "orders"."channel", "orders"."total", "orders"."shipped_at", "orders"."gift", "orders"."note", "customer"."name", "customer"."email", "customer"."phone", "customer"."city", "customer"."country", "customer"."vip", "orders"."order_id" FROM "orders" AS "orders" LEFT JOIN "customer" AS "customer" ON "customer"."customer_id" = "orders"."customer_id" ORDER BY "orders"."order_id"'
SHOP_Q_LINES='SELECT "order_line"."order_id", "order_line"."line_no", "order_line"."product_id", "order_line"."quantity", "order_line"."unit_price", "order_line"."discount", "order_line"."note", "order_line"."order_id" FROM "order_line" AS "order_line" WHERE "order_line"."order_id" IS NOT NULL ORDER BY "order_line"."order_id"'

pg_url() { echo "postgresql://$WIDEN_TEST_PG_USER@$WIDEN_TEST_PG_HOST:$WIDEN_TEST_PG_PORT/$BENCH_DB"; }
mysql_url() { echo "mysql://$WIDEN_TEST_MYSQL_USER@$WIDEN_TEST_MYSQL_HOST:$WIDEN_TEST_MYSQL_PORT/$BENCH_DB"; }

# load_pg S [--payments]: (re)creates the shop at scale S in PostgreSQL
# (with --payments also the typed table, bench/gen.sh); prints seconds.
load_pg() {
  local S=$1 extra=${2:-} t0
  t0=$(date +%s.%N)
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" \
    -U "$WIDEN_TEST_PG_USER" -d postgres -c "DROP DATABASE IF EXISTS $BENCH_DB" \
    -c "CREATE DATABASE $BENCH_DB"
  pg_psql -f "$BENCH_DIR/schema.pg.sql" -f "$BENCH_DIR/dict.sql"
  "$BENCH_DIR/gen.sh" $extra pg "$S" | pg_psql
  pg_psql -f "$BENCH_DIR/keys.pg.sql"
  elapsed_since "$t0"
}

# load_mysql S [--payments]: (re)creates the shop at scale S in MariaDB
# (with --payments also the typed table); prints seconds.
# The throwaway server starts with a 64 MiB buffer pool; it is raised to
# 1 GiB here (online) so that the data set stays in memory, as PostgreSQL's
# does in the OS page cache.
load_mysql() {
  local S=$1 extra=${2:-} t0
  t0=$(date +%s.%N)
  mariadb --no-defaults -h "$WIDEN_TEST_MYSQL_HOST" -P "$WIDEN_TEST_MYSQL_PORT" \
    -u "$WIDEN_TEST_MYSQL_USER" -e "SET GLOBAL innodb_buffer_pool_size = 1073741824;
      DROP DATABASE IF EXISTS $BENCH_DB;
      CREATE DATABASE $BENCH_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
  my_client <"$BENCH_DIR/schema.mysql.sql"
  my_client <"$BENCH_DIR/dict.sql"
  "$BENCH_DIR/gen.sh" $extra mysql "$S" | my_client
  my_client <"$BENCH_DIR/keys.mysql.sql" >/dev/null
  elapsed_since "$t0"
}

# add_watermarks pg|mysql: the watermark columns of bench/shop_sync.yaml, as
# a user adds them to a loaded database: updated_at (timestamp(6) / MariaDB
# DATETIME(6)), NOT NULL, a constant default of 2000-01-01 (both engines add
# it without rewriting the table) and an index, on customer, orders and
# order_line. Then one row of each table is set to 2001-01-01, the table's
# last change before the bench, so that the watermark a first sync records
# leaves the rows at the default outside the lookback window (were every row
# at one value, the first run after a change would re-read them all).
# Prints seconds.
add_watermarks() {
  local engine=$1 t0 t type
  t0=$(date +%s.%N)
  local -a q=()
  [[ $engine == pg ]] && type="timestamp(6)" || type="DATETIME(6)"
  for t in customer orders order_line; do
    q+=("ALTER TABLE $t ADD COLUMN updated_at $type NOT NULL DEFAULT '2000-01-01 00:00:00'"
      "CREATE INDEX ${t}_updated_idx ON $t (updated_at)")
  done
  q+=("UPDATE customer SET updated_at = '2001-01-01 00:00:00' WHERE customer_id = 1"
    "UPDATE orders SET updated_at = '2001-01-01 00:00:00' WHERE order_id = 1"
    "UPDATE order_line SET updated_at = '2001-01-01 00:00:00' WHERE order_id = 1 AND line_no = 1")
  if [[ $engine == pg ]]; then
    for t in "${q[@]}"; do pg_psql -c "$t"; done
    pg_psql -c "ANALYZE customer" -c "ANALYZE orders" -c "ANALYZE order_line"
  else
    for t in "${q[@]}"; do my_client -e "$t"; done
    my_client -e "ANALYZE TABLE customer, orders, order_line" >/dev/null
  fi
  elapsed_since "$t0"
}

# apply_changes pg|mysql N [WM]: N changed source rows, mixed: a third of the
# orders (status; the first ones), a third of the order lines (quantity;
# line 1 of the last orders), the rest customers (city: the city is copied
# into every order of the customer, a fan-out). With WM=1 each change also
# raises the row's updated_at to the transaction's time (add_watermarks).
apply_changes() {
  local engine=$1 n=$2 wm=${3:-0} set_wm="" third run
  third=$((n / 3))
  if [[ $engine == pg ]]; then
    run="pg_psql -c"
    ((wm)) && set_wm=", updated_at = localtimestamp(6)"
  else
    run="my_client -e"
    ((wm)) && set_wm=", updated_at = NOW(6)"
  fi
  $run "UPDATE orders SET status = 'changed'$set_wm WHERE order_id IN (SELECT order_id FROM (SELECT order_id FROM orders ORDER BY order_id LIMIT $third) AS o)"
  $run "UPDATE order_line SET quantity = quantity + 1$set_wm WHERE order_id IN (SELECT order_id FROM (SELECT order_id FROM orders ORDER BY order_id DESC LIMIT $third) AS o) AND line_no = 1"
  $run "UPDATE customer SET city = 'Moved'$set_wm WHERE customer_id IN (SELECT customer_id FROM (SELECT customer_id FROM customer ORDER BY customer_id LIMIT $((n - 2 * third))) AS c)"
}

# ------------------------------------------------------------ HBase's Java client
# bench/hbase-java (HBaseBench: BufferedMutator writer, dump, drop, split),
# built by Maven into bench/hbase-java/target, its dependencies from Maven
# Central in ~/.m2. REQUIRES (to run it): WIDEN_TEST_HBASE_DIR from
# scripts/with-servers.sh --hbase.
HBASE_JAVA_DIR=$BENCH_DIR/hbase-java

# hbase_java_build: builds the jar and its classpath file once (again when a
# source or the pom is newer than the jar).
hbase_java_build() {
  local jar=$HBASE_JAVA_DIR/target/widen-bench-hbase-1.jar
  if [[ -f $jar && -f $HBASE_JAVA_DIR/target/classpath.txt ]] &&
    [[ -z $(find "$HBASE_JAVA_DIR/pom.xml" "$HBASE_JAVA_DIR/src" -newer "$jar" -type f) ]]; then
    return 0
  fi
  mvn -B -q -Dstyle.color=never -f "$HBASE_JAVA_DIR/pom.xml" package dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt >&2
}

# hbase_java ARGS...: runs HBaseBench against the test HBase (its conf/ on the
# classpath after the jar, whose log4j2.properties sends the client's
# warnings to stderr). JDK 17: HBase's client needs these openings for its
# unsafe byte access.
# hbase_java_cmd sets HBASE_JAVA_CMD to that command line, for a caller that
# runs it under another command (/usr/bin/time).
hbase_java_cmd() {
  HBASE_JAVA_CMD=(java -Xmx1g --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    -cp "$HBASE_JAVA_DIR/target/widen-bench-hbase-1.jar:$WIDEN_TEST_HBASE_DIR/conf:$(<"$HBASE_JAVA_DIR/target/classpath.txt")"
    widen.bench.HBaseBench)
}
hbase_java() {
  hbase_java_cmd
  "${HBASE_JAVA_CMD[@]}" "$@"
}
