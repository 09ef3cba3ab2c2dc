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

const deniedScript = `
agents:
  general-purpose:
    - tools:
        - {Write: {file_path: conf/x.txt, content: "from the fleet\n"}}
        - {Write: {file_path: free.txt, content: "from the fleet\n"}}
    - say: "## What I did\nWrote conf/x.txt and free.txt.\n\n## Files changed\nconf/x.txt\nfree.txt"
`

// TestFleetChangeTheSubmitterDeniesIsNotLanded (review40 P2-F): a fleet
// writer's change that writes a path the submitter's Edit deny rule
// forbids is judged on the submitter, as a local isolated writer's
// landing is: refused whole (free.txt, which no rule denies, is not
// landed either), kept under .brood/, the denied path named, a non-zero
// exit; a plan's run says so in its result.json.
func TestFleetChangeTheSubmitterDeniesIsNotLanded(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("denied-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, deniedScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Write\"]\n")
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"conf/x.txt": "base\n", "a.txt": "a\n",
		"wr.yaml": "name: wr\nphases:\n  - id: write\n    parallel:\n      - {agent: general-purpose, prompt: \"write them\"}\n"})
	// The submitter's own rule, in its user's settings.
	testbrood.WriteFile(t, filepath.Join(sub.Home, ".config", "brood", "settings.toml"), "[permissions]\ndeny = [\"Edit(conf/**)\"]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	untouched := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(filepath.Join(sub.Root, "conf", "x.txt")); string(b) != "base\n" {
			t.Errorf("%s: conf/x.txt is %q; want it untouched", what, b)
		}
		if _, err := os.Stat(filepath.Join(sub.Root, "free.txt")); err == nil {
			t.Errorf("%s: free.txt landed; want the whole patch refused", what)
		}
	}
	const said = "writes conf/x.txt, which your Edit or Write deny rules forbid"

	code, out, errs := sub.Brood(ctx, nil, append([]string{"subagent", "general-purpose", "write them", "--engine", "temporal", "--json"}, fleet...)...)
	var res struct {
		TaskID        string `json:"task_id"`
		Status, Patch string
		Summary       string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code == 0 || res.Patch != "not-applied" || !strings.Contains(out, said) {
		t.Fatalf("a single call whose change writes a denied path: exit %d, patch %q (%v); want non-zero, not-applied, the path named\n%s\n%s", code, res.Patch, err, out, errs)
	}
	untouched("the single call")
	kept := filepath.Join(sub.Root, ".brood", "fleet", "patches", res.TaskID, res.TaskID+".patch")
	if b, err := os.ReadFile(kept); err != nil || !strings.Contains(string(b), "conf/x.txt") || !strings.Contains(out, kept) {
		t.Fatalf("kept patch %s: %v; want it, named in the result:\n%s", kept, err, out)
	}

	code, out, errs = sub.Brood(ctx, nil, append([]string{"workflow", "run", "wr.yaml", "--engine", "temporal", "--yes"}, fleet...)...)
	if code != 1 || !strings.Contains(out, "not applied write/0") || !strings.Contains(out, said) {
		t.Fatalf("a plan whose tree writes a denied path: exit %d; want 1, write/0 not applied, the path named\n%s\n%s", code, out, errs)
	}
	untouched("the plan")
	id := strings.Fields(strings.TrimPrefix(out, "workflow "))[0]
	dir := filepath.Join(sub.Root, ".brood", "workflows", id)
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil || !strings.Contains(string(b), said) || !strings.Contains(string(b), `"not-applied"`) {
		t.Errorf("the run's result.json (%v) does not say its writer was not applied and why:\n%s", err, b)
	}
	j, err := os.ReadFile(filepath.Join(dir, "journal.jsonl"))
	if err != nil || !strings.Contains(string(j), said) {
		t.Errorf("the run's journal (%v) does not say why its writer's change was not applied:\n%s", err, j)
	}
	if _, err := os.Stat(filepath.Join(sub.Root, ".brood", "fleet", "patches", id, id+".patch")); err != nil {
		t.Errorf("the run's kept patch: %v", err)
	}
}
