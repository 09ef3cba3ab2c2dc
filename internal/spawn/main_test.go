package spawn_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/agent"
	"github.com/broodhq/brood/internal/call/jsonschema"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/model/script"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/testbrood"
	"github.com/broodhq/brood/internal/tool"
	"github.com/broodhq/brood/internal/workflowtool"
)

// TestMain lets the test binary be brood itself: the dispatcher re-executes
// it as the child (and the child as the grandchild), so these tests run the
// real child protocol in real processes.
//
// The list of known projects is the test's own (XDG_STATE_HOME): the
// machine's, which other tests' roots and the user's runs change, would
// make every dispatcher here rebuild its known-projects layer as /tmp
// churns.
func TestMain(m *testing.M) {
	if os.Getenv("BROOD_TEST_MAIN") == "" && os.Getenv("XDG_STATE_HOME") == "" {
		// A directory no one makes: no project is known (a dispatcher
		// here only reads the list).
		os.Setenv("XDG_STATE_HOME", filepath.Join(os.TempDir(), fmt.Sprintf("brood-spawn-test-state-%d", os.Getpid())))
	}
	testbrood.Main(m, "BROOD_TEST_MAIN")
}

// brood is what brood's dispatchers get beyond the child protocol (as
// cli.Extras is): the children, this test binary as brood, have it too.
func brood() spawn.Extras {
	return spawn.Extras{Schemas: jsonschema.Compile, Tools: workflowtool.Tools}
}

// project is a temporary project: a git repository with .brood/, a script
// for the scripted model, and an isolated HOME.
type project struct {
	t                  *testing.T
	lastRootTranscript string
	root               string
	home               string
	script             string
	env                []string
}

func newProject(t *testing.T, scriptYAML string, agents map[string]string) *project {
	t.Helper()
	root := t.TempDir()
	home := t.TempDir()
	git(t, root, "init", "-q")
	must(t, os.MkdirAll(filepath.Join(root, ".brood", "agents"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".brood/\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "README.md"), []byte("# demo project\nIt has a README.\n"), 0o644))
	for name, body := range agents {
		must(t, os.WriteFile(filepath.Join(root, ".brood", "agents", name+".md"), []byte(body), 0o644))
	}
	sp := filepath.Join(root, ".brood", "script.yaml")
	must(t, os.WriteFile(sp, []byte(scriptYAML), 0o644))
	exe, err := os.Executable()
	must(t, err)
	env := append(os.Environ(), "BROOD_TEST_MAIN=1", "BROOD_CHILD_EXE="+exe, "HOME="+home, "BROOD_TRUST_PROJECT=1")
	return &project{t: t, root: root, home: home, script: sp, env: env}
}

func (p *project) exe(t *testing.T) string {
	exe, err := os.Executable()
	must(t, err)
	return exe
}

func (p *project) settings(mut func(*settings.Settings)) settings.Settings {
	s := settings.Defaults()
	s.Pool.PingInterval = settings.Duration{Duration: 100 * time.Millisecond}
	s.Pool.KillGrace = settings.Duration{Duration: 2 * time.Second}
	if mut != nil {
		mut(&s)
	}
	return s
}

func (p *project) registry() *registry.Registry {
	reg, diags := registry.Load(registry.Options{ProjectRoot: p.root, Home: p.home, Claude: true})
	for _, d := range diags {
		if d.Severity == registry.SeverityError {
			p.t.Fatalf("registry: %s", d)
		}
	}
	return reg
}

func (p *project) dispatcher(s settings.Settings, maxDepth int, events chan<- spawn.Event) *spawn.Dispatcher {
	p.t.Helper()
	exe, err := os.Executable()
	must(p.t, err)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: s,
		Exe: exe, Env: p.env, Depth: 0, MaxDepth: maxDepth, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Write", "Edit", "Bash", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "acceptEdits", Allow: []string{"Bash"}},
		Extras:      brood(),
		OnEvent: func(e spawn.Event) {
			if events != nil {
				events <- e
			}
		},
	})
	must(p.t, err)
	return d
}

// runRoot runs the root agent of the script with the Task tool.
func (p *project) runRoot(ctx context.Context, d *spawn.Dispatcher) (*agent.Outcome, []model.Message) {
	p.t.Helper()
	return p.runRootWith(ctx, d, nil)
}

// runRootWith is runRoot with an Inject hook and a transcript.
func (p *project) runRootWith(ctx context.Context, d *spawn.Dispatcher, inject func() []string) (*agent.Outcome, []model.Message) {
	p.t.Helper()
	p.lastRootTranscript = filepath.Join(p.t.TempDir(), "root.jsonl")
	tw, err := session.Open(p.lastRootTranscript, session.Options{})
	must(p.t, err)
	defer tw.Close()
	m, err := script.Load(p.script)
	must(p.t, err)
	tools := tool.NewSet(append(tool.Builtins(), d.Tools()...)...)
	perms, err := tool.NewPermissions("acceptEdits", spawn.AlwaysAllowed(), nil, nil)
	must(p.t, err)
	var out *agent.Outcome
	for ev, err := range agent.Run(ctx, agent.Config{
		Name: "root", Model: m, System: "You are the root agent.", Tools: tools,
		Env: &tool.Env{Dir: p.root, Perms: perms}, Inject: inject, Transcript: tw,
	}, nil, "start") {
		if err != nil {
			p.t.Fatalf("root run: %v", err)
		}
		if ev.Outcome != nil {
			out = ev.Outcome
		}
	}
	if out == nil {
		p.t.Fatal("no outcome")
	}
	return out, out.Messages
}

// toolResults returns the tool_result texts of the conversation, in order.
func toolResults(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		for _, p := range m.Content {
			if p.Type == model.PartToolResult {
				out = append(out, p.Text)
			}
		}
	}
	return out
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readResult(t *testing.T, root, id string) *dispatch.Result {
	t.Helper()
	var r dispatch.Result
	must(t, dispatch.ReadJSON(filepath.Join(dispatch.Dir(root, id), dispatch.ResultFile), &r))
	return &r
}
