#!/usr/bin/env bash
# bench-pipeline.sh measures log agents end to end with `otelbench pipeline`:
#
#   tailer   A/B of the repository's tailer, inotify mode (stat every followed
#            file on every event) against fixed mode (read the file the event
#            names), ROUNDS alternated rounds each, syscalls per line through
#            eBPF (needs root), compared with `otelbench pipeline compare`.
#   otelcol  the Collector's filelog receiver -> otlphttp exporter at
#            10,000 lines/s for 30 s across 4 files (build it first with
#            scripts/build-otelcol.sh; OTELCOL points at the binary).
#   harness  the harness's own cost at 50,000 lines/s with --sink count.
#
# Usage: scripts/bench-pipeline.sh [tailer|otelcol|harness|all]
# Env:   ROUNDS (6), FILES (8), RATE (5000), SECS (10), OUT (a temp dir),
#        OTELCOL (/tmp/otelbench-otelcol/otelcol)
set -euo pipefail

what=${1:-all}
rounds=${ROUNDS:-6}
files=${FILES:-8}
rate=${RATE:-5000}
secs=${SECS:-10}
otelcol=${OTELCOL:-/tmp/otelbench-otelcol/otelcol}
out=${OUT:-$(mktemp -d)}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
go build -C "$root" -o "$out/otelbench" ./cmd/otelbench
go build -C "$root" -o "$out/tailer" ./scripts/tailer
ob="$out/otelbench"

tailer_ab() {
	for r in $(seq 1 "$rounds"); do
		for mode in inotify fixed; do
			echo "== round $r: tailer -mode $mode"
			"$ob" pipeline --no-progress --files "$files" --rate "$rate" --duration "${secs}s" --warmup 1s \
				--syscalls --json "$out/tailer-$mode-$r.json" -- \
				"$out/tailer" -mode "$mode" -dir {dir} -files {files} -endpoint {endpoint} -duration 1h |
				grep -E '^(   total|agent)'
		done
	done
	echo "== inotify (base) vs fixed (head)"
	"$ob" pipeline compare --base "$out/tailer-inotify-*.json" --head "$out/tailer-fixed-*.json" || true
}

otelcol_run() {
	if [[ ! -x $otelcol ]]; then
		echo "no Collector at $otelcol: run scripts/build-otelcol.sh first" >&2
		return 1
	fi
	"$ob" pipeline --no-progress --files 4 --rate 10000 --duration 30s --warmup 3s --drain 30s \
		--agent-config "$root/internal/pipeline/testdata/otelcol-filelog.yaml" --json "$out/otelcol.json" -- \
		"$otelcol" --config {config}
}

harness_run() {
	"$ob" pipeline --no-progress --files 4 --rate 50000 --duration 20s --warmup 1s --sink count \
		--json "$out/harness.json" -- \
		"$out/tailer" -mode fixed -dir {dir} -files {files} -endpoint {endpoint} -duration 1h
}

case $what in
tailer) tailer_ab ;;
otelcol) otelcol_run ;;
harness) harness_run ;;
all)
	tailer_ab
	otelcol_run
	harness_run
	;;
*)
	echo "usage: $0 [tailer|otelcol|harness|all]" >&2
	exit 2
	;;
esac
echo "reports in $out"
