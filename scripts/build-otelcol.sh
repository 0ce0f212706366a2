#!/usr/bin/env bash
# build-otelcol.sh builds an OpenTelemetry Collector from the Go module proxy
# with the components otelbench measures beside itself or drives:
#   receivers:  otlp (core), filelog (contrib)
#   exporters:  nop, otlphttp, otlp (gRPC) (core)
#   extensions: file_storage (contrib)
# bench-serve.sh runs it as otlp -> nop, the ceiling of an OTLP/HTTP front end
# doing the same decode work without storage; `otelbench pipeline` runs it as
# filelog -> otlphttp, a log agent to benchmark (docs/pipeline.md).
#
# Usage: scripts/build-otelcol.sh [OUT]   (default OUT: /tmp/otelbench-otelcol/otelcol)
# Env:   OTELCOL_VERSION (default v0.165.0; core and contrib modules follow it,
#        the core's stable v1 modules are the ones that release pins)
# Nothing is written to the repository: the module lives in a temp dir.
set -euo pipefail

out=${1:-/tmp/otelbench-otelcol/otelcol}
ver=${OTELCOL_VERSION:-v0.165.0}
contrib=github.com/open-telemetry/opentelemetry-collector-contrib
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$(dirname "$out")"
cd "$work"
cat > main.go <<'GO'
// Command otelcol is a Collector with the components otelbench benchmarks:
// the OTLP and filelog receivers, the nop, otlphttp and otlp exporters and
// the file_storage extension.
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/filelogreceiver"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/nopexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func factories() (otelcol.Factories, error) {
	recv, err := otelcol.MakeFactoryMap[receiver.Factory](otlpreceiver.NewFactory(), filelogreceiver.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	exp, err := otelcol.MakeFactoryMap[exporter.Factory](nopexporter.NewFactory(),
		otlphttpexporter.NewFactory(), otlpexporter.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	ext, err := otelcol.MakeFactoryMap[extension.Factory](filestorage.NewFactory())
	if err != nil {
		return otelcol.Factories{}, err
	}
	return otelcol.Factories{Receivers: recv, Exporters: exp, Extensions: ext,
		Telemetry: otelconftelemetry.NewFactory()}, nil
}

func main() {
	set := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelcol", Description: "otlp, filelog -> nop, otlphttp, otlp; file_storage", Version: "bench"},
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
	"go.opentelemetry.io/collector/exporter/otlphttpexporter@$ver" \
	"go.opentelemetry.io/collector/exporter/otlpexporter@$ver" \
	"$contrib/receiver/filelogreceiver@$ver" \
	"$contrib/extension/storage/filestorage@$ver" \
	go.opentelemetry.io/collector/confmap/provider/fileprovider \
	"go.opentelemetry.io/collector/service@$ver" >/dev/null
go mod tidy >/dev/null
CGO_ENABLED=0 go build -trimpath -o "$out" .

# Smoke checks: the pipeline bench-serve.sh runs, and the filelog agent
# pipeline of docs/pipeline.md with every added component.
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
mkdir -p storage
cat > smoke-agent.yaml <<YAML
extensions:
  file_storage:
    directory: $work/storage
receivers:
  filelog:
    include: [$work/*.log]
    storage: file_storage
exporters:
  otlphttp:
    endpoint: http://127.0.0.1:4318
  otlp:
    endpoint: 127.0.0.1:4317
service:
  extensions: [file_storage]
  pipelines:
    logs: {receivers: [filelog], exporters: [otlphttp, otlp]}
YAML
"$out" validate --config smoke-agent.yaml
echo "$out"
