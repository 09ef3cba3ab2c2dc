package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/model"
)

// fakeRunner answers every call at once with a done result whose summary
// is the prompt, and counts how many run at the same time.
type fakeRunner struct {
	mu      sync.Mutex
	running int
	peak    int
	calls   atomic.Int64
	tokens  int64
	gate    chan struct{} // when set, each call waits for a token
}

func (f *fakeRunner) Call(ctx context.Context, s call.Spec) (*call.Result, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.running++
	f.peak = max(f.peak, f.running)
	f.mu.Unlock()
	defer func() { f.mu.Lock(); f.running--; f.mu.Unlock() }()
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return &call.Result{TaskID: s.TaskID, Status: "cancelled"}, nil
		}
	}
	return &call.Result{TaskID: s.TaskID, Status: "done", Summary: s.Prompt, Usage: model.Usage{Input: f.tokens}}, nil
}

func mustPlan(t *testing.T, yaml string) *Plan {
	t.Helper()
	p, err := Parse("p.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(p, CheckOptions{File: "p.yaml"}); err != nil {
		t.Fatal(err)
	}
	return p
}

func ids() func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("T%d", n.Add(1)) }
}

func eachPlan(k int, extra string) string {
	items := make([]string, k)
	for i := range items {
		items[i] = fmt.Sprintf("i%d", i)
	}
	return "name: x\n" + extra + "inputs:\n  items: {type: list, default: [" + strings.Join(items, ", ") + "]}\nphases:\n  - id: e\n    each: inputs.items[*]\n    stages: [{agent: a, prompt: \"do {{item}}\"}]\n"
}

// TestConcurrencyBoundsTheCalls: a plan's concurrency bounds the calls in
// flight, whatever the number of items.
func TestConcurrencyBoundsTheCalls(t *testing.T) {
	p := mustPlan(t, eachPlan(50, ""))
	in, _ := ResolveInputs(p, nil)
	f := &fakeRunner{gate: make(chan struct{})}
	go func() {
		for range 50 {
			f.gate <- struct{}{}
		}
	}()
	res := Execute(context.Background(), p, Options{Runner: f, Inputs: in, Concurrency: 3, NewTaskID: ids()})
	if res.Status != RunDone || res.Agents != 50 || f.peak > 3 {
		t.Fatalf("status %s agents %d peak %d; want done, 50, at most 3 at once", res.Status, res.Agents, f.peak)
	}
}

// TestMaxTokensStopsNewAgents: once the run's tokens reach max_tokens no
// new agent starts and the run ends partial, saying why.
func TestMaxTokensStopsNewAgents(t *testing.T) {
	p := mustPlan(t, eachPlan(10, "max_tokens: 250\n"))
	in, _ := ResolveInputs(p, nil)
	f := &fakeRunner{tokens: 100}
	res := Execute(context.Background(), p, Options{Runner: f, Inputs: in, Concurrency: 1, NewTaskID: ids()})
	if res.Status != RunPartial || f.calls.Load() != 3 || !strings.Contains(res.Reason, "max_tokens (250) reached") {
		t.Fatalf("status %s, %d calls, reason %q; want partial after 3 calls (300 tokens)", res.Status, f.calls.Load(), res.Reason)
	}
	skipped := 0
	for _, c := range res.Phases[0].Calls {
		if c.Status == CallSkipped {
			skipped++
		}
	}
	if skipped != 7 {
		t.Fatalf("%d calls skipped, want 7", skipped)
	}
}

// memJournal is a Journal in memory.
type memJournal struct {
	mu sync.Mutex
	m  map[string]Entry
	n  int
}

func (j *memJournal) Lookup(k string) (Entry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.m[k]
	return e, ok
}
func (j *memJournal) Started(k, id string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.m[k] = Entry{TaskID: id}
	j.n++
	return nil
}
func (j *memJournal) Finished(k string, r CallRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	e := j.m[k]
	e.Done = &r
	j.m[k] = e
	return nil
}
func (j *memJournal) Count() int { j.mu.Lock(); defer j.mu.Unlock(); return j.n }
func (j *memJournal) Spent() model.Usage {
	j.mu.Lock()
	defer j.mu.Unlock()
	var u model.Usage
	for _, e := range j.m {
		if e.Done != nil {
			u = u.Add(e.Done.Usage)
		}
	}
	return u
}

// TestJournalReplay: a second run over the same journal runs no finished
// call again, and continues a started one by its task id.
func TestJournalReplay(t *testing.T) {
	p := mustPlan(t, eachPlan(4, ""))
	in, _ := ResolveInputs(p, nil)
	j := &memJournal{m: map[string]Entry{}}
	f := &fakeRunner{}
	first := Execute(context.Background(), p, Options{Runner: f, Journal: j, Inputs: in, NewTaskID: ids()})
	// Pretend the last call was interrupted after it started.
	j.m["e/3/0"] = Entry{TaskID: j.m["e/3/0"].TaskID}
	var resumed []string
	r := runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
		resumed = append(resumed, s.Resume)
		if !s.Continue || s.TaskID != "" {
			t.Errorf("spec %+v: want a Continue of the started task", s)
		}
		return &call.Result{TaskID: s.Resume, Status: "done", Summary: "continued"}, nil
	})
	second := Execute(context.Background(), p, Options{Runner: r, Journal: j, Inputs: in, NewTaskID: ids()})
	if len(resumed) != 1 || resumed[0] != first.Phases[0].Calls[3].TaskID {
		t.Fatalf("resumed %v; want only the interrupted task %s", resumed, first.Phases[0].Calls[3].TaskID)
	}
	if second.Agents != 4 || js(second.Outputs["e"]) != `["do i0","do i1","do i2","continued"]` {
		t.Fatalf("agents %d outputs %s", second.Agents, js(second.Outputs["e"]))
	}
}

type runnerFunc func(ctx context.Context, s call.Spec) (*call.Result, error)

func (f runnerFunc) Call(ctx context.Context, s call.Spec) (*call.Result, error) { return f(ctx, s) }

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestNotAppliedEndsTheItemAndStopsDependants: a writer whose patch did
// not land yields null even though its task ended done; its item's later
// stages never run (and say why), its phase is partial, the phase that
// depends on it is skipped, and the run is partial.
func TestNotAppliedEndsTheItemAndStopsDependants(t *testing.T) {
	p := mustPlan(t, `name: fix
inputs:
  files: {type: list, default: "a.go,b.go"}
phases:
  - id: fix
    each: inputs.files[*]
    as: file
    stages:
      - {id: patch, agent: w, prompt: "patch {{file}}"}
      - {id: verify, agent: r, prompt: "verify {{file}}"}
  - id: report
    parallel: [{agent: r, prompt: "report {{fix}}"}]
`)
	in, err := ResolveInputs(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var prompts []string
	r := runnerFunc(func(ctx context.Context, s call.Spec) (*call.Result, error) {
		mu.Lock()
		prompts = append(prompts, s.Prompt)
		mu.Unlock()
		res := &call.Result{TaskID: s.TaskID, Status: "done", Summary: "ok " + s.Prompt}
		if s.Prompt == "patch b.go" {
			res.Patch = call.PatchNotApplied
		}
		return res, nil
	})
	res := Execute(context.Background(), p, Options{Runner: r, Inputs: in, NewTaskID: ids()})
	fix := res.Phases[0]
	if fix.Status != PhasePartial || !strings.Contains(fix.Reason, "fix/1/patch was not applied") {
		t.Errorf("fix: %s (%s); want partial naming fix/1/patch", fix.Status, fix.Reason)
	}
	if js(fix.Output) != `["ok verify a.go",null]` {
		t.Errorf("fix output %s", js(fix.Output))
	}
	for _, pr := range prompts {
		if pr == "verify b.go" || strings.HasPrefix(pr, "report") {
			t.Errorf("%q ran: it depends on a change that was not applied", pr)
		}
	}
	why := map[string]string{}
	for _, s := range res.Skipped {
		why[s.ID] = s.Reason
	}
	if !strings.Contains(why["fix/1"], "stage verify skipped") || !strings.Contains(why["fix/1"], "not-applied") || !strings.Contains(why["report"], "was not applied") {
		t.Errorf("skipped %+v", res.Skipped)
	}
	if res.Status != RunPartial || res.Phases[1].Status != PhaseSkipped {
		t.Errorf("run %s, report %s; want partial and skipped", res.Status, res.Phases[1].Status)
	}
}

// TestDefaultsReadAsInputs: a default written as text is parsed as
// --input parses it; one written as a value must fit the type.
func TestDefaultsReadAsInputs(t *testing.T) {
	for _, tc := range []struct {
		in   Input
		want string
		err  bool
	}{
		{Input{Type: "list", Default: "a, b,c"}, `["a","b","c"]`, false},
		{Input{Type: "list", Default: `["x"]`}, `["x"]`, false},
		{Input{Type: "list", Default: ""}, `[]`, false},
		{Input{Type: "number", Default: "5"}, `5`, false},
		{Input{Type: "boolean", Default: "true"}, `true`, false},
		{Input{Default: 8080.0}, `"8080"`, false},
		{Input{Type: "list", Default: 3.0}, ``, true},
		{Input{Type: "number", Default: "five"}, ``, true},
	} {
		v, err := DefaultValue(tc.in)
		if (err != nil) != tc.err || (err == nil && js(v) != tc.want) {
			t.Errorf("%+v: %s, %v; want %s (error %v)", tc.in, js(v), err, tc.want, tc.err)
		}
	}
}
