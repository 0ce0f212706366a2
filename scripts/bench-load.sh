#!/usr/bin/env bash
# bench-load.sh: generator cost of `otelbench load` against a discarding
# loopback sink (scripts/sink), beside telemetrygen v0.161.0 (same signal,
# batch of 100 records) and wrk (same logs body, lua script), in one run.
# CPU is user+sys of the generator process (GNU time, i.e. getrusage). otelbench
# runs with its defaults: every send patched (live times, unique trace ids,
# advancing counters).
#
#   scripts/bench-load.sh [rounds]   # default 3 rounds; about 2 min per round
#
# Each round also prices the send-time work, as CPU per request of 3 s of logs
# (100 records, 8 connections): patched (the default) against replayed
# (--replay-ids --times replay), gzip and zstd compressed at send time, and
# https (the h1 sender over TLS, against a TLS twin of the sink built here)
# against plain http with the same sender.
#
# Then, against `otelbench serve` (separate process, temp data dir, --sync
# full): the generator's CPU beside the server's over 8 s of closed-model load
# at 32 connections (server CPU from /proc/PID/stat).
#
# Needs: go, wrk, /usr/bin/time; telemetrygen in $PEERS (default /tmp/peers),
# installed if missing with
#   GOBIN=/tmp/peers go install github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@v0.161.0
set -euo pipefail

ROUNDS=${1:-3}
PEERS=${PEERS:-/tmp/peers}
PORT=${PORT:-14399}
REQS=${REQS:-20000}          # otelbench requests per run (x100 records)
TG_RECORDS=${TG_RECORDS:-400000} # telemetrygen records per run
WORKERS=8
cd "$(dirname "$0")/.."
work=$(mktemp -d)
sink_pid=""
tls_pid=""
cleanup() {
  [[ -n $sink_pid ]] && kill "$sink_pid" 2>/dev/null
  [[ -n $tls_pid ]] && kill "$tls_pid" 2>/dev/null
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/otelbench" ./cmd/otelbench
go build -o "$work/sink" ./scripts/sink
if [[ ! -x $PEERS/telemetrygen ]]; then
  GOBIN=$PEERS GOFLAGS= timeout 600 go install github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@v0.161.0
fi
"$work/sink" -addr "127.0.0.1:$PORT" -capture "$work/logs.bin" 2>"$work/sink.log" &
sink_pid=$!
# A TLS twin of the sink: same discarding answer, a self-signed certificate.
mkdir -p "$work/tlssink"
cat >"$work/tlssink/main.go" <<'GO'
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sink"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: os.Args[1], TLSConfig: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
		})}
	log.Fatal(srv.ListenAndServeTLS("", ""))
}
GO
(cd "$work/tlssink" && go build -o "$work/tlssink-bin" main.go)
"$work/tlssink-bin" "127.0.0.1:$((PORT + 2))" 2>"$work/tlssink.log" &
tls_pid=$!
sleep 0.5
ep=http://127.0.0.1:$PORT
# Capture one logs body (100 records) for wrk.
"$work/otelbench" load --endpoint "$ep" --requests 1 --mix logs=1,metrics=0,traces=0 --records 100 --no-progress >/dev/null
cat >"$work/post.lua" <<LUA
local f = assert(io.open("$work/logs.bin", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/x-protobuf"
LUA

# cpu CMD...: runs CMD under GNU time, prints user+sys seconds.
cpu() {
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >"$work/out" 2>&1
  awk '{printf "%.3f", $1+$2}' "$work/time"
}

results=$work/results
: >"$results"
for round in $(seq "$ROUNDS"); do
  for sig in logs traces metrics; do
    c=$(cpu timeout 120 "$work/otelbench" load --endpoint "$ep" --requests "$REQS" --mix "$sig=1" \
      --records 100 --spans-per-trace 5 --concurrency $WORKERS --no-progress)
    echo "otelbench $sig $c $((REQS * 100)) $REQS" >>"$results"
    per=$((TG_RECORDS / WORKERS))
    case $sig in
      logs) args=(logs --logs "$per") ;;
      traces) args=(traces --traces "$((per / 5))" --child-spans 4) ;;
      metrics) args=(metrics --metrics "$per" --metric-type Sum) ;;
    esac
    c=$(cpu timeout 300 "$PEERS/telemetrygen" "${args[@]}" --otlp-http --otlp-endpoint "127.0.0.1:$PORT" \
      --otlp-insecure --workers $WORKERS --rate 0 --batch-size 100)
    echo "telemetrygen $sig $c $TG_RECORDS $((TG_RECORDS / 100))" >>"$results"
  done
  c=$(cpu timeout 30 wrk -t1 -c$WORKERS -d3s -s "$work/post.lua" "$ep/v1/logs")
  n=$(awk '/requests in/ {print $1}' "$work/out")
  echo "wrk logs $c $((n * 100)) $n" >>"$results"
  c=$(cpu timeout 60 "$work/otelbench" load --endpoint "$ep" --duration 3s --mix logs=1,metrics=0,traces=0 \
    --records 100 --concurrency $WORKERS --no-progress)
  n=$(awk '$1=="total" && NF>10 {print $2; exit}' "$work/out")
  echo "otelbench-3s logs $c $((n * 100)) $n" >>"$results"
  # Send-time work: the same 3 s of logs per variant.
  for variant in replayed gzip zstd h1-http h1-https; do
    case $variant in
      replayed) args=(--endpoint "$ep" --replay-ids --times replay) ;;
      gzip | zstd) args=(--endpoint "$ep" --compression "$variant") ;;
      h1-http) args=(--endpoint "$ep" --sender h1) ;;
      h1-https) args=(--endpoint "https://127.0.0.1:$((PORT + 2))" --insecure-skip-verify) ;;
    esac
    c=$(cpu timeout 60 "$work/otelbench" load "${args[@]}" --duration 3s --mix logs=1,metrics=0,traces=0 \
      --records 100 --concurrency $WORKERS --no-progress)
    n=$(awk '$1=="total" && NF>10 {print $2; exit}' "$work/out")
    echo "$variant logs $c $((n * 100)) $n" >>"$results"
  done
  echo "round $round done" >&2
done

# Generator vs server CPU against otelbench serve.
"$work/otelbench" serve --addr "127.0.0.1:$((PORT + 1))" --data "$work/data" >"$work/serve.log" 2>&1 &
serve_pid=$!
sleep 1
srv_cpu() { awk '{printf "%.2f", ($14+$15)/100}' "/proc/$serve_pid/stat"; }
for round in $(seq "$ROUNDS"); do
  a=$(srv_cpu)
  c=$(cpu timeout 60 "$work/otelbench" load --endpoint "http://127.0.0.1:$((PORT + 1))" --duration 8s --concurrency 32 --no-progress)
  b=$(srv_cpu)
  n=$(awk '$1=="total" && NF>10 {print $2; exit}' "$work/out")
  echo "serve $round $c $a $b $n" >>"$results.serve"
done
kill "$serve_pid"
wait "$serve_pid" || true

echo "# medians of $ROUNDS rounds, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r)"
printf "%-14s %-8s %12s %16s %18s\n" tool signal cpu_s records_per_cpu_s cpu_s_per_1k_req
awk '{ key=$1" "$2; cpu[key]=cpu[key]" "$3; rpc[key]=rpc[key]" "($4/$3); cpk[key]=cpk[key]" "(1000*$3/$5); keys[key]=1 }
  function median(s,   a, n, i, j, t) { n=split(s, a, " "); for (i=1;i<=n;i++) for (j=i+1;j<=n;j++) if (a[j]<a[i]) {t=a[i];a[i]=a[j];a[j]=t}
    return n%2 ? a[(n+1)/2] : (a[n/2]+a[n/2+1])/2 }
  END { for (k in keys) { split(k, p, " "); printf "%-14s %-8s %12.3f %16.0f %18.4f\n", p[1], p[2], median(cpu[k]), median(rpc[k]), median(cpk[k]) } }' "$results" | sort
echo
echo "# ratios per round (otelbench records/CPU-s over telemetrygen's; otelbench-3s CPU/request over wrk's)"
awk '{ v[$1" "$2" "NR]=$0 }
  $1=="otelbench" { o[$2]=$4/$3 } $1=="telemetrygen" { printf "records/cpu-s %s: %.1fx\n", $2, o[$2]/($4/$3) }
  $1=="wrk" { w=$3/$5 } $1=="otelbench-3s" { p=$3/$5; printf "cpu/request vs wrk: %.2fx\n", p/w }
  $1=="replayed" { printf "patched over replayed cpu/request: %.2fx\n", p/($3/$5) }
  $1=="gzip" || $1=="zstd" { printf "%s over none cpu/request: %.2fx\n", $1, ($3/$5)/p }
  $1=="h1-http" { h=$3/$5 } $1=="h1-https" { printf "https over http (h1) cpu/request: %.2fx\n", ($3/$5)/h }' "$results"
echo
echo "# against otelbench serve (--sync full), 8 s, 32 connections: generator CPU / server CPU"
awk '{ srv=$5-$4; printf "round %d: %d requests, generator %.2f CPU-s, server %.2f CPU-s, ratio %.3f\n", $2, $6, $3, srv, $3/srv }' "$results.serve"
