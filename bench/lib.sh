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

# elapsed_since T0: seconds since T0 (a `date +%s.%N` value), 2 decimals.
elapsed_since() { awk -v a="$(date +%s.%N)" -v b="$1" 'BEGIN { printf "%.2f\n", a - b }'; }

pg_url() { echo "postgresql://$WIDEN_TEST_PG_USER@$WIDEN_TEST_PG_HOST:$WIDEN_TEST_PG_PORT/$BENCH_DB"; }
mysql_url() { echo "mysql://$WIDEN_TEST_MYSQL_USER@$WIDEN_TEST_MYSQL_HOST:$WIDEN_TEST_MYSQL_PORT/$BENCH_DB"; }

# load_pg S: (re)creates the shop at scale S in PostgreSQL; prints seconds.
load_pg() {
  local S=$1 t0
  t0=$(date +%s.%N)
  PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$WIDEN_TEST_PG_HOST" -p "$WIDEN_TEST_PG_PORT" \
    -U "$WIDEN_TEST_PG_USER" -d postgres -c "DROP DATABASE IF EXISTS $BENCH_DB" \
    -c "CREATE DATABASE $BENCH_DB"
  pg_psql -f "$BENCH_DIR/schema.pg.sql" -f "$BENCH_DIR/dict.sql"
  "$BENCH_DIR/gen.sh" pg "$S" | pg_psql
  pg_psql -f "$BENCH_DIR/keys.pg.sql"
  elapsed_since "$t0"
}

# load_mysql S: (re)creates the shop at scale S in MariaDB; prints seconds.
# The throwaway server starts with a 64 MiB buffer pool; it is raised to
# 1 GiB here (online) so that the data set stays in memory, as PostgreSQL's
# does in the OS page cache.
load_mysql() {
  local S=$1 t0
  t0=$(date +%s.%N)
  mariadb --no-defaults -h "$WIDEN_TEST_MYSQL_HOST" -P "$WIDEN_TEST_MYSQL_PORT" \
    -u "$WIDEN_TEST_MYSQL_USER" -e "SET GLOBAL innodb_buffer_pool_size = 1073741824;
      DROP DATABASE IF EXISTS $BENCH_DB;
      CREATE DATABASE $BENCH_DB CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
  my_client <"$BENCH_DIR/schema.mysql.sql"
  my_client <"$BENCH_DIR/dict.sql"
  "$BENCH_DIR/gen.sh" mysql "$S" | my_client
  my_client <"$BENCH_DIR/keys.mysql.sql" >/dev/null
  elapsed_since "$t0"
}
