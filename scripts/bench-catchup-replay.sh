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
# shellcheck source=scripts/lib/target.sh
. "$(dirname "$0")/lib/target.sh" # pid, work, start_serve, load_settings, closed_load, wait_caught_up, stop_target
load_settings logs=1,metrics=1,traces=1 10 15s 1024
rounds=${ROUNDS:-3}
catchmax=${CATCHUP:-300}
mkwork bench-catchup-replay

# The backlog, once.
port=$(free_port)
start_serve "$1" "$port" "$work/backlog" --no-projection
closed_load "$1" "$port" --json "$work/load.json"
stop_target
backlog=$(jq '[.signals[].records_acked] | add' "$work/load.json")
echo "# bench-catchup-replay $(date -u +%FT%TZ) $(nproc) cores; a backlog of $backlog records (--mix $mix --records $records --pool-size $pool, $conc workers, $dur); $rounds rounds"

for round in $(seq "$rounds"); do
	for bin in "$@"; do
		rm -rf "$work/data"
		cp -a "$work/backlog" "$work/data"
		sync
		port=$(free_port)
		read -r m0 i0 s0 < <(machine_ticks)
		start=$(date +%s.%N)
		start_serve "$bin" "$port" "$work/data"
		wait_caught_up "$port" "$catchmax" || true
		secs=$(echo "$(date +%s.%N) - $start" | bc)
		cpu=$(cpu_ticks "$pid")
		read -r m1 i1 s1 < <(machine_ticks)
		lag=$(lag "$port")
		stop_target
		[[ $lag == 0 ]] || echo "round $round $bin: $lag records left after ${catchmax}s" >&2
		printf 'round %d  %-40s catch-up %6.1f s %7d rec/s %6.2f cpu_us/rec  idle/steal %2d/%2d%%  peak_rss %6s MB\n' "$round" "$bin" \
			"$secs" "$(echo "$backlog / $secs" | bc)" "$(echo "scale=2; $cpu * 1000000 / $(getconf CLK_TCK) / $backlog" | bc)" \
			$(((i1 - i0) * 100 / (m1 - m0))) $(((s1 - s0) * 100 / (m1 - m0))) "$hwm"
	done
done
