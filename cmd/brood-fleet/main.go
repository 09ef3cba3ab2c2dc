// Command brood-fleet is brood with the Temporal fleet linked in: brood
// worker, brood fleet, and every command with --engine temporal (or that
// reads a configured fleet's calls). brood hands it those commands whole,
// with the same arguments and environment, when it is installed beside
// brood and is the same build (`go install
// github.com/broodhq/brood/cmd/...@latest` installs it with brood,
// brood-child and brood-child-openai), so that brood itself does not pay
// for go.temporal.io's and the S3 store's (the AWS SDK's) package
// initialisers at every start. Run it directly as you would brood.
package main

import (
	"os"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/startgc"
	"github.com/broodhq/brood/internal/root/fleetlink"
)

func main() {
	startgc.Restore() // the collector was held off for the initialisers
	links := cli.Links()
	links.Fleet = fleetlink.Link{}
	os.Exit(cli.Process(links))
}
