package temporal

import (
	"testing"

	"github.com/broodhq/brood/internal/call"
)

// TestReadOnlyByTheWorkersDefinitions: a call's copy is made read-only
// only for a new call of an agent this worker's own definitions make
// read-only; a call resuming a task never, whatever agent it names (its
// dispatcher runs the agent the task's records name: a submitter naming a
// read-only agent in a resume of a writer would have the writer resumed in
// the worker's shared checkout).
func TestReadOnlyByTheWorkersDefinitions(t *testing.T) {
	a := &Activities{Code: &CodeSite{ReadOnly: func(agent string) bool { return agent == "explore" }}}
	for _, tc := range []struct {
		name string
		spec call.Spec
		want bool
	}{
		{"a new explore", call.Spec{Agent: "explore"}, true},
		{"a new writer", call.Spec{Agent: "general-purpose"}, false},
		{"the default agent", call.Spec{}, false},
		{"a resume naming a read-only agent", call.Spec{Agent: "explore", Resume: "01TASK"}, false},
		{"a resume naming no agent", call.Spec{Resume: "01TASK"}, false},
	} {
		if got := a.readOnly(tc.spec); got != tc.want {
			t.Errorf("%s: readOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (&Activities{}).readOnly(call.Spec{Agent: "explore"}) {
		t.Error("a worker without a code site made a copy read-only")
	}
}
