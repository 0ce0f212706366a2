#!/usr/bin/env bash
# load-shards: run N shards of one load on this machine the way the
# Kubernetes Indexed Job in deploy/kubernetes/load-job.yaml runs them on N
# machines, then merge their reports. Each shard gets the environment the Job
# gives a pod (JOB_COMPLETION_INDEX, OTELBENCH_SHARDS, OTELBENCH_START_AT) and
# writes its JSON report to its log (stdout and stderr, as kubectl logs shows
# them); the logs are then merged with `otelbench report merge -`.
#
#   scripts/load-shards.sh N [otelbench load flags...]
#   scripts/load-shards.sh 4 --endpoint http://127.0.0.1:4318 --rate 2000 --duration 10s
#
# --rate, --concurrency (closed model) and --requests are totals over all
# shards. Environment: OTELBENCH (binary; default: build ./cmd/otelbench),
# LOAD_SHARDS_DIR (where the logs and merged.json go; default a new temp
# dir), LOAD_SHARDS_START_IN (seconds to the common start; default 3).
# Exit status: 1 if a shard or the merge failed, 2 on usage errors.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/load-shards.sh N [otelbench load flags...]" >&2
  exit 2
fi
n=$1
shift

out=${LOAD_SHARDS_DIR:-$(mktemp -d)}
mkdir -p "$out"
bin=${OTELBENCH:-}
if [ -z "$bin" ]; then
  bin=$out/otelbench
  go build -o "$bin" ./cmd/otelbench
fi

# One start for every shard, as the otelbench-start ConfigMap gives the pods.
start=$(date -u -d "@$(( $(date +%s) + ${LOAD_SHARDS_START_IN:-3} ))" +%Y-%m-%dT%H:%M:%SZ)
echo "load-shards: $n shards start at $start; logs in $out" >&2

pids=()
for ((i = 0; i < n; i++)); do
  JOB_COMPLETION_INDEX=$i OTELBENCH_SHARDS=$n OTELBENCH_START_AT=$start \
    "$bin" load --no-progress "$@" --json=- >"$out/shard-$i.log" 2>&1 &
  pids+=($!)
done
# A Ctrl-C stops the shards too (they still print their reports).
trap 'kill -INT "${pids[@]}" 2>/dev/null || true' INT TERM

status=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "load-shards: shard $i failed; its log: $out/shard-$i.log" >&2
    status=1
  fi
done

# kubectl logs --prefix, here: the logs one after another.
if ! cat "$out"/shard-*.log | "$bin" report merge --json "$out/merged.json" -; then
  status=1
fi
echo "load-shards: merged report in $out/merged.json" >&2
exit "$status"
