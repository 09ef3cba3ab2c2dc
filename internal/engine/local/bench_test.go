package local_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/workflow"
)

// sampler watches this process's descendants: the most alive at once and
// the most proportional set size (PSS) they held together.
type sampler struct {
	stop     chan struct{}
	done     chan struct{}
	peakN    int
	peakPSS  int64 // kB
	parentPS int64
}

func startSampler(every time.Duration) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			n, pss := descendants(os.Getpid())
			s.peakN, s.peakPSS = max(s.peakN, n), max(s.peakPSS, pss)
			s.parentPS = max(s.parentPS, pssOf(os.Getpid()))
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) finish() { close(s.stop); <-s.done }

// descendants counts the processes below pid and sums their PSS.
func descendants(pid int) (int, int64) {
	kids := map[int][]int{}
	for _, p := range dispatch.Procs() {
		if p.State != "Z" {
			kids[p.PPID] = append(kids[p.PPID], p.PID)
		}
	}
	n, pss := 0, int64(0)
	var walk func(int)
	walk = func(p int) {
		for _, c := range kids[p] {
			n++
			pss += pssOf(c)
			walk(c)
		}
	}
	walk(pid)
	return n, pss
}

func pssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "Pss:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// BenchmarkWorkflow300 runs a plan whose each phase has K=300 items
// (BROOD_BENCH_K overrides) through real child processes with the pool's
// default concurrency (5), and the same 300 calls made directly through
// the engine, 5 at a time: the difference per agent is what the workflow
// machinery (journal, templates, scheduling) costs. A third run, watched by
// a sampler of this process's descendants, gives the peak of live
// processes and of their summed PSS (the sampler costs CPU, so the timed
// runs go without it).
//
//	go test ./internal/engine/local -run XXX -bench Workflow300 -benchtime 1x
func BenchmarkWorkflow300(b *testing.B) {
	k := 300
	if v, err := strconv.Atoi(os.Getenv("BROOD_BENCH_K")); err == nil && v > 0 {
		k = v
	}
	const conc = 5
	for i := 0; i < b.N; i++ {
		eng := newEngineB(b, enginetest.Script, conc)
		single := timeCalls(b, eng, 10, 1) / 10
		plain := timeCalls(b, eng, k, conc)
		wall, _ := timePlan(b, eng, k, false)
		_, s := timePlan(b, eng, k, true)
		perAgent := float64(wall-plain) / float64(k) / 1e6
		b.ReportMetric(float64(s.peakN), "peak-procs")
		b.ReportMetric(float64(s.peakPSS)/1024, "peak-child-PSS-MiB")
		b.ReportMetric(float64(s.parentPS)/1024, "parent-PSS-MiB")
		b.ReportMetric(wall.Seconds(), "workflow-s")
		b.ReportMetric(plain.Seconds(), "plain-calls-s")
		b.ReportMetric(perAgent, "overhead-wall-ms/agent")
		b.ReportMetric(float64(single)/1e6, "single-call-ms")
		b.ReportMetric(float64(wall)*conc/float64(k)/1e6, "slot-ms/agent")
		b.Logf("K=%d concurrency=%d: workflow %s, the same calls directly %s (%.1f ms of wall per agent more); one Task-style call alone %s, an agent in the workflow holds a slot %.0f ms; peak %d live child processes, their PSS peak %.1f MiB, the parent's %.1f MiB",
			k, conc, wall.Round(time.Millisecond), plain.Round(time.Millisecond), perAgent, single.Round(time.Millisecond), float64(wall)*conc/float64(k)/1e6, s.peakN, float64(s.peakPSS)/1024, float64(s.parentPS)/1024)
	}
}

// timePlan runs the K-item plan once, watched by a sampler if asked.
func timePlan(b *testing.B, eng engine.Engine, k int, watch bool) (time.Duration, *sampler) {
	items := make([]string, k)
	for j := range items {
		items[j] = fmt.Sprintf("%q", fmt.Sprint("item-", j))
	}
	p, err := workflow.Parse("bench.yaml", []byte("name: bench\ninputs:\n  items: {type: list}\nphases:\n  - id: e\n    each: inputs.items[*]\n    stages: [{agent: explore, prompt: \"item {{item}}\"}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	in, _ := workflow.ResolveInputs(p, map[string]string{"items": "[" + strings.Join(items, ",") + "]"})
	var s *sampler
	if watch {
		s = startSampler(50 * time.Millisecond)
	}
	start := time.Now()
	res, err := eng.Run(b.Context(), engine.RunRequest{Plan: p, Source: "bench.yaml", Inputs: in})
	wall := time.Since(start)
	if s != nil {
		s.finish()
	}
	if err != nil || res.Status != workflow.RunDone || res.Agents != k {
		b.Fatalf("run: %v, status %s, %d agents", err, res.Status, res.Agents)
	}
	return wall, s
}

// timeCalls makes k calls directly through the engine, conc at a time.
func timeCalls(b *testing.B, eng engine.Engine, k, conc int) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	for j := 0; j < k; j++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if r, err := eng.Call(b.Context(), call.Spec{Agent: "explore", Prompt: fmt.Sprint("item ", j)}); err != nil || !r.OK() {
				b.Errorf("call %d: %v", j, err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}
