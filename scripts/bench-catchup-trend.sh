#!/usr/bin/env bash
# bench-catchup-trend.sh follows one catch-up of `otelbench serve` window by
# window, for each build given: the same closed-model load for DURATION, then
# every WINDOW seconds until projection has caught up, the records projected in
# the window, the pages the projector wrote and read per 1,000 of them (exact,
# whatever the host's speed) and telemetry.db's size. Whether a catch-up slows
# as the database grows shows in the pages long before it shows in a rate on a
# noisy host.
#
#   MIX=metrics=1 scripts/bench-catchup-trend.sh /tmp/old/otelbench /tmp/new/otelbench
#
# Env: MIX=logs=1,metrics=1,traces=1 RECORDS=10 DURATION=15s POOL_SIZE=1024
#      CONCURRENCY=256 WINDOW=4 CATCHUP=300 (seconds at most). The load always
#      comes from the first build.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 ]] || { echo "usage: $0 BIN [BIN...]" >&2; exit 2; }
# shellcheck source=scripts/lib/target.sh
. scripts/lib/target.sh # pid, work, start_serve, load_settings, closed_load, api_stats, stop_target
load_settings logs=1,metrics=1,traces=1 10 15s 1024
window=${WINDOW:-4}
catchmax=${CATCHUP:-300}
mkwork bench-catchup-trend

# sample prints: records projected, pages written, pages read, lag.
sample() {
	api_stats "$port" | jq -r '"\([.signals[].records_projected] | add) \(.projection.pages_written) \(.projection.pages_read) \(.projection.lag_records)"'
}

echo "# bench-catchup-trend $(date -u +%FT%TZ) $(nproc) cores; --mix $mix --records $records --pool-size $pool, $conc workers, $dur; ${window}s windows"
for bin in "$@"; do
	start_fresh_serve "$bin"
	closed_load "$1" "$port"
	echo "$bin"
	read -r n0 w0 r0 lag < <(sample)
	for i in $(seq $((catchmax / window))); do
		[[ $lag == 0 ]] && break
		sleep "$window"
		read -r n1 w1 r1 lag < <(sample)
		n=$((n1 - n0))
		size=$(du -m "$work/data/telemetry.db" | cut -f1)
		if [[ $n -gt 0 ]]; then
			printf '  window %3d  rec/s %7d  pages_w/krec %5d  pages_r/krec %5d  telemetry.db %5d MB  lag %9d\n' \
				"$i" $((n / window)) $(((w1 - w0) * 1000 / n)) $(((r1 - r0) * 1000 / n)) "$size" "$lag"
		fi
		n0=$n1 w0=$w1 r0=$r1
	done
	stop_target
done
