#!/usr/bin/env bash
# bench-bulk.sh measures `otelbench serve --sync full` at the batch sizes agents
# and Collectors send (100 and 1,000 log records a request), side by side with
# two OpenTelemetry Collectors (scripts/build-otelcol.sh) under the same load:
#   serve       `otelbench serve --sync full`, default flags (projection on),
#               a fresh data directory per run;
#   otelcol-nop otlpreceiver (HTTP) -> nop exporter: stores nothing, the
#               ceiling of an OTLP/HTTP front end;
#   otelcol-fsq otlpreceiver -> otlphttp exporter with a persistent sending
#               queue on the file_storage extension, fsync on: it persists a
#               request before it acknowledges it, like serve. The exporter
#               drains the queue into scripts/sink (a discarding OTLP/HTTP
#               endpoint started with it), whose CPU is not counted; the
#               requests the sink received are printed beside those
#               acknowledged, to show whether the queue kept draining.
# Client: wrk (one thread, 16 connections, keep-alive), POSTing one fixed
# protobuf body per shape. wrk costs less CPU per request than `otelbench
# load` (5.7 µs against 8.6 µs at 100 records, docs/benchmarks/load.md), and
# the client shares the 2 cores with the server. The bodies are realistic OTLP
# logs from internal/otlpgen, sent once by `otelbench load` to a capturing
# scripts/sink; by default without extra attributes and with ~32-byte bodies,
# which gives 12.5 KB for 100 records and 112 KB for 1,000 (BODY_ARGS).
#
# Every target starts fresh for each (round, shape) run on a free loopback
# port; the target order rotates from round to round. Per run: 2xx/s,
# records/s (2xx only), p50/p99 latency, 503s (counted apart: overload is an
# answer), other non-2xx and socket errors (any makes the script exit 1 once
# the table is printed), the server's CPU time per 2xx answer
# (user+sys from /proc/PID/stat: robust on a shared machine where req/s
# mostly measures the CPU share the server got) and peak RSS (VmHWM). Last,
# the medians over rounds of serve's ratios to each Collector.
#
# Usage: scripts/bench-bulk.sh
# Env:   RUNS=4 DURATION=8s CONCURRENCY=16 WRK_THREADS=1 SHAPES="100 1000"
#        TARGETS="serve otelcol-nop otelcol-fsq"
#        OTELCOL (else OTELBENCH_OTELCOL, else /tmp/otelbench-otelcol/otelcol; built if missing)
#        BIN=path/to/otelbench (default: go build ./cmd/otelbench)
#        BODY_ARGS="--attrs 0 --body-bytes 32" `otelbench load` payload flags (split on spaces)
#        SERVE_ARGS="--pprof" extra `otelbench serve` flags (split on spaces)
#        OUT=dir for logs and bodies (default: a temp dir, printed)
#        PROFILE=1 runs serve with --pprof and keeps a CPU profile of each serve
#        run, from its 2nd second to 1 s before its end, in OUT/ROUND-SHAPE-serve/cpu.pprof
# Needs: wrk (apt-get install wrk), python3, curl (PROFILE=1).
set -euo pipefail

dur=${DURATION:-8s}
conc=${CONCURRENCY:-16}
threads=${WRK_THREADS:-1}
runs=${RUNS:-4}
shapes=${SHAPES:-100 1000}
targets=${TARGETS:-serve otelcol-nop otelcol-fsq}
otelcol=${OTELCOL:-${OTELBENCH_OTELCOL:-/tmp/otelbench-otelcol/otelcol}}
out=${OUT:-$(mktemp -d /tmp/bench-bulk.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/lib/target.sh
. "$root/scripts/lib/target.sh" # pid, cleanup, free_port, wait_port, median, stop_target
mkdir -p "$out"
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 2; }

# otelcol-fsq's sink is not a target: owned here beside the lib's one target pid.
sink_pid=
stop_all() {
	cleanup
	[[ -n $sink_pid ]] && kill "$sink_pid" 2>/dev/null
	wait 2>/dev/null || true
}
trap stop_all EXIT
trap 'exit 130' INT TERM

if [[ -z ${BIN:-} ]]; then
	BIN=$out/otelbench
	(cd "$root" && go build -o "$BIN" ./cmd/otelbench)
fi
(cd "$root" && go build -o "$out/sink" ./scripts/sink)
[[ $targets != *otelcol* || -x $otelcol ]] || "$root/scripts/build-otelcol.sh" "$otelcol" >/dev/null 2>&1
secs=${dur%s}
[[ $secs =~ ^[0-9]+$ ]] || { echo "DURATION must be whole seconds (8s), got $dur" >&2; exit 2; }

capture_body() { # capture_body RECORDS FILE: one logs request body from otlpgen
	local port cpid
	port=$(free_port)
	"$out/sink" -addr "127.0.0.1:$port" -capture "$2" 2>"$out/capture-$1.log" &
	cpid=$!
	wait_port "$port"
	# shellcheck disable=SC2086 # BODY_ARGS is a list of flags
	timeout 30 "$BIN" load --endpoint "http://127.0.0.1:$port" --requests 1 --concurrency 1 \
		--mix logs=1 --records "$1" --no-progress ${BODY_ARGS:---attrs 0 --body-bytes 32} >/dev/null
	kill "$cpid"
	wait "$cpid" || true
	[[ -s $2 ]] || { echo "no body captured for $1 records" >&2; return 1; }
}

# wrk's script: POST the body, count answers by status in each thread and
# print one parseable line at the end (latencies in µs).
cat >"$out/post.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
	local f = assert(io.open(os.getenv("BULK_BODY"), "rb"))
	wrk.method = "POST"
	wrk.body = f:read("*a")
	f:close()
	wrk.headers["Content-Type"] = "application/x-protobuf"
	statuses = {}
end
function response(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
function done(summary, latency, requests)
	local ok, busy, other, codes = 0, 0, 0, ""
	for _, t in ipairs(threads) do
		for code, n in pairs(t:get("statuses")) do
			if code >= 200 and code < 300 then ok = ok + n
			elseif code == 503 then busy = busy + n
			else other = other + n; codes = codes .. code .. "x" .. n .. "," end
		end
	end
	local e = summary.errors
	if codes == "" then codes = "-" end
	io.write(string.format("BULK ok=%d busy=%d other=%d codes=%s sockerr=%d dur_us=%d p50_us=%d p99_us=%d\n",
		ok, busy, other, codes, e.connect + e.read + e.write + e.timeout, summary.duration,
		latency:percentile(50), latency:percentile(99)))
end
LUA

start_target() { # start_target TARGET PORT DIR
	case $1 in
	serve)
		local prof=
		[[ ${PROFILE:-0} == 1 ]] && prof=--pprof
		# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags; prof is one or none
		"$BIN" serve --addr "127.0.0.1:$2" --grpc-addr "" --data "$3/data" --sync full $prof ${SERVE_ARGS:-} 2>"$3/server.log" &
		;;
	otelcol-nop | otelcol-fsq)
		local exp="nop: {}" ext="" svcext=""
		if [[ $1 == otelcol-fsq ]]; then
			mkdir -p "$3/queue"
			local sink_port
			sink_port=$(free_port)
			"$out/sink" -addr "127.0.0.1:$sink_port" 2>"$3/sink.log" &
			sink_pid=$!
			wait_port "$sink_port"
			# The queue keeps the Collector's defaults (1,000 requests, 10 consumers, no
			# blocking: a full queue answers 503). No gzip on the loopback drain: it is
			# not the work being compared, and with it the drain fell behind the fill.
			exp="otlp_http: {endpoint: 'http://127.0.0.1:$sink_port', compression: none, sending_queue: {enabled: true, storage: file_storage}}"
			ext="extensions: {file_storage: {directory: '$3/queue', fsync: true}}"
			svcext="extensions: [file_storage]"
		fi
		cat >"$3/otelcol.yaml" <<YAML
$ext
receivers: {otlp: {protocols: {http: {endpoint: '127.0.0.1:$2'}}}}
exporters: {$exp}
service:
  $svcext
  telemetry: {metrics: {level: none}}
  pipelines: {logs: {receivers: [otlp], exporters: [${exp%%:*}]}}
YAML
		"$otelcol" --config "$3/otelcol.yaml" 2>"$3/server.log" &
		;;
	*) echo "unknown target $1 (serve, otelcol-nop, otelcol-fsq)" >&2; return 2 ;;
	esac
	pid=$!
	wait_port "$2"
}

declare -A rec cpuk recs cpus p99s rsss
failures=0
run() { # run ROUND SHAPE TARGET
	local key=$1-$2-$3 port dir tck t0 t1
	port=$(free_port)
	dir=$out/$key
	mkdir -p "$dir"
	start_target "$3" "$port" "$dir"
	tck=$(getconf CLK_TCK)
	t0=$(cpu_ticks "$pid")
	local prof_pid=
	if [[ $3 == serve && ${PROFILE:-0} == 1 ]]; then
		# One CPU profile over the run but its first and last second.
		(sleep 1 && curl -sf -o "$dir/cpu.pprof" "http://127.0.0.1:$port/debug/pprof/profile?seconds=$((secs - 2))") &
		prof_pid=$!
	fi
	BULK_BODY=$out/body-$2.bin timeout $((secs + 30)) wrk -t"$threads" -c"$conc" -d"$dur" --timeout 10s \
		-s "$out/post.lua" "http://127.0.0.1:$port/v1/logs" >"$dir/wrk.txt" 2>&1 || true
	t1=$(cpu_ticks "$pid")
	[[ -z $prof_pid ]] || wait "$prof_pid" || echo "$key: no CPU profile" >&2
	stop_target
	local drained=
	if [[ -n $sink_pid ]]; then
		kill -TERM "$sink_pid"
		wait "$sink_pid" || true
		sink_pid=
		drained="the sink received $(awk '/^sink:/ {print $2}' "$dir/sink.log") requests; $(du -sm "$dir/queue" | cut -f1) MB left in the queue directory"
	fi
	rm -rf "$dir/data" "$dir/queue"
	local line ok busy other codes sockerr durus p50 p99
	line=$(grep '^BULK ' "$dir/wrk.txt") || { echo "wrk gave no result for $key: $dir/wrk.txt" >&2; exit 1; }
	read -r ok busy other codes sockerr durus p50 p99 < <(sed -E 's/[a-z0-9_]+=//g; s/^BULK //' <<<"$line")
	if ((other + sockerr > 0)); then
		echo "$key: $other non-2xx other than 503 (${codes:-none}), $sockerr socket errors" >&2
		failures=$((failures + 1))
	fi
	[[ -z $drained ]] || echo "$key: $ok requests acknowledged, $drained" >&2
	local rps cpu_ms
	rps=$(python3 -c "print(f'{$ok * 1e6 / $durus:.0f}')")
	rec[$key]=$(python3 -c "print(f'{$ok * $2 * 1e6 / $durus:.0f}')")
	# CPU µs per acknowledged (2xx) request: a peer answering 503 does less work for the
	# same load, and the 503s are counted apart.
	cpuk[$key]=$(python3 -c "print(f'{($t1 - $t0) / $tck * 1e6 / max(1, $ok):.0f}')")
	cpu_ms=$(python3 -c "print(f'{($t1 - $t0) / $tck:.2f}')")
	recs[$2-$3]+=" ${rec[$key]}"
	cpus[$2-$3]+=" ${cpuk[$key]}"
	p99s[$2-$3]+=" $p99"
	rsss[$2-$3]+=" $hwm"
	printf '| %d | %5s | %-11s | %6s | %9s | %7.1f | %7.1f | %4s | %5s | %6s | %6s | %6s |\n' \
		"$1" "$2" "$3" "$rps" "${rec[$key]}" "$(awk "BEGIN{print $p50/1000}")" "$(awk "BEGIN{print $p99/1000}")" \
		"$busy" "$((other + sockerr))" "$cpu_ms" "${cpuk[$key]}" "$hwm"
}

for s in $shapes; do
	capture_body "$s" "$out/body-$s.bin"
done

echo "# bench-bulk $(date -u +%FT%TZ) $(uname -r) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); wrk -t$threads -c$conc -d$dur; bodies: $(for s in $shapes; do printf '%s records %s B; ' "$s" "$(stat -c %s "$out/body-$s.bin")"; done)logs in $out"
echo
echo '| round | records/req | target | 2xx/s | records/s | p50 ms | p99 ms | 503 | errors | CPU s | CPU µs/2xx | RSS MB |'
echo '|---|---|---|---|---|---|---|---|---|---|---|---|'
declare -A ratio cpuratio
for i in $(seq "$runs"); do
	# Rotate the target order so none always runs first (or right after another's fsyncs).
	read -ra order <<<"$targets"
	k=$(((i - 1) % ${#order[@]}))
	order=("${order[@]:k}" "${order[@]:0:k}")
	for s in $shapes; do
		for t in "${order[@]}"; do
			run "$i" "$s" "$t"
		done
		[[ -n ${rec[$i-$s-serve]:-} ]] || continue
		for peer in otelcol-nop otelcol-fsq; do
			[[ -n ${rec[$i-$s-$peer]:-} ]] || continue
			ratio[$s-$peer]+=" $(ratio "${rec[$i-$s-serve]}" "${rec[$i-$s-$peer]}")"
			cpuratio[$s-$peer]+=" $(python3 -c "print(f'{${cpuk[$i-$s-serve]}/max(1e-9,${cpuk[$i-$s-$peer]}):.2f}')")"
		done
	done
done
echo
echo '| records/req | target | records/s (median) | CPU µs/2xx (median) | p99 ms (median) | peak RSS MB (max) |'
echo '|---|---|---|---|---|---|'
for s in $shapes; do
	for t in $targets; do
		# shellcheck disable=SC2086 # lists of numbers
		printf '| %s | %s | %.0f | %.0f | %.1f | %s |\n' "$s" "$t" "$(median ${recs[$s-$t]})" "$(median ${cpus[$s-$t]})" \
			"$(awk "BEGIN{print $(median ${p99s[$s-$t]})/1000}")" "$(tr ' ' '\n' <<<"${rsss[$s-$t]}" | sort -n | tail -1)"
	done
done
echo
for s in $shapes; do
	for peer in otelcol-nop otelcol-fsq; do
		[[ -n ${ratio[$s-$peer]:-} ]] || continue
		# shellcheck disable=SC2086 # the ratios are a list of numbers
		echo "$s records/req, serve/$peer over $runs rounds: median records/s ratio $(median ${ratio[$s-$peer]}) (${ratio[$s-$peer]# }); median CPU per request ratio $(median ${cpuratio[$s-$peer]}) (${cpuratio[$s-$peer]# })"
	done
done
if ((failures > 0)); then
	echo "$failures runs had errors other than 503 (see above and $out/*/wrk.txt)" >&2
	exit 1
fi
