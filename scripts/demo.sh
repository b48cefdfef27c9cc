#!/usr/bin/env bash
# demo.sh — the main job on an example, from nothing: installs what is
# missing, builds widen, starts a throwaway PostgreSQL, loads
# examples/service_orders, runs `widen migrate` into the embedded store
# out/service_orders, prints the summary and a `widen scan` of a few rows,
# and stops the server. The store stays in out/ for you to explore with
# `build/cmd/widen scan ... --target leveldb:out/service_orders`.
#
# Usage: scripts/demo.sh [EXAMPLE]   (default: service_orders)
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
example=${1:-service_orders}
[[ -f $repo/examples/$example/mapping.yaml ]] || {
  echo "demo: no example '$example' (see $repo/examples)" >&2
  exit 2
}

"$repo/scripts/build.sh" "$repo/build"

run() {
  set -euo pipefail
  local widen=$repo/build/cmd/widen store=leveldb:$repo/out/$1
  local db="${WIDEN_TEST_PG_URL%/*}/widen_demo"
  psql -q -X "$WIDEN_TEST_PG_URL" -c 'DROP DATABASE IF EXISTS widen_demo' -c 'CREATE DATABASE widen_demo'
  psql -q -X -v ON_ERROR_STOP=1 "$db" -f "$repo/examples/$1/schema.pg.sql"
  psql -q -X -v ON_ERROR_STOP=1 "$db" -f "$repo/examples/$1/data.pg.sql"
  rm -rf "$repo/out/$1"
  echo "== widen migrate -m examples/$1/mapping.yaml --target $store"
  WIDEN_SOURCE_URL=$db "$widen" migrate -m "$repo/examples/$1/mapping.yaml" --target "$store"
  local tables
  tables=$(grep -E '^  - name: ' "$repo/examples/$1/mapping.yaml" | awk '{print $3}')
  for t in $tables; do
    echo
    echo "== widen scan $t --limit 2 --decode"
    "$widen" scan "$t" --limit 2 --decode -m "$repo/examples/$1/mapping.yaml" --target "$store"
  done
}
export -f run
export repo
WIDEN_REQUIRE_SERVERS=1 "$repo/scripts/with-servers.sh" --pg -- bash -c "run $example"
