# target.sh: the helpers bench-serve.sh and bench-grpc.sh share to run one
# server at a time on a free loopback port. Sourced, not run. The caller
# sets pid to the server's PID after starting it.
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null || true; }
trap cleanup EXIT

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

stop_target() { # sets hwm (peak RSS, MB); SIGTERM, the server must exit 0
	hwm=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
	kill -TERM "$pid"
	if ! wait "$pid"; then
		echo "server $pid did not exit 0 after SIGTERM" >&2
		pid=
		return 1
	fi
	pid=
}
