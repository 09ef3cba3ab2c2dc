package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/tool"
)

// fakeModel answers each request with the response turn(i, req) gives it,
// i counting from 1, and records the requests.
type fakeModel struct {
	turn func(i int, req *model.Request) (*model.Response, error)

	mu   sync.Mutex
	reqs []model.Request
}

func (m *fakeModel) Name() string { return "fake" }

func (m *fakeModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		m.mu.Lock()
		m.reqs = append(m.reqs, *req)
		i := len(m.reqs)
		m.mu.Unlock()
		resp, err := m.turn(i, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if t := resp.Message.Text(); t != "" && !yield(model.Chunk{TextDelta: t}, nil) {
			return
		}
		yield(model.Chunk{Done: resp}, nil)
	}
}

func (m *fakeModel) requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

// funcTool is a tool whose behaviour is a function.
type funcTool struct {
	name string
	run  func(ctx context.Context, input json.RawMessage) tool.Result
}

func (f *funcTool) Spec() model.ToolSpec {
	return model.ToolSpec{Name: f.name, Description: f.name, Schema: json.RawMessage(`{"type":"object"}`)}
}
func (f *funcTool) ReadOnly() bool { return true }
func (f *funcTool) Run(ctx context.Context, _ *tool.Env, input json.RawMessage) tool.Result {
	return f.run(ctx, input)
}

func echoTool(name string) *funcTool {
	return &funcTool{name: name, run: func(_ context.Context, in json.RawMessage) tool.Result {
		return tool.Result{Content: name + " " + string(in)}
	}}
}

func scripted(t *testing.T, yaml string) *script.Model {
	t.Helper()
	f, err := script.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return script.New("script:test", f)
}

// collect runs the loop to the end and returns its events, its outcome and
// the iterator's error.
func collect(t *testing.T, ctx context.Context, cfg agent.Config, history []model.Message, prompt string) ([]agent.Event, *agent.Outcome, error) {
	t.Helper()
	var evs []agent.Event
	var out *agent.Outcome
	var runErr error
	for ev, err := range agent.Run(ctx, cfg, history, prompt) {
		if err != nil {
			runErr = err
			continue
		}
		evs = append(evs, ev)
		if ev.Type == agent.EvDone {
			if out != nil {
				t.Error("two done events")
			}
			out = ev.Outcome
		}
	}
	if out == nil {
		t.Fatal("the run ended without a done event")
	}
	if last := evs[len(evs)-1]; last.Type != agent.EvDone {
		t.Errorf("last event is %s, want done", last.Type)
	}
	return evs, out, runErr
}

func count(evs []agent.Event, typ agent.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// checkAnswered fails unless every tool_use of msgs is answered in the
// message after it.
func checkAnswered(t *testing.T, msgs []model.Message) {
	t.Helper()
	for i, m := range msgs {
		uses := m.ToolUses()
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) {
			t.Fatalf("message %d: %d tool calls without results", i, len(uses))
		}
		got := map[string]bool{}
		for _, p := range msgs[i+1].Content {
			if p.Type == model.PartToolResult {
				got[p.ToolUseID] = true
			}
		}
		for _, u := range uses {
			if !got[u.ID] {
				t.Errorf("tool_use %s has no result", u.ID)
			}
		}
	}
}

func toolResults(m model.Message) []model.Part {
	var out []model.Part
	for _, p := range m.Content {
		if p.Type == model.PartToolResult {
			out = append(out, p)
		}
	}
	return out
}

var errBoom = errors.New("boom: provider unavailable")
