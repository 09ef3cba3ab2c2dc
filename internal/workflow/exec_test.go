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
