package temporal_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// BenchmarkReplayRun is what taking a finished run's output costs the
// submitter: reading the execution's history from a real dev server and
// replaying it with brood's plan workflow (histreplay.go), for plans of k
// calls, 12 at a time, each result signed and checked (an in-process
// activity answers at once: no children). Reported: ms per run, µs per
// call, the history's events.
//
//	CI=true go test ./internal/engine/temporal -run XXX -bench ReplayRun -benchtime 5x
func BenchmarkReplayRun(b *testing.B) {
	for _, k := range []int{30, 300, 1000} {
		b.Run(fmt.Sprintf("calls=%d", k), func(b *testing.B) { benchReplay(b, k) })
	}
}

func benchReplay(b *testing.B, k int) {
	srv := sharedServer(b)
	c := srv.Client(b)
	q := newQueue(b)
	w := sdkworker.New(c, q, sdkworker.Options{MaxConcurrentActivityExecutionSize: 12})
	w.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	w.RegisterActivityWithOptions(func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		out := &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "ok"}}
		temporal.SignResultAs(ctx, 5, in, out) // as a brood worker does
		return out, nil
	}, activity.RegisterOptions{Name: temporal.CallActivityName})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	p, inputs := eachPlan(b, k, 12)
	in := temporal.RunInput{RunID: dispatch.NewID(), Plan: p, Inputs: inputs, Queue: q, Namespace: "default",
		Limits:  map[string]temporal.CallLimits{"": {Attempts: 1, Heartbeat: time.Minute, Timeout: time.Minute}},
		Workers: &temporal.WorkerSet{Keys: [][]byte{temporal.SeededPublic(5)}}}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.RunID, TaskQueue: q}, temporal.PlanWorkflowName, in)
	if err != nil {
		b.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		b.Fatal(err)
	}
	var events int
	var read, replay time.Duration
	for b.Loop() {
		start := time.Now()
		h := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, in.RunID, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		mid := time.Now()
		out, err := temporal.ReplayRunHistory(h, in.RunID, run.GetRunID())
		if err != nil || out.Result.Status != wf.RunDone || out.Result.Agents != k {
			b.Fatalf("replay: %v %+v", err, out.Result)
		}
		read, replay = read+mid.Sub(start), replay+time.Since(mid)
		events = len(h.Events)
	}
	n := float64(b.N)
	b.ReportMetric(float64(read.Milliseconds())/n, "read-ms/run")
	b.ReportMetric(float64(replay.Milliseconds())/n, "replay-ms/run")
	b.ReportMetric(float64(replay.Microseconds())/(n*float64(k)), "replay-µs/call")
	b.ReportMetric(float64(events), "events")
}

// BenchmarkTakeRun is what a plan command costs its submitter once the
// run has ended: brood workflow show of a finished run of k calls (the
// history read, replayed, the tree judged, every record checked against
// its worker's signature, the outputs and the calls' times taken), with
// a signing submitter that trusts the in-process worker's key. Reported:
// ms per show, µs per call.
//
//	CI=true go test ./internal/engine/temporal -run XXX -bench TakeRun -benchtime 5x
func BenchmarkTakeRun(b *testing.B) {
	for _, k := range []int{30, 300} {
		b.Run(fmt.Sprintf("calls=%d", k), func(b *testing.B) { benchTake(b, k) })
	}
}

func benchTake(b *testing.B, k int) {
	srv := sharedServer(b)
	c := srv.Client(b)
	q := newQueue(b)
	w := sdkworker.New(c, q, sdkworker.Options{MaxConcurrentActivityExecutionSize: 12})
	w.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	w.RegisterActivityWithOptions(func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		out := &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "ok"}}
		temporal.SignResultAs(ctx, 5, in, out) // as a brood worker does
		return out, nil
	}, activity.RegisterOptions{Name: temporal.CallActivityName})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := filepath.Join(b.TempDir(), "fleet")
	if _, err := temporal.GenerateKey(dir, "bench", false); err != nil {
		b.Fatal(err)
	}
	key, err := temporal.LoadSigner(filepath.Join(dir, temporal.PrivateKeyFile))
	if err != nil || key == nil {
		b.Fatalf("load the submitter's key: %v", err)
	}
	trust := temporal.NewTrust()
	if err := trust.Add(temporal.FormatPublicKey(ed25519.PublicKey(temporal.SeededPublic(5)), ""), "bench"); err != nil {
		b.Fatal(err)
	}
	eng := temporal.New(temporal.Config{Client: c, Queue: q, Poll: 50 * time.Millisecond, Signer: key, Workers: temporal.NewResultTrust(trust, ""),
		Limits: func(string) temporal.CallLimits {
			return temporal.CallLimits{Attempts: 1, Heartbeat: time.Minute, Timeout: time.Minute}
		}})
	p, inputs := eachPlan(b, k, 12)
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Inputs: inputs})
	if err != nil || res.Status != wf.RunDone || res.Agents != k {
		b.Fatalf("run: %v %+v", err, res)
	}
	var took, cpu time.Duration
	for b.Loop() {
		start, was := time.Now(), cpuTime(b)
		info, err := eng.Show(ctx, res.RunID)
		took, cpu = took+time.Since(start), cpu+cpuTime(b)-was
		if err != nil || info.Status != wf.RunDone || info.Agents != k || len(info.Result.Outputs) == 0 {
			b.Fatalf("show: %v %+v", err, info)
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(took.Milliseconds())/n, "ms/show")
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/show")
	b.ReportMetric(float64(cpu.Microseconds())/(n*float64(k)), "cpu-µs/call")
}

// cpuTime is this process's user and system time so far (the submitter's
// and the idle in-process worker's; the dev server is a process of its
// own): on a loaded machine, what a command costs is its CPU, not its
// wall time.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
