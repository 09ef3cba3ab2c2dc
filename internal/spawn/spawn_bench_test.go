package spawn_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/registry"
	"github.com/broodhq/brood/internal/settings"
	"github.com/broodhq/brood/internal/spawn"
)

// spawnScript is one explore child: one Read (its progress event marks the
// child as running its agent loop), then its answer.
const spawnScript = `
agents:
  explore:
    - tools:
        - Read: {file_path: "README.md"}
    - say: "## What I did\nRead README.md.\n## What I found\nA README.\n## Files changed\nnone\n## Problems\nnone"
`

// BenchmarkSpawnPath is the parent's side of a fan-out: K Task calls at
// once through the real dispatcher, pool and records, each child a real
// process (this test binary as brood-child, on a scripted model), the pool
// as wide as K. It reports, per child, the parent's own CPU (this process:
// records, scheduler, spawn, progress relay, verification, verdict), the
// wall of the whole fan-out, and the median from a child's Dispatch call
// to its first progress event (its first tool call: the process started,
// read its envelope and ran a model turn); and for K=64 and K=256 the
// parent's CPU per child and the spawn median per child as ratios to
// K=16's. Nothing on the parent's side may grow faster than K: the CPU
// ratio should stay near 1 (the spawn median grows with K on its own,
// since half of K children start before the median one, so its per-child
// ratio is the one to read).
//
//	go test ./internal/spawn -run '^$' -bench SpawnPath -benchtime 3x
func BenchmarkSpawnPath(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	var baseCPU, baseSpawn float64
	for _, k := range []int{16, 64, 256} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			var cpu, wall time.Duration
			var spawns []time.Duration
			for b.Loop() {
				c, w, sp := fanOutOnce(b, exe, k)
				cpu, wall, spawns = cpu+c, wall+w, append(spawns, sp...)
			}
			n := float64(b.N * k)
			perCPU := float64(cpu.Microseconds()) / n / 1000
			slices.Sort(spawns)
			med := float64(spawns[len(spawns)/2].Microseconds()) / 1000
			b.ReportMetric(perCPU, "parent-cpu-ms/child")
			b.ReportMetric(float64(wall.Microseconds())/n/1000, "wall-ms/child")
			b.ReportMetric(med, "spawn-median-ms")
			if k == 16 {
				baseCPU, baseSpawn = perCPU, med/float64(k)
			} else if baseCPU > 0 {
				b.ReportMetric(perCPU/baseCPU, "cpu×K16")
				b.ReportMetric(med/float64(k)/baseSpawn, "spawn/K×K16")
			}
		})
	}
}

// fanOutOnce runs k explore children at once in a new project and returns
// the parent's CPU, the wall time and each child's spawn latency.
func fanOutOnce(b *testing.B, exe string, k int) (cpu, wall time.Duration, spawns []time.Duration) {
	b.StopTimer()
	root, home := b.TempDir(), b.TempDir()
	for _, args := range [][]string{{"init", "-q"}} {
		if out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git: %v\n%s", err, out)
		}
	}
	sp := filepath.Join(root, ".brood", "script.yaml")
	for path, body := range map[string]string{filepath.Join(root, "README.md"): "# demo\n", sp: spawnScript, filepath.Join(root, ".gitignore"): ".brood/\n"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	reg, _ := registry.Load(registry.Options{ProjectRoot: root, Home: home, Claude: true})
	var mu sync.Mutex
	asked := map[string]time.Time{}
	first := map[string]time.Time{}
	s := benchSettings(k)
	d, err := spawn.New(spawn.Config{
		ProjectRoot: root, Workspace: root, Registry: reg, Settings: s,
		Exe: exe, Env: append(os.Environ(), "BROOD_TEST_MAIN=1", "BROOD_CHILD_EXE="+exe, "HOME="+home, "BROOD_TRUST_PROJECT=1"),
		MaxDepth: 1, SourceAgent: "root", ParentSystem: "You are the root agent.", ParentModel: "script:" + sp,
		ParentTools: []string{"Read", "Glob", "Grep", "LS"},
		Permissions: dispatch.Permissions{Mode: "default"},
		OnEvent: func(e spawn.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Type == "progress" {
				if _, ok := first[e.TaskID]; !ok {
					first[e.TaskID] = time.Now()
				}
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, k)
	for i := range ids {
		ids[i] = dispatch.NewID()
	}
	b.StartTimer()
	start, cpu0 := time.Now(), selfCPU()
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			mu.Lock()
			asked[id] = time.Now()
			mu.Unlock()
			_, err := d.Call(context.Background(), specFor(id, i))
			if err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	cpu, wall = selfCPU()-cpu0, time.Since(start)
	b.StopTimer()
	for _, id := range ids {
		t, err := dispatch.LoadTask(root, id)
		if err != nil || t.Status != dispatch.StatusDone || first[id].IsZero() {
			b.Fatalf("task %s: %v, status %v, progress seen %v", id, err, t, !first[id].IsZero())
		}
		spawns = append(spawns, first[id].Sub(asked[id]))
	}
	b.StartTimer()
	return cpu, wall, spawns
}

// selfCPU is this process's user+system time: the parent's alone (the
// children are reaped into RUSAGE_CHILDREN).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// specFor is child i's Task call, with the task id given.
func specFor(id string, i int) call.Spec {
	return call.Spec{TaskID: id, Agent: "explore", Description: fmt.Sprintf("area %d", i), Prompt: fmt.Sprintf("Read README.md and say what area %d is.", i)}
}

// benchSettings are the defaults with a pool as wide as the fan-out.
func benchSettings(k int) settings.Settings {
	s := settings.Defaults()
	s.Pool.Concurrency = k
	s.Pool.PingInterval = settings.Duration{Duration: time.Second}
	return s
}
