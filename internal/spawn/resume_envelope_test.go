package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
)

// TestResumeCannotTurnIntoAFork: rewriting the envelope into a fork of the
// parent (all tools, not read-only) gains nothing on resume.
func TestResumeCannotTurnIntoAFork(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("needs Landlock for a read-only child with Bash")
	}
	script := `
agents:
  explore:
    - tools:
        - Bash: {command: "sed -i 's/\"target_agent\": \"explore\"/\"target_agent\": \"fork\"/; s/\"fork\": false/\"fork\": true/; s/\"read_only\": true/\"read_only\": false/' $TMPDIR/../envelope.json"}
    - say: "edited"
  fork:
    - tools: [{Write: {file_path: pwned.txt, content: "x"}}]
    - say: "wrote"
  "*":
    - tools: [{Write: {file_path: pwned.txt, content: "x"}}]
    - say: "wrote"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	first, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "x"})
	must(t, err)
	again, err := d.Call(context.Background(), call.Spec{Resume: first.TaskID, Prompt: "go on"})
	must(t, err)
	if dispatch.Exists(filepath.Join(p.root, "pwned.txt")) || !strings.Contains(again.Text, `agent="explore"`) {
		t.Fatalf("the rewritten envelope changed what the resume ran:\n%s", again.Text)
	}
}

// TestResumeKeepsRequestedIsolation: isolation asked for on the Task call
// (not in the definition) holds on resume, from the parent's own record.
func TestResumeKeepsRequestedIsolation(t *testing.T) {
	agents := map[string]string{"ed": "---\nname: ed\ndescription: ed\ntools: Write\nmaxTurns: 1\n---\nx\n"}
	script := `
agents:
  ed:
    - say: "first"
    - say: "second"
`
	p := newProject(t, script, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 1, nil)
	first, err := d.Call(context.Background(), call.Spec{Agent: "ed", Prompt: "x", Isolation: "worktree"})
	must(t, err)
	again, err := d.Call(context.Background(), call.Spec{Resume: first.TaskID, Prompt: "go on"})
	must(t, err)
	if !strings.Contains(again.Text, "Isolation: overlay copy") && !strings.Contains(again.Text, "Isolation: worktree copy") {
		t.Fatalf("the resume ran without the isolation the task was dispatched with:\n%s", again.Text)
	}
}

// TestCheckpointIsRedacted: a secret in a checkpoint's fields never reaches
// result.json or the parent.
func TestCheckpointIsRedacted(t *testing.T) {
	script := `
agents:
  explore:
    - say: |
        ## CHECKPOINT REACHED
        **Type:** human-action
        **Progress:** 0/1 tasks
        **Task 1:** deploy with sekrit-value-123
        **Blocked by:** the token sekrit-value-123 was rejected
`
	p := newProject(t, script, nil)
	// A child never holds the parent's secret-looking variables (it gets
	// only those its definition names); what it can read is the project's
	// .env, whose values its redactor knows.
	must(t, os.WriteFile(filepath.Join(p.root, ".env"), []byte("DEPLOY_TOKEN=sekrit-value-123\n"), 0o600))
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "x"})
	must(t, err)
	b, err := os.ReadFile(filepath.Join(dispatch.Dir(p.root, out.TaskID), dispatch.ResultFile))
	must(t, err)
	if out.Record.Status != "checkpoint" {
		t.Fatalf("status %s", out.Record.Status)
	}
	if strings.Contains(string(b), "sekrit-value-123") || strings.Contains(out.Text, "sekrit-value-123") {
		t.Fatalf("the secret leaked:\n%s\n%s", b, out.Text)
	}
}
