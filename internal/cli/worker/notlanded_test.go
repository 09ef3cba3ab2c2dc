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

const conflictScript = `
agents:
  general-purpose:
    - tools: [{Write: {file_path: one.txt, content: "from the fleet\n"}}]
    - say: "## What I did\nWrote one.txt.\n\n## Files changed\none.txt"
      delay: 10s
`

// TestFleetWriterWhosePatchDoesNotLandFails (issue 26, item 3): a fleet
// writer whose change conflicts with what the user wrote meanwhile ends
// with a non-zero exit, the user's file untouched, and the patch kept
// under the project's .brood/, never under /tmp.
func TestFleetWriterWhosePatchDoesNotLandFails(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("notlanded-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, conflictScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The child writes one.txt in its copy (its second turn waits 10s):
	// the user then changes the same file.
	r := underTheWriter(ctx, t, sub, wp, append([]string{"subagent", "general-purpose", "write one", "--engine", "temporal", "--json"}, fleet...))
	if r.code == 0 || !strings.Contains(r.errs, "did not land") {
		t.Fatalf("a fleet writer whose change does not land: exit %d\n%s\n%s", r.code, r.out, r.errs)
	}
	if b, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt")); string(b) != "the user's own\n" {
		t.Fatalf("one.txt is %q; want the user's", b)
	}
	// Its status is not done (as brood subagent's of a local writer whose
	// change does not apply), and the wait said who ran it.
	var res struct {
		TaskID        string `json:"task_id"`
		Status, Patch string
	}
	if err := json.Unmarshal([]byte(r.out), &res); err != nil || res.Status != "not-applied" || res.Patch != "not-applied" {
		t.Errorf("--json: status %q, patch %q (%v); want not-applied, not-applied", res.Status, res.Patch, err)
	}
	// So do the listings of this repository.
	if code, out, errs := sub.Brood(ctx, nil, append([]string{"tasks", "show", res.TaskID}, fleet...)...); code != 0 || !strings.Contains(out, "status   not-applied") {
		t.Errorf("tasks show %s: exit %d; want status not-applied\n%s\n%s", res.TaskID, code, out, errs)
	}
	if code, out, errs := sub.Brood(ctx, nil, append([]string{"tasks"}, fleet...)...); code != 0 || !strings.Contains(out, " not-applied ") {
		t.Errorf("tasks: exit %d; want the call not-applied\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(r.errs, " running on worker ") {
		t.Errorf("the submitter never said its call was running on a worker:\n%s", r.errs)
	}
	// Kept as .brood/fleet/patches/TASK/TASK.patch, the file the result
	// names (fleetqa4 P3: it was .../TASK-RANDOM/isolate/changes.patch).
	kept := filepath.Join(sub.Root, ".brood", "fleet", "patches", res.TaskID, res.TaskID+".patch")
	if b, err := os.ReadFile(kept); err != nil || !strings.Contains(string(b), "one.txt") || !strings.Contains(r.out, kept) {
		t.Fatalf("kept patch %s: %v; want it named in the result:\n%s", kept, err, r.out)
	}
	if left, _ := filepath.Glob(filepath.Join(sub.Root, ".brood", "fleet", "patches", "*-*")); len(left) != 0 {
		t.Errorf("landing state directories left: %v", left)
	}
}

// TestFleetPlanWhoseTreeDoesNotLandFails (fleetqa P1 1): a plan on the
// fleet whose writer's change conflicts with what the user wrote meanwhile
// ends as on the local engine: exit 1, the run failed, its writer
// not-applied, the user's file untouched; workflow show says failed.
func TestFleetPlanWhoseTreeDoesNotLandFails(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("plannotlanded-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, conflictScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n",
		"wr.yaml": "name: wr\nphases:\n  - id: write\n    parallel:\n      - {agent: general-purpose, prompt: \"write one\"}\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := underTheWriter(ctx, t, sub, wp, append([]string{"workflow", "run", "wr.yaml", "--engine", "temporal", "--yes"}, fleet...))
	if r.code != 1 || !strings.Contains(r.out, " failed: ") || !strings.Contains(r.out, "not applied write/0") {
		t.Fatalf("a plan whose tree does not land: exit %d; want 1, the run failed, write/0 not applied\n%s\n%s", r.code, r.out, r.errs)
	}
	if b, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt")); string(b) != "the user's own\n" {
		t.Fatalf("one.txt is %q; want the user's", b)
	}
	// The phase's progress is said after the landing, as the local
	// engine says it: never done of the change that did not land.
	if strings.Contains(r.errs, " done: 1 done") || !strings.Contains(r.errs, "phase write (parallel) failed: 0 done, 0 running, 0 failed, 1 not applied, 0 queued") {
		t.Errorf("the progress says the phase done, or not that its writer was not applied:\n%s", r.errs)
	}
	// An unknown id names where it was looked for.
	if code, _, errs := sub.Brood(ctx, nil, append([]string{"tasks", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV"}, fleet...)...); code != 1 ||
		!strings.Contains(errs, "nor on the fleet (task queue "+queue+" on "+srv.Addr+")") || strings.Contains(errs, "lists them") {
		t.Errorf("tasks show of an unknown id: exit %d\n%s", code, errs)
	}
	id := strings.Fields(strings.TrimPrefix(r.out, "workflow "))[0]
	code, out, errs := sub.Brood(ctx, nil, append([]string{"workflow", "show", id}, fleet...)...)
	if code != 0 || !strings.Contains(out, "status   failed") || !strings.Contains(out, "agents   1 started, 0 done, 0 failed, 1 not applied, 0 running\n") {
		t.Errorf("workflow show %s: exit %d; want status failed, its writer counted not applied (not failed)\n%s\n%s", id, code, out, errs)
	}
	// The user makes room for the tree (reverts their edit): a resume of
	// the run tries its landing again and says so (fleetqa4 P3: it said
	// "resumed" and repeated the old refusal).
	testbrood.WriteFile(t, filepath.Join(sub.Root, "one.txt"), "base\n")
	code, out, errs = sub.Brood(ctx, nil, append([]string{"workflow", "resume", id}, fleet...)...)
	if b, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt")); code != 0 || string(b) != "from the fleet\n" || !strings.Contains(out+errs, "tried again") {
		t.Fatalf("workflow resume %s after the user made room: exit %d, one.txt %q; want 0, the run's tree landed, the landing said tried again\n%s\n%s", id, code, b, out, errs)
	}
}

// ran is how a brood command ended.
type ran struct {
	code      int
	out, errs string
}

// underTheWriter runs brood args in sub and, once the worker's child has
// written one.txt in its copy, writes the user's own one.txt under it, so
// the child's change cannot land; it returns how the command ended.
func underTheWriter(ctx context.Context, t *testing.T, sub, wp *testbrood.Project, args []string) ran {
	t.Helper()
	done := make(chan ran, 1)
	go func() {
		code, out, errs := sub.Brood(ctx, nil, args...)
		done <- ran{code, out, errs}
	}()
	waitCLI(t, "the child's write in its copy", func() bool {
		if len(done) > 0 {
			r := <-done
			t.Fatalf("brood %s ended before the child wrote: exit %d\n%s\n%s", args[0], r.code, r.out, r.errs)
		}
		for _, pat := range []string{"jobs/*/upper/one.txt", "jobs/*/tree/one.txt"} {
			m, _ := filepath.Glob(filepath.Join(wp.Home, ".cache", "brood", "fleet", filepath.FromSlash(pat)))
			for _, f := range m {
				if b, _ := os.ReadFile(f); string(b) == "from the fleet\n" {
					return true
				}
			}
		}
		return false
	})
	testbrood.WriteFile(t, filepath.Join(sub.Root, "one.txt"), "the user's own\n")
	return <-done
}
