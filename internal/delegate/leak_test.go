package delegate_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
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
	me := os.Getpid()
	ents, err := os.ReadDir("/proc")
	must(t, err)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		if ppid == me && f[0] == "Z" {
			out = append(out, pid)
		}
	}
	return out
}
