package e2e_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/testbrood"
)

const writeScript = `
agents:
  general-purpose:
    - tools: [{Write: {file_path: "made.txt", content: "made\n"}}]
    - say: "## What I did\nWrote.\n\n## What I found\nok\n\n## Files changed\nmade.txt\n\n## Problems\nnone"
`

// isolatedWrite runs one isolated writer from dir and returns its output.
func isolatedWrite(t *testing.T, p *testbrood.Project, dir, model string) string {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.CommandContext(t.Context(), exe, "subagent", "general-purpose", "--isolation", "worktree", "--allow", "Write", "--model", model, "Make a file.")
	cmd.Dir, cmd.Env = dir, p.Env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `status="done"`) {
		t.Fatalf("isolated writer: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("the isolated child's file did not land: %q %v\n%s", b, err, out)
	}
	return string(out)
}

type probeFile struct {
	At      time.Time `json:"at"`
	Support struct {
		Overlay bool   `json:"overlay_in_userns"`
		Why     string `json:"why"`
	} `json:"support"`
}

func readProbeCache(t *testing.T, p *testbrood.Project) probeFile {
	t.Helper()
	var e probeFile
	b, err := os.ReadFile(filepath.Join(p.Home, ".cache", "brood", "isolate-probe.json"))
	if err == nil {
		err = json.Unmarshal(b, &e)
	}
	if err != nil {
		t.Fatalf("probe cache: %v", err)
	}
	return e
}

// TestProbeCachedBetweenRuns: the first brood that isolates a child keeps
// the overlay probe's answer in the user's cache; the next brood takes it
// from there and starts no probe (the entry is not rewritten).
func TestProbeCachedBetweenRuns(t *testing.T) {
	p := newProject(t, nil)
	model := p.Script("s.yaml", writeScript)
	isolatedWrite(t, p, p.Root, model)
	first := readProbeCache(t, p)
	os.Remove(filepath.Join(p.Root, "made.txt"))
	isolatedWrite(t, p, p.Root, model)
	if again := readProbeCache(t, p); !again.At.Equal(first.At) {
		t.Errorf("the second run probed again (entry rewritten at %v, first %v)", again.At, first.At)
	}
}

// TestOverlayMountFailureRunsOnWorktree: where the probe says overlays work
// but this tree's cannot be mounted (a path so deep its mount options
// exceed a page), the child is started again on a git worktree copy, its
// patch lands, its result says why, and the cache says no overlay from then
// on (a stale or forged "overlay works" costs one failed start, never the
// task).
func TestOverlayMountFailureRunsOnWorktree(t *testing.T) {
	p := newProject(t, nil)
	deep := p.Root
	for range 7 {
		deep = filepath.Join(deep, strings.Repeat("d", 200))
	}
	testbrood.WriteFile(t, filepath.Join(deep, "README.md"), "# deep\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = deep, p.Env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	out := isolatedWrite(t, p, deep, p.Script("s.yaml", writeScript))
	e := readProbeCache(t, p)
	if !strings.Contains(e.Support.Why, "could not mount") {
		// No overlay here at all: the probe said so and the child ran on
		// a worktree from the start; there was nothing to fall back from.
		if e.Support.Overlay {
			t.Fatalf("the cache still says overlay after the failed mount: %+v\n%s", e, out)
		}
		t.Logf("no overlay on this machine (%s)", e.Support.Why)
		return
	}
	if e.Support.Overlay || !strings.Contains(out, "could not be mounted") || !strings.Contains(out, "git worktree copy instead") {
		t.Errorf("cache %+v; the result does not say the overlay failed and a worktree was used:\n%s", e, out)
	}
}
