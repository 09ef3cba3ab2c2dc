package root_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/cmdutil"
	"github.com/broodhq/brood/internal/root"
	"github.com/broodhq/brood/internal/session"
)

const dotenvSecret = "plum-orchard-4417-velvet"

// project is a loaded factory in a fresh project whose .env holds
// dotenvSecret, and a scripted model's spec.
func project(t *testing.T) (*cmdutil.Factory, string) {
	t.Helper()
	dir, home := t.TempDir(), t.TempDir()
	for name, data := range map[string]string{
		".env":              "DEPLOY_TOKEN=" + dotenvSecret + "\n",
		".brood/model.yaml": "agents:\n  root:\n    - say: hi\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	env := map[string]string{"HOME": home}
	f := cmdutil.NewFactory(cmdutil.IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }})
	if err := f.Load(); err != nil {
		t.Fatal(err)
	}
	return f, "script:" + filepath.Join(dir, ".brood", "model.yaml")
}

// TestRunAndInteractiveRedactAlike: the root brood run assembles and the
// one the interactive mode does scrub the same things (the project's .env
// values included) from the tools' output and the transcript.
func TestRunAndInteractiveRedactAlike(t *testing.T) {
	f, model := project(t)
	transcript := filepath.Join(f.ProjectRoot, ".brood", "sessions", "01TESTSESSION.jsonl")
	run, err := root.New(t.Context(), f, root.Options{Agent: true, Model: model, Transcript: transcript})
	if err != nil {
		t.Fatal(err)
	}
	tui, err := root.New(t.Context(), f, root.Options{Agent: true, Model: model, Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tui.Close()
	line := "token=" + dotenvSecret
	for name, r := range map[string]*root.Root{"run": run, "interactive": tui} {
		if r.Agent.Env == nil || r.Agent.Env.Redactor == nil {
			t.Fatalf("%s: the tools' environment has no redactor", name)
		}
		if got := r.Agent.Env.Redactor.Redact(line); strings.Contains(got, dotenvSecret) {
			t.Errorf("%s: the tools' redactor leaves the .env value: %q", name, got)
		}
		if got := r.Redact(line); strings.Contains(got, dotenvSecret) {
			t.Errorf("%s: the run's redactor leaves the .env value: %q", name, got)
		}
		if r.Agent.Env.Redactor.Redact(line) != r.Redact(line) {
			t.Errorf("%s: the tools and the writers redact differently", name)
		}
	}
	if run.Redact(line) != tui.Redact(line) {
		t.Errorf("run redacts %q, the interactive mode %q", run.Redact(line), tui.Redact(line))
	}
	// What run's agent writes to its transcript is redacted too.
	if run.Agent.Transcript == nil {
		t.Fatal("run's root has no transcript")
	}
	if err := run.Agent.Transcript.Append(session.Record{Type: session.RecToolResult, Tool: "Bash", Output: line}); err != nil {
		t.Fatal(err)
	}
	run.Close()
	data, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), dotenvSecret) || !strings.Contains(string(data), "[REDACTED:.env:DEPLOY_TOKEN]") {
		t.Errorf("the transcript:\n%s", data)
	}
}

// TestBuiltComplete: the dispatcher comes with the session, the tools and
// the agent's hooks into it already wired (nothing is set after New), and
// ends its warm children with the root's lifetime.
func TestBuiltComplete(t *testing.T) {
	f, model := project(t)
	transcript := filepath.Join(f.ProjectRoot, ".brood", "sessions", "01TESTSESSION.jsonl")
	r, err := root.New(t.Context(), f, root.Options{Agent: true, Model: model, Transcript: transcript})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Dispatcher == nil {
		t.Fatal("no dispatcher at depth 0")
	}
	if r.Agent.ID != "01TESTSESSION" || r.Agent.Model == nil || r.Agent.Inject == nil || r.Agent.UsageBelow == nil {
		t.Errorf("agent config incomplete: id %q, model %v, inject %v, usage below %v", r.Agent.ID, r.Agent.Model != nil, r.Agent.Inject != nil, r.Agent.UsageBelow != nil)
	}
	for _, name := range []string{"Task", "TaskOutput", "Bash", "Read"} {
		if _, ok := r.Agent.Tools.Get(name); !ok {
			t.Errorf("the agent lacks %s: %v", name, r.Agent.Tools.Names())
		}
	}
	// A bare deny rule takes the tool off the model's list (brood run and
	// the interactive mode alike).
	d, err := root.New(t.Context(), f, root.Options{Agent: true, Model: model, Interactive: true, Perms: cmdutil.PermissionFlags{Deny: []string{"Bash", "Agent"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, ok := d.Agent.Tools.Get("Bash"); ok {
		t.Errorf("a denied Bash is offered: %v", d.Agent.Tools.Names())
	}
	if d.Dispatcher != nil {
		t.Error("the interactive root built its dispatcher before the UI's sink exists")
	}
}

// TestNeedModel: a dispatcher-only root without a model says how to
// configure one; with one it needs no model client.
func TestNeedModel(t *testing.T) {
	f, _ := project(t)
	if _, err := root.New(t.Context(), f, root.Options{NeedModel: true}); err == nil || !strings.Contains(err.Error(), "no model configured") {
		t.Errorf("err = %v, want the no-model line", err)
	}
	r, err := root.New(t.Context(), f, root.Options{NeedModel: true, Model: "anthropic/claude-x"})
	if err != nil {
		t.Fatalf("a model spec, unresolved here: %v", err)
	}
	defer r.Close()
	if r.Spec != "anthropic/claude-x" || r.Model != nil {
		t.Errorf("spec %q, model %v", r.Spec, r.Model)
	}
}
