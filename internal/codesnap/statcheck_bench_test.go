package codesnap

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStatCheck is the per-use check of a verified checkout
// (statcheck.go) on issue 26's dirty tree: BROOD_BENCH_FILES (10,000)
// files in directories of 100 and as many untracked ones added in
// directories of 500, all settled (dated well before the index).
//
//	go test ./internal/codesnap -run XXX -bench StatCheck -benchtime 20x
func BenchmarkStatCheck(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("BROOD_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	tree := b.TempDir()
	long := time.Now().Add(-time.Hour)
	write := func(rel, data string) {
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, long, long); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		write(fmt.Sprintf("d%d/f%d.txt", i/100, i%100), fmt.Sprintf("file %d\n", i))
		write(fmt.Sprintf("new/u%d/n%d.txt", i/500, i), fmt.Sprintf("untracked %d\n", i))
	}
	gitIn(b, tree, "", "init", "-q")
	index := filepath.Join(b.TempDir(), "index")
	gitIn(b, tree, index, "add", "-A")
	idx, err := os.ReadFile(index)
	if err != nil {
		b.Fatal(err)
	}
	// A stamp a second after the files' ctimes, which are now: settled;
	// the directories' stamps too (statplan.go), as a checkout's are
	// by the time its calls come.
	stamp := time.Now().Add(2 * time.Second)
	for until := time.Now().Add(settleAge + 10*time.Millisecond); time.Now().Before(until); {
		time.Sleep(time.Until(until))
	}
	if !statClean(tree, idx, stamp, "sha1") {
		b.Fatal("the untouched tree is not stat-clean")
	}
	// "index": the index parsed for each check, as before a plan;
	// "plan": a verified checkout's plan, made once (remember), as a
	// worker's calls check it.
	b.Run("index", func(b *testing.B) {
		cpu := cpuTime()
		for range b.N {
			if !statClean(tree, idx, stamp, "sha1") {
				b.Fatal("the untouched tree is not stat-clean")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/check")
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/check")
	})
	b.Run("plan", func(b *testing.B) {
		p, ok := newStatPlan(idx, "sha1")
		if !ok {
			b.Fatal("no plan")
		}
		cpu := cpuTime()
		for range b.N {
			if !p.clean(tree, stamp) {
				b.Fatal("the untouched tree is not stat-clean")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/check")
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/check")
	})
	// "guard": a guarded checkout's use (guard.go; up to maxGuarded
	// files: BROOD_BENCH_FILES=1000 is issue 26's fleet tree, two
	// thousand files with the untracked ones), and arming it once.
	b.Run("guard", func(b *testing.B) {
		p, ok := newStatPlan(idx, "sha1")
		if !ok {
			b.Fatal("no plan")
		}
		at, cpu := time.Now(), cpuTime()
		g := armGuard(tree, p, stamp)
		if g == nil {
			b.Skipf("no guard for %d files (over %d, or no inotify or leases here)", len(p.entries), maxGuarded)
		}
		defer g.trip()
		arm, armCPU := time.Since(at), cpuTime()-cpu
		b.ResetTimer()
		cpu = cpuTime()
		for range b.N {
			if !g.quiet() {
				b.Fatal("the untouched tree's guard tripped")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/check")
		b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/check")
		b.ReportMetric(float64(arm.Microseconds())/1000, "ms/arm")
		b.ReportMetric(float64(armCPU.Microseconds())/1000, "cpu-ms/arm")
	})
}

// cpuTime is this process's user and system CPU so far: a check's cost
// on a loaded machine, where its wall time is mostly waiting for a core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
