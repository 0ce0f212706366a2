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
# shellcheck source=scripts/lib/target.sh
. scripts/lib/target.sh # pid, work, start_serve, load_settings, closed_load, api_stats, stop_target
load_settings metrics=1 10 120s 1024
mix=metrics=1 # the queries read metric points
requests=${REQUESTS:-300000}
reps=${REPS:-15}
rounds=${ROUNDS:-1}
mkwork bench-series

queries=(
	"one service's gauge|name=jvm.cpu.recent_utilization&service=checkout"
	"one service's histogram|name=http.server.request.duration&service=checkout"
	"one service's gauge, 5 s of the load|name=jvm.cpu.recent_utilization&service=checkout&since=T5&until=T10"
	"gauge, all services|name=jvm.cpu.recent_utilization"
	"histogram, all services|name=http.server.request.duration"
)

echo "# bench-series $(date -u +%FT%TZ) $(nproc) cores; metrics=1 --records $records --pool-size $pool, $conc workers, $requests requests; $reps reps"
for round in $(seq "$rounds"); do
	for bin in "$@"; do
		start_fresh_serve "$bin"
		t0=$(date +%s%N)
		closed_load "$1" "$port" --requests "$requests"
		wait_caught_up "$port" 300 || true
		sleep "${SETTLE:-5}"
		points=$(api_stats "$port" | jq -r '.signals.metrics.records_projected // empty')
		echo "round $round  $bin  points ${points:-?}"
		for q in "${queries[@]}"; do
			name=${q%%|*} params=${q#*|}
			params=${params/T5/$((t0 + 5000000000))} params=${params/T10/$((t0 + 10000000000))}
			for _ in $(seq "$reps"); do
				curl -sf -o "$work/out.json" -w '%{time_total}\n' "http://127.0.0.1:$port/api/v1/metrics/series?$params"
			done | sort -n | awk -v name="$name" -v n="$reps" '{t[NR]=$1} END {printf "  %-36s median %8.1f ms  max %8.1f ms\n", name, t[int((n+1)/2)]*1000, t[n]*1000}'
			jq -r '"    \(.series | length) series, \([.series[].points | length] | add // 0) steps"' "$work/out.json"
		done
		stop_target
	done
done
