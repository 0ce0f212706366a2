#!/usr/bin/env bash
# Query benchmark: load 3.2M logs and one 161,000-span trace into a
# fresh `otelbench serve` over OTLP/HTTP, then measure substring search and
# trace fetch idle and while `otelbench load` ingests at 5,000 req/s, and the
# server's RSS throughout.
#
#   scripts/bench-query.sh                 # full size
#   LOGS=200000 SPANS=20000 scripts/bench-query.sh   # quick
#   DATA=/tmp/qdata scripts/bench-query.sh  # keep the data dir; a second run
#                                           # skips the load and re-measures
#
# Bounded: every phase has a timeout; the server is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

LOGS=${LOGS:-3200000}
SPANS=${SPANS:-161000}
REPS=${REPS:-30}
RATE=${RATE:-5000}
LOAD_SECONDS=${LOAD_SECONDS:-60}
work=$(mktemp -d /tmp/bench-query.XXXXXX)
echo "work dir: $work"

go build -o "$work/otelbench" ./cmd/otelbench
go build -o "$work/querygen" ./scripts/querygen

data=${DATA:-$work/data}
"$work/otelbench" serve --addr 127.0.0.1:0 --data "$data" 2>"$work/serve.log" &
pid=$!
cleanup() {
  kill -INT "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  [ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null || true
  [ -z "${DATA:-}" ] && rm -rf "$data"
  return 0
}
trap cleanup EXIT

addr=""
for _ in $(seq 100); do
  addr=$(grep -o 'addr=[0-9.:]*' "$work/serve.log" | head -1 | cut -d= -f2 || true)
  [ -n "$addr" ] && break
  sleep 0.1
done
[ -n "$addr" ] || { echo "server did not start"; cat "$work/serve.log"; exit 1; }
url="http://$addr"
echo "server pid $pid at $url"

# RSS sampler: the peak of VmRSS every 200 ms, for the whole run.
( peak=0; while kill -0 "$pid" 2>/dev/null; do
    r=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "${r:-0}" -gt "$peak" ] && peak=$r && echo "$peak" > "$work/rss-peak-kb"
    sleep 0.2
  done ) &
sampler=$!

if [ -e "$data/.querygen-loaded" ]; then
  echo "== reusing the data in $data: $(cat "$data/.querygen-loaded")"
else
  echo "== load: $LOGS logs, one $SPANS-span trace"
  timeout 3600 "$work/querygen" load -endpoint "$url" -logs "$LOGS" -trace-spans "$SPANS"
  echo "$LOGS logs, $SPANS spans" > "$data/.querygen-loaded"
fi

echo "== wait for projection"
for _ in $(seq 7200); do
  lag=$(curl -s "$url/api/v1/stats" | sed -n 's/.*"lag_records":\([0-9]*\).*/\1/p')
  [ "$lag" = "0" ] && break
  sleep 0.5
done
[ "$lag" = "0" ] || { echo "projection did not catch up (lag $lag)"; exit 1; }
du -sh "$data"

# services: 10 requests of GET /api/v1/services; p50 and max of curl's total time in ms (a
# server that caches the list pays only on the first request: see the max).
services_p50() {
  for _ in $(seq 10); do
    curl -s -o /dev/null -w '%{time_total}\n' "$url/api/v1/services"
  done | sort -n | awk '{a[NR]=$1} END {printf "p50 %.2f ms  max %.2f ms", a[int(NR/2)+1]*1000, a[NR]*1000}'
}

echo "== idle"
timeout 900 "$work/querygen" measure -endpoint "$url" -n "$REPS" -pid "$pid" -label idle
echo "idle   services                     $(timeout 300 bash -c "$(declare -f services_p50); url=$url services_p50")"

echo "== while ingesting at $RATE req/s (logs, 1 record/request)"
timeout $((LOAD_SECONDS + 60)) "$work/otelbench" load --endpoint "$url" --mix logs=1 --records 1 \
  --rate "$RATE" --duration "${LOAD_SECONDS}s" --no-progress --json "$work/load.json" >"$work/load.txt" 2>&1 &
loadpid=$!
sleep 5
timeout 900 "$work/querygen" measure -endpoint "$url" -n "$REPS" -pid "$pid" -label ingest
echo "ingest services                     $(timeout 300 bash -c "$(declare -f services_p50); url=$url services_p50")"
wait "$loadpid" || echo "load exited $?"
grep -A4 "signal" "$work/load.txt" || true

echo "== server RSS peak (sampled every 200 ms): $(( $(cat "$work/rss-peak-kb") / 1024 )) MB; VmHWM $(awk '/^VmHWM:/ {print int($2/1024)}' /proc/$pid/status) MB"
