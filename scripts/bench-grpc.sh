#!/usr/bin/env bash
# bench-grpc.sh measures OTLP/gRPC on both sides of otelbench, each beside its
# peer in the same run:
#
# 1. serve: `otelbench serve` (durable: --sync full, projection on) against an
#    OpenTelemetry Collector (otlpreceiver + nop exporter, persists nothing)
#    and grpc-go's floor (scripts/grpcfloor server: a bare grpc-go server
#    answering every Export without reading it), all loaded by
#    `otelbench load --protocol grpc`, closed model, at 1 record
#    a request (logs) and 10 (mixed). Reported: req/s, p50/p99, OK and
#    UNAVAILABLE counts, transport errors, the server's peak RSS (VmHWM) and
#    its CPU per OK answer (user+sys from /proc/PID/stat, which a shared,
#    noisy machine disturbs less than req/s). The targets alternate which goes
#    first from round to round; the medians of the per-round ratios close it.
# 2. overload: serve at 10x the 1-record rate just measured (open model,
#    --concurrency 4096): memory must stay bounded; UNAVAILABLE is expected.
# 3. client: records per CPU-second of the generator, `otelbench load
#    --protocol grpc` with its two clients (lean, the default for plain
#    text: internal/h2grpc; grpc-go: --grpc-client grpc-go) against
#    telemetrygen (gRPC, its defaults but for the endpoint, plain text, no
#    rate limit), all sending logs of 100 records a request to the
#    Collector; records counted by the Collector
#    (otelcol_receiver_accepted_log_records), CPU by getrusage of the child.
#    Beside them grpc-go's floor (scripts/grpcfloor client: load's payloads
#    sent by bare Invoke calls, grpc-go's defaults, nothing else), the most
#    records per CPU-second any client on grpc-go reaches here. The clients
#    alternate their order from round to round.
#
# Usage: scripts/bench-grpc.sh
# Env:   DURATION=10s CONCURRENCY=256 RUNS=3 OVERLOAD_DURATION=15s (0 skips)
#        SERVE=1 (0 skips phase 1, and phase 2 with it)
#        FLOOR=1 (0 leaves grpc-go's floor out of phases 1 and 3)
#        CLIENT_WORKERS="1 8 32" (empty skips phase 3)
#        OTELCOL=/tmp/otelbench-otelcol/otelcol (built by scripts/build-otelcol.sh if missing)
#        TELEMETRYGEN=path (default: telemetrygen on PATH, else go install into OUT)
#        BIN=path/to/otelbench (default: go build ./cmd/otelbench)
#        OUT=dir for reports and logs (default: a temp dir, printed)
set -euo pipefail

dur=${DURATION:-10s}
conc=${CONCURRENCY:-256}
runs=${RUNS:-3}
odur=${OVERLOAD_DURATION:-15s}
serve=${SERVE:-1}
workers=${CLIENT_WORKERS-1 8 32}
floor=${FLOOR:-1}
otelcol=${OTELCOL:-/tmp/otelbench-otelcol/otelcol}
out=${OUT:-$(mktemp -d /tmp/bench-grpc.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/target.sh
. "$root/scripts/lib/target.sh" # pid, cleanup, free_port, wait_port, median, stop_target
tgmod=github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@v0.161.0
mkdir -p "$out"

if [[ -z ${BIN:-} ]]; then
	BIN=$out/otelbench
	(cd "$root" && go build -o "$BIN" ./cmd/otelbench)
fi
[[ -x $otelcol ]] || "$root/scripts/build-otelcol.sh" "$otelcol" >/dev/null
grpcfloor=$out/grpcfloor
if ((floor)); then (cd "$root" && go build -o "$grpcfloor" ./scripts/grpcfloor); fi
tg=${TELEMETRYGEN:-$(command -v telemetrygen || true)}
if [[ -z $tg && -n $workers ]]; then
	GOBIN=$out go install "$tgmod"
	tg=$out/telemetrygen
fi

start_target() { # start_target otelbench|otelcol|floor GRPCPORT DIR [PROMPORT]
	case $1 in
	floor)
		"$grpcfloor" server -addr "127.0.0.1:$2" 2>"$3/server.log" &
		;;
	otelbench)
		"$BIN" serve --addr "127.0.0.1:$(free_port)" --grpc-addr "127.0.0.1:$2" --data "$3/data" --sync full 2>"$3/server.log" &
		;;
	otelcol)
		local telemetry=
		[[ -n ${4:-} ]] && telemetry="level: detailed
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: $4"
		start_otelcol_nop "$otelcol" grpc "$2" "$3" "$telemetry"
		[[ -z ${4:-} ]] || wait_port "$4"
		return
		;;
	esac
	pid=$!
	wait_port "$2"
	[[ -z ${4:-} ]] || wait_port "$4"
}

declare -A rps cpu
run() { # run NAME TARGET LOADARGS...
	local name=$1 target=$2 port dir t0 t1 tck
	shift 2
	port=$(free_port)
	dir=$out/$name-$target
	mkdir -p "$dir"
	start_target "$target" "$port" "$dir"
	tck=$(getconf CLK_TCK)
	t0=$(cpu_ticks "$pid")
	# load exits 1 when requests fail, which the overload run expects; the
	# table shows what failed.
	"$BIN" load --protocol grpc --insecure --endpoint "127.0.0.1:$port" --no-progress --json "$dir/load.json" "$@" >"$dir/load.txt" ||
		echo "$name on $target: load exited $? ($dir/load.txt)" >&2
	t1=$(cpu_ticks "$pid")
	stop_target
	rm -rf "$dir/data"
	read -r r p50 p99 ok busy errs < <(jq -r '.totals | [(.requests_per_second|floor), .latency_ms.p50, .latency_ms.p99,
		(.grpc_status.OK // 0), (.grpc_status.UNAVAILABLE // 0), .transport_errors] | @tsv' "$dir/load.json")
	rps[$name-$target]=$r
	cpu[$name-$target]=$(((t1 - t0) * 1000000 / tck / (ok > 0 ? ok : 1)))
	printf '| %-9s | %-9s | %8s | %8s | %8s | %8s | %11s | %5s | %7s | %9s |\n' \
		"$name" "$target" "$r" "$p50" "$p99" "$ok" "$busy" "$errs" "$hwm" "${cpu[$name-$target]}"
}

echo "# bench-grpc $(date -u +%FT%TZ) $(uname -r) $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); duration $dur, concurrency $conc, $runs rounds; reports in $out"
echo
declare -A ratios cpuratios floorratios
if ((serve)); then
	echo '| workload  | target    |    req/s |   p50 ms |   p99 ms |       OK | UNAVAILABLE | xport |  RSS MB | CPU us/OK |'
	echo '|-----------|-----------|----------|----------|----------|----------|-------------|-------|---------|-----------|'
fi
for i in $(seq "$((serve ? runs : 0))"); do
	order="otelbench otelcol"
	((i % 2 == 0)) && order="otelcol otelbench"
	if ((floor)); then order+=" floor"; fi
	for w in logs1 mixed10; do
		flags=$(workload_flags "$w")
		for target in $order; do
			# shellcheck disable=SC2086 # flags is a list of flags
			run "$w" "$target" $flags --concurrency "$conc" --duration "$dur"
		done
		ratios[$w]+=" $(ratio "${rps[$w-otelbench]}" "${rps[$w-otelcol]}")"
		cpuratios[$w]+=" $(ratio "${cpu[$w-otelbench]}" "${cpu[$w-otelcol]}")"
		if ((floor)); then floorratios[$w]+=" $(ratio "${rps[$w-floor]}" "${rps[$w-otelcol]}")"; fi
	done
done
echo
for w in logs1 mixed10; do
	((serve)) || break
	# shellcheck disable=SC2086 # the ratios are a list of numbers
	echo "$w serve/otelcol over $runs rounds: median req/s ratio $(median ${ratios[$w]}) (${ratios[$w]# }), median CPU per OK ratio $(median ${cpuratios[$w]}) (${cpuratios[$w]# })"
	# shellcheck disable=SC2086
	if ((floor)); then echo "$w grpc-go floor/otelcol: median req/s ratio $(median ${floorratios[$w]}) (${floorratios[$w]# })"; fi
done

if ((serve)) && [[ $odur != 0 ]]; then
	echo
	rate=$((10 * ${rps[logs1-otelbench]}))
	echo "overload: $rate req/s (10x logs1), open model"
	run overload otelbench --mix logs=1 --records 1 --rate "$rate" --concurrency 4096 --duration "$odur" --timeout 5s --min-success 0
fi

[[ -n $workers ]] || exit 0
echo
echo "client: records per CPU-second, 100-record log requests to the Collector's gRPC receiver"
echo
echo '| workers | client        |   records | CPU s | records/CPU-s |'
echo '|---------|---------------|-----------|-------|---------------|'
port=$(free_port) prom=$(free_port)
mkdir -p "$out/client"
start_target otelcol "$port" "$out/client" "$prom"
accepted() { curl -s "127.0.0.1:$prom/metrics" | awk '/^otelcol_receiver_accepted_log_records/ {s += $NF} END {print s + 0}'; }
cpu_of() { python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN); print(f"{r.ru_utime + r.ru_stime:.3f}")' "$@"; }
declare -A eff
measure() { # measure WORKERS NAME CMD...
	local w=$1 name=$2 a0 a1 c
	shift 2
	a0=$(accepted)
	c=$(cpu_of "$@")
	sleep 1.5 # the receiver's counters go through a periodic reader
	a1=$(accepted)
	eff[$w-$name]+=" $(python3 -c "print(int(($a1 - $a0) / $c))")"
	printf '| %7s | %-13s | %9s | %5s | %13s |\n' "$w" "$name" "$((a1 - a0))" "$c" "$(python3 -c "print(int(($a1 - $a0) / $c))")"
}
client() { # client WORKERS NAME
	case $2 in
	load-lean | load-grpc-go)
		measure "$1" "$2" "$BIN" load --protocol grpc --grpc-client "${2#load-}" --insecure --endpoint "127.0.0.1:$port" \
			--mix logs=1 --records 100 --concurrency "$1" --duration "$dur" --no-progress
		;;
	telemetrygen) measure "$1" telemetrygen "$tg" logs --otlp-endpoint "127.0.0.1:$port" --otlp-insecure --rate 0 --workers "$1" --duration "$dur" ;;
	grpc-go-floor) measure "$1" grpc-go-floor "$grpcfloor" client -endpoint "127.0.0.1:$port" -workers "$1" -duration "$dur" ;;
	esac
}
clients="load-lean telemetrygen load-grpc-go"
if ((floor)); then clients+=" grpc-go-floor"; fi
for i in $(seq "$runs"); do
	order=$clients
	((i % 2 == 0)) && order=$(echo "$clients" | tr ' ' '\n' | tac | tr '\n' ' ')
	for w in $workers; do
		for name in $order; do client "$w" "$name"; done
	done
done
stop_target
echo
ratio() { python3 -c "print(f'{$1/$2:.1f}')"; } # ratio A B: A/B to one decimal
for w in $workers; do
	# shellcheck disable=SC2086 # lists of numbers
	tgm=$(median ${eff[$w-telemetrygen]})
	# shellcheck disable=SC2086
	echo "$w workers: records per CPU-second over telemetrygen's, ratio of medians: load lean $(ratio "$(median ${eff[$w-load-lean]})" "$tgm"), load grpc-go $(ratio "$(median ${eff[$w-load-grpc-go]})" "$tgm")$( ((floor)) && echo ", grpc-go floor $(ratio "$(median ${eff[$w-grpc-go-floor]})" "$tgm")") (lean${eff[$w-load-lean]}; grpc-go${eff[$w-load-grpc-go]}; telemetrygen${eff[$w-telemetrygen]})"
done
