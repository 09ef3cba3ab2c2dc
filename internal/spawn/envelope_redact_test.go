package spawn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/tool"
)

// TestEnvelopeHoldsNoSecret: a Task prompt, context and the parent's
// system text holding a GITHUB_TOKEN value are recorded in the child's
// envelope.json with the parent's redactor applied (the child sees the
// marker, as its transcript would), and the child still runs to done.
func TestEnvelopeHoldsNoSecret(t *testing.T) {
	const secret = "tok-Quartz-88412-fennel"
	p := newProject(t, "agents:\n  explore:\n    - say: \"looked\"\n", nil)
	env := append(p.env, "GITHUB_TOKEN="+secret)
	r := tool.NewProjectRedactor(env, p.root)
	d, err := spawnWith(p, env, "You are the root agent. The token is "+secret+".", r)
	must(t, err)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "look with " + secret, Context: "ctx " + secret, Description: "look"})
	must(t, err)
	if out.Status != dispatch.StatusDone {
		t.Fatalf("status %s:\n%s", out.Status, out.Text)
	}
	b, err := os.ReadFile(filepath.Join(dispatch.Dir(p.root, out.TaskID), "envelope.json"))
	must(t, err)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "look with [REDACTED:GITHUB_TOKEN]") {
		t.Errorf("envelope.json keeps the secret (or lost the brief):\n%s", b)
	}
}

// spawnWith is the project's dispatcher with environment env, the parent's
// system text and redactor r.
func spawnWith(p *project, env []string, system string, r *tool.Redactor) (*spawn.Dispatcher, error) {
	return spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: p.settings(nil),
		Exe: p.exe(p.t), Env: env, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: system, ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "acceptEdits", Allow: []string{"Bash"}},
		Extras:      brood(), Redact: r.Redact, Redactor: r,
	})
}
