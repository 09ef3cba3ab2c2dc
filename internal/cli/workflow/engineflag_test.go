package workflow_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/local"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestEngineFlagOnListAndShow (issue 26, P3): --engine on `workflow list`
// and `show` is honoured, not ignored: local lists and shows this
// project's local runs only (a fleet run, even one whose result this
// project keeps, is not one, and show says why it is not found); an
// unknown engine is refused in one line.
func TestEngineFlagOnListAndShow(t *testing.T) {
	p := newProject(t, "agents:\n  explore:\n    - say: \"checked\"\n")
	res, code, errs := p.run(p.plan("one.yaml", "name: one\nphases:\n  - id: a\n    parallel: [{agent: explore, prompt: \"look\"}]\n"))
	if code != 0 || res.Status != wf.RunDone {
		t.Fatalf("the local run: exit %d, %s\n%s", code, res.Status, errs)
	}
	fleetID := dispatch.NewID()
	kept := wf.Result{RunID: fleetID, Plan: "fleet-plan", Status: wf.RunDone, Started: time.Now().UTC(), Finished: time.Now().UTC(), Agents: 1}
	dir := filepath.Join(p.Root, ".brood", "workflows", fleetID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := local.KeepResult(p.Root, &kept); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args      []string
		code      int
		has, hasn []string
	}{
		// No fleet configured: a kept fleet run is not listed nor shown
		// (a repository can ship one; review sealrest P1-1).
		{[]string{"workflow", "list"}, 0, []string{res.RunID}, []string{fleetID}},
		{[]string{"workflow", "list", "--engine", "local"}, 0, []string{res.RunID}, []string{fleetID}},
		{[]string{"workflow", "show", res.RunID, "--engine", "local"}, 0, []string{"engine   local", " for a pool slot, ran "}, nil},
		{[]string{"workflow", "show", fleetID, "--engine", "local"}, 1, []string{"no local workflow run " + fleetID, "--engine local asks no fleet"}, nil},
		{[]string{"workflow", "show", fleetID}, 1, []string{"no workflow run " + fleetID}, []string{"fleet-plan"}},
		{[]string{"workflow", "list", "--engine", "fleet"}, 2, []string{`--engine "fleet": use local or temporal`}, nil},
	} {
		code, out, errs := p.Brood(ctx, nil, tc.args...)
		both := out + errs
		bad := code != tc.code
		for _, s := range tc.has {
			bad = bad || !strings.Contains(both, s)
		}
		for _, s := range tc.hasn {
			bad = bad || strings.Contains(both, s)
		}
		if bad {
			t.Errorf("brood %s: exit %d (want %d), want %q and not %q in:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.has, tc.hasn, both)
		}
	}
}
