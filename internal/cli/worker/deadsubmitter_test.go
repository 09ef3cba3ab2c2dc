package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// twoPhaseScript: phase one writes one.txt; phase two stalls until it is
// picked up again, then reads one.txt and writes what it saw to two.txt.
const twoPhaseScript = `
agents:
  general-purpose:
    - cases:
        - if: "interrupted"
          tools:
            - Read: {file_path: "one.txt"}
        - if: "write one"
          tools:
            - Write: {file_path: "one.txt", content: "from phase one\n"}
        - if: "wait then write"
          say: "still thinking"
          delay: 1h
      say: "nothing to do"
    - cases:
        - if: "from phase one"
          tools:
            - Write: {file_path: "two.txt", content: "after {{result 0}}"}
      say: "## What I did\nWrote one.txt.\n\n## Files changed\none.txt"
    - say: "## What I did\nWrote two.txt.\n\n## Files changed\ntwo.txt"
`

const twoPhasePlan = `name: dead-submitter
phases:
  - id: first
    parallel: [{agent: general-purpose, prompt: "write one"}]
  - id: second
    parallel: [{agent: general-purpose, prompt: "wait then write"}]
`

// TestDeadSubmittersChangesLandOnResume: the submitting `brood workflow
// run --engine temporal` is killed with SIGKILL after phase one's writer
// finished and while phase two's runs; the run is cancelled from another
// command, then `brood workflow resume` from the submitter's checkout
// lands what the dead submitter never did (phase one's one.txt) and what
// the resumed execution wrote (two.txt, made after reading one.txt), each
// once; a second resume lands nothing again.
func TestDeadSubmittersChangesLandOnResume(t *testing.T) {
	srv := devserver.Start(t)
	c := srv.Client(t)
	queue := fmt.Sprintf("dead-submitter-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	trust := []string{"BROOD_TRUST_PROJECT=1"}
	for range 2 {
		pr := workerProject(t, twoPhaseScript)
		appendSettings(t, pr.Root, "\n[permissions]\nallow = [\"Write\", \"Edit\"]\n")
		startBrood(t, pr, trust, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	}
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), twoPhasePlan)
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[pool]\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	run := startBrood(t, sub, nil, "workflow run ", append([]string{"workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml"}, fleet...)...)
	var id string
	for _, l := range strings.Split(run.log(), "\n") {
		if strings.HasPrefix(l, "workflow run ") {
			id = strings.Fields(l)[2]
		}
	}
	if id == "" {
		t.Fatalf("no run id in %q", run.log())
	}
	waitCLI(t, "phase two's call with its transcript uploaded", func() bool {
		// Phase one done first: the call running then is phase two's.
		v, err := c.QueryWorkflow(ctx, id, "", temporal.ProgressQuery)
		var p temporal.Progress
		if err != nil || v.Get(&p) != nil || !slices.ContainsFunc(p.Events, func(e wf.Event) bool { return e.Phase == "first" && e.Status == wf.PhaseDone }) {
			return false
		}
		d, err := c.DescribeWorkflowExecution(ctx, id, "")
		if err != nil {
			return false
		}
		for _, a := range d.GetPendingActivities() {
			var hb temporal.Heartbeat
			if p := a.GetHeartbeatDetails().GetPayloads(); len(p) > 0 && converter.GetDefaultDataConverter().FromPayload(p[0], &hb) == nil &&
				hb.Position > 0 && a.GetActivityType().GetName() == temporal.CallActivityName {
				return true
			}
		}
		return false
	})
	// Phase one finished before phase two started: its change is in the
	// run's tree on the fleet, and nowhere here yet.
	run.kill()
	if _, err := os.Stat(filepath.Join(sub.Root, "one.txt")); err == nil {
		t.Fatal("one.txt landed before the run ended")
	}
	if code, _, errs := brood("workflow", "cancel", id); code != 0 {
		t.Fatalf("workflow cancel: exit %d\n%s", code, errs)
	}
	waitCLI(t, "the run cancelled on the fleet", func() bool {
		code, out, _ := brood("workflow", "show", id, "--json")
		var info struct{ Status string }
		return code == 0 && json.Unmarshal([]byte(out), &info) == nil && info.Status == wf.RunCancelled
	})
	if _, err := os.Stat(filepath.Join(sub.Root, "one.txt")); err == nil {
		t.Fatal("one.txt landed with nobody to land it")
	}

	code, out, errs := brood("workflow", "resume", id, "--json")
	var res wf.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != wf.RunDone {
		var pend []string
		if d, err := c.DescribeWorkflowExecution(context.Background(), id, ""); err == nil {
			for _, a := range d.GetPendingActivities() {
				pend = append(pend, fmt.Sprintf("%s attempt %d state %s worker %s failure %q", a.GetActivityType().GetName(), a.GetAttempt(), a.GetState(), a.GetLastWorkerIdentity(), a.GetLastFailure().GetMessage()))
			}
		}
		t.Fatalf("workflow resume: exit %d\n%s\n%s\npending: %v", code, out, errs, pend)
	}
	if !strings.Contains(res.Landed, "applied 1 file(s): one.txt") || !strings.Contains(res.Landed, "applied 1 file(s): two.txt") {
		t.Errorf("resume landed %q; want one.txt (the dead submitter's) and two.txt (the resumed execution's) applied", res.Landed)
	}
	one, two := readFile(t, sub.Root, "one.txt"), readFile(t, sub.Root, "two.txt")
	if one != "from phase one\n" || !strings.Contains(two, "from phase one") {
		t.Fatalf("one.txt %q, two.txt %q; want phase one's file and phase two's, made after reading it", one, two)
	}
	code, out, errs = brood("workflow", "resume", id, "--json")
	var again wf.Result
	if code != 0 || json.Unmarshal([]byte(out), &again) != nil || again.Status != wf.RunDone {
		t.Fatalf("second workflow resume: exit %d\n%s\n%s", code, out, errs)
	}
	if strings.Contains(again.Landed, "does not apply") || strings.Contains(again.Landed, "failed") {
		t.Errorf("the second resume landed again: %q", again.Landed)
	}
	if readFile(t, sub.Root, "one.txt") != one || readFile(t, sub.Root, "two.txt") != two {
		t.Error("the second resume changed the files")
	}
	if st := sub.Git("status", "--porcelain", "--", "one.txt", "two.txt"); st != "?? one.txt\n?? two.txt\n" {
		t.Errorf("git status %q; want both new files, unstaged", st)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
