package cmdutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/broodhq/brood/internal/childexe"
)

// TestFleetNeed: which commands brood hands to brood-fleet. brood worker
// and brood fleet always; --engine temporal surely; a listing (the fleet
// flags without --engine) when a fleet is configured by flag or setting;
// brood subagent's fleet flags serve --engine temporal alone.
func TestFleetNeed(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		address string // temporal.address
		want    fleetNeeds
	}{
		{"worker", []string{"worker"}, "", fleetSurely},
		{"a verb of fleet", []string{"fleet", "keygen"}, "", fleetSurely},
		{"engine temporal", []string{"workflow", "run", "--engine", "temporal"}, "", fleetSurely},
		{"engine local, no fleet", []string{"workflow", "list"}, "", noFleet},
		{"engine local, a fleet configured", []string{"workflow", "list"}, "127.0.0.1:7233", fleetIfConfigured},
		{"listing, none configured", []string{"tasks"}, "", noFleet},
		{"listing, --temporal", []string{"tasks", "--temporal", "127.0.0.1:7233"}, "", fleetIfConfigured},
		{"listing, temporal.address", []string{"tasks"}, "127.0.0.1:7233", fleetIfConfigured},
		{"subagent, local", []string{"subagent"}, "127.0.0.1:7233", noFleet},
		{"subagent, engine temporal", []string{"subagent", "--engine", "temporal"}, "", fleetSurely},
		{"run", []string{"run"}, "127.0.0.1:7233", noFleet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFactory(IO{Out: os.Stdout, Err: os.Stderr})
			f.Settings.Temporal.Address = tc.address
			var got fleetNeeds
			run := func(cmd *cobra.Command, _ []string) { got = fleetNeed(cmd, f) }
			engine := func(c *cobra.Command, persistent bool) *cobra.Command {
				fs := c.Flags()
				if persistent {
					fs = c.PersistentFlags()
				}
				fs.String("engine", "local", "")
				return c
			}
			fleet := func(c *cobra.Command, persistent bool) *cobra.Command {
				var fl FleetFlags
				if persistent {
					fl.AddPersistentFlags(c)
				} else {
					fl.AddFlags(c)
				}
				return c
			}
			root := &cobra.Command{Use: "brood"}
			fleetCmd := &cobra.Command{Use: "fleet", Annotations: map[string]string{FleetAnnotation: FleetAlways}}
			fleetCmd.AddCommand(&cobra.Command{Use: "keygen", Run: run})
			workflow := fleet(engine(&cobra.Command{Use: "workflow"}, true), true)
			workflow.AddCommand(&cobra.Command{Use: "run", Run: run}, &cobra.Command{Use: "list", Run: run})
			subagent := fleet(engine(&cobra.Command{Use: "subagent", Run: run, Annotations: map[string]string{FleetAnnotation: FleetEngineOnly}}, false), false)
			root.AddCommand(
				fleet(&cobra.Command{Use: "worker", Run: run, Annotations: map[string]string{FleetAnnotation: FleetAlways}}, false),
				fleetCmd, workflow, subagent,
				fleet(&cobra.Command{Use: "tasks", Run: run}, false),
				&cobra.Command{Use: "run", Run: run},
			)
			root.SetArgs(tc.args)
			got = -1
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("brood %v with temporal.address %q: fleetNeed = %d, want %d", tc.args, tc.address, got, tc.want)
			}
		})
	}
}

// TestDelegator: a child that may delegate runs brood; in brood-fleet (a
// worker) that is brood beside it when it is the same build, else
// brood-fleet itself; while telemetry is on, brood-fleet itself (brood
// exports nothing).
func TestDelegator(t *testing.T) {
	paired := func(name string) childexe.Choice {
		return childexe.Choice{Path: filepath.Join("/opt/bin", name), Lean: true}
	}
	foreign := func(name string) childexe.Choice {
		return childexe.Choice{Path: "/opt/bin/brood-fleet", Why: "/opt/bin/" + name + " is not the same build"}
	}
	for _, tc := range []struct {
		self        string
		telemetryOn bool
		choose      func(string) childexe.Choice
		want        string
	}{
		{"/opt/bin/brood", false, paired, "/opt/bin/brood"},
		{"/opt/bin/brood-fleet", false, paired, "/opt/bin/brood"},
		{"/opt/bin/brood-fleet", false, foreign, "/opt/bin/brood-fleet"},
		// brood exports nothing: brood-fleet's children export themselves.
		{"/opt/bin/brood-fleet", true, paired, "/opt/bin/brood-fleet"},
		{"/opt/bin/brood", true, paired, "/opt/bin/brood"},
	} {
		if got := delegator(tc.self, tc.telemetryOn, tc.choose); got != tc.want {
			t.Errorf("delegator(%s, telemetry %v) = %s, want %s", tc.self, tc.telemetryOn, got, tc.want)
		}
	}
}
