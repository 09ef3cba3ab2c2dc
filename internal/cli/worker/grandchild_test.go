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

// grandchildScript: the call's writer delegates to a writer of its own
// (the "inner" task), whose Bash writes the copy and tries the worker's
// own project ($WORKER_PROJECT).
const grandchildScript = `
agents:
  general-purpose:
    - cases:
        - if: "Begin: inner"
          tools: [{Bash: {command: "echo grand > grand.txt; echo more >> one.txt; echo no > \"$WORKER_PROJECT/escaped.txt\"; echo done"}}]
      tools: [{Task: {subagent_type: general-purpose, description: inner, prompt: "write grand.txt"}}]
    - say: "## What I did\n{{trunc 1500 (result 0)}}\n\n## Files changed\ngrand.txt, one.txt"
`

// TestFleetGrandchildWritesTheCopy: a fleet call's child that delegates
// to a writer of its own: that grandchild writes the call's copy (an
// overlay, and a full copy), its change lands in the submitter's tree, and
// it writes nothing of the worker's project, and its parent's guard
// watches its configuration. Its dispatcher had no copy:
// its writer worked "in place" in the worker's project, got EACCES on
// every write of the copy, and the call was "done" with no change.
func TestFleetGrandchildWritesTheCopy(t *testing.T) {
	srv := devserver.Start(t)
	for i, tc := range []struct {
		name, settings string
	}{
		{"overlay", ""},
		{"full copy", "\n[isolation]\nforce_worktree = true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runGrandchildCall(t, srv.Addr, fmt.Sprintf("grandchild-%d-%d", os.Getpid(), i), grandchildScript, tc.settings, true)
			wp, sub, code, out, errs, w, res := c.wp, c.sub, c.code, c.out, c.errs, c.w, c.res
			n, _ := os.ReadFile(filepath.Join(sub.Root, "grand.txt"))
			o, _ := os.ReadFile(filepath.Join(sub.Root, "one.txt"))
			got := string(n) + string(o)
			if code != 0 || res.Status != "done" || res.Patch != "applied" || got != "grand\nbase\nmore\n" {
				t.Errorf("exit %d, status %q, patch %q, tree %q; want done, applied, the grandchild's change\n%s\n%s\n%s", code, res.Status, res.Patch, got, out, errs, w.log())
			}
			if _, err := os.Lstat(filepath.Join(wp.Root, "escaped.txt")); err == nil {
				t.Errorf("the grandchild wrote the worker's own project")
			}
			// Its parent's configuration guard watches what that parent's
			// sandbox lets it read (review33 P3-1: the user's config files
			// it hides failed the whole snapshot).
			if strings.Contains(out, "configuration not watched") {
				t.Errorf("the grandchild's configuration was not watched:\n%s", out)
			}
		})
	}
}

// turnsScript: the call's writer dispatches two writers in one turn; A
// reads one.txt, works a while, and writes it back with its line; B reads
// and writes it with its own meanwhile.
const turnsScript = `
agents:
  general-purpose:
    - cases:
        - if: "Begin: innerA"
          tools: [{Bash: {command: "c=$(cat one.txt); sleep 2; printf '%s\\nA\\n' \"$c\" > one.txt; echo A > a.txt; echo done"}}]
        - if: "Begin: innerB"
          tools: [{Bash: {command: "sleep 0.5; c=$(cat one.txt); printf '%s\\nB\\n' \"$c\" > one.txt; echo B > b.txt; echo done"}}]
      tools: [{Task: {subagent_type: general-purpose, description: innerA, prompt: "write A"}}, {Task: {subagent_type: general-purpose, description: innerB, prompt: "write B"}}]
    - say: "## What I did\n{{trunc 1500 (result 0)}}\n{{trunc 1500 (result 1)}}\n\n## Files changed\none.txt, a.txt, b.txt"
`

// TestFleetGrandchildWritersTakeTurns: two writers a fleet call's child
// dispatches in one turn write the call's one copy in turn (an overlay,
// and a full copy): both lines land in the submitter's one.txt. They ran
// at once on the copy: A's write overwrote B's line, both "done", the
// call "applied".
func TestFleetGrandchildWritersTakeTurns(t *testing.T) {
	srv := devserver.Start(t)
	for i, tc := range []struct {
		name, settings string
	}{
		{"overlay", ""},
		{"full copy", "\n[isolation]\nforce_worktree = true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := runGrandchildCall(t, srv.Addr, fmt.Sprintf("gcturns-%d-%d", os.Getpid(), i), turnsScript, tc.settings, false)
			sub, code, out, errs, w, res := c.sub, c.code, c.out, c.errs, c.w, c.res
			var got string
			for _, name := range []string{"one.txt", "a.txt", "b.txt"} {
				b, _ := os.ReadFile(filepath.Join(sub.Root, name))
				got += string(b)
			}
			// Each grandchild is done, its files_changed the parent's
			// walks of the copy before and after it.
			each := strings.Contains(out, "Files changed: a.txt, one.txt") && strings.Contains(out, "Files changed: b.txt, one.txt") &&
				!strings.Contains(out, `status=\"failed\"`) && !strings.Contains(out, "Verification failed")
			if code != 0 || res.Status != "done" || res.Patch != "applied" || !each || (got != "base\nA\nB\nA\nB\n" && got != "base\nB\nA\nA\nB\n") {
				t.Errorf("exit %d, status %q, patch %q, one.txt+a.txt+b.txt %q; want done, applied, both lines\n%s\n%s\n%s", code, res.Status, res.Patch, got, out, errs, w.log())
			}
		})
	}
}

// grandchildCall is what runGrandchildCall ran and saw.
type grandchildCall struct {
	wp, sub   *testbrood.Project
	w         *proc
	code      int
	out, errs string
	res       struct{ Status, Patch string }
}

// runGrandchildCall starts a worker on queue whose project scripts
// script (Bash and Task allowed, depth 2, settings appended; with
// markProject, $WORKER_PROJECT names it), and runs one general-purpose
// `brood subagent` call on it from a new submitter's tree holding
// one.txt.
func runGrandchildCall(t *testing.T, addr, queue, script, settings string, markProject bool) grandchildCall {
	t.Helper()
	var c grandchildCall
	fleet := []string{"--temporal", addr, "--task-queue", queue, "--store", "file://" + t.TempDir()}
	c.wp = workerProject(t, script)
	c.wp.Env = append(c.wp.Env, "BROOD_MAX_SUBAGENT_DEPTH=2")
	if markProject {
		c.wp.Env = append(c.wp.Env, "WORKER_PROJECT="+c.wp.Root)
	}
	appendSettings(t, c.wp.Root, "\n[permissions]\nallow = [\"Bash\", \"Task\"]\n"+settings)
	c.w = startBrood(t, c.wp, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	c.sub = testbrood.NewProject(t, mainEnv, map[string]string{"one.txt": "base\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c.code, c.out, c.errs = c.sub.Brood(ctx, nil, append([]string{"subagent", "general-purpose", "write", "--engine", "temporal", "--json"}, fleet...)...)
	_ = json.Unmarshal([]byte(c.out), &c.res)
	return c
}
