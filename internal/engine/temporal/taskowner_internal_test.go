package temporal

import (
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestAskedFor: a call that names a task this worker has a record of runs
// it only as that task's agent and, for a plan's call, only for the plan
// that asked for it (the red team's forged plan call resumed another
// run's writer with a prompt nobody signed), and only for the submitter
// key and workflow that started it (review17 S1: another trusted
// submitter's follow-up read the task's conversation).
func TestAskedFor(t *testing.T) {
	root := t.TempDir()
	const writer, planTask, old = "01KBN5Q7MZ8XRTABCDEFGHJK01", "01KBN5Q7MZ8XRTABCDEFGHJK02", "01KBN5Q7MZ8XRTABCDEFGHJK03"
	const signedPlan, signedCall = "01KBN5Q7MZ8XRTABCDEFGHJK04", "01KBN5Q7MZ8XRTABCDEFGHJK05"
	a := submitterOf(CallInfo{Submitter: "SHA256:A", Workflow: "R3"})
	b := submitterOf(CallInfo{Submitter: "SHA256:B", Workflow: "R3"})
	callA := submitterOf(CallInfo{Submitter: "SHA256:A", Workflow: "brood-call-" + signedCall})
	for _, o := range []dispatch.Owner{
		{TaskID: writer, Agent: "general-purpose", Asker: "workflow R0"},
		{TaskID: planTask, Agent: "explore", Asker: "workflow R1", Brief: "ALPHA", Description: "p: ALPHA"},
		{TaskID: old, Agent: "explore"},
		{TaskID: signedPlan, Agent: "explore", Asker: "workflow R3", Submitter: a},
		{TaskID: signedCall, Agent: "explore", Submitter: callA},
	} {
		if err := dispatch.WriteOwner(dispatch.Records(root), o); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name string
		id   string
		spec call.Spec
		want string // "" allowed
	}{
		{"no record here", "01KBN5Q7MZ8XRTABCDEFGHJK09", call.Spec{Agent: "explore", Parent: "workflow R1"}, ""},
		{"its own plan's task", planTask, call.Spec{Agent: "explore", Parent: "workflow R1"}, ""},
		{"its own plan's task, the agent named in another case", planTask, call.Spec{Agent: "Explore", Parent: "workflow R1"}, ""},
		{"another agent's task", writer, call.Spec{Agent: "explore", Parent: "workflow R0"}, `which is a "general-purpose" task`},
		{"another plan's task", planTask, call.Spec{Agent: "explore", Parent: "workflow R2"}, "which workflow R1 asked for"},
		{"its own plan's task continued with its brief", planTask, call.Spec{Agent: "explore", Parent: "workflow R1", Resume: planTask, Continue: true, Prompt: "ALPHA", Description: "p: ALPHA"}, ""},
		{"its own plan's task continued with another brief", planTask, call.Spec{Agent: "explore", Parent: "workflow R1", Resume: planTask, Continue: true, Prompt: "BETA", Description: "p: ALPHA"}, "which this worker ran for another brief than the call's"},
		{"its own plan's task continued with another description", planTask, call.Spec{Agent: "explore", Parent: "workflow R1", Resume: planTask, Continue: true, Prompt: "ALPHA", Description: "p: BETA"}, "which this worker ran for another brief than the call's"},
		{"its own plan's task continued with another context", planTask, call.Spec{Agent: "explore", Parent: "workflow R1", Resume: planTask, Continue: true, Prompt: "ALPHA", Description: "p: ALPHA", Context: "BETA"}, "which this worker ran for another brief than the call's"},
		{"a task with no recorded asker", old, call.Spec{Agent: "explore", Parent: "workflow R1"}, "a single call"},
		{"a single call resuming a plan's task", planTask, call.Spec{Resume: planTask}, ""},
		{"a single call naming its agent", writer, call.Spec{Agent: "general-purpose", Resume: writer}, ""},
		{"a single call naming another agent", writer, call.Spec{Agent: "explore", Resume: writer}, "a call continues only a task of its own agent"},
		{"its own submitter's plan task", signedPlan, call.Spec{Agent: "explore", Parent: "workflow R3", Submitter: a}, ""},
		{"the plan run under another key", signedPlan, call.Spec{Agent: "explore", Parent: "workflow R3", Submitter: b}, "which this worker ran for key SHA256:A, workflow R3: a task continues only for the submitter key and workflow that started it"},
		{"its own submitter's follow-up", signedCall, call.Spec{Resume: signedCall, Submitter: callA}, ""},
		{"a follow-up by another key", signedCall, call.Spec{Resume: signedCall, Submitter: submitterOf(CallInfo{Submitter: "SHA256:B", Workflow: "brood-call-" + signedCall})}, "which this worker ran for key SHA256:A"},
		{"a follow-up under another workflow", signedCall, call.Spec{Resume: signedCall, Submitter: submitterOf(CallInfo{Submitter: "SHA256:A", Workflow: "brood-call-X"})}, "which this worker ran for key SHA256:A"},
		{"a fleet call naming a task recorded with no submitter", old, call.Spec{Resume: old, Submitter: callA}, "a worker from before submitters were recorded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := askedFor(root, tc.id, tc.spec)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want refused saying %q", err, tc.want)
			}
		})
	}
}
