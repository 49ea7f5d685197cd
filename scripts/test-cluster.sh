#!/usr/bin/env bash
# `npm run test:cluster`: the cluster suite (test/cluster) on a 3-node Elasticsearch cluster on
# loopback, with two API and two worker processes per test file on one Redis.
#
#   npm run test:cluster                       # HTTP 9250, 9251, 9252; transport 9350-9352
#   CLUSTER_ES_PORT=9400 npm run test:cluster  # elsewhere
#   KEEP_CLUSTER=1 npm run test:cluster        # leave the cluster running afterwards
#
# Starts the cluster with scripts/services.sh (ES_NODES=3; Redis on REDIS_PORT too, when nothing
# answers there) and, unless it was already running or KEEP_CLUSTER=1, stops the nodes it started
# when done, whatever the outcome. Its data folders (.services/elasticsearch-cluster) stay; the
# tests delete their own indices and Redis keys. Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."

export ES_NODES=3
export ES_PORT="${CLUSTER_ES_PORT:-9250}"
export ES_TRANSPORT_PORT="${CLUSTER_ES_TRANSPORT_PORT:-$((ES_PORT + 100))}"
export ES_HEAP="${CLUSTER_ES_HEAP:-1g}"

urls=""
running=1
for ((i = 0; i < ES_NODES; i++)); do
  url="http://127.0.0.1:$((ES_PORT + i))"
  urls+="${urls:+,}$url"
  curl -fs -m 5 "$url/_cluster/health?timeout=1s" >/dev/null 2>&1 || running=0
done

stop_cluster() {
  local code=$?
  if [ "$running" -eq 0 ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then
    bash scripts/services.sh stop elasticsearch || true
  fi
  exit "$code"
}
trap stop_cluster EXIT

bash scripts/services.sh start
export ELASTICSEARCH_URL="$urls"
export REDIS_URL="redis://127.0.0.1:${REDIS_PORT:-6379}"
npx vitest run --config vitest.cluster.config.ts "$@"
