package temporal_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/isolate"
)

// codeScript: the writer reads the submitter's dirty and untracked files
// and lists the tree, then writes what it saw; "slow" writes half its work,
// then stalls until it is continued elsewhere, where it reads that half and
// the dirty file again and writes its end.
const codeScript = `
agents:
  general-purpose:
    - cases:
        - if: "slow"
          tools:
            - Write: {file_path: "half.txt", content: "half done\n"}
      tools:
        - Read: {file_path: "a.txt"}
        - Read: {file_path: "u.txt"}
        - LS: {path: "."}
    - cases:
        - if: "interrupted"
          tools:
            - Read: {file_path: "half.txt"}
            - Read: {file_path: "a.txt"}
        - if: "half.txt"
          say: "stalled"
          delay: 1h
      tools:
        - Write: {file_path: "out.txt", content: "{{result 0}}|{{result 1}}|{{result 2}}"}
    - cases:
        - if: "half done"
          tools:
            - Write: {file_path: "end.txt", content: "{{result 0}}|{{result 1}}"}
      say: "## What I did\nWrote out.txt.\n\n## Files changed\nout.txt"
    - say: "## What I did\nFinished.\n\n## Files changed\nhalf.txt, end.txt"
  explore:
    - tools:
        - LS: {path: "."}
    - say: "## What I found\n{{result 0}}\n\n## Files changed\nnone"
`

const writerSettings = "[permissions]\nallow = [\"Write\", \"Edit\"]\n"

// submitterRepo is the submitter's checkout: a.txt committed then edited
// (not committed), u.txt untracked, secret.txt gitignored.
func submitterRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q")
	write(t, dir, "a.txt", "committed\n")
	write(t, dir, ".gitignore", "secret.txt\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
	write(t, dir, "a.txt", "dirty edit\n")
	write(t, dir, "u.txt", "untracked\n")
	write(t, dir, "secret.txt", "never shipped\n")
	return dir
}

func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func write(t *testing.T, dir, name, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(b)
}

// codeEngine submits from dir, shipping its tree through the store.
func codeEngine(t *testing.T, q, dir, store string) *temporal.Engine {
	t.Helper()
	blobs, err := blobstore.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	return temporal.New(temporal.Config{Client: sharedServer(t).Client(t), Queue: q, Poll: 50 * time.Millisecond,
		Limits: func(string) temporal.CallLimits { return testLimits },
		Code:   &temporal.CodeConfig{Blobs: blobs, Dir: dir, StateDir: t.TempDir()}})
}

// TestCodeShippedToWorkerAndBack: the worker's agent sees the submitter's
// uncommitted edit and untracked file (not its ignored one) in a copy of
// its own; its write comes back into the submitter's tree, unstaged, and
// nothing lands in the worker's checkout. A read-only agent brings back
// no patch.
func TestCodeShippedToWorkerAndBack(t *testing.T) {
	srv := sharedServer(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	w := startWorkerProcWith(t, srv.Addr, q, codeScript, store, 2, writerSettings)
	dir := submitterRepo(t)
	eng := codeEngine(t, q, dir, store)
	r, err := eng.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "copy what you see", Description: "ship"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != dispatch.StatusDone || len(r.Code) == 0 {
		t.Fatalf("result %+v; want done with a change", r)
	}
	out := read(t, dir, "out.txt")
	for _, want := range []string{"dirty edit", "untracked", "a.txt", "u.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("the worker's agent did not see %q: out.txt is %q", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("the ignored file reached the worker: %q", out)
	}
	if got := read(t, dir, "a.txt"); got != "dirty edit\n" {
		t.Errorf("a.txt is %q; the submitter's edit must stay", got)
	}
	if staged := gitT(t, dir, "diff", "--cached", "--name-only"); staged != "" {
		t.Errorf("the change was staged: %q", staged)
	}
	if !slices.Equal(r.FilesChanged, []string{"out.txt"}) || !strings.Contains(r.Text, "fleet copy: applied 1 file(s)") {
		t.Errorf("files %v, text %q; want out.txt applied", r.FilesChanged, r.Text)
	}
	// Its duration is the call's, from its schedule to its end (fleetqa
	// P3): no shorter than its child's, which is kept, labelled.
	m := regexp.MustCompile(` last-attempt-child-duration="([^"]+)" duration="([^"]+)" tokens-in=`).FindStringSubmatch(r.Text)
	if m == nil {
		t.Fatalf("result tag without the call's duration and its child's: %q", r.Text)
	}
	child, err1 := time.ParseDuration(m[1])
	whole, err2 := time.ParseDuration(m[2])
	if err1 != nil || err2 != nil || whole < child {
		t.Errorf("the call took %s, its child %s: want the call's no shorter (%v, %v)", m[2], m[1], err1, err2)
	}
	// The submitter's landing is recorded under the workflow run a resume
	// finds: landing it again lands nothing.
	if l, err := eng.LandCall(context.Background(), r.TaskID); err != nil || l.State != "in_tree" {
		t.Errorf("LandCall after the submitter landed it: %+v, %v; want in_tree", l, err)
	}
	if sup := isolate.ProbeIn(context.Background(), t.TempDir()); sup.Overlay {
		// The copy was an overlay over the worker's cached checkout of the
		// base, which the write did not reach.
		trees, _ := filepath.Glob(filepath.Join(w.p.home, ".cache", "brood", "fleet", "trees", "*", "tree"))
		if len(trees) != 1 {
			t.Errorf("the worker's base checkouts: %v; want one (the copy an overlay over it)", trees)
		}
		for _, tr := range trees {
			if _, err := os.Stat(filepath.Join(tr, "out.txt")); err == nil {
				t.Error("the write landed in the worker's cached checkout")
			}
		}
	}
	if _, err := os.Stat(filepath.Join(w.p.root, "out.txt")); err == nil {
		t.Error("the write landed in the worker's own checkout")
	}
	ro, err := eng.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "look", Description: "look"})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Status != dispatch.StatusDone || len(ro.Code) != 0 || !strings.Contains(ro.Text, "u.txt") {
		t.Errorf("read-only result %+v; want done, seeing u.txt, no patch", ro)
	}
	// The writer's change is kept for a later attempt of its call
	// (pickup.go); a read-only call has none to keep, nor a lock to hold
	// on it, so leaves nothing there.
	kept, _ := filepath.Glob(filepath.Join(w.p.home, ".cache", "brood", "fleet", "changes", "*"))
	if len(kept) != 1 || !strings.HasSuffix(kept[0], ".json") {
		t.Errorf("the worker's kept changes: %v; want the writer's record alone", kept)
	}
}

// TestCodeRetryOnOtherWorkerSameSnapshot: kill -9 the worker of a writer
// that has written half its work; the other worker (another directory,
// another clone cache) continues it from the same snapshot plus that half
// (the partial patch in its heartbeat), and both halves come back.
func TestCodeRetryOnOtherWorkerSameSnapshot(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	q := newQueue(t)
	store := "file://" + t.TempDir()
	a := startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	b := startWorkerProcWith(t, srv.Addr, q, codeScript, store, 1, writerSettings)
	dir := submitterRepo(t)
	eng := codeEngine(t, q, dir, store)
	id := dispatch.NewID()
	type out struct {
		r   *call.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := eng.Call(context.Background(), call.Spec{Agent: "general-purpose", Prompt: "write in two halves", Description: "slow", TaskID: id})
		done <- out{r, err}
	}()
	var first pendingCall
	waitFor(t, "the writer's heartbeat with its partial patch", 90*time.Second, func() bool {
		for _, pc := range pending(t, c, "brood-call-"+id) {
			if pc.HB.Code != nil && pc.HB.Code.Patch != nil {
				first = pc
				return true
			}
		}
		return false
	})
	if !slices.Equal(first.HB.Code.Files, []string{"half.txt"}) {
		t.Fatalf("partial patch touches %v; want half.txt", first.HB.Code.Files)
	}
	victim, other := a, b
	if b.owns(first.Worker) {
		victim, other = b, a
	}
	victim.kill()
	var o out
	select {
	case o = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the call did not finish after its worker was killed; pending: %+v", pending(t, c, "brood-call-"+id))
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Status != dispatch.StatusDone || o.r.TaskID != id {
		t.Fatalf("result %+v; want task %s done", o.r, id)
	}
	if got := read(t, dir, "half.txt"); got != "half done\n" {
		t.Errorf("half.txt is %q", got)
	}
	end := read(t, dir, "end.txt")
	if !strings.Contains(end, "half done") || !strings.Contains(end, "dirty edit") {
		t.Errorf("end.txt is %q; the retry must start from the snapshot (dirty edit) plus the first worker's half", end)
	}
	if !other.taskDirs()[id] || !victim.taskDirs()[id] {
		t.Errorf("task %s should have run on both workers", id)
	}
}
