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

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

const stallScript = `
agents:
  explore:
    - cases:
        - if: "interrupted"
          say: "picked up again and finished"
        - if: "wait forever"
          say: "still thinking"
          delay: 1h
      say: "plain answer"
`

// TestCancelledFleetCallResumesOnAnotherWorker: `brood subagent --engine
// temporal` stopped with Ctrl-C while its call runs, the worker that ran
// it killed, then `brood tasks resume ID PROMPT` from the submitter's
// directory: the other worker continues the conversation from the
// transcript in the store (a fresh start would wait forever again).
func TestCancelledFleetCallResumesOnAnotherWorker(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("resume-call-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	a, b := workerProject(t, stallScript), workerProject(t, stallScript)
	wa := startBrood(t, a, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	wb := startBrood(t, b, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[pool]\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	submit := startBrood(t, sub, nil, "", append([]string{"subagent", "explore", "wait forever", "--engine", "temporal", "--json"}, fleet...)...)
	var id string
	var shown struct {
		Status    string
		Worker    string
		Heartbeat struct {
			Transcript struct{ Key string }
			Position   int64
		}
		Result struct{ Status, Summary string }
	}
	show := func() bool {
		code, out, _ := brood("tasks", "show", id, "--json")
		return code == 0 && json.Unmarshal([]byte(out), &shown) == nil
	}
	waitCLI(t, "the fleet call with its transcript uploaded", func() bool {
		if id == "" {
			code, out, _ := brood("tasks", "--json")
			var rows []struct{ ID, Fleet, Kind string }
			if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
				return false
			}
			for _, r := range rows {
				if r.Fleet == "temporal" && r.Kind == "call" {
					id = r.ID
				}
			}
			if id == "" {
				return false
			}
		}
		return show() && shown.Heartbeat.Transcript.Key != "" && shown.Heartbeat.Position > 0
	})
	ranOn := shown.Worker
	if err := submit.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-submit.end:
	case <-time.After(2 * time.Minute):
		t.Fatalf("brood subagent did not end after Ctrl-C:\n%s", submit.log())
	}
	if !show() || shown.Result.Status != "cancelled" {
		t.Fatalf("the call after Ctrl-C: %+v; want cancelled", shown)
	}
	victim, other := wa, b
	if strings.HasSuffix(ranOn, fmt.Sprintf(":%d", wb.cmd.Process.Pid)) {
		victim, other = wb, a
	}
	victim.kill()
	code, out, errs := brood("tasks", "resume", id, "you were interrupted: finish now", "--json")
	var res struct {
		TaskID  string `json:"task_id"`
		Status  string `json:"status"`
		Summary string `json:"summary"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != "done" || res.TaskID != id || !strings.Contains(res.Summary, "picked up again and finished") {
		t.Fatalf("tasks resume of the cancelled fleet call: exit %d\n%s\n%s", code, out, errs)
	}
	if !slices.Contains(tasks(other), id) {
		t.Fatalf("task %s did not continue on the other worker (its tasks: %v)", id, tasks(other))
	}
	if code, _, errs := brood("workflow", "cancel", id); code == 0 || !strings.Contains(errs, "not running") {
		t.Fatalf("workflow cancel of a finished fleet call: exit %d\n%s", code, errs)
	}
}

// waitCLI polls cond (each poll runs brood commands) until it holds.
func waitCLI(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond) // polling the fleet's observable state, with a deadline
	}
}
