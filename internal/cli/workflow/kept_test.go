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
	"github.com/broodhq/brood/internal/engine/local"
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
	if err := local.KeepResult(p.Root, &res); err != nil {
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

// TestFleetDownIsSaidOnceAndAdviceWhole: with the Temporal server down,
// `workflow show RUN` says so once, not once per look at the fleet
// (issue 26 F7), and a failed call's reason is shown whole, sanitised:
// the advice at its end (the rule to add, "then restart the worker")
// is never cut (issue 26 F2).
func TestFleetDownIsSaidOnceAndAdviceWhole(t *testing.T) {
	p := newProject(t, "agents: {}\n")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	advice := `rejected by its parent's guardrails (unauthorized): Write out.txt was refused: permission denied: Write "/home/w3/.cache/brood/fleet/trees/` +
		strings.Repeat("b265d157", 8) + `/tree/out.txt" needs approval (no allow rule matches) and no one is here to give it; the worker's settings decide on the fleet (--allow is not the submitter's): to allow it, where brood worker runs add "Write(out.txt)" to [permissions] allow in its user's ~/.config/brood/settings.toml, or in its project's .brood/settings.toml once that project is trusted there (brood trust, or brood worker --trust-project: an untrusted project's allow rules are not applied), then restart the worker`
	id := dispatch.NewID()
	res := wf.Result{RunID: id, Plan: "kept-plan", Status: wf.RunFailed, Started: time.Now().UTC(), Finished: time.Now().UTC(), Agents: 1,
		Phases: []wf.PhaseResult{{ID: "b", Status: wf.PhaseFailed, Calls: []wf.CallRecord{
			{Key: "b/0", Status: "failed", Error: advice},
			{Key: "b/1", Status: "failed", Error: "a \x1b]0;forged title\x07 refusal"},
		}}}}
	dir := filepath.Join(p.Root, ".brood", "workflows", id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := local.KeepResult(p.Root, &res); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errs := p.Brood(ctx, []string{"BROOD_TEMPORAL_ADDRESS=" + down}, "workflow", "show", id)
	if code != 0 || !strings.Contains(out, "kept result") {
		t.Fatalf("workflow show with the fleet down: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if n := strings.Count(errs, "cannot reach Temporal"); n != 1 {
		t.Errorf("the fleet being down is said %d times, want once:\n%s", n, errs)
	}
	if !strings.Contains(out, "b/0 failed: "+advice+"\n") {
		t.Errorf("the advice is not shown whole:\n%s", out)
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "\x07") {
		t.Errorf("a call's error reached the terminal unsanitised: %q", out)
	}
}
