// Command brood is a runtime for LLM coding agents built around subagent
// delegation. All of its logic lives in internal/cli and below; main only
// wires the process to it (cli.Process). It does not link the Temporal
// fleet: brood worker, brood fleet and --engine temporal run brood-fleet,
// installed beside it (cmdutil.HandOffFleet).
package main

import (
	"os"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/startgc"
)

func main() {
	startgc.Restore() // the collector was held off for the initialisers
	os.Exit(cli.Process(cli.Links()))
}
