package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/taskdir"
)

// TestDelegatorReadsItsCopyOfSettings (review C7): a delegating child
// reads, in a real confined process, the copy of the user's settings its
// parent wrote in its task directory, which keeps what it needs to start
// its own children (the model, the pool) and leaves out the worker's
// remotes with their token, the Temporal endpoint and the store; the
// user's file it cannot read. settings.Resolve reads the copy the child's
// environment names. A child that does not delegate gets no copy.
func TestDelegatorReadsItsCopyOfSettings(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	user := filepath.Join(home, ".config", "brood", "settings.toml")
	writeFile(t, user, `model = "anthropic/claude-x"
store = "s3://bucket/p"
[pool]
concurrency = 3
[prices."anthropic/claude-x"]
input = 1.5
[worker]
remotes = ["https://x-access-token:REMOTE_TOKEN_IN_SETTINGS@example.com/r.git"]
[temporal]
address = "temporal.internal:7233"
`)
	writeFile(t, filepath.Join(proj, ".brood", ".keep"), "")
	td, err := taskdir.Open(proj).Task("01JDE1EGAT0R00000000000000")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(td.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	env := dispatch.Envelope{ReadOnly: true, Workspace: proj, ProjectRoot: proj, AllowedDestinations: []string{"*"}, MaxDepth: 3, Depth: 1}
	cmd := exec.Command("true")
	cmd.Env = []string{"HOME=" + home}
	if err := WriteChildSettings(cmd, &env, td); err != nil {
		t.Fatal(err)
	}
	cp := td.File(ChildSettingsName)
	if got := cmd.Env[len(cmd.Env)-1]; got != settings.EnvUserSettings+"="+cp {
		t.Fatalf("the child's environment names %q, want the copy %s", got, cp)
	}
	data, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "claude-x") || !strings.Contains(string(data), "1.5") {
		t.Errorf("the child's copy lost the user's [prices]:\n%s", data)
	}
	for _, leak := range []string{"REMOTE_TOKEN_IN_SETTINGS", "temporal.internal", "s3://bucket"} {
		if strings.Contains(string(data), leak) {
			t.Errorf("the child's copy holds %q:\n%s", leak, data)
		}
	}
	r, err := settings.Resolve(settings.Sources{Home: home, UserFile: cp})
	if err != nil {
		t.Fatal(err)
	}
	if r.Settings.Model != "anthropic/claude-x" || r.Settings.Pool.Concurrency != 3 || len(r.Settings.Worker.Remotes) != 0 {
		t.Errorf("from the copy: model %q, pool.concurrency %d, worker.remotes %v; want the user's model and pool, no remotes",
			r.Settings.Model, r.Settings.Pool.Concurrency, r.Settings.Worker.Remotes)
	}
	if sandbox.LandlockABI() >= 1 {
		p, _ := ChildPolicy(&env, td.Path(), NewPolicyBase(nil))
		if readAs(t, p, user) {
			t.Errorf("the delegating child read %s", user)
		}
		if !readAs(t, p, cp) {
			t.Errorf("the delegating child cannot read its copy %s", cp)
		}
	}
	t.Run("not delegating", func(t *testing.T) {
		leaf := env
		leaf.Depth = 3
		cmd := exec.Command("true")
		cmd.Env = []string{"HOME=" + home}
		td2, err := taskdir.Open(proj).Task("01JAAAAA000000000000000000")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(td2.Path(), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := WriteChildSettings(cmd, &leaf, td2); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(td2.File(ChildSettingsName)); err == nil || len(cmd.Env) != 1 {
			t.Errorf("a child that does not delegate got a copy of the settings")
		}
	})
}
