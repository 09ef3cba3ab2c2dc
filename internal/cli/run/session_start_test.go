package run_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// TestOwnerRecordFailureStopsTheRun: a new session whose owner record
// cannot be written (a directory in its place, --session-id known in
// advance) does not run: exit 1, one line naming the record and what to
// do, as when Claim failed at the session's start; no transcript is left
// that could never be continued, and nothing says done.
func TestOwnerRecordFailureStopsTheRun(t *testing.T) {
	p := clitest.NewProject(t)
	const id = "123e4567-e89b-12d3-a456-426614174000"
	dir := filepath.Join(p.Root, ".brood", "sessions")
	record := filepath.Join(dir, id+session.OwnerSuffix)
	clitest.WriteFile(t, filepath.Join(record, "x"), "")
	mdl := p.Script("s.yaml", "agents:\n  root:\n    - say: \"ok\"\n")
	code, out, errOut := p.Brood("run", "--model", mdl, "--session-id", id, "hi")
	if code != 1 || strings.Contains(out+errOut, "done") {
		t.Fatalf("exit %d, want 1 and no done\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "session owner record "+record+": ") || !strings.Contains(errOut, "run again") {
		t.Errorf("stderr does not name the record and what to do:\n%s", errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, id+".jsonl")); !os.IsNotExist(err) {
		t.Errorf("a transcript without its owner record was left: %v", err)
	}
}

// TestKilledRootInPromptHookLeavesNoSession: a root killed (SIGKILL)
// before its transcript's first line, here while a UserPromptSubmit hook
// runs, leaves neither a transcript nor a session to refuse: brood run
// --continue goes on with the newest session of the user's own, saying
// nothing of a shipped one (the transcript is made with its first line,
// after its owner record).
func TestKilledRootInPromptHookLeavesNoSession(t *testing.T) {
	p := clitest.NewProject(t)
	older := p.Script("older.yaml", "agents:\n  root:\n    - say: \"Older.\"\n")
	if code, out, errOut := p.Brood("run", "--model", older, "the older prompt"); code != 0 {
		t.Fatalf("the older session: exit %d\n%s\n%s", code, out, errOut)
	}
	sessions := clitest.SessionFiles(t, p.Root)
	if len(sessions) != 1 {
		t.Fatalf("sessions after the first run: %v", sessions)
	}

	// The hook says it started, then waits on a FIFO the test holds open
	// until the root is dead.
	tmp := t.TempDir()
	started, hold := filepath.Join(tmp, "started"), filepath.Join(tmp, "hold")
	if err := syscall.Mkfifo(hold, 0o600); err != nil {
		t.Fatal(err)
	}
	holdFd, err := os.OpenFile(hold, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer holdFd.Close()
	clitest.WriteFile(t, filepath.Join(p.Root, ".claude", "settings.json"), `{"hooks": {
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "touch `+started+`; cat `+hold+` >/dev/null"}]}]
}}`)
	slow := p.Script("slow.yaml", "agents:\n  root:\n    - say: \"not reached\"\n")
	d := p.Start(nil, "run", "--model", slow, "the first prompt")
	clitest.WaitFor(t, "the UserPromptSubmit hook to start", func() bool {
		select {
		case <-d.Done:
			t.Fatalf("the root ended before its hook ran: %s", d.Stderr.String())
		default:
		}
		_, err := os.Stat(started)
		return err == nil
	})
	if err := d.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.Done
	holdFd.Close() // the hook ends
	if ws, ok := d.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the root did not die of SIGKILL: %v", d.Cmd.ProcessState)
	}
	if got := clitest.SessionFiles(t, p.Root); !slices.Equal(got, sessions) {
		t.Errorf("the killed root left a transcript: %v, want only %v", got, sessions)
	}

	os.Remove(filepath.Join(p.Root, ".claude", "settings.json"))
	cont := p.Script("cont.yaml", "agents:\n  root:\n    - say: \"Older.\"\n    - say: \"Continued.\"\n")
	code, out, errOut := p.Brood("run", "--model", cont, "--continue", "go on")
	if code != 0 || !strings.Contains(out, "Continued.") || strings.Contains(errOut, "not made by you") || strings.Contains(errOut, "carry no seal") {
		t.Fatalf("--continue after the kill: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	recs, _, err := session.ReadFile(sessions[0])
	if err != nil || !slices.ContainsFunc(recs, func(r session.Record) bool {
		return r.Type == session.RecMessage && r.Message.Role == model.RoleUser && strings.Contains(r.Message.Text(), "go on")
	}) {
		t.Errorf("--continue did not continue the older session %s (%v)", sessions[0], err)
	}
}
