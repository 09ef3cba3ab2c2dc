package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// A failure is never reported as a success (issue 25, the workflow
// points): each test here goes through the real CLI.

// waitGate is a shell loop that ends once file exists (at most 5 minutes:
// the test creates it as soon as it has seen what it waits for).
func waitGate(file string) string {
	return "for i in $(seq 6000); do [ -e " + file + " ] && break; sleep 0.05; done; [ -e " + file + " ] && echo released"
}

// editedCopies counts the isolated copies of README.md holding want.
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

// background runs brood in the background; wait returns its exit status
// and output.
type background struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
}

func (p *project) start(args ...string) *background {
	p.T.Helper()
	exe, err := os.Executable()
	if err != nil {
		p.T.Fatal(err)
	}
	b := &background{cmd: exec.Command(exe, args...)}
	b.cmd.Dir, b.cmd.Env = p.Root, append(append([]string{}, p.Env...), "BROOD_TRUST_PROJECT=1")
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errb
	b.cmd.WaitDelay = 10 * time.Second
	if err := b.cmd.Start(); err != nil {
		p.T.Fatal(err)
	}
	p.T.Cleanup(func() {
		if b.cmd.ProcessState == nil {
			_ = b.cmd.Process.Kill()
			_ = b.cmd.Wait()
		}
	})
	return b
}

func (b *background) wait() (int, string, string) {
	_ = b.cmd.Wait()
	return b.cmd.ProcessState.ExitCode(), b.out.String(), b.errb.String()
}

// allow adds permission rules to the project's settings (its runs trust
// the project: start sets BROOD_TRUST_PROJECT).
func (p *project) allow(rules string) {
	p.T.Helper()
	f, err := os.OpenFile(filepath.Join(p.Root, ".brood", "settings.toml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		p.T.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("\n[permissions]\nallow = [" + rules + "]\n"); err != nil {
		p.T.Fatal(err)
	}
}

// TestConflictingWriterYieldsNull: two writers of one phase change the
// same line on their own copies; one lands, the other's patch is refused.
// That call is not done: it is not-applied with null output, the task
// that depends on it and the phase after it are skipped saying why, the
// progress says "not applied", and the run ends partial with exit 1. Its
// outputs are null as on the fleet (enginetest.NotAppliedYieldsNothing,
// which TestAPlanWhoseChangeDoesNotLandFails asserts of the fleet).
func TestConflictingWriterYieldsNull(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "go")
	p := newProject(t, `
agents:
  general-purpose:
    - cases:
        - if: "title A"
          tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Title A"}}, {Bash: {command: "`+waitGate(gate)+`"}}]
      tools: [{Edit: {file_path: "README.md", old_string: "# Sample", new_string: "# Title B"}}, {Bash: {command: "`+waitGate(gate)+`"}}]
    - say: "Retitled README.md."
  explore:
    - say: "checked"
`)
	p.allow(`"Edit", "Bash"`)
	plan := p.plan("retitle.yaml", `
name: retitle
phases:
  - id: write
    parallel:
      - {id: a, agent: general-purpose, isolation: worktree, prompt: "title A"}
      - {id: b, agent: general-purpose, isolation: worktree, prompt: "title B"}
      - {id: check, agent: explore, prompt: "check both {{a}} {{b}}", depends_on: [a, b]}
  - id: verify
    parallel: [{agent: explore, prompt: "verify the titles"}]
`)
	r := p.start("workflow", "run", "--yes", "--json", plan)
	// Both have edited their copies before either may finish: otherwise
	// the first patch could land before the second copy is taken.
	waitFor(t, "both writers to edit their copies", func() bool { return editedCopies(p.Root, "# Title") == 2 })
	testbrood.WriteFile(t, gate, "")
	code, out, stderr := r.wait()
	var res wf.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, no result: %v\n%s\n%s", code, err, out, stderr)
	}
	if code != 1 || res.Status != wf.RunPartial {
		t.Fatalf("exit %d, status %s (%s); want 1 and partial\n%s", code, res.Status, res.Reason, stderr)
	}
	write := phase(t, &res, "write")
	var lost, landed *wf.CallRecord
	for i := range write.Calls[:2] {
		switch c := &write.Calls[i]; c.Status {
		case wf.CallNotApplied:
			lost = c
		case wf.CallDone:
			landed = c
		}
	}
	if lost == nil || landed == nil {
		t.Fatalf("writers ended %s and %s; want one done and one not-applied", write.Calls[0].Status, write.Calls[1].Status)
	}
	if lost.Output != nil || !strings.Contains(lost.Error, "not applied") {
		t.Errorf("the refused writer: output %s, error %q; want null and why", js(lost.Output), lost.Error)
	}
	if enginetest.NotAppliedYieldsNothing(t, &res) != 1 {
		t.Errorf("want the one not-applied call's outputs checked")
	}
	if write.Status != wf.PhasePartial || !strings.Contains(write.Reason, "not applied") {
		t.Errorf("phase write is %s (%s); want partial, saying a change was not applied", write.Status, write.Reason)
	}
	why := map[string]string{}
	for _, s := range res.Skipped {
		why[s.ID] = s.Reason
	}
	if !strings.Contains(why["check"], "not-applied") || !strings.Contains(why["verify"], "was not applied") {
		t.Errorf("skipped %+v; want check (its dependency not applied) and verify (its phase's change not applied)", res.Skipped)
	}
	if st := phase(t, &res, "verify").Status; st != wf.PhaseSkipped {
		t.Errorf("verify is %s, want skipped", st)
	}
	if !strings.Contains(stderr, "1 not applied") {
		t.Errorf("the progress never says a change was not applied:\n%s", stderr)
	}
	var saved wf.Result
	if err := dispatch.ReadJSON(filepath.Join(runDir(p), "result.json"), &saved); err != nil || saved.Status != wf.RunPartial {
		t.Errorf("result.json: %v, status %s", err, saved.Status)
	}
	readme, _ := os.ReadFile(filepath.Join(p.Root, "README.md"))
	if strings.Count(string(readme), "# Title") != 1 {
		t.Errorf("README.md:\n%s\nwant exactly one writer's title", readme)
	}
	tasksSayNotApplied(t, p, lost.TaskID, landed.TaskID)
	// workflow show counts the writer not applied, not failed (fleetqa4 P3).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if code, out, errs := p.Brood(ctx, nil, "workflow", "show", res.RunID); code != 0 || !strings.Contains(out, "agents   2 started, 1 done, 0 failed, 1 not applied, 0 running\n") {
		t.Errorf("workflow show %s: exit %d; want the writer counted not applied, not failed\n%s%s", res.RunID, code, out, errs)
	}
}

// tasksSayNotApplied: brood tasks show and brood tasks (--json and the
// table) say not-applied of the writer whose change did not land, as the
// run did, and done of the one that landed.
func tasksSayNotApplied(t *testing.T, p *project, lost, landed string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if code, out, errs := p.Brood(ctx, nil, "tasks", "show", lost); code != 0 || !strings.Contains(out, "\nstatus   not-applied\n") {
		t.Errorf("brood tasks show %s: exit %d, want status not-applied:\n%s%s", lost, code, out, errs)
	}
	code, out, errs := p.Brood(ctx, nil, "tasks", "--json")
	var rows []struct{ ID, Status string }
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("brood tasks --json: exit %d, %v\n%s%s", code, err, out, errs)
	}
	want := map[string]string{lost: dispatch.StatusNotApplied, landed: dispatch.StatusDone}
	for _, r := range rows {
		if w, ok := want[r.ID]; ok && r.Status != w {
			t.Errorf("brood tasks --json: %s is %s, want %s", r.ID, r.Status, w)
		}
	}
	if code, out, _ := p.Brood(ctx, nil, "tasks", "--status", "not-applied"); code != 0 || strings.Count(out, " not-applied ") != 1 || strings.Count(out, "\n") != 2 {
		t.Errorf("brood tasks --status not-applied: exit %d, want the one row of %s:\n%s", code, lost, out)
	}
}

// cappedPlan's third task can start only after the quick one, by when
// max_tokens is spent: it must never start, however often the run resumes.
const cappedPlan = `
name: capped
max_tokens: 1
phases:
  - id: p
    parallel:
      - {id: s, agent: explore, prompt: "slow one"}
      - {id: q, agent: explore, prompt: "quick one"}
      - {id: after, agent: explore, prompt: "after quick {{q}}", depends_on: [q]}
`

// TestMaxTokensHoldsAcrossResumes: the spend is journaled, so after kill
// -9 and any number of resumes the cap still holds (no agent starts past
// it) and the run's tokens are every call's, not the last process's. The
// call the cap held back shows as skipped, not failed.
func TestMaxTokensHoldsAcrossResumes(t *testing.T) {
	p := newProject(t, resumeScript)
	r := p.start("workflow", "run", "--yes", p.plan("capped.yaml", cappedPlan))
	var dir string
	waitFor(t, "the quick call done and the slow one running", func() bool {
		if dir = runDir(p); dir == "" {
			return false
		}
		lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
		started, done, _, open := wf.Summary(lines)
		return started == 2 && done == 1 && open == 1
	})
	var slow string
	lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
	for _, l := range lines {
		if l.Type == "start" && l.Key == "p/s" {
			slow = l.TaskID
		}
	}
	waitFor(t, "the slow child to start", func() bool {
		tk, err := dispatch.LoadTask(p.Root, slow)
		return err == nil && tk.Status == dispatch.StatusRunning
	})
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	r.wait()
	waitFor(t, "the orphaned child to record its end", func() bool {
		tk, err := dispatch.LoadTask(p.Root, slow)
		return err == nil && tk.Status != dispatch.StatusRunning && tk.Status != dispatch.StatusQueued
	})
	id := filepath.Base(dir)
	for round := 1; round <= 2; round++ {
		code, out, errs := p.Brood(context.Background(), nil, "workflow", "resume", id, "--json")
		var res wf.Result
		if json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("resume %d: exit %d\n%s\n%s", round, code, out, errs)
		}
		calls := phase(t, &res, "p").Calls
		if res.Agents != 2 || calls[2].Status != wf.CallSkipped || !strings.Contains(calls[2].Error, "max_tokens") {
			t.Fatalf("resume %d: %d agents, the dependent call %s (%s); want 2 agents and it skipped by max_tokens", round, res.Agents, calls[2].Status, calls[2].Error)
		}
		if code != 1 || res.Status != wf.RunPartial || !strings.Contains(res.Reason, "max_tokens") {
			t.Errorf("resume %d: exit %d status %s (%s); want 1, partial, max_tokens", round, code, res.Status, res.Reason)
		}
		sum := tokensOf(calls[0].Usage) + tokensOf(calls[1].Usage)
		if got := tokensOf(res.Usage); got != sum || sum == 0 {
			t.Errorf("resume %d: the run says %d tokens, its calls spent %d", round, got, sum)
		}
		if !strings.Contains(errs, "1 skipped") || strings.Contains(errs, "1 failed") {
			t.Errorf("resume %d: the progress does not show the capped call as skipped:\n%s", round, errs)
		}
	}
	if n := countTasksIn(p); n != 2 {
		t.Errorf("%d tasks; want 2 (the capped one never started)", n)
	}
}

func tokensOf(u model.Usage) int64 { return u.Input + u.Output + u.CacheRead + u.CacheWrite }

func countTasksIn(p *project) int {
	ents, _ := os.ReadDir(dispatch.Root(p.Root))
	return countTasks(ents)
}

// TestShowSaysCancelled: a call stopped by brood workflow cancel is
// cancelled in show (the run and the phase), never failed.
func TestShowSaysCancelled(t *testing.T) {
	p := newProject(t, resumeScript)
	r := p.start("workflow", "run", "--yes", p.plan("durable.yaml", resumePlan))
	var dir string
	waitFor(t, "three calls done and the slow one started", func() bool {
		if dir = runDir(p); dir == "" {
			return false
		}
		lines, _ := wf.ReadJournal(filepath.Join(dir, wf.JournalFile))
		started, done, _, _ := wf.Summary(lines)
		return started == 4 && done == 3
	})
	id := filepath.Base(dir)
	if code, out, errs := p.Brood(context.Background(), nil, "workflow", "cancel", id); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, _ := r.wait(); code != 130 {
		t.Fatalf("the run exited %d, want 130", code)
	}
	code, out, errs := p.Brood(context.Background(), nil, "workflow", "show", id)
	if code != 0 {
		t.Fatalf("show: exit %d\n%s", code, errs)
	}
	for _, want := range []string{"status   cancelled", "0 failed", "calls    1 cancelled, 3 done", "p/s cancelled"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}
