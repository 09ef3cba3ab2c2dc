//go:build linux

package isolate

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/sandbox"
)

// BenchmarkReadOnlyViewSpawn is the spawn cost of a read-only child's own
// mount view (issue 25, item 14): the same binary started and waited for,
// plain and with ConfigureReadOnly (a user and a mount namespace, the task
// directory bound over itself, every mount made read-only and the bind
// read-write again), interleaved so that load from elsewhere falls on
// both. It reports each median and the view's added milliseconds and
// ratio to the plain start.
//
//	go test ./internal/isolate -run '^$' -bench ReadOnlyViewSpawn -benchtime 200x
func BenchmarkReadOnlyViewSpawn(b *testing.B) {
	if !sandbox.Probe(b.Context()).UserNS {
		b.Skip("no user namespaces here: a read-only child keeps the metadata filter instead")
	}
	task := filepath.Join(b.TempDir(), "task")
	if err := os.MkdirAll(filepath.Join(task, "tmp"), 0o700); err != nil {
		b.Fatal(err)
	}
	run := func(view bool) time.Duration {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), spawnExitEnv+"=1")
		if view {
			if err := ConfigureReadOnly(cmd, []string{task}); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("view %v: %v\n%s", view, err, out)
		}
		return time.Since(t0)
	}
	var plain, viewed []time.Duration
	for b.Loop() {
		plain = append(plain, run(false))
		viewed = append(viewed, run(true))
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	p, v := med(plain), med(viewed)
	b.ReportMetric(p, "plain-ms")
	b.ReportMetric(v, "view-ms")
	b.ReportMetric(v-p, "added-ms")
	b.ReportMetric(v/p, "view/plain")
}
