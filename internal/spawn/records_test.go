package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestParentRecordsPerChild: what the parent makes for one child is its
// directory, the envelope, one dispatch log (written at the start, with
// the pid), output.json, and its owner record and verdict in the records
// directory. No .lock file (the lock is the directory's), no stderr.log
// when the child wrote nothing there, and no tmp/ left (the child makes
// its own TMPDIR, the parent removes it when the run ends).
func TestParentRecordsPerChild(t *testing.T) {
	p := newProject(t, spawnScript, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "Read README.md and say what it is."})
	if err != nil {
		t.Fatal(err)
	}
	if out.Record == nil || out.Record.Status != dispatch.StatusDone {
		t.Fatalf("outcome: %+v", out)
	}
	td := taskdir.Open(p.root).MustTask(out.TaskID)
	ents, err := os.ReadDir(td.Path())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	for _, want := range []string{taskdir.Envelope, taskdir.Log, taskdir.Output, taskdir.Session, taskdir.Result} {
		if !slices.Contains(names, want) {
			t.Errorf("task directory lacks %s: %v", want, names)
		}
	}
	for _, not := range []string{taskdir.Lock, taskdir.Stderr, taskdir.Tmp} {
		if slices.Contains(names, not) {
			if b, _ := os.ReadFile(td.File(not)); not == taskdir.Stderr {
				t.Errorf("stderr.log made though the child wrote %q", b)
				continue
			}
			t.Errorf("task directory holds %s: %v", not, names)
		}
	}
	var lg dispatch.Log
	must(t, td.ReadJSON(taskdir.Log, &lg))
	if lg.PID == 0 || lg.Started.IsZero() || !lg.Finished.IsZero() {
		t.Errorf("dispatch log: pid %d started %v finished %v; want the start's record alone", lg.PID, lg.Started, lg.Finished)
	}
	recs := dispatch.Records(p.root)
	for _, f := range []string{recs.OwnerPath(out.TaskID), recs.VerdictPath(out.TaskID)} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	task, err := dispatch.LoadTask(p.root, out.TaskID)
	if err != nil || task.Status != dispatch.StatusDone || task.Trust != dispatch.TrustAccepted || task.Duration <= 0 {
		t.Errorf("listing: %v %+v", err, task)
	}
}

// TestCallLimitsInEnvelope: a call's limits lower the envelope's in its
// first write (the child runs under them).
func TestCallLimitsInEnvelope(t *testing.T) {
	p := newProject(t, spawnScript, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	r, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "Read README.md.", Limits: call.Limits{MaxTurns: 3, TokenBudget: 500000}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != dispatch.StatusDone {
		t.Fatalf("call: %+v", r)
	}
	var env dispatch.Envelope
	must(t, taskdir.Open(p.root).MustTask(r.TaskID).ReadJSON(taskdir.Envelope, &env))
	if env.MaxTurns != 3 {
		t.Errorf("max_turns %d, want the call's 3", env.MaxTurns)
	}
	if env.TokenBudget != 500000 {
		t.Errorf("token budget %d, want the call's 500000", env.TokenBudget)
	}
}

// TestCallNamesItsSession: a call's Spec.Session is the session its owner
// record names (a TUI that opened another transcript), else the
// dispatcher's own: no setter changes a built dispatcher.
func TestCallNamesItsSession(t *testing.T) {
	p := newProject(t, spawnScript, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	for _, tc := range []struct{ session, want string }{{"01SECOND", "01SECOND"}, {"", ""}} {
		out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "Read README.md and say what it is.", Session: tc.session})
		if err != nil {
			t.Fatal(err)
		}
		own, err := dispatch.ReadOwner(dispatch.Records(p.root), out.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if own.Session != tc.want {
			t.Errorf("call with session %q: owner record names %q, want %q", tc.session, own.Session, tc.want)
		}
	}
}

// TestContinuedCallInOneEnvelope: a call that continues a conversation
// begun elsewhere, for a caller that waits at turn boundaries (a fleet
// worker), has both in the envelope's one write: the transcript seeded
// first, the continue prompt, its resume count and sync_turns.
func TestContinuedCallInOneEnvelope(t *testing.T) {
	p := newProject(t, spawnScript, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	seed := filepath.Join(t.TempDir(), "seed.jsonl")
	must(t, os.WriteFile(seed, []byte(`{"type":"message","message":{"role":"user","content":[{"type":"text","text":"Read README.md."}]}}`+"\n"), 0o644))
	id := taskdir.NewID()
	turns := 0
	r, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "Read README.md.", TaskID: id, Transcript: seed,
		Watch: call.Watch{Turn: func(context.Context, int) bool { turns++; return true }}})
	if err != nil {
		t.Fatal(err)
	}
	if r.TaskID != id {
		t.Fatalf("call ran task %s, want %s", r.TaskID, id)
	}
	var env dispatch.Envelope
	must(t, taskdir.Open(p.root).MustTask(id).ReadJSON(taskdir.Envelope, &env))
	if !env.SyncTurns || env.ResumeCount != 1 || env.Prompt != call.ContinuePrompt {
		t.Errorf("envelope: sync_turns %v, resume_count %d, prompt %q; want true, 1, the continue prompt", env.SyncTurns, env.ResumeCount, env.Prompt)
	}
	b, err := os.ReadFile(taskdir.Open(p.root).MustTask(id).File(taskdir.Session))
	if err != nil || !strings.HasPrefix(string(b), `{"type":"message"`) {
		t.Errorf("transcript not seeded from %s: %v %.80q", seed, err, b)
	}
}
