#!/usr/bin/env bash
# demo.sh — the main job on an example, from nothing: installs what is
# missing, builds widen, starts a throwaway PostgreSQL, loads the example,
# runs `widen migrate` into the embedded store out/EXAMPLE, prints the summary
# and a `widen scan` of a few rows of each target table, and stops the server.
# The store stays in out/ for you to explore, e.g.
#   build/cmd/widen scan shop:orders --decode --target leveldb:out/service_orders
#
# Usage: scripts/demo.sh [EXAMPLE]   (default: service_orders)
#
# EXAMPLE is a folder of examples/. `chinook` loads the Chinook dataset from
# the shared datasets folder (WIDEN_DATASETS, default ../shared/datasets
# beside the repository) instead of schema/data files of its own.
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
  psql -q -X "$WIDEN_TEST_PG_URL" -c 'CREATE DATABASE widen_demo'
  if [[ $1 == chinook ]]; then
    local sql=${WIDEN_DATASETS:-$repo/../shared/datasets}/chinook/postgresql/Chinook_PostgreSql.sql
    [[ -f $sql ]] || { echo "demo: $sql not found (set WIDEN_DATASETS)" >&2; return 2; }
    # The script creates and switches to its own database; load it into ours.
    sed -e '/^DROP DATABASE/d' -e '/^CREATE DATABASE/d' -e '/^\\c /d' "$sql" |
      psql -q -X -v ON_ERROR_STOP=1 "$db" >/dev/null
  else
    psql -q -X -v ON_ERROR_STOP=1 "$db" -f "$repo/examples/$1/schema.pg.sql"
    psql -q -X -v ON_ERROR_STOP=1 "$db" -f "$repo/examples/$1/data.pg.sql"
  fi
  rm -rf "$repo/out/$1"
  echo "== widen migrate -m examples/$1/mapping.yaml --target $store"
  WIDEN_SOURCE_URL=$db "$widen" migrate -m "$repo/examples/$1/mapping.yaml" --target "$store"
  local tables
  tables=$(grep -E '^  - name: ' "$repo/examples/$1/mapping.yaml" | awk '{print $3}')
  for t in $tables; do
    echo
    echo "== widen scan $t --limit 2 --decode"
    "$widen" scan "$t" --limit 2 --decode --target "$store"
  done
}
export -f run
export repo
WIDEN_REQUIRE_SERVERS=1 "$repo/scripts/with-servers.sh" --pg -- bash -c "run $example"
