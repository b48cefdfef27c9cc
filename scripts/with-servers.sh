#!/usr/bin/env bash
# with-servers.sh — run a command against throwaway database servers.
#
# Usage: scripts/with-servers.sh [--pg] [--mysql] [--hbase] -- COMMAND [ARGS...]
#
# Starts a private PostgreSQL 15 (--pg) and/or MariaDB (--mysql) server that
# listens only on 127.0.0.1 on a free port chosen at run time, with all data,
# sockets and logs under one `mktemp -d` directory, and/or (--hbase) a
# standalone HBase with its Thrift2 gateway the same way
# (scripts/hbase/server.sh; its jars come from ~/.m2, resolved by Maven the
# first time). Then runs COMMAND with these variables exported:
#
#   WIDEN_TEST_PG_URL=postgresql://widen@127.0.0.1:PORT/postgres
#   WIDEN_TEST_PG_HOST, WIDEN_TEST_PG_PORT, WIDEN_TEST_PG_USER=widen
#   WIDEN_TEST_MYSQL_URL=mysql://widen@127.0.0.1:PORT/mysql
#   WIDEN_TEST_MYSQL_HOST, WIDEN_TEST_MYSQL_PORT, WIDEN_TEST_MYSQL_USER=widen,
#   WIDEN_TEST_MYSQL_SOCKET
#   WIDEN_TEST_HBASE_URL=hbase://127.0.0.1:PORT (the Thrift2 gateway)
#   WIDEN_TEST_HBASE_IDLE_TIMEOUT_MS  the gateway closes connections idle
#                                     this long
#   WIDEN_TEST_HBASE_DIR  the HBase's folder (scripts/hbase/server.sh start
#                         DIR): its conf/ (hbase-site.xml, for a Java client
#                         of the same HBase) and logs/
#
# Both servers have a superuser-like `widen` user without password.
# The servers are stopped (and the temp dir removed) when COMMAND ends, when
# this script fails, and on SIGINT/SIGTERM. The exit code is COMMAND's.
#
# If a server fails to start, its log tail is printed. With CI=true or
# WIDEN_REQUIRE_SERVERS=1 the script then exits non-zero without running
# COMMAND; otherwise it warns and runs COMMAND without that server's
# variables (tests are expected to skip those cases).
#
# Environment knobs:
#   WIDEN_KEEP_SERVERS=1    keep the temp dir (data + logs) after the run
#   WIDEN_REQUIRE_SERVERS=1 fail if a requested server cannot be started
#   WIDEN_PG_BINDIR=DIR     directory with initdb/pg_ctl (default: PG 15)
#   WIDEN_HBASE_IDLE_TIMEOUT_MS  the gateway's idle timeout (default 60000)
#   and the other knobs of scripts/hbase/server.sh
#
# Runs as root (PostgreSQL then runs as the `postgres` system user, since
# initdb refuses root; MariaDB runs with --user=root) or as a normal user.
set -euo pipefail

# Progress/diagnostics go to stderr; never fail if stderr has gone away.
log() { echo "with-servers: $*" >&2 2>/dev/null || true; }

usage() {
  cat <<'USAGE'
Usage: scripts/with-servers.sh [--pg] [--mysql] [--hbase] -- COMMAND [ARGS...]
  --pg      start a throwaway PostgreSQL 15 server
  --mysql   start a throwaway MariaDB server
  --hbase   start a throwaway standalone HBase and its Thrift2 gateway
See the header of this script for exported variables and knobs.
USAGE
}

# ---------------------------------------------------------------- arguments
want_pg=0
want_mysql=0
want_hbase=0
while (($# > 0)); do
  case $1 in
    --pg) want_pg=1 ;;
    --mysql) want_mysql=1 ;;
    --hbase) want_hbase=1 ;;
    --) shift; break ;;
    -h | --help) usage; exit 0 ;;
    *) log "unknown argument: $1"; usage >&2; exit 2 ;;
  esac
  shift
done
if (($# == 0)); then
  log "no command given"
  usage >&2
  exit 2
fi

strict=0
if [[ ${CI:-} == true || ${WIDEN_REQUIRE_SERVERS:-0} == 1 ]]; then
  strict=1
fi

is_root=0
[[ $(id -u) -eq 0 ]] && is_root=1

# ------------------------------------------------------------ state/cleanup
WORK=""        # the temp dir holding everything
PG_DATA=""     # PostgreSQL data dir, set once initdb is attempted
PG_BINDIR=""
MYSQL_PID=""   # mariadbd pid, set once it was launched
HBASE_DIR=""   # HBase's directory, set once it was launched
HBASE_STARTER=""  # pid of the background `server.sh start`
CMD_PID=""     # pid of COMMAND while it runs

# Run a command as the PostgreSQL server user: `postgres` when we are root
# (initdb/postgres refuse to run as root), ourselves otherwise. The working
# directory is the temp dir so that the postgres user can access it.
as_pg_user() {
  if ((is_root)); then
    (cd "$WORK" && runuser -u postgres -- "$@")
  else
    (cd "$WORK" && "$@")
  fi
}

# Wait up to $2 seconds for pid $1 (or process group -PGID) to disappear;
# return 1 if still alive.
wait_gone() {
  local pid=$1 secs=$2 i
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 -- "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  ! kill -0 -- "$pid" 2>/dev/null
}

stop_pg() {
  [[ -n $PG_DATA && -f $PG_DATA/postmaster.pid ]] || return 0
  log "stopping PostgreSQL"
  if ! as_pg_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -m fast -w -t 30 stop >/dev/null 2>&1; then
    as_pg_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -m immediate -w -t 10 stop >/dev/null 2>&1 || true
  fi
  # Last resort: kill the postmaster by the pid in its pid file.
  if [[ -f $PG_DATA/postmaster.pid ]]; then
    local pid
    pid=$(head -n 1 "$PG_DATA/postmaster.pid" 2>/dev/null || true)
    if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; then
      log "PostgreSQL did not stop, killing pid $pid"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 5 || true
    fi
  fi
}

stop_mysql() {
  [[ -n $MYSQL_PID ]] || return 0
  if kill -0 "$MYSQL_PID" 2>/dev/null; then
    log "stopping MariaDB"
    kill -TERM "$MYSQL_PID" 2>/dev/null || true   # TERM = clean shutdown
    if ! wait_gone "$MYSQL_PID" 30; then
      log "MariaDB did not stop, killing pid $MYSQL_PID"
      kill -KILL "$MYSQL_PID" 2>/dev/null || true
    fi
  fi
  wait "$MYSQL_PID" 2>/dev/null || true   # reap our child
  MYSQL_PID=""
}

# EXIT trap: stop servers and remove the temp dir, keeping the exit status.
# shellcheck disable=SC2317  # invoked via trap
cleanup() {
  local rc=$?
  set +e
  trap '' INT TERM HUP   # don't let a second Ctrl-C interrupt the cleanup
  # Leftovers of COMMAND (background processes it started, still in its
  # process group) go too.
  if [[ -n $CMD_PID ]] && kill -0 -- "-$CMD_PID" 2>/dev/null; then
    log "stopping processes left over by the command"
    kill -TERM -- "-$CMD_PID" 2>/dev/null
    wait_gone "-$CMD_PID" 5 || kill -KILL -- "-$CMD_PID" 2>/dev/null
  fi
  stop_pg
  stop_mysql
  stop_hbase
  if [[ -n $WORK && -d $WORK ]]; then
    if [[ ${WIDEN_KEEP_SERVERS:-0} == 1 ]]; then
      log "keeping $WORK (WIDEN_KEEP_SERVERS=1)"
    else
      rm -rf "$WORK"
    fi
  fi
  exit "$rc"
}

# Send signal $1 to the running COMMAND's whole process group (it runs in a
# session of its own, see below), falling back to just its pid.
# shellcheck disable=SC2317  # only called from trap handlers
signal_cmd() {
  [[ -n $CMD_PID ]] || return 0
  kill "-$1" -- "-$CMD_PID" 2>/dev/null || kill "-$1" -- "$CMD_PID" 2>/dev/null || true
}

# INT/TERM trap: pass the signal on to COMMAND (if running), wait briefly for
# it, then exit with the conventional 128+N status (cleanup runs via EXIT).
# shellcheck disable=SC2317  # invoked via trap
on_signal() {
  local sig=$1 code=$2
  trap '' INT TERM HUP
  log "caught SIG$sig, shutting down"
  if [[ -n $CMD_PID ]] && kill -0 "$CMD_PID" 2>/dev/null; then
    signal_cmd "$sig"
    if ! wait_gone "$CMD_PID" 10; then
      log "command did not exit, killing it"
      signal_cmd KILL
    fi
  fi
  exit "$code"
}

trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP
# A closed stdout/stderr (e.g. `... 2>&1 | head`) must not kill this script
# before it has stopped the servers: ignore SIGPIPE here (COMMAND gets the
# default handling back, see below).
trap '' PIPE

# ---------------------------------------------------------------- helpers
# Print a free TCP port on 127.0.0.1 (the kernel's choice via python3 when
# available, else a random port checked with ss or a connect attempt).
pick_port() {
  if command -v python3 >/dev/null 2>&1 &&
    python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()' 2>/dev/null; then
    return 0
  fi
  local port i
  for ((i = 0; i < 200; i++)); do
    port=$((20000 + RANDOM % 12000)) # below the Linux ephemeral range
    if command -v ss >/dev/null 2>&1; then
      [[ -z $(ss -Htan "( sport = :$port )" 2>/dev/null) ]] && { echo "$port"; return 0; }
    elif ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

# Print the last lines of a log file, indented, to stderr.
show_log() {
  local file=$1
  if [[ -s $file ]]; then
    log "---- last lines of $file ----"
    tail -n 30 "$file" | sed 's/^/with-servers:   | /' >&2 2>/dev/null || true
    log "----"
  fi
}

# Report a server start failure: exits in strict mode, else warns.
server_failed() {
  local name=$1 reason=$2
  log "ERROR: $name failed to start: $reason"
  if ((strict)); then
    log "CI=true or WIDEN_REQUIRE_SERVERS=1: not running the command"
    exit 1
  fi
  log "WARNING: running the command without $name (its tests will be skipped)"
}

# ------------------------------------------------------------- PostgreSQL
find_pg_bindir() {
  local d
  for d in "${WIDEN_PG_BINDIR:-}" /usr/lib/postgresql/15/bin \
    "$(pg_config --bindir 2>/dev/null || true)"; do
    [[ -n $d && -x $d/initdb && -x $d/pg_ctl ]] && { echo "$d"; return 0; }
  done
  # Any other installed Debian PostgreSQL version, newest first.
  while IFS= read -r d; do
    [[ -x $d/initdb && -x $d/pg_ctl ]] && { echo "$d"; return 0; }
  done < <(printf '%s\n' /usr/lib/postgresql/*/bin | sort -Vr)
  return 1
}

# Start PostgreSQL; on success export the WIDEN_TEST_PG_* variables.
# Called in an `if`, so errexit is off here: every step checks explicitly.
start_pg() {
  local dir=$WORK/pg port attempt
  PG_ERROR=""
  if ! PG_BINDIR=$(find_pg_bindir); then
    PG_ERROR="initdb/pg_ctl not found (install postgresql-15, see scripts/deps.sh)"
    return 1
  fi
  if ((is_root)) && ! id postgres >/dev/null 2>&1; then
    PG_ERROR="running as root but there is no 'postgres' system user"
    return 1
  fi
  mkdir -p "$dir/sock" || { PG_ERROR="cannot create $dir"; return 1; }
  if ((is_root)); then
    chown -R postgres: "$dir" || { PG_ERROR="cannot chown $dir to postgres"; return 1; }
    if ! runuser -u postgres -- test -w "$dir"; then
      PG_ERROR="user postgres cannot write $dir (is ${TMPDIR:-/tmp} accessible to it?)"
      return 1
    fi
  fi

  PG_DATA=$dir/data
  log "initdb PostgreSQL ($PG_BINDIR)"
  if ! as_pg_user "$PG_BINDIR/initdb" -D "$PG_DATA" --username=widen \
    --auth=trust --encoding=UTF8 --no-locale --no-sync \
    >"$dir/initdb.log" 2>&1; then
    show_log "$dir/initdb.log"
    PG_ERROR="initdb failed"
    return 1
  fi

  # Settings common to all attempts: local only, socket in the temp dir,
  # durability off for speed (the data is thrown away anyway).
  cat >>"$PG_DATA/postgresql.conf" <<CONF

# ---- added by widen scripts/with-servers.sh ----
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir/sock'
fsync = off
synchronous_commit = off
full_page_writes = off
CONF

  # A port picked as free may be taken by someone else before the server
  # binds it (e.g. a parallel run): retry with a new port in that case.
  for attempt in 1 2 3; do
    if ! port=$(pick_port); then
      PG_ERROR="could not find a free port"
      return 1
    fi
    echo "port = $port" >>"$PG_DATA/postgresql.conf"   # the last one wins
    log "starting PostgreSQL on 127.0.0.1:$port"
    if as_pg_user "$PG_BINDIR/pg_ctl" -D "$PG_DATA" -l "$dir/server.log" \
      -w -t 60 start </dev/null >"$dir/pg_ctl.log" 2>&1; then
      export WIDEN_TEST_PG_URL="postgresql://widen@127.0.0.1:$port/postgres"
      export WIDEN_TEST_PG_HOST=127.0.0.1
      export WIDEN_TEST_PG_PORT=$port
      export WIDEN_TEST_PG_USER=widen
      log "PostgreSQL ready: $WIDEN_TEST_PG_URL"
      return 0
    fi
    if ((attempt < 3)) && grep -qi 'already in use' "$dir/server.log" 2>/dev/null; then
      log "port $port was taken, retrying"
      stop_pg
      continue
    fi
    break
  done
  stop_pg
  show_log "$dir/pg_ctl.log"
  show_log "$dir/server.log"
  PG_ERROR="pg_ctl start failed (see log above)"
  return 1
}

# ---------------------------------------------------------------- MariaDB
find_prog() {
  local name
  for name in "$@"; do
    if command -v "$name" 2>/dev/null; then return 0; fi
    [[ -x /usr/sbin/$name ]] && { echo "/usr/sbin/$name"; return 0; }
    [[ -x /usr/bin/$name ]] && { echo "/usr/bin/$name"; return 0; }
  done
  return 1
}

# Start MariaDB; on success export the WIDEN_TEST_MYSQL_* variables.
# Called in an `if`, so errexit is off here: every step checks explicitly.
start_mysql() {
  local dir=$WORK/mysql mysqld install_db admin client port attempt i
  local sock=$WORK/mysql/mysqld.sock
  local -a user_opt=()
  MYSQL_ERROR=""
  if ! mysqld=$(find_prog mariadbd mysqld) ||
    ! install_db=$(find_prog mariadb-install-db mysql_install_db) ||
    ! admin=$(find_prog mariadb-admin mysqladmin) ||
    ! client=$(find_prog mariadb mysql); then
    MYSQL_ERROR="mariadbd/mariadb-install-db/mariadb-admin/mariadb not found (install mariadb-server, see scripts/deps.sh)"
    return 1
  fi
  ((is_root)) && user_opt=(--user=root)
  mkdir -p "$dir/data" "$dir/tmp" || { MYSQL_ERROR="cannot create $dir"; return 1; }

  log "initializing MariaDB data dir"
  if ! "$install_db" --no-defaults "${user_opt[@]}" --datadir="$dir/data" \
    --auth-root-authentication-method=normal --skip-test-db \
    --skip-name-resolve >"$dir/install.log" 2>&1 </dev/null; then
    show_log "$dir/install.log"
    MYSQL_ERROR="mariadb-install-db failed"
    return 1
  fi

  for attempt in 1 2 3; do
    if ! port=$(pick_port); then
      MYSQL_ERROR="could not find a free port"
      return 1
    fi
    log "starting MariaDB on 127.0.0.1:$port"
    # Local only; durability off for speed (the data is thrown away).
    "$mysqld" --no-defaults "${user_opt[@]}" \
      --datadir="$dir/data" --tmpdir="$dir/tmp" \
      --port="$port" --bind-address=127.0.0.1 --skip-networking=0 \
      --socket="$sock" --pid-file="$dir/mysqld.pid" \
      --log-error="$dir/server.log" --skip-name-resolve \
      --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 \
      --innodb-buffer-pool-size=64M \
      </dev/null >>"$dir/server.log" 2>&1 &
    MYSQL_PID=$!

    # Wait (up to 60 s) until the server answers, or died.
    for ((i = 0; i < 600; i++)); do
      if ! kill -0 "$MYSQL_PID" 2>/dev/null; then
        break
      fi
      if "$admin" --no-defaults --socket="$sock" -u root \
        --connect-timeout=2 ping >/dev/null 2>&1; then
        break
      fi
      sleep 0.1
    done

    if kill -0 "$MYSQL_PID" 2>/dev/null &&
      "$admin" --no-defaults --socket="$sock" -u root ping >/dev/null 2>&1; then
      # Passwordless `widen` user with all privileges (tests create DBs).
      if ! "$client" --no-defaults --socket="$sock" -u root >"$dir/setup.log" 2>&1 <<'SQL'
CREATE USER IF NOT EXISTS 'widen'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'widen'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'widen'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'widen'@'localhost' WITH GRANT OPTION;
FLUSH PRIVILEGES;
SQL
      then
        show_log "$dir/setup.log"
        stop_mysql
        MYSQL_ERROR="creating the widen user failed"
        return 1
      fi
      export WIDEN_TEST_MYSQL_URL="mysql://widen@127.0.0.1:$port/mysql"
      export WIDEN_TEST_MYSQL_HOST=127.0.0.1
      export WIDEN_TEST_MYSQL_PORT=$port
      export WIDEN_TEST_MYSQL_USER=widen
      export WIDEN_TEST_MYSQL_SOCKET=$sock
      log "MariaDB ready: $WIDEN_TEST_MYSQL_URL"
      return 0
    fi

    stop_mysql
    if ((attempt < 3)) && grep -qi 'already in use' "$dir/server.log" 2>/dev/null; then
      log "port $port was taken, retrying"
      continue
    fi
    if ((i >= 600)); then
      MYSQL_ERROR="no answer to mariadb-admin ping within 60 s"
    else
      MYSQL_ERROR="mariadbd exited during startup"
    fi
    break
  done
  show_log "$dir/server.log"
  [[ -n $MYSQL_ERROR ]] || MYSQL_ERROR="mariadbd did not start"
  return 1
}

# ------------------------------------------------------------------ HBase
HBASE_SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/hbase/server.sh

# Starts HBase in the background (it takes longest; the databases start
# meanwhile); finish_hbase waits for it.
launch_hbase() {
  local port
  HBASE_DIR=$WORK/hbase
  mkdir -p "$HBASE_DIR"
  if ! port=$(pick_port); then
    HBASE_PORT=""
    return 0
  fi
  HBASE_PORT=$port
  log "starting HBase (Thrift2 gateway on 127.0.0.1:$port)"
  "$HBASE_SCRIPT" start "$HBASE_DIR" "$port" >"$WORK/hbase-start.log" 2>&1 </dev/null &
  HBASE_STARTER=$!
}

# Waits for launch_hbase; on success exports the WIDEN_TEST_HBASE_* variables.
finish_hbase() {
  local rc=0
  HBASE_ERROR=""
  if [[ -z $HBASE_PORT ]]; then
    HBASE_ERROR="could not find a free port"
    return 1
  fi
  wait "$HBASE_STARTER" || rc=$?
  HBASE_STARTER=""
  if ((rc != 0)); then
    show_log "$WORK/hbase-start.log"
    HBASE_ERROR="scripts/hbase/server.sh start failed (see above; logs in $HBASE_DIR/logs)"
    return 1
  fi
  sed 's/^/with-servers:   /' "$WORK/hbase-start.log" >&2 2>/dev/null || true
  export WIDEN_TEST_HBASE_URL="hbase://127.0.0.1:$HBASE_PORT"
  export WIDEN_TEST_HBASE_IDLE_TIMEOUT_MS=${WIDEN_HBASE_IDLE_TIMEOUT_MS:-60000}
  export WIDEN_TEST_HBASE_DIR=$HBASE_DIR
  log "HBase ready: $WIDEN_TEST_HBASE_URL"
}

stop_hbase() {
  [[ -n $HBASE_DIR ]] || return 0
  if [[ -n $HBASE_STARTER ]]; then
    kill -TERM "$HBASE_STARTER" 2>/dev/null || true
    wait "$HBASE_STARTER" 2>/dev/null || true
  fi
  log "stopping HBase"
  "$HBASE_SCRIPT" stop "$HBASE_DIR" >/dev/null 2>&1 || true
  HBASE_DIR=""
}

# -------------------------------------------------------------------- main
WORK=$(mktemp -d "${TMPDIR:-/tmp}/widen-servers.XXXXXX")
chmod 755 "$WORK"   # the postgres user must be able to enter it
if ((is_root && want_pg)) && id postgres >/dev/null 2>&1 &&
  ! runuser -u postgres -- test -x "$WORK" 2>/dev/null; then
  # e.g. TMPDIR under /root: fall back to /tmp, which postgres can reach.
  log "user postgres cannot reach $WORK, using /tmp instead"
  rmdir "$WORK"
  WORK=$(mktemp -d /tmp/widen-servers.XXXXXX)
  chmod 755 "$WORK"
fi
log "temp dir $WORK"

if ((want_hbase)); then
  launch_hbase
fi
if ((want_pg)); then
  if ! start_pg; then
    unset WIDEN_TEST_PG_URL WIDEN_TEST_PG_HOST WIDEN_TEST_PG_PORT WIDEN_TEST_PG_USER
    server_failed PostgreSQL "$PG_ERROR"
  fi
fi
if ((want_mysql)); then
  if ! start_mysql; then
    unset WIDEN_TEST_MYSQL_URL WIDEN_TEST_MYSQL_HOST WIDEN_TEST_MYSQL_PORT \
      WIDEN_TEST_MYSQL_USER WIDEN_TEST_MYSQL_SOCKET
    server_failed MariaDB "$MYSQL_ERROR"
  fi
fi
if ((want_hbase)); then
  if ! finish_hbase; then
    unset WIDEN_TEST_HBASE_URL WIDEN_TEST_HBASE_IDLE_TIMEOUT_MS WIDEN_TEST_HBASE_DIR
    server_failed HBase "$HBASE_ERROR"
  fi
fi

# Run COMMAND in the background and wait for it, so that a signal sent to
# this script is handled at once (bash defers traps while a foreground child
# runs). The subshell restores default SIGINT/SIGQUIT handling (bash ignores
# them for background jobs) and SIGPIPE, and keeps our stdin; `setsid` puts COMMAND in a
# session/process group of its own (pgid = CMD_PID) so that on a signal we
# can stop it together with all its children.
log "running: $*"
(
  trap - INT QUIT PIPE
  exec setsid "$@"
) <&0 &
CMD_PID=$!
rc=0
wait "$CMD_PID" || rc=$?
log "command exited with status $rc"
exit "$rc"
