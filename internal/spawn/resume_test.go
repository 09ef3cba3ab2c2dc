package spawn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
	"github.com/broodhq/brood/internal/settings"
)

// TestResumeIgnoresTamperedEnvelope: a child can write its own task
// directory; what it writes there must not widen what a resume may do.
func TestResumeIgnoresTamperedEnvelope(t *testing.T) {
	if sandbox.LandlockABI() < 1 {
		t.Skip("needs Landlock for a read-only child with Bash")
	}
	script := `
agents:
  explore:
    - tools:
        - Bash: {command: "sed -i 's/\"read_only\": true/\"read_only\": false/; s/\"max_depth\": 1/\"max_depth\": 9/' $TMPDIR/../envelope.json; grep -c read_only $TMPDIR/../envelope.json"}
    - say: "edited my envelope"
    - tools:
        - Bash: {command: "echo pwned > pwned.txt"}
    - say: "second run: {{result 0}}"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	first, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "x"})
	must(t, err)
	var disk dispatch.Envelope
	must(t, dispatch.ReadJSON(filepath.Join(dispatch.Dir(p.root, first.TaskID), dispatch.EnvelopeFile), &disk))
	if disk.ReadOnly {
		t.Fatalf("the scenario needs the child to have rewritten its envelope:\n%s", first.Text)
	}
	again, err := d.Call(context.Background(), call.Spec{Resume: first.TaskID, Prompt: "go on"})
	must(t, err)
	if dispatch.Exists(filepath.Join(p.root, "pwned.txt")) {
		t.Fatalf("a resumed read-only child wrote to the project:\n%s", again.Text)
	}
	must(t, dispatch.ReadJSON(filepath.Join(dispatch.Dir(p.root, first.TaskID), dispatch.EnvelopeFile), &disk))
	if !disk.ReadOnly || disk.MaxDepth != 1 {
		t.Fatalf("resume kept the tampered envelope: read_only=%v max_depth=%d", disk.ReadOnly, disk.MaxDepth)
	}
}

// TestQueuedTaskAndConcurrentResume: a task another process owns shows as
// queued, and cannot be resumed twice at once.
func TestQueuedTaskAndConcurrentResume(t *testing.T) {
	p := newProject(t, "agents:\n  explore:\n    - say: done\n", nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "explore", Prompt: "x"})
	must(t, err)
	dir := dispatch.Dir(p.root, out.TaskID)
	unlock, err := dispatch.LockTask(dir)
	must(t, err)
	// Pretend it waits for a slot: no start yet.
	must(t, os.Remove(filepath.Join(dir, dispatch.ResultFile)))
	must(t, os.Remove(filepath.Join(dir, dispatch.LogFile)))
	must(t, os.Remove(dispatch.Records(p.root).VerdictPath(out.TaskID)))
	tk, err := dispatch.LoadTask(p.root, out.TaskID)
	must(t, err)
	if tk.Status != dispatch.StatusQueued {
		t.Fatalf("status %s, want queued while its owner holds it", tk.Status)
	}
	_, err = d.Call(context.Background(), call.Spec{Resume: out.TaskID, Prompt: "again"})
	if err == nil {
		t.Fatal("resumed a task another process owns")
	}
	// (a fleet worker retries on this, where the earlier attempt's child
	// holds the task, instead of failing the call)
	if !errors.Is(err, dispatch.ErrTaskBusy) || !strings.Contains(err.Error(), "is still queued") {
		t.Fatalf("resume of a queued task: %v; want ErrTaskBusy saying it is still queued", err)
	}
	unlock()
	tk, err = dispatch.LoadTask(p.root, out.TaskID)
	must(t, err)
	if tk.Status != dispatch.StatusCancelled {
		t.Fatalf("status %s once the owner is gone, want cancelled (never started)", tk.Status)
	}
	if _, err := dispatch.LockTask(dir); err != nil {
		t.Fatalf("lock not free: %v", err)
	}
	if _, err := dispatch.LockTask(dir); !errors.Is(err, dispatch.ErrTaskBusy) {
		t.Fatalf("second lock: %v, want ErrTaskBusy", err)
	}
}

// TestLeftoverProcessesDieWithTheirChild: what a child's Bash started in
// the background is killed when the child is killed.
func TestLeftoverProcessesDieWithTheirChild(t *testing.T) {
	secs := 300 + time.Now().Nanosecond()%600
	agents := map[string]string{"hang": "---\nname: hang\ndescription: hangs\ntools: Bash\n---\nx\n"}
	script := fmt.Sprintf(`
agents:
  hang:
    - tools: [{Bash: {command: "(sleep %d; true) > /dev/null 2>&1 & echo started"}}]
    - freeze: true
`, secs)
	p := newProject(t, script, agents)
	d := p.dispatcher(p.settings(func(s *settings.Settings) {
		s.Pool.HeartbeatTimeout = settings.Duration{Duration: time.Second}
	}), 1, nil)
	out, err := d.Call(context.Background(), call.Spec{Agent: "hang", Prompt: "x"})
	must(t, err)
	if out.Process.KilledBy != "lifeguard" {
		t.Fatalf("killed_by %s", out.Process.KilledBy)
	}
	needle := fmt.Sprintf("sleep %d", secs)
	waitUntil(t, 10*time.Second, func() bool { return !processRunning(needle) })
}

func processRunning(cmdline string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), cmdline) {
			return true
		}
	}
	return false
}

// TestWorktreeTaskResumes: an isolated task (worktree fallback) stopped at
// its turn cap resumes in a fresh copy and lands its work.
func TestWorktreeTaskResumes(t *testing.T) {
	agents := map[string]string{
		"editor": "---\nname: editor\ndescription: edits\ntools: Read, Write\nisolation: worktree\nmaxTurns: 2\n---\nx\n",
	}
	// Turn 2 asks for two.txt at the cap (not run); the resume's first turn
	// asks again.
	script := `
agents:
  editor:
    - tools: [{Write: {file_path: one.txt, content: "1\n"}}]
    - tools: [{Write: {file_path: two.txt, content: "2\n"}}]
    - tools: [{Write: {file_path: two.txt, content: "2\n"}}]
    - say: "both written"
`
	p := newProject(t, script, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(func(s *settings.Settings) { s.Isolation.ForceWorktree = true }), 1, nil)
	first, err := d.Call(context.Background(), call.Spec{Agent: "editor", Prompt: "write"})
	must(t, err)
	if first.Record.Status != "partial" {
		t.Fatalf("first run %s:\n%s", first.Record.Status, first.Text)
	}
	if !dispatch.Exists(filepath.Join(p.root, "one.txt")) {
		t.Fatalf("the first run's work did not land:\n%s", first.Text)
	}
	second, err := d.Call(context.Background(), call.Spec{Resume: first.TaskID, Prompt: "go on"})
	must(t, err)
	if second.Record.Status != "done" || !dispatch.Exists(filepath.Join(p.root, "two.txt")) {
		t.Fatalf("resume: %s:\n%s", second.Record.Status, second.Text)
	}
}

// TestForkTranscriptReplays: a fork's transcript starts with its seed, so
// it can be resumed.
func TestForkTranscriptReplays(t *testing.T) {
	script := `
agents:
  root:
    - tools:
        - Task: {prompt: "look around", fork: true}
    - say: "root done"
  fork:
    - say: "(turn 1 is the parent's own)"
    - say: "fork report"
`
	p := newProject(t, script, nil)
	d := p.dispatcher(p.settings(nil), 1, nil)
	_, msgs := p.runRoot(context.Background(), d)
	id := strings.TrimSuffix(strings.SplitN(strings.SplitN(toolResults(msgs)[0], `task-id="`, 2)[1], `"`, 2)[0], "")
	recs, _, err := session.ReadFile(filepath.Join(dispatch.Dir(p.root, id), dispatch.SessionFile))
	must(t, err)
	st := session.Replay(recs)
	if len(st.Messages) < 3 || st.Messages[0].Role != "user" || !strings.Contains(fmt.Sprint(st.Messages[len(st.Messages)-2]), "look around") {
		t.Fatalf("the fork's transcript does not replay from its seed: %+v", st.Messages)
	}
}

// TestIsolatedDelegatorKeepsSubagentRecords: an overlay-isolated child that
// delegates writes its subagents' records to the real tree.
func TestIsolatedDelegatorKeepsSubagentRecords(t *testing.T) {
	agents := map[string]string{
		"lead": "---\nname: lead\ndescription: leads\nisolation: worktree\ndelegate: [explore]\n---\nx\n",
	}
	script := `
agents:
  root:
    - tools: [{Task: {subagent_type: lead, description: "lead", prompt: "lead"}}]
    - say: "root done"
  lead:
    - tools: [{Task: {subagent_type: explore, description: "look", prompt: "look"}}]
    - say: "lead done"
  explore:
    - say: "explored"
`
	p := newProject(t, script, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	d := p.dispatcher(p.settings(nil), 2, nil)
	p.runRoot(context.Background(), d)
	tasks, err := dispatch.ListTasks(p.root)
	must(t, err)
	if len(tasks) != 2 {
		t.Fatalf("%d task records, want the lead's and its explorer's", len(tasks))
	}
}
