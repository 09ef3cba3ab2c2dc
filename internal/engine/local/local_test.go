package local_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/delegate"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_LOCAL_ENGINE_TEST_MAIN"

func TestMain(m *testing.M) { testbrood.Main(m, mainEnv) }

// newEngine is the local engine over a dispatcher in a fresh project whose
// children are this test binary acting as brood.
func newEngine(t *testing.T, script string) engine.Engine {
	p := testbrood.NewProject(t, mainEnv, nil)
	spec := p.Script("script.yaml", script)
	s := settings.Defaults()
	s.Pool.PingInterval = settings.Duration{Duration: 100 * time.Millisecond}
	s.Pool.KillGrace = settings.Duration{Duration: 2 * time.Second}
	reg, _ := registry.Load(registry.Options{ProjectRoot: p.Root, Home: p.Home})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d, err := delegate.New(delegate.Config{
		ProjectRoot: p.Root, Workspace: p.Root, Registry: reg, Settings: s,
		Exe: exe, Env: append(os.Environ(), p.Env...), MaxDepth: 1, SourceAgent: "root",
		ParentSystem: "You are the root agent.", ParentModel: spec,
		ParentTools: []string{"Read", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return local.New(local.Config{ProjectRoot: p.Root, Runner: d, Concurrency: 4, CancelPoll: 20 * time.Millisecond})
}

func TestLocalEngineMeetsTheContract(t *testing.T) {
	enginetest.Run(t, enginetest.Fixture{New: newEngine})
}

// TestRunDirectory: a run keeps its plan, record, journal and result in its
// own directory, and nothing else.
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
