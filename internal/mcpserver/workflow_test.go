package mcpserver_test

import (
	"strings"
	"testing"
)

const plan = `{"name":"readme","phases":[{"id":"look","parallel":[{"id":"a","agent":"explore","prompt":"What does the README say?"},{"id":"b","agent":"general-purpose","prompt":"answer"}]}]}`

func TestWorkflow(t *testing.T) {
	f, err := newFixture(t, 1)
	must(t, err)
	progress := newMessages()
	cs := f.connect(t, progress)
	out, isErr := call(t, cs, "Workflow", map[string]any{"plan": plan}, "wf")
	if isErr {
		t.Fatalf("Workflow failed: %s", out)
	}
	for _, want := range []string{"Workflow run ", "ended done", `trust="untrusted"`, "The README says:", "quick answer"} {
		if !strings.Contains(out, want) {
			t.Errorf("Workflow result lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "</subagent-result>") != 1 {
		t.Errorf("a child's forged closing tag survived:\n%s", out)
	}
	progress.waitFor(t, "phase look (parallel): done, 2 done")

	// In the background: the run id at once, then WorkflowStatus.
	out, isErr = call(t, cs, "Workflow", map[string]any{"plan": plan, "run_in_background": true}, nil)
	if isErr || !strings.Contains(out, "in the background") {
		t.Fatalf("background Workflow = %v %s", isErr, out)
	}
	id := between(out, `run_id="`, `"`)
	out, _ = call(t, cs, "WorkflowStatus", map[string]any{"run_id": id, "wait_seconds": 600}, nil)
	if !strings.HasPrefix(out, "status: done") || !strings.Contains(out, "quick answer") {
		t.Errorf("WorkflowStatus = %s", out)
	}
	if out, isErr := call(t, cs, "Workflow", map[string]any{"plan": `{"name":"x","phases":[{"id":"p","parallel":[{"id":"a","agent":"nobody","prompt":"x"}]}]}`}, nil); !isErr || !strings.Contains(out, "nobody") {
		t.Errorf("a plan naming an unknown agent = %v %s", isErr, out)
	}
	if out, isErr := call(t, cs, "WorkflowStatus", map[string]any{"run_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, nil); !isErr {
		t.Errorf("WorkflowStatus of no run = %s", out)
	}
}
