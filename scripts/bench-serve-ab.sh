#!/usr/bin/env bash
# bench-serve-ab.sh runs the same closed-model load against `otelbench serve`
# started with each of several flag sets, interleaved ROUNDS times, and prints
# per run: req/s, the server's CPU per request (user+sys from /proc/PID/stat),
# the projection lag when the load ends, how long projection then takes to
# catch up (bounded at CATCHUP seconds, default 120; 0 skips it), at what rate
# and at what CPU per record (the whole process's user+sys over the catch-up,
# steadier than the rate when the host's speed swings), the machine's idle and
# steal time over the catch-up (/proc/stat: idle is CPU the catch-up left
# unused, steal is CPU the hypervisor gave elsewhere), the server's peak RSS
# (VmHWM), and the pages the projector wrote and read per 1,000 records
# projected (exact, where the rates are noisy). No Collector: for comparing
# serve variants on a noisy machine, where alternating beats comparing runs
# minutes apart.
#
#   scripts/bench-serve-ab.sh "--projection-lag 0" "--projection-lag 5m"
#
# Env: MIX=logs=1 RECORDS=1 DURATION=15s CONCURRENCY=256 ROUNDS=3 POOL_SIZE=16 (load's --pool-size)
#      BIN=path/to/otelbench (default: go build ./cmd/otelbench)
#      BINS="old/otelbench new/otelbench" alternates builds too (each with every flag set); the
#      load always comes from the first
#
#   BINS="/tmp/a/otelbench /tmp/b/otelbench" MIX=logs=1,metrics=1,traces=1 RECORDS=10 \
#     DURATION=20s POOL_SIZE=1024 CATCHUP=300 ROUNDS=2 scripts/bench-serve-ab.sh
#      CATCHUP=120 TMPDIR=/dev/shm puts the data dir on tmpfs (takes the disk out of the comparison)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/target.sh
. scripts/lib/target.sh # pid, work, start_serve, load_settings, closed_load, lag, wait_caught_up, stop_target
load_settings logs=1 1 15s 16
rounds=${ROUNDS:-3}
catchmax=${CATCHUP:-120}
mkwork bench-serve-ab
if [[ -z ${BIN:-} && -z ${BINS:-} ]]; then
	BIN=$work/otelbench
	go build -o "$BIN" ./cmd/otelbench
fi
read -r -a bins <<<"${BINS:-$BIN}"
loadbin=${bins[0]}
[[ $# -gt 0 ]] || set -- ""

echo "# bench-serve-ab $(date -u +%FT%TZ) $(nproc) cores; --mix $mix --records $records --pool-size $pool, $conc workers, $dur; $rounds rounds"
for round in $(seq "$rounds"); do
	for bin in "${bins[@]}"; do
	for flags in "$@"; do
		# shellcheck disable=SC2086 # flags is a list of flags
		start_fresh_serve "$bin" --sync full $flags
		t0=$(cpu_ticks "$pid")
		closed_load "$loadbin" "$port" --json "$work/load.json"
		t1=$(cpu_ticks "$pid")
		end=$(lag "$port")
		read -r m0 i0 s0 < <(machine_ticks)
		start=$(date +%s.%N)
		wait_caught_up "$port" "$catchmax" || true
		catchup=$(echo "$(date +%s.%N) - $start" | bc)
		t2=$(cpu_ticks "$pid")
		read -r m1 i1 s1 < <(machine_ticks)
		idle=$(((i1 - i0) * 100 / (m1 > m0 ? m1 - m0 : 1)))
		steal=$(((s1 - s0) * 100 / (m1 > m0 ? m1 - m0 : 1)))
		ok=$(jq '.totals.status["2xx"]' "$work/load.json")
		rps=$(jq '.totals.requests_per_second|floor' "$work/load.json")
		cpu=$(((t1 - t0) * 1000000 / $(getconf CLK_TCK) / (ok > 0 ? ok : 1)))
		name=${flags:-(defaults)}
		[[ ${#bins[@]} -gt 1 ]] && name="$bin $name"
		rate=0
		catchcpu=-
		if [[ $end -gt 0 && $catchmax -gt 0 ]]; then
			rate=$(echo "$end / $catchup" | bc)
			catchcpu=$(echo "scale=2; ($t2 - $t1) * 1000000 / $(getconf CLK_TCK) / $end" | bc)
		fi
		# Pages the projector wrote and read per 1,000 records projected (servers that count them).
		pages=$(api_stats "$port" | jq -r '([.signals[].records_projected] | add) as $n
			| if .projection.pages_written == null or $n == 0 then "-"
			  else "\(.projection.pages_written * 1000 / $n | floor)/\(.projection.pages_read * 1000 / $n | floor)" end')
		stop_target
		printf 'round %d  %-40s req/s %7d  cpu_us/req %4d  lag_at_end %9s  catch-up %6.1f s %7d rec/s %6s cpu_us/rec  idle/steal %2d/%2d%%  peak_rss %6s MB  pages_w/r_per_krec %s\n' \
			"$round" "$name" "$rps" "$cpu" "$end" "$catchup" "$rate" "$catchcpu" "$idle" "$steal" "$hwm" "$pages"
	done
	done
done
