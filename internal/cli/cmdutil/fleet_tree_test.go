package cmdutil_test

import (
	"os"
	"testing"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/cli/cmdutil"
)

// TestFleetNeedOfBroodsCommands: which of brood's real commands it hands
// to brood-fleet, so that a command that loses (or gains) its annotation
// or its fleet flags fails here.
func TestFleetNeedOfBroodsCommands(t *testing.T) {
	const addr = "127.0.0.1:7233"
	for _, tc := range []struct {
		args    []string
		address string // temporal.address
		want    cmdutil.FleetNeeds
	}{
		{[]string{"worker"}, "", cmdutil.FleetSurely},
		{[]string{"fleet", "keygen"}, "", cmdutil.FleetSurely},
		{[]string{"subagent", "--engine", "temporal", "explore", "look"}, "", cmdutil.FleetSurely},
		{[]string{"subagent", "explore", "look"}, addr, cmdutil.NoFleet},
		{[]string{"workflow", "run", "--engine", "temporal", "plan.yaml"}, "", cmdutil.FleetSurely},
		{[]string{"workflow", "run", "plan.yaml"}, addr, cmdutil.NoFleet},
		{[]string{"workflow", "validate", "plan.yaml"}, addr, cmdutil.NoFleet},
		{[]string{"workflow", "list"}, addr, cmdutil.FleetIfConfigured},
		{[]string{"workflow", "list"}, "", cmdutil.NoFleet},
		{[]string{"workflow", "show", "--temporal", addr, "ID"}, "", cmdutil.FleetIfConfigured},
		{[]string{"tasks"}, addr, cmdutil.FleetIfConfigured},
		{[]string{"tasks", "show", "ID"}, addr, cmdutil.FleetIfConfigured},
		{[]string{"tasks", "resume", "ID"}, addr, cmdutil.FleetIfConfigured},
		{[]string{"tasks", "show", "ID"}, "", cmdutil.NoFleet},
		{[]string{"run", "hello"}, addr, cmdutil.NoFleet},
		{[]string{"agents"}, addr, cmdutil.NoFleet},
	} {
		f := cmdutil.NewFactory(cmdutil.IO{Out: os.Stdout, Err: os.Stderr})
		f.Settings.Temporal.Address = tc.address
		cmd, rest, err := cli.NewCmdRoot(f).Find(tc.args)
		if err != nil {
			t.Fatalf("brood %v: %v", tc.args, err)
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Fatalf("brood %v: %v", tc.args, err)
		}
		if got := cmdutil.FleetNeed(cmd, f); got != tc.want {
			t.Errorf("brood %v with temporal.address %q: fleetNeed = %d, want %d", tc.args, tc.address, got, tc.want)
		}
	}
}
