package render

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/spawn"
)

// TestTaskMatchedByCallID: two Task calls alike in agent and description
// whose subagents start in the other order are matched to their calls by
// the call id the dispatcher names; a grandchild's start is matched to no
// call of the root.
func TestTaskMatchedByCallID(t *testing.T) {
	var out buf
	h := NewHeadless(&out, true)
	h.Start(Info{SessionPath: "/p/.brood/sessions/S.jsonl", Root: t.TempDir()})
	in := json.RawMessage(`{"subagent_type":"explore","description":"look","prompt":"p"}`)
	h.Event(agent.Event{Type: agent.EvToolCall, Tool: "Task", ToolID: "call_1", Input: in})
	h.Event(agent.Event{Type: agent.EvToolCall, Tool: "Task", ToolID: "call_2", Input: in})
	h.DispatchEvent(spawn.Event{Type: "dispatch_start", TaskID: "01KBN5Q7MZ8XRTABCDEFGHJK22", Agent: "explore", Depth: 1, Description: "look", ToolUseID: "call_2"})
	h.DispatchEvent(spawn.Event{Type: "dispatch_start", TaskID: "01KBN5Q7MZ8XRTABCDEFGHJK33", Agent: "explore", Depth: 2, Parent: "01KBN5Q7MZ8XRTABCDEFGHJK22", ToolUseID: "call_1"})
	h.DispatchEvent(spawn.Event{Type: "dispatch_start", TaskID: "01KBN5Q7MZ8XRTABCDEFGHJK11", Agent: "explore", Depth: 1, Description: "look", ToolUseID: "call_1"})
	want := map[string]string{
		"01KBN5Q7MZ8XRTABCDEFGHJK22": `"tool_use_id":"call_2"`,
		"01KBN5Q7MZ8XRTABCDEFGHJK33": `"tool_use_id":null`,
		"01KBN5Q7MZ8XRTABCDEFGHJK11": `"tool_use_id":"call_1"`,
	}
	seen := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if !strings.Contains(l, `"subtype":"task_started"`) {
			continue
		}
		for id, w := range want {
			if strings.Contains(l, id) {
				seen++
				if !strings.Contains(l, w) {
					t.Errorf("task %s: want %s: %s", id, w, l)
				}
			}
		}
	}
	if seen != 3 {
		t.Errorf("%d task_started lines, want 3:\n%s", seen, out.String())
	}
}

// TestBackgroundCall: a run_in_background call answered before its
// subagent's start event gets tool_use_result async_launched naming the
// task, and the start that follows is matched to it (is_backgrounded).
func TestBackgroundCall(t *testing.T) {
	var out buf
	h := NewHeadless(&out, true)
	h.Start(Info{SessionPath: "/p/.brood/sessions/S.jsonl", Root: t.TempDir()})
	const id = "01KBN5Q7MZ8XRTABCDEFGHJK44"
	h.Event(agent.Event{Type: agent.EvToolCall, Tool: "Task", ToolID: "call_bg",
		Input: json.RawMessage(`{"subagent_type":"explore","description":"look","prompt":"p","run_in_background":true}`)})
	h.Event(agent.Event{Type: agent.EvToolResult, Tool: "Task", ToolID: "call_bg",
		Text: `Task ` + id + ` started in the background (task_id="` + id + `"). Carry on with other work.`})
	h.DispatchEvent(spawn.Event{Type: "dispatch_start", TaskID: id, Agent: "explore", Depth: 1, Description: "look", ToolUseID: "call_bg"})
	got := out.String()
	for _, w := range []string{
		`"tool_use_result":{"isAsync":true,"status":"async_launched","agentId":"` + id + `"`,
		`"subtype":"task_started","task_id":"` + id + `","tool_use_id":"call_bg","description":"look","subagent_type":"explore","is_backgrounded":true`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("lacks %s:\n%s", w, got)
		}
	}
}
