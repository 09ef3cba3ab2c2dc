package temporal_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/cli"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/pool"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/testbrood"
)

const mainEnv = "BROOD_TEMPORAL_ENGINE_TEST_MAIN"

// TestMain: the submitters here keep their checkouts' records under a
// state home of the test binary's own (testbrood.MainOwnState).
func TestMain(m *testing.M) { testbrood.MainOwnState(m, mainEnv) }

// One dev server serves the package's tests that do not restart it; each
// test has its own task queue (and so its own runs in List).
var (
	sharedOnce sync.Once
	shared     *devserver.Server
	queueSeq   atomic.Int64
)

func sharedServer(t testing.TB) *devserver.Server {
	t.Helper()
	sharedOnce.Do(func() { shared = devserver.StartShared(t) })
	if shared == nil {
		t.Fatal("the shared Temporal dev server did not start (see the first test's log)")
	}
	return shared
}

func newQueue(t testing.TB) string {
	return fmt.Sprintf("brood-test-%d-%d", os.Getpid(), queueSeq.Add(1))
}

// limits are the test's short lifeguard and timeouts.
var testLimits = temporal.CallLimits{Heartbeat: 3 * time.Second, Timeout: 2 * time.Minute, KillGrace: 2 * time.Second, Attempts: 3}

// project is one worker's repository, with the scripted model.
type project struct {
	root, home, script string
	env                []string
}

func newProject(t testing.TB, script string) *project {
	t.Helper()
	root, home := t.TempDir(), t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	git := exec.Command("git", "init", "-q")
	git.Dir = root
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	sp := filepath.Join(root, ".brood", "script.yaml")
	if err := os.MkdirAll(filepath.Dir(sp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return &project{root: root, home: home, script: sp, env: append(os.Environ(), mainEnv+"=1", "HOME="+home, "BROOD_CHILD_EXE="+exe)}
}

// rates are how often children ping, how long the lifeguard waits for a
// ping (the activity's heartbeat timeout too), how often a worker's
// heartbeats reach the server at most and how often it uploads a growing
// transcript.
type rates struct {
	ping, timeout, heartbeat, upload time.Duration
}

// testRates are the tests': short, so a fault is seen within seconds.
var testRates = rates{ping: 100 * time.Millisecond, timeout: testLimits.Heartbeat, heartbeat: 200 * time.Millisecond, upload: 100 * time.Millisecond}

// userRates are what `brood worker` and the local engine run with by
// default: children ping every pool.ping_interval (5s), the lifeguard
// waits pool.heartbeat_timeout (60s), and the worker beats and uploads at
// most once per ping interval (internal/cli/worker): a benchmark's.
func userRates() rates {
	d := settings.Defaults().Pool
	return rates{ping: d.PingInterval.Duration, timeout: d.HeartbeatTimeout.Duration, heartbeat: d.PingInterval.Duration, upload: d.PingInterval.Duration}
}

// limits are the calls' limits at these rates.
func (r rates) limits() temporal.CallLimits {
	l := testLimits
	l.Heartbeat = r.timeout
	return l
}

// dispatcher is the worker's one call path over its project.
func (p *project) dispatcher(t testing.TB, conc int) *spawn.Dispatcher {
	t.Helper()
	return p.dispatcherAt(t, conc, testRates)
}

// dispatcherAt is dispatcher with its children's ping interval and
// lifeguard from r.
func (p *project) dispatcherAt(t testing.TB, conc int, r rates) *spawn.Dispatcher {
	t.Helper()
	exe, _ := os.Executable()
	s := settings.Defaults()
	s.Pool.Concurrency = conc
	s.Pool.PingInterval = settings.Duration{Duration: r.ping}
	s.Pool.HeartbeatTimeout = settings.Duration{Duration: r.timeout}
	s.Pool.KillGrace = settings.Duration{Duration: testLimits.KillGrace}
	reg, _ := registry.Load(registry.Options{ProjectRoot: p.root, Home: p.home})
	d, err := spawn.New(spawn.Config{
		ProjectRoot: p.root, Workspace: p.root, Registry: reg, Settings: s,
		Pool: pool.New(pool.Config{Concurrency: conc, HeartbeatTimeout: r.timeout, KillGrace: testLimits.KillGrace}),
		Exe:  exe, Env: p.env, MaxDepth: 1, SourceAgent: "worker",
		ParentSystem: "You are a brood worker.", ParentModel: "script:" + p.script,
		ParentTools: []string{"Read", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default"},
		Extras:      cli.Links().Delegation, // brood's: output schemas are checked
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startWorker runs an in-process worker on queue over its own project.
func startWorker(t testing.TB, c client.Client, queue, script string, conc int, store temporal.Store) *project {
	t.Helper()
	p := newProject(t, script)
	w := temporal.NewWorker(c, temporal.WorkerOptions{
		Queue: queue, Concurrency: conc, Heartbeat: 200 * time.Millisecond, StopTimeout: 5 * time.Second,
		Activities: &temporal.Activities{Runner: p.dispatcher(t, conc), ProjectRoot: p.root, Store: store, Worker: "test-" + filepath.Base(p.root), UploadEvery: 100 * time.Millisecond},
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return p
}

func newEngine(c client.Client, queue string) *temporal.Engine {
	return newEngineIn(c, queue, "")
}

// newEngineIn is newEngine for a submitter whose project is root (where
// it keeps a run's result.json).
func newEngineIn(c client.Client, queue, root string) *temporal.Engine {
	return temporal.New(temporal.Config{Client: c, Queue: queue, Poll: 50 * time.Millisecond, ProjectRoot: root,
		Limits: func(string) temporal.CallLimits { return testLimits }})
}
