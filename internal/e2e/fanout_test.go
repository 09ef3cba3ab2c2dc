package e2e_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/testbrood"
)

// waitFor blocks until a shell command finds the file; it only reads, so a
// sandboxed child may run it.
func waitFor(file string) string {
	// At most 5 minutes: the test creates the file as soon as it has seen
	// what it waits for, so only a broken run waits that long.
	return "for i in $(seq 6000); do [ -e " + file + " ] && break; sleep 0.05; done; [ -e " + file + " ] && echo released"
}

// bg is a brood run in the background.
type bg struct {
	root      string
	out, errb bytes.Buffer
	done      chan struct{} // closed once the process has exited
}

// start runs brood in the background.
func start(t *testing.T, p *testbrood.Project, args ...string) *bg {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, exe, args...)
	r := &bg{root: p.Root, done: make(chan struct{})}
	cmd.Dir, cmd.Env = p.Root, p.Env
	cmd.Stdout, cmd.Stderr = &r.out, &r.errb
	cmd.WaitDelay = 10 * time.Second // a leftover holding the pipes cannot hang the test
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// wait waits for the run to end and returns its stdout and stderr.
func (r *bg) wait() (string, string) {
	<-r.done
	return r.out.String(), r.errb.String()
}

// until polls the project's task records until cond holds. It fails the
// test at once when the run ends first (with the run's output), or after a
// generous deadline (it only bounds a hang; nothing is timed).
func (r *bg) until(t *testing.T, what string, cond func([]*dispatch.Task) bool) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		var exited bool
		select {
		case <-r.done:
			exited = true
		default:
		}
		tasks, _ := dispatch.ListTasks(r.root)
		if cond(tasks) {
			return
		}
		if exited || time.Now().After(deadline) {
			var b strings.Builder
			for _, tk := range tasks {
				b.WriteString(tk.ID + " " + tk.Agent + " " + tk.Status + "\n")
			}
			if exited {
				t.Fatalf("brood ended before %s; tasks:\n%s\nstdout:\n%s\nstderr:\n%s", what, b.String(), r.out.String(), r.errb.String())
			}
			t.Fatalf("never saw %s; tasks:\n%s", what, b.String())
		}
		time.Sleep(20 * time.Millisecond) // polling the disk, not synchronising on time
	}
}

func count(tasks []*dispatch.Task, agent, status string) int {
	n := 0
	for _, tk := range tasks {
		if tk.Agent == agent && tk.Status == status {
			n++
		}
	}
	return n
}

// TestWritersDispatchedTogetherRunTogether: four general-purpose Task calls
// in one turn are all running at once (each waits for a file the test
// creates only once it has seen all four running), each on its own copy of
// the tree, and every patch lands.
func TestWritersDispatchedTogetherRunTogether(t *testing.T) {
	for _, mode := range []string{"overlay", "worktree"} {
		t.Run(mode, func(t *testing.T) {
			p := newProject(t, nil)
			via := writerVia()
			if mode == "worktree" {
				writeSettings(t, p.Root, "[isolation]\nforce_worktree = true\n")
				// A worktree writer the root dispatches mounts first
				// too, where it can (its copy's git directory held:
				// isolate.Workspace.HoldGit); elsewhere it is confined
				// from the parent's thread at start.
				if !sandbox.ProbeUserNS(t.Context()).UserNS {
					via = "parent"
				}
			}
			writersTogether(t, p, via)
		})
	}
}

func writersTogether(t *testing.T, p *testbrood.Project, wantVia string) {
	gate := filepath.Join(t.TempDir(), "go")
	var tasks strings.Builder
	for _, n := range []string{"1", "2", "3", "4"} {
		tasks.WriteString(`        - Task: {subagent_type: general-purpose, description: "writer ` + n + `", prompt: "write w` + n + `.txt"}` + "\n")
	}
	script := `
agents:
  root:
    - tools:
` + tasks.String() + `    - say: "{{result 0}}{{result 1}}{{result 2}}{{result 3}}"
  general-purpose:
    - cases:
` + cases(waitFor(gate)) + `      say: "none"
    - say: "## What I did\nWrote.\n\n## What I found\n{{result 0}}\n\n## Files changed\nmine\n\n## Problems\nnone"
`
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Bash", "--allow", "Write", "fan out")
	r.until(t, "four writers running at once", func(ts []*dispatch.Task) bool { return count(ts, "general-purpose", dispatch.StatusRunning) == 4 })
	testbrood.WriteFile(t, gate, "")
	stdout, stderr := r.wait()
	for _, n := range []string{"1", "2", "3", "4"} {
		if b, err := os.ReadFile(filepath.Join(p.Root, "w"+n+".txt")); err != nil || string(b) != "w"+n+"\n" {
			t.Errorf("w%s.txt did not land: %q, %v\nstdout:\n%s\nstderr:\n%s", n, b, err, stdout, stderr)
		}
	}
	if got := strings.Count(stdout, "isolated copy of the tree (isolation: auto; 4 writers were dispatched together)"); got != 4 {
		t.Errorf("%d of 4 results say they ran on an isolated copy\n%s", got, stdout)
	}
	checkSandboxVia(t, p, wantVia)
}

// editedCopies counts the isolated copies (an overlay's upper layer, a git
// worktree) whose README.md holds want.
func editedCopies(root, want string) int {
	n := 0
	for _, pat := range []string{".brood/dispatch/*/isolate/upper/README.md", ".git/brood-worktrees/*/README.md"} {
		files, _ := filepath.Glob(filepath.Join(root, pat))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), want) {
				n++
			}
		}
	}
	return n
}

// checkSandboxVia: every general-purpose child's result names how its
// Landlock domain reached all its threads.
func checkSandboxVia(t *testing.T, p *testbrood.Project, want string) {
	t.Helper()
	ts, _ := dispatch.ListTasks(p.Root)
	for _, tk := range ts {
		if tk.Agent != "general-purpose" {
			continue
		}
		if tk.Result == nil || !strings.Contains(tk.Result.Sandbox, ", "+want+")") {
			sb := "<no result>"
			if tk.Result != nil {
				sb = tk.Result.Sandbox
			}
			t.Errorf("task %s: sandbox %q, want the domain applied via %q", tk.ID, sb, want)
		}
	}
}

// writerVia is how a writer that mounts first (an overlay or in-place
// child) applies its Landlock domain after its mounts: by re-executing
// itself where the domain has a scope (ABI 6 and later: every thread must
// share it) or the binary (this test binary, which is the child) has cgo,
// else in place on every thread.
func writerVia() string {
	if sandbox.InPlace() && sandbox.LandlockABI() < 6 {
		return "all threads"
	}
	return "re-exec"
}

// cases makes writer N write wN.txt and wait at the gate, in its first turn.
func cases(wait string) string {
	var b strings.Builder
	for _, n := range []string{"1", "2", "3", "4"} {
		b.WriteString(`        - if: "writer ` + n + `"
          tools: [{Write: {file_path: "w` + n + `.txt", content: "w` + n + `\n"}}, {Bash: {command: "` + wait + `"}}]
`)
	}
	return b.String()
}

// TestReadersNotHeldBackByWriter: two explores dispatched while a writer
// runs in the background finish while it still runs.
func TestReadersNotHeldBackByWriter(t *testing.T) {
	p := newProject(t, nil)
	gate := filepath.Join(t.TempDir(), "go")
	script := `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "slow writer", prompt: "write", run_in_background: true}
    - tools:
        - Task: {subagent_type: explore, description: "look a", prompt: "look"}
        - Task: {subagent_type: explore, description: "look b", prompt: "look"}
    - say: "explored"
  general-purpose:
    - tools: [{Bash: {command: "` + waitFor(gate) + `"}}]
    - say: "## What I did\nWaited.\n\n## What I found\n{{result 0}}\n\n## Files changed\nnone\n\n## Problems\nnone"
  explore:
    - tools: [{LS: {path: "."}}]
    - say: "## What I did\nLooked.\n\n## What I found\n{{trunc 100 (result 0)}}\n\n## Files changed\nnone\n\n## Problems\nnone"
`
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Bash", "fan out")
	r.until(t, "two explores done while the writer runs", func(ts []*dispatch.Task) bool {
		return count(ts, "explore", dispatch.StatusDone) == 2 && count(ts, "general-purpose", dispatch.StatusRunning) == 1
	})
	testbrood.WriteFile(t, gate, "")
	if stdout, stderr := r.wait(); !strings.Contains(stdout, "explored") {
		t.Fatalf("the run did not finish\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

// TestWriterBesideInPlaceWriter: a writer dispatched while another works in
// place gets its own copy instead of waiting for it: its process runs and
// finishes while the first still works. Its patch is applied once the tree
// is free (so the in-place writer is never credited with it), and both land.
func TestWriterBesideInPlaceWriter(t *testing.T) {
	p := newProject(t, nil)
	gate := filepath.Join(t.TempDir(), "go")
	script := `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "slow writer", prompt: "write", run_in_background: true}
    - tools:
        - Task: {subagent_type: general-purpose, description: "quick writer", prompt: "write"}
    - say: "{{result 0}}"
  general-purpose:
    - cases:
        - if: "quick writer"
          tools: [{Write: {file_path: "quick.txt", content: "q\n"}}]
      tools: [{Write: {file_path: "slow.txt", content: "s\n"}}, {Bash: {command: "` + waitFor(gate) + `"}}]
    - say: "## What I did\nWrote.\n\n## What I found\nok\n\n## Files changed\nmine\n\n## Problems\nnone"
`
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Bash", "--allow", "Write", "two writers")
	r.until(t, "the quick writer's process finished while the slow one runs", func(ts []*dispatch.Task) bool {
		finished, working := 0, 0
		for _, tk := range ts {
			if tk.Output != nil && tk.Label == "quick writer" {
				finished++
			}
			if tk.Output == nil && tk.Label == "slow writer" && tk.Status == dispatch.StatusRunning {
				working++
			}
		}
		return finished == 1 && working == 1
	})
	testbrood.WriteFile(t, gate, "")
	stdout, stderr := r.wait()
	if !strings.Contains(stdout, "isolation: auto; another writer was working in place") {
		t.Errorf("the quick writer's result does not say it ran on a copy\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	for _, f := range []string{"quick.txt", "slow.txt"} {
		if _, err := os.Stat(filepath.Join(p.Root, f)); err != nil {
			t.Errorf("%s did not land: %v\nstdout:\n%s\nstderr:\n%s", f, err, stdout, stderr)
		}
	}
}

// TestIsolatedChildFromSymlinkedDir: brood started from a symlink to the
// repository runs an isolated child whose patch lands, with its records in
// the real project, not inside the child's copy.
func TestIsolatedChildFromSymlinkedDir(t *testing.T) {
	p := newProject(t, nil)
	link := filepath.Join(t.TempDir(), "via-link")
	if err := os.Symlink(p.Root, link); err != nil {
		t.Fatal(err)
	}
	script := `
agents:
  general-purpose:
    - tools: [{Write: {file_path: "made.txt", content: "made\n"}}]
    - say: "## What I did\nWrote.\n\n## What I found\nok\n\n## Files changed\nmade.txt\n\n## Problems\nnone"
`
	model := p.Script("s.yaml", script)
	exe, _ := os.Executable()
	cmd := exec.CommandContext(t.Context(), exe, "subagent", "general-purpose", "--isolation", "worktree", "--allow", "Write", "--model", model, "Make a file.")
	cmd.Dir, cmd.Env = link, append(append([]string{}, p.Env...), "PWD="+link)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `status="done"`) {
		t.Fatalf("brood from a symlinked directory: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(p.Root, "made.txt")); err != nil || string(b) != "made\n" {
		t.Fatalf("the isolated child's file did not land: %q %v\n%s", b, err, out)
	}
}

// TestConflictingWritersSayWhichLanded: two writers dispatched together
// change the same line; the first patch lands, the second says in its
// status line that it was not applied and shows its hunks inline.
func TestConflictingWritersSayWhichLanded(t *testing.T) {
	p := newProject(t, nil)
	gate := filepath.Join(t.TempDir(), "go")
	script := `
agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: "title A", prompt: "Retitle."}
        - Task: {subagent_type: general-purpose, description: "title B", prompt: "Retitle."}
    - say: "{{result 0}}\n{{result 1}}"
  general-purpose:
    - cases:
        - if: "title A"
          tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Title A"}}, {Bash: {command: "` + waitFor(gate) + `"}}]
      tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Title B"}}, {Bash: {command: "` + waitFor(gate) + `"}}]
    - say: "## What I did\nRetitled.\n\n## What I found\nok\n\n## Files changed\nREADME.md\n\n## Problems\nnone"
`
	r := start(t, p, "run", "--model", p.Script("s.yaml", script), "--allow", "Edit", "--allow", "Bash", "retitle twice")
	// Both have edited their copies before either may finish: otherwise the
	// first patch can land before the second child reads README.md (an
	// overlay's lower layer is the live tree) and there is no conflict.
	r.until(t, "both writers edited their copies", func([]*dispatch.Task) bool { return editedCopies(p.Root, "# Title") == 2 })
	testbrood.WriteFile(t, gate, "")
	stdout, stderr := r.wait()
	if strings.Count(stdout, `patch="applied"`) != 1 || strings.Count(stdout, `patch="not-applied"`) != 1 {
		t.Fatalf("want one applied and one not-applied patch in the status lines\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if !strings.Contains(stdout, "[brood: this patch was NOT applied to your tree; its start:]") || !strings.Contains(stdout, "-# Sample") {
		t.Fatalf("the refused patch's hunks are not shown inline\n%s", stdout)
	}
	b, _ := os.ReadFile(filepath.Join(p.Root, "README.md"))
	if !strings.Contains(string(b), "# Title A") && !strings.Contains(string(b), "# Title B") {
		t.Fatalf("neither patch landed: %q", b)
	}
}
