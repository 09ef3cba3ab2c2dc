package run_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestPlanModeDelegatesToReadOnlyAgents: under --permission-mode plan the
// root may still delegate to agents whose definitions are read-only (the
// built-in explore and plan, a project agent with read-only tools), which
// run held read-only and in plan mode; a writer is refused with a reason
// that says it may write and which tools, and a resume is refused too.
func TestPlanModeDelegatesToReadOnlyAgents(t *testing.T) {
	p := clitest.NewProject(t)
	t.Setenv(clitest.TestMainEnv, "1")
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "py-explorer.md"), "---\nname: py-explorer\ndescription: reads\ntools: Read, Grep, Glob, LS\n---\nYou read.\n")
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "agents", "py-writer.md"), "---\nname: py-writer\ndescription: writes\ntools: Read, Edit\n---\nYou write.\n")
	mdl := p.Script("s.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: Explore, description: "explore", prompt: "Look."}
        - Task: {subagent_type: plan, description: "plan", prompt: "Plan."}
        - Task: {subagent_type: py-explorer, description: "py", prompt: "Read."}
        - Task: {subagent_type: py-writer, description: "write", prompt: "Write."}
        - Task: {subagent_type: general-purpose, description: "gp", prompt: "Do."}
        - Task: {resume_task_id: "01KBN5Q7MZ8XRTABCDEFGHJKMN", prompt: "Go on."}
    - say: "planned"
  explore:
    - say: "EXPLORED"
  plan:
    - say: "PLANNED"
  py-explorer:
    - say: "PY-READ"
  py-writer:
    - say: "WROTE"
  general-purpose:
    - say: "DID"
`)
	code, out, errOut := p.Brood("-p", "--permission-mode", "plan", "--output-format", "stream-json", "--verbose", "--model", mdl, "Plan it.")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	results := map[string]string{} // tool_use_id -> result text
	for _, l := range clitest.JSONLines(t, out) {
		if l["type"] != "user" {
			continue
		}
		msg, _ := l["message"].(map[string]any)
		content, _ := msg["content"].([]any)
		for _, c := range content {
			b, _ := json.Marshal(c.(map[string]any)["content"])
			results[c.(map[string]any)["tool_use_id"].(string)] = string(b)
		}
	}
	if len(results) != 6 {
		t.Fatalf("%d tool results, want 6:\n%s", len(results), out)
	}
	var ran, refused []string
	for _, r := range results {
		switch {
		case strings.Contains(r, "permission denied"):
			refused = append(refused, r)
		case strings.Contains(r, `status=\"done\"`):
			ran = append(ran, r)
		default:
			t.Errorf("a Task result neither ran nor was refused: %s", r)
		}
	}
	all := strings.Join(ran, "\n")
	for _, w := range []string{"EXPLORED", "PLANNED", "PY-READ"} {
		if !strings.Contains(all, w) {
			t.Errorf("the read-only agent that says %s did not run in plan mode:\n%s", w, all)
		}
	}
	if strings.Contains(all, "WROTE") || strings.Contains(all, "DID") {
		t.Errorf("a writer ran in plan mode:\n%s", all)
	}
	why := strings.Join(refused, "\n")
	for _, w := range []string{`agent \"py-writer\" may write (its tools include Edit)`, `agent \"general-purpose\" may write (it inherits every tool)`, "resume_task_id continues an earlier task"} {
		if !strings.Contains(why, w) {
			t.Errorf("the refusals do not say %q:\n%s", w, why)
		}
	}
	ids := clitest.TaskIDs(t, p.Root)
	if len(ids) != 3 {
		t.Fatalf("%d tasks dispatched, want the three read-only ones: %v", len(ids), ids)
	}
	for _, id := range ids {
		var env dispatch.Envelope
		clitest.ReadRecord(t, p.Root, id, dispatch.EnvelopeFile, &env)
		if !env.ReadOnly || env.Permissions.Mode != "plan" {
			t.Errorf("task %s (%s) ran read_only=%v in mode %q, want read-only in plan mode", id, env.TargetAgent, env.ReadOnly, env.Permissions.Mode)
		}
	}
}
