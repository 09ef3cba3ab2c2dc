package spawn_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
)

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	return len(ents)
}

func goroutines() int { return runtime.NumGoroutine() }

// settleGoroutines gives exiting goroutines a chance to finish (they may be
// between their last statement and their exit) and returns the count.
func settleGoroutines(want int) int {
	g := goroutines()
	for i := 0; i < 1000 && g > want; i++ {
		runtime.Gosched()
		runtime.GC()
		g = goroutines()
	}
	return g
}

// zombies lists our children in state Z (exited, never waited for).
func zombies(t *testing.T) []int {
	t.Helper()
	var out []int
	for _, p := range dispatch.Procs() {
		if p.PPID == os.Getpid() && p.State == "Z" {
			out = append(out, p.PID)
		}
	}
	return out
}
