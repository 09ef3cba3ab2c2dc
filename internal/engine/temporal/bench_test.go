package temporal_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/local"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/workflow"
)

// BenchmarkTemporalVsLocal runs one plan of K=40 calls (BROOD_BENCH_K is
// not read: the fleet run is the slow one) through the local engine and
// through the Temporal engine (a real dev server, one in-process worker
// over its own repository), 4 at a time, with the same real children: the
// difference per agent is what the fleet costs (a workflow task and an
// activity task per call, heartbeats, the store).
//
//	go test ./internal/engine/temporal -run XXX -bench TemporalVsLocal -benchtime 1x
func BenchmarkTemporalVsLocal(b *testing.B) {
	const k, conc = 40, 4
	items := make([]string, k)
	for j := range items {
		items[j] = fmt.Sprintf("%q", fmt.Sprint("item-", j))
	}
	p, err := workflow.Parse("bench.yaml", []byte("name: bench\nconcurrency: 4\ninputs:\n  items: {type: list}\nphases:\n  - id: e\n    each: inputs.items[*]\n    stages: [{agent: explore, prompt: \"item {{item}}\"}]\n"))
	if err != nil {
		b.Fatal(err)
	}
	in, _ := workflow.ResolveInputs(p, map[string]string{"items": "[" + strings.Join(items, ",") + "]"})
	run := func(eng engine.Engine) time.Duration {
		start := time.Now()
		res, err := eng.Run(b.Context(), engine.RunRequest{Plan: p, Source: "bench.yaml", Inputs: in})
		if err != nil || res.Status != workflow.RunDone || res.Agents != k {
			b.Fatalf("run: %v %+v", err, res)
		}
		return time.Since(start)
	}
	for i := 0; i < b.N; i++ {
		lp := newProject(b, enginetest.Script)
		loc := local.New(local.Config{ProjectRoot: lp.root, Runner: lp.dispatcher(b, conc), Concurrency: conc})
		srv := sharedServer(b)
		c := srv.Client(b)
		q := newQueue(b)
		startWorker(b, c, q, enginetest.Script, conc, &temporal.DirStore{Dir: b.TempDir()})
		tmp := newEngine(c, q)
		lw := run(loc)
		tw := run(tmp)
		per := float64(tw-lw) / float64(k) / 1e6
		b.ReportMetric(lw.Seconds(), "local-s")
		b.ReportMetric(tw.Seconds(), "temporal-s")
		b.ReportMetric(per, "overhead-wall-ms/agent")
		b.ReportMetric(float64(tw-lw)*conc/float64(k)/1e6, "overhead-slot-ms/agent")
		b.Logf("K=%d concurrency=%d: local engine %s, Temporal engine %s: %.1f ms of wall per agent more (%.0f ms per slot)", k, conc, lw.Round(time.Millisecond), tw.Round(time.Millisecond), per, float64(tw-lw)*conc/float64(k)/1e6)
	}
}
