package bench

import (
	"testing"
	"time"
)

func TestModelTime(t *testing.T) {
	l := 500 * time.Millisecond
	for _, c := range []struct {
		k, conc int
		want    time.Duration
	}{{0, 5, l}, {1, 5, 4 * l}, {16, 16, 4 * l}, {16, 5, 10 * l}} {
		if got := modelTime(c.k, c.conc, l); got != c.want {
			t.Errorf("modelTime(%d, %d) = %s, want %s", c.k, c.conc, got, c.want)
		}
	}
}

func TestClassify(t *testing.T) {
	child := classify([]byte(`{"system":[{"text":"You are a focused subagent (explore) working... bench-task-7: read"}],"messages":[{"role":"user","content":"Begin"}]}`))
	if child.Role != RoleChild || child.Index != 7 || child.Turn != 1 {
		t.Errorf("child first turn: %+v", child)
	}
	parent := classify([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`))
	if parent.Role != RoleParent || parent.Turn != 2 {
		t.Errorf("parent second turn: %+v", parent)
	}
	oai := classify([]byte(`{"messages":[{"role":"system","content":"You are a focused subagent (explore) bench-task-3"},{"role":"tool","content":"x"}]}`))
	if oai.Role != RoleChild || oai.Index != 3 || oai.Turn != 2 {
		t.Errorf("openai child second turn: %+v", oai)
	}
}
