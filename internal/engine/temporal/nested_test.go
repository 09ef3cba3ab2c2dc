package temporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

const nestedScript = `
agents:
  general-purpose:
    - tools:
        - LS: {path: "."}
    - tools:
        - Write: {file_path: "top.txt", content: "top\n{{result 0}}"}
    - say: "## What I did\nWrote top.txt.\n\n## Files changed\ntop.txt"
`

// TestNestedRepositoriesOnTheFleet (fleetqa4 P2-1): a checkout with a
// committed submodule, an untracked repository of its own and one with no
// commit yet ships to a worker on its first attempt, whose child sees the
// tree as a local isolated writer does (the submodule's and the nested
// repository's directories, nothing of the empty one), and its write
// lands in the submitter's tree. It failed every attempt with "the
// verified index ... is in a form brood does not read".
func TestNestedRepositoriesOnTheFleet(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	startWorkerProcWith(t, srv.Addr, q, nestedScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	sub := t.TempDir()
	gitT(t, sub, "init", "-q")
	write(t, sub, "s.txt", "in the submodule\n")
	gitT(t, sub, "add", "-A")
	gitT(t, sub, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "s")
	gitT(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sm")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "submodule")
	nested := filepath.Join(dir, "nested")
	gitT(t, dir, "init", "-q", "nested")
	write(t, nested, "n.txt", "nested\n")
	gitT(t, nested, "add", "-A")
	gitT(t, nested, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "n")
	gitT(t, dir, "init", "-q", "empty")
	write(t, filepath.Join(dir, "empty"), "e.txt", "no commit here\n")
	eng := codeEngine(t, q, dir, store)
	r, err := eng.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "write top.txt", Description: "nested"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != dispatch.StatusDone {
		t.Fatalf("result %+v; want done", r)
	}
	out := read(t, dir, "top.txt")
	for _, want := range []string{"sm", "nested", "a.txt", "u.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("the child's listing lacks %q: top.txt is %q", want, out)
		}
	}
	if strings.Contains(out, "empty") {
		t.Errorf("the child sees the repository with no commit: %q", out)
	}
	if strings.Contains(r.Text, "attempt=\"2\"") {
		t.Errorf("more than one attempt: %q", r.Text)
	}
	if got := read(t, filepath.Join(dir, "sm"), "s.txt"); got != "in the submodule\n" {
		t.Errorf("the submitter's submodule file is %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "empty", "e.txt")); err != nil {
		t.Error(err)
	}
}
