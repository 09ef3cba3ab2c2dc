package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/model"
)

// taskLike is a Task-shaped tool whose calls are read-only when they
// start the agent "explore".
type taskLike struct{}

func (taskLike) Spec() model.ToolSpec { return model.ToolSpec{Name: "Task"} }
func (taskLike) ReadOnly() bool       { return false }
func (taskLike) Run(context.Context, *Env, json.RawMessage) Result {
	return Result{}
}
func (taskLike) ReadOnlyCall(in json.RawMessage) (bool, string) {
	var v struct {
		SubagentType string `json:"subagent_type"`
	}
	_ = json.Unmarshal(in, &v)
	return v.SubagentType == "explore", "agent " + v.SubagentType + " may write"
}

// TestPlanModeJudgesTaskByItsAgent: in plan mode a ReadOnlyByInput tool
// is read-only when its call is (and a refusal says why it is not); deny
// and ask rules still come first; other modes are as before.
func TestPlanModeJudgesTaskByItsAgent(t *testing.T) {
	cases := []struct {
		mode, agent string
		allow, deny []string
		want        Verdict
		reason      string
	}{
		{"plan", "explore", []string{"Task"}, nil, Allow, ""},
		{"plan", "explore", nil, nil, Allow, "read-only tools are allowed"},
		{"plan", "writer", []string{"Task"}, nil, Deny, "plan (read-only) mode allows only read-only tools: agent writer may write"},
		{"plan", "explore", []string{"Task"}, []string{"Task(explore)"}, Deny, `matched deny rule "Task(explore)"`},
		{"default", "writer", []string{"Task"}, nil, Allow, ""},
		{"default", "explore", nil, nil, Ask, "no allow rule matches"},
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+c.agent, func(t *testing.T) {
			p, err := NewPermissions(c.mode, c.allow, c.deny, nil)
			if err != nil {
				t.Fatal(err)
			}
			in, _ := json.Marshal(map[string]string{"subagent_type": c.agent, "prompt": "p"})
			d := p.checkTool(taskLike{}, in, "/w")
			if d.Verdict != c.want || !strings.Contains(d.Reason, c.reason) {
				t.Errorf("verdict %v (%s), want %v (%s)", d.Verdict, d.Reason, c.want, c.reason)
			}
		})
	}
}
