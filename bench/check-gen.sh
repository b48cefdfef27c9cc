#!/usr/bin/env bash
# check-gen.sh — check that the generator puts the same rows into PostgreSQL
# and MariaDB: loads scale S (default 20,000) into both throwaway servers and
# compares a canonical text dump of every table (md5 per table).
#
# Usage: bench/check-gen.sh [S]     (starts its own servers via
#                                    scripts/with-servers.sh --pg --mysql)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
S=${1:-20000}
if [[ -z ${WIDEN_TEST_PG_URL:-} || -z ${WIDEN_TEST_MYSQL_URL:-} ]]; then
  exec env WIDEN_REQUIRE_SERVERS=1 "$here/../scripts/with-servers.sh" --pg --mysql -- "$0" "$S"
fi
source "$here/lib.sh"
load_pg "$S" --payments >/dev/null
load_mysql "$S" --payments >/dev/null

# Canonical form: PostgreSQL's COPY text (NULL = \N, booleans t/f); MariaDB's
# batch output brought to it (NULL -> \N, 0/1 -> f/t in boolean columns).
declare -A cols=(
  [customer]="customer_id, name, email, phone, city, country, vip, created_at"
  [product]="product_id, sku, name, category, price"
  [orders]="order_id, customer_id, ordered_at, status, channel, total, shipped_at, gift, note"
  [order_line]="order_id, line_no, product_id, quantity, unit_price, discount, note"
  [voucher]="code, order_id, amount, issued_at"
  [voucher_use]="use_id, code, used_at, amount"
  [payment]="payment_id, order_id, created_at, authorized_at, settled_at, amount, fee, fx_rate, currency, method, reference, description, response"
)
# Voucher codes are ordered by their primary key's number, not their text
# (the two engines collate text differently).
declare -A keys=([customer]=customer_id [product]=product_id [orders]=order_id
  [order_line]="order_id, line_no" [voucher]="order_id, amount, issued_at, code"
  [voucher_use]=use_id [payment]=payment_id)
status=0
for t in customer product orders order_line voucher voucher_use payment; do
  vip="IF(vip, 't', 'f')" gift="IF(gift, 't', 'f')"
  my_cols=${cols[$t]//vip/$vip}
  my_cols=${my_cols//gift/$gift}
  pg_cols=${cols[$t]}
  if [[ $t == payment ]]; then
    # Instants as UTC wall-clock times with 6 fraction digits, as MariaDB
    # prints TIMESTAMP(6) in a +00:00 session.
    for c in created_at authorized_at settled_at; do
      utc="to_char($c AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US')"
      pg_cols=${pg_cols//$c/$utc}
    done
  fi
  a=$(pg_psql -c "COPY (SELECT $pg_cols FROM $t ORDER BY ${keys[$t]}) TO STDOUT" | md5sum)
  b=$(my_client --batch --skip-column-names -e "SET time_zone = '+00:00'; SELECT $my_cols FROM $t ORDER BY ${keys[$t]}" |
    awk -F'\t' -v OFS='\t' '{ for (i = 1; i <= NF; i++) if ($i == "NULL") $i = "\\N"; print }' | md5sum)
  n=$(pg_psql -Atc "SELECT count(*) FROM $t")
  if [[ $a == "$b" ]]; then
    echo "check-gen: $t: $n rows, identical (${a%% *})"
  else
    echo "check-gen: $t: $n rows, DIFFERENT (pg ${a%% *}, mariadb ${b%% *})"
    status=1
  fi
done
exit $status
