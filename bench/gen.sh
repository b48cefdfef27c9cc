#!/usr/bin/env bash
# gen.sh — print the SQL that fills the bench shop at scale S.
#
# Usage: bench/gen.sh [--payments] pg|mysql S [CHUNK]
#
# Expands bench/gen.sql.in for one engine: customers S/10, products 10,000,
# orders S (inserted in chunks of CHUNK order ids, default 250,000) with about
# 5·S order lines, S text-keyed vouchers and S voucher uses. Run it after schema.<engine>.sql and dict.sql, and before
# keys.<engine>.sql (bench/run.sh does all of that). Both engines get the
# same rows: every value is computed by the same expressions. --payments
# also fills the typed table `payment` (one row per order: timestamptz /
# TIMESTAMP(6) instants in UTC, exact decimals, long text; bench/designs.sh).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
payments=0
if [[ ${1:-} == --payments ]]; then
  payments=1
  shift
fi
engine=${1:?usage: gen.sh pg|mysql S [CHUNK]}
S=${2:?usage: gen.sh pg|mysql S [CHUNK]}
chunk=${3:-250000}
[[ $S =~ ^[0-9]+$ && $S -ge 10 ]] || { echo "gen.sh: S must be an integer >= 10" >&2; exit 2; }
C=$((S / 10))
K=$((157766400 / S))   # seconds between orders: five years over S orders
((K >= 1)) || K=1

case $engine in
  pg)
    series='generate_series(\1, \2) AS s(seq)'
    ts="(TIMESTAMP '2015-01-01 00:00:00' + INTERVAL '1 second' * (\\1))"
    tsu="(TIMESTAMP '2015-01-01 00:00:00' + INTERVAL '1 microsecond' * (\\1))"
    utc="SET TIME ZONE 'UTC';"
    ;;
  mysql)
    series='seq_\1_to_\2 AS s'
    ts="TIMESTAMPADD(SECOND, (\\1), TIMESTAMP'2015-01-01 00:00:00')"
    tsu="TIMESTAMPADD(MICROSECOND, (\\1), TIMESTAMP'2015-01-01 00:00:00')"
    utc="SET time_zone = '+00:00';"
    ;;
  *) echo "gen.sh: engine must be pg or mysql" >&2; exit 2 ;;
esac

# section NAME: the lines of the template between "-- @NAME" and the next
# "-- @" line, with the placeholders filled and the macros expanded.
section() {
  awk -v want="-- @$1" '/^-- @/ { on = ($0 == want); next } on' "$here/gen.sql.in" |
    sed -e "s/{{S}}/$S/g; s/{{C}}/$C/g; s/{{K}}/$K/g; s/{{A}}/$2/g; s/{{B}}/$3/g" |
    sed -E -e 's/H\{([^{}]*)\}/(((\1) * 2654435761) % 4294967296 >> 8)/g' \
      -e 's/H\{([^{}]*)\}/(((\1) * 2654435761) % 4294967296 >> 8)/g' \
      -e "s/TSU\{([^{}]*)\}/$tsu/g" \
      -e "s/TS\{([^{}]*)\}/$ts/g" \
      -e "s/SERIES\{([0-9]+),([0-9]+)\}/$series/g"
}

if [[ $engine == mysql ]]; then
  echo "SET NAMES utf8mb4; SET foreign_key_checks = 0; SET unique_checks = 0;"
fi
section products 0 0
section customers 0 0
for ((a = 1; a <= S; a += chunk)); do
  b=$((a + chunk - 1))
  ((b > S)) && b=$S
  section orders "$a" "$b"
done
section vouchers 0 0
if ((payments)); then
  # Instants are written as UTC wall-clock times.
  echo "$utc"
  for ((a = 1; a <= S; a += chunk)); do
    b=$((a + chunk - 1))
    ((b > S)) && b=$S
    section payments "$a" "$b"
  done
fi
