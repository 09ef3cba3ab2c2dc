package isolate

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// BenchmarkKnownProjects times what a read-only child's confinement costs
// the thread that starts it with 0, 100 and 1,000 other known projects
// under the home (each a top directory of 20 entries and its .brood),
// and one whose top directory its writers filled with 20,000 files:
// its policy (ChildPolicy, and the dispatcher's known-projects layer,
// built once before the loop: layer-build-cpu-ms) and its Landlock
// domain (sandbox.RestrictForChild, the layer and its own, on a thread
// of its own that then exits);
// cpu-ms/op is the process's CPU time (user and system) per spawn, less
// bent by the machine's load than the wall time.
//
//	go test ./internal/isolate -run '^$' -bench KnownProjects -benchtime 50x
func BenchmarkKnownProjects(b *testing.B) {
	if sandbox.LandlockABI() < 1 {
		b.Skip("no Landlock")
	}
	for _, tc := range []struct{ n, fat int }{{0, 0}, {100, 0}, {1000, 0}, {1, 20000}} {
		n := tc.n
		name := fmt.Sprint(n)
		if tc.fat > 0 {
			name += fmt.Sprintf("-fat%d", tc.fat)
		}
		b.Run(name, func(b *testing.B) {
			home := Resolved(b.TempDir())
			b.Setenv("HOME", home)
			b.Setenv("XDG_STATE_HOME", "")
			for i := range n {
				d := filepath.Join(home, "src", fmt.Sprint("p", i))
				for j := range 20 {
					if err := os.MkdirAll(filepath.Join(d, fmt.Sprint("e", j)), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				if err := taskdir.Open(d).EnsureWritable(); err != nil {
					b.Fatal(err)
				}
				for j := range tc.fat { // its writers filled its top directory
					f, err := os.Create(filepath.Join(d, fmt.Sprint("bloat-", j)))
					if err != nil {
						b.Fatal(err)
					}
					f.Close()
				}
			}
			root := Resolved(b.TempDir())
			proj := taskdir.Open(root)
			own := proj.MustTask(taskdir.NewID())
			if err := own.Create(); err != nil {
				b.Fatal(err)
			}
			env := &dispatch.Envelope{ReadOnly: true, ProjectRoot: root, Workspace: root, Depth: 1, MaxDepth: 1}
			base := NewPolicyBase(nil)
			// The known-projects layer, built once for the dispatcher
			// (its first child's start), timed apart.
			build0 := cpuTime()
			if _, _, err := base.KnownLayer(root, nil); err != nil {
				b.Fatal(err)
			}
			build := cpuTime() - build0
			var hidden, envBytes, layered int
			cpu0 := cpuTime()
			for b.Loop() {
				p, _ := ChildPolicy(env, own.Path(), base)
				if _, err := base.knownLayer(env, own.Path(), &p, false); err != nil {
					b.Fatal(err)
				}
				hidden, envBytes, layered = len(p.Hidden), len(sandbox.HiddenEnv(p)), len(p.Layer.Paths())
				errc := make(chan error, 1)
				go func() {
					runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
					_, _, _, err := sandbox.RestrictForChild(p)
					errc <- err
				}()
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(hidden), "hidden")
			b.ReportMetric(float64(envBytes), "env-bytes")
			b.ReportMetric(float64(layered), "layer-paths")
			b.ReportMetric(float64(build)/1e6, "layer-build-cpu-ms")
		})
	}
}

// cpuTime is this process's user and system CPU time so far, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
