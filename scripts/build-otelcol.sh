#!/usr/bin/env bash
# build-otelcol.sh builds a minimal OpenTelemetry Collector (otlpreceiver +
# nopexporter) from the Go module proxy: the peer that bench-serve.sh runs
# beside `otelbench serve`. It persists nothing, so it is the ceiling of an
# OTLP/HTTP front end doing the same decode work without storage.
#
# Usage: scripts/build-otelcol.sh [OUT]   (default OUT: /tmp/otelbench-otelcol/otelcol)
# Env:   OTELCOL_VERSION (default v0.165.0; core modules follow it)
# Nothing is written to the repository: the module lives in a temp dir.
set -euo pipefail

out=${1:-/tmp/otelbench-otelcol/otelcol}
ver=${OTELCOL_VERSION:-v0.165.0}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$(dirname "$out")"
cd "$work"
cat > main.go <<'GO'
// Command otelcol is a Collector with only the OTLP receiver and the nop
// exporter, for side-by-side ingest benchmarks.
package main

import (
	"log"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/nopexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func factories() (otelcol.Factories, error) {
	recv, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exp, err := otelcol.MakeFactoryMap[exporter.Factory](nopexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: recv, Exporters: exp, Telemetry: otelconftelemetry.NewFactory()}, nil
}

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelcol", Description: "otlpreceiver + nopexporter", Version: "bench"},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
				DefaultScheme:     "file",
			},
		},
	}
	if err := otelcol.NewCommand(set).Execute(); err != nil {
		log.Fatal(err)
	}
}
GO
go mod init otelbench.local/otelcol >/dev/null 2>&1
go get "go.opentelemetry.io/collector/otelcol@$ver" \
	"go.opentelemetry.io/collector/receiver/otlpreceiver@$ver" \
	"go.opentelemetry.io/collector/exporter/nopexporter@$ver" \
	go.opentelemetry.io/collector/confmap/provider/fileprovider \
	"go.opentelemetry.io/collector/service@$ver" >/dev/null
go mod tidy >/dev/null
CGO_ENABLED=0 go build -trimpath -o "$out" .

# Smoke check: the binary must accept the pipeline bench-serve.sh runs.
cat > smoke.yaml <<'YAML'
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:0
exporters:
  nop:
service:
  pipelines:
    logs: {receivers: [otlp], exporters: [nop]}
YAML
"$out" validate --config smoke.yaml
echo "$out"
