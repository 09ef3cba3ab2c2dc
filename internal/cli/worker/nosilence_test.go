package worker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// TestNoWorkerIsSaidAtOnce (issue 26): with no worker up, a plan's and a
// call's submitter each say at once that what they submitted is queued
// and why, instead of waiting silent until a worker answers.
func TestNoWorkerIsSaidAtOnce(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("noworker-%d", os.Getpid())
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	sub := testbrood.NewProject(t, mainEnv, map[string]string{
		"q.yaml": "name: q\nphases:\n  - id: p\n    parallel:\n      - {agent: explore, prompt: \"look\"}\n"})
	want := "queued (no worker is polling task queue " + queue + ")"
	for _, tc := range []struct {
		name, ready string
		args        []string
	}{
		{"workflow run", "  the run is ", []string{"workflow", "run", "q.yaml", "--engine", "temporal", "--yes"}},
		{"subagent", "task ", []string{"subagent", "explore", "look", "--engine", "temporal"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startBrood(t, sub, nil, tc.ready, append(tc.args, fleet...)...)
			if log := p.log(); !strings.Contains(log, want) {
				t.Errorf("brood %s with no worker said:\n%s\nwant %q", tc.name, log, want)
			}
		})
	}
}
