#!/usr/bin/env bash
# bench-catchup-threads.sh prices a projection catch-up per thread: for each build given, in
# turn, ROUNDS times, it starts `otelbench serve` on a fresh data directory, loads it for
# DURATION, waits SETTLE seconds into the catch-up that follows and then, over WINDOW seconds,
# reads every thread's CPU (/proc/PID/task/TID/schedstat, nanoseconds on a CPU) and the records
# projected (/api/v1/stats). It prints the records projected a second, the whole process's CPU
# per record and the three busiest threads' CPU per record: the first is the committing thread,
# the second the stager. CPU per record moves far less than the rate when the host's speed
# swings, so compare builds on it, round by round.
#
#   scripts/bench-catchup-threads.sh /tmp/old/otelbench /tmp/new/otelbench
#
# Env: MIX=logs=1,metrics=1,traces=1 RECORDS=10 DURATION=15s POOL_SIZE=1024 CONCURRENCY=256
#      ROUNDS=3 SETTLE=2 WINDOW=8. The load always comes from the first build.
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 OTELBENCH_BINARY..." >&2; exit 2; }
# shellcheck source=scripts/lib/target.sh
. "$(dirname "$0")/lib/target.sh" # pid, work, start_serve, load_settings, closed_load, api_stats, stop_target
load_settings logs=1,metrics=1,traces=1 10 15s 1024
rounds=${ROUNDS:-3}
settle=${SETTLE:-2}
window=${WINDOW:-8}
mkwork bench-catchup-threads

projected() { api_stats "$port" | jq '[.signals[].records_projected] | add'; }
# threads prints "TID ns-on-cpu" for every thread of process $1.
threads() { for t in /proc/"$1"/task/*; do echo "${t##*/} $(cut -d' ' -f1 "$t/schedstat")"; done | sort; }

echo "# bench-catchup-threads $(date -u +%FT%TZ) $(nproc) cores; --mix $mix --records $records --pool-size $pool, $conc workers, $dur; window ${window}s after ${settle}s; $rounds rounds"
for round in $(seq "$rounds"); do
	for bin in "$@"; do
		start_fresh_serve "$bin"
		closed_load "$1" "$port"
		sleep "$settle"
		a=$(threads "$pid") n0=$(projected) t0=$(cpu_ticks "$pid")
		sleep "$window"
		b=$(threads "$pid") n1=$(projected) t1=$(cpu_ticks "$pid")
		lag=$(lag "$port")
		n=$((n1 - n0))
		if [[ $n -le 0 || $lag -eq 0 ]]; then
			echo "round $round $bin: the catch-up ended inside the window (projected $n, lag $lag): lengthen DURATION" >&2
			exit 1
		fi
		top=$(join <(echo "$a") <(echo "$b") | awk -v n="$n" '{printf "%.2f\n", ($3 - $2) / 1000 / n}' | sort -rn | head -3 | xargs)
		proc=$(echo "scale=2; ($t1 - $t0) * 1000000 / $(getconf CLK_TCK) / $n" | bc)
		printf 'round %d  %-40s rec/s %7d  process_us/rec %6s  busiest_threads_us/rec %s  lag_after %d\n' \
			"$round" "$bin" $((n / window)) "$proc" "$top" "$lag"
		stop_target
	done
done
