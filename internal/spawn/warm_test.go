package spawn_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

const warmScript = `
agents:
  explore:
    - say: "## What I did\nLooked.\n\n## What I found\nnothing\n\n## Files changed\nnone\n\n## Problems\nnone"
  general-purpose:
    - say: "## What I did\nNothing.\n\n## What I found\nnothing\n\n## Files changed\nnone\n\n## Problems\nnone"
`

// warmDispatcher is p's dispatcher with n warm children.
func warmDispatcher(t *testing.T, p *project, n int) *spawn.Dispatcher {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: p.settings(func(s *settings.Settings) {}),
		Exe: exe, Env: p.env, Depth: 0, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default"}, Warm: n,
	})
	must(t, err)
	t.Cleanup(d.Close)
	return d
}

// waitIdle waits until the dispatcher has n idle warm children.
func waitIdle(t *testing.T, d *spawn.Dispatcher, n int) []int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // bounds a hang; nothing is timed
	for {
		if pids := d.WarmIdle(); len(pids) == n {
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("never saw %d idle warm children (have %v)", n, d.WarmIdle())
		}
		time.Sleep(5 * time.Millisecond) // polling, not synchronising on time
	}
}

// TestWarmDispatch: an explore takes an idle warm child (its process was
// started before the dispatch) and a replacement starts; a writer, whose
// child has another shape, starts cold; Close leaves no warm child and no
// task directory without a task.
func TestWarmDispatch(t *testing.T) {
	p := newProject(t, warmScript, nil)
	d := warmDispatcher(t, p, 1)
	idle := waitIdle(t, d, 1)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "look", Description: "look"})
	must(t, err)
	if out.Record.Status != dispatch.StatusDone || out.Process == nil || out.Process.PID != idle[0] {
		t.Fatalf("explore: status %s, output %+v; the idle warm child was %v", out.Record.Status, out.Process, idle)
	}
	next := waitIdle(t, d, 1)
	if next[0] == idle[0] {
		t.Fatal("the warm child that took a task is still idle")
	}
	w, err := d.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "do", Description: "do", Isolation: "none"})
	must(t, err)
	if w.Process == nil || slices.Contains(next, w.Process.PID) {
		t.Fatalf("a writer took a read-only warm child: %+v (idle %v)", w.Process, next)
	}
	d.Close()
	if pids := d.WarmIdle(); len(pids) != 0 {
		t.Errorf("idle warm children after Close: %v", pids)
	}
	ids, err := taskdir.Open(p.root).TaskIDs()
	must(t, err)
	if len(ids) != 2 {
		t.Errorf("task directories after Close: %v (want the two tasks only)", ids)
	}
}

// TestWarmDispatchWaitsForAStartingChild: a dispatch made while the only
// warm child is still being started takes it when its start ends, instead
// of starting cold beside it (on a loaded machine the e2e fan-out's second
// explore went cold so while the replacement of a killed idle child was
// being started); and with none being started, a dispatch does not wait.
func TestWarmDispatchWaitsForAStartingChild(t *testing.T) {
	p := newProject(t, warmScript, nil)
	d := warmDispatcher(t, p, 1) // its one warm child is being started now
	if pid := spawn.ClaimWarm(t.Context(), d); pid == 0 {
		t.Fatal("a dispatch made while the warm child was being started did not take it")
	}
	// The claimed child's replacement starts only once the pool is idle
	// (refill): nothing is being started now, so a claim returns at once,
	// with nothing.
	if pid := spawn.ClaimWarm(t.Context(), d); pid != 0 {
		t.Fatalf("a second claim took %d; the only warm child was claimed and none is being started", pid)
	}
}

// TestWarmWaitOnlyForItsShape: a dispatch whose shape is not the warm
// agent's never waits for a start (children are started in that shape
// only); one of that shape waits until the start ends, and with no child
// from it, starts cold. The waits are seen in the set's own count, so
// nothing here is timed.
func TestWarmWaitOnlyForItsShape(t *testing.T) {
	p := newProject(t, warmScript, nil)
	d := warmDispatcher(t, p, 0)
	spawn.PretendStarting(d, 1) // a start that ends only when told
	ctx, cancel := context.WithCancel(t.Context())
	other := make(chan bool, 1)
	go func() { other <- spawn.ClaimOtherShape(ctx, d) }()
	for done := false; !done; {
		select {
		case took := <-other:
			if took {
				t.Fatal("a claim of another shape got a child")
			}
			done = true
		default:
			if spawn.WarmWaiting(d) != 0 {
				cancel()
				t.Fatal("a claim of another shape waits for the warm agent's start")
			}
			time.Sleep(time.Millisecond) // polling the set's count, not synchronising on time
		}
	}
	cancel()
	got := make(chan int, 1)
	go func() { got <- spawn.ClaimWarm(t.Context(), d) }()
	for spawn.WarmWaiting(d) != 1 {
		select {
		case pid := <-got:
			t.Fatalf("a claim of the warm agent's shape returned %d without waiting for the start under way", pid)
		default:
			time.Sleep(time.Millisecond) // polling the set's count, not synchronising on time
		}
	}
	spawn.EndStart(d)
	if pid := <-got; pid != 0 {
		t.Fatalf("a start that made no child gave %d", pid)
	}
}
