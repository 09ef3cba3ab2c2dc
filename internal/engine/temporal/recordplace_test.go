package temporal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestForgedRecordInTheGitDirLandsNothing (review34 P2-1): where no
// kernel holds the git dir (no user namespaces, isolation.no_landlock),
// an in-place writer writes a plain sent.json naming a forger's start in
// .git/brood/fleet/T, where brood used to keep it. brood keeps its
// records in the user's state directory now and never reads that one:
// tasks show says the run is unverified, and tasks resume T (LandCall)
// keeps the forger's change as a patch, evil.txt not in the tree.
func TestForgedRecordInTheGitDirLandsNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	eng, dir, task := otherStartOfAnUnrecordedCall(ctx, t, nil)
	c := sharedServer(t).Client(t)
	ev, err := c.GetWorkflowHistory(ctx, "brood-call-"+task, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT).Next()
	if err != nil {
		t.Fatal(err)
	}
	var in temporal.CallInputW
	if err := converterFromPayload(ev.GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()[0], &in); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	forged := filepath.Join(dir, ".git", "brood", "fleet", task, "sent.json")
	if err := os.MkdirAll(filepath.Dir(forged), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forged, []byte(`{"inputs":["`+hex.EncodeToString(sum[:])+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := eng.Task(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Unverified, "unverified:") {
		t.Errorf("tasks show with a forged .git/brood record: status %s, unverified %q; want it unverified", d.Status, d.Unverified)
	}
	l, err := eng.LandCall(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil || l.State != "unverified" {
		t.Fatalf("LandCall with a forged .git/brood record = %+v (evil.txt: %v); want the forger's change kept, unverified", l, err)
	}
}

// TestCallNeverTakesARunningExecutionForItsStart (review34 P3-2): a call
// whose workflow id has an execution running that someone else started
// (a queue no worker polls keeps it running) sends nothing, says so in
// one line and keeps no run id of that execution as its start's; where
// the checkout's record names that very execution, the line says it is
// the user's own still running.
func TestCallNeverTakesARunningExecutionForItsStart(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(map[bool]string{false: "another's", true: "this checkout's"}[own], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			c := sharedServer(t).Client(t)
			q := newQueue(t)
			dir := submitterRepo(t)
			eng, _ := trustingEngine(t, q, dir, "file://"+t.TempDir())
			task := dispatch.NewID()
			wid := "brood-call-" + task
			run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: q}, temporal.CallWorkflowName,
				temporal.CallInputW{Spec: call.Spec{Agent: "general-purpose", Prompt: "BETA", TaskID: task}, Queue: q})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = c.TerminateWorkflow(context.Background(), wid, run.GetRunID(), "test over") })
			rec, err := temporal.RecordDir(ctx, dir, task)
			if err != nil {
				t.Fatal(err)
			}
			if own {
				if err := os.MkdirAll(rec, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := dispatch.WriteJSON(filepath.Join(rec, "sent.json"), map[string]any{"inputs": []string{"ab"}, "runs": []map[string]string{{"input": "ab", "run": run.GetRunID()}}}); err != nil {
					t.Fatal(err)
				}
			}
			callCtx, stop := context.WithTimeout(ctx, 30*time.Second)
			defer stop()
			_, err = eng.Call(callCtx, call.Spec{Agent: "general-purpose", Prompt: "ALPHA", TaskID: task})
			want := "another execution of " + wid + " is running, one this checkout keeps no record of starting (execution " + run.GetRunID() + ")"
			if own {
				want = "an execution of " + wid + " this checkout started (" + run.GetRunID() + ") is still running"
			}
			if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Call beside a running execution: %v; want one line saying %q", err, want)
			}
			b, err := os.ReadFile(filepath.Join(rec, "sent.json"))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), run.GetRunID()); n != map[bool]int{false: 0, true: 1}[own] {
				t.Fatalf("sent.json names the running execution %d time(s): %s", n, b)
			}
		})
	}
}
