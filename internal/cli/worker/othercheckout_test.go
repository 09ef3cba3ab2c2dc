package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestAnotherCheckoutRefusesToLand (fleetqa3 P1-2): a plan run and a
// single call submitted from checkout A, on the same fleet, as seen from
// checkout B: `workflow list`/`show` and `tasks show` name A, never say
// the change is missing from B's tree; `workflow resume` and `tasks
// resume` in B refuse, naming A, and land nothing there nor keep the
// run's result in B's .brood/.
func TestAnotherCheckoutRefusesToLand(t *testing.T) {
	srv := devserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := newDeadCallFleet(ctx, t, srv.Addr)
	for _, g := range []string{".one", ".two"} {
		testbrood.WriteFile(t, d.gate+g, "open\n") // no waiting here
	}
	rootA, err := filepath.EvalSymlinks(d.sub.Root)
	if err != nil {
		t.Fatal(err)
	}
	testbrood.WriteFile(t, filepath.Join(d.sub.Root, "plan.yaml"), "name: two\nphases:\n  - id: w\n    parallel:\n      - {agent: general-purpose, prompt: \"write two\"}\n")
	code, out, errs := d.brood("workflow", "run", "plan.yaml", "--engine", "temporal", "--yes", "--json")
	var res struct {
		RunID  string `json:"run_id"`
		Status string
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != "done" {
		t.Fatalf("workflow run in A: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs = d.brood("subagent", "general-purpose", "write one", "--engine", "temporal", "--json")
	var one struct {
		TaskID string `json:"task_id"`
		Status string
	}
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.Status != "done" {
		t.Fatalf("subagent in A: exit %d\n%s\n%s", code, out, errs)
	}
	readFile(t, d.sub.Root, "one.txt")
	readFile(t, d.sub.Root, "two.txt")

	b := testbrood.NewProject(t, mainEnv, nil)
	inB := func(args ...string) (int, string, string) { return b.Brood(ctx, nil, append(args, d.fleet...)...) }
	if code, out, errs := inB("workflow", "show", res.RunID, "--engine", "temporal"); code != 0 || !strings.Contains(out, rootA) || strings.Contains(out, "not in your tree") {
		t.Errorf("workflow show in B: exit %d\n%s\n%s\nwant A named, never 'not in your tree'", code, out, errs)
	}
	if code, out, errs := inB("workflow", "list", "--engine", "temporal"); code != 0 || !strings.Contains(out, "submitted from "+rootA) {
		t.Errorf("workflow list in B: exit %d\n%s\n%s\nwant the run marked as A's", code, out, errs)
	}
	if code, out, errs := inB("workflow", "resume", res.RunID, "--engine", "temporal"); code == 0 || !strings.Contains(errs, rootA) || !strings.Contains(errs, "brood workflow resume "+res.RunID) {
		t.Errorf("workflow resume in B: exit %d\n%s\n%s\nwant a refusal naming A", code, out, errs)
	}
	if code, out, errs := inB("tasks", "show", one.TaskID); code != 0 || !strings.Contains(out, "submitted from "+rootA) {
		t.Errorf("tasks show of A's call in B: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := inB("tasks", "resume", one.TaskID); code == 0 || !strings.Contains(errs, rootA) {
		t.Errorf("tasks resume of A's call in B: exit %d\n%s\n%s\nwant a refusal naming A", code, out, errs)
	}
	for _, f := range []string{"one.txt", "two.txt", filepath.Join(".brood", "workflows", res.RunID)} {
		if _, err := os.Stat(filepath.Join(b.Root, f)); err == nil {
			t.Errorf("%s is in checkout B", f)
		}
	}
}
