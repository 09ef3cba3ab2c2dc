package isolate

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/taskdir"
)

// BenchmarkSiblingTasks times what a read-only child's confinement costs
// the thread that starts it, with 0, 1,000 and 10,000 finished tasks'
// directories beside its own in .brood/dispatch: its policy (ChildPolicy)
// and its Landlock domain (sandbox.RestrictForChild, on a thread of its
// own that then exits, as ConfineChild's). The cost must not grow with the
// number of tasks.
//
//	go test ./internal/isolate -run '^$' -bench SiblingTasks -benchtime 200x
func BenchmarkSiblingTasks(b *testing.B) {
	if sandbox.LandlockABI() < 1 {
		b.Skip("no Landlock")
	}
	for _, n := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.Setenv("HOME", b.TempDir())
			root := Resolved(b.TempDir())
			proj := taskdir.Open(root)
			for range n {
				td := proj.MustTask(taskdir.NewID())
				if err := td.Create(); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(td.File(taskdir.Result), []byte("{}"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			own := proj.MustTask(taskdir.NewID())
			if err := own.Create(); err != nil {
				b.Fatal(err)
			}
			env := &dispatch.Envelope{ReadOnly: true, ProjectRoot: root, Workspace: root, Depth: 1, MaxDepth: 1}
			base := NewPolicyBase(nil)
			var hidden, envBytes int
			for b.Loop() {
				p, _ := ChildPolicy(env, own.Path(), base)
				hidden, envBytes = len(p.Hidden), len(sandbox.HiddenEnv(p))
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
			b.ReportMetric(float64(hidden), "hidden")
			b.ReportMetric(float64(envBytes), "env-bytes")
		})
	}
}
