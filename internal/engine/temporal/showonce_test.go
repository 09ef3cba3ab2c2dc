package temporal_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
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

// historyReads is a client that counts the histories read through it.
type historyReads struct {
	client.Client
	n atomic.Int64
}

func (h *historyReads) GetWorkflowHistory(ctx context.Context, wid, run string, long bool, f enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	h.n.Add(1)
	return h.Client.GetWorkflowHistory(ctx, wid, run, long, f)
}

// TestAPlanCommandReadsItsHistoryOnce: brood workflow run and workflow
// show of an ended run read its execution's history once each (the
// replay's read; the calls' times come from it:
// TestSignedResultFiguresAreTheWorkers checks them).
func TestAPlanCommandReadsItsHistoryOnce(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	w := sdkworker.New(c, q, sdkworker.Options{})
	w.RegisterWorkflowWithOptions(temporal.PlanWorkflow, workflow.RegisterOptions{Name: temporal.PlanWorkflowName})
	w.RegisterActivityWithOptions(func(ctx context.Context, in temporal.CallInput) (*temporal.CallOutput, error) {
		out := &temporal.CallOutput{Result: call.Result{TaskID: in.Spec.TaskID, Agent: in.Spec.Agent, Status: dispatch.StatusDone, Summary: "ok"}}
		temporal.SignResultAs(ctx, 5, in, out)
		return out, nil
	}, activity.RegisterOptions{Name: temporal.CallActivityName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "fleet")
	if _, err := temporal.GenerateKey(dir, "test", false); err != nil {
		t.Fatal(err)
	}
	key, err := temporal.LoadSigner(filepath.Join(dir, temporal.PrivateKeyFile))
	if err != nil || key == nil {
		t.Fatalf("load the submitter's key: %v", err)
	}
	trust := temporal.NewTrust()
	if err := trust.Add(temporal.FormatPublicKey(ed25519.PublicKey(temporal.SeededPublic(5)), ""), "test"); err != nil {
		t.Fatal(err)
	}
	reads := &historyReads{Client: c}
	eng := temporal.New(temporal.Config{Client: reads, Queue: q, Poll: 50 * time.Millisecond, Signer: key, Workers: temporal.NewResultTrust(trust, ""),
		Limits: func(string) temporal.CallLimits { return testLimits }})
	p, inputs := eachPlan(t, 3, 3)
	res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Inputs: inputs})
	if err != nil || res.Status != wf.RunDone || res.Agents != 3 {
		t.Fatalf("run: %v %+v", err, res)
	}
	if n := reads.n.Load(); n != 1 {
		t.Errorf("workflow run read the run's history %d times; want once", n)
	}
	reads.n.Store(0)
	info, err := eng.Show(ctx, res.RunID)
	if err != nil || info.Status != wf.RunDone {
		t.Fatalf("show: %v %+v", err, info)
	}
	if n := reads.n.Load(); n != 1 {
		t.Errorf("workflow show read the run's history %d times; want once", n)
	}
}
