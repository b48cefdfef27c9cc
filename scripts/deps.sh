#!/usr/bin/env bash
# deps.sh — install the Debian 12 packages needed to build and test widen.
#
# Idempotent: only packages that `dpkg -s` reports as not installed are
# installed, and `apt-get update` runs (once) only if something is missing.
# Then the jars of the test HBase (scripts/hbase/pom.xml: HBase and its
# Thrift2 gateway, whose hbase-thrift jar also holds the IDL the build
# generates the C++ client from) are resolved by Maven into ~/.m2 — the
# first time about 115 MB, about 80 s; afterwards nothing is fetched.
# WIDEN_SKIP_HBASE_JARS=1 skips that step.
# While installing, a temporary /usr/sbin/policy-rc.d keeps the packages'
# services (postgresql, mariadb) from being auto-started; tests start their
# own throwaway servers via scripts/with-servers.sh.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libpqxx-dev libmysqlcppconn-dev libyaml-cpp-dev
  libleveldb-dev libsnappy-dev libcli11-dev libxxhash-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev libfmt-dev libspdlog-dev
  postgresql-15 postgresql-client-15 mariadb-server mariadb-client
  libre2-dev time graphviz python3-jsonschema python3-yaml python3-prometheus-client chromium
  prometheus-node-exporter
  openjdk-17-jdk-headless maven libthrift-dev thrift-compiler
  # The Debian package and its test: CPack's dpkg-shlibdeps (dpkg-dev, file),
  # man pages rendered by man(1), zsh -n on the zsh completion, the units
  # checked by systemd-analyze.
  dpkg-dev file man-db zsh systemd
)

log() { echo "deps: $*"; }

# Collect packages that are not (fully) installed.
missing=()
for pkg in "${PACKAGES[@]}"; do
  # `dpkg -s` succeeds for packages known to dpkg; also require the
  # "install ok installed" status so half-removed packages count as missing.
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$pkg")
  fi
done

# The HBase jars, once the packages (Java, Maven) are there.
resolve_hbase_jars() {
  [[ ${WIDEN_SKIP_HBASE_JARS:-0} == 1 ]] && return 0
  "$(dirname "${BASH_SOURCE[0]}")/hbase/server.sh" classpath >/dev/null
}

if [[ ${#missing[@]} -eq 0 ]]; then
  log "all ${#PACKAGES[@]} packages already installed"
  resolve_hbase_jars
  exit 0
fi

log "missing: ${missing[*]}"

if [[ $(id -u) -ne 0 ]]; then
  echo "deps: ERROR: must be root to install missing packages (${missing[*]}); re-run as root or install them manually" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive

# Keep services from auto-starting during installation, but only if no
# policy-rc.d exists already (e.g. container images ship one); remove ours
# afterwards, whatever happens.
POLICY=/usr/sbin/policy-rc.d
created_policy=0
cleanup() {
  if [[ $created_policy -eq 1 ]]; then
    rm -f "$POLICY"
    log "removed temporary $POLICY"
  fi
}
trap cleanup EXIT
if [[ ! -e $POLICY ]]; then
  printf '#!/bin/sh\n# temporary, created by widen scripts/deps.sh\nexit 101\n' >"$POLICY"
  chmod 755 "$POLICY"
  created_policy=1
  log "created temporary $POLICY (services will not auto-start)"
fi

log "apt-get update"
apt-get update -qq

log "apt-get install ${missing[*]}"
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

resolve_hbase_jars
log "done"
