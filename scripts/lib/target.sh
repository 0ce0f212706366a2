# shellcheck shell=bash
# target.sh: the helpers the bench scripts share to run one server at a time
# on a free loopback port and to load it. Sourced, not run. The caller sets
# pid to the server's PID after starting it (start_serve and start_otelcol_nop
# do), and work to a scratch directory (mkwork) if it wants one removed at exit.
pid=
work=
cleanup() {
	# An aborted run kills its server outright; a measured one ends with stop_target.
	[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null
	[[ -n $work ]] && rm -rf "$work"
	true
}
trap cleanup EXIT

mkwork() { work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX"); } # mkwork NAME: sets work

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_port() { # wait until something accepts on 127.0.0.1:$1 (at most 20 s)
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	echo "nothing listens on port $1" >&2
	return 1
}

median() { python3 -c "import statistics,sys; print(f'{statistics.median(map(float, sys.argv[1:])):.2f}')" "$@"; }

ratio() { python3 -c "print(f'{$1/max(1,$2):.2f}')"; } # ratio A B: A/B to two places, B at least 1

cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; } # user+sys of process $1, in clock ticks

# machine_ticks prints the machine's CPU ticks since boot: all, idle (with iowait), steal (/proc/stat).
machine_ticks() { awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6, $9}' /proc/stat; }

stop_target() { # sets hwm (peak RSS, MB); SIGTERM, the server must exit 0
	# shellcheck disable=SC2034 # hwm is read by the caller
	hwm=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
	kill -TERM "$pid"
	if ! wait "$pid"; then
		echo "server $pid did not exit 0 after SIGTERM" >&2
		pid=
		return 1
	fi
	pid=
}

start_serve() { # start_serve BIN PORT DATADIR [FLAGS...]: serve on 127.0.0.1:PORT, stderr in $work/server.log
	local bin=$1 port=$2 data=$3
	shift 3
	"$bin" serve --addr "127.0.0.1:$port" --data "$data" "$@" 2>"$work/server.log" &
	pid=$!
	for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/healthz" && return 0; sleep 0.1; done
	echo "server on port $port did not start ($work/server.log)" >&2
	return 1
}

# start_fresh_serve BIN [FLAGS...] starts serve on a free port (sets port) and an empty $work/data.
start_fresh_serve() {
	local bin=$1
	shift
	port=$(free_port)
	rm -rf "$work/data"
	start_serve "$bin" "$port" "$work/data" "$@"
}

start_otelcol_nop() { # start_otelcol_nop BIN http|grpc PORT DIR [TELEMETRY_YAML]: otlpreceiver -> nop exporter
	cat >"$4/otelcol.yaml" <<YAML
receivers:
  otlp:
    protocols:
      $2:
        endpoint: 127.0.0.1:$3
exporters:
  nop:
service:
  telemetry:
    metrics:
      ${5:-level: none}
  pipelines:
    logs: {receivers: [otlp], exporters: [nop]}
    metrics: {receivers: [otlp], exporters: [nop]}
    traces: {receivers: [otlp], exporters: [nop]}
YAML
	"$1" --config "$4/otelcol.yaml" 2>"$4/server.log" &
	pid=$!
	wait_port "$3"
}

# workload_flags NAME prints the load flags of a closed-model workload of the serve benchmarks:
# logs1 (logs, 1 record a request) or mixed10 (logs, metrics and traces, 10 records a request).
workload_flags() {
	case $1 in
	logs1) echo "--mix logs=1 --records 1" ;;
	mixed10) echo "--mix logs=1,metrics=1,traces=1 --records 10" ;;
	*) echo "unknown workload $1 (logs1, mixed10)" >&2; return 2 ;;
	esac
}

# load_settings MIX RECORDS DURATION POOL_SIZE sets mix, records, dur, pool and conc from the
# environment (MIX, RECORDS, DURATION, POOL_SIZE, CONCURRENCY), else from these defaults.
load_settings() { mix=${MIX:-$1} records=${RECORDS:-$2} dur=${DURATION:-$3} pool=${POOL_SIZE:-$4} conc=${CONCURRENCY:-256}; }

closed_load() { # closed_load BIN PORT [FLAGS...]: `otelbench load` of the load_settings, output dropped
	local bin=$1 port=$2
	shift 2
	"$bin" load --endpoint "http://127.0.0.1:$port" --no-progress --mix "$mix" --records "$records" \
		--pool-size "$pool" --concurrency "$conc" --duration "$dur" "$@" >/dev/null
}

api_stats() { curl -sf "http://127.0.0.1:$1/api/v1/stats"; } # api_stats PORT
lag() { api_stats "$1" | jq -r '.projection.lag_records'; } # lag PORT: records not yet projected

wait_caught_up() { # wait_caught_up PORT SECONDS: until the lag is 0; 1 if it is not by then
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		[[ $(lag "$1") == 0 ]] && return 0
		sleep 0.05
	done
	return 1
}
