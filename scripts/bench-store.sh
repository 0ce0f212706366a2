#!/usr/bin/env bash
# bench-store.sh: internal/store benchmarks (durable Append throughput with concurrent callers,
# projection records/s, CPU per record, peak RSS, zstd cost) with benchstat medians.
# Usage: [SCALE=records] scripts/bench-store.sh [OUTDIR] [COUNT]   (about 20 minutes at COUNT=5 on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/bench-store.XXXXXX)}
count=${2:-5}
mkdir -p "$out"
{ date -u +%FT%TZ; uname -sr; nproc; go version; cat /proc/loadavg; } >"$out/env.txt"
go test -c -o "$out/store.test" ./internal/store
# One process per benchmark group so peak RSS (ru_maxrss) belongs to that group.
for b in 'Append/records=1/' 'Append/records=10/'; do
	timeout 900 "$out/store.test" -test.run '^$' -test.bench "$b" -test.benchtime 3s -test.count "$count" \
		| tee -a "$out/append.txt"
done
for b in 'Project/logs/records=1$' 'Project/logs/records=10$' 'Project/logs/records=10/random' 'Project/logs/records=10/load-shaped' 'Project/traces' 'Project/metrics'; do
	timeout 900 "$out/store.test" -test.run '^$' -test.bench "$b" -test.benchtime 100000x -test.count "$count" \
		| tee -a "$out/project.txt"
done
# Random trace ids and many series cost more as the tables grow (an index keyed by trace id or
# series takes them at random places): the same cases on a larger store, SCALE records (0 skips;
# ~1 minute per run).
scale=${SCALE:-1600000}
if [ "$scale" -gt 0 ]; then
	for b in 'Project/logs/records=10/random' 'Project/traces/records=10/random' 'Project/metrics/records=10/many'; do
		timeout 900 "$out/store.test" -test.run '^$' -test.bench "$b" -test.benchtime "${scale}x" -test.count 3 \
			| tee -a "$out/project-scale.txt"
	done
fi
timeout 300 "$out/store.test" -test.run '^$' -test.bench 'ZstdPayload' -test.count "$count" | tee "$out/zstd.txt"
cat /proc/loadavg >>"$out/env.txt"
for f in append project project-scale zstd; do
	[ -e "$out/$f.txt" ] || continue
	go run golang.org/x/perf/cmd/benchstat "$out/$f.txt" >"$out/$f.benchstat" || true
done
echo "results in $out"
