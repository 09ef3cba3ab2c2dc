package run_test

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// TestKilledRootMidFirstRequestContinues: a new session's owner record is
// written with its transcript's first line and synced in the background,
// off the root's path to its first model request (session.ClaimLater). A
// root killed (SIGKILL) while that request is out leaves the record in
// place and sealed: brood run --continue takes the session as the user's
// own and continues it, saying nothing of a shipped one.
func TestKilledRootMidFirstRequestContinues(t *testing.T) {
	p := clitest.NewProject(t)
	slow := p.Script("slow.yaml", "agents:\n  root:\n    - say: \"not reached\"\n      delay: \"10m\"\n")
	d := p.Start(nil, "run", "--model", slow, "the first prompt")
	var path string
	clitest.WaitFor(t, "the prompt in the transcript (the first request out)", func() bool {
		for _, f := range clitest.SessionFiles(t, p.Root) {
			recs, _, _ := session.ReadFile(f)
			if slices.ContainsFunc(recs, func(r session.Record) bool {
				return r.Type == session.RecMessage && r.Message.Role == model.RoleUser && strings.Contains(r.Message.Text(), "the first prompt")
			}) {
				path = f
				return true
			}
		}
		select {
		case <-d.Done:
			t.Fatalf("the root ended before its first request: %s", d.Stderr.String())
		default:
		}
		return false
	})
	if err := d.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-d.Done
	if ws, ok := d.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the root did not die of SIGKILL: %v", d.Cmd.ProcessState)
	}
	if err := session.Mine(path); err != nil {
		t.Fatalf("the killed root's session: %v", err)
	}
	if _, err := os.Stat(session.OwnerPath(path)); err != nil {
		t.Fatal(err)
	}

	cont := p.Script("cont.yaml", "agents:\n  root:\n    - say: \"Continued.\"\n")
	code, out, errOut := p.Brood("run", "--model", cont, "--continue", "go on")
	if code != 0 || !strings.Contains(out, "Continued.") || strings.Contains(errOut, "not made by you") || strings.Contains(errOut, "carry no seal") {
		t.Fatalf("--continue after the kill: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	recs, _, err := session.ReadFile(path)
	if err != nil || !slices.ContainsFunc(recs, func(r session.Record) bool {
		return r.Type == session.RecMessage && r.Message.Role == model.RoleUser && strings.Contains(r.Message.Text(), "go on")
	}) {
		t.Errorf("--continue did not continue the killed root's session %s (%v)", path, err)
	}
}
