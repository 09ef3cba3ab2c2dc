package cmdutil

import (
	"github.com/broodhq/brood/internal/model/provider"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/telemetry"
)

// Links are the parts a binary links beyond the child protocol, each with
// a dependency whose package initialisers run at every start of a binary
// that links it. A main passes them in (cli.Links is brood's: all of
// them); a lean child binary passes only its provider's SDK, and its
// parent runs brood for any child that needs more (ChildExeFor).
type Links struct {
	// Delegation is what a dispatcher needs beyond the child protocol: the
	// output-schema validator and the Workflow tool.
	Delegation spawn.Extras
	// Models build the clients of each wire API (a nil one: its specs are
	// an error).
	Models provider.Adapters
	// Telemetry starts the OpenTelemetry exporters (nil: none, and a
	// warning if the environment asks for them).
	Telemetry telemetry.SetupFunc
	// Fleet is the Temporal fleet (brood-fleet's; nil in brood, which
	// hands the commands that need it to brood-fleet: HandOffFleet).
	Fleet Fleet
}
