package temporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// reBriefScript: the BETA brief writes evil.txt, the ALPHA one ok.txt;
// the second turn waits, so the run is cancelled while the call's
// heartbeat carries its transcript and change, unless the call continues
// after an interruption (a resume from that heartbeat).
const reBriefScript = `
agents:
  general-purpose:
    - cases:
        - if: "BETA"
          tools:
            - Write: {file_path: "evil.txt", content: "pwned\n"}
      tools:
        - Write: {file_path: "ok.txt", content: "alpha\n"}
    - cases:
        - if: "interrupted"
          say: "CONTINUED turn {{.Turn}} first user [{{.Prompt}}]"
      delay: 20s
      say: "DONE turn {{.Turn}} first user [{{.Prompt}}]"
`

// reBriefFirst re-briefs a plan call (ALPHA -> BETA) in the run's first
// execution only (a resumed execution's calls continue their task).
type reBriefFirst struct {
	interceptor.WorkflowOutboundInterceptorBase
}

func (o *reBriefFirst) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	if in, ok := args[0].(temporal.CallInput); ok && typ == temporal.CallActivityName && in.Spec.Resume == "" && strings.Contains(in.Spec.Prompt, "ALPHA") {
		in.Spec.Prompt = strings.ReplaceAll(in.Spec.Prompt, "ALPHA", "BETA")
		in.Spec.Description = strings.ReplaceAll(in.Spec.Description, "ALPHA", "BETA")
		args = []any{in}
	}
	return o.Next.ExecuteActivity(ctx, typ, args...)
}

// TestReBriefedStoppedCallIsNotContinued (review28 P1-2): a run with a
// worker allowlist is cancelled while its writer call's heartbeat carries
// the call's conversation and change, and resumed. Its workflow tasks
// completed by brood's own code, the call continues that conversation,
// on another worker or the same. Completed by a stand-in that re-briefed
// the call (ALPHA -> BETA), the heartbeat was signed for the BETA input,
// not the one brood's workflow scheduled, so the workflow keeps no
// continuation of it: on another worker the resume starts the call over
// from its own brief; on the one that ran it, whose records hold the
// BETA conversation, the call is refused. Neither the BETA conversation
// nor its change (evil.txt) reaches the user's tree.
func TestReBriefedStoppedCallIsNotContinued(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rebrief, same bool
		want          string // the resumed call's output begins so ("": it failed)
		why           string // the failed call's error says so
	}{
		{"brood's own workflow on another worker", false, false, "CONTINUED turn 2 first user [Begin: p: ALPHA", ""},
		{"brood's own workflow on the same worker", false, true, "CONTINUED turn 2 first user [Begin: p: ALPHA", ""},
		{"re-briefed by a stand-in on another worker", true, false, "DONE turn 2 first user [Begin: p: ALPHA", ""},
		{"re-briefed by a stand-in on the same worker", true, true, "", "which this worker ran for another brief than the call's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, dir := stopAndResume(t, stopRun{rebrief: tc.rebrief, same: tc.same})
			b, _ := json.Marshal(got.Phases)
			if _, err := os.Stat(filepath.Join(dir, "evil.txt")); err == nil {
				t.Errorf("the re-briefed (BETA) call's change evil.txt is in the user's tree after the resume (%s, landed %q)", got.Status, got.Landed)
			}
			if strings.Contains(string(b), "BETA") {
				t.Errorf("the resumed call continued the re-briefed BETA conversation: %s", b)
			}
			if len(got.Phases) != 1 || len(got.Phases[0].Calls) != 1 {
				t.Fatalf("resumed %s (%s); phases %s; want the one call", got.Status, got.Reason, b)
			}
			c := got.Phases[0].Calls[0]
			if tc.want == "" {
				if got.Status == wf.RunDone || c.Status != dispatch.StatusFailed || !strings.Contains(c.Error, tc.why) {
					t.Fatalf("resumed %s, the call %s (%s); want it failed saying %q", got.Status, c.Status, c.Error, tc.why)
				}
				return
			}
			if got.Status != wf.RunDone || c.Status != call.StatusDone {
				t.Fatalf("resumed %s (%s); phases %s; want the call done", got.Status, got.Reason, b)
			}
			if out := fmt.Sprint(c.Output); !strings.HasPrefix(out, tc.want) {
				t.Errorf("the resumed call said %q; want %q...", out, tc.want)
			}
			if f, err := os.ReadFile(filepath.Join(dir, "ok.txt")); err != nil || string(f) != "alpha\n" {
				t.Errorf("ok.txt = %q, %v; want the ALPHA brief's write landed (landed %q)", f, err, got.Landed)
			}
		})
	}
}

// stopRun is how stopAndResume runs its plan: a stand-in re-briefs the
// call (rebrief); the resume runs on the worker that ran the call (same)
// or another; the first execution is an old brood's (old: a submitter
// that required no bound-stops marker, a workflow that records none).
type stopRun struct{ rebrief, same, old bool }

// stopAndResume runs a one-call plan (ALPHA) under a worker allowlist,
// its workflow tasks completed by brood's code or by a stand-in that
// re-briefs the call; cancels it once the call's heartbeat carries its
// transcript and change; and resumes it on the same worker (same) or
// another (of the fleet's key, so it continues what the first signed).
// dir: the user's tree.
func stopAndResume(t *testing.T, how stopRun) (res *wf.Result, dir string) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	first := startWorkerProcWith(t, srv.Addr, q, reBriefScript, store, 1, writerSettings)
	name := q + "-own"
	standInOld(t, name, q, how.rebrief)
	dir = submitterRepo(t)
	eng := oldStartEngine(t, name, dir, store, how.old)
	p := enginetest.Plan(t, "name: p\nphases:\n  - id: a\n    parallel: [{agent: general-purpose, prompt: \"ALPHA\"}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ids := make(chan string, 1)
	done := make(chan *wf.Result, 1)
	go func() {
		res, err := eng.Run(ctx, engine.RunRequest{Plan: p, Source: "plan.yaml", Started: func(id string) { ids <- id }})
		if err != nil {
			t.Logf("first execution: %v", err)
		}
		done <- res
	}()
	id := <-ids
	waitFor(t, "the call's heartbeat with its transcript and change", 2*time.Minute, func() bool {
		for _, pc := range pending(t, c, id) {
			if !pc.HB.Transcript.IsZero() && pc.HB.Position > 0 && pc.HB.Code != nil {
				return true
			}
		}
		return false
	})
	cancel()
	select {
	case res := <-done:
		// An old submitter's start is not the input this one sends: it
		// refuses the execution's output (the resume reads it anyway).
		if !how.old && (res == nil || res.Status != wf.RunCancelled) {
			t.Fatalf("first execution %+v; want it cancelled", res)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the cancelled run did not end")
	}
	if !how.same {
		first.kill()
		startWorkerProcWith(t, srv.Addr, q, reBriefScript, store, 1, writerSettings)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer rcancel()
	res, err := eng.Resume(rctx, id, nil)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	return res, dir
}
