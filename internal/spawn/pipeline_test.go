package spawn_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/session"
)

// answererScript answers without JSON first, and with it once told its
// answer was rejected.
const answererScript = `
agents:
  answerer:
    - say: "no json here"
    - cases:
        - if: "rejected"
          say: '{"n": 1}'
      say: "not told it was rejected"
`

var answererAgent = map[string]string{
	"answerer": "---\nname: answerer\ndescription: answers\ntools: Read\nmaxTurns: 40\ntimeout: 10m\n---\nYou answer.\n",
}

// TestBackgroundCallGetsSchemaRetriesAndLimits: a call started in the
// background runs the same pipeline as one waited for: its output schema
// is told to the child and a wrong answer is sent back (the task resumed),
// and its limits lower the definition's in the envelope of every run.
func TestBackgroundCallGetsSchemaRetriesAndLimits(t *testing.T) {
	p := newProject(t, answererScript, answererAgent)
	d := p.dispatcher(p.settings(nil), 1, nil)
	lim := call.Limits{MaxTurns: 3, TimeoutMS: 120000}
	id, err := d.Start(context.Background(), call.Spec{
		Agent: "answerer", Prompt: "answer", Limits: lim,
		Schema: json.RawMessage(`{"type":"object","required":["n"],"properties":{"n":{"type":"integer"}}}`),
	})
	must(t, err)
	status, text, err := d.Output(context.Background(), id, 2*time.Minute)
	must(t, err)
	d.WaitBackground()
	r := d.Finished(id)
	if r == nil {
		t.Fatalf("no result for background task %s (status %s):\n%s", id, status, text)
	}
	if r.Status != dispatch.StatusDone || r.Attempts != 2 || string(r.Output) != `{"n":1}` || len(r.Failures) > 0 {
		t.Fatalf("background call: status %s, %d attempts, output %s, failures %q; want done after one schema retry with {\"n\":1}", r.Status, r.Attempts, r.Output, r.Failures)
	}
	if !slices.Equal(r.Stages, call.Stages()) {
		t.Errorf("the retry ran stages %v, want %v", r.Stages, call.Stages())
	}
	var env dispatch.Envelope
	must(t, dispatch.ReadJSON(filepath.Join(dispatch.Dir(p.root, id), dispatch.EnvelopeFile), &env))
	if env.MaxTurns != lim.MaxTurns || env.TimeoutMS != lim.TimeoutMS {
		t.Errorf("the resumed run's envelope has max_turns %d and timeout %dms, want the call's %d and %dms", env.MaxTurns, env.TimeoutMS, lim.MaxTurns, lim.TimeoutMS)
	}
	own, err := dispatch.ReadOwner(dispatch.Records(p.root), id)
	must(t, err)
	if !strings.Contains(own.Brief, "ANSWER FORMAT") {
		t.Errorf("the child was never told the answer's schema: its brief is %q", own.Brief)
	}
	recs, _, err := session.ReadFile(filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile))
	must(t, err)
	if st := session.Replay(recs); st.Turns != 2 {
		t.Errorf("the task's transcript has %d turns, want 2 (the retry resumed it)", st.Turns)
	}
}

// TestEntryPointsRunTheSameStages: a call waited for, one in the
// background, a resume waited for and one in the background all run every
// stage of the pipeline, in order.
func TestEntryPointsRunTheSameStages(t *testing.T) {
	p := newProject(t, answererScript, answererAgent)
	d := p.dispatcher(p.settings(nil), 1, nil)
	ctx := context.Background()
	want := call.Stages()
	r, err := d.Call(ctx, call.Spec{Agent: "answerer", Prompt: "answer"})
	must(t, err)
	got := map[string][]call.Stage{"call": r.Stages}
	again, err := d.Call(ctx, call.Spec{Resume: r.TaskID, Prompt: "you were rejected: again"})
	must(t, err)
	got["resume"] = again.Stages
	bg, err := d.Start(ctx, call.Spec{Agent: "answerer", Prompt: "answer"})
	must(t, err)
	d.WaitBackground()
	if f := d.Finished(bg); f != nil {
		got["background"] = f.Stages
	}
	must(t, d.ResumeBackground(ctx, bg, "you were rejected: again"))
	d.WaitBackground()
	if f := d.Finished(bg); f != nil {
		got["background resume"] = f.Stages
	}
	for _, k := range []string{"call", "resume", "background", "background resume"} {
		if !slices.Equal(got[k], want) {
			t.Errorf("%s ran stages %v, want %v", k, got[k], want)
		}
	}
}
