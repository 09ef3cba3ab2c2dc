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

const linkScript = `
agents:
  general-purpose:
    - tools: [{Bash: {command: "ln -s ../.brood/dispatch/evil tools && echo ok > ok.txt"}}]
    - say: "## What I did\nLinked tools.\n\n## Files changed\ntools, ok.txt"
`

// TestFleetWriterLinkOutOfTreeNotLanded (review18 R3): a fleet writer
// whose change leaves a symbolic link pointing outside the tree gets
// nothing into the submitter's tree: the call is not-applied, exits
// non-zero, names the link, and its patch is kept.
func TestFleetWriterLinkOutOfTreeNotLanded(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("linkland-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	wp := workerProject(t, linkScript)
	appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Bash\"]\n")
	startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errs := sub.Brood(ctx, nil, append([]string{"subagent", "general-purpose", "link tools", "--engine", "temporal", "--json"}, fleet...)...)
	if code == 0 {
		t.Fatalf("a fleet writer whose link leaves the tree: exit 0\n%s\n%s", out, errs)
	}
	for _, p := range []string{"tools", "ok.txt"} {
		if _, err := os.Lstat(filepath.Join(sub.Root, p)); err == nil {
			t.Errorf("%s landed in the submitter's tree", p)
		}
	}
	var res struct {
		Status, Patch, Text string
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Status != "not-applied" || res.Patch != "not-applied" {
		t.Errorf("--json: status %q, patch %q (%v); want not-applied, not-applied", res.Status, res.Patch, err)
	}
	if !strings.Contains(res.Text, "tools -> ../.brood/dispatch/evil") {
		t.Errorf("the link is not named:\n%s\n%s", out, errs)
	}
}
