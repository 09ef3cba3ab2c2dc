package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/tool"
)

// fake is a Dispatcher that records what the tools asked of it.
type fake struct {
	calls, starts []call.Spec
	resumed, sent []string
	fork, bg      bool
	writers       int
	result        *call.Result
	err           error
}

func (f *fake) Call(_ context.Context, s call.Spec) (*call.Result, error) {
	f.calls = append(f.calls, s)
	return f.result, f.err
}

func (f *fake) Start(_ context.Context, s call.Spec) (string, error) {
	f.starts = append(f.starts, s)
	return "T1", f.err
}

func (f *fake) ResumeBackground(_ context.Context, id, prompt string) error {
	f.resumed = append(f.resumed, id+":"+prompt)
	return f.err
}

func (f *fake) Output(_ context.Context, id string, wait time.Duration) (string, string, error) {
	return "done", id + " after " + wait.String(), f.err
}

func (f *fake) Send(id, from, message string) error {
	f.sent = append(f.sent, id+"|"+from+"|"+message)
	return f.err
}

func (f *fake) Roster() string                      { return "- explore: looks around\n" }
func (f *fake) WritersInTurn(h []model.Message) int { return f.writers }
func (f *fake) ReadOnlyAgent(agent string) (bool, string) {
	return agent == "explore", "agent " + agent + " may write"
}
func (f *fake) IsFork() bool                 { return f.fork }
func (f *fake) Background(agent string) bool { return f.bg && agent == "slow" }
func (f *fake) Workspace() string            { return "/w" }
func (f *fake) check(t *testing.T, want string, got []string) {
	t.Helper()
	if strings.Join(got, ",") != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func run(t *testing.T, d Dispatcher, name, input string) tool.Result {
	t.Helper()
	for _, tl := range Tools(d) {
		if tl.Spec().Name == name {
			env := (&tool.Env{}).ForCall(&tool.Call{ID: "call-1"})
			return tl.Run(context.Background(), env, json.RawMessage(input))
		}
	}
	t.Fatalf("no tool %s", name)
	return tool.Result{}
}

// TestToolsOverTheInterface: each tool turns the model's input into the
// one Dispatcher call it stands for, and its answer into the tool result.
func TestToolsOverTheInterface(t *testing.T) {
	ok := &call.Result{Text: "report", Status: dispatch.StatusDone}
	tests := []struct {
		name, tool, input string
		f                 *fake
		want              string // substring of the result
		isErr             bool
		check             func(t *testing.T, f *fake)
	}{
		{"call", "Task", `{"subagent_type":"explore","prompt":"look"}`, &fake{result: ok, writers: 2}, "report", false,
			func(t *testing.T, f *fake) {
				if len(f.calls) != 1 || f.calls[0].Agent != "explore" || f.calls[0].Together != 2 || f.calls[0].CallID != "call-1" {
					t.Errorf("calls %+v", f.calls)
				}
			}},
		{"default agent", "Task", `{"prompt":"look"}`, &fake{result: ok}, "report", false,
			func(t *testing.T, f *fake) {
				if f.calls[0].Agent != "general-purpose" {
					t.Errorf("agent %q", f.calls[0].Agent)
				}
			}},
		{"rejected is an error", "Task", `{"prompt":"x"}`, &fake{result: &call.Result{Text: "no", Status: dispatch.StatusRejected}}, "no", true, nil},
		{"background flag", "Task", `{"prompt":"x","run_in_background":true}`, &fake{}, `task_id="T1"`, false,
			func(t *testing.T, f *fake) {
				if len(f.starts) != 1 || len(f.calls) != 0 {
					t.Errorf("starts %v calls %v", f.starts, f.calls)
				}
			}},
		{"background definition", "Task", `{"subagent_type":"slow","prompt":"x"}`, &fake{bg: true}, "started in the background", false, nil},
		{"fork of a fork", "Task", `{"fork":true,"prompt":"x"}`, &fake{fork: true}, "a fork cannot fork", true,
			func(t *testing.T, f *fake) {
				if len(f.calls)+len(f.starts) != 0 {
					t.Error("a fork's fork was dispatched")
				}
			}},
		{"resume in background", "Task", `{"resume_task_id":"T9","prompt":"more","run_in_background":true}`, &fake{}, "resumed in the background", false,
			func(t *testing.T, f *fake) { f.check(t, "T9:more", f.resumed) }},
		{"dispatcher error", "Task", `{"prompt":"x"}`, &fake{err: errors.New("pool closed")}, "pool closed", true, nil},
		{"bad input", "Task", `{"prompt":7}`, &fake{}, "Task: invalid input", true, nil},
		{"output", "TaskOutput", `{"task_id":"T2","wait_seconds":900}`, &fake{}, "status: done\nT2 after 10m0s", false, nil},
		{"output needs id", "TaskOutput", `{}`, &fake{}, "needs task_id", true, nil},
		{"send", "SendMessage", `{"task_id":"T3","message":"stop"}`, &fake{}, "queued for task T3", false,
			func(t *testing.T, f *fake) { f.check(t, "T3|the parent agent|stop", f.sent) }},
		{"send needs id", "SendMessage", `{"message":"stop"}`, &fake{}, "needs task_id", true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tc.f, tc.tool, tc.input)
			if !strings.Contains(r.Content, tc.want) || r.IsError != tc.isErr {
				t.Fatalf("result %q (error %v), want %q (error %v)", r.Content, r.IsError, tc.want, tc.isErr)
			}
			if tc.check != nil {
				tc.check(t, tc.f)
			}
		})
	}
}

// TestTaskSpecNamesTheRoster: the Task tool's description lists the
// dispatcher's agent types.
func TestTaskSpecNamesTheRoster(t *testing.T) {
	spec := (&TaskTool{d: &fake{}}).Spec()
	if spec.Name != "Task" || !strings.Contains(spec.Description, "- explore: looks around") {
		t.Fatalf("spec %q: %q", spec.Name, spec.Description)
	}
}
