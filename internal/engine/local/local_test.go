package local_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_LOCAL_ENGINE_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

func newEngine(t *testing.T, script string) engine.Engine { return newEngineB(t, script, 4) }

// newEngineB is the local engine over a dispatcher in a fresh repository
// whose children are this test binary acting as brood.
func newEngineB(tb testing.TB, script string, conc int) engine.Engine {
	tb.Helper()
	root, home := tb.TempDir(), tb.TempDir()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	env := append(os.Environ(), mainEnv+"=1", "HOME="+home, "BROOD_CHILD_EXE="+exe)
	git := exec.Command("git", "init", "-q")
	git.Dir = root
	if out, err := git.CombinedOutput(); err != nil {
		tb.Fatalf("git init: %v\n%s", err, out)
	}
	sp := filepath.Join(root, ".brood", "script.yaml")
	if err := os.MkdirAll(filepath.Dir(sp), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		tb.Fatal(err)
	}
	s := settings.Defaults()
	s.Pool.Concurrency = conc
	s.Pool.PingInterval = settings.Duration{Duration: 100 * time.Millisecond}
	s.Pool.KillGrace = settings.Duration{Duration: 2 * time.Second}
	reg, _ := registry.Load(registry.Options{ProjectRoot: root, Home: home})
	d, err := spawn.New(spawn.Config{
		ProjectRoot: root, Workspace: root, Registry: reg, Settings: s,
		Exe: exe, Env: env, MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: "script:" + sp,
		ParentTools: []string{"Read", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default"},
		Extras:      cli.Links().Delegation, // brood's: output schemas are checked
	})
	if err != nil {
		tb.Fatal(err)
	}
	return local.New(local.Config{ProjectRoot: root, Runner: d, Concurrency: conc, CancelPoll: 20 * time.Millisecond})
}

func TestLocalEngineMeetsTheContract(t *testing.T) {
	enginetest.Run(t, enginetest.Fixture{New: newEngine})
}

// TestRunDirectory: a run keeps its plan, record, journal and result in its
// own directory.
func TestRunDirectory(t *testing.T) {
	eng := newEngine(t, enginetest.Script)
	p := enginetest.Plan(t, "name: one\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"first one\"}]\n")
	res, err := eng.Run(t.Context(), engine.RunRequest{Plan: p, Source: "plan.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	info, err := eng.Show(t.Context(), res.RunID)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(info.ResultRef)
	for _, f := range []string{local.RunFile, local.PlanFile, local.ResultFile, "journal.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
