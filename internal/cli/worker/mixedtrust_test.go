package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

const mixedTrustScript = `
agents:
  general-purpose:
    - cases:
        - if: "write a"
          tools: [{Write: {file_path: a.txt, content: "a from the fleet\n"}}]
        - if: "write b"
          tools: [{Write: {file_path: b.txt, content: "b from the fleet\n"}}]
      say: "nothing to write"
    - say: "## What I did\nWrote it.\n\n## Files changed\nthe file"
`

// TestMixedTrustQueueLandsEveryCall (issue 26, a tester's P1-1): on a
// queue where one worker trusts the submitter's key and another does not,
// a call or a chain step the other one takes is refused and tried again,
// so it runs on the worker that trusts the key: every writer of the plan
// is done and its change is in the submitter's tree. The untrusting worker
// polls alone first, so the calls' first attempts are its refusals.
func TestMixedTrustQueueLandsEveryCall(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("mixed-%d", os.Getpid())
	store := "file://" + t.TempDir()
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", store}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	sub := testbrood.NewProject(t, mainEnv, map[string]string{"README.md": "# r\n",
		"plan.yaml": "name: mixed\nphases:\n  - id: w\n    parallel:\n      - {agent: general-purpose, prompt: \"write a\"}\n      - {agent: general-purpose, prompt: \"write b\"}\n"})
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[temporal]\nattempts = 8\n")
	sub.Git("add", "-A")
	sub.Git("commit", "-qm", "plan")
	if code, _, errs := sub.Brood(ctx, nil, "fleet", "keygen"); code != 0 {
		t.Fatalf("brood fleet keygen: exit %d\n%s", code, errs)
	}
	pub := filepath.Join(temporal.KeyDir(sub.Home), temporal.PublicKeyFile)
	_, otherPub := keyIn(t)

	worker := func(key string) *proc {
		wp := workerProject(t, mixedTrustScript)
		appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
		return startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue",
			append([]string{"worker", "--concurrency", "2", "--trusted-key", key}, fleet...)...)
	}
	worker(otherPub) // trusts another key only

	done := make(chan ran, 1)
	go func() {
		code, out, errs := sub.Brood(ctx, nil, append([]string{"workflow", "run", "plan.yaml", "--engine", "temporal", "--yes", "--json"}, fleet...)...)
		done <- ran{code, out, errs}
	}()
	c, err := temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitCLI(t, "a call refused by the worker that does not trust the key", func() bool {
		if len(done) > 0 {
			r := <-done
			t.Fatalf("the run ended with no worker that trusts its key: exit %d\n%s\n%s", r.code, r.out, r.errs)
		}
		return refusedPending(ctx, c, queue)
	})
	worker(pub) // trusts the submitter's key

	r := <-done
	var res wf.Result
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || r.code != 0 || res.Status != wf.RunDone {
		t.Fatalf("the run: exit %d, status %q (%v); want done\n%s\n%s", r.code, res.Status, err, r.out, r.errs)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(sub.Root, f)); err != nil || !strings.Contains(string(b), "from the fleet") {
			t.Errorf("%s in the submitter's tree: %q (%v); want the writer's", f, b, err)
		}
	}
	calls, chains := refusedThenRan(ctx, t, c, res.RunID)
	if calls == 0 {
		t.Errorf("no call ran after a refusal of its key: the test did not try the retry")
	}
	t.Logf("attempts started after a refusal of the key: %d calls, %d chain steps", calls, chains)
}

// refusedPending reports whether a run on queue has an activity whose last
// attempt a worker refused for its key.
func refusedPending(ctx context.Context, c client.Client, queue string) bool {
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "TaskQueue = '" + queue + "'"})
	if err != nil {
		return false
	}
	for _, x := range resp.GetExecutions() {
		d, err := c.DescribeWorkflowExecution(ctx, x.GetExecution().GetWorkflowId(), x.GetExecution().GetRunId())
		if err != nil {
			continue
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetLastFailure().GetApplicationFailureInfo().GetType() == temporal.ErrUntrusted {
				return true
			}
		}
	}
	return false
}

// refusedThenRan counts the run's agent calls and chain steps whose
// started attempt followed a refusal of the key.
func refusedThenRan(ctx context.Context, t *testing.T, c client.Client, id string) (calls, chains int) {
	t.Helper()
	kind := map[int64]string{}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if s := ev.GetActivityTaskScheduledEventAttributes(); s != nil {
			kind[ev.GetEventId()] = s.GetActivityType().GetName()
		}
		s := ev.GetActivityTaskStartedEventAttributes()
		if s == nil || s.GetLastFailure().GetApplicationFailureInfo().GetType() != temporal.ErrUntrusted {
			continue
		}
		switch kind[s.GetScheduledEventId()] {
		case temporal.CallActivityName:
			calls++
		case temporal.ChainActivityName:
			chains++
		}
	}
	return calls, chains
}
