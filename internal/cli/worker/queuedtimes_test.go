package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

const slowScript = `
agents:
  general-purpose:
    - tools: [{Write: {file_path: one.txt, content: "from the fleet\n"}}]
    - say: "## What I did\nWrote one.txt.\n\n## Files changed\none.txt"
  explore:
    - cases:
        - if: "slow"
          say: "slow answer"
          delay: 2s
      say: "plain answer"
`

// slowCall is how long a slow call's model answer takes.
const slowCall = 2 * time.Second

// TestFleetCallsSayQueuedAndRanApart (issue 26): a single call submitted
// before any worker polls its queue, and a plan's calls waiting for the
// one slot of the only worker, count the wait for a worker as queued, not
// as running: workflow show (text and --json), tasks show of a plan's
// call and of the single call, and the single call's --json each give
// the queued time apart from the run; workflow show says how many
// attempts a writer's change took to go into the run's tree.
func TestFleetCallsSayQueuedAndRanApart(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("queuedtimes-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, slowScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
	testbrood.WriteFile(t, filepath.Join(sub.Root, "plan.yaml"), "name: waits\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"slow one\"}, {agent: explore, prompt: \"slow two\"}, {agent: general-purpose, prompt: \"write one\"}]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	brood := func(args ...string) (int, string, string) { return sub.Brood(ctx, nil, append(args, fleet...)...) }

	single := make(chan ran, 1)
	go func() {
		code, out, errs := brood("subagent", "explore", "three", "--engine", "temporal", "--json")
		single <- ran{code, out, errs}
	}()
	waitCLI(t, "the call listed on the fleet", func() bool {
		_, out, _ := brood("tasks", "--json")
		var rows []struct{ Fleet, Kind string }
		_ = json.Unmarshal([]byte(out), &rows)
		return slices.ContainsFunc(rows, func(r struct{ Fleet, Kind string }) bool { return r.Fleet == "temporal" && r.Kind == "call" })
	})
	listed := time.Now()
	time.Sleep(queueWait) // the queue time under test, not a synchronisation
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	waited := time.Since(listed).Milliseconds()
	s := <-single
	code, out, errs := brood("workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml")
	p := ran{code, out, errs}
	var res wf.Result
	if json.Unmarshal([]byte(p.out), &res) != nil || p.code != 0 || res.Status != wf.RunDone || len(res.Phases) != 1 || len(res.Phases[0].Calls) != 3 {
		t.Fatalf("workflow run --engine temporal: exit %d\n%s\n%s", p.code, p.out, p.errs)
	}
	// One slot: the call that started last waited for both others, a slow
	// one among them; each slow one ran for its model's delay.
	var last wf.CallRecord
	for _, c := range res.Phases[0].Calls {
		if c.QueuedMS > last.QueuedMS {
			last = c
		}
		if c.RanMS <= 0 || c.Agent == "explore" && c.RanMS < slowCall.Milliseconds() {
			t.Errorf("plan call %s: ran_ms %d; want its run (a slow call's at least %v)", c.Key, c.RanMS, slowCall)
		}
		if c.Agent == "general-purpose" && c.ChainAttempts != 1 {
			t.Errorf("the writer's chain_attempts %d; want 1", c.ChainAttempts)
		}
	}
	if last.QueuedMS < slowCall.Milliseconds() {
		t.Errorf("the plan's calls: the longest queued_ms %d; want at least the %v a slow call held the only slot\n%s", last.QueuedMS, slowCall, p.out)
	}
	var call struct {
		TaskID string `json:"task_id"`
		Output struct {
			QueuedMS int64 `json:"queued_ms"`
			RanMS    int64 `json:"ran_ms"`
		} `json:"output"`
	}
	if json.Unmarshal([]byte(s.out), &call) != nil || s.code != 0 {
		t.Fatalf("subagent --engine temporal --json: exit %d\n%s\n%s", s.code, s.out, s.errs)
	}
	if o := call.Output; o.QueuedMS < waited || o.RanMS <= 0 || o.RanMS >= o.QueuedMS {
		t.Errorf("the single call's output: queued_ms %d, ran_ms %d; want at least %d ms queued, its run apart\n%s", o.QueuedMS, o.RanMS, waited, s.out)
	}

	times := regexp.MustCompile(`queued ([0-9.]+)(ms|s) for a worker, ran [0-9.]+m?s`)
	queuedAtLeast := func(out string, ms int64) bool {
		for _, m := range times.FindAllStringSubmatch(out, -1) {
			var v float64
			if _, err := fmt.Sscan(m[1], &v); err == nil && map[string]float64{"ms": v, "s": v * 1000}[m[2]] >= float64(ms)-100 {
				return true
			}
		}
		return false
	}
	code, out, errs = brood("workflow", "show", res.RunID)
	if code != 0 || len(times.FindAllString(out, -1)) != 3 || !queuedAtLeast(out, last.QueuedMS) || !strings.Contains(out, "its change took 1 attempt(s) to go into the run's tree") {
		t.Errorf("workflow show: exit %d; want each call's queued and run times and the writer's chain attempts\n%s\n%s", code, out, errs)
	}
	for id, ms := range map[string]int64{last.TaskID: last.QueuedMS, call.TaskID: waited} {
		code, out, errs = brood("tasks", "show", id)
		if code != 0 || !strings.Contains(out, "\ntimes    queued ") || !queuedAtLeast(out, ms) {
			t.Errorf("tasks show %s: exit %d; want its queued time apart from its run\n%s\n%s", id, code, out, errs)
		}
	}
	code, out, errs = brood("workflow", "show", res.RunID, "--json")
	var shown struct{ Result *wf.Result }
	if json.Unmarshal([]byte(out), &shown) != nil || code != 0 || shown.Result == nil ||
		!slices.ContainsFunc(shown.Result.Phases[0].Calls, func(c wf.CallRecord) bool { return c.QueuedMS == last.QueuedMS && c.RanMS == last.RanMS }) {
		t.Errorf("workflow show --json: exit %d; want queued_ms and ran_ms on its calls\n%s\n%s", code, out, errs)
	}
}
