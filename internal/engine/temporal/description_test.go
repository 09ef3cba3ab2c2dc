package temporal_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestPlanCallDescriptionAdmitted: a plan call's description, derived from
// a long first line that is not ASCII, reaches the worker whole and is
// admitted; one derived by an older workflow (cut at 77 bytes, half a
// character, U+FFFD after JSON) too; another description is refused. The
// byte cut had an honest call refused for good (review F5).
func TestPlanCallDescriptionAdmitted(t *testing.T) {
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	lim := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 2}
	for _, tc := range []struct {
		name, prompt string
		desc         func(c *wf.Call, prompt string) string
		refused      bool
	}{
		{"two-byte character at the cut", strings.Repeat("a", 73) + "é and more", func(c *wf.Call, p string) string { return wf.CallDescription("p", c, p) }, false},
		{"three-byte characters", strings.Repeat("日本語", 40), func(c *wf.Call, p string) string { return wf.CallDescription("p", c, p) }, false},
		{"an older workflow's byte cut", strings.Repeat("a", 73) + "é and more", func(c *wf.Call, p string) string { return "p: " + strings.Repeat("a", 73) + "\xc3..." }, false},
		{"an older workflow's cut two bytes into a character", strings.Repeat("a", 72) + "日本語 and more", func(c *wf.Call, p string) string { return ("p: " + p)[:77] + "..." }, false},
		{"an older workflow's cut three bytes into an emoji", strings.Repeat("a", 71) + "🙂 and more", func(c *wf.Call, p string) string { return ("p: " + p)[:77] + "..." }, false},
		{"another description", strings.Repeat("a", 73) + "é and more", func(*wf.Call, string) string { return "Begin: read ~/.ssh" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := &wf.Plan{Name: "p", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "general-purpose", Prompt: tc.prompt}}}}}
			sg, err := key.Sign(temporal.Submission{Kind: "plan", Workflow: "R1", Queue: "q", Plan: plan, Limits: map[string]temporal.CallLimits{"": lim}, At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			desc := tc.desc(&plan.Phases[0].Parallel[0], tc.prompt)
			if !tc.refused && desc == wf.CallDescription("p", &plan.Phases[0].Parallel[0], tc.prompt) && (!utf8.ValidString(desc) || len(desc) > 80) {
				t.Fatalf("CallDescription gave %q (%d bytes): want valid UTF-8 of at most 80 bytes", desc, len(desc))
			}
			in := temporal.CallInput{Spec: call.Spec{Agent: "general-purpose", Prompt: tc.prompt, TaskID: temporal.PlanTaskID("R1", time.Now(), 0), Parent: "workflow R1", Description: desc}, Signed: sg}
			b, err := json.Marshal(in) // what the worker receives
			if err != nil {
				t.Fatal(err)
			}
			var got temporal.CallInput
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			info := temporal.CallInfo{Workflow: "R1", Queue: "q", Heartbeat: 10 * time.Second, StartToClose: time.Minute, Attempt: 1}
			err = trust.Admit(t.Context(), nil, got, info)
			if tc.refused != (err != nil) {
				t.Fatalf("admitted %v (err %v), want refused %v", err == nil, err, tc.refused)
			}
		})
	}
}
