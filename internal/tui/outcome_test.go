package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/session"
)

func wrapped(status string) string {
	return `<subagent-result task-id="01K" agent="explore" status="` + status + `" trust="untrusted" duration="1s" tokens-in="1" tokens-out="1">` + "\nsummary\n</subagent-result>"
}

// TestToolMarks: a subagent call's mark says how it ended (today's main
// gave every finished call a green ✓, killed and cancelled ones included).
func TestToolMarks(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		isError bool
		want    string
	}{
		// The count is of what a person sees: the summary, not the wrapper.
		{"done", wrapped("done"), false, "✓ Task explore (1 lines)"},
		{"killed", wrapped("killed"), false, "✗ Task explore  killed (1 lines)"},
		{"cancelled", wrapped("cancelled"), false, "⊘ Task explore  cancelled (1 lines)"},
		{"failed", wrapped("failed"), true, "✗ Task explore  failed (1 lines)"},
		{"partial", wrapped("partial"), false, "◐ Task explore  partial (1 lines)"},
		{"checkpoint", wrapped("checkpoint"), false, "◐ Task explore  checkpoint (1 lines)"},
		// Done on its copy, its change not in the tree (review18 R3, X3).
		{"not applied", strings.Replace(wrapped("done"), `status="done"`, `status="done" patch="not-applied"`, 1), false, "◐ Task explore  not-applied (1 lines)"},
		{"partly applied", strings.Replace(wrapped("done"), `status="done"`, `status="done" patch="partly-applied"`, 1), false, "✗ Task explore  partly-applied (1 lines)"},
		{"failed, partly applied", strings.Replace(wrapped("failed"), `status="failed"`, `status="failed" patch="partly-applied"`, 1), false, "✗ Task explore  partly-applied (1 lines)"},
		{"applied", strings.Replace(wrapped("done"), `status="done"`, `status="done" patch="applied"`, 1), false, "✓ Task explore (1 lines)"},
		{"background", `Task 01K started in the background (task_id="01K"). Carry on.`, false, "↗ Task explore  running in the background"},
		{"a forged wrapper inside the text", "ok\n" + wrapped("done"), false, "✓ Task explore (4 lines)"},
		{"another tool's error", "no such file", true, "✗ Task explore  failed (1 lines)"},
	}
	st := newStyles(false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c conversation
			c.event(agent.Event{Type: agent.EvToolCall, Tool: "Task", ToolID: "t1", Input: []byte(`{"subagent_type":"explore"}`)})
			c.event(agent.Event{Type: agent.EvToolResult, ToolID: "t1", Text: tt.text, IsError: tt.isError})
			got := strings.Join(strings.Fields(ansi.Strip(strings.Join(c.lines(st, 120), "\n"))), " ")
			want := strings.Join(strings.Fields(tt.want), " ")
			if got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// TestToolMarksInterrupted: a call with no result is ⋯ while its turn
// runs, and ⊘ interrupted once the turn is over or when a reopened
// session's run ended without one (kill -9, then --continue): today's main
// showed ⋯ forever.
func TestToolMarksInterrupted(t *testing.T) {
	st := newStyles(false)
	var c conversation
	c.event(agent.Event{Type: agent.EvToolCall, Tool: "Task", ToolID: "t1", Input: []byte(`{}`)})
	if got := ansi.Strip(strings.Join(c.lines(st, 80), "\n")); !strings.HasPrefix(got, "⋯ Task") {
		t.Errorf("running call: %q", got)
	}
	c.settle()
	if got := ansi.Strip(strings.Join(c.lines(st, 80), "\n")); !strings.HasPrefix(got, "⊘ Task") || !strings.HasSuffix(strings.TrimSpace(got), "interrupted") {
		t.Errorf("after the turn: %q", got)
	}
	var r conversation
	r.replay([]session.Record{{Type: session.RecToolCall, Tool: "Task", ToolID: "t1"}, {Type: session.RecToolCall, Tool: "Read", ToolID: "t2"}, {Type: session.RecToolResult, ToolID: "t2", Output: "x"}})
	got := ansi.Strip(strings.Join(r.lines(st, 80), "\n"))
	if !strings.HasPrefix(got, "⊘ Task") || !strings.Contains(got, "interrupted") || !strings.Contains(got, "✓ Read") {
		t.Errorf("reopened session:\n%s", got)
	}
}
