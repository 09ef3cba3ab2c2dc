// Command brood-fleet is brood with the Temporal fleet linked in: brood
// worker, brood fleet, and every command with --engine temporal (or that
// reads a configured fleet's calls). brood hands it those commands whole,
// with the same arguments and environment, when it is installed beside
// brood and is the same build (`go install
// github.com/broodhq/brood/cmd/...@latest` installs it with brood,
// brood-child and brood-child-openai), so that brood itself does not pay
// for go.temporal.io's and the S3 store's (the AWS SDK's) package
// initialisers at every start. It also links the OpenTelemetry exporters:
// brood hands it every command that runs agents while the
// OTEL_EXPORTER_OTLP_* variables ask for export (cmdutil.HandOffTelemetry). Run it directly as you would brood.
package main

import (
	"os"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/startgc"
	"github.com/broodhq/brood/internal/root/fleetlink"
	"github.com/broodhq/brood/internal/telemetry/otlp"
)

func main() {
	startgc.Restore() // the collector was held off for the initialisers
	links := cli.Links()
	links.Fleet = fleetlink.Link{}
	links.Telemetry = otlp.Setup // brood hands agent runs here when telemetry is on
	os.Exit(cli.Process(links))
}
