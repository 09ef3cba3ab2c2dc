package run

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// approver is a permission prompt tool that keeps what it was asked and
// answers allow with the updatedInput a test sets ("": none).
type approver struct {
	asked   []byte
	updated string
}

func (*approver) Spec() model.ToolSpec {
	return model.ToolSpec{Name: "mcp__t__approve", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (*approver) ReadOnly() bool { return true }
func (a *approver) Run(_ context.Context, _ *tool.Env, in json.RawMessage) tool.Result {
	a.asked = append([]byte(nil), in...)
	if a.updated != "" {
		return tool.Result{Content: `{"behavior":"allow","updatedInput":` + a.updated + `}`}
	}
	return tool.Result{Content: `{"behavior":"allow"}`}
}

// TestChildAskLabelsTheSubject: a subagent's question reaches the prompt
// tool with its subject under the tool's own field (command, file_path,
// path, url, subagent_type), never a file_path for what is not a file; an
// allow that changes that input is a denial.
func TestChildAskLabelsTheSubject(t *testing.T) {
	for _, c := range []struct {
		tool, subject string
		want          string // the input the prompt tool gets
		updated       string
		allow         bool
	}{
		{"Bash", "make deploy", `{"command":"make deploy"}`, "", true},
		{"Read", "/w/.env", `{"file_path":"/w/.env"}`, "", true},
		{"Write", "/w/a.txt", `{"file_path":"/w/a.txt"}`, `{"file_path":"/w/a.txt"}`, true},
		{"Edit", "/w/a.txt", `{"file_path":"/w/a.txt"}`, `{"file_path":"/w/b.txt"}`, false},
		{"NotebookEdit", "/w/n.ipynb", `{"notebook_path":"/w/n.ipynb"}`, "", true},
		{"Grep", "/etc", `{"path":"/etc"}`, "", true},
		{"Glob", "/w", `{"path":"/w"}`, "", true},
		{"WebFetch", "domain:example.com", `{"url":"domain:example.com"}`, "", true},
		{"Task", "deployer", `{"subagent_type":"deployer"}`, `{"subagent_type":"general-purpose"}`, false},
		{"mcp__gh__merge", "x", `{"subject":"x"}`, "", true},
		{"mcp__gh__merge", "", `{}`, "", true},
	} {
		t.Run(c.tool+" "+c.subject, func(t *testing.T) {
			a := &approver{updated: c.updated}
			p := &promptTool{name: "mcp__t__approve", tools: tool.NewSet(a), env: &tool.Env{}}
			got := p.childAsk(context.Background(), spawn.Ask{Tool: c.tool, Subject: c.subject})
			var asked struct {
				ToolName string          `json:"tool_name"`
				Input    json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(a.asked, &asked); err != nil {
				t.Fatalf("the prompt tool got %s: %v", a.asked, err)
			}
			if string(asked.Input) != c.want {
				t.Errorf("the prompt tool got input %s, want %s", asked.Input, c.want)
			}
			if got.Allow != c.allow {
				t.Errorf("answer allow = %v, want %v", got.Allow, c.allow)
			}
		})
	}
}
