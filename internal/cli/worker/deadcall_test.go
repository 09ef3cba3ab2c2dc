package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
)

// deadCallScript: "write one" / "write two" writes its file, then waits at
// a gate (a file the test creates) in Bash, then ends; "read back one" /
// "read back two", a follow-up, reads the file and says what it saw. Every
// turn has every case: a turn's index does not matter.
func deadCallScript(gate string) string {
	turn := `    - cases:
        - if: "gate open"
          say: "## What I did\nWrote the file.\n\n## Files changed\nthe file"
        - if: "from the writer"
          say: "## What I found\nthe follow-up saw: {{result 0}}\n\n## Files changed\nnone"
        - if: "read back one"
          tools: [{Read: {file_path: "one.txt"}}]
        - if: "read back two"
          tools: [{Read: {file_path: "two.txt"}}]
        - if: "write one"
          tools: [{Write: {file_path: "one.txt", content: "one from the writer\n"}}]
        - if: "write two"
          tools: [{Write: {file_path: "two.txt", content: "two from the writer\n"}}]
        - if: "one.txt ("
          tools: [{Bash: {command: "until [ -e GATE.one ]; do sleep 0.05; done; echo gate open", timeout: 600000}}]
        - if: "two.txt ("
          tools: [{Bash: {command: "until [ -e GATE.two ]; do sleep 0.05; done; echo gate open", timeout: 600000}}]
      say: "nothing to do"
`
	return "agents:\n  general-purpose:\n" + strings.Repeat(strings.ReplaceAll(turn, "GATE", gate), 8)
}

// deadCallFleet is a worker and a submitter's checkout for the
// dead-submitter calls.
type deadCallFleet struct {
	t     *testing.T
	sub   *testbrood.Project
	fleet []string
	gate  string
	ctx   context.Context
}

func newDeadCallFleet(ctx context.Context, t *testing.T, addr string) *deadCallFleet {
	gate := filepath.Join(t.TempDir(), "gate")
	fleet := []string{"--temporal", addr, "--task-queue", fmt.Sprintf("dead-call-%d", os.Getpid()), "--store", "file://" + t.TempDir()}
	pr := workerProject(t, deadCallScript(gate))
	appendSettings(t, pr.Root, "\n[permissions]\nallow = [\"Write\", \"Edit\", \"Bash\"]\n")
	startBrood(t, pr, []string{"BROOD_TRUST_PROJECT=1"}, "brood worker: task queue", append([]string{"worker", "--concurrency", "1"}, fleet...)...)
	sub := testbrood.NewProject(t, mainEnv, nil)
	testbrood.WriteFile(t, filepath.Join(sub.Root, ".brood", "settings.toml"), "[pool]\nheartbeat_timeout = \"3s\"\nping_interval = \"100ms\"\nkill_grace = \"2s\"\n")
	return &deadCallFleet{t: t, sub: sub, fleet: fleet, gate: gate, ctx: ctx}
}

func (d *deadCallFleet) brood(args ...string) (int, string, string) {
	return d.sub.Brood(d.ctx, nil, append(args, d.fleet...)...)
}

type shownCall struct {
	Status    string
	Heartbeat struct {
		Code struct{ Files []string }
	}
	Result struct{ Status string }
	Landed string
}

func (d *deadCallFleet) show(id string) (shownCall, bool) {
	var s shownCall
	code, out, _ := d.brood("tasks", "show", id, "--json")
	return s, code == 0 && json.Unmarshal([]byte(out), &s) == nil
}

// writeAndDie submits a writer with `brood subagent --engine temporal`,
// kills the submitter with SIGKILL once the writer has written its file
// (its change so far is in its heartbeat) and while it waits at its gate,
// then opens the gate and waits for the call to finish on the worker. It
// returns the task id; the change is in the store only.
func (d *deadCallFleet) writeAndDie(name string, not []string) string {
	t := d.t
	submit := startBrood(t, d.sub, nil, "", append([]string{"subagent", "general-purpose", "write " + name, "--engine", "temporal", "--json"}, d.fleet...)...)
	var id string
	waitCLI(t, "the writer of "+name+".txt at its gate", func() bool {
		if id == "" {
			code, out, _ := d.brood("tasks", "--json")
			var rows []struct{ ID, Fleet, Kind string }
			if code != 0 || json.Unmarshal([]byte(out), &rows) != nil {
				return false
			}
			for _, r := range rows {
				if r.Fleet == "temporal" && r.Kind == "call" && !slices.Contains(not, r.ID) {
					id = r.ID
				}
			}
			if id == "" {
				return false
			}
		}
		s, ok := d.show(id)
		return ok && slices.Contains(s.Heartbeat.Code.Files, name+".txt")
	})
	submit.kill()
	if _, err := os.Stat(filepath.Join(d.sub.Root, name+".txt")); err == nil {
		t.Fatalf("%s.txt is in the submitter's tree before the call ended", name)
	}
	testbrood.WriteFile(t, d.gate+"."+name, "open\n")
	waitCLI(t, "the call finished on the worker", func() bool {
		s, ok := d.show(id)
		return ok && s.Result.Status == "done"
	})
	if _, err := os.Stat(filepath.Join(d.sub.Root, name+".txt")); err == nil {
		t.Fatalf("%s.txt landed with nobody to land it", name)
	}
	return id
}

// TestDeadSubmittersCallLandsOnResume: `brood subagent --engine temporal`
// killed with SIGKILL while its writer runs; the call finishes on the
// worker, its change in the store only. `brood tasks show` says it is
// waiting and how to land it; `brood tasks resume ID` lands it once (a
// second says it is in the tree and writes nothing); a follow-up sees
// it. A second call's `brood tasks resume ID PROMPT` lands its change
// first, says so, and the follow-up starts from the tree with it.
func TestDeadSubmittersCallLandsOnResume(t *testing.T) {
	srv := devserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	d := newDeadCallFleet(ctx, t, srv.Addr)

	one := d.writeAndDie("one", nil)
	if s, ok := d.show(one); !ok || !strings.Contains(s.Landed, "waiting") || !strings.Contains(s.Landed, "brood tasks resume "+one) {
		t.Fatalf("tasks show of the finished call: %+v; want its change waiting, with the command that lands it", s)
	}
	if code, out, errs := d.brood("tasks", "resume", one); code != 0 || !strings.Contains(out, "landed the change of fleet call "+one+" in your tree: applied 1 file(s): one.txt") {
		t.Fatalf("tasks resume (land only): exit %d\n%s\n%s", code, out, errs)
	}
	if got := readFile(t, d.sub.Root, "one.txt"); got != "one from the writer\n" {
		t.Fatalf("one.txt %q after the landing", got)
	}
	code, out, errs := d.brood("tasks", "resume", one, "--json")
	var again struct{ State, Message string }
	if code != 0 || json.Unmarshal([]byte(out), &again) != nil || again.State != "in_tree" {
		t.Fatalf("second tasks resume (land only): exit %d\n%s\n%s", code, out, errs)
	}
	if got := readFile(t, d.sub.Root, "one.txt"); got != "one from the writer\n" {
		t.Fatalf("one.txt %q after the second resume; want it unchanged", got)
	}
	if s, ok := d.show(one); !ok || !strings.HasPrefix(s.Landed, "in your tree") {
		t.Fatalf("tasks show after the landing: %+v; want the change in the tree", s)
	}
	if sum := followUp(t, d, one, "read back one", false); !strings.Contains(sum, "the follow-up saw:") || !strings.Contains(sum, "one from the writer") {
		t.Fatalf("the follow-up did not see one.txt: %q", sum)
	}

	two := d.writeAndDie("two", []string{one})
	if sum := followUp(t, d, two, "read back two", true); !strings.Contains(sum, "the follow-up saw:") || !strings.Contains(sum, "two from the writer") {
		t.Fatalf("the follow-up did not start from the tree with two.txt: %q", sum)
	}
	if code, out, errs := d.brood("tasks", "resume", two); code != 0 || !strings.Contains(out, "brought back no change") {
		t.Fatalf("tasks resume (land only) after the follow-up: exit %d\n%s\n%s", code, out, errs)
	}
	for name, want := range map[string]string{"one.txt": "one from the writer\n", "two.txt": "two from the writer\n"} {
		if got := readFile(t, d.sub.Root, name); got != want {
			t.Errorf("%s %q; want %q, landed once", name, got, want)
		}
	}
	if st := d.sub.Git("status", "--porcelain", "--", "one.txt", "two.txt"); st != "?? one.txt\n?? two.txt\n" {
		t.Errorf("git status %q; want both new files, unstaged", st)
	}
}

// followUp resumes a fleet call with a prompt and returns the result's
// summary; lands says whether its earlier change must be landed first.
func followUp(t *testing.T, d *deadCallFleet, id, prompt string, lands bool) string {
	t.Helper()
	code, out, errs := d.brood("tasks", "resume", id, prompt, "--json")
	var res struct{ Status, Summary, Text string }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Status != "done" {
		t.Fatalf("tasks resume %s %q: exit %d\n%s\n%s", id, prompt, code, out, errs)
	}
	landed := strings.Contains(res.Text, "landed the change its earlier run left on the fleet: applied 1 file(s)")
	if landed != lands {
		t.Fatalf("tasks resume %s %q: its text %q; want the earlier change landed first: %v", id, prompt, res.Text, lands)
	}
	return res.Summary
}
