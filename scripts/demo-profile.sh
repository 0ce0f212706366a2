#!/usr/bin/env bash
# demo-profile.sh: profile the reproducer workloads with otelbench profile.
#  1. tailer: inotify mode (stat every followed file on every event) vs poll
#     mode (stat once per interval), driven by the writer at RATE lines/s;
#     prints syscalls per line and newfstatat per line for both.
#  2. fdscan: counting fds by listing /proc/self/fd vs one stat.
#  3. accuracy: a loop of exactly N fstat calls is reported as N.
# Needs root (BPF), go and jq. Bounded: about 30 s.
set -euo pipefail

RATE=${RATE:-2000}
SECS=${SECS:-4}
FILES=${FILES:-8}
N=${N:-100000}

cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/otelbench" ./cmd/otelbench
go build -o "$work/tailer" ./scripts/tailer
go build -o "$work/fdscan" ./scripts/fdscan
go build -o "$work/syscall-loop" ./scripts/syscall-loop
ob="$work/otelbench"

# tail_mode MODE: follow for SECS+1 s while the writer appends SECS*RATE lines.
tail_mode() {
	local mode=$1 dir="$work/logs-$1"
	mkdir -p "$dir"
	"$work/tailer" -mode write -dir "$dir" -files "$FILES" -rate 1 -duration 1ms >/dev/null
	( sleep 0.3; "$work/tailer" -mode write -dir "$dir" -files "$FILES" -rate "$RATE" -duration "${SECS}s" >/dev/null ) &
	"$ob" profile --sort count --top 6 --json "$work/$mode.json" --stacks --pprof "$work/$mode.pb.gz" -- \
		"$work/tailer" -mode "$mode" -dir "$dir" -files "$FILES" -duration "$((SECS + 1))s" >"$work/$mode.out" 2>"$work/$mode.report"
	wait
	local lines
	lines=$(awk '/^lines/ {print $2}' "$work/$mode.out")
	echo "== tailer -mode $mode: $lines lines at $RATE lines/s, $FILES files followed"
	sed -n '3,9p' "$work/$mode.report"
	jq -r --argjson lines "$lines" '
		"syscalls/line: \(.total_syscalls / $lines | . * 100 | round / 100)   newfstatat/line: \(((.syscalls[] | select(.name == "newfstatat") | .count) // 0) / $lines | . * 100 | round / 100)"' \
		"$work/$mode.json"
	echo
}

tail_mode inotify
tail_mode poll
echo "== where the inotify tailer's newfstatat calls come from (go tool pprof -top, by count)"
go tool pprof -sample_index=syscalls -top -cum -focus='syscall:newfstatat' -nodecount=8 "$work/inotify.pb.gz" 2>/dev/null | tail -n 9
echo

for mode in readdir stat; do
	echo "== fdscan -mode $mode (1000 fds, 2000 counts)"
	"$ob" profile --sort count --top 4 -- "$work/fdscan" -mode "$mode" -fds 1000 -n 2000 2>&1 | sed -n '1,7p'
	echo
done

echo "== accuracy: $N fstat calls"
"$ob" profile --json "$work/acc.json" -- "$work/syscall-loop" -n "$N" -call fstat >/dev/null 2>&1
jq -r '.syscalls[] | select(.name == "fstat") | "reported fstat calls: \(.count)"' "$work/acc.json"
