package cli_test

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// TestFleetCommandsHelpSayWhatTheyDoOnTheFleet (fleetqa4 P3): the
// listings and verbs that take --temporal say in their --help what they do
// with a fleet, not only with this machine's dispatches and runs.
func TestFleetCommandsHelpSayWhatTheyDoOnTheFleet(t *testing.T) {
	root := cli.NewCmdRoot(&cmdutil.Factory{})
	for _, path := range [][]string{
		{"tasks"}, {"tasks", "show"},
		{"workflow", "list"}, {"workflow", "show"}, {"workflow", "resume"}, {"workflow", "cancel"},
	} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("brood %s: %v", strings.Join(path, " "), err)
		}
		if c.Flag("temporal") == nil && c.InheritedFlags().Lookup("temporal") == nil {
			t.Errorf("brood %s takes no --temporal; this test lists the commands that do", strings.Join(path, " "))
		}
		if !strings.Contains(c.Long, "fleet") || !strings.Contains(c.Long, "--temporal HOST:PORT or temporal.address") {
			t.Errorf("brood %s --help says nothing of the fleet:\n%s", strings.Join(path, " "), c.Long)
		}
	}
}
