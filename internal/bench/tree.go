package bench

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"time"
)

// TreeMemory is what the sampler saw of a process tree while it ran.
type TreeMemory struct {
	PeakPSSKB int64 // max over samples of the summed PSS of every live process
	PeakRSSKB int64 // max over samples of the summed RSS
	PeakProcs int   // max number of live processes in one sample
	// RSSAtPeakPSS is the summed RSS in the sample that had the peak PSS.
	RSSAtPeakPSS int64
	Seen         int // distinct pids seen over the run (root included)
	Samples      int
	// ChildAnonKB is the median over every process below the root of its
	// peak anonymous memory (its private heap and stacks: what a child
	// costs beyond the shared binary); RootAnonKB is the root's peak.
	ChildAnonKB, RootAnonKB int64
}

// sampleTree samples the tree under root every interval until ctx ends.
// It walks /proc/<pid>/task/<tid>/children (children are listed under the
// thread that forked them, so every thread is read) and sums smaps_rollup.
// PSS is the honest total: pages of the shared binary are split between
// the processes mapping them instead of counted once per process.
func sampleTree(ctx context.Context, root int, every time.Duration) TreeMemory {
	var m TreeMemory
	seen := map[int]bool{}
	anon := map[int]int64{} // each process's peak Anonymous
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pids := treePIDs(root)
		var pss, rss int64
		live := 0
		for _, p := range pids {
			seen[p] = true
			ps, rs, an, ok := rollup(p)
			if ok {
				anon[p] = max(anon[p], an)
				pss += ps
				rss += rs
				live++
			}
		}
		if live > 0 {
			m.Samples++
		}
		if pss > m.PeakPSSKB {
			m.PeakPSSKB, m.RSSAtPeakPSS = pss, rss
		}
		m.PeakRSSKB = max(m.PeakRSSKB, rss)
		m.PeakProcs = max(m.PeakProcs, live)
		select {
		case <-ctx.Done():
			m.Seen = len(seen)
			var kids []int64
			for p, a := range anon {
				if p != root {
					kids = append(kids, a)
				}
			}
			m.ChildAnonKB, m.RootAnonKB = medianInt(kids), anon[root]
			return m
		case <-t.C:
		}
	}
}

// treePIDs lists root and its live descendants.
func treePIDs(root int) []int {
	out := []int{root}
	for i := 0; i < len(out); i++ {
		p := strconv.Itoa(out[i])
		tasks, err := os.ReadDir("/proc/" + p + "/task")
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + p + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// rollup reads a process's PSS, RSS and anonymous memory in KiB. A process that exited (or
// is a zombie with no mappings) reports ok=false.
func rollup(pid int) (pss, rss, anon int64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil || len(b) == 0 {
		return 0, 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("Pss:")):
			pss = kb(line)
			ok = true
		case bytes.HasPrefix(line, []byte("Rss:")):
			rss = kb(line)
		case bytes.HasPrefix(line, []byte("Anonymous:")):
			anon = kb(line)
		}
	}
	return pss, rss, anon, ok
}

func kb(line []byte) int64 {
	f := strings.Fields(string(line))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n
}
