#!/usr/bin/env bash
# server.sh — a throwaway standalone HBase and its Thrift2 gateway, for tests.
#
# Usage:
#   scripts/hbase/server.sh classpath          resolve the jars (Maven, cached in
#                                              ~/.m2) and print the classpath file
#   scripts/hbase/server.sh start DIR PORT     start HBase with data, config and
#                                              logs under DIR and the Thrift2
#                                              gateway on 127.0.0.1:PORT; return
#                                              once it answers
#   scripts/hbase/server.sh stop DIR           stop what `start DIR` started
#   scripts/hbase/server.sh ping PORT [SECS]   exit 0 when the gateway on PORT
#                                              answers listNamespaces()
#   scripts/hbase/server.sh restart-gateway DIR PORT
#                                              stop the Thrift2 gateway that
#                                              `start DIR PORT` started (SIGKILL)
#                                              and start it again; return once
#                                              it answers (a break trial: the
#                                              gateway restarted mid-run)
#
# One JVM runs the master, a region server and ZooKeeper (HBase's standalone
# mode, on the local file system); a second JVM runs the Thrift2 gateway with
# its defaults: binary protocol, unframed (buffered) transport. Every port is
# on 127.0.0.1; ZooKeeper's is chosen free, the master's and region server's
# are ephemeral, and the web UIs are off.
#
# Environment:
#   JAVA                          the java binary (default: java on PATH; JDK 17)
#   WIDEN_HBASE_START_TIMEOUT     seconds to wait for the first answer (default 240)
#   WIDEN_HBASE_IDLE_TIMEOUT_MS   the gateway drops connections idle this long
#                                 (hbase.thrift.server.socket.read.timeout;
#                                 default HBase's 60000)
#   WIDEN_HBASE_JIT               quick (default: the C1 compiler only and the
#                                 serial collector, which start fastest) or
#                                 full (the JVM's own defaults: C2 and G1, for
#                                 throughput; bench/hbase.sh)
#   WIDEN_HBASE_HEAP              heap of the HBase JVM (default 768m)
#   WIDEN_HBASE_THRIFT_HEAP       heap of the gateway JVM (default 256m)
#   WIDEN_HBASE_CACHE             where the resolved classpath is kept
#                                 (default ~/.cache/widen)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
POM=$HERE/pom.xml
JAVA=${JAVA:-java}

log() { echo "hbase: $*" >&2 2>/dev/null || true; }
die() { log "ERROR: $*"; exit 1; }

# ------------------------------------------------------------ classpath
# The resolved classpath is cached per POM content, and re-resolved when a
# jar it names has gone from ~/.m2.
classpath_file() {
  local sum
  sum=$(sha256sum "$POM" | cut -c1-16)
  echo "${WIDEN_HBASE_CACHE:-$HOME/.cache/widen}/hbase-classpath-$sum.txt"
}

classpath_ok() {
  local file=$1 jar
  [[ -s $file ]] || return 1
  while IFS= read -r -d: jar || [[ -n $jar ]]; do
    [[ -f $jar ]] || return 1
  done <"$file"
}

resolve_classpath() {
  local file t0
  file=$(classpath_file)
  classpath_ok "$file" && { echo "$file"; return 0; }
  command -v mvn >/dev/null || die "mvn not found (install maven, see scripts/deps.sh)"
  mkdir -p "$(dirname "$file")"
  log "resolving the HBase jars with Maven (the first time about 115 MB into ~/.m2)"
  t0=$SECONDS
  if ! mvn -B -q -Dstyle.color=never -f "$POM" dependency:build-classpath \
    -Dmdep.includeScope=runtime -Dmdep.outputFile="$file.tmp" >&2; then
    rm -f "$file.tmp"
    die "Maven could not resolve $POM"
  fi
  tr -d '\n' <"$file.tmp" >"$file" && rm -f "$file.tmp"
  log "classpath resolved in $((SECONDS - t0)) s"
  echo "$file"
}

# ------------------------------------------------------------------ ping
# listNamespaces() in the Thrift binary protocol, unframed: version and
# message type CALL (80 01 00 01), the name, sequence id 1, an empty
# argument struct (00). A ready gateway replies (80 01 00 02) with field 0,
# a list of strings (0f 00 00 0b), and its first 4 + 14 + 4 + 4 bytes after
# the header are fixed; an exception reply carries field 1 instead.
ping() {
  local port=$1 secs=${2:-3} reply
  reply=$(
    exec 2>/dev/null
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf '\x80\x01\x00\x01\x00\x00\x00\x0elistNamespaces\x00\x00\x00\x01\x00' >&3
    timeout "$secs" head -c 30 <&3 | od -An -v -tx1 | tr -d ' \n'
  ) || return 1
  # 80010002 0000000e "listNamespaces" 00000001 0f 0000 0b 000000NN
  [[ $reply == 800100020000000e6c6973744e616d6573706163657300000001"0f00000b"* ]]
}

# ------------------------------------------------------------- start/stop
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null && return 0
  local port i
  for ((i = 0; i < 200; i++)); do
    port=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
  done
  return 1
}

write_config() {
  local dir=$1 zk_port=$2 name value
  mkdir -p "$dir/conf" "$dir/logs" "$dir/root" "$dir/zk" "$dir/tmp"
  local -a settings=(
    # standalone on the local file system, which has no hflush/hsync
    hbase.cluster.distributed false
    hbase.rootdir "file://$dir/root"
    hbase.tmp.dir "$dir/tmp"
    hbase.unsafe.stream.capability.enforce false
    hbase.wal.provider filesystem
    # everything on loopback; master and region server on ephemeral ports
    hbase.zookeeper.quorum 127.0.0.1
    hbase.zookeeper.property.clientPort "$zk_port"
    hbase.zookeeper.property.clientPortAddress 127.0.0.1
    hbase.zookeeper.property.dataDir "$dir/zk"
    hbase.localcluster.assign.random.ports true
    hbase.master.ipc.address 127.0.0.1
    hbase.regionserver.ipc.address 127.0.0.1
    hbase.master.hostname localhost
    hbase.unsafe.regionserver.hostname localhost
    hbase.master.info.port -1
    hbase.regionserver.info.port -1
    hbase.thrift.info.port -1
    # one region server, reporting often: a faster start
    hbase.master.wait.on.regionservers.mintostart 1
    hbase.master.wait.on.regionservers.maxtostart 1
    hbase.regionserver.msginterval 1000
    hbase.regionserver.handler.count 10
    hbase.master.handler.count 10
    # ZooKeeper runs in the same JVM and may be gone before the region
    # server cleans up at shutdown: give up quickly
    zookeeper.recovery.retry 1
    zookeeper.recovery.retry.intervalmill 200
    hbase.thrift.server.socket.read.timeout "${WIDEN_HBASE_IDLE_TIMEOUT_MS:-60000}"
    # compression without native libraries (hbase-compression-aircompressor);
    # BZIP2 has no such codec and stays unavailable
    hbase.io.compress.snappy.codec org.apache.hadoop.hbase.io.compress.aircompressor.SnappyCodec
    hbase.io.compress.lz4.codec org.apache.hadoop.hbase.io.compress.aircompressor.Lz4Codec
    hbase.io.compress.zstd.codec org.apache.hadoop.hbase.io.compress.aircompressor.ZstdCodec
    hbase.io.compress.lzo.codec org.apache.hadoop.hbase.io.compress.aircompressor.LzoCodec
  )
  {
    echo '<?xml version="1.0"?>'
    echo '<configuration>'
    set -- "${settings[@]}"
    while (($# > 0)); do
      name=$1 value=$2
      shift 2
      echo "  <property><name>$name</name><value>$value</value></property>"
    done
    echo '</configuration>'
  } >"$dir/conf/hbase-site.xml"
  cp "$HERE/log4j2.properties" "$dir/conf/log4j2.properties"
}

# JDK 17 needs HBase's module openings; the serial collector and the C1
# compiler only start fastest on two cores (WIDEN_HBASE_JIT=full: the JVM's
# defaults, for throughput).
jvm_options() {
  local heap=$1 jit="-XX:+UseSerialGC -XX:TieredStopAtLevel=1"
  case ${WIDEN_HBASE_JIT:-quick} in
    quick) ;;
    full) jit="" ;;
    *) die "WIDEN_HBASE_JIT: quick or full, not '$WIDEN_HBASE_JIT'" ;;
  esac
  echo "-Xms$heap -Xmx$heap -Xss512k $jit
    -Djava.net.preferIPv4Stack=true -Dzookeeper.admin.enableServer=false
    -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported
    --add-opens java.base/java.io=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED
    --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED
    --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED
    --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED
    --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED"
}

# True when pid $1 is a JVM started with DIR $2's config.
ours() {
  [[ $1 =~ ^[0-9]+$ && -r /proc/$1/cmdline ]] &&
    tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "-cp $2/conf:"
}

launch() {
  local dir=$1 name=$2 heap=$3 cp
  shift 3
  cp=$(<"$CLASSPATH_FILE")
  # shellcheck disable=SC2046  # the options are words
  "$JAVA" $(jvm_options "$heap") -Dhbase.log.dir="$dir/logs" \
    -Dhbase.log.file="$name.log" -cp "$dir/conf:$cp" "$@" \
    </dev/null >"$dir/logs/$name.out" 2>&1 &
  echo $! >"$dir/$name.pid"
}

stop_one() {
  local dir=$1 name=$2 pid i
  [[ -f $dir/$name.pid ]] || return 0
  pid=$(<"$dir/$name.pid")
  if ours "$pid" "$dir"; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do ours "$pid" "$dir" || break; sleep 0.1; done
    if ours "$pid" "$dir"; then
      log "$name (pid $pid) still running after 10 s, killing it"
      kill -KILL "$pid" 2>/dev/null || true
      for ((i = 0; i < 50; i++)); do ours "$pid" "$dir" || break; sleep 0.1; done
    fi
  fi
  rm -f "$dir/$name.pid"
}

stop() {
  local dir=$1
  stop_one "$dir" thrift2
  stop_one "$dir" hbase
}

start() {
  local dir=$1 port=$2 zk_port name t0=$SECONDS
  [[ $port =~ ^[0-9]+$ ]] || die "PORT must be a number, not '$port'"
  mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
  [[ -f $dir/hbase.pid ]] && ours "$(<"$dir/hbase.pid")" "$dir" && die "HBase already runs in $dir"
  command -v "$JAVA" >/dev/null || die "$JAVA not found (install openjdk-17-jdk-headless, see scripts/deps.sh)"
  # Another server on the port would answer the readiness probe for us.
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "127.0.0.1:$port is already in use"
  fi
  CLASSPATH_FILE=$(resolve_classpath)
  zk_port=$(free_port) || die "no free port for ZooKeeper"
  write_config "$dir" "$zk_port"
  launch "$dir" hbase "${WIDEN_HBASE_HEAP:-768m}" org.apache.hadoop.hbase.master.HMaster start
  launch "$dir" thrift2 "${WIDEN_HBASE_THRIFT_HEAP:-256m}" \
    org.apache.hadoop.hbase.thrift2.ThriftServer -b 127.0.0.1 -p "$port" start
  # A short probe timeout: while the master initialises, the gateway holds a
  # call in its client's retry back-off (~11 s); a new probe sees sooner.
  # (kill -0, not `ours`: until it has exec'd java, the child is a shell)
  until ping "$port" 3 && kill -0 "$(<"$dir/thrift2.pid")" 2>/dev/null; do
    for name in hbase thrift2; do
      if ! kill -0 "$(<"$dir/$name.pid")" 2>/dev/null; then
        tail -n 30 "$dir/logs/$name.out" >&2 || true
        stop "$dir"
        die "the $name JVM exited during start-up (logs in $dir/logs)"
      fi
    done
    if ((SECONDS - t0 > ${WIDEN_HBASE_START_TIMEOUT:-240})); then
      stop "$dir"
      die "no answer on 127.0.0.1:$port within ${WIDEN_HBASE_START_TIMEOUT:-240} s (logs in $dir/logs)"
    fi
    sleep 0.5
  done
  log "HBase ready in $((SECONDS - t0)) s: Thrift2 on 127.0.0.1:$port, ZooKeeper on 127.0.0.1:$zk_port"
}

restart_gateway() {
  local dir=$1 port=$2 pid t0=$SECONDS
  dir=$(cd "$dir" && pwd)
  [[ -f $dir/thrift2.pid ]] || die "no gateway was started in $dir"
  pid=$(<"$dir/thrift2.pid")
  if ours "$pid" "$dir"; then
    kill -KILL "$pid" 2>/dev/null || true
    while ours "$pid" "$dir"; do sleep 0.1; done
  fi
  CLASSPATH_FILE=$(resolve_classpath)
  launch "$dir" thrift2 "${WIDEN_HBASE_THRIFT_HEAP:-256m}" \
    org.apache.hadoop.hbase.thrift2.ThriftServer -b 127.0.0.1 -p "$port" start
  until ping "$port" 3; do
    kill -0 "$(<"$dir/thrift2.pid")" 2>/dev/null || die "the gateway exited during start-up"
    ((SECONDS - t0 > ${WIDEN_HBASE_START_TIMEOUT:-240})) && die "the gateway did not answer"
    sleep 0.2
  done
  log "gateway restarted in $((SECONDS - t0)) s on 127.0.0.1:$port"
}

case ${1:-} in
  classpath) (($# == 1)) || die "usage: $0 classpath"; resolve_classpath ;;
  start) (($# == 3)) || die "usage: $0 start DIR PORT"; start "$2" "$3" ;;
  stop) (($# == 2)) || die "usage: $0 stop DIR"; stop "$2" ;;
  ping) (($# >= 2)) || die "usage: $0 ping PORT [SECS]"; ping "$2" "${3:-3}" ;;
  restart-gateway) (($# == 3)) || die "usage: $0 restart-gateway DIR PORT"; restart_gateway "$2" "$3" ;;
  *) die "usage: $0 classpath | start DIR PORT | stop DIR | ping PORT [SECS] | restart-gateway DIR PORT" ;;
esac
