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

const oddHomeScript = `
agents:
  general-purpose:
    - tools: [{Bash: {command: "echo fleet > new.txt && echo more >> one.txt && echo wrote"}}]
    - say: "## What I did\nWrote new.txt and one.txt.\n\n## Files changed\nnew.txt, one.txt"
`

// TestFleetWriterInOddWorkerHome: a worker whose HOME (its clone cache,
// where each call's copy and an overlay's layers live) has ',' and ':' in
// its path runs a writer whose change lands in the submitter's tree: on
// an overlay copy (the probe and the mount take such a path), and on a
// full copy (isolation.force_worktree, as on a machine without overlays),
// whose writer was confined to the worker's own project and could write
// nothing of the copy.
func TestFleetWriterInOddWorkerHome(t *testing.T) {
	srv := devserver.Start(t)
	for i, tc := range []struct {
		name, settings, log string
	}{
		{"overlay", "", "no overlay on this machine (mount"},
		{"full copy", "\n[isolation]\nforce_worktree = true\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			queue := fmt.Sprintf("oddhome-%d-%d", os.Getpid(), i)
			fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
			wp := workerProject(t, oddHomeScript)
			home := filepath.Join(t.TempDir(), "a,b:c")
			if err := os.CopyFS(home, os.DirFS(wp.Home)); err != nil {
				t.Fatal(err)
			}
			for i, e := range wp.Env {
				if strings.HasPrefix(e, "HOME=") {
					wp.Env[i] = "HOME=" + home
				}
			}
			wp.Home = home
			appendSettings(t, wp.Root, "\n[permissions]\nallow = [\"Bash\"]\n"+tc.settings)
			w := startBrood(t, wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
			if tc.log != "" && strings.Contains(w.log(), tc.log) {
				t.Errorf("the worker's overlay probe failed in its home:\n%s", w.log())
			}
			sub := testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			code, out, errs := sub.Brood(ctx, nil, append([]string{"subagent", "general-purpose", "write", "--engine", "temporal", "--json"}, fleet...)...)
			var res struct {
				Status, Patch string
			}
			_ = json.Unmarshal([]byte(out), &res)
			n, _ := os.ReadFile(filepath.Join(sub.Root, "new.txt"))
			o, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt"))
			got := string(n) + string(o)
			if code != 0 || res.Status != "done" || res.Patch != "applied" || got != "fleet\nbase\nmore\n" {
				t.Errorf("exit %d, status %q, patch %q, tree %q; want done, applied, the child's change\n%s\n%s", code, res.Status, res.Patch, got, out, errs)
			}
		})
	}
}
