#!/usr/bin/env bash
# bench-catchup-replay.sh times projection catch-ups of one fixed backlog: it loads a server
# started with --no-projection once (the first build), keeps its data directory, and then, for
# each build given, ROUNDS times in turn, starts `otelbench serve` on a fresh copy of it and
# waits until the projection lag is 0. Every catch-up projects the same raw rows, so the builds
# compare without the run-to-run spread of a backlog left by a live load (a faster ingest run
# leaves a bigger backlog, whose trees are deeper). Per catch-up it prints the
# seconds from the server's start, records a second, the server's CPU per record, and the
# machine's idle and steal time over the catch-up (/proc/stat).
#
#   scripts/bench-catchup-replay.sh /tmp/old/otelbench /tmp/new/otelbench
#
# Env: MIX=logs=1,metrics=1,traces=1 RECORDS=10 DURATION=15s POOL_SIZE=1024 CONCURRENCY=256
#      ROUNDS=3 CATCHUP=300 (seconds, the bound on one catch-up)
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 OTELBENCH_BINARY..." >&2; exit 2; }
mix=${MIX:-logs=1,metrics=1,traces=1}
records=${RECORDS:-10}
dur=${DURATION:-15s}
pool=${POOL_SIZE:-1024}
conc=${CONCURRENCY:-256}
rounds=${ROUNDS:-3}
catchmax=${CATCHUP:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-catchup-replay.XXXXXX")
pid=
trap '[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up() { for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$1/healthz" && return; sleep 0.1; done; echo "server on :$1 did not start" >&2; exit 1; }
# machine prints the machine's CPU ticks since boot: all, idle (with iowait), steal.
machine() { awk '/^cpu / {print $2+$3+$4+$5+$6+$7+$8+$9, $5+$6, $9}' /proc/stat; }

# The backlog, once.
port=$(freeport)
"$1" serve --addr "127.0.0.1:$port" --data "$work/backlog" --no-projection 2>"$work/server.log" &
pid=$!
up "$port"
"$1" load --endpoint "http://127.0.0.1:$port" --no-progress --json "$work/load.json" \
	--mix "$mix" --records "$records" --pool-size "$pool" --concurrency "$conc" --duration "$dur" >/dev/null
kill -TERM "$pid"
wait "$pid" || { echo "server did not exit 0" >&2; exit 1; }
pid=
backlog=$(jq '[.signals[].records_acked] | add' "$work/load.json")
echo "# bench-catchup-replay $(date -u +%FT%TZ) $(nproc) cores; a backlog of $backlog records (--mix $mix --records $records --pool-size $pool, $conc workers, $dur); $rounds rounds"

for round in $(seq "$rounds"); do
	for bin in "$@"; do
		rm -rf "$work/data"
		cp -a "$work/backlog" "$work/data"
		sync
		port=$(freeport)
		read -r m0 i0 s0 < <(machine)
		start=$(date +%s.%N)
		"$bin" serve --addr "127.0.0.1:$port" --data "$work/data" 2>"$work/server.log" &
		pid=$!
		up "$port"
		for _ in $(seq $((catchmax * 20))); do
			[[ $(curl -sf "http://127.0.0.1:$port/api/v1/stats" | jq '.projection.lag_records') == 0 ]] && break
			sleep 0.05
		done
		secs=$(echo "$(date +%s.%N) - $start" | bc)
		cpu=$(awk '{print $14+$15}' "/proc/$pid/stat")
		read -r m1 i1 s1 < <(machine)
		lag=$(curl -sf "http://127.0.0.1:$port/api/v1/stats" | jq '.projection.lag_records')
		hwm=$(awk '/^VmHWM/ {printf "%.1f", $2 * 1024 / 1e6}' "/proc/$pid/status")
		kill -TERM "$pid"
		wait "$pid" || { echo "server did not exit 0" >&2; exit 1; }
		pid=
		[[ $lag == 0 ]] || echo "round $round $bin: $lag records left after ${catchmax}s" >&2
		printf 'round %d  %-40s catch-up %6.1f s %7d rec/s %6.2f cpu_us/rec  idle/steal %2d/%2d%%  peak_rss %6s MB\n' "$round" "$bin" \
			"$secs" "$(echo "$backlog / $secs" | bc)" "$(echo "scale=2; $cpu * 1000000 / $(getconf CLK_TCK) / $backlog" | bc)" \
			$(((i1 - i0) * 100 / (m1 - m0))) $(((s1 - s0) * 100 / (m1 - m0))) "$hwm"
	done
done
