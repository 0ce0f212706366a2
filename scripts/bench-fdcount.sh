#!/usr/bin/env bash
# bench-fdcount.sh: the fdcount figures of docs/benchmarks/fdcount.md.
#
# Side by side against a child holding N open fds (N = 100, 1k, 10k, 19k;
# the hard RLIMIT_NOFILE here is 20,000): the stat fast path, the getdents64
# fallback, the BPF task_file iterator (bpf; as root), prometheus/procfs
# FileDescriptorsLen (fast path, and its Readdirnames path), and
# `ls /proc/PID/fd | wc -l`; then per-fd slopes with a
# projection to 1M fds (marked projected), and `fdcount --all` with hyperfine.
#
# Needs: go, hyperfine, jq; root for the bpf rows. Bounded: about 15-20 minutes.
# Usage: scripts/bench-fdcount.sh [OUTDIR]   (default: a new temp dir)
set -euo pipefail

cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/bench-fdcount.XXXXXX)}
mkdir -p "$out"
bin=$out/bin
mkdir -p "$bin"
go build -o "$bin/fdcount" ./cmd/fdcount
go build -o "$bin/fdholder" ./scripts/fdholder
rounds=${ROUNDS:-50}

echo "# $(date -u +%FT%TZ) $(uname -sr), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/env.txt"

echo "== go test -bench SideBySide (round-robin, random order, medians of $rounds rounds)"
timeout 900 go test -run '^$' -bench 'SideBySide' -benchtime "${rounds}x" -timeout 15m \
	./internal/procfd | tee "$out/sidebyside.txt"

echo "== go test -bench StatCold (stat against 100..19k fds, caches disturbed alike)"
timeout 600 go test -run '^$' -bench 'StatCold' -benchtime 300x -count 3 -timeout 10m \
	./internal/procfd | tee "$out/statcold.txt"

echo "== go test -bench Count (benchstat format)"
timeout 900 go test -run '^$' -bench 'Count/|All/' -benchtime 0.5s -count 3 -timeout 15m \
	./internal/procfd | tee "$out/count.txt"

echo "== go test -bench CPUTime (getrusage user/sys per count, GC included)"
timeout 900 go test -run '^$' -bench 'CPUTime' -benchtime 50x -count 5 -timeout 15m \
	./internal/procfd | tee "$out/cpu.txt"
go run golang.org/x/perf/cmd/benchstat -col /N "$out/cpu.txt" | tee "$out/cpu-benchstat.txt"
go run golang.org/x/perf/cmd/benchstat -col /N "$out/count.txt" > "$out/count-benchstat.txt"

echo "== per-fd slope, (t(19k) - t(100)) / 18,900, and projection to 1M fds (PROJECTED)"
awk '
/^BenchmarkSideBySide\/N=/ {
	split($1, a, "[=-]"); n = a[2]
	for (i = 3; i < NF; i++) if ($(i+1) ~ /-µs$/) { m = $(i+1); sub(/-µs$/, "", m); t[n, m] = $i; ms[m] = 1 }
}
END {
	printf "%-16s %12s %12s %14s %18s\n", "method", "t(100) µs", "t(19k) µs", "slope ns/fd", "1M fds (projected)"
	for (m in ms) {
		s = (t[19000, m] - t[100, m]) * 1000 / 18900
		p = t[100, m] + s * (1000000 - 100) / 1000
		printf "%-16s %12.1f %12.1f %14.2f %15.1f ms\n", m, t[100, m], t[19000, m], s, p / 1000
	}
}' "$out/sidebyside.txt" | tee "$out/slopes.txt"

echo "== hyperfine: whole commands against a holder of N fds"
for n in 100 1000 10000 19000; do
	rm -f "$out/holder.pid"
	"$bin/fdholder" -n "$n" -pidfile "$out/holder.pid" -timeout 5m &
	holder=$!
	for _ in $(seq 100); do [[ -s $out/holder.pid ]] && break; sleep 0.05; done
	pid=$(cat "$out/holder.pid")
	hyperfine -N --warmup 3 --runs 30 --export-json "$out/cmd-$n.json" \
		-n "fdcount (stat)" "$bin/fdcount $pid" \
		-n "fdcount --method readdir" "$bin/fdcount --method readdir $pid" \
		-n "fdcount --method bpf" "$bin/fdcount --method bpf $pid" >/dev/null
	hyperfine -N --warmup 3 --runs 30 --export-json "$out/ls-$n.json" \
		-n "sh -c 'ls | wc -l'" "sh -c 'ls /proc/$pid/fd | wc -l'" >/dev/null
	kill "$holder"
	wait "$holder" || true
	for f in "$out/cmd-$n.json" "$out/ls-$n.json"; do
		jq -r --arg n "$n" '.results[] | "N=\($n)\t\(.command)\tmedian \(.median*1000 | . * 100 | round / 100) ms\tuser \(.user*1000 | . * 100 | round / 100) ms\tsystem \(.system*1000 | . * 100 | round / 100) ms"' "$f"
	done
done | tee "$out/commands.txt"

echo "== hyperfine: fdcount --all ($(ls /proc | grep -c '^[0-9]') processes)"
hyperfine -N --warmup 5 --runs 100 --export-json "$out/all.json" \
	"$bin/fdcount --all" "$bin/fdcount --all --top 10" "$bin/fdcount --all --method readdir" \
	"$bin/fdcount --all --method bpf" >/dev/null
jq -r '.results[] | "\(.command)\tmedian \(.median*1000 | . * 100 | round / 100) ms\tmean \(.mean*1000 | . * 100 | round / 100) ms\tmin \(.min*1000 | . * 100 | round / 100) ms"' \
	"$out/all.json" | sed "s|$bin/||" | tee "$out/all.txt"

echo "results in $out"
