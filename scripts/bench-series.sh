#!/usr/bin/env bash
# bench-series.sh measures /api/v1/metrics/series on the metric points of the
# same `otelbench load` against each build given: for each, a fresh `otelbench
# serve`, REQUESTS requests of metrics at RECORDS points a request over POOL_SIZE
# resources (1,024 in 5 services: 5,120 streams), projection caught up, then REPS timings of
# each query (median and max ms, curl's time_total). For comparing the query
# side of two schema versions of the points tables.
#
#   scripts/bench-series.sh /tmp/old/otelbench /tmp/new/otelbench
#
# Env: REQUESTS=300000 (the same points for every build; DURATION=120s bounds them) RECORDS=10 POOL_SIZE=1024 CONCURRENCY=256 REPS=15 ROUNDS=1 SETTLE=5 (seconds
#      between the catch-up and the queries)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: $0 BIN [BIN...]" >&2; exit 2; }
dur=${DURATION:-120s}
requests=${REQUESTS:-300000}
records=${RECORDS:-10}
pool=${POOL_SIZE:-1024}
conc=${CONCURRENCY:-256}
reps=${REPS:-15}
rounds=${ROUNDS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-series.XXXXXX")
pid=
trap '[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT

queries=(
	"one service's gauge|name=system.memory.utilization&service=svc-1"
	"one service's histogram|name=http.server.request.duration&service=svc-1"
	"one service's gauge, 5 s of the load|name=system.memory.utilization&service=svc-1&since=T5&until=T10"
	"gauge, all services|name=system.memory.utilization"
	"histogram, all services|name=http.server.request.duration"
)

echo "# bench-series $(date -u +%FT%TZ) $(nproc) cores; metrics=1 --records $records --pool-size $pool, $conc workers, $requests requests; $reps reps"
for round in $(seq "$rounds"); do
	for bin in "$@"; do
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		rm -rf "$work/data"
		"$bin" serve --addr "127.0.0.1:$port" --data "$work/data" 2>"$work/server.log" &
		pid=$!
		for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
		t0=$(date +%s%N)
		"$1" load --endpoint "http://127.0.0.1:$port" --no-progress --mix metrics=1 --records "$records" \
			--pool-size "$pool" --concurrency "$conc" --requests "$requests" --duration "$dur" >/dev/null
		for _ in $(seq 3000); do
			[[ $(curl -sf "http://127.0.0.1:$port/api/v1/stats" | jq -r '.projection.lag_records') == 0 ]] && break
			sleep 0.1
		done
		sleep "${SETTLE:-5}"
		points=$(curl -sf "http://127.0.0.1:$port/api/v1/stats" | jq -r '.signals.metrics.records_projected // empty')
		echo "round $round  $bin  points ${points:-?}"
		for q in "${queries[@]}"; do
			name=${q%%|*} params=${q#*|}
			params=${params/T5/$((t0 + 5000000000))} params=${params/T10/$((t0 + 10000000000))}
			for _ in $(seq "$reps"); do
				curl -sf -o "$work/out.json" -w '%{time_total}\n' "http://127.0.0.1:$port/api/v1/metrics/series?$params"
			done | sort -n | awk -v name="$name" -v n="$reps" '{t[NR]=$1} END {printf "  %-36s median %8.1f ms  max %8.1f ms\n", name, t[int((n+1)/2)]*1000, t[n]*1000}'
			jq -r '"    \(.series | length) series, \([.series[].points | length] | add // 0) steps"' "$work/out.json"
		done
		kill -INT "$pid"; wait "$pid" 2>/dev/null || true; pid=
	done
done
