package workflow_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestKeptFleetRunsWhileTheFleetIsDown (fleetqa3 P2-3): with the Temporal
// server unreachable, `workflow list` lists the fleet runs whose result
// this project keeps (never "no workflow runs yet"), and `workflow show`
// shows one from that copy, saying so.
func TestKeptFleetRunsWhileTheFleetIsDown(t *testing.T) {
	p := newProject(t, "agents: {}\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close() // nothing listens there: the fleet is down
	id := dispatch.NewID()
	res := wf.Result{RunID: id, Plan: "kept-plan", Status: wf.RunDone, Started: time.Now().UTC(), Finished: time.Now().UTC(), Agents: 1,
		Phases: []wf.PhaseResult{{ID: "w", Status: wf.PhaseDone, Calls: []wf.CallRecord{{Key: "w/0", Status: wf.CallDone, Output: "ok"}}}}}
	dir := filepath.Join(p.Root, ".brood", "workflows", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := dispatch.WriteJSON(filepath.Join(dir, "result.json"), &res); err != nil {
		t.Fatal(err)
	}
	env := []string{"BROOD_TEMPORAL_ADDRESS=" + down}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errs := p.Brood(ctx, env, "workflow", "list")
	if code != 0 || !strings.Contains(out, id) || strings.Contains(out, "no workflow runs yet") {
		t.Errorf("workflow list with the fleet down: exit %d\nstdout: %s\nstderr: %s\nwant the kept run %s", code, out, errs, id)
	}
	for _, q := range []string{id, id[:12]} {
		code, out, errs = p.Brood(ctx, env, "workflow", "show", q)
		if code != 0 || !strings.Contains(out, "kept-plan") || !strings.Contains(out, "kept result") || !strings.Contains(out, "status   done") {
			t.Errorf("workflow show %s with the fleet down: exit %d\nstdout: %s\nstderr: %s\nwant it from the kept result", q, code, out, errs)
		}
	}
}
