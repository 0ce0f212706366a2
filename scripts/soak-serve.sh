#!/usr/bin/env bash
# soak-serve.sh runs `otelbench serve` under a fixed-rate mixed load (`otelbench load --rate`,
# open model, logs/metrics/traces) for MINUTES with a short --retention, to show that a
# long-running server's disk and memory level off: every INTERVAL seconds it prints the data
# directory's size on disk, the server's RSS (and peak, VmHWM), the projection lag and the
# durable totals of /api/v1/stats (totals_since_created). At the end it waits for the
# projection to catch up, restarts the server on the same directory, and checks through the
# durable totals that nothing acknowledged was lost: per signal, records stored == records the
# load saw acknowledged, and records projected + unprojectable == records stored. Exit 1 if not.
#
# Usage: scripts/soak-serve.sh            (10 minutes, 2 minutes of retention)
# Env:   MINUTES=10 RATE=200 (requests/s, all signals) RECORDS=10 (records/request)
#        RETENTION=2m RAW_RETENTION=1m INTERVAL=30 (seconds between samples)
#        BIN=path/to/otelbench (default: go build ./cmd/otelbench)
#        SERVE_ARGS="--max-disk 2GiB" extra `otelbench serve` flags (split on spaces)
#        OUT=dir for the data directory, logs and the load's JSON (default: a temp dir, printed)
set -euo pipefail

minutes=${MINUTES:-10}
rate=${RATE:-200}
records=${RECORDS:-10}
retention=${RETENTION:-2m}
raw_retention=${RAW_RETENTION:-1m}
interval=${INTERVAL:-30}
out=${OUT:-$(mktemp -d /tmp/soak-serve.XXXXXX)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
data=$out/data
rm -rf "$data"

if [[ -z ${BIN:-} ]]; then
	BIN=$out/otelbench
	(cd "$root" && go build -o "$BIN" ./cmd/otelbench)
fi

pid= loadpid=
cleanup() {
	[[ -n $loadpid ]] && kill "$loadpid" 2>/dev/null || true
	[[ -n $pid ]] && kill "$pid" 2>/dev/null || true
}
trap cleanup EXIT

# The load's open model keeps up to 256 connections from 127.0.0.1, serve's per-source cap:
# the samples come from another loopback address so they are not refused with the load's.
api() { curl -fsS --interface 127.0.0.2 "$url$1"; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port

start_server() {
	# shellcheck disable=SC2086 # SERVE_ARGS is a list of flags
	"$BIN" serve --addr "127.0.0.1:$port" --data "$data" --retention "$retention" \
		--raw-retention "$raw_retention" ${SERVE_ARGS:-} 2>>"$out/server.log" &
	pid=$!
	for _ in $(seq 200); do
		api /healthz >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "serve did not come up on $url (see $out/server.log)" >&2
	return 1
}

stop_server() {
	kill -TERM "$pid"
	wait "$pid" || true
	pid=
}

kib() { awk -v k="$1" '/^'"$1"':/ {print $2}' "/proc/$pid/status"; }

sample() { # prints one row: elapsed, data size, RSS, peak RSS, lag, durable records per signal
	local st size
	st=$(api /api/v1/stats)
	size=$(du -sm "$data" | cut -f1)
	printf '%6ss %8s %8s %8s %10s %8s   %s\n' "$(($(date +%s) - t0))" "$size" \
		"$(($(kib VmRSS) / 1024))" "$(($(kib VmHWM) / 1024))" \
		"$(jq -r .projection.lag_records <<<"$st")" "$(jq -r '.projection.lag_seconds | floor' <<<"$st")" \
		"$(jq -r '[.totals_since_created.signals | to_entries[] | "\(.key)=\(.value.records)"] | join(" ")' <<<"$st")"
}

start_server
echo "soak: $minutes min at $rate req/s x $records records, --retention $retention, --raw-retention $raw_retention; $out"
"$BIN" load --endpoint "$url" --rate "$rate" --records "$records" --duration "${minutes}m" \
	--no-progress --json "$out/load.json" >"$out/load.txt" 2>&1 &
loadpid=$!
t0=$(date +%s)
printf '%7s %8s %8s %8s %10s %8s   %s\n' elapsed data_MB rss_MB peak_MB lag_recs lag_s "durable records stored"
while kill -0 "$loadpid" 2>/dev/null; do
	sample
	for _ in $(seq "$interval"); do
		kill -0 "$loadpid" 2>/dev/null || break
		sleep 1
	done
done
wait "$loadpid" || { echo "load failed (see $out/load.txt)" >&2; exit 1; }
loadpid=
sample

# Let the projection catch up, then restart: the totals must come back from the database.
for _ in $(seq 600); do
	[[ $(api /api/v1/stats | jq .projection.lag_records) == 0 ]] && break
	sleep 0.2
done
stop_server
start_server
st=$(api /api/v1/stats)
sample
stop_server

fail=0
for sig in logs metrics traces; do
	acked=$(jq ".signals.$sig.records_acked // 0" "$out/load.json")
	stored=$(jq ".totals_since_created.signals.$sig.records" <<<"$st")
	projected=$(jq ".totals_since_created.signals.$sig.records_projected" <<<"$st")
	printf '%-8s acknowledged %10d  stored %10d  projected %10d\n' "$sig" "$acked" "$stored" "$projected"
	if ((stored != acked)); then
		echo "  LOST: $sig stored $stored records, the load saw $acked acknowledged" >&2
		fail=1
	fi
done
unproj=$(jq .totals_since_created.unprojectable_records <<<"$st")
sum_stored=$(jq '[.totals_since_created.signals[].records] | add' <<<"$st")
sum_projected=$(jq '[.totals_since_created.signals[].records_projected] | add' <<<"$st")
echo "unprojectable records: $unproj"
if ((sum_projected + unproj != sum_stored)); then
	echo "  NOT PROJECTED: $sum_stored stored, $sum_projected projected + $unproj unprojectable" >&2
	fail=1
fi
((fail == 0)) && echo "nothing acknowledged lost"
exit "$fail"
