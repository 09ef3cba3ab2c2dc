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

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// paidScript answers an explore call's first turn with a tool call (a
// turn paid for) and holds its second one.
const paidScript = `
agents:
  explore:
    - say: "looking first"
      tools: [{LS: {path: .}}]
    - say: "still thinking"
      delay: 1h
`

// TestCancelledFleetCallShowsWhatItPaid (review37 P3-2, P3-3): Ctrl-C of
// `brood subagent --engine temporal` and of `brood workflow run --engine
// temporal` while the call waits for its second turn: brood tasks show,
// brood workflow show and their --json say the call is cancelled, with
// the tokens its first turn spent and its worker, and brood's reason,
// never the stopped child's.
func TestCancelledFleetCallShowsWhatItPaid(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("cancelpaid-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, paidScript)
	startBrood(t, wp, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: paid\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"count\"}]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }
	const reason = "the run was cancelled during this call"

	for _, args := range [][]string{
		{"subagent", "explore", "count", "--engine", "temporal"},
		{"workflow", "run", "plan.yaml", "--engine", "temporal", "--yes"},
	} {
		before := tasks(wp)
		p := startBrood(t, sub, nil, "", append(args, fleet...)...)
		task := ""
		waitCLI(t, "the call's first turn answered on the worker", func() bool {
			if task = newTask(wp, before); task == "" {
				return false
			}
			b, _ := os.ReadFile(filepath.Join(wp.Root, ".brood", "dispatch", task, "session.jsonl"))
			return strings.Contains(string(b), "looking first")
		})
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.end:
		case <-time.After(2 * time.Minute):
			t.Fatalf("brood %s did not end after Ctrl-C:\n%s", args[0], p.log())
		}
		if args[0] == "subagent" {
			code, out, errs := brood("tasks", "show", task)
			t.Logf("tasks show of the cancelled call:\n%s", out)
			if code != 0 || !strings.Contains(out, "status   cancelled") || !strings.Contains(out, "error    "+reason) ||
				strings.Contains(out, "none of them returned a result") || strings.Contains(out, " 0 tokens in") || !strings.Contains(out, "(ran it;") {
				t.Errorf("tasks show of the cancelled call: exit %d; want cancelled, its first turn's tokens, its worker and brood's reason\n%s\n%s", code, out, errs)
			}
			var shown struct {
				Status string
				Result struct {
					Status, Error, Worker string
					Attempts              int
					Usage                 struct{ Input, Output int64 }
				}
			}
			code, out, errs = brood("tasks", "show", task, "--json")
			if code != 0 || json.Unmarshal([]byte(out), &shown) != nil {
				t.Fatalf("tasks show --json: exit %d\n%s\n%s", code, out, errs)
			}
			if r := shown.Result; shown.Status != "cancelled" || r.Status != "cancelled" || r.Error != reason || r.Usage.Input == 0 || r.Attempts < 1 || r.Worker == "" {
				t.Errorf("tasks show --json of the cancelled call: %+v; want cancelled, its first turn's usage, attempt and worker, brood's reason", shown)
			}
			continue
		}
		code, out, errs := brood("workflow", "list", "--json")
		var runs []struct {
			RunID  string `json:"run_id"`
			Status string
		}
		if code != 0 || json.Unmarshal([]byte(out), &runs) != nil || len(runs) == 0 {
			t.Fatalf("workflow list --json: exit %d\n%s\n%s", code, out, errs)
		}
		run := runs[0].RunID
		code, out, errs = brood("workflow", "show", run)
		t.Logf("workflow show of the cancelled run:\n%s", out)
		if code != 0 || !strings.Contains(out, reason) || strings.Contains(out, "context canceled") {
			t.Errorf("workflow show of the cancelled run: exit %d; want brood's reason for its call\n%s\n%s", code, out, errs)
		}
		var info struct {
			Status string
			Usage  struct{ Input int64 }
			Result struct {
				Phases []struct {
					Calls []struct {
						Status, Error, Worker string
						Attempts              int
						Usage                 struct{ Input int64 }
					}
				}
			}
		}
		code, out, errs = brood("workflow", "show", run, "--json")
		if code != 0 || json.Unmarshal([]byte(out), &info) != nil || len(info.Result.Phases) == 0 || len(info.Result.Phases[0].Calls) == 0 {
			t.Fatalf("workflow show --json: exit %d\n%s\n%s", code, out, errs)
		}
		c := info.Result.Phases[0].Calls[0]
		if info.Status != "cancelled" || info.Usage.Input == 0 || c.Status != "cancelled" || c.Error != reason || c.Usage.Input != info.Usage.Input || c.Attempts < 1 || c.Worker == "" {
			t.Errorf("workflow show --json of the cancelled run: %+v; want cancelled, its call's first turn's usage, attempt and worker, brood's reason", info)
		}
	}
}

// newTask is a task of pr's that before does not list ("": none yet).
func newTask(pr *testbrood.Project, before []string) string {
	for _, id := range tasks(pr) {
		if !strings.Contains(strings.Join(before, " "), id) {
			return id
		}
	}
	return ""
}
