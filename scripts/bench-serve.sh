#!/usr/bin/env bash
# bench-serve.sh measures `otelbench serve` (durable: --sync full, projection
# on) and, side by side under the same load, an OpenTelemetry Collector with
# the otlpreceiver and the nop exporter (scripts/build-otelcol.sh), which
# persists nothing. Load: `otelbench load`, closed model, on the same machine.
#
# Workloads: logs with 1 record/request; mixed logs/metrics/traces with 10
# records/request; then overload: an open-model rate of 10x the logs capacity
# just measured, to check that memory stays bounded (503s are expected, and
# no transport errors: connections past --max-conns are answered 503 too);
# then bulk: 1000-record log requests from 4 workers (like querygen's load in
# scripts/bench-query.sh), where the projector's slices are largest.
# Reported per run: req/s, records/s, p50/p99 latency, 2xx/503 counts, the
# server's peak RSS (VmHWM), its CPU time per request (user+sys from
# /proc/PID/stat: robust on a shared, noisy machine where req/s mostly
# measures what CPU share the server got), and the ratio otelbench/otelcol.
# The two targets run each workload back to back, in alternating order from
# run to run; with RUNS > 1 the medians of the ratios are printed last. On a
# host whose speed swings, prefer many short runs (DURATION=10s RUNS=8) to one
# long one: the ratio of one pair can be off by 20%.
#
# Usage: scripts/bench-serve.sh            (60 s per run)
# Env:   DURATION=60s CONCURRENCY=256 OVERLOAD_DURATION=20s RUNS=1
#        BULK_DURATION=20s (0 skips the bulk phase; OVERLOAD_DURATION=0 skips
#        overload, which also needs logs1 in WORKLOADS)
#        WORKLOADS="logs1 mixed10" the closed-model workloads, in this order
#        OTELCOL=/tmp/otelbench-otelcol/otelcol (built if missing)
#        BIN=path/to/otelbench (default: go build ./cmd/otelbench)
#        SERVE_ARGS="--no-projection" extra `otelbench serve` flags (split on spaces)
#        OUT=dir for JSON reports (default: a temp dir, printed)
#        KEEP_DATA=1 keeps each run's data directory (a 60 s mixed run writes
#        several GB; by default it is deleted once the run is measured)
set -euo pipefail

dur=${DURATION:-60s}
conc=${CONCURRENCY:-256}
odur=${OVERLOAD_DURATION:-20s}
bdur=${BULK_DURATION:-20s}
runs=${RUNS:-1}
workloads=${WORKLOADS:-logs1 mixed10}
otelcol=${OTELCOL:-/tmp/otelbench-otelcol/otelcol}
out=${OUT:-$(mktemp -d /tmp/bench-serve.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/target.sh
. "$root/scripts/lib/target.sh" # pid, cleanup, free_port, wait_port, median, stop_target
mkdir -p "$out"

if [[ -z ${BIN:-} ]]; then
	BIN=$out/otelbench
	(cd "$root" && go build -o "$BIN" ./cmd/otelbench)
fi
[[ -x $otelcol ]] || "$root/scripts/build-otelcol.sh" "$otelcol" >/dev/null

start_target() { # start_target otelbench|otelcol PORT DIR
	case $1 in
	otelbench)
		# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
		"$BIN" serve --addr "127.0.0.1:$2" --data "$3/data" --sync full ${SERVE_ARGS:-} 2>"$3/server.log" &
		;;
	otelcol) start_otelcol_nop "$otelcol" http "$2" "$3"; return ;;
	esac
	pid=$!
	wait_port "$2"
}

summary() { # summary REPORT.json -> "req/s rec/s p50 p99 2xx 503 errors"
	jq -r '.totals | [(.requests_per_second|floor), (.records_per_second|floor), .latency_ms.p50, .latency_ms.p99,
		.status["2xx"], .status["503"], .transport_errors] | @tsv' "$1"
}

declare -A rps cpu
run() { # run NAME TARGET LOADARGS...
	local name=$1 target=$2 port dir
	shift 2
	port=$(free_port)
	dir=$out/$name-$target
	mkdir -p "$dir"
	start_target "$target" "$port" "$dir"
	local t0 t1 tck
	tck=$(getconf CLK_TCK)
	t0=$(cpu_ticks "$pid")
	"$BIN" load --endpoint "http://127.0.0.1:$port" --no-progress --json "$dir/load.json" "$@" >"$dir/load.txt"
	t1=$(cpu_ticks "$pid")
	stop_target
	[[ ${KEEP_DATA:-0} == 1 ]] || rm -rf "$dir/data"
	read -r r rec p50 p99 ok busy errs < <(summary "$dir/load.json")
	rps[$name-$target]=$r
	cpu[$name-$target]=$(((t1 - t0) * 1000000 / tck / (ok > 0 ? ok : 1)))
	printf '| %-9s | %-9s | %8s | %9s | %7s | %8s | %8s | %6s | %5s | %8s | %10s |\n' \
		"$name" "$target" "$r" "$rec" "$p50" "$p99" "$ok" "$busy" "$errs" "$hwm" "${cpu[$name-$target]}"
}

echo "# bench-serve $(date -u +%FT%TZ) $(uname -r) $(nproc) cores; duration $dur, concurrency $conc; serve flags: --sync full ${SERVE_ARGS:-}; reports in $out"
echo
echo '| workload  | target    |    req/s | records/s | p50 ms  | p99 ms   |      2xx |    503 | xport | RSS MB   | CPU us/2xx |'
echo '|-----------|-----------|----------|-----------|---------|----------|----------|--------|-------|----------|------------|'
# Each workload runs on both targets back to back, the first alternating from run to run (see the
# header); with RUNS > 1 the medians of the per-run ratios close the table.
declare -A ratios cpuratios
for i in $(seq "$runs"); do
	order="otelbench otelcol"
	((i % 2 == 0)) && order="otelcol otelbench"
	for w in $workloads; do
		flags=$(workload_flags "$w")
		for target in $order; do
			# shellcheck disable=SC2086 # flags is a list of flags
			run "$w" "$target" $flags --concurrency "$conc" --duration "$dur"
		done
		ratio=$(ratio "${rps[$w-otelbench]}" "${rps[$w-otelcol]}")
		cpuratio=$(ratio "${cpu[$w-otelbench]}" "${cpu[$w-otelcol]}")
		ratios[$w]+=" $ratio"
		cpuratios[$w]+=" $cpuratio"
		echo "run $i $w otelbench/otelcol: req/s ratio $ratio, CPU per request ratio $cpuratio" >&2
	done
done
if ((runs > 1)); then
	for w in $workloads; do
		# shellcheck disable=SC2086 # the ratios are a list of numbers
		echo "$w otelbench/otelcol over $runs runs: median req/s ratio $(median ${ratios[$w]}) (${ratios[$w]# }), median CPU per request ratio $(median ${cpuratios[$w]})" >&2
	done
fi
# Overload: 10x the logs capacity just measured, open model, many in flight.
if [[ $odur != 0 && -n ${rps[logs1-otelbench]:-} ]]; then
	rate=$((10 * ${rps[logs1-otelbench]}))
	run overload otelbench --mix logs=1 --records 1 --rate "$rate" --concurrency 4096 --duration "$odur" --timeout 5s --min-success 0
fi
if [[ $bdur != 0 ]]; then
	run bulk1000 otelbench --mix logs=1 --records 1000 --concurrency 4 --duration "$bdur"
fi
